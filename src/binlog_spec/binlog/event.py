"""The friendly event object every consumer sees."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from binlog_spec.binlog import spec

from binlog_spec.binlog.fields import bodies
from binlog_spec.binlog.timezones import iso_utc
from binlog_spec.errors import MalformedEventError


class Event:
    """One binlog event: header fields as attributes, body fields through `fields`.

    Body fields are also reachable as attributes (``ev.query``, ``ev.table_id``).
    For an event inside a TRANSACTION_PAYLOAD_EVENT, `payload_pos` is the
    position of the enclosing payload event and `pos` is the same; `payload_offset`
    is the event's offset inside the uncompressed payload.
    """

    __slots__ = ("file", "pos", "header", "raw", "payload_pos", "payload_offset", "error", "checksum",
                 "_body", "_fields", "_overrides", "table_def", "_late", "replayed")

    def __init__(self, file: str, pos: int, header: spec.EventHeader, raw: bytes, body: Any,
                 payload_pos: int | None = None, payload_offset: int | None = None,
                 overrides: dict[str, Any] | None = None, error: Exception | None = None,
                 checksum: int | None = None, late: tuple | None = None):
        self.file = file
        self.pos = pos
        self.header = header
        self.raw = raw
        self.payload_pos = payload_pos
        self.payload_offset = payload_offset
        self._body = body
        self._fields: dict[str, Any] | None = None
        self._overrides = overrides
        #: Set when the body does not match its type's layout; the body is then kept raw.
        self.error = error
        #: The event's CRC32 trailer, when it has one.
        self.checksum = checksum
        #: A TABLE_MAP_EVENT's table as the schema known at this event describes it (a
        #: tablemap.TableDef set by rows.observe_schema, before any filter); None otherwise.
        self.table_def = None
        #: A body not parsed yet: (parse(event, fde) -> (body, overrides, error), fde), see _parsed.
        self._late = late
        #: An event a reader sink took and wrote, handed back for what it tells (binlog/replay.py): its
        #: consumers learn from it (a GTID, a table) but write nothing of it.
        self.replayed = False

    # header ------------------------------------------------------------
    @property
    def type_code(self) -> int:
        return self.header.type_code

    @property
    def type(self) -> str:
        return spec.event_type_name(self.header.type_code)

    @property
    def timestamp(self) -> int:
        return self.header.timestamp

    @property
    def datetime(self) -> datetime:
        return datetime.fromtimestamp(self.header.timestamp, tz=timezone.utc)

    @property
    def server_id(self) -> int:
        return self.header.server_id

    @property
    def size(self) -> int:
        return self.header.len_event

    @property
    def end_log_pos(self) -> int:
        return self.header.end_log_pos

    @property
    def flags(self) -> int:
        return self.header.flags

    @property
    def is_inner(self) -> bool:
        return self.payload_pos is not None

    # body --------------------------------------------------------------
    def _parsed(self) -> None:
        """Parse a body left unparsed by the reader (ReadOptions.parse_bodies): the reader's error for
        a malformed body, raised when strict, else set in `error`."""
        parse, fde = self._late
        self._body, self._overrides, self.error = parse(self, fde)
        self._late = None

    @property
    def fields(self) -> dict[str, Any]:
        if self._fields is None:
            if self._late is not None:
                self._parsed()
            if self.error is not None:
                self._fields = {"malformed": getattr(self.error, "message", str(self.error)),
                                "body": self.raw[spec.LEN_EVENT_HEADER:]}
                return self._fields
            try:
                d = bodies.body_fields(self._body, self.header)
            except (ValueError, KeyError, IndexError, TypeError) as exc:   # values the layout let through
                raise MalformedEventError(f"event fields: {type(exc).__name__}: {exc}", file=self.file,
                                          offset=self.pos, event_type=self.type) from None
            if self._overrides:
                d.update(self._overrides)
            self._fields = d
        return self._fields

    def rows_parts(self) -> tuple[int, int, bytes, bytes | None, bytes]:
        """(table_id, num_columns, columns_before_image, columns_after_image or None, rows) of a
        rows event, as `fields` has them (KeyError where it lacks them), but without building
        `fields` when it has not been built yet."""
        if self._late is not None:
            self._parsed()
        if self._fields is None and not self._overrides and self.error is None:
            parts = spec.rows_parts(self._body)
            if parts is not None:
                return parts
        f = self.fields
        return (f["table_id"], f["num_columns"], f["columns_before_image"], f.get("columns_after_image"),
                f["rows"])

    def rows_head(self) -> tuple[int, int] | None:
        """(table_id, rows_flags) of a rows event, as `fields` has them, read off the parsed body
        without building `fields`; None when that cannot be done (ask `fields`)."""
        if self._late is not None:
            self._parsed()
        if self._fields is None and not self._overrides and self.error is None:
            return spec.rows_head(self._body)
        return None

    def body_values(self, names: tuple[str, ...]) -> tuple:
        """The values of plain integer or byte fields, read off the parsed body without building
        `fields` when it has not been built yet (spec.body_values); else `fields`' (KeyError where it
        lacks one). Byte fields that `fields` turns into text are given as the bytes."""
        if self._late is not None:
            self._parsed()
        if self._fields is None and not self._overrides and self.error is None:
            values = spec.body_values(self._body, names)
            if values is not None:
                return values
        f = self.fields
        return tuple(f[name] for name in names)

    def body_bytes(self) -> bytes:
        """The event's body as stored: its bytes after the common header, less the checksum."""
        raw = self.raw
        return raw[spec.LEN_EVENT_HEADER:len(raw) - 4 if self.checksum is not None else len(raw)]

    def statement_bytes(self) -> bytes:
        """The statement of a statement event as bytes (b"" when it has none), as `fields["query"]`
        has it, but without building `fields` when it has not been built yet."""
        if self._late is not None:
            self._parsed()
        if self._fields is None and not self._overrides and self.error is None:
            query = spec.statement_bytes(self._body)
            if query is not None:
                return query
        query = self.fields.get("query")
        return query.encode("utf-8", "replace") if isinstance(query, str) else b""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"{self.type} has no field {name!r}") from None

    def to_dict(self) -> dict[str, Any]:
        fields = self.fields    # first: a body parsed only now sets `error` when it is malformed
        h = self.header         # read once: the properties above, without their calls
        d: dict[str, Any] = {
            "file": self.file,
            "pos": self.pos,
            "end_log_pos": h.end_log_pos,
            "type": spec.event_type_name(h.type_code),
            "type_code": h.type_code,
            "timestamp": iso_utc(h.timestamp),
            "server_id": h.server_id,
            "size": h.len_event,
            "flags": h.flags,
        }
        if self.checksum is not None:
            d["checksum"] = self.checksum
        if self.error is not None:
            d["error"] = str(self.error)
        if self.payload_pos is not None:
            d["payload_pos"] = self.payload_pos
            d["payload_offset"] = self.payload_offset
        # The body's fields after the header's, which win a clash: merged, then the header's values put
        # back in place (dict order is first insertion).
        out = {**d, **fields}
        out.update(d)
        return out

    def __repr__(self) -> str:
        return f"<Event {self.type} at {self.file}:{self.pos} size {self.size}>"
