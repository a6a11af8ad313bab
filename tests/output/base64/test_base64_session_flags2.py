"""`sql` writes a Q_FLAGS2 session variable only where the file's server wrote its bit, as mariadb-binlog
does: MariaDB 5.5-10.5.1 binlogs carry no sql_if_exists, those before 10.5.17 / 10.6.9 / 10.7.5 /
10.8.4 / 10.9.2 no explicit_defaults_for_timestamp (and older servers reject those SETs). Expected
lines: mariadb-binlog's, on real files and on a real 11.4 file whose FORMAT_DESCRIPTION names an
older server."""
from __future__ import annotations

import io
import struct
import subprocess
import zlib

import pytest

from binlog_spec import cli

from conftest import CORPUS

MARIADB_10_0 = CORPUS / "zalora_binlog-parser/mysql-bin.07"          # 10.0.15-MariaDB-log
MARIADB_11_4 = CORPUS / "mariadb-mysql-cdc/mysql-bin.000001"          # 11.4.12-MariaDB-ubu2404-log
MARIADB_11_8 = CORPUS / "mariadb-poc/mariadb-repl-bin.000005"
FLAGS2_NAMES = ("foreign_key_checks", "sql_auto_is_null", "unique_checks", "autocommit", "check_constraint_checks",
                "sql_if_exists", "explicit_defaults_for_timestamp", "system_versioning_insert_history")


def as_written_by(src, dst, version: str):
    """`src` with its FORMAT_DESCRIPTION's server version replaced (its CRC32 recomputed)."""
    data = bytearray(src.read_bytes())
    size = struct.unpack_from("<I", data, 4 + 9)[0]
    fde = data[4:4 + size]
    fde[19 + 2:19 + 52] = version.encode().ljust(50, b"\0")
    fde[-4:] = struct.pack("<I", zlib.crc32(bytes(fde[:-4])))
    data[4:4 + size] = fde
    dst.write_bytes(bytes(data))
    return dst


def flags2_lines(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if line.startswith("SET @@session.") and any(f"@@session.{n}=" in line for n in FLAGS2_NAMES)]


def ours(*paths) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", *map(str, paths)], out, err) == 0, err.getvalue()
    return out.getvalue()


def mariadb_binlog(path) -> str:
    return subprocess.run(["mariadb-binlog", str(path)], check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("path", [MARIADB_10_0, MARIADB_11_4], ids=["10.0.15", "11.4.12"])
def test_the_session_options_are_those_mariadb_binlog_writes_for_the_files_server(path):
    expected = flags2_lines(mariadb_binlog(path))
    assert expected and flags2_lines(ours(path)) == expected


@pytest.mark.parametrize("version", ["5.5.60-MariaDB-log", "10.3.39-MariaDB-log", "10.5.1-MariaDB", "10.5.2-MariaDB",
                                     "10.5.16-MariaDB", "10.5.17-MariaDB", "10.6.8-MariaDB", "10.6.9-MariaDB",
                                     "10.7.4-MariaDB", "10.7.5-MariaDB", "10.8.3-MariaDB", "10.8.4-MariaDB",
                                     "10.9.1-MariaDB", "10.9.2-MariaDB", "10.10.1-MariaDB", "11.0.0-MariaDB"])
def test_a_session_option_is_written_only_from_the_release_whose_binlog_carries_it(version, tmp_path):
    path = as_written_by(MARIADB_11_4, tmp_path / "mysql-bin.000001", version)
    expected = flags2_lines(mariadb_binlog(path))
    assert expected and flags2_lines(ours(path)) == expected


def test_an_option_a_later_files_server_writes_is_set_when_that_file_begins(tmp_path):
    """One script over two files: the first from a 10.3 server (no explicit_defaults_for_timestamp), the
    second from 11.8, whose statements ran with the value mariadb-binlog prints for that file."""
    old = as_written_by(CORPUS / "mariadb-poc/mariadb-repl-bin.000004", tmp_path / "mariadb-repl-bin.000004",
                        "10.3.39-MariaDB-log")
    later = [line for line in flags2_lines(mariadb_binlog(MARIADB_11_8)) if "explicit_defaults" in line][0]
    value = later.split("@@session.explicit_defaults_for_timestamp=")[1][0]
    lines = flags2_lines(ours(old, MARIADB_11_8))
    assert "explicit_defaults" not in lines[0]
    assert lines[1:] == [f"SET @@session.explicit_defaults_for_timestamp={value}/*!*/;"]
