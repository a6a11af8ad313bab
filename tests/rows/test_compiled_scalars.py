"""The compiled value decoders of rows/_cscalars.pxd (DECIMAL, TIME2, the old TIME/DATETIME/TIMESTAMP, BIT,
ENUM, SET, GEOMETRY, VECTOR: kinds of rows/_cdecoder.pyx's ImageDecoder) against the pure decoders of rows/scalars.py
and rows/values.py: byte literals at the edges of each type, decoded in C to the value (and type) the pure
path gives; what the C code does not make (an error, a str for a zero date) handed back, ending as the pure
decoder says; and random bytes of every precision compared value for value."""
from __future__ import annotations

import datetime as dt
import random
import struct
from decimal import Decimal

import pytest

from binlog_spec.rows import image_plan
from binlog_spec.rows.column_sizes import LAYOUTS
from binlog_spec.rows.column_types import (BIT, DATETIME, DATETIME2, ENUM, GEOMETRY, NEWDECIMAL, SET, STRING, TIME,
                                           TIME2, TIMESTAMP, TIMESTAMP2, VECTOR)

from test_compiled_rows import (BINARY, LATIN1, UTF8, be, col, compiled, crows, datetime2, pure,  # noqa: F401
                                run_rows, typed)

UTC = dt.timezone.utc
#: MariaDB's hires TIME zero point (Field_time_hires::zero_point), 838:59:59 + 1 s, in microseconds.
HIRES_ZERO = (838 * 3600 + 59 * 60 + 59 + 1) * 1_000_000


def dec(text, precision, scale):
    """The bytes MySQL's decimal2bin (strings/decimal.cc) writes for `text` in DECIMAL(precision, scale)."""
    negative, text = text.startswith("-"), text.lstrip("-")
    whole, _, frac = text.partition(".")
    intg = precision - scale
    whole, frac = whole.rjust(intg, "0"), frac.ljust(scale, "0")
    groups = ([whole[:intg % 9]] if intg % 9 else []) + [whole[i:i + 9] for i in range(intg % 9, intg, 9)]
    groups += [frac[i:i + 9] for i in range(0, scale, 9)]
    data = bytearray(b"".join(int(g).to_bytes((4 if len(g) == 9 else (len(g) + 1) // 2), "big") for g in groups))
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    data[0] ^= 0x80
    return bytes(data)


def decimal_col(precision, scale):
    return col(NEWDECIMAL, {"precision": precision, "scale": scale})


def time2(seconds, usec, fsp, negative=False):
    """TIME2 bytes as my_time_packed_to_binary writes them (MY_PACKED_TIME_GET_INT_PART/FRAC_PART of the
    signed packed value, the fraction's C remainder truncated to the precision)."""
    h, m, s = seconds // 3600, seconds // 60 % 60, seconds % 60
    packed = (((h << 12) | (m << 6) | s) << 24) + usec
    packed = -packed if negative else packed
    intpart, frac = packed >> 24, abs(packed) % (1 << 24) * (-1 if packed < 0 else 1)
    if fsp == 0:
        return be(intpart + 0x800000, 3)
    if fsp <= 2:
        return be(intpart + 0x800000, 3) + bytes([int(frac / 10000) & 0xFF])
    if fsp <= 4:
        return be(intpart + 0x800000, 3) + be(int(frac / 100) & 0xFFFF, 2)
    return be(packed + 0x800000000000, 6)


def td(seconds, usec=0, negative=False):
    value = dt.timedelta(seconds=seconds, microseconds=usec)
    return -value if negative else value


def old_time(hhmmss):
    return (hhmmss & 0xFFFFFF).to_bytes(3, "little")


def hires_datetime(y, mo, d, h, mi, s, usec, fsp, size):
    packed = ((((y * 13 + mo) * 32 + d) * 24 + h) * 60 + mi) * 60 + s
    return be((packed * 1_000_000 + usec) // 10 ** (6 - fsp), size)


ENUM_AB = dict(enum_values=(b"a", b"b"))
SET64 = tuple(f"m{i}".encode() for i in range(64))
MAX65 = "9" * 35 + "." + "9" * 30

# (column, value bytes, expected value): each decoded in C (no fallback) and equal to the pure path
NATIVE = [
    (decimal_col(65, 30), dec(MAX65, 65, 30), Decimal(MAX65)),
    (decimal_col(65, 30), dec("-" + MAX65, 65, 30), Decimal("-" + MAX65)),
    (decimal_col(65, 0), dec("-" + "9" * 65, 65, 0), Decimal("-" + "9" * 65)),
    (decimal_col(12, 2), dec("-1234567890.12", 12, 2), Decimal("-1234567890.12")),
    (decimal_col(12, 2), dec("0.05", 12, 2), Decimal("0.05")),
    (decimal_col(10, 0), dec("0", 10, 0), Decimal("0")),
    (decimal_col(10, 2), dec("-0.00", 10, 2), Decimal("0.00")),          # a stored negative zero reads as zero
    (decimal_col(4, 4), dec("-0.1234", 4, 4), Decimal("-0.1234")),       # fraction only
    (decimal_col(30, 30), dec("0." + "1" * 30, 30, 30), Decimal("0." + "1" * 30)),
    (decimal_col(18, 9), dec("-1.000000001", 18, 9), Decimal("-1.000000001")),
    (decimal_col(1, 0), dec("7", 1, 0), Decimal("7")),
    (decimal_col(5, 2), bytes([0x80, 0x01, 0x05]), Decimal("1.05")),
    (col(TIME2, {"fsp": 0}), time2(838 * 3600 + 59 * 60 + 59, 0, 0, True), td(838 * 3600 + 59 * 60 + 59, 0, True)),
    (col(TIME2, {"fsp": 0}), time2(0, 0, 0), dt.timedelta(0)),
    (col(TIME2, {"fsp": 1}), time2(1, 500000, 1, True), td(1, 500000, True)),
    (col(TIME2, {"fsp": 2}), time2(1, 0, 2, True), td(1, 0, True)),
    (col(TIME2, {"fsp": 2}), time2(0, 10000, 2, True), td(0, 10000, True)),
    (col(TIME2, {"fsp": 3}), time2(3723, 4000, 3, True), td(3723, 4000, True)),
    (col(TIME2, {"fsp": 4}), time2(3723, 999900, 4), td(3723, 999900)),
    (col(TIME2, {"fsp": 5}), time2(59, 999990, 5, True), td(59, 999990, True)),
    (col(TIME2, {"fsp": 6}), time2(838 * 3600 + 59 * 60 + 59, 999999, 6, True), td(3020399, 999999, True)),
    (col(TIME2, {"fsp": 6}), time2(1, 1, 6), td(1, 1)),
    (col(TIME), old_time(-8385959), td(838 * 3600 + 59 * 60 + 59, 0, True)),
    (col(TIME), old_time(123456), td(12 * 3600 + 34 * 60 + 56)),
    (col(TIME), old_time(-1), td(1, 0, True)),
    (col(TIME, {"fsp": 3}), be((HIRES_ZERO - 1_500_000) // 1000, 5), td(1, 500000, True)),
    (col(TIME, {"fsp": 6}), be(HIRES_ZERO + 3_600_000_001, 6), td(3600, 1)),
    (col(DATETIME), (20240229134530).to_bytes(8, "little"), dt.datetime(2024, 2, 29, 13, 45, 30)),
    (col(DATETIME), (99991231235959).to_bytes(8, "little"), dt.datetime(9999, 12, 31, 23, 59, 59)),
    (col(DATETIME, {"fsp": 6}), hires_datetime(2024, 2, 29, 13, 45, 30, 123456, 6, 8),
     dt.datetime(2024, 2, 29, 13, 45, 30, 123456)),
    (col(DATETIME, {"fsp": 2}), hires_datetime(1, 1, 1, 0, 0, 0, 990000, 2, 6), dt.datetime(1, 1, 1, 0, 0, 0, 990000)),
    (col(TIMESTAMP), (1700000000).to_bytes(4, "little"), dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
    (col(TIMESTAMP), b"\xff" * 4, dt.datetime(2106, 2, 7, 6, 28, 15, tzinfo=UTC)),
    (col(TIMESTAMP, {"fsp": 3}), be(0, 4) + be(5, 2), dt.datetime(1970, 1, 1, 0, 0, 0, 5000, tzinfo=UTC)),
    (col(BIT, {"bits": 1, "bytes": 0}), b"\x01", 1),
    (col(BIT, {"bits": 0, "bytes": 8}), b"\xff" * 8, 2**64 - 1),
    (col(BIT, {"bits": 2, "bytes": 1}), b"\x03\xfe", 1022),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, **ENUM_AB), b"\x00", ""),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, **ENUM_AB), b"\x02", "b"),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=BINARY, **ENUM_AB), b"\x00", b""),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=BINARY, **ENUM_AB), b"\x01", b"a"),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=LATIN1, enum_values=(b"\xe9\x80",)), b"\x01", "é€"),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, enum_values=(b"\xff",)), b"\x01", b"\xff"),
    (col(STRING, {"max_length": 1, "real_type": ENUM}, enum_values=("é".encode(),)), b"\x01", "é"),   # charset unknown
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8), b"\x07", 7),                # members unknown
    (col(STRING, {"max_length": 2, "real_type": ENUM}, charset=UTF8,
         enum_values=tuple(b"%d" % i for i in range(300))), be(300, 2)[::-1], "299"),
    (col(ENUM, {"pack_length": 2}, charset=UTF8), b"\xff\xff", 65535),
    (col(STRING, {"max_length": 8, "real_type": SET}, charset=UTF8, set_values=SET64), b"\xff" * 8,
     frozenset(m.decode() for m in SET64)),
    (col(STRING, {"max_length": 8, "real_type": SET}, charset=UTF8, set_values=SET64), be(1 << 63 | 1, 8)[::-1],
     frozenset(["m0", "m63"])),
    (col(STRING, {"max_length": 1, "real_type": SET}, charset=UTF8, set_values=(b"x", b"y")), b"\x00", frozenset()),
    (col(STRING, {"max_length": 1, "real_type": SET}, charset=BINARY, set_values=(b"x", b"y")), b"\x03",
     frozenset([b"x", b"y"])),
    (col(STRING, {"max_length": 8, "real_type": SET}, charset=UTF8), b"\xff" * 8, 2**64 - 1),     # members unknown
    (col(SET, {"pack_length": 1}, charset=UTF8), b"\x05", 5),
    (col(SET, {"pack_length": 8}, charset=UTF8, set_values=SET64 + (b"m64",)), be(1 << 63, 8), frozenset(["m7"])),
    (col(GEOMETRY, {"pack_length": 4}), (9).to_bytes(4, "little") + (4326).to_bytes(4, "little") + b"\x01\x01\0\0\0",
     {"srid": 4326, "wkb": b"\x01\x01\x00\x00\x00"}),
    (col(GEOMETRY, {"pack_length": 1}), b"\x04" + b"\xff" * 4, {"srid": 2**32 - 1, "wkb": b""}),
    (col(VECTOR, {"pack_length": 4}), (12).to_bytes(4, "little") + struct.pack("<3f", 1.5, -0.1, float("inf")),
     list(struct.unpack("<3f", struct.pack("<3f", 1.5, -0.1, float("inf"))))),
    (col(VECTOR, {}), bytes(4), []),
]
NATIVE_IDS = [f"{i}-{column.type_code}" for i, (column, _, _) in enumerate(NATIVE)]


@pytest.mark.parametrize("column, data, value", NATIVE, ids=NATIVE_IDS)
def test_each_value_decodes_in_c_to_the_pure_value_and_end(crows, column, data, value):
    assert image_plan.column_plan(column)[0] != "call"
    buf = b"\x00" + data + b"tail"
    got = compiled(crows, [column], buf)
    assert got != "fallback"
    assert got == pure([column], buf) == ({"c0": typed(value)}, 1 + len(data))
    assert type(value) is type(compiled_value(crows, column, buf))


def compiled_value(crows_module, column, buf):
    return crows_module.ImageDecoder(image_plan.plan([column], ["c0"])).decode(buf, 0)[0]["c0"]


@pytest.mark.parametrize("column, data, value", NATIVE, ids=NATIVE_IDS)
def test_every_truncated_value_is_handed_back_to_the_pure_decoder(crows, column, data, value):
    for cut in range(len(data)):
        buf = b"\x00" + data[:cut]
        assert compiled(crows, [column], buf) == "fallback", cut
        assert pure([column], buf)[0] == "error"


@pytest.mark.parametrize("column, data", [
    (decimal_col(1, 0), bytes([0x80 | 10])),                                   # a group of too many digits
    (decimal_col(18, 9), dec("1", 18, 9)[:4] + be(10**9, 4)),
    (decimal_col(66, 0), b"\x80" + bytes(29)),                                 # precision past 65: called back
    (col(TIME2, {"fsp": 0}), be(0x800000 + (1 << 12 | 60 << 6), 3)),           # minute 60: error
    (col(TIME2, {"fsp": 6}), be(0x800000000000 + 1000000, 6)),                 # fraction past 999999: error
    (col(TIME2, {"fsp": 7}), bytes(7)),                                        # bad fsp: called back, error
    (col(TIME), old_time(6100)),                                               # 00:61:00: error
    (col(DATETIME), bytes(8)),                                                 # zero DATETIME: str
    (col(DATETIME), (20230229000000).to_bytes(8, "little")),                   # no calendar date: str
    (col(DATETIME, {"fsp": 1}), b"\xff" * 6),                                  # past 64 bits scaled: str
    (col(TIMESTAMP), bytes(4)),                                                # zero TIMESTAMP: str
    (col(TIMESTAMP, {"fsp": 2}), be(0, 4) + b"\x00"),                          # zero hires TIMESTAMP(2): str
    (col(TIMESTAMP, {"fsp": 1}), be(5, 4) + b"\x0b"),                          # fraction past 999999: error
    (col(BIT, {"bits": 8, "bytes": 1}), b"\x01\x02"),                          # bad metadata: error
    (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, **ENUM_AB), b"\x03"),   # index past members
    (col(STRING, {"max_length": 3, "real_type": ENUM}, charset=UTF8, **ENUM_AB), b"\x01\x00\x00"),  # pack 3: error
    (col(STRING, {"max_length": 1, "real_type": SET}, charset=UTF8, set_values=(b"x", b"y")), b"\x04"),
    (col(GEOMETRY, {"pack_length": 4}), (3).to_bytes(4, "little") + b"abc"),   # no 4-byte SRID: error
    (col(VECTOR, {"pack_length": 4}), (3).to_bytes(4, "little") + b"abc"),     # no whole float32: error
])
def test_what_the_c_code_does_not_make_ends_as_the_pure_decoder_says(crows, column, data):
    buf = b"\x00" + data
    assert compiled(crows, [column], buf) == "fallback"
    assert run_rows(crows, [column], buf * 3) == run_rows(None, [column], buf * 3)


def random_value(rng, column, size):
    """Random bytes of a value of `column`, half of them built from parts (near and past their ranges)."""
    if rng.random() < 0.5:
        return bytes(rng.getrandbits(8) for _ in range(size))
    code, fsp = column.type_code, column.meta.get("fsp", 0)
    if code == NEWDECIMAL:
        precision, scale = column.meta["precision"], column.meta["scale"]
        digits = "".join(rng.choice("0123456789") for _ in range(precision))
        whole = digits[:precision - scale]
        return dec(rng.choice(["", "-"]) + (whole or "0") + ("." + digits[len(whole):] if scale else ""),
                   precision, scale)
    parts = [rng.randrange(0, 10000), rng.randrange(0, 14), rng.randrange(0, 33), rng.randrange(0, 25),
             rng.randrange(0, 61), rng.randrange(0, 61), rng.randrange(0, 1000000) // 10 ** (6 - fsp) * 10 ** (6 - fsp)]
    stored = parts[6] // (10000 if fsp <= 2 else 100 if fsp <= 4 else 1)      # DATETIME2/TIMESTAMP2's fraction
    if code == DATETIME2:
        return datetime2(*parts[:6], stored, fsp)
    if code == TIMESTAMP2:
        return be(rng.getrandbits(32), 4) + (be(stored, (fsp + 1) // 2) if fsp else b"")
    if code == DATETIME and fsp:
        return hires_datetime(*parts, fsp, size)
    if code == DATETIME:
        return int("%04d%02d%02d%02d%02d%02d" % tuple(parts[:6])).to_bytes(8, "little")
    if code == TIME and not fsp:
        return old_time(rng.choice([1, -1]) * (rng.randrange(0, 839) * 10000 + parts[4] * 100 + parts[5]))
    seconds = rng.randrange(0, 839 * 3600)
    if code == TIME:
        return be((HIRES_ZERO + rng.choice([1, -1]) * (seconds * 1_000_000 + parts[6])) // 10 ** (6 - fsp), size)
    if code == TIME2:
        return time2(seconds, parts[6], fsp, rng.random() < 0.5)
    fraction = parts[6] // 10 ** (6 - fsp) % (1 << 8 * (size - 4))     # hires TIMESTAMP(5) has 2 bytes of it
    return be(rng.getrandbits(32), 4) + (be(fraction, size - 4) if fsp else b"")


def not_made_in_c(result):
    """Whether the pure decoder's (row, end) or error is what the C code hands back: an error or a str."""
    return result[0] == "error" or result[0]["c0"][0] == "str"


def test_random_bytes_of_every_precision_decode_as_the_pure_decoder_does(crows):
    """Random value bytes of every DECIMAL shape near the group edges and of every precision of TIME2,
    DATETIME2, TIMESTAMP2 and the old temporal types: what the C code makes is the pure value; what it hands back is an error or a str."""
    rng = random.Random(29)
    columns = [decimal_col(p, s) for p in (1, 2, 8, 9, 10, 17, 18, 19, 27, 28, 64, 65) for s in {0, 1, p // 2, 9, p}
               if s <= p]
    columns += [col(code, {"fsp": f}) for code in (TIME2, TIME, DATETIME, TIMESTAMP, DATETIME2, TIMESTAMP2)
                for f in range(7)]
    for column in columns:
        assert image_plan.column_plan(column)[0] != "call", column
        size = LAYOUTS[column.type_code](column)[0]
        native = 0
        for _ in range(300):
            buf = b"\x00" + random_value(rng, column, size)
            got, reference = compiled(crows, [column], buf), pure([column], buf)
            if got == "fallback":
                assert not_made_in_c(reference), (column, buf)
            else:
                native += 1
                assert got == reference, (column, buf)
        assert native > 30, column


@pytest.mark.parametrize("workload", ["mixed", "mixed-minimal"])
def test_the_mixed_workload_decodes_the_same_rows_compiled_and_pure(crows, monkeypatch, tmp_path, workload):
    """benchmarks/workloads.py's mixed-type workload, written by the real MariaDB (FULL metadata: ENUM/SET
    members known; MINIMAL: their indexes and bitmasks): every row change compiled is the pure one, typed,
    and its DECIMAL, ENUM, SET, DATETIME(6) and TIMESTAMP(3) columns are decoded in C."""
    from test_benchmarks import _generate
    from test_compiled_rows import pipeline_rows
    path = _generate(tmp_path, workload, "--scale", "0.001")["path"]
    kinds = []
    original = image_plan.column_plan
    monkeypatch.setattr(image_plan, "column_plan", lambda column: kinds.append(original(column)[0]) or original(column))
    monkeypatch.setattr(image_plan, "crows", crows)
    fast = pipeline_rows(path)
    monkeypatch.setattr(image_plan, "crows", None)
    assert fast == pipeline_rows(path) and len(fast[0]) > 1000 and not fast[1]
    assert {"decimal", "enum", "set", "datetime2", "timestamp2"} <= set(kinds)
