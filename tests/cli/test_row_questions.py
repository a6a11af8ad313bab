"""rows / sql / analyze with --op and --thread-id, rows --with-statement and --format history: the reference
path runs under the new filters (the compiled lanes step aside) and gives what filtering the full output
gives; the values' errors and the refusal of --thread-id are exit 2 with one line, before any output."""
from __future__ import annotations

import io
import json
import re

import pytest

from binlog_spec import cli

from conftest import CORPUS, FIXTURES

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
MYSQL = CORPUS / "mbcj_osheroff/mysql-bin.checksum-crc32"
MARIADB_ROWS = CORPUS / "mariadb-mysql-cdc/mysql-bin.000001"
ROWS_QUERY = CORPUS / "mysql-cdc-rs/tests__events__5.7__29_row_query__log.bin"
EXPECTED = CORPUS / "mysql-cdc-rs/expected"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    try:
        code = cli.main([str(a) for a in argv], out, err)
    except SystemExit as exc:       # (argparse: a bad value)
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def jsonl(*argv):
    code, out, err = run("rows", "--format", "jsonl", *argv)
    assert code in (0, 1), err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("path", [DEMO, MYSQL, MARIADB_ROWS], ids=lambda p: p.name)
def test_op_rows_equal_filtering_the_full_rows_output(path):
    full = jsonl(path)
    assert {r["op"] for r in full} >= {"insert", "update"}
    for ops in ("insert", "update", "delete", "insert,delete"):
        assert jsonl("--op", ops, path) == [r for r in full if r["op"] in ops.split(",")], ops


@pytest.mark.parametrize("command", [("rows", "--format", "jsonl"), ("rows",), ("sql",), ("sql", "--sql2"),
                                     ("events",), ("events", "--format", "jsonl"), ("sql", "--sql"), ("sql", "-v"),
                                     ("sql", "--sql2", "--rollback"), ("analyze", "--format", "json")],
                         ids=" ".join)
@pytest.mark.parametrize("path", [DEMO, MYSQL, FIXTURES / "types-full" / "mariadb-bin.000001"], ids=lambda p: p.name)
def test_every_operation_kept_is_the_unfiltered_output(command, path):
    """--op insert,update,delete keeps every rows event: the reference path it takes writes what the
    unfiltered run (its compiled lanes) writes."""
    plain = run(*command, path)
    code, out, err = run(*command, "--op", "insert,update,delete", path)
    assert plain[0] == code and plain[2] == err
    if command[0] == "analyze":     # (a filtered report places control events apart: as a --table keeping all)
        mine, theirs = json.loads(out), json.loads(run(*command, "--table", "*.*", path)[1])
        assert mine["summary"].pop("filters") == "--op delete --op insert --op update"
        assert [f["option"] for f in mine.pop("filters")] == ["--op"] * 3
        theirs["summary"].pop("filters"), theirs.pop("filters")
        assert mine == theirs
    else:
        assert out == plain[1]


def test_op_in_sql_scripts_keeps_only_those_statements():
    code, out, _ = run("sql", "--sql2", "--op", "delete", DEMO)
    assert code == 0
    dml = [line.split()[0] for line in out.splitlines() if re.match(r"(INSERT|UPDATE|DELETE) ", line)]
    assert dml == ["DELETE"]        # workload.sql: one DELETE (order 3); the DDL stays
    assert "CREATE TABLE customers" in out
    code, out, _ = run("sql", "--sql2", "--rollback", "--op", "delete", DEMO)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines() if re.match(r"(INSERT|UPDATE|DELETE) ", line)] == ["INSERT"]


@pytest.mark.parametrize("bad", ["upsert", "insert,drop", ""])
def test_a_bad_op_is_a_usage_error_naming_the_option(bad):
    code, out, err = run("rows", "--op", bad, DEMO)
    assert code == 2 and out == ""
    assert "--op" in err and "insert, update, delete" in err and len(err.strip().splitlines()) == 1


def test_a_bad_thread_id_is_a_usage_error_naming_the_option():
    code, out, err = run("sql", "--thread-id", "x", DEMO)
    assert code == 2 and out == "" and "argument --thread-id: not a thread id" in err


@pytest.mark.parametrize("mode", [(), ("--sql",), ("--sql2",), ("--sql2", "--rollback"), ("--rollback",)],
                         ids=lambda m: " ".join(m) or "base64")
def test_thread_id_over_mariadb_row_transactions_is_refused_before_any_sql(mode):
    code, out, err = run("sql", *mode, "--thread-id", "5", MARIADB_ROWS)
    assert code == 2 and out == ""
    assert re.search(rf"--thread-id: {re.escape(str(MARIADB_ROWS))}: offset 1380: .*MariaDB", err)
    assert len(err.strip().splitlines()) == 1


def test_thread_id_over_mariadb_row_transactions_is_refused_by_rows_and_analyze():
    for command in (("rows",), ("analyze",), ("events",)):
        code, _, err = run(*command, "--thread-id", "5", MARIADB_ROWS)
        assert code == 2 and "offset 1380" in err, command


def test_thread_id_selects_the_thread_of_mysql_begin():
    """Thread 18 of mariadb-binlog's reading (its `thread_id=18` BEGINs), as the stream tests check; here the
    sql script of that thread's transactions is the base64 script of their events alone."""
    code, out, err = run("rows", "--format", "jsonl", "--thread-id", "18", MYSQL)
    assert code in (0, 1) and len(out.splitlines()) == 15
    code, out, _ = run("sql", "--thread-id", "18", MYSQL)
    assert code == 0 and out.count("\nBINLOG '") == 1 + 15 and "pseudo_thread_id=18" in out
    assert not re.search(r"pseudo_thread_id=(?!18\b)\d+", out)


def test_with_statement_carries_mysql_rows_query_text_and_begin_thread_id():
    """The expected outputs of the corpus: the statement sent (sql.sql) and mysqlbinlog's thread_id=4."""
    sent = [s.strip() for s in (EXPECTED / "5.7__29_row_query__sql.sql").read_text().split(";")]
    dump = (EXPECTED / "5.7__29_row_query__dump.txt").read_text()
    assert set(re.findall(r"thread_id=(\d+)", dump)) == {"4"}
    lines = jsonl("--with-statement", ROWS_QUERY)
    assert [(r["statement"], r["thread_id"]) for r in lines] == [(s, 4) for s in sent if s.startswith("INSERT")]


@pytest.mark.parametrize("path", [DEMO, MYSQL, MARIADB_ROWS, ROWS_QUERY], ids=lambda p: p.name)
def test_with_statement_adds_two_fields_and_changes_nothing_else(path):
    plain = run("rows", "--format", "jsonl", path)[1].splitlines()
    extended = [json.loads(line) for line in run("rows", "--format", "jsonl", "--with-statement", path)[1].splitlines()]
    assert len(plain) == len(extended) > 0
    for line, obj in zip(plain, extended):
        assert list(obj)[-2:] == ["statement", "thread_id"]
        del obj["statement"], obj["thread_id"]
        assert obj == json.loads(line)


def test_with_statement_goes_with_jsonl():
    code, out, err = run("rows", "--with-statement", DEMO)
    assert code == 2 and out == "" and "--with-statement goes with --format jsonl" in err


def test_history_is_a_line_per_change_with_the_changed_columns():
    """fixtures/demo/workload.sql, by hand: what each statement changed."""
    code, out, err = run("rows", "--format", "history", DEMO)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "# binlog-spec rows: times in UTC"
    assert lines[1:] == [
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`customers` `id`=1",
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`customers` `id`=2",
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`customers` `id`=3",
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`orders` `id`=1",
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`orders` `id`=2",
        "2026-01-01 00:01:00 0-1-4 INSERT `shop`.`orders` `id`=3",
        '2026-01-01 00:02:00 0-1-5 UPDATE `shop`.`orders` `id`=2: `status`: "paid" → "shipped"',
        '2026-01-01 00:02:00 0-1-5 UPDATE `shop`.`customers` `id`=1: `balance`: "100.50" → "25.25"',
        "2026-01-01 00:03:00 0-1-6 DELETE `shop`.`orders` `id`=3",
        "2026-01-01 00:05:00 0-1-8 UPDATE `shop`.`customers` `id`=1: `vip`: 0 → 1"]
    code, out, _ = run("rows", "--format", "history", "--timezone", "+08:00", "--op", "update", DEMO)
    assert out.splitlines()[1].startswith("2026-01-01 08:02:00 0-1-5 UPDATE")


@pytest.mark.parametrize("argv", [["rows", "--format", "history"], ["rows", "--format", "jsonl", "--with-statement"],
                                  ["rows", "--op", "update,delete"], ["sql", "--sql2", "--op", "insert"],
                                  ["rows", "--format", "jsonl", "--thread-id", "9,18"]], ids=" ".join)
@pytest.mark.parametrize("path", [DEMO, MYSQL, ROWS_QUERY], ids=lambda p: p.name)
def test_jobs_give_the_output_of_one_process(monkeypatch, argv, path):
    """--jobs: the pieces (forced small) write what one process writes, the history's header once."""
    from binlog_spec.cli import jobs
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
    one = run(*argv, "--jobs", "1", path)
    monkeypatch.setenv(jobs.PIECE_ENV, str(max(1, path.stat().st_size // 4)))
    assert run(*argv, "--jobs", "3", path) == one
