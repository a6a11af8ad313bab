"""The conflict check's compiled part (output/rollback/_ccheck.pyx): the KeySet of the undone integer keys, and
the loop that takes the common transactions past the rollback's window straight from the reader's window.
The report, the undo, the warnings and the exit code are the ones of the Python path (ConflictCheck
without the compiled part), also when the reader's window cuts transactions, and on damaged binlogs whose
events keep valid checksums (the loop must leave every event it cannot check exactly to the Python path)."""
from __future__ import annotations

import io
import random
import sys
import zlib
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec import api, compiled
from binlog_spec.cli import main
from binlog_spec.options import ReadOptions
from binlog_spec.output.rollback.check import ConflictCheck
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions

from conftest import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))
import mutate  # noqa: E402

TYPES = FIXTURES / "types-full" / "mariadb-bin.000001"
#: MariaDB fixtures whose later transactions the loop takes (GTID, ANNOTATE_ROWS, TABLE_MAP, rows, XID).
SEEDS = [FIXTURES / name / "mariadb-bin.000001"
         for name in ("demo", "types-full", "types-minimal", "types-noblob", "compressed", "charsets-nolog")]
#: The window ends at these shares of the file.
SHARES = (4, 2, 3)
CASES, SEED = 80, 1818

needs_compiled = pytest.mark.skipif(compiled.pure_requested(), reason="BINLOG_SPEC_PURE=1 runs the reference only")


def variants(path: Path) -> list[list[str]]:
    size = path.stat().st_size
    stops = [str(size * (k - 1) // k) for k in SHARES]
    return [["--sql2", "--rollback", "--stop-position", stops[0]],
            ["--rollback", "--force", "--stop-position", stops[1]],
            ["--output-format", "binlog", "-o", "{out}", "--rollback", "--force", "--stop-position", stops[2]],
            ["--output-format", "binlog", "-o", "{out}", "--rollback", "--stop-position", stops[1]]]


class _Counting:
    """A sink that counts the bytes the compiled loop takes."""

    def __init__(self, inner):
        self.inner, self.taken = inner, 0

    def __call__(self, *args):
        n = self.inner(*args)
        self.taken += n
        return n


def _cli(path, argv, loop: bool, monkeypatch, tmp_path) -> tuple:
    """stdout, stderr, exit code and the -o file's bytes of `sql`, with the compiled part or the Python
    path alone; and the bytes the loop took."""
    counted = []
    target = tmp_path / "undo.bin"
    with monkeypatch.context() as m:
        if loop:
            made = ConflictCheck.sink

            def sink(self):
                inner = made(self)
                if inner is None:
                    return None
                counted.append(_Counting(inner))
                return counted[-1]
            m.setattr(ConflictCheck, "sink", sink)
        else:
            m.setattr("binlog_spec.output.rollback.check._ccheck", None)
        out, err = io.StringIO(), io.StringIO()
        code = main(["sql", *[a.replace("{out}", str(target)) for a in argv], str(path)], out, err)
    written = target.read_bytes() if target.exists() else None
    if target.exists():
        target.unlink()
    return (out.getvalue(), err.getvalue().replace(str(target), "{out}"), code, written), \
        sum(c.taken for c in counted)


@needs_compiled
def test_the_loop_runs_and_takes_most_of_what_follows_the_window(monkeypatch, tmp_path):
    assert "_ccheck" in compiled.describe()
    argv = ["--sql2", "--rollback", "--stop-position", "60000"]
    fast, taken = _cli(TYPES, argv, True, monkeypatch, tmp_path)
    slow, _ = _cli(TYPES, argv, False, monkeypatch, tmp_path)
    assert fast == slow
    assert fast[2] == 5 and fast[1].count("binlog-spec: conflict: row ") == 13
    assert taken > (TYPES.stat().st_size - 60000) // 3, "the loop checks the common transactions itself"


@needs_compiled
def test_the_loops_gtid_and_xid_reads_agree_with_the_generated_parser():
    from binlog_spec.output.rollback import _ccheck
    assert _ccheck.LAYOUTS_AGREE is True


def test_without_the_compiled_core_there_is_no_loop_and_no_key_set(monkeypatch):
    monkeypatch.setattr("binlog_spec.output.rollback.check._ccheck", None)
    check = ConflictCheck()
    assert check.sink() is None and check.compiled.fast is None


@needs_compiled
@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.parent.name)
def test_the_compiled_part_gives_the_python_paths_report_and_undo(path, monkeypatch, tmp_path):
    for argv in variants(path):
        assert _cli(path, argv, True, monkeypatch, tmp_path)[0] == _cli(path, argv, False, monkeypatch, tmp_path)[0], argv


def _checked(paths, filters: FilterOptions, loop: bool, options: ReadOptions, monkeypatch) -> tuple:
    """The conflicts (as report lines) of a check through the API, the reader given the check's loop."""
    from datetime import timezone

    from binlog_spec.output.rollback.report import report_lines
    paths = [str(p) for p in paths]
    with monkeypatch.context() as m:
        if not loop:
            m.setattr("binlog_spec.output.rollback.check._ccheck", None)
        check = ConflictCheck(SchemaTracker())
        sink = check.sink()
        counting = _Counting(sink) if sink is not None else None
        with check:
            for _ in api.select_events(api.read_events(paths, options, sink=counting), filters, paths, check=check):
                pass
            lines = list(report_lines(check, timezone.utc, True))
    return lines, counting.taken if counting else 0


@needs_compiled
@pytest.mark.parametrize("buffer_size", [512, 4096, 1 << 20])
def test_transactions_cut_by_the_readers_window_are_handed_to_the_python_path(buffer_size, monkeypatch):
    """The loop stops inside a transaction where the window ends: the Python tracker takes it on, and the
    loop takes it back after the next event."""
    paths = [TYPES, FIXTURES / "demo" / "mariadb-bin.000001", TYPES]
    options = ReadOptions(buffer_size=buffer_size)
    for stop in (30000, 60000):
        filters = FilterOptions(stop_position=stop)
        fast, taken = _checked(paths, filters, True, options, monkeypatch)
        assert fast == _checked(paths, filters, False, options, monkeypatch)[0], (buffer_size, stop)
        assert taken and len(fast) > 13


@needs_compiled
def test_the_key_set_keeps_the_first_change_of_a_row_and_reports_it_once():
    from binlog_spec.output.rollback._ccheck import KeySet
    keys = KeySet()
    assert keys.add(0, [(1,), (2,), (2,), (3,)], True, 7, 1)     # an UPDATE: 1 -> 2, 2 -> 3 (after ones)
    assert keys.add(0, [(-5,), (2 ** 64 - 1,)], False, 8, 0)
    assert keys.add(1, [(1,)], False, 9, 2)                        # another table's slot
    assert len(keys) == 6
    assert keys.first(0, 2) == (7, 1) and keys.first(0, 2) is False   # reported once
    assert keys.first(0, -5) == (8, 0) and keys.first(0, 2 ** 64 - 1) == (8, 0)
    assert keys.first(1, 1) == (9, 2) and keys.first(1, 2) is None and keys.first(0, 4) is None


@needs_compiled
def test_a_full_key_set_takes_no_more_keys_and_keeps_those_it_has():
    from binlog_spec.output.rollback._ccheck import KeySet
    keys = KeySet(1 << 12)
    assert keys.add(0, [(k,) for k in range(3000)], False, 1, 0)
    assert not keys.add(0, [(k,) for k in range(3000, 6000)], False, 2, 0)
    assert keys.full and keys.first(0, 2999) == (1, 0)
    assert not keys.add(0, [(7000,)], False, 3, 0) and keys.first(0, 7000) is None


@needs_compiled
def test_a_full_key_set_leaves_the_rest_to_the_python_path(monkeypatch, tmp_path):
    """Past its limit the KeySet takes no more keys: the tables whose keys it lacks go the Python way."""
    from binlog_spec.output.rollback import _ccheck
    argv = ["--sql2", "--rollback", "--stop-position", "60000"]
    slow = _cli(TYPES, argv, False, monkeypatch, tmp_path)[0]
    with monkeypatch.context() as m:
        m.setattr("binlog_spec.output.rollback.check._ccheck", _Limited(_ccheck))
        assert _cli(TYPES, argv, True, monkeypatch, tmp_path)[0] == slow


class _Limited:
    """_ccheck with a KeySet of 16 entries."""

    def __init__(self, module):
        self.module, self.Sink = module, module.Sink

    def KeySet(self):  # noqa: N802 - the module's name
        return self.module.KeySet(16)


@needs_compiled
def test_damaged_binlogs_with_valid_checksums_give_the_python_paths_report(tmp_path, monkeypatch):
    rng = random.Random(SEED)
    seeds = {p: p.read_bytes() for p in SEEDS}
    differ = []
    for k in range(CASES):
        seed = rng.choice(SEEDS)
        case = tmp_path / f"case-{k:03d}.bin"
        case.write_bytes(mutate.damaged_with_valid_checksums(seeds[seed], rng, mutate.change_in_event))
        argv = rng.choice(variants(seed))
        fast = _cli(case, argv, True, monkeypatch, tmp_path)[0]
        if fast != _cli(case, argv, False, monkeypatch, tmp_path)[0]:
            differ.append(f"{case.name} from {seed.parent.name} {' '.join(argv)}")
    assert not differ, differ


@needs_compiled
def test_a_damaged_later_event_is_reported_as_the_python_path_reports_it(tmp_path, monkeypatch):
    """A later rows event cut inside (the file ends there), and one whose CRC32 is wrong: the error names
    the file and the offset, as the Python path names them, after the same output."""
    data = TYPES.read_bytes()
    later = [(pos, size) for pos, size in mutate.event_spans(data) if pos > 60000 and data[pos + 4] in (23, 24, 25)]
    pos, size = later[len(later) // 2]
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:pos + size // 2])
    flipped = bytearray(data)
    flipped[pos + size - 6] ^= 0x10
    bad_crc = tmp_path / "crc.bin"
    bad_crc.write_bytes(bytes(flipped))
    ok_crc = bytearray(flipped)
    ok_crc[pos + size - 4:pos + size] = zlib.crc32(bytes(ok_crc[pos:pos + size - 4])).to_bytes(4, "little")
    valid = tmp_path / "valid.bin"
    valid.write_bytes(bytes(ok_crc))
    for case in (cut, bad_crc, valid):
        for argv in (["--sql2", "--rollback", "--stop-position", "60000"],
                     ["--output-format", "binlog", "-o", "{out}", "--rollback", "--force", "--stop-position", "60000"]):
            fast = _cli(case, argv, True, monkeypatch, tmp_path)[0]
            assert fast == _cli(case, argv, False, monkeypatch, tmp_path)[0], (case.name, argv)
            if case is not valid:
                assert f"{case}" in fast[1] and f"{pos}" in fast[1] and fast[2] not in (0, 1, 5), fast[1][-500:]


def test_the_key_set_without_the_loop_finds_what_the_python_path_finds(monkeypatch):
    """The check through the API, the reader given no loop: the undone integer keys in the KeySet, the
    later rows looked up there by the Python path."""
    filters = FilterOptions(stop_position=60000)
    reference = _checked([TYPES], filters, False, ReadOptions(), monkeypatch)[0]
    assert reference and len(reference) > 13
    if compiled.pure_requested():
        return
    from datetime import timezone

    from binlog_spec.output.rollback.report import report_lines
    check = ConflictCheck(SchemaTracker())
    with check:
        for _ in api.select_events(binlog_spec.read_events([str(TYPES)]), filters, [str(TYPES)], check=check):
            pass
        assert check.compiled.fast is not None and len(check.compiled.fast) > 0, "the undone integer keys went to the KeySet"
        assert list(report_lines(check, timezone.utc, True)) == reference


# -- time windows: the loop takes the transactions the time filters exclude while they run ----------------
#: The kept transactions' time in the restamped files below (2023-11-14 22:13:20 UTC).
KEPT = 1_700_000_000


def _restamped(data: bytes, stamp) -> bytes:
    """`data` with the header timestamp of every event of its k-th transaction (GTID_EVENT to the next
    one) set to stamp(k), each CRC32 made right again (the events before the first GTID keep theirs)."""
    out = bytearray(data)
    k = -1
    for pos, size in mutate.event_spans(data):
        if data[pos + 4] == 162:            # GTID_EVENT
            k += 1
        if k < 0:
            continue
        crc = zlib.crc32(data[pos:pos + size - 4]) == int.from_bytes(data[pos + size - 4:pos + size], "little")
        out[pos:pos + 4] = stamp(k).to_bytes(4, "little")
        if crc:
            out[pos + size - 4:pos + size] = zlib.crc32(bytes(out[pos:pos + size - 4])).to_bytes(4, "little")
    return bytes(out)


def _when(ts: int) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


TIME_FILES = {
    # kept, after the window, before it, in turn: excluded transactions between kept ones
    "interleaved": lambda k: KEPT + (0, 100, -100)[k % 3],
    # the times go backwards: the window's transactions come after the ones past its stop
    "backwards": lambda k: KEPT + 40 - k,
}


@needs_compiled
@pytest.mark.parametrize("kind", sorted(TIME_FILES))
def test_the_loop_takes_the_transactions_the_time_filters_exclude_as_the_python_path_checks_them(
        kind, monkeypatch, tmp_path):
    case = tmp_path / f"{kind}.bin"
    case.write_bytes(_restamped(TYPES.read_bytes(), TIME_FILES[kind]))
    windows = [["--start-datetime", _when(KEPT), "--stop-datetime", _when(KEPT + 1)],
               ["--stop-datetime", _when(KEPT + 1)], ["--start-datetime", _when(KEPT)],
               ["--stop-datetime", _when(KEPT + 20)], ["--start-datetime", _when(KEPT + 20)]]
    took, reported = 0, 0
    for window in windows:
        for argv in (["--sql2", "--rollback", *window], ["--rollback", "--force", *window],
                     ["--output-format", "binlog", "-o", "{out}", "--rollback", "--force", *window]):
            fast, taken = _cli(case, argv, True, monkeypatch, tmp_path)
            assert fast == _cli(case, argv, False, monkeypatch, tmp_path)[0], argv
            took += taken
            reported += fast[1].count("binlog-spec: conflict: row ")
    # (types-full's transactions mostly map tables of their own: the loop takes those it met before)
    assert took > 10000, "the loop takes excluded transactions while the filters run"
    assert reported, "later changes in excluded transactions between kept ones are found"


@needs_compiled
@pytest.mark.parametrize("buffer_size", [512, 4096, 1 << 20])
def test_excluded_transactions_cut_by_the_readers_window_are_left_to_the_python_path(buffer_size, monkeypatch,
                                                                                      tmp_path):
    """The loop takes an excluded transaction whole or not at all: one the reader's window cuts, or that
    holds an event it cannot take, goes to the filters from its GTID on, and what the loop did of it is undone."""
    from datetime import datetime, timezone
    case = tmp_path / "interleaved.bin"
    case.write_bytes(_restamped(TYPES.read_bytes(), TIME_FILES["interleaved"]))
    paths = [case, FIXTURES / "demo" / "mariadb-bin.000001", case]
    options = ReadOptions(buffer_size=buffer_size)
    at = lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc)    # noqa: E731
    for filters in (FilterOptions(start_datetime=at(KEPT), stop_datetime=at(KEPT + 1)),
                    FilterOptions(stop_datetime=at(KEPT + 1))):
        fast, taken = _checked(paths, filters, True, options, monkeypatch)
        assert fast == _checked(paths, filters, False, options, monkeypatch)[0], (buffer_size, filters)
        assert taken and fast


def test_only_the_time_bounds_give_the_loop_its_bounds():
    from datetime import datetime, timezone
    t = datetime(2026, 11, 24, 7, 25, 0, tzinfo=timezone.utc)
    assert FilterOptions(stop_datetime=t).kept_seconds() == (None, int(t.timestamp()))
    half = t.replace(microsecond=500000)        # a whole-second time is kept when at or after the start
    assert FilterOptions(start_datetime=half).kept_seconds() == (int(t.timestamp()) + 1, None)
    assert FilterOptions(start_datetime=t, server_ids=frozenset({1})).kept_seconds() is None
    assert FilterOptions(start_datetime=t, stop_position=100).kept_seconds() is None
    assert FilterOptions().kept_seconds() is None
