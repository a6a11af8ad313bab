"""The base64 script's per-event text (output/base64/text.py, compiled as output/base64/_ctext.pyx): the compiled
twin gives what the pure-Python one gives (the framing, the ``#`` lines, the base64 lines), over byte
literals at every size, position and checksum setting, and over every event of the corpus and fixtures;
the pure one is binlog.writer.frame's framing and base64.encodebytes' lines."""
from __future__ import annotations

import base64
import struct
import zlib

import pytest

from binlog_spec import compiled
from binlog_spec.binlog.writer import bare_bytes, frame
from binlog_spec.output.base64.text import base64_lines, event_text

from conftest import CORPUS, FIXTURES, collect, manifest_rows

_ctext = compiled.load("binlog_spec.output.base64._ctext")
ENCODERS = [pytest.param(base64_lines, id="pure"),
            pytest.param(_ctext.base64_lines if _ctext else None, id="compiled")]
TEXTS = [pytest.param(event_text, id="pure"),
         pytest.param(_ctext.event_text if _ctext else None, id="compiled")]


def bare(type_code: int, body: bytes, server_id: int = 7, flags: int = 0) -> bytes:
    return struct.pack("<IBIIIH", 1700000000, type_code, server_id, 19 + len(body), 0, flags) + body


def _outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize("encode", ENCODERS)
@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 56, 57, 58, 113, 114, 115, 171, 1000, 65536 + 7])
def test_base64_lines_are_encodebytes_without_the_last_newline(encode, size):
    assert encode is not None, "the compiled base64 text is not built"
    data = bytes((i * 37 + 11) & 0xFF for i in range(size))
    assert encode(data) == base64.encodebytes(data).decode("ascii").rstrip("\n")


@pytest.mark.parametrize("text", TEXTS)
def test_an_event_is_framed_at_its_position_with_its_crc32_and_commented(text):
    assert text is not None, "the compiled base64 text is not built"
    b = bare(16, b"\x05" + bytes(7))            # an XID_EVENT, its size field not set yet
    comment, encoded = text(b, len(b), 1000, True, "231114 22:13:20", 7, "Xid = 5", True)
    framed = base64.b64decode(encoded)
    assert framed == frame(b, 1000, True)
    assert framed[9:13] == struct.pack("<I", 19 + 8 + 4) and framed[13:17] == struct.pack("<I", 1031)
    assert framed[-4:] == struct.pack("<I", zlib.crc32(framed[:-4]))
    assert comment == (f"# at 1000\n#231114 22:13:20 server id 7  end_log_pos 1031 CRC32 0x{zlib.crc32(framed[:-4]):08x} "
                       "\tXid = 5")
    assert text(b, len(b), 1000, False, "W", 7, "S", False) == ("# at 1000\n#W server id 7  end_log_pos 1027 \tS", None)
    # the bare bytes given with a CRC32 trailer after them (the event as read): the trailer is not framed
    assert text(b + b"\xde\xad\xbe\xef", len(b), 1000, True, "W", 7, "S", True) == text(b, len(b), 1000, True, "W", 7,
                                                                                       "S", True)


def test_the_twins_agree_on_sizes_positions_checksums_and_refusals():
    assert _ctext is not None, "the compiled base64 text is not built"
    cases = [bare(code, bytes(range(n % 256)) * (n // 256 + 1), server_id=sid)[:19 + n]
             for code in (2, 16, 19, 30) for n in (0, 1, 2, 3, 37, 38, 39, 300) for sid in (0, 0xFFFFFFFF)]
    cases += [bare(15, bytes(80)), bare(16, b""), b"", b"\x00" * 18, bare(16, bytes(8))[:19]]   # FDE, short
    for b in cases:
        for pos in (0, 4, 1000, 0xFFFFFFFF - 20, 1 << 33):
            for checksum in (True, False):
                for encode in (True, False):
                    for data, n in ((b, len(b)), (b + b"\x01\x02\x03\x04", len(b)), (b, len(b) + 1), (b, -1)):
                        args = (data, n, pos, checksum, "260101  9:05:00", 42, "x\ty é", encode)
                        assert _outcome(_ctext.event_text, *args) == _outcome(event_text, *args), args


FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))


def test_the_twins_agree_on_every_event_of_the_corpus_and_fixtures():
    assert _ctext is not None, "the compiled base64 text is not built"
    seen = 0
    for path in FILES:
        events, _ = collect(path, verify_checksums=False)
        for ev in events:
            if ev.type_code == 15:      # the FDE is framed by writer.frame (LOG_EVENT_BINLOG_IN_USE_F)
                continue
            b = bare_bytes(ev)
            args = (b, len(b), ev.pos, ev.checksum is not None, "260101  9:05:00", ev.server_id, ev.type, True)
            assert _ctext.event_text(*args) == event_text(*args), (path, ev.pos)
            n = len(ev.raw) - 4 if ev.checksum is not None else len(ev.raw)     # the bytes as read
            assert _ctext.event_text(ev.raw, n, *args[2:]) == event_text(*args), (path, ev.pos)
            seen += 1
    assert seen > 10000
