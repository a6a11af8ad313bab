"""The later statements a rollback's conflict check (output.rollback.check) cannot check row by row: which are a
conflict of their own kind (TRUNCATE, DDL, statement-based DML), and which touched tables they change."""
from __future__ import annotations

from binlog_spec.rows.statement_text import DML_STATEMENTS

#: Statement words whose later run on a touched table is a conflict of its own kind.
DDL_WORDS = ("ALTER", "CREATE", "DROP", "RENAME", "TRUNCATE")


def statement_kind(query: str) -> tuple[str, str] | None:
    """(the conflict's kind: "statement", "TRUNCATE" or "DDL"; the statement's first word), or None: a
    statement that changes no table (BEGIN, SET...)."""
    from binlog_spec.rows.statement_text import leading_tokens
    tokens = leading_tokens(query)
    word = tokens[0].text.upper() if tokens else ""
    if word in DML_STATEMENTS:
        return "statement", word
    if word in DDL_WORDS:
        return ("TRUNCATE" if word == "TRUNCATE" else "DDL"), word
    return None


def statement_targets(query: str, db: str, word: str, touched: dict) -> list[tuple[str, str]]:
    """The touched tables a statement writes or reshapes: the targets of statement-based DML
    (stream.filters.statement_tables), the tables a DDL names, every table of a dropped database; a
    statement that cannot be parsed, every touched table whose name it holds."""
    from binlog_spec.stream.filters import statement_tables
    tables = [t for t in touched if len(t) == 2]
    if word in DML_STATEMENTS and word != "LOAD":
        found = statement_tables(query, db)
    else:
        found = ddl_tables(query, db, tables)
    if found is None:
        low = query.lower()
        return [t for t in tables if t[1].lower() in low]
    hit = {(s, t) for s, t in found}
    return [t for t in tables if t in hit]


def ddl_tables(query: str, db: str, tables: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    from binlog_spec.rows.statement_text import statement_offset
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        tree = sqlglot.parse_one(query[statement_offset(query):], read="mysql")
    except (SqlglotError, ValueError, RecursionError):
        return None
    finally:
        log.setLevel(level)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind", "")).upper() in ("DATABASE", "SCHEMA"):
        names = {t.name for t in tree.args.get("tables") or []} | ({tree.this.name} if tree.this is not None else set())
        return [t for t in tables if t[0] in names]
    if isinstance(tree, exp.Command):       # what sqlglot does not parse: named by the text
        return None
    return [(t.db or db, t.name) for t in tree.find_all(exp.Table)]


__all__ = ["DDL_WORDS", "ddl_tables", "statement_kind", "statement_targets"]
