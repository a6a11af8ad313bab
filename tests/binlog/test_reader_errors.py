"""Bad input: every fault is a BinlogError with file, offset and event type, after every earlier event.

Byte-literal cases built from one real event stream (the seed FDE and TABLE_MAP).
"""
from __future__ import annotations

import gzip
import struct
import zlib

import pytest

import binlog_spec

from conftest import CORPUS, collect
from test_spec_seeds import SEED_TABLE_MAP, seed_fde_bytes

FDE = seed_fde_bytes()[4:]          # 119 bytes, CRC32 events
TM = SEED_TABLE_MAP                 # 46 bytes
MAGIC = b"\xfebin"


def write(tmp_path, data: bytes, name="t.000001"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def event(type_code: int, body: bytes, end_log_pos: int = 0, crc: bool = True, size: int | None = None) -> bytes:
    n = 19 + len(body) + (4 if crc else 0)
    head = struct.pack("<IBIIIH", 1700000000, type_code, 7, n if size is None else size, end_log_pos, 0)
    raw = head + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


def test_a_file_without_the_magic_is_not_a_binlog(tmp_path):
    p = write(tmp_path, b"SELECT 1;\n" * 5)
    events, err = collect(p)
    assert events == [] and isinstance(err, binlog_spec.NotABinlogError)
    assert (err.file, err.offset) == (str(p), 0)
    assert str(err).startswith(f"{p}: offset 0: not a binlog")


def test_an_empty_file_is_not_a_binlog(tmp_path):
    _, err = collect(write(tmp_path, b""))
    assert isinstance(err, binlog_spec.NotABinlogError) and err.offset == 0


def test_the_first_event_must_be_a_format_description(tmp_path):
    _, err = collect(write(tmp_path, MAGIC + TM))
    assert isinstance(err, binlog_spec.NotABinlogError)
    assert (err.offset, err.event_type) == (4, "TABLE_MAP_EVENT")


def test_a_truncated_event_fails_at_its_start_after_the_earlier_events(tmp_path):
    p = write(tmp_path, MAGIC + FDE + TM[:30])
    events, err = collect(p)
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT"]
    assert isinstance(err, binlog_spec.TruncatedEventError)
    assert (err.offset, err.event_type) == (123, "TABLE_MAP_EVENT")
    assert "46 bytes runs past the end of the file (30 bytes remain)" in err.message


def test_a_truncated_header_fails_at_its_start(tmp_path):
    events, err = collect(write(tmp_path, MAGIC + FDE + TM + TM[:7]))
    assert len(events) == 2 and isinstance(err, binlog_spec.TruncatedEventError)
    assert err.offset == 4 + len(FDE) + len(TM) and err.event_type is None


def test_a_crc_mismatch_names_the_event(tmp_path):
    bad = bytearray(TM)
    bad[-1] ^= 0xFF
    events, err = collect(write(tmp_path, MAGIC + FDE + bytes(bad) + TM))
    assert len(events) == 1 and isinstance(err, binlog_spec.ChecksumError)
    assert (err.offset, err.event_type) == (123, "TABLE_MAP_EVENT")


def test_checksums_can_be_left_unverified(tmp_path):
    bad = bytearray(TM)
    bad[-1] ^= 0xFF
    events, err = collect(write(tmp_path, MAGIC + FDE + bytes(bad)), verify_checksums=False)
    assert err is None and [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT"]


def test_a_broken_fde_checksum_is_caught(tmp_path):
    bad = bytearray(FDE)
    bad[25] ^= 0x01  # inside the server version
    _, err = collect(write(tmp_path, MAGIC + bytes(bad)))
    assert isinstance(err, binlog_spec.ChecksumError) and err.offset == 4
    assert err.event_type == "FORMAT_DESCRIPTION_EVENT"


@pytest.mark.parametrize("size", [0, 18, 22])
def test_an_impossible_event_size_is_reported(tmp_path, size):
    """Smaller than a header (0, 18), or than a header plus the CRC32 the FDE announces (22)."""
    xid = event(16, struct.pack("<Q", 5), size=size)
    events, err = collect(write(tmp_path, MAGIC + FDE + xid))
    assert len(events) == 1 and isinstance(err, binlog_spec.EventSizeError)
    assert err.offset == 123


def test_an_event_larger_than_the_file_is_truncated_not_allocated(tmp_path):
    huge = event(16, struct.pack("<Q", 5), size=0xFFFFFFF0)
    events, err = collect(write(tmp_path, MAGIC + FDE + huge))
    assert len(events) == 1 and isinstance(err, binlog_spec.TruncatedEventError)
    assert (err.offset, err.event_type) == (123, "XID_EVENT")


def test_errors_in_gzip_files_carry_the_same_offsets(tmp_path):
    p = tmp_path / "t.000001.gz"
    p.write_bytes(gzip.compress(MAGIC + FDE + TM + TM[:10]))
    events, err = collect(p)
    assert len(events) == 2 and isinstance(err, binlog_spec.TruncatedEventError)
    assert err.offset == 4 + len(FDE) + len(TM)


def test_a_cut_gzip_file_fails_at_the_event_it_cuts_after_the_earlier_events(tmp_path):
    """A 1.4 MB binlog gzipped, the .gz cut in half (no end-of-stream marker): every event that
    the remaining bytes decompress to whole is delivered (833 kB: under the reader's 1 MiB buffer,
    which a buffered read over gzip.GzipFile loses whole),
    then a TruncatedEventError at the first event that is not whole, not an EOFError."""
    plain = CORPUS / "mbcj_osheroff" / "mysql-bin.sakila"
    packed = gzip.compress(plain.read_bytes())
    cut = packed[:len(packed) // 2]
    whole = len(zlib.decompressobj(31).decompress(cut))   # what the cut file still holds
    expected = [ev.pos for ev in binlog_spec.open(plain) if ev.pos + ev.size <= whole]
    p = tmp_path / "mysql-bin.000001.gz"
    p.write_bytes(cut)
    events, err = collect(p)
    assert [ev.pos for ev in events] == expected and len(events) > 100
    assert isinstance(err, binlog_spec.TruncatedEventError) and str(p) in str(err)
    assert err.offset == next(ev.pos for ev in binlog_spec.open(plain) if ev.pos + ev.size > whole)
    assert "gzip file is cut" in err.message


def test_a_damaged_gzip_file_is_a_binlog_error_with_its_offset(tmp_path):
    # format: RFC 1952: after the magic 1f 8b, compression method 8 (deflate); 3 is no method
    p = tmp_path / "t.000001.gz"
    p.write_bytes(b"\x1f\x8b\x03" + bytes(20))
    events, err = collect(p)
    assert events == [] and isinstance(err, binlog_spec.DecompressionError)
    assert err.offset == 0 and "gzip file is damaged" in err.message


def test_a_body_that_does_not_fit_its_layout_is_kept_and_flagged(tmp_path):
    """Framing intact (size, CRC), body too short for its type: flagged, raw body kept, stream goes on."""
    short_rotate = event(4, b"\x01\x02")  # ROTATE needs an 8-byte position
    xid = event(16, struct.pack("<Q", 77))
    events, err = collect(write(tmp_path, MAGIC + FDE + short_rotate + xid))
    assert err is None
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT", "XID_EVENT"]
    bad = events[1]
    assert isinstance(bad.error, binlog_spec.MalformedEventError)
    assert bad.error.offset == 123 and bad.error.event_type == "ROTATE_EVENT"
    assert bad.fields["body"] == b"\x01\x02" + short_rotate[-4:]
    assert bad.to_dict()["error"].startswith(f"{tmp_path / 't.000001'}: offset 123: ROTATE_EVENT")
    assert events[2].xid == 77
    _, strict_err = collect(tmp_path / "t.000001", strict=True)
    assert isinstance(strict_err, binlog_spec.MalformedEventError) and strict_err.offset == 123


def test_an_unknown_event_type_parses_as_header_and_raw_body(tmp_path):
    unknown = event(200, b"\xaa\xbb\xcc")
    events, err = collect(write(tmp_path, MAGIC + FDE + unknown))
    assert err is None
    ev = events[1]
    assert ev.type == "UNKNOWN_EVENT_200" and ev.type_code == 200 and ev.error is None
    assert ev.fields == {"post_header": b"", "payload": b"\xaa\xbb\xcc"}


def test_a_longer_post_header_from_a_newer_server_is_skipped(tmp_path):
    """Versions through lengths: if the FDE says XID has a 3-byte post-header, the xid follows it."""
    fde = bytearray(FDE)
    lens_start = 19 + 57
    fde[lens_start + 15] = 3  # XID_EVENT (type 16) post-header length
    fde[-4:] = struct.pack("<I", zlib.crc32(bytes(fde[:-4])))
    xid = event(16, b"\x00\x00\x00" + struct.pack("<Q", 99))
    events, err = collect(write(tmp_path, MAGIC + bytes(fde) + xid))
    assert err is None and events[1].xid == 99 and events[1].post_header == b"\x00\x00\x00"


def test_end_log_pos_is_reported_as_written_even_when_it_wrapped(tmp_path):
    """Files over 4 GiB: end_log_pos wraps modulo 2^32 while positions keep growing."""
    xid = event(16, struct.pack("<Q", 1), end_log_pos=(2**32 + 200) % 2**32)
    events, err = collect(write(tmp_path, MAGIC + FDE + xid + xid))
    assert err is None
    assert [e.end_log_pos for e in events[1:]] == [200, 200]
    assert [e.pos for e in events[1:]] == [123, 123 + len(xid)]
