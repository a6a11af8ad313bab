"""Bodies parsed once, or only when asked for: ReadOptions.parse_bodies, the kept TABLE_MAP and QUERY
bodies (binlog/fields/bodies.py), and the reader's window of large reads.

Byte-literal cases built from one real event stream (the seed FDE and TABLE_MAP), then real files.
"""
from __future__ import annotations

import struct

import pytest

import binlog_spec
from binlog_spec.binlog import spec
from binlog_spec.binlog.fields import bodies

from conftest import FIXTURES, collect
from test_reader_errors import FDE, MAGIC, TM, event, write

ROTATE, XID, TABLE_MAP = 4, 16, 19


def test_an_event_of_a_type_not_parsed_as_read_keeps_its_bytes_and_parses_when_its_fields_are_asked(tmp_path):
    rotate = event(ROTATE, struct.pack("<Q", 4) + b"next.000002")
    p = write(tmp_path, MAGIC + FDE + rotate)
    eager, _ = collect(p)
    lazy, err = collect(p, parse_bodies=frozenset({XID}))
    assert err is None
    assert lazy[1]._late is not None and lazy[1]._body is None      # not parsed while read
    assert lazy[1].raw == rotate and lazy[1].checksum == eager[1].checksum
    assert lazy[1].fields == eager[1].fields and lazy[1].to_dict() == eager[1].to_dict()
    assert lazy[1]._late is None


def test_a_malformed_body_never_asked_for_is_not_reported(tmp_path):
    short_rotate = event(ROTATE, b"\x01\x02")     # ROTATE needs an 8-byte position
    xid = event(XID, struct.pack("<Q", 77))
    p = write(tmp_path, MAGIC + FDE + short_rotate + xid)
    events, err = collect(p, strict=True, parse_bodies=frozenset({XID}))
    assert err is None and [e.error for e in events] == [None, None, None]
    assert events[2].xid == 77


def test_a_malformed_body_parsed_late_gives_the_error_it_gives_when_read(tmp_path):
    short_rotate = event(ROTATE, b"\x01\x02")
    p = write(tmp_path, MAGIC + FDE + short_rotate + event(XID, struct.pack("<Q", 77)))
    eager, _ = collect(p)
    lazy, _ = collect(p, parse_bodies=frozenset({XID}))
    assert lazy[1].error is None
    assert lazy[1].fields == eager[1].fields       # {"malformed": ..., "body": ...}
    assert type(lazy[1].error) is type(eager[1].error)
    assert (str(lazy[1].error), lazy[1].error.offset, lazy[1].error.event_type) == \
        (str(eager[1].error), 123, "ROTATE_EVENT")
    _, strict_err = collect(p, strict=True)
    strict, _ = collect(p, strict=True, parse_bodies=frozenset({XID}))
    with pytest.raises(binlog_spec.MalformedEventError) as late:
        strict[1].fields
    assert (str(late.value), late.value.file, late.value.offset) == (str(strict_err), str(p), 123)


def test_a_type_parsed_as_read_still_raises_in_the_reader_when_strict(tmp_path):
    short_rotate = event(ROTATE, b"\x01\x02")
    p = write(tmp_path, MAGIC + FDE + short_rotate)
    events, err = collect(p, strict=True, parse_bodies=frozenset({ROTATE}))
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT"]
    assert isinstance(err, binlog_spec.MalformedEventError) and err.offset == 123


def test_the_framing_checks_stay_for_bodies_not_parsed(tmp_path):
    rotate = bytearray(event(ROTATE, struct.pack("<Q", 4) + b"next.000002"))
    rotate[-1] ^= 0xFF
    events, err = collect(write(tmp_path, MAGIC + FDE + bytes(rotate)), parse_bodies=frozenset())
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT"]
    assert isinstance(err, binlog_spec.ChecksumError) and err.offset == 123


def test_identical_table_map_bodies_are_parsed_once(tmp_path):
    bodies._BODIES.clear()
    body = TM[19:-4]
    first, second = event(TABLE_MAP, body), event(TABLE_MAP, body, end_log_pos=999)
    events, err = collect(write(tmp_path, MAGIC + FDE + first + second))
    assert err is None and first != second
    assert events[1]._body is events[2]._body
    assert events[1].fields == events[2].fields and events[1].fields is not events[2].fields
    other = event(TABLE_MAP, body[:-1] + bytes([body[-1] ^ 1]))
    events, _ = collect(write(tmp_path, MAGIC + FDE + first + other, "u.000001"))
    assert events[1]._body is not events[2]._body


def test_a_kept_body_is_parsed_again_under_other_post_header_lengths(tmp_path):
    bodies._BODIES.clear()
    fde = spec.parse_fde(FDE[19:])
    buf = event(TABLE_MAP, TM[19:-4])
    assert bodies.parse_event(buf, fde) is bodies.parse_event(bytes(buf), fde)
    lens = bytearray(fde.post_header_lens)
    lens[TABLE_MAP - 1] = 6                  # a 6-byte table id post-header (pre-5.1.4 servers: 6, now 8)
    other = type(fde)(**{**fde.__dict__, "post_header_lens": bytes(lens)})
    with pytest.raises(spec.SpecError):     # these bytes do not fit the other lengths
        bodies.parse_event(buf, other)


@pytest.mark.parametrize("path", sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())[:6],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_fixture_reads_the_same_with_bodies_parsed_late(path):
    eager, err = collect(path)
    lazy, lazy_err = collect(path, parse_bodies=frozenset())
    assert repr(lazy_err) == repr(err)
    assert [e.to_dict() for e in lazy] == [e.to_dict() for e in eager]


def test_the_window_never_reads_past_the_size_the_file_had(tmp_path):
    from binlog_spec.binlog.framing import Window
    import io
    w = Window(io.BytesIO(b"0123456789abcdef"), chunk=4, limit=10)
    assert w.take(0, 3) == b"012" and w.take(2, 6) == b"234567"
    assert w.take(8, 5) == b"89" and w.take(10, 1) == b""
