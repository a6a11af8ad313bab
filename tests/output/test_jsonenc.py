"""binlog_spec.output.jsonenc: the lossless JSON form of decoded values (what `rows --format jsonl` prints).

`jsonenc.dumps` writes with orjson; `jsonenc.reference` (json.dumps) defines the text. Each type has its
exact text here, and the two encoders are compared on every event and row change of the corpus and the
fixtures.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import random
import struct
from decimal import Decimal

import pytest
import yaml

import binlog_spec
from binlog_spec import api
from binlog_spec.errors import BinlogError
from binlog_spec.output import jsonenc, row_text
from binlog_spec.rows.decoder import RowChange, read_rows
from binlog_spec.rows.column_types import DOUBLE, FLOAT, JSON, LONG, VECTOR, Column
from binlog_spec.rows.json.json_binary import JsonDiff, JsonDiffs, JsonOpaque
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.rows.values import decode_value
from conftest import CORPUS, FIXTURES, ROOT, manifest_rows


def test_decimal_65_30_smallest_step_is_written_in_full_not_as_an_exponent():
    # format: DECIMAL(65,30) 0.000000000000000000000000000001. 35 integer digits take
    # 3*4 + 4 = 16 bytes, 30 fraction digits 3*4 + 2 = 14 bytes (decimal.cc dig2bytes); the
    # last two-byte group holds the leftover "001"; the sign bit is set on the first byte.
    raw = bytes.fromhex("80" + "00" * 15 + "00" * 12 + "0001")
    value, end = decode_value(raw, 0, Column(246, {"precision": 65, "scale": 30}))
    assert end == 30
    assert jsonenc.dumps(value) == '"0.' + "0" * 29 + '1"'


def test_decimals_keep_their_scale_and_sign():
    assert jsonenc.dumps([Decimal("-1.05"), Decimal("0.00"), Decimal("1E+3")]) == '["-1.05","0.00","1000"]'


def test_other_values_have_one_exact_text():
    assert json.loads(jsonenc.dumps({
        "big": 18446744073709551615, "bin": b"\x00\xff", "t": dt.timedelta(hours=-838, minutes=-59, seconds=-59),
        "d": dt.date(2024, 2, 29), "s": {"b", "a"},
    })) == {"big": 18446744073709551615, "bin": {"hex": "00ff"}, "t": "-838:59:59", "d": "2024-02-29",
            "s": ["a", "b"]}


# --- integers ---------------------------------------------------------------------------------------

def test_64_bit_integers_are_exact_at_both_ends():
    assert jsonenc.dumps([18446744073709551615, -9223372036854775808, 0, -1]) == \
        "[18446744073709551615,-9223372036854775808,0,-1]"


def test_integers_beyond_64_bits_are_exact_even_deep_inside_a_value():
    # orjson refuses them; the value goes to the reference encoder whole.
    big, small = 2 ** 64, -2 ** 63 - 1
    assert jsonenc.dumps(big) == "18446744073709551616"
    assert jsonenc.dumps({"a": [1, {"b": small}], "c": "x"}) == '{"a":[1,{"b":-9223372036854775809}],"c":"x"}'
    assert jsonenc.dumps({2 ** 100, 1}) == "[1,1267650600228229401496703205376]"


def test_booleans_stay_booleans():
    assert jsonenc.dumps([True, False, None]) == "[true,false,null]"


# --- bytes, times, sets, opaque ----------------------------------------------------------------------

def test_bytes_of_every_kind_are_hex_objects():
    assert jsonenc.dumps([b"", b"\x00\xff", bytearray(b"\x01"), memoryview(b"\xab")]) == \
        '[{"hex":""},{"hex":"00ff"},{"hex":"01"},{"hex":"ab"}]'


def test_datetimes_are_isoformat_never_orjsons_own_text():
    assert jsonenc.dumps([dt.datetime(2024, 2, 29, 23, 59, 59), dt.datetime(2024, 1, 2, 3, 4, 5, 6),
                          dt.datetime(1, 1, 1), dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)]) == \
        '["2024-02-29T23:59:59","2024-01-02T03:04:05.000006","0001-01-01T00:00:00","2024-01-02T00:00:00+00:00"]'


def test_dates_and_times_are_isoformat():
    assert jsonenc.dumps([dt.date(1000, 1, 1), dt.time(0, 0), dt.time(23, 59, 59, 500000)]) == \
        '["1000-01-01","00:00:00","23:59:59.500000"]'


def test_time_durations_are_signed_hours_minutes_seconds():
    assert jsonenc.dumps([dt.timedelta(hours=838, minutes=59, seconds=59), dt.timedelta(0),
                          dt.timedelta(seconds=-1, microseconds=500000), dt.timedelta(days=2, microseconds=1)]) == \
        '["838:59:59","00:00:00","-00:00:00.500000","48:00:00.000001"]'


def test_sets_are_sorted_lists():
    assert jsonenc.dumps({"s": {"b", "a", "c"}, "f": frozenset({3, 1})}) == '{"s":["a","b","c"],"f":[1,3]}'


def test_json_opaque_scalars_are_written_as_mysql_prints_them():
    assert jsonenc.dumps({"o": JsonOpaque(15, b"\x01\x02")}) == '{"o":"base64:type15:AQI="}'


def test_json_diffs_are_operation_objects():
    diffs = JsonDiffs([JsonDiff("REPLACE", "$.a", 1.5), JsonDiff("REMOVE", "$.b", None)])
    assert jsonenc.dumps(diffs) == ('{"json_diff":[{"operation":"REPLACE","path":"$.a","value":1.5},'
                                    '{"operation":"REMOVE","path":"$.b","value":null}]}')


def test_a_value_without_a_json_form_is_refused():
    with pytest.raises(TypeError):
        jsonenc.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsonenc.dumps(Column(3, {}))       # a dataclass: orjson would write it, json.dumps refuses


# --- text and keys -----------------------------------------------------------------------------------

def test_text_is_utf8_with_json_escapes_for_controls_only():
    assert jsonenc.dumps('é€😀"\\/\x00\x1f\n\t\x7f\u2028') == '"é€😀\\"\\\\/\\u0000\\u001f\\n\\t\x7f\u2028"'


def test_a_lone_surrogate_is_kept_as_json_dumps_keeps_it():
    assert jsonenc.dumps(["\ud800"]) == '["\ud800"]'


def test_dict_keys_keep_their_order_and_non_text_keys_read_as_json_dumps_writes_them():
    assert jsonenc.dumps({"z": 1, "a": 2, "m": 3}) == '{"z":1,"a":2,"m":3}'
    assert jsonenc.dumps({2: "a", None: "b", False: "c"}) == '{"2":"a","null":"b","false":"c"}'


def test_text_that_looks_like_a_small_float_is_still_text():
    assert jsonenc.dumps({"s": "1e-7 0.00001", "x": 1}) == '{"s":"1e-7 0.00001","x":1}'


# --- floats: Python's repr, the shortest digits that round-trip -----------------------------------------

@pytest.mark.parametrize("value, text", [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (0.1, "0.1"), (1 / 3, "0.3333333333333333"),
    (1e15, "1000000000000000.0"), (1e16, "1e+16"), (1.5e300, "1.5e+300"), (1.7976931348623157e308,
                                                                          "1.7976931348623157e+308"),
    (0.0001, "0.0001"), (1e-5, "1e-05"), (1.234e-5, "1.234e-05"), (1.5e-7, "1.5e-07"), (-1e-9, "-1e-09"),
    (1e-10, "1e-10"), (5e-324, "5e-324"),
    (struct.unpack("<f", struct.pack("<f", 0.1))[0], "0.10000000149011612"),       # FLOAT 0.1, widened
    (struct.unpack("<f", struct.pack("<f", 1e-5))[0], "9.999999747378752e-06"),
])
def test_floats_are_written_as_python_repr(value, text):
    assert jsonenc.dumps(value) == text
    assert jsonenc.dumps({"v": [value]}) == f'{{"v":[{text}]}}'


def test_every_float_is_its_repr_and_reads_back_to_the_same_double():
    rng = random.Random(16)
    values = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20000)]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 20) for _ in range(20000)]
    values = [v for v in values if math.isfinite(v)]
    texts = jsonenc.dumps(values)[1:-1].split(",")
    assert texts == [repr(v) for v in values]
    assert [float(t) for t in texts] == values


def test_nan_and_infinities_keep_their_names_never_null():
    # No server writes them (MySQL and MariaDB refuse NaN and infinities in FLOAT, DOUBLE and JSON); only
    # damaged bytes hold them. null would read as SQL NULL.
    nan, inf = float("nan"), float("inf")
    assert jsonenc.dumps([nan, inf, -inf, None]) == "[NaN,Infinity,-Infinity,null]"
    assert jsonenc.dumps({"doc": {"a": [1, {"b": nan}]}}) == '{"doc":{"a":[1,{"b":NaN}]}}'
    assert jsonenc.dumps({"v": {1.0, inf}}) == '{"v":[1.0,Infinity]}'
    assert jsonenc.dumps([type("Real", (float,), {})(nan)]) == "[NaN]"


def _row_change(columns, after, type_code=LONG):
    table = TableDef(1, "db", "t", tuple(Column(type_code, {}, name=n) for n in columns), (True,) * len(columns))
    return RowChange("f", 4, 0, 1, None, "db", "t", "insert", None, after, 0, table)


def test_a_row_of_a_float_column_keeps_nan_in_the_json_line_and_the_human_line():
    rc = _row_change(["d"], {"d": float("nan")}, DOUBLE)
    assert row_text.row_json(rc) == ('{"file":"f","pos":4,"timestamp":"1970-01-01T00:00:00Z","server_id":1,'
                                     '"gtid":null,"schema":"db","table":"t","op":"insert","before":null,'
                                     '"after":{"d":NaN}}')
    assert row_text.row_line(rc).endswith(" INSERT `db`.`t` {\"d\":NaN}")
    assert api.row_renderer("jsonl")(_row_change(["f"], {"f": 1e-5}, FLOAT)).endswith('"after":{"f":1e-05}}')


def test_rows_of_json_and_vector_columns_keep_nan_and_infinity_too():
    doc = _row_change(["j"], {"j": {"a": [1, {"b": float("nan")}]}}, JSON)
    assert row_text.row_json(doc).endswith('"after":{"j":{"a":[1,{"b":NaN}]}}}')
    vec = _row_change(["v"], {"v": [1.0, float("-inf")]}, VECTOR)
    assert row_text.row_json(vec).endswith('"after":{"v":[1.0,-Infinity]}}')


def _float_types(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "type" and isinstance(value, str) and value.startswith("f") and value[1:2] in ("4", "8"):
                yield value
            yield from _float_types(value)
    elif isinstance(node, list):
        for value in node:
            yield from _float_types(value)


def test_the_spec_reads_no_float_so_event_lines_need_no_look_for_floats():
    spec = yaml.safe_load((ROOT / "formats" / "binlog.ksy").read_text(encoding="utf-8"))
    assert list(_float_types(spec)) == []
    assert list(_float_types({"seq": [{"id": "x", "type": "f8"}]})) == ["f8"]


# --- orjson against the reference, on every real file -----------------------------------------------------

def _binlogs():
    files = [CORPUS / row["file"] for row in manifest_rows()]
    files += sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())
    return [p for p in files if p.is_file()]


def test_event_and_row_lines_equal_the_reference_encoders_on_every_corpus_and_fixture_file():
    files = _binlogs()
    assert len(files) > 100
    n_events = n_rows = 0
    for path in files:
        events = list(binlog_spec.read_events([path], faults=[]))
        for ev in events:
            assert api.event_renderer("jsonl")(ev) == jsonenc.reference(ev.to_dict()), (path, ev.pos)
        n_events += len(events)
        try:
            for rc in read_rows(events):
                assert api.row_renderer("jsonl")(rc) == jsonenc.reference(rc.to_dict()), (path, rc.pos)
                assert row_text.row_line(rc) == _reference_row_line(rc), (path, rc.pos)
                n_rows += 1
        except BinlogError:
            pass
    assert n_events > 10000 and n_rows > 1000


def _reference_row_line(rc):
    saved = jsonenc.dumps
    try:
        row_text.jsonenc.dumps = lambda v, **options: jsonenc.reference(v)
        return row_text.row_line(rc)
    finally:
        row_text.jsonenc.dumps = saved


# --- decoded row values: orjson writes datetimes itself (`decoded=True`), the text stays the table's ----------
# Expected texts: docs/output.md ("DATETIME `2026-01-31T09:00:00.125000` (no time zone)", "TIMESTAMP
# `2038-01-19T03:14:07.999999+00:00` (UTC)", TIME "[-]HH:MM:SS[.ffffff]", SET "sorted list", DECIMAL "string,
# exact, never exponent") and the module's table (datetime/date/time: ISO 8601 by `isoformat()`).

UTC = dt.timezone.utc


@pytest.mark.parametrize("value, text", [
    (dt.datetime(2026, 1, 31, 9, 0, 0, 125000), '"2026-01-31T09:00:00.125000"'),
    (dt.datetime(2038, 1, 19, 3, 14, 7, 999999, tzinfo=UTC), '"2038-01-19T03:14:07.999999+00:00"'),
    (dt.datetime(2024, 2, 29, 23, 59, 59), '"2024-02-29T23:59:59"'),                  # no fraction when 0
    (dt.datetime(2024, 2, 29, 23, 59, 59, tzinfo=UTC), '"2024-02-29T23:59:59+00:00"'),
    (dt.datetime(2024, 1, 2, 3, 4, 5, 6), '"2024-01-02T03:04:05.000006"'),             # six digits always
    (dt.datetime(1970, 1, 1, 0, 0, 1, 100000, tzinfo=UTC), '"1970-01-01T00:00:01.100000+00:00"'),
    (dt.datetime(1, 1, 1), '"0001-01-01T00:00:00"'),                                   # four-digit year
    (dt.datetime(999, 12, 31, 23, 59, 59, 1), '"0999-12-31T23:59:59.000001"'),
    (dt.datetime(9999, 12, 31, 23, 59, 59, 999999), '"9999-12-31T23:59:59.999999"'),
    (dt.date(1, 1, 1), '"0001-01-01"'), (dt.date(999, 1, 31), '"0999-01-31"'), (dt.date(9999, 12, 31), '"9999-12-31"'),
    (dt.time(0, 0), '"00:00:00"'), (dt.time(23, 59, 59, 500000), '"23:59:59.500000"'),
    (dt.time(1, 0, tzinfo=UTC), '"01:00:00+00:00"'),                                  # orjson refuses it
    ("0000-00-00 00:00:00.000", '"0000-00-00 00:00:00.000"'),                          # zero dates are str
    ("2024-02-00", '"2024-02-00"'),
])
def test_decoded_times_are_isoformat_to_the_byte(value, text):
    assert jsonenc.dumps(value, decoded=True) == text
    assert jsonenc.dumps({"v": [value]}, floats=False, decoded=True) == f'{{"v":[{text}]}}'
    assert jsonenc.dumps(value) == jsonenc.reference(value) == text


def test_an_offset_with_seconds_keeps_them_when_the_caller_promises_nothing():
    # isoformat writes "-05:00:07"; orjson would drop the seconds, so only decoded (naive or UTC) values
    # are left to orjson.
    odd = dt.datetime(1900, 1, 1, tzinfo=dt.timezone(-dt.timedelta(hours=5, seconds=7)))
    assert jsonenc.dumps(odd) == jsonenc.dumps([odd], floats=False)[1:-1] == '"1900-01-01T00:00:00-05:00:07"'


def test_decoded_datetimes_equal_the_reference_at_random():
    rng = random.Random(29)
    values = [dt.datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                          rng.randint(0, 59), rng.randint(0, 59), rng.choice([0, rng.randint(0, 999999)]),
                          tzinfo=rng.choice([None, UTC])) for _ in range(5000)]
    assert jsonenc.dumps(values, decoded=True) == jsonenc.reference(values)
    assert jsonenc.dumps(values, decoded=True) == "[" + ",".join(f'"{v.isoformat()}"' for v in values) + "]"


@pytest.mark.parametrize("value, text", [
    (Decimal("1.05"), '"1.05"'), (Decimal("-1.05"), '"-1.05"'), (Decimal("0.00"), '"0.00"'),
    (Decimal("-0.00"), '"-0.00"'), (Decimal("-0"), '"-0"'), (Decimal("0"), '"0"'),
    (Decimal("0.000001"), '"0.000001"'), (Decimal("-0.0000001"), '"-0.0000001"'),           # str says -1E-7
    (Decimal("1E-30"), '"0.' + "0" * 29 + '1"'), (Decimal("0E-30"), '"0.' + "0" * 30 + '"'),
    (Decimal("1E+3"), '"1000"'), (Decimal("-0E+2"), '"-0"'),
    (Decimal("-99999999999999999999999999999999999.999999999999999999999999999999"),
     '"-99999999999999999999999999999999999.999999999999999999999999999999"'),
    (type("Dec", (Decimal,), {"__str__": lambda self: "x"})("1.5"), '"1.5"'),            # a subclass: format
])
def test_decimals_are_plain_exact_strings_to_the_byte(value, text):
    assert jsonenc.dumps(value, decoded=True) == jsonenc.dumps(value) == jsonenc.reference(value) == text


@pytest.mark.parametrize("value, text", [
    (dt.timedelta(0), '"00:00:00"'), (dt.timedelta(seconds=1), '"00:00:01"'), (dt.timedelta(seconds=-1), '"-00:00:01"'),
    (dt.timedelta(hours=-838, minutes=-59, seconds=-59), '"-838:59:59"'),
    (dt.timedelta(hours=838, minutes=59, seconds=59), '"838:59:59"'),
    (dt.timedelta(days=-1), '"-24:00:00"'), (dt.timedelta(hours=25, microseconds=10), '"25:00:00.000010"'),
    (dt.timedelta(microseconds=-1), '"-00:00:00.000001"'), (dt.timedelta(seconds=-1, microseconds=500000),
                                                             '"-00:00:00.500000"'),
])
def test_time_durations_to_the_byte(value, text):
    assert jsonenc.dumps(value, decoded=True) == jsonenc.dumps(value) == jsonenc.reference(value) == text


def test_sets_bytes_and_opaque_values_to_the_byte():
    value = [frozenset({"sms", "b2b", "email", ""}), frozenset(), {"b", "a"}, frozenset({b"\x02", b"\x01"}),
             b"\x00\xff", bytearray(b"\x01"), JsonOpaque(246, b"\x00")]
    text = '[["","b2b","email","sms"],[],["a","b"],[{"hex":"01"},{"hex":"02"}],{"hex":"00ff"},{"hex":"01"},' \
           '"base64:type246:AA=="]'
    assert jsonenc.dumps(value, decoded=True) == jsonenc.dumps(value) == jsonenc.reference(value) == text


def test_a_row_of_every_kind_of_value_is_one_exact_json_line():
    after = {"id": 1, "balance": Decimal("-0.50"), "tags": frozenset({"vip", "b2b"}),
             "created": dt.datetime(2020, 7, 14, 0, 2, 6, 888584), "ts": dt.datetime(2026, 1, 1, tzinfo=UTC),
             "d": "0000-00-00", "t": dt.timedelta(hours=-30), "bin": b"\x0a", "n": None}
    rc = _row_change(list(after), after)
    assert row_text.row_json(rc) == (
        '{"file":"f","pos":4,"timestamp":"1970-01-01T00:00:00Z","server_id":1,"gtid":null,"schema":"db",'
        '"table":"t","op":"insert","before":null,"after":{"id":1,"balance":"-0.50","tags":["b2b","vip"],'
        '"created":"2020-07-14T00:02:06.888584","ts":"2026-01-01T00:00:00+00:00","d":"0000-00-00",'
        '"t":"-30:00:00","bin":{"hex":"0a"},"n":null}}')
    assert row_text.row_line(rc).endswith(' INSERT `db`.`t` {"id":1,"balance":"-0.50","tags":["b2b","vip"],'
                                          '"created":"2020-07-14T00:02:06.888584","ts":"2026-01-01T00:00:00+00:00",'
                                          '"d":"0000-00-00","t":"-30:00:00","bin":{"hex":"0a"},"n":null}')
