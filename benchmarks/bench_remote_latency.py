"""How soon `rows -R --stop-never --format jsonl` prints a committed row change (issue 30's target: within
100 ms median and 1 s worst, under 10k row changes per second).

A private MariaDB (fixtures/mariadb_server.py); the command follows it in a subprocess; a writer commits
INSERTs at a steady rate (single-row transactions, or batches of rows per transaction at the higher
rates) through PyMySQL; each row's latency is the time from its COMMIT's return (the binlog written) to
the moment its line is read from the command's stdout. Prints a Markdown table and the machine.

    .venv/bin/python benchmarks/bench_remote_latency.py [--seconds 10] [--rates 100,1000,5000,9000]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import machine  # noqa: E402
import mariadb_server  # noqa: E402
import pymysql  # noqa: E402


def lscpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return machine.describe()["cpu"]
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return ", ".join(f"{k.strip()}: {fields[k].strip()}" for k in ("Model name", "CPU(s)", "Hypervisor vendor")
                     if k in fields)


def measure(srv, rate: int, seconds: float, batch: int, first_id: int) -> dict:
    """Commit `rate` rows a second for `seconds` (`batch` rows a transaction); the latency of each row."""
    srv.sql("FLUSH BINARY LOGS")    # (a new log: the run prints only what is written next)
    log = srv.binlogs()[-1].name
    env = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "binlog_spec", "rows", "--format", "jsonl", "-R", "--socket",
                             str(srv.socket), "--user", "root", "--no-defaults", "--stop-never", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    committed: dict[int, float] = {}
    seen: dict[int, float] = {}

    def reader() -> None:
        for line in iter(proc.stdout.readline, b""):
            now = time.monotonic()
            seen[json.loads(line)["after"]["id"]] = now
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    conn = pymysql.connect(unix_socket=str(srv.socket), user="root", autocommit=False)
    time.sleep(1.5)     # (connected and waiting)
    cur = conn.cursor()
    period = batch / rate
    start = time.monotonic()
    n, i = int(rate * seconds / batch), first_id
    for k in range(n):
        due = start + k * period
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        ids = list(range(i, i + batch))
        cur.execute("INSERT INTO d.t (id, v) VALUES " + ",".join(f"({x}, 'v{x}')" for x in ids))
        conn.commit()
        done = time.monotonic()
        for x in ids:
            committed[x] = done
        i += batch
    elapsed = time.monotonic() - start
    deadline = time.monotonic() + 10
    while any(x not in seen for x in (i - 1, first_id)) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=30)
    conn.close()
    lat = sorted((seen[x] - committed[x]) * 1000 for x in committed if x in seen)
    return {"rate": rate, "batch": batch, "achieved": round(len(committed) / elapsed), "rows": len(committed),
            "printed": len(lat), "median_ms": statistics.median(lat), "p99_ms": lat[int(0.99 * (len(lat) - 1))],
            "max_ms": lat[-1], "next_id": i}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rates", default="100,1000,5000,9000")
    args = ap.parse_args()
    results = []
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
        next_id = 1
        for rate in (int(r) for r in args.rates.split(",")):
            batch = 1 if rate <= 1000 else 10
            r = measure(srv, rate, args.seconds, batch, next_id)
            next_id = r.pop("next_id")
            results.append(r)
            print(json.dumps(r), file=sys.stderr)
    print(f"CPU: {lscpu_model()}; Python {machine.describe()['python']}; {time.strftime('%Y-%m-%d')}\n")
    print("| row changes/s asked (achieved) | rows a transaction | rows | printed | median ms | p99 ms | worst ms |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['rate']} ({r['achieved']}) | {r['batch']} | {r['rows']} | {r['printed']} | {r['median_ms']:.1f} "
              f"| {r['p99_ms']:.1f} | {r['max_ms']:.1f} |")


if __name__ == "__main__":
    main()
