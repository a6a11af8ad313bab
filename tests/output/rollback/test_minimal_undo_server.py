"""Proof on a real MariaDB: `sql --sql2 --rollback --minimal-update` of a window undoes only the columns the
window's UPDATEs changed, and leaves the later changes of other columns of the same rows in place; with
--skip-conflicts, a row a later transaction changed in an undone column is left out of the undo, and named
(issue 31).

Random tables (tests/proof/random_schema.py's generator: every column type, every kind of key) start with a
few rows; a window of UPDATEs sets some columns (W) of some rows, then later transactions set OTHER columns
of the same rows. The state expected after the undo is computed on the server: a copy of the end state in
which, row by row (matched by the HEX of their key), the W columns are set back to the start state's own
values with the server's UPDATE ... JOIN. CHECKSUM TABLE of the tables after the undo must equal the copy's.
Without --minimal-update, the same rollback refuses (exit 5): every later change of those rows is a conflict.
"""
from __future__ import annotations

import io
import random
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "tests" / "proof"))
from mariadb_server import MariaDBServer, available  # noqa: E402
import random_schema  # noqa: E402
from proof_case import q  # noqa: E402

SEEDS = range(31_100, 31_112)
pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadbd (make apt)")


def run(*argv) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *map(str, argv)], out, err)
    return out.getvalue(), err.getvalue(), code


def position(srv: MariaDBServer) -> int:
    return int(srv.sql("SHOW MASTER STATUS;").split("\t")[1])


def keyed_table(rng: random.Random, i: int) -> random_schema.Table:
    """A random table with a key, two columns besides it at least, and no generated column (MariaDB 10.11's
    CHECKSUM TABLE of one is not stable)."""
    saved = random_schema._INVISIBLE
    random_schema._INVISIBLE = None
    try:
        while True:
            t = random_schema.make_table(rng, i)
            plain = [c for c in t.columns if c.name not in t.key]
            if t.key and len(plain) >= 2 and not any(c.generated for c in t.columns):
                return t
    finally:
        random_schema._INVISIBLE = saved


def checksum(srv: MariaDBServer, db: str, table: str) -> str:
    return srv.sql(f"CHECKSUM TABLE {q(db)}.{q(table)} EXTENDED;").split("\t")[1].strip()


def match_key(t: random_schema.Table, a: str, b: str) -> str:
    return " AND ".join(f"HEX({a}.{q(k)}) = HEX({b}.{q(k)})" for k in t.key)


def same_value(a: str, b: str, c: random_schema.Column) -> str:
    """SQL: column `c` holds the same value in rows `a` and `b` (equal as values and as bytes: HEX of a
    FLOAT is of its integer part, and 'a' = 'A' under a _ci collation)."""
    return f"(({a}.{q(c.name)} <=> {b}.{q(c.name)}) AND (HEX({a}.{q(c.name)}) <=> HEX({b}.{q(c.name)})))"


class Scene:
    """One seed's tables, window and later transactions on a server, and what the undo must give."""

    def __init__(self, srv: MariaDBServer, seed: int, folder, conflict: bool):
        rng = random.Random(seed)
        self.srv, self.seed = srv, seed
        self.db = f"m{seed}"
        self.tables = [keyed_table(rng, i) for i in range(rng.choice([1, 2]))]
        head = f"SET SESSION sql_mode=''; USE {q(self.db)};\n"
        setup = [f"DROP DATABASE IF EXISTS {q(self.db)}", f"CREATE DATABASE {q(self.db)}", f"USE {q(self.db)}",
                 "SET SESSION sql_mode=''"]
        for t in self.tables:
            setup.append(t.ddl)
            names = ", ".join(q(c.name) for c in t.columns)
            rows = ", ".join(random_schema._row(rng, t, t.columns) for _ in range(rng.randint(4, 8)))
            setup.append(f"INSERT IGNORE INTO {q(t.name)} ({names}) VALUES {rows}")
        srv.sql(";\n".join(setup) + ";")
        self.snapshot("start")
        window, later, self.restore, self.conflicted = [], [], [], []
        for t in self.tables:
            keys = self.distinct_keys(t)
            chosen = rng.sample(keys, k=min(len(keys), rng.randint(1, 3)))
            plain = [c for c in t.columns if c.name not in t.key]
            for key in chosen:
                where = " AND ".join(f"HEX({q(k)}) = '{h}'" for k, h in zip(t.key, key))
                undone = rng.sample(plain, k=rng.randint(1, len(plain) - 1))
                others = [c for c in plain if c not in undone]
                window.append((t, where, undone))
                kept = rng.sample(others, k=rng.randint(1, len(others)))
                later.append(f"UPDATE {q(t.name)} SET "
                             + ", ".join(f"{q(c.name)} = {c.values(rng)}" for c in kept) + f" WHERE {where}")
                self.restore.append((t, where, undone))
        self.start = position(srv)
        for t, where, undone in window:     # each changes its row (new values tried until one does)
            for _ in range(20):
                sets = ", ".join(f"{q(c.name)} = {c.values(rng)}" for c in undone)
                if srv.sql(head + f"UPDATE {q(t.name)} SET {sets} WHERE {where}; SELECT ROW_COUNT();") \
                        .strip().splitlines()[-1] == "1":
                    break
        self.stop = position(srv)
        self.snapshot("mid")
        srv.sql(head + "".join(f"BEGIN; {s}; COMMIT;\n" for s in later))
        if conflict:        # a later change of a column the window changed (and the undo would set)
            self.later_conflict(rng, head)
        srv.sql("FLUSH BINARY LOGS;")
        self.snapshot("end")
        self.log = folder / "mariadb-bin.000001"
        self.log.write_bytes(srv.binlogs()[-2].read_bytes())

    def later_conflict(self, rng: random.Random, head: str) -> None:
        for t, where, undone in self.restore:
            for c in undone:
                cond = where.replace("HEX(`", "HEX(s.`")
                same = self.srv.sql(f"SELECT {same_value('s', 'm', c)} FROM {self.at('start', t)} s "
                                    f"JOIN {self.at('mid', t)} m ON {match_key(t, 's', 'm')} WHERE {cond};")
                if same.strip() != "0":       # (a column the window did not change: no conflict)
                    continue
                for _ in range(20):
                    got = self.srv.sql(head + f"UPDATE {q(t.name)} SET {q(c.name)} = {c.values(rng)} WHERE {where}; "
                                       "SELECT ROW_COUNT();")
                    if got.strip().splitlines()[-1] == "1":
                        self.conflicted.append((t, where))
                        return
        raise AssertionError(f"seed {self.seed}: no later change of an undone column could be made")

    def at(self, copy: str, t: random_schema.Table) -> str:
        """The table in a copy of the database (start, mid: after the window, end, expected)."""
        return f"{q(self.db + '_' + copy)}.{q(t.name)}"

    def row(self, t: random_schema.Table, where: str, copy: str) -> str:
        """A row of a copy as text (each column's value and bytes)."""
        cells = ", ".join(f"IFNULL(HEX({q(c.name)}), 'N'), IFNULL(HEX(CONCAT({q(c.name)})), 'N')" for c in t.columns)
        return self.srv.sql(f"SELECT CONCAT_WS('|', {cells}) FROM {self.at(copy, t)} WHERE {where};")

    def snapshot(self, name: str) -> None:
        db = f"{self.db}_{name}"
        sql = [f"SET SESSION sql_log_bin=0; DROP DATABASE IF EXISTS {q(db)}; CREATE DATABASE {q(db)};"]
        for t in self.tables:
            sql.append(f"CREATE TABLE {q(db)}.{q(t.name)} LIKE {q(self.db)}.{q(t.name)};"
                       f"INSERT INTO {q(db)}.{q(t.name)} SELECT * FROM {q(self.db)}.{q(t.name)};")
        self.srv.sql("\n".join(sql))

    def distinct_keys(self, t: random_schema.Table) -> list[tuple[str, ...]]:
        """The HEX of the key of each row, among rows whose keys the check tells apart (keys.py compares
        text without trailing spaces and case: a conflict more, never one less)."""
        cols = ", ".join(f"HEX({q(k)}), HEX(CONVERT({q(k)} USING utf8mb4))" for k in t.key)
        seen, out = set(), []
        for line in self.srv.sql(f"SELECT {cols} FROM {q(self.db)}.{q(t.name)};").splitlines():
            cells = line.split("\t")
            norm = tuple(bytes.fromhex(h).decode("utf-8", "replace").rstrip(" ").casefold() for h in cells[1::2])
            if norm not in seen:
                seen.add(norm)
                out.append(tuple(cells[0::2]))
        return out

    def expected(self, skip_conflicted: bool) -> None:
        """`<db>_expected`: the end state, each undone row's undone columns back to the start state's."""
        self.snapshot("expected")
        exp, start = f"{self.db}_expected", f"{self.db}_start"
        sql = ["SET SESSION sql_log_bin=0; SET SESSION sql_mode='';"]
        for t, where, undone in self.restore:
            if skip_conflicted and (t, where) in self.conflicted:
                continue
            # (a column the window set to the value it had is no change: its later value stays)
            sets = ", ".join(f"e.{q(c.name)} = IF({same_value('s', 'm', c)}, e.{q(c.name)}, s.{q(c.name)})" for c in undone)
            cond = where.replace("HEX(`", "HEX(e.`")
            sql.append(f"UPDATE {q(exp)}.{q(t.name)} e JOIN {q(start)}.{q(t.name)} s ON {match_key(t, 'e', 's')} "
                       f"JOIN {self.at('mid', t)} m ON {match_key(t, 'e', 'm')} SET {sets} WHERE {cond};")
        self.srv.sql("\n".join(sql))

    def reset(self) -> None:
        """The tables back to the end state (the undo's starting point)."""
        sql = ["SET SESSION sql_log_bin=0;"]
        for t in self.tables:
            sql.append(f"DELETE FROM {q(self.db)}.{q(t.name)}; INSERT INTO {q(self.db)}.{q(t.name)} "
                       f"SELECT * FROM {self.at('end', t)};")
        self.srv.sql("\n".join(sql))

    def undo_and_compare(self, script: str) -> list[str]:
        self.reset()
        self.srv.sql("", input_bytes=b"SET SESSION sql_log_bin=0;\n" + script.encode("utf-8", "surrogateescape"))
        return [t.name for t in self.tables
                if checksum(self.srv, self.db, t.name) != checksum(self.srv, f"{self.db}_expected", t.name)]


@pytest.fixture(scope="module")
def server():
    srv = MariaDBServer().start()
    try:
        yield srv
    finally:
        srv.cleanup()


@pytest.mark.parametrize("seed", SEEDS)
def test_the_minimal_undo_restores_the_undone_columns_and_keeps_the_later_ones(server, seed, tmp_path):
    scene = Scene(server, seed, tmp_path, conflict=False)
    window = ("--start-position", scene.start, "--stop-position", scene.stop, scene.log)
    later = any(scene.row(t, where, "start") != scene.row(t, where, "mid") != scene.row(t, where, "end")
                for t, where, _ in scene.restore)     # a row the window changed was changed again later
    out, err, code = run("--sql2", "--rollback", *window)
    assert (code, out == "") == ((5, True) if later else (0, False)), err    # whole rows: a later change conflicts
    out, err, code = run("--sql2", "--rollback", "--minimal-update", *window)
    assert code == 0, err
    assert "conflict" not in err
    scene.expected(skip_conflicted=False)
    assert scene.undo_and_compare(out) == [], f"seed {seed}: the undo differs from the server's state\n{out}"


@pytest.mark.parametrize("seed", SEEDS)
def test_skip_conflicts_leaves_the_conflicting_row_untouched_and_names_it(server, seed, tmp_path):
    scene = Scene(server, seed, tmp_path, conflict=True)
    window = ("--start-position", scene.start, "--stop-position", scene.stop, scene.log)
    out, err, code = run("--sql2", "--rollback", "--minimal-update", *window)
    conflicts = [line for line in err.splitlines() if line.startswith("binlog-spec: conflict: row ")]
    assert (code, out, len(conflicts)) == (5, "", 1), err
    table = scene.conflicted[0][0].name.replace("`", "``")
    assert f"row `m{seed}`.`{table}` (" in conflicts[0]
    out, err, code = run("--sql2", "--rollback", "--minimal-update", "--skip-conflicts", *window)
    assert code == 1, err
    assert [line for line in err.splitlines() if line.startswith("binlog-spec: conflict: row ")] == conflicts
    assert "--skip-conflicts" in err.splitlines()[-1]
    scene.expected(skip_conflicted=True)
    assert scene.undo_and_compare(out) == [], f"seed {seed}: the undo differs from the server's state\n{out}"
