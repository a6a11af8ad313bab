"""Planning a Spark read on the driver (binlog_spec.spark.planning), without a Spark session: what is
opened, and which files are cut by resync or by the header pass."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from binlog_spec.errors import BinlogSparkError
from binlog_spec.spark.files import FileRef
from binlog_spec.spark.options import Config
from binlog_spec.spark.planning import plan
from binlog_spec.stream.planning import resync
from binlog_spec.stream.planning.pieces import LocalFile, Split, is_prefix
from binlog_spec.stream.planning.scan import ddl_statements, scan_file
from binlog_spec.stream.planning.splits import iter_split_events, plan_splits, restore

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
    real_open = FileRef.open
    monkeypatch.setattr(FileRef, "open", lambda self: opened.append(self.name) or real_open(self))
    t = time.perf_counter()
    for mode in ("events", "transactions"):
        splits = _plan(tmp_path, mode=mode)
        assert len(splits) == 301 and not opened
    splits = _plan(tmp_path, replayDdl="never")
    assert len(splits) == 301 and not opened and time.perf_counter() - t < 30
    notes = [s for s in splits if s.ref.name.endswith("notes.txt")]
    assert [s.if_binlog for s in notes] == [True] and sum(s.if_binlog for s in splits) == 1
    assert list(iter_split_events(notes[0])) == []      # its reader leaves it out
    opened.clear()
    # a file larger than splitSize: its head only (splitBy=bytes, the default), or its head and then a
    # sample of its event density (splitBy=cost)
    splits = _plan(tmp_path / "binlog.000001", mode="events", splitSize="256k")
    assert opened == [str(tmp_path / "binlog.000001")] and all(s.resync for s in splits)
    assert len(splits) == -(-os.path.getsize(MYSQL8) // (256 << 10))
    opened.clear()
    splits = _plan(tmp_path / "binlog.000001", mode="events", splitSize="256k", splitBy="cost")
    assert opened == [str(tmp_path / "binlog.000001")] * 2 and all(s.resync for s in splits)
    assert len(splits) == -(-os.path.getsize(MYSQL8) // (256 << 10))


@pytest.mark.parametrize("path, why", [(RELAY, "relay log"), (NO_CRC, "no CRC32"), (SAKILA, "no CRC32")])
def test_auto_planning_falls_back_to_the_header_pass_where_resync_cannot_be_trusted(path, why):
    head = resync.read_head(LocalFile.of(path))
    assert why in head.reason
    split_size = max(512, os.path.getsize(path) // 5)
    splits = _plan(path, mode="events", splitSize=str(split_size))
    scan = scan_file(LocalFile.of(path))
    expected = plan_splits(0, FileRef(path, path, os.path.getsize(path)), scan, split_size)
    assert [(s.start, s.end, s.resync) for s in splits] == [(s.start, s.end, False) for s in expected]
    with pytest.raises(BinlogSparkError, match="planning=resync cannot be trusted"):
        _plan(path, mode="events", splitSize=str(split_size), planning="resync")


def test_a_file_over_4_gib_is_cut_by_the_header_pass(tmp_path):
    big = tmp_path / "binlog.000001"
    with open(big, "wb") as f:
        f.write(Path(MYSQL8).read_bytes()[:1 << 20])
        f.truncate(resync.MAX_RESYNC_SIZE + 1)                  # sparse: nothing more is written
    assert "over 4 GiB" in resync.read_head(LocalFile.of(str(big))).reason
    splits = _plan(big, mode="events", splitSize="128m")
    assert not any(s.resync for s in splits)


def test_gzip_files_are_read_whole_and_planning_is_checked():
    assert [(s.start, s.end, s.resync) for s in _plan(SAKILA_GZ, mode="events", splitSize="64k")] == [(0, None, False)]
    with pytest.raises(BinlogSparkError, match="planning must be one of auto, resync, scan"):
        _plan(MYSQL8, planning="guess")


def test_resync_and_scan_planning_read_the_same_events():
    ref = LocalFile.of(TYPES)
    by = {}
    for planning in ("resync", "scan"):
        splits = _plan(TYPES, mode="events", splitSize="4k", planning=planning)
        assert all(s.resync == (planning == "resync") for s in splits)
        by[planning] = [e.pos for s in splits for e in iter_split_events(s)
                        if not e.is_inner and not is_prefix(s, e)]
    assert by["resync"] == by["scan"] and len(by["scan"]) > 100 and ref.size > 100_000


def _rows(cfg: Config, splits) -> "collections.Counter":
    """The rows of the planned splits as the data source's tasks make them (records.read_split)."""
    import collections
    import json
    from binlog_spec.spark.records import output_schema, read_split
    schema = output_schema(cfg, None)
    names = [s.ref.name for s in splits]
    out: collections.Counter = collections.Counter()
    for s in splits:
        for batch in read_split(cfg, schema, s, run_files=[names[0], names[-1]]):
            out.update(json.dumps(r, default=str, sort_keys=True) for r in batch.to_pylist())
    return out


def test_the_ddl_states_of_resync_pieces_are_those_at_their_resolved_starts(monkeypatch):
    """With the DDL statements given to the planner (DDL_HOOK off), a file whose names need the DDL
    replayed (MySQL 8, MINIMAL metadata) is cut by resync too: each piece gets the schema state at
    the boundary its reader resolves its range start to, and the rows are those of the whole read."""
    from binlog_spec.spark import planning
    whole_cfg = Config.from_options({"path": MYSQL8, "splitSize": "0"})
    whole = _rows(whole_cfg, plan(whole_cfg))
    cfg = Config.from_options({"path": MYSQL8, "splitSize": "64k"})
    assert not any(s.resync for s in plan(cfg))                 # DDL_HOOK: cut by the header pass
    monkeypatch.setattr(planning, "DDL_HOOK", False)
    splits = plan(cfg)
    assert all(s.resync for s in splits) and len(splits) == -(-os.path.getsize(MYSQL8) // 65536)
    assert len({s.schema_state for s in splits}) >= 3             # the states differ along the file
    assert _rows(cfg, splits) == whole and sum(whole.values()) > 200


def test_a_piece_whose_range_starts_inside_a_ddl_transaction_has_that_ddl_in_its_state(monkeypatch):
    """A range starting between a DDL's GTID event and its QUERY event resolves to the next
    boundary, after the DDL: the piece's schema state holds the table that DDL creates."""
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.spark import planning
    scan = scan_file(LocalFile.of(MYSQL8), ddl=True)
    pos, db, query = [s for s in ddl_statements(scan) if "CREATE TABLE" in s[2].upper()][1]
    table = query.split("`")[1]
    assert pos not in scan.boundaries and max(b for b in scan.boundaries if b < pos) > pos - 100
    monkeypatch.setattr(planning, "DDL_HOOK", False)
    splits = plan(Config.from_options({"path": MYSQL8, "splitSize": str(pos), "splitBy": "bytes"}))
    at = next(s for s in splits if s.start == pos)
    before = next(s for s in splits if s.start == 0)
    assert restore(at.schema_state, SchemaTracker).columns(db, table) is not None
    assert restore(before.schema_state, SchemaTracker).columns(db, table) is None


# ------------------------------------------------------------------------------ cut by cost
def test_pieces_are_cut_by_estimated_cost_more_of_them_where_events_are_dense(monkeypatch):
    """A file whose second half holds ten times as many events per byte: as many pieces as splitSize
    gives, most of them in the dense half (cost_starts, the densities given)."""
    from binlog_spec.spark import planning
    size = 64 << 20
    ref = type("Ref", (), {"size": size})()

    def counts(_ref, _head, offsets, _span):
        return [(10 if o < size // 2 else 100, 32768) for o in offsets]

    monkeypatch.setattr(resync, "event_counts", counts)
    starts = planning.cost_starts(ref, None, 8 << 20)
    assert len(starts) == 8 and starts[0] == 0 and starts == sorted(set(starts)) and starts[-1] < size
    in_dense = [s for s in starts if s >= size // 2]
    assert len(in_dense) >= 5, starts
    # equal densities: equal bytes, as before
    monkeypatch.setattr(resync, "event_counts", lambda _r, _h, offsets, _s: [(50, 32768)] * len(offsets))
    assert planning.cost_starts(ref, None, 8 << 20) == [i * (8 << 20) for i in range(8)]


def test_event_counts_walk_the_headers_from_the_first_verified_event():
    ref = LocalFile.of(TYPES)
    head = resync.read_head(ref)
    events = [e for e in iter_split_events(Split(0, ref, 0, None)) if not e.is_inner]
    offsets = [0, ref.size // 3, ref.size // 2 + 17, ref.size - 10]
    got = resync.event_counts(ref, head, offsets, 4096)
    for offset, (n, nbytes) in zip(offsets, got):
        after = [e for e in events if e.pos >= max(offset, head.end)]
        if not after:
            assert (n, nbytes) == (0, 0)
            continue
        start = after[0].pos
        walked = [e for e in after if e.pos < start + 4096]
        assert (n, nbytes) == (len(walked), walked[-1].pos + walked[-1].size - start), offset


def test_resync_pieces_cut_by_cost_give_the_rows_of_the_whole_file():
    cfg_whole = Config.from_options({"path": TYPES, "splitSize": "0"})
    want = _rows(cfg_whole, plan(cfg_whole))
    for size in ("7k", "13k", "40k"):
        cfg = Config.from_options({"path": TYPES, "splitSize": size, "splitBy": "cost"})
        splits = plan(cfg)
        by_bytes = plan(Config.from_options({"path": TYPES, "splitSize": size}))     # the default
        assert len(splits) == len(by_bytes) > 1 and all(s.resync for s in splits)
        assert [s.start for s in splits] != [s.start for s in by_bytes], size
        assert _rows(cfg, splits) == want, size
    assert sum(want.values()) > 100
