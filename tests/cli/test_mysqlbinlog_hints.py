"""A mysqlbinlog / mariadb-binlog option that binlog-spec spells differently gets a one-line hint, and any
bad command line is one line naming the option (no usage block), exit code 2."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES

DEMO = str(FIXTURES / "demo" / "mariadb-bin.000001")


def run(*argv):
    r = subprocess.run([sys.executable, "-m", "binlog_spec", *argv], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "usage:" not in err and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, told", [
    (["sql", "--flashback"], "sql --rollback"),
    (["sql", "-B"], "sql --rollback"),
    (["sql", "--base64-output=decode-rows", "-v"], "binlog-spec rows"),
    (["sql", "--base64-output=decode-rows", "-v"], "sql -v"),
    (["sql", "--result-file=undo.sql"], "-o FILE"),
    (["sql", "-r", "undo.sql"], "-o FILE"),
    (["rows", "-T", "customers"], "--table"),
    (["events", "--hexdump"], "no hex dump"),
    (["events", "-H"], "no hex dump"),
    (["sql", "--short-form"], "sql --sql2"),
    (["sql", "-s"], "sql --sql2"),
    (["sql", "-R"], "reading from a live server is not supported yet"),
    (["sql", "--read-from-remote-server"], "reading from a live server is not supported yet"),
    (["sql", "--stop-never"], "reading from a live server is not supported yet"),
])
def test_a_mysqlbinlog_option_gets_one_line_with_binlog_specs_spelling_and_exit_2(argv, told):
    code, out, err = run(*argv, DEMO)
    line = one_line(err)
    assert code == 2 and out == ""
    assert line.startswith(f"binlog-spec: error: {argv[1].split('=')[0]} is ") and told in line, line


def test_the_hint_is_given_when_the_option_comes_before_the_command():
    code, out, err = run("--flashback", DEMO)         # mysqlbinlog's order: options, then the files
    assert code == 2 and "sql --rollback" in one_line(err)


def test_a_file_named_like_an_option_after_double_dash_gets_no_hint():
    code, _, err = run("rows", "--foo", "--", "-B")
    line = one_line(err)
    assert code == 2 and "--foo" in line and "flashback" not in line


@pytest.mark.parametrize("argv, option", [
    (["rows", "--frobnicate", DEMO], "--frobnicate"),
    (["rows", "--format", "xml", DEMO], "--format"),
    (["analyze", "--top", "many", DEMO], "--top"),
    (["rows", "--jobs", "0", DEMO], "--jobs"),
    (["sql", "--sql", "--sql2", DEMO], "--sql2"),
    (["rows"], "FILE"),
    (["nosuchcommand", DEMO], "nosuchcommand"),
])
def test_an_unknown_option_or_a_bad_value_is_one_line_naming_it_and_exit_2(argv, option):
    code, out, err = run(*argv)
    assert code == 2 and out == "" and option in one_line(err)


def test_the_short_options_hinted_mean_what_mariadb_binlog_help_says():
    """-T is mariadb-binlog's --table and -B its --flashback (mysqlbinlog has neither): the hints say what
    the installed mariadb-binlog's own --help says each short option stands for."""
    from binlog_spec.cli.hints import HINTS

    tool = shutil.which("mariadb-binlog")
    assert tool, "mariadb-binlog is installed with the test server"
    help_text = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=60).stdout
    shorts = dict(re.findall(r"^\s+(-[A-Za-z]), (--[a-z0-9-]+)", help_text, re.M))
    checked = 0
    for option, (whose, long, _) in HINTS.items():
        if long and "mariadb-binlog" in whose:
            assert shorts.get(option) == long, (option, long, shorts.get(option))
            checked += 1
        elif not long and "mariadb-binlog" in whose:
            assert re.search(rf"^\s+(-[A-Za-z], )?{re.escape(option)}\b", help_text, re.M), option
    assert checked >= 8
