"""Benchmark workloads written by a real MariaDB server, generated once and cached.

    python benchmarks/workloads.py oltp [--scale 0.2]      # make (or find) a workload, print its description
    python benchmarks/workloads.py sbtest --rows 100000
    python benchmarks/workloads.py mixed --scale 0.05      # or mixed-minimal

Every workload is a `Workload`: the SQL it feeds to a private server (fixtures/mariadb_server.py,
Debian's mariadbd) as chunks of statements, each chunk one `mariadb` client session, and the counts
that check the result. The server logs in ROW format with FULL row images, FULL metadata (unless the
workload's own server options say otherwise), CRC32 checksums and MariaDB's default ANNOTATE_ROWS events; the first binlog, closed by FLUSH BINARY LOGS
and a clean shutdown, is the workload's file.

Workloads:

- `sbtest` (bench_rows.py): sysbench's `sbtest1(id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))`,
  N rows inserted 1000 per INSERT and 10 INSERTs per transaction, then N/5 rows updated and N/10
  deleted, 1000 rows per statement and 10 statements per transaction.
- `oltp` (bench_speed.py, issue 16): the same table, 1M x scale rows inserted 1000 per INSERT (one
  statement per transaction), then 100k x scale single-row UPDATEs (`SET k=k+1 WHERE id=...`, random
  ids) and 100k x scale single-row DELETEs (distinct random ids), each its own transaction
  (autocommit). About 506 MB at scale 1.
- `mixed` and `mixed-minimal` (bench_speed.py, issue 29): three tables of every common column type
  (MIXED_DDL, MIXED_TYPES), with `--binlog-row-metadata=FULL` and MINIMAL. At scale 1: 200k
  `customers` (INT UNSIGNED, VARCHAR utf8mb4 and ascii, ENUM, DECIMAL(12,2), SET, DATETIME(6), JSON)
  inserted 1000 per INSERT, 20k `places` (BIT, YEAR, DATE, TIME(3), TIME, DATETIME, TIMESTAMP(6),
  VARCHAR latin1, TEXT, BLOB, GEOMETRY, DECIMAL(30,10), TINYINT, MEDIUMINT, DOUBLE) 100 per INSERT;
  then, interleaved, 500k orders (BIGINT, DECIMAL, ENUM, TIMESTAMP(3)) inserted 1, 1, 3, 10 and 20
  rows per INSERT in turn, 200k single-row customer UPDATEs and 10k place UPDATEs; then bulk UPDATEs and DELETEs (25k rows per
  statement on orders, one statement each on customers); then single-row DELETEs. Every statement is
  its own transaction, each at its own `SET TIMESTAMP`, spread evenly over 12 hours from
  2026-01-01 00:00 UTC, so that the 2-hour window 05:00-07:00 holds a sixth of the transactions.
  294k transactions, about 325 MB at scale 1 with FULL metadata (16.3 MB at scale 0.05; MINIMAL 10 %
  less): every statement's text is in its ANNOTATE_ROWS event, and a TABLE_MAP precedes each
  transaction's rows.

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
    #: Rows left at the end, the check that every statement ran: a count of sbtest.sbtest1, or
    #: {"db.table": count} for a workload of several tables.
    rows_left: int | dict
    #: Counts written into the description (inserts, updates, deletes, transactions, ...).
    counts: dict
    #: The functions whose source text keys the cache (those that write the SQL), and the constants
    #: they read.
    sources: tuple = field(default=())
    #: Server options after GEN_ARGS (the last of an option wins), e.g. --binlog-row-metadata=MINIMAL.
    server_args: tuple = field(default=())

    def key(self) -> str:
        h = hashlib.sha256()
        own = {"server_args": list(self.server_args)} if self.server_args else {}   # none: the keys of before
        h.update(json.dumps({"name": self.name, "params": self.params, "gen_args": GEN_ARGS, **own,
                             "base_args": mariadb_server.BASE_ARGS, "server": server_version()},
                            sort_keys=True).encode())
        for fn in self.sources:     # functions, or the text they read (a DDL, a constant's repr)
            h.update((inspect.getsource(fn) if callable(fn) else repr(fn)).encode())
        return h.hexdigest()[:12]

    def folder(self) -> Path:
        label = "-".join(f"{v}" for v in self.params.values())
        return CACHE / f"{self.name}-{label}-{self.key()}"

    def path(self) -> Path:
        return self.folder() / BINLOG_NAME

    def tables_left(self) -> dict:
        return self.rows_left if isinstance(self.rows_left, dict) else {"sbtest.sbtest1": self.rows_left}


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


# ---------------------------------------------------------------- the mixed-type workload (issue 29)
MIXED_DDL = """CREATE DATABASE shop;
CREATE TABLE shop.customers (id INT UNSIGNED NOT NULL PRIMARY KEY, name VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  email VARCHAR(80) CHARACTER SET ascii NOT NULL, status ENUM('new','active','vip','closed') NOT NULL DEFAULT 'new',
  balance DECIMAL(12,2) NOT NULL DEFAULT 0, tags SET('newsletter','sms','b2b','beta','vip') NOT NULL DEFAULT '',
  created DATETIME(6) NOT NULL, updated DATETIME(6) NULL DEFAULT NULL, profile JSON NULL) ENGINE=InnoDB;
CREATE TABLE shop.orders (id BIGINT NOT NULL PRIMARY KEY, customer_id INT UNSIGNED NOT NULL,
  total DECIMAL(12,2) NOT NULL, tax DECIMAL(7,4) NOT NULL, state ENUM('open','paid','shipped','cancelled') NOT NULL,
  created TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), shipped TIMESTAMP(3) NULL DEFAULT NULL,
  KEY customer (customer_id)) ENGINE=InnoDB;
CREATE TABLE shop.places (id INT NOT NULL PRIMARY KEY, flags BIT(10) NOT NULL, built YEAR NULL, opened DATE NOT NULL,
  opens TIME(3) NOT NULL, closes TIME NOT NULL, checked DATETIME NOT NULL, seen TIMESTAMP(6) NULL DEFAULT NULL,
  label VARCHAR(40) CHARACTER SET latin1 NOT NULL, note TEXT CHARACTER SET utf8mb4, photo BLOB, spot GEOMETRY NOT NULL,
  ratio DECIMAL(30,10) NOT NULL, level TINYINT NOT NULL, reading DOUBLE NULL, amount MEDIUMINT UNSIGNED NOT NULL)
  ENGINE=InnoDB;
"""
#: The column types the mixed workload writes (tests check that its DDL has each).
MIXED_TYPES = ("INT UNSIGNED", "BIGINT", "TINYINT", "MEDIUMINT UNSIGNED", "DOUBLE", "DECIMAL(12,2)", "DECIMAL(30,10)",
               "BIT(10)", "YEAR", "DATE", "TIME(3)", "TIME", "DATETIME", "DATETIME(6)", "TIMESTAMP(3)",
               "TIMESTAMP(6)", "ENUM", "SET", "CHARACTER SET utf8mb4", "CHARACTER SET latin1",
               "CHARACTER SET ascii", "JSON", "TEXT", "BLOB", "GEOMETRY")
MIXED_BASE = 1767225600          # 2026-01-01 00:00:00 UTC: the first transaction's SET TIMESTAMP
MIXED_SPAN = 12 * 3600           # the transactions' times spread evenly over 12 hours
MIXED_WINDOW = (5 * 3600, 7 * 3600)   # a 2-hour window in the middle (seconds after MIXED_BASE)
MIXED_BULK = 25_000              # rows per bulk UPDATE / DELETE statement (each its own transaction)
MIXED_SMALL_TABLE = "shop.places"
MIXED_ORDER_GROUPS = (1, 1, 3, 10, 20)   # orders per INSERT (one per transaction), in turn: 35 in 5
_FIRST = ("Zoë", "José", "Amélie", "Søren", "Олег", "渡辺", "Nguyễn", "Ana", "John", "O'Brien", "Łukasz", "🙂 Jo")
_LAST = ("Müller", "Smith", "García", "Ærø", "Иванов", "山田", "Dubois", "Kowalski", "Lee", "d'Arc")
_CITIES = ("Köln", "Paris", "Zürich", "東京", "Kraków", "São Paulo", "Reykjavík", "Austin")
_LABELS = ("Café Müller", "Ørsted Plads", "Señor Taco", "Hôtel Dieu", "Plain shop", "Straße 5")


def sql_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def mixed_sizes(scale: float) -> dict:
    """Issue 29's shape at scale 1: 200k customers, 500k orders, 200k single-row customer UPDATEs,
    and a small third table of 20k places."""
    c, o, u, p = (max(1, round(n * scale)) for n in (200_000, 500_000, 200_000, 20_000))
    return {"customers": c, "orders": o, "updates": u, "places": p}


def order_groups(orders: int) -> list[int]:
    """The orders of each order INSERT, MIXED_ORDER_GROUPS in turn (the last one cut to the total)."""
    out, done = [], 0
    while done < orders:
        n = min(MIXED_ORDER_GROUPS[len(out) % len(MIXED_ORDER_GROUPS)], orders - done)
        out.append(n)
        done += n
    return out


def mixed_plan(sz: dict) -> dict:
    """The mixed workload's counts, derived from its sizes as mixed_sql writes them."""
    c, o, u, p = sz["customers"], sz["orders"], sz["updates"], sz["places"]
    kept = (o * 9) // 10                    # orders above it go in bulk DELETEs
    single = {"order_deletes": o // 50, "place_updates": p // 2, "place_deletes": p // 10}
    bulk = {"order_updates": o // 2, "order_deletes": o - kept, "customer_updates": c // 10,
            "customer_deletes": (c + 49) // 50}
    tx = (-(-c // ROWS_PER_STATEMENT) + -(-p // 100) + len(order_groups(o)) + u + single["place_updates"]
          + -(-bulk["order_updates"] // MIXED_BULK) + -(-bulk["order_deletes"] // MIXED_BULK) + 2
          + single["order_deletes"] + single["place_deletes"])
    inserts = c + o + p
    updates = u + single["place_updates"] + bulk["order_updates"] + bulk["customer_updates"]
    deletes = single["order_deletes"] + single["place_deletes"] + bulk["order_deletes"] + bulk["customer_deletes"]
    return {**sz, "kept_orders": kept, "inserts": inserts, "updates": updates, "deletes": deletes,
            "row_changes": inserts + updates + deletes, "transactions": tx,
            "rows_left": {"shop.customers": c - bulk["customer_deletes"],
                          "shop.orders": o - single["order_deletes"] - bulk["order_deletes"],
                          "shop.places": p - single["place_deletes"]}}


def _customer_row(rng: random.Random, i: int) -> str:
    name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
    tags = ",".join(t for t in ("newsletter", "sms", "b2b", "beta") if rng.random() < 0.3)
    created = (f"{rng.randint(2015, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
               f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randrange(10**6):06d}")
    profile = json.dumps({"age": rng.randint(18, 90), "city": rng.choice(_CITIES), "score": rng.randint(0, 1000) / 8,
                          "langs": rng.sample(["en", "de", "fr", "ja", "pt"], rng.randint(0, 3)),
                          "vip": rng.random() < 0.1, "ref": None}, ensure_ascii=False)
    return (f"({i},{sql_str(name)},'user{i}@example.com','{rng.choice(('new', 'active', 'closed'))}',"
            f"{rng.uniform(-1000, 100_000):.2f},'{tags}','{created}',NULL,"
            f"{'NULL' if rng.random() < 0.05 else sql_str(profile)})")


def _place_row(rng: random.Random, i: int) -> str:
    def t(big: bool) -> str:
        sign = "-" if big and rng.random() < 0.1 else ""
        return f"{sign}{rng.randint(0, 838 if big else 23)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    spot = (f"POINT({rng.uniform(-180, 180):.6f} {rng.uniform(-90, 90):.6f})" if rng.random() < 0.8 else
            f"LINESTRING(0 0,{rng.randint(1, 99)} {rng.randint(1, 99)},{rng.randint(1, 99)} 5)")
    photo = "NULL" if rng.random() < 0.2 else "X'" + rng.randbytes(rng.randint(16, 160)).hex() + "'"
    return (f"({i},b'{rng.getrandbits(10):010b}',{rng.choice(('NULL', rng.randint(1901, 2155)))},"
            f"'{rng.randint(1000, 9999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}',"
            f"'{t(True)}.{rng.randrange(1000):03d}','{t(False)}',"
            f"'{rng.randint(1970, 2037)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {t(False)}',"
            f"{'NULL' if rng.random() < 0.5 else 'NOW(6)'},{sql_str(rng.choice(_LABELS))},"
            f"{sql_str(rng.choice(_CITIES) + ' ✓ ' * rng.randint(0, 3))},{photo},ST_GeomFromText('{spot}'),"
            f"{rng.choice('-+')}{rng.randrange(10**20)}.{rng.randrange(10**10):010d},{rng.randint(-128, 127)},"
            f"{'NULL' if rng.random() < 0.1 else repr(rng.uniform(-1e6, 1e6))},{rng.randrange(1 << 24)})")


def _customer_update(rng: random.Random, c: int) -> str:
    """One single-row UPDATE; each sets `updated` to its transaction's time, so that none is a no-op
    (MariaDB logs nothing for an UPDATE that changes no value)."""
    i, kind = rng.randint(1, c), rng.randrange(4)
    head = "UPDATE shop.customers SET "
    if kind == 0:
        return f"{head}balance=balance+{rng.uniform(-50, 500):.2f}, updated=NOW(6) WHERE id={i};\n"
    if kind == 1:
        tags = ",".join(t for t in ("newsletter", "sms", "b2b", "beta") if rng.random() < 0.4)
        return (f"{head}status='{rng.choice(('active', 'vip', 'closed'))}', tags='{tags}', updated=NOW(6) "
                f"WHERE id={i};\n")
    if kind == 2:
        return (f"{head}profile=JSON_SET(COALESCE(profile, '{{}}'), '$.score', {rng.randint(0, 99) / 4}, "
                f"'$.city', {sql_str(rng.choice(_CITIES))}), updated=NOW(6) WHERE id={i};\n")
    return f"{head}name={sql_str(rng.choice(_FIRST) + ' ' + rng.choice(_LAST))}, updated=NOW(6) WHERE id={i};\n"


def mixed_transactions(sz: dict, seed: int = 29) -> Iterator[str]:
    """The mixed workload's transactions in order, each a string of statements (without its time)."""
    rng = random.Random(seed)
    plan = mixed_plan(sz)
    c, o, p = sz["customers"], sz["orders"], sz["places"]
    for a in range(1, c + 1, ROWS_PER_STATEMENT):
        rows = ",".join(_customer_row(rng, i) for i in range(a, min(a + ROWS_PER_STATEMENT, c + 1)))
        yield f"INSERT INTO shop.customers VALUES {rows};\n"
    for a in range(1, p + 1, 100):
        yield f"INSERT INTO shop.places VALUES {','.join(_place_row(rng, i) for i in range(a, min(a + 100, p + 1)))};\n"
    # interleaved: new orders (1 to 20 per INSERT), single-row customer UPDATEs and place UPDATEs
    groups = iter(order_groups(o))
    kinds = ["o"] * len(order_groups(o)) + ["u"] * sz["updates"] + ["p"] * (p // 2)
    rng.shuffle(kinds)
    order = 0
    for k in kinds:
        if k == "o":
            rows = []
            for _ in range(next(groups)):
                order += 1
                rows.append(f"({order},{rng.randint(1, c)},{rng.uniform(1, 5000):.2f},{rng.uniform(0, 0.25):.4f},"
                            f"'{rng.choice(('open', 'paid'))}')")
            yield f"INSERT INTO shop.orders (id, customer_id, total, tax, state) VALUES {','.join(rows)};\n"
        elif k == "u":
            yield _customer_update(rng, c)
        else:
            yield (f"UPDATE shop.places SET seen=NOW(6), flags=flags ^ b'1', "
                   f"note={sql_str(rng.choice(_CITIES) + ' 🙂')}, spot=ST_GeomFromText('POINT({rng.randint(-99, 99)} "
                   f"{rng.randint(-80, 80)})') WHERE id={rng.randint(1, p)};\n")
    # bulk statements
    for a in range(1, o // 2 + 1, MIXED_BULK):
        yield (f"UPDATE shop.orders SET state='shipped', shipped=NOW(3), total=total+0.01 "
               f"WHERE id BETWEEN {a} AND {min(a + MIXED_BULK - 1, o // 2)};\n")
    for a in range(plan["kept_orders"] + 1, o + 1, MIXED_BULK):
        yield f"DELETE FROM shop.orders WHERE id BETWEEN {a} AND {min(a + MIXED_BULK - 1, o)};\n"
    yield "UPDATE shop.customers SET status='vip', tags=tags | 16, updated=NOW(6) WHERE id % 10 = 0;\n"
    yield "DELETE FROM shop.customers WHERE id % 50 = 1;\n"
    # single-row DELETEs of distinct ids
    gone = [f"DELETE FROM shop.orders WHERE id={i};\n" for i in rng.sample(range(1, plan["kept_orders"] + 1), o // 50)]
    gone += [f"DELETE FROM shop.places WHERE id={i};\n" for i in rng.sample(range(1, p + 1), p // 10)]
    rng.shuffle(gone)
    yield from gone


def mixed_sql(sz: dict, seed: int = 29) -> Iterator[str]:
    """mixed_transactions as chunks of SQL, each transaction at its own SET TIMESTAMP: the k-th of
    n at MIXED_BASE + k * MIXED_SPAN / n, so that a time window holds a known share of them."""
    total = mixed_plan(sz)["transactions"]
    yield f"SET TIMESTAMP={MIXED_BASE};\n" + MIXED_DDL
    chunk: list[str] = []
    size = 0
    for k, tx in enumerate(mixed_transactions(sz, seed)):
        chunk.append(f"SET TIMESTAMP={MIXED_BASE + k * MIXED_SPAN / total:.6f};\n{tx}")
        size += len(tx)
        if len(chunk) >= 10_000 or size > 4 << 20:
            yield "SET NAMES utf8mb4; SET time_zone='+00:00';\n" + "".join(chunk)
            chunk, size = [], 0
    if chunk:
        yield "SET NAMES utf8mb4; SET time_zone='+00:00';\n" + "".join(chunk)


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


def mixed(scale: float = 1.0, metadata: str = "FULL") -> Workload:
    """Issue 29's mixed-type workload with `--binlog-row-metadata=metadata` (FULL or MINIMAL)."""
    if metadata not in ("FULL", "MINIMAL"):
        raise ValueError(f"mixed: metadata {metadata!r} is neither FULL nor MINIMAL")
    sz = mixed_sizes(scale)
    plan = mixed_plan(sz)
    start, stop = (time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(MIXED_BASE + s)) for s in MIXED_WINDOW)
    counts = {k: plan[k] for k in ("customers", "orders", "places", "inserts", "updates", "deletes", "row_changes",
                                   "transactions")}
    return Workload(
        name="mixed" if metadata == "FULL" else "mixed-minimal", params={"scale": scale},
        sql=lambda: mixed_sql(sz), rows_left=plan["rows_left"],
        counts={**counts, "metadata": metadata, "small_table": MIXED_SMALL_TABLE,
                "window": {"start": start, "stop": stop, "timezone": "UTC"}},
        sources=(mixed_sql, mixed_transactions, mixed_plan, mixed_sizes, order_groups, _customer_row, _place_row,
                 _customer_update, sql_str, MIXED_DDL,
                 (MIXED_BASE, MIXED_SPAN, MIXED_WINDOW, MIXED_BULK, MIXED_ORDER_GROUPS),
                 (_FIRST, _LAST, _CITIES, _LABELS)),
        server_args=(f"--binlog-row-metadata={metadata}",))


WORKLOADS = {"sbtest": sbtest, "oltp": oltp, "mixed": mixed,
             "mixed-minimal": lambda scale=1.0: mixed(scale, "MINIMAL")}


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
        with MariaDBServer(extra_args=[*GEN_ARGS, *w.server_args]) as srv:
            version = srv.sql("SELECT VERSION()").strip()
            for i, chunk in enumerate(w.sql()):
                srv.sql(chunk)
                if i % 100 == 99:
                    say(f"  {i + 1} chunks, {time.perf_counter() - t0:.0f} s")
            srv.sql("FLUSH BINARY LOGS")
            first = srv.binlogs()[0]
            if first.name != BINLOG_NAME:
                raise SystemExit(f"workloads: the server's first binlog is {first.name}, expected {BINLOG_NAME}")
            left = {t: int(srv.sql(f"SELECT COUNT(*) FROM {t}").strip()) for t in w.tables_left()}
            srv.stop()    # a clean shutdown: the binlog is complete and closed
            shutil.copyfile(first, tmp / BINLOG_NAME)
        if left != w.tables_left():
            raise SystemExit(f"workloads: the tables hold {left} rows, expected {w.tables_left()}")
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
    ap.add_argument("--scale", type=float, default=1.0, help="oltp: 1M x scale rows; mixed, mixed-minimal: "
                    "200k customers, 500k orders x scale (default 1)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="sbtest: rows (default 1,000,000)")
    args = ap.parse_args(argv)
    w = sbtest(args.rows) if args.workload == "sbtest" else WORKLOADS[args.workload](args.scale)
    meta = ensure(w)
    print(json.dumps({**meta, "path": str(w.path())}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
