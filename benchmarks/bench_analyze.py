"""Analysis MB/s vs the full row decoder (read_rows): the same reader, the same events, the whole file.

    .venv/bin/python benchmarks/bench_analyze.py [FILE] [--repeat N] [--no-doc]

FILE defaults to the 1M-row benchmark of the row issue (benchmarks/data/sbtest-v1-1000000, made by
benchmarks/bench_rows.py when missing). Three modes, interleaved run by run so that they see the same
load: the bare reader, collector.analyze, and rows.decoder.read_rows. The figures (best and median of each) go
to the "Analysis vs full row decoding" section of docs/benchmarks.md (docsection.write_section).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import binlog_spec
from binlog_spec.analysis import collector
from binlog_spec.rows.decoder import read_rows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docsection import publish  # noqa: E402
from machine import describe  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "benchmarks" / "data" / "sbtest-v1-1000000" / "mariadb-bin.000001"
SECTION = "## Analysis vs full row decoding (issue: analysis reports)"
TARGET = 2.0


def modes(path: str) -> dict:
    return {
        "reader only": lambda: sum(1 for _ in binlog_spec.read_events([path])),
        "analyze": lambda: collector.analyze(binlog_spec.read_events([path]))["summary"]["rows"],
        "read_rows": lambda: sum(1 for _ in read_rows(binlog_spec.read_events([path]))),
    }


def measure(fns: dict, repeat: int) -> tuple[dict, dict]:
    """Wall times of each mode, the modes interleaved (the order turned each run)."""
    times = {k: [] for k in fns}
    results = {}
    names = list(fns)
    for rep in range(repeat):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            t0 = time.perf_counter()
            results[name] = fns[name]()
            times[name].append(time.perf_counter() - t0)
            print(f"  run {rep + 1}/{repeat} {name:12} {times[name][-1]:7.2f} s", file=sys.stderr)
    return times, results


def report(path: Path, mb: float, times: dict, results: dict, repeat: int, load: tuple[str, str],
           mach: dict) -> tuple[str, float]:
    best = {k: min(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = best["read_rows"] / best["analyze"]
    ratio_med = med["read_rows"] / med["analyze"]
    lines = [
        f"Machine: {mach['nproc']} CPUs, {mach['cpu_model']}, {mach['memory']} RAM, Linux {mach['kernel']}; "
        f"{mach['python']}. Run {mach['date']}; load average {load[0]} at the start and {load[1]} at the end "
        "(other work on this shared machine shows up in these figures).",
        "",
        "Reproduce (the whole file; the three modes interleaved, each run reads the file from the start):",
        "",
        "```sh",
        ".venv/bin/python benchmarks/bench_analyze.py            # makes the file first when missing: bench_rows.py",
        f".venv/bin/python benchmarks/bench_analyze.py FILE --repeat {repeat} --no-doc",
        "```",
        "",
        f"File: `{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`, {mb:,.1f} MB, "
        f"{results['read_rows']:,} row changes (analysis counted {results['analyze']:,}); {repeat} runs of each.",
        "",
        "| mode | best s | median s | MB/s (best) | MB/s (median) | on top of reading (best) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k in times:
        extra = "–" if k == "reader only" else f"{best[k] - best['reader only']:.2f} s"
        lines.append(f"| {k} | {best[k]:.2f} | {med[k]:.2f} | {mb / best[k]:.1f} | {mb / med[k]:.1f} | {extra} |")
    lines += ["",
              f"analyze / read_rows: **{ratio:.2f}x** on the best runs, {ratio_med:.2f}x on the medians "
              f"(target {TARGET:.0f}x: {'met' if ratio >= TARGET else 'not met'}); the work added to reading: "
              f"{(best['read_rows'] - best['reader only']) / max(best['analyze'] - best['reader only'], 1e-9):.2f}x "
              "less for analysis than for full decoding."]
    return "\n".join(lines), ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(DEFAULT))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-doc", action="store_true", help="print the figures, do not write docs/benchmarks.md")
    args = ap.parse_args()
    path = Path(args.file).resolve()
    if not path.exists() and path == DEFAULT:
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_rows.py"), "--generate-only"], check=True)
    mach = describe()
    load_start = f"{os.getloadavg()[0]:.2f}"
    times, results = measure(modes(str(path)), args.repeat)
    if results["analyze"] != results["read_rows"]:
        sys.exit(f"bench_analyze: analysis counted {results['analyze']} rows, read_rows {results['read_rows']}")
    text, ratio = report(path, path.stat().st_size / 1e6, times, results, args.repeat,
                         (load_start, f"{os.getloadavg()[0]:.2f}"), mach)
    print(text)
    publish(SECTION, "bench_analyze", text,
            {"machine": mach, "file": str(path), "times": times, "rows": results, "ratio": ratio},
            to_doc=not args.no_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
