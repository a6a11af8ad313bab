"""Column names and signs from CREATE TABLE statements, kept current by replaying DDL.

MySQL 5.7 and `binlog_row_metadata=MINIMAL` write neither column names nor
signedness. A SchemaTracker fills them in: it loads a `mysqldump --no-data`
style file (`--schema FILE`) and replays the CREATE, ALTER, RENAME and DROP
TABLE statements found in QUERY events, so a column's name and sign follow
the schema as it was when each event was written. Statements are parsed with
sqlglot's MySQL dialect, not with regular expressions.
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
        elif isinstance(st, exp.Create) and st.kind == "TABLE" and st.args.get("expression") is not None:
            self.tables.pop(self._key(st.this), None)  # CREATE TABLE ... SELECT/LIKE: columns unknown here
        elif isinstance(st, exp.Drop) and st.kind == "TABLE":
            for t in st.expressions if st.expressions else []:
                self.tables.pop(self._key(t), None)
            for t in st.args.get("tables") or []:
                self.tables.pop(self._key(t), None)
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
                    key = self._key(action.this)
                    self.tables[key] = cols
                continue
            if cols is None:
                continue
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
        return dataclasses.replace(table, columns=tuple(new_columns), has_names=True,
                                   has_signedness=True)


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
