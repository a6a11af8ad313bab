"""Benchmark workloads written by a real MariaDB server, generated once and cached.

    python benchmarks/workloads.py oltp [--scale 0.2]      # make (or find) a workload, print its description
    python benchmarks/workloads.py sbtest --rows 100000

Every workload is a `Workload`: the SQL it feeds to a private server (fixtures/mariadb_server.py,
Debian's mariadbd) as chunks of statements, each chunk one `mariadb` client session, and the counts
that check the result. The server logs in ROW format with FULL row images, FULL metadata, CRC32
checksums and MariaDB's default ANNOTATE_ROWS events; the first binlog, closed by FLUSH BINARY LOGS
and a clean shutdown, is the workload's file.

Workloads:

- `sbtest` (bench_rows.py): sysbench's `sbtest1(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))`,
  N rows inserted 1000 per INSERT and 10 INSERTs per transaction, then N/5 rows updated and N/10
  deleted, 1000 rows per statement and 10 statements per transaction.
- `oltp` (bench_speed.py, issue 16): the same table, 1M x scale rows inserted 1000 per INSERT (one
  statement per transaction), then 100k x scale single-row UPDATEs (`SET k=k+1 WHERE id=...`, random
  ids) and 100k x scale single-row DELETEs (distinct random ids), each its own transaction
  (autocommit). About 506 MB at scale 1.

The cache (BINLOG_SPEC_BENCH_CACHE, default ~/.cache/binlog-spec/bench, outside the repository and
shared by its worktrees) holds one folder per workload and key; the key is a digest of the workload's
parameters, the source text of the functions that write its SQL, the server's options and
`mariadbd --version`, so a workload is made again exactly when its generator changes. A lock file
keeps two runs from making the same workload at once.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import inspect
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures"))

import mariadb_server  # noqa: E402
from mariadb_server import MariaDBServer  # noqa: E402

CACHE = Path(os.environ.get("BINLOG_SPEC_BENCH_CACHE", Path.home() / ".cache" / "binlog-spec" / "bench"))
BINLOG_NAME = "mariadb-bin.000001"
ROWS_PER_STATEMENT = 1000

#: Server settings for the generation, beyond mariadb_server.BASE_ARGS (which set ROW format and
#: FULL metadata): the defaults the workloads rely on, said explicitly, then a bigger buffer pool and
#: lazy flushing (the data need not survive a crash; the binlog is closed cleanly).
GEN_ARGS = ["--binlog-row-image=FULL", "--binlog-checksum=CRC32", "--binlog-annotate-row-events=ON",
            "--innodb-buffer-pool-size=1G", "--innodb-log-file-size=256M", "--innodb-flush-log-at-trx-commit=0",
            "--sync-binlog=0", "--max-binlog-size=1G"]

SBTEST_DDL = ("CREATE DATABASE sbtest;\n"
              "CREATE TABLE sbtest.sbtest1 (id INT NOT NULL, k INT NOT NULL DEFAULT 0, "
              "c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) "
              "ENGINE=InnoDB;\n")


@dataclass(frozen=True)
class Workload:
    name: str
    params: dict
    #: The chunks of SQL, in order; each is run by one client session.
    sql: Callable[[], Iterator[str]]
    #: Rows left in sbtest.sbtest1 at the end: the check that every statement ran.
    rows_left: int
    #: Counts written into the description (inserts, updates, deletes, transactions, ...).
    counts: dict
    #: The functions whose source text keys the cache (those that write the SQL).
    sources: tuple = field(default=())

    def key(self) -> str:
        h = hashlib.sha256()
        h.update(json.dumps({"name": self.name, "params": self.params, "gen_args": GEN_ARGS,
                             "base_args": mariadb_server.BASE_ARGS, "server": server_version()},
                            sort_keys=True).encode())
        for fn in self.sources:
            h.update(inspect.getsource(fn).encode())
        return h.hexdigest()[:12]

    def folder(self) -> Path:
        label = "-".join(f"{v}" for v in self.params.values())
        return CACHE / f"{self.name}-{label}-{self.key()}"

    def path(self) -> Path:
        return self.folder() / BINLOG_NAME


def server_version() -> str:
    r = subprocess.run(["mariadbd", "--version"], capture_output=True, text=True, check=False)
    return r.stdout.strip() or r.stderr.strip()


# ---------------------------------------------------------------- SQL
def sysbench_text(rng: random.Random, groups: int) -> str:
    """sysbench's c/pad values: groups of 11 random digits joined by '-' (119 / 59 characters)."""
    return "-".join(f"{rng.randrange(10 ** 11):011d}" for _ in range(groups))


def insert_statements(rng: random.Random, rows: int) -> Iterator[str]:
    """INSERTs of ids 1..rows, ROWS_PER_STATEMENT rows each, with sysbench-like values."""
    for start in range(1, rows + 1, ROWS_PER_STATEMENT):
        values = ",".join(f"({i},{rng.randint(1, rows)},'{sysbench_text(rng, 10)}','{sysbench_text(rng, 5)}')"
                          for i in range(start, min(start + ROWS_PER_STATEMENT, rows + 1)))
        yield f"INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES {values};\n"


def grouped(statements: Iterator[str], per_transaction: int, per_chunk: int) -> Iterator[str]:
    """Statements as chunks of SQL; `per_transaction` > 1 wraps them in BEGIN ... COMMIT groups,
    1 leaves each its own (autocommit) transaction."""
    chunk: list[str] = []
    batch: list[str] = []
    for st in statements:
        batch.append(st)
        if len(batch) == per_transaction:
            chunk.append("".join(batch) if per_transaction == 1 else "BEGIN;\n" + "".join(batch) + "COMMIT;\n")
            batch = []
        if len(chunk) >= per_chunk:
            yield "".join(chunk)
            chunk = []
    if batch:
        chunk.append("".join(batch) if per_transaction == 1 else "BEGIN;\n" + "".join(batch) + "COMMIT;\n")
    if chunk:
        yield "".join(chunk)


def range_statements(head: str, first: int, last: int) -> Iterator[str]:
    for a in range(first, last + 1, ROWS_PER_STATEMENT):
        yield f"{head} WHERE id BETWEEN {a} AND {min(a + ROWS_PER_STATEMENT - 1, last)};\n"


def sbtest_sql(rows: int, seed: int = 1) -> Iterator[str]:
    rng = random.Random(seed)
    yield SBTEST_DDL
    yield from grouped(insert_statements(rng, rows), 10, 1)
    yield from grouped(range_statements("UPDATE sbtest.sbtest1 SET k=k+1", 1, rows // 5), 10, 100)
    yield from grouped(range_statements("DELETE FROM sbtest.sbtest1", rows - rows // 10 + 1, rows), 10, 100)


def oltp_sql(rows: int, updates: int, deletes: int, seed: int = 16) -> Iterator[str]:
    rng = random.Random(seed)
    yield SBTEST_DDL
    yield from grouped(insert_statements(rng, rows), 1, 10)
    yield from grouped((f"UPDATE sbtest.sbtest1 SET k=k+1 WHERE id={rng.randint(1, rows)};\n"
                        for _ in range(updates)), 1, 10_000)
    yield from grouped((f"DELETE FROM sbtest.sbtest1 WHERE id={i};\n"
                        for i in rng.sample(range(1, rows + 1), deletes)), 1, 10_000)


# ---------------------------------------------------------------- workloads
def sbtest(rows: int = 1_000_000) -> Workload:
    per_tx = ROWS_PER_STATEMENT * 10
    return Workload(
        name="sbtest", params={"rows": rows}, sql=lambda: sbtest_sql(rows), rows_left=rows - rows // 10,
        counts={"inserts": rows, "updates": rows // 5, "deletes": rows // 10,
                "row_changes": rows + rows // 5 + rows // 10,
                "transactions": -(-rows // per_tx) + -(-(rows // 5) // per_tx) + -(-(rows // 10) // per_tx)},
        sources=(sbtest_sql, insert_statements, grouped, range_statements, sysbench_text))


def oltp(scale: float = 1.0) -> Workload:
    rows, changes = round(1_000_000 * scale), round(100_000 * scale)
    if rows < 1 or changes > rows:
        raise ValueError(f"oltp: scale {scale} gives {rows} rows and {changes} updates/deletes")
    return Workload(
        name="oltp", params={"scale": scale}, sql=lambda: oltp_sql(rows, changes, changes), rows_left=rows - changes,
        counts={"inserts": rows, "updates": changes, "deletes": changes, "row_changes": rows + 2 * changes,
                "insert_statements": -(-rows // ROWS_PER_STATEMENT),
                "transactions": -(-rows // ROWS_PER_STATEMENT) + 2 * changes},
        sources=(oltp_sql, insert_statements, grouped, sysbench_text))


WORKLOADS = {"sbtest": sbtest, "oltp": oltp}


# ---------------------------------------------------------------- generation
def ensure(w: Workload, quiet: bool = False) -> dict:
    """The description of `w`'s cached binlog (made first when missing); its file is w.path()."""
    folder = w.folder()
    meta_file = folder / "workload.json"
    if meta_file.exists():
        return json.loads(meta_file.read_text(encoding="utf-8"))
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # another run making the same workload: wait for it
        if meta_file.exists():
            return json.loads(meta_file.read_text(encoding="utf-8"))
        return _generate(w, folder, quiet)


def _generate(w: Workload, folder: Path, quiet: bool) -> dict:
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    say(f"generating the {w.name} workload {w.params} into {folder} ...")
    t0 = time.perf_counter()
    tmp = folder.with_name(folder.name + f".part{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with MariaDBServer(extra_args=GEN_ARGS) as srv:
            version = srv.sql("SELECT VERSION()").strip()
            for i, chunk in enumerate(w.sql()):
                srv.sql(chunk)
                if i % 100 == 99:
                    say(f"  {i + 1} chunks, {time.perf_counter() - t0:.0f} s")
            srv.sql("FLUSH BINARY LOGS")
            first = srv.binlogs()[0]
            if first.name != BINLOG_NAME:
                raise SystemExit(f"workloads: the server's first binlog is {first.name}, expected {BINLOG_NAME}")
            left = int(srv.sql("SELECT COUNT(*) FROM sbtest.sbtest1").strip())
            srv.stop()    # a clean shutdown: the binlog is complete and closed
            shutil.copyfile(first, tmp / BINLOG_NAME)
        if left != w.rows_left:
            raise SystemExit(f"workloads: the table holds {left} rows, expected {w.rows_left}")
        meta = {"workload": w.name, "params": w.params, "key": w.key(), **w.counts, "server_version": version,
                "binlog": BINLOG_NAME, "bytes": (tmp / BINLOG_NAME).stat().st_size,
                "generated_in_s": round(time.perf_counter() - t0, 1)}
        (tmp / "workload.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"  done in {meta['generated_in_s']} s: {meta['bytes']:,} bytes")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", choices=sorted(WORKLOADS))
    ap.add_argument("--scale", type=float, default=1.0, help="oltp: 1M x scale rows (default 1)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="sbtest: rows (default 1,000,000)")
    args = ap.parse_args(argv)
    w = oltp(args.scale) if args.workload == "oltp" else sbtest(args.rows)
    meta = ensure(w)
    print(json.dumps({**meta, "path": str(w.path())}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
