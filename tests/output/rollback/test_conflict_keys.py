"""The keys the conflict check compares (output.rollback.keys): the fast path that reads integer keys
straight from the row images (rows/_cdecoder.pyx image_keys) gives what the reference gives, the keys of
the decoded row changes (`row_keys`), on every rows event of real files, and hands back (None) what it
does not take: a NULL key, a short image, a text key, no compiled core.
"""
from __future__ import annotations

import importlib

import pytest

import binlog_spec
from binlog_spec import api
from binlog_spec.binlog.event_types import ROW_OPS
from binlog_spec.errors import BinlogError
from binlog_spec.output.rollback.keys import KeyReader, exact, row_keys
from binlog_spec.rows import image_plan
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions

from conftest import CORPUS, FIXTURES, manifest_rows

FIXTURE_FILES = sorted(FIXTURES.glob("*/mariadb-bin.0*"))
CORPUS_FILES = sorted(CORPUS / r["file"] for r in manifest_rows() if "ROWS" in r["event_type_counts"]
                      and int(r["bytes"]) < 4_000_000)


def _rows_events(path):
    """(event, op, table, where, key names) of every rows event of a file whose table is known, the
    events read with the DDL replayed (the keys it gives), up to the file's fault if any."""
    decoder = RowDecoder()
    events = api.select_events(binlog_spec.open(path), FilterOptions(), [str(path)], SchemaTracker())
    try:
        for ev in events:
            op = ROW_OPS.get(ev.type_code) if ev.error is None else None
            if op is None:
                decoder.observe(ev)
                continue
            head = ev.rows_head()
            table = decoder.tables.get(head[0] if head is not None else ev.fields.get("table_id"))
            if table is not None:
                cols = tuple(table.names[i] for i in table.row_key) or None
                yield ev, op, table, (table.schema, table.table), cols, decoder
    except BinlogError:
        return


@pytest.fixture(autouse=True)
def compiled_rows(monkeypatch):
    """The compiled row-image module in use, whatever BINLOG_SPEC_PURE says (it must be built)."""
    monkeypatch.setattr(image_plan, "crows", importlib.import_module("binlog_spec.rows._cdecoder"))


def _compiled_reader() -> KeyReader:
    reader = KeyReader()
    assert reader.crows is not None
    return reader


def _compare(path) -> tuple[int, int]:
    reader, fast, events = _compiled_reader(), 0, 0
    for ev, op, table, where, cols, decoder in _rows_events(path):
        events += 1
        got = reader.keys(ev, op, table, where, cols)
        try:
            want = row_keys(list(decoder.feed(ev)), where, cols)
        except BinlogError:
            want = None
        if got is None:
            continue
        fast += 1
        assert want is not None, f"{path}:{ev.pos}: the fast path read keys of rows that cannot be decoded"
        assert got == want, f"{path}:{ev.pos}"
    return fast, events


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.parent.name + "/" + p.name)
def test_the_keys_read_from_the_images_are_the_decoded_rows_keys_on_the_fixtures(path):
    _compare(path)


def test_the_keys_read_from_the_images_are_the_decoded_rows_keys_on_the_corpus():
    fast = events = 0
    for path in CORPUS_FILES:
        f, e = _compare(path)
        fast, events = fast + f, events + e
    assert fast > 100, f"the fast path took {fast} of {events} rows events: it is not being tested"


def test_the_demo_fixtures_integer_keys_take_the_fast_path():
    fast, events = _compare(FIXTURES / "types-full" / "mariadb-bin.000001")
    fast2, events2 = _compare(FIXTURES / "demo" / "mariadb-bin.000001")
    assert fast + fast2 > 0


class _Table:
    """A TableDef-like table of INT columns (the first the key) for byte-literal cases."""

    def __init__(self, n: int, unsigned: bool = False, key=(0,)):
        from binlog_spec.rows.column_types import LONG, Column
        self.columns = [Column(LONG, {}, unsigned=unsigned) for _ in range(n)]
        self.names = [f"c{i}" for i in range(n)]
        self.row_key = key
        self.schema, self.table = "d", "t"


def _plan(table, n=None):
    reader = _compiled_reader()
    n = len(table.columns) if n is None else n
    return reader, reader._make(table, n, bytes([(1 << n) - 1]), None)


def test_image_keys_reads_signed_and_unsigned_integers_and_hands_back_a_null_key_or_a_short_image():
    table = _Table(2)
    reader, plan = _plan(table)
    crows = reader.crows
    row = b"\x00" + (-5).to_bytes(4, "little", signed=True) + (7).to_bytes(4, "little")
    assert crows.image_keys(row + row, *plan) == [(-5,), (-5,)]
    _, plan_u = _plan(_Table(2, unsigned=True))
    assert crows.image_keys(b"\x00" + b"\xff" * 4 + b"\x00" * 4, *plan_u) == [(0xFFFFFFFF,)]
    assert crows.image_keys(b"\x01" + (7).to_bytes(4, "little"), *plan) is None      # the key is NULL
    assert crows.image_keys(row[:-1], *plan) is None                                   # an image cut short
    assert crows.image_keys(b"", *plan) == []


def test_a_table_with_a_text_key_or_no_key_is_not_read_from_the_images():
    from binlog_spec.rows.column_types import VARCHAR, Column
    table = _Table(2)
    table.columns[0] = Column(VARCHAR, {"max_length": 10}, charset=33)
    assert _compiled_reader()._make(table, 2, b"\x03", None) is None
    assert _compiled_reader()._make(_Table(2, key=()), 2, b"\x03", None) is None


def test_without_the_compiled_core_every_event_is_decoded(monkeypatch):
    monkeypatch.setattr(image_plan, "crows", None)
    reader = KeyReader()
    for ev, op, table, where, cols, _ in _rows_events(FIXTURES / "demo" / "mariadb-bin.000001"):
        assert reader.keys(ev, op, table, where, cols) is None


def test_text_keys_compare_without_trailing_spaces_and_case():
    class Change:
        op, before, after = "delete", {"k": "Abc  "}, None
    (_, _, _, key, h), = row_keys([Change()], ("d", "t"), ("k",))
    assert key == (("d", "t"), ("k",), ("abc",)) and h == hash(key)
    assert exact(key) == repr(key).encode()
