#!/usr/bin/env python3
"""Issue 16's targets, measured in one run side by side with Debian's `mariadb-binlog`.

    make bench-speed                                    # = .venv/bin/python benchmarks/bench_speed.py
    make bench-speed SCALE=0.2 ROUNDS=5                 # the small workload, 5 rounds
    .venv/bin/python benchmarks/bench_speed.py --binlog FILE --rounds 1 --no-doc   # any file, no doc

Workload: workloads.oltp(scale) (benchmarks/workloads.py), written by a real MariaDB and cached
outside the repository: 1M x scale rows inserted 1000 per statement, then 100k x scale single-row
UPDATEs and as many single-row DELETEs, each its own transaction; ROW format, FULL row image, FULL
metadata, CRC32, ANNOTATE_ROWS. About 500 MB at scale 1.

Every command is the `binlog-spec` CLI (a command, as users run it) or `mariadb-binlog`, in its
own child process pinned to one CPU (`taskset -c CPU`; `--jobs 2` gets two), its output to
/dev/null, its peak RSS from GNU `time`. Each figure is a pair (ours, reference) run back to back
in every round, the order within the pair alternating from round to round (A B, B A, ...); a
figure's ratio is the median over the rounds of each round's own ratio, so that the load of a
shared machine hits both sides of a ratio alike.

A full run prints the table and writes its section of docs/benchmarks.md (docsection.publish) and
benchmarks/out/bench_speed.json, with a cProfile of `binlog-spec rows --format jsonl` on the
small (scale 0.2) workload.
"""
from __future__ import annotations

import argparse
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
from workloads import ensure, oltp

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SECTION = "## Speed side by side with mariadb-binlog (issue 16)"
SCRIPT = "bench_speed"
TAIL_SHARE = 0.01          # --start-position: a transaction start in the last 1 % of the file
MEMORY_TARGET_MB = 100     # 10^6 bytes
PROFILE_SCALE = 0.2
PROFILE_TOP = 15
#: The commands profiled when their figure misses its target.
PROFILED = ("rows", "sql2", "sql", "events", "analyze", "sql2-tail")
GTID_TYPES = {"GTID_EVENT", "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT", "GTID_TAGGED_LOG_EVENT"}

#: name: (argv after the program, which program, what it is)
COMMANDS = {
    "mb":           ("mariadb-binlog", [], "`mariadb-binlog FILE`"),
    "mb-v":         ("mariadb-binlog", ["-v"], "`mariadb-binlog -v FILE`"),
    "mb-flashback": ("mariadb-binlog", ["--flashback"], "`mariadb-binlog --flashback FILE`"),
    "rows":         ("binlog-spec", ["rows", "--format", "jsonl"], "`binlog-spec rows --format jsonl FILE`"),
    "sql2":         ("binlog-spec", ["sql", "--sql2"], "`binlog-spec sql --sql2 FILE`"),
    "sql2-tail":    ("binlog-spec", ["sql", "--sql2", "--start-position", "{P}"],
                     "`binlog-spec sql --sql2 --start-position P FILE`"),
    "sql":          ("binlog-spec", ["sql"], "`binlog-spec sql FILE` (base64)"),
    "events":       ("binlog-spec", ["events", "--format", "jsonl"], "`binlog-spec events --format jsonl FILE`"),
    "analyze":      ("binlog-spec", ["analyze", "--format", "json"], "`binlog-spec analyze --format json FILE`"),
    "rollback":     ("binlog-spec", ["sql", "--sql2", "--rollback"], "`binlog-spec sql --sql2 --rollback FILE`"),
    "rows-jobs2":   ("binlog-spec", ["rows", "--format", "jsonl", "--jobs", "2"],
                     "`binlog-spec rows --format jsonl --jobs 2 FILE` on 2 CPUs"),
}
TWO_CPUS = {"rows-jobs2"}

#: The figures of issue 16's Targets table: (key, ours, reference, target ratio or None, target text).
FIGURES = [
    ("rows", "rows", "mb-v", 2.5, "≤ 2.5×"),
    ("sql2", "sql2", "mb-v", 2.5, "≤ 2.5×"),
    ("sql", "sql", "mb", 2.0, "≤ 2×"),
    ("events", "events", "mb", 4.0, "≤ 4×"),
    ("analyze", "analyze", "mb", 1.5, "≤ 1.5×"),
    ("tail", "sql2-tail", "sql2", 0.1, "≤ 0.1×"),
    ("jobs2", "rows-jobs2", "mb-v", 1.5, "≤ 1.5× (moonshot ≤ 1×)"),
    ("rollback", "rollback", "mb-flashback", None, "– (memory only)"),
]
FIGURE_TITLES = {
    "rows": "`rows --format jsonl` vs `mariadb-binlog -v`",
    "sql2": "`sql --sql2` vs `mariadb-binlog -v`",
    "sql": "`sql` (base64) vs `mariadb-binlog`",
    "events": "`events --format jsonl` vs `mariadb-binlog`",
    "analyze": "`analyze --format json` vs `mariadb-binlog`",
    "tail": "`sql --sql2 --start-position P` (last 1 %) vs `sql --sql2` on the whole file",
    "jobs2": "`rows --format jsonl --jobs 2` on 2 cores vs `mariadb-binlog -v` on one",
    "rollback": "`sql --sql2 --rollback` vs `mariadb-binlog --flashback`",
}

#: One round: groups of commands run back to back (reversed every other round). `sql2` is run once
#: per round and serves two figures, next to both of its partners.
GROUPS = [["rows", "mb-v"], ["sql2-tail", "sql2", "mb-v"], ["sql", "mb"], ["events", "mb"], ["analyze", "mb"],
          ["rows-jobs2", "mb-v"], ["rollback", "mb-flashback"]]


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


def argv_of(name: str, path: Path, ctx: dict) -> list[str]:
    prog, args, _ = COMMANDS[name]
    exe = ctx["cli"] if prog == "binlog-spec" else ctx["mariadb_binlog"]
    return [exe, *[a.replace("{P}", str(ctx["tail"]["pos"])) for a in args], str(path)]


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
            if all(n in ctx["references"] for n in names):   # ours not available: nothing to compare
                continue
            for name in (names if rnd % 2 == 0 else names[::-1]):
                r = measure(name, path, ctx)
                runs[f"{name}@{gi}"] = r
                say(f"  round {rnd + 1}/{rounds} {name:13} {r['wall_s']:8.2f} s {r['cpu_s']:8.2f} s CPU "
                    f"{r['maxrss_mib'] * 1.048576:8.1f} MB  load {r['load1']:.2f}")
        out.append(runs)
    return out


def run_of(runs: dict, name: str, partner: str) -> tuple[dict, dict] | None:
    """The runs of `name` and `partner` of one round that sat in the same group."""
    for gi, group in enumerate(GROUPS):
        if name in group and partner in group and f"{name}@{gi}" in runs and f"{partner}@{gi}" in runs:
            return runs[f"{name}@{gi}"], runs[f"{partner}@{gi}"]
    return None


def summarise(rounds: list[dict], ctx: dict) -> dict:
    figures = []
    for key, ours, ref, target, target_text in FIGURES:
        fig = {"key": key, "title": FIGURE_TITLES[key], "ours": ours, "reference": ref, "target": target,
               "target_text": target_text}
        if ours not in ctx["commands"]:
            fig["available"] = False
            figures.append(fig)
            continue
        pairs = [p for p in (run_of(r, ours, ref) for r in rounds) if p]
        ratios = [a["wall_s"] / b["wall_s"] for a, b in pairs]
        fig.update(available=True, rounds=len(pairs),
                   ours_s=statistics.median(a["wall_s"] for a, _ in pairs),
                   ref_s=statistics.median(b["wall_s"] for _, b in pairs),
                   ratio=statistics.median(ratios), ratios=[round(x, 3) for x in ratios],
                   cpu_ratio=statistics.median(a["cpu_s"] / max(b["cpu_s"], 1e-3) for a, b in pairs))
        if target is not None:
            fig["met"] = fig["ratio"] <= target
        figures.append(fig)
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
    loads = [r["load1"] for rnd in rounds for r in rnd.values()]
    return {"figures": figures, "memory": memory,
            "load1": {"min": min(loads), "median": statistics.median(loads), "max": max(loads)} if loads else {}}


# ---------------------------------------------------------------- profile
def profile(cli: str, path: Path, name: str = "rows", top: int = PROFILE_TOP, jobs: bool = True,
            pos: int | None = None, label: str | None = None) -> dict:
    """cProfile of the command COMMANDS[name] on FILE, output to /dev/null (the CLI script run by
    `python -m cProfile`, with `--jobs 1`: one process, as the one-core figures), top `top` functions by
    own time. `pos`: the P of a command that has one; `label`: what FILE is, for the report."""
    OUT.mkdir(parents=True, exist_ok=True)
    stats_file = OUT / f"bench_speed-{name}.prof"
    with open(os.devnull, "wb") as devnull:
        argv = [a.replace("{P}", str(pos)) for a in COMMANDS[name][1]]
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats_file), cli, *argv,
                        *(["--jobs", "1"] if jobs else []), str(path)], stdout=devnull, check=True)
    st = pstats.Stats(str(stats_file))
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
        where = f"{short_file(file)}:{line} " if line else ""
        rows.append({"function": f"{where}{qualname(file, line, func)}", "ncalls": nc, "tottime_s": tt, "cumtime_s": ct})
    rows.sort(key=lambda r: r["tottime_s"], reverse=True)
    return {"command": name, "total_s": st.total_tt, "file": str(path), "top_tottime": rows[:top], "label": label,
            "pos": pos}


def short_file(file: str) -> str:
    return re.sub(r".*/(site-packages|src|generated|lib/python3\.\d+)/", r"\1/", file).replace(str(ROOT) + "/", "")


# ---------------------------------------------------------------- report
def fmt_ratio(x: float) -> str:
    return f"{x:.3f}×" if x < 0.1 else f"{x:.2f}×"


def figures_table(summary: dict) -> str:
    lines = ["| figure | ours s | reference s | ratio (median of rounds) | per round | CPU-time ratio | target | met |",
             "|---|---:|---:|---:|---|---:|---:|:---:|"]
    for f in summary["figures"]:
        if not f["available"]:
            lines.append(f"| {f['title']} | not available | | | | | {f['target_text']} | – |")
            continue
        met = "–" if f["target"] is None else ("yes" if f["met"] else "**no**")
        lines.append(f"| {f['title']} | {f['ours_s']:.2f} | {f['ref_s']:.2f} | **{fmt_ratio(f['ratio'])}** | "
                     f"{', '.join(fmt_ratio(x) for x in f['ratios'])} | {fmt_ratio(f['cpu_ratio'])} | "
                     f"{f['target_text']} | {met} |")
    return "\n".join(lines)


def memory_table(summary: dict) -> str:
    lines = ["| command | peak RSS MB | wall s (median) | target | met |", "|---|---:|---:|---:|:---:|"]
    for m in summary["memory"]:
        target = f"≤ {m['target_mb']} MB" if m["target_mb"] else "(reference)"
        met = "–" if m["met"] is None else ("yes" if m["met"] else "**no**")
        lines.append(f"| {m['title']} | {m['peak_mb']:.1f} | {m['wall_s']:.2f} | {target} | {met} |")
    return "\n".join(lines)


def profile_markdown(prof: dict, label: str) -> str:
    argv = " ".join(COMMANDS[prof.get("command", "rows")][1]).replace("{P}", "P")
    lines = [f"cProfile of `binlog-spec {argv} --jobs 1` on {prof.get('label') or label}, output to /dev/null: "
             f"{prof['total_s']:.2f} s under the profiler (which inflates call-heavy code). "
             f"Top {len(prof['top_tottime'])} by own time:", "",
             "| function | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
    for r in prof["top_tottime"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['tottime_s']:.2f} | {r['cumtime_s']:.2f} |")
    return "\n".join(lines)


def report(ctx: dict, summary: dict, prof: dict | None, elapsed: float, load: tuple[float, float]) -> str:
    mach, meta, code = ctx["machine"], ctx["workload"], ctx["code"]
    ld = summary["load1"]
    if meta.get("workload") == "oltp":
        wl = (f"`workloads.oltp(scale={meta['params']['scale']})` (key {meta['key']}, made by "
              f"{meta['server_version']} in {meta['generated_in_s']} s): `sbtest1(id INT PRIMARY KEY, k INT, "
              f"c CHAR(120), pad CHAR(60))`, {meta['inserts']:,} rows inserted 1000 per INSERT (one statement per "
              f"transaction), then {meta['updates']:,} single-row `UPDATE ... SET k=k+1 WHERE id=…` and "
              f"{meta['deletes']:,} single-row `DELETE ... WHERE id=…`, each its own transaction: "
              f"{meta['transactions']:,} transactions, {meta['row_changes']:,} row changes, one binlog of "
              f"{meta['bytes'] / 1e6:,.1f} MB (ROW format, FULL row image, FULL metadata, CRC32, "
              "ANNOTATE_ROWS events).")
    else:
        wl = f"the file `{meta['path']}` ({meta['bytes'] / 1e6:,.3f} MB)."
    tail = ctx["tail"]
    scale_opt = f" SCALE={ctx['args'].scale}" if ctx["args"].scale != 1 else ""
    parts = [
        f"Machine: {mach['nproc']} CPUs, {mach['cpu_model']}, {mach['memory']} RAM, Linux {mach['kernel']}; "
        f"{mach['python']}; {mach['mariadb_binlog']}. Run {mach['date']}, {elapsed / 60:.1f} min in all. "
        f"**Load:** the machine is shared with other developers' work; the 1-minute load average was "
        f"{load[0]:.2f} at the start and {load[1]:.2f} at the end, and {ld.get('min', 0):.2f} / "
        f"{ld.get('median', 0):.2f} / {ld.get('max', 0):.2f} (min / median / max) after the measured runs. "
        "Ratios of runs made back to back suffer less from it than the absolute times.",
        "",
        "Code measured: " + (f"the working tree at {code['commit'][:12]}"
                             + (" with uncommitted changes in src/" if code["dirty"] else "")
                             if code["commit"] else "the working tree") + f", `binlog-spec --version`: "
        f"{ctx['version']}.",
        "",
        "Reproduce (generates the workload first when its cache, `~/.cache/binlog-spec/bench/`, lacks it):",
        "",
        "```sh",
        f"make bench-speed{scale_opt} ROUNDS={ctx['args'].rounds}",
        "```",
        "",
        f"Workload: {wl}",
        "",
        f"Each command runs in its own child process pinned to CPU {ctx['cpu']} (`taskset -c {ctx['cpu']}`; "
        "`--jobs 2` gets two CPUs), output to /dev/null, the file in the page cache; peak RSS from GNU "
        "`time -f %M`, in MB of 10^6 bytes. The two commands of a figure run back to back in each of "
        f"{ctx['args'].rounds} round(s), their order alternating between rounds; times are medians, the "
        "ratio is the median of the rounds' own ratios (the per-round ratios follow it). "
        f"`P` = {tail['pos']:,}, the first GTID event in the last {TAIL_SHARE:.0%} of the file "
        f"({tail['share_after']:.2%} of the bytes follow it), found with `binlog-spec events --format jsonl`.",
        "",
        figures_table(summary),
        "",
        "Peak memory of every mode (all its runs):",
        "",
        memory_table(summary),
    ]
    if not ctx["jobs"]:
        parts += ["", "`--jobs` is not available: `binlog-spec rows --help` does not offer it, so that figure "
                  "has no measurement."]
    if prof:
        head = ("The commands whose target is missed, each profiled" if ctx.get("profiled_missed") else
                "No command misses its target: `rows`, profiled for reference")
        parts += ["", "### Where the time goes", "", f"{head}; the compiled modules' functions show as their "
                  "Python callers' own time."]
        for p in prof:
            parts += ["", profile_markdown(p, ctx["profile_label"])]
    return "\n".join(parts).rstrip() + "\n"


def code_state() -> dict:
    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--", "src", "generated"))}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="workload size: 1M x SCALE rows (default 1)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every pair (default 3)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU the commands are pinned to (default 0)")
    ap.add_argument("--binlog", type=Path, help="measure this file instead of the workload (no doc section)")
    ap.add_argument("--profile-binlog", type=Path,
                    help=f"profile on this file (default: the workload at scale {PROFILE_SCALE})")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--no-doc", action="store_true", help=f"do not write {DOC.relative_to(ROOT)}")
    ap.add_argument("--json", type=Path, help="write the record here (default benchmarks/out/bench_speed.json "
                    "with the doc, none with --no-doc)")
    args = ap.parse_args(argv)
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]
    date_start = time.strftime("%Y-%m-%d %H:%M %Z")
    cli = cli_path()
    mb = shutil.which("mariadb-binlog")
    if not mb:
        sys.exit("bench_speed: mariadb-binlog is not installed (make setup installs it)")
    if args.binlog:
        path = args.binlog.resolve()
        meta = {"path": str(args.binlog), "bytes": path.stat().st_size}
        tail = tail_position(cli, path)
        args.no_doc = True
    else:
        w = oltp(args.scale)
        meta = ensure(w)
        path = w.path()
        tail = cached_tail_position(cli, path)
    jobs = has_jobs(cli)
    ctx = {"cli": cli, "mariadb_binlog": mb, "cpu": args.cpu, "tail": tail, "jobs": jobs, "args": args,
           "workload": meta, "code": code_state(),
           "version": subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.strip(),
           "commands": [n for n in COMMANDS if jobs or n not in TWO_CPUS],
           "references": {"mb", "mb-v", "mb-flashback"}}
    # the package's bytecode, as `pip install` compiles it: with PYTHONDONTWRITEBYTECODE set (some shells
    # and CI images set it) every run would otherwise compile the modules edited since their .pyc from source
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src" / "binlog_spec")],
                   check=False, stdout=subprocess.DEVNULL)
    with open(path, "rb", buffering=0) as f:   # the page cache, before anything is timed
        while f.read(16 << 20):
            pass
    say(f"bench_speed: {path} ({meta['bytes']:,} bytes), P={tail['pos']:,}, --jobs "
        f"{'available' if jobs else 'not available'}, {args.rounds} round(s)")
    rounds = run_rounds(path, ctx, args.rounds, say)
    summary = summarise(rounds, ctx)

    prof = None
    if not args.no_profile:
        if args.profile_binlog:
            ppath, ctx["profile_label"] = args.profile_binlog, f"`{args.profile_binlog}`"
        elif args.binlog:
            ppath, ctx["profile_label"] = path, f"`{args.binlog}`"
        else:
            pw = oltp(PROFILE_SCALE)
            pmeta = ensure(pw)
            ppath = pw.path()
            ctx["profile_label"] = (f"the small workload (`oltp(scale={PROFILE_SCALE})`, {pmeta['row_changes']:,} "
                                    f"row changes, {pmeta['bytes'] / 1e6:,.1f} MB)")
        missed = [f["ours"] for f in summary["figures"] if f["available"] and f["target"] is not None
                  and not f["met"] and f["ours"] in PROFILED]
        prof = []
        ctx["profiled_missed"] = bool(missed)
        for name in missed or ["rows"]:
            if name == "sql2-tail":     # the seek's cost is the measured file's: profiled on it, at its P
                say(f"profiling {name} on {path} ...")
                prof.append(profile(cli, path, name, jobs=jobs, pos=tail["pos"],
                                    label=f"the measured file (P = {tail['pos']:,})"))
                continue
            say(f"profiling {name} on {ppath} ...")
            prof.append(profile(cli, ppath, name, jobs=jobs))

    elapsed = time.perf_counter() - t0
    ctx["machine"] = describe() | {"date": date_start, "mariadb_binlog": subprocess.run(
        [mb, "--version"], capture_output=True, text=True).stdout.strip()}
    text = report(ctx, summary, prof, elapsed, (load_start, os.getloadavg()[0]))
    print(text)
    record = {"machine": ctx["machine"], "workload": meta, "code": ctx["code"], "version": ctx["version"],
              "tail": tail, "jobs_available": jobs, "args": {k: str(v) for k, v in vars(args).items()},
              "summary": summary, "profile": prof, "elapsed_s": elapsed,
              "rounds": [{k: {x: y for x, y in r.items() if x != "stderr"} for k, r in rnd.items()} for rnd in rounds]}
    if not args.no_doc:
        publish(SECTION, SCRIPT, text, record)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1), encoding="utf-8")
    say(f"done in {elapsed / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
