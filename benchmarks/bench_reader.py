#!/usr/bin/env python3
"""Benchmark of the streaming reader: four ways of reading the same files, side by side.

    .venv/bin/python benchmarks/bench_reader.py            # full run (what `make bench` does)
    .venv/bin/python benchmarks/bench_reader.py --quick    # smoke run: corpus files only, 1 repetition

Inputs: the largest plain, clean files of the shared corpus (MANIFEST.tsv `bytes`;
`.gz` files, files the manifest marks as cut or not a binlog, and files that do not
read without error are skipped) and a ~1 GiB binlog built by make_big_binlog.py
(under benchmarks/data/, made first when missing).

Modes, each run in its own child process so that its peak RSS is its own (GNU
`time -f %M` around the child; see GNU_TIME for why not os.wait4):

    bare     for ev in binlog_spec.open(path): pass
    to_dict  the same plus ev.to_dict() for each event
    jsonl    binlog-spec events --format jsonl FILE > /dev/null
    text     binlog-spec events FILE > /dev/null

Every time is the child's wall time, from spawn to exit, so all four modes pay the
same interpreter start and import (measured on its own as "startup"). The order of
the modes rotates from one repetition to the next, and the table shows the median
of the repetitions. The 1 GiB file is read once per mode by default (--big-reps): the
four passes over it take ~9 of the ~10 minutes of a full run on 2 cores.

A full run writes the results into docs/benchmarks.md (the part between the
bench_reader markers; the text around them is kept) and the raw runs into
benchmarks/out/bench_reader.json. `--rev COMMIT` measures that commit's package (a
`git archive` snapshot) instead of the working tree, so a run is not disturbed by
edits made while it goes on.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import child
from child import GNU_TIME
from machine import describe
from revision import git, package_snapshot
from docsection import OUT, publish, without_output

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
DATA = BENCH / "data"
DEFAULT_CORPUS = Path(os.environ.get("BINLOG_CORPUS", ROOT.parent / "shared" / "corpus"))
BIG_SOURCE_REL = "mysql-cdc-rs/binlog.000693"
COMMAND = ".venv/bin/python benchmarks/bench_reader.py"

MODES = ["bare", "to_dict", "jsonl", "text"]
MODE_TITLES = {
    "bare": "bare reader (`for ev in open(p): pass`)",
    "to_dict": "reader + `ev.to_dict()`",
    "jsonl": "`binlog-spec events --format jsonl`",
    "text": "`binlog-spec events` (text)",
}
SECTION = "## Reader (issue: spec/reader)"


# ---------------------------------------------------------------- child side
#: What the `bare` and `to_dict` children run (`python -c CODE FILE`): nothing but the loop, so that
#: their peak RSS is the reader's, not this script's. They print the number of events.
WORKER_CODE = {
    "import": "import sys, binlog_spec\nprint(0)",
    "bare": ("import sys, binlog_spec\n"
             "n = 0\n"
             "for n, ev in enumerate(binlog_spec.open(sys.argv[1]), 1):\n"
             "    pass\n"
             "print(n)"),
    "to_dict": ("import sys, binlog_spec\n"
                "n = 0\n"
                "for n, ev in enumerate(binlog_spec.open(sys.argv[1]), 1):\n"
                "    ev.to_dict()\n"
                "print(n)"),
    # Used to pick the inputs: a file counts as clean when no event has an error.
    "check": ("import sys, binlog_spec\n"
              "print(sum(ev.error is not None for ev in binlog_spec.open(sys.argv[1])))"),
}


def profile_worker(path: str, out: str) -> int:
    """Run in the child: cProfile the bare reader over one file, dump the stats."""
    import binlog_spec

    prof = cProfile.Profile()
    prof.enable()
    for _ev in binlog_spec.open(path):
        pass
    prof.disable()
    prof.dump_stats(out)
    return 0


# --------------------------------------------------------------- parent side
def cli_path() -> str:
    exe = Path(sys.executable).parent / "binlog-spec"
    if exe.exists():
        return str(exe)
    found = shutil.which("binlog-spec")
    if not found:
        sys.exit("bench_reader: the binlog-spec command is not installed (run `make setup`)")
    return found


def command_for(mode: str, path: str) -> list[str]:
    if mode in WORKER_CODE:
        return [sys.executable, "-c", WORKER_CODE[mode], path]
    if mode == "jsonl":
        return [cli_path(), "events", "--format", "jsonl", path]
    if mode == "text":
        return [cli_path(), "events", path]
    if mode == "cli-startup":
        return [cli_path(), "--version"]
    raise ValueError(mode)


#: Environment of every child (PYTHONPATH points at a snapshot with --rev).
CHILD_ENV = dict(os.environ)


def run_child(cmd: list[str], capture: bool) -> dict:
    """Spawn cmd, unpinned: its wall time (spawn to exit), CPU time and peak RSS (child.run_child;
    GNU time measures the child's own peak RSS, see there)."""
    return child.run_child(cmd, env=CHILD_ENV, capture=capture, cpus=None)


def measure(mode: str, path: str) -> dict:
    r = run_child(command_for(mode, path), capture=mode in WORKER_CODE)
    if r["rc"] != 0:
        sys.exit(f"bench_reader: {' '.join(r['cmd'])} exited with {r['rc']}:\n{r['stderr']}")
    if mode in ("bare", "to_dict"):
        r["events"] = int(r["stdout"])
    return r


# --------------------------------------------------------------- code under test
def code_under_test(rev: str | None) -> dict:
    """Which binlog_spec the children import. With --rev, a snapshot of that commit's package
    (src/binlog_spec + generated/, via `git archive`) under benchmarks/out/, put first on the
    children's PYTHONPATH: the run measures one commit even while the working tree is edited."""
    if rev is None:
        try:
            head = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--", "src", "generated"))
        except (OSError, subprocess.CalledProcessError):
            return {"what": "working tree", "commit": None, "dirty": None}
        return {"what": "working tree", "commit": head, "dirty": dirty}
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    root = package_snapshot(sha, OUT / f"rev-{sha[:12]}")
    CHILD_ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    where = run_child([sys.executable, "-c", "import binlog_spec, binlog_spec.cli; print(binlog_spec.__file__)"],
                      capture=True)
    if where["rc"] != 0 or not where["stdout"].strip().startswith(str(root)):
        sys.exit(f"bench_reader: the snapshot of {sha[:12]} in {root} is not what the children import:\n"
                 f"{where['stdout']}{where['stderr']}")
    return {"what": f"commit {sha[:12]} (--rev {rev})", "commit": sha, "dirty": False}


# --------------------------------------------------------------- inputs
def manifest(corpus: Path) -> list[dict[str, str]]:
    lines = (corpus / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    names = lines[0].split("\t")
    return [dict(zip(names, line.split("\t"))) for line in lines[1:] if line.strip()]


def pick_corpus_files(corpus: Path, count: int) -> list[dict]:
    """The `count` largest corpus files that are plain, whole and read without error.

    Reading each candidate once here also warms the page cache and the
    .pyc files before anything is timed."""
    rows = sorted(manifest(corpus), key=lambda r: int(r["bytes"]), reverse=True)
    picked = []
    for row in rows:
        if len(picked) == count:
            break
        name = row["file"]
        if name.endswith(".gz") or "WALK:" in row["notes"] or row["binlog_checksum"] == "?":
            continue
        path = corpus / name
        r = run_child(command_for("check", str(path)), capture=True)
        if r["rc"] != 0 or r["stdout"].strip() != "0":
            print(f"  skip {name}: does not read cleanly (rc {r['rc']})", file=sys.stderr)
            continue
        picked.append({"label": name, "note": "", "path": str(path), "bytes": int(row["bytes"]),
                       "server_version": row["server_version"], "big": False})
    return picked


def big_file(corpus: Path, size_mb: int) -> dict:
    path = DATA / f"big-{size_mb}mb.binlog"
    source = corpus / BIG_SOURCE_REL
    if not path.exists():
        print(f"  generating {path.relative_to(ROOT)} from {source} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(BENCH / "make_big_binlog.py"), str(path),
                        "--size-mb", str(size_mb), "--source", str(source)], check=True)
    # Warm the page cache (a plain read, no parsing), as the corpus files are warmed.
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass
    return {"label": f"benchmarks/data/{path.name}", "note": f" ({BIG_SOURCE_REL} repeated)", "path": str(path),
            "bytes": path.stat().st_size, "server_version": "8.0.31", "big": True}


# --------------------------------------------------------------- profile
_SOURCE_LINES: dict[str, list[str]] = {}


def qualname(file: str, line: int, func: str) -> str:
    """`Binlog.Event._read` for `_read` at that line: cProfile keeps only the bare name."""
    if not line or not file.endswith(".py"):
        return func
    try:
        lines = _SOURCE_LINES.setdefault(file, Path(file).read_text(encoding="utf-8").splitlines())
    except OSError:
        return func
    if line > len(lines):   # code made at run time and credited to a file (e.g. by exec)
        return func
    names, indent = [func], len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for text in reversed(lines[:line - 1]):
        stripped = text.lstrip()
        ind = len(text) - len(stripped)
        if stripped and ind < indent and stripped.startswith(("class ", "def ")):
            if stripped.startswith("class "):
                names.append(re.match(r"class (\w+)", stripped).group(1))
            indent = ind
            if ind == 0:
                break
    return ".".join(reversed(names))


def short_file(file: str) -> str:
    return re.sub(r".*/(site-packages|src|rev-[0-9a-f]+)/", "", file).replace(str(ROOT) + "/", "")


#: Parts of the bare reader's time, as (label, cProfile function key suffix) -- for the breakdown line.
BREAKDOWN = [
    ("Kaitai body parse (`spec.parse_event`)", "binlog_spec/binlog/spec.py", "parse_event"),
    ("Kaitai header parse (`spec.parse_header`)", "binlog_spec/binlog/spec.py", "parse_header"),
    ("CRC32 check (`_verify_crc`)", "binlog_spec/binlog/reader.py", "_verify_crc"),
    ("file reads (`_read_exact`)", "binlog_spec/binlog/reader.py", "_read_exact"),
    ("`Event` objects", "binlog_spec/binlog/event.py", "__init__"),
]


def profile(path: str, top: int = 5) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    stats_file = OUT / "bench_reader.prof"
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--profile-worker", path, str(stats_file)],
                   check=True, env=CHILD_ENV)
    st = pstats.Stats(str(stats_file))
    total = st.total_tt
    rows, breakdown = [], {}
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
        if file == "~" and ("builtins.exec" in func or "disable" in func):
            continue
        if func == "profile_worker":
            continue
        for label, suffix, name in BREAKDOWN:
            if file.endswith(suffix) and func == name:
                breakdown[label] = ct / total
        where = f"{short_file(file)}:{line} " if line else ""
        rows.append({"function": f"{where}{qualname(file, line, func)}", "ncalls": nc, "tottime_s": tt,
                     "cumtime_s": ct})
    rows.sort(key=lambda r: r["cumtime_s"], reverse=True)
    by_tt = sorted(rows, key=lambda r: r["tottime_s"], reverse=True)
    return {"file": path, "total_s": total, "top_cumulative": rows[:top], "top_tottime": by_tt[:top],
            "breakdown": breakdown}


# --------------------------------------------------------------- report
def machine() -> dict:
    try:
        from importlib.metadata import version
        ks = version("kaitaistruct")
    except Exception:  # pragma: no cover
        ks = "?"
    return describe() | {"kaitaistruct": ks}


def summarise(inputs: list[dict], results: dict) -> list[dict]:
    rows = []
    for inp in inputs:
        events = None
        for mode in MODES:
            runs = results[inp["path"]][mode]
            wall = statistics.median(r["wall_s"] for r in runs)
            if mode == "bare":
                events = runs[0]["events"]
            rows.append({"file": inp["label"], "note": inp["note"], "bytes": inp["bytes"], "events": events, "mode": mode,
                         "reps": len(runs), "wall_s": wall, "walls": [round(r["wall_s"], 3) for r in runs],
                         "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                         "events_per_s": events / wall, "mb_per_s": inp["bytes"] / 1e6 / wall,
                         "maxrss_mib": max(r["maxrss_mib"] for r in runs)})
    return rows


def describe_code(code: dict) -> str:
    if code["what"] != "working tree":
        return code["what"]
    if not code.get("commit"):
        return "the working tree (not a git checkout)"
    return f"the working tree at {code['commit'][:12]}" + (
        " **with uncommitted changes in src/ or generated/**" if code["dirty"] else " (src/ and generated/ clean)")


def markdown_table(rows: list[dict]) -> str:
    out = ["| file | size MB | events | mode | runs | time s (median) | events/s | MB/s | peak RSS MiB |",
           "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    last = None
    for r in rows:
        first = r["file"] != last
        last = r["file"]
        out.append("| {} | {} | {} | {} | {} | {:.2f} | {:,.0f} | {:.2f} | {:.1f} |".format(
            f"`{r['file']}`{r['note']}" if first else "", f"{r['bytes'] / 1e6:,.1f}" if first else "",
            f"{r['events']:,}" if first else "", r["mode"], r["reps"], r["wall_s"], r["events_per_s"],
            r["mb_per_s"], r["maxrss_mib"]))
    return "\n".join(out)


def profile_markdown(prof: dict, corpus: Path) -> str:
    name = os.path.relpath(prof["file"], corpus)
    lines = [f"cProfile of the bare reader over `{name}` (the source of the big file), "
             f"{prof['total_s']:.2f} s under the profiler. Top 5 by cumulative time:", "",
             "| function | calls | cumulative s | own s |", "|---|---:|---:|---:|"]
    for r in prof["top_cumulative"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['cumtime_s']:.2f} | {r['tottime_s']:.2f} |")
    if prof["breakdown"]:
        lines += ["", "Share of the profiled time: " + "; ".join(
            f"{label} {prof['breakdown'][label]:.1%}" for label, _s, _n in BREAKDOWN
            if label in prof["breakdown"]) + "."]
    lines += ["", "Top 5 by own time (where the time is actually spent):", "",
              "| function | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
    for r in prof["top_tottime"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['tottime_s']:.2f} | {r['cumtime_s']:.2f} |")
    return "\n".join(lines)


def generated_block(mach: dict, args: argparse.Namespace, rows: list[dict], startup: dict, prof: dict | None,
                    corpus: Path, elapsed: float, code: dict) -> str:
    modes = "\n".join(f"- `{m}`: {MODE_TITLES[m]}" for m in MODES)
    parts = [
        f"Machine: {mach['nproc']} CPUs, {mach['cpu_model']} (/proc/cpuinfo), {mach['memory']} RAM, "
        f"Linux {mach['kernel']}; {mach['python']}, kaitaistruct {mach['kaitaistruct']}. Run {mach['date']}, "
        f"{elapsed / 60:.1f} min in all; load average {mach['load_start']} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end (other work on the machine shows up here).",
        "",
        f"Code measured: {describe_code(code)}.",
        "",
        "Reproduce (`make bench` measures the working tree; `--rev` measures one commit, whatever the tree "
        "holds; either generates `benchmarks/data/big-1024mb.binlog` first when it is missing):",
        "",
        "```sh",
        f"make bench        # = {COMMAND}",
        f"{COMMAND} --rev {code['commit'][:12]}" if code.get("commit") else "",
        "```",
        "",
        "Modes, each in its own child process; peak RSS is that child's maximum resident set size "
        + ("as GNU `time -f %M` reports it:" if GNU_TIME else "from `os.wait4` (an upper bound: it includes "
           "the parent's RSS at spawn time):"),
        "",
        modes,
        "",
        f"Times are the child's wall time from spawn to exit, files in the page cache; median of {args.reps} "
        f"run(s) per corpus file" + ("" if args.quick else f" and {args.big_reps} on the big file")
        + ", the mode order rotating between runs. "
        f"MB = 10^6 bytes. Startup alone (included in every time): `python -c 'import binlog_spec'` "
        f"{startup['import']['wall_s']:.2f} s / {startup['import']['maxrss_mib']:.1f} MiB, "
        f"`binlog-spec --version` {startup['cli-startup']['wall_s']:.2f} s / "
        f"{startup['cli-startup']['maxrss_mib']:.1f} MiB.",
        "",
        markdown_table(rows),
    ]
    if prof:
        parts += ["", profile_markdown(prof, corpus)]
    return "\n".join(parts)


# --------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (~15 s): no big file, 1 run, no profile, docs/benchmarks.md untouched")
    ap.add_argument("--reps", type=int, default=None, help="runs per mode and corpus file (default 3; 1 with --quick)")
    ap.add_argument("--big-reps", type=int, default=1,
                    help="runs per mode on the big file (default 1: the 4 passes over 1 GiB take ~9 min)")
    ap.add_argument("--big-size-mb", type=int, default=1024, help="size of the big file in MiB (default 1024)")
    ap.add_argument("--files", type=int, default=3, help="how many of the largest corpus files (default 3)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"corpus folder (default {DEFAULT_CORPUS})")
    ap.add_argument("--rev", metavar="REV",
                    help="measure binlog_spec as of this git commit (a `git archive` snapshot put first on the "
                         "children's PYTHONPATH) instead of the working tree")
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile run")
    ap.add_argument("--profile-worker", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.profile_worker:
        return profile_worker(*args.profile_worker)
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.quick:
        args.no_profile = True
        args.no_doc = True

    t_start = time.perf_counter()
    load_start = f"{os.getloadavg()[0]:.2f}"
    corpus = args.corpus.resolve()
    code = code_under_test(args.rev)
    print(f"code: {describe_code(code)}", file=sys.stderr)
    print("inputs:", file=sys.stderr)
    inputs = pick_corpus_files(corpus, args.files)
    if not args.quick:
        inputs.append(big_file(corpus, args.big_size_mb))
    for inp in inputs:
        print(f"  {inp['label']}: {inp['bytes']:,} bytes", file=sys.stderr)

    startup = {}
    for what in ("import", "cli-startup"):
        runs = [measure(what, os.devnull) for _ in range(3)]
        startup[what] = {"wall_s": statistics.median(r["wall_s"] for r in runs),
                         "maxrss_mib": max(r["maxrss_mib"] for r in runs)}

    results: dict[str, dict[str, list[dict]]] = {inp["path"]: {m: [] for m in MODES} for inp in inputs}
    reps = max(args.reps, args.big_reps if not args.quick else 0)
    for rep in range(reps):
        order = MODES[rep % len(MODES):] + MODES[:rep % len(MODES)]
        for inp in inputs:
            if rep >= (args.big_reps if inp["big"] else args.reps):
                continue
            for mode in order:
                r = measure(mode, inp["path"])
                results[inp["path"]][mode].append(r)
                print(f"  run {rep + 1}/{reps} {mode:8} {os.path.basename(inp['path']):60} "
                      f"{r['wall_s']:8.2f} s {r['maxrss_mib']:7.1f} MiB", file=sys.stderr)

    rows = summarise(inputs, results)
    prof = None if args.no_profile else profile(str(corpus / BIG_SOURCE_REL))
    elapsed = time.perf_counter() - t_start
    mach = machine()
    mach["load_start"] = load_start
    block = generated_block(mach, args, rows, startup, prof, corpus, elapsed, code)
    print(block)

    publish(SECTION, "bench_reader", block,
            {"machine": mach, "code": code, "args": {k: str(v) for k, v in vars(args).items()}, "startup": startup,
             "rows": rows, "profile": prof, "elapsed_s": elapsed,
             "runs": {p: {m: without_output(rs) for m, rs in ms.items()} for p, ms in results.items()}},
            to_doc=not args.no_doc)
    print(f"done in {elapsed / 60:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
