"""Proof on a real server for the mysqlbinlog-style outputs (see test_replay_server.py for the SQL ones).

The same schema, workload and CHECKSUM TABLE figures as test_replay_server.py, with:

(a) the base64 script (BINLOG blocks) piped into the `mariadb` client on a server holding the
    start state reproduces the end checksums (plain and with -vv, whose ### lines are comments);
(b) the base64 rollback script applied to the end state gives the start checksums back;
(c) the rollback written as a binlog file, read by `mariadb-binlog FILE | mariadb`, gives the start
    checksums back; the forward binlog file gives the end state again;
(d) --rewrite-db replays the workload into a schema of another name (base64 script and binlog file).

And without a server: the statements of the script (every line that is not a comment) are those
the real tools write for the same binlogs: `mariadb-binlog` on the fixtures, and the `mysqlbinlog`
(MySQL 5.7 / 8.0) outputs saved in the corpus.
"""
from __future__ import annotations

import io
import re
import subprocess

import pytest

from binlog_spec import cli
from conftest import CORPUS, FIXTURES
from mysqlbinlog_output import parse_verbose, read_output
from test_replay_server import SCHEMA, TABLES, MariaDBServer, checksums, our_sql, recorded  # noqa: F401

OTHER = "replay_copy"


def renamed_checksums(srv: MariaDBServer, schema: str) -> dict[str, str]:
    """CHECKSUM TABLE of the tables under another schema name, keyed by their `replay.` names."""
    names = [t.replace("replay.", f"{schema}.", 1) for t in TABLES]
    out = srv.sql("CHECKSUM TABLE " + ", ".join(names) + " EXTENDED;")
    sums = dict(line.split("\t") for line in out.strip().splitlines())
    return {k.replace(f"{schema}.", "replay.", 1): v for k, v in sums.items()}


def our_binlog(files, tmp_path, *options) -> str:
    out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}.bin"
    our_sql(files, "--output-format", "binlog", "-o", str(out), *options)
    return str(out)


def mariadb_binlog(path: str) -> bytes:
    r = subprocess.run(["mariadb-binlog", path], capture_output=True, check=False)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


@pytest.mark.parametrize("options", [[], ["-vv"]], ids=["base64", "base64-verbose"])
def test_base64_script_reproduces_the_end_state(recorded, options):  # noqa: F811
    _, files, start, end = recorded
    with MariaDBServer() as fresh:
        fresh.sql(SCHEMA)
        assert checksums(fresh) == start
        script = our_sql(files, *options)
        assert b"BINLOG '" in script
        fresh.sql("", input_bytes=script)
        assert checksums(fresh) == end


def test_base64_rollback_gives_back_the_start_state(recorded):  # noqa: F811
    srv, files, start, end = recorded
    assert checksums(srv) == end
    script = our_sql(files, "--rollback")
    assert b"gtid_seq_no" not in script  # the undo is a new transaction, with GTIDs of the server's own
    srv.sql("", input_bytes=script)
    assert checksums(srv) == start
    srv.sql("", input_bytes=our_sql(files))  # and forward again
    assert checksums(srv) == end


def test_binlog_file_rollback_through_mariadb_binlog(recorded, tmp_path):  # noqa: F811
    srv, files, start, end = recorded
    assert checksums(srv) == end
    undo = our_binlog(files, tmp_path, "--rollback")
    srv.sql("", input_bytes=mariadb_binlog(undo))
    assert checksums(srv) == start
    redo = our_binlog(files, tmp_path)
    srv.sql("", input_bytes=mariadb_binlog(redo))
    assert checksums(srv) == end


def _other_schema() -> str:
    return SCHEMA.replace("CREATE DATABASE replay ", f"CREATE DATABASE {OTHER} ").replace(
        "USE replay;", f"USE {OTHER};")


def test_rewrite_db_replays_into_another_schema(recorded, tmp_path):  # noqa: F811
    _, files, start, end = recorded
    with MariaDBServer() as fresh:
        fresh.sql(_other_schema())
        assert renamed_checksums(fresh, OTHER) == start
        fresh.sql("", input_bytes=our_sql(files, "--rewrite-db", f"replay->{OTHER}"))
        assert renamed_checksums(fresh, OTHER) == end
        assert "replay" not in fresh.sql("SHOW DATABASES;").split()
        undo = our_binlog(files, tmp_path, "--rollback", "--rewrite-db", f"replay->{OTHER}")
        fresh.sql("", input_bytes=mariadb_binlog(undo))
        assert renamed_checksums(fresh, OTHER) == start


# ------------------------------------------------------------------ the real tools' own scripts

#: Notes written by hand into the saved corpus outputs.
_THEIRS_ONLY = re.compile(r"^--- ")


def statements(text: str) -> list[str]:
    """The script without its comments; old mysqlbinlog's `GTID_NEXT= '…'` + newline + delimiter joined;
    a user variable's hex literal in one spelling (0x41 COLLATE `…` / X'41')."""
    text = re.sub(r"(SET @@SESSION.GTID_NEXT= '[^']*'(?: /\* added by mysqlbinlog \*/)?)\n/\*!\*/;",
                  r"\1/*!*/;", text.replace("\r\n", "\n"))
    text = text.replace("' /* added by mysqlbinlog */ /*!*/;", "' /* added by mysqlbinlog *//*!*/;")
    text = re.sub(r"_(\w+) 0x([0-9A-F]+) COLLATE `\w+`", lambda m: f"_{m[1]} X'{m[2].lower()}'", text)
    return [line for line in text.split("\n")
            if line and not line.startswith("#") and not _THEIRS_ONLY.match(line)]


def _script(path, *options) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", *options, str(path)], out, err) == 0, err.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("name", ["demo", "types-full", "types-legacy-temporal", "types-noblob", "types-minimal",
                                  "charsets-nolog"])
def test_statements_are_mariadb_binlogs(name):
    path = FIXTURES / name / "mariadb-bin.000001"
    r = subprocess.run(["mariadb-binlog", str(path)], capture_output=True, check=True)
    assert statements(_script(path)) == statements(r.stdout.decode("utf-8", "surrogateescape"))


def _mysqlbinlog_cases():
    for dump in sorted((CORPUS / "mysql-cdc-rs" / "expected").glob("*__dump.txt")):
        version, case = dump.name.split("__")[:2]
        binlogs = sorted((CORPUS / "mysql-cdc-rs").glob(f"tests__events__{version}__{case}__*"))
        if binlogs and "load" not in case:  # LOAD DATA needs the file mysqlbinlog writes beside its output
            yield pytest.param(binlogs[0], dump, id=f"{version}-{case}")


@pytest.mark.parametrize("binlog, dump", list(_mysqlbinlog_cases()))
def test_statements_are_mysqlbinlogs(binlog, dump):
    assert statements(_script(binlog)) == statements(read_output(dump))


def test_load_data_is_left_as_a_comment():
    binlog = next((CORPUS / "mysql-cdc-rs").glob("tests__events__5.7__17_18_load__*"))
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", str(binlog)], out, err) == 0
    assert "# not replayable (LOAD DATA needs its file)" in out.getvalue()
    assert "LOAD DATA" in err.getvalue()


@pytest.mark.parametrize("name", ["demo", "types-full"])
def test_verbose_rows_are_mariadb_binlogs(name):
    path = FIXTURES / name / "mariadb-bin.000001"
    r = subprocess.run(["mariadb-binlog", "-vv", str(path)], capture_output=True, check=True)
    theirs = parse_verbose(r.stdout.decode("utf-8", "surrogateescape"))
    assert theirs and parse_verbose(_script(path, "-vv")) == theirs
    assert statements(_script(path, "-vv")) == statements(_script(path))  # ### lines are comments only


def test_rollback_script_inverts_the_rows_last_first():
    path = FIXTURES / "demo" / "mariadb-bin.000001"
    forward = parse_verbose(_script(path, "-v"))
    undo = parse_verbose(_script(path, "--rollback", "-v"))
    assert len(undo) == len(forward)
    assert undo[0][0] == "### UPDATE `shop`.`customers`" and undo[-1][0] == "### DELETE FROM `shop`.`customers`"
    last = forward[-1]  # UPDATE ... WHERE <before> SET <after>: undone as WHERE <after> SET <before>
    where, set_ = last.index("### WHERE"), last.index("### SET")
    assert undo[0] == [last[0], "### WHERE", *last[set_ + 1:], "### SET", *last[where + 1:set_]]


def test_skip_gtids():
    mariadb = _script(FIXTURES / "demo" / "mariadb-bin.000001", "--skip-gtids")
    assert "gtid_seq_no" not in mariadb and "START TRANSACTION" in mariadb
    mysql = _script(CORPUS / "mysql-cdc-rs" / "tests__events__5.7__16_xid__log.bin", "--skip-gtids")
    assert "SET @@SESSION.GTID_NEXT='AUTOMATIC'/*!*/;" in mysql
    assert not any("80549ecc" in line for line in statements(mysql))


def test_rewrite_db_renames_use_and_table_maps():
    import base64

    text = _script(FIXTURES / "demo" / "mariadb-bin.000001", "--rewrite-db", "shop->boutique", "-v")
    assert "use `boutique`/*!*/;" in text and "use `shop`" not in text
    assert "### INSERT INTO `boutique`.`customers`" in text and "`shop`.`" not in text.replace("#Q>", "")
    blocks = re.findall(r"BINLOG '\n(.*?)\n'/\*!\*/;", text, re.S)
    maps = [base64.b64decode(line) for block in blocks[1:] for line in block.split("\n")
            if base64.b64decode(line + "=" * (-len(line) % 4))[4:5] == b"\x13"]
    assert maps and all(b"\x08boutique\x00" in m for m in maps)


def test_xa_prepare_is_written_as_the_statement():
    import struct

    import binlog_spec
    from binlog_spec.output.base64.script import Base64Script
    from binlog_spec.binlog.writer import Item

    path = CORPUS / "mysql-cdc-rs" / "tests__events__8.0__31_update_rows_v2__binlog.000001"
    with binlog_spec.open(path) as reader:
        next(iter(reader))
        fde = reader.format_description
    body = bytes(fde.post_header_len(38)) + struct.pack("<BiII", 0, 1, 3, 2) + b"abc" + b"de"
    header = struct.pack("<IBIIIH", 1703581264, 38, 1, 19 + len(body), 0, 0)
    item = Item(header + body, str(path), 1000, fde)
    printer = Base64Script()
    lines = list(printer._item(item))
    assert lines[-2:] == ["XA PREPARE X'616263',X'6465',1", "/*!*/;"]
