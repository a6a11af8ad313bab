"""The download's folder (remote/folder.py): where a copy resumes, the trim of a cut transaction, and a log
written whole transactions at a time, byte for byte the server's file.

The transaction boundaries expected come from mariadb-binlog's reading of the server's file (each event's
`# at` position and its description), never from our reader.
"""
from __future__ import annotations

import os
import re
import struct
import subprocess

import pytest

from conftest import CORPUS
from binlog_spec.remote.folder import LogFile, local_logs, remove_parts, resume_point, whole_end
from binlog_spec.errors import NotABinlogError
from binlog_spec.stream.transactions import Transactions

#: A MariaDB 11.4 log, closed by its ROTATE_EVENT: standalone DDL, an INTVAR statement, row transactions.
LOG = CORPUS / "mariadb-mysql-cdc" / "mysql-bin.000001"
IN_USE_AT = 4 + 17      # the FDE's flags (LOG_EVENT_BINLOG_IN_USE_F = 0x1)


def _mariadb_binlog_boundaries(path) -> tuple[int, set[int]]:
    """(end of the FDE, every position mariadb-binlog shows between two transactions): before each GTID,
    after each Xid, after the statement of a `GTID ... ddl`, after the control events."""
    text = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)], capture_output=True, text=True,
                          check=True).stdout
    events, at = [], []
    for line in text.splitlines():
        m = re.match(r"# at (\d+)$", line)
        if m:
            at.append(int(m[1]))
        elif re.match(r"#\d{6} .*server id \d+ +end_log_pos \d+", line):
            events.append((at.pop(0), line.split("\t")[1] if "\t" in line else line))
    size = path.stat().st_size
    ends = [p for p, _ in events[1:]] + [size]
    bounds, fde_end, ddl = set(), ends[0], False
    for (pos, what), end in zip(events, ends):
        if what.startswith("GTID"):
            bounds.add(pos)
            ddl = what.endswith("ddl")
        elif what.startswith(("Start:", "Gtid list", "Binlog checkpoint", "Rotate", "Xid")) or \
                (ddl and what.startswith("Query")):
            bounds.add(end)
            ddl = False
    return fde_end, bounds


def _events(data: bytes) -> list[bytes]:
    """The events of a binlog's bytes, framed by their header's size."""
    out, pos = [], 4
    while pos < len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        out.append(data[pos:pos + size])
        pos += size
    return out


def test_a_copy_cut_anywhere_ends_at_the_last_whole_transaction_before_the_cut(tmp_path):
    data = LOG.read_bytes()
    fde_end, bounds = _mariadb_binlog_boundaries(LOG)
    assert len(bounds) > 10
    cut = tmp_path / "mysql-bin.000001"
    for n in range(len(data) + 1):
        cut.write_bytes(data[:n])
        expected = max([b for b in bounds if b <= n], default=0) if n >= fde_end else 0
        assert whole_end(cut)[0] == expected, n


def test_resume_trims_the_cut_transaction_and_restarts_a_log_without_its_format_description(tmp_path):
    data = LOG.read_bytes()
    _, bounds = _mariadb_binlog_boundaries(LOG)
    inside = 1500       # inside the transaction of GTID 0-17-5 (1338 .. 1661)
    (tmp_path / "mysql-bin.000001").write_bytes(data[:inside])
    assert resume_point(tmp_path, "mysql-bin.000001") == (1338, False)
    assert (tmp_path / "mysql-bin.000001").read_bytes() == data[:1338]
    assert 1338 in bounds
    (tmp_path / "mysql-bin.000002").write_bytes(data[:100])       # the FDE cut: written again from 4
    assert resume_point(tmp_path, "mysql-bin.000002") == (4, False)
    assert not (tmp_path / "mysql-bin.000002").exists()


def test_a_copy_damaged_past_some_point_resumes_at_the_last_whole_transaction_before_it(tmp_path):
    data = bytearray(LOG.read_bytes())
    data[1500] ^= 0xFF                      # a byte of the transaction of GTID 0-17-5 (1338 .. 1661)
    (tmp_path / "mysql-bin.000001").write_bytes(data)
    faults = []
    assert resume_point(tmp_path, "mysql-bin.000001", faults.append) == (1338, False)
    assert (tmp_path / "mysql-bin.000001").read_bytes() == LOG.read_bytes()[:1338]
    assert "CRC32 mismatch" in str(faults[0])
    (tmp_path / "other.000001").write_bytes(b"not a binlog at all")
    with pytest.raises(NotABinlogError):        # someone else's file is never cut
        resume_point(tmp_path, "other.000001")
    assert (tmp_path / "other.000001").read_bytes() == b"not a binlog at all"


def test_resume_clears_the_in_use_flag_of_a_log_that_ends_with_its_rotate(tmp_path):
    data = bytearray(LOG.read_bytes())
    assert not data[IN_USE_AT] & 1          # the server cleared it when it closed the log
    data[IN_USE_AT] |= 1                    # as the copy was while the log was written
    (tmp_path / "mysql-bin.000001").write_bytes(data)
    assert resume_point(tmp_path, "mysql-bin.000001") == (len(data), True)
    assert (tmp_path / "mysql-bin.000001").read_bytes() == LOG.read_bytes()


def test_a_log_written_event_by_event_is_on_disk_only_in_whole_transactions_and_ends_byte_identical(tmp_path):
    data = LOG.read_bytes()
    fde_end, bounds = _mariadb_binlog_boundaries(LOG)
    events = _events(data)                  # (the server sends the FDE with the in-use flag clear)
    log = LogFile(tmp_path, "mysql-bin.000001", 4)
    path, pos = tmp_path / "mysql-bin.000001", 4
    for ev in events:
        log.add(ev)
        pos += len(ev)
        assert log.position == pos
        on_disk = path.stat().st_size if path.exists() else 0
        assert on_disk == max([b for b in bounds if b <= pos], default=0) or (on_disk == 0 and pos < fde_end)
        assert list(tmp_path.glob(".*.part")) == []
        if on_disk and not log.closed:      # the server's file has the flag while it writes the log
            assert path.read_bytes()[IN_USE_AT] & 1
    assert log.closed
    assert path.read_bytes() == data


def test_a_log_resumed_mid_file_drops_the_transaction_in_flight_and_goes_on_byte_identical(tmp_path):
    data = LOG.read_bytes()
    events = _events(data)
    (tmp_path / "mysql-bin.000001").write_bytes(data[:1338])
    log = LogFile(tmp_path, "mysql-bin.000001", resume_point(tmp_path, "mysql-bin.000001")[0])
    rest = [ev for ev, start in zip(events, _starts(events)) if start >= 1338]
    log.add(rest[0])
    log.add(rest[1])                        # the GTID and the ANNOTATE_ROWS of 0-17-5: held, not written
    assert (tmp_path / "mysql-bin.000001").stat().st_size == 1338
    assert log.drop() == 1338               # the connection is lost: the log goes on from there
    log = LogFile(tmp_path, "mysql-bin.000001", 1338)
    for ev in rest:
        log.add(ev)
    assert (tmp_path / "mysql-bin.000001").read_bytes() == data


def _starts(events: list[bytes]) -> list[int]:
    out, pos = [], 4
    for ev in events:
        out.append(pos)
        pos += len(ev)
    return out


def test_the_folder_lists_logs_in_the_servers_order_and_drops_unfinished_starts(tmp_path):
    for name in ("b.000002", "b.1000000", "b.999999", "b.index", ".b.000003.part", "other.000001"):
        (tmp_path / name).write_bytes(b"")
    assert local_logs(tmp_path, "b") == ["b.000002", "b.999999", "b.1000000"]
    remove_parts(tmp_path)
    assert not (tmp_path / ".b.000003.part").exists()


@pytest.mark.parametrize("flavor, in_use", [("mariadb", True), ("mysql", False)])
def test_a_log_left_without_its_rotate_keeps_its_in_use_flag_as_the_servers_recovery_leaves_it(tmp_path, flavor,
                                                                                              in_use):
    """A server that crashed starts a new log with no ROTATE_EVENT in the old one: MariaDB leaves the old
    log's in-use flag set (seen on MariaDB 10.11 after kill -9), MySQL's recovery clears it (sql/binlog.cc,
    MYSQL_BIN_LOG::open_binlog: truncate_update_log_file)."""
    from binlog_spec.remote.download import Progress, _Copy
    events = _events(LOG.read_bytes())[:-1]             # the log without its ROTATE_EVENT
    copy = _Copy(tmp_path, Progress(), "server")
    copy.flavor = flavor
    pos = 4
    for ev in events:
        pos += len(ev)
        copy.add("mysql-bin.000001", ev, pos)
    copy.lost()                                         # the server crashed
    copy.add("mysql-bin.000002", events[0], 4 + len(events[0]))     # the next log's FDE
    assert bool((tmp_path / "mysql-bin.000001").read_bytes()[IN_USE_AT] & 1) is in_use


def test_the_spark_source_lists_only_the_logs_of_a_folder_being_downloaded(tmp_path):
    """What a download keeps beside the logs (its lock, a log's head being written) is hidden from the Spark
    source's listing of the folder (spark.files: hidden names left out)."""
    from binlog_spec.remote.folder import LOCK_NAME, lock
    from binlog_spec.spark.files import list_files
    data = LOG.read_bytes()
    (tmp_path / "mysql-bin.000001").write_bytes(data)
    (tmp_path / ".mysql-bin.000002.part").write_bytes(data[:256])
    held = lock(tmp_path)
    try:
        assert (tmp_path / LOCK_NAME).exists()
        assert [os.path.basename(ref.name) for ref in list_files([str(tmp_path)])] == ["mysql-bin.000001"]
    finally:
        held.close()
