"""Filters that keep nothing say so on stderr (a note, exit code 0), for every command, in one process,
under --jobs and where the compiled loops run; a table or schema filter that names nothing the files have
is named, with the nearest names they do have. (The demo's tables are shop.customers and shop.orders:
fixtures/demo/workload.sql.)"""
from __future__ import annotations

import io

import pytest

from binlog_spec import cli
from binlog_spec.cli import jobs

from conftest import FIXTURES

DEMO = str(FIXTURES / "demo" / "mariadb-bin.000001")
COMMANDS = [["events"], ["rows"], ["sql"], ["sql", "-v"], ["sql", "--sql"], ["sql", "--sql2"],
            ["sql", "--rollback"], ["sql", "--sql2", "--rollback"], ["analyze"]]
#: The demo's transactions are all on 2026-01-01 (UTC).
AFTER_THE_LAST = ["--start-datetime", "2030-01-01 00:00:00Z"]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("binlog-spec: note: ")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_table_filter_with_a_typo_names_it_and_the_nearest_table_of_the_files(command):
    code, _, err = run(*command, "--table", "shop.custmers", DEMO)
    assert code == 0, err
    named = [n for n in notes(err) if "--table shop.custmers" in n]
    assert len(named) == 1 and "no TABLE_MAP or statement" in named[0] and "shop.customers" in named[0], err
    code, _, err = run(*command, "--table", "shop.customers", DEMO)       # a table the files have
    assert code == 0 and not [n for n in notes(err) if "TABLE_MAP" in n or "kept no" in n], err


@pytest.mark.parametrize("command", [["rows"], ["sql", "--sql2", "--rollback"], ["sql", "--rollback"]], ids=" ".join)
def test_a_typo_in_the_table_leaves_no_row_change_and_says_so(command):
    code, out, err = run(*command, "--table", "shop.custmers", DEMO)
    assert code == 0
    if command != ["sql", "--rollback"]:        # (the base64 undo has the FORMAT_DESCRIPTION's BINLOG block)
        assert "INSERT" not in out and "DELETE" not in out and "insert" not in out
    assert any("kept no rows event" in n for n in notes(err)), err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_date_window_with_no_transaction_says_the_filters_kept_nothing(command):
    code, out, err = run(*command, *AFTER_THE_LAST, DEMO)
    assert code == 0, err
    kept = [n for n in notes(err) if "kept no transaction and no statement" in n]
    assert len(kept) == 1 and "--start-datetime" in kept[0], err


def test_a_schema_filter_with_a_typo_names_it_and_the_nearest_schema():
    code, out, err = run("rows", "--database", "shpo", DEMO)
    assert code == 0 and out == ""
    assert any("--database shpo" in n and "(nearest: shop)" in n for n in notes(err)), err


def test_a_table_named_only_by_a_longer_name_in_a_statement_is_still_unknown():
    """`order` is in no statement of the demo as a name of its own: only inside `orders`."""
    code, _, err = run("sql", "--sql2", "--table", "order", DEMO)
    assert code == 0 and any("--table order:" in n and "orders" in n for n in notes(err)), err


@pytest.mark.parametrize("command", [["rows"], ["events"], ["sql", "--sql2"], ["sql"]], ids=" ".join)
@pytest.mark.parametrize("filters", [["--table", "shop.custmers"], AFTER_THE_LAST], ids=["typo", "window"])
def test_the_notes_of_a_jobs_run_are_those_of_one_process(command, filters, monkeypatch):
    monkeypatch.setenv(jobs.PIECE_ENV, "400")      # the demo cut into several pieces
    # (these filters run in one process where the compiled skipping loop runs: the pieces as the pure core cuts them)
    monkeypatch.setattr(jobs, "skips_in_one_process", lambda filters: False)
    ran = []
    real = jobs._run_pieces
    monkeypatch.setattr(jobs, "_run_pieces", lambda *a, **k: ran.append(1) or real(*a, **k))
    one = run(*command, *filters, "--jobs", "1", DEMO)
    several = run(*command, *filters, "--jobs", "3", DEMO)
    assert ran, "the run was cut into pieces"
    assert notes(one[2]) and several == one


@pytest.mark.parametrize("command", [["rows"], ["events"], ["sql", "--sql2"], ["sql"]], ids=" ".join)
def test_a_run_the_skipping_loop_filters_is_not_cut_into_pieces(command, monkeypatch):
    """Pieces read every event; one process skips what the filters drop (a --table run on 2 cores took ten
    times the CPU of one process)."""
    if not jobs.skips_in_one_process(jobs.api.FilterOptions(tables=("shop.places",))):
        pytest.skip("the pure-Python core has no skipping loop: its filtered runs are cut into pieces")
    monkeypatch.setenv(jobs.PIECE_ENV, "400")
    ran = []
    monkeypatch.setattr(jobs, "_run_pieces", lambda *a, **k: ran.append(1))
    code, out, err = run(*command, "--table", "shop.customers", "--jobs", "3", DEMO)
    assert code == 0 and out and not ran, err
