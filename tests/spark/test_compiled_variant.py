"""The compiled VARIANT encoder (spark/_cvariant.pyx) against the pure-Python reference (spark/variant.py,
`encode_pure`) on every row image of every corpus and fixture binlog and on edge values, and against
pyspark's own VariantBuilder of the CLI's JSON; its Arrow columns (`encode_column`) against the column
pyarrow makes of the pure encoder's pairs."""
from __future__ import annotations

import datetime as dt
import decimal
import importlib
import itertools

import pyarrow as pa
import pytest
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructField, StructType, VariantType
from pyspark.sql.variant_utils import VariantBuilder

import binlog_spec
from binlog_spec import compiled
from binlog_spec.errors import BinlogError
from binlog_spec.output import jsonenc
from binlog_spec.rows.decoder import read_rows
from binlog_spec.spark import batches
from binlog_spec.spark import variant

from conftest import CORPUS, FIXTURES

#: The compiled module itself (even under BINLOG_SPEC_PURE=1); not built: these tests fail, as
#: tests/test_compiled_core.py does.
fast = importlib.import_module("binlog_spec.spark._cvariant")

ALL_FILES = sorted(p for root in (CORPUS, FIXTURES) for p in root.rglob("*")
                   if p.is_file() and p.suffix not in (".tsv", ".md", ".xxd", ".sql", ".py", ".json", ".txt")
                   and "expected" not in p.parts)
VARIANT = to_arrow_schema(StructType([StructField("v", VariantType())])).field("v").type

EDGE = [
    {"a": 0, "b": -1, "c": 127, "d": 128, "e": -128, "f": -129, "g": 32767, "h": 32768, "i": -32768, "j": -32769,
     "k": 2 ** 31 - 1, "l": 2 ** 31, "m": -2 ** 31, "n": -2 ** 31 - 1, "o": 2 ** 63 - 1, "p": -2 ** 63},
    {"u64": 18446744073709551615, "big": 2 ** 63, "neg": -2 ** 63 - 1, "huge": 10 ** 40},
    {"s63": "x" * 63, "s64": "y" * 64, "empty": "", "utf8": "é" * 40, "emoji": "\U0001F600", "nul": "a\x00b"},
    {"surrogate": "\ud800x", "after": 1},
    {"b0": b"", "b1": b"\x00", "b31": b"\xab" * 31, "b32": b"\xcd" * 32, "b200": b"\x01" * 200},
    {"hex_wide": b"\x02" * 40000, "k": 1},
    {"hex_mid": b"\x03" * 130, "text": "t" * 300},
    {"t": True, "f": False, "n": None, "x": 1.5, "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"),
     "z": -0.0, "tiny": 1e-05, "e300": 1e300, "third": 1 / 3, "f32": 1.100000023841858},
    {"dec": decimal.Decimal("-12.50"), "dec0": decimal.Decimal("0"), "d": dt.date(2024, 2, 29),
     "dtm": dt.datetime(2024, 1, 1, 1, 2, 3, 4), "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
     "td": dt.timedelta(hours=-838, seconds=-59), "tm": dt.time(1, 2)},
    {"set": {"b", "a"}, "list": [1, "x", None], "doc": {"k": [1, {"z": 2}]}},     # not flat: the pure encoder
    {str(i): i for i in range(300)},                                              # a large object
    {"k" * 300: 1, "é": 2, "a": None},
    {1: "int key", "x": 2}, {None: 1}, {}, [], [1, 2], "text", 5, None, 2.5, b"raw", decimal.Decimal("1.25"),
    {"zeta": 1, "alpha": 2, "Mid": 3, "_": 4, "alpha2": b"\x00"},
]


def _images(path) -> list:
    out = []
    try:
        for rc in read_rows(binlog_spec.open(str(path))):
            out.extend(i for i in (rc.before, rc.after) if i is not None)
    except (BinlogError, OSError, ValueError):
        pass
    return out


def test_the_compiled_encoder_is_the_one_running_unless_the_pure_core_is_asked_for():
    assert (variant.encode is fast.encode) != compiled.pure_requested()
    assert (variant.fast is fast) != compiled.pure_requested()
    assert variant.encode_pure is not fast.encode


@pytest.mark.parametrize("value", EDGE, ids=lambda v: repr(v)[:40])
def test_edge_values_encode_as_the_pure_encoder_and_pyspark_do(value):
    want = variant.encode_pure(value)
    assert fast.encode(value) == want
    assert fast.encode(value) == want               # the second call meets the cached layout
    if not (isinstance(value, dict) and any(type(k) is not str for k in value)) and "surrogate" not in str(value):
        assert want == VariantBuilder().build(jsonenc.dumps(value))


def test_every_row_image_of_the_corpus_and_fixtures_encodes_as_the_pure_encoder():
    n = files = 0
    for path in ALL_FILES:
        images = _images(path)
        files += bool(images)
        for image in images:
            assert fast.encode(image) == variant.encode_pure(image), (path, image)
            n += 1
        for image in images[:50]:       # and pyspark's own parse of the CLI's JSON, on a sample of each file
            assert fast.encode(image) == VariantBuilder().build(jsonenc.dumps(image)), (path, image)
    assert files > 60 and n > 100_000, (files, n)


def _pure_column(images: list) -> pa.Array:
    return pa.array([None if i is None else variant.encode_pure(i) for i in images], type=VARIANT)


@pytest.mark.parametrize("images", [
    EDGE, [None] * 5, [], [{"a": 1}] * 3, [None, {"a": 1}, None, {"b": b"\x00"}, {"a": [1]}] * 7,
    list(itertools.chain.from_iterable(_images(FIXTURES / "types-full" / "mariadb-bin.000001")[i:i + 1] + [None]
                                       for i in range(0, 400, 3))),
], ids=["edge", "nulls", "empty", "same", "mixed", "types-full"])
def test_a_column_built_at_once_equals_the_column_of_the_pure_encoders_pairs(images):
    got = batches.variant_column(images, VARIANT, fast)
    want = _pure_column(images)
    got.validate(full=True)
    assert got.type == want.type and got.null_count == want.null_count
    assert got.equals(want)
    assert got.to_pylist() == want.to_pylist()


def test_the_compiled_encoder_loads_without_pyspark_so_the_version_names_it():
    """binlog_spec.spark imports its modules when their names are asked for: loading spark/_cvariant
    (binlog_spec.compiled, `binlog-spec --version`) imports neither pyspark nor pyarrow."""
    import subprocess
    import sys
    code = ("import sys; from binlog_spec import compiled; d = compiled.describe(); "
            "print(d, 'pyspark' in sys.modules, 'pyarrow' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "BINLOG_SPEC_PURE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split()[-2:] == ["False", "False"] and "_cvariant" in out, out
    from binlog_spec.spark import DefaultSource, read_split, register   # the lazy names resolve
    from binlog_spec.spark.source import BinlogDataSource
    assert DefaultSource is BinlogDataSource and callable(read_split) and callable(register)
