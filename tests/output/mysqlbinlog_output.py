"""Reading saved `mysqlbinlog -v` / `mariadb-binlog -v` outputs in the tests: the `###` blocks of a
reference output or of ours, compared block by block."""
from __future__ import annotations

import re
from pathlib import Path

_BLOCK_START = re.compile(r"### (INSERT INTO|UPDATE|DELETE FROM) ")
_BLOCK_LINE = re.compile(r"###   |### (SET|WHERE)$")


def parse_verbose(text: str) -> list[list[str]]:
    """The `###` blocks of a tool's output: each starts at an INSERT INTO / UPDATE / DELETE FROM
    line and holds its SET / WHERE and column lines. Other `###` lines (extra row info, unknown
    tables) are left out; lines are split on newlines only, a trailing CR dropped."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if _BLOCK_START.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None and _BLOCK_LINE.match(line):
            current.append(line)
        else:
            current = None
    return blocks


def read_output(path: str | Path) -> str:
    """A saved tool output as text: UTF-16 when it has a byte-order mark (PowerShell redirection),
    else UTF-8 with undecodable bytes kept as surrogates (as `render_*` gives them)."""
    data = Path(path).read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")
