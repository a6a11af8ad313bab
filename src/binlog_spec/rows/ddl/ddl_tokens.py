"""DDL text sqlglot cannot read as it stands, made readable at the token level: a CREATE TABLE without
its partition clause, an ALTER TABLE with only the actions that may change columns or keys. The columns
are what the SchemaTracker (schema.py) replays; neither rewrite changes them.
"""
from __future__ import annotations

from sqlglot.tokens import Token, TokenType


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


def without_partitioning(sql: str, tokens: list[Token]) -> str:
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


def alter_actions(sql: str, tokens: list[Token]) -> str | None:
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


#: The columns of a sequence's table, as MariaDB defines them (sql/sql_sequence.cc, sequence_structure;
#: SHOW CREATE TABLE of a sequence prints them so on 10.11, tests/rows/ddl/test_sequence_server.py). The
#: first four are taken to have the sequence's value type (`AS INT UNSIGNED`, MariaDB 11.5; not checked
#: on such a server: their names, which are what a rows event needs, are the same), BIGINT by default.
_SEQUENCE_VALUES = ("next_not_cached_value", "minimum_value", "maximum_value", "start_value")
_SEQUENCE_REST = "`increment` bigint(21) NOT NULL, `cache_size` bigint(21) unsigned NOT NULL, " \
                 "`cycle_option` tinyint(1) unsigned NOT NULL, `cycle_count` bigint(21) NOT NULL"
_INTEGER_WORDS = {"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "UNSIGNED", "SIGNED"}


def sequence_as_table(sql: str, tokens: list[Token]) -> str | None:
    """A CREATE or DROP SEQUENCE as the CREATE or DROP TABLE of the sequence's table (whose rows events
    NEXTVAL and SETVAL write): `CREATE [OR REPLACE] [TEMPORARY] SEQUENCE [IF NOT EXISTS] s ...` ->
    `CREATE ... TABLE [IF NOT EXISTS] s (<its columns>)`, `DROP [TEMPORARY] SEQUENCE ...` -> `DROP ...
    TABLE ...`. None for an ALTER SEQUENCE that changes no column (its names never change); the
    statement as it is otherwise."""
    words = [t.text.upper() for t in tokens]
    if "SEQUENCE" not in words[:5]:
        return sql
    i = words.index("SEQUENCE")
    head = sql[:tokens[i].start] + "TABLE"
    if words[0] == "ALTER":
        return sql if "AS" in words[i + 1:] else None
    if words[0] != "CREATE":
        return head + sql[tokens[i].end + 1:]
    j = i + 1 + (3 if words[i + 1:i + 4] == ["IF", "NOT", "EXISTS"] else 0)
    while j + 2 < len(tokens) and tokens[j + 1].token_type == TokenType.DOT:
        j += 2                                  # db.name
    value_type = "bigint(21)"
    if "AS" in words[j + 1:]:
        k = words.index("AS", j + 1) + 1
        typed = [w for w in words[k:k + 2] if w in _INTEGER_WORDS]
        value_type = " ".join(typed).lower() or value_type
    columns = ", ".join(f"`{name}` {value_type} NOT NULL" for name in _SEQUENCE_VALUES)
    return f"{head}{sql[tokens[i].end + 1:tokens[j].end + 1]} ({columns}, {_SEQUENCE_REST})"
