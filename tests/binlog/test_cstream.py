"""The compiled stream (binlog/_cstream.pyx) against kaitaistruct's KaitaiStream over a BytesIO, call for
call: the same values, the same position after each call, the same exceptions (class and message), over
byte literals and seeded random call sequences that run off the end, seek past it, ask for negative and
huge lengths, and mix bit reads with byte reads. And it has every method the generated parsers call."""
from __future__ import annotations

import enum
import random
import re
from io import BytesIO

import pytest
from kaitaistruct import KaitaiStream

from conftest import ROOT

from binlog_spec import compiled

_cstream = compiled.load("binlog_spec.binlog._cstream")
FastStream = _cstream.FastStream if _cstream is not None else None

READS = ["read_u1", "read_u2le", "read_u4le", "read_u8le", "read_u2be", "read_u4be", "read_u8be",
         "read_s1", "read_s2le", "read_s4le", "read_s8le", "read_s2be", "read_s4be", "read_s8be",
         "read_f4le", "read_f8le", "read_f4be", "read_f8be", "read_bytes_full", "is_eof", "pos", "size",
         "align_to_byte"]


def _outcome(stream, name, *args):
    """(what the call returned or raised, the position after it, the bit state after it)."""
    try:
        got = ("value", getattr(stream, name)(*args))
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        got = ("raised", type(exc), str(exc), getattr(exc, "bytes_needed", None), getattr(exc, "bytes_available", None))
    if got[0] == "value" and isinstance(got[1], float) and got[1] != got[1]:
        got = ("value", "nan")
    return got, stream.pos(), stream.bits_left, stream.bits


def _random_call(rng: random.Random, size: int):
    kind = rng.random()
    if kind < 0.45:
        return rng.choice(READS), ()
    if kind < 0.65:
        return "read_bytes", (rng.choice([0, 1, 2, 3, size, size + 1, -1, rng.randrange(0, size + 3),
                                          8 * 1024 * 1024, 2 ** 70]),)
    if kind < 0.75:
        return "seek", (rng.choice([0, 1, size, size + 5, -1, rng.randrange(0, size + 3)]),)
    if kind < 0.85:
        return "read_bytes_term", (rng.choice([0, 0x41, rng.randrange(256)]), rng.random() < 0.5, rng.random() < 0.5,
                                   rng.random() < 0.5)
    return rng.choice(["read_bits_int_le", "read_bits_int_be"]), (rng.choice([1, 3, 7, 8, 9, 24, 64, 65]),)


@pytest.mark.parametrize("seed", range(40))
def test_random_call_sequences_give_what_kaitaistream_gives(seed):
    assert FastStream is not None, compiled.status(every=True)
    rng = random.Random(seed)
    size = rng.choice([0, 1, 2, 7, 8, 9, 30, 200])
    data = bytes(rng.choice([0, 0x41, 0x7F, 0x80, 0xFF, rng.randrange(256)]) for _ in range(size))
    start = rng.choice([0, 0, min(size, 3)])
    ref_io = BytesIO(data)
    ref_io.seek(start)
    ref, fast = KaitaiStream(ref_io), FastStream(BytesIO(data) if start == 0 else _at(data, start))
    for step in range(60):
        name, args = _random_call(rng, size)
        assert _outcome(fast, name, *args) == _outcome(ref, name, *args), (seed, step, name, args, data)


def _at(data: bytes, start: int) -> BytesIO:
    io = BytesIO(data)
    io.seek(start)
    return io


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff" * 8, b"\x01\x02\x03\x04\x05\x06\x07\x08", b"\x80" * 9])
def test_every_integer_read_gives_what_kaitaistream_gives_at_the_edges(data):
    for name in READS:
        assert _outcome(FastStream(data), name) == _outcome(KaitaiStream(BytesIO(data)), name), (name, data)


def test_a_short_read_says_what_kaitaistream_says_and_leaves_the_stream_at_its_end():
    fast, ref = FastStream(b"\x01\x02\x03"), KaitaiStream(BytesIO(b"\x01\x02\x03"))
    for s in (fast, ref):
        s.read_u1()
        with pytest.raises(EOFError, match=r"^requested 4 bytes, but only 2 bytes available$"):
            s.read_u4le()
        assert s.pos() == 3 and s.is_eof()


def test_the_constructor_takes_a_bytesio_bytes_or_a_file(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abcdef")
    with path.open("rb") as f:
        f.seek(2)
        s = FastStream(f)
        assert (s.pos(), s.size(), s.read_bytes(2), f.tell()) == (2, 6, b"cd", 2)
    assert FastStream(bytearray(b"xy")).read_bytes_full() == b"xy"
    assert FastStream(_at(b"abcdef", 4)).read_bytes_full() == b"ef"


def _result(fn, *args):
    try:
        return "value", fn(*args)
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return "raised", type(exc), str(exc)


def test_the_static_helpers_give_what_kaitaistream_gives():
    class Colour(enum.IntEnum):
        red = 1
    for name, args in [("byte_array_index", (b"\x05\x06", 1)), ("byte_array_index", (b"\x05", 3)),
                       ("bytes_terminate", (b"ab\x00cd", 0, False)), ("bytes_terminate", (b"ab\x00cd", 0, True)),
                       ("bytes_terminate", (b"abcd", 0, False)), ("bytes_terminate", (b"abcd", 300, False)),
                       ("resolve_enum", (Colour, 1)), ("resolve_enum", (Colour, 7)),
                       ("byte_array_index_of", (b"abc", 0x63)), ("bytes_strip_right", (b"ab  ", 0x20)),
                       ("byte_array_min", (b"\x03\x01",)), ("byte_array_max", (b"\x03\x01",))]:
        fast, ref = _result(getattr(FastStream, name), *args), _result(getattr(KaitaiStream, name), *args)
        assert fast == ref and type(fast[1]) is type(ref[1]), (name, args)


def test_the_fast_stream_has_every_call_the_generated_parsers_make():
    source = (ROOT / "generated" / "binlog.py").read_text(encoding="utf-8")
    methods = set(re.findall(r"\b_io\w*\.(\w+)\(", source)) | set(re.findall(r"\bKaitaiStream\.(\w+)\(", source))
    assert {"read_u4le", "read_bytes", "is_eof", "byte_array_index"} <= methods
    assert not [m for m in sorted(methods) if not hasattr(FastStream, m)]
