"""--where: a SQL boolean expression over a table's column names, parsed once with sqlglot, compiled per
table definition into a Python predicate of a row image (stream.row_filters).

Supported: `=`, `<>`/`!=`, `<`, `>`, `<=`, `>=`, `IN (...)`, `BETWEEN a AND b`, `LIKE` (with `ESCAPE`),
`IS [NOT] NULL`, `AND`, `OR`, `NOT`, parentheses; literals are quoted text, numbers, 0x/X'..' hex, NULL,
TRUE/FALSE; each is typed as the column it is compared with (stream.row_values). SQL's three-valued logic:
a comparison with NULL is unknown (None), and an image is kept only when the expression is true.
"""
from __future__ import annotations

import operator
import re
from decimal import Decimal
from typing import Callable

from binlog_spec.rows.charsets import case_sensitive
from binlog_spec.stream.row_values import compared, kind, typed

#: A predicate of one row image ({column name: value}): True, False or None (unknown).
Predicate = Callable[[dict], "bool | None"]


class WhereError(ValueError):
    """An expression --where cannot take, or one that does not fit a table (the message names why)."""


def parse(text: str):
    """The sqlglot tree of an expression (WhereError when it is no expression)."""
    import sqlglot
    from sqlglot import errors
    try:
        tree = sqlglot.parse_one(text, read="mysql")
    except (errors.ParseError, errors.TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else "not an expression"
        raise WhereError(f"cannot parse {text!r}: {first}") from None
    if tree is None:
        raise WhereError(f"cannot parse {text!r}")
    columns(tree)       # (an unsupported construct is named now, whatever the tables)
    return tree


def columns(tree) -> list[str]:
    """The column names the expression reads, in order (WhereError: a construct it cannot take)."""
    from sqlglot import exp
    names: list[str] = []
    _walk(tree, names, exp)
    return names


_COMPARISONS = {"EQ": operator.eq, "NEQ": operator.ne, "LT": operator.lt, "GT": operator.gt, "LTE": operator.le,
                "GTE": operator.ge, "NullSafeEQ": None}


def _walk(node, names: list[str], exp) -> None:
    kindname = type(node).__name__
    if isinstance(node, exp.Column):
        if node.table:
            raise WhereError(f"qualified column {node.sql(dialect='mysql')}: name the column alone")
        if node.name not in names:
            names.append(node.name)
        return
    if isinstance(node, (exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.Neg)):
        if isinstance(node, exp.Neg) and not isinstance(node.this, exp.Literal):
            raise WhereError(f"unsupported: {node.sql(dialect='mysql')}")
        return
    if kindname in _COMPARISONS and kindname != "NullSafeEQ" or isinstance(
            node, (exp.And, exp.Or, exp.Not, exp.Paren, exp.In, exp.Between, exp.Like, exp.Is, exp.Escape)):
        if isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")):
            raise WhereError(f"unsupported: {node.sql(dialect='mysql')} (IN takes a list of literals)")
        for child in node.iter_expressions():
            _walk(child, names, exp)
        return
    raise WhereError(f"unsupported: {node.sql(dialect='mysql')} (--where takes =, <>, <, >, <=, >=, IN, BETWEEN, "
                     "LIKE, IS [NOT] NULL, AND, OR, NOT and parentheses over column names and literals)")


def compile_where(tree, table) -> Predicate:
    """The predicate of the expression over the images of `table` (a rows.tablemap.TableDef); WhereError
    naming the column that the table lacks or the literal that does not fit its type."""
    from sqlglot import exp
    names = table.names
    where = f"{table.schema}.{table.table}"
    index = {name: i for i, name in enumerate(names) if name is not None}
    return _compile(tree, exp, table, index, where)


def _column(node, exp, table, index, where):
    name = node.name
    i = index.get(name)
    if i is None:
        lowered = {n.lower(): j for n, j in index.items()}      # (column names are case-insensitive)
        i = lowered.get(name.lower())
    if i is None:
        hint = "" if table.has_names else " (its column names are unknown: binlog_row_metadata=FULL, or --schema)"
        raise WhereError(f"table {where} has no column {name}{hint}")
    return table.names[i], table.columns[i]


def _literal(node, exp):
    """(value, is a literal) of a literal node: str, bytes, int, Decimal, None (NULL), or a bool as an int."""
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return int(node.this)
    if isinstance(node, exp.HexString):
        text = node.this
        return bytes.fromhex(text if len(text) % 2 == 0 else "0" + text)
    if isinstance(node, exp.Neg):
        value = _literal(node.this, exp)
        return -value
    if node.is_string:
        return node.this
    text = node.this
    return int(text) if re.fullmatch(r"\d+", text) else Decimal(text)


def _value(node, exp, column, name, where):
    """A literal typed as `column` (WhereError naming the column when it does not fit)."""
    if isinstance(node, exp.Column):
        raise WhereError(f"{node.sql(dialect='mysql')}: compare a column with literals only")
    if isinstance(node, exp.Paren):
        return _value(node.this, exp, column, name, where)
    try:
        return typed(column, _literal(node, exp), f"{where}.{name}")
    except ValueError as exc:
        raise WhereError(str(exc)) from None


def _compile(node, exp, table, index, where) -> Predicate:
    if isinstance(node, exp.Paren):
        return _compile(node.this, exp, table, index, where)
    if isinstance(node, exp.And):
        a, b = (_compile(n, exp, table, index, where) for n in (node.this, node.expression))
        return lambda img: _and(a(img), b(img))
    if isinstance(node, exp.Or):
        a, b = (_compile(n, exp, table, index, where) for n in (node.this, node.expression))
        return lambda img: _or(a(img), b(img))
    if isinstance(node, exp.Not):
        a = _compile(node.this, exp, table, index, where)
        return lambda img: _not(a(img))
    if isinstance(node, exp.Is):
        name, _ = _operand(node.this, exp, table, index, where)
        if not isinstance(node.expression, exp.Null):
            raise WhereError(f"unsupported: {node.sql(dialect='mysql')} (IS takes NULL or NOT NULL)")
        return lambda img: img.get(name, _ABSENT) is None
    if isinstance(node, exp.Escape):
        like = node.this
        if not isinstance(like, exp.Like):
            raise WhereError(f"unsupported: {node.sql(dialect='mysql')}")
        return _like(like, exp, table, index, where, _text_literal(node.expression, exp))
    if isinstance(node, exp.Like):
        return _like(node, exp, table, index, where, "\\")
    name, column = _operand(node.this, exp, table, index, where)
    norm = compared(column)
    if isinstance(node, exp.In):
        values = [_value(v, exp, column, name, where) for v in node.expressions]
        has_null = None in values
        wanted = [norm(v) for v in values if v is not None]

        def is_in(img):
            v = img.get(name)
            if v is None:
                return None
            v = norm(v)
            return True if any(_eq(v, w) for w in wanted) else (None if has_null else False)
        return is_in
    if isinstance(node, exp.Between):
        lo = _value(node.args["low"], exp, column, name, where)
        hi = _value(node.args["high"], exp, column, name, where)
        nlo, nhi = norm(lo), norm(hi)
        return lambda img: _and(_cmp(operator.ge, norm, img.get(name), nlo), _cmp(operator.le, norm, img.get(name), nhi))
    op = _COMPARISONS.get(type(node).__name__)
    if op is None:
        raise WhereError(f"unsupported: {node.sql(dialect='mysql')}")
    literal = norm(_value(node.expression, exp, column, name, where))
    return lambda img: _cmp(op, norm, img.get(name), literal)


_ABSENT = object()      # (a column the image lacks is not NULL: IS NULL is false for it)


def _operand(node, exp, table, index, where):
    if not isinstance(node, exp.Column):
        raise WhereError(f"unsupported: {node.sql(dialect='mysql')} (the left side is a column name)")
    name, column = _column(node, exp, table, index, where)
    if not kind(column):
        raise WhereError(f"column {where}.{name} cannot be compared with a literal (its type has no order or "
                         "equality --where knows)")
    return name, column


def _text_literal(node, exp) -> str:
    if not isinstance(node, exp.Literal) or not node.is_string:
        raise WhereError(f"LIKE takes a quoted pattern: {node.sql(dialect='mysql')}")
    return node.this


def _like(node, exp, table, index, where, escape: str) -> Predicate:
    name, column = _operand(node.this, exp, table, index, where)
    pattern = _text_literal(node.expression, exp)
    binary = kind(column) == "bytes"
    fold = not binary and not case_sensitive(column.charset)
    regex = _like_regex(pattern, escape, fold)
    negate = bool(node.args.get("negate"))

    def like(img):
        v = img.get(name)
        if v is None:
            return None
        if type(v) is bytes:
            v = v.decode("latin-1") if binary else v.decode("utf-8", "surrogateescape")
        elif type(v) is not str:
            v = str(v)
        hit = regex.fullmatch(v.casefold() if fold else v) is not None
        return hit != negate
    return like


def _like_regex(pattern: str, escape: str, fold: bool):
    """LIKE's pattern as a regular expression (`fold`: of case-folded text, as a _ci collation matches)."""
    out, i = [], 0
    if fold:
        pattern = pattern.casefold()
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


def _eq(a, b) -> bool:
    try:
        return a == b
    except TypeError:
        return False


def _cmp(op, norm, value, literal):
    if value is None or literal is None:
        return None
    try:
        return bool(op(norm(value), literal))
    except TypeError:       # (a zero date, given as text, against a date: no order between them)
        return False if op is not operator.ne else True


def _and(a, b):
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a, b):
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def _not(a):
    return None if a is None else not a


__all__ = ["Predicate", "WhereError", "columns", "compile_where", "parse"]
