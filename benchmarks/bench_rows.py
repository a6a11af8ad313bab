#!/usr/bin/env python3
"""Benchmark of the row decoder on a sysbench-like workload, side by side with other readers.

    .venv/bin/python benchmarks/bench_rows.py                  # full run, writes its section of docs/benchmarks.md
    .venv/bin/python benchmarks/bench_rows.py --quick          # smoke run: 100k-row workload, 1 repetition
    .venv/bin/python benchmarks/bench_rows.py --baseline HEAD  # also measure that commit's decoder

Workload (workloads.sbtest: made once by a private MariaDB server, fixtures/mariadb_server.py,
and cached outside the repository, see benchmarks/workloads.py): a sysbench table
`sbtest1(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))`, N rows inserted 1000 per
INSERT and 10 INSERTs per transaction, then N/5 rows updated (`UPDATE ... SET k=k+1 WHERE id
BETWEEN`, 1000 rows per statement) and N/10 deleted (1000 per statement); N = 1,000,000.
Row-based logging with full row images and full metadata, so one binlog of ~0.3 GB.

Tools, each run in its own child process pinned to CPU 0 (`taskset -c 0`), its peak RSS
measured by GNU `time -f %M`:

    jsonl           binlog-spec rows --format jsonl FILE > /dev/null
    bare            for rc in binlog_spec.rows.decoder.read_rows(binlog_spec.read_events([FILE])): pass
    mariadb-binlog  mariadb-binlog -v FILE > /dev/null   (Debian's; decodes rows as ### pseudo-SQL)
    pmr             PyPI mysql-replication (in a throwaway venv, /tmp/bench-rows-pmr-venv) streaming
                    the same binlog from a MariaDB server over TCP, in its MySQL mode (is_mariadb=False),
                    iterating every row of every rows event

The server for `pmr` is started once for the whole run, on a fresh datadir whose binlog index
holds the cached binlog (so it serves exactly the file the others read), and pinned to CPU 1
(`taskset -a -p -c 1`) so that it does not compete with the client on CPU 0.

Times are wall times from spawn to exit (interpreter start included; measured alone as
`startup`). The order of the tools rotates from one repetition to the next (3 by default);
the table shows medians. A full run writes its section of docs/benchmarks.md and
benchmarks/out/bench_rows.json.
"""
from __future__ import annotations

import argparse
import cProfile
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

from child import run_child
from machine import describe
from revision import git, package_snapshot
from docsection import DOC, OUT, publish, without_output

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
SECTION = "## Row decoder (issue: row decoding)"
COMMAND = ".venv/bin/python benchmarks/bench_rows.py"
sys.path.insert(0, str(ROOT / "fixtures"))

from mariadb_server import MariaDBServer  # noqa: E402
from workloads import BINLOG_NAME, ensure, sbtest  # noqa: E402

DEFAULT_ROWS = 1_000_000

PMR_VENV = Path("/tmp/bench-rows-pmr-venv")
PMR_PACKAGES = ["mysql-replication", "PyMySQL"]
PMR_USER = "bench"


# ---------------------------------------------------------------- python-mysql-replication
PMR_CODE = """\
import sys
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent
host, port, user, log_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
stream = BinLogStreamReader(
    connection_settings={"host": host, "port": port, "user": user, "passwd": ""},
    server_id=4242, log_file=log_file, log_pos=4, resume_stream=True, blocking=False,
    only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent], is_mariadb=False)
n = 0
for ev in stream:
    for row in ev.rows:
        n += 1
stream.close()
print(n)
"""


def ensure_pmr_venv() -> dict:
    """The throwaway venv with PyPI mysql-replication and PyMySQL (never the project's)."""
    py = PMR_VENV / "bin" / "python"
    if not py.exists():
        print(f"creating {PMR_VENV} with {' '.join(PMR_PACKAGES)} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(PMR_VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PMR_PACKAGES],
                       check=True)
    out = subprocess.run([str(py), "-c", "from importlib.metadata import version as v; "
                          "print(v('mysql-replication'), v('PyMySQL'))"], capture_output=True, text=True, check=True)
    pmr, pymysql = out.stdout.split()
    return {"python": str(py), "mysql-replication": pmr, "PyMySQL": pymysql}


class ServingServer:
    """A private MariaDB server whose binlog index holds the cached workload binlog, for the
    replication client. Made in two steps: a fresh server (mariadb-install-db) gets the
    replication user and the (empty) table; stopped, its own binlogs are replaced by the cached
    file; started again, it serves that file as mariadb-bin.000001."""

    def __init__(self, binlog: Path):
        self.binlog = binlog
        self.srv = MariaDBServer()

    def __enter__(self) -> "ServingServer":
        srv = self.srv
        srv.start()
        # The client connects over TCP from 127.0.0.1 (root@localhost is socket-only); a binlog
        # dump needs REPLICATION SLAVE, and REPLICATION CLIENT covers its SHOW ... statements.
        srv.sql(f"CREATE USER '{PMR_USER}'@'127.0.0.1';"
                f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{PMR_USER}'@'127.0.0.1';"
                "CREATE DATABASE sbtest;"
                "CREATE TABLE sbtest.sbtest1 (id INT NOT NULL, k INT NOT NULL DEFAULT 0, "
                "c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), "
                "KEY k_1 (k)) ENGINE=InnoDB;")
        srv.stop()
        for old in srv.datadir.glob("mariadb-bin.*"):
            old.unlink()
        shutil.copyfile(self.binlog, srv.datadir / BINLOG_NAME)
        (srv.datadir / "mariadb-bin.index").write_text(f"./{BINLOG_NAME}\n")
        srv.start()  # mariadb-install-db finds the datadir made and leaves it as it is
        if srv.binlogs()[0].name != BINLOG_NAME or (srv.datadir / BINLOG_NAME).stat().st_size != self.binlog.stat().st_size:
            raise SystemExit("bench_rows: the serving server did not keep the cached binlog")
        # Keep the server off CPU 0, where the measured client runs.
        subprocess.run(["taskset", "-a", "-p", "-c", "1", str(srv.proc.pid)], check=True, capture_output=True)
        self.version = srv.sql("SELECT VERSION()").strip()
        self.grants = srv.sql(f"SHOW GRANTS FOR '{PMR_USER}'@'127.0.0.1'").strip()
        return self

    def __exit__(self, *exc: object) -> None:
        self.srv.cleanup()


# ---------------------------------------------------------------- measuring
BARE_CODE = """\
import sys, binlog_spec, binlog_spec.rows.decoder
n = 0
for rc in binlog_spec.rows.decoder.read_rows(binlog_spec.read_events([sys.argv[1]])):
    n += 1
print(n)
"""

READER_CODE = """\
import sys, binlog_spec
n = 0
for ev in binlog_spec.read_events([sys.argv[1]]):
    n += 1
print(n)
"""

TOOLS = ["jsonl", "bare", "reader", "mariadb-binlog", "pmr"]
TOOL_TITLES = {
    "jsonl": "`binlog-spec rows --format jsonl FILE > /dev/null`",
    "bare": "bare decoder: `for rc in read_rows(read_events([FILE])): pass`",
    "reader": "the events alone, no rows: `for ev in read_events([FILE]): pass` (the part of `bare` "
              "that is not row decoding)",
    "mariadb-binlog": "`mariadb-binlog -v FILE > /dev/null` (C, Debian's)",
    "pmr": "python-mysql-replication, streaming from the server over TCP",
    "jsonl@base": "`binlog-spec rows --format jsonl` at the baseline commit",
    "bare@base": "bare decoder at the baseline commit",
    "startup": "`python -c 'import binlog_spec.rows.decoder'` (interpreter start and imports)",
}


def cli_path() -> str:
    exe = Path(sys.executable).parent / "binlog-spec"
    if not exe.exists():
        sys.exit("bench_rows: the binlog-spec command is not installed in this venv (run `make setup`)")
    return str(exe)


def command_for(tool: str, path: str, ctx: dict) -> tuple[list[str], dict | None]:
    """(argv, environment or None) of one measured child."""
    base_env = None
    if tool.endswith("@base"):
        base_env = dict(os.environ, PYTHONPATH=ctx["baseline_path"])
        tool = tool[:-len("@base")]
    if tool == "jsonl":
        return [cli_path(), "rows", "--format", "jsonl", path], base_env
    if tool == "bare":
        return [sys.executable, "-c", BARE_CODE, path], base_env
    if tool == "reader":
        return [sys.executable, "-c", READER_CODE, path], None
    if tool == "startup":
        return [sys.executable, "-c", "import binlog_spec, binlog_spec.rows.decoder; print(0)"], None
    if tool == "mariadb-binlog":
        return [shutil.which("mariadb-binlog") or "mariadb-binlog", "-v", path], None
    if tool == "pmr":
        return [ctx["pmr"]["python"], "-c", PMR_CODE, "127.0.0.1", str(ctx["port"]), PMR_USER, BINLOG_NAME], None
    raise ValueError(tool)


def measure(tool: str, path: str, ctx: dict) -> dict:
    cmd, env = command_for(tool, path, ctx)
    r = run_child(cmd, env, capture=tool.split("@")[0] in ("bare", "pmr", "startup", "reader"))
    if r["rc"] != 0:
        sys.exit(f"bench_rows: {tool} exited with {r['rc']}:\n{r['stderr']}")
    if tool.split("@")[0] in ("bare", "pmr"):
        r["rows"] = int(r["stdout"].split()[-1])
    if tool == "reader":
        r["events"] = int(r["stdout"].split()[-1])
    return r


# ---------------------------------------------------------------- baseline
def snapshot(rev: str) -> tuple[str, str]:
    """(commit, folder) of a `git archive` snapshot of that commit's package (src/binlog_spec and
    generated/), for the children's PYTHONPATH."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    root = package_snapshot(sha, OUT / f"rows-rev-{sha[:12]}")
    check = subprocess.run([sys.executable, "-c", "import binlog_spec.rows.decoder; print(binlog_spec.__file__)"],
                           env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
    if not check.stdout.strip().startswith(str(root)):
        sys.exit(f"bench_rows: the snapshot of {sha[:12]} is not what the children import:\n{check.stderr}")
    return sha, str(root)


def code_state() -> dict:
    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--", "src", "generated"))}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}


# ---------------------------------------------------------------- profile
def profile_worker(path: str, out: str) -> int:
    """Run in a child: cProfile the bare decoder over the file, dump the stats."""
    import binlog_spec
    import binlog_spec.rows.decoder

    prof = cProfile.Profile()
    prof.enable()
    for _rc in binlog_spec.rows.decoder.read_rows(binlog_spec.read_events([path])):
        pass
    prof.disable()
    prof.dump_stats(out)
    return 0


def short_file(file: str) -> str:
    return re.sub(r".*/(site-packages|src|generated|rows-rev-[0-9a-f]+)/", r"\1/", file).replace(str(ROOT) + "/", "")


def profile(path: str, env: dict | None, label: str, top: int = 8) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    stats_file = OUT / f"bench_rows-{label}.prof"
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--profile-worker", path, str(stats_file)],
                   check=True, env=env)
    st = pstats.Stats(str(stats_file))
    rows = []
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():
        if func in ("profile_worker",) or (file == "~" and ("disable" in func or "exec" in func)):
            continue
        where = f"{short_file(file)}:{line} " if line else ""
        rows.append({"function": f"{where}{func}", "ncalls": nc, "tottime_s": tt, "cumtime_s": ct})
    return {"total_s": st.total_tt,
            "top_tottime": sorted(rows, key=lambda r: r["tottime_s"], reverse=True)[:top],
            "top_cumulative": sorted(rows, key=lambda r: r["cumtime_s"], reverse=True)[:top]}


# ---------------------------------------------------------------- report
def machine() -> dict:
    mb = subprocess.run(["mariadb-binlog", "--version"], capture_output=True, text=True).stdout.strip()
    return describe() | {"mariadb_binlog": mb}


def summarise(tools: list[str], results: dict[str, list[dict]], meta: dict) -> list[dict]:
    rows_expected = meta["row_changes"]
    out = []
    for tool in tools:
        runs = results[tool]
        wall = statistics.median(r["wall_s"] for r in runs)
        counted = {r.get("rows") for r in runs} - {None}
        rows = counted.pop() if len(counted) == 1 else rows_expected
        out.append({"tool": tool, "runs": len(runs), "rows": rows, "events": runs[0].get("events"), "counted": tool.split("@")[0] in ("bare", "pmr"),
                    "wall_s": wall, "walls": [round(r["wall_s"], 3) for r in runs],
                    "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                    "rows_per_s": rows / wall, "mb_per_s": meta["bytes"] / 1e6 / wall,
                    "maxrss_mib": max(r["maxrss_mib"] for r in runs)})
    return out


def targets(summary: list[dict]) -> dict:
    """Both targets on wall times (as set) and on CPU times (steadier on a busy machine)."""
    by = {r["tool"]: r for r in summary}
    res: dict = {}
    if "bare" in by and "pmr" in by:
        ratio = by["bare"]["rows_per_s"] / by["pmr"]["rows_per_s"]
        cpu = by["pmr"]["cpu_s"] / by["bare"]["cpu_s"]
        res["vs_pmr"] = {"ratio": ratio, "cpu_ratio": cpu, "target": 10.0, "met": ratio >= 10.0}
    if "bare" in by and "mariadb-binlog" in by:
        ratio = by["bare"]["wall_s"] / by["mariadb-binlog"]["wall_s"]
        cpu = by["bare"]["cpu_s"] / by["mariadb-binlog"]["cpu_s"]
        res["vs_mariadb_binlog"] = {"ratio": ratio, "cpu_ratio": cpu, "target": 2.0, "met": ratio <= 2.0,
                                    "needed_bare_s": 2.0 * by["mariadb-binlog"]["wall_s"]}
    return res


def markdown_table(summary: list[dict]) -> str:
    lines = ["| tool | rows | time s (median) | runs (s) | CPU s | rows/s | MB/s | peak RSS MiB |",
             "|---|---:|---:|---|---:|---:|---:|---:|"]
    for r in summary:
        if r["tool"] == "reader":   # no rows: events only
            rows, rate = f"({r['events']:,} events)", "–"
        else:
            rows, rate = f"{r['rows']:,}" + ("" if r["counted"] else " ¹"), f"{r['rows_per_s']:,.0f}"
        lines.append(f"| {r['tool']} | {rows} | {r['wall_s']:.2f} | {', '.join(f'{w:.2f}' for w in r['walls'])} | "
                     f"{r['cpu_s']:.2f} | {rate} | {r['mb_per_s']:.1f} | {r['maxrss_mib']:.1f} |")
    return "\n".join(lines)


def profile_markdown(prof: dict, title: str) -> str:
    lines = [f"{title}: {prof['total_s']:.2f} s under cProfile (which inflates call-heavy code). "
             "Top by own time:", "", "| function | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
    for r in prof["top_tottime"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['tottime_s']:.2f} | {r['cumtime_s']:.2f} |")
    lines += ["", "Top by cumulative time:", "", "| function | calls | cumulative s | own s |", "|---|---:|---:|---:|"]
    for r in prof["top_cumulative"]:
        lines.append(f"| `{r['function']}` | {r['ncalls']:,} | {r['cumtime_s']:.2f} | {r['tottime_s']:.2f} |")
    return "\n".join(lines)


def report(mach: dict, meta: dict, args, summary: list[dict], startup: dict, tg: dict, profiles: dict,
           ctx: dict, code: dict, elapsed: float, load: tuple[str, str]) -> str:
    b = {r["tool"]: r for r in summary}
    parts = [
        f"Machine: {mach['nproc']} CPUs, {mach['cpu_model']} (/proc/cpuinfo), {mach['memory']} RAM, Linux "
        f"{mach['kernel']}; {mach['python']}; {mach['mariadb_binlog']}; python-mysql-replication "
        f"{ctx['pmr'].get('mysql-replication', '-')} with PyMySQL {ctx['pmr'].get('PyMySQL', '-')}. Run {mach['date']}, "
        f"{elapsed / 60:.1f} min in all; load average {load[0]} at the start and {load[1]} at the end "
        "(other work on this shared machine shows up in these figures).",
        "",
        "Code measured: " + (f"the working tree at {code['commit'][:12]}"
                             + (" with uncommitted changes in src/" if code["dirty"] else "") if code["commit"]
                             else "the working tree") + (f"; baseline `{args.baseline}` = {ctx['baseline_sha'][:12]}"
                                                          if args.baseline else "") + ".",
        "",
        "Reproduce:",
        "",
        "```sh",
        f"{COMMAND}                     # generates the workload first when the cache lacks it",
        f"{COMMAND} --baseline {ctx['baseline_sha'][:12] if args.baseline else 'REV'}   # also that commit's decoder",
        "```",
        "",
        f"Workload (key {meta['key']}, made by {meta['server_version']} in {meta['generated_in_s']} s): "
        f"`sbtest1(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))` in the server's default charset "
        f"(latin1), {meta['inserts']:,} rows inserted 1000 per INSERT and 10 INSERTs per transaction, "
        f"{meta['updates']:,} updated (`SET k=k+1`, 1000 rows per statement) and {meta['deletes']:,} deleted "
        f"(1000 per statement): {meta['row_changes']:,} row changes in one binlog of {meta['bytes'] / 1e6:,.1f} MB "
        "(ROW format, full images, full metadata, CRC32; MariaDB's default ANNOTATE_ROWS events carry "
        "each statement's text, about half of the bytes).",
        "",
        "Tools, each in its own child process pinned to CPU 0 (`taskset -c 0`); peak RSS is that "
        "child's, from GNU `time -f %M`:",
        "",
        *[f"- `{t}`: {TOOL_TITLES[t]}" for t in [r["tool"] for r in summary]],
        "",
        f"The replication client reads from a private MariaDB server ({ctx.get('server_version', '?')}, "
        "`mariadbd --user=root`, as root) whose binlog index holds the same cached file; the server runs "
        "on CPU 1 (`taskset -a -p -c 1`). The client connects over TCP to 127.0.0.1 as a user with "
        f"`{ctx.get('grants', '?')}`, with `BinLogStreamReader(server_id=4242, log_file='{BINLOG_NAME}', "
        "log_pos=4, resume_stream=True, blocking=False, only_events=[WriteRowsEvent, UpdateRowsEvent, "
        "DeleteRowsEvent], is_mariadb=False)` (MySQL mode: its MariaDB mode over TCP loops forever), and "
        "iterates `ev.rows` of every event. Its time includes the server's reading and sending.",
        "",
        f"Times are wall times from spawn to exit, the file in the page cache; median of {args.reps} run(s) "
        "per tool, the order of the tools rotating from one repetition to the next. MB = 10^6 bytes of the "
        f"binlog. Interpreter start and imports alone: {startup['wall_s']:.2f} s, {startup['maxrss_mib']:.1f} MiB.",
        "",
        markdown_table(summary),
        "",
        "¹ not counted by the tool: the workload's row changes (the same file).",
        "",
        "### Targets",
        "",
    ]
    if "vs_pmr" in tg:
        t = tg["vs_pmr"]
        parts.append(f"- bare decoder rows/s ≥ 10 × python-mysql-replication's: **{t['ratio']:.1f} ×** on wall "
                     f"times ({t['cpu_ratio']:.1f} × on CPU times, the client's alone), "
                     + ("met." if t["met"] else f"missed by a factor {10 / t['ratio']:.2f}: 10 × would be "
                        f"{10 * b['pmr']['rows_per_s']:,.0f} rows/s, "
                        f"{b['bare']['rows'] / (10 * b['pmr']['rows_per_s']):.2f} s for the workload."))
    else:
        parts.append("- bare decoder vs python-mysql-replication: not measured in this run.")
    if "vs_mariadb_binlog" in tg:
        t = tg["vs_mariadb_binlog"]
        parts.append(f"- bare decoder wall time ≤ 2 × `mariadb-binlog -v` on one core: **{t['ratio']:.2f} ×** "
                     f"({b['bare']['wall_s']:.2f} s vs {b['mariadb-binlog']['wall_s']:.2f} s; "
                     f"{t['cpu_ratio']:.2f} × on CPU times), "
                     + ("met." if t["met"] else
                        f"missed: 2 × would be {t['needed_bare_s']:.2f} s, the decoder needs "
                        f"{b['bare']['wall_s'] - t['needed_bare_s']:.2f} s "
                        f"({1 - t['needed_bare_s'] / b['bare']['wall_s']:.0%}) less."))
    if "reader" in b and "bare" in b:
        rd, bare = b["reader"], b["bare"]
        parts += ["", f"Where the bare decoder's time goes: interpreter start and imports {startup['wall_s']:.2f} s; "
                  f"reading the {rd['events']:,} events (file reads, CRC32, event headers, Kaitai parse of every "
                  f"body, `Event` objects) {rd['wall_s'] - startup['wall_s']:.2f} s; decoding the row images and "
                  f"making the `RowChange` objects {bare['wall_s'] - rd['wall_s']:.2f} s, "
                  f"{(bare['wall_s'] - rd['wall_s']) / bare['rows'] * 1e6:.2f} µs per row change "
                  f"(CPU times: {rd['cpu_s']:.2f} s and {bare['cpu_s'] - rd['cpu_s']:.2f} s)."]
    if "bare@base" in b:
        parts += ["", f"Before/after (baseline {ctx['baseline_sha'][:12]} → working tree): bare decoder "
                  f"{b['bare@base']['wall_s']:.2f} s → {b['bare']['wall_s']:.2f} s "
                  f"({b['bare@base']['wall_s'] / b['bare']['wall_s']:.1f} × faster)"
                  + (f"; `rows --format jsonl` {b['jsonl@base']['wall_s']:.2f} s → {b['jsonl']['wall_s']:.2f} s "
                     f"({b['jsonl@base']['wall_s'] / b['jsonl']['wall_s']:.1f} ×)" if "jsonl@base" in b else "") + "."]
    if profiles:
        parts += ["", "### Profile", ""]
        for label, (title, prof) in profiles.items():
            parts += [profile_markdown(prof, title), ""]
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=None, help=f"workload size (default {DEFAULT_ROWS:,}; 100,000 with --quick)")
    ap.add_argument("--reps", type=int, default=None, help="runs per tool (default 3; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="smoke run: small workload, 1 run, no profile, no doc")
    ap.add_argument("--baseline", metavar="REV", help="also measure `bare` and `jsonl` with the package of this commit")
    ap.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--no-doc", action="store_true", help=f"do not write {DOC.relative_to(ROOT)}")
    ap.add_argument("--generate-only", action="store_true", help="make (or find) the workload and stop")
    ap.add_argument("--profile-worker", nargs=2, metavar=("FILE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.profile_worker:
        return profile_worker(*args.profile_worker)
    rows = args.rows or (100_000 if args.quick else DEFAULT_ROWS)
    args.reps = args.reps or (1 if args.quick else 3)
    if args.quick:
        args.no_profile = args.no_doc = True

    t_start = time.perf_counter()
    date_start = time.strftime("%Y-%m-%d %H:%M %Z")
    load_start = f"{os.getloadavg()[0]:.2f}"
    workload = sbtest(rows)
    meta = ensure(workload)
    path = str(workload.path())
    if args.generate_only:
        print(json.dumps(meta))
        return 0
    tools = [t for t in args.tools.split(",") if t]
    unknown = set(tools) - set(TOOLS)
    if unknown:
        ap.error(f"unknown tools: {', '.join(sorted(unknown))}")
    ctx: dict = {"pmr": {}}
    if args.baseline:
        ctx["baseline_sha"], ctx["baseline_path"] = snapshot(args.baseline)
        tools += [t + "@base" for t in ("bare", "jsonl") if t in tools]
    code = code_state()
    with open(path, "rb", buffering=0) as f:  # the page cache, before anything is timed
        while f.read(16 << 20):
            pass

    server = None
    try:
        if "pmr" in tools:
            ctx["pmr"] = ensure_pmr_venv()
            server = ServingServer(Path(path)).__enter__()
            ctx.update(port=server.srv.port, server_version=server.version, grants=server.grants)
        startup_runs = [measure("startup", path, ctx) for _ in range(3)]
        startup = {"wall_s": statistics.median(r["wall_s"] for r in startup_runs),
                   "maxrss_mib": max(r["maxrss_mib"] for r in startup_runs)}
        results: dict[str, list[dict]] = {t: [] for t in tools}
        for rep in range(args.reps):
            order = tools[rep % len(tools):] + tools[:rep % len(tools)]
            for tool in order:
                r = measure(tool, path, ctx)
                results[tool].append(r)
                print(f"  run {rep + 1}/{args.reps} {tool:15} {r['wall_s']:8.2f} s {r['cpu_s']:8.2f} s CPU "
                      f"{r['maxrss_mib']:8.1f} MiB {r.get('rows', '')}", file=sys.stderr)
    finally:
        if server is not None:
            server.__exit__()
    for tool in tools:
        counted = {r["rows"] for r in results[tool] if "rows" in r}
        if counted and counted != {meta["row_changes"]}:
            sys.exit(f"bench_rows: {tool} counted {sorted(counted)} rows, the workload has {meta['row_changes']:,}")

    summary = summarise(tools, results, meta)
    tg = targets(summary)
    profiles: dict = {}
    if not args.no_profile:
        profiles["after"] = ("cProfile of the bare decoder (working tree)", profile(path, None, "after"))
        if args.baseline:
            env = dict(os.environ, PYTHONPATH=ctx["baseline_path"])
            profiles["before"] = (f"cProfile of the bare decoder at the baseline {ctx['baseline_sha'][:12]}",
                                  profile(path, env, "before"))
    elapsed = time.perf_counter() - t_start
    mach = machine()
    mach["date"] = date_start
    text = report(mach, meta, args, summary, startup, tg, profiles, ctx, code, elapsed,
                  (load_start, f"{os.getloadavg()[0]:.2f}"))
    print(text)
    publish(SECTION, "bench_rows", text,
            {"machine": mach, "workload": meta, "code": code, "args": {k: str(v) for k, v in vars(args).items()},
             "startup": startup, "summary": summary, "targets": tg, "profiles": {k: v[1] for k, v in profiles.items()},
             "runs": {t: without_output(rs) for t, rs in results.items()}, "elapsed_s": elapsed},
            to_doc=not args.no_doc)
    print(f"done in {elapsed / 60:.1f} min", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
