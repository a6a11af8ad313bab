"""events, rows, sql (every mode, --rollback included) and analyze with -R read a real MariaDB's logs over
the replication protocol, and print what reading the same logs as files prints, the `file` field aside (a
file's path, a log's name): several logs, FLUSH BINARY LOGS and DDL between them, --to-last-log, logs named
one by one, --start-position in bytes and as a MariaDB GTID, --start-datetime (the dump starts at the log it
falls in). The expected output is the files' own, read from the server's datadir (copied with the newest
log's in-use flag cleared, as the server sends that log and writes it once it closes it: remote/dump.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402
from remote_server import closed  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

ENV = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT / "src")}

WORKLOAD = [
    "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(8,2));"
    "INSERT INTO d.t VALUES (1,'a',1.50),(2,'b',2.50),(3,'c',3.50); UPDATE d.t SET v='bb' WHERE id=2;",
    "FLUSH BINARY LOGS",
    "ALTER TABLE d.t ADD COLUMN w INT DEFAULT 7; INSERT INTO d.t (id, v, n) VALUES (4,'d',4.50);"
    "DELETE FROM d.t WHERE id=1;",
    "FLUSH BINARY LOGS",
    "CREATE TABLE d.u (k INT PRIMARY KEY, s TEXT);"
    "BEGIN; INSERT INTO d.u VALUES (1,'x'),(2,'y'); UPDATE d.t SET n=n+1; COMMIT;",
    "FLUSH BINARY LOGS",
    "INSERT INTO d.u VALUES (3,'z'); UPDATE d.u SET s='zz' WHERE k=3;",
]


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "binlog_spec", *args], capture_output=True, text=True, env=ENV,
                          timeout=120)
    if check:
        assert done.returncode in (0, 1), done.stderr
    return done


class Server:
    """The server after the workload, and its logs as files (`paths`, in `folder`)."""

    def __init__(self, srv, folder):
        self.srv, self.socket, self.folder = srv, srv.socket, folder
        self.paths = []
        for log in srv.binlogs():
            copy = folder / log.name
            copy.write_bytes(closed(log.read_bytes()))
            self.paths.append(copy)

    def binlogs(self):
        return self.paths


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mariadb_server.MariaDBServer() as srv:
        for i, statements in enumerate(WORKLOAD):
            if i in (1, 5):
                time.sleep(1.1)     # (the logs' first events at distinct seconds: --start-datetime)
            srv.sql(statements)
        yield Server(srv, tmp_path_factory.mktemp("logs"))


def remote(srv) -> list[str]:
    return ["-R", "--socket", str(srv.socket), "--user", "root", "--no-defaults"]


def files_as_logs(srv, text: str) -> str:
    """A run over the logs as files, its `file` fields (the files' paths) as the logs' names."""
    return text.replace(str(srv.folder) + os.sep, "")


COMMANDS = {
    "events": ["events"],
    "events-jsonl": ["events", "--format", "jsonl"],
    "rows": ["rows"],
    "rows-jsonl": ["rows", "--format", "jsonl"],
    "sql-base64": ["sql"],
    "sql-base64-verbose": ["sql", "-vv"],
    "sql-sql2": ["sql", "--sql2"],
    "sql-sql": ["sql", "--sql"],
    "sql-sql2-rollback": ["sql", "--sql2", "--rollback"],
    "sql-base64-rollback": ["sql", "--rollback"],
    "analyze": ["analyze", "--format", "json"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_to_last_log_prints_what_the_files_print(server, command):
    logs = [p.name for p in server.binlogs()]
    got = run(*COMMANDS[command], *remote(server), "--to-last-log", logs[0])
    want = run(*COMMANDS[command], *map(str, server.binlogs()))
    assert got.stdout == files_as_logs(server, want.stdout)
    assert got.stderr == files_as_logs(server, want.stderr)
    assert got.returncode == want.returncode
    assert len(logs) == 4 and got.stdout


@pytest.mark.parametrize("command", ["events-jsonl", "rows-jsonl", "sql-sql2-rollback"])
def test_logs_named_are_read_each_alone(server, command):
    paths = server.binlogs()
    got = run(*COMMANDS[command], *remote(server), paths[1].name, paths[3].name)
    want = run(*COMMANDS[command], str(paths[1]), str(paths[3]))
    assert got.stdout == files_as_logs(server, want.stdout) and got.stdout


def _position_of(srv, log, op: str) -> int:
    """The position of the GTID event of the first transaction of `log` holding a row `op`."""
    out = run("rows", "--format", "jsonl", str(log)).stdout
    first = next(json.loads(line) for line in out.splitlines() if json.loads(line)["op"] == op)
    events = [json.loads(line) for line in run("events", "--format", "jsonl", str(log)).stdout.splitlines()]
    return max(e["pos"] for e in events if e["type"] == "GTID_EVENT" and e["pos"] < first["pos"])


@pytest.mark.parametrize("command", ["rows-jsonl", "sql-sql2", "sql-base64", "events-jsonl"])
def test_start_position_reads_from_the_log_named(server, command):
    paths = server.binlogs()
    start = _position_of(server, paths[1], "delete")
    got = run(*COMMANDS[command], *remote(server), "--to-last-log", "--start-position", str(start), paths[1].name)
    want = run(*COMMANDS[command], "--start-position", str(start), *map(str, paths[1:]))
    assert got.stdout == files_as_logs(server, want.stdout) and got.stdout


def test_a_mariadb_gtid_start_position_starts_there_on_the_server(server):
    paths = server.binlogs()
    gtids = [json.loads(line)["gtid"] for line in run("rows", "--format", "jsonl", str(paths[1])).stdout.splitlines()]
    start = gtids[0]        # the ALTER's log: its first row change's transaction, and every one after
    got = run("rows", "--format", "jsonl", *remote(server), "--start-position", start)
    want = run("rows", "--format", "jsonl", "--start-position", start, *map(str, paths))
    assert got.stdout == files_as_logs(server, want.stdout) and got.stdout
    events = [json.loads(line) for line in run("events", "--format", "jsonl", *remote(server), "--start-position",
                                               start).stdout.splitlines()]
    assert {e["file"] for e in events} == {p.name for p in paths[1:]}     # the dump began in the second log


def test_start_datetime_starts_the_dump_at_the_log_it_falls_in(server):
    paths = server.binlogs()
    heads = [json.loads(run("events", "--format", "jsonl", str(p)).stdout.splitlines()[0]) for p in paths]
    when = heads[3]["timestamp"].replace("T", " ").removesuffix("Z")     # the last log's first second (UTC)
    assert heads[2]["timestamp"] < heads[3]["timestamp"]
    got = run("rows", "--format", "jsonl", *remote(server), "--start-datetime", when)
    want = run("rows", "--format", "jsonl", "--start-datetime", when, *map(str, paths))
    assert got.stdout == files_as_logs(server, want.stdout) and got.stdout
    # the last log before that second holds no event at it or after: the dump starts at the one before
    listed = run("events", "--format", "jsonl", *remote(server), "--start-datetime", when).stdout.splitlines()
    assert json.loads(listed[0])["file"] == paths[2].name


def test_stop_never_and_rollback_are_refused_together():
    done = run("sql", "--sql2", "--rollback", "-R", "--stop-never", "mariadb-bin.000001", check=False)
    assert done.returncode == 2 and "--stop-never does not go with --rollback" in done.stderr
    assert "Traceback" not in done.stderr


def test_stop_never_without_a_server_is_refused():
    done = run("rows", "--stop-never", "some.binlog", check=False)
    assert done.returncode == 2 and "--stop-never reads from a server: give -R" in done.stderr


def test_a_script_that_cannot_be_written_is_refused_as_from_the_files(tmp_path):
    """sql --sql2 --rollback's pre-pass reads the server (again, before the run): with MINIMAL row images an
    UPDATE's undo cannot be written whole, and nothing is written, exit 6, as from the files."""
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-image=MINIMAL"]) as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT, w INT);"
                "INSERT INTO d.t VALUES (1, 1, 1), (2, 2, 2); UPDATE d.t SET v = 5 WHERE id = 2;")
        logs = Server(srv, tmp_path)
        got = run("sql", "--sql2", "--rollback", *remote(srv), "--to-last-log", logs.paths[0].name, check=False)
        want = run("sql", "--sql2", "--rollback", *map(str, logs.paths), check=False)
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout) == (6, "")
    assert got.stderr == files_as_logs(logs, want.stderr) and "d.t" in got.stderr
