"""Column names, signs and charsets from CREATE TABLE statements, kept current by replaying DDL.

MySQL 5.7, MariaDB and `binlog_row_metadata=MINIMAL` write neither column names nor signedness, and
before MySQL 8 / MariaDB 10.5 no charsets either. A SchemaTracker fills them in: it loads a `mysqldump
--no-data` style file (`--schema FILE`: the tables at the start of the first binlog) and replays the
CREATE, ALTER, RENAME and DROP TABLE, CREATE and DROP SEQUENCE (as the sequence's table) and CREATE,
ALTER and DROP DATABASE statements found in QUERY events (rows.observe_schema feeds it every event,
before any filter), so a column's name, sign and charset follow the schema as it was when each event
was written.

What a TABLE_MAP says comes first (its optional metadata), then the replayed
DDL, then --schema (which the DDL replays on top of). A text column's charset
is, in order: the metadata's; the column's CHARACTER SET / COLLATE; the
table's default; the database's default; `default_charset` (--default-charset);
else a guess, the server's collation of the QUERY events (Q_CHARSET_CODE).
A TABLE_MAP that contradicts the known columns keeps its @N names. What the
reader should be told (names unknown, charset guessed, a contradiction) is
in the TableDef's `extra["notes"]` as (kind, message) pairs.
Statements are parsed with sqlglot's MySQL dialect, not with regular expressions.

The same statements give each table's PRIMARY KEY and UNIQUE keys (schema_sql.py,
"keys"): the SQL writer finds a row by them when the TABLE_MAP has no key.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from binlog_spec.errors import SchemaFileError
from binlog_spec.rows.statement_text import (DIALECT, first_token, leading_tokens, quote_table, script_statements,
                                             tokenize, unwrap_executable_comments)
from binlog_spec.rows.tablemap import CT, NUMERIC_TYPES, TableDef, real_type
from binlog_spec.rows.charsets import charset_name
from binlog_spec.rows.ddl.schema_sql import (ColumnSchema, Key, _CHARACTER_TYPES, _add_key, _alter_keys, _charset_option,
                                         _charset_option_tokens, _column, _contradiction, _create_keys,
                                         _key_columns, _like_source, _members, _place, _snippet,
                                         _temporary, _why, memo_parse, memo_tokens)
from binlog_spec.rows.ddl.ddl_tokens import alter_actions, sequence_as_table, without_partitioning


#: Statements the tracker replays, by their first token.
DDL_START = {TokenType.CREATE, TokenType.ALTER, TokenType.DROP, TokenType.RENAME, TokenType.USE}

#: The pre-5.6 temporal types, which carry no metadata in a TABLE_MAP.
_OLD_TEMPORALS = {CT.time, CT.datetime, CT.timestamp}


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
        first = first_token(query)
        if first not in DDL_START:
            return
        self.default_db = db or self.default_db
        self._statement(query, first)

    def _statement(self, query: str, first=None) -> None:
        first = first if first is not None else first_token(query)
        if first not in DDL_START:
            return
        self.generation += 1
        if "/*!" in query or "/*M!" in query:
            query = unwrap_executable_comments(query)
        if first == TokenType.RENAME:
            self._rename_tables(query)
            return
        try:
            tokens = memo_tokens(query)
        except TokenError:
            tokens = []
        tokenized = query           # the text `tokens` are of
        words = [t.text.upper() for t in tokens[:5]]
        if len(words) > 1 and words[1] in ("DATABASE", "SCHEMA"):
            self._database(words[0], tokens[2:])
            return
        source = query
        if "SEQUENCE" in words:             # CREATE / DROP / ALTER SEQUENCE: as its table's
            query = tokenized = sequence_as_table(query, tokens)
            if query is None:
                return
            tokens = tokenize(query)
        if tokens and "TABLE" in words[:4]:
            if first == TokenType.ALTER:
                prepared = alter_actions(query, tokens)
                if prepared is None:
                    return          # no action changes a column
                if prepared != query:
                    query, tokens = prepared, memo_tokens(prepared)
                    tokenized = query
            elif first == TokenType.CREATE:
                query = without_partitioning(query, tokens)
        if first == TokenType.ALTER and "CONVERT" in (t.text.upper() for t in tokens):
            self._convert(query, tokens, source)
            return
        try:
            statements = memo_parse(query, tokens if query is tokenized and tokens else None)
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
        tokens = [t for t in tokenize(body)]
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
        if first_token(query) == TokenType.CREATE and "TABLE" in (t.text.upper() for t in leading_tokens(query)[:4]):
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
            tokens = tokenize(query)
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
        invisible = tuple(known.invisible for known in cols)
        done = self._with_keys(dataclasses.replace(table, columns=tuple(new_columns), has_names=True,
                                                   has_signedness=True,
                                                   generated=generated if any(generated) else table.generated,
                                                   invisible=invisible if any(invisible) else table.invisible))
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


def _noted(table: TableDef, note: tuple[str, str]) -> TableDef:
    """The table with one more (kind, message) note for the reader (TableDef.extra["notes"])."""
    extra = dict(table.extra)
    extra["notes"] = tuple(extra.get("notes", ())) + (note,)
    return dataclasses.replace(table, extra=extra)
