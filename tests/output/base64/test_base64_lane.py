"""The base64 script's lane (base64_lane.lines_of: the events that pass through unchanged written
without Items) writes what the Item path (lines over Rewriter.items) writes: the same lines, the same
warnings, the same error at the same place, on every corpus and fixture binlog and on mutated ones,
forward, with schemas renamed, without GTIDs, and from several files in one run."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec.output.base64.lane import lines_of
from binlog_spec.output.base64.script import Base64Options, Base64Script
from binlog_spec.output.rewriter import Rewriter, WriteOptions

from conftest import CORPUS, FIXTURES, manifest_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))
import mutate  # noqa: E402
from seeds import seed_files  # noqa: E402

FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))
OPTIONS = {
    "plain": (WriteOptions(), Base64Options()),
    "rewrite-db": (WriteOptions(rewrite_db={"test": "other", "sbtest": "x", "db1": "db2"}), Base64Options()),
    "skip-gtids": (WriteOptions(skip_gtids=True), Base64Options(skip_gtids=True)),
    "script-skip-gtids": (WriteOptions(), Base64Options(skip_gtids=True)),
}


def _script(paths, write: WriteOptions, options: Base64Options, lane: bool):
    lines, error = [], None
    with Rewriter(write) as rewriter:
        printer = Base64Script(options, rewriter)
        events = binlog_spec.read_events([str(p) for p in paths])
        got = lines_of(printer, events, rewriter) if lane else printer.lines(rewriter.items(events))
        try:
            for line in got:
                lines.append(line)
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            error = (type(exc).__name__, str(exc), getattr(exc, "offset", None))
    held = rewriter.pending
    return "\n".join(lines), error, printer.warnings, held and (held.bare, held.pos)


@pytest.mark.parametrize("name", OPTIONS)
def test_the_lane_writes_what_the_item_path_writes_on_every_file(name):
    write, options = OPTIONS[name]
    for path in FILES:
        assert _script([path], write, options, True) == _script([path], write, options, False), path


def test_the_lane_writes_what_the_item_path_writes_over_several_files():
    demo = sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())[:3]
    for write, options in OPTIONS.values():
        assert _script(demo, write, options, True) == _script(demo, write, options, False)


def test_the_lane_writes_what_the_item_path_writes_on_mutated_binlogs(tmp_path):
    rng = random.Random(1606)
    seeds = seed_files()
    for k in range(150):
        data, how, _cut = mutate.mutate(rng.choice(seeds).read_bytes(), rng)
        path = tmp_path / f"case-{k:03d}.bin"
        path.write_bytes(data)
        for write, options in (OPTIONS["plain"], OPTIONS["rewrite-db"]):
            assert _script([path], write, options, True) == _script([path], write, options, False), how
