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
from binlog_spec.spark import records, variant as spark_variant  # noqa: E402
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
    arrow = records._Batcher(schema, 1).arrow
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
        arrow = records._Batcher(schema, 1).arrow

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
                                    schema=records._Batcher(schema, 1).arrow)
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
        assert spark_variant.encode(image) == VariantBuilder().build(jsonenc.dumps(image)), image
