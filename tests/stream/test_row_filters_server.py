"""--key on every key type the issue names, on a real MariaDB's binlog: composite, VARCHAR with trailing
spaces (PAD SPACE, case-insensitive), DECIMAL, DATETIME(6), BINARY; what it keeps equals filtering the full
`rows --format jsonl` output with an independent predicate."""
from __future__ import annotations

import io
import json
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

from binlog_spec.cli import main  # noqa: E402

DDL = """
CREATE DATABASE k;
CREATE TABLE k.comp (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b));
CREATE TABLE k.vc (id VARCHAR(12) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.dec (id DECIMAL(10,3) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.dt (id DATETIME(6) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.bin (id BINARY(4) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.uq (x INT, u INT NOT NULL, v INT, UNIQUE KEY (u));
CREATE TABLE k.vcb (id VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.nokey (a INT, u INT, UNIQUE KEY (u));
"""

WORK = """
INSERT INTO k.comp VALUES (1,'x',1),(1,'y',2),(2,'x',3);
UPDATE k.comp SET v=v+10;
UPDATE k.comp SET b='z' WHERE a=1 AND b='y';
DELETE FROM k.comp WHERE a=2;
INSERT INTO k.vc VALUES ('ab',1),('Ab c',2),('abc',3);
UPDATE k.vc SET v=v*2;
UPDATE k.vc SET id='AB' WHERE id='ab';
INSERT INTO k.dec VALUES (1.5,1),(1.25,2),(-3,3);
UPDATE k.dec SET v=v+1 WHERE id>0;
INSERT INTO k.dt VALUES ('2024-01-02 03:04:05.123456',1),('2024-01-02 03:04:05',2);
UPDATE k.dt SET v=9;
INSERT INTO k.bin VALUES (0x61620000,1),(0x00ff0102,2),('zz',3);
DELETE FROM k.bin WHERE v=2;
INSERT INTO k.uq VALUES (1,10,1),(2,20,2);
UPDATE k.uq SET v=5 WHERE u=20;
INSERT INTO k.vcb VALUES ('ab',1),('AB ',2);
INSERT INTO k.nokey VALUES (1,1);
UPDATE k.vcb SET v=v+1;
"""

# table -> [(--key value, independent predicate of an image)]
CASES = {
    "comp": [("1,x", lambda i: i["a"] == 1 and i["b"] == "x"), ("1,'Y  '", lambda i: i["a"] == 1 and i["b"] == "y"),
             ("1,z", lambda i: i["a"] == 1 and i["b"] == "z"), ("2,x", lambda i: i["a"] == 2 and i["b"] == "x")],
    "vc": [("ab", lambda i: i["id"].lower() == "ab"), ("'AB   '", lambda i: i["id"].lower() == "ab"),
           ("'ab c'", lambda i: i["id"] == "Ab c"), ("abc", lambda i: i["id"] == "abc")],
    "dec": [("1.5", lambda i: i["id"] == "1.500"), ("1.250", lambda i: i["id"] == "1.250"),
            ("-3", lambda i: i["id"] == "-3.000")],
    "dt": [("2024-01-02 03:04:05.123456", lambda i: i["id"] == "2024-01-02T03:04:05.123456"),
           ("2024-01-02 03:04:05", lambda i: i["id"] == "2024-01-02T03:04:05")],
    "bin": [("0x61620000", lambda i: i["id"] == {"hex": "61620000"}), ("0x00ff0102", lambda i: i["id"] == {"hex": "00ff0102"}),
            ("0x7a7a0000", lambda i: i["id"] == {"hex": "7a7a0000"})],
    "uq": [("20", lambda i: i["u"] == 20), ("10", lambda i: i["u"] == 10)],
    "vcb": [("ab", lambda i: i["id"] == "ab"), ("AB", lambda i: i["id"] == "AB "), ("'ab '", lambda i: i["id"] == "ab")],
}


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    assert code == 0, (" ".join(argv[4:7]), err.getvalue())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_key_of_every_type_equals_filtering_the_full_rows_output():
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("SET GLOBAL binlog_row_metadata=FULL;")      # (utf8mb4_bin: the TABLE_MAP's collation)
        srv.sql(DDL)
        srv.sql(WORK)
        log = str(srv.binlogs()[-1])
        full = run("rows", "--format", "jsonl", log)
        for table, cases in CASES.items():
            for key, pred in cases:
                want = [c for c in full if c["table"] == table
                        and any(pred(i) for i in (c["before"], c["after"]) if i is not None)]
                assert want, (table, key)
                assert run("rows", "--format", "jsonl", "--table", f"k.{table}", "--key", key, log) == want, (table, key)
        # a table whose only unique key may be NULL has no key: exit 2 naming it, before any output
        for command in (("rows",), ("sql", "--sql2"), ("sql",), ("analyze",)):
            code, out, err = _code(*command, "--table", "k.nokey", "--key", "1", log)
            assert code == 2 and out == "", (command, err)
            assert err == "binlog-spec: error: --key: table k.nokey has no primary key or NOT NULL unique key\n", err


# -- random schemas (the generator of the randomized replay, tests/proof/random_schema.py) ----------------

SEEDS = range(31_000, 31_010)


def _literal(value) -> str:
    """A --key value of a JSON image's value (independent of binlog-spec's typing: as a user types it)."""
    if isinstance(value, dict) and "hex" in value:
        return "0x" + value["hex"]
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _norm(value, case_sensitive: bool):
    if isinstance(value, str):
        value = value.rstrip(" ")
        return value if case_sensitive else value.lower()
    return json.dumps(value, sort_keys=True)


def _keys(srv, db: str) -> dict[str, list[tuple[str, bool]]]:
    """table -> its key's (column, case-sensitive) as the server has them: the primary key, else the first
    unique key of NOT NULL columns."""
    rows = srv.sql(f"SELECT s.TABLE_NAME, s.INDEX_NAME, s.COLUMN_NAME, c.IS_NULLABLE, "
                   f"IFNULL(c.COLLATION_NAME, 'binary') FROM information_schema.STATISTICS s JOIN "
                   f"information_schema.COLUMNS c USING (TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME) WHERE "
                   f"s.TABLE_SCHEMA = '{db}' AND s.NON_UNIQUE = 0 ORDER BY s.TABLE_NAME, "
                   f"s.INDEX_NAME <> 'PRIMARY', s.INDEX_NAME, s.SEQ_IN_INDEX")
    found: dict[str, dict[str, list]] = {}
    for line in rows.splitlines():
        table, index, column, nullable, collation = line.split("\t")
        found.setdefault(table, {}).setdefault(index, []).append(
            (column, nullable == "YES", collation.endswith(("_bin", "_cs")) or collation == "binary"))
    out = {}
    for table, indexes in found.items():
        for cols in indexes.values():       # (PRIMARY first)
            if not any(nullable for _, nullable, _ in cols):
                out[table] = [(c, cs) for c, _, cs in cols]
                break
    return out


def test_key_and_where_on_random_schemas_equal_filtering_the_full_rows_output():
    tests_proof = str(ROOT / "tests" / "proof")
    sys.path.insert(0, tests_proof)
    try:
        from proof_round import client
        from random_schema import make_case
    finally:
        sys.path.remove(tests_proof)
    checked = 0
    with mariadb_server.MariaDBServer() as srv:
        client(srv, b"SET GLOBAL binlog_row_metadata=FULL;")
        for seed in SEEDS:
            case = make_case(seed, ("FULL", "FULL"))
            db = f"r{seed}"
            client(srv, b"FLUSH BINARY LOGS;")
            first = srv.binlogs()[-1]
            script = (f"CREATE DATABASE {db} CHARACTER SET {case.db_charset};\nUSE {db};\nSET SESSION sql_mode='';\n"
                      + "".join(s + ";\n" for s in case.ddl + case.start + case.workload))
            client(srv, script.encode(), force=True)
            client(srv, b"FLUSH BINARY LOGS;")
            logs = [str(p) for p in srv.binlogs() if p.name >= first.name][:-1]
            full = [c for c in run("rows", "--format", "jsonl", *logs) if c["schema"] == db]
            for table, key in _keys(srv, db).items():
                mine = [c for c in full if c["table"] == table]
                values = {tuple(i[k] for k, _ in key if k in i) for c in mine for i in (c["before"], c["after"])
                          if i is not None and all(k in i for k, _ in key)}
                for vals in sorted(values, key=repr)[:4]:
                    wanted = tuple(_norm(v, cs) for v, (_, cs) in zip(vals, key))

                    def pred(i):
                        return all(k in i for k, _ in key) and \
                            tuple(_norm(i[k], cs) for k, cs in key) == wanted
                    want = [c for c in mine if any(pred(i) for i in (c["before"], c["after"]) if i is not None)]
                    literal = ",".join(_literal(v) for v in vals)
                    assert len(vals) == len(key), (vals, key)
                    got = run("rows", "--format", "jsonl", "--table", f"{db}.{table}", "--key", literal, *logs)
                    assert got == want, (seed, table, literal, key)
                    checked += 1
                ints = [k for k, _ in key if all(type(i.get(k, 0)) is int for c in mine
                                                  for i in (c["before"], c["after"]) if i is not None)]
                if ints and mine:
                    k = ints[0]
                    expr = f"`{k.replace('`', '``')}` BETWEEN 2 AND 9 OR `{k.replace('`', '``')}` IN (0, 32767)"
                    want = [c for c in mine if any(k in i and (2 <= i[k] <= 9 or i[k] in (0, 32767))
                                                   for i in (c["before"], c["after"]) if i is not None)]
                    got = run("rows", "--format", "jsonl", "--table", f"{db}.{table}", "--where", expr, *logs)
                    assert got == want, (seed, table, expr)
                    checked += 1
    assert checked >= 20


# -- a rollback under a row filter undoes only the kept rows, and checks only them ------------------------

def _code(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_rollback_of_the_kept_rows_replays_to_the_state_without_their_changes():
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE k; CREATE TABLE k.r (id INT PRIMARY KEY, v INT, note VARCHAR(8));")
        srv.sql("INSERT INTO k.r VALUES (1,5,'a'),(2,5,'b'),(3,1,'c'); UPDATE k.r SET v=6 WHERE id IN (1,2); "
                "UPDATE k.r SET note='x' WHERE id=3;")
        log = str(srv.binlogs()[-1])

        def undo_and_compare(argv, expected_sql):
            code, script, err = _code("sql", "--sql2", "--rollback", "--table", "k.r", *argv, log)
            assert code == 0, err
            srv.sql("SET SESSION sql_log_bin=0; DROP TABLE IF EXISTS k.e; CREATE TABLE k.e LIKE k.r; "
                    f"INSERT INTO k.e SELECT * FROM k.r; {expected_sql}; CREATE TABLE k.b AS SELECT * FROM k.r;")
            srv.sql("SET SESSION sql_log_bin=0;\n" + script)
            got, want = srv.sql("CHECKSUM TABLE k.r, k.e").splitlines()
            assert got.split("\t")[1] == want.split("\t")[1], (argv, script)
            srv.sql("SET SESSION sql_log_bin=0; DELETE FROM k.r; INSERT INTO k.r SELECT * FROM k.b; "
                    "DROP TABLE k.b, k.e;")

        # row 1 was inserted and updated in the window: its undo removes it, rows 2 and 3 stay as they are
        undo_and_compare(("--key", "1"), "DELETE FROM k.e WHERE id=1")
        # v = 1 holds in both images of row 3's changes: its insert and its note are undone, nothing else
        undo_and_compare(("--where", "v = 1"), "DELETE FROM k.e WHERE id=3")
        # --where "note = 'x'" keeps only the note's update of row 3 (its insert's image has note 'c')
        undo_and_compare(("--where", "note = 'x'"), "UPDATE k.e SET note='c' WHERE id=3")

        srv.sql("UPDATE k.r SET v=7 WHERE id=2;")       # a later change of row 2 only
        # undoing row 1 is no conflict with a later change of row 2
        code, _, err = _code("sql", "--sql2", "--rollback", "--table", "k.r", "--key", "1", log)
        assert code == 0 and "conflict" not in err, err
        # undoing the changes where v = 5 (rows 1 and 2) meets the later v=7 of row 2, which it does not keep
        code, out, err = _code("sql", "--sql2", "--rollback", "--table", "k.r", "--where", "v = 5", log)
        assert code == 5 and out == "", err
        assert "`id`=2" in err or "id=2" in err or "(2)" in err, err


# -- the base64 script and the binlog output hold rows events reduced to the kept rows ---------------------

def test_base64_script_and_its_rollback_replay_only_the_kept_rows():
    filler = "x" * 200
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE k; CREATE TABLE k.r (id INT PRIMARY KEY, v INT, note VARCHAR(250));")
        # one statement of many rows events (8 KiB each): the kept row is in its first, STMT_END_F on its last
        rows = ",".join(f"({i},{i % 7},'{filler}')" for i in range(1, 301))
        srv.sql(f"INSERT INTO k.r VALUES {rows}; UPDATE k.r SET v=v+100 WHERE id IN (1,2,250); "
                "UPDATE k.r SET note='n' WHERE id=3; DELETE FROM k.r WHERE id=299;")
        log = str(srv.binlogs()[-1])
        srv.sql("SET SESSION sql_log_bin=0; CREATE DATABASE e; CREATE TABLE e.one AS SELECT * FROM k.r WHERE id=1; "
                "CREATE TABLE e.all_ AS SELECT * FROM k.r; CREATE TABLE e.but_one AS SELECT * FROM k.r WHERE id<>1;")
        code, script, err = _code("sql", "--table", "k.r", "--key", "1", log)
        assert code == 0, err
        assert script.count("BINLOG '") >= 3
        srv.sql("SET SESSION sql_log_bin=0; DROP DATABASE k;")
        srv.sql("SET SESSION sql_log_bin=0;\n" + script)         # the database, the table and row 1's changes
        got, want = srv.sql("CHECKSUM TABLE k.r, e.one").splitlines()
        assert got.split("\t")[1] == want.split("\t")[1]
        # the undo of row 1 alone, on the whole end state: row 1 is gone, the others are as they were
        srv.sql("SET SESSION sql_log_bin=0; DELETE FROM k.r; INSERT INTO k.r SELECT * FROM e.all_;")
        code, script, err = _code("sql", "--rollback", "--table", "k.r", "--key", "1", log)
        assert code == 0, err
        srv.sql("SET SESSION sql_log_bin=0;\n" + script)
        got, want = srv.sql("CHECKSUM TABLE k.r, e.but_one").splitlines()
        assert got.split("\t")[1] == want.split("\t")[1]


def test_binlog_output_reduced_rows_events_end_their_statements(tmp_path):
    """--output-format binlog under --key: each statement's last kept rows event carries STMT_END_F where the
    dropped last one had it (mariadb-binlog reads the file), and the file replays to the kept rows."""
    import subprocess
    filler = "x" * 200
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE k; CREATE TABLE k.r (id INT PRIMARY KEY, v INT, note VARCHAR(250));")
        rows = ",".join(f"({i},{i % 7},'{filler}')" for i in range(1, 301))
        srv.sql(f"INSERT INTO k.r VALUES {rows}; UPDATE k.r SET v=v+100 WHERE id IN (1,2,250);")
        log = str(srv.binlogs()[-1])
        listing = subprocess.run(["mariadb-binlog", "--no-defaults", log], capture_output=True, check=True).stdout
        assert listing.count(b"Write_rows: table id") > 3       # (the INSERT is several rows events)
        out = tmp_path / "kept.bin"
        code, _, err = _code("sql", "--output-format", "binlog", "-o", str(out), "--table", "k.r", "--key", "1", log)
        assert code == 0, err
        listing = subprocess.run(["mariadb-binlog", "--no-defaults", str(out)], capture_output=True,
                                 check=True).stdout.decode()
        heads = [line for line in listing.splitlines() if "_rows: table id" in line]
        assert len(heads) == 2 and all("STMT_END_F" in h for h in heads), heads
        srv.sql("SET SESSION sql_log_bin=0; CREATE DATABASE e; CREATE TABLE e.one AS SELECT * FROM k.r WHERE id=1; "
                "DROP DATABASE k;")
        replay = subprocess.run(["mariadb-binlog", "--no-defaults", str(out)], capture_output=True, check=True).stdout
        srv.sql("", input_bytes=b"SET SESSION sql_log_bin=0;\n" + replay)
        got, want = srv.sql("CHECKSUM TABLE k.r, e.one").splitlines()
        assert got.split("\t")[1] == want.split("\t")[1]
