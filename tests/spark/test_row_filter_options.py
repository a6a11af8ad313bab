"""The Spark source's `key` and `where` options (the CLI's --key / --where, issue 31): on a binlog a real
MariaDB wrote, the rows they keep equal the full read's rows filtered by an independent Python predicate
(the server's comparison rules: integers, a composite key, VARCHAR under a PAD SPACE, case-insensitive
collation), each change as the full read has it (its row_index too); the typed view and the transactions
mode keep what those rows say; bad values and filters that cannot be applied fail naming the option, the
table and the column."""
from __future__ import annotations

import collections
import json
import os
import random
import sys

import pytest

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"

from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.utils import CapturedException  # noqa: E402

from binlog_spec.errors import BinlogSparkError, RowFilterError  # noqa: E402
from binlog_spec.spark import records, register  # noqa: E402
from binlog_spec.spark.options import Config  # noqa: E402
from binlog_spec.spark.planning import plan  # noqa: E402
from binlog_spec.spark.source import BinlogDataSource  # noqa: E402

from conftest import ROOT  # noqa: E402

SPARK_ERRORS = (PySparkException, CapturedException, Exception)


def _workload(seed: int = 31) -> list[str]:
    """Transactions over three keyed tables and one other: multi-row inserts, updates (a key changed among
    them), deletes, a key deleted and inserted again; VARCHAR keys that differ by case and trailing blanks."""
    rnd = random.Random(seed)
    out = ["CREATE DATABASE d",
           "CREATE TABLE d.ints (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
           "CREATE TABLE d.comp (a INT, b VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, v INT, "
           "PRIMARY KEY (a, b))",
           "CREATE TABLE d.pad (k VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)",
           "CREATE TABLE d.other (id INT PRIMARY KEY, n INT)",
           "CREATE TABLE d.nokey (n INT, u INT UNIQUE)"]
    words = ["apple", "avocado", "banana", "cherry", "apricot", None]
    ids = list(range(1, 41))
    for tx in range(30):
        stmts = []
        base = tx * 40
        rows = ", ".join(f"({base + i}, {_lit(rnd.choice(words))}, {_lit(rnd.choice([None, *range(10)]))})"
                         for i in ids[:rnd.randint(2, 6)])
        stmts.append(f"INSERT INTO d.ints VALUES {rows}")
        if tx:
            lo = rnd.randrange(0, base, 40) + 1
            stmts.append(f"UPDATE d.ints SET n = {rnd.randint(0, 9)}, v = {_lit(rnd.choice(words))} "
                         f"WHERE id BETWEEN {lo} AND {lo + 3}")
            stmts.append(f"DELETE FROM d.ints WHERE id = {rnd.randrange(0, base, 40) + 2}")
        stmts.append(f"INSERT INTO d.comp VALUES ({tx % 5}, '{'bB'[tx % 2]}{tx}', {tx}), ({tx % 5}, 'x{tx}', 1)")
        stmts.append(f"UPDATE d.comp SET v = v + 1 WHERE a = {tx % 5}")
        stmts.append(f"INSERT INTO d.other VALUES ({tx}, {tx % 7})")
        out.append("BEGIN; " + "; ".join(stmts) + "; COMMIT")
    out += ["INSERT INTO d.ints VALUES (7, 'apple', 5), (8, 'apple', 5)",
            "UPDATE d.ints SET id = 7007 WHERE id = 7",           # the key changed: 7 in the before image only
            "INSERT INTO d.ints VALUES (7, NULL, 1)",
            "INSERT INTO d.comp VALUES (3, 'b ', 0)",             # 'b ' = 'B' = 'b' under PAD SPACE, _ci
            "UPDATE d.comp SET v = 99 WHERE a = 3 AND b = 'B'",
            "INSERT INTO d.pad VALUES ('Ab  ', 1), ('abc', 2), ('ab x', 3), ('a', 4)",
            "UPDATE d.pad SET v = v + 10",
            "DELETE FROM d.pad WHERE k = 'ab'",
            "INSERT INTO d.pad VALUES ('AB', 5)",
            "UPDATE d.pad SET k = 'zz' WHERE k = 'ab'",
            "INSERT INTO d.nokey VALUES (1, 1)",
            "FLUSH BINARY LOGS"]
    return out


def _lit(value) -> str:
    return "NULL" if value is None else (str(value) if isinstance(value, int) else f"'{value}'")


@pytest.fixture(scope="module")
def binlog(tmp_path_factory) -> str:
    sys.path.insert(0, str(ROOT / "fixtures"))
    from mariadb_server import MariaDBServer
    with MariaDBServer() as srv:
        srv.sql(";\n".join(_workload()) + ";")
        src = srv.binlogs()[-2]
        path = tmp_path_factory.mktemp("rowq") / src.name
        path.write_bytes(src.read_bytes())
    return str(path)


@pytest.fixture(scope="module")
def spark():
    b = (SparkSession.builder.master("local[2]").appName("binlog-spec row filters")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").config("spark.pyspark.python", sys.executable)
         .config("spark.driver.host", "127.0.0.1").config("spark.sql.shuffle.partitions", "4"))
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    register(s)
    yield s
    s.stop()


def _read(spark, path: str, **options):
    r = spark.read.format("binlog").option("splitSize", "16k")
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(path)


def _changes(df) -> collections.Counter:
    """The rows of a rows-mode DataFrame: (file, pos, row_index, table, op, before, after), images as dicts."""
    got: collections.Counter = collections.Counter()
    for r in df.selectExpr("file", "pos", "row_index", "schema", "`table`", "op", "to_json(before) AS b",
                           "to_json(after) AS a").collect():
        got[(r.file, r.pos, r.row_index, f"{r.schema}.{r.table}", r.op, r.b, r.a)] += 1
    return got


def _images(change):
    return [json.loads(x) for x in change[5:] if x is not None]


def _pad_ci(value) -> str | None:
    """A VARCHAR as utf8mb4_general_ci compares it: trailing blanks ignored (PAD SPACE), case folded."""
    return None if value is None else value.rstrip(" ").lower()


def _filtered(full: collections.Counter, table: str | None, pred) -> collections.Counter:
    """The full read's changes of `table` (every table: None) with a before or after image `pred` keeps."""
    return collections.Counter({c: n for c, n in full.items()
                                if (table is None or c[3] == table) and any(pred(i) for i in _images(c))})


def _where_pred(img) -> bool:
    """n BETWEEN 3 AND 7 AND v LIKE 'a%' OR v IS NULL, as SQL's three values make it (NULL: not kept)."""
    n, v = img.get("n"), img.get("v")
    return (n is not None and 3 <= n <= 7 and v is not None and v.lower().startswith("a")) or v is None


WHERE = "n BETWEEN 3 AND 7 AND v LIKE 'a%' OR v IS NULL"
CASES = [    # (options, table, predicate of an image)
    ({"key": "7"}, "d.ints", lambda i: i.get("id") == 7),
    ({"key": "3,b"}, "d.comp", lambda i: i.get("a") == 3 and _pad_ci(i.get("b")) == "b"),
    ({"key": "ab"}, "d.pad", lambda i: _pad_ci(i.get("k")) == "ab"),
    ({"where": WHERE}, "d.ints", _where_pred),
]


def test_key_and_where_keep_the_full_reads_rows_an_independent_predicate_keeps(spark, binlog):
    full = _changes(_read(spark, binlog))
    assert sum(full.values()) > 300 and len({c[3] for c in full}) == 5
    for options, table, pred in CASES:
        want = _filtered(full, table, pred)
        assert 0 < sum(want.values()) < sum(n for c, n in full.items() if c[3] == table), options
        got = _changes(_read(spark, binlog, mode="rows", table=table, **options))
        assert got == want, (options, list((got - want).items())[:3], list((want - got).items())[:3])
    # where over every table: the tables that have its columns
    want = _filtered(full, None, lambda i: i.get("v") == 99)
    assert {c[3] for c in want} == {"d.comp"}
    assert _changes(_read(spark, binlog, where="v = 99", excludeTable="d.other,d.nokey")) == want
    # the typed view: the images of the rows the key keeps
    typed = _read(spark, binlog, table="d.pad", key="'AB  '").select("k", "v", "_op", "_pos", "_row_index")
    assert sorted((r._pos, r._row_index, r._op, r.k, r.v) for r in typed.collect()) == sorted(
        (c[1], c[2], c[4], i["k"], i["v"])
        for c in _filtered(full, "d.pad", CASES[2][2]) for i in [_images(c)[-1]])


def test_a_where_over_a_column_the_table_lacks_fails_the_read_naming_the_table_and_the_column(spark, binlog):
    with pytest.raises(SPARK_ERRORS) as exc:
        _read(spark, binlog, mode="rows", table="d.ints", where="nope = 1").collect()
    text = str(exc.value)
    assert f"{binlog}: offset " in text and "where: table d.ints has no column nope" in text
    with pytest.raises(SPARK_ERRORS, match="where: table d.other has no column v"):
        _read(spark, binlog, where="v = 99", onError="skip").collect()        # (not a fault: it fails anyway)


def test_a_key_without_one_table_fails_the_load_naming_the_option(spark, binlog):
    with pytest.raises(SPARK_ERRORS, match=r"key: give exactly one table, \.option\('table', 'db\.table'\)"):
        _read(spark, binlog, key="7").collect()


# ------------------------------------------------------------------------ without a Spark session
def _split_records(path: str, **options) -> list[dict]:
    cfg = Config.from_options({"paths": json.dumps([path]), "splitSize": "8k", **options})
    schema = records.output_schema(cfg, None)
    splits = plan(cfg)
    assert len(splits) > 3
    return [row for split in splits for batch in records.read_split(cfg, schema, split) for row in batch.to_pylist()]


def test_the_transactions_mode_keeps_the_transactions_of_the_rows_kept_counted_as_kept(binlog):
    """As the CLI's analyze: a transaction is kept with the rows the filters keep, and counted with those."""
    full = collections.defaultdict(list)
    for r in _split_records(binlog, mode="rows", images="json"):
        images = [json.loads(x) if x is not None else None for x in (r["before"], r["after"])]
        full[r["gtid"]].append((r["table"], r["op"], *images))
    kept = {g: [c for c in cs if c[0] == "ints" and any(i is not None and _where_pred(i) for i in c[2:])]
            for g, cs in full.items()}
    want = {g: (len(cs), sum(c[1] == "insert" for c in cs), sum(c[1] == "update" for c in cs),
                sum(c[1] == "delete" for c in cs)) for g, cs in kept.items() if cs}
    # the transactions of statements (the DDL), without rows events, stay as the table filter keeps them
    statements = {t["gtid"]: (0, 0, 0, 0) for t in _split_records(binlog, mode="transactions", table="d.ints")
                  if t["rows"] == 0}
    assert len(statements) == 6 and not set(statements) & set(full)
    got = {t["gtid"]: (t["rows"], t["inserts"], t["updates"], t["deletes"])
           for t in _split_records(binlog, mode="transactions", table="d.ints", where=WHERE)}
    assert got == {**want, **statements} and 0 < len(want) < len(full)


def test_a_key_that_does_not_fit_the_table_names_the_file_the_offset_the_table_and_the_column(binlog):
    with pytest.raises(RowFilterError, match=r"offset \d+: WRITE_ROWS_EVENT(_V1)?: key: .*d\.ints\.id"):
        _split_records(binlog, mode="rows", table="d.ints", key="seven")
    with pytest.raises(RowFilterError, match=r"key: the key of d\.comp is \(a, b\): give 2 values, not 1"):
        _split_records(binlog, mode="rows", table="d.comp", key="3")
    with pytest.raises(RowFilterError, match=r"key: table d\.nokey has no primary key or NOT NULL unique key"):
        _split_records(binlog, mode="rows", table="d.nokey", key="1")     # (u is UNIQUE, not NOT NULL)


def test_the_typed_view_refuses_a_filter_it_cannot_apply_before_a_task_runs(binlog):
    source = BinlogDataSource({"path": binlog, "table": "d.pad", "where": "nope IS NULL"})
    with pytest.raises(BinlogSparkError, match=r"^d\.pad: where: table d\.pad has no column nope"):
        source.schema()


@pytest.mark.parametrize("options, message", [
    ({"key": "7"}, r"^key: give exactly one table"),
    ({"key": "7", "table": "d.*"}, r"^key: give exactly one table"),
    ({"key": "'7", "table": "d.ints"}, r"^key: unclosed quote"),
    ({"where": "n ="}, r"^where: cannot parse"),
    ({"where": " "}, r"^where: empty expression"),
    ({"where": "n = 1", "mode": "events"}, r"^where: not with mode=events"),
    ({"key": "1", "table": "d.ints", "mode": "ddl"}, r"^key: not with mode=ddl"),
])
def test_bad_key_and_where_options_name_the_option(options, message):
    with pytest.raises(BinlogSparkError, match=message):
        Config.from_options({"path": "x.000001", **options})


def test_the_options_are_the_clis_row_filters():
    cfg = Config.from_options({"path": "x.000001", "mode": "rows", "table": "d.comp", "key": "3,'b,c'",
                               "where": "v > 1"})
    assert (cfg.rows.table, cfg.rows.key, cfg.rows.where) == (("d", "comp"), ("3", "b,c"), "v > 1")
    assert not Config.from_options({"path": "x.000001"}).rows.active
