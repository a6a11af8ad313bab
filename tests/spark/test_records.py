"""The record batches of a split read (binlog_spec.spark.records), without a Spark session: the
columns built at once equal the batches a dict per row gives, in every mode, and the VARIANT
encoding of row images equals pyspark's own parse of the CLI's JSON at every offset width."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql.variant_utils import VariantBuilder  # noqa: E402

from binlog_spec.output import jsonenc  # noqa: E402
from binlog_spec.spark import batches, records  # noqa: E402
from binlog_spec.spark.variant import encode  # noqa: E402
from binlog_spec.spark.options import Config  # noqa: E402
from binlog_spec.spark.planning import find_table, plan  # noqa: E402
from binlog_spec.spark.pushdown import Predicates  # noqa: E402

from conftest import CORPUS, FIXTURES  # noqa: E402

TYPES = str(FIXTURES / "types-full" / "mariadb-bin.000001")          # every column type, MariaDB
MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")              # MySQL 8.0, 2.3 MB
JSON_DOCS = str(CORPUS / "rust_mysql_common" / "json.binlog.000001")  # MySQL JSON documents
NO_TABLE_MAP = str(CORPUS / "rust_mysql_common" / "ver_5_1-wl2325_s.001")  # rows events without TABLE_MAP
RECORDS = {"events": records._event_records, "rows": records._row_records, "transactions": records._tx_records,
           "table": records._table_records}


def _reference(cfg: Config, schema, split, table) -> pa.Table:
    """The split's records as the batches a dict per row gives (pa.RecordBatch.from_pylist), a VARIANT
    as its {"value", "metadata"} struct; a fault as its `_corrupt_record` row (onError=skip)."""
    arrow = batches.Batcher(schema, 1).arrow
    names = arrow.names
    variant = {f.name for f in arrow if pa.types.is_struct(f.type) and f.type.names == ["value", "metadata"]}
    dicts = []

    def add(row):
        d = dict(zip(names, row))
        for n in variant:
            if d[n] is not None:
                d[n] = {"value": d[n][0], "metadata": d[n][1]}
        dicts.append(d)

    class Corrupt:
        arrow = batches.Batcher(schema, 1).arrow

    try:
        for row in RECORDS[cfg.mode](cfg, split, Predicates(), table, []):
            if type(row) is records.Fault:
                add(records._corrupt_row(Corrupt, cfg, split, row.exc))
            else:
                add(row + (None,) if cfg.on_error == "skip" else row)
    except records.BinlogError as exc:
        add(records._corrupt_row(Corrupt, cfg, split, exc))
    return pa.Table.from_batches([pa.RecordBatch.from_pylist(dicts, schema=arrow)], schema=arrow)


@pytest.mark.parametrize("mode, path, options", [
    ("rows", TYPES, {}), ("rows", MYSQL8, {"splitSize": "512k"}), ("rows", JSON_DOCS, {}),
    ("rows", TYPES, {"images": "json"}), ("rows", NO_TABLE_MAP, {"onError": "skip"}),
    ("rows", MYSQL8, {"batchRows": "7", "onError": "skip"}), ("rows", TYPES, {"batchRows": "1"}),
    ("events", TYPES, {}), ("events", MYSQL8, {"splitSize": "1m", "images": "json"}),
    ("transactions", TYPES, {}), ("transactions", MYSQL8, {"splitSize": "1m"}),
    ("table", TYPES, {"table": "coltypes.json_docs"}), ("table", TYPES, {"table": "coltypes.blobs"}),
    ("table", TYPES, {"table": "coltypes.dates_times", "beforeImage": "true"}),
])
def test_batches_built_by_column_equal_the_batches_of_a_dict_per_row(mode, path, options):
    cfg = Config.from_options({"paths": json.dumps([path]), "mode": mode, "batchRows": "100", **options})
    table = find_table(cfg) if mode == "table" else None
    schema = records.output_schema(cfg, table)
    splits = plan(cfg)
    assert splits
    rows = 0
    for split in splits:
        got = pa.Table.from_batches(list(records.read_split(cfg, schema, split, table)),
                                    schema=batches.Batcher(schema, 1).arrow)
        want = _reference(cfg, schema, split, table)
        assert got.num_rows == want.num_rows
        assert got.equals(want), (mode, path, split.start)
        assert got.to_pylist() == want.to_pylist()
        rows += got.num_rows
    assert rows >= (3 if path == NO_TABLE_MAP else 10)


def test_row_images_of_every_offset_width_are_pyspark_variants():
    """The cached-layout encoder (spark.variant._encode_flat) against pyspark's VariantBuilder of
    the CLI's JSON: offsets of 1, 2 and 3 bytes, bytes as {"hex"}, NULLs, every scalar type."""
    import datetime as dt
    import decimal
    images = [
        {"id": 1, "k": -5, "c": "x" * 10, "pad": None},
        {"id": 2 ** 40, "k": -129, "c": "y" * 300, "pad": b"\x00\xff"},              # 2-byte offsets
        {"id": 3, "k": 70000, "c": "z" * 70000, "pad": b"\x01" * 40000},             # 3-byte offsets
        {"a": 1.5, "b": True, "c": False, "d": decimal.Decimal("-12.50"), "e": dt.date(2024, 2, 29),
         "f": dt.datetime(2024, 1, 1, 1, 2, 3, 4), "g": dt.timedelta(hours=-838), "h": dt.time(1, 2)},
        {"b": b"", "a": b"\x10", "z": 18446744073709551615, "y": float("nan"), "x": 1e300},
        {str(i): i for i in range(300)},                                           # a large object
    ]
    for image in images:
        assert encode(image) == VariantBuilder().build(jsonenc.dumps(image)), image


# ------------------------------------------------------------------- faults of the stream
def _events_of(path: str):
    from binlog_spec.stream.planning.pieces import LocalFile, Split
    from binlog_spec.stream.planning.splits import iter_split_events
    ref = LocalFile.of(path)
    return [e for e in iter_split_events(Split(0, ref, 0, None)) if not e.is_inner]


def _corrupt(tmp_path, kind: str) -> tuple[str, int, int]:
    """A copy of TYPES with a corrupt stretch in the middle: (its path, the offset the reader must
    fault at, the offset reading must resume at), both from the intact file's events: the fault at
    the event the corruption starts in, the resume point at the first transaction boundary (a GTID
    event's position, an XID event's end) past the corrupt bytes."""
    events = _events_of(TYPES)
    data = bytearray(Path(TYPES).read_bytes())
    rows_events = [e for e in events if "ROWS_EVENT" in e.type and len(data) // 3 < e.pos < 2 * len(data) // 3]
    target = rows_events[len(rows_events) // 2]
    if kind == "crc32":            # one byte of a rows event's body flipped
        first, last = target.pos + 30, target.pos + 31
        data[first] ^= 0x5A
    elif kind == "size":           # an impossible size in a rows event's header
        first, last = target.pos + 9, target.pos + 13
        data[first:last] = (3 << 30).to_bytes(4, "little")
    else:                          # 700 garbage bytes from the middle of an event on
        first, last = target.pos + 7, target.pos + 707
        data[first:last] = bytes((i * 37 + 11) % 251 for i in range(last - first))
    fault = max(e.pos for e in events if e.pos <= first)
    boundaries = sorted({e.pos for e in events if "GTID" in e.type} | {e.pos + e.size for e in events
                                                                        if e.type == "XID_EVENT"})
    resume = min(b for b in boundaries if b >= last)
    out = tmp_path / f"{kind}-mariadb-bin.000001"
    out.write_bytes(bytes(data))
    return str(out), fault, resume


def _read(path: str, mode: str, **options) -> tuple[list[dict], list[dict], list]:
    """(good records, fault records, splits) of a read of `path`, every split in turn, in process."""
    cfg = Config.from_options({"paths": json.dumps([path]), "mode": mode, "replayDdl": "never", **options})
    schema = records.output_schema(cfg)
    splits = plan(cfg)
    good, faults = [], []
    for split in splits:
        for batch in records.read_split(cfg, schema, split):
            for row in batch.to_pylist():
                (faults if row.get("_corrupt_record") else good).append(row)
    return good, faults, splits


def _key(row: dict, drop=("file", "xid")) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in drop}, sort_keys=True, default=str)


@pytest.mark.parametrize("kind", ["crc32", "size", "garbage"])
def test_a_corrupt_stretch_is_one_fault_row_naming_the_bytes_skipped_and_reading_resumes_whole_or_in_pieces(
        tmp_path, kind):
    path, fault, resume = _corrupt(tmp_path, kind)
    intact, intact_faults, _ = _read(TYPES, "rows", splitSize="0", onError="skip")
    assert not intact_faults
    whole, whole_faults, whole_splits = _read(path, "rows", splitSize="0", onError="skip")
    assert len(whole_splits) == 1
    # the fault: one row naming the file, the fault's offset and the range skipped
    assert len(whole_faults) == 1, whole_faults
    text = whole_faults[0]["_corrupt_record"]
    assert whole_faults[0]["pos"] == fault and whole_faults[0]["file"] == path
    assert text.startswith(f"{path}: offset {fault}: ") and f"bytes [{fault}, {resume}) skipped" in text, text
    # the good rows: the intact file's, less those of the events in the range skipped (the rows of
    # the faulted transaction before the fault are kept, without the XID that never came)
    assert sorted(map(_key, whole)) == sorted(_key(r) for r in intact if not fault <= r["pos"] < resume)
    cut = {r["gtid"] for r in intact if fault <= r["pos"] < resume}
    assert sorted(_key(r, ("file",)) for r in whole if r["gtid"] not in cut) == \
        sorted(_key(r, ("file",)) for r in intact if r["gtid"] not in cut)
    assert any(r["pos"] > resume for r in whole)
    # in many small pieces, each resynced by its reader: the same rows and the same fault row
    for size in ("3000", "7001", "20000"):
        pieces, piece_faults, splits = _read(path, "rows", splitSize=size, planning="resync", onError="skip")
        assert len(splits) > 4 and all(s.resync for s in splits)
        assert sorted(map(_key, pieces)) == sorted(map(_key, whole)), size
        assert [_key(r, ()) for r in piece_faults] == [_key(r, ()) for r in whole_faults], size


@pytest.mark.parametrize("mode", ["events", "transactions"])
def test_a_corrupt_stretch_gives_the_same_records_whole_or_in_pieces(tmp_path, mode):
    path, fault, resume = _corrupt(tmp_path, "garbage")
    whole, whole_faults, _ = _read(path, mode, splitSize="0", onError="skip")
    pos = "start_pos" if mode == "transactions" else "pos"
    assert [r[pos] for r in whole_faults] == [fault]
    assert any(r[pos] > resume for r in whole)
    for size in ("3000", "20000"):
        pieces, piece_faults, _ = _read(path, mode, splitSize=size, planning="resync", onError="skip")
        assert sorted(map(_key, pieces)) == sorted(map(_key, whole)), size
        assert piece_faults == whole_faults


def test_a_corrupt_stretch_with_on_error_fail_is_the_readers_error(tmp_path):
    from binlog_spec.errors import ChecksumError
    path, fault, _resume = _corrupt(tmp_path, "crc32")
    for options in ({"splitSize": "0"}, {"splitSize": "3000", "planning": "resync"}):
        with pytest.raises(ChecksumError) as info:
            _read(path, "rows", **options)
        assert info.value.offset == fault and info.value.file == path


def test_a_fault_in_a_file_without_checksums_ends_the_file_there(tmp_path):
    """No CRC32 (resync cannot be trusted): the fault row is the last record, after every row before it."""
    path = str(CORPUS / "mbcj_osheroff" / "mysql-bin.checksum-none")
    events = _events_of(path)
    target = events[len(events) // 2]
    data = bytearray(Path(path).read_bytes())
    data[target.pos + 9:target.pos + 13] = (3 << 30).to_bytes(4, "little")
    garbled = tmp_path / "mysql-bin.checksum-none"
    garbled.write_bytes(bytes(data))
    intact, _, _ = _read(path, "events", splitSize="0", onError="skip")
    good, faults, _ = _read(str(garbled), "events", splitSize="0", onError="skip")
    assert [(r["pos"], r["file"]) for r in faults] == [(target.pos, str(garbled))]
    assert "skipped" not in faults[0]["_corrupt_record"]
    assert [r["pos"] for r in good] == [r["pos"] for r in intact if r["pos"] < target.pos]


def test_with_strict_a_body_that_does_not_match_its_layout_is_skipped_to_the_next_boundary_whole_or_in_pieces(
        tmp_path):
    """strict=true: a QUERY_EVENT whose status variables run past its body (its CRC32 made right, so only
    the body's layout is wrong) is a fault of the stream, with the same rule whole or in pieces, under
    either planning."""
    import zlib
    events = _events_of(TYPES)
    data = bytearray(Path(TYPES).read_bytes())
    q = next(e for e in events if e.type == "QUERY_EVENT" and e.pos > 7000)
    resume = min(e.pos for e in events if "GTID" in e.type and e.pos > q.pos)
    body, end = q.pos + 19, q.pos + q.size
    data[body + 11:body + 13] = (0xFFF0).to_bytes(2, "little")      # status_vars_len: 65,520 bytes
    data[end - 4:end] = zlib.crc32(bytes(data[q.pos:end - 4])).to_bytes(4, "little")
    path = tmp_path / "mariadb-bin.000001"
    path.write_bytes(bytes(data))
    whole, whole_faults, _ = _read(str(path), "events", splitSize="0", onError="skip", strict="true")
    assert [r["pos"] for r in whole_faults] == [q.pos]
    assert f"bytes [{q.pos}, {resume}) skipped" in whole_faults[0]["_corrupt_record"]
    assert [r["pos"] for r in whole] == [e.pos for e in events if not q.pos <= e.pos < resume]
    for size in ("1000", "3000"):
        for planning in ("resync", "scan"):
            pieces, piece_faults, _ = _read(str(path), "events", splitSize=size, planning=planning, onError="skip",
                                            strict="true")
            assert sorted(map(_key, pieces)) == sorted(map(_key, whole)), (size, planning)
            assert piece_faults == whole_faults, (size, planning)


def test_a_worker_freezes_what_it_imported_once_and_still_collects_what_reading_leaves():
    """BinlogReader.read moves what a Python worker holds when it first reads out of the cyclic
    collector's sight (gc.freeze), once per process; the garbage cycles of reading are collected as
    before. In a process of its own: a frozen heap stays frozen."""
    import subprocess
    code = (
        "import gc, json, sys, weakref\n"
        "from binlog_spec.spark.source import BinlogDataSource\n"
        "ds = BinlogDataSource({'paths': json.dumps([sys.argv[1]]), 'splitSize': '64k'})\n"
        "r = ds.reader(ds.schema())\n"
        "parts = r.partitions()\n"
        "assert len(parts) > 1 and gc.get_freeze_count() == 0\n"
        "n = sum(b.num_rows for b in r.read(parts[0]))\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 0, frozen\n"
        "n += sum(b.num_rows for p in parts[1:] for b in r.read(p))\n"
        "assert gc.get_freeze_count() == frozen, (gc.get_freeze_count(), frozen)\n"
        "class Cycle: pass\n"
        "c = Cycle(); c.me = c; w = weakref.ref(c); del c\n"
        "gc.collect()\n"
        "assert w() is None\n"
        "print(n)\n")
    out = subprocess.run([sys.executable, "-c", code, MYSQL8], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    cfg = Config.from_options({"paths": json.dumps([MYSQL8])})
    schema = records.output_schema(cfg)
    assert int(out.stdout) == sum(b.num_rows for s in plan(cfg) for b in records.read_split(cfg, schema, s)) > 0
