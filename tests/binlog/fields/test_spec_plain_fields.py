"""spec.to_plain, which converts a body through a plan made once per generated class, gives exactly
what the generic walk over each object's attributes gave (kept here as the reference): the same keys,
in the same order, with the same values and value types, on every event of every corpus and fixture
file."""
from __future__ import annotations

from enum import IntEnum
from typing import Any

import pytest
from kaitaistruct import KaitaiStruct

from binlog_spec.binlog import spec

from conftest import CORPUS, FIXTURES, collect, manifest_rows


def reference_to_plain(value: Any) -> Any:
    """The generic conversion to_plain replaced: every object's vars(), then its instances."""
    if isinstance(value, KaitaiStruct):
        attr = spec._SCALAR_OF.get(type(value))
        if attr is not None:
            return reference_to_plain(getattr(value, attr))
        params, instances = spec._field_names(type(value))
        out: dict[str, Any] = {}
        for name, v in vars(value).items():
            if name.startswith("_") or name in params or name in spec._HIDDEN or v is None:
                continue
            out[name] = reference_to_plain(v)
        for name in instances:
            if name in spec._HIDDEN or name in out:
                continue
            v = getattr(value, name)
            if v is not None:
                out[name] = reference_to_plain(v)
        return out
    if isinstance(value, IntEnum):
        return value.name.upper()
    if isinstance(value, list):
        return [reference_to_plain(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def typed(value: Any) -> Any:
    """The value with every dict's key order and every leaf's type made visible to ==."""
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value), value)


FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name + "/" + p.name if p.parent != CORPUS else p.name
                                              for p in FILES])
def test_planned_conversion_gives_what_the_generic_walk_gave(path):
    events, _ = collect(path)
    bodies = 0
    for ev in events:
        if ev._late is not None:
            ev._parsed()
        if ev._body is None or ev.error is not None:
            continue
        bodies += 1
        new, old = spec.to_plain(ev._body), reference_to_plain(ev._body)
        assert typed(new) == typed(old), (path, ev.pos, ev.type)
    assert bodies or not events


def test_planned_conversion_keeps_a_missing_optional_field_out_and_the_order():
    # A v1 rows event with a 6-byte table id has no len_extra_data; a v2 one has it, between the flags
    # and num_columns: both in the layout's order.
    v1 = spec.Binlog.RowsEvent(8, 1, False, spec.KaitaiStream(spec.BytesIO(bytes(6) + b"\x01\x00" + b"\x01\x01")))
    v2 = spec.Binlog.RowsEvent(10, 2, False, spec.KaitaiStream(spec.BytesIO(
        bytes(6) + b"\x01\x00" + b"\x02\x00" + b"\x01\x01")))
    assert list(spec.to_plain(v1)) == list(reference_to_plain(v1))
    assert "len_extra_data" not in spec.to_plain(v1)
    assert list(spec.to_plain(v2)) == list(reference_to_plain(v2))
    assert list(spec.to_plain(v2)).index("len_extra_data") < list(spec.to_plain(v2)).index("num_columns")
