"""Column names, signs and charsets from CREATE TABLE statements, kept current by replaying DDL.

MySQL 5.7, MariaDB and `binlog_row_metadata=MINIMAL` write neither column names
nor signedness, and before MySQL 8 / MariaDB 10.5 no charsets either. A
SchemaTracker fills them in: it loads a `mysqldump --no-data` style file
(`--schema FILE`: the tables at the start of the first binlog) and replays the
CREATE, ALTER, RENAME and DROP TABLE and CREATE, ALTER and DROP DATABASE
statements found in QUERY events (rows.observe_schema feeds it every event,
before any filter), so a column's name, sign and charset follow the schema as
it was when each event was written.

What a TABLE_MAP says comes first (its optional metadata), then the replayed
DDL, then --schema (which the DDL replays on top of). A text column's charset
is, in order: the metadata's; the column's CHARACTER SET / COLLATE; the
table's default; the database's default; `default_charset` (--default-charset);
else a guess, the server's collation of the QUERY events (Q_CHARSET_CODE).
A TABLE_MAP that contradicts the known columns keeps its @N names. What the
reader should be told (names unknown, charset guessed, a contradiction) is
in the TableDef's `extra["notes"]` as (kind, message) pairs.
Statements are parsed with sqlglot's MySQL dialect, not with regular expressions.

The same statements give each table's PRIMARY KEY and UNIQUE keys (see "Keys"
below): the SQL writer finds a row by them when the TABLE_MAP has no key.
"""
from __future__ import annotations

import dataclasses
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from binlog_spec import spec
from binlog_spec.errors import SchemaFileError
from binlog_spec.sqltext import quote_table
from binlog_spec.tablemap import CT, NUMERIC_TYPES, TableDef, real_type
from binlog_spec.values import BINARY_COLLATION, charset_collation, charset_name, codec_for

DIALECT = "mysql"
_UNSIGNED = {exp.DataType.Type.UTINYINT, exp.DataType.Type.USMALLINT, exp.DataType.Type.UMEDIUMINT,
             exp.DataType.Type.UINT, exp.DataType.Type.UBIGINT, exp.DataType.Type.UDECIMAL}
_TEMPORAL = {exp.DataType.Type.TIME, exp.DataType.Type.DATETIME, exp.DataType.Type.TIMESTAMP,
             exp.DataType.Type.DATETIME64, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ}
_DDL_START = {TokenType.CREATE, TokenType.ALTER, TokenType.DROP, TokenType.RENAME, TokenType.USE}


#: The pre-5.6 temporal types, which carry no metadata in a TABLE_MAP.
_OLD_TEMPORALS = {CT.time, CT.datetime, CT.timestamp}


class SchemaWarning(UserWarning):
    """A DDL statement could not be replayed; the table's columns are forgotten. (Kept for callers
    that filter it; the tracker now says so in SchemaTracker.notes, see rows.observe_schema.)"""


@dataclass(frozen=True)
class ColumnSchema:
    name: str
    unsigned: bool
    data_type: str
    #: ENUM or SET members, in definition order.
    members: tuple[bytes, ...] | None = None
    #: Fractional seconds precision of a TIME, DATETIME or TIMESTAMP column (0 when none is given).
    fsp: int = 0
    #: The column's type (sqlglot's DataType name: 'VARCHAR', 'UINT', ...).
    kind: str = ""
    #: Collation id standing for the column's charset (values.charset_collation): its CHARACTER SET /
    #: COLLATE, else the table's or the database's default; 63 for BINARY/VARBINARY/BLOB; None for a
    #: text column whose charset no DDL says, and for columns that have none.
    collation: int | None = None
    #: A CHAR, VARCHAR, TEXT, ENUM or SET column (decoded as text in its charset).
    text: bool = False
    #: A generated column (`AS (expr)`, `GENERATED ALWAYS AS (expr)`, VIRTUAL, STORED or PERSISTENT):
    #: the server computes it, so SQL writes no value for it.
    generated: bool = False


Key = tuple[str, str]


#: Column types MySQL/MariaDB accept that sqlglot's MySQL dialect does not, and what to read them as.
_TYPE_STAND_INS = {name: TokenType.GEOMETRY for name in (
    "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")}
_TYPE_STAND_INS.update({"INET6": TokenType.VARBINARY, "INET4": TokenType.VARBINARY})


def _normalise_tokens(tokens: list) -> list:
    """Bridge the dialect gaps that do not change a row image.

    FLOAT/DOUBLE UNSIGNED (deprecated in MySQL) loses its UNSIGNED: a float's
    sign is in its bits. Spatial subtypes and MariaDB's INET4/INET6 stand in as
    GEOMETRY and VARBINARY, and MariaDB's COMPRESSED[=method] column attribute
    is dropped (the binlog's own column type says so): only the column's name
    and place matter here. So are MySQL 8's `SRID n`, and MariaDB's PERSISTENT
    (generated column) reads as STORED.
    """
    out: list = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        word = tok.text.upper()
        i += 1
        if word == "UNSIGNED" and out and out[-1].token_type in (TokenType.FLOAT, TokenType.DOUBLE):
            continue
        if word == "SRID" and tok.token_type == TokenType.VAR and i < len(tokens) \
                and tokens[i].token_type == TokenType.NUMBER:
            i += 1          # MySQL 8's `g POINT SRID 4326`: no effect on the row image
            continue
        if word == "PERSISTENT" and tok.token_type == TokenType.VAR and out \
                and out[-1].token_type == TokenType.R_PAREN:     # `AS (expr) PERSISTENT`: MariaDB's STORED
            tok = Token(TokenType.VAR, "STORED", tok.line, tok.col, tok.start, tok.end, tok.comments)
        if word == "COMPRESSED" and tok.token_type == TokenType.VAR:
            if i + 1 < len(tokens) and tokens[i].token_type == TokenType.EQ:
                i += 2  # COMPRESSED=method
            continue
        stand_in = _TYPE_STAND_INS.get(word)
        if stand_in is not None and tok.token_type == TokenType.VAR and out and out[-1].token_type in (
                TokenType.VAR, TokenType.IDENTIFIER):
            tok = Token(stand_in, tok.text, tok.line, tok.col, tok.start, tok.end, tok.comments)
        out.append(tok)
    return out


_SQLGLOT_LOG = logging.getLogger("sqlglot")


def _tokenize(sql: str) -> list[Token]:
    """The MySQL dialect's tokens (`quoted` names are identifiers)."""
    return sqlglot.Dialect.get_or_raise(DIALECT).tokenize(sql)


def _parse(sql: str) -> list[exp.Expression]:
    dialect = sqlglot.Dialect.get_or_raise(DIALECT)
    tokens = _normalise_tokens(dialect.tokenize(sql))
    # sqlglot logs "falling back to a Command" for statements outside its grammar (ALTER USER,
    # GRANT, ...): those are not DDL we replay, so the message is noise on our stderr.
    level = _SQLGLOT_LOG.level
    _SQLGLOT_LOG.setLevel(logging.ERROR)
    try:
        return [e for e in dialect.parser().parse(tokens, sql) if e is not None]
    finally:
        _SQLGLOT_LOG.setLevel(level)


#: Table options (CREATE / ALTER TABLE) that never change a row image, as an ALTER action may start
#: with them: `ENGINE=InnoDB`, `ROW_FORMAT=COMPRESSED`, `ALGORITHM=INPLACE`, `LOCK=NONE`, ... The
#: charset options stay (they give text columns their charset).
_TABLE_OPTIONS = {
    "ENGINE", "TYPE", "ROW_FORMAT", "AUTO_INCREMENT", "COMMENT", "KEY_BLOCK_SIZE", "STATS_AUTO_RECALC",
    "STATS_PERSISTENT", "STATS_SAMPLE_PAGES", "ALGORITHM", "LOCK", "COMPRESSION", "ENCRYPTION", "ENCRYPTED",
    "ENCRYPTION_KEY_ID", "PACK_KEYS", "CHECKSUM", "TABLE_CHECKSUM", "DELAY_KEY_WRITE", "AVG_ROW_LENGTH",
    "MAX_ROWS", "MIN_ROWS", "INSERT_METHOD", "PAGE_CHECKSUM", "PAGE_COMPRESSED", "PAGE_COMPRESSION_LEVEL",
    "TRANSACTIONAL", "SECONDARY_ENGINE", "SECONDARY_ENGINE_ATTRIBUTE", "ENGINE_ATTRIBUTE", "AUTOEXTEND_SIZE",
    "TABLESPACE", "STORAGE", "CONNECTION", "PASSWORD", "IETF_QUOTES", "SEQUENCE", "UNION"}
#: Two-word table options: DATA DIRECTORY = '...', INDEX DIRECTORY = '...'.
_TABLE_OPTIONS_2 = {("DATA", "DIRECTORY"), ("INDEX", "DIRECTORY")}
#: ALTER actions that change no column (partition maintenance, tablespaces, rebuilds, ORDER BY, keys
#: switched on or off): skipped up to the next action.
_NO_COLUMN_ACTIONS = {"DISCARD", "IMPORT", "FORCE", "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR",
                      "COALESCE", "REORGANIZE", "EXCHANGE", "TRUNCATE", "ORDER", "ENABLE", "DISABLE", "UPGRADE"}


def _top_level(tokens: list[Token]) -> list[int]:
    """The parenthesis depth before each token."""
    depth, out = 0, []
    for t in tokens:
        if t.token_type == TokenType.R_PAREN:
            depth -= 1
        out.append(depth)
        if t.token_type == TokenType.L_PAREN:
            depth += 1
    return out


def _text(sql: str, tokens: list[Token]) -> str:
    """The statement text the tokens span."""
    return sql[tokens[0].start:tokens[-1].end + 1] if tokens else ""


def _partition_by(tokens: list[Token], i: int) -> bool:
    """Whether `PARTITION BY` starts at token i."""
    return tokens[i].token_type == TokenType.PARTITION_BY or (
        tokens[i].token_type == TokenType.PARTITION and i + 1 < len(tokens) and tokens[i + 1].text.upper() == "BY")


def _without_partitioning(sql: str, tokens: list[Token]) -> str:
    """A CREATE TABLE without its partition clause (`PARTITION BY ...`, with its sub-partitions and
    partition definitions, plain or from a `/*!50100 ... */`): it starts at the top level, after the
    definitions' closing parenthesis and the table options, and runs to the end or to the `[IGNORE |
    REPLACE] [AS] SELECT` of a CREATE ... SELECT. The columns are the same on every partition."""
    depth = _top_level(tokens)
    opened = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.L_PAREN and depth[i] == 0), None)
    if opened is None:
        return sql
    at = next((i for i in range(opened + 1, len(tokens)) if depth[i] == 0 and _partition_by(tokens, i)), None)
    if at is None:
        return sql
    end = next((i for i in range(at, len(tokens)) if depth[i] == 0 and tokens[i].text.upper() in (
        "SELECT", "AS", "IGNORE", "REPLACE", "WITH")), len(tokens))
    return sql[:tokens[at].start] + " " + (sql[tokens[end].start:] if end < len(tokens) else "")


def _skip_option(tokens: list[Token], i: int, end: int) -> int:
    """Past one table option `NAME [=] value` (or `NAME [=] (...)`) at i; i when none starts there."""
    words = [t.text.upper() for t in tokens[i:min(i + 2, end)]]
    if words in (["WITH", "VALIDATION"], ["WITHOUT", "VALIDATION"]):
        return i + 2
    if words and words[0] in _TABLE_OPTIONS:
        j = i + 1
    elif tuple(words) in _TABLE_OPTIONS_2:
        j = i + 2
    else:
        return i
    if j < end and tokens[j].token_type == TokenType.EQ:
        j += 1
    if j < end and tokens[j].text.upper() == "DEFAULT" and words[0] in ("ALGORITHM", "LOCK"):
        return j + 1
    if j < end and tokens[j].token_type == TokenType.L_PAREN:
        depth = 0
        while j < end:
            depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(tokens[j].token_type, 0)
            j += 1
            if depth == 0:
                break
        return j
    return min(j + 1, end)


def _alter_actions(sql: str, tokens: list[Token]) -> str | None:
    """An ALTER TABLE with only the actions that may change columns or keys, in a form sqlglot reads;
    None when none is left (the columns stay as they are).

    Dropped: MariaDB's ONLINE and MySQL 5.x's IGNORE after ALTER; table options other than the charset
    (ENGINE, ROW_FORMAT, ALGORITHM=, LOCK=, ...); partition maintenance (ADD/DROP/TRUNCATE/... PARTITION),
    and the partition options that end the statement (PARTITION BY ..., REMOVE PARTITIONING);
    DISCARD/IMPORT TABLESPACE, FORCE, ORDER BY. `ADD [COLUMN] (a INT, b INT)` becomes one ADD per column.
    """
    upper = [t.text.upper() for t in tokens]
    if "TABLE" not in upper[:3]:
        return sql
    at = upper.index("TABLE") + 1
    if at < len(tokens) and upper[at] == "IF":
        at += 2
    name_end = at + 1
    while name_end + 1 < len(tokens) and tokens[name_end].token_type == TokenType.DOT:
        name_end += 2
    head = "ALTER TABLE " + _text(sql, tokens[at:name_end])
    depth = _top_level(tokens)
    end = len(tokens)
    for i in range(name_end, len(tokens)):      # partition options: the statement's last clause
        if depth[i] == 0 and (_partition_by(tokens, i) or upper[i:i + 2] == ["REMOVE", "PARTITIONING"]):
            end = i
            break
    actions: list[str] = []
    i = name_end
    partition_names = False     # after `DROP PARTITION p0`: `, p1` is one more name, not an action
    while i < end:
        j = i
        while True:                             # table options, with or without commas between
            k = _skip_option(tokens, j, end)
            if k == j:
                break
            j = k
            if j < end and tokens[j].token_type == TokenType.COMMA:
                j += 1
        stop = next((k for k in range(j, end) if depth[k] == 0 and tokens[k].token_type == TokenType.COMMA), end)
        part, words = tokens[j:stop], upper[j:stop]
        if partition_names and (len(part) == 1 or words[1:] == ["TABLESPACE"]):
            pass
        elif not part or words[0] in _NO_COLUMN_ACTIONS or (words[0] in ("ADD", "DROP") and words[1:2] == ["PARTITION"]):
            partition_names = "PARTITION" in words[1:2] + words[2:3]
        elif words[0] == "ADD" and (words[1:2] == ["("] or words[1:3] == ["COLUMN", "("]):
            partition_names = False
            inner = part[words.index("(") + 1:-1] if part[-1].token_type == TokenType.R_PAREN else []
            inner_depth = _top_level(inner)
            start = 0
            for k, t in enumerate(inner + [None]):
                if t is None or (inner_depth[k] == 0 and t.token_type == TokenType.COMMA):
                    if inner[start:k]:
                        actions.append("ADD COLUMN " + _text(sql, inner[start:k]))
                    start = k + 1
            if not inner:
                actions.append(_text(sql, part))
        else:
            actions.append(_text(sql, part))
            partition_names = False
        i = stop + 1
    return head + " " + ", ".join(actions) if actions else None


_T = exp.DataType.Type
_TEXT_KINDS = {_T.CHAR, _T.VARCHAR, _T.NCHAR, _T.NVARCHAR, _T.TEXT, _T.TINYTEXT, _T.MEDIUMTEXT, _T.LONGTEXT,
               _T.ENUM, _T.SET}
_BINARY_KINDS = {_T.BINARY, _T.VARBINARY, _T.BLOB, _T.TINYBLOB, _T.MEDIUMBLOB, _T.LONGBLOB}
#: MariaDB's JSON is LONGTEXT CHARACTER SET utf8mb4 (MySQL's has a type of its own).
_JSON_COLLATION = charset_collation("utf8mb4")


def _column(cd: exp.ColumnDef, default_collation: int | None = None) -> ColumnSchema:
    """A column definition; `default_collation`: the table's default charset (or the database's)."""
    kind = cd.args.get("kind")
    dtype = kind.this if kind is not None else None
    members, fsp = None, 0
    if dtype in (exp.DataType.Type.ENUM, exp.DataType.Type.SET):
        members = tuple(e.name.encode("utf-8") for e in kind.expressions)
    elif dtype in _TEMPORAL and kind.expressions:
        precision = kind.expressions[0].this
        fsp = int(precision.name) if isinstance(precision, exp.Literal) and precision.name.isdigit() else 0
    collation, text = None, dtype in _TEXT_KINDS
    if text:
        charset = collate = None
        for c in cd.args.get("constraints") or []:
            if isinstance(c.kind, exp.CharacterSetColumnConstraint):
                charset = charset_collation(c.kind.this.name)
            elif isinstance(c.kind, exp.CollateColumnConstraint):
                collate = charset_collation(c.kind.this.name)
        collation = charset or collate or default_collation
        text = collation != BINARY_COLLATION          # CHAR(n) CHARACTER SET binary is BINARY(n)
    elif dtype in _BINARY_KINDS:
        collation = BINARY_COLLATION
    elif dtype == _T.JSON:
        collation = _JSON_COLLATION
    # `AS (expr)` and `GENERATED ALWAYS AS (expr)`, VIRTUAL or STORED (PERSISTENT: _normalise_tokens)
    generated = any(isinstance(c.kind, exp.ComputedColumnConstraint) for c in cd.args.get("constraints") or [])
    return ColumnSchema(name=cd.name, unsigned=dtype in _UNSIGNED,
                        data_type=kind.sql(DIALECT) if kind is not None else "", members=members, fsp=fsp,
                        kind=dtype.name if dtype is not None else "", collation=collation, text=text,
                        generated=generated)


#: Which binlog column types each DDL type may be logged as (a TABLE_MAP of other types
#: contradicts the DDL). Types not listed are not checked.
_INTS = {_T.TINYINT: {CT.tiny}, _T.UTINYINT: {CT.tiny}, _T.BOOLEAN: {CT.tiny}, _T.SMALLINT: {CT.short},
         _T.USMALLINT: {CT.short}, _T.MEDIUMINT: {CT.int24}, _T.UMEDIUMINT: {CT.int24}, _T.INT: {CT.long},
         _T.UINT: {CT.long}, _T.BIGINT: {CT.longlong}, _T.UBIGINT: {CT.longlong}}
_STRINGS = {CT.string, CT.varchar, CT.var_string, CT.varchar_compressed}
_BLOBS = {CT.blob, CT.tiny_blob, CT.medium_blob, CT.long_blob, CT.blob_compressed}
# Families, not exact types: sqlglot reads some MySQL spellings as another size (INT8, REAL, FLOAT(30)).
_ANY_INT = {CT.tiny, CT.short, CT.int24, CT.long, CT.longlong}
_LOGGED_AS: dict[str, set[int]] = {k.name: _ANY_INT for k in _INTS}
_LOGGED_AS.update({k.name: v for k, v in {
    _T.DECIMAL: {CT.newdecimal, CT.decimal}, _T.UDECIMAL: {CT.newdecimal, CT.decimal},
    _T.FLOAT: {CT.float, CT.double}, _T.DOUBLE: {CT.float, CT.double}, _T.DATE: {CT.date, CT.newdate},
    _T.TIME: {CT.time, CT.time2}, _T.DATETIME: {CT.datetime, CT.datetime2},
    _T.TIMESTAMP: {CT.timestamp, CT.timestamp2}, _T.YEAR: {CT.year}, _T.BIT: {CT.bit},
    _T.ENUM: {CT.enum}, _T.SET: {CT.set}, _T.JSON: {CT.json} | _BLOBS,
    _T.CHAR: _STRINGS, _T.VARCHAR: _STRINGS, _T.BINARY: _STRINGS, _T.VARBINARY: _STRINGS,
    _T.TEXT: _BLOBS, _T.TINYTEXT: _BLOBS, _T.MEDIUMTEXT: _BLOBS, _T.LONGTEXT: _BLOBS,
    _T.BLOB: _BLOBS, _T.TINYBLOB: _BLOBS, _T.MEDIUMBLOB: _BLOBS, _T.LONGBLOB: _BLOBS}.items()})
#: Binlog types of text values: what a charset decodes.
_CHARACTER_TYPES = _STRINGS | _BLOBS | {CT.enum, CT.set}


def _contradiction(table: TableDef, cols: list[ColumnSchema]) -> str | None:
    """How the TABLE_MAP contradicts the known columns, or None."""
    if len(cols) != len(table.columns):
        return f"the TABLE_MAP has {len(table.columns)} columns, the schema known here {len(cols)}"
    for i, (col, known) in enumerate(zip(table.columns, cols)):
        allowed = _LOGGED_AS.get(known.kind)
        real = real_type(col.type_code, col.meta)
        if allowed is not None and real not in allowed:
            return (f"column {i + 1} ({known.name}) is {known.data_type} in the schema known here, "
                    f"{spec.COLUMN_TYPE_NAMES.get(real, f'type {real}')} in the TABLE_MAP")
    return None


class SchemaTracker:
    """Table definitions by (schema, table), as the DDL seen so far left them."""

    def __init__(self, default_db: str = "", default_charset: int | None = None):
        self.tables: dict[Key, list[ColumnSchema]] = {}
        #: (schema, table) -> {index name (lower case; "primary" for the PRIMARY KEY): its column names}
        self.keys: dict[Key, dict[str, tuple[str, ...]]] = {}
        self.default_db = default_db
        #: A table's default charset (collation id), from its CREATE / ALTER TABLE.
        self.table_charsets: dict[Key, int] = {}
        #: A database's default charset (collation id), from CREATE / ALTER DATABASE.
        self.database_charsets: dict[str, int] = {}
        #: --default-charset: the charset of text columns no DDL gives one (collation id).
        self.default_charset = default_charset
        #: The server's collation in the last QUERY event (Q_CHARSET_CODE): the guess of last resort.
        self.server_collation: int | None = None
        #: CREATE TABLE statements read (load_sql and replay).
        self.creates = 0
        #: Counts the DDL statements seen: what complete() answers changes only with it (and with
        #: server_collation).
        self.generation = 0
        #: What the reader should be told of the statements replayed (a table forgotten, and why), in
        #: order; whoever feeds the tracker takes them (rows.observe_schema hands them to its `warn`).
        self.notes: list[str] = []
        #: (schema, table) -> why its columns were forgotten (the unknown-names note says it).
        self.forgotten: dict[Key, str] = {}
        #: The CREATE TABLE statements that could not be read (from_file names the first).
        self.unreadable: list[str] = []

    @classmethod
    def from_file(cls, path: str | Path, default_db: str = "", default_charset: int | None = None
                  ) -> "SchemaTracker":
        """The tables of a schema file (mysqldump --no-data); SchemaFileError when it has none."""
        tracker = cls(default_db, default_charset)
        tracker.load_sql(Path(path).read_text(encoding="utf-8", errors="replace"))
        if not tracker.creates and tracker.unreadable:
            raise SchemaFileError(f"could not read {_snippet(tracker.unreadable[0])!r} (no CREATE TABLE of the file "
                                  "could be read)", str(path))
        if not tracker.creates:
            raise SchemaFileError("holds no CREATE TABLE statement (give the output of mysqldump --no-data "
                                  "or mariadb-dump --no-data)", str(path))
        return tracker

    # ------------------------------------------------------------- loading
    def load_sql(self, sql: str, db: str | None = None) -> None:
        """Apply every DDL statement of a script (e.g. mysqldump --no-data, with its DELIMITER lines)."""
        if db is not None:
            self.default_db = db
        for statement in script_statements(sql):
            self._statement(statement)

    def observe_query(self, db: str, query: str, server_collation: int | None = None) -> None:
        """Replay a QUERY_EVENT statement if it is DDL; cheap for everything else. `server_collation`:
        the event's collation_server (Q_CHARSET_CODE), the default of a CREATE DATABASE."""
        if server_collation is not None:
            self.server_collation = server_collation
        first = _first_token(query)
        if first not in _DDL_START:
            return
        self.default_db = db or self.default_db
        self._statement(query, first)

    def _statement(self, query: str, first=None) -> None:
        first = first if first is not None else _first_token(query)
        if first not in _DDL_START:
            return
        self.generation += 1
        if "/*!" in query or "/*M!" in query:
            query = unwrap_executable_comments(query)
        if first == TokenType.RENAME:
            self._rename_tables(query)
            return
        try:
            tokens = _tokenize(query)
        except TokenError:
            tokens = []
        words = [t.text.upper() for t in tokens[:4]]
        if len(words) > 1 and words[1] in ("DATABASE", "SCHEMA"):
            self._database(words[0], tokens[2:])
            return
        source = query
        if tokens and "TABLE" in words[:4]:
            if first == TokenType.ALTER:
                prepared = _alter_actions(query, tokens)
                if prepared is None:
                    return          # no action changes a column
                if prepared != query:
                    query, tokens = prepared, _tokenize(prepared)
            elif first == TokenType.CREATE:
                query = _without_partitioning(query, tokens)
        if first == TokenType.ALTER and "CONVERT" in (t.text.upper() for t in tokens):
            self._convert(query, tokens, source)
            return
        try:
            statements = _parse(query)
        except (ParseError, TokenError) as exc:
            self._unreadable(source, exc)
            return
        for st in statements:
            self._apply(st, source=source)

    # ------------------------------------------------------------ replaying
    def _key(self, table: exp.Table) -> Key:
        return (table.db or self.default_db, table.name)

    def _table_default(self, key: Key) -> int | None:
        return self.table_charsets.get(key, self.database_charsets.get(key[0]))

    def _drop(self, key: Key) -> list[ColumnSchema] | None:
        self.table_charsets.pop(key, None)
        self.keys.pop(key, None)
        return self.tables.pop(key, None)

    def _move(self, src: Key, dst: Key) -> None:
        for facts in (self.table_charsets, self.keys):
            value = facts.pop(src, None)
            if value is not None:
                facts[dst] = value
        self.tables[dst] = self.tables.pop(src)

    def _apply(self, st: exp.Expression, source: str = "") -> None:
        if isinstance(st, exp.Use):
            self.default_db = st.this.name if st.this is not None else self.default_db
        elif isinstance(st, (exp.Create, exp.Drop)) and st.kind == "TABLE" and _temporary(st):
            return          # a temporary table never reaches a row event, nor changes the real one
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and isinstance(st.this, exp.Schema) \
                and st.args.get("expression") is None:
            self.creates += 1
            key = self._key(st.this.this)
            if st.args.get("exists") and key in self.tables:
                return      # CREATE TABLE IF NOT EXISTS of a known table changes nothing
            self.forgotten.pop(key, None)
            # the table's default: its own, else its database's at this moment (kept for ADD COLUMN)
            own = _charset_option((st.args.get("properties") or exp.Properties()).expressions)
            default = own if own is not None else self.database_charsets.get(key[0])
            if default is not None:
                self.table_charsets[key] = default
            else:
                self.table_charsets.pop(key, None)
            self.tables[key] = [_column(cd, default) for cd in st.this.expressions if isinstance(cd, exp.ColumnDef)]
            self.keys[key] = _create_keys(st.this.expressions)
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and _like_source(st) is not None:
            self._like(self._key(st.this), self._key(_like_source(st)), bool(st.args.get("exists")), source)
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and st.args.get("expression") is not None:
            # CREATE TABLE ... [AS] SELECT: the SELECT's columns cannot be known offline
            table = st.this.this if isinstance(st.this, exp.Schema) else st.this
            key = self._key(table)
            if not (st.args.get("exists") and key in self.tables):
                self._forget(key, source, "the columns of CREATE TABLE ... SELECT cannot be known offline",
                             always=True)
        elif isinstance(st, exp.Drop) and st.kind == "TABLE":
            for t in st.expressions if st.expressions else []:
                self._drop(self._key(t))
            for t in st.args.get("tables") or []:
                self._drop(self._key(t))
        elif isinstance(st, (exp.Create, exp.Drop)) and st.kind == "INDEX":
            self._index_statement(st)
        elif isinstance(st, exp.Alter) and st.args.get("kind") == "TABLE":
            self._alter(st, source)
        elif isinstance(st, exp.Command) and st.this.upper() == "ALTER":
            self._forget_altered(source or st.sql(DIALECT), "unsupported ALTER syntax")

    def _like(self, key: Key, src: Key, exists: bool, source: str) -> None:
        """CREATE TABLE key LIKE src: src's known shape, keys and default charset."""
        if exists and key in self.tables:
            return
        self.creates += 1
        if src not in self.tables:
            self._forget(key, source, f"the shape of {quote_table(*src)} is not known", always=True)
            return
        self.forgotten.pop(key, None)
        self.tables[key] = list(self.tables[src])
        self.keys[key] = dict(self.keys.get(src, {}))
        if src in self.table_charsets:
            self.table_charsets[key] = self.table_charsets[src]
        else:
            self.table_charsets.pop(key, None)

    def _database(self, verb: str, tokens: list[Token]) -> None:
        """CREATE / ALTER / DROP DATABASE (or SCHEMA): the database's default charset."""
        words = [t.text for t in tokens]
        upper = [w.upper() for w in words]
        i = 0
        if upper[:3] == ["IF", "NOT", "EXISTS"] or upper[:2] == ["IF", "EXISTS"]:
            i = 3 if upper[1] == "NOT" else 2
        name = words[i] if i < len(words) and tokens[i].token_type in (TokenType.VAR, TokenType.IDENTIFIER) \
            else self.default_db
        if verb == "DROP":
            self.database_charsets.pop(name, None)
            for key in [k for k in self.tables if k[0] == name]:
                self._drop(key)
            return
        collation = _charset_option_tokens(tokens[i + 1:])
        if collation is None and verb == "CREATE":
            collation = self.server_collation   # a database without CHARACTER SET takes the server's
        if collation is not None:
            self.database_charsets[name] = collation

    def _convert(self, query: str, tokens: list[Token], source: str = "") -> None:
        """ALTER TABLE t CONVERT TO CHARACTER SET x [COLLATE y]: every text column and the default."""
        upper = [t.text.upper() for t in tokens]
        try:
            at = upper.index("TABLE") + 1
            conv = upper.index("CONVERT")
        except ValueError:
            self._forget_altered(source or query, "unsupported ALTER syntax")
            return
        parts = [t.text for t in tokens[at:conv] if t.token_type != TokenType.DOT]
        key = (parts[0], parts[1]) if len(parts) == 2 else (self.default_db, parts[0] if parts else "")
        collation = _charset_option_tokens(tokens[conv + 2:])
        others = [w for w in upper[conv + 2:] if w == ","]
        if collation is None or others:
            self._forget_altered(source or query, "CONVERT TO CHARACTER SET with other actions is not replayed")
            return
        self.table_charsets[key] = collation
        cols = self.tables.get(key)
        if cols is not None:
            cols[:] = [dataclasses.replace(c, collation=collation) if c.text else c for c in cols]

    def _alter(self, st: exp.Alter, source: str = "") -> None:
        key = self._key(st.this)
        cols = self.tables.get(key)
        own = _charset_option(st.args.get("options") or [])
        if own is not None:
            self.table_charsets[key] = own
        for action in st.args.get("actions") or []:
            if isinstance(action, exp.AlterRename):
                if cols is not None:
                    new_key = self._key(action.this)
                    self._move(key, new_key)
                    key = new_key
                continue
            if cols is None:
                continue
            default = self._table_default(key)
            if key in self.keys:
                _alter_keys(self.keys[key], action)
            if isinstance(action, exp.ColumnDef):
                new = _column(action, default)
                if not _place(cols, new, action.args.get("position")):
                    cols.append(new)
            elif isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
                names = {t.name.lower() for t in action.args.get("tables") or []}
                cols[:] = [c for c in cols if c.name.lower() not in names]
            elif isinstance(action, exp.ModifyColumn):
                new = _column(action.this, default)
                old = action.args.get("rename_from")
                old_name = (old.name if old is not None else new.name).lower()
                at = next((i for i, c in enumerate(cols) if c.name.lower() == old_name), None)
                if at is None:
                    self._forget(key, source, f"it has no column {old_name}")
                    return
                position = action.this.args.get("position")
                if position is None:
                    cols[at] = new
                else:                   # MODIFY / CHANGE ... FIRST | AFTER x: the column moves
                    del cols[at]
                    if not _place(cols, new, position):
                        self._forget(key, source, f"it has no column {position.this.name}")
                        return
            elif isinstance(action, exp.RenameColumn):
                old, new_name = action.this.name.lower(), action.args["to"].name
                for i, c in enumerate(cols):
                    if c.name.lower() == old:
                        cols[i] = dataclasses.replace(c, name=new_name)
            # indexes, constraints, options: no effect on the row image

    def _rename_tables(self, query: str) -> None:
        """RENAME TABLE a TO b[, c TO d]; sqlglot keeps it as a command, so walk its tokens."""
        body = query.lstrip()[len("RENAME"):]
        tokens = [t for t in _tokenize(body)]
        if not tokens or tokens[0].token_type != TokenType.TABLE:
            return
        names, current = [], []
        for tok in tokens[1:] + [None]:
            if tok is None or tok.token_type in (TokenType.COMMA, TokenType.ALIAS) or tok.text.upper() == "TO":
                if current:
                    names.append(current)
                current = []
            elif tok.token_type != TokenType.DOT:
                current.append(tok.text)
        for src, dst in zip(names[0::2], names[1::2]):
            s = (src[0], src[1]) if len(src) == 2 else (self.default_db, src[0])
            d = (dst[0], dst[1]) if len(dst) == 2 else (self.default_db, dst[0])
            if s in self.tables:
                self._move(s, d)

    def _unreadable(self, query: str, exc: Exception) -> None:
        """A CREATE or ALTER TABLE sqlglot cannot read."""
        if _first_token(query) == TokenType.CREATE and "TABLE" in (t.text.upper() for t in leading_tokens(query)[:4]):
            self.unreadable.append(query)
        self._forget_altered(query, _why(exc))

    def _forget(self, key: Key, query: str, why: str, always: bool = False) -> None:
        """Forget a table's columns rather than keep a wrong shape, and say so (once per statement)
        when it was known (`always`: also when it was not)."""
        known = self._drop(key) is not None
        self.forgotten[key] = f"{_snippet(query)!r}: {why}" if query else why
        if known or always:
            self.notes.append(f"cannot replay {_snippet(query)!r} ({why}); forgetting {quote_table(*key)}")

    def _forget_altered(self, query: str, why: object) -> None:
        """An ALTER (or CREATE) TABLE we cannot replay: forget the table rather than keep wrong names."""
        try:
            tokens = _tokenize(query)
        except TokenError:
            return
        upper = [t.text.upper() for t in tokens]
        if not upper or upper[0] not in ("ALTER", "CREATE") or "TABLE" not in upper[:4] or "TEMPORARY" in upper[:3]:
            return
        at = upper.index("TABLE") + 1
        if upper[at:at + 3] == ["IF", "NOT", "EXISTS"]:
            return      # a table already known stays as it is; an unknown one stays unknown
        if upper[at:at + 2] == ["IF", "EXISTS"]:
            at += 2
        parts = [tokens[at].text] if at < len(tokens) else []
        if at + 2 < len(tokens) and tokens[at + 1].token_type == TokenType.DOT:
            parts = [tokens[at].text, tokens[at + 2].text]
        if not parts:
            return
        key = (parts[0], parts[1]) if len(parts) == 2 else (self.default_db, parts[0])
        self._forget(key, query, str(why), always=upper[0] == "CREATE")

    # ------------------------------------------------------------ answering
    def columns(self, schema: str, table: str) -> list[ColumnSchema] | None:
        return self.tables.get((schema, table))

    def complete(self, table: TableDef, ev: Any = None) -> TableDef:
        """Fill in the names, signs, charsets and ENUM/SET members a TABLE_MAP lacks, when the known
        columns match it (`ev`: the TABLE_MAP_EVENT, named in the notes). What the TABLE_MAP's own
        metadata says is kept."""
        cols = self.columns(table.schema, table.table)
        where = quote_table(table.schema, table.table)
        if cols is None:
            if table.has_names:
                return table
            why = self.forgotten.get((table.schema, table.table))
            why = f" (its columns were forgotten: {why})" if why else ""
            return _noted(table, ("names", f"column names of {where} are unknown{why} (shown as @1, @2, ...): "
                                           "give its CREATE TABLE with --schema FILE (mysqldump --no-data), "
                                           "or log with binlog_row_metadata=FULL"))
        wrong = _contradiction(table, cols)
        if wrong is not None:
            if table.has_names:
                return table     # the TABLE_MAP's own names and charsets come first
            at = f" at {ev.file} offset {ev.pos}" if ev is not None else ""
            return _noted(table, ("mismatch", f"{where}{at}: {wrong}: its columns are shown as @1, @2, ... "
                                              "(is the --schema file of this server and time?)"))
        guessed = []
        new_columns = []
        for col, known in zip(table.columns, cols):
            changes: dict[str, Any] = {}
            if not table.has_names:
                changes["name"] = known.name
            real = real_type(col.type_code, col.meta)
            if not table.has_signedness and real in NUMERIC_TYPES:
                changes["unsigned"] = known.unsigned
            charset = col.charset
            if charset is None and real in _CHARACTER_TYPES:
                charset = known.collation
                if charset is None and known.text:
                    charset = self.default_charset
                    if charset is None and self.server_collation is not None:
                        charset = self.server_collation
                        guessed.append(known.name)
                if charset is not None:
                    changes["charset"] = charset
            if known.members is not None and real in (CT.enum, CT.set):
                members = _members(known.members, charset)
                if real == CT.enum and col.enum_values is None:
                    changes["enum_values"] = members
                if real == CT.set and col.set_values is None:
                    changes["set_values"] = members
            if known.fsp and col.type_code in _OLD_TEMPORALS and not col.meta:
                # A MariaDB 5.3 high-resolution TIME(n)/DATETIME(n)/TIMESTAMP(n): the binlog says
                # neither that nor n (see values.old_temporal_size).
                changes["meta"] = {"fsp": known.fsp}
            new_columns.append(dataclasses.replace(col, **changes) if changes else col)
        generated = tuple(known.generated for known in cols)
        done = self._with_keys(dataclasses.replace(table, columns=tuple(new_columns), has_names=True,
                                                   has_signedness=True,
                                                   generated=generated if any(generated) else table.generated))
        if guessed:
            done = _noted(done, ("charset", f"{where}: the charset of {', '.join(guessed)} is in no DDL: guessed "
                                            f"{charset_name(self.server_collation)}, the server's (Q_CHARSET_CODE); "
                                            "set it with --default-charset NAME or --schema FILE"))
        return done

    # ------------------------------------------------------------------ keys
    def _index_statement(self, st: exp.Create | exp.Drop) -> None:
        """CREATE [UNIQUE] INDEX name ON t (...), DROP INDEX name ON t."""
        if isinstance(st, exp.Create):
            index = st.this
            table = index.args.get("table") if isinstance(index, exp.Index) else None
            keys = self.keys.get(self._key(table)) if table is not None else None
            params = index.args.get("params") if table is not None else None
            if keys is not None and st.args.get("unique") and params is not None:
                _add_key(keys, index.name, _key_columns(params.args.get("columns") or []))
            return
        on = st.args.get("cluster")
        keys = self.keys.get(self._key(on.this)) if isinstance(on, exp.OnProperty) else None
        if keys is not None:
            for t in st.args.get("tables") or []:
                keys.pop(t.name.lower(), None)

    def _with_keys(self, table: TableDef) -> TableDef:
        """The keys the DDL gives, on a TableDef whose columns are known: the TABLE_MAP's primary
        key (its metadata) first, else the DDL's; the UNIQUE keys from the DDL. A key naming a
        column the table does not have is left out."""
        keys = self.keys.get((table.schema, table.table))
        if not keys:
            return table
        index = {name.lower(): i for i, name in enumerate(table.names)}

        def resolve(names: tuple[str, ...]) -> tuple[int, ...]:
            found = tuple(index.get(n.lower(), -1) for n in names)
            return () if -1 in found else found

        primary = table.primary_key or resolve(keys.get("primary", ()))
        unique = tuple(k for k in (resolve(cols) for name, cols in keys.items() if name != "primary") if k)
        return dataclasses.replace(table, primary_key=primary, unique_keys=unique)



def _snippet(query: str) -> str:
    """A statement as a message names it: white space collapsed, its first 80 characters."""
    return " ".join(query.split())[:80]


def _why(exc: Exception) -> str:
    """A parse error's first line, without the terminal's underline codes sqlglot puts in it."""
    lines = str(exc).splitlines()
    return re.sub(r"\x1b\[[0-9;]*m", "", lines[0] if lines else type(exc).__name__)


def _temporary(st: exp.Create | exp.Drop) -> bool:
    """CREATE TEMPORARY TABLE / DROP TEMPORARY TABLE."""
    if isinstance(st, exp.Drop):
        return bool(st.args.get("temporary"))
    props = st.args.get("properties")
    return props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)


def _like_source(st: exp.Create) -> exp.Table | None:
    """The table of CREATE TABLE ... LIKE t (None for other CREATEs)."""
    props = st.args.get("properties")
    for p in props.expressions if props is not None else ():
        if isinstance(p, exp.LikeProperty) and isinstance(p.this, exp.Table):
            return p.this
    return None


def _place(cols: list[ColumnSchema], new: ColumnSchema, position: exp.ColumnPosition | None) -> bool:
    """Put a column where `FIRST` / `AFTER x` says (False, and nothing done, when there is no such
    place: no position, or no column x)."""
    if position is None:
        return False
    if position.args.get("position") == "FIRST":
        cols.insert(0, new)
        return True
    after = position.this.name.lower() if position.this is not None else None
    idx = next((i for i, c in enumerate(cols) if c.name.lower() == after), None)
    if idx is None:
        return False
    cols.insert(idx + 1, new)
    return True


def _noted(table: TableDef, note: tuple[str, str]) -> TableDef:
    """The table with one more (kind, message) note for the reader (TableDef.extra["notes"])."""
    extra = dict(table.extra)
    extra["notes"] = tuple(extra.get("notes", ())) + (note,)
    return dataclasses.replace(table, extra=extra)


def _members(members: tuple[bytes, ...], collation: int | None) -> tuple[bytes, ...]:
    """ENUM/SET members from DDL text (kept as UTF-8) in the column's charset, as the binlog has them."""
    codec = codec_for(collation)
    if codec is None or codec == "utf-8":
        return members
    try:
        return tuple(m.decode("utf-8").encode(codec) for m in members)
    except (UnicodeDecodeError, UnicodeEncodeError):
        return members


def _charset_option(options) -> int | None:
    """[DEFAULT] CHARSET= / COLLATE= among a CREATE or ALTER TABLE's options (sqlglot properties)."""
    charset = collate = None
    for o in options:
        if isinstance(o, exp.CharacterSetProperty):
            charset = charset_collation(o.this.name)
        elif isinstance(o, exp.CollateProperty):
            collate = charset_collation(o.this.name)
    return charset or collate


def _charset_option_tokens(tokens: list[Token]) -> int | None:
    """[DEFAULT] CHARACTER SET [=] x / CHARSET [=] x / [DEFAULT] COLLATE [=] y, from tokens."""
    upper = [t.text.upper() for t in tokens]
    charset = collate = None
    for i, w in enumerate(upper):
        j = None
        if w == "CHARSET" or (w == "SET" and i and upper[i - 1] in ("CHARACTER", "CHAR")):
            j = i + 1
        elif w == "COLLATE":
            j = i + 1
        if j is None:
            continue
        if j < len(tokens) and upper[j] == "=":
            j += 1
        if j < len(tokens):
            value = charset_collation(tokens[j].text)
            if w == "COLLATE":
                collate = value
            else:
                charset = value
    return charset or collate


def _past_quoted(sql: str, i: int) -> int:
    """Where the quoted string or identifier starting at `sql[i]` ends (past its closing quote):
    backslash escapes in strings, none in `identifiers`."""
    quote, j, n = sql[i], i + 1, len(sql)
    while j < n and sql[j] != quote:
        j += 2 if sql[j] == "\\" and quote != "`" else 1
    return j + 1


def unwrap_executable_comments(sql: str) -> str:
    """The text with `/*!NNNNN ... */` and `/*M!NNNNNN ... */` opened: MySQL and MariaDB run what
    they hold (mysqldump writes `CREATE DATABASE ... /*!40100 DEFAULT CHARACTER SET utf8mb4 */`).
    Quoted strings and other comments are left as they are."""
    out, i, n = [], 0, len(sql)
    start = 0
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i = _past_quoted(sql, i)
        elif sql.startswith("/*", i):
            j = i + 2 + sql.startswith("M!", i + 2)
            if sql.startswith("!", j):
                j += 1
                while j < n and sql[j].isdigit():
                    j += 1
                end = sql.find("*/", j)
                if end < 0:
                    break
                out.append(sql[start:i])
                out.append(" " + unwrap_executable_comments(sql[j:end]) + " ")
                i = start = end + 2
            else:
                end = sql.find("*/", i + 2)
                i = n if end < 0 else end + 2
        else:
            i += 1
    out.append(sql[start:])
    return "".join(out)


def script_statements(sql: str) -> list[str]:
    """The statements of a script, as the mysql client splits them: on its delimiter (`;`, or what
    a `DELIMITER` line sets), never inside quotes or comments."""
    out: list[str] = []
    delimiter, current, i, n = ";", [], 0, len(sql)
    start = 0
    at_line_start = True
    while i < n:
        if at_line_start:
            j = i
            while j < n and sql[j] in " \t":
                j += 1
            if sql[j:j + 10].upper() == "DELIMITER " or sql[j:j + 10].upper() == "DELIMITER\t":
                end = sql.find("\n", j)
                end = n if end < 0 else end
                current.append(sql[start:i])
                if "".join(current).strip():
                    out.append("".join(current))
                current = []
                delimiter = sql[j + 10:end].strip() or delimiter
                i = start = end + 1
                continue
        at_line_start = False
        c = sql[i]
        if c == "\n":
            at_line_start = True
            i += 1
        elif c in "'\"`":
            i = _past_quoted(sql, i)
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "#" or (sql.startswith("--", i) and (i + 2 == n or sql[i + 2].isspace())):
            end = sql.find("\n", i)
            i = n if end < 0 else end
        elif sql.startswith(delimiter, i):
            current.append(sql[start:i])
            if "".join(current).strip():
                out.append("".join(current))
            current = []
            i = start = i + len(delimiter)
        else:
            i += 1
    current.append(sql[start:])
    if "".join(current).strip():
        out.append("".join(current))
    return out


# ---------------------------------------------------------------------- keys
#
# A table's keys are {index name: column names}, the PRIMARY KEY under "primary" (MySQL names it
# PRIMARY), names in lower case as MySQL compares them. An unnamed UNIQUE key is named after its
# first column, with _2, _3, ... when that name is taken, as the server names it. Only PRIMARY and
# UNIQUE keys are kept: the others find no single row.

def _key_column(e: exp.Expression) -> str:
    """The column of a key part: `a`, `a(10)` (a prefix), `a DESC`."""
    if isinstance(e, exp.Ordered):
        e = e.this
    if isinstance(e, (exp.ColumnPrefix, exp.Anonymous)) and not isinstance(e.this, str):
        e = e.this
    return e.name


def _key_columns(parts: list) -> tuple[str, ...]:
    return tuple(_key_column(p) for p in parts)


def _add_key(keys: dict[str, tuple[str, ...]], name: str, columns: tuple[str, ...]) -> None:
    if not columns or not all(columns):
        return
    if name.lower() == "primary":
        keys["primary"] = columns
        return
    name = name or columns[0]
    candidate, n = name, 2
    while candidate.lower() in keys:
        candidate, n = f"{name}_{n}", n + 1
    keys[candidate.lower()] = columns


def _constraint_key(keys: dict[str, tuple[str, ...]], e: exp.Expression, name: str = "") -> None:
    """A table-level PRIMARY KEY (...) or UNIQUE [KEY] [name] (...), maybe inside CONSTRAINT name."""
    if isinstance(e, exp.Constraint):
        for inner in e.expressions:
            _constraint_key(keys, inner, e.name)
    elif isinstance(e, exp.PrimaryKey):
        _add_key(keys, "primary", _key_columns(e.expressions))
    elif isinstance(e, exp.UniqueColumnConstraint) and isinstance(e.this, exp.Schema):
        _add_key(keys, e.this.name or name, _key_columns(e.this.expressions))


def _column_keys(keys: dict[str, tuple[str, ...]], cd: exp.ColumnDef) -> None:
    """`c INT PRIMARY KEY`, `c INT UNIQUE [KEY]`."""
    for constraint in cd.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.PrimaryKeyColumnConstraint):
            _add_key(keys, "primary", (cd.name,))
        elif isinstance(kind, exp.UniqueColumnConstraint):
            _add_key(keys, "", (cd.name,))


def _create_keys(definitions: list) -> dict[str, tuple[str, ...]]:
    """The PRIMARY and UNIQUE keys of a CREATE TABLE's definitions, in their order."""
    keys: dict[str, tuple[str, ...]] = {}
    for d in definitions:
        if isinstance(d, exp.ColumnDef):
            _column_keys(keys, d)
        else:
            _constraint_key(keys, d)
    return keys


def _alter_keys(keys: dict[str, tuple[str, ...]], action: exp.Expression) -> None:
    """What one ALTER TABLE action does to the keys: ADD/DROP PRIMARY KEY, ADD UNIQUE, DROP
    INDEX/KEY, RENAME INDEX, a column added with a key, a column dropped (it leaves every key; a
    key left with no column goes) or renamed (CHANGE, RENAME COLUMN)."""
    if isinstance(action, exp.AddConstraint):
        for e in action.expressions:
            _constraint_key(keys, e)
    elif isinstance(action, exp.DropPrimaryKey):
        keys.pop("primary", None)
    elif isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "INDEX":
        for t in action.args.get("tables") or []:
            keys.pop(t.name.lower(), None)
    elif isinstance(action, exp.RenameIndex):
        old = keys.pop(action.this.name.lower(), None)
        if old is not None:
            keys[action.args["to"].name.lower()] = old
    elif isinstance(action, exp.ColumnDef):
        _column_keys(keys, action)
    elif isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
        gone = {t.name.lower() for t in action.args.get("tables") or []}
        for name, cols in list(keys.items()):
            left = tuple(c for c in cols if c.lower() not in gone)
            if left:
                keys[name] = left
            else:
                del keys[name]
    elif isinstance(action, (exp.ModifyColumn, exp.RenameColumn)):
        if isinstance(action, exp.ModifyColumn):
            old = action.args.get("rename_from")
            old_name, new_name = (old.name if old is not None else action.this.name), action.this.name
        else:
            old_name, new_name = action.this.name, action.args["to"].name
        for name, cols in keys.items():
            keys[name] = tuple(new_name if c.lower() == old_name.lower() else c for c in cols)
        if isinstance(action, exp.ModifyColumn):
            _column_keys(keys, action.this)


def statement_offset(query: str) -> int:
    """Where the statement starts, after the white space and comments before it (`/* */`, `-- `,
    `#`). The text of an executable comment (`/*!50001 CREATE ... */`, MariaDB's `/*M!100100 ...
    */`) is statement: only its opening is skipped. len(query) when nothing but comments is left."""
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
        elif query.startswith("/*", i):
            j = i + 2 + query.startswith("M!", i + 2)
            if query.startswith("!", j):          # executable: its text runs on, after its version
                j += 1
                while j < n and query[j].isdigit():
                    j += 1
                return j
            end = query.find("*/", i + 2)
            if end < 0:
                return n
            i = end + 2
        elif query[i] == "#" or (query.startswith("--", i) and (i + 2 == n or query[i + 2].isspace())):
            end = query.find("\n", i)
            if end < 0:
                return n
            i = end + 1
        else:
            return i
    return n


#: Where the prefix leading_tokens reads ends at the latest: a quote (never cut a string) or a
#: comment's opening or end (never cut a comment; the executable comment statement_offset opened ends
#: with its */).
_PREFIX_ENDS = ("'", '"', "`", "/*", "*/", "#", "--")


def leading_tokens(query: str) -> list[Token]:
    """The first tokens of the statement (comments before it skipped, statement_offset), from a short
    prefix never cut inside a quoted string or a comment; [] when the prefix does not tokenize."""
    at = statement_offset(query)
    head = query[at:at + 256]
    cut = min((i for i in map(head.find, _PREFIX_ENDS) if i >= 0), default=len(head))
    try:
        return _tokenize(head[:cut])
    except TokenError:
        return []


def _first_token(query: str):
    """The statement's first token type (None when there is none)."""
    tokens = leading_tokens(query)
    return tokens[0].token_type if tokens else None
