"""The options that reach a server (cli/remote_arguments.py), read as the mysql clients read them: -p alone
prompts and leaves the next argument alone, the [client] group of an option file, MYSQL_PWD, what wins
over what, and a password given on the command line wiped from the process's command line."""
from __future__ import annotations

import argparse
import os
import pty
import subprocess
import sys
import time

import pytest

from binlog_spec.cli.remote_arguments import (PROMPT, add_connection_arguments, connect_options, password_argv,
                                              read_defaults)
from binlog_spec.errors import UsageError


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_connection_arguments(p)
    p.add_argument("logs", nargs="*")
    return p.parse_args(password_argv(argv))


@pytest.fixture(autouse=True)
def no_home_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MYSQL_PWD", raising=False)


def test_a_bare_p_prompts_and_keeps_the_next_argument_a_log_name():
    args = parse(["-R", "--host", "db1", "-u", "repl", "-p", "mysql-bin.000042"])
    assert args.password is PROMPT and args.logs == ["mysql-bin.000042"] and args.remote
    asked = []
    opts = connect_options(args, prompt=lambda text: asked.append(text) or "typed")
    assert asked == ["Enter password: "] and opts.password == "typed"
    assert (opts.host, opts.user, opts.port) == ("db1", "repl", 3306)
    assert parse(["--password", "mysql-bin.000042"]).logs == ["mysql-bin.000042"]


def test_a_glued_value_is_the_password_and_never_shown():
    for argv in (["-ps3cret"], ["--password=s3cret"]):
        opts = connect_options(parse(argv))
        assert opts.password == "s3cret" and "s3cret" not in repr(opts)
    assert password_argv(["--", "-p", "-px"]) == ["--", "-p", "-px"]     # after --, names


def test_the_command_line_wins_over_the_option_file_which_wins_over_mysql_pwd(tmp_path, monkeypatch):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\nport = 1\n[client]\nuser = fileuser\npassword = \"file pw\"\nport=3307\n"
                   "host=dbfile\n# a comment\nssl_mode = REQUIRED\n!include /nonexistent\n")
    monkeypatch.setenv("MYSQL_PWD", "envpw")
    opts = connect_options(parse(["--defaults-file", str(cnf)]))
    assert (opts.user, opts.password, opts.port, opts.host, opts.ssl_mode) == (
        "fileuser", "file pw", 3307, "dbfile", "REQUIRED")
    assert opts.defaults_file == str(cnf)
    opts = connect_options(parse(["--defaults-file", str(cnf), "-u", "cli", "-pclipw", "-P", "3308", "--host", "h"]))
    assert (opts.user, opts.password, opts.port, opts.host) == ("cli", "clipw", 3308, "h")
    cnf.write_text("[client]\nuser = fileuser\n")
    assert connect_options(parse(["--defaults-file", str(cnf)])).password == "envpw"


def test_home_my_cnf_is_read_unless_no_defaults(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".my.cnf").write_text("[client]\nuser=homeuser\npassword=homepw\n")
    opts = connect_options(parse([]))
    assert (opts.user, opts.password, opts.defaults_file) == ("homeuser", "homepw", str(home / ".my.cnf"))
    opts = connect_options(parse(["--no-defaults", "-u", "x"]))
    assert (opts.user, opts.password, opts.defaults_file) == ("x", None, None)


def test_an_unreadable_or_bad_option_file_is_a_usage_error_naming_it(tmp_path):
    with pytest.raises(UsageError, match="missing.cnf"):
        connect_options(parse(["--defaults-file", str(tmp_path / "missing.cnf")]))
    bad = tmp_path / "bad.cnf"
    bad.write_text("[client]\nport = many\n")
    with pytest.raises(UsageError, match=r"bad.cnf: \[client\] port"):
        connect_options(parse(["--defaults-file", str(bad)]))
    assert read_defaults(tmp_path / "bad.cnf") == {"port": "many"}


def test_bad_values_are_refused_by_the_parser():
    for argv in (["-P", "0"], ["--ssl-mode", "sometimes"], ["--connection-server-id", "0"]):
        with pytest.raises(SystemExit):
            parse(argv)
    assert parse(["--ssl-mode", "verify-ca"]).ssl_mode == "VERIFY_CA"


CHILD = """
import sys, time
from binlog_spec.cli.remote_arguments import add_connection_arguments, connect_options, password_argv
import argparse
p = argparse.ArgumentParser(); add_connection_arguments(p); p.add_argument("logs", nargs="*")
opts = connect_options(p.parse_args(password_argv(sys.argv[1:])))
print("got", len(opts.password or ""), "ready", flush=True)
time.sleep(30)
"""


def test_a_password_given_on_the_command_line_is_wiped_from_the_process_list():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, "-R", "-pTopS3cret", "--no-defaults", "log.000001"],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().split() == ["got", "9", "ready"]
        seen = open(f"/proc/{child.pid}/cmdline", "rb").read()       # what ps shows
        assert b"TopS3cret" not in seen and b"-pxxxxxxxxx" in seen and b"log.000001" in seen
    finally:
        child.kill()
        child.wait()


def test_a_bare_p_asks_on_the_terminal():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    pid, fd = pty.fork()
    if pid == 0:     # the child: the pty is its terminal
        os.execve(sys.executable, [sys.executable, "-c", CHILD, "-p", "--no-defaults", "log.000001"], env)
    try:
        seen = b""
        deadline = time.monotonic() + 20
        while b"Enter password:" not in seen and time.monotonic() < deadline:
            seen += os.read(fd, 1024)
        os.write(fd, b"typed-pw\n")
        while b"ready" not in seen and time.monotonic() < deadline:
            seen += os.read(fd, 1024)
        assert b"got 8 ready" in seen and b"typed-pw" not in seen     # not echoed
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
