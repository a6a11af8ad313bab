"""analyze's compiled loop (analysis/_ccollector.pyx, collector.sink): it takes most of a MariaDB binlog's
events straight from the reader's window, and the report, the warnings and the exit code are the ones
of the pure-Python reference (every event through Analyzer.feed), also on damaged binlogs whose events
keep valid checksums (the loop must leave every event it cannot count exactly to the reference)."""
from __future__ import annotations

import io
import json
import random
import sys
import zlib
from pathlib import Path

import pytest

from binlog_spec import api, compiled
from binlog_spec.analysis import collector
from binlog_spec.binlog import spec
from binlog_spec.cli import main
from binlog_spec.options import ReadOptions
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions

from conftest import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
import mutate  # noqa: E402

#: MariaDB fixtures whose transactions the loop takes (GTID, ANNOTATE_ROWS, TABLE_MAP, rows, XID).
SEEDS = [FIXTURES / name / "mariadb-bin.000001"
         for name in ("demo", "charsets-nolog", "types-full", "types-minimal", "types-legacy-temporal",
                      "types-noblob", "compressed")]
VARIANTS = [[], ["--top", "1", "--big-trx-bytes", "400"], ["--top", "0", "--long-trx-seconds", "0", "--bucket", "1"],
            ["--top", "3", "--sort", "rows", "--format", "text"]]
#: Damaged binlogs compared, from this seed.
CASES, SEED = 160, 1616

needs_compiled = pytest.mark.skipif(compiled.pure_requested(), reason="BINLOG_SPEC_PURE=1 runs the reference only")


def _cli(path, argv, loop: bool, monkeypatch):
    """stdout, stderr and exit code of `analyze`, with the compiled loop or with the reference alone."""
    with monkeypatch.context() as m:
        if not loop:
            m.setattr(collector, "_ccollector", None)
        out, err = io.StringIO(), io.StringIO()
        code = main(["analyze", "--format", "json", *argv, str(path)], out, err)
    return out.getvalue(), err.getvalue(), code


class _Counting:
    """A sink that counts the bytes the compiled loop takes."""

    def __init__(self, inner):
        self.inner, self.taken = inner, 0

    def __call__(self, *args):
        n = self.inner(*args)
        self.taken += n
        return n


def _report(paths, loop: bool, read_options=ReadOptions(), **options):
    """The report as the CLI makes it (schema stage, no filter), through the API."""
    paths = [str(p) for p in paths]
    analyzer, schema, faults = collector.Analyzer(collector.AnalyzeOptions(**options)), SchemaTracker(), []
    sink = _Counting(collector.sink(analyzer, schema)) if loop else None
    events = api.select_events(api.read_events(paths, read_options, faults, sink=sink), FilterOptions(), paths, schema)
    return api.analyze(events, analyzer.options, faults, analyzer), sink


@needs_compiled
def test_the_compiled_loop_runs_and_takes_most_of_a_mariadb_binlog():
    assert "_ccollector" in compiled.describe()
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    fast, sink = _report([path], loop=True)
    slow, _ = _report([path], loop=False)
    assert fast == slow
    assert sink.taken > path.stat().st_size // 2, "the loop counts the common transactions itself"


@needs_compiled
def test_the_loops_gtid_and_xid_reads_agree_with_the_generated_parser():
    """Checked at import against the spec's parser (else the loop never runs: the test would then pass
    slowly, so it is asserted here)."""
    from binlog_spec.analysis import _ccollector
    assert _ccollector.LAYOUTS_AGREE is True


def test_without_the_compiled_core_there_is_no_loop(monkeypatch):
    monkeypatch.setattr(collector, "_ccollector", None)
    assert collector.sink(collector.Analyzer(), SchemaTracker()) is None


@needs_compiled
@pytest.mark.parametrize("buffer_size", [512, 4096, 1 << 20])
def test_a_transaction_cut_by_the_window_is_handed_to_the_reference(buffer_size):
    """The loop stops at the window's end inside a transaction: the tracker takes it on from there."""
    paths = [FIXTURES / "demo" / "mariadb-bin.000001", FIXTURES / "types-full" / "mariadb-bin.000001"] * 2
    options = ReadOptions(buffer_size=buffer_size)
    for kw in ({}, {"top": 1, "big_trx_bytes": 300}, {"top": 0, "long_trx_seconds": 0, "bucket_s": 1}):
        fast, sink = _report(paths, True, options, **kw)
        assert fast == _report(paths, False, options, **kw)[0], (buffer_size, kw)
        assert sink.taken


@needs_compiled
@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("argv", VARIANTS, ids=" ".join)
def test_the_compiled_loop_gives_the_reference_report(path, argv, monkeypatch):
    assert _cli(path, argv, True, monkeypatch) == _cli(path, argv, False, monkeypatch)


def _damaged(data: bytes, rng: random.Random) -> bytes:
    return mutate.damaged_with_valid_checksums(data, rng, mutate.change_in_event)


@needs_compiled
def test_damaged_binlogs_with_valid_checksums_give_the_reference_report(tmp_path, monkeypatch):
    rng = random.Random(SEED)
    seeds = {p: p.read_bytes() for p in SEEDS}
    differ = []
    for k in range(CASES):
        seed = rng.choice(SEEDS)
        case = tmp_path / f"case-{k:03d}.bin"
        case.write_bytes(_damaged(seeds[seed], rng))
        argv = rng.choice(VARIANTS)
        if _cli(case, argv, True, monkeypatch) != _cli(case, argv, False, monkeypatch):
            differ.append(f"{case.name} from {seed.parent.name} {' '.join(argv)}")
    assert not differ, differ


@needs_compiled
def test_the_loop_leaves_what_it_cannot_count_to_the_reference(tmp_path, monkeypatch):
    """Rows whose images do not walk, and a TABLE_MAP seen for the first time, are the reference's: the
    row errors and the stderr lines are the same."""
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    data = bytearray(path.read_bytes())
    rows = [(pos, size) for pos, size in mutate.event_spans(bytes(data)) if data[pos + 4] in (23, 24, 25)]
    fde = spec.parse_fde(bytes(data[spec.LEN_MAGIC + spec.LEN_EVENT_HEADER:]))
    for k, (pos, size) in enumerate(rows):
        if k % 3 == 0:      # the last byte of the rows changed: the walk ends off the rows' end
            data[pos + size - 5] ^= 0xff
        elif k % 3 == 1:    # no column present: rows.walker.check_rows refuses the event
            body = bytes(data[pos + spec.LEN_EVENT_HEADER:pos + size - 4])
            o = spec.rows_offsets(data[pos + 4], fde.post_header_len(data[pos + 4]), body)
            at = pos + spec.LEN_EVENT_HEADER + o.ofs_columns_before_image
            data[at:at + o.len_columns_bitmap] = bytes(o.len_columns_bitmap)
        data[pos + size - 4:pos + size] = zlib.crc32(bytes(data[pos:pos + size - 4])).to_bytes(4, "little")
    case = tmp_path / "cut.bin"
    case.write_bytes(bytes(data))
    fast = _cli(case, [], True, monkeypatch)
    assert fast == _cli(case, [], False, monkeypatch)
    summary = json.loads(fast[0])["summary"]
    assert summary["rows"] > 0 and summary["row_errors"] > 0, summary
