"""Resync planning (binlog_spec.stream.planning.resync) against the header pass and whole-file reading: every
corpus and fixture file cut at many offsets, and byte-literal cases of what the search must reject."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec.binlog import spec
from binlog_spec.binlog.writer import OFS_END_LOG_POS
from binlog_spec.errors import BinlogError, ResyncError
from binlog_spec.stream.planning import resync
from binlog_spec.stream.planning.pieces import LocalFile, Split, is_prefix
from binlog_spec.stream.planning.scan import scan_file
from binlog_spec.stream.planning.splits import iter_split_events

from conftest import CORPUS, FIXTURES, collect

ALL_FILES = sorted(str(p) for p in CORPUS.glob("*/*") if p.is_file() and p.suffix not in (".tsv", ".md", ".xxd")) \
    + sorted(str(p) for p in FIXTURES.glob("*/mariadb-bin.*"))
MARIADB_11_4 = str(CORPUS / "mariadb-poc" / "mariadb-binlog__binlogs__domain_id_0__mariadb-repl-bin.000002")
RELAY = str(CORPUS / "rust_mysql_common" / "corrupt-relay-bin.000624")
MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")
ET = spec.EventType
H = spec.LEN_EVENT_HEADER


def _outer(events) -> list[int]:
    return [e.pos for e in events if not e.is_inner]


def _read_splits(splits):
    """(positions of the events of every split, the splits' errors), prefixes left out."""
    got, errors = [], []
    for s in splits:
        try:
            for ev in iter_split_events(s):
                if not ev.is_inner and not is_prefix(s, ev):
                    got.append(ev.pos)
        except BinlogError as exc:
            errors.append(exc)
    return got, errors


def _sizes(size: int) -> list[int]:
    """Split sizes that cut a file into 2 to ~40 ranges, at odd offsets."""
    return sorted({max(1, size // k + d) for k, d in ((2, 1), (3, 7), (7, -13), (19, 5), (40, 0))
                   if size // k + d < size})


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: "/".join(Path(p).parts[-2:]))
def test_resync_splits_read_every_event_once_as_the_header_pass_does(path):
    ref = LocalFile.of(path)
    head = resync.read_head(ref)
    if head.reason is not None:     # the planner uses the header pass here (tests/spark: test_planning)
        return _check_untrusted(path, head)
    whole, error = collect(path)
    whole = _outer(whole)
    scan = scan_file(ref)
    for size in _sizes(ref.size):
        ranges = resync.plan_ranges(0, ref, head, size)
        got, errors = _read_splits(ranges)
        where = f"{path} cut every {size} bytes"
        assert got == sorted(set(got)), f"{where}: an event read twice or out of order"
        if error is None:
            assert got == whole, where
            assert not errors, where
        else:   # the whole read stops at the fault; the splits read the same up to it and fail there
            assert [p for p in got if p < error.offset] == whole, where
            assert any(type(e) is type(error) and e.offset == error.offset for e in errors), where
        # every split starts where the header pass would cut
        for s in ranges[1:]:
            resolved, _ = resync.resolve(s, head)
            if resolved is not None and (scan.fault is None or resolved.start < scan.fault[0]):
                assert resolved.start in scan.boundaries, f"{where}: {resolved.start}"


def _check_untrusted(path: str, head: resync.Head) -> None:
    """A file resync does not trust is one the head tells apart: gzip, not a binlog, relay logs,
    no checksums, or another header."""
    assert head.reason is not None
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == spec.MAGIC and head.fde is not None:
        assert head.fde.len_checksum != 4 or "relay" in head.reason or "encrypted" in head.reason \
            or "header" in head.reason, head.reason


def test_the_mariadb_11_4_file_with_end_log_pos_0_inside_transactions_resyncs():
    events = [e for e in binlog_spec.open(MARIADB_11_4)]
    zero = sum(1 for e in events if e.header.end_log_pos == 0)
    assert zero == 17_724 and len(events) == 26_594
    ref = LocalFile.of(MARIADB_11_4)
    head = resync.read_head(ref)
    assert head.reason is None
    for size in (4099, 65_536):
        assert _read_splits(resync.plan_ranges(0, ref, head, size)) == (_outer(events), [])


def test_a_relay_log_is_not_trusted_at_its_head():
    head = resync.read_head(LocalFile.of(RELAY))
    assert head.reason is not None and "relay log" in head.reason


def _event(code: int, body: bytes, pos: int, end_log_pos: int | None = None) -> bytes:
    size = spec.LEN_EVENT_HEADER + len(body) + 4
    elp = pos + size if end_log_pos is None else end_log_pos
    head = spec.HEADER_STRUCT.pack(1_700_000_000, code, 1, size, elp, 0)
    return head + body + struct.pack("<I", zlib.crc32(head + body))


def _binlog(tmp_path: Path, events: list[tuple[int, bytes, bool]]) -> Path:
    """A MySQL 8 binlog: the FDE of binlog.000693 (CRC32), then the events (code, body, real position)."""
    src = Path(MYSQL8).read_bytes()
    fde_size = spec.parse_header(src[spec.LEN_MAGIC:spec.LEN_MAGIC + H]).len_event
    out = bytearray(src[:4 + fde_size])
    for code, body, real in events:
        out += _event(code, body, len(out), None if real else 0)
    path = tmp_path / "binlog.000001"
    path.write_bytes(bytes(out))
    return path


GTID = int(ET.anonymous_gtid_log_event)
XID = int(ET.xid_event)
QUERY = int(ET.query_event)
WRITE = int(ET.write_rows_event)


def _fake_header_inside(pos: int, inner_pos: int) -> bytes:
    """Bytes that look like an XID event's header at `inner_pos` (known code, sane size,
    end_log_pos matching) but whose CRC32 is wrong."""
    return spec.HEADER_STRUCT.pack(1, XID, 1, 31, inner_pos + 31, 0) + b"\0" * 8 + b"BAD!"


def test_a_false_event_inside_a_row_image_is_rejected(tmp_path):
    """A rows event whose image holds what looks like an XID event header (known type, size,
    end_log_pos all fitting): its CRC32 and the chain behind it reject it, so the offset inside the
    image resyncs to the next real transaction, not to the fake XID's end."""
    tx = lambda: [(GTID, b"\0" * 42, True), (QUERY, b"\0" * 13 + b"BEGIN", True)]
    pre = 4 + spec.parse_header(Path(MYSQL8).read_bytes()[spec.LEN_MAGIC:spec.LEN_MAGIC + H]).len_event
    # where the WRITE_ROWS body starts: after the GTID event and the BEGIN QUERY event, and its header
    body_at = pre + (H + 42 + 4) + (H + 18 + 4) + H
    fake_at = body_at + 100
    image = bytearray(b"\x11" * 400)
    image[100:100 + 31] = _fake_header_inside(0, fake_at)
    path = _binlog(tmp_path, [*tx(), (WRITE, bytes(image), False), (XID, b"\1" * 8, True),
                              *tx(), (WRITE, b"\x22" * 50, False), (XID, b"\2" * 8, True)])
    ref = LocalFile.of(str(path))
    head = resync.read_head(ref)
    assert head.reason is None
    events = [e for e in binlog_spec.open(str(path))]
    second_gtid = [e.pos for e in events if e.type_code == GTID][1]
    with open(path, "rb") as f:
        r = resync._Resync(f, ref, head)
        assert not r.verified(fake_at) and r.sane(Path(path).read_bytes()[fake_at:fake_at + H], fake_at)
        assert r.boundary_at(fake_at - 3) == second_gtid
        assert r.boundary_at(fake_at) == second_gtid
    for size in range(60, ref.size, 37):
        assert _read_splits(resync.plan_ranges(0, ref, head, size)) == (_outer(events), [])


def test_a_candidate_whose_end_log_pos_is_not_its_end_is_rejected(tmp_path):
    path = _binlog(tmp_path, [(GTID, b"\0" * 42, True), (XID, b"\1" * 8, True)])
    data = bytearray(path.read_bytes())
    ref = LocalFile.of(str(path))
    head = resync.read_head(ref)
    gtid_at = head.end
    with open(path, "rb") as f:
        assert resync._Resync(f, ref, head).verified(gtid_at)
    struct.pack_into("<I", data, gtid_at + OFS_END_LOG_POS, 12345)        # end_log_pos of the GTID event: wrong
    path.write_bytes(bytes(data))
    with open(path, "rb") as f:
        assert not resync._Resync(f, ref, head).verified(gtid_at)


def test_a_boundary_right_after_an_xid_is_found_from_before_the_offset(tmp_path):
    """Non-GTID transactions (BEGIN ... XID, no GTID event): the boundary is the XID's end; an
    offset exactly there resyncs to it, as the header pass cuts there."""
    begin = (QUERY, b"\0" * 13 + b"BEGIN", True)
    path = _binlog(tmp_path, [begin, (WRITE, b"\x33" * 30, False), (XID, b"\1" * 8, True),
                              begin, (WRITE, b"\x44" * 30, False), (XID, b"\2" * 8, True)])
    ref = LocalFile.of(str(path))
    head = resync.read_head(ref)
    scan = scan_file(ref)
    first_xid_end = scan.boundaries[0]
    with open(path, "rb") as f:
        r = resync._Resync(f, ref, head)
        assert r.boundary_at(first_xid_end) == first_xid_end
        assert r.boundary_at(first_xid_end - 1) == first_xid_end
        assert r.boundary_at(first_xid_end + 1) == scan.boundaries[1] == ref.size


def test_a_disagreeing_neighbour_is_a_named_error(tmp_path, monkeypatch):
    """The reader of a range checks the boundary the next range resyncs to against what it meets
    reading linearly: a resync that skips a boundary is a ResyncError naming the file and offset."""
    ref = LocalFile.of(MYSQL8)
    head = resync.read_head(ref)
    ranges = resync.plan_ranges(0, ref, head, 65_536)
    real = resync._Resync.boundary_at
    scan = scan_file(ref)

    def skipping(self, offset):       # the second boundary instead of the first
        b = real(self, offset)
        later = [x for x in scan.boundaries if x > b]
        return later[0] if later and offset == ranges[3].start else b
    monkeypatch.setattr(resync._Resync, "boundary_at", skipping)
    with pytest.raises(ResyncError) as exc:
        list(iter_split_events(ranges[2]))
    assert exc.value.file == MYSQL8 and exc.value.offset == real(resync._Resync(open(MYSQL8, "rb"), ref, head),
                                                                ranges[3].start)


def test_a_second_fde_past_the_head_is_a_named_error(tmp_path):
    """An FDE in the middle of a range (a file the head did not tell apart): the reader stops with
    the error that names planning=scan."""
    src = Path(MYSQL8).read_bytes()
    fde_size = spec.parse_header(src[spec.LEN_MAGIC:spec.LEN_MAGIC + H]).len_event
    fde = bytearray(src[4:4 + fde_size])
    path = _binlog(tmp_path, [(GTID, b"\0" * 42, True), (XID, b"\1" * 8, True)] * 3)
    data = bytearray(path.read_bytes())
    at = len(data)
    struct.pack_into("<I", fde, 13, at + fde_size)
    fde[-4:] = struct.pack("<I", zlib.crc32(bytes(fde[:-4])))
    data += fde + _event(GTID, b"\0" * 42, at + fde_size) + _event(XID, b"\1" * 8, at + fde_size + 65)
    path.write_bytes(bytes(data))
    ref = LocalFile.of(str(path))
    head = resync.read_head(ref, window=200)
    assert head.reason is None
    with pytest.raises(ResyncError, match="planning', 'scan'"):
        _read = [list(iter_split_events(s)) for s in resync.plan_ranges(0, ref, head, 100)]


# ------------------------------------------------------------------ resuming after a fault
NO_CRC32 = str(CORPUS / "mbcj_osheroff" / "mysql-bin.checksum-none")
TYPES = str(FIXTURES / "types-full" / "mariadb-bin.000001")


def _garbled(tmp_path: Path, path: str, n: int = 700, at: float = 0.5) -> tuple[Path, int, int, list]:
    """A copy of `path` with `n` garbage bytes from inside an event at about `at` of the file on:
    (its path, the offset of the event they start in, the first transaction boundary (a GTID event's
    position, an XID event's end) past them, the intact file's outer events), from the intact file."""
    events = _outer_events(path)
    data = bytearray(Path(path).read_bytes())
    target = next(e for e in events if e.pos >= len(data) * at and e.size > 20)
    first, last = target.pos + 7, target.pos + 7 + n
    data[first:last] = bytes((i * 37 + 11) % 251 for i in range(n))
    boundaries = {e.pos for e in events if "GTID" in e.type} | {e.pos + e.size for e in events if e.type == "XID_EVENT"}
    out = tmp_path / Path(path).name
    out.write_bytes(bytes(data))
    return out, target.pos, min(b for b in boundaries if b >= last), events


def _outer_events(path: str) -> list:
    events, error = collect(path)
    assert error is None
    return [e for e in events if not e.is_inner]


def _resumed(splits) -> tuple[list[int], list[tuple[int, int, str]]]:
    """(outer event positions, Skipped as (offset, resume, message)) of every split, prefixes left out."""
    got, skipped = [], []
    for s in splits:
        for x in resync.iter_resuming_events(s):
            if isinstance(x, resync.Skipped):
                skipped.append((x.offset, x.resume, str(x)))
            elif not x.is_inner and not is_prefix(s, x):
                got.append(x.pos)
    return got, skipped


@pytest.mark.parametrize("path", [MYSQL8, TYPES], ids=["mysql8", "mariadb"])
def test_garbage_in_the_middle_is_skipped_to_the_next_verified_boundary_whole_or_cut_anywhere(tmp_path, path):
    garbled, fault, resume, intact = _garbled(tmp_path, path)
    ref = LocalFile.of(str(garbled))
    head = resync.read_head(ref)
    assert head.reason is None
    whole, skipped = _resumed([Split(0, ref, 0, None)])
    assert [s[:2] for s in skipped] == [(fault, resume)]
    assert f"offset {fault}: " in skipped[0][2] and f"bytes [{fault}, {resume}) skipped" in skipped[0][2]
    assert whole == [e.pos for e in intact if not fault <= e.pos < resume]   # nothing else dropped, none twice
    for size in _sizes(ref.size) + [4099]:
        got, got_skipped = _resumed(resync.plan_ranges(0, ref, head, size))
        assert got == whole, size
        assert got_skipped == skipped, size


def _bad_size(tmp_path: Path, path: str) -> tuple[Path, int, list]:
    """A copy of `path` whose middle event announces 3 GiB: (its path, that event's offset, the
    intact file's outer events)."""
    events = _outer_events(path)
    target = events[len(events) // 2]
    data = bytearray(Path(path).read_bytes())
    data[target.pos + 9:target.pos + 13] = (3 << 30).to_bytes(4, "little")
    out = tmp_path / Path(path).name
    out.write_bytes(bytes(data))
    return out, target.pos, events


@pytest.mark.parametrize("path, reason", [(NO_CRC32, "no CRC32 checksums"),
                                          (RELAY, "a ROTATE_EVENT at the head (a relay log)")],
                         ids=["no-crc32", "relay-log"])
def test_a_fault_where_resync_cannot_be_trusted_ends_the_file_there(tmp_path, path, reason):
    """No CRC32, a relay log: a boundary found past a fault cannot be trusted, so the reader's error
    is raised after the events before it, as without resuming."""
    garbled, fault, events = _bad_size(tmp_path, path)
    ref = LocalFile.of(str(garbled))
    assert resync.read_head(ref).reason == reason
    got = []
    with pytest.raises(BinlogError) as info:
        for x in resync.iter_resuming_events(Split(0, ref, 0, None)):
            assert not isinstance(x, resync.Skipped)
            if not x.is_inner:
                got.append(x.pos)
    assert info.value.offset == fault and info.value.file == str(garbled)
    assert got == [e.pos for e in events if e.pos < fault]


def test_a_file_cut_inside_an_event_ends_there_whole_or_in_pieces(tmp_path):
    """No verified boundary follows the fault: the reader's error, as the CLI's, not a range skipped."""
    cut = tmp_path / "mariadb-bin.000001"
    data = Path(TYPES).read_bytes()
    cut.write_bytes(data[:len(data) * 3 // 5])
    events, error = collect(str(cut))
    assert error is not None
    ref = LocalFile.of(str(cut))
    head = resync.read_head(ref)
    for splits in ([Split(0, ref, 0, None)], resync.plan_ranges(0, ref, head, 3001)):
        got, errors = [], []
        for s in splits:
            try:
                for x in resync.iter_resuming_events(s):
                    assert not isinstance(x, resync.Skipped)
                    if not x.is_inner and not is_prefix(s, x):
                        got.append(x.pos)
            except BinlogError as exc:
                errors.append(exc)
        assert got == _outer(events)
        assert [(type(e), e.offset, e.message) for e in errors] == [(type(error), error.offset, error.message)]
