#!/usr/bin/env python3
"""Issues 16 and 29's targets, measured in one run side by side with Debian's `mariadb-binlog`.

    make bench-speed                                    # = .venv/bin/python benchmarks/bench_speed.py
    make bench-speed SCALE=0.2 ROUNDS=5                 # the small workloads, 5 rounds
    make bench-speed WORKLOAD=mixed-minimal SCALE=0.05 ROUNDS=1
    .venv/bin/python benchmarks/bench_speed.py --binlog FILE --rounds 1 --no-doc   # any file, no doc

Workloads (benchmarks/workloads.py), written by a real MariaDB and cached outside the repository;
`--workload` takes a comma-separated list, by default `oltp,mixed`:

- `oltp`: workloads.oltp(scale): 1M x scale rows of one INT/CHAR table inserted 1000 per statement,
  then 100k x scale single-row UPDATEs and as many single-row DELETEs, each its own transaction;
  about 500 MB at scale 1.
- `mixed`, `mixed-minimal`: workloads.mixed(scale): issue 29's three tables of every common column
  type (DECIMAL, BIT, YEAR, temporal types with fractions, ENUM, SET, utf8mb4/latin1 strings, JSON,
  BLOB/TEXT, GEOMETRY), single-row and bulk statements spread over 12 hours, with FULL or MINIMAL
  metadata; about 200 MB at scale 1.

All in ROW format, FULL row image, CRC32, ANNOTATE_ROWS.

Every command is the `binlog-spec` CLI (a command, as users run it) or `mariadb-binlog`, in its
own child process pinned to one CPU (`taskset -c CPU`; `--jobs 2` gets two), its output to
/dev/null, its peak RSS from GNU `time`. Each figure is a pair (ours, reference) run back to back
in every round, the order within the pair alternating from round to round (A B, B A, ...); a
figure's ratio is the median over the rounds of each round's own ratio, so that the load of a
shared machine hits both sides of a ratio alike. The filtered figures compare a command with a
time window (the workload's, or the middle sixth of the file's times) or a table filter (the
workload's small table, or the file's smallest) with the same command unfiltered.

A full run prints the report (the CPU model first) and writes its section of docs/benchmarks.md
(docsection.publish) and benchmarks/out/bench_speed.json, with a cProfile of each command that
misses its target (at least `rows --format jsonl`) on each workload at scale min(SCALE, 0.2).
"""
from __future__ import annotations

import argparse
import calendar
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_reader import qualname
from child import run_child
from docsection import DOC, publish
from machine import describe
from revision import git
from speed_figures import (COMMANDS, FIGURE_TITLES, FIGURES, GROUPS, MEMORY_TARGET_MB,  # noqa: F401
                           KEYED, KEYS, PROFILE_SCALE, PROFILE_TOP, PROFILED, REFERENCES, TABLED, TAIL_SHARE,
                           TWO_CPUS, WINDOW_SHARE, WINDOWED, figure_met)
from speed_report import report
from workloads import WORKLOADS, ensure

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SECTION = "## Speed side by side with mariadb-binlog (issue 16)"
SCRIPT = "bench_speed"
DEFAULT_WORKLOAD = "oltp,mixed"
TITLES = {"oltp": "OLTP workload (one INT/CHAR table)", "mixed": "Mixed-type workload, FULL metadata",
          "mixed-minimal": "Mixed-type workload, MINIMAL metadata"}
GTID_TYPES = {"GTID_EVENT", "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT"}


def cli_path() -> str:
    exe = Path(sys.executable).parent / "binlog-spec"
    found = str(exe) if exe.exists() else shutil.which("binlog-spec")
    if not found:
        sys.exit("bench_speed: the binlog-spec command is not installed (run `make setup`)")
    return found


def has_jobs(cli: str) -> bool:
    """Whether the CLI takes --jobs (its `rows --help` says so)."""
    r = subprocess.run([cli, "rows", "--help"], capture_output=True, text=True, check=False)
    return "--jobs" in r.stdout


def tail_position(cli: str, path: Path, share: float = TAIL_SHARE) -> dict:
    """A transaction start (a GTID event's position) in the last `share` of the file, found by
    listing the events once with `binlog-spec events --format jsonl`; the last GTID event when the
    file is too small to have one there."""
    size = path.stat().st_size
    start = size * (1 - share)
    last = None
    with subprocess.Popen([cli, "events", "--format", "jsonl", str(path)], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as p:
        for line in p.stdout:
            if b'GTID' not in line:
                continue
            ev = json.loads(line)
            if ev.get("type") in GTID_TYPES:
                last = ev["pos"]
                if last >= start:
                    p.kill()
                    break
    if last is None:
        sys.exit(f"bench_speed: {path} has no GTID event to start from")
    return {"pos": last, "bytes": size, "share_after": (size - last) / size}


def cached_tail_position(cli: str, path: Path) -> dict:
    """tail_position, kept next to a cached workload (its file never changes)."""
    side = path.parent / "tail_position.json"
    if side.exists():
        got = json.loads(side.read_text(encoding="utf-8"))
        if got.get("bytes") == path.stat().st_size:
            return got
    got = tail_position(cli, path)
    side.write_text(json.dumps(got), encoding="utf-8")
    return got


def iso_utc(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def parse_utc(text: str) -> float:
    """analyze's '2026-01-01T00:00:00Z' as a Unix time."""
    return calendar.timegm(time.strptime(text.rstrip("Z").replace("T", " ")[:19], "%Y-%m-%d %H:%M:%S"))


def file_facts(cli: str, path: Path) -> dict:
    """What the filtered figures need of a file, from one `binlog-spec analyze --format json`: its
    first and last event times and its tables' bytes."""
    r = subprocess.run([cli, "analyze", "--format", "json", str(path)], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"bench_speed: analyze of {path} exited with {r.returncode}:\n{r.stderr[-2000:]}")
    a = json.loads(r.stdout)
    return {"bytes": path.stat().st_size, "first_event": a["summary"].get("first_event"),
            "last_event": a["summary"].get("last_event"), "total_bytes": a["summary"].get("bytes"),
            "tables": {t["table"]: t["bytes"] for t in a.get("tables", [])}}


def cached_file_facts(cli: str, path: Path) -> dict:
    side = path.parent / "file_facts.json"
    if side.exists():
        got = json.loads(side.read_text(encoding="utf-8"))
        if got.get("bytes") == path.stat().st_size:
            return got
    got = file_facts(cli, path)
    side.write_text(json.dumps(got), encoding="utf-8")
    return got


def time_window(meta: dict, facts: dict) -> dict | None:
    """The workload's window (its SET TIMESTAMPs make it a known share), else the middle sixth of
    the file's event times (None when they span under 6 seconds)."""
    if meta.get("window"):
        return {**meta["window"], "how": "a 2-hour window in the middle of the workload's 12 hours"}
    if not facts.get("first_event") or not facts.get("last_event"):
        return None
    first, last = parse_utc(facts["first_event"]), parse_utc(facts["last_event"])
    if last - first < 6:
        return None
    mid, half = (first + last) / 2, (last - first) * WINDOW_SHARE / 2
    return {"start": iso_utc(mid - half), "stop": iso_utc(mid + half), "timezone": "UTC",
            "how": "the middle sixth of the file's event times"}


def small_table(meta: dict, facts: dict, chosen: str | None = None) -> dict | None:
    """The table of the table-filter figure: `chosen`, the workload's small table, else the file's
    table of the fewest row-event bytes (None for a file of one table)."""
    tables, total = facts.get("tables") or {}, facts.get("total_bytes") or facts["bytes"]
    name = chosen or meta.get("small_table")
    if not name:
        if len(tables) < 2:
            return None
        name = min(tables, key=lambda t: (tables[t], t))
    share = tables.get(name, 0) / total if total else 0
    how = "chosen" if chosen else ("the workload's small table" if meta.get("small_table") else
                                   "the file's table of the fewest row-event bytes")
    return {"name": name, "share": share, "how": f"{how}, {share:.1%} of the file's bytes in its rows events"}


def file_key(cli: str, path: Path, table: dict | None) -> dict | None:
    """The key figure's table and value of a file: the table-filter figure's table, the first column of its first
    row change's image (its key, where that is an integer and `--key` takes it: checked with one run); None
    otherwise."""
    if table is None:
        return None
    with subprocess.Popen([cli, "rows", "--format", "jsonl", "--table", table["name"], str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as p:
        line = p.stdout.readline()
        p.kill()
    try:
        row = json.loads(line)
        value = next(iter((row["after"] or row["before"]).values()))
    except (ValueError, KeyError, AttributeError, StopIteration):
        return None
    if type(value) is not int:
        return None
    r = subprocess.run([cli, "rows", "--format", "jsonl", "--table", table["name"], "--key", str(value), str(path)],
                       capture_output=True, check=False)
    return {"table": table["name"], "value": str(value)} if r.returncode == 0 and r.stdout else None


def argv_of(name: str, path: Path, ctx: dict) -> list[str]:
    prog, args, _ = COMMANDS[name]
    exe = ctx["cli"] if prog == "binlog-spec" else ctx["mariadb_binlog"]
    fill = {"{P}": str(ctx["tail"]["pos"])}
    if ctx.get("window"):
        fill.update({"{START}": ctx["window"]["start"], "{STOP}": ctx["window"]["stop"]})
    if ctx.get("table"):
        fill["{T}"] = ctx["table"]["name"]
    if ctx.get("key"):
        fill["{KT}"], fill["{KV}"] = ctx["key"]["table"], ctx["key"]["value"]
    return [exe, *[fill.get(a, a) for a in args], str(path)]


def cpus_of(name: str, cpu: int) -> str:
    return f"{cpu},{1 - cpu if cpu in (0, 1) else cpu + 1}" if name in TWO_CPUS else str(cpu)


def measure(name: str, path: Path, ctx: dict) -> dict:
    r = run_child(argv_of(name, path, ctx), cpus=cpus_of(name, ctx["cpu"]))
    r["load1"] = os.getloadavg()[0]
    if r["rc"] != 0:
        sys.exit(f"bench_speed: {name} exited with {r['rc']}:\n{r['stderr']}")
    r.pop("stdout", None)
    return r


def run_rounds(path: Path, ctx: dict, rounds: int, say) -> list[dict]:
    """Every round: each group back to back, reversed in odd rounds; returns one dict per round,
    command name -> run (a command in two groups of a round keeps one run per group, the last
    one under its name and each under name@group)."""
    out = []
    for rnd in range(rounds):
        runs: dict[str, dict] = {}
        for gi, group in enumerate(GROUPS):
            names = [n for n in group if n in ctx["commands"]]
            if len(names) < 2 or all(n in ctx["references"] for n in names):   # nothing to compare
                continue
            for name in (names if rnd % 2 == 0 else names[::-1]):
                r = measure(name, path, ctx)
                runs[f"{name}@{gi}"] = r
                say(f"  {ctx.get('label', '')} round {rnd + 1}/{rounds} {name:14} {r['wall_s']:8.2f} s "
                    f"{r['cpu_s']:8.2f} s CPU {r['maxrss_mib'] * 1.048576:8.1f} MB  load {r['load1']:.2f}")
        out.append(runs)
    return out


def run_of(runs: dict, name: str, partner: str) -> tuple[dict, dict] | None:
    """The runs of `name` and `partner` of one round that sat in the same group."""
    for gi, group in enumerate(GROUPS):
        if name in group and partner in group and f"{name}@{gi}" in runs and f"{partner}@{gi}" in runs:
            return runs[f"{name}@{gi}"], runs[f"{partner}@{gi}"]
    return None


def summarise(rounds: list[dict], ctx: dict) -> dict:
    memory = []
    for name in COMMANDS:
        if name not in ctx["commands"]:
            continue
        runs = [r for rnd in rounds for k, r in rnd.items() if k.split("@")[0] == name]
        if not runs:
            continue
        mb = max(r["maxrss_mib"] for r in runs) * 1.048576
        ours = COMMANDS[name][0] == "binlog-spec"
        memory.append({"command": name, "title": COMMANDS[name][2], "peak_mb": mb, "runs": len(runs),
                       "wall_s": statistics.median(r["wall_s"] for r in runs),
                       "target_mb": MEMORY_TARGET_MB if ours else None,
                       "met": (mb <= MEMORY_TARGET_MB) if ours else None})
    peak = {m["command"]: m["peak_mb"] for m in memory}
    figures = []
    for key, ours, ref, target, target_text in FIGURES:
        fig = {"key": key, "title": FIGURE_TITLES[key], "ours": ours, "reference": ref, "target": target,
               "target_text": target_text}
        pairs = [p for p in (run_of(r, ours, ref) for r in rounds) if p] if ours in ctx["commands"] else []
        if not pairs:
            fig["available"] = False
            if ctx.get("why", {}).get(ours):
                fig["why"] = ctx["why"][ours]
            figures.append(fig)
            continue
        ratios = [a["wall_s"] / b["wall_s"] for a, b in pairs]
        fig.update(available=True, rounds=len(pairs),
                   ours_s=statistics.median(a["wall_s"] for a, _ in pairs),
                   ref_s=statistics.median(b["wall_s"] for _, b in pairs),
                   ratio=statistics.median(ratios), ratios=[round(x, 3) for x in ratios],
                   cpu_ratio=statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in pairs))
        if target is not None:
            fig["met"] = figure_met(target, fig["ratio"], ours, peak.get(ours))
        figures.append(fig)
    loads = [r["load1"] for rnd in rounds for r in rnd.values()]
    return {"figures": figures, "memory": memory,
            "load1": {"min": min(loads), "median": statistics.median(loads), "max": max(loads)} if loads else {}}


# ---------------------------------------------------------------- profile
def profile(cli: str, path: Path, name: str = "rows", top: int = PROFILE_TOP, jobs: bool = True,
            ctx: dict | None = None, label: str | None = None) -> dict:
    """cProfile of the command COMMANDS[name] on FILE, output to /dev/null (the CLI script run by
    `python -m cProfile`, with `--jobs 1`: one process, as the one-core figures), top `top` functions by
    own time. `ctx`: the P, window and table of a command that has them; `label`: what FILE is."""
    OUT.mkdir(parents=True, exist_ok=True)
    stats_file = OUT / f"bench_speed-{name}.prof"
    with open(os.devnull, "wb") as devnull:
        argv = argv_of(name, path, {"cli": cli, "mariadb_binlog": "", "tail": {"pos": 0}, **(ctx or {})})
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats_file), *argv[:-1],
                        *(["--jobs", "1"] if jobs else []), str(path)], stdout=devnull, check=True)
    st = pstats.Stats(str(stats_file))
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
        where = f"{short_file(file)}:{line} " if line else ""
        rows.append({"function": f"{where}{qualname(file, line, func)}", "ncalls": nc, "tottime_s": tt, "cumtime_s": ct})
    rows.sort(key=lambda r: r["tottime_s"], reverse=True)
    return {"command": name, "total_s": st.total_tt, "file": str(path), "top_tottime": rows[:top],
            "label": label or f"`{path}`", "pos": (ctx or {}).get("tail", {}).get("pos")}


def short_file(file: str) -> str:
    return re.sub(r".*/(site-packages|src|generated|lib/python3\.\d+)/", r"\1/", file).replace(str(ROOT) + "/", "")


def code_state() -> dict:
    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--", "src", "generated"))}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


# ---------------------------------------------------------------- main
def workload_of(name: str, scale: float):
    return WORKLOADS[name](scale)


def setup(cli: str, jobs: bool, name: str, file: Path | None, scale: float, table: str | None = None) -> tuple:
    """(path, description, the workload's part of the context: P, window, table, commands)."""
    if file:
        path = file.resolve()
        meta = {"path": str(file), "bytes": path.stat().st_size}
        tail, facts = tail_position(cli, path), file_facts(cli, path)
    else:
        w = workload_of(name, scale)
        meta = ensure(w)
        path = w.path()
        tail, facts = cached_tail_position(cli, path), cached_file_facts(cli, path)
    window, tbl = time_window(meta, facts), small_table(meta, facts, table)
    key = file_key(cli, path, tbl) if file or name not in KEYS else {"table": KEYS[name][0], "value": KEYS[name][1]}
    commands = [n for n in COMMANDS if jobs or n not in TWO_CPUS]
    why = {}
    if not jobs:
        why["rows-jobs2"] = "`rows --help` offers no `--jobs`"
    for names, missing, reason in ((WINDOWED, window is None, "the file's events span under 6 seconds"),
                                   (TABLED, tbl is None, "the file has one table"),
                                   (KEYED, key is None, "no table's integer key is known of it")):
        for n in names if missing else ():
            commands.remove(n)
            why[n] = reason
    return path, meta, {"label": name, "tail": tail, "window": window, "table": tbl, "key": key, "commands": commands,
                        "why": why}


def warm(path: Path) -> None:
    with open(path, "rb", buffering=0) as f:   # the page cache, before anything is timed
        while f.read(16 << 20):
            pass


def profiles(cli: str, jobs: bool, name: str, file: Path | None, args, summary: dict, wctx: dict, say) -> tuple:
    """A cProfile of each command of the workload that misses its target, `rows` first (for reference
    when nothing is missed), on the workload at scale min(SCALE, PROFILE_SCALE) (or the file)."""
    missed = [f["ours"] for f in summary["figures"] if f["available"] and f.get("met") is False
              and f["ours"] in PROFILED]
    order = missed if "rows" in missed else ["rows", *missed]
    if args.profile_binlog or file:
        ppath = (args.profile_binlog or file).resolve()
        pctx = wctx if not args.profile_binlog else setup(cli, jobs, name, ppath, 0)[2]
        label = f"`{args.profile_binlog or file}`"
    else:
        pscale = min(args.scale, PROFILE_SCALE)
        ppath, pmeta, pctx = setup(cli, jobs, name, None, pscale)
        label = (f"the {name} workload at scale {pscale} ({pmeta['row_changes']:,} row changes, "
                 f"{pmeta['bytes'] / 1e6:,.1f} MB)")
    out = []
    for cmd in order:
        if cmd not in pctx["commands"]:
            continue
        say(f"profiling {cmd} on {ppath} ...")
        out.append(profile(cli, ppath, cmd, jobs=jobs, ctx=pctx, label=label))
    return out, bool(missed)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default=DEFAULT_WORKLOAD,
                    help=f"comma-separated, of {', '.join(sorted(set(WORKLOADS) - {'sbtest'}))} "
                    f"(default {DEFAULT_WORKLOAD})")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="workload size: oltp 1M x SCALE rows, mixed 200k customers x SCALE (default 1)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every pair (default 3)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU the commands are pinned to (default 0)")
    ap.add_argument("--binlog", type=Path, help="measure this file instead of the workloads (no doc section)")
    ap.add_argument("--table", help="with --binlog: the table of the table-filter figure (default: the file's "
                    "smallest)")
    ap.add_argument("--profile-binlog", type=Path,
                    help=f"profile on this file (default: each workload at scale min(SCALE, {PROFILE_SCALE}))")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--no-doc", action="store_true", help=f"do not write {DOC.relative_to(ROOT)}")
    ap.add_argument("--json", type=Path, help="write the record here (default benchmarks/out/bench_speed.json "
                    "with the doc, none with --no-doc)")
    args = ap.parse_args(argv)
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    names = [n.strip() for n in args.workload.split(",") if n.strip()]
    bad = [n for n in names if n not in WORKLOADS or n == "sbtest"]
    if bad or not names:
        ap.error(f"--workload: unknown {', '.join(bad) or '(none)'}")

    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    date_start = time.strftime("%Y-%m-%d %H:%M %Z")
    machine = describe()
    say(f"bench_speed: CPU {machine['cpu']}, {machine['nproc']} CPUs")
    cli = cli_path()
    mb = shutil.which("mariadb-binlog")
    if not mb:
        sys.exit("bench_speed: mariadb-binlog is not installed (make setup installs it)")
    if args.binlog:
        args.no_doc = True
    jobs = has_jobs(cli)
    ctx = {"cli": cli, "mariadb_binlog": mb, "cpu": args.cpu, "jobs": jobs, "args": args, "code": code_state(),
           "version": subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.strip(),
           "references": REFERENCES, "default_workload": DEFAULT_WORKLOAD}
    # the package's bytecode, as `pip install` compiles it: with PYTHONDONTWRITEBYTECODE set (some shells
    # and CI images set it) every run would otherwise compile the modules edited since their .pyc from source
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "binlog_spec")],
                   check=False, stdout=subprocess.DEVNULL)
    parts = []
    for name in (["file"] if args.binlog else names):
        path, meta, wctx = setup(cli, jobs, name, args.binlog, args.scale, args.table)
        wctx = {**ctx, **wctx}
        warm(path)
        say(f"bench_speed: {name}: {path} ({meta['bytes']:,} bytes), P={wctx['tail']['pos']:,}, "
            f"window {wctx['window'] and (wctx['window']['start'], wctx['window']['stop'])}, "
            f"table {wctx['table'] and wctx['table']['name']}, --jobs {'available' if jobs else 'not available'}, "
            f"{args.rounds} round(s)")
        rounds = run_rounds(path, wctx, args.rounds, say)
        summary = summarise(rounds, wctx)
        prof, missed = ([], False) if args.no_profile else profiles(cli, jobs, name, args.binlog, args, summary,
                                                                      wctx, say)
        parts.append({"name": name, "title": TITLES.get(name, f"The file `{args.binlog}`"), "workload": meta,
                      "tail": wctx["tail"], "window": wctx["window"], "table": wctx["table"], "key": wctx["key"],
                      "summary": summary,
                      "profile": prof, "profiled_missed": missed,
                      "rounds": [{k: {x: y for x, y in r.items() if x != "stderr"} for k, r in rnd.items()}
                                 for rnd in rounds]})

    elapsed = time.perf_counter() - t0
    ctx["machine"] = machine | {"date": date_start, "mariadb_binlog": subprocess.run(
        [mb, "--version"], capture_output=True, text=True).stdout.strip()}
    text = report(ctx, parts, elapsed, (load_start, os.getloadavg()[0]))
    print(text)
    record = {"machine": ctx["machine"], "code": ctx["code"], "version": ctx["version"], "jobs_available": jobs,
              "args": {k: str(v) for k, v in vars(args).items()}, "elapsed_s": elapsed, "workloads": parts}
    if not args.no_doc:
        publish(SECTION, SCRIPT, text, record)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1), encoding="utf-8")
    say(f"done in {elapsed / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
