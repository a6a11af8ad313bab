"""`binlog-spec download` against the real MariaDB: a byte-exact copy of its logs (compared with the server's
own files), that resumes, follows a live workload through server restarts, a killed connection and its own
kill -9, and holds every row change exactly once (compared with the writer's own log of its changes)."""
from __future__ import annotations

import contextlib
import filecmp
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pymysql
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")


def _cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "binlog_spec", *args], capture_output=True, text=True,
                          check=check, timeout=60)


@contextlib.contextmanager
def processes():
    """A list to put the test's downloads in: each one still running at the end is killed (a failing test
    leaves none behind)."""
    procs: list[subprocess.Popen] = []
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _remote(srv) -> list[str]:
    return ["-R", "--no-defaults", "--socket", str(srv.socket), "--user", "root"]


def _same_as_server(srv, folder: Path) -> list[str]:
    """The server's logs, each compared byte for byte with its copy (the names of those that differ)."""
    return [p.name for p in srv.binlogs() if not filecmp.cmp(p, folder / p.name, shallow=False)]


class Writer(threading.Thread):
    """A live workload: inserts and updates (some two to a transaction), each with a value of its own.
    `acked`: the values of the changes whose commit returned; `doubt`: those whose commit failed (the
    server went away: the change may or may not be in the binlog)."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.srv, self.acked, self.doubt = srv, [], []
        self.stop_now = threading.Event()
        self.n, self.ids = 0, []

    def _connect(self):
        while not self.stop_now.is_set():
            try:
                return pymysql.connect(unix_socket=str(self.srv.socket), user="root", database="d",
                                       autocommit=True)
            except pymysql.err.MySQLError:
                time.sleep(0.05)
        return None

    def _change(self, cur, rnd, inserted: list[int], values: list[int]) -> None:
        """One row change (an update of a row whose insert was committed, or an insert), its value added
        to `values` before it is sent."""
        self.n += 1
        values.append(self.n)
        if self.ids and rnd.random() < 0.4:
            assert cur.execute("UPDATE t SET v = %s WHERE id = %s", (self.n, rnd.choice(self.ids))) == 1
        else:
            cur.execute("INSERT INTO t (id, v) VALUES (%s, %s)", (self.n, self.n))
            inserted.append(self.n)

    def run(self) -> None:
        rnd = random.Random(30)
        conn = self._connect()
        while conn is not None and not self.stop_now.is_set():
            values, inserted = [], []
            try:
                with conn.cursor() as cur:
                    if rnd.random() < 0.3:
                        cur.execute("BEGIN")
                        self._change(cur, rnd, inserted, values)
                        self._change(cur, rnd, inserted, values)
                        cur.execute("COMMIT")
                    else:
                        self._change(cur, rnd, inserted, values)
                self.acked += values
                self.ids += inserted
            except pymysql.err.MySQLError:
                self.doubt += values
                try:
                    conn.close()
                except Exception:  # noqa: BLE001
                    pass
                conn = self._connect()
            time.sleep(0.002)

    def wait_for(self, more: int) -> None:
        target = len(self.acked) + more
        deadline = time.monotonic() + 20
        while len(self.acked) < target and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.acked) >= target, "the workload stalled"


def _wait_dumping(srv, timeout: float = 20) -> None:
    """Wait for a download's dump to be on the server."""
    deadline = time.monotonic() + timeout
    while not _dump_threads(srv):
        assert time.monotonic() < deadline, "the download never started its dump"
        time.sleep(0.05)


def _reconnections(notes: Path) -> int:
    return notes.read_text().count("connecting again")


def _dump_threads(srv) -> list[str]:
    return srv.sql("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'").split()


def _wait_caught_up(srv, folder: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all((folder / p.name).exists() and (folder / p.name).stat().st_size == p.stat().st_size
               for p in srv.binlogs()):
            return
        time.sleep(0.05)
    raise AssertionError("the download did not catch up with the server")


def test_download_stop_never_follows_restarts_kills_and_its_own_crash_byte_identical_every_change_once(tmp_path):
    folder = tmp_path / "copy"
    with mariadb_server.MariaDBServer() as srv, processes() as procs:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        args = [sys.executable, "-m", "binlog_spec", "download", *_remote(srv), "--stop-never",
                "--retry-max-wait", "0.4", "-o", str(folder)]
        logs = [open(tmp_path / f"download{i}.err", "w") for i in range(2)]
        downloader = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=logs[0])
        procs.append(downloader)
        _wait_dumping(srv)                      # (an error of its first connection would end it)
        writer = Writer(srv)
        writer.start()
        try:
            writer.wait_for(150)
            srv.restart()                       # a clean stop (its STOP_EVENT) and start
            writer.wait_for(150)
            srv.restart(crash=True)             # kill -9: the log is left as it was
            writer.wait_for(150)
            before, deadline = _reconnections(tmp_path / "download0.err"), time.monotonic() + 15
            while _reconnections(tmp_path / "download0.err") == before and time.monotonic() < deadline:
                for thread in _dump_threads(srv):   # the replication connection killed from the server's side
                    try:
                        srv.sql(f"KILL {thread}")
                    except mariadb_server.ServerError:   # (gone meanwhile)
                        pass
                time.sleep(0.1)
            assert _reconnections(tmp_path / "download0.err") > before, "the KILL went unnoticed"
            srv.sql("FLUSH BINARY LOGS")        # rotations under the workload (a real ROTATE_EVENT each)
            writer.wait_for(50)
            srv.sql("FLUSH BINARY LOGS")
            for _ in range(3):                  # the folder read while it grows: whole transactions only
                growing = _cli("rows", "--format", "jsonl", *sorted(map(str, folder.glob("mariadb-bin.*"))),
                               check=False)
                assert growing.returncode == 0 and growing.stderr == "", growing.stderr
            second = _cli("download", *_remote(srv), "-o", str(folder), check=False)
            assert second.returncode == 4 and "another binlog-spec download" in second.stderr
            assert second.stderr.count("\n") == 1
            writer.wait_for(150)
            assert downloader.poll() is None, "the download stopped"
            downloader.send_signal(signal.SIGKILL)  # the downloader's own crash, mid-workload
            downloader.wait()
            writer.wait_for(100)
            downloader = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=logs[1])
            procs.append(downloader)
            writer.wait_for(150)
        finally:
            writer.stop_now.set()
            writer.join()
        _wait_caught_up(srv, folder)
        downloader.send_signal(signal.SIGTERM)
        assert downloader.wait(timeout=20) == 0
        notes = [(tmp_path / f"download{i}.err").read_text() for i in range(2)]
        assert notes[0].count("connecting again") >= 3, notes   # the clean restart, the crash, the KILL
        assert len(srv.binlogs()) >= 5
        assert _same_as_server(srv, folder) == []
        copies = [str(folder / p.name) for p in srv.binlogs()]
        assert sorted(n for n in os.listdir(folder) if not n.startswith(".")) == sorted(p.name for p in srv.binlogs())
    rows = [json.loads(line) for line in _cli("rows", "--format", "jsonl", *copies).stdout.splitlines()]
    values = [r["after"]["v"] for r in rows if r["table"] == "t" and r["op"] in ("insert", "update")]
    assert len(values) == len(set(values)), "a row change appears twice"
    assert set(writer.acked) <= set(values), "a committed row change is missing"
    assert set(values) <= set(writer.acked) | set(writer.doubt)
    assert len(writer.acked) >= 850


def test_download_resumes_where_the_folder_ends_and_trims_a_cut_transaction(tmp_path):
    folder = tmp_path / "copy"
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT); "
                "INSERT INTO d.t VALUES (1, 1); FLUSH BINARY LOGS; "
                "BEGIN; INSERT INTO d.t VALUES (2, 2); UPDATE d.t SET v = 3 WHERE id = 1; COMMIT")
        first = _cli("download", *_remote(srv), "-o", str(folder))
        assert first.returncode == 0 and first.stdout == ""
        assert _same_as_server(srv, folder) == []
        last = folder / srv.binlogs()[-1].name
        data = last.read_bytes()
        last.write_bytes(data[:-40])            # a download stopped inside the last transaction
        srv.sql("ALTER TABLE d.t ADD COLUMN w INT; FLUSH BINARY LOGS; INSERT INTO d.t VALUES (4, 4, 4)")
        again = _cli("download", *_remote(srv), "-o", str(folder))
        assert again.returncode == 0, again.stderr
        assert _same_as_server(srv, folder) == []
        up_to_date = _cli("download", *_remote(srv), "-o", str(folder))
        assert up_to_date.returncode == 0 and "nothing new" in up_to_date.stderr
        assert _same_as_server(srv, folder) == []


def test_download_of_a_purged_log_is_one_line_naming_the_oldest_and_exit_7(tmp_path):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("FLUSH BINARY LOGS; FLUSH BINARY LOGS")
        oldest = srv.binlogs()[-1].name
        deadline = time.monotonic() + 20
        while srv.binlogs()[0].name != oldest and time.monotonic() < deadline:   # (after the binlog checkpoint)
            srv.sql(f"PURGE BINARY LOGS TO '{oldest}'")
            time.sleep(0.1)
        assert srv.binlogs()[0].name == oldest
        r = _cli("download", *_remote(srv), "-o", str(tmp_path / "copy"), "mariadb-bin.000001", check=False)
        typo = _cli("download", *_remote(srv), "-o", str(tmp_path / "copy"), "mysql-bin.000001", check=False)
    assert r.returncode == 7
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("binlog-spec: error: ")
    assert oldest in r.stderr and "Traceback" not in r.stderr
    assert typo.returncode == 7 and "has no log mysql-bin.000001" in typo.stderr and typo.stderr.count("\n") == 1


def test_logs_lists_each_log_with_its_first_time_and_gtid_as_the_server_files_say(tmp_path):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; FLUSH BINARY LOGS; CREATE TABLE d.t (id INT PRIMARY KEY); FLUSH BINARY LOGS")
        srv.sql("INSERT INTO d.t VALUES (1)")
        shown = [line.split("\t") for line in srv.sql("SHOW BINARY LOGS").splitlines()]
        r = _cli("logs", *_remote(srv), "--format", "jsonl")
        text = _cli("logs", *_remote(srv)).stdout.splitlines()
        heads = [json.loads(line) for line in r.stdout.splitlines()]
        assert [(h["log"], h["size"]) for h in heads] == [(name, int(size)) for name, size in shown]
        assert text[0].split("\t") == ["log", "size", "first_time", "first_gtid"]
        assert [line.split("\t")[:2] for line in text[1:]] == [[name, size] for name, size in shown]
        for head, path in zip(heads, srv.binlogs()):
            first = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)], capture_output=True,
                                   text=True, check=True).stdout
            gtids = [line.split("GTID ")[1].split()[0] for line in first.splitlines() if "\tGTID " in line]
            assert head["first_gtid"] == (gtids[0] if gtids else None)
            stamp = struct.unpack_from("<I", path.read_bytes(), 4)[0]     # the FDE's header timestamp
            assert head["first_time"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def test_download_of_a_server_that_cannot_be_reached_is_one_line_and_exit_7_even_with_stop_never(tmp_path):
    with socket.socket() as s:              # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for extra in ([], ["--stop-never"]):
        r = _cli("download", "-R", "--no-defaults", "--host", "127.0.0.1", "--port", str(port), "--user", "u",
                 *extra, "-o", str(tmp_path / "copy"), check=False)
        assert r.returncode == 7 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"binlog-spec: error: 127.0.0.1:{port}: ")
