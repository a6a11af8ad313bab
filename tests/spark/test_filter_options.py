"""The Spark source's op and threadId options: the CLI's values and errors, and what its --op / --thread-id
keep, split by split."""
from __future__ import annotations

import io
import json

import pytest

pytest.importorskip("pyspark")

from binlog_spec import cli  # noqa: E402
from binlog_spec.errors import BinlogSparkError  # noqa: E402
from binlog_spec.spark import records  # noqa: E402
from binlog_spec.spark.options import Config  # noqa: E402
from binlog_spec.spark.planning import plan  # noqa: E402

from conftest import CORPUS  # noqa: E402

MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")     # MySQL 8.0.31: 3 client threads


def cli_rows(*argv):
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["rows", "--format", "jsonl", *argv], out, err) in (0, 1), err.getvalue()
    return [(r["pos"], r["op"]) for r in map(json.loads, out.getvalue().splitlines())]


def spark_rows(**options):
    cfg = Config.from_options({"paths": json.dumps([MYSQL8]), "splitSize": "512k", **options})
    schema = records.output_schema(cfg, None)
    got = []
    for split in plan(cfg):
        for batch in records.read_split(cfg, schema, split):
            got += zip(batch.column("pos").to_pylist(), batch.column("op").to_pylist())
    return got


def test_thread_id_and_op_options_keep_what_the_cli_keeps():
    out = io.StringIO()
    cli.main(["events", "--format", "jsonl", MYSQL8], out, io.StringIO())
    threads = {ev["thread_id"] for ev in map(json.loads, out.getvalue().splitlines()) if ev["type"] == "QUERY_EVENT"}
    assert len(threads) >= 2
    kept = 0
    for tid in threads:
        mine = spark_rows(threadId=str(tid))
        assert mine == cli_rows("--thread-id", str(tid), MYSQL8)
        kept += len(mine)
    assert kept == len(cli_rows(MYSQL8)) > 0      # (each row transaction is one thread's)
    assert spark_rows(op="delete", threadId=",".join(map(str, threads))) == cli_rows("--op", "delete", MYSQL8)


@pytest.mark.parametrize("key, value", [("op", "upsert"), ("threadId", "x"), ("threadId", "-3")])
def test_bad_op_and_thread_id_values_name_the_option(key, value):
    with pytest.raises(BinlogSparkError, match=f"^{key}: "):
        Config.from_options({"path": MYSQL8, key: value})


def test_thread_id_is_a_filter_op_stays_a_row_option():
    cfg = Config.from_options({"path": MYSQL8, "threadId": "7,9", "op": "Insert"})
    assert cfg.filters.thread_ids == {7, 9} and cfg.ops == {"insert"}
