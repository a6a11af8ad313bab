"""The script `mysqlbinlog` / `mariadb-binlog` write by default (--base64-output=auto).

Row events go back to the server as they are, in ``BINLOG '…'`` statements
(base64 of the event bytes), after the FORMAT_DESCRIPTION_EVENT's own BINLOG
block, which tells the server how to read them. Each BINLOG block holds a
statement's TABLE_MAP events and its rows events, up to the one that ends the
statement (STMT_END_F). Statements (DDL, BEGIN, statement-based DML) are
written verbatim, with the session settings the QUERY event carries
(timestamp, sql_mode, flags2, character sets, ...), printed when they change,
as the tools do. Everything ends with the ``/*!*/;`` delimiter
(``DELIMITER /*!*/;`` opens the script).

Around each transaction: ``SET @@SESSION.GTID_NEXT= '…'`` (MySQL GTIDs) or
MariaDB's ``SET @@session.gtid_domain_id / server_id / gtid_seq_no`` then
``START TRANSACTION``; ``COMMIT`` for an XID event.

The input is a stream of `writer.Item`s (`rewriter.Rewriter.items`), so
the same script serves forward output and rollback (inverted events, last
transaction first), with renamed schemas (`--rewrite-db`) and decompressed
MariaDB events. With `verbose`, the ``###`` pseudo-SQL of
`verbose.render_row_change` follows each BINLOG block.

Not reproduced: LOAD DATA (its file is not in the binlog output; the
statement is written as a comment), MariaDB's fragmented BINLOG of events
larger than max_allowed_packet, MySQL's per-transaction
original_commit_timestamp / server-version settings. Times in the ``#``
comments are UTC (the tools print the local time zone).
"""
from __future__ import annotations

import functools
import struct
from typing import Iterable, Iterator

from binlog_spec.binlog.writer import (OFS_END_LOG_POS, OFS_TYPE, events_have_checksum, fde_has_checksum, frame,
                                       query_parts)
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.binlog import spec, timezones
from binlog_spec.output.base64.text import encode, text
from binlog_spec.output.event_text import summarize
from binlog_spec.rows import values
from binlog_spec.rows.charsets import COLLATION_IDS
from binlog_spec.output import verbose
from binlog_spec.binlog.writer import Item
from binlog_spec.output.rewriter import Rewriter
from binlog_spec.output.base64.parts import NOT_NONE, UNKNOWN, Part, deferred, flags2_lines
from binlog_spec.output.base64.session import DELIMITER, Session, flags2_written, footer, header
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.stream.transactions import xa_xid
from binlog_spec.errors import BinlogError
from binlog_spec.binlog import event_types
from binlog_spec.binlog.event_types import (EVENT_TYPES, FL_ALLOW_PARALLEL, FL_PREPARED_XA, FL_STANDALONE, ROWS_EVENTS,
                                           STMT_END_F)
from binlog_spec.options import Base64Options  # noqa: F401 - (its home: options)

ET = spec.EventType

#: QUERY_EVENT header flags.
LOG_EVENT_THREAD_SPECIFIC_F = 0x4
LOG_EVENT_SUPPRESS_USE_F = 0x8

_TRANS_KEYWORDS = ("BEGIN", "COMMIT", "ROLLBACK", "XA ", "SAVEPOINT", "RELEASE")
#: Event codes as plain ints (an enum member costs a class lookup at every comparison).
_FDE, _TABLE_MAP, _ROWS_QUERY, _XID = (int(ET.format_description_event), int(ET.table_map_event),
                                       int(ET.rows_query_log_event), int(ET.xid_event))
_MARIADB_GTID = int(ET.gtid_event)
_ANNOTATE = int(ET.annotate_rows_event)
#: Event code (a plain int) -> what the script writes for it after its comment (event_types.EVENT_TYPES).
_SCRIPT: dict[int, str] = {int(code): row.script for code, row in EVENT_TYPES.items()}
#: The events kept for a BINLOG block: [ROWS_QUERY] TABLE_MAP... rows...
_BLOCK_EVENTS = frozenset(code for code, script in _SCRIPT.items() if script == event_types.BLOCK)
_OFS_END, _END_END = OFS_END_LOG_POS, OFS_END_LOG_POS + 4
_event_text = text
_GTID_VALUES = ("flags2", "domain_id", "seq_no")
_INTVAR_NAMES = {1: "LAST_INSERT_ID", 2: "INSERT_ID", "LAST_INSERT_ID_EVENT": "LAST_INSERT_ID",
                 "INSERT_ID_EVENT": "INSERT_ID"}



def _charset_names() -> dict[int, str]:
    """Collation id -> character set name (for the client's ``\\C`` command and introducers)."""
    table: dict[int, str] = {}
    for name, ranges in COLLATION_IDS.items():
        for first, last in ranges:
            for cid in range(first, last + 1):
                table[cid] = "utf8" if name == "utf8mb3" else name
    return table


CHARSET_NAMES = _charset_names()


#: As the tools print it, in the zone given: 260101  9:05:00.
_when = timezones.tool_text


#: base64.encodebytes(data) without its last newline (output.base64.text: compiled where built).
_base64 = encode


def _one_line(text: str) -> str:
    """" ".join(text.split()): the text on one line, single-spaced. Every whitespace character but " "
    is unprintable, so a printable text with no double, leading or trailing space is already so."""
    if not text.isprintable() or "  " in text or text[:1] == " " or text[-1:] == " ":
        return " ".join(text.split())
    return text


def _text(data: bytes) -> str:
    """Bytes written as they are (the output is re-encoded with surrogateescape)."""
    return data.decode("utf-8", "surrogateescape")


def _status(ev) -> dict[str, object]:
    return {s["code"]: s.get("value") for s in ev.fields.get("status_vars") or [] if isinstance(s, dict)}


class Base64Script:
    """Renders Items as the lines of the script (no newlines; a statement may span lines)."""

    def __init__(self, options: Base64Options = Base64Options(), rewriter: Rewriter | None = None,
                 part: Part | None = None):
        self.options = options
        self.rewriter = rewriter
        self.part = part
        self.session = Session(UNKNOWN if part is not None and not part.first else None)
        self.mariadb = False
        self.fde: spec.FormatDescription | None = None
        self.block: list[Item] = []
        #: The lines of the item being written (_item and _flush append to it, `lines` hands them on).
        self._out: list[str] = []
        #: Events that could not be written executable (LOAD DATA, incidents, ...), and what the
        #: rows decoder says of the tables whose rows it prints (-v: names unknown, ...).
        self.warnings: list[str] = []
        #: -v: the rows events whose rows could not be decoded (their BinlogErrors, in order): each
        #: has a ``# rows not decoded`` comment under its BINLOG block (the block itself is right).
        self.row_errors: list[BinlogError] = []
        # -v: the names and charsets are the TABLE_MAPs' (observe_schema under the filters)
        warn = self.warnings.append
        if part is not None:        # --jobs: (key, line) of what is told once per run
            warn = functools.partial(self.warnings.append)
            warn.keyed = lambda key, message: self.warnings.append((repr(key), message))
        self.decoder = RowDecoder(warn=warn) if options.verbose else None
        #: A MySQL GTID or PREVIOUS_GTIDS event was seen: the script ends with GTID_NEXT='AUTOMATIC'.
        self.mysql_gtids = False

    # -- whole script ------------------------------------------------------
    def lines(self, items: Iterable[Item]) -> Iterator[str]:
        started = self.part is not None and not self.part.first
        if started:
            self.mariadb = self.part.mariadb
        out = self._out
        for item in items:
            if item.__class__ is str:      # written by the lane (lines_of)
                yield item
                continue
            if not started:  # the first item is the FDE: it says whose tool's lines to write
                started = True
                self.mariadb = item.type_code == ET.format_description_event and \
                    "mariadb" in item.fde.server_version.lower()
                yield from header(self.mariadb)
                yield f"# times in {timezones.zone_name(self.options.tz)}"
            try:
                self._item(item)
            except Exception:
                yield from out      # the lines made before the fault are written before it goes on
                out.clear()
                raise
            if out:
                yield from out
                out.clear()
        if not started:
            yield from header(False)
        self._flush()
        yield from out
        out.clear()
        if self.part is not None and not self.part.last:
            return
        automatic = f"SET @@SESSION.GTID_NEXT= 'AUTOMATIC' /* added by mysqlbinlog */ {DELIMITER}"
        if self.mysql_gtids:
            yield automatic
        elif self.part is not None:     # a GTID in an earlier piece
            yield deferred("mysql_gtids", None, [automatic])
        yield from footer(self.mariadb)

    def _changed(self, name: str, value, *lines: str) -> Iterator[str]:
        """A setting that differs from the session's: its lines (deferred when the session's is UNKNOWN)."""
        if getattr(self.session, name) in (UNKNOWN, NOT_NONE):
            yield deferred(name, value, lines)
        else:
            yield from lines
        setattr(self.session, name, value)

    def state(self) -> dict[str, str]:
        """--jobs: the settings the piece leaves (repr of each one known), and whether it saw MySQL GTIDs."""
        s = self.session
        known = {k: repr(v) for k, v in vars(s).items() if k not in ("mysql_vars", "unset")
                 and v is not UNKNOWN and v is not NOT_NONE}
        known.update((f"mysql_vars.{k}", repr(v)) for k, v in s.mysql_vars.items())
        if self.mysql_gtids:
            known["mysql_gtids"] = repr(True)
        return known

    # -- one event ---------------------------------------------------------
    def _frame(self, item: Item) -> bytes:
        if item.bare[OFS_TYPE] == _FDE:
            return frame(item.bare, item.pos, fde_has_checksum(item.fde))
        return frame(item.bare, item.pos, events_have_checksum(item.fde))

    def _comment(self, item: Item, framed: bytes) -> list[str]:
        """The FDE's ``#`` lines (its framing is frame's; the other events' is _text's)."""
        ev = item.event
        crc = f"CRC32 0x{int.from_bytes(framed[-4:], 'little'):08x} " if len(framed) > len(item.bare) else ""
        end = int.from_bytes(framed[_OFS_END:_END_END], "little")
        text = summarize(ev, self.options.tz)     # on one line, its time's padding kept
        if not text.isprintable():
            text = _one_line(text)
        header = ev.header
        return [f"# at {item.pos}",
                f"#{_when(header.timestamp, self.options.tz)} server id {header.server_id}  end_log_pos {end} "
                f"{crc}\t{text}"]

    def _text(self, item: Item, encode: bool) -> tuple[str, str | None]:
        """An event's ``#`` lines (and with `encode` the base64 of its framed bytes), not the FDE's
        (output.base64.text.event_text, compiled where built)."""
        ev = item.event
        header = ev.header
        bare = item.bare
        return _event_text(bare, len(bare), item.pos, item.fde.len_checksum == 4, _when(header.timestamp, self.options.tz),
                           header.server_id, _one_line(summarize(ev, self.options.tz)), encode)

    def _item(self, item: Item) -> list[str]:
        """The item's lines (a string may hold several, joined by newlines), appended to self._out as
        they are made, which is returned."""
        code = item.bare[OFS_TYPE]
        ev = item.event
        out = self._out
        if code in _BLOCK_EVENTS and ev.error is None:
            # A BINLOG block: [ROWS_QUERY] TABLE_MAP... rows... up to the statement's end (as mysqlbinlog)
            rows_event = code in ROWS_EVENTS
            if not rows_event and self.block and self.block[-1].type_code in ROWS_EVENTS:
                self._flush()
            self.block.append(item)
            if rows_event:
                head = ev.rows_head()
                if (head[1] if head is not None else ev.fields.get("rows_flags", 0)) & STMT_END_F:
                    self._flush()
            return out
        if self.block:
            self._flush()
        if code == _FDE:
            framed = self._frame(item)
            out.extend(self._comment(item, framed))
        else:
            out.append(self._text(item, False)[0])
        if ev.error is not None:
            self.warnings.append(f"{item.file}:{item.pos}: malformed {ev.type} left out of the script")
            out.append(f"# skipped, malformed: {' '.join(str(ev.error).split())}")
            return out
        script = _SCRIPT.get(code)
        if script == event_types.COMMIT:
            out.append(f"COMMIT{DELIMITER}")
        elif script == event_types.MARIADB_GTID:
            out.extend(self._mariadb_gtid(item))
        elif script == event_types.STATEMENT_COMMENT:
            out.extend(self._statement_comment(item))
        elif script == event_types.STATEMENT:
            out.extend(self._query(item))
        elif script == event_types.FDE:
            out.extend(self._fde(item, framed))
        elif script == event_types.MYSQL_GTID:
            out.extend(self._mysql_gtid(item))
        elif script == event_types.PREVIOUS_GTIDS:
            self.mysql_gtids = True
        elif script == event_types.INTVAR:
            name = _INTVAR_NAMES.get(ev.fields["var_type"])
            if name:
                out.append(f"SET {name}={ev.fields['value']}{DELIMITER}")
        elif script == event_types.RAND:
            out.append(f"SET @@RAND_SEED1={ev.fields['seed1']}, @@RAND_SEED2={ev.fields['seed2']}{DELIMITER}")
        elif script == event_types.USER_VAR:
            out.append(self._user_var(ev.fields) + DELIMITER)
        elif script == event_types.LOAD_DATA:
            self.warnings.append(f"{item.file}:{item.pos}: LOAD DATA cannot be replayed from a binlog script")
            out.append(f"# not replayable (LOAD DATA needs its file): {' '.join(ev.fields.get('query', '').split())}")
        elif script == event_types.XA_PREPARE:
            xid = xa_xid(ev)
            out += [f"XA COMMIT {xid} ONE PHASE" if ev.fields["one_phase"] else f"XA PREPARE {xid}", DELIMITER]
        elif script == event_types.INCIDENT:
            self.warnings.append(f"{item.file}:{item.pos}: incident event: the source lost events here")
        elif script == event_types.PAYLOAD:
            self.warnings.append(f"{item.file}:{item.pos}: TRANSACTION_PAYLOAD_EVENT not expanded: its "
                                 "transaction is not in the script")
        return out

    def _body_start(self, item: Item) -> int:
        return item.fde.len_common_header or spec.LEN_EVENT_HEADER

    def _statement_comment(self, item: Item) -> Iterator[str]:
        """The statement of an ANNOTATE_ROWS (``#Q>`` lines) or ROWS_QUERY event (``# `` lines)."""
        code = item.type_code
        start = self._body_start(item) + item.fde.post_header_len(code)
        return self._statement_lines(item.bare[start:], code)

    @staticmethod
    def _statement_lines(body: bytes, code: int) -> list[str]:
        """The lines of _statement_comment, from the bytes after the post-header."""
        query = body[1:] if code == _ROWS_QUERY else body
        prefix = "#Q> " if code == _ANNOTATE else "# "
        return [prefix + line.replace("\r", "") for line in _text(query).split("\n")]

    # -- events --------------------------------------------------------------
    def _fde(self, item: Item, framed: bytes) -> Iterator[str]:
        ev = item.event
        self.fde = item.fde
        self.mariadb = "mariadb" in item.fde.server_version.lower()
        if self.decoder is not None:
            self.decoder.feed(ev)
        if ev.fields.get("create_timestamp"):
            yield f"ROLLBACK{DELIMITER}"
        yield "BINLOG '"
        yield _base64(framed)
        yield f"'{DELIMITER}"

    def _mysql_gtid(self, item: Item) -> Iterator[str]:
        f = item.event.fields
        self.mysql_gtids = True
        if not (f.get("gtid_flags") or 0) & 1:  # FLAG_MAY_HAVE_SBR clear: row-based only
            yield f"/*!50718 SET TRANSACTION ISOLATION LEVEL READ COMMITTED*/{DELIMITER}"
        if self.options.skip_gtids:
            yield f"SET @@SESSION.GTID_NEXT='AUTOMATIC'{DELIMITER}"
            return
        if f.get("immediate_commit_timestamp") is not None:
            original = f.get("original_commit_timestamp") or f["immediate_commit_timestamp"]
            yield f"/*!80001 SET @@session.original_commit_timestamp={original}*/{DELIMITER}"
        if f.get("immediate_server_version") is not None:
            original = f.get("original_server_version") or f["immediate_server_version"]
            yield f"/*!80014 SET @@session.original_server_version={original}*/{DELIMITER}"
            yield f"/*!80014 SET @@session.immediate_server_version={f['immediate_server_version']}*/{DELIMITER}"
        gtid = "ANONYMOUS" if item.type_code == ET.anonymous_gtid_log_event else f.get("gtid")
        yield f"SET @@SESSION.GTID_NEXT= '{gtid}'{DELIMITER}"

    def _mariadb_gtid(self, item: Item) -> Iterator[str]:
        flags2, domain_id, seq_no = item.event.body_values(_GTID_VALUES)
        s = self.session
        skip_parallel = int(not flags2 & FL_ALLOW_PARALLEL)
        if s.skip_parallel != skip_parallel:
            yield from self._changed("skip_parallel", skip_parallel,
                                     f"/*M!100101 SET @@session.skip_parallel_replication={skip_parallel}*/{DELIMITER}")
        if s.gtid_domain != domain_id:
            yield from self._changed("gtid_domain", domain_id,
                                     f"/*M!100001 SET @@session.gtid_domain_id={domain_id}*/{DELIMITER}")
        if s.gtid_server != item.event.server_id:
            yield from self._changed("gtid_server", item.event.server_id,
                                     f"/*M!100001 SET @@session.server_id={item.event.server_id}*/{DELIMITER}")
        if not self.options.skip_gtids:
            yield f"/*M!100001 SET @@session.gtid_seq_no={seq_no}*/{DELIMITER}"
        if not flags2 & FL_STANDALONE:      # (an XA transaction's prepare: its XA START, as mariadb-binlog)
            yield from ((f"XA START {xa_xid(item.event)}{DELIMITER}",) if flags2 & FL_PREPARED_XA else
                        ("START TRANSACTION", DELIMITER))

    def _query(self, item: Item) -> Iterator[str]:
        ev = item.event
        db, query = query_parts(item.bare, item.fde, item.file, item.pos)
        version = self.rewriter.server_version(item) if self.rewriter is not None else item.fde.server_version
        yield from self._query_header(ev, db, query, flags2_written(version))
        yield _text(query)
        yield DELIMITER

    def _query_header(self, ev, db: bytes, query: bytes, written: int) -> Iterator[str]:
        """The session lines before a statement; of Q_FLAGS2, the bits `written` (flags2_written)."""
        s = self.session
        st = _status(ev)
        if ev.flags & LOG_EVENT_SUPPRESS_USE_F:
            if not query.lstrip().upper().startswith(tuple(k.encode() for k in _TRANS_KEYWORDS)):
                s.db = b""
        elif db != s.db:
            yield from self._changed("db", db, *([f"use {quote_identifier(_text(db))}{DELIMITER}"] if db else []))
        usec = st.get("Q_HRNOW", st.get("Q_MICROSECONDS"))
        yield f"SET TIMESTAMP={ev.timestamp}{'.%06d' % usec if isinstance(usec, int) and usec else ''}{DELIMITER}"
        thread_id = ev.fields.get("thread_id")
        if s.thread_id is None or (ev.flags & LOG_EVENT_THREAD_SPECIFIC_F and thread_id != s.thread_id):
            yield from self._changed("thread_id", thread_id, f"SET @@session.pseudo_thread_id={thread_id}{DELIMITER}")
        elif s.thread_id is UNKNOWN:    # set here if no statement came before the piece; set from here on
            yield deferred("thread_id?", thread_id, [f"SET @@session.pseudo_thread_id={thread_id}{DELIMITER}"])
            s.thread_id = NOT_NONE
        flags2 = st.get("Q_FLAGS2_CODE")
        if isinstance(flags2, int):
            yield from flags2_lines(s, flags2 & written, written)     # (a bit not written is unknown, not 0)
        sql_mode = st.get("Q_SQL_MODE_CODE")
        if isinstance(sql_mode, int) and sql_mode != s.sql_mode:
            yield from self._changed("sql_mode", sql_mode, f"SET @@session.sql_mode={sql_mode}{DELIMITER}")
        auto = st.get("Q_AUTO_INCREMENT")
        auto = (auto["increment"], auto["offset"]) if isinstance(auto, dict) else (1, 1)
        if auto != s.auto_increment:
            yield from self._changed("auto_increment", auto, f"SET @@session.auto_increment_increment={auto[0]}, "
                                     f"@@session.auto_increment_offset={auto[1]}{DELIMITER}")
        charset = st.get("Q_CHARSET_CODE")
        if isinstance(charset, dict):
            triple = (charset["character_set_client"], charset["collation_connection"], charset["collation_server"])
            if triple != s.charset:
                name = CHARSET_NAMES.get(triple[0])
                # MariaDB's tool names the client character set (its collation ids are not unique
                # from 11.2); MySQL's gives the collation id.
                client = name if self.mariadb and name else triple[0]
                yield from self._changed("charset", triple, *([f"/*!\\C {name} */{DELIMITER}"] if name else []),
                                         f"SET @@session.character_set_client={client},@@session.collation_"
                                         f"connection={triple[1]},@@session.collation_server={triple[2]}{DELIMITER}")
        tz = st.get("Q_TIME_ZONE_CODE")
        if isinstance(tz, str) and tz and tz != s.time_zone:
            yield from self._changed("time_zone", tz, f"SET @@session.time_zone='{tz}'{DELIMITER}")
        lc = st.get("Q_LC_TIME_NAMES_CODE", 0)
        if lc != s.lc_time_names:
            yield from self._changed("lc_time_names", lc, f"SET @@session.lc_time_names={lc}{DELIMITER}")
        cdb = st.get("Q_CHARSET_DATABASE_CODE", 0)
        if cdb != s.charset_database:
            yield from self._changed("charset_database", cdb,
                                     f"SET @@session.collation_database={cdb or 'DEFAULT'}{DELIMITER}")
        if not self.mariadb:
            for code, version, name in (("Q_DEFAULT_COLLATION_FOR_UTF8MB4", "80011", "default_collation_for_utf8mb4"),
                                        ("Q_SQL_REQUIRE_PRIMARY_KEY", "80013", "sql_require_primary_key"),
                                        ("Q_DEFAULT_TABLE_ENCRYPTION", "80016", "default_table_encryption")):
                value = st.get(code)
                if isinstance(value, int) and s.mysql_vars.get(code, s.unset) != value:
                    line = f"/*!{version} SET @@session.{name}={value}*/{DELIMITER}"
                    yield deferred(f"mysql_vars.{code}", value, [line]) if code not in s.mysql_vars and \
                        s.unset is UNKNOWN else line
                    s.mysql_vars[code] = value

    def _user_var(self, f: dict) -> str:
        name = "@" + quote_identifier(f["name"])
        if f.get("is_null"):
            return f"SET {name}:=NULL"
        kind = f.get("value_type")
        data: bytes = f.get("value") or b""
        if kind in ("REAL_RESULT", 1):
            return f"SET {name}:={struct.unpack('<d', data[:8])[0]!r}"
        if kind in ("INT_RESULT", 2):
            unsigned = bool((f.get("user_var_flags") or 0) & 1)
            return f"SET {name}:={int.from_bytes(data[:8], 'little', signed=not unsigned)}"
        if kind in ("DECIMAL_RESULT", 4) and len(data) >= 2:
            col = values.Column(type_code=spec.ColumnType.newdecimal, meta={"precision": data[0], "scale": data[1]})
            try:
                return f"SET {name}:={values.decode_newdecimal(data, 2, col)[0]}"
            except (ValueError, IndexError):
                pass
        charset = CHARSET_NAMES.get(f.get("charset") or 63, "binary")
        return f"SET {name}:=_{charset} X'{data.hex()}'"

    # -- BINLOG blocks -------------------------------------------------------
    def _flush(self) -> None:
        """The BINLOG block of the events kept (their ``#`` lines, then the base64 of each), to self._out."""
        if not self.block:
            return
        block, self.block = self.block, []
        out = self._out
        encoded = ["", "BINLOG '"]
        for item in block:
            comment, data = self._text(item, True)
            out.append(comment)
            if item.bare[OFS_TYPE] == _ROWS_QUERY:
                out.extend(self._statement_comment(item))
            encoded.append(data)
        encoded.append(f"'{DELIMITER}")
        out += encoded
        if self.decoder is not None:
            out.extend(self._verbose(block))

    def _verbose(self, block: list[Item]) -> Iterator[str]:
        flavor = "mariadb" if self.mariadb else "mysql"
        for item in block:
            ev = item.event
            try:
                for rc in self.decoder.feed(ev):
                    yield from verbose.render_row_change(rc, self.options.verbose, flavor)
            except BinlogError as exc:      # bad bytes; anything else is a bug and propagates
                self.row_errors.append(exc)
                yield f"# rows not decoded: {exc}"


def script(items: Iterable[Item], options: Base64Options = Base64Options(),
           rewriter: Rewriter | None = None) -> Iterator[str]:
    """The lines of the script for a stream of Items."""
    return Base64Script(options, rewriter).lines(items)


__all__ = ["Base64Options", "Base64Script", "script", "header", "footer", "DELIMITER"]
