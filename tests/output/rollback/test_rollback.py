"""output.rollback.spool: the one spool (records on disk, memory bounded) and the one reversal that the SQL
rollback and the binary/base64 rollback share."""
from __future__ import annotations

import os
import random
import tracemalloc

from binlog_spec.output.rollback.spool import HEAD, MAP, ROWS, ROWS_END, TAIL, LineSpool, Spool


def _undo(spool: Spool) -> list[list[tuple[str, bool]]]:
    return [[(spool.text(i), ends) for i, ends in spool.undo_order(k)] for k in spool.last_first()]


def test_the_last_transaction_is_replayed_first_with_its_statements_reversed():
    with Spool() as spool:
        for tx in (["a1", "a2"], ["b1"], ["c1", "c2", "c3"]):
            spool.begin()
            for text in tx:
                spool.add_text(text)
        assert [[t for t, _ in tx] for tx in _undo(spool)] == [["c3", "c2", "c1"], ["b1"], ["a2", "a1"]]


def test_a_transaction_with_no_rows_to_undo_is_left_out():
    with Spool() as spool:
        spool.begin()
        spool.add_text("first")
        spool.begin()                       # nothing spooled
        spool.begin()
        spool.add_text("BEGIN", HEAD)       # framing, no rows
        spool.add_text("COMMIT", TAIL)
        spool.begin()
        spool.add_text("last")
        assert [[t for t, _ in tx] for tx in _undo(spool)] == [["last"], ["first"]]


def test_records_before_any_begin_open_a_transaction():
    with Spool() as spool:
        spool.add_text("x")
        assert _undo(spool) == [[("x", True)]]


def test_events_keep_their_framing_and_statements_go_last_first_maps_before_their_rows():
    with Spool() as spool:
        for text, kind in [("GTID", HEAD), ("BEGIN", HEAD),
                           ("map t1", MAP), ("rows 1a", ROWS), ("rows 1b", ROWS_END),
                           ("map t1'", MAP), ("map t2", MAP), ("rows 2a", ROWS), ("rows 2b", ROWS),
                           ("rows 2c", ROWS_END),
                           ("XID", TAIL)]:
            spool.add_text(text, kind)
        assert _undo(spool) == [[
            ("GTID", False), ("BEGIN", False),
            ("map t1'", False), ("map t2", False), ("rows 2c", False), ("rows 2b", False), ("rows 2a", True),
            ("map t1", False), ("rows 1b", False), ("rows 1a", True),
            ("XID", False)]]


def test_records_go_to_a_file_on_disk_and_memory_holds_only_their_offsets():
    record = os.urandom(64 * 1024)
    count = 320                              # 20 MiB of records
    tracemalloc.start()
    try:
        with Spool() as spool:
            for n in range(count):
                if n % 10 == 0:
                    spool.begin()
                spool.add(record)
            _, peak = tracemalloc.get_traced_memory()
            spool._file.flush()
            assert os.fstat(spool._file.fileno()).st_size == count * len(record)
            assert peak < 2 * 1024 * 1024
            last = spool.tx_starts[-1]
            assert [i for i, _ in spool.undo_order(len(spool.tx_starts) - 1)] == list(range(count - 1, last - 1, -1))
            tracemalloc.reset_peak()
            for k in spool.last_first():     # reading it all back, last first, holds a window at a time
                for i, _ in spool.undo_order(k):
                    assert spool.read(i) == record
            _, peak = tracemalloc.get_traced_memory()
            assert peak < 4 * 1024 * 1024
    finally:
        tracemalloc.stop()


def test_records_read_back_whole_across_read_windows_and_larger_than_one(monkeypatch):
    monkeypatch.setattr("binlog_spec.output.rollback.spool.WINDOW", 64)
    rng = random.Random(15)
    records = [bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 7, 63, 64, 65, 200])))
               for _ in range(300)]
    with Spool() as spool:
        for n, data in enumerate(records):
            if n % 7 == 0:
                spool.begin()
            spool.add(data)
        undone = [spool.read(i) for k in spool.last_first() for i, _ in spool.undo_order(k)]
        assert undone == [r for k in range(len(spool.tx_starts) - 1, -1, -1)
                          for r in reversed(records[7 * k:7 * k + 7])]
        assert list(spool.records()) == records


def test_nothing_touches_the_disk_until_a_record_is_spooled():
    with Spool() as spool:
        spool.begin()
        assert spool._file is None
        assert list(spool.last_first()) == []


def test_notes_read_back_in_order_and_more_can_follow():
    with LineSpool() as notes:
        notes.add_line("a.bin:4: DROP TABLE t")
        notes.add_line("b.bin:9: CREATE\nTABLE u (x int)")
        assert list(notes.lines()) == ["a.bin:4: DROP TABLE t", "b.bin:9: CREATE TABLE u (x int)"]
        notes.add_line("c.bin:1: TRUNCATE v")
        assert list(notes.lines())[-1] == "c.bin:1: TRUNCATE v"
        assert notes.count == 3


def test_rows_a_rollback_to_savepoint_undid_are_not_undone_again():
    """MariaDB's binlog of `BEGIN; INSERT 7; SAVEPOINT s2; DELETE 1; (MyISAM change) ROLLBACK TO s2;
    UPDATE 2; COMMIT` holds the DELETE (the server undid it): the undo holds the UPDATE's and the
    INSERT's undo only; records written after the ROLLBACK TO read back whole (small read windows)."""
    with Spool(window=8) as spool:
        spool.begin()
        spool.add_text("BEGIN", HEAD)
        spool.add_text("undo insert 7")
        spool.savepoint("s2")
        spool.add_text("undo delete 1")
        spool.savepoint("inner")
        spool.add_text("undo update 6")
        assert spool.text(3) == "undo update 6"          # (a read window over the records to drop)
        assert spool.rollback_to("s2") and not spool.rollback_to("inner")   # later savepoints go with it
        spool.add_text("undo update 2")
        spool.add_text("COMMIT", TAIL)
        assert [[t for t, _ in tx] for tx in _undo(spool)] == [["BEGIN", "undo update 2", "undo insert 7",
                                                                 "COMMIT"]]


def test_a_released_savepoint_cannot_be_rolled_back_to_and_an_unknown_one_drops_nothing():
    with Spool() as spool:
        spool.begin()
        spool.add_text("a")
        spool.savepoint("s")
        spool.add_text("b")
        spool.release("s")
        assert not spool.rollback_to("s") and not spool.rollback_to("never")
        assert [[t for t, _ in tx] for tx in _undo(spool)] == [["b", "a"]]


def test_a_transaction_that_ends_with_rollback_or_an_xa_rollback_is_not_undone():
    with Spool() as spool:
        spool.begin()
        spool.add_text("kept")
        spool.begin()
        spool.add_text("undone by ROLLBACK")
        spool.rolled_back()
        spool.begin()
        spool.add_text("prepared x2")
        spool.mark_xa("x'7832',x'',1")
        spool.begin()                        # the XA ROLLBACK group: no rows of its own
        assert spool.xa_rolled_back("x'7832',x'',1") and not spool.xa_rolled_back("x'7832',x'',1")
        assert [[t for t, _ in tx] for tx in _undo(spool)] == [["kept"]]


def test_rollback_names_no_savepoint_statement_as_not_undone():
    import io

    from binlog_spec import cli
    from conftest import CORPUS
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", "--sql2", "--rollback", str(CORPUS / "rust_mysql_common/binlog_savepoint.000001")], out, err) == 0
    notes = [line for line in err.getvalue().splitlines() if line.startswith("binlog-spec: note: not undone: ")]
    # the statement-based INSERTs are named (their rows are not in the binlog); SAVEPOINT and ROLLBACK TO
    # change no row of their own
    assert len(notes) == 5 and all("INSERT INTO db1." in line for line in notes), err.getvalue()
