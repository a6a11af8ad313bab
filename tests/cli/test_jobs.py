"""--jobs N: the input cut at transaction boundaries, decoded in N processes, the output byte for byte that
of one process (stdout, stderr, exit code), at a fault in the middle of a file too.

The piece size is forced small (cli.jobs.PIECE_ENV) so that every file, however small, is cut into
several pieces; one process is the reference.
"""
from __future__ import annotations

import gzip
import io
import os
import time

import pytest

from binlog_spec.cli import build_parser, jobs, main
from binlog_spec.cli.arguments import filter_options
from binlog_spec.binlog import timezones
from conftest import CORPUS, FIXTURES

def binlog_files() -> list:
    names = [line.split("\t", 1)[0] for line in (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]
             if line.strip()]
    files = [CORPUS / n for n in names]
    files += sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())
    return [p for p in files if p.is_file()]


#: Every file runs these; each file also runs one of SAMPLED (in turn).
ALWAYS = [["rows", "--format", "jsonl"], ["sql", "--sql2"], ["sql", "--sql2", "--rollback"], ["sql"]]
SAMPLED = [
    ["rows"],
    ["events"],
    ["events", "--format", "jsonl"],
    ["sql", "--sql"],
    ["rows", "--format", "jsonl", "--database", "test*", "--exclude-table", "*.t2"],
    ["sql", "--sql2", "--table", "t1", "--timezone", "UTC", "--start-datetime", "2015-01-01",
     "--stop-datetime", "2024-06-01"],
    ["rows", "--exclude-gtids", "0-1-2-4", "--include-gtids", "0-1-1-1000000"],
    ["events", "--stop-position", "2000"],
    ["sql", "--sql2", "--rollback"],
    ["sql", "-vv"],
    ["sql", "--sql", "--rollback"],
    ["sql", "-v", "--database", "test*"],
]


def run(argv: list[str]) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return out.getvalue(), err.getvalue(), code


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def cut(monkeypatch):
    """Count the runs with --jobs above 1 that were cut into pieces."""
    counted = {"cut": 0, "whole": 0}
    plan = jobs.plan

    def counting(args, err):
        pieces = plan(args, err)
        if args.jobs != 1:
            counted["cut" if pieces else "whole"] += 1
        return pieces
    monkeypatch.setattr(jobs, "plan", counting)
    return counted


def same_as_one_job(monkeypatch, argv: list[str], path) -> None:
    monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
    one = run(argv + ["--jobs", "1", str(path)])
    monkeypatch.setenv(jobs.PIECE_ENV, str(max(1, os.path.getsize(path) // 4)))
    three = run(argv + ["--jobs", "3", str(path)])
    assert three[2] == one[2], (argv, path)
    assert three[1] == one[1], (argv, path)
    assert three[0] == one[0], (argv, path)


FILES = binlog_files()


@pytest.mark.parametrize("index", range(len(FILES)), ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_jobs_give_the_output_of_one_process_on_every_file(monkeypatch, cut, index):
    path = FILES[index]
    for argv in ALWAYS + [SAMPLED[index % len(SAMPLED)]]:
        same_as_one_job(monkeypatch, argv, path)


def test_most_files_are_really_cut_into_pieces(monkeypatch, cut):
    for path in FILES[::7]:
        same_as_one_job(monkeypatch, ["rows", "--format", "jsonl"], path)
    assert cut["cut"] > cut["whole"], cut      # (a file of one transaction cannot be cut)


def _args(argv: list[str]):
    args = build_parser().parse_args(argv)
    args.tz = timezones.local_zone()
    args.filters = filter_options(args)
    return args


def test_a_fault_in_the_middle_of_a_file_stops_where_one_process_stops(monkeypatch, tmp_path, cut):
    source = max(FIXTURES.glob("*/*-bin.0*"), key=os.path.getsize)
    data = bytearray(source.read_bytes())
    broken = tmp_path / "broken-bin.000001"
    data[len(data) // 2] ^= 0xFF          # a byte of some event in the middle: a checksum or a layout fault
    broken.write_bytes(bytes(data))
    for argv in (["rows", "--format", "jsonl"], ["sql", "--sql2"], ["events"], ["sql", "--sql2", "--rollback"],
                 ["sql", "-vv"]):
        same_as_one_job(monkeypatch, argv, broken)
        # and with a second file after it: nothing of it is printed
        monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
        one = run(argv + ["--jobs", "1", str(broken), str(source)])
        monkeypatch.setenv(jobs.PIECE_ENV, str(len(data) // 4))
        assert run(argv + ["--jobs", "3", str(broken), str(source)]) == one
    assert cut["cut"] >= 10


def test_several_files_carry_their_schema_from_piece_to_piece(monkeypatch, cut):
    files = [str(p) for p in sorted(FIXTURES.glob("*/*-bin.0*"))[:6]]
    monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
    for argv in (["rows", "--format", "jsonl"], ["sql", "--sql"], ["events"], ["sql", "--sql", "--rollback"],
                 ["sql"], ["sql", "-vv"]):
        one = run(argv + ["--jobs", "1", *files])
        monkeypatch.setenv(jobs.PIECE_ENV, "3000")
        assert run(argv + ["--jobs", "3", *files]) == one
        monkeypatch.delenv(jobs.PIECE_ENV)
    from binlog_spec.output.base64.lane import compiled as lane_compiled
    # the plain base64 script runs its compiled loop in one process where the compiled core runs
    assert cut["cut"] == (5 if lane_compiled() else 6)


def test_stdin_gzip_and_outputs_whose_state_crosses_transactions_run_one_process(monkeypatch, tmp_path):
    source = max(FIXTURES.glob("*/*-bin.0*"), key=os.path.getsize)
    gz = tmp_path / "x-bin.000001.gz"
    with gzip.open(gz, "wb") as f:
        f.write(source.read_bytes())
    monkeypatch.setenv(jobs.PIECE_ENV, "1000")
    err = io.StringIO()
    assert jobs.plan(_args(["rows", "--jobs", "3", str(source)]), err)      # (cut, for contrast)
    for argv in (["rows", "--jobs", "3", "-"], ["rows", "--jobs", "3", str(gz)],
                 ["rows", "--jobs", "3", "--start-position", "4", str(source)],
                 ["sql", "--rollback", "--jobs", "3", str(source)],
                 ["sql", "--jobs", "3", "--output-format", "binlog", "-o", str(tmp_path / "o"), str(source)],
                 ["analyze", "--jobs", "3", str(source)], ["rows", "--jobs", "1", str(source)]):
        assert jobs.plan(_args(argv), err) is None, argv


def test_the_default_is_the_cpus_this_process_may_use_up_to_8(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert jobs.default_jobs() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(3)))
    assert jobs.default_jobs() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert jobs.default_jobs() == 8


def test_a_small_input_runs_in_one_process_without_the_knob(monkeypatch):
    monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
    source = max(FIXTURES.glob("*/*-bin.0*"), key=os.path.getsize)
    assert jobs.plan(_args(["rows", "--jobs", "8", str(source)]), io.StringIO()) is None


def test_jobs_must_be_a_positive_number(capsys):
    for bad in ("0", "-2", "x"):
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(["rows", "--jobs", bad, "f"])
        assert exc.value.code == 2
        assert "--jobs" in capsys.readouterr().err


def test_the_statements_not_undone_merge_over_pieces_as_one_process_counts_them():
    from binlog_spec.output.sql.script import NotUndone
    statements = [(f"f:{i}", "CREATE TABLE t (a INT)" if i % 3 else "INSERT INTO t VALUES (1)") for i in range(33)]
    one, parts = NotUndone(), [NotUndone(), NotUndone(), NotUndone()]
    for i, (where, text) in enumerate(statements):
        one.add(where, text)
        parts[0 if i < 15 else 1 if i < 18 else 2].add(where, text)
    for later in parts[1:]:
        parts[0].merge(later)
    assert (parts[0].count, parts[0].kinds, parts[0].first) == (one.count, one.kinds, one.first)


def test_base64_pieces_tell_a_once_per_run_note_once_and_keep_the_rest_in_order():
    from binlog_spec.output.base64.parts import Ending
    first = Ending({"db": "b'a'"}, ["f:4: incident", ("k1", "note 1")], ["e1"])
    first.merge(Ending({"db": "b'b'", "sql_mode": "0"}, [("k1", "note 1"), "f:9: incident", ("k2", "note 2")], ["e2"]))
    assert first.lines() == ["f:4: incident", "note 1", "f:9: incident", "note 2"]
    assert first.row_errors == ["e1", "e2"] and first.state == {"db": "b'b'", "sql_mode": "0"}


@pytest.mark.parametrize("argv", [["rows", "--format", "jsonl"], ["rows"], ["sql", "--sql2"], ["events"]])
def test_pieces_copied_as_bytes_to_a_file_or_stdout_equal_one_process(monkeypatch, tmp_path, argv):
    """With -o (a UTF-8 file that keeps undecodable bytes: surrogateescape) and on the real stdout, the parent
    copies the pieces' files as bytes, not text: the bytes written, invalid UTF-8 from latin1 or binary
    columns included, are those of one process; a header line still comes once."""
    import subprocess
    import sys
    files = [FIXTURES / "types-full" / "mariadb-bin.000001", FIXTURES / "charsets-nolog" / "mariadb-bin.000001"]
    for path in files:
        monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
        assert main(argv + ["--jobs", "1", "-o", str(tmp_path / "one"), str(path)], io.StringIO(), io.StringIO()) == 0
        one = (tmp_path / "one").read_bytes()
        monkeypatch.setenv(jobs.PIECE_ENV, str(max(1, os.path.getsize(path) // 5)))
        assert main(argv + ["--jobs", "3", "-o", str(tmp_path / "three"), str(path)], io.StringIO(),
                    io.StringIO()) == 0
        assert (tmp_path / "three").read_bytes() == one, (argv, path)
        env = {**os.environ, jobs.PIECE_ENV: str(max(1, os.path.getsize(path) // 5))}
        r = subprocess.run([sys.executable, "-m", "binlog_spec", *argv, "--jobs", "3", str(path)],
                           capture_output=True, env=env)
        assert r.returncode == 0 and r.stdout == one, (argv, path, r.stderr[-500:])


@pytest.mark.parametrize("header_done", [False, True])
def test_a_piece_with_bytes_that_are_not_utf8_is_copied_unchanged_as_bytes_or_text(tmp_path, header_done):
    """_copy_out: a piece's file holding invalid UTF-8 (kept by surrogateescape) and a character cut by the
    1 MiB read size is copied byte for byte to a binary-backed output, and as the same text to a StringIO
    (the in-process runs); the header line is left out once it has been written."""
    header = b"# binlog-spec header\n"
    body = b"x" * ((1 << 20) - 1) + "\u00e9".encode() + b" \xff\xfe latin1 \xe9t\xe9\n" * 3
    piece = tmp_path / "0.out"
    piece.write_bytes(header + body)
    mode = jobs.Mode(header=1)
    expected = (b"" if header_done else header) + body
    with open(tmp_path / "copy", "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
        assert jobs._same_bytes(out) is not None
        out.write("before\n")
        jobs._copy_out(str(piece), out, mode, header_done)
        out.write("after\n")
    assert (tmp_path / "copy").read_bytes() == b"before\n" + expected + b"after\n"
    text = io.StringIO()
    assert jobs._same_bytes(text) is None
    jobs._copy_out(str(piece), text, mode, header_done)
    assert text.getvalue() == expected.decode("utf-8", "surrogateescape")


def test_the_plain_base64_script_runs_its_compiled_loop_in_one_process(monkeypatch, cut):
    """`sql` with no option that needs the Python lane runs in one process where the compiled core is loaded
    (its loop takes no piece, and is faster on one core than the pieces on several); `-v` cuts it, and a filter the
    compiled skipping loop decides keeps it in one process too (the pieces would read every event)."""
    from binlog_spec.output.base64.lane import compiled as lane_compiled
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    monkeypatch.setenv(jobs.PIECE_ENV, str(max(1, os.path.getsize(path) // 4)))
    loop = lane_compiled()
    for argv, whole in ((["sql"], loop), (["sql", "-v"], False), (["sql", "--database", "*"], loop),
                        (["sql", "--skip-gtids"], False)):
        before = dict(cut)
        run(argv + ["--jobs", "3", str(path)])
        assert cut["whole" if whole else "cut"] == before["whole" if whole else "cut"] + 1, argv
    assert loop == (os.environ.get("BINLOG_SPEC_PURE") != "1")


# -- the compiled lanes in the pieces ------------------------------------------------------------------------
#: The outputs a compiled lane writes (output/_crow_text.pyx RowLane, its SQL mode, output/_cevent_json.pyx).
LANE_OUTPUTS = [["rows", "--format", "jsonl"], ["sql", "--sql2"], ["events", "--format", "jsonl"]]


def _server_binlog(folder) -> str:
    """A binlog the real MariaDB wrote: single-row transactions, a DDL between two shapes of a table (the pieces
    after it start from the schema carried in), multi-row statements, one of them a transaction of several MB
    (the rows lane leaves a rows event to the ordinary path when its text is not taken yet)."""
    import shutil
    import sys
    sys.path.insert(0, str(FIXTURES))
    import mariadb_server
    if not mariadb_server.available():
        pytest.skip("needs Debian's mariadb-server")
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, name VARCHAR(40) CHARSET utf8mb4, "
                "price DECIMAL(10,2), at DATETIME(3), day DATE)")
        srv.sql("".join(f"INSERT INTO d.t VALUES ({i}, 'n{i} é', {i}.25, '2024-01-02 03:04:{i % 60:02}.5', "
                        f"'2024-02-29');" for i in range(1, 3000)))
        srv.sql("ALTER TABLE d.t ADD COLUMN extra INT FIRST")
        srv.sql("".join(f"UPDATE d.t SET extra = {i}, price = price + 1 WHERE id = {i};" for i in range(1, 3000)))
        srv.sql("INSERT INTO d.t (id, name, price, at, day) SELECT seq + 10000, REPEAT('m', 30), seq / 100, "
                "'2025-05-06 07:08:09', '2025-05-06' FROM d.seq_1_to_20000; DELETE FROM d.t WHERE id % 3 = 0")
        srv.sql("FLUSH BINARY LOGS")
        log = os.path.join(folder, "mariadb-bin.000001")
        shutil.copyfile(srv.binlogs()[0], log)
    return log


def _lane_shares(monkeypatch, record) -> None:
    """Each run of a lane's output (in a worker process too) appends to `record` the bytes of its output the lane
    wrote (its blocks of UTF-8 lines) and all of them."""
    from binlog_spec.output import lane_text
    with_lane = lane_text.with_lane

    def counted(lane, lines):
        counts = [0, 0]
        try:
            for item in with_lane(lane, lines):
                n = len(item) + 1 if type(item) is bytes else len(item.encode("utf-8")) + 1
                counts[0] += n if type(item) is bytes else 0
                counts[1] += n
                yield item
        finally:
            with open(record, "a") as f:
                f.write(f"{counts[0]} {counts[1]}\n")
    monkeypatch.setattr(lane_text, "with_lane", counted)


def _shares(record) -> list[tuple[int, int]]:
    got = [tuple(map(int, line.split())) for line in record.read_text().splitlines()] if record.exists() else []
    record.unlink(missing_ok=True)
    return got


def _mariadb_binlog_events(log: str) -> list[tuple[int, int, str]]:
    """(position, end_log_pos, what) of every event as mariadb-binlog prints it: its '# at' lines and, in the
    same order, the events' header lines (the rows events of a statement: their '# at' lines first)."""
    import re
    import subprocess
    text = subprocess.run(["mariadb-binlog", "--no-defaults", log], capture_output=True, text=True, check=True).stdout
    at = re.findall(r"^# at (\d+)$", text, re.M)
    heads = re.findall(r"^#\d{6} +\d+:\d\d:\d\d server id \d+ +end_log_pos (\d+) CRC32 0x[0-9a-f]+\s+(\w+)", text, re.M)
    assert len(at) == len(heads)
    return [(int(p), int(end), what) for p, (end, what) in zip(at, heads)]


def test_the_lanes_run_in_the_pieces_with_the_positions_of_the_file(monkeypatch, tmp_path, cut):
    """rows --format jsonl, sql --sql2 and events --format jsonl written by their compiled lanes in every piece:
    byte for byte the output of one process and of the pure-Python core; the positions printed are the file's
    (mariadb-binlog's '# at' and end_log_pos of each event), the FDE put in front of a piece is not printed."""
    import json
    import subprocess
    import sys
    log = _server_binlog(tmp_path)
    record = tmp_path / "shares"
    _lane_shares(monkeypatch, record)
    printed = _mariadb_binlog_events(log)
    assert len(printed) > 12000 and [p for p, _, what in printed if what == "Start"] == [4]
    rows_at = {p for p, _, what in printed if what in ("Write_rows", "Update_rows", "Delete_rows")}
    size = os.path.getsize(log)
    for argv in LANE_OUTPUTS:
        monkeypatch.delenv(jobs.PIECE_ENV, raising=False)
        one = run(argv + ["--jobs", "1", log])
        assert one[2] == 0 and one[1] == "", argv
        assert len(_shares(record)) == 1        # (one process: one lane)
        env = {**os.environ, "BINLOG_SPEC_PURE": "1", "TZ": "UTC"}
        pure = subprocess.run([sys.executable, "-m", "binlog_spec", *argv, "--jobs", "1", log], capture_output=True,
                              env=env, check=True).stdout
        assert pure.decode("utf-8") == one[0], argv
        monkeypatch.setenv(jobs.PIECE_ENV, str(size // 8))
        before = cut["cut"]
        assert run(argv + ["--jobs", "2", log]) == one, argv
        assert cut["cut"] == before + 1
        shares = _shares(record)
        assert len(shares) >= 6, (argv, shares)     # a lane in every piece
        for lane, total in shares:                  # most of every piece's output written by it
            assert lane > 0.8 * total or total < 200, (argv, shares)    # (the last: the ROTATE alone)
        if argv[0] == "events":
            lines = [json.loads(line) for line in one[0].splitlines()]
            assert [(e["pos"], e["end_log_pos"]) for e in lines] == [(p, end) for p, end, _ in printed]
        elif argv[0] == "rows":
            assert {json.loads(line)["pos"] for line in one[0].splitlines()} == rows_at


def test_the_workers_end_when_the_run_is_killed_with_no_chance_to_stop_them(tmp_path):
    # (SIGKILL, the OOM killer: the pool cannot stop its workers, which would wait for work forever)
    import signal
    import subprocess
    import sys
    log = CORPUS / "mariadb-poc" / "mariadb-binlog__binlogs__domain_id_0__mariadb-repl-bin.000002"    # (3.7 MB)
    env = {**os.environ, jobs.PIECE_ENV: str(log.stat().st_size // 16)}
    cli = [sys.executable, "-m", "binlog_spec", "rows", "--format", "jsonl", "--jobs", "2", str(log)]
    run = subprocess.Popen(cli, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)    # (never read)
    children: list[int] = []
    deadline = time.monotonic() + 60
    while len(children) < 2 and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
        path = f"/proc/{run.pid}/task/{run.pid}/children"
        children = [int(c) for c in open(path).read().split()] if os.path.exists(path) else []
    assert len(children) >= 2, "the run started its workers"
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 20
    while any(os.path.exists(f"/proc/{c}") and open(f"/proc/{c}/stat").read().split()[2] != "Z" for c in children):
        assert time.monotonic() < deadline, f"workers {children} outlived the run"
        time.sleep(0.05)
    run.stdout.close()
