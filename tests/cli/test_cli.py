"""The `binlog-spec events` command: text and JSON lines, stdout for output, stderr for diagnostics."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import binlog_spec
from binlog_spec import cli, compiled

from conftest import CORPUS, FIXTURES, ROOT

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
REQUIRED = {"file", "pos", "end_log_pos", "type", "type_code", "timestamp", "server_id", "size"}


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_events_jsonl_has_one_object_per_event_with_the_required_keys():
    code, out, err = run("events", "--format", "jsonl", str(DEMO))
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    expected = list(binlog_spec.open(DEMO))
    assert len(lines) == len(expected)
    for obj, ev in zip(lines, expected):
        assert REQUIRED <= obj.keys()
        assert (obj["pos"], obj["type"], obj["size"], obj["end_log_pos"]) == (ev.pos, ev.type, ev.size,
                                                                             ev.end_log_pos)
        assert obj["file"] == str(DEMO)
    gtid = next(o for o in lines if o["type"] == "GTID_EVENT")
    assert gtid["gtid"] == "0-1-1" and gtid["timestamp"] == "2026-01-01T00:00:00Z"
    tm = next(o for o in lines if o["type"] == "TABLE_MAP_EVENT")
    assert tm["schema"] == "shop" and tm["table"] == "customers" and isinstance(tm["table_id"], int)
    rows = next(o for o in lines if o["type"] == "WRITE_ROWS_EVENT_V1")
    assert set(rows["rows"]) == {"hex"}  # bytes are marked


def test_events_text_prints_mysqlbinlog_style_summaries():
    code, out, _ = run("events", str(DEMO))
    assert code == 0
    header, *lines = out.splitlines()
    assert header.startswith("# binlog-spec events: times in ")
    assert lines[0].startswith("#at 4 ") and "FORMAT_DESCRIPTION_EVENT" in lines[0]
    assert "Start: binlog v 4, server v 10.11" in lines[0]
    assert any("Table_map: `shop`.`customers` mapped to number" in line for line in lines)
    assert any("GTID 0-1-4 trans" in line for line in lines)
    assert any("Write_rows_v1: table id" in line and "STMT_END_F" in line for line in lines)


def test_payload_inner_events_carry_payload_pos():
    path = CORPUS / "rust_mysql_common/transaction_compression.000001"
    code, out, _ = run("events", "--format", "jsonl", str(path))
    objs = [json.loads(line) for line in out.splitlines()]
    payload = next(o for o in objs if o["type"] == "TRANSACTION_PAYLOAD_EVENT")
    inner = [o for o in objs if "payload_pos" in o]
    assert [o["type"] for o in inner] == ["QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]
    assert all(o["payload_pos"] == payload["pos"] for o in inner)


def test_a_broken_file_prints_earlier_events_then_one_error_line_and_exits_3():
    path = CORPUS / "MyFlash/haha.000005"
    code, out, err = run("events", "--format", "jsonl", str(path))
    assert code == cli.EXIT_BAD_INPUT == 3
    assert len(out.splitlines()) == 50
    assert err.splitlines() == [f"binlog-spec: error: {path}: offset 3283: file ends with 1 bytes, "
                                "less than a 19-byte event header"]


def test_malformed_bodies_warn_on_stderr_and_exit_1():
    path = CORPUS / "rust_mysql_common/corrupt-relay-bin.000624"
    code, out, err = run("events", str(path))
    assert code == cli.EXIT_WARNINGS == 1
    assert err.splitlines() == [f"binlog-spec: warning: {path}: offset 91204: QUERY_EVENT: body does not match "
                                "the QUERY_EVENT layout: requested 16949 bytes, but only 139 bytes available"]
    assert "MALFORMED" in out


def test_a_missing_file_exits_4():
    code, out, err = run("events", "/nonexistent/binlog.000001")
    assert code == cli.EXIT_IO == 4 and out == ""
    assert err.startswith("binlog-spec: error: /nonexistent/binlog.000001:")


def test_an_output_file_that_cannot_be_created_is_named_as_given_with_the_option(tmp_path):
    """Not the temporary file's name: -o and the path the user typed; exit 4 (a file could not be opened),
    and nothing left behind."""
    for argv in (["events"], ["sql", "--output-format", "binlog"]):
        code, out, err = run(*argv, "-o", "/nonexistent/dir/x.txt", str(FIXTURES / "demo/mariadb-bin.000001"))
        assert code == cli.EXIT_IO == 4
        assert err == "binlog-spec: error: -o /nonexistent/dir/x.txt: No such file or directory\n"
    (tmp_path / "d").mkdir()
    code, _, err = run("events", "-o", str(tmp_path / "d"), str(FIXTURES / "demo/mariadb-bin.000001"))
    assert code == 4 and err == f"binlog-spec: error: -o {tmp_path / 'd'}: Is a directory\n"
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


def test_several_files_are_read_in_order():
    a, b = CORPUS / "MyFlash/haha.000008", CORPUS / "MyFlash/haha.000009"
    code, out, _ = run("events", "--format", "jsonl", str(a), str(b))
    files = [json.loads(line)["file"] for line in out.splitlines()]
    assert code == 0 and files == sorted(files) and files[0] == str(a) and files[-1] == str(b)


def test_console_script_runs_and_stdout_closes_cleanly():
    """The installed entry point; piping into `head` must not print a traceback."""
    exe = ROOT / ".venv" / "bin" / "binlog-spec"
    cmd = f"'{exe}' events '{CORPUS / 'mbcj_osheroff/mysql-bin.sakila'}' | head -3"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
    assert len(r.stdout.splitlines()) == 3 and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "binlog_spec", "--version"], capture_output=True, text=True)
    # the version, and which core runs
    assert r.stdout == f"binlog-spec {binlog_spec.__version__}, {compiled.describe()}\n" and r.returncode == 0


def test_version_is_one_line_on_a_narrow_terminal():
    """Scripts parse `--version` (the packaging test reads the compiled core's list from it): a narrow
    terminal must not wrap it."""
    r = subprocess.run([sys.executable, "-m", "binlog_spec", "--version"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "30"})
    assert r.stdout.count("\n") == 1 and compiled.describe() in r.stdout and not r.stderr
