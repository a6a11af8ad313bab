"""CREATE TABLE text to column schemas and keys: sqlglot's MySQL dialect parses the statements (with the
dialect gaps that do not change a row image bridged), `_column` reads one column definition, the keys
helpers keep each table's PRIMARY and UNIQUE keys. The SchemaTracker (schema.py) replays DDL with them.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
import sqlglot
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from binlog_spec.binlog import spec
from binlog_spec.rows.statement_text import DIALECT, tokenize
from binlog_spec.rows.tablemap import CT, TableDef, real_type
from binlog_spec.rows.charsets import BINARY_COLLATION, charset_collation, codec_for


_UNSIGNED = {exp.DataType.Type.UTINYINT, exp.DataType.Type.USMALLINT, exp.DataType.Type.UMEDIUMINT,
             exp.DataType.Type.UINT, exp.DataType.Type.UBIGINT, exp.DataType.Type.UDECIMAL}


_TEMPORAL = {exp.DataType.Type.TIME, exp.DataType.Type.DATETIME, exp.DataType.Type.TIMESTAMP,
             exp.DataType.Type.DATETIME64, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ}


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
    #: MariaDB's INVISIBLE column: an INSERT without a column list gives it no value, so SQL names the
    #: columns (it still takes a value when named).
    invisible: bool = False


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


def _parse(sql: str, tokens: list | None = None) -> list[exp.Expression]:
    """The statements of `sql`; `tokens`: its tokens when the caller has them already."""
    dialect = sqlglot.Dialect.get_or_raise(DIALECT)
    tokens = _normalise_tokens(dialect.tokenize(sql) if tokens is None else tokens)
    # sqlglot logs "falling back to a Command" for statements outside its grammar (ALTER USER,
    # GRANT, ...): those are not DDL we replay, so the message is noise on our stderr.
    level = _SQLGLOT_LOG.level
    _SQLGLOT_LOG.setLevel(logging.ERROR)
    try:
        return [e for e in dialect.parser().parse(tokens, sql) if e is not None]
    finally:
        _SQLGLOT_LOG.setLevel(level)


#: Statement text -> its tokens, and its parsed statements: a DDL statement is tokenized and parsed once
#: per process however many trackers replay it (the pre-pass of `sql --sql`/`--sql2` and the run that
#: follows, the pieces forked after it; a binlog's repeated CREATE TABLE IF NOT EXISTS). What is kept is
#: only read, never changed. Bounded (cleared when full); a statement that does not parse is not kept.
_TOKENS: dict[str, list] = {}
_PARSED: dict[str, list] = {}
_MAX_MEMO = 256


def memo_tokens(sql: str) -> list:
    """tokenize(sql), kept (see _TOKENS)."""
    got = _TOKENS.get(sql)
    if got is None:
        got = tokenize(sql)
        if len(_TOKENS) >= _MAX_MEMO:
            _TOKENS.clear()
        _TOKENS[sql] = got
    return got


def memo_parse(sql: str, tokens: list | None = None) -> list[exp.Expression]:
    """_parse(sql, tokens), kept (see _PARSED); `tokens` must be sql's."""
    got = _PARSED.get(sql)
    if got is None:
        got = _parse(sql, tokens)
        if len(_PARSED) >= _MAX_MEMO:
            _PARSED.clear()
        _PARSED[sql] = got
    return got


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
    constraints = cd.args.get("constraints") or []
    generated = any(isinstance(c.kind, exp.ComputedColumnConstraint) for c in constraints)
    invisible = any(isinstance(c.kind, exp.InvisibleColumnConstraint) for c in constraints)
    return ColumnSchema(name=cd.name, unsigned=dtype in _UNSIGNED,
                        data_type=kind.sql(DIALECT) if kind is not None else "", members=members, fsp=fsp,
                        kind=dtype.name if dtype is not None else "", collation=collation, text=text,
                        generated=generated, invisible=invisible)


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


def _members(members: tuple[bytes, ...], collation: int | None) -> tuple[bytes, ...]:
    """ENUM/SET members from DDL text (kept as UTF-8) in the column's charset, as the binlog has them.
    A character the charset lacks is `?`, as the server converts the statement's text (`SET('中2')` in
    a latin1 column is `?2`); the other members keep theirs."""
    codec = codec_for(collation)
    if codec is None or codec == "utf-8":
        return members
    try:
        return tuple(m.decode("utf-8").encode(codec, errors="replace") for m in members)
    except UnicodeDecodeError:
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
