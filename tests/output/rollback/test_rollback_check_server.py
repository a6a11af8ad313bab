"""Proof on a real MariaDB: a rollback that checks before it overwrites (issue 18).

A window of transactions updates and deletes rows; later transactions update one of those rows again,
delete another, insert a row with a key the undo would put back, change a table without a key, and
TRUNCATE a table the window changed. The report must name exactly those rows and that TRUNCATE
(parsed from stderr), stdout stays empty and the exit code is 5. With --force the undo replays on the
server, and the rows the report does not name are back to their state before the window: CHECKSUM
TABLE of copies holding only those rows, the copies made on the server from a snapshot taken before the
window. Without the later transactions, the check passes silently and the undo is the one of the
window's binlog alone.
"""
from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

SCHEMA = """
CREATE DATABASE ck;
USE ck;
CREATE TABLE acct (id INT PRIMARY KEY, owner VARCHAR(20), bal INT);
CREATE TABLE tags (id INT NOT NULL, code VARCHAR(10) NOT NULL, UNIQUE KEY (code), note VARCHAR(20));
CREATE TABLE log (msg VARCHAR(20), n INT);
CREATE TABLE scratch (id INT PRIMARY KEY, v INT);
INSERT INTO acct VALUES (1,'ann',10),(2,'bob',20),(3,'cy',30),(4,'dee',40),(5,'eve',50),(6,'fay',60);
INSERT INTO tags VALUES (1,'red','r'),(2,'blue','b'),(3,'green','g');
INSERT INTO log VALUES ('a',1),('b',2),('c',3);
INSERT INTO scratch VALUES (1,1),(2,2);
"""

WINDOW = """
USE ck;
UPDATE acct SET bal = bal + 1 WHERE id IN (1, 2, 3);
BEGIN; DELETE FROM acct WHERE id = 4; DELETE FROM acct WHERE id = 5; COMMIT;
UPDATE tags SET note = 'x' WHERE code IN ('red', 'blue');
DELETE FROM tags WHERE code = 'green';
UPDATE log SET n = n * 10 WHERE msg IN ('a', 'b');
UPDATE scratch SET v = v + 100;
"""

LATER = """
USE ck;
UPDATE acct SET bal = 999 WHERE id = 2;
DELETE FROM acct WHERE id = 3;
INSERT INTO acct VALUES (5, 'new-eve', 5);
UPDATE tags SET note = 'y' WHERE code = 'blue';
UPDATE log SET n = 7 WHERE msg = 'a';
UPDATE acct SET bal = 0 WHERE id = 6;
TRUNCATE TABLE scratch;
"""

LINE = re.compile(r"^binlog-spec: conflict: (?:row (`\w+`\.`\w+`) \((.*?)\)=\((.*?)\)( \[no key: the whole row\])?|"
                  r"table (`\w+`\.`\w+`)): undone (\w+) of transaction (\S+) at (\S+):(\d+) \(([^)]*)\); "
                  r"later (\w+) at (\S+):(\d+) of transaction (\S+) at (\S+):(\d+) \(([^)]*)\)(?:: (.*))?$")


def parse(report: str) -> list[dict]:
    found = []
    for line in report.splitlines():
        if line.startswith("binlog-spec: conflict: "):
            m = LINE.match(line)
            assert m, line
            g = m.groups()
            found.append({"table": g[0] or g[4], "columns": g[1], "values": g[2], "whole": bool(g[3]),
                          "undone_op": g[5], "undone_gtid": g[6], "later": g[10], "later_gtid": g[13],
                          "statement": g[17]})
    return found


def run(*argv) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *map(str, argv)], out, err)
    return out.getvalue(), err.getvalue(), code


def position(srv: MariaDBServer) -> tuple[str, int]:
    file, pos = srv.sql("SHOW MASTER STATUS;").split("\t")[:2]
    return file, int(pos)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    srv = MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]).start()   # keys from the DDL
    try:
        srv.sql(SCHEMA)
        srv.sql("CREATE DATABASE snap; CREATE TABLE snap.acct AS SELECT * FROM ck.acct; "
                "CREATE TABLE snap.tags AS SELECT * FROM ck.tags; CREATE TABLE snap.log AS SELECT * FROM ck.log;")
        _, start = position(srv)
        srv.sql(WINDOW)
        _, stop = position(srv)
        srv.sql(LATER)
        srv.sql("FLUSH BINARY LOGS;")
        out = tmp_path_factory.mktemp("check")
        log = out / "mariadb-bin.000001"
        log.write_bytes(srv.binlogs()[0].read_bytes())
        window_only = out / "window" / "mariadb-bin.000001"       # the same file, cut where the window ends
        window_only.parent.mkdir()
        window_only.write_bytes(log.read_bytes()[:stop])
        yield srv, log, window_only, start, stop
    finally:
        srv.cleanup()


def test_the_report_names_exactly_the_later_changes_and_nothing_is_written(recorded):
    srv, log, _, start, stop = recorded
    for mode in ([], ["--sql"], ["--sql2"]):
        out, err, code = run(*mode, "--rollback", "--start-position", start, "--stop-position", stop, log)
        assert (out, code) == ("", 5), err
        found = parse(err)
        rows = {(c["table"], c["values"], c["later"]) for c in found if c["columns"] is not None}
        assert rows == {
            ("`ck`.`acct`", "2", "UPDATE"),           # updated again
            ("`ck`.`acct`", "3", "DELETE"),           # deleted
            ("`ck`.`acct`", "5", "INSERT"),           # a row the undo would put back
            ("`ck`.`tags`", "'blue'", "UPDATE"),      # the NOT NULL unique key
            ("`ck`.`log`", "'a', 10", "UPDATE"),      # no key: the whole row
        }, err
        assert [c["whole"] for c in found if c["table"] == "`ck`.`log`"] == [True]
        tables = [(c["table"], c["later"], c["statement"]) for c in found if c["columns"] is None]
        assert tables == [("`ck`.`scratch`", "TRUNCATE", "TRUNCATE TABLE scratch")]
        assert all(c["undone_gtid"] != c["later_gtid"] for c in found)
        assert err.rstrip().endswith("nothing written (exit 5; --force writes it anyway)")
    target = log.parent / "undo.bin"
    _, err, code = run("--output-format", "binlog", "-o", target, "--rollback", "--start-position", start,
                       "--stop-position", stop, log)
    assert code == 5 and not target.exists() and len(parse(err)) == 6


def test_forced_undo_gives_back_the_rows_the_report_did_not_name(recorded):
    srv, log, _, start, stop = recorded
    out, err, code = run("--sql2", "--rollback", "--force", "--start-position", start, "--stop-position", stop, log)
    assert code == 1 and out and len(parse(err)) == 6
    # the undo meets the later changes (acct 5 is back: a duplicate key): the client goes on past them
    subprocess.run(srv._client_args() + ["--force", "ck"], input=out.encode(), capture_output=True, check=False)
    # the rows not named: acct 1, 4 (and 6, changed later but outside the window); tags 'red'; log 'b'
    keep = {"acct": "id IN (1, 4)", "tags": "code = 'red'", "log": "msg = 'b'"}
    sums = {}
    for db in ("ck", "snap"):
        for table, where in keep.items():
            srv.sql(f"DROP TABLE IF EXISTS cmp.{table}_{db}; CREATE DATABASE IF NOT EXISTS cmp; "
                    f"CREATE TABLE cmp.{table}_{db} AS SELECT * FROM {db}.{table} WHERE {where};")
        got = srv.sql("CHECKSUM TABLE " + ", ".join(f"cmp.{t}_{db}" for t in keep) + " EXTENDED;")
        sums[db] = [line.split("\t")[1] for line in got.strip().splitlines()]
    assert sums["ck"] == sums["snap"]
    assert srv.sql("SELECT COUNT(*) FROM ck.acct WHERE id = 4;").strip() == "1"


def test_without_later_changes_the_check_is_silent_and_the_undo_is_the_one_of_the_window_alone(recorded):
    _, log, window_only, start, stop = recorded
    for mode in ([], ["--sql2"]):
        alone = run(*mode, "--rollback", "--start-position", start, window_only)
        checked = run(*mode, "--rollback", "--start-position", start, window_only)
        assert checked[2] == 0 and "conflict" not in checked[1]
        assert checked == alone
    # the window of the whole file with --force: the same undo as the window's file alone
    forced = run("--sql2", "--rollback", "--force", "--start-position", start, "--stop-position", stop, log)
    assert forced[0] == run("--sql2", "--rollback", "--start-position", start, window_only)[0]


_BOTH = """
import io, json, os, sys, time
os.environ["TZ"] = "UTC"
time.tzset()
from binlog_spec import compiled
from binlog_spec.cli import main
got = [compiled.describe()]
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    written = None
    if "-o" in argv:
        target = argv[argv.index("-o") + 1]
        if os.path.exists(target):
            written = open(target, "rb").read().hex()
            os.unlink(target)
    got.append([out.getvalue(), err.getvalue(), code, written])
print(json.dumps(got))
"""


def _both_cores(runs: list[list[str]]) -> dict[str, list]:
    """stdout, stderr, exit code and -o bytes of each run, in the pure-Python core and in the compiled one."""
    import json
    import os
    got = {}
    for name, pure in (("pure", True), ("compiled", False)):
        env = {k: v for k, v in os.environ.items() if k != "BINLOG_SPEC_PURE"}
        if pure:
            env["BINLOG_SPEC_PURE"] = "1"
        done = subprocess.run([sys.executable, "-c", _BOTH, json.dumps(runs)], env=env, capture_output=True,
                              text=True, check=True)
        got[name] = json.loads(done.stdout)
    assert got["pure"].pop(0).startswith("pure-Python core")
    assert got["compiled"].pop(0).startswith("compiled core (") and "_ccheck" in compiled_core()
    return got


def compiled_core() -> str:
    from binlog_spec import compiled
    return compiled.describe()


def test_the_compiled_core_gives_the_pure_python_report_undo_and_errors(recorded, tmp_path):
    """The differential check of issue 18's workload (tests/test_compiled_core.py runs the corpus): later
    changes through a NOT NULL unique text key, a table without a key, a TRUNCATE, and rows of the integer
    key the compiled loop checks; then the same file damaged after the window (cut inside a later event,
    a later event's CRC32 wrong): the errors name the file and offset alike."""
    import zlib
    _, log, _, start, stop = recorded
    data = log.read_bytes()
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import mutate
    later = [(pos, size) for pos, size in mutate.event_spans(data) if pos > stop and data[pos + 4] in (23, 24, 25)]
    pos, size = later[0]
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:pos + size // 2])
    flipped = bytearray(data)
    flipped[pos + size - 6] ^= 0x10
    bad_crc = tmp_path / "crc.bin"
    bad_crc.write_bytes(bytes(flipped))
    flipped[pos + size - 4:pos + size] = zlib.crc32(bytes(flipped[pos:pos + size - 4])).to_bytes(4, "little")
    valid = tmp_path / "valid.bin"
    valid.write_bytes(bytes(flipped))
    out = str(tmp_path / "undo.bin")
    runs = []
    for f in (log, cut, bad_crc, valid):
        for argv in (["--sql2", "--rollback"], ["--rollback", "--force"],
                     ["--output-format", "binlog", "-o", out, "--rollback", "--force"]):
            runs.append(["sql", *argv, "--start-position", str(start), "--stop-position", str(stop), str(f)])
    got = _both_cores(runs)
    for argv, pure, fast in zip(runs, got["pure"], got["compiled"]):
        assert fast == pure, argv
    assert len(parse(got["compiled"][0][1])) == 6 and got["compiled"][0][2] == 5
    for k in (3, 6):        # the damaged ones: the error names the file and the event's offset
        assert f"binlog-spec: error: {runs[k][-1]}: offset {pos}: " in got["compiled"][k][1], got["compiled"][k][1]
