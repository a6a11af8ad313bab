"""--op and --thread-id (stream.thread_filter, stream.filters): checked against mariadb-binlog's reading of the
same files (its event type and thread_id= of each event) and the corpus' expected mysqlbinlog outputs."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import binlog_spec
from binlog_spec.binlog.event_types import ROWS_EVENTS
from binlog_spec.errors import OptionValueError, ThreadIdError
from binlog_spec.stream.filters import FilterOptions, filter_events
from binlog_spec.stream.option_parser import parse_ops, parse_thread_ids

from conftest import CORPUS, FIXTURES

MARIADB_BINLOG = shutil.which("mariadb-binlog")
DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
#: MySQL 5.7.21 (8 client threads) and 8.0.31 (3) binlogs whose BEGINs carry thread ids.
MYSQL_FILES = [CORPUS / "mbcj_osheroff/mysql-bin.checksum-crc32", CORPUS / "mysql-cdc-rs/binlog.000693",
               CORPUS / "canal/mysql-bin.000003"]
MARIADB_ROWS = CORPUS / "mariadb-mysql-cdc/mysql-bin.000001"     # MariaDB 11.4, row transactions

_HEADER = re.compile(r"^#\d{6} [ \d]\d:\d\d:\d\d server id \d+\s+end_log_pos \d+(?: CRC32 0x[0-9a-f]+)?\s+(\w+)(.*)$")
_WORDS = {"Write_rows": "insert", "Update_rows": "update", "Delete_rows": "delete"}


def mariadb_binlog_events(path):
    """(position, event word, thread id of its Query line or None) of each event mariadb-binlog prints."""
    assert MARIADB_BINLOG, "mariadb-binlog is required (make test installs mariadb-client)"
    out = subprocess.run([MARIADB_BINLOG, "--no-defaults", str(path)], capture_output=True).stdout
    events, pos = [], None
    for line in out.decode("latin-1").splitlines():
        if line.startswith("# at "):
            pos = int(line.split()[2])
            continue
        m = _HEADER.match(line)
        if m and pos is not None:
            word = m.group(1).split(":")[0]
            tid = re.search(r"thread_id=(\d+)", m.group(2))
            events.append((pos, word, int(tid.group(1)) if tid else None))
            pos = None
    return events


def rows_positions(events):
    return [e.pos for e in events if e.type_code in ROWS_EVENTS]


def kept(path, **options):
    return list(filter_events(binlog_spec.open(path), FilterOptions(**options)))


@pytest.mark.parametrize("path", MYSQL_FILES + [DEMO], ids=lambda p: p.name)
def test_op_keeps_the_rows_events_of_those_operations(path):
    theirs = mariadb_binlog_events(path)
    assert [pos for pos, word, _ in theirs if word in _WORDS] == rows_positions(binlog_spec.open(path)) != []
    for ops in ({"insert"}, {"update"}, {"delete"}, {"insert", "delete"}):
        expected = [pos for pos, word, _ in theirs if _WORDS.get(word) in ops]
        assert rows_positions(kept(path, ops=frozenset(ops))) == expected, ops


def test_op_drops_the_transactions_it_empties_with_their_framing():
    """As --table: a transaction left with nothing but BEGIN/TABLE_MAP/COMMIT goes whole."""
    events = kept(DEMO, ops=frozenset({"delete"}))
    # workload.sql: 0-1-6 is the only transaction that deletes; the DDL (statements) stay
    assert [e.gtid for e in events if e.type == "GTID_EVENT"] == ["0-1-1", "0-1-2", "0-1-3", "0-1-6", "0-1-7"]
    assert sum(e.type == "XID_EVENT" for e in events) == 1
    assert [e.query.split()[0] for e in events if e.type == "ANNOTATE_ROWS_EVENT"] == ["DELETE"]


@pytest.mark.parametrize("path", MYSQL_FILES, ids=lambda p: p.name)
def test_thread_id_keeps_the_transactions_of_the_threads_mariadb_binlog_names(path):
    theirs = mariadb_binlog_events(path)
    threads, last = {}, None
    for pos, word, tid in theirs:       # a MySQL row transaction: BEGIN (Query, thread_id=N) then its rows
        if word == "Query":
            last = tid
        elif word in _WORDS:
            threads.setdefault(last, []).append(pos)
    assert len(threads) >= 2
    for tid, positions in threads.items():
        assert rows_positions(kept(path, thread_ids=frozenset({tid}))) == positions, tid
    both = sorted(threads)[:2]
    assert rows_positions(kept(path, thread_ids=frozenset(both))) == sorted(threads[both[0]] + threads[both[1]])
    assert rows_positions(kept(path, thread_ids=frozenset({max(threads) + 1}))) == []


def test_thread_id_matches_the_expected_mysqlbinlog_output():
    """zalora's expected mysqlbinlog output of its 5.6 fixture prints thread_id=1 on every Query."""
    path = CORPUS / "zalora_binlog-parser/data__fixtures__mysql-bin.01"
    text = (CORPUS / "zalora_binlog-parser/expected/plaintext-mysql-bin.01").read_text("latin-1")
    assert set(re.findall(r"thread_id=(\d+)", text)) == {"1"}
    every = rows_positions(binlog_spec.open(path))
    assert every and rows_positions(kept(path, thread_ids=frozenset({1}))) == every
    assert rows_positions(kept(path, thread_ids=frozenset({2}))) == []


def test_thread_id_refuses_a_mariadb_row_transaction_naming_file_and_offset():
    first_annotate = next(e.pos for e in binlog_spec.open(MARIADB_ROWS) if e.type == "ANNOTATE_ROWS_EVENT")
    with pytest.raises(ThreadIdError) as caught:
        kept(MARIADB_ROWS, thread_ids=frozenset({5}))
    assert caught.value.offset == first_annotate and str(MARIADB_ROWS) in str(caught.value)
    assert "MariaDB" in str(caught.value) and "no thread id" in str(caught.value)


def test_op_and_thread_id_values_parse_or_name_what_is_wrong():
    assert parse_ops("Insert,delete") == {"insert", "delete"}
    assert parse_ops(["update", "insert"]) == {"insert", "update"}
    assert parse_thread_ids("7, 9") == {7, 9}
    for bad in ("upsert", "insert,select", ""):
        with pytest.raises(OptionValueError):
            parse_ops(bad)
    for bad in ("x", "-1", "4294967296", ""):
        with pytest.raises(OptionValueError):
            parse_thread_ids(bad)


def test_the_new_filters_name_themselves_and_leave_the_compiled_loops():
    f = FilterOptions(ops=frozenset({"update", "delete"}), thread_ids=frozenset({12, 3}))
    assert f.described() == [("--op", "delete"), ("--op", "update"), ("--thread-id", "3"), ("--thread-id", "12")]
    assert f.active and not f.skippable()
    assert not FilterOptions(tables=("a.b",), ops=frozenset({"insert"})).skippable()


def _manifest_ops(row) -> dict[str, int]:
    """The corpus manifest's rows events of each operation, by the names it gives them (WRITE_ROWS_V1,
    UPDATE_ROWS_V2, PARTIAL_UPDATE_ROWS, MARIA_..._COMPRESSED ...)."""
    counts = {"insert": 0, "update": 0, "delete": 0}
    for name, n in re.findall(r"([A-Z_0-9]+)\(\d+\)x(\d+)", row["event_type_counts"]):
        for word, op in (("WRITE_ROWS", "insert"), ("UPDATE_ROWS", "update"), ("DELETE_ROWS", "delete")):
            if word in name:
                counts[op] += int(n)
    return counts


def test_op_counts_every_rows_event_version_as_the_corpus_manifest_names_it():
    from conftest import collect, manifest_rows
    checked = set()
    for row in manifest_rows():
        path = CORPUS / row["file"]
        expected = _manifest_ops(row)
        if not path.is_file() or not any(expected.values()) or path.suffix in (".gz", ".xxd"):
            continue
        events, error = collect(path)
        if error is not None or len(rows_positions(events)) != sum(expected.values()):
            continue        # (a file the reader stops in, or one whose payloads hold more: counted elsewhere)
        for op, n in expected.items():
            kept_ = [e for e in filter_events(events, FilterOptions(ops=frozenset({op}))) if e.type_code in ROWS_EVENTS]
            assert len(kept_) == n, (row["file"], op)
        checked.add(re.sub(r"\(\d+\)x\d+", "", row["event_type_counts"]))
    assert len(checked) >= 10
    names = ",".join(checked)
    for kind in ("WRITE_ROWS_V1", "UPDATE_ROWS_V2", "DELETE_ROWS_V2", "PARTIAL_UPDATE_ROWS"):
        assert kind in names, kind
