"""Injection-proof SQL, on a real server: seeded random values and identifiers, replayed.

A private MariaDB runs a workload on tables whose schema, table and column names are random VALID
identifiers (backticks, quotes, spaces, newlines, `*/`, `;`, non-ASCII letters) and whose values are random
bytes and text (NUL, invalid UTF-8, quotes, `\\`, `*/`, `;`, newlines). Its binlog is turned into
--sql2, --sql2 --replace, their rollbacks and the base64 scripts (with the -vv pseudo-SQL), which are
replayed on a second server: CHECKSUM TABLE must equal the original's, and the server's general log
must hold nothing but the intended statements: the framing statements, and exactly one INSERT,
REPLACE, UPDATE or DELETE per row change (no value or name ever became a statement of its own).
"""
from __future__ import annotations

import io
import random
import re
import sys

import pytest

import binlog_spec
from binlog_spec import cli
from binlog_spec.rows.decoder import UPDATE, read_rows

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

SEED = 1414
ROWS_PER_TABLE = 12

#: Pieces names are made of: every one valid in a quoted MariaDB identifier.
NAME_PIECES = ["\n", "`", "``", "'", '"', " ", "*/", "/*", ";", "--", "#", "é", "中文", "ß", "Ω", "ж", "a", "b", "Z",
               "_", "1", "$", "-", "(", ")", "=", "%"]
#: Pieces values are made of, besides random bytes.
VALUE_PIECES = [b"\0", b"'", b'"', b"\\", b"*/", b"/*", b";", b"\n", b"\r\n", b"\x1a", b"`", b"--", b"#",
                b"\xff\xfe", b"\xc3(", b"\xe2\x82", b"DELIMITER ;;", b"';DROP TABLE t;--", b"\\'", b"%", b"_"]
TEXT_PIECES = ["\0", "'", '"', "\\", "*/", "/*", ";", "\n", "`", "--", "é", "中", "🎉", "\\'", "');DROP TABLE x;--"]


def ident(rng: random.Random, max_len: int = 20) -> str:
    while True:
        name = "".join(rng.choice(NAME_PIECES) for _ in range(rng.randint(1, 6)))[:max_len].rstrip()
        if name:
            return name


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def random_bytes(rng: random.Random) -> bytes:
    parts = [rng.choice(VALUE_PIECES) if rng.random() < 0.5 else rng.randbytes(rng.randint(1, 6))
             for _ in range(rng.randint(0, 8))]
    return b"".join(parts)[:200]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(TEXT_PIECES) if rng.random() < 0.5 else chr(rng.randint(0x20, 0x2FF))
                   for _ in range(rng.randint(0, 12)))


def literal(value: bytes | str | None) -> str:
    """A value as the workload writes it: hex, so that the workload itself cannot be injected."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return f"CONVERT(X'{value.encode('utf-8').hex()}' USING utf8mb4)"
    return f"X'{value.hex()}'"


class Workload:
    def __init__(self, seed: int):
        rng = random.Random(seed)
        self.db = ident(rng)
        self.tables: list[tuple[str, list[str]]] = []
        while len(self.tables) < 3:
            name = ident(rng)
            cols = []
            while len(cols) < 5:
                c = ident(rng, 16)
                if c.lower() not in {x.lower() for x in cols}:
                    cols.append(c)
            if name.lower() not in {t.lower() for t, _ in self.tables}:
                self.tables.append((name, cols))
        self.rng = rng

    def schema(self) -> str:
        out = [f"CREATE DATABASE {q(self.db)} CHARACTER SET utf8mb4;"]
        for name, (pk, b, blob, lat, txt) in self.tables:
            out.append(f"CREATE TABLE {q(self.db)}.{q(name)} ({q(pk)} INT PRIMARY KEY, {q(b)} VARBINARY(255), "
                       f"{q(blob)} BLOB, {q(lat)} VARCHAR(255) CHARACTER SET latin1, "
                       f"{q(txt)} TEXT CHARACTER SET utf8mb4) ENGINE=InnoDB;")
            for k in range(3):       # rows before the binlog starts: the rollback's start state
                out.append(self._insert(name, k))
        return "\n".join(out)

    def _insert(self, name: str, k: int) -> str:
        rng = self.rng
        return (f"INSERT INTO {q(self.db)}.{q(name)} VALUES ({k}, {literal(random_bytes(rng))}, "
                f"{literal(random_bytes(rng))}, {literal(random_bytes(rng))}, {literal(random_text(rng))});")

    def changes(self) -> str:
        rng = self.rng
        out = ["SET sql_mode = '';"]
        for name, cols in self.tables:
            for k in range(3, 3 + ROWS_PER_TABLE):
                out.append(self._insert(name, k))
        for name, cols in self.tables:
            t = f"{q(self.db)}.{q(name)}"
            for _ in range(6):
                k = rng.randrange(3 + ROWS_PER_TABLE)
                c = rng.randrange(1, 5)
                value = random_text(rng) if c == 4 else (None if rng.random() < 0.2 else random_bytes(rng))
                out.append(f"UPDATE {t} SET {q(cols[c])} = {literal(value)} WHERE {q(cols[0])} = {k};")
            out.append(f"BEGIN; DELETE FROM {t} WHERE {q(cols[0])} IN ({rng.randrange(15)}, {rng.randrange(15)}); "
                       f"UPDATE {t} SET {q(cols[0])} = {q(cols[0])} + 100 WHERE {q(cols[0])} = 1; COMMIT;")
        return "\n".join(out)

    def checksums(self, srv: MariaDBServer) -> dict[str, str]:
        names = ", ".join(f"{q(self.db)}.{q(t)}" for t, _ in self.tables)
        out = srv.sql(f"CHECKSUM TABLE {names} EXTENDED;")
        sums = [line.rsplit("\t", 1)[1] for line in out.strip().splitlines()]
        assert len(sums) == len(self.tables) and all(s not in ("", "NULL") for s in sums), out
        return dict(zip((t for t, _ in self.tables), sums))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    work = Workload(SEED)
    srv = MariaDBServer().start()
    try:
        srv.sql(work.schema())
        start = work.checksums(srv)
        srv.sql("FLUSH BINARY LOGS;")
        first = srv.binlogs()[-1]
        srv.sql(work.changes())
        srv.sql("FLUSH BINARY LOGS;")
        end = work.checksums(srv)
        assert start != end
        out = tmp_path_factory.mktemp("binlogs")
        files = []
        for p in [p for p in srv.binlogs() if p.name >= first.name][:-1]:
            files.append(out / p.name)
            files[-1].write_bytes(p.read_bytes())
        yield work, files, start, end
    finally:
        srv.cleanup()


@pytest.fixture(scope="module")
def replay_server():
    srv = MariaDBServer().start()
    try:
        yield srv
    finally:
        srv.cleanup()


def script(files, *options) -> bytes:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *options, *map(str, files)], out, err)
    assert code == 0, err.getvalue()
    return out.getvalue().encode("utf-8", "surrogateescape")


_ENTRY = re.compile(r"^(?:\d{6}\s+\d{1,2}:\d\d:\d\d)?\s+\d+ (Query|Connect|Quit|Init DB|Field List|Statistics)\t?(.*)$")
#: Statements the scripts frame the row changes with (and the client's and the test's own).
FRAMING = re.compile(r"(SET\b|BEGIN|COMMIT|ROLLBACK|START TRANSACTION|USE\b|BINLOG\b|/\*M?!\d*\s*SET\b"
                     r"|select @@version_comment)", re.IGNORECASE)
DML = re.compile(r"(INSERT|REPLACE|UPDATE|DELETE)\b", re.IGNORECASE)


def logged_queries(path) -> list[str]:
    """The Query entries of a general log (an entry's lines after the first belong to it)."""
    queries: list[str] = []
    current: list[str] | None = None
    for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
        m = _ENTRY.match(line)
        if m:
            current = None
            if m.group(1) == "Query":
                current = [m.group(2)]
                queries.append("")
        elif current is not None:
            current.append(line)
        if current is not None:
            queries[-1] = "\n".join(current)
    return queries


def replay_logged(srv: MariaDBServer, data: bytes, log) -> list[str]:
    srv.sql(f"SET GLOBAL general_log_file = '{log}'; SET GLOBAL general_log = 1;")
    try:
        srv.sql("", input_bytes=data)
    finally:
        srv.sql("SET GLOBAL general_log = 0;")
    return [s for s in logged_queries(log) if not s.startswith("SET GLOBAL general_log")]


def reset(srv: MariaDBServer, work: Workload, start: dict) -> None:
    srv.sql(f"DROP DATABASE IF EXISTS {q(work.db)};")
    Workload.__init__(work, SEED)
    srv.sql(work.schema())
    assert work.checksums(srv) == start


def check_statements(queries: list[str], row_changes: int | None) -> None:
    strays = [s for s in queries if not (FRAMING.match(s.lstrip()) or DML.match(s.lstrip()))]
    assert not strays, f"statements that are not the script's: {strays[:3]!r}"
    if row_changes is not None:
        dml = [s for s in queries if DML.match(s.lstrip())]
        assert len(dml) == row_changes, f"{len(dml)} INSERT/REPLACE/UPDATE/DELETE statements for {row_changes} rows"


def expected_dml(work: Workload, files, replace: bool) -> int:
    """One statement per row change; with --replace an update of the key is a DELETE of the old
    row and a REPLACE of the new one (a REPLACE alone would leave the old row)."""
    keys = {t: cols[0] for t, cols in work.tables}
    n = 0
    for rc in read_rows(binlog_spec.read_events(files)):
        n += 1
        if replace and rc.op == UPDATE and rc.before[keys[rc.table]] != rc.after[keys[rc.table]]:
            n += 1
    return n


@pytest.mark.parametrize("options", [["--sql2"], ["--sql2", "--replace"], ["-vv"]],
                         ids=["sql2", "replace", "base64-vv"])
def test_random_values_and_names_replay_exactly_and_run_only_the_intended_statements(
        recorded, replay_server, tmp_path, options):
    work, files, start, end = recorded
    statements_per_row = None if "-vv" in options else expected_dml(work, files, "--replace" in options)
    reset(replay_server, work, start)
    queries = replay_logged(replay_server, script(files, *options), tmp_path / "forward.log")
    assert work.checksums(replay_server) == end
    check_statements(queries, statements_per_row)
    if "-vv" in options:
        assert sum(1 for s in queries if s.startswith("BINLOG")) >= 3
    queries = replay_logged(replay_server, script(files, *options, "--rollback"), tmp_path / "rollback.log")
    assert work.checksums(replay_server) == start
    check_statements(queries, statements_per_row)


def test_the_seeded_names_hold_every_awkward_character():
    work = Workload(SEED)
    names = "".join([work.db] + [t for t, _ in work.tables] + [c for _, cols in work.tables for c in cols])
    for piece in ("`", "'", '"', " ", "\n", "*/", ";", "é", "中"):
        assert piece in names, piece
