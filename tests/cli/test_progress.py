"""The progress bar: on a terminal only, never on a pipe or a file (stdout stays clean either way)."""
from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import termios

import binlog_spec
from binlog_spec.cli.progress import with_progress

from conftest import CORPUS, ROOT

FILE = CORPUS / "mbcj_osheroff/mysql-bin.sakila"


def test_no_bar_when_stderr_is_not_a_terminal():
    err = io.StringIO()
    events = list(with_progress(binlog_spec.open(FILE), [FILE], err))
    assert len(events) > 1000 and err.getvalue() == ""


def test_the_bar_counts_bytes_on_a_terminal_and_stdout_stays_clean(tmp_path):
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    exe = ROOT / ".venv" / "bin" / "binlog-spec"
    out = tmp_path / "out.jsonl"
    with open(out, "wb") as stdout:
        proc = subprocess.Popen([str(exe), "events", "--format", "jsonl", str(FILE)], stdout=stdout,
                                stderr=follower)
        shown = b""
        while True:  # drain the terminal while the command runs, so it never blocks on it
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                shown += os.read(leader, 65536)
            elif proc.poll() is not None:
                break
    os.close(follower)
    os.close(leader)
    assert proc.returncode == 0
    text = shown.decode("utf-8", "replace")
    assert "binlog-spec" in text and "B/s" in text
    assert "/1.38M" in text  # the file's 1,445,710 event bytes, in MiB
    lines = out.read_bytes().splitlines()
    assert len(lines) > 1000 and all(line.startswith(b"{") for line in lines)
