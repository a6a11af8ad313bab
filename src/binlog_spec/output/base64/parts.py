"""--jobs for the base64 script: each piece of the input printed as its part of one script, joined.

The script sets a session setting (``use db``, ``SET @@session.sql_mode=...``, ...) only when it
changes, so a piece's first statements depend on what the pieces before it set. A piece after the
first starts with every setting UNKNOWN: where a setting's line depends on the one before the piece,
it writes a placeholder line (`deferred`: DEFERRED then the setting, its value and its lines), and
from there on it knows that setting. The parent joins the pieces in order with a `Joiner`, which
keeps the settings as the script has them so far: it writes a placeholder's lines when the setting
differs (as `Base64Script` does in one process), and takes each piece's `Base64Script.state()` at its
end. Only the first piece prints the header, only the last the end (its ``GTID_NEXT= 'AUTOMATIC'``
a placeholder when the piece saw no MySQL GTID: an earlier one may have).

What a piece reports at the end (its warnings, the rows it could not decode) is handed back as
`Ending`s, merged in order; what is told once per run (the decoder's notes) is kept once.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterator, TextIO

from binlog_spec.output.base64.session import flags2_settings

#: A session setting made before the piece.
UNKNOWN = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
#: The pseudo thread id once the piece has a statement: made before the piece or by that statement.
NOT_NONE = type("NotNone", (), {"__repr__": lambda self: "NOT_NONE"})()
#: The start of a line that stands for lines the joining parent writes or not.
DEFERRED = "\x00b64\x00"


def deferred(name: str, value, lines) -> str:
    """The placeholder of a setting's lines in a piece whose session before it is not known."""
    return DEFERRED + json.dumps([name, repr(value), list(lines)])


def flags2_lines(session, flags2: int, written: int) -> Iterator[str]:
    """The SET line of the Q_FLAGS2 options that changed (of the bits `written`: flags2_written of the
    file's server), or its placeholder (whose lines are the bits written) where the session before it is
    not known; the session then has `flags2`."""
    if session.flags2 is UNKNOWN:
        yield deferred("flags2", flags2, [written])
    else:
        line = flags2_settings(session.flags2, flags2, written)
        if line:
            yield line
    session.flags2 = flags2


@dataclass(frozen=True)
class Part:
    """The script of one piece: the first prints the header, the last the end; the others continue a
    script whose settings (UNKNOWN) and flavour (`mariadb`, the first FDE's) are the run's."""

    first: bool
    last: bool
    mariadb: bool = False


@dataclass
class Ending:
    """What a piece reports after its script: its settings at the end (Base64Script.state), its
    warnings (a (key, line) pair for a note told once per run) and the rows errors of -v."""

    state: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    row_errors: list = field(default_factory=list)

    def merge(self, later: "Ending") -> None:
        self.state.update(later.state)
        keys = {w[0] for w in self.warnings if isinstance(w, tuple)}
        for w in later.warnings:
            if isinstance(w, tuple):
                if w[0] in keys:
                    continue
                keys.add(w[0])
            self.warnings.append(w)
        self.row_errors += later.row_errors

    def lines(self) -> list[str]:
        return [w[1] if isinstance(w, tuple) else w for w in self.warnings]


class Joiner:
    """The parent's copy of the pieces' scripts, in order, placeholders resolved."""

    def __init__(self, mariadb: bool) -> None:
        self.mariadb = mariadb
        self.running: dict[str, str] = {}

    def resolve(self, line: str) -> str:
        """The lines (each with its newline) a placeholder line stands for."""
        name, key, lines = json.loads(line[len(DEFERRED):])
        old = self.running.get(name, "None")
        if name == "mysql_gtids":
            return "".join(f"{x}\n" for x in lines) if old == "True" else ""
        if name == "thread_id?":
            if self.running.get("thread_id", "None") != "None":
                return ""
            name = "thread_id"
        elif name == "flags2":
            self.running[name] = key
            line = flags2_settings(None if old == "None" else int(old), int(key), lines[0])
            return f"{line}\n" if line else ""
        elif old == key:
            return ""
        self.running[name] = key
        return "".join(f"{x}\n" for x in lines)

    def copy(self, path: str, out: TextIO) -> bool:
        """A piece's output to `out`; whether it printed anything."""
        printed = False
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return printed
                printed = True
                if not chunk.endswith("\n"):
                    chunk += f.readline()
                    if not chunk.endswith("\n"):     # (the script ends with a newline)
                        chunk += "\n"
                if DEFERRED[0] not in chunk:
                    out.write(chunk)
                    continue
                for line in chunk.split("\n")[:-1]:
                    out.write(self.resolve(line) if line.startswith(DEFERRED) else line + "\n")

    def end_of_piece(self, ending: Ending | None) -> None:
        if ending is not None:
            self.running.update(ending.state)
