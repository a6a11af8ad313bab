#!/usr/bin/env python3
"""Benchmark of the Spark data source (binlog_spec.spark): rows/s on local[1] and local[2],
against the single-process CLI, and the effect of splitting one large file.

    .venv/bin/python benchmarks/bench_spark.py                 # writes its section of docs/benchmarks.md
    .venv/bin/python benchmarks/bench_spark.py --runs 3
    .venv/bin/python benchmarks/bench_spark.py --oltp 0.2 --split 8m --runs 5   # issue 17: local[2] vs one core

Inputs:

* the 1M-row benchmark file, ``benchmarks/data/sbtest-v1-1000000/mariadb-bin.000001`` (485 MB,
  1.3M row changes, MariaDB 10.11, full row metadata), made once by benchmarks/bench_rows.py
  (``--generate-only``, which starts a private MariaDB server) when it is missing;
* the shared corpus (every file under the corpus folder that the CLI reads to the end: the
  CLI stops at a broken file, so the broken ones are left out of both sides).

Each Spark measurement runs in its own child process (its own JVM): a SparkSession on the given
master is started (its start-up time is reported apart), then the DataFrame of row changes is
written to Spark's ``noop`` sink, which reads every column of every row (VARIANT images
included). Times are wall times of that write (planning included), median of --runs. The CLI is
``binlog-spec rows --format jsonl --jobs 1 FILES > /dev/null``, one process, spawn to exit. Planning is
`binlog_spec.spark.plan` alone, in a child process. The header pass is the planning pass of
binlog_spec.stream.planning.splits (every 19-byte header, bodies skipped) over the 1 GiB benchmark file of
the reader benchmark, against seeking from header to header.

``--oltp SCALE`` (issue 17, "every core busy") measures only the OLTP workload of
benchmarks/workloads.py (made once by a private MariaDB when missing): Spark ``local[2]`` writing the
rows mode to the ``noop`` sink against the one-core CLI, in pairs (a CLI run, then a Spark write, in
turn, so both meet the same load on a shared machine); the planning (`plan` alone, in a process of its
own) and the pure-Python read of every piece one after the other are reported apart. It prints its
table and JSON and writes no document.

``--planning`` (issue 17, "planning reads metadata, not data") times `binlog_spec.spark.plan` alone,
each run in a process of its own, ``planning=resync`` and ``planning=scan`` in turn: the OLTP workload
(``oltp(scale=0.2)``, 99 MB) in 8 MB pieces, one 1.6 MB corpus binlog (``mysql-cdc-rs/binlog.000694``,
MySQL 8.0) whole, and a folder of 300 hard links to it (``replayDdl=never``, rows and events modes). It
prints its table and JSON and writes no document.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

from docsection import publish
from machine import describe

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
SECTION = "## Spark data source (issue: spark)"
PY = sys.executable


def child(master: str, paths: list[str], split: str, runs: int, images: str = "variant") -> dict:
    os.environ.setdefault("PYSPARK_PYTHON", PY)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    t0 = time.perf_counter()
    from pyspark.sql import SparkSession

    from binlog_spec.spark import register
    spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    startup = time.perf_counter() - t0
    times, count, parts = [], None, None
    for _ in range(runs):
        df = (spark.read.format("binlog").option("splitSize", split).option("images", images)
              .option("paths", json.dumps(paths)).load())
        t = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - t)
    df = spark.read.format("binlog").option("splitSize", split).option("paths", json.dumps(paths)).load()
    parts = df.rdd.getNumPartitions()
    count = df.count()
    spark.stop()
    return {"master": master, "split": split, "images": images, "startup_s": startup, "times": times,
            "rows": count, "partitions": parts}


def tree_cpu(root: int | None = None) -> dict[str, float]:
    """CPU seconds (user + system) of a process tree by kind: "jvm" (java) and "python" (the rest: the
    driver, pyspark's daemon and workers); each live process counts its own time and that of its
    children it has reaped (/proc/PID/stat utime, stime, cutime, cstime)."""
    tick = os.sysconf("SC_CLK_TCK")
    root = root or os.getpid()
    kids: dict[int, list[int]] = {}
    stats: dict[int, tuple[str, float]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            raw = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        f = raw[raw.rindex(")") + 2:].split()
        kids.setdefault(int(f[1]), []).append(int(d))
        stats[int(d)] = (comm, sum(int(x) for x in f[11:15]) / tick)
    out = {"jvm": 0.0, "python": 0.0}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            comm, cpu = stats[pid]
            out["jvm" if comm == "java" else "python"] += cpu
        todo.extend(kids.get(pid, []))
    return out


def paired_child(master: str, paths: list[str], split: str, runs: int) -> dict:
    """In one SparkSession: `runs` pairs of (one-core CLI run, Spark noop write of the rows mode), in
    turn, each with the load average before it."""
    os.environ.setdefault("PYSPARK_PYTHON", PY)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from binlog_spec.spark import register
    spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    load = lambda: spark.read.format("binlog").option("splitSize", split).option("paths", json.dumps(paths)).load()
    load().write.format("noop").mode("overwrite").save()     # warm-up: JVM, Python workers, page cache
    pairs = []
    for _ in range(runs):
        la = os.getloadavg()[0]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c = cli([Path(p) for p in paths], 1)[0]
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c0 = tree_cpu()
        df = load()
        t = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        s = time.perf_counter() - t
        c1 = tree_cpu()
        pairs.append({"cli": c, "spark": s, "load": la,
                      "cli_cpu": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
                      "spark_cpu_python": c1["python"] - c0["python"], "spark_cpu_jvm": c1["jvm"] - c0["jvm"]})
    df = load()
    out = {"master": master, "split": split, "pairs": pairs, "rows": df.count(), "partitions": df.rdd.getNumPartitions()}
    spark.stop()
    return out


def oltp(scale: float, split: str, runs: int) -> dict:
    """The OLTP workload's figures: paired local[2] / one-core CLI, the planning, the serial read."""
    import workloads
    w = workloads.oltp(scale)
    meta = workloads.ensure(w)
    path = w.path()
    out = subprocess.run([PY, __file__, "--child", "local[2]", "--paired", "--split", split, "--runs", str(runs),
                          str(path)], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["planning"] = planning([path], split)
    r.update(file=str(path), mb=path.stat().st_size / 1e6, key=meta["key"], machine=machine())
    return r


def render_oltp(r: dict) -> str:
    med = statistics.median
    cli_s, spark_s = med(p["cli"] for p in r["pairs"]), med(p["spark"] for p in r["pairs"])
    ratios = [p["cli"] / p["spark"] for p in r["pairs"]]
    p = r["planning"]
    lines = [f"OLTP workload `{Path(r['file']).parent.name}/{Path(r['file']).name}` ({r['mb']:.0f} MB, {r['rows']:,} "
             f"row changes), Spark local[2], splitSize={r['split']} ({r['partitions']} partitions), {len(r['pairs'])} "
             f"pairs, load average {min(x['load'] for x in r['pairs']):.1f}-{max(x['load'] for x in r['pairs']):.1f}; "
             f"{r['machine']}", "",
             "| reader | time s (median) | rows/s | vs CLI |", "|---|---:|---:|---:|",
             f"| CLI `rows --format jsonl --jobs 1`, one core | {cli_s:.2f} | {r['rows'] / cli_s:,.0f} | 1.00 |",
             f"| Spark local[2], rows mode, noop sink (planning included) | {spark_s:.2f} | {r['rows'] / spark_s:,.0f} | "
             f"{cli_s / spark_s:.2f} (pairs: median {med(ratios):.2f}, {min(ratios):.2f}-{max(ratios):.2f}) |", "",
             *([f"CPU seconds per run (medians): CLI {med(x['cli_cpu'] for x in r['pairs']):.2f}; Spark "
                f"{med(x['spark_cpu_python'] for x in r['pairs']):.2f} Python + "
                f"{med(x['spark_cpu_jvm'] for x in r['pairs']):.2f} JVM.", ""] if "cli_cpu" in r["pairs"][0] else []),
             f"Planning alone (`binlog_spec.spark.plan`, {p['pieces']} pieces): {p['plan_s']:.2f} s. The read of every "
             f"piece one after the other, in one Python process (`read_split`, no Spark): {p['read_s']:.2f} s, "
             f"{r['rows'] / p['read_s']:,.0f} rows/s."]
    return "\n".join(lines)


def run_child(master: str, paths: list[Path], split: str, runs: int, images: str = "variant") -> dict:
    out = subprocess.run([PY, __file__, "--child", master, "--split", split, "--runs", str(runs), "--images", images,
                          *map(str, paths)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli(paths: list[Path], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        with open(os.devnull, "w") as null:
            out = subprocess.run([str(ROOT / ".venv" / "bin" / "binlog-spec"), "rows", "--format", "jsonl", "--jobs",
                                  "1", *map(str, paths)], stdout=null, stderr=subprocess.DEVNULL)
        if out.returncode not in (0, 1):  # 1: warnings (bodies that do not match their layout)
            raise SystemExit(f"binlog-spec rows exited with {out.returncode}")
        times.append(time.perf_counter() - t)
    return times


def planning(paths: list[Path], split: str, replay: str = "auto", read: bool = True) -> dict:
    """The planning of a read (binlog_spec.spark.plan: file listing, header pass, DDL replay), in a
    child process, and (`read`) the pure-Python read of every piece one after the other (no Spark)."""
    code = ("import json, sys, time\n"
            "from binlog_spec.spark import Config, plan, read_split, output_schema\n"
            "cfg = Config.from_options({'paths': json.dumps(sys.argv[4:]), 'splitSize': sys.argv[1], "
            "'replayDdl': sys.argv[2]})\n"
            "t = time.perf_counter(); splits = plan(cfg); p = time.perf_counter() - t\n"
            "schema = output_schema(cfg); t = time.perf_counter()\n"
            "n = sum(b.num_rows for s in splits for b in read_split(cfg, schema, s)) if sys.argv[3] == '1' else 0\n"
            "print(json.dumps({'plan_s': p, 'read_s': time.perf_counter() - t, 'rows': n, 'pieces': len(splits)}))")
    out = subprocess.run([PY, "-c", code, split, replay, "1" if read else "0", *map(str, paths)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def plan_time(paths: list[str], options: dict) -> dict:
    """`binlog_spec.spark.plan` alone on `paths` with `options`, in a process of its own: its time and
    the number of pieces."""
    code = ("import json, sys, time\n"
            "from binlog_spec.spark import Config, plan\n"
            "cfg = Config.from_options({'paths': json.dumps(sys.argv[2:]), **json.loads(sys.argv[1])})\n"
            "t = time.perf_counter(); splits = plan(cfg); p = time.perf_counter() - t\n"
            "print(json.dumps({'plan_s': p, 'pieces': len(splits)}))")
    out = subprocess.run([PY, "-c", code, json.dumps(options), *paths], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def planning_cost(runs: int) -> dict:
    """Issue 17's planning figures: resync against scan planning, in turn, medians of `runs`."""
    import tempfile

    import workloads
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CORPUS
    w = workloads.oltp(0.2)
    workloads.ensure(w)
    big, tiny = str(w.path()), CORPUS / "mysql-cdc-rs" / "binlog.000694"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "binlogs"
        folder.mkdir()
        for i in range(1, 301):
            os.link(tiny, folder / f"binlog.{i:06d}")
        cases = [("99 MB OLTP binlog (`oltp(scale=0.2)`), splitSize=8m", [big], {"splitSize": "8m"}),
                 ("the same, `splitBy=cost` (resync: the head, then a density sample)", [big],
                  {"splitSize": "8m", "splitBy": "cost"}),
                 ("a 1.6 MB binlog (`mysql-cdc-rs/binlog.000694`), one piece", [str(tiny)], {}),
                 ("300 binlogs of 1.6 MB in a folder, `replayDdl=never`", [str(folder)], {"replayDdl": "never"}),
                 ("the same, `mode=events`", [str(folder)], {"replayDdl": "never", "mode": "events"})]
        out = []
        for name, paths, options in cases:
            times: dict[str, list[float]] = {"scan": [], "resync": []}
            pieces = {}
            for _ in range(runs):
                for how in times:
                    r = plan_time(paths, {**options, "planning": how})
                    times[how].append(r["plan_s"])
                    pieces[how] = r["pieces"]
            out.append({"input": name, "times": times, "pieces": pieces})
    return {"cases": out, "runs": runs, "machine": machine(), "load": os.getloadavg()[0]}


def render_planning(r: dict) -> str:
    med = statistics.median
    lines = [f"`binlog_spec.spark.plan` alone, each run a process of its own, medians of {r['runs']} in turn; load "
             f"average {r['load']:.1f}; {r['machine']}", "",
             "| input | pieces | header pass (`planning=scan`) s | `planning=resync` s |", "|---|---:|---:|---:|"]
    for c in r["cases"]:
        lines.append(f"| {c['input']} | {c['pieces']['resync']} | {med(c['times']['scan']):.3f} | "
                     f"{med(c['times']['resync']):.3f} |")
    big, by_cost, tiny = (r["cases"][i]["times"] for i in (0, 1, 2))
    lines += ["", f"The large file's extra cost over the tiny one: header pass "
                  f"{med(big['scan']) - med(tiny['scan']):+.3f} s, resync {med(big['resync']) - med(tiny['resync']):+.3f} s "
                  f"(`splitBy=cost`: {med(by_cost['resync']) - med(tiny['resync']):+.3f} s)."]
    return "\n".join(lines)


def big_file() -> Path:
    """The 1M-row benchmark file, made by bench_rows.py when it is missing."""
    path = DATA / "sbtest-v1-1000000" / "mariadb-bin.000001"
    if not path.exists():
        subprocess.run([PY, str(ROOT / "benchmarks" / "bench_rows.py"), "--generate-only"], check=True)
    return path


def minimal_file() -> Path:
    """A 64 MB MySQL 8.0 binlog with MINIMAL row metadata (no column names in its TABLE_MAPs):
    the corpus file mysql-cdc-rs/binlog.000693 repeated by make_big_binlog.py."""
    path = DATA / "spark-64mb.binlog"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        subprocess.run([PY, str(ROOT / "benchmarks" / "make_big_binlog.py"), str(path), "--size-mb", "64"],
                       check=True)
    return path


def corpus_files() -> tuple[list[Path], list[Path]]:
    """(the corpus files the CLI reads to the end, the ones it stops on)."""
    import io
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CORPUS

    from binlog_spec.cli import main as cli_main
    good, broken = [], []
    for p in sorted(p for p in CORPUS.glob("*/*") if p.is_file() and p.suffix not in (".tsv", ".md", ".xxd")):
        code = cli_main(["rows", "--format", "jsonl", str(p)], out=io.StringIO(), err=io.StringIO())
        (broken if code == 3 else good).append(p)
    return good, broken


def header_pass(path: Path) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from binlog_spec.spark.files import list_files
    from binlog_spec.stream.planning.scan import scan_file
    ref = list_files([str(path)])[0]
    out = {"file": str(path.relative_to(ROOT)), "bytes": ref.size}
    for name, kw in (("chunked, headers only", dict(verify_checksums=False)),
                     ("chunked + CRC32 of every event", dict(verify_checksums=True)),
                     ("chunked + CRC32 + DDL candidates kept", dict(verify_checksums=True, ddl=True))):
        t = time.perf_counter()
        res = scan_file(ref, **kw)
        out[name] = time.perf_counter() - t
        out["events"], out["boundaries"] = res.events, len(res.boundaries)
    t = time.perf_counter()
    n, pos = 0, 4
    with open(path, "rb", buffering=0) as f:
        while True:
            f.seek(pos)
            h = f.read(19)
            if len(h) < 19:
                break
            pos += struct.unpack_from("<I", h, 9)[0]
            n += 1
    out["seek + read(19) per event"] = time.perf_counter() - t
    return out


def machine() -> str:
    """The shared machine description, plus what Spark runs on."""
    m = describe()
    import pyarrow
    import pyspark
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return (f"{m['nproc']} CPUs, {m['cpu_model']}, {m['memory']} RAM; {m['python']}, kernel {m['kernel']}; "
            f"pyspark {pyspark.__version__}, pyarrow {pyarrow.__version__}, {java}")


def measure(name: str, paths: list[Path], configs: list[tuple[str, str, str]], runs: int) -> dict:
    print(f"{name}: CLI", file=sys.stderr)
    r: dict = {"name": name, "files": len(paths), "mb": sum(p.stat().st_size for p in paths) / 1e6,
               "cli": cli(paths, runs)}
    r["planning"] = planning(paths, configs[0][1], read=False)
    r["spark"] = []
    for m, s, i in configs:
        print(f"{name}: Spark {m} splitSize={s} images={i}", file=sys.stderr)
        r["spark"].append(run_child(m, paths, s, runs, i))
    return r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--split", default="128m")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--images", default="variant")
    ap.add_argument("--no-header-pass", action="store_true")
    ap.add_argument("--paired", action="store_true")
    ap.add_argument("--oltp", type=float, metavar="SCALE")
    ap.add_argument("--planning", action="store_true")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    if args.child and args.paired:
        print(json.dumps(paired_child(args.child, args.paths, args.split, args.runs)))
        return 0
    if args.child:
        print(json.dumps(child(args.child, args.paths, args.split, args.runs, args.images)))
        return 0
    if args.planning:
        r = planning_cost(max(args.runs, 5) if args.runs == 1 else args.runs)
        print(render_planning(r))
        print(json.dumps(r))
        return 0
    if args.oltp:
        r = oltp(args.oltp, args.split, args.runs)
        print(render_oltp(r))
        print(json.dumps(r))
        return 0
    started = time.time()
    load0 = os.getloadavg()[0]
    results: dict = {"runs": args.runs}
    big = big_file()
    results["big"] = measure(str(big.relative_to(ROOT)), [big], [
        ("local[1]", "128m", "variant"), ("local[2]", "128m", "variant"), ("local[2]", "0", "variant"),
        ("local[2]", "32m", "variant"), ("local[2]", "128m", "json")], args.runs)
    good, broken = corpus_files()
    results["corpus"] = measure("corpus", good, [("local[1]", "128m", "variant"), ("local[2]", "128m", "variant")],
                                args.runs)
    results["corpus"]["broken"] = len(broken)
    results["corpus_planning"] = {replay: planning(good, "128m", replay, read=False)
                                  for replay in ("auto", "never")}
    minimal = minimal_file()
    results["minimal_planning"] = {"file": str(minimal.relative_to(ROOT)), "mb": minimal.stat().st_size / 1e6,
                                   **{replay: planning([minimal], "8m", replay, read=False)
                                      for replay in ("auto", "never")}}
    gib = DATA / "big-1024mb.binlog"
    results["header_pass"] = header_pass(gib) if gib.exists() and not args.no_header_pass else None
    results["machine"] = machine()
    results["load"] = (load0, os.getloadavg()[0])
    results["minutes"] = (time.time() - started) / 60
    body = render(results)
    print(body)
    publish(SECTION, "bench_spark", body, results)
    return 0


def _table(m: dict) -> list[str]:
    rows = m["spark"][0]["rows"]
    cli_s = statistics.median(m["cli"])
    lines = ["| reader | partitions | time s | rows/s | vs CLI | session start-up s |",
             "|---|---:|---:|---:|---:|---:|",
             f"| CLI, one process | 1 | {cli_s:.1f} | {rows / cli_s:,.0f} | 1.00 | |"]
    for s in m["spark"]:
        t = statistics.median(s["times"])
        split = "whole files" if s["split"] == "0" else f"splitSize={s['split']}"
        if s.get("images") == "json":
            split += ", images=json"
        lines.append(f"| Spark {s['master']}, {split} | {s['partitions']} | {t:.1f} | {rows / t:,.0f} | "
                     f"{cli_s / t:.2f} | {s['startup_s']:.1f} |")
    return lines


def render(r: dict) -> str:
    big, corpus = r["big"], r["corpus"]
    lines = [
        f"Machine: {r['machine']}. Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{r['minutes']:.1f} min in all; load average {r['load'][0]:.2f} at the start, {r['load'][1]:.2f} "
        "at the end.", "",
        "Reproduce: `.venv/bin/python benchmarks/bench_spark.py` (makes the 1M-row file with "
        "benchmarks/bench_rows.py when it is missing).", "",
        f"Time: wall time of `df.write.format(\"noop\")` over every column of the rows mode (planning "
        f"included), median of {r['runs']} run(s); the SparkSession's start-up is apart. CLI: "
        "`binlog-spec rows --format jsonl --jobs 1 FILES > /dev/null`, one process, spawn to exit.", "",
        f"**The 1M-row file** `{big['name']}`: {big['mb']:.0f} MB, {big['spark'][0]['rows']:,} row changes "
        "(sysbench-like, MariaDB 10.11, full row metadata).", ""]
    lines += _table(big)
    p = big["planning"]
    lines += ["", f"Planning alone (`binlog_spec.spark.plan`, splitSize=128m, {p['pieces']} pieces: header pass "
              f"with CRC32 over the whole file): {p['plan_s']:.1f} s, serial, in the driver's planning worker, "
              "included in every Spark time above.", "",
              f"**The corpus**: the {corpus['files']} files the CLI reads to the end ({corpus['mb']:.1f} MB, "
              f"{corpus['spark'][0]['rows']:,} row changes; the {corpus['broken']} broken files, where the CLI "
              "stops, are left out of both sides). One partition per file.", ""]
    lines += _table(corpus)
    cp = r["corpus_planning"]
    lines += ["", f"Planning the corpus read: {cp['auto']['plan_s']:.2f} s with `replayDdl=auto` (some files' "
              "TABLE_MAPs lack column names, so the CREATE/ALTER TABLEs of every file that has a successor in "
              f"its sequence are collected and replayed), {cp['never']['plan_s']:.2f} s with `replayDdl=never`."]
    mp = r.get("minimal_planning")
    if mp:
        lines += ["", f"Planning a file whose TABLE_MAPs lack column names (`{mp['file']}`, {mp['mb']:.0f} MB, MySQL "
                  f"8.0 MINIMAL metadata, its CREATE TABLEs repeated ~2,500 times), splitSize=8m, "
                  f"{mp['auto']['pieces']} pieces: {mp['auto']['plan_s']:.1f} s with `replayDdl=auto` (header pass "
                  f"+ every CREATE TABLE replayed with sqlglot, serial), {mp['never']['plan_s']:.1f} s with "
                  "`replayDdl=never` (header pass only)."]
    h = r.get("header_pass")
    if h:
        lines += ["", f"Planning pass over `{h['file']}` ({h['bytes'] / 1e6:,.0f} MB, {h['events']:,} events, "
                  f"{h['boundaries']:,} transaction boundaries), files in the page cache:", "",
                  "| pass | time s | MB/s |", "|---|---:|---:|"]
        for k in ("chunked, headers only", "chunked + CRC32 of every event", "chunked + CRC32 + DDL candidates kept",
                  "seek + read(19) per event"):
            lines.append(f"| {k} | {h[k]:.2f} | {h['bytes'] / 1e6 / h[k]:,.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
