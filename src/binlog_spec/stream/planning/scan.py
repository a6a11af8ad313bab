"""The header pass that finds where to cut a binlog: `scan_file` is the cheap planning pass, through the
reader's scan mode (`BinlogReader.scan`): it reads the file in large sequential chunks and walks the event
headers, stepping over bodies by their size. It parses only the FORMAT_DESCRIPTION_EVENTs, the QUERY
events that may be DDL, and (when asked) the TABLE_MAPs of one table; the reader checks the framing and
every CRC32. It returns transaction boundaries (the position of each GTID event, the position after each
XID event) up to the first fault (`ScanResult`), and the DDL statements it kept.
"""
from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable

from binlog_spec.binlog.fields import bodies, payload
from binlog_spec.binlog import spec
from binlog_spec.errors import BinlogError
from binlog_spec.binlog.event_types import is_mariadb
from binlog_spec.options import DEFAULT_OPTIONS
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.rows.statement_text import NOT_DDL
from binlog_spec.stream.planning.pieces import (BOUNDARY_CODES, FDE, GTID_CODES, QUERY_CODES, TABLE_MAP, XID, FileRef,
                                                open_ref)

DEFAULT_CHUNK = 8 << 20


@dataclass
class ScanResult:
    """What the planning pass learnt of one file."""

    size: int | None = None
    #: Positions where a transaction starts with the stream closed before it (candidate split points).
    boundaries: list[int] = field(default_factory=list)
    #: (position, FDE position, FDE size): the FDE in force from each FDE on.
    fdes: list[tuple[int, int]] = field(default_factory=list)
    #: QUERY events that may be DDL, unparsed: (position, event bytes, FDE in force).
    ddl: list[tuple[int, bytes, spec.FormatDescription]] = field(default_factory=list)
    #: The first fault the pass saw (the reader will raise there): (offset, message).
    fault: tuple[int, str] | None = None
    #: Whether the file is written by MariaDB (its FDE array covers MariaDB's event codes).
    mariadb: bool = False
    events: int = 0
    #: What the `probe` callback returned when it stopped the pass.
    probe_result: Any = None


def query_prefix(ev: memoryview, fde: spec.FormatDescription) -> bytes | None:
    """The first bytes of a QUERY_EVENT's statement, at the spec's offset, or None."""
    try:
        start = fde.len_common_header + spec.query_offsets(ev, fde).ofs_query
    except (ValueError, IndexError):
        return None
    return bytes(ev[start:start + 24]).lstrip().upper()


def _query_fields(ev: bytes, fde: spec.FormatDescription) -> tuple[str, str] | None:
    try:
        body = spec.parse_event(ev, fde)
        fields = bodies.body_fields(body, spec.parse_header(ev[:spec.LEN_EVENT_HEADER]))
        query = fields.get("query", "")
        if ev[4] == QUERY_CODES[1]:
            query = payload.mariadb_uncompress(spec.raw_field(body, "query")).decode("utf-8", errors="replace")
        return fields.get("db", ""), query
    except (*spec.SpecError, payload.PayloadError):
        return None


def ddl_statements(res: ScanResult) -> list[tuple[int, str, str]]:
    """The (position, db, query) of the QUERY events the pass kept (those that may be DDL)."""
    out = []
    for pos, ev, fde in res.ddl:
        q = _query_fields(ev, fde)
        if q is not None:
            out.append((pos, q[0], q[1]))
    return out


def scan_file(ref: FileRef, *, ddl: bool = False, verify_checksums: bool = True,
              probe: Callable[[int, bytes, spec.FormatDescription, ScanResult], Any] | None = None,
              chunk: int = DEFAULT_CHUNK) -> ScanResult:
    """The planning pass over one file (see the module doc): the reader's scan mode
    (`BinlogReader.scan`), which checks the framing as reading does. Never raises for a broken
    binlog: the first fault is returned in `fault`, and nothing after it is looked at.

    `probe(pos, event_bytes, fde, result)` is called for each TABLE_MAP_EVENT; a result other
    than None stops the pass and is kept in `probe_result`.
    """
    res = ScanResult()
    options = dataclasses.replace(DEFAULT_OPTIONS, verify_checksums=verify_checksums)

    def opener() -> tuple[BinaryIO, int | None]:
        stream, res.size = open_ref(ref, options.buffer_size, buffered=False)
        return stream, res.size

    reader = BinlogReader(ref.name, options, opener=opener)
    try:
        scan_reader(reader, res, ddl, probe, chunk)
    except BinlogError as exc:
        res.fault = (exc.offset or 0, exc.message)
    except (OSError, EOFError, zlib.error) as exc:
        res.fault = (res.fault or (0, ""))[0], f"cannot read: {exc}"
    finally:
        reader.close()
    return res


def scan_reader(reader: BinlogReader, res: ScanResult, want_ddl: bool, probe, chunk: int) -> None:
    """The pass of `scan_file` over a reader made by the caller (a split's, for stream.planning.ddl)."""
    read = (QUERY_CODES if want_ddl else ()) + ((TABLE_MAP,) if probe else ())
    try:
        for pos, code, size, ev in reader.scan(frozenset(read), BOUNDARY_CODES, chunk):
            if code in GTID_CODES:
                res.boundaries.append(pos)
            elif code == XID:
                res.boundaries.append(pos + size)
            elif code == FDE:
                res.fdes.append((pos, size))
                res.mariadb = is_mariadb(len(reader.format_description.post_header_lens))
            elif want_ddl and code in QUERY_CODES:
                fde = reader.format_description
                prefix = query_prefix(ev, fde) if code == QUERY_CODES[0] else None
                if prefix is None or not prefix.startswith(NOT_DDL):
                    res.ddl.append((pos, bytes(ev), fde))
            elif probe is not None and code == TABLE_MAP:
                found = probe(pos, bytes(ev), reader.format_description, res)
                if found is not None:
                    res.probe_result = found
                    return
    finally:
        res.events = reader.scanned


def statements_with_collation(res: ScanResult) -> list[tuple[int, str, str, int | None]]:
    """`ddl_statements` with each one's server collation (Q_CHARSET_CODE), as the rows stage replays
    them (rows.decoder.observe_schema)."""
    from types import SimpleNamespace
    from binlog_spec.rows.decoder import server_collation
    out = []
    for pos, ev, fde in res.ddl:
        try:
            fields = bodies.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:spec.LEN_EVENT_HEADER]))
        except (*spec.SpecError, payload.PayloadError):
            fields = {}
        q = _query_fields(ev, fde)
        if q is not None:
            out.append((pos, q[0], q[1], server_collation(SimpleNamespace(fields=fields))))
    return out
