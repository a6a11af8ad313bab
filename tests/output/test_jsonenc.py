"""binlog_spec.output.jsonenc: the lossless JSON form of decoded values (what `rows --format jsonl` prints)."""
from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

from binlog_spec.output import jsonenc
from binlog_spec.rows.column_types import Column
from binlog_spec.rows.values import decode_value


def test_decimal_65_30_smallest_step_is_written_in_full_not_as_an_exponent():
    # format: DECIMAL(65,30) 0.000000000000000000000000000001. 35 integer digits take
    # 3*4 + 4 = 16 bytes, 30 fraction digits 3*4 + 2 = 14 bytes (decimal.cc dig2bytes); the
    # last two-byte group holds the leftover "001"; the sign bit is set on the first byte.
    raw = bytes.fromhex("80" + "00" * 15 + "00" * 12 + "0001")
    value, end = decode_value(raw, 0, Column(246, {"precision": 65, "scale": 30}))
    assert end == 30
    assert json.loads(jsonenc.dumps(value)) == "0." + "0" * 29 + "1"


def test_decimals_keep_their_scale_and_sign():
    assert jsonenc.dumps([Decimal("-1.05"), Decimal("0.00"), Decimal("1E+3")]) == '["-1.05","0.00","1000"]'


def test_other_values_have_one_exact_text():
    assert json.loads(jsonenc.dumps({
        "big": 18446744073709551615, "bin": b"\x00\xff", "t": dt.timedelta(hours=-838, minutes=-59, seconds=-59),
        "d": dt.date(2024, 2, 29), "s": {"b", "a"},
    })) == {"big": 18446744073709551615, "bin": {"hex": "00ff"}, "t": "-838:59:59", "d": "2024-02-29",
            "s": ["a", "b"]}
