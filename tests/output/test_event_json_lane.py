"""`events --format jsonl`'s compiled lane (output/_cevent_json.pyx `Lane`, event_json.sink): it writes the JSON
lines of a MariaDB binlog's common events straight from the reader's window, and the output, the warnings, the
error and the exit code are the ones of the pure-Python reference (every event through Event.to_dict and
jsonenc, event_json.render) on every corpus and fixture file, with windows that cut events, without CRC32
checks, on damaged binlogs whose events keep valid checksums and on mutated ones."""
from __future__ import annotations

import io
import os
import random
import subprocess
import zlib
import sys
from pathlib import Path

import pytest

from binlog_spec import api, compiled
from binlog_spec.binlog import spec
from binlog_spec.cli import main
from binlog_spec.options import ReadOptions
from binlog_spec.output import event_json

from conftest import CORPUS, FIXTURES, ROOT, manifest_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import mutate  # noqa: E402
from seeds import seed_files  # noqa: E402

FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))
#: MariaDB fixtures whose events the lane writes (GTID, ANNOTATE_ROWS, TABLE_MAP, v1 rows, XID).
SEEDS = [FIXTURES / name / "mariadb-bin.000001"
         for name in ("demo", "charsets-nolog", "types-full", "types-minimal", "types-legacy-temporal",
                      "types-noblob", "compressed")]

needs_compiled = pytest.mark.skipif(compiled.pure_requested(), reason="BINLOG_SPEC_PURE=1 runs the reference only")


class _Counting:
    """The lane, counting the bytes it takes."""

    def __init__(self, inner):
        self.inner, self.bytes = inner, 0
        self.taken, self.remember = inner.taken, inner.remember

    def __call__(self, *args):
        n = self.inner(*args)
        self.bytes += max(n, 0)
        return n


def _lines(paths, lane: bool, options=ReadOptions()):
    """(the output, the error) of the events' JSON lines, through the lane or the reference alone; the lane."""
    sink = None
    if lane:
        inner = event_json.sink()
        assert inner is not None
        sink = _Counting(inner)
    out, error = [], None
    try:
        for item in event_json.lines(api.read_events([str(p) for p in paths], options, sink=sink), sink):
            out.append(item.decode("utf-8") if type(item) is bytes else item)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        error = (type(exc).__name__, str(exc), getattr(exc, "offset", None))
    return ("\n".join(out), error), sink


def _cli(paths, lane: bool, monkeypatch, argv=()):
    """stdout (bytes: written to a UTF-8 stream with a binary buffer, as stdout is), stderr and exit code."""
    with monkeypatch.context() as m:
        if not lane:
            m.setattr("binlog_spec.output.event_json._c", None)
        raw = io.BytesIO()
        out, err = io.TextIOWrapper(raw, encoding="utf-8", newline=""), io.StringIO()
        code = main(["events", "--format", "jsonl", *argv, *map(str, paths)], out, err)
        out.flush()
    return raw.getvalue(), err.getvalue(), code


@needs_compiled
def test_the_lane_runs_and_writes_most_of_a_mariadb_binlog():
    path = FIXTURES / "types-full" / "mariadb-bin.000001"
    fast, sink = _lines([path], True)
    assert fast == _lines([path], False)[0]
    assert sink.bytes > path.stat().st_size // 2, "the lane writes the common events itself"


@needs_compiled
def test_the_lanes_lines_agree_with_the_reference_for_every_probe():
    """Checked when the lane is first asked for (else it never runs: asserted here); the probes cover each kind
    of event it takes and the limits where it stops."""
    assert event_json.agree() is True
    assert {spec.parse_header(raw[:spec.LEN_EVENT_HEADER]).type_code for raw, _fde, taken in event_json.probes()
            if taken} == event_json.LANE_TYPES - {int(spec.EventType.table_map_event)}


def test_without_the_compiled_core_there_is_no_lane(monkeypatch):
    monkeypatch.setattr("binlog_spec.output.event_json._c", None)
    assert event_json.sink() is None
    assert api.event_json_sink() is None


@needs_compiled
def test_the_lane_writes_what_the_reference_writes_on_every_file():
    for path in FILES:
        assert _lines([path], True)[0] == _lines([path], False)[0], path


@needs_compiled
@pytest.mark.parametrize("buffer_size", [512, 4096, 65536])
def test_events_cut_by_the_window_are_read_into_it_or_left_to_the_reference(buffer_size):
    paths = [FIXTURES / "demo" / "mariadb-bin.000001", FIXTURES / "types-full" / "mariadb-bin.000001"] * 2
    options = ReadOptions(buffer_size=buffer_size)
    fast, sink = _lines(paths, True, options)
    assert fast == _lines(paths, False, options)[0]
    assert sink.bytes


@needs_compiled
def test_without_checksum_checks_the_lane_writes_the_reference_lines():
    options = ReadOptions(verify_checksums=False)
    for path in SEEDS:
        assert _lines([path], True, options)[0] == _lines([path], False, options)[0], path


@needs_compiled
def test_the_events_command_prints_the_same_with_and_without_the_lane_on_every_file(monkeypatch):
    for path in FILES:
        assert _cli([path], True, monkeypatch) == _cli([path], False, monkeypatch), path
    assert _cli(SEEDS, True, monkeypatch) == _cli(SEEDS, False, monkeypatch)


@needs_compiled
@pytest.mark.parametrize("argv", [["--start-position", "900"], ["--database", "test"], ["--stop-position", "2000"],
                                  ["--server-id", "1"]], ids=" ".join)
def test_a_filtered_run_has_no_lane_and_prints_what_it_printed(argv, monkeypatch):
    path = SEEDS[0]
    calls = []
    real = api.event_json_sink
    monkeypatch.setattr(api, "event_json_sink", lambda *a: calls.append(1) or real(*a))
    assert _cli([path], True, monkeypatch, argv) == _cli([path], False, monkeypatch, argv)
    assert not calls


@needs_compiled
def test_stdout_of_the_command_is_the_reference_s(tmp_path):
    """Through the real stdout (the lane's blocks go to its binary stream), against BINLOG_SPEC_PURE=1."""
    paths = [str(SEEDS[0]), str(SEEDS[2]), str(FIXTURES / "types-full" / "mariadb-bin.000001")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

    def run(pure: bool):
        e = {**env, compiled.PURE_ENV: "1"} if pure else {k: v for k, v in env.items() if k != compiled.PURE_ENV}
        got = subprocess.run([sys.executable, "-m", "binlog_spec", "events", "--format", "jsonl", *paths],
                             capture_output=True, env=e, timeout=120)
        return got.stdout, got.stderr, got.returncode
    fast, pure = run(False), run(True)
    assert fast == pure
    assert fast[0].count(b"\n") > 100


def _change(b: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """One change inside an event: its body, its header fields, or its type code."""
    kind = rng.random()
    if kind < 0.6:
        i = pos + spec.LEN_EVENT_HEADER + rng.randrange(max(1, size - spec.LEN_EVENT_HEADER - 4))
        b[i] = rng.choice((0, 1, 2, 8, 64, 0x80, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, b[i] ^ 1 << rng.randrange(8)))
    elif kind < 0.85:
        b[pos + rng.randrange(spec.LEN_EVENT_HEADER)] ^= 1 << rng.randrange(8)
    else:
        b[pos + 4] = rng.choice((2, 16, 19, 23, 24, 25, 160, 162))     # the type code


@needs_compiled
def test_damaged_binlogs_give_the_reference_lines_and_error(tmp_path):
    rng = random.Random(2929)
    seeds = {p: p.read_bytes() for p in SEEDS}
    differ = []
    for k in range(160):
        seed = rng.choice(SEEDS)
        case = tmp_path / f"case-{k:03d}.bin"
        case.write_bytes(mutate.damaged_with_valid_checksums(seeds[seed], rng, _change))
        if _lines([case], True)[0] != _lines([case], False)[0]:
            differ.append(f"{case.name} from {seed.parent.name}")
    assert not differ, differ


@needs_compiled
def test_mutated_binlogs_give_the_reference_lines_and_error(tmp_path):
    rng = random.Random(2930)
    seeds = seed_files()
    for k in range(100):
        data, how, _cut = mutate.mutate(rng.choice(seeds).read_bytes(), rng)
        path = tmp_path / f"case-{k:03d}.bin"
        path.write_bytes(data)
        assert _lines([path], True)[0] == _lines([path], False)[0], how


@needs_compiled
def test_a_truncated_file_prints_the_lanes_lines_then_the_same_error(tmp_path, monkeypatch):
    data = (FIXTURES / "types-full" / "mariadb-bin.000001").read_bytes()
    path = tmp_path / "cut.bin"
    path.write_bytes(data[:len(data) * 2 // 3])
    fast = _cli([path], True, monkeypatch)
    assert fast == _cli([path], False, monkeypatch)
    assert fast[2] != 0 and "runs past the end" in fast[1]


# -- what the lane writes, byte for byte -------------------------------------------------------------------------
def _crafted(tmp_path, events) -> tuple[Path, list[tuple[int, int, int]]]:
    """A binlog of a MariaDB fixture's FORMAT_DESCRIPTION_EVENT (CRC32, v1 rows post-header of 8 bytes, XID and
    ANNOTATE_ROWS of 0), then `events` ((type code, timestamp, server id, flags, body)); and each event's
    (position, size, checksum)."""
    data = bytearray((FIXTURES / "types-full" / "mariadb-bin.000001").read_bytes())
    fde_size = int.from_bytes(data[4 + 9:4 + 13], "little")
    out, spans = bytearray(data[:4 + fde_size]), []
    for code, ts, server_id, flags, body in events:
        pos, size = len(out), 19 + len(body) + 4
        raw = (ts.to_bytes(4, "little") + bytes([code]) + server_id.to_bytes(4, "little") + size.to_bytes(4, "little")
               + (pos + size).to_bytes(4, "little") + flags.to_bytes(2, "little") + body)
        crc = zlib.crc32(raw)
        out += raw + crc.to_bytes(4, "little")
        spans.append((pos, size, crc))
    path = tmp_path / "crafted-bin.000001"
    path.write_bytes(bytes(out))
    return path, spans


def _head(path, name: str, code: int, span, ts: str, server_id: int, flags: int) -> str:
    pos, size, crc = span
    return (f'{{"file":"{path}","pos":{pos},"end_log_pos":{pos + size},"type":"{name}","type_code":{code},'
            f'"timestamp":"{ts}","server_id":{server_id},"size":{size},"flags":{flags},"checksum":{crc}')


@needs_compiled
def test_the_lane_writes_these_lines_of_these_bytes(tmp_path, monkeypatch):
    T = 1767225600      # 2026-01-01T00:00:00Z
    gtid = ((2**64 - 2).to_bytes(8, "little") + (2**32 - 1).to_bytes(4, "little") + bytes([0x0e])
            + (2**63 + 5).to_bytes(8, "little") + b"\x00")      # FL_GROUP_COMMIT_ID: a commit_id, then flags_extra 0
    query = b"UPDATE t SET s='a\"b\\c\n\t\x01\x7f \xc3\xa9 \xf0\x9f\x99\x82 \xff'"    # \xff: not UTF-8
    # an XID whose CRC32 has its top bit set (a checksum past 2**31), found by its server id
    xid = (2**64 - 1).to_bytes(8, "little")
    # table id 2 + 1 << 32, STMT_END_F, 3 columns, their bitmap, the rows' bytes
    write = (2).to_bytes(4, "little") + (1).to_bytes(2, "little") + b"\x01\x00" + b"\x03" + b"\x07" \
        + b"\xf8\x01\x00\x00\x00"
    # table id 9, no flags, 265 columns (0xfc: 2 bytes follow), the two bitmaps of 34 bytes, the rows' bytes
    update = (9).to_bytes(6, "little") + b"\x00\x00" + b"\xfc\x09\x01" + b"\xff" * 33 + b"\x01" + b"\xfe" * 33 \
        + b"\x01" + b"\x00\x01"

    def crafted(xid_sid):
        return _crafted(tmp_path, [(162, T, 7, 8, gtid), (160, T + 1, 7, 0, query), (23, 951782400, 7, 0, write),
                                   (24, 4294967295, 7, 0xFFFF, update), (16, T, xid_sid, 0, xid)])
    xid_sid = next(s for s in range(1, 1000) if crafted(s)[1][4][2] >= 0xF0000000)
    path, spans = crafted(xid_sid)
    assert spans[4][2] >= 0xF0000000
    want = [
        _head(path, "GTID_EVENT", 162, spans[0], "2026-01-01T00:00:00Z", 7, 8)
        + ',"seq_no":18446744073709551614,"domain_id":4294967295,"flags2":14,"commit_id":9223372036854775813,'
          '"flags_extra":0,"gtid":"4294967295-7-18446744073709551614"}',
        _head(path, "ANNOTATE_ROWS_EVENT", 160, spans[1], "2026-01-01T00:00:01Z", 7, 0)
        + ',"post_header":{"hex":""},"query":"UPDATE t SET s=\'a\\"b\\\\c\\n\\t\\u0001\x7f é 🙂 \ufffd\'"}',
        _head(path, "WRITE_ROWS_EVENT_V1", 23, spans[2], "2000-02-29T00:00:00Z", 7, 0)
        + ',"rows_flags":1,"num_columns":3,"columns_before_image":{"hex":"07"},"rows":{"hex":"f801000000"},'
          '"len_table_id":6,"table_id":4294967298}',
        _head(path, "UPDATE_ROWS_EVENT_V1", 24, spans[3], "2106-02-07T06:28:15Z", 7, 65535)
        + ',"rows_flags":0,"num_columns":265,"columns_before_image":{"hex":"' + "ff" * 33 + '01"},'
          '"columns_after_image":{"hex":"' + "fe" * 33 + '01"},"rows":{"hex":"0001"},"len_table_id":6,"table_id":9}',
        _head(path, "XID_EVENT", 16, spans[4], "2026-01-01T00:00:00Z", xid_sid, 0)
        + ',"post_header":{"hex":""},"xid":18446744073709551615}',
    ]
    (fast, error), sink = _lines([path], True)
    assert error is None
    assert fast.split("\n")[1:] == want
    assert sink.bytes == sum(size for _pos, size, _crc in spans), "the lane wrote them all"
    assert _lines([path], False)[0][0].split("\n")[1:] == want
    stdout, stderr, code = _cli([path], True, monkeypatch)
    assert (stdout.decode("utf-8").split("\n")[1:], stderr, code) == (want + [""], "", 0)


@needs_compiled
def test_a_table_map_is_the_lanes_once_the_reference_wrote_one_of_its_bytes(tmp_path):
    """The first TABLE_MAP of a body goes through the reference; the next ones of the same bytes are the lane's."""
    src = FIXTURES / "types-full" / "mariadb-bin.000001"
    maps = [ev for ev in api.read_events([str(src)]) if ev.type == "TABLE_MAP_EVENT"]
    body = maps[0].body_bytes()
    path, spans = _crafted(tmp_path, [(19, 1767225600, 3, 0, body), (19, 1767225601, 4, 0, body)])
    (fast, error), sink = _lines([path], True)
    lines = fast.split("\n")[1:]
    assert error is None and lines == _lines([path], False)[0][0].split("\n")[1:]
    assert sink.bytes == spans[1][1]
    first = lines[0].split(',"checksum":')[1].split(",", 1)[1]
    assert lines[1].split(',"checksum":')[1].split(",", 1)[1] == first
    assert lines[1].startswith(_head(path, "TABLE_MAP_EVENT", 19, spans[1], "2026-01-01T00:00:01Z", 4, 0) + ",")


@needs_compiled
def test_no_lane_for_an_output_not_in_utf8_nor_for_a_file_name_that_is_not_text(tmp_path, monkeypatch):
    """A character the output's encoding lacks, or a name of undecodable bytes, fails where the reference fails."""
    assert api.event_json_sink([str(SEEDS[0]), "x\udcff.000001"]) is None
    assert api.event_json_sink([str(SEEDS[0]), "-"]) is not None
    calls = []
    monkeypatch.setattr(event_json, "sink", lambda: calls.append(1))
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="latin-1", errors="replace", newline="")
    assert main(["events", "--format", "jsonl", str(SEEDS[0])], out, io.StringIO()) == 0
    assert not calls
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    main(["events", "--format", "jsonl", str(SEEDS[0])], out, io.StringIO())
    assert calls
