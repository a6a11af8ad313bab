"""The framing loop's fast part (framing.walk_events, compiled as binlog/_cframing.pyx): the compiled walk
gives what the pure-Python one gives, over byte literals damaged at every byte and cut at every length;
and the reader gives the same events and the same errors, at the same offsets, whether its loop walks
with the compiled twin, the pure twin, or not at all (every event through the full per-event path)."""
from __future__ import annotations

import dataclasses
import os
import random
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec import compiled
from binlog_spec.binlog import framing, spec

from test_spec_seeds import SEED_TABLE_MAP, seed_fde_bytes

_cframing = compiled.load("binlog_spec.binlog._cframing")
TWINS = [pytest.param(framing.walk_events, id="pure"),
         pytest.param(_cframing.walk_events if _cframing else None, id="compiled")]
FDE = seed_fde_bytes()[4:]          # 119 bytes, CRC32 events
MAGIC = b"\xfebin"


def event(type_code: int, body: bytes, crc: bool = True, end_log_pos: int = 0, flags: int = 0,
          server_id: int = 7, timestamp: int = 1700000000) -> bytes:
    n = 19 + len(body) + (4 if crc else 0)
    raw = struct.pack("<IBIIIH", timestamp, type_code, server_id, n, end_log_pos, flags) + body
    return raw + struct.pack("<I", zlib.crc32(raw)) if crc else raw


QUERY, XID, ROTATE = 2, 16, 4
RUN = [event(QUERY, b"\x01" * 30, end_log_pos=0xFFFFFFFF, flags=0x8001, server_id=0xFFFFFFFF, timestamp=0),
       SEED_TABLE_MAP, event(XID, b"\x05" * 8), event(250, b"")]      # 250: a type no server writes
RUN_BYTES = b"".join(RUN)


def _outcome(walk, *args):
    try:
        return ("value", [(dataclasses.astuple(h), type(h), raw, crc) for h, raw, crc in walk(*args)])
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize("walk", TWINS)
def test_walk_gives_each_whole_event_with_its_header_fields_and_checksum(walk):
    assert walk is not None, "the compiled framing loop is not built"
    got = walk(b"xx" + RUN_BYTES, 2, 4, True, 100)
    assert [raw for _, raw, _ in got] == RUN
    first = got[0][0]
    assert first == spec.EventHeader(timestamp=0, type_code=QUERY, server_id=0xFFFFFFFF, len_event=53,
                                     end_log_pos=0xFFFFFFFF, flags=0x8001)
    assert [crc for _, _, crc in got] == [struct.unpack("<I", e[-4:])[0] for e in RUN]
    assert walk(RUN_BYTES, 0, 4, True, 2) == got[:2]                    # at most max_events
    assert [h for h, _, _ in walk(RUN_BYTES, 0, 0, False, 9)] == [h for h, _, _ in got]
    assert [c for _, _, c in walk(RUN_BYTES, 0, 0, True, 9)] == [None] * 4   # no trailer: no CRC32


@pytest.mark.parametrize("walk", TWINS)
def test_walk_stops_before_what_needs_the_full_path(walk):
    tail = event(QUERY, b"q")
    for stop in (FDE, event(164, b"\x01" * 17),                           # FDE, START_ENCRYPTION_EVENT
                 event(QUERY, b"")[:-4] + b"\0\0\0\0",                      # CRC32 mismatch
                 struct.pack("<IBIIIH", 0, QUERY, 0, 22, 0, 0) + b"\0" * 3, # smaller than header + trailer
                 event(QUERY, b"long")[:-1]):                                # runs past the bytes
        assert [raw for _, raw, _ in walk(RUN_BYTES + stop + tail, 0, 4, True, 100)] == RUN
    assert walk(RUN_BYTES, len(RUN_BYTES) - 18, 4, True, 9) == []           # a header cut short
    assert walk(RUN_BYTES, len(RUN_BYTES) + 5, 4, True, 9) == []            # past the end


def test_a_compiled_header_is_the_dataclass_the_pure_code_builds():
    assert _cframing is not None, "the compiled framing loop is not built"
    (h, _, _), = _cframing.walk_events(RUN[0], 0, 4, True, 1)
    ref = spec.parse_header(RUN[0])
    assert type(h) is spec.EventHeader and h == ref and hash(h) == hash(ref) and repr(h) == repr(ref)
    assert dataclasses.replace(h, flags=0) == dataclasses.replace(ref, flags=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.flags = 1  # type: ignore[misc]


def _damaged():
    """RUN_BYTES with each byte flipped, and cut at every length."""
    for i in range(len(RUN_BYTES)):
        for x in (0x01, 0x80, 0xFF):
            b = bytearray(RUN_BYTES)
            b[i] ^= x
            yield bytes(b)
    for n in range(len(RUN_BYTES) + 1):
        yield RUN_BYTES[:n]


def test_the_twins_agree_on_every_damaged_and_cut_run():
    assert _cframing is not None, "the compiled framing loop is not built"
    for data in _damaged():
        for args in ((0, 4, True, 100), (0, 4, False, 100), (0, 0, True, 100), (5, 4, True, 100), (0, 4, True, 1)):
            assert _outcome(_cframing.walk_events, data, *args) == _outcome(framing.walk_events, data, *args), (data, args)


def _read(path, **options):
    events, error = [], None
    try:
        for ev in binlog_spec.open(path, binlog_spec.ReadOptions(**options)):
            events.append((ev.pos, ev.header, ev.raw, ev.checksum, ev.type, ev.error and str(ev.error)))
    except binlog_spec.BinlogError as exc:
        error = (type(exc), str(exc), exc.offset, exc.event_type)
    return events, error


@pytest.mark.parametrize("options", [{}, {"buffer_size": 40}, {"verify_checksums": False},
                                     {"parse_bodies": frozenset({XID})}])
def test_the_reader_gives_the_same_events_and_faults_with_either_twin_or_without(tmp_path, monkeypatch, options):
    """A binlog damaged at every byte after its FDE, and cut at every length: the same events and the
    same error (class, message, offset, event type) through the compiled walk, the pure walk, and the
    per-event path alone (a walk that never takes an event)."""
    assert _cframing is not None, "the compiled framing loop is not built"
    good = MAGIC + FDE + RUN_BYTES + event(ROTATE, b"\x04" * 8 + b"next.000002")
    cases = [good[:n] for n in range(len(MAGIC + FDE), len(good) + 1)]
    for i in range(len(MAGIC + FDE), len(good)):
        for x in (0x01, 0xFF):
            b = bytearray(good)
            b[i] ^= x
            cases.append(bytes(b))
    p = tmp_path / "t.000001"
    for data in cases:
        p.write_bytes(data)
        seen = []
        for walk in (_cframing.walk_events, framing.walk_events, lambda *a: []):
            monkeypatch.setattr(framing, "walk", walk)
            seen.append(_read(p, **options))
        assert seen[0] == seen[1] == seen[2], data


@pytest.mark.parametrize("skip", [pytest.param(framing.skip_events, id="pure"),
                                  pytest.param(_cframing.skip_events if _cframing else None, id="compiled")])
def test_skip_steps_over_the_unmarked_whole_events(skip):
    assert skip is not None, "the compiled framing loop is not built"
    n, none = len(RUN_BYTES), framing.skip_marks(())
    assert skip(RUN_BYTES, 0, n, 4, True, none, 100) == (n, 4, [])
    ofs_xid = len(RUN[0] + RUN[1])
    assert skip(RUN_BYTES, 0, n, 4, True, framing.skip_marks({XID, 250}), 100) == (
        n, 4, [(ofs_xid, XID, len(RUN[2]), 2), (ofs_xid + len(RUN[2]), 250, len(RUN[3]), 3)])
    assert skip(RUN_BYTES, 0, n - 1, 4, True, none, 100) == (n - len(RUN[3]), 3, [])   # `end`
    assert skip(RUN_BYTES, 0, n, 4, True, none, 1) == (len(RUN[0]), 1, [])
    bad = RUN_BYTES[:20] + bytes([RUN_BYTES[20] ^ 1]) + RUN_BYTES[21:]
    assert skip(bad, 0, n, 4, True, none, 100) == (0, 0, [])                    # CRC32 mismatch
    assert skip(bad, 0, n, 4, False, none, 100) == (n, 4, [])
    for stop in (FDE, event(164, b"\x01" * 17)):                                # marked STOP, shown or not
        assert skip(RUN_BYTES + stop, 0, n + len(stop), 4, True, framing.skip_marks({15, 164}), 100)[:2] == (n, 4)
    with pytest.raises(ValueError):
        skip(RUN_BYTES, 0, n, 4, True, b"\0", 100)


@pytest.mark.parametrize("skip", [pytest.param(framing.skip_events, id="pure"),
                                  pytest.param(_cframing.skip_events if _cframing else None, id="compiled")])
def test_skip_reports_only_the_first_and_last_of_a_run_up_to_run_end(skip):
    """Events marked RUN (the seek's GTIDs): of a run with no SHOW event between, the first and the last
    are reported, in order; past `run_end` each is reported; a batch that ends reports its run's last."""
    assert skip is not None, "the compiled framing loop is not built"
    evs = [event(XID, bytes([i]) * 8) for i in range(3)] + [event(QUERY, b"\x01" * 30)] + \
          [event(XID, bytes([i]) * 8) for i in range(3, 5)]
    data, ofs = b"".join(evs), [sum(map(len, evs[:i])) for i in range(len(evs))]
    steps = [(ofs[i], XID if i != 3 else QUERY, len(evs[i]), i) for i in range(len(evs))]
    n, marks = len(data), framing.skip_marks({XID, QUERY}, {XID})
    assert skip(data, 0, n, 4, True, marks, 100, n) == (n, 6, [steps[i] for i in (0, 2, 3, 4, 5)])
    assert skip(data, 0, n, 4, True, marks, 100, ofs[1]) == (n, 6, steps)        # E2 on: past run_end
    assert skip(data, 0, n, 4, True, marks, 100) == (n, 6, steps)                 # no run_end: as SHOW
    assert skip(data, 0, n, 4, True, marks, 2, n) == (ofs[2], 2, steps[:2])       # the batch's last
    assert skip(data, 0, n, 4, True, framing.skip_marks({XID}, {XID}), 100, n) == (n, 6, [steps[0], steps[5]])


def test_the_skip_twins_agree_on_runs_in_every_damaged_and_cut_run():
    assert _cframing is not None, "the compiled framing loop is not built"
    marks = framing.skip_marks({XID, 19, QUERY}, {XID, 19})
    for data in _damaged():
        for run_end in (-1, 40, 10 ** 6):
            for args in ((0, 999, 4, True), (0, 999, 4, False), (5, 999, 4, True), (0, 60, 4, True)):
                assert ([_cframing.skip_events(data, *args, marks, k, run_end) for k in (1, 2, 100)]
                        == [framing.skip_events(data, *args, marks, k, run_end) for k in (1, 2, 100)]), (data, args)


def test_the_skip_twins_agree_on_every_damaged_and_cut_run():
    assert _cframing is not None, "the compiled framing loop is not built"
    marks = [framing.skip_marks(()), framing.skip_marks({XID, 19})]
    for data in _damaged():
        for stops in marks:
            for args in ((0, 999, 4, True), (0, 999, 4, False), (0, 999, 0, True), (5, 999, 4, True), (0, 60, 4, True)):
                assert (_outcome_skip(_cframing.skip_events, data, *args, stops)
                        == _outcome_skip(framing.skip_events, data, *args, stops)), (data, args)


def _outcome_skip(skip, data, off, end, len_checksum, verify, stops):
    return [skip(data, off, end, len_checksum, verify, stops, k) for k in (1, 2, 100)]


def _scan(path, report, chunk, **options):
    got, error = [], None
    reader = binlog_spec.open(path, binlog_spec.ReadOptions(**options))
    try:
        for pos, code, size, ev in reader.scan((), report, chunk=chunk):
            got.append((pos, code, size, ev is not None and bytes(ev)))
    except binlog_spec.BinlogError as exc:
        error = (type(exc), str(exc), exc.offset, exc.event_type)
    return got, error, reader.scanned, reader.position


@pytest.mark.parametrize("options", [{}, {"verify_checksums": False}])
def test_the_scan_gives_the_same_steps_and_faults_with_either_twin_or_without(tmp_path, monkeypatch, options):
    """The scan mode over a binlog damaged at every byte after its FDE, and cut at every length: the
    same events shown, the same count, the same error, through the compiled skip, the pure skip, and
    the per-event path alone (a skip that never steps)."""
    assert _cframing is not None, "the compiled framing loop is not built"
    good = MAGIC + FDE + RUN_BYTES + event(ROTATE, b"\x04" * 8 + b"next.000002") + RUN_BYTES
    cases = [good[:n] for n in range(len(MAGIC + FDE), len(good) + 1)]
    for i in range(len(MAGIC + FDE), len(good)):
        b = bytearray(good)
        b[i] ^= 0x41
        cases.append(bytes(b))
    p = tmp_path / "t.000001"
    for data in cases:
        p.write_bytes(data)
        for report, chunk in (({ROTATE}, 64), ({ROTATE}, 1 << 20), ({XID, 19}, 1 << 20)):
            seen = []
            for skip in (_cframing.skip_events, framing.skip_events, lambda buf, off, *a: (off, 0, [])):
                monkeypatch.setattr(framing, "skip", skip)
                seen.append(_scan(p, report, chunk, **options))
            assert seen[0] == seen[1] == seen[2], data


@pytest.mark.skipif(_cframing is None, reason="needs the compiled core (test_compiled_core fails without it)")
def test_the_compiled_crc32_is_zlibs_at_every_length_and_alignment():
    """binlog/_crc32.h (ISA-L's crc32_gzip_refl where it was built in, zlib's crc32 elsewhere) gives
    zlib.crc32's value, which the pure-Python reference and the server compute: lengths 0 to 600 and
    a few large ones (ISA-L folds 64 and 256 bytes at a time, then the rest), at every alignment."""
    rng = random.Random(32)
    data = rng.randbytes(1 << 20)
    for n in [*range(601), 1023, 1024, 4095, 4096, 65535, 65536 + 17, 1 << 20]:
        for skew in range(8) if n <= 600 else (0, 3):
            view = memoryview(data)[skew:skew + n]
            assert _cframing.crc32(view) == zlib.crc32(view), (n, skew)
    assert _cframing.crc32(b"") == 0 and _cframing.crc32(b"123456789") == 0xCBF43926     # the CRC-32 check value


@pytest.mark.skipif(_cframing is None, reason="needs the compiled core (test_compiled_core fails without it)")
def test_ci_runs_isal_crc32_where_make_installed_it():
    """`make` installs libisal-dev (the Makefile's apt target) and setup.py builds ISA-L's CRC32 in: a
    build that fell back to zlib's (six times slower on binlog events) fails under CI; --version says
    which one runs."""
    if os.environ.get("CI"):
        assert _cframing.CRC32 == "ISA-L"
        # every module that checks CRC32s (cimports _cbytes' event_crc32) was built with it, not only _cframing
        for name in compiled.MODULES:
            module = compiled.load(name)
            if "event_crc32" in Path(module.__file__).with_name(name.rpartition(".")[2] + ".pyx").read_text():
                linked = subprocess.run(["ldd", module.__file__], capture_output=True, text=True, check=True).stdout
                assert "libisal" in linked, (name, linked)
    assert _cframing.CRC32 in ("ISA-L", "zlib") and f"CRC32 by {_cframing.CRC32}" in compiled.describe()
