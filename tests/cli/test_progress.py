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


def test_the_bar_counts_the_bytes_of_events_a_sink_took(monkeypatch):
    """analyze's compiled loop takes events from the reader that are never yielded: the bar counts by
    position, so their bytes count at the next event yielded, and the bar ends at the file's event bytes."""
    import tqdm

    counted = []

    class Bar:
        def __init__(self, **kw):
            self.total = kw.get("total")

        def update(self, n):
            counted.append(n)

        def close(self):
            pass

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    every = list(binlog_spec.open(FILE))
    yielded = [ev for k, ev in enumerate(every) if k % 3 == 0 or k == len(every) - 1]   # the others "taken"
    assert len(list(with_progress(iter(yielded), [FILE, FILE], Terminal()))) == len(yielded)
    assert sum(counted) == FILE.stat().st_size - 4
    counted.clear()
    list(with_progress(iter(yielded + yielded), [FILE, FILE], Terminal()))    # a second file starts again
    assert sum(counted) == 2 * (FILE.stat().st_size - 4)
