"""The FORMAT_DESCRIPTION_EVENT's "created" time, in `events` and `sql`: printed in the zone the header
names (TZ or --timezone), as mariadb-binlog prints it under the same TZ (expected values from it)."""
from __future__ import annotations

import io
import os
import re
import subprocess

import pytest

from binlog_spec import cli

from conftest import CORPUS, FIXTURES

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
ROTATED = CORPUS / "mariadb-mysql-cdc/mysql-bin.000002"     # created 0 in the body: no " at startup"
#: "created 261122 13:08:31" and " at startup" when the body's create timestamp is set.
CREATED = re.compile(r"Start: binlog v \d+, server v \S+ (created [0-9]{6} [ 0-9]\d:\d\d:\d\d(?: at startup)?)")


def run(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(list(argv), out, err) == 0, err.getvalue()
    return out.getvalue()


def mariadb_binlog_created(path, tz: str) -> str:
    text = subprocess.run(["mariadb-binlog", str(path)], env={**os.environ, "TZ": tz}, check=True,
                          capture_output=True, text=True).stdout
    return CREATED.search(text).group(1)


@pytest.mark.parametrize("path", [DEMO, ROTATED], ids=["at-startup", "rotated"])
@pytest.mark.parametrize("tz", ["Asia/Tokyo", "America/New_York", "UTC"])
def test_the_created_time_is_printed_in_the_zone_the_header_names(path, tz, monkeypatch):
    monkeypatch.setenv("TZ", tz)
    expected = mariadb_binlog_created(path, tz)
    events, sql = run("events", str(path)), run("sql", str(path))
    assert events.splitlines()[0] == f"# binlog-spec events: times in {tz}"
    assert f"# times in {tz}" in sql.splitlines()
    assert CREATED.search(events).group(1) == expected
    assert CREATED.search(sql).group(1) == expected


def test_the_timezone_option_moves_the_created_time_with_the_other_times(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    expected = mariadb_binlog_created(DEMO, "Asia/Tokyo")
    assert CREATED.search(run("events", "--timezone", "Asia/Tokyo", str(DEMO))).group(1) == expected
    assert CREATED.search(run("sql", "--timezone", "Asia/Tokyo", str(DEMO))).group(1) == expected
