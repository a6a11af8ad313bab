"""log_heads: each log of the server with its size, first time and first GTID, read from the log's first
events; held to SHOW BINARY LOGS and to what mariadb-binlog prints of the server's own files."""
from __future__ import annotations

import calendar
import re
import subprocess
import time

import pytest

from remote_server import available, connect_options, replication_server

from binlog_spec import api
from binlog_spec.errors import LogPurgedError

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadb-server")

#: `#261128  0:39:52 server id 1  end_log_pos 256 ... Start: binlog v 4` / `... GTID 0-1-3 ddl`
_LINE = re.compile(r"^#(\d{6}) +(\d+):(\d\d):(\d\d) server id \d+ +end_log_pos \d+ .*?\t(Start|GTID) ?(\S*)")


def mariadb_binlog_head(path) -> tuple[int, str | None]:
    """(the FDE's time, the first GTID) as mariadb-binlog prints the file (in UTC)."""
    out = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)], capture_output=True, text=True,
                         env={"TZ": "UTC"}, check=True).stdout
    first_time, first_gtid = None, None
    for line in out.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        d, hh, mm, ss, kind, gtid = m.groups()
        when = calendar.timegm((2000 + int(d[:2]), int(d[2:4]), int(d[4:]), int(hh), int(mm), int(ss)))
        if kind == "Start" and first_time is None:
            first_time = when
        elif kind == "GTID":
            first_gtid = gtid
            break
    return first_time, first_gtid


def test_each_log_has_its_size_first_time_and_first_gtid():
    with replication_server() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); FLUSH BINARY LOGS")
        time.sleep(1.1)                     # the next logs open a second later
        srv.sql("FLUSH BINARY LOGS")        # a log with no transaction
        srv.sql("INSERT INTO d.t VALUES (1); INSERT INTO d.t VALUES (2)")
        files = srv.binlogs()
        with api.connect(connect_options(srv)) as conn:
            shown = conn.binary_logs()
            heads = api.log_heads(conn)
            two = api.log_heads(conn, [files[1].name, files[2].name])
            with pytest.raises(LogPurgedError) as caught:
                api.log_heads(conn, ["mariadb-bin.000099"])
        expected = [(f.name, *mariadb_binlog_head(f)) for f in files]
    assert [(h.name, h.size) for h in heads] == shown
    assert [(h.name, h.first_time, h.first_gtid) for h in heads] == expected
    assert expected[1][2] is None and expected[2][2] is not None and expected[0][1] < expected[2][1]
    assert two == heads[1:3]
    assert caught.value.oldest == files[0].name
