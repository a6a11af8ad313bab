"""Planning a Spark read on the driver (binlog_spec.spark.planning), without a Spark session: what is
opened, and which files are cut by resync or by the header pass."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from binlog_spec.errors import BinlogSparkError
from binlog_spec.spark import files as spark_files
from binlog_spec.spark.options import Config
from binlog_spec.spark.planning import plan
from binlog_spec.stream import resync
from binlog_spec.stream import splits as stream_splits

from conftest import CORPUS, FIXTURES

MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")
RELAY = str(CORPUS / "rust_mysql_common" / "corrupt-relay-bin.000624")
NO_CRC = str(CORPUS / "mbcj_osheroff" / "mysql-bin.checksum-none")
SAKILA = str(CORPUS / "mbcj_osheroff" / "mysql-bin.sakila")
SAKILA_GZ = str(CORPUS / "mbcj_osheroff" / "mysql-bin.sakila.gz")
TYPES = str(FIXTURES / "types-full" / "mariadb-bin.000001")


def _plan(path, **options):
    return plan(Config.from_options({"path": str(path), **options}))


def test_a_folder_of_300_binlogs_plans_without_opening_a_file(tmp_path, monkeypatch):
    for k in range(1, 301):
        os.symlink(MYSQL8, tmp_path / f"binlog.{k:06d}")
    (tmp_path / "notes.txt").write_text("not a binlog\n")
    opened = []
    real_open = spark_files.FileRef.open
    monkeypatch.setattr(spark_files.FileRef, "open", lambda self: opened.append(self.name) or real_open(self))
    t = time.perf_counter()
    for mode in ("events", "transactions"):
        splits = _plan(tmp_path, mode=mode)
        assert len(splits) == 301 and not opened
    splits = _plan(tmp_path, replayDdl="never")
    assert len(splits) == 301 and not opened and time.perf_counter() - t < 30
    notes = [s for s in splits if s.ref.name.endswith("notes.txt")]
    assert [s.if_binlog for s in notes] == [True] and sum(s.if_binlog for s in splits) == 1
    assert list(stream_splits.iter_split_events(notes[0])) == []      # its reader leaves it out
    opened.clear()
    # a file larger than splitSize: its head only
    splits = _plan(tmp_path / "binlog.000001", mode="events", splitSize="256k")
    assert opened == [str(tmp_path / "binlog.000001")] and all(s.resync for s in splits)
    assert len(splits) == -(-os.path.getsize(MYSQL8) // (256 << 10))


@pytest.mark.parametrize("path, why", [(RELAY, "relay log"), (NO_CRC, "no CRC32"), (SAKILA, "no CRC32")])
def test_auto_planning_falls_back_to_the_header_pass_where_resync_cannot_be_trusted(path, why):
    head = resync.read_head(stream_splits.LocalFile.of(path))
    assert why in head.reason
    split_size = max(512, os.path.getsize(path) // 5)
    splits = _plan(path, mode="events", splitSize=str(split_size))
    scan = stream_splits.scan_file(stream_splits.LocalFile.of(path))
    expected = stream_splits.plan_splits(0, spark_files.FileRef(path, path, os.path.getsize(path)), scan, split_size)
    assert [(s.start, s.end, s.resync) for s in splits] == [(s.start, s.end, False) for s in expected]
    with pytest.raises(BinlogSparkError, match="planning=resync cannot be trusted"):
        _plan(path, mode="events", splitSize=str(split_size), planning="resync")


def test_a_file_over_4_gib_is_cut_by_the_header_pass(tmp_path):
    big = tmp_path / "binlog.000001"
    with open(big, "wb") as f:
        f.write(Path(MYSQL8).read_bytes()[:1 << 20])
        f.truncate(resync.MAX_RESYNC_SIZE + 1)                  # sparse: nothing more is written
    assert "over 4 GiB" in resync.read_head(stream_splits.LocalFile.of(str(big))).reason
    splits = _plan(big, mode="events", splitSize="128m")
    assert not any(s.resync for s in splits)


def test_gzip_files_are_read_whole_and_planning_is_checked():
    assert [(s.start, s.end, s.resync) for s in _plan(SAKILA_GZ, mode="events", splitSize="64k")] == [(0, None, False)]
    with pytest.raises(BinlogSparkError, match="planning must be one of auto, resync, scan"):
        _plan(MYSQL8, planning="guess")


def test_resync_and_scan_planning_read_the_same_events():
    ref = stream_splits.LocalFile.of(TYPES)
    by = {}
    for planning in ("resync", "scan"):
        splits = _plan(TYPES, mode="events", splitSize="4k", planning=planning)
        assert all(s.resync == (planning == "resync") for s in splits)
        by[planning] = [e.pos for s in splits for e in stream_splits.iter_split_events(s)
                        if not e.is_inner and not stream_splits.is_prefix(s, e)]
    assert by["resync"] == by["scan"] and len(by["scan"]) > 100 and ref.size > 100_000
