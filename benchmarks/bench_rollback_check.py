#!/usr/bin/env python3
"""Issue 18's speed target: a rollback's conflict check must not make `--rollback` more than 1.5x slower.

    .venv/bin/python benchmarks/bench_rollback_check.py                  # the scale 0.2 OLTP workload, 5 rounds
    .venv/bin/python benchmarks/bench_rollback_check.py --memory         # and the peak RSS at scale 1
    .venv/bin/python benchmarks/bench_rollback_check.py --binlog FILE --stop-position P

Workload: workloads.oltp(0.2) (benchmarks/workloads.py; about 99 MB: 200k rows inserted 1000 per statement,
then 20k single-row UPDATE and 20k single-row DELETE transactions). The rollback's window ends mid-file
(`--stop-position P`, by default 49,351,392: the later updates and deletes hit rows the window inserted,
23,687 conflicts). "Checked" is the rollback of the window with the stop filter, which reads the file to
its end and checks it (with --force: the undo is written, the conflicts reported); "baseline" is the same
rollback of the file cut at P (`head -c P`), which has no filter and so no check, and writes the same undo.

Two pairs: the binlog output (`sql --output-format binlog -o FILE --rollback`) and the SQL script
(`sql --sql2 --rollback`). Every command runs in its own child process pinned to one CPU (`taskset -c
CPU`, benchmarks/child.py), its output to /dev/null or a temporary file, its CPU time and peak RSS from
GNU `time`; each pair runs back to back in every round, its order alternating from round to round; the
figures are medians over the rounds, the ratio the median of each round's own ratio. `--memory` also runs
the checked binlog rollback of the scale 1 workload (about 500 MB) with `--stop-position 250000000
--force` and reports its peak RSS (target: under 100 MB).

Prints a markdown table; writes nothing to docs/ (`--json FILE` keeps the record).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from child import run_child
from workloads import ensure, oltp

TARGET = 1.5
MEMORY_TARGET_MB = 100          # 10^6 bytes
DEFAULT_STOP = 49_351_392       # the scale 0.2 workload: mid-file, after the inserts and some updates
MEMORY_STOP = 250_000_000       # the scale 1 workload


def cli_path() -> str:
    exe = Path(sys.executable).parent / "binlog-spec"
    if not exe.exists():
        sys.exit("bench_rollback_check: the binlog-spec command is not installed (run `make setup`)")
    return str(exe)


def pairs(cli: str, path: Path, head: Path, stop: int, tmp: Path) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (checked argv, baseline argv)."""
    out_checked, out_base = str(tmp / "checked.bin"), str(tmp / "baseline.bin")
    return {
        "binlog": ([cli, "sql", "--output-format", "binlog", "-o", out_checked, "--rollback", "--force",
                    "--stop-position", str(stop), str(path)],
                   [cli, "sql", "--output-format", "binlog", "-o", out_base, "--rollback", str(head)]),
        "sql2": ([cli, "sql", "--sql2", "--rollback", "--force", "--stop-position", str(stop), str(path)],
                 [cli, "sql", "--sql2", "--rollback", str(head)]),
    }


def check_ok(r: dict, what: str) -> None:
    if r["rc"] not in (0, 1):       # 1: warnings (the conflicts, written anyway with --force)
        sys.exit(f"bench_rollback_check: {what} exited {r['rc']}: {r['stderr'][-500:]}")


def run_rounds(commands: dict, rounds: int, cpu: str, say) -> dict[str, list[tuple[dict, dict]]]:
    runs: dict[str, list[tuple[dict, dict]]] = {name: [] for name in commands}
    for k in range(rounds):
        for name, (checked, base) in commands.items():
            if k % 2 == 0:
                c = run_child(checked, cpus=cpu)
                b = run_child(base, cpus=cpu)
            else:
                b = run_child(base, cpus=cpu)
                c = run_child(checked, cpus=cpu)
            check_ok(c, f"{name} checked")
            check_ok(b, f"{name} baseline")
            runs[name].append((c, b))
            say(f"round {k + 1}/{rounds} {name}: checked {c['cpu_s']:.2f} CPU-s, baseline {b['cpu_s']:.2f} CPU-s, "
                f"ratio {c['cpu_s'] / max(b['cpu_s'], 1e-9):.2f}")
    return runs


def summarise(runs: dict) -> dict:
    out = {}
    for name, rs in runs.items():
        out[name] = {
            "checked_cpu_s": statistics.median(c["cpu_s"] for c, _ in rs),
            "baseline_cpu_s": statistics.median(b["cpu_s"] for _, b in rs),
            "ratio": statistics.median(c["cpu_s"] / max(b["cpu_s"], 1e-9) for c, b in rs),
            "checked_rss_mib": max(c["maxrss_mib"] for c, _ in rs),
            "baseline_rss_mib": max(b["maxrss_mib"] for _, b in rs),
            "checked_rc": sorted({c["rc"] for c, _ in rs}),
            "conflicts": _conflicts(rs[0][0]["stderr"]),
        }
    return out


def _conflicts(stderr: str) -> str:
    for line in stderr.splitlines()[::-1]:
        if "conflict" in line and ("warning:" in line or "error:" in line):
            return line.split(":", 2)[-1].strip().split(":")[0]
    return "-"


def table(summary: dict, rounds: int) -> str:
    lines = [f"| output | baseline CPU-s | checked CPU-s | ratio (target <= {TARGET}) | peak RSS baseline / checked | conflicts |",
             "|---|---:|---:|---:|---:|---|"]
    for name, s in summary.items():
        ok = "met" if s["ratio"] <= TARGET else "missed"
        lines.append(f"| `{name}` | {s['baseline_cpu_s']:.2f} | {s['checked_cpu_s']:.2f} | {s['ratio']:.2f}x ({ok}) | "
                     f"{s['baseline_rss_mib']:.0f} / {s['checked_rss_mib']:.0f} MiB | {s['conflicts']} |")
    lines.append(f"\nMedians of {rounds} rounds (CPU-s: user + system of the child).")
    return "\n".join(lines)


def memory_run(cli: str, cpu: str, tmp: Path, say) -> dict:
    w = oltp(1.0)
    ensure(w)
    path = w.path()
    argv = [cli, "sql", "--output-format", "binlog", "-o", str(tmp / "big.bin"), "--rollback", "--force",
            "--stop-position", str(MEMORY_STOP), str(path)]
    say(f"memory: {' '.join(argv[1:])}")
    r = run_child(argv, cpus=cpu)
    check_ok(r, "memory run")
    mb = r["maxrss_mib"] * 1024 * 1024 / 1e6
    return {"path": str(path), "bytes": path.stat().st_size, "peak_rss_mb": mb, "cpu_s": r["cpu_s"],
            "conflicts": _conflicts(r["stderr"]), "met": mb < MEMORY_TARGET_MB}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds of every pair (default 5)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU the commands are pinned to (default 0)")
    ap.add_argument("--binlog", type=Path, help="measure this file instead of the scale 0.2 workload")
    ap.add_argument("--stop-position", type=int, default=None,
                    help=f"where the rollback's window ends (default {DEFAULT_STOP:,} on the workload)")
    ap.add_argument("--memory", action="store_true",
                    help=f"also the peak RSS of the checked rollback of the scale 1 workload (--stop-position {MEMORY_STOP})")
    ap.add_argument("--json", type=Path, help="write the record here")
    args = ap.parse_args(argv)
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    cli = cli_path()
    if args.binlog:
        if args.stop_position is None:
            sys.exit("bench_rollback_check: --binlog needs --stop-position")
        path = args.binlog.resolve()
    else:
        w = oltp(0.2)
        ensure(w)
        path = w.path()
    stop = args.stop_position if args.stop_position is not None else DEFAULT_STOP
    cpu = str(args.cpu)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-rollback-check-") as folder:
        tmp = Path(folder)
        head = tmp / "head.bin"
        with open(path, "rb") as src, open(head, "wb") as dst:     # the file cut at the stop position
            left = stop
            while left > 0:
                chunk = src.read(min(left, 16 << 20))
                if not chunk:
                    break
                dst.write(chunk)
                left -= len(chunk)
        with open(path, "rb", buffering=0) as f:    # the page cache, before anything is timed
            while f.read(16 << 20):
                pass
        say(f"bench_rollback_check: {path} ({path.stat().st_size:,} bytes), --stop-position {stop:,}, "
            f"{args.rounds} round(s), CPU {cpu}")
        commands = pairs(cli, path, head, stop, tmp)
        runs = run_rounds(commands, args.rounds, cpu, say)
        summary = summarise(runs)
        same = (tmp / "checked.bin").read_bytes() == (tmp / "baseline.bin").read_bytes()
        memory = memory_run(cli, cpu, tmp, say) if args.memory else None
    print(f"## Rollback conflict check (issue 18): `{path.name}` ({path.stat().st_size / 1e6:.0f} MB), "
          f"window up to --stop-position {stop:,}\n")
    print(table(summary, args.rounds))
    print(f"\nThe checked and baseline binlog outputs are {'byte-identical' if same else 'DIFFERENT'}.")
    if memory:
        print(f"\nMemory: the checked binlog rollback of `{memory['path']}` ({memory['bytes'] / 1e6:.0f} MB) with "
              f"--stop-position {MEMORY_STOP:,} --force: peak RSS {memory['peak_rss_mb']:.1f} MB "
              f"({'under' if memory['met'] else 'OVER'} {MEMORY_TARGET_MB} MB), {memory['cpu_s']:.2f} CPU-s, "
              f"{memory['conflicts']}.")
    print(f"\n({time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.2f})")
    if args.json:
        args.json.write_text(json.dumps({"path": str(path), "stop": stop, "rounds": args.rounds, "summary": summary,
                                         "identical": same, "memory": memory}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
