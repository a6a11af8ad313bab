"""mysqlbinlog's rules for time, positions, input and output (issue 13), one test per behaviour, and
a comparison with Debian's mariadb-binlog on two corpus files whose timestamps rise steadily."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import binlog_spec
from binlog_spec.stream.transactions import Transactions

from conftest import CORPUS, FIXTURES

ROOT = FIXTURES.parent
DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
EXE = ROOT / ".venv" / "bin" / "binlog-spec"


def run(*argv: str, stdin: bytes | None = None, tz: str | None = "UTC") -> subprocess.CompletedProcess:
    """The installed command, as a user runs it (TZ set as given)."""
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    if tz is not None:
        env["TZ"] = tz
    return subprocess.run([str(EXE), *argv], input=stdin, capture_output=True, env=env)


def gtids(stdout: bytes) -> list[str]:
    return [json.loads(line)["gtid"] for line in stdout.splitlines() if b'"GTID_EVENT"' in line]


def types(stdout: bytes) -> list[str]:
    return [json.loads(line)["type"] for line in stdout.splitlines()]


def positions(stdout: bytes) -> list[int]:
    return [json.loads(line)["pos"] for line in stdout.splitlines()]


# ---------------------------------------------------------------------------------------- time zones
def test_start_datetime_is_read_in_the_local_time_zone():
    r = run("events", "--format", "jsonl", "--start-datetime", "2026-01-01 08:02:00", str(DEMO), tz="Asia/Shanghai")
    assert r.returncode == 0, r.stderr
    assert gtids(r.stdout) == ["0-1-5", "0-1-6", "0-1-7", "0-1-8"]


def test_timezone_option_overrides_tz():
    for zone in ("Asia/Shanghai", "+08:00", "UTC+8"):
        r = run("events", "--format", "jsonl", "--timezone", zone, "--stop-datetime", "2026-01-01 08:02:00",
                str(DEMO), tz="America/New_York")
        assert r.returncode == 0, r.stderr
        assert gtids(r.stdout) == ["0-1-1", "0-1-2", "0-1-3", "0-1-4"], zone


def test_an_offset_in_the_datetime_overrides_the_zone():
    r = run("events", "--format", "jsonl", "--start-datetime", "2026-01-01T00:02:00Z", str(DEMO), tz="Asia/Shanghai")
    assert gtids(r.stdout)[0] == "0-1-5"
    r = run("events", "--format", "jsonl", "--start-datetime", "2026-01-01 09:02:00+09:00", str(DEMO), tz="UTC")
    assert gtids(r.stdout)[0] == "0-1-5"


@pytest.mark.parametrize("text", ["2026-01-01 08:02:00", "2026-01-01T08:02:00", "2026-01-01 08:02:00.000000",
                                  "20260101080200", "2026-01-01 08:02"])
def test_every_datetime_form_is_accepted(text):
    r = run("events", "--format", "jsonl", "--start-datetime", text, str(DEMO), tz="Asia/Shanghai")
    assert r.returncode == 0, r.stderr
    assert gtids(r.stdout)[0] == "0-1-5"


def test_a_date_alone_means_its_midnight():
    r = run("events", "--format", "jsonl", "--start-datetime", "2026-01-02", str(DEMO), tz="Asia/Shanghai")
    assert r.returncode == 0 and gtids(r.stdout) == []
    r = run("events", "--format", "jsonl", "--start-datetime", "2026-01-01", str(DEMO), tz="Asia/Shanghai")
    assert gtids(r.stdout)[0] == "0-1-1"


def test_text_outputs_print_times_in_the_zone_and_say_which():
    r = run("events", "--timezone", "Asia/Shanghai", str(DEMO))
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "# binlog-spec events: times in Asia/Shanghai"
    assert any(line.startswith("#at 330 ") and " 2026-01-01 08:00:00 " in line for line in lines)
    r = run("rows", "--timezone", "+08:00", str(DEMO))
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "# binlog-spec rows: times in +08:00" and " 2026-01-01 08:01:00 " in lines[1]
    r = run("sql", str(DEMO), tz="Asia/Shanghai")
    text = r.stdout.decode()
    assert "# times in Asia/Shanghai" in text and "#260101  8:00:00 server id 1" in text
    r = run("sql", "--sql", str(DEMO), tz="Asia/Shanghai")
    assert "-- times in Asia/Shanghai" in r.stdout.decode()
    assert " 2026-01-01 08:01:00 server id 1" in r.stdout.decode()


def test_the_zone_header_names_a_dst_zone_without_todays_offset():
    """January in New York is -05:00, July -04:00: the header names the zone, never an offset of today
    that may not be the printed times' own."""
    r = run("events", "--timezone", "America/New_York", str(DEMO))
    assert r.stdout.decode().splitlines()[0] == "# binlog-spec events: times in America/New_York"
    r = run("sql", "--sql", str(DEMO), tz="America/New_York")
    assert "-- times in America/New_York\n" in r.stdout.decode()


def test_base64_comments_match_mariadb_binlog_in_the_same_zone():
    ours = run("sql", str(DEMO), tz="Asia/Shanghai").stdout.decode().splitlines()
    theirs = subprocess.run([_mariadb_binlog(), "--no-defaults", str(DEMO)], capture_output=True,
                            env={**os.environ, "TZ": "Asia/Shanghai"}).stdout.decode().splitlines()
    def stamps(lines):   # end_log_pos -> the time the comment prints
        return {line.split("end_log_pos ")[1].split()[0]: line.split(" server id")[0]
                for line in lines if line.startswith("#26") and "end_log_pos " in line}
    mine, tools = stamps(ours), stamps(theirs)
    assert len(set(mine) & set(tools)) >= 30
    assert {k: mine[k] for k in set(mine) & set(tools)} == {k: tools[k] for k in set(mine) & set(tools)}
    assert mine["372"] == "#260101  8:00:00"


def test_json_keeps_utc_with_z():
    r = run("events", "--format", "jsonl", "--timezone", "Asia/Shanghai", str(DEMO))
    first_gtid = next(json.loads(line) for line in r.stdout.splitlines() if b'"GTID_EVENT"' in line)
    assert first_gtid["timestamp"] == "2026-01-01T00:00:00Z"


def test_control_events_take_no_part_in_the_time_rule():
    """The demo's GTID_LIST is stamped 2026-11-22, later than every transaction: mariadb-binlog starts at
    it (and prints everything) for a start time, and stops at it (printing nothing) for a stop time.
    We decide per transaction, on its first event."""
    start, stop = "2026-01-01 00:02:00", "2026-01-01 00:04:00"
    theirs = _mariadb_binlog_gtids(DEMO, f"--start-datetime={start}")
    assert theirs == [f"0-1-{n}" for n in range(1, 9)]                # everything
    assert _mariadb_binlog_gtids(DEMO, f"--stop-datetime={stop}") == []   # nothing
    r = run("events", "--format", "jsonl", "--start-datetime", start, "--stop-datetime", stop, str(DEMO))
    assert gtids(r.stdout) == ["0-1-5", "0-1-6"]
    assert "GTID_LIST_EVENT" in types(r.stdout)                         # control events are always kept


# ---------------------------------------------------------------------------------------- positions
def test_a_start_position_between_events_is_an_error_naming_the_nearest_boundaries():
    r = run("events", "--start-position", "1250", str(DEMO))
    assert r.returncode == 2 and r.stdout == b""             # nothing is printed before the error
    assert b"--start-position 1250 is not the position of an event" in r.stderr
    assert b"1209 and 1251" in r.stderr and b"Traceback" not in r.stderr


def test_a_start_position_inside_a_transaction_keeps_it_whole_with_a_note():
    r = run("events", "--format", "jsonl", "--start-position", "1517", str(DEMO))
    assert r.returncode == 0
    assert gtids(r.stdout)[0] == "0-1-4" and 1209 in positions(r.stdout) and 1251 in positions(r.stdout)
    assert b"note: --start-position 1517 is inside the transaction that starts at 1209" in r.stderr


def test_a_stop_position_never_lets_a_rotate_or_stop_event_through():
    r = run("events", "--format", "jsonl", "--stop-position", "3772", str(DEMO))
    assert r.returncode == 0
    assert "ROTATE_EVENT" not in types(r.stdout) and max(positions(r.stdout)) < 3772
    assert gtids(r.stdout)[-1] == "0-1-8"


def test_a_stop_position_in_the_middle_of_an_events_bytes_cuts_its_transaction():
    """0-1-7 is GTID 3223-3265 + ALTER 3265-3407: 3300 falls inside the ALTER's bytes, so the transaction
    reaches past the stop and is left out, with the note a stop between its events gives (mariadb-binlog
    prints the ALTER, which starts before 3300, then ROLLBACK). 3230 cuts its GTID event alike; a
    control event cut by the stop (ROTATE 3772-3821) is left out too."""
    for stop in (3300, 3265, 3230):
        r = run("events", "--format", "jsonl", "--stop-position", str(stop), str(DEMO))
        assert r.returncode == 0 and gtids(r.stdout)[-1] == "0-1-6" and max(positions(r.stdout)) == 3192
        assert f"note: --stop-position {stop} is inside the transaction that starts at 3223".encode() in r.stderr
    r = run("events", "--format", "jsonl", "--stop-position", "3407", str(DEMO))
    assert gtids(r.stdout)[-1] == "0-1-7" and b"note" not in r.stderr
    r = run("events", "--format", "jsonl", "--stop-position", "3800", str(DEMO))
    assert gtids(r.stdout)[-1] == "0-1-8" and "ROTATE_EVENT" not in types(r.stdout) and b"note" not in r.stderr


def test_a_stop_position_inside_a_transaction_leaves_it_out_with_a_note():
    r = run("events", "--format", "jsonl", "--stop-position", "2300", str(DEMO))
    assert gtids(r.stdout)[-1] == "0-1-4" and max(positions(r.stdout)) == 2193
    assert b"note: --stop-position 2300 is inside the transaction that starts at 2224" in r.stderr


def test_mariadb_gtid_positions_are_accepted_as_mariadb_binlog_takes_them():
    r = run("events", "--format", "jsonl", "--start-position", "0-1-3", "--stop-position", "0-1-6", str(DEMO))
    assert r.returncode == 0, r.stderr
    ours = gtids(r.stdout)
    assert ours == ["0-1-4", "0-1-5", "0-1-6"]
    assert ours == _mariadb_binlog_gtids(DEMO, "--start-position=0-1-3", "--stop-position=0-1-6")


def test_a_start_position_past_the_end_is_a_warning():
    r = run("events", "--format", "jsonl", "--start-position", "999999", str(DEMO))
    assert r.returncode == 0 and gtids(r.stdout) == []
    assert b"warning: --start-position 999999 is past the end of" in r.stderr


# ---------------------------------------------------------------------------------------- input and output
@pytest.mark.parametrize("command", ["events", "rows", "sql", "analyze"])
def test_dash_reads_the_binlog_from_stdin(command):
    data = DEMO.read_bytes()
    fmt = ["--format", "json"] if command == "analyze" else []     # the text report's widths follow the name
    from_file = run(command, *fmt, str(DEMO))
    from_stdin = run(command, *fmt, "-", stdin=data)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout.replace(b"(stdin)", str(DEMO).encode()) == from_file.stdout


def test_errors_on_stdin_name_stdin_and_the_offset():
    r = run("events", "-", stdin=DEMO.read_bytes()[:1000])
    assert r.returncode == 3
    assert b"binlog-spec: error: (stdin): offset 862: QUERY_EVENT:" in r.stderr


@pytest.mark.parametrize("command", ["events", "rows", "sql", "analyze"])
def test_output_option_writes_the_same_as_stdout(tmp_path, command):
    target = tmp_path / "out.txt"
    r = run(command, "-o", str(target), str(DEMO))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"" and target.read_bytes() == run(command, str(DEMO)).stdout
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]          # no temporary file left


@pytest.mark.parametrize("command", ["events", "rows", "sql", "analyze"])
def test_a_failed_run_leaves_no_file_under_the_output_name(tmp_path, command):
    broken = tmp_path / "broken.bin"
    broken.write_bytes(DEMO.read_bytes()[:1000])
    target = tmp_path / "out.txt"
    r = run(command, "-o", str(target), str(broken))
    assert r.returncode == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.bin"]
    target.write_text("before")                                          # an older file stays as it was
    assert run(command, "-o", str(target), str(broken)).returncode == 3 and target.read_text() == "before"
    assert run(command, "-o", str(target), "--start-position", "1250", str(DEMO)).returncode == 2
    assert target.read_text() == "before"


# ---------------------------------------------------------------------------------------- filters
def test_table_filter_applies_to_statement_based_dml(tmp_path):
    path = CORPUS / "rust_mysql_common" / "binlog_transaction.000001"      # MySQL 5.0: statements only
    everything = _statements(run("events", "--format", "jsonl", str(path)).stdout)
    dml = [q for q in everything if q.split()[0].upper() in ("INSERT", "UPDATE", "DELETE", "REPLACE")]
    assert dml, everything
    target = dml[0].split()[2].strip("`").split("(")[0]
    kept = _statements(run("events", "--format", "jsonl", "--table", target, str(path)).stdout)
    assert dml[0] in kept
    none = _statements(run("events", "--format", "jsonl", "--table", "no_such_table", str(path)).stdout)
    assert not [q for q in none if q.split()[0].upper() in ("INSERT", "UPDATE", "DELETE", "REPLACE")]


def test_statement_tables_are_found_with_sqlglot():
    from binlog_spec.stream.filters import statement_tables

    assert statement_tables("INSERT INTO shop.t (a) VALUES (1)", "db") == [("shop", "t")]
    assert statement_tables("/* x */ REPLACE INTO t VALUES (1)", "db") == [("db", "t")]
    assert statement_tables("UPDATE t SET a = 1", "db") == [("db", "t")]
    assert statement_tables("DELETE FROM d.t WHERE 1", "db") == [("d", "t")]
    assert statement_tables("CREATE TABLE t (a INT)", "db") == []
    assert statement_tables("INSERT INTO t VALUES (", "db") is None


def test_an_unparseable_statement_is_kept_with_one_warning():
    from binlog_spec.stream.filters import FilterOptions, filter_events

    notes: list[tuple[str, str]] = []
    events = [ev for ev in binlog_spec.open(CORPUS / "rust_mysql_common" / "binlog_transaction.000001")]
    broken = [ev for ev in events if ev.type == "QUERY_EVENT" and ev.fields["query"].upper().startswith("INSERT")]
    assert broken
    for ev in broken:                  # a statement sqlglot cannot parse, twice
        ev.fields["query"] = "INSERT INTO t VALUES ("
    kept = list(filter_events(events, FilterOptions(tables=("nothing",)), None, lambda k, m: notes.append((k, m))))
    assert all(ev in kept for ev in broken)
    assert [k for k, _ in notes] == ["warning"] and "cannot parse" in notes[0][1]


def test_database_and_table_accept_comma_lists():
    both = run("rows", "--format", "jsonl", "--table", "shop.orders,shop.customers", str(DEMO))
    repeated = run("rows", "--format", "jsonl", "--table", "shop.orders", "--table", "shop.customers", str(DEMO))
    assert both.stdout == repeated.stdout and both.stdout
    one = run("rows", "--format", "jsonl", "-d", "nosuch,shop", str(DEMO))
    assert one.stdout == run("rows", "--format", "jsonl", str(DEMO)).stdout


def test_a_table_name_without_schema_matches_it_in_any_schema():
    bare = run("rows", "--format", "jsonl", "--table", "orders", str(DEMO))
    full = run("rows", "--format", "jsonl", "--table", "shop.orders", str(DEMO))
    assert bare.stdout == full.stdout and {json.loads(x)["table"] for x in bare.stdout.splitlines()} == {"orders"}


def test_help_says_what_each_filter_does():
    r = subprocess.run([str(EXE), "events", "--help"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "1000"})
    text = r.stdout
    for words in ("statement-based INSERT/REPLACE/UPDATE/DELETE", "--to-last-log", "local time zone",
                  "must be an event", "comma separated", "control events", "- reads standard input"):
        assert words in " ".join(text.split()), words


# ---------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("argv, option", [
    (["--start-position", "-5"], "--start-position"),
    (["--stop-position", "-1"], "--stop-position"),
    (["--server-id", "4294967296"], "--server-id"),
    (["--exclude-server-id", "-1"], "--exclude-server-id"),
    (["--start-datetime", "2026-01-02", "--stop-datetime", "2026-01-01"], "--stop-datetime"),
    (["--start-datetime", "yesterday"], "--start-datetime"),
    (["--timezone", "Mars/Olympus"], "--timezone"),
])
def test_bad_values_exit_2_naming_the_option(argv, option):
    r = run("events", *argv, str(DEMO))
    assert r.returncode == 2 and option.encode() in r.stderr and b"Traceback" not in r.stderr


@pytest.mark.parametrize("text, value", [("1M", 1 << 20), ("1MiB", 1 << 20), ("2K", 2048), ("1KiB", 1024),
                                         ("1G", 1 << 30), ("1GiB", 1 << 30), ("1048576", 1 << 20)])
def test_sizes_accept_k_m_g_suffixes_in_powers_of_1024(text, value):
    from binlog_spec.options import parse_size

    assert parse_size(text) == value
    r = run("analyze", "--format", "json", "--big-trx-bytes", text, str(DEMO))
    assert r.returncode == 0, r.stderr


def test_a_bad_size_exits_2_naming_the_option():
    r = run("analyze", "--big-trx-bytes", "1X", str(DEMO))
    assert r.returncode == 2 and b"--big-trx-bytes" in r.stderr


# ---------------------------------------------------------------------------------------- rollback
@pytest.mark.parametrize("mode", [[], ["--sql2"], ["--sql"]])
def test_rollback_stdout_holds_only_the_undo_and_stderr_summarises_the_rest(mode):
    r = run("sql", "--rollback", *mode, str(DEMO))
    assert r.returncode == 0, r.stderr
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "CREATE TABLE" not in out and "not undone" not in out
    assert "binlog-spec: note: 4 statements not undone (only row events can be inverted): 4 DDL" in err
    assert f"not undone: {DEMO}:372: CREATE DATABASE" in err


# ---------------------------------------------------------------------------------------- mariadb-binlog
def _mariadb_binlog() -> str:
    exe = shutil.which("mariadb-binlog")
    assert exe, "mariadb-binlog is required (make test installs it)"
    return exe


def _mariadb_binlog_gtids(path, *args, tz: str = "UTC") -> list[str]:
    out = subprocess.run([_mariadb_binlog(), "--no-defaults", *args, str(path)], capture_output=True, check=True,
                         env={**os.environ, "TZ": tz}).stdout.decode("latin-1")
    return [line.split("GTID ")[1].split()[0] for line in out.splitlines() if "\tGTID " in line]


def _statements(stdout: bytes) -> list[str]:
    return [json.loads(x)["query"] for x in stdout.splitlines() if b'"QUERY_EVENT"' in x]


def _transaction_starts(path) -> list:
    tx = Transactions()
    return [ev for ev in binlog_spec.open(path) if tx.step(ev)[0]]


def _theirs(path, starts: set[int], tz: str, *args: str) -> list[int]:
    out = subprocess.run([_mariadb_binlog(), "--no-defaults", *args, str(path)], capture_output=True, check=True,
                         env={**os.environ, "TZ": tz}).stdout.decode("latin-1")
    return [int(line.split()[2]) for line in out.splitlines() if line.startswith("# at ")
            and int(line.split()[2]) in starts]


def _ours(path, starts: set[int], tz: str, *args: str) -> list[int]:
    r = run("events", "--format", "jsonl", *args, str(path), tz=tz)
    assert r.returncode == 0, r.stderr
    return [p for p in positions(r.stdout) if p in starts]


STEADY = [CORPUS / "mariadb-poc" / "mariadb-repl-bin.000004", CORPUS / "canal" / "mysql-bin.000003"]


@pytest.mark.parametrize("path", STEADY, ids=lambda p: p.name)
def test_corpus_files_for_the_comparison_have_steadily_rising_timestamps(path):
    stamps = [ev.timestamp for ev in binlog_spec.open(path) if not ev.is_inner]
    assert stamps == sorted(stamps) and len({ev.timestamp for ev in _transaction_starts(path)}) >= 4


@pytest.mark.parametrize("tz", ["Asia/Shanghai", "America/New_York"])
@pytest.mark.parametrize("path", STEADY, ids=lambda p: p.name)
def test_datetime_filters_pick_the_same_first_and_last_transactions_as_mariadb_binlog(path, tz):
    starts = _transaction_starts(path)
    where = {ev.pos for ev in starts}
    times = sorted({ev.timestamp for ev in starts})
    for t in (times[1], times[len(times) // 2], times[-1]):
        text = datetime.fromtimestamp(t, ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M:%S")
        for option in ("--start-datetime", "--stop-datetime"):
            theirs = _theirs(path, where, tz, f"{option}={text}")
            ours = _ours(path, where, tz, option, text)
            assert theirs and ours, (option, text)
            assert (ours[0], ours[-1]) == (theirs[0], theirs[-1]), (option, text, tz)


@pytest.mark.parametrize("path", STEADY, ids=lambda p: p.name)
def test_position_filters_pick_the_same_first_and_last_transactions_as_mariadb_binlog(path):
    starts = [ev.pos for ev in _transaction_starts(path)]
    where = set(starts)
    for p in (starts[1], starts[len(starts) // 2], starts[-1]):
        for option in ("--start-position", "--stop-position"):
            theirs = _theirs(path, where, "UTC", f"{option}={p}")
            ours = _ours(path, where, "UTC", option, str(p))
            assert theirs and ours, (option, p)
            assert (ours[0], ours[-1]) == (theirs[0], theirs[-1]), (option, p)
        both = ("--start-position", str(starts[1]), "--stop-position", str(p))
        if p > starts[1]:
            theirs = _theirs(path, where, "UTC", f"--start-position={starts[1]}", f"--stop-position={p}")
            ours = _ours(path, where, "UTC", *both)
            assert (ours[0], ours[-1]) == (theirs[0], theirs[-1]), both
