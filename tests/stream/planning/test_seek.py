"""--start-position seeks (stream.planning.seek): the output is the output of reading every event, and little is read."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec.binlog import spec
from binlog_spec.binlog.event_types import GTID_EVENTS
from binlog_spec import api
from binlog_spec.cli import main
from binlog_spec.stream.planning import seek
from conftest import CORPUS, FIXTURES

#: The commands compared, with and without the seek (argv before the position and the file).
COMMANDS = [["sql", "--sql2"], ["rows", "--format", "jsonl"], ["sql"]]
#: Event boundaries tried per file, spread over it (besides the special positions).
SPREAD = 6
#: A larger file is tried on its first events up to this size (a binlog the server was still writing),
#: to keep the run short: the reference reads the whole file for each position and command.
SLICE = 64 << 10


def binlog_files() -> list[Path]:
    names = [line.split("\t", 1)[0] for line in (CORPUS / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]
             if line.strip()]
    files = [CORPUS / n for n in names] + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())
    return [p for p in files if p.is_file()]


def events_of(path: Path) -> list:
    events = []
    try:
        for ev in binlog_spec.open(path):
            events.append(ev)
    except binlog_spec.BinlogError:
        pass
    return events


def positions(path: Path, events: list) -> list[int]:
    """Boundaries spread over the file (GTID events, where the seek resumes, and other events), a
    position inside an event, one inside a transaction (its first rows event), one past the end."""
    outer = [ev for ev in events if not ev.is_inner]
    gtids = [ev.pos for ev in outer if ev.type_code in GTID_EVENTS]
    others = [ev.pos for ev in outer if ev.type_code not in GTID_EVENTS]

    def spread(values: list[int], n: int) -> list[int]:
        return [values[(len(values) - 1) * i // max(n - 1, 1)] for i in range(n)] if values else []
    chosen = spread(gtids, SPREAD // 2) + spread(others, SPREAD // 2)
    chosen.append(outer[len(outer) * 2 // 3].pos + 1)
    inside = [ev.pos for ev in outer if ev.type in ("TABLE_MAP_EVENT",) and ev.pos > gtids[len(gtids) // 2]]
    chosen += inside[:1]
    chosen.append(path.stat().st_size + 100)
    return sorted(set(chosen))


def run(argv: list[str], monkeypatch, seeking: bool) -> tuple[str, str, int]:
    if seeking:
        monkeypatch.delenv(seek.NO_SEEK, raising=False)
    else:
        monkeypatch.setenv(seek.NO_SEEK, "1")
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return out.getvalue(), err.getvalue(), code


FILES = binlog_files()
WITH_GTIDS = [p for p in FILES if any(ev.type_code in GTID_EVENTS for ev in events_of(p))]


def sliced(path: Path, folder: Path) -> Path:
    """The file, or for a large one its events up to SLICE bytes, in `folder` under the same name."""
    if path.stat().st_size <= SLICE:
        return path
    end = 0
    with binlog_spec.BinlogReader(path) as reader:
        for pos, _code, size, _bytes in reader.scan():
            if pos + size > SLICE:
                break
            end = pos + size
    copy = folder / path.name
    copy.write_bytes(path.read_bytes()[:end])
    return copy


@pytest.mark.parametrize("whole", WITH_GTIDS, ids=lambda p: str(p.relative_to(p.parent.parent)))
def test_start_position_prints_the_same_with_the_seek_as_reading_every_event(whole, monkeypatch, tmp_path):
    monkeypatch.setenv("TZ", "UTC")
    path = sliced(whole, tmp_path)
    events = events_of(path)
    seeks = 0
    for pos in positions(path, events):
        seeks += seek.plan(str(path), pos) is not None
        for command in COMMANDS:
            argv = [*command, "--start-position", str(pos), str(path)]
            assert run(argv, monkeypatch, True) == run(argv, monkeypatch, False), argv
    assert seeks, "the seek was tried at no position of a file with GTID events"


def test_a_file_without_gtid_events_is_read_whole():
    without = [p for p in FILES if p not in WITH_GTIDS]
    assert without
    for path in without:
        assert seek.plan(str(path), path.stat().st_size // 2) is None, path


def test_a_start_near_the_end_parses_only_the_head_and_the_last_transactions(monkeypatch):
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    events = events_of(path)
    gtids = [ev.pos for ev in events if ev.type_code in GTID_EVENTS]
    start = gtids[-2]
    parsed: list[bytes] = []
    real_parse = spec.parse_event

    def counting(buf, fde):
        parsed.append(bytes(buf[:spec.LEN_EVENT_HEADER]))
        return real_parse(buf, fde)
    monkeypatch.setattr(spec, "parse_event", counting)
    read = list(api.read_events([str(path)], start_position=start))
    tail = [ev for ev in events if ev.pos >= start]
    assert [(ev.pos, ev.raw) for ev in read[-len(tail):]] == [(ev.pos, ev.raw) for ev in tail]
    before = [ev for ev in read if ev.pos < start]
    # the head (FDE, GTID_LIST, BINLOG_CHECKPOINT) and the DDL transactions: a few of the 84
    assert len(before) < len(events) // 4, [ev.type for ev in before]
    assert all(ev.type_code not in GTID_EVENTS or _ddl_follows(read, ev) for ev in before)
    assert len(parsed) <= len(read) + 10     # the planning pass parses only an FDE's first QUERY events


def _ddl_follows(read: list, gtid) -> bool:
    """The GTID event's transaction, as read, holds a QUERY event that is not BEGIN/COMMIT/DML."""
    i = read.index(gtid)
    nxt = read[i + 1] if i + 1 < len(read) else None
    return nxt is not None and nxt.type == "QUERY_EVENT"


def test_the_seek_is_off_with_the_environment_switch(monkeypatch):
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    monkeypatch.setenv(seek.NO_SEEK, "1")
    events = list(api.read_events([str(path)], start_position=os.path.getsize(path) - 1))
    assert len(events) == len(events_of(path))


def test_the_server_collation_of_the_first_query_reaches_the_schema_across_the_seek(monkeypatch, tmp_path):
    # MySQL writes BEGIN first and no DDL: the server's collation (Q_CHARSET_CODE) the schema guesses a
    # charset with comes from that BEGIN, far before the position.
    path = CORPUS / "mbcj_osheroff" / "mysql-bin.checksum-crc32"
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE `auth`.`material_warehouse` (id BIGINT, owner BIGINT, name VARCHAR(64), "
                      "flag TINYINT);\n", encoding="utf-8")
    events = events_of(path)
    mapped = [i for i, ev in enumerate(events) if ev.type == "TABLE_MAP_EVENT"
              and ev.fields["table"] == "material_warehouse"]
    start = next(ev.pos for ev in reversed(events[:mapped[-1]]) if ev.type_code in GTID_EVENTS)
    first_query = next(ev for ev in events if ev.type == "QUERY_EVENT")
    found = seek.plan(str(path), start)
    assert found.resume == start > first_query.pos + 20 * 300
    # read for the schema (observe_schema takes the collation from an FDE's first QUERY event)
    assert any(pos <= first_query.pos < pos + n for pos, n in found.split.before)
    argv = ["rows", "--format", "jsonl", "--schema", str(schema), "--start-position", str(start), str(path)]
    seeking = run(argv, monkeypatch, True)
    assert seeking == run(argv, monkeypatch, False)
    assert '"name":' in seeking[0] and "guessed latin1, the server's" in seeking[1], seeking


def test_the_plan_is_the_same_when_the_framing_loop_reports_every_gtid(monkeypatch):
    """The seek's header pass lets the framing loop step over the GTIDs inside a run of them (only the
    first and the last can change the plan): the plan equals the one of a pass told of every GTID."""
    from binlog_spec.binlog.reader import BinlogReader
    every = BinlogReader.scan

    def told_of_every_gtid(self, read=(), report=None, chunk=seek.CHUNK, runs=(), runs_until=-1):
        return every(self, read, report, chunk)
    tried = 0
    for path in WITH_GTIDS:
        events = events_of(path)
        for pos in [ev.pos for ev in events][1::max(1, len(events) // 25)]:
            monkeypatch.setattr(BinlogReader, "scan", every)
            coalesced = seek.plan(str(path), pos)
            monkeypatch.setattr(BinlogReader, "scan", told_of_every_gtid)
            assert seek.plan(str(path), pos) == coalesced, (path, pos)
            tried += coalesced is not None
    assert tried > 100


@pytest.mark.parametrize("command", [["rows", "--format", "jsonl"], ["sql", "--sql2"]], ids=["rows", "sql2"])
def test_the_compiled_lane_writes_what_follows_the_position_and_the_next_files(command, monkeypatch, tmp_path):
    """--start-position alone: the position filter keeps every event after the position, so the compiled lane
    (output/_crow_text.pyx) takes those, from the first transaction after the event at the position (which the
    filter reads: it checks the position there) and through the next file; the output is that of reading every
    event with the pure filters. (Every event after the seek went through the reference path: 1.1x the whole file's
    run for its last 1 %.)"""
    from binlog_spec import compiled
    from binlog_spec.output import lane_text
    if compiled.load("binlog_spec.output._crow_text") is None:
        pytest.skip("the compiled core is not built (make build)")
    source = FIXTURES / "types-full" / "mariadb-bin.000001"
    first, second = tmp_path / "mariadb-bin.000001", tmp_path / "mariadb-bin.000002"
    first.write_bytes(source.read_bytes())
    second.write_bytes(source.read_bytes())
    gtids = [ev.pos for ev in events_of(first) if ev.type_code in GTID_EVENTS]
    ordinary = [-1]     # (-1: no lane ran, the ordinary path wrote every line)
    lines_of = lane_text.with_lane

    def counted(lane, lines):
        ordinary[0] = 0

        def of_the_ordinary_path():
            for line in lines:
                ordinary[0] += 1
                yield line
        return lines_of(lane, of_the_ordinary_path())
    monkeypatch.setattr(lane_text, "with_lane", counted)
    monkeypatch.setenv("TZ", "UTC")
    for start, files in ((gtids[len(gtids) // 3], [first]), (gtids[-3], [first, second])):
        ordinary[0] = -1
        argv = [*command, "--start-position", str(start), *map(str, files)]
        got = run(argv, monkeypatch, True)
        by_ordinary_path = ordinary[0]
        assert got == run(argv, monkeypatch, False), argv
        assert got[2] == 0 and got[0]
        # (the fixture's every column type: the lane leaves a third of its lines, read or not by a seek)
        assert 0 <= by_ordinary_path < got[0].count("\n") // 2, "the lane wrote most lines"
