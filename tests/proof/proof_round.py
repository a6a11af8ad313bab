"""One round of the randomized replay: a case (random_schema.Case) run on a real MariaDB, every output
of binlog-spec checked against the server's own tables.

A round, on database `proof` of one server shared by every round (its settings changed per round:
binlog_row_metadata is global, binlog_row_image the workload's session):
1. the tables and their start rows; copies `proof_start` (CREATE TABLE ... LIKE + INSERT ... SELECT on
   the same server: a dump would lose FLOAT digits); FLUSH BINARY LOGS;
2. the workload (one client call, `--force`: a statement the server refuses is skipped, as it is not
   in the binlog either); FLUSH BINARY LOGS; copy `proof_end`. The binlog between the flushes is the
   round's input (under binlog_row_metadata=MINIMAL it has no names: `--schema` gives them, a
   `mariadb-dump --no-data` of the tables);
3. checks:
   - `sql --sql2`, and `sql --sql2 --complete-insert --replace`, replayed on the start state, give the
     end state;
   - `sql --sql2 --rollback` on the end state gives the start state;
   - the base64 script (`sql`) on the start state gives the end state;
   - `rows --format jsonl`: its row changes, applied to the server's start values (SELECT), give the
     server's end values, value by value;
   where the row images are partial (binlog_row_image NOBLOB, MINIMAL), `--replace` and `--rollback`
   may refuse, but only as the README documents it (exit code 3, the "lacks columns" line).
States are compared by CHECKSUM TABLE ... EXTENDED, of the tables themselves or, for a table with
generated columns (whose checksum MariaDB 10.11 does not keep stable), of copies without them.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import re
import shutil
import struct
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from binlog_spec import cli
from binlog_spec.cli.exit_codes import EXIT_UNWRITABLE

from conftest import ROOT
from proof_case import Case, q, table_names
from test_replay_server import checksums

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer, available  # noqa: E402,F401  (available: for the tests)

#: The refusal the README documents ("A rollback needs whole row images ... stops it naming the file and
#: offset: `--sql`/`--sql2` before writing anything, with exit code 6"; a --replace UPDATE needs whole
#: after images): the pre-pass's line, one per table and cause, and nothing on stdout.
REFUSAL_EXIT = EXIT_UNWRITABLE
REFUSAL = re.compile(r"^binlog-spec: error: \S+: offset \d+: \w+: `(?:[^`]|``)+`\.`((?:[^`]|``)+)`"
                     r"(?: \(and \d+ more rows events? of it\))?: the (?:before|after) images of its [A-Za-z ]+ rows "
                     r"lack columns \(binlog_row_image MINIMAL or NOBLOB\)", re.M)
#: The columns a NOBLOB image may leave out: a table without one has whole images, and no refusal.
BLOBS = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext", "longtext", "json",
         "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
         "geometrycollection"}

DB, START, END, REF, CMP = "proof", "proof_start", "proof_end", "proof_ref", "proof_cmp"
T0 = 1_700_000_000                                  # the setup's events (SET timestamp); the workload's: T0 + 100
WORKLOAD_START = "2023-11-14T22:14:10Z"             # T0 + 50


class ClientError(RuntimeError):
    pass


def client(srv: MariaDBServer, data: bytes, force: bool = False) -> str:
    """Run SQL (bytes) through one `mariadb` client call; --force goes on past refused statements."""
    r = subprocess.run(srv._client_args() + (["--force"] if force else []), input=data, capture_output=True,
                       check=False)
    if r.returncode != 0 and not force:
        raise ClientError(r.stderr.decode("utf-8", "replace").strip()[:2000])
    return r.stdout.decode("utf-8", "replace")


def run_cli(*args: str) -> tuple[int, bytes, str]:
    """binlog-spec in this process: (exit code, stdout, stderr); an exception is a crash (exit 70)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        code = cli.main(list(args), out, err)
    except Exception:      # noqa: BLE001 - a crash is a finding, with its traceback
        return 70, b"", traceback.format_exc()
    return code, out.getvalue().encode("utf-8", "surrogateescape"), err.getvalue()


@dataclass
class Col:
    name: str
    data_type: str
    charset: str | None
    generated: bool


@dataclass
class Round:
    case: Case
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checks: int = 0
    refusals: int = 0
    row_changes: int = 0
    files: list[Path] = field(default_factory=list)
    schema: Path | None = None


# ------------------------------------------------------------------------------------------ server values

INTS = {"tinyint", "smallint", "mediumint", "int", "bigint", "year"}
TEXTS = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set"}
GEOMETRY = {"geometry", "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
            "geometrycollection"}
WILD = object()      # a column a partial image left out: unknown, equal to anything
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def columns_of(srv: MariaDBServer, db: str) -> dict[str, list[Col]]:
    out = client(srv, ("SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, IFNULL(CHARACTER_SET_NAME, ''), IS_GENERATED "
                       f"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}' "
                       "ORDER BY TABLE_NAME, ORDINAL_POSITION;").encode())
    tables: dict[str, list[Col]] = {}
    for line in out.splitlines():
        t, c, d, cs, gen = line.split("\t")
        tables.setdefault(t, []).append(Col(c, d, cs or None, gen == "ALWAYS"))
    return tables


def _server_expr(c: Col) -> str:
    n = q(c.name)
    if c.data_type == "bit":
        return f"{n} + 0"
    if c.data_type == "float":
        return f"CAST({n} AS DOUBLE)"
    if c.data_type == "timestamp":
        return f"UNIX_TIMESTAMP({n})"
    if c.data_type in TEXTS and c.charset != "binary":
        return f"HEX(CONVERT({n} USING utf8mb4))"
    if c.data_type in ("inet6", "uuid"):
        return f"HEX(CAST({n} AS BINARY(16)))"
    if c.data_type in TEXTS or c.data_type in GEOMETRY or "binary" in c.data_type or "blob" in c.data_type:
        return f"HEX({n})"
    return n


def _micros_of_time(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    hms, _, frac = text.lstrip("-").partition(".")
    h, m, s = (int(x) for x in hms.split(":"))
    return sign * (((h * 60 + m) * 60 + s) * 1_000_000 + int((frac + "000000")[:6]))


def _datetime_text(text: str) -> str:
    day, _, clock = text.replace("T", " ").partition(" ")
    hms, _, frac = clock.partition(".")
    return f"{day} {hms}.{(frac + '000000')[:6]}"


def server_value(c: Col, text: str):
    """A value of the server's SELECT (the expression of `_server_expr`) in canonical form."""
    if text == "NULL":
        return None
    t = c.data_type
    if t in INTS or t == "bit":
        return int(text)
    if t == "decimal":
        return Decimal(text)
    if t == "float":
        return struct.pack("<f", float(text))
    if t == "double":
        return struct.pack("<d", float(text))
    if t == "timestamp":
        return Decimal(text)
    if t == "time":
        return _micros_of_time(text)
    if t == "datetime":
        return _datetime_text(text)
    if t == "date":
        return text
    if t in TEXTS and c.charset != "binary":
        s = bytes.fromhex(text).decode("utf-8")
        return frozenset(s.split(",")) - {""} if t == "set" else s
    if _server_expr(c).startswith("HEX"):
        return bytes.fromhex(text)
    return text


def our_value(c: Col, v):
    """A value of `rows --format jsonl` in the same canonical form."""
    if v is None:
        return None
    t = c.data_type
    try:
        if t in INTS or t == "bit":
            return int(v)
        if t == "decimal":
            return Decimal(v)
        if t == "float":
            return struct.pack("<f", float(v))
        if t == "double":
            return struct.pack("<d", float(v))
        if t == "timestamp":
            if isinstance(v, str) and v.startswith("0000"):
                return Decimal(0)
            d = dt.datetime.fromisoformat(v.replace("Z", "+00:00")) - EPOCH
            return Decimal(d.days * 86400 + d.seconds) + Decimal(d.microseconds) / 1_000_000
        if t == "time":
            return _micros_of_time(v)
        if t == "datetime":
            return _datetime_text(v)
        if t in GEOMETRY:
            return v["srid"].to_bytes(4, "little") + bytes.fromhex(v["wkb"]["hex"])
        if t == "set":
            return frozenset(v)
        if isinstance(v, dict) and set(v) == {"hex"}:
            b = bytes.fromhex(v["hex"])
            return b if t not in TEXTS or c.charset == "binary" else ("undecoded text", b)
        return v
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return ("unreadable", repr(v), str(exc))


def server_rows(srv: MariaDBServer, db: str, table: str, cols: list[Col]) -> list[dict]:
    cols = [c for c in cols if not c.generated]
    out = client(srv, f"SELECT {', '.join(_server_expr(c) for c in cols)} FROM {q(db)}.{q(table)};".encode())
    rows = []
    for line in out.splitlines():
        cells = line.split("\t")
        rows.append({c.name: server_value(c, x) for c, x in zip(cols, cells)})
    return rows


def _matches(row: dict, image: dict) -> bool:
    return all(row.get(k, WILD) is WILD or v is WILD or row[k] == v for k, v in image.items())


def _closest(row: dict, rows: list[dict], row_is_ours: bool = False) -> str:
    """How the nearest of `rows` differs from `row`: the columns that differ, each ours vs the server's."""
    if not rows:
        return "no rows"
    best = max(rows, key=lambda o: sum(1 for k, v in row.items() if o.get(k, WILD) is WILD or o[k] == v))
    diffs = []
    for k, v in row.items():
        if not (best.get(k, WILD) is WILD or v is WILD or best[k] == v):
            ours, theirs = (v, best[k]) if row_is_ours else (best[k], v)
            diffs.append(f"{k}: ours {ours!r:.120} != server {theirs!r:.120}")
    return "; ".join(diffs) or "equal"


def _show(row: dict) -> str:
    return "{" + ", ".join(f"{k}: {'?' if v is WILD else repr(v)[:80]}" for k, v in row.items()) + "}"


# ------------------------------------------------------------------------------------------ the round

class Proof:
    """One server for every round; `run(case, folder)` plays a round and returns it (its failures).
    `extra`: more scripts a round replays, each (what, sql's options, backwards): forward on the start state
    giving the end state, or backwards (a rollback) on the end state giving the start state."""

    def __init__(self, extra: tuple[tuple[str, tuple[str, ...], bool], ...] = ()) -> None:
        self.srv = MariaDBServer()
        self.extra = extra

    def __enter__(self) -> "Proof":
        self.srv.start()
        client(self.srv, b"SET GLOBAL log_bin_compress_min_len=10;")
        return self

    def __exit__(self, *exc) -> None:
        self.srv.cleanup()

    # -- helpers
    def _copy(self, src: str, dst: str, cols: dict[str, list[Col]]) -> str:
        sql = [f"DROP DATABASE IF EXISTS {dst};", f"CREATE DATABASE {dst};"]
        for t, cs in cols.items():
            names = ", ".join(q(c.name) for c in cs if not c.generated)
            sql.append(f"CREATE TABLE {dst}.{q(t)} LIKE {src}.{q(t)};")
            sql.append(f"INSERT INTO {dst}.{q(t)} ({names}) SELECT {names} FROM {src}.{q(t)};")
        return "\n".join(sql) + "\n"

    def _restore(self, src: str, cols: dict[str, list[Col]]) -> str:
        sql = ["SET SESSION sql_log_bin=0;", "SET SESSION sql_mode='';"]
        for t, cs in cols.items():
            names = ", ".join(q(c.name) for c in cs if not c.generated)
            sql.append(f"DELETE FROM {DB}.{q(t)};")
            sql.append(f"INSERT INTO {DB}.{q(t)} ({names}) SELECT {names} FROM {src}.{q(t)};")
        return "\n".join(sql) + "\n"

    def state(self, db: str, cols: dict[str, list[Col]]) -> dict[str, str]:
        """CHECKSUM of each table; of a copy without its generated columns where it has some."""
        prep, names = [f"DROP DATABASE IF EXISTS {CMP};", f"CREATE DATABASE {CMP};"], []
        for i, (t, cs) in enumerate(cols.items()):
            if any(c.generated for c in cs):
                plain = ", ".join(q(c.name) for c in cs if not c.generated)
                prep.append(f"CREATE TABLE {CMP}.t{i} AS SELECT {plain} FROM {q(db)}.{q(t)};")
                names.append(f"{CMP}.t{i}")
            else:
                names.append(f"{q(db)}.{q(t)}")
        client(self.srv, ("SET SESSION sql_log_bin=0;" + "\n".join(prep)).encode())
        sums = checksums(self.srv, names)
        return {t: s for t, s in zip(cols, sums.values())}

    # -- the round
    def run(self, case: Case, folder: Path) -> Round:
        rnd = Round(case)
        srv = self.srv
        tables = table_names(case)
        session = f"SET SESSION sql_mode='';\nSET SESSION binlog_row_image={case.image};\n"
        from_ddl = case.metadata != "FULL" and case.names == "ddl"
        if from_ddl:                 # the CREATE TABLEs in the files given, before a --start-datetime
            client(srv, b"FLUSH BINARY LOGS;")
        ddl_first = srv.binlogs()[-1]
        setup = (f"SET GLOBAL binlog_row_metadata={case.metadata};\nSET GLOBAL log_bin_compress={case.compress};\n"
                 f"SET timestamp={T0};\n"
                 f"DROP DATABASE IF EXISTS {DB};\nCREATE DATABASE {DB} CHARACTER SET {case.db_charset};\n"
                 f"USE {DB};\n{session}" + "".join(s + ";\n" for s in case.ddl + case.start))
        client(srv, setup.encode(), force=True)
        cols = columns_of(srv, DB)
        missing = [t for t in tables if t not in cols]
        if missing:
            rnd.failures.append(f"setup: the server refused CREATE TABLE of {missing}")
            return rnd
        cols = {t: cols[t] for t in tables}
        client(srv, (f"SET timestamp={T0};\n" + self._copy(DB, START, cols) + "FLUSH BINARY LOGS;").encode())
        first = srv.binlogs()[-1]
        client(srv, (f"SET timestamp={T0 + 100};\nUSE {DB};\n{session}"
                     + "".join(s + ";\n" for s in case.workload)).encode(), force=True)
        client(srv, b"FLUSH BINARY LOGS;")
        client(srv, self._copy(DB, END, cols).encode())
        folder.mkdir(parents=True, exist_ok=True)
        logs = [p for p in srv.binlogs() if p.name >= (ddl_first if from_ddl else first).name][:-1]
        for p in logs:
            shutil.copyfile(p, folder / p.name)
            rnd.files.append(folder / p.name)
        theirs_files = [str(folder / p.name) for p in logs if p.name >= first.name]
        opts: list[str] = []
        if from_ddl:
            opts = ["--start-datetime", WORKLOAD_START]
        elif case.metadata != "FULL":
            dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={srv.socket}", "-uroot", "--no-data",
                                   "--databases", DB], capture_output=True, check=True)
            rnd.schema = folder / "schema.sql"
            rnd.schema.write_bytes(dump.stdout)
            opts = ["--schema", str(rnd.schema)]
        start, end = self.state(START, cols), self.state(END, cols)
        files = [str(p) for p in rnd.files]
        partial = case.image != "FULL"
        # The reference: the server's own binlog, through mariadb-binlog, applied to the start state. Where
        # it does not reach the end state the binlog itself lacks the change (a server limit, noted, not a
        # failure of ours), and our outputs are held to what the binlog says.
        theirs = subprocess.run(["mariadb-binlog", "--no-defaults", *theirs_files], capture_output=True,
                                check=True).stdout
        client(srv, self._restore(START, cols).encode() + theirs)
        ref_state, ref_db = self.state(DB, cols), END
        if ref_state != end:
            rnd.notes.append("server: mariadb-binlog's replay of the binlog differs from the end state in "
                             f"{[t for t in tables if ref_state[t] != end[t]]}: compared with that replay")
            client(srv, self._copy(DB, REF, cols).encode())
            end, ref_db = ref_state, REF

        def replay(what: str, args: list[str], base: str, expected: dict, may_refuse: bool) -> None:
            rnd.checks += 1
            code, script, err = run_cli("sql", *args, *opts, *files)
            if code != 0:
                refused = REFUSAL.search(err) if may_refuse and code == REFUSAL_EXIT else None
                if refused and script:
                    rnd.failures.append(f"{what}: refused, but {len(script)} characters were written first")
                if refused:
                    table = refused.group(1).replace("``", "`")
                    if case.image == "NOBLOB" and not any(c.data_type in BLOBS for c in cols.get(table, [])):
                        rnd.failures.append(f"{what}: refused, but the NOBLOB images of {table!r} (no BLOB, TEXT, "
                                            f"JSON or GEOMETRY column) are whole: {err.strip()[:500]}")
                    rnd.refusals += 1
                    return
                rnd.failures.append(f"{what}: exit {code}: {err.strip()[:1500]}")
                return
            try:
                client(srv, self._restore(base, cols).encode() + script)
            except ClientError as exc:
                rnd.failures.append(f"{what}: the server refused the script: {exc}")
                return
            got = self.state(DB, cols)
            wrong = [t for t in tables if got[t] != expected[t]]
            if wrong:
                rnd.failures.append(f"{what}: tables differ from the server's: {wrong}")

        replay("sql --sql2", ["--sql2"], START, end, False)
        replay("sql --sql2 --complete-insert --replace", ["--sql2", "--complete-insert", "--replace"], START, end,
               partial)
        replay("sql --sql2 --rollback", ["--sql2", "--rollback"], ref_db, start, partial)
        replay("sql (base64)", [], START, end, False)
        for what, args, backwards in self.extra:
            if backwards:
                replay(what, list(args), ref_db, start, partial)
            else:
                replay(what, list(args), START, end, False)
        self.check_rows(rnd, cols, opts, files, ref_db)
        return rnd

    def check_rows(self, rnd: Round, cols: dict[str, list[Col]], opts: list[str], files: list[str],
                   end_db: str) -> None:
        """`rows --format jsonl` applied to the server's start values gives its end values."""
        rnd.checks += 1
        code, out, err = run_cli("rows", "--format", "jsonl", *opts, *files)
        if code != 0:
            rnd.failures.append(f"rows: exit {code}: {err.strip()[:1500]}")
            return
        state = {t: server_rows(self.srv, START, t, cs) for t, cs in cols.items()}
        by_name = {t: {c.name: c for c in cs if not c.generated} for t, cs in cols.items()}

        def image(t: str, img: dict | None) -> dict:
            return {k: our_value(by_name[t][k], v) for k, v in (img or {}).items() if k in by_name[t]}

        for n, line in enumerate(out.decode("utf-8", "surrogateescape").splitlines(), 1):
            ev = json.loads(line)
            rnd.row_changes += 1
            t = ev["table"]
            if ev["schema"] != DB or t not in cols:
                continue
            unknown = [k for k in {**(ev["before"] or {}), **(ev["after"] or {})} if k not in by_name[t]
                       and k not in {c.name for c in cols[t]}]
            if unknown:
                rnd.failures.append(f"rows: line {n}: columns {unknown} are not columns of {t!r}")
                return
            rows = state[t]
            if ev["op"] != "insert":
                before = image(t, ev["before"])
                hit = next((i for i, r in enumerate(rows) if _matches(r, before)), None)
                if hit is None:
                    rnd.failures.append(f"rows: line {n}: {ev['op']} of {t!r}: its before image is no row of the "
                                        f"table; nearest: {_closest(before, rows, row_is_ours=True)}")
                    return
                old = rows.pop(hit)
            if ev["op"] != "delete":
                after = image(t, ev["after"])
                row = {c: WILD for c in by_name[t]} if ev["op"] == "insert" else old
                row.update(after)
                rows.append(row)
        for t, cs in cols.items():
            theirs = server_rows(self.srv, end_db, t, cs)
            ours = list(state[t])
            for r in theirs:
                hit = next((i for i, o in enumerate(ours) if _matches(o, r)), None)
                if hit is None:
                    rnd.failures.append(f"rows: table {t!r}: a row of the server's is not in ours; nearest: "
                                        f"{_closest(r, ours)}")
                    return
                ours.pop(hit)
            if ours:
                rnd.failures.append(f"rows: table {t!r}: rows the server does not have: {[_show(o) for o in ours][:6]}")
                return


def save_failure(rnd: Round, folder: Path) -> Path:
    """The reproducer: case.sql (setting, seed, DDL, statements, the failures as comments), the binlog and
    the schema dump beside it in `folder`. case.sql copied to tests/proof/proof_cases/ is a regression test."""
    note = "failures:\n" + "\n".join(f"  {f}" for f in rnd.failures + rnd.notes)
    case = dataclasses.replace(rnd.case, note=note)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "case.sql").write_text(case.to_sql(), encoding="utf-8")
    return folder
