"""`binlog-spec download --stop-never` through a network that fails: a relay between the download and the
real MariaDB cuts every connection (each side sees it closed), then holds the next connection silent in its
handshake, then goes silent under the dump (the connection stays open but nothing passes: only the
heartbeats' absence tells). The download connects again each time, and its copy ends byte-identical to the
server's files."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from remote_server import REPL_PASSWORD, REPL_USER, available, replication_server
from test_download_server import Writer, _same_as_server, _wait_caught_up, _wait_dumping, processes

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadb-server")


class Relay:
    """A TCP relay to `port` on 127.0.0.1. `cut()`: every connection closed, new ones refused (closed at
    once); `silence()`: connections kept open but nothing relayed; `mend()`: connections relayed again
    (those held silent are dropped)."""

    def __init__(self, port: int):
        self.target, self.mode, self.pairs = port, "pass", []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.mode == "cut":
                client.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.target))
            pair = (client, server)
            self.pairs.append(pair)
            for a, b in (pair, pair[::-1]):
                threading.Thread(target=self._pump, args=(a, b, pair), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket, pair) -> None:
        try:
            while True:
                data = a.recv(65536)
                while self.mode == "silent" and pair in self.pairs:
                    time.sleep(0.02)
                if not data or pair not in self.pairs:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            self._drop(pair)

    def _drop(self, pair) -> None:
        if pair in self.pairs:
            self.pairs.remove(pair)
        for s in pair:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def cut(self) -> None:
        self.mode = "cut"
        for pair in list(self.pairs):
            self._drop(pair)

    def silence(self) -> None:
        self.mode = "silent"

    def mend(self) -> None:
        held = list(self.pairs) if self.mode == "silent" else []
        self.mode = "pass"
        for pair in held:
            self._drop(pair)

    def close(self) -> None:
        self.listener.close()
        self.cut()


def _wait_for_note(path, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.read_text().count("connecting again") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no reconnection noted: {path.read_text()!r}")


def test_download_stop_never_reconnects_after_a_network_cut_and_a_silent_network_byte_identical(tmp_path):
    folder, notes = tmp_path / "copy", tmp_path / "download.err"
    with replication_server() as srv, processes() as procs:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        relay = Relay(srv.port)
        env = dict(os.environ, MYSQL_PWD=REPL_PASSWORD)
        with open(notes, "w") as err:
            downloader = subprocess.Popen(
                [sys.executable, "-m", "binlog_spec", "download", "-R", "--no-defaults", "--host", "127.0.0.1",
                 "--port", str(relay.port), "--user", REPL_USER, "--stop-never", "--retry-max-wait", "0.4",
                 "-o", str(folder)], stdout=subprocess.DEVNULL, stderr=err, env=env)
            procs.append(downloader)
        _wait_dumping(srv)                      # (an error of its first connection would end it)
        writer = Writer(srv)
        writer.start()
        try:
            writer.wait_for(100)
            relay.cut()                         # both ends see the connection closed; new ones refused
            writer.wait_for(100)
            _wait_for_note(notes, 1, 10)
            before = notes.read_text().count("connecting again")
            relay.silence()                     # the next connection is held silent in its handshake
            silent = time.monotonic()
            _wait_for_note(notes, before + 1, 30)
            assert time.monotonic() - silent > 2
            relay.mend()
            writer.wait_for(100)
            before = notes.read_text().count("connecting again")
            relay.silence()                     # nothing passes: the missing heartbeats tell
            silent = time.monotonic()
            _wait_for_note(notes, before + 1, 30)
            assert time.monotonic() - silent > 2    # (told by the silence, not by a closed connection)
            relay.mend()
            writer.wait_for(100)
        finally:
            writer.stop_now.set()
            writer.join()
        try:
            _wait_caught_up(srv, folder)
            assert downloader.poll() is None, notes.read_text()
            assert _same_as_server(srv, folder) == []
        finally:
            downloader.send_signal(signal.SIGTERM)
            downloader.wait(timeout=20)
            relay.close()
    assert "went away" in notes.read_text() or "cannot connect" in notes.read_text()
    assert REPL_PASSWORD not in notes.read_text()
