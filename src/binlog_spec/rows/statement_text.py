"""SQL statement text: where a statement starts after its comments, its first tokens, how a script
splits into statements, and the one home of the keyword lists that sort statements (DDL or not,
transaction control, statement-based DML). Tokens are sqlglot's MySQL dialect's.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlglot.tokens import Token

# sqlglot is imported by the functions that tokenize, when first called: importing it takes longer than
# reading a small binlog, and most runs read no statement text.

DIALECT = "mysql"
#: Statements reported in the DDL section, by their first (or first two) tokens: sqlglot's tokenizer
#: (leading_tokens) reads them, so comments before the statement do not hide it.
DDL_STATEMENTS = frozenset({"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE", "GRANT", "REVOKE", "ANALYZE",
                            "OPTIMIZE", "REPAIR", "FLUSH", "SET PASSWORD"})
#: Statements that are transaction control, never DDL (most statement events): not tokenized.
TX_CONTROL = (b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA ", b"SAVEPOINT", b"RELEASE")

#: What a transaction-control statement does to the transaction it is in (`transaction_control`).
TX_BEGIN, TX_END, TX_SAVEPOINT, TX_ROLLBACK_TO, TX_RELEASE, TX_XA_END = (
    "begin", "end", "savepoint", "rollback_to", "release", "xa_end")


def _words(statement: bytes, n: int) -> list[bytes]:
    """The first `n` words of a statement, upper-cased, after the white space and comments before and
    between them (`/* */`, `-- `, `#`); a word ends at white space, a comment, a quote or `;`."""
    out: list[bytes] = []
    i, end = 0, len(statement)
    while len(out) < n and i < end:
        c = statement[i:i + 1]
        if c.isspace():
            i += 1
        elif statement.startswith(b"/*", i):
            close = statement.find(b"*/", i + 2)
            if close < 0:
                break
            i = close + 2
        elif c == b"#" or (statement.startswith(b"--", i) and (i + 2 == end or statement[i + 2:i + 3].isspace())):
            close = statement.find(b"\n", i)
            if close < 0:
                break
            i = close + 1
        else:
            j = i
            while j < end and not statement[j:j + 1].isspace() and statement[j:j + 1] not in b"'\"`;(" \
                    and not statement.startswith(b"/*", j):
                j += 1
            if j == i:
                break
            out.append(statement[i:j].upper())
            i = j
    return out


_EXACT = {b"BEGIN": TX_BEGIN, b"COMMIT": TX_END, b"ROLLBACK": TX_END}


def transaction_control(statement: bytes) -> str | None:
    """What a statement event's statement does to its transaction, read as MySQL's Query_log_event does
    (sql/log_event.h: `starts_group`, `ends_group`, `is_trans_keyword`), case, white space and comments
    aside (a statement typed by a user, as servers before MySQL bug #50407's fix logged SAVEPOINT and
    ROLLBACK TO): TX_BEGIN (BEGIN, XA START / XA BEGIN), TX_END (COMMIT, ROLLBACK, XA COMMIT, XA
    ROLLBACK), TX_SAVEPOINT, TX_ROLLBACK_TO (`ROLLBACK [WORK] TO [SAVEPOINT] sp`: the transaction goes on),
    TX_RELEASE (RELEASE SAVEPOINT), TX_XA_END (XA END, the end of an XA transaction's statements, before
    its XA PREPARE); None for any other statement."""
    if len(statement) <= 8:                         # as the servers write them: BEGIN, COMMIT, ROLLBACK
        exact = _EXACT.get(statement)
        if exact is not None:
            return exact
    first = statement[:1].upper()
    if first.isalpha() and first not in b"BCRSX":      # most statements: no keyword here starts so
        return None
    words = _words(statement[:512], 4)
    if not words:
        return None
    first = words[0]
    if first == b"BEGIN":
        return TX_BEGIN
    if first == b"COMMIT":
        return TX_END
    if first == b"SAVEPOINT":
        return TX_SAVEPOINT
    if first == b"RELEASE":
        return TX_RELEASE if words[1:2] == [b"SAVEPOINT"] else None
    if first == b"ROLLBACK":
        rest = words[1:]
        if rest[:1] == [b"WORK"]:
            rest = rest[1:]
        return TX_ROLLBACK_TO if rest[:1] == [b"TO"] else TX_END
    if first == b"XA":
        second = words[1:2]
        if second in ([b"START"], [b"BEGIN"]):
            return TX_BEGIN
        if second in ([b"COMMIT"], [b"ROLLBACK"]):
            return TX_END
        if second == [b"END"]:
            return TX_XA_END
    return None
#: The savepoint a SAVEPOINT, ROLLBACK TO or RELEASE SAVEPOINT names: its keywords, then the name, in
#: backquotes (a backquote doubled in it), double quotes (ANSI_QUOTES) or bare.
_SAVEPOINT_NAME = re.compile(
    r"(?:SAVEPOINT|ROLLBACK(?:\s+WORK)?\s+TO(?:\s+SAVEPOINT)?|RELEASE\s+SAVEPOINT)\s*"
    r"(`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[^\s;`\"/]+)", re.IGNORECASE)


def savepoint_name(statement: str) -> str | None:
    """The savepoint a SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT statement names, folded to lower
    case (the server compares savepoint names without case: sql/transaction.cc find_savepoint), or
    None when the statement names none this way."""
    found = _SAVEPOINT_NAME.match(statement, statement_offset(statement))
    if found is None:
        return None
    name = found.group(1)
    if name[:1] in "`\"":
        name = name[1:-1].replace(name[0] * 2, name[0])
    return name.lower()


#: How QUERY statements that never change a table definition start (upper-cased bytes): they need
#: no parsing (observe_schema, Spark's planning pass).
NOT_DDL = (b"BEGIN", b"COMMIT", b"INSERT", b"UPDATE", b"DELETE", b"REPLACE", b"SAVEPOINT", b"ROLLBACK",
           b"XA ", b"SET ", b"LOAD ", b"CALL ", b"DO ", b"SELECT")


#: Statement-based DML, by its first word (what a rollback cannot undo as rows).
DML_STATEMENTS = ("INSERT", "REPLACE", "UPDATE", "DELETE", "LOAD")


def tokenize(sql: str) -> list[Token]:
    """The MySQL dialect's tokens (`quoted` names are identifiers)."""
    import sqlglot
    return sqlglot.Dialect.get_or_raise(DIALECT).tokenize(sql)


def quote_identifier(name: str) -> str:
    """A name as SQL writes it: in backquotes, a backquote in it doubled."""
    return "`" + name.replace("`", "``") + "`"


def quote_table(schema: str, table: str) -> str:
    return f"{quote_identifier(schema)}.{quote_identifier(table)}"


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
    from sqlglot.errors import TokenError

    at = statement_offset(query)
    head = query[at:at + 256]
    cut = min((i for i in map(head.find, _PREFIX_ENDS) if i >= 0), default=len(head))
    try:
        return tokenize(head[:cut])
    except TokenError:
        return []


def first_token(query: str):
    """The statement's first token type (None when there is none)."""
    tokens = leading_tokens(query)
    return tokens[0].token_type if tokens else None


def is_ddl(statement: str) -> bool:
    """Whether a statement is one the DDL section lists (DDL_STATEMENTS), by its first tokens."""
    words = [t.text.upper() for t in leading_tokens(statement)[:2]]
    return bool(words) and (words[0] in DDL_STATEMENTS or " ".join(words) in DDL_STATEMENTS)
