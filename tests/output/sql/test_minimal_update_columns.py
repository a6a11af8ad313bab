"""--minimal-update's judgement of the columns an UPDATE changed (output/sql/minimal.py), as the statements
and the rollback's per-column check share it: values compared as stored; a column the before image lacks
(binlog_row_image MINIMAL: the key alone) is not known, so it is set; one the after image lacks was not
written, so it did not change."""
from __future__ import annotations

from decimal import Decimal

from binlog_spec.output.sql.minimal import changed_columns, same


def test_only_the_columns_whose_stored_value_changed():
    before = {"id": 1, "name": "ann", "bal": Decimal("1.50"), "note": None, "raw": b"\x00"}
    after = {"id": 1, "name": "ann", "bal": Decimal("2.50"), "note": "vip", "raw": b"\x00"}
    assert changed_columns(before, after) == ["bal", "note"]


def test_a_change_of_case_sign_or_trailing_space_is_a_change():
    assert changed_columns({"s": "a", "f": 0.0, "t": "x"}, {"s": "A", "f": -0.0, "t": "x "}) == ["s", "f", "t"]
    assert not same(float("nan"), float("nan"))
    assert not same(1, True) and not same(1, 1.0)


def test_a_minimal_image_sets_every_column_of_its_after_image():
    # MINIMAL: the before image holds the key only, the after image the columns the statement set
    assert changed_columns({"id": 7}, {"bal": 3, "note": "x"}) == ["bal", "note"]
    # a column only the before image holds was not written: no change
    assert changed_columns({"id": 7, "bal": 3}, {"note": "x"}) == ["note"]
