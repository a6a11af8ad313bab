"""`rows -R --stop-never` follows a real MariaDB: a row committed while it runs is printed within a deadline
(the reader's window returns as soon as one event is there, the output is flushed line by line), across a
FLUSH BINARY LOGS, and SIGTERM or SIGINT ends it cleanly: exit 0, no traceback, every line whole;
analyze prints its report then."""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

ENV = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT / "src")}
#: How long a committed row may take to be printed here (the benchmark measures the latency itself).
DEADLINE_S = 10.0


@pytest.fixture(scope="module")
def server():
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
        yield srv


def start(srv, *args: str) -> subprocess.Popen:
    srv.sql("FLUSH BINARY LOGS")        # (a new log: what the run prints is what the test writes next)
    log = srv.binlogs()[-1].name
    return subprocess.Popen([sys.executable, "-m", "binlog_spec", *args, "-R", "--socket", str(srv.socket),
                             "--user", "root", "--no-defaults", "--stop-never", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)


class Lines:
    """The lines a process prints, read as they come, each within a deadline."""

    def __init__(self, proc: subprocess.Popen):
        self.proc, self.sel, self.buf = proc, selectors.DefaultSelector(), b""
        os.set_blocking(proc.stdout.fileno(), False)
        self.sel.register(proc.stdout, selectors.EVENT_READ)

    def next(self, deadline_s: float = DEADLINE_S) -> str:
        end = time.monotonic() + deadline_s
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            assert left > 0, f"no line within {deadline_s} s (exit code {self.proc.poll()})"
            if self.sel.select(left):
                chunk = self.proc.stdout.read()
                assert chunk, f"the output ended: {self.proc.stderr.read().decode()}"
                self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()


def stop(proc: subprocess.Popen, sig: int) -> tuple[int, str, str]:
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_rows_stop_never_prints_each_committed_row_then_stops_cleanly_on_a_signal(server, sig):
    proc = start(server, "rows", "--format", "jsonl")
    try:
        lines = Lines(proc)
        time.sleep(1.0)     # (connected and waiting: what is printed next was written after)
        base = 100 * sig
        for i in range(3):
            server.sql(f"INSERT INTO d.t VALUES ({base + i}, 'row {i}')")
            row = json.loads(lines.next())
            assert (row["op"], row["after"]["id"], row["after"]["v"]) == ("insert", base + i, f"row {i}")
        server.sql("FLUSH BINARY LOGS")     # on into the next log
        server.sql(f"UPDATE d.t SET v = 'moved' WHERE id = {base}")
        row = json.loads(lines.next())
        assert (row["op"], row["after"]["v"]) == ("update", "moved")
        assert row["file"] == server.binlogs()[-1].name
        code, rest, err = stop(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0 and rest == "" and "Traceback" not in err, err


def test_analyze_stop_never_prints_its_report_on_sigterm(server):
    proc = start(server, "analyze", "--format", "json")
    try:
        time.sleep(1.0)
        server.sql("INSERT INTO d.t VALUES (900, 'a'), (901, 'b')")
        time.sleep(1.0)
        code, out, err = stop(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0 and "Traceback" not in err, err
    report = json.loads(out)
    assert report["summary"]["rows"] >= 2
