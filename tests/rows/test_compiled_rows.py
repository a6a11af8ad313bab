"""The compiled row-image decoder (rows/_cdecoder.pyx) against the pure-Python reference: byte-literal
images of every kind it decodes in C (and of the kinds it calls back), then every corpus and fixture
file through the whole rows pipeline, compiled and pure, with identical values (types included) and
identical errors.

The extension is built by `pip install .` (or `cythonize -i -3 src/binlog_spec/rows/_cdecoder.pyx`). When
it is not built these tests skip, except under CI (the CI environment variable set), where they fail.
"""
from __future__ import annotations

import datetime as dt
import importlib
import os
import random
import struct
import subprocess
import sys
from types import SimpleNamespace

import pytest

import binlog_spec
from binlog_spec import api
from binlog_spec.errors import BinlogError
from binlog_spec.rows.decoder import DELETE, INSERT, UPDATE, compile_rows, decode_image
from binlog_spec.rows import image_plan
from binlog_spec.rows.column_types import (BLOB, Column, DATE, DATETIME2, DOUBLE, ENUM, FLOAT, INT24, JSON,
                                           LONG, LONGLONG, LONG_BLOB, MEDIUM_BLOB, NEWDECIMAL, SHORT, STRING,
                                           TIME2, TIMESTAMP2, TINY, TINY_BLOB, VARCHAR, VAR_STRING, YEAR)
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.stream.filters import FilterOptions

from conftest import CORPUS, FIXTURES, manifest_rows


def _compiled_module():
    try:
        return importlib.import_module("binlog_spec.rows._cdecoder")
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the compiled row decoder is not built under CI: {exc}")
        pytest.skip(f"the compiled row decoder is not built: {exc}")


@pytest.fixture
def crows(monkeypatch):
    module = _compiled_module()
    monkeypatch.setattr(image_plan, "crows", module)
    return module


UTF8, LATIN1, BINARY, SJIS, UCS2 = 45, 8, 63, 13, 35


def typed(value):
    """A value with its type, all the way down: 1 == 1.0 == True must not pass."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    return (type(value).__name__, repr(value))


def pure(cols, buf):
    """decode_image's (row, end) or its error message."""
    names = [f"c{k}" for k in range(len(cols))]
    try:
        row, end = decode_image(buf, 0, SimpleNamespace(columns=cols), list(range(len(cols))), names)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("error", type(exc).__name__, str(exc))
    return typed(row), end


def compiled(crows_module, cols, buf):
    """The compiled decoder's (row, end), or "fallback" when it hands the image back."""
    names = [f"c{k}" for k in range(len(cols))]
    decode = crows_module.ImageDecoder(image_plan.plan(cols, names)).decode
    try:
        row, end = decode(buf, 0)
    except Exception:  # noqa: BLE001 - any exception is the signal to re-decode with the pure path
        return "fallback"
    return typed(row), end


def col(type_code, meta=None, unsigned=False, charset=None, **kw):
    return Column(type_code, meta if meta is not None else {}, unsigned, charset, **kw)


def be(n, size):
    return n.to_bytes(size, "big")


def datetime2(y, mo, d, h, mi, s, frac=0, fsp=0):
    ymd = ((y * 13 + mo) << 5) | d
    packed = be(((ymd << 17) | (h << 12) | (mi << 6) | s) + 0x8000000000, 5)
    return packed + (be(frac, (fsp + 1) // 2) if fsp else b"")


# (column, value bytes, expected value): each decoded natively (no fallback) and equal to the pure path
NATIVE = [
    (col(TINY), b"\xff", -1), (col(TINY, unsigned=True), b"\xff", 255),
    (col(SHORT), b"\x00\x80", -32768), (col(SHORT, unsigned=True), b"\x00\x80", 32768),
    (col(INT24), b"\x00\x00\x80", -8388608), (col(INT24, unsigned=True), b"\xff\xff\xff", 16777215),
    (col(LONG), struct.pack("<i", -123456789), -123456789), (col(LONG, unsigned=True), b"\xff" * 4, 2**32 - 1),
    (col(LONGLONG), struct.pack("<q", -2**63), -2**63), (col(LONGLONG, unsigned=True), b"\xff" * 8, 2**64 - 1),
    (col(YEAR), b"\x00", 0), (col(YEAR), b"\x7c", 2024),
    (col(FLOAT), struct.pack("<f", 1.1), struct.unpack("<f", struct.pack("<f", 1.1))[0]),
    (col(DOUBLE), struct.pack("<d", -2.5e-300), -2.5e-300),
    (col(VARCHAR, {"max_length": 40}, charset=UTF8), b"\x06h\xc3\xa9llo", "héllo"),
    (col(VARCHAR, {"max_length": 400}, charset=UTF8), b"\x03\x00abc", "abc"),
    (col(VAR_STRING, {"max_length": 10}, charset=LATIN1), b"\x03a\x80\x81", "a€\x81"),
    (col(VARCHAR, {"max_length": 10}, charset=LATIN1), b"\x02ok", "ok"),
    (col(VARCHAR, {"max_length": 10}, charset=SJIS), b"\x02\x82\xa0", "あ"),
    (col(VARCHAR, {"max_length": 10}, charset=None), b"\x02\xff\x00", b"\xff\x00"),
    (col(STRING, {"max_length": 120, "real_type": STRING}, charset=UTF8), b"\x02ab", "ab"),
    (col(STRING, {"max_length": 4, "real_type": STRING}, charset=BINARY), b"\x02ab", b"ab\x00\x00"),
    (col(STRING, {"max_length": 2, "real_type": STRING}, charset=BINARY), b"\x02ab", b"ab"),
    (col(TINY_BLOB, {}, charset=BINARY), b"\x01z", b"z"),
    (col(BLOB, {"pack_length": 2}, charset=UTF8), b"\x02\x00hi", "hi"),
    (col(MEDIUM_BLOB, {"pack_length": 3}, charset=UCS2), b"\x02\x00\x00\x00A", "A"),
    (col(LONG_BLOB, {"pack_length": 4}, charset=BINARY), b"\x00\x00\x00\x00", b""),
    (col(DATE), (2024 << 9 | 2 << 5 | 29).to_bytes(3, "little"), dt.date(2024, 2, 29)),
    (col(DATETIME2, {"fsp": 0}), datetime2(2024, 2, 29, 13, 45, 30), dt.datetime(2024, 2, 29, 13, 45, 30)),
    (col(DATETIME2, {"fsp": 6}), datetime2(9999, 12, 31, 23, 59, 59, 999999, 6),
     dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
    (col(DATETIME2, {"fsp": 3}), datetime2(1, 1, 1, 0, 0, 0, 1230, 3), dt.datetime(1, 1, 1, 0, 0, 0, 123000)),
    (col(TIMESTAMP2, {"fsp": 0}), be(1700000000, 4), dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc)),
    (col(TIMESTAMP2, {"fsp": 2}), be(0, 4) + b"\x63", dt.datetime(1970, 1, 1, 0, 0, 0, 990000, dt.timezone.utc)),
    (col(TIMESTAMP2, {"fsp": 6}), be(2**32 - 1, 4) + be(5, 3),
     dt.datetime(2106, 2, 7, 6, 28, 15, 5, tzinfo=dt.timezone.utc)),
    # rows/_cscalars.pxd (tests/rows/test_compiled_scalars.py has their edges)
    (col(NEWDECIMAL, {"precision": 5, "scale": 2}), bytes([0x80, 0x01, 0x05]), __import__("decimal").Decimal("1.05")),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, enum_values=(b"a", b"b")), b"\x02", "b"),
    (col(TIME2, {"fsp": 0}), be(0x800000 + (1 << 12 | 2 << 6 | 3), 3), dt.timedelta(hours=1, minutes=2, seconds=3)),
    # called back through COLUMN_TYPES
    (col(JSON, {"pack_length": 4}), b"\x00\x00\x00\x00", None),
]


NATIVE_IDS = [f"{i}-{column.type_code}" for i, (column, _, _) in enumerate(NATIVE)]


@pytest.mark.parametrize("column, data, value", NATIVE, ids=NATIVE_IDS)
def test_each_kind_decodes_to_the_pure_value_and_end(crows, column, data, value):
    buf = b"\x00" + data + b"tail"
    got = compiled(crows, [column], buf)
    assert got != "fallback"
    assert got == pure([column], buf) == ({"c0": typed(value)}, 1 + len(data))


@pytest.mark.parametrize("column, data, value", NATIVE, ids=NATIVE_IDS)
def test_every_truncation_is_handed_back_to_the_pure_decoder(crows, column, data, value):
    for cut in range(len(data)):
        buf = b"\x00" + data[:cut]
        got = compiled(crows, [column], buf)
        assert got == "fallback", (cut, got)
        assert pure([column], buf)[0] == "error"


@pytest.mark.parametrize("column, data", [
    (col(VARCHAR, {"max_length": 10}, charset=UTF8), b"\x02\xc3\x28"),           # not UTF-8: bytes
    (col(VARCHAR, {"max_length": 10}, charset=UCS2), b"\x03abc"),                # odd UCS-2: bytes
    (col(DATE), b"\x00\x00\x00"),                                                # zero date: str
    (col(DATE), (2023 << 9 | 2 << 5 | 29).to_bytes(3, "little")),               # no calendar date: str
    (col(DATETIME2, {"fsp": 0}), datetime2(0, 0, 0, 0, 0, 0)),
    (col(DATETIME2, {"fsp": 0}), datetime2(2024, 13, 1, 0, 0, 0)),
    (col(DATETIME2, {"fsp": 2}), datetime2(2024, 1, 1, 0, 0, 0)),               # fraction missing: error
    (col(DATETIME2, {"fsp": 0}), b"\x00" * 5),                                   # negative: error
    (col(TIMESTAMP2, {"fsp": 0}), be(0, 4)),                                     # zero timestamp: str
    (col(TIMESTAMP2, {"fsp": 1}), be(5, 4) + b"\xff"),                           # fraction too big: error
    (col(TIMESTAMP2, {"fsp": 4}), be(5, 4) + b"\xff\xff"),                       # negative fraction: error
    (col(DATETIME2, {"fsp": 7}), datetime2(2024, 1, 1, 0, 0, 0) + b"\x00" * 4),  # bad fsp: called back
    (col(VARCHAR, {}, charset=UTF8), b"\x01a"),                                  # no max_length: error
    (col(BLOB, {"pack_length": 5}, charset=UTF8), b"\x01\x00\x00\x00\x00a"),     # prefix of 5: error
])
def test_what_the_fast_path_does_not_take_ends_as_the_pure_decoder_says(crows, column, data):
    """Values the C code does not make (str dates, bytes of invalid text) and errors: the whole
    pipeline (compile_rows with the fallback) gives exactly the pure rows and error."""
    buf = b"\x00" + data
    assert compiled(crows, [column], buf) in ("fallback", pure([column], buf))
    assert run_rows(crows, [column], buf * 3) == run_rows(None, [column], buf * 3)


def test_null_bitmap_over_more_than_eight_columns(crows):
    cols = [col(TINY)] * 10
    buf = bytes([0b10100101, 0b10]) + bytes(range(1, 7))
    got = compiled(crows, cols, buf)
    assert got == pure(cols, buf)
    assert [v for v in got[0].values()] == [("NoneType", "None"), ("int", "1"), ("NoneType", "None"), ("int", "2"),
                                            ("int", "3"), ("NoneType", "None"), ("int", "4"),
                                            ("NoneType", "None"), ("int", "5"), ("NoneType", "None")]


def test_random_temporal_bytes_decode_as_the_pure_decoder_does(crows):
    """Dates, DATETIME2 and TIMESTAMP2 from random bytes: every value the C code makes is the pure one
    (the proleptic calendar, leap years, 2106), and what it hands back is what it cannot make."""
    rng = random.Random(16)
    makers = [(col(DATE), lambda: rng.getrandbits(24).to_bytes(3, "little")),
              (col(DATETIME2, {"fsp": 4}), lambda: datetime2(
                  rng.randrange(0, 10000), rng.randrange(0, 14), rng.randrange(0, 32), rng.randrange(0, 26),
                  rng.randrange(0, 62), rng.randrange(0, 62), rng.randrange(0, 10001), 4)),
              (col(DATETIME2, {"fsp": 0}), lambda: rng.getrandbits(40).to_bytes(5, "big")),
              (col(TIMESTAMP2, {"fsp": 6}), lambda: be(rng.getrandbits(32), 4) + be(rng.randrange(0, 1000001), 3)),
              (col(TIMESTAMP2, {"fsp": 1}), lambda: be(rng.getrandbits(32), 4) + bytes([rng.randrange(101)]))]
    for column, make in makers:
        native = 0
        for _ in range(2000):
            buf = b"\x00" + make()
            got = compiled(crows, [column], buf)
            if got != "fallback":
                native += 1
                assert got == pure([column], buf), buf
        assert native > 300, column


def run_rows(module, cols, buf, op=INSERT):
    """The row changes (typed) of a rows event of these bytes through compile_rows, or its error, with
    the compiled decoder (`module`) or the pure generated code (None)."""
    saved, image_plan.crows = image_plan.crows, module
    try:
        table = TableDef(7, "db", "t", tuple(cols), (True,) * len(cols))
        names = [f"c{k}" for k in range(len(cols))]
        present = list(range(len(cols)))
        gen = compile_rows(table, op, present, present if op == UPDATE else None, names)
        assert gen.source.startswith("<compiled rows") == (module is not None)
        ev = SimpleNamespace(file="f", pos=4, type="WRITE_ROWS_EVENT_V1")
        template = dict.fromkeys(("file", "pos", "timestamp", "server_id", "gtid", "schema", "table", "op",
                                  "before", "after", "row_index", "table_def"), 0)
        out = []
        try:
            for rc in gen(SimpleNamespace(gtid="0-1-2"), ev, buf, template):
                out.append((list(vars(rc)), rc.gtid, rc.row_index, typed(rc.before or {}), typed(rc.after or {})))
        except BinlogError as exc:
            out.append(("error", type(exc).__name__, str(exc)))
        return out
    finally:
        image_plan.crows = saved


@pytest.mark.parametrize("op", [INSERT, UPDATE, DELETE])
def test_rows_events_yield_the_pure_row_changes_and_error(crows, op):
    """Images the C code decodes, images it hands back (invalid UTF-8, a zero date) and a truncated
    last one: the same RowChange fields, in the same order, then the same error."""
    cols = [col(LONG), col(VARCHAR, {"max_length": 10}, charset=UTF8), col(DATE)]
    good = b"\x00" + struct.pack("<i", 5) + b"\x02ok" + (2024 << 9 | 1 << 5 | 2).to_bytes(3, "little")
    odd = b"\x02" + struct.pack("<i", -5) + b"\x02\xc3\x28" + b"\x00\x00\x00"
    nulls = b"\x07"
    buf = good + odd + nulls + good + good[:-1]
    fast, reference = run_rows(crows, cols, buf, op), run_rows(None, cols, buf, op)
    assert fast == reference
    assert reference[-1][0] == "error" and len(reference) == (3 if op == UPDATE else 5)


def test_binlog_spec_pure_keeps_the_generated_python_decoders():
    """BINLOG_SPEC_PURE=1 (binlog_spec.compiled) turns the compiled row decoder off; without it, a
    built extension is the one that runs."""
    _compiled_module()
    code = "from binlog_spec.rows import image_plan; print(image_plan.crows is not None)"
    for env, running in (({"BINLOG_SPEC_PURE": "1"}, "False"), ({"BINLOG_SPEC_PURE": ""}, "True")):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == running, env


# --------------------------------------------------------------------------
# Every corpus and fixture file, the whole pipeline, compiled and pure

def binlog_files():
    files = [CORPUS / row["file"] for row in manifest_rows()]
    files += sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())
    return [p for p in files if p.is_file()]


def pipeline_rows(path):
    """(typed row changes, errors) of a file as `binlog-spec rows` decodes it."""
    out, faults = [], []
    events = api.select_events(binlog_spec.read_events([path], faults=faults), FilterOptions(), [str(path)],
                               SchemaTracker(), lambda kind, message: None, warn=lambda message: None)
    try:
        for rc in api.read_rows(events):
            out.append((rc.pos, rc.op, rc.row_index, rc.gtid, typed(rc.before or {}), typed(rc.after or {})))
    except BinlogError as exc:
        out.append(("error", type(exc).__name__, str(exc)))
    return out, [str(f) for f in faults]


def test_every_corpus_and_fixture_file_decodes_the_same_rows_compiled_and_pure(crows, monkeypatch):
    made = []

    original = image_plan.rows_function

    def counting(*args):
        got = original(*args)
        made.extend([got] if got is not None else [])
        return got
    monkeypatch.setattr(image_plan, "rows_function", counting)
    files = binlog_files()
    assert len(files) > 100
    differ = []
    for path in files:
        monkeypatch.setattr(image_plan, "crows", crows)
        fast = pipeline_rows(path)
        monkeypatch.setattr(image_plan, "crows", None)
        reference = pipeline_rows(path)
        if fast != reference:
            differ.append(str(path))
    assert not differ
    assert len(made) > 100          # the compiled decoder did run (layouts seen twice are compiled)
