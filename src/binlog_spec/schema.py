"""Column names and signs from CREATE TABLE statements, kept current by replaying DDL.

MySQL 5.7 and `binlog_row_metadata=MINIMAL` write neither column names nor
signedness. A SchemaTracker fills them in: it loads a `mysqldump --no-data`
style file (`--schema FILE`) and replays the CREATE, ALTER, RENAME and DROP
TABLE statements found in QUERY events, so a column's name and sign follow
the schema as it was when each event was written. Statements are parsed with
sqlglot's MySQL dialect, not with regular expressions.

The same statements give each table's PRIMARY KEY and UNIQUE keys (see "Keys"
below): the SQL writer finds a row by them when the TABLE_MAP has no key.
"""
from __future__ import annotations

import dataclasses
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

from binlog_spec.tablemap import CT, NUMERIC_TYPES, TableDef, real_type

DIALECT = "mysql"
_UNSIGNED = {exp.DataType.Type.UTINYINT, exp.DataType.Type.USMALLINT, exp.DataType.Type.UMEDIUMINT,
             exp.DataType.Type.UINT, exp.DataType.Type.UBIGINT, exp.DataType.Type.UDECIMAL}
_TEMPORAL = {exp.DataType.Type.TIME, exp.DataType.Type.DATETIME, exp.DataType.Type.TIMESTAMP,
             exp.DataType.Type.DATETIME64, exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ}
_DDL_START = {TokenType.CREATE, TokenType.ALTER, TokenType.DROP, TokenType.RENAME, TokenType.USE}


#: The pre-5.6 temporal types, which carry no metadata in a TABLE_MAP.
_OLD_TEMPORALS = {CT.time, CT.datetime, CT.timestamp}


class SchemaWarning(UserWarning):
    """A DDL statement could not be replayed; the table's columns are forgotten."""


@dataclass(frozen=True)
class ColumnSchema:
    name: str
    unsigned: bool
    data_type: str
    #: ENUM or SET members, in definition order.
    members: tuple[bytes, ...] | None = None
    #: Fractional seconds precision of a TIME, DATETIME or TIMESTAMP column (0 when none is given).
    fsp: int = 0


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
    and place matter here.
    """
    out: list = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        word = tok.text.upper()
        i += 1
        if word == "UNSIGNED" and out and out[-1].token_type in (TokenType.FLOAT, TokenType.DOUBLE):
            continue
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


def _column(cd: exp.ColumnDef) -> ColumnSchema:
    kind = cd.args.get("kind")
    dtype = kind.this if kind is not None else None
    members, fsp = None, 0
    if dtype in (exp.DataType.Type.ENUM, exp.DataType.Type.SET):
        members = tuple(e.name.encode("utf-8") for e in kind.expressions)
    elif dtype in _TEMPORAL and kind.expressions:
        precision = kind.expressions[0].this
        fsp = int(precision.name) if isinstance(precision, exp.Literal) and precision.name.isdigit() else 0
    return ColumnSchema(name=cd.name, unsigned=dtype in _UNSIGNED,
                        data_type=kind.sql(DIALECT) if kind is not None else "", members=members, fsp=fsp)


class SchemaTracker:
    """Table definitions by (schema, table), as the DDL seen so far left them."""

    def __init__(self, default_db: str = ""):
        self.tables: dict[Key, list[ColumnSchema]] = {}
        #: (schema, table) -> {index name (lower case; "primary" for the PRIMARY KEY): its column names}
        self.keys: dict[Key, dict[str, tuple[str, ...]]] = {}
        self.default_db = default_db

    @classmethod
    def from_file(cls, path: str | Path, default_db: str = "") -> "SchemaTracker":
        tracker = cls(default_db)
        tracker.load_sql(Path(path).read_text(encoding="utf-8", errors="replace"))
        return tracker

    # ------------------------------------------------------------- loading
    def load_sql(self, sql: str, db: str | None = None) -> None:
        """Apply every DDL statement of a script (e.g. mysqldump --no-data)."""
        if db is not None:
            self.default_db = db
        try:
            statements = _parse(sql)
        except (ParseError, TokenError):
            # One bad statement must not lose the others: fall back to statement by statement.
            statements = []
            for chunk in _split_statements(sql):
                try:
                    statements.extend(_parse(chunk))
                except (ParseError, TokenError) as exc:
                    warnings.warn(SchemaWarning(f"cannot parse: {chunk[:80]!r}: {exc}"), stacklevel=2)
        for st in statements:
            self._apply(st)

    def observe_query(self, db: str, query: str) -> None:
        """Replay a QUERY_EVENT statement if it is DDL; cheap for everything else."""
        first = _first_token(query)
        if first not in _DDL_START:
            return
        self.default_db = db or self.default_db
        if first == TokenType.RENAME:
            self._rename_tables(query)
            return
        try:
            statements = _parse(query)
        except (ParseError, TokenError) as exc:
            self._forget_altered(query, exc)
            return
        for st in statements:
            self._apply(st, source=query)

    # ------------------------------------------------------------ replaying
    def _key(self, table: exp.Table) -> Key:
        return (table.db or self.default_db, table.name)

    def _apply(self, st: exp.Expression, source: str = "") -> None:
        if isinstance(st, exp.Use):
            self.default_db = st.this.name if st.this is not None else self.default_db
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and isinstance(st.this, exp.Schema):
            cols = [_column(cd) for cd in st.this.expressions if isinstance(cd, exp.ColumnDef)]
            self.tables[self._key(st.this.this)] = cols
            self.keys[self._key(st.this.this)] = _create_keys(st.this.expressions)
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and st.args.get("expression") is not None:
            self.tables.pop(self._key(st.this), None)  # CREATE TABLE ... SELECT/LIKE: columns unknown here
            self.keys.pop(self._key(st.this), None)
        elif isinstance(st, exp.Drop) and st.kind == "TABLE":
            for t in st.expressions if st.expressions else []:
                self.tables.pop(self._key(t), None)
                self.keys.pop(self._key(t), None)
            for t in st.args.get("tables") or []:
                self.tables.pop(self._key(t), None)
                self.keys.pop(self._key(t), None)
        elif isinstance(st, (exp.Create, exp.Drop)) and st.kind == "INDEX":
            self._index_statement(st)
        elif isinstance(st, exp.Alter) and st.args.get("kind") == "TABLE":
            self._alter(st)
        elif isinstance(st, exp.Command) and st.this.upper() == "ALTER":
            self._forget_altered(source or st.sql(DIALECT), "unsupported ALTER syntax")

    def _alter(self, st: exp.Alter) -> None:
        key = self._key(st.this)
        cols = self.tables.get(key)
        for action in st.args.get("actions") or []:
            if isinstance(action, exp.AlterRename):
                if cols is not None:
                    self.tables.pop(key)
                    keys = self.keys.pop(key, None)
                    key = self._key(action.this)
                    self.tables[key] = cols
                    if keys is not None:
                        self.keys[key] = keys
                continue
            if cols is None:
                continue
            if key in self.keys:
                _alter_keys(self.keys[key], action)
            if isinstance(action, exp.ColumnDef):
                new = _column(action)
                pos = action.args.get("position")
                if pos is None:
                    cols.append(new)
                elif pos.args.get("position") == "FIRST":
                    cols.insert(0, new)
                else:
                    after = pos.this.name
                    idx = next((i for i, c in enumerate(cols) if c.name.lower() == after.lower()), len(cols) - 1)
                    cols.insert(idx + 1, new)
            elif isinstance(action, exp.Drop) and str(action.args.get("kind", "")).upper() == "COLUMN":
                names = {t.name.lower() for t in action.args.get("tables") or []}
                cols[:] = [c for c in cols if c.name.lower() not in names]
            elif isinstance(action, exp.ModifyColumn):
                new = _column(action.this)
                old = action.args.get("rename_from")
                old_name = (old.name if old is not None else new.name).lower()
                for i, c in enumerate(cols):
                    if c.name.lower() == old_name:
                        cols[i] = new
            elif isinstance(action, exp.RenameColumn):
                old, new_name = action.this.name.lower(), action.args["to"].name
                for i, c in enumerate(cols):
                    if c.name.lower() == old:
                        cols[i] = dataclasses.replace(c, name=new_name)
            # indexes, constraints, options: no effect on the row image

    def _rename_tables(self, query: str) -> None:
        """RENAME TABLE a TO b[, c TO d]; sqlglot keeps it as a command, so walk its tokens."""
        body = query.lstrip()[len("RENAME"):]
        tokens = [t for t in Tokenizer(dialect=DIALECT).tokenize(body)]
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
                self.tables[d] = self.tables.pop(s)
                if s in self.keys:
                    self.keys[d] = self.keys.pop(s)

    def _forget_altered(self, query: str, why: object) -> None:
        """An ALTER we cannot replay: forget the table rather than keep wrong names."""
        try:
            tokens = Tokenizer(dialect=DIALECT).tokenize(query)
        except TokenError:
            return
        words = [t for t in tokens if t.token_type not in (TokenType.DOT,)]
        if len(words) >= 3 and words[0].token_type == TokenType.ALTER and words[1].token_type == TokenType.TABLE:
            parts = [words[2].text]
            if len(tokens) > 4 and tokens[3].token_type == TokenType.DOT:
                parts = [tokens[2].text, tokens[4].text]
            key = (parts[0], parts[1]) if len(parts) == 2 else (self.default_db, parts[0])
            self.keys.pop(key, None)
            if self.tables.pop(key, None) is not None:
                warnings.warn(SchemaWarning(f"cannot replay {query[:80]!r} ({why}); forgetting {key[0]}.{key[1]}"),
                              stacklevel=3)

    # ------------------------------------------------------------ answering
    def columns(self, schema: str, table: str) -> list[ColumnSchema] | None:
        return self.tables.get((schema, table))

    def complete(self, table: TableDef) -> TableDef:
        """Fill in the names, signs and ENUM/SET members a TABLE_MAP lacks, when the known columns match it."""
        cols = self.columns(table.schema, table.table)
        if cols is None or len(cols) != len(table.columns):
            return table
        new_columns = []
        for col, known in zip(table.columns, cols):
            changes = {}
            if not table.has_names:
                changes["name"] = known.name
            real = real_type(col.type_code, col.meta)
            if not table.has_signedness and real in NUMERIC_TYPES:
                changes["unsigned"] = known.unsigned
            if known.members is not None and real == CT.enum and col.enum_values is None:
                changes["enum_values"] = known.members
            if known.members is not None and real == CT.set and col.set_values is None:
                changes["set_values"] = known.members
            if known.fsp and col.type_code in _OLD_TEMPORALS and not col.meta:
                # A MariaDB 5.3 high-resolution TIME(n)/DATETIME(n)/TIMESTAMP(n): the binlog says
                # neither that nor n (see values.old_temporal_size).
                changes["meta"] = {"fsp": known.fsp}
            new_columns.append(dataclasses.replace(col, **changes))
        return self._with_keys(dataclasses.replace(table, columns=tuple(new_columns), has_names=True,
                                                   has_signedness=True))

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
        return Tokenizer(dialect=DIALECT).tokenize(head[:cut])
    except TokenError:
        return []


def _first_token(query: str):
    """The statement's first token type (None when there is none)."""
    tokens = leading_tokens(query)
    return tokens[0].token_type if tokens else None


def _split_statements(sql: str) -> list[str]:
    """Statements of a script, split on the tokenizer's semicolons (never inside strings or comments)."""
    out, start = [], 0
    for tok in Tokenizer(dialect=DIALECT).tokenize(sql):
        if tok.token_type == TokenType.SEMICOLON:
            out.append(sql[start:tok.end + 1])
            start = tok.end + 1
    if sql[start:].strip():
        out.append(sql[start:])
    return out
