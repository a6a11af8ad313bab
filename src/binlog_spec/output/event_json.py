"""`events --format jsonl`: one JSON line per event, its header's fields then its body's (`render`, the
reference: ``jsonenc.dumps(ev.to_dict())``).

`sink()` is its compiled lane (output/_cevent_json.pyx, `Lane`): given to the reader (`read_events(..., sink=)`),
it writes the lines of the common events of a MariaDB binlog (GTID, ANNOTATE_ROWS, TABLE_MAP, the v1 rows events,
XID) straight from the reader's window, with no Event; `lines(events, lane)` writes its text before the line of
each event the reader yields (the ones the lane stopped at), so the lines keep the file's order. A TABLE_MAP's
line is the lane's once the Python side wrote one of the same body bytes (`Lane.remember`).

`agree()` checks, when the lane is first asked for, that it writes the reference's line for probes of every kind
of event it takes (the layouts it reads in C against the generated parser's); where one differs, the lane never
runs. The differential test (tests/output/test_event_json_lane.py) compares both over the corpus and fixtures.
"""
from __future__ import annotations

import functools
from typing import Iterable, Iterator

from binlog_spec import compiled
from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.fields import bodies
from binlog_spec.output import jsonenc, lane_text

ET = spec.EventType
_TABLE_MAP = int(ET.table_map_event)
#: The types the lane writes.
LANE_TYPES = frozenset(int(t) for t in (ET.gtid_event, ET.xid_event, ET.annotate_rows_event, ET.table_map_event,
                                        ET.write_rows_event_v1, ET.update_rows_event_v1, ET.delete_rows_event_v1))

_c = compiled.load("binlog_spec.output._cevent_json")


def render(ev: Event) -> str:
    """The JSON line of an event: its header's fields, then its body's (Event.to_dict)."""
    return jsonenc.dumps(ev.to_dict(), floats=False)   # the spec reads no float


def _names() -> list:
    """Type code -> its name as a JSON string (bytes), for the types the lane writes; None for the others."""
    return [jsonenc.dumps(spec.event_type_name(code)).encode() if code in LANE_TYPES else None
            for code in range(256)]


def sink():
    """The lane (a new `Lane` for one run's reader), or None where the Python side writes every line: the
    pure-Python core, or a lane that does not write the reference's lines (`agree`)."""
    if _c is None or not agree():
        return None
    return _c.Lane(_names())


def lines(events: Iterable[Event], lane) -> Iterator[str | bytes]:
    """The lines of the events the reader yields, each after the text the lane wrote before it (`lane`: the
    `sink()` the reader was given, or None): a line (str) per event the reader yields, and the lane's blocks of
    lines (UTF-8 bytes, lines joined by newlines); what the lane wrote before a fault of the input comes first."""
    if lane is None:
        yield from map(render, events)
        return
    remember = lane.remember

    def rendered(ev: Event) -> str:
        line = render(ev)
        if ev.header.type_code == _TABLE_MAP:
            remember(ev, line)
        return line
    yield from lane_text.with_lane(lane, map(rendered, events))


# -- the probes --------------------------------------------------------------------------------------------
_H = spec.LEN_EVENT_HEADER


#: Probe timestamps: the epoch, a leap day, the last second of a u4, a day's last second.
_TIMES = (0, 951782400, 4294967295, 1767225599, 1767225600)


def _event(code: int, body: bytes, fde: spec.FormatDescription, k: int) -> bytes:
    size = _H + len(body) + fde.len_checksum
    raw = spec.HEADER_STRUCT.pack(_TIMES[k % len(_TIMES)], code, 4294967295 - k, size, (4294967290 + k) % 2**32,
                                  0xFFFF if k % 2 else 8) + body
    if fde.len_checksum:
        raw += spec.event_crc32(raw + bytes(4)).to_bytes(4, "little")
    return raw


def probes() -> list[tuple[bytes, spec.FormatDescription, bool]]:
    """(event bytes, its FDE, whether the lane takes it): one of every kind the lane writes, and of its limits."""
    out = []
    for len_checksum in (0, 4):
        for lph in (0, 3, 6, 8):
            lens = bytearray(255)
            for code in LANE_TYPES:
                lens[code - 1] = lph if code != ET.gtid_event else 19
            lens[_TABLE_MAP - 1] = 8
            fde = spec.FormatDescription(4, "probe", 0, _H, bytes(lens), None, None, len_checksum)
            head = bytes(range(0x61, 0x61 + lph))
            rows = lph in (6, 8)
            out.append((_event(ET.xid_event, head + (2**64 - 1).to_bytes(8, "little"), fde, len(out)), fde, True))
            out.append((_event(ET.xid_event, head + bytes(9), fde, len(out)), fde, False))
            for query in (b"INSERT INTO t VALUES ('a\"b\\\\c\n\t\r\x08\x0c\x01\x1f\x7f "
                          b"\xc3\xa9 \xe6\x9d\xb1 \xf0\x9f\x99\x82')",
                          b"", b"bad \xff \xc3 \xed\xa0\x80 \xf4\x90\x80\x80 \xe0\x80\xaf end \xc3"):
                out.append((_event(ET.annotate_rows_event, head + query, fde, len(out)), fde, True))
            for flags2, extra in ((0x29, b""), (0x0c, bytes(6)), (0x0e, bytes(8)), (0x0f, b""), (0x0e, b""),
                                  (0x40, bytes(6)), (0x08, b"\x01" + bytes(5))):
                body = (2**64 - 2).to_bytes(8, "little") + (2**32 - 1).to_bytes(4, "little") + bytes([flags2])
                if flags2 & 2:
                    body += (2**63 + 5).to_bytes(8, "little")
                taken = not flags2 & 0x40 and extra[:1] != b"\x01"      # no XA, no extra flags
                out.append((_event(ET.gtid_event, body + extra, fde, len(out)), fde, taken))
            for code in (ET.write_rows_event_v1, ET.update_rows_event_v1, ET.delete_rows_event_v1):
                tid = bytes([0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc][:lph - 2]) + b"\x03\x00"
                for count, maps in ((b"\x03", b"\x05"), (b"\x11", b"\xff\xff\x01"), (b"\xfc\x09\x00", b"\xff\x01"),
                                    (b"\xfd\x0a\x00\x00", b"\xff\x03"), (b"\xfe\x0c" + bytes(7), b"\xff\x0f")):
                    images = maps * (2 if code == ET.update_rows_event_v1 else 1)
                    body = (tid if rows else head) + count + images + bytes(range(40))
                    out.append((_event(code, body, fde, len(out)), fde, rows))
    return out


_PROBE_FILE = "dir/a \"b\"\\ é.000001"


@functools.lru_cache(maxsize=None)
def agree() -> bool:
    """Whether the compiled lane writes the reference's line for each probe it takes, and takes the probes it
    should (False: it is not built, or its layouts are not the spec's)."""
    if _c is None:
        return False
    lane = _c.Lane(_names())
    for raw, fde, taken in probes():
        got = lane.line(raw, 4096, fde, _PROBE_FILE)
        if (got is not None) != taken:
            return False
        if got is not None:
            ev = Event(_PROBE_FILE, 4096, spec.parse_header(raw[:_H]), raw, bodies.parse_event(raw, fde),
                       checksum=int.from_bytes(raw[-4:], "little") if fde.len_checksum else None)
            if got != render(ev):
                return False
    return True


__all__ = ["render", "sink", "lines", "agree", "probes", "LANE_TYPES"]
