"""The undo's summary (output.rollback.summary): counted from the records the undo spool holds, less what the
spool drops (the rows a ROLLBACK TO undid, a transaction ended by ROLLBACK, an XA transaction rolled back) and
what --skip-conflicts leaves out; the summaries of a run's pieces merged in order.

The records here are made by the test (a statement per row, as script.rollback spools them, and the compiled
lane's records with their tallies): what is expected is what the test put in. The proof on the server's own
statements is test_undo_summary_server.py."""
from __future__ import annotations

from binlog_spec.output.rollback.conflict import Tx
from binlog_spec.output.rollback.summary import NO_ROW, UndoSpool, UndoSummary

F = "mariadb-bin.000001"


def statement(spool: UndoSpool, table: str, op: str) -> None:
    spool.add_text(f"-- undo of a {op} in {table}")
    spool.rec_label.append(spool.label("db", table, op))


def test_what_the_server_undid_itself_is_not_counted():
    spool = UndoSpool()
    spool.begin_at("0-1-1", F, 100, 1_700_000_000)
    statement(spool, "t", "insert")
    spool.savepoint("s")
    statement(spool, "t", "update")
    statement(spool, "u", "delete")
    assert spool.rollback_to("s")              # (the UPDATE and the DELETE: undone by the server)
    spool.begin_at("0-1-2", F, 200, 1_700_000_001)
    spool.mark_xa("x1")
    statement(spool, "t", "delete")
    spool.begin_at("0-1-3", F, 300, 1_700_000_002)
    statement(spool, "u", "update")
    spool.begin_at("0-1-4", F, 400, 1_700_000_003)
    statement(spool, "t", "insert")
    spool.rolled_back()                        # (a transaction that ends with ROLLBACK)
    assert spool.xa_rolled_back("x1")
    got = spool.summary()
    assert got.tables == {("db", "t"): {"insert": 1}, ("db", "u"): {"update": 1}}
    assert got.transactions == 2
    assert got.first == Tx("0-1-1", F, 100, 1_700_000_000) and got.last == Tx("0-1-3", F, 300, 1_700_000_002)


def test_rows_left_out_and_comments_are_not_counted():
    spool = UndoSpool()
    spool.begin_at("0-1-1", F, 100, 1)
    statement(spool, "t", "update")            # record 0: left out (a conflict)
    spool.begin_at(None, F, 200, 2)
    statement(spool, "t", "update")            # record 1
    spool.add_text("-- row not written: ...")
    spool.rec_label.append(NO_ROW)             # record 2: a comment
    spool.begin_at("0-1-3", F, 300, 3)
    spool.add_text("-- row not written: ...")
    spool.rec_label.append(NO_ROW)
    got = spool.summary(left_out=lambda i: i == 0)
    assert got.tables == {("db", "t"): {"update": 1}}
    assert got.transactions == 1 and got.first == got.last == Tx(None, F, 200, 2)
    assert spool.summary().transactions == 2      # (no row left out: the first restores one too)


def test_the_compiled_lanes_records_count_with_their_tallies():
    spool = UndoSpool()
    label = ("db", "t", "insert")
    spool.add_block(b"BEGIN;\nDELETE ...;\nCOMMIT;", {label: 5}, (b'"0-1-1"', F, 100, 1), (b'"0-1-3"', F, 300, 3), 3)
    spool.begin((b"null", F, 400, 4))
    spool.add_rows(b"DELETE ...;", {label: 2})
    statement(spool, "t", "insert")
    got = spool.summary()
    assert got.tables == {("db", "t"): {"insert": 8}}
    assert got.transactions == 4
    assert got.first == Tx("0-1-1", F, 100, 1) and got.last == Tx(None, F, 400, 4)


def test_the_pieces_summaries_merge_in_order():
    first, second, empty = UndoSummary(), UndoSummary(), UndoSummary()
    first.tables = {("db", "t"): {"insert": 2}}
    first.transactions, first.first, first.last = 2, Tx("0-1-1", F, 1, 1), Tx("0-1-2", F, 2, 2)
    second.tables = {("db", "t"): {"insert": 1, "delete": 4}, ("db", "u"): {"update": 1}}
    second.transactions, second.first, second.last = 1, Tx("0-1-3", F, 3, 3), Tx("0-1-3", F, 3, 3)
    merged = UndoSummary()
    for part in (empty, first, empty, second, empty):
        merged.merge(part)
    assert merged.tables == {("db", "t"): {"insert": 3, "delete": 4}, ("db", "u"): {"update": 1}}
    assert (merged.transactions, merged.first, merged.last) == (3, first.first, second.last)
    lines = list(merged.lines())
    assert lines == [
        "undo summary: 3 transactions undone, first transaction 0-1-1 at mariadb-bin.000001:1 (1970-01-01 00:00:01), "
        "last transaction 0-1-3 at mariadb-bin.000001:3 (1970-01-01 00:00:03); times in UTC",
        "undo summary: `db`.`t`: 3 DELETE (removes rows the window inserted), 4 INSERT (puts back rows the window "
        "deleted)",
        "undo summary: `db`.`u`: 1 UPDATE (sets back rows the window updated)"]
    assert list(UndoSummary().lines()) == ["undo summary: no row to restore (the undo holds no statement)"]
