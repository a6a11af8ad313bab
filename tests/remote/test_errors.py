"""A server that cannot be reached or read gives one RemoteError naming it (and the log where one is read),
of the class that says why, never with the password: checked on the real MariaDB. Through the command
line each is one `binlog-spec: error:` line, exit code 7, and no traceback."""
from __future__ import annotations

import io
import socket
import threading
import time

import pytest

from remote_server import (REPL_PASSWORD, MariaDBServer, add_user, available, connect_options,
                           replication_server, server_logs)

from binlog_spec import api, cli
from binlog_spec.cli.exit_codes import EXIT_SERVER
from binlog_spec.errors import (AccessDeniedError, BinlogDisabledError, LogPurgedError, PrivilegeError,
                                RemoteError, ServerGoneError, ServerUnreachableError)
from binlog_spec.options import ConnectOptions

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadb-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_all(opts: ConnectOptions, log: str, position: int = 4) -> list:
    with api.connect(opts) as conn:
        return list(api.dump_events(conn, log, position, blocking=False))


def assert_clean(exc: RemoteError, server: str) -> None:
    # What a reader that reconnects may retry: a server gone or unreachable, nothing else.
    assert exc.retryable == isinstance(exc, (ServerGoneError, ServerUnreachableError))
    text = str(exc)
    assert text.startswith(server + ": ") and "\n" not in text
    assert REPL_PASSWORD not in text and REPL_PASSWORD not in repr(exc) and REPL_PASSWORD not in str(exc.to_dict())


def test_a_host_with_nothing_listening_is_unreachable():
    port = free_port()
    opts = ConnectOptions(host="127.0.0.1", port=port, user="repl", password=REPL_PASSWORD, connect_timeout_s=5)
    with pytest.raises(ServerUnreachableError) as caught:
        api.connect(opts)
    assert_clean(caught.value, f"127.0.0.1:{port}")
    assert "cannot connect" in caught.value.message


@pytest.fixture(scope="module")
def server():
    with replication_server() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1);"
                "FLUSH BINARY LOGS; INSERT INTO d.t VALUES (2); FLUSH BINARY LOGS; INSERT INTO d.t VALUES (3)")
        add_user(srv, "noslave", REPL_PASSWORD, grants="BINLOG MONITOR")
        yield srv


def test_a_wrong_password_is_access_denied_and_the_password_is_nowhere(server):
    opts = connect_options(server, password="not-" + REPL_PASSWORD)
    assert "not-" + REPL_PASSWORD not in repr(opts)
    with pytest.raises(AccessDeniedError) as caught:
        api.connect(opts)
    assert_clean(caught.value, f"127.0.0.1:{server.port}")
    assert "not-" + REPL_PASSWORD not in str(caught.value)
    assert "Access denied for user 'repl'" in caught.value.message and caught.value.code == 1045


def test_a_user_without_replication_slave_is_told_the_privilege(server):
    with pytest.raises(PrivilegeError) as caught:
        read_all(connect_options(server, user="noslave"), "mariadb-bin.000001")
    assert caught.value.privilege == "REPLICATION SLAVE"
    assert "REPLICATION SLAVE" in str(caught.value)
    assert_clean(caught.value, f"127.0.0.1:{server.port}")


def purge(srv: MariaDBServer, to: str) -> None:
    """PURGE BINARY LOGS TO `to`, again until the logs before it are gone (MariaDB keeps a log until its
    binlog checkpoint is written, and says so in a warning only)."""
    deadline = time.monotonic() + 30
    while srv.sql("SHOW BINARY LOGS").split()[0] != to:
        assert time.monotonic() < deadline, "the server kept the logs"
        srv.sql(f"PURGE BINARY LOGS TO '{to}'")
        time.sleep(0.1)


def test_a_purged_log_names_the_oldest_log_kept(server):
    names = list(server_logs(server))
    assert len(names) == 3
    purge(server, names[1])
    with pytest.raises(LogPurgedError) as caught:
        read_all(connect_options(server), names[0])
    assert caught.value.oldest == names[1]
    assert caught.value.log == names[0] and names[1] in str(caught.value)
    assert_clean(caught.value, f"127.0.0.1:{server.port}")
    # ... and so does a log name the server never had.
    with pytest.raises(LogPurgedError) as caught:
        read_all(connect_options(server), "mariadb-bin.999999")
    assert caught.value.oldest == names[1]


def test_a_dump_whose_connection_is_killed_raises_server_gone(server):
    name = list(server_logs(server))[-1]
    opts = connect_options(server, heartbeat_s=0.2)
    killed = []

    def kill_dump():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not killed:
            ids = server.sql("SELECT id FROM information_schema.processlist WHERE command = 'Binlog Dump'").split()
            for thread_id in ids:
                server.sql(f"KILL {thread_id}")
                killed.append(thread_id)
            time.sleep(0.1)

    killer = threading.Thread(target=kill_dump)
    with api.connect(opts) as conn:
        killer.start()
        started = time.monotonic()
        with pytest.raises(ServerGoneError) as caught:
            for _ in api.dump_events(conn, name, 4, blocking=True):
                assert time.monotonic() - started < 30
        killer.join()
    assert killed
    assert caught.value.log == name and caught.value.position is not None
    assert_clean(caught.value, f"127.0.0.1:{server.port}")


@pytest.mark.parametrize("how", ["shutdown", "kill -9"])
def test_a_blocking_dump_of_a_server_that_stops_raises_server_gone(how):
    with replication_server() as srv:
        name = list(server_logs(srv))[-1]
        stopper = threading.Timer(1.0, srv.stop if how == "shutdown" else srv.proc.kill)
        with api.connect(connect_options(srv, heartbeat_s=0.2)) as conn:
            stopper.start()
            with pytest.raises(ServerGoneError) as caught:
                for _ in api.dump_events(conn, name, 4, blocking=True):
                    pass
            stopper.join()
        assert caught.value.log == name
        assert_clean(caught.value, f"127.0.0.1:{srv.port}")


def test_a_server_without_binary_log_says_so():
    with MariaDBServer(extra_args=["--skip-log-bin"]) as srv:
        add_user(srv)
        opts = connect_options(srv)
        with api.connect(opts) as conn:
            with pytest.raises(BinlogDisabledError) as caught:
                conn.binary_logs()
        assert_clean(caught.value, f"127.0.0.1:{srv.port}")
        with pytest.raises(BinlogDisabledError) as caught:
            read_all(opts, "mariadb-bin.000001")
        assert_clean(caught.value, f"127.0.0.1:{srv.port}")


def test_the_command_line_gives_a_remote_error_one_line_and_exit_7(monkeypatch):
    """The top-level handler maps every RemoteError: a command that raises one (here `events`, made to
    raise the error a real unreachable host gives) prints one line, no traceback."""
    port = free_port()
    opts = ConnectOptions(host="127.0.0.1", port=port, user="repl", password=REPL_PASSWORD, connect_timeout_s=5)

    def run(args, out, err):
        api.connect(opts)

    monkeypatch.setattr(cli, "run_events", run)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["events", "x.bin"], out, err)
    assert code == EXIT_SERVER == 7
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"binlog-spec: error: 127.0.0.1:{port}: cannot connect")
    assert "Traceback" not in err.getvalue() and REPL_PASSWORD not in err.getvalue()


def test_a_silent_server_is_gone_after_the_heartbeats_stop():
    """A frozen server (SIGSTOP: no byte, no heartbeat, the connection still open, as behind a network cut)
    ends a blocking dump with ServerGoneError once silence_timeout has passed; it does not hang."""
    import os
    import signal

    from binlog_spec.remote.dump import silence_timeout
    with replication_server() as srv:
        name = list(server_logs(srv))[-1]
        seen = []
        with api.connect(connect_options(srv, heartbeat_s=0.5)) as conn:
            started = None
            with pytest.raises(ServerGoneError) as caught:
                for ev in api.dump_events(conn, name, 4, blocking=True):
                    seen.append(ev)
                    if ev.heartbeat and started is None:       # caught up: freeze the server
                        os.kill(srv.proc.pid, signal.SIGSTOP)
                        started = time.monotonic()
            waited = time.monotonic() - started
            os.kill(srv.proc.pid, signal.SIGCONT)
        assert silence_timeout(0.5) == 10.0 and 9.0 < waited < 20.0
        assert caught.value.log == name and "timed out" in str(caught.value)
