"""sql --sql/--sql2 never half-writes a script: a binlog whose rows cannot be written (column names
unknown) writes nothing, names each table with its file and offset and what to do, and exits 6, forward
and --rollback, to stdout, to -o and under --jobs; a filter that leaves the table out lets the script
through. (The server-made cases are in tests/output/sql/test_writable_server.py.)"""
from __future__ import annotations

import io
import os

import pytest

from binlog_spec.cli import EXIT_BAD_INPUT, EXIT_UNWRITABLE, jobs, main
from conftest import CORPUS, FIXTURES

#: MySQL 5.1, no column names in the TABLE_MAPs and no CREATE TABLE in the file: its statements
#: (`USE carsales; INSERT INTO phpmyadmin.pma_history ...`) come before the first rows event, of
#: `carsales`.`carsales` at offset 2053, which MANIFEST.tsv counts with 16 more (DELETE_ROWS_V1 x17).
NAMELESS = CORPUS / "ShipleyD_xampp51" / "mysql-bin.000057"


def run(argv: list) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return out.getvalue(), err.getvalue(), code


@pytest.mark.parametrize("mode", [["--sql2"], ["--sql"], ["--sql2", "--rollback"], ["--sql2", "--replace"]],
                         ids=["sql2", "sql", "rollback", "replace"])
def test_a_script_whose_column_names_are_unknown_writes_nothing_and_exits_6(mode):
    out, err, code = run(["sql", *mode, "--jobs", "1", NAMELESS])
    assert (out, code, EXIT_UNWRITABLE) == ("", 6, 6)
    lines = err.splitlines()
    assert lines[0].startswith(f"binlog-spec: error: {NAMELESS}: offset 2053: DELETE_ROWS_EVENT_V1: "
                               "`carsales`.`carsales` (and 16 more rows events of it): column names are unknown")
    assert "--schema FILE" in lines[0] and "--exclude-table carsales.carsales" in lines[0]
    assert lines[1].startswith("binlog-spec: error: nothing written:")
    assert len(lines) == 2


def test_the_exit_code_of_an_unwritable_script_is_not_that_of_a_broken_binlog():
    assert EXIT_UNWRITABLE not in (EXIT_BAD_INPUT, 0, 1, 2, 4, 5, 70)


def test_an_unwritable_script_leaves_no_output_file(tmp_path):
    target = tmp_path / "out.sql"
    assert run(["sql", "--sql2", "-o", target, NAMELESS])[2] == EXIT_UNWRITABLE
    assert not target.exists() and os.listdir(tmp_path) == []
    target.write_text("kept")
    assert run(["sql", "--sql2", "-o", target, NAMELESS])[2] == EXIT_UNWRITABLE
    assert target.read_text() == "kept"


def test_jobs_refuse_in_the_parent_before_any_piece_writes(monkeypatch):
    monkeypatch.setenv(jobs.PIECE_ENV, str(os.path.getsize(NAMELESS) // 4))
    for mode in (["--sql2"], ["--sql2", "--rollback"]):
        one = run(["sql", *mode, "--jobs", "1", NAMELESS])
        assert run(["sql", *mode, "--jobs", "3", NAMELESS]) == one
        assert one[0] == "" and one[2] == EXIT_UNWRITABLE


def test_a_filter_that_leaves_the_nameless_table_out_lets_the_script_through():
    out, err, code = run(["sql", "--sql2", "--exclude-table", "carsales.carsales", NAMELESS])
    assert code == 0, err
    assert out.startswith("SET NAMES utf8mb4;") and "pma_history" in out and "`carsales`.`carsales`" not in out
    out, err, code = run(["sql", "--sql2", "--database", "phpmyadmin", NAMELESS])
    assert code == 0, err


def test_a_filtered_run_of_binlogs_with_no_problem_is_cleared_by_the_scan_of_the_whole_input(monkeypatch):
    # (FULL metadata: no table lacks its names, so no selection of it does; no second read of the events)
    from binlog_spec.cli import sql_precheck
    demo = FIXTURES / "demo" / "mariadb-bin.000001"
    argv = ["sql", "--sql2", "--table", "shop.orders", "--stop-datetime", "2026-01-01 00:03:00", "--timezone",
            "UTC", demo]
    expected = run(argv)
    assert expected[2] == 0 and "`shop`.`orders`" in expected[0]

    def no_pass(*args, **kwargs):
        raise AssertionError("the pre-pass read the filtered events")
    monkeypatch.setattr(sql_precheck, "_pass", no_pass)
    assert run(argv) == expected


def test_a_filtered_run_of_minimal_metadata_whose_ddl_names_every_table_is_cleared_by_one_pass_over_it(monkeypatch):
    # (binlog_row_metadata=MINIMAL, the CREATE TABLEs in the file: the scan finds tables without names, the
    # exact pass over the whole input finds their names; the filtered events are not read again)
    from binlog_spec.cli import sql_precheck
    log = FIXTURES / "types-minimal" / "mariadb-bin.000001"
    argv = ["sql", "--sql2", "--exclude-table", "nothing.here", log]
    expected = run(argv)
    assert expected[2] == 0 and "INSERT INTO" in expected[0]
    passes = []
    real = sql_precheck._pass

    def counted(args, options, schema, bodies, exact, filters=None):
        passes.append((exact, filters))
        return real(args, options, schema, bodies, exact, *(() if filters is None else (filters,)))
    monkeypatch.setattr(sql_precheck, "_pass", counted)
    assert run(argv) == expected
    assert len(passes) == 1 and passes[0][0] and not passes[0][1].active, passes


def test_a_filter_that_keeps_the_nameless_table_is_refused_at_its_first_kept_event():
    out, err, code = run(["sql", "--sql2", "--table", "carsales.carsales", "--start-position", 2053, NAMELESS])
    assert (out, code) == ("", EXIT_UNWRITABLE)
    assert f"{NAMELESS}: offset 2053: " in err


def _piped(argv: list, data: bytes):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "binlog_spec", *map(str, argv)], input=data, capture_output=True)


def test_standard_input_is_checked_before_the_first_byte_too():
    """`cat f | binlog-spec sql --sql2 -`: stdin is copied so that the pre-pass can read it; nothing is
    written, and the lines name (stdin)."""
    r = _piped(["sql", "--sql2", "-"], NAMELESS.read_bytes())
    assert (r.stdout, r.returncode) == (b"", EXIT_UNWRITABLE)
    assert r.stderr.decode().startswith("binlog-spec: error: (stdin): offset 2053: DELETE_ROWS_EVENT_V1: "
                                        "`carsales`.`carsales`")


def test_standard_input_that_can_be_written_is_read_whole_after_the_pre_pass():
    """The run after the pre-pass reads the copy from its start: the same script as from the file."""
    from conftest import FIXTURES
    demo = FIXTURES / "demo" / "mariadb-bin.000001"
    piped = _piped(["sql", "--sql2", "--rollback", "-"], demo.read_bytes())
    from_file = _piped(["sql", "--sql2", "--rollback", demo], b"")
    assert piped.returncode == from_file.returncode == 0
    assert piped.stdout == from_file.stdout and b"INSERT INTO" in piped.stdout
