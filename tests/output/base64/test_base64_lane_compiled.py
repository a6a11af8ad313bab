"""The base64 script lane's compiled loop (output/base64/_ctext.pyx `Lane`, base64_lane.sink): it writes most of
a MariaDB binlog's events straight from the reader's window, and the script, the warnings and the error
are the ones of the pure-Python reference (every event through the Item path, Base64Script.lines over
Rewriter.items), on every corpus and fixture file, with windows that cut transactions, without CRC32
checks, and on damaged binlogs whose events keep valid checksums."""
from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest

from binlog_spec import api, compiled
from binlog_spec.binlog import spec
from binlog_spec.cli import main
from binlog_spec.options import ReadOptions
from binlog_spec.output.base64.lane import lines_of, sink as lane_sink
from binlog_spec.output.base64.script import Base64Options, Base64Script
from binlog_spec.output.rewriter import Rewriter, WriteOptions

from conftest import CORPUS, FIXTURES, manifest_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))
import mutate  # noqa: E402
from seeds import seed_files  # noqa: E402

FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))
#: MariaDB fixtures whose transactions the loop writes (GTID, ANNOTATE_ROWS, TABLE_MAP, rows, XID).
SEEDS = [FIXTURES / name / "mariadb-bin.000001"
         for name in ("demo", "charsets-nolog", "types-full", "types-minimal", "types-legacy-temporal",
                      "types-noblob", "compressed")]
CASES, SEED = 160, 1617

needs_compiled = pytest.mark.skipif(compiled.pure_requested(), reason="BINLOG_SPEC_PURE=1 runs the reference only")


class _Counting:
    """A sink that counts the bytes the compiled loop takes."""

    def __init__(self, inner):
        self.inner, self.taken = inner, 0
        self.hold, self.taken_text, self.remember = inner.hold, inner.taken, inner.remember

    def __call__(self, *args):
        n = self.inner(*args)
        self.taken += n
        return n


def _script(paths, loop: bool, read_options=ReadOptions(), options=Base64Options()):
    """(the script, the error, the warnings) through the lane with its compiled loop, or through the Item
    path (the reference); and the counting sink."""
    lines, error, sink = [], None, None
    paths = [str(p) for p in paths]
    with Rewriter(WriteOptions()) as rewriter:
        printer = Base64Script(options, rewriter)
        if loop:
            lane = lane_sink(printer, rewriter)
            sink = _Counting(lane) if lane is not None else None
            events = api.read_events(paths, read_options, sink=sink)
            got = lines_of(printer, events, rewriter, lane)
        else:
            got = printer.lines(rewriter.items(api.read_events(paths, read_options)))
        try:
            for line in got:
                lines.append(line)
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            error = (type(exc).__name__, str(exc), getattr(exc, "offset", None))
    return ("\n".join(lines), error, printer.warnings), sink


def _cli(path, argv, loop: bool, monkeypatch):
    """stdout, stderr and exit code of `sql`, with the compiled loop or without it."""
    with monkeypatch.context() as m:
        if not loop:
            m.setattr("binlog_spec.output.base64.lane._ctext", None)
        out, err = io.StringIO(), io.StringIO()
        code = main(["sql", "--jobs", "1", *argv, str(path)], out, err)
    return out.getvalue(), err.getvalue(), code


@needs_compiled
def test_the_compiled_lane_runs_and_writes_most_of_a_mariadb_binlog():
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    fast, sink = _script([path], True)
    assert fast == _script([path], False)[0]
    assert sink.taken > path.stat().st_size // 2, "the loop writes the common transactions itself"


@needs_compiled
def test_the_lanes_gtid_xid_and_rows_reads_agree_with_the_generated_parser():
    """Checked at import against the spec's parser (else the loop never runs: asserted here)."""
    from binlog_spec.output.base64 import _ctext
    assert _ctext.LAYOUTS_AGREE is True


def test_without_the_compiled_core_there_is_no_loop(monkeypatch):
    monkeypatch.setattr("binlog_spec.output.base64.lane._ctext", None)
    with Rewriter(WriteOptions()) as rewriter:
        assert lane_sink(Base64Script(Base64Options(), rewriter), rewriter) is None


@needs_compiled
@pytest.mark.parametrize("write, options", [
    (WriteOptions(rollback=True), Base64Options(skip_gtids=True)),
    (WriteOptions(rewrite_db={"test": "x"}), Base64Options()),
    (WriteOptions(skip_gtids=True), Base64Options(skip_gtids=True)),
    (WriteOptions(), Base64Options(verbose=1)),
], ids=["rollback", "rewrite-db", "skip-gtids", "verbose"])
def test_the_loop_is_not_used_where_the_lane_looks_inside_events(write, options):
    with Rewriter(write) as rewriter:
        assert lane_sink(Base64Script(options, rewriter), rewriter) is None


@needs_compiled
def test_the_compiled_lane_writes_what_the_item_path_writes_on_every_file():
    for path in FILES:
        assert _script([path], True)[0] == _script([path], False)[0], path


@needs_compiled
@pytest.mark.parametrize("buffer_size", [512, 4096, 1 << 20])
def test_a_statement_cut_by_the_window_is_left_to_the_python_lane(buffer_size):
    """The loop takes a BINLOG block whole or not at all: at the window's end the Python lane goes on."""
    paths = [FIXTURES / "demo" / "mariadb-bin.000001", FIXTURES / "types-full" / "mariadb-bin.000001"] * 2
    options = ReadOptions(buffer_size=buffer_size)
    fast, sink = _script(paths, True, options)
    assert fast == _script(paths, False, options)[0]
    assert sink.taken


@needs_compiled
def test_without_checksum_checks_the_lane_frames_as_the_reference():
    options = ReadOptions(verify_checksums=False)
    for path in SEEDS:
        assert _script([path], True, options)[0] == _script([path], False, options)[0], path


def _change(b: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """One change inside an event: its body, its end_log_pos, timestamp or server id, or its type code."""
    kind = rng.random()
    if kind < 0.6:
        i = pos + spec.LEN_EVENT_HEADER + rng.randrange(max(1, size - spec.LEN_EVENT_HEADER - 4))
        b[i] = rng.choice((0, 1, 2, 8, 64, 0x80, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, b[i] ^ 1 << rng.randrange(8)))
    elif kind < 0.75:
        b[pos + 13 + rng.randrange(4)] ^= 0xff      # end_log_pos: the lane frames it again
    elif kind < 0.85:
        b[pos + rng.randrange(9)] = rng.randrange(256)     # timestamp, server id
    else:
        b[pos + 4] = rng.choice((2, 16, 19, 23, 24, 25, 160, 162))     # the type code


def _damaged(data: bytes, rng: random.Random) -> bytes:
    return mutate.damaged_with_valid_checksums(data, rng, _change)


@needs_compiled
def test_damaged_binlogs_give_the_reference_script(tmp_path):
    rng = random.Random(SEED)
    seeds = {p: p.read_bytes() for p in SEEDS}
    differ = []
    for k in range(CASES):
        seed = rng.choice(SEEDS)
        case = tmp_path / f"case-{k:03d}.bin"
        case.write_bytes(_damaged(seeds[seed], rng))
        if _script([case], True)[0] != _script([case], False)[0]:
            differ.append(f"{case.name} from {seed.parent.name}")
    assert not differ, differ


@needs_compiled
def test_mutated_binlogs_give_the_reference_script(tmp_path):
    rng = random.Random(1607)
    seeds = seed_files()
    for k in range(100):
        data, how, _cut = mutate.mutate(rng.choice(seeds).read_bytes(), rng)
        path = tmp_path / f"case-{k:03d}.bin"
        path.write_bytes(data)
        assert _script([path], True)[0] == _script([path], False)[0], how


@needs_compiled
@pytest.mark.parametrize("argv", [[], ["--start-position", "900"], ["--database", "test"], ["-v"],
                                  ["--rewrite-db", "test->x"], ["--skip-gtids"], ["--rollback"]], ids=" ".join)
@pytest.mark.parametrize("path", SEEDS[:3], ids=lambda p: p.parent.name)
def test_the_sql_command_prints_the_same_with_and_without_the_loop(path, argv, monkeypatch):
    assert _cli(path, argv, True, monkeypatch) == _cli(path, argv, False, monkeypatch)


@needs_compiled
def test_the_loop_takes_nothing_more_while_its_text_is_not_written():
    """The text of one call at most is held: the reader then yields an event, and the lane writes it."""
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    calls = []
    with Rewriter(WriteOptions()) as rewriter:
        printer = Base64Script(Base64Options(), rewriter)
        lane = lane_sink(printer, rewriter)

        def watching(*args):
            held = bool(lane.taken)
            n = lane(*args)
            calls.append((held, n))
            return n
        events = api.read_events([str(path)], sink=watching)
        for _ in lines_of(printer, events, rewriter, lane):
            pass
    assert any(n for _, n in calls)
    assert all(n == 0 for held, n in calls if held)
