"""Our decoded rows, printed as `mysqlbinlog -v`/`-vv` prints them, equal what the real tools printed.

The references are outputs that real tools wrote; nothing here is derived from our own output:

* zalora_binlog-parser/expected/plaintext-mysql-bin.0N: `mysqlbinlog -vv` of MySQL 5.6.35;
* mysql-cdc-rs/expected/<ver>__<case>__dump.txt: `mysqlbinlog --hexdump -vv` of MySQL 5.7.30 and
  8.2.0 (the 8.0 dumps were saved as UTF-16 with CRLF);
* rust_mysql_common/expected/binlog_row_mysqlbinlog_verbose.result: MySQL's own test result, the
  `###` lines of `mysqlbinlog --verbose` for four NDB binlogs written by 5.1.37 (one section per
  binlog, "Verbose statements from : <file>"; names printed without backquotes, as before 5.1.67);
* fixtures/<set>/mariadb-binlog.txt: `mariadb-binlog -vv` of the MariaDB server that wrote the
  fixture (its version is in server.json);
* the installed `mariadb-binlog -vv --base64-output=decode-rows`, run now on every corpus binlog
  with row events that it can read (`make test` installs it);
* the MySQL manual's "mysqlbinlog Row Event Display" example: the BINLOG base64 of its events and
  the `-v` and `-vv` lines mysqlbinlog 5.1 printed for them.

Each binlog is decoded with `read_events` and `rows.decoder.read_rows`, rendered with
`verbose.render_rows` in the dialect of the tool that wrote the reference, and compared block by
block (one block = one row: its INSERT/UPDATE/DELETE line and everything under it).
"""
from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec.rows.decoder import ROW_OPS, read_rows
from binlog_spec.output import verbose

from conftest import CORPUS, FIXTURES, expected_counts, manifest_rows, trailing_fault
from mysqlbinlog_output import parse_verbose, read_output


@dataclass(frozen=True)
class Case:
    id: str
    binlogs: tuple[Path, ...]
    reference: Path
    flavor: str
    version: str
    verbosity: int
    section: str | None = None          # a "Verbose statements from : <name>" section of a .result


def _zalora_cases() -> list[Case]:
    base = CORPUS / "zalora_binlog-parser"
    cases = []
    for ref in sorted((base / "expected").glob("plaintext-mysql-bin.*")):
        suffix = ref.name.rsplit(".", 1)[1]
        binlog = base / ("data__fixtures__mysql-bin.01" if suffix == "01" else f"mysql-bin.{suffix}")
        if binlog.is_file():  # plaintext-mysql-bin.04 has no binlog in the corpus
            cases.append(Case(f"zalora-mysql-bin.{suffix}", (binlog,), ref, "mysql", "5.6.35", 2))
    return cases


def _cdc_cases() -> list[Case]:
    base = CORPUS / "mysql-cdc-rs"
    cases = []
    for ref in sorted((base / "expected").glob("*__dump.txt")):
        ver, name = ref.name.split("__")[:2]
        binlogs = sorted(base.glob(f"tests__events__{ver}__{name}__*"))
        if binlogs:
            cases.append(Case(f"mysql-cdc-rs-{ver}-{name}", tuple(binlogs), ref, "mysql",
                              "5.7.30" if ver == "5.7" else "8.2.0", 2))
    return cases


RESULT = CORPUS / "rust_mysql_common" / "expected" / "binlog_row_mysqlbinlog_verbose.result"
RESULT_BINLOGS = ["write-partial-row.binlog", "write-full-row.binlog", "update-partial-row.binlog",
                  "update-full-row.binlog"]


def _mysql_test_cases() -> list[Case]:
    # The result was recorded with the 5.1 mysqlbinlog of its time (names bare, so before 5.1.67).
    return [Case(f"mysql-test-{name.removesuffix('.binlog')}", (CORPUS / "rust_mysql_common" / name,), RESULT,
                 "mysql", "5.1.37", 1, section=name) for name in RESULT_BINLOGS]


def _fixture_cases() -> list[Case]:
    cases = []
    for ref in sorted(FIXTURES.glob("*/mariadb-binlog.txt")):
        server = ref.parent / "server.json"
        version = json.loads(server.read_text())["version"] if server.is_file() else "10.11"
        binlogs = tuple(sorted(ref.parent.glob("mariadb-bin.0*")))
        if binlogs:
            cases.append(Case(f"mariadb-fixture-{ref.parent.name}", binlogs, ref, "mariadb", version, 2))
    return cases


def _result_section(text: str, name: str) -> str:
    """The part of a mysql-test .result file between "Verbose statements from : <name>" and the next."""
    parts = re.split(r"^Verbose statements from : (\S+)$", text, flags=re.M)
    sections = dict(zip(parts[1::2], parts[2::2]))
    assert name in sections, f"{RESULT.name} has no section for {name}"
    return sections[name]


def expected_blocks(case: Case) -> list[list[str]]:
    text = read_output(case.reference)
    if case.section is not None:
        text = _result_section(text, case.section)
    return parse_verbose(text)


def has_row_events(paths) -> bool:
    return any(ev.type_code in ROW_OPS for ev in binlog_spec.read_events(list(paths)))


def our_blocks(case: Case) -> list[list[str]]:
    changes = read_rows(binlog_spec.read_events(list(case.binlogs)))
    return list(verbose.render_rows(changes, verbosity=case.verbosity, flavor=case.flavor, version=case.version))


def _usable(case: Case) -> bool:
    """A reference with no `###` line compares only when the binlog has no rows either: the
    mysql-cdc-rs dumps of 5.7 16_xid and 31_update_rows_v2 were made without -v."""
    return bool(expected_blocks(case)) or not has_row_events(case.binlogs)


MYSQLBINLOG_CASES = [c for c in _zalora_cases() + _cdc_cases() + _mysql_test_cases() if _usable(c)]
MARIADB_CASES = [c for c in _fixture_cases() if _usable(c)]


def assert_same_blocks(ours: list[list[str]], theirs: list[list[str]]) -> None:
    for i, (mine, real) in enumerate(zip(ours, theirs)):
        assert mine == real, f"row block {i} differs (of {len(theirs)} in the reference)"
    assert len(ours) == len(theirs), f"{len(ours)} row blocks, the reference has {len(theirs)}"


def test_every_reference_with_rows_is_compared():
    ids = {c.id for c in MYSQLBINLOG_CASES}
    assert {f"zalora-mysql-bin.0{n}" for n in (1, 2, 3, 6, 7)} <= ids
    assert {"mysql-cdc-rs-5.7-30_write_rows_v2", "mysql-cdc-rs-5.7-32_delete_rows_v2",
            "mysql-cdc-rs-8.0-31_update_rows_v2", "mysql-cdc-rs-8.0-32_delete_rows_v2"} <= ids
    assert sum(c.section is not None for c in MYSQLBINLOG_CASES) == 4
    assert sum(len(expected_blocks(c)) for c in MYSQLBINLOG_CASES) >= 60


@pytest.mark.parametrize("case", MYSQLBINLOG_CASES, ids=lambda c: c.id)
def test_rows_print_as_mysqlbinlog_printed_them(case):
    assert_same_blocks(our_blocks(case), expected_blocks(case))


@pytest.mark.parametrize("case", MARIADB_CASES, ids=lambda c: c.id)
def test_rows_print_as_mariadb_binlog_printed_them(case):
    assert_same_blocks(our_blocks(case), expected_blocks(case))


@pytest.mark.parametrize("case", MYSQLBINLOG_CASES + MARIADB_CASES, ids=lambda c: c.id)
def test_parse_verbose_keeps_every_row_line_of_a_reference(case):
    """Every `###` line of a reference (but extra-info lines) lands in a block, each block starting
    with its statement line, whatever the file's encoding and line ends."""
    text = read_output(case.reference)
    if case.section is not None:
        text = _result_section(text, case.section)
    lines = [line.rstrip("\r") for line in text.split("\n") if line.startswith("###")]
    row_lines = [line for line in lines if not line.startswith(("### Extra row", "### Row event for unknown"))]
    blocks = parse_verbose(text)
    assert sum(len(b) for b in blocks) == len(row_lines)
    assert all(re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) \S", b[0]) for b in blocks)


# Corpus binlogs with row events that the installed mariadb-binlog cannot print, and why.
MARIADB_BINLOG_CANNOT = {
    "mbcj_osheroff/mysql-bin.sakila.gz": "it does not read gzip (its sibling mysql-bin.sakila is compared)",
    "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001": "it stops at the tagged GTID event (42)",
    "rust_mysql_common/json.binlog.000001": "it stops at MySQL JSON columns (and rows.py does not decode "
                                            "PARTIAL_UPDATE_ROWS_EVENT)",
    "rust_mysql_common/json-opaque.binlog": "it prints no row of a table with a MySQL JSON column",
    "rust_mysql_common/vector.binlog": "it prints no row of a table with a MySQL VECTOR column",
    "rust_mysql_common/ver_5_1-wl2325_r.001": "it cannot read the pre-GA row events (20-22)",
    "rust_mysql_common/ver_5_1-wl2325_s.001": "it cannot read the pre-GA row events (20-22)",
}
MARIADB_BINLOG = shutil.which("mariadb-binlog")


def _corpus_files_with_rows() -> list[dict[str, str]]:
    return [row for row in manifest_rows()
            if any(code in ROW_OPS for code in expected_counts(row)) and row["file"] not in MARIADB_BINLOG_CANNOT]


def rows_until_fault(path: Path, row: dict[str, str]) -> list:
    """Every row change of a binlog; a file cut at the end (MANIFEST "WALK:trailing") gives those before it."""
    changes = []
    try:
        changes.extend(read_rows(binlog_spec.read_events([path])))
    except binlog_spec.TruncatedEventError as exc:
        if exc.offset != trailing_fault(row):
            raise
    return changes


@pytest.mark.parametrize("row", _corpus_files_with_rows(), ids=lambda r: r["file"])
def test_rows_print_as_the_installed_mariadb_binlog_prints_them(row):
    assert MARIADB_BINLOG is not None, "mariadb-binlog is required (make test installs mariadb-client)"
    path = CORPUS / row["file"]
    run = subprocess.run([MARIADB_BINLOG, "--no-defaults", "-vv", "--base64-output=decode-rows", str(path)],
                         capture_output=True, timeout=300)
    theirs = parse_verbose(run.stdout.decode("utf-8", errors="surrogateescape"))
    assert theirs, f"mariadb-binlog printed no row (exit {run.returncode}): {run.stderr[:300]!r}"
    ours = list(verbose.render_rows(rows_until_fault(path, row), verbosity=2, flavor="mariadb"))
    assert_same_blocks(ours, theirs)


# https://dev.mysql.com/doc/refman/8.0/en/mysqlbinlog-row-events.html: CREATE TABLE t (id INT NOT NULL,
# name VARCHAR(20) NOT NULL, date DATE NULL); INSERT (1, 'apple', NULL); UPDATE SET name = 'pear',
# date = '2009-01-01'; DELETE. The events as the manual shows them in BINLOG '...' statements:
MANUAL_EVENTS = [
    "fAS3SBMBAAAALAAAANoAAAAAABEAAAAAAAAABHRlc3QAAXQAAwMPCgIUAAQ=",
    "fAS3SBcBAAAAKAAAAAIBAAAQABEAAAAAAAEAA//8AQAAAAVhcHBsZQ==",
    "fAS3SBMBAAAALAAAAC4BAAAAABEAAAAAAAAABHRlc3QAAXQAAwMPCgIUAAQ=",
    "fAS3SBgBAAAANgAAAGQBAAAQABEAAAAAAAEAA////AEAAAAFYXBwbGX4AQAAAARwZWFyIbIP",
    "fAS3SBMBAAAALAAAAJABAAAAABEAAAAAAAAABHRlc3QAAXQAAwMPCgIUAAQ=",
    "fAS3SBkBAAAAKgAAALoBAAAQABEAAAAAAAEAA//4AQAAAARwZWFyIbIP",
]
# ... and what `mysqlbinlog -vv` printed for them (the manual's -v output is the same without comments).
# The NULL DATE shows "VARSTRING(20)": before 5.7 only a printed value set the type string.
MANUAL_VV = """\
### INSERT INTO test.t
### SET
###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
###   @2='apple' /* VARSTRING(20) meta=20 nullable=0 is_null=0 */
###   @3=NULL /* VARSTRING(20) meta=0 nullable=1 is_null=1 */
### UPDATE test.t
### WHERE
###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
###   @2='apple' /* VARSTRING(20) meta=20 nullable=0 is_null=0 */
###   @3=NULL /* VARSTRING(20) meta=0 nullable=1 is_null=1 */
### SET
###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
###   @2='pear' /* VARSTRING(20) meta=20 nullable=0 is_null=0 */
###   @3='2009:01:01' /* DATE meta=0 nullable=1 is_null=0 */
### DELETE FROM test.t
### WHERE
###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
###   @2='pear' /* VARSTRING(20) meta=20 nullable=0 is_null=0 */
###   @3='2009:01:01' /* DATE meta=0 nullable=1 is_null=0 */
"""
MANUAL_V = """\
### INSERT INTO test.t
### SET
###   @1=1
###   @2='apple'
###   @3=NULL
### UPDATE test.t
### WHERE
###   @1=1
###   @2='apple'
###   @3=NULL
### SET
###   @1=1
###   @2='pear'
###   @3='2009:01:01'
### DELETE FROM test.t
### WHERE
###   @1=1
###   @2='pear'
###   @3='2009:01:01'
"""


@pytest.fixture
def manual_binlog(tmp_path) -> Path:
    """The manual's six events behind the magic and FORMAT_DESCRIPTION_EVENT of a real 5.1 binlog."""
    donor = (CORPUS / "rust_mysql_common" / "write-full-row.binlog").read_bytes()
    fde_size = int.from_bytes(donor[4 + 9:4 + 13], "little")
    path = tmp_path / "manual-bin.000001"
    path.write_bytes(donor[:4 + fde_size] + b"".join(base64.b64decode(e) for e in MANUAL_EVENTS))
    return path


@pytest.mark.parametrize("verbosity, printed", [(1, MANUAL_V), (2, MANUAL_VV)], ids=["-v", "-vv"])
def test_the_manual_example_prints_as_mysqlbinlog_5_1_printed_it(manual_binlog, verbosity, printed):
    changes = read_rows(binlog_spec.read_events([manual_binlog]))
    ours = list(verbose.render_rows(changes, verbosity=verbosity, flavor="mysql", version="5.1.26"))
    assert_same_blocks(ours, parse_verbose(printed))
