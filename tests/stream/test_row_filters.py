"""--key and --where (stream.row_filters) keep what filtering the full `rows --format jsonl` output with an
independent predicate keeps, on the fixtures and the corpus; their errors are exit 2 naming the option, the
table and the column; sql's scripts and analyze take them too."""
from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from binlog_spec.cli import main
from conftest import CORPUS, manifest_rows

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "demo" / "mariadb-bin.000001")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def jsonl(*argv: str) -> list[dict]:
    code, out, err = run("rows", "--format", "jsonl", *argv)
    assert code in (0, 1), err
    return [json.loads(line) for line in out.splitlines()]


def images(change: dict):
    return [i for i in (change["before"], change["after"]) if i is not None]


# -- the fixtures ---------------------------------------------------------------------------------------

def test_key_keeps_the_changes_of_that_row_in_either_image():
    full = jsonl(DEMO)
    for key in (1, 2, 3):
        want = [c for c in full if c["table"] == "customers" and any(i.get("id") == key for i in images(c))]
        assert want, key
        assert jsonl("--table", "shop.customers", "--key", str(key), DEMO) == want


def test_the_text_output_is_the_full_text_output_filtered_row_indexes_included():
    code, full, _ = run("rows", "--table", "shop.customers", DEMO)
    lines = full.splitlines()
    want = lines[:1] + [line for line in lines[1:] if '{"id":2,' in line]
    code, got, err = run("rows", "--table", "shop.customers", "--key", "2", DEMO)
    assert code == 0, err
    assert got.splitlines() == want
    assert " [1] " in want[1]       # (the second row of its event)


def test_where_keeps_the_changes_where_the_before_or_after_image_satisfies_it():
    full = jsonl(DEMO)
    cases = {
        "balance > 0": lambda i: Decimal(i["balance"]) > 0,
        "balance BETWEEN -20 AND 0 OR name LIKE 'a%'": lambda i: -20 <= Decimal(i["balance"]) <= 0
        or i["name"].lower().startswith("a"),
        "email IS NULL": lambda i: "email" in i and i["email"] is None,
        "NOT (id IN (1, 3)) AND email IS NOT NULL": lambda i: i["id"] not in (1, 3) and i.get("email") is not None,
        "name = 'ADA   '": lambda i: i["name"].lower() == "ada",     # PAD SPACE, case-insensitive
        "created >= '2026-01-01 09:01:00'": lambda i: i["created"] >= "2026-01-01T09:01:00",
        # NULL is unknown, and NOT unknown is unknown: a NULL email is not kept either way
        "NOT (email = 'ada@example.com')": lambda i: i.get("email") is not None and i["email"] != "ada@example.com",
        "email <> 'ada@example.com' OR id != 2": lambda i: (i.get("email") is not None
                                                            and i["email"] != "ada@example.com") or i["id"] != 2,
        "name NOT LIKE '%r%' AND balance < 100.5": lambda i: "r" not in i["name"].lower()
        and Decimal(i["balance"]) < Decimal("100.5"),
        "email LIKE '%!_%' ESCAPE '!' OR name LIKE '_d_'": lambda i: "_" in (i.get("email") or "")
        or (len(i["name"]) == 3 and i["name"][1].lower() == "d"),
        "balance IN (100.5, -12.340) AND created BETWEEN '2026-01-01' AND '2026-01-02'":
            lambda i: Decimal(i["balance"]) in (Decimal("100.5"), Decimal("-12.34")),
    }
    for expr, pred in cases.items():
        want = [c for c in full if c["table"] == "customers" and any(pred(i) for i in images(c))]
        assert jsonl("--table", "shop.customers", "--where", expr, DEMO) == want, expr


def test_sql_scripts_forward_and_rollback_hold_only_the_kept_rows():
    code, out, err = run("sql", "--sql2", "--table", "shop.customers", "--key", "2", DEMO)
    assert code == 0, err
    dml = [line for line in out.splitlines() if line.startswith(("INSERT", "UPDATE", "DELETE"))]
    assert dml == ["INSERT INTO `shop`.`customers` VALUES (2, _utf8mb4 X'426AC3B6726E', NULL, 0.00, "
                   "'2026-01-01 09:01:00');"]
    code, out, err = run("sql", "--sql2", "--rollback", "--table", "shop.customers", "--key", "2", DEMO)
    assert code == 0, err
    dml = [line for line in out.splitlines() if line.startswith(("INSERT", "UPDATE", "DELETE"))]
    assert dml == ["DELETE FROM `shop`.`customers` WHERE `id`=2;"]
    code, out, err = run("sql", "--sql", "--table", "shop.customers", "--key", "1", DEMO)
    assert code == 0 and out.count("`id`=1") + out.count("(1,") >= 1, err


def test_analyze_counts_only_the_kept_rows():
    code, out, err = run("analyze", "--format", "json", "--table", "shop.customers", "--key", "2", DEMO)
    assert code == 0, err
    report = json.loads(out)
    assert report["summary"]["rows"] == 1
    assert {"option": "--key", "value": "2"} in report["filters"]       # (the report names the row filter)


# -- errors -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (("rows", "--key", "2"), "--key: give exactly one table, --table DB.T"),
    (("rows", "--table", "shop.*", "--key", "2"), "--key: give exactly one table"),
    (("rows", "--table", "shop.orders", "--table", "shop.customers", "--key", "2"), "--key: give exactly one"),
    (("rows", "--table", "shop.customers", "--key", "abc"), "--key: 'abc' does not fit column shop.customers.id"),
    (("rows", "--table", "shop.customers", "--key", "1,2"), "--key: the key of shop.customers is (id): give 1 value"),
    (("rows", "--table", "shop.orders", "--key", "-1"), "--key: '-1' does not fit column shop.orders.id"),
    (("rows", "--where", "nosuch = 1"), "--where: table shop.customers has no column nosuch"),
    (("rows", "--where", "balance > 0"), "--where: table shop.orders has no column balance"),
    (("rows", "--table", "shop.customers", "--where", "id = 'x'"), "--where: 'x' does not fit column shop.customers.id"),
    (("rows", "--table", "shop.customers", "--where", "created < 'yesterday'"), "does not fit column shop.customers.created"),
    (("rows", "--where", "upper(name) = 'A'"), "--where: unsupported: UPPER(name)"),
    (("rows", "--where", "id = name"), "compare a column with literals only"),
    (("rows", "--where", "id = = 1"), "--where: cannot parse"),
    (("rows", "--where", " "), "--where: empty expression"),
    (("sql", "--where", "balance > 0"), "--where: table shop.orders has no column balance"),     # (base64)
    (("sql", "--sql2", "--rollback", "--where", "balance > 0"), "--where: table shop.orders has no column balance"),
    (("analyze", "--table", "shop.customers", "--where", "vip = 'no'"), "--where: table shop.customers has no column vip"),
])
def test_errors_are_exit_2_naming_the_option_table_and_column(argv, message):
    code, out, err = run(*argv, DEMO)
    assert code == 2
    assert err.startswith("binlog-spec: error: --") and message in err, err
    if argv[0] == "sql":
        assert out == ""        # nothing of the script is written


def test_the_base64_script_holds_the_kept_rows_only():
    code, out, err = run("sql", "-v", "--table", "shop.customers", "--key", "2", DEMO)
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("### INSERT") or line.startswith("### UPDATE")
            or line.startswith("### DELETE")]
    assert rows == ["### INSERT INTO `shop`.`customers`"]
    assert "###   @1=2" in out and "###   @1=1" not in out


def test_the_key_and_the_names_may_come_from_schema(tmp_path):
    """A MySQL 5.7 binlog without metadata: --key needs --schema's PRIMARY KEY, --where its names."""
    src = str(tmp_path / "mysql-bin.000005")       # (its first 3283 bytes: the xxd dump it was rebuilt from added one)
    (tmp_path / "mysql-bin.000005").write_bytes((CORPUS / "MyFlash" / "haha.000005").read_bytes()[:3283])
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE `test3` (`a` int NOT NULL PRIMARY KEY, `b` int, `c` int);\n")
    code, _, err = run("rows", "--table", "test.test3", "--key", "4", src)
    assert code == 2 and "--key: table test.test3 has no primary key or NOT NULL unique key: its TABLE_MAP has " \
        "no column metadata (binlog_row_metadata=FULL, or give its DDL with --schema)" in err, err
    code, _, err = run("rows", "--table", "test.test3", "--where", "a = 4", src)
    assert code == 2 and "--where: table test.test3 has no column a (its column names are unknown" in err, err
    full = jsonl("--schema", str(schema), "--schema-database", "test", src)
    for key in ("4", "8", "5"):
        want = [c for c in full if c["table"] == "test3" and any(i["a"] == int(key) for i in images(c))]
        got = jsonl("--schema", str(schema), "--schema-database", "test", "--table", "test.test3", "--key", key, src)
        assert got == want and (want or key == "5")
        assert jsonl("--schema", str(schema), "--schema-database", "test", "--table", "test.test3", "--where",
                     f"b = {key} OR c = {key}", src) == want


def test_nothing_matched_says_so():
    code, out, err = run("rows", "--table", "shop.customers", "--key", "99", DEMO)
    assert code == 0 and out == ""
    assert "binlog-spec: note: --key '99': no row change matched (of 5 looked at)" in err


# -- the corpus: --where on a column of each table equals filtering the full output ----------------------

def _corpus_files():
    return [CORPUS / r["file"] for r in manifest_rows() if (CORPUS / r["file"]).exists()]


def test_where_on_the_corpus_equals_filtering_the_full_rows_output():
    checked = 0
    for path in _corpus_files():
        code, out, _ = run("rows", "--format", "jsonl", str(path))
        if code not in (0, 1) or not out:
            continue
        full = [json.loads(line) for line in out.splitlines()]
        seen = set()
        for c in full:
            t = (c["schema"], c["table"])
            if t in seen or "." in t[0] + t[1] or "*" in t[0] + t[1]:
                continue
            seen.add(t)
            image = images(c)[0]
            col = next((k for k, v in image.items() if type(v) is int and not k.startswith("@")), None)
            if col is None:
                continue
            value = image[col]
            want = [d for d in full if (d["schema"], d["table"]) == t
                    and any(i.get(col) == value for i in images(d))]
            code, got, err = run("rows", "--format", "jsonl", "--table", f"{t[0]}.{t[1]}", "--where",
                                 f"`{col}` = {value}", str(path))
            assert code in (0, 1), (path, err)
            assert [json.loads(line) for line in got.splitlines()] == want, (path, t, col)
            checked += 1
    assert checked >= 20
