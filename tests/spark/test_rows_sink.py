"""The rows mode's compiled loop (spark/_crecords.pyx, records._row_sink): the common MariaDB transactions
taken straight from the reader's window into the batcher's columns. Its reference is records._row_changes
over every event (records._crecords set to None): the same batches (rows, columns, batch sizes), the same
fault rows and errors, whole files and resync pieces, intact and damaged (tests/test_compiled_core.py runs
the same comparison over the corpus, the fixtures and fuzz cases, with BINLOG_SPEC_PURE=1)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")  # noqa: E402 - tests/spark is only collected where pyspark is

from binlog_spec import compiled  # noqa: E402
from binlog_spec.spark import records  # noqa: E402
from binlog_spec.spark.options import Config  # noqa: E402
from binlog_spec.spark.planning import plan  # noqa: E402

from conftest import FIXTURES  # noqa: E402
from test_records import TYPES, _corrupt  # noqa: E402

DEMO = str(FIXTURES / "demo" / "mariadb-bin.000001")


def _batches(path: str, monkeypatch, compiled_loop: bool, **options) -> list:
    """Every batch of a read of `path` (every split in turn), as (rows, column values), or the error that
    ended a split; with or without the compiled loop."""
    with monkeypatch.context() as m:
        if not compiled_loop:
            m.setattr(records, "_crecords", None)
        cfg = Config.from_options({"paths": json.dumps([path]), "mode": "rows", **options})
        schema = records.output_schema(cfg)
        out = []
        for split in plan(cfg):
            try:
                for batch in records.read_split(cfg, schema, split):
                    out.append((batch.num_rows, [c.to_pylist() for c in batch.columns]))
            except Exception as exc:  # noqa: BLE001 - the error is what is compared
                out.append((type(exc).__name__, str(exc), getattr(exc, "offset", None)))
        return out


def _taken(path: str, **options) -> int:
    """The bytes the compiled loop takes in a read of `path`."""
    cfg = Config.from_options({"paths": json.dumps([path]), "mode": "rows", **options})
    schema = records.output_schema(cfg)
    taken = 0
    made = records._row_sink

    def counting(*args):
        sink = made(*args)

        class Counted:
            def __getattr__(self, name):
                return getattr(sink, name)

            def __setattr__(self, name, value):
                setattr(sink, name, value)

            def __call__(self, *a):
                nonlocal taken
                got = sink(*a)
                taken += got
                return got
        return Counted() if sink is not None else None
    records._row_sink, saved = counting, records._row_sink
    try:
        for split in plan(cfg):
            for _ in records.read_split(cfg, schema, split):
                pass
    finally:
        records._row_sink = saved
    return taken


def test_the_compiled_rows_loop_is_built_and_takes_the_common_transactions():
    assert compiled.load("binlog_spec.spark._crecords") is not None and records._crecords is not None
    assert records._crecords.LAYOUTS_AGREE is True
    assert _taken(TYPES, splitSize="0") > 0
    assert _taken(DEMO, splitSize="0") > 0
    # a read with filters or pushed predicates is the reference's alone
    assert _taken(TYPES, splitSize="0", databases="test") == 0


@pytest.mark.parametrize("options", [
    {"splitSize": "0"},
    {"splitSize": "0", "onError": "skip"},
    {"splitSize": "0", "batchRows": "7"},                      # batches of exactly batchRows rows, both ways
    {"splitSize": "3000", "planning": "resync", "onError": "skip", "batchRows": "5"},
    {"splitSize": "7001", "planning": "scan"},
])
def test_the_compiled_rows_loop_gives_the_reference_batches(monkeypatch, options):
    for path in (TYPES, DEMO):
        fast = _batches(path, monkeypatch, True, **options)
        assert fast == _batches(path, monkeypatch, False, **options), (path, options)
        assert sum(b[0] for b in fast if type(b[0]) is int) > 0


@pytest.mark.parametrize("kind", ["crc32", "size", "garbage"])
def test_a_damaged_file_gives_the_same_fault_rows_and_errors_with_the_compiled_rows_loop(tmp_path, monkeypatch,
                                                                                           kind):
    path, fault, resume = _corrupt(tmp_path, kind)
    for options in ({"splitSize": "0", "onError": "skip"}, {"splitSize": "0"},
                    {"splitSize": "3000", "planning": "resync", "onError": "skip"},
                    {"splitSize": "20000", "planning": "resync", "onError": "skip", "batchRows": "9"}):
        fast = _batches(path, monkeypatch, True, **options)
        assert fast == _batches(path, monkeypatch, False, **options), options
        if options.get("onError") == "skip":    # one fault row, naming the file and the bytes skipped
            names = [f"bytes [{fault}, {resume}) skipped" in str(v) for b in fast if type(b[0]) is int
                     for v in b[1][-1] if v is not None]
            assert names and all(names), options
        else:                                   # the reader's error, at the fault
            assert any(type(b[0]) is str and b[2] == fault for b in fast), options
