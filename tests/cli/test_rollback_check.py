"""sql --rollback's conflict check on the command line: exit 5 and nothing on stdout or -o, --force, the
help, and --jobs N giving what one process gives."""
from __future__ import annotations

import io
import time

import pytest

from binlog_spec.cli import EXIT_CONFLICT, build_parser, jobs, main
from conftest import FIXTURES

TYPES = FIXTURES / "types-full" / "mariadb-bin.000001"
#: fixtures/types-full: the time the transactions of the updates and deletes begin (after the inserts)
LATER = "2026-01-01 00:03:00"


def run(argv: list) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return out.getvalue(), err.getvalue(), code


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("mode", [[], ["--sql"], ["--sql2"]], ids=["base64", "sql", "sql2"])
def test_a_conflict_writes_nothing_and_exits_5(mode, tmp_path):
    out, err, code = run(["sql", *mode, "--rollback", "--stop-position", 60000, TYPES])
    assert (out, code, EXIT_CONFLICT) == ("", 5, 5)
    assert err.count("binlog-spec: conflict: row `coltypes`.") == 13
    target = tmp_path / "undo.sql"
    target.write_text("before")
    assert run(["sql", *mode, "--rollback", "--stop-position", 60000, "-o", target, TYPES])[2] == 5
    assert target.read_text() == "before"         # -o left as it was


def test_force_writes_the_undo_of_the_window_and_still_reports(tmp_path):
    cut = tmp_path / "mariadb-bin.000001"
    cut.write_bytes(TYPES.read_bytes()[:58797])       # where transaction 0-1-55 starts
    out, err, code = run(["sql", "--sql2", "--rollback", "--force", "--stop-position", 58797, TYPES])
    assert code == 1 and err.count("binlog-spec: conflict: ") > 10 and "written anyway (--force)" in err
    whole_cut = run(["sql", "--sql2", "--rollback", cut])
    assert whole_cut[2] == 0 and "conflict" not in whole_cut[1]
    assert out == whole_cut[0]


def test_the_binary_rollback_is_checked_too(tmp_path):
    target = tmp_path / "undo.bin"
    _, err, code = run(["sql", "--output-format", "binlog", "-o", target, "--rollback", "--stop-position", 60000,
                        TYPES])
    assert code == 5 and not target.exists() and "nothing written" in err
    assert run(["sql", "--output-format", "binlog", "-o", target, "--rollback", "--force", "--stop-position",
                60000, TYPES])[2] == 1 and target.stat().st_size > 0


def test_without_a_filter_everything_is_undone_and_nothing_is_checked():
    out, err, code = run(["sql", "--sql2", "--rollback", TYPES])
    assert code == 0 and out and "conflict" not in err


def test_the_help_says_only_the_files_given_are_checked():
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["sql"].format_help().split())
    assert "Only the files given are checked" in text and "exit code is 5" in text and "--force" in text


@pytest.mark.parametrize("argv", [
    ["sql", "--sql2", "--rollback", "--stop-datetime", LATER],
    ["sql", "--sql", "--rollback", "--force", "--stop-datetime", LATER],
    ["sql", "--sql2", "--rollback", "--start-datetime", LATER],
])
@pytest.mark.parametrize("pieces", [False, True], ids=["as-run", "parent-check"])
def test_jobs_give_what_one_process_gives(argv, pieces, monkeypatch):
    """Where the check's compiled loop runs, a checked rollback runs in one process under --jobs too; the
    pieces (the parent checks the whole input first) are what the pure-Python core runs, forced here."""
    from binlog_spec import compiled
    alone = compiled.load("binlog_spec.output.rollback._ccheck") is not None and not pieces
    if pieces:
        monkeypatch.setattr(jobs, "_checked_rollback_runs_alone", lambda args: False)
    modes, mode_of = [], jobs.mode_of
    monkeypatch.setattr(jobs, "mode_of", lambda args: modes.append(mode_of(args)) or modes[-1])
    monkeypatch.setenv(jobs.PIECE_ENV, "20000")
    one = run([*argv, "--jobs", "1", TYPES])
    modes.clear()
    many = run([*argv, "--jobs", "3", TYPES])
    assert modes and all((m is None) == alone for m in modes), modes
    assert many == one
    assert ("conflict" in one[1]) == ("--stop-datetime" in argv)
