"""Row changes as `mysqlbinlog -v` / `-vv` and `mariadb-binlog -v` / `-vv` print them.

Both tools print every row of a rows event as pseudo-SQL comment lines::

    ### UPDATE `db`.`t`
    ### WHERE
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ###   @2='old' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */
    ### SET
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ###   @2='new' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */

`render_row_change(rc)` gives these lines (without newlines) for one
`rows.RowChange`; `render_rows(row_changes)` for a stream of them;
(tests/mysqlbinlog_output.py cuts the `###` blocks out of a saved tool output.)

The tools know only the TABLE_MAP: no column names, no signs (before 8.0's
optional metadata, and they ignore it anyway). So the renderer goes back from
our decoded values to the raw stored value and prints that the way the tool
does, in its own view:

* integers as signed, the unsigned reading added in parentheses when the
  signed one is negative: an INT UNSIGNED 4294967295 is ``-1 (4294967295)``
  (at -v and -vv alike);
* ENUM as its 1-based index, SET as the bits of its stored bytes (b'...'),
  BIT as b'...' of its declared width;
* DATE as 'YYYY:MM:DD', TIMESTAMP as the epoch seconds (TIMESTAMP2 with the
  fraction), YEAR as 1900 + byte (so YEAR 0000 prints 1900), DATETIME2 and
  TIME2 quoted;
* FLOAT as C's ``%-20g`` (padded to 20 characters), DOUBLE as ``%-.20g``;
* strings, BLOBs (and MariaDB GEOMETRY) as their stored bytes, quoted, with
  control bytes escaped;
* MySQL JSON as the quoted JSON text; MySQL 9 VECTOR as [%.5e,...].

Where the tools differ, a `Dialect` says which variant to print; `dialect()`
picks it from the flavor and the tool's version (the version boundaries marked
"~" are the nearest releases whose source was checked, not the exact change):

============================  =======================================================
quoting of strings            MySQL 8.0+: \\b \\f \\n \\r \\t \\\\ \\' and \\xNN for the
                              other bytes below 0x20 ("table"); MySQL ~5.7: \\xNN for
                              bytes below 0x20 and for ' and \\ ("hex-quotes"; late
                              5.6 releases do this too); MySQL 5.1-5.6 and MariaDB:
                              \\xNN for bytes below 0x20 only ("control")
db and table names            backquoted, backquotes doubled; MySQL before 5.1.67 /
                              5.5.29 / 5.6.8 printed them bare
the comment of a NULL column  MySQL before ~5.7 (and MariaDB before ~10.2) print the
                              type of the previous non-NULL column of the same image
                              there (``type=N`` when there is none): only printing a
                              value set the type string
old DATETIME (type 12)        MySQL unquoted, MariaDB quoted
old TIME (type 11)            MySQL reads the 3 bytes unsigned, MariaDB prints a sign
GEOMETRY                      MariaDB prints the stored bytes (SRID + WKB); MySQL
                              prints "!! Don't know how to handle column type=255
                              meta=4 (0004)" and stops printing the event
MariaDB COMPRESSED columns    the stored compressed record (see `_mariadb_compressed`)
============================  =======================================================

Not reproduced: MySQL 5.7 printed JSON as the quoted *binary* JSON document
(which a decoded value does not give back; it is rendered as 8.0 prints it);
PARTIAL_UPDATE_ROWS JSON diffs (`rows` does not decode them); a non-NULL JSON
of length 0 (values.py gives None for it, the same as SQL NULL); MySQL 9
VECTOR(N) takes N from the TABLE_MAP's dimensionality metadata, which TableDef
does not keep, so N is the value's own length (0 for NULL).

Bytes the tool writes as they are (>= 0x20) come back as text decoded as
UTF-8 with ``surrogateescape``, so a latin1 or binary value compares equal to
a saved output file read the same way (tests/mysqlbinlog_output.py).

Sources: sql/log_event.cc (`log_event_print_value`, `my_b_write_quoted`,
`my_b_write_bit`, `print_verbose_one_row`, `print_verbose`) of MySQL 5.6,
5.7, 8.0 and 9.x, and sql/log_event_client.cc of MariaDB.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.output.verbose_values import (Dialect, _cannot_print, _print_type, _resolve, _type_string,
                                               _value_text, dialect, raw_meta)

__all__ = ["Dialect", "dialect", "render_row_change", "render_rows", "raw_meta"]

_OP_WORDS = {"insert": ("INSERT INTO", "SET", None), "delete": ("DELETE FROM", "WHERE", None),
             "update": ("UPDATE", "WHERE", "SET")}


# --------------------------------------------------------------------------
# Rows (print_verbose_one_row, print_verbose)


def _quote_name(name: str, d: Dialect) -> str:
    return quote_identifier(name) if d.quote_identifiers else name


def _image_lines(image: dict[str, Any], table: Any, d: Dialect, verbosity: int) -> tuple[list[str], bool]:
    """The column lines of one row image; False when the tool would stop inside it."""
    lines: list[str] = []
    index = {name: i for i, name in enumerate(table.names)}
    typestr = ""
    for name, value in sorted(image.items(), key=lambda kv: index[kv[0]]):
        i = index[name]
        col = table.columns[i]
        meta = raw_meta(col)
        is_null = value is None
        # Before ~5.7 a NULL is printed without looking at its type at all.
        stop = None if is_null and d.null_type_carryover else _cannot_print(col, meta, d)
        if stop is not None:
            lines.append(f"###   @{i + 1}={stop}")
            return lines, False
        if is_null:
            text = "NULL"
            if not d.null_type_carryover:
                typestr = _type_string(col, meta, d)
        else:
            text = _value_text(value, col, meta, d)
            typestr = _type_string(col, meta, d, value)
        line = f"###   @{i + 1}={text}"
        if verbosity > 1:
            shown = typestr if typestr else f"type={_print_type(col, meta)[0]}"
            nullable = int(bool(table.nullable[i])) if i < len(table.nullable) else 0
            line += f" /* {shown} meta={meta} nullable={nullable} is_null={int(is_null)} */"
        lines.append(line)
    return lines, True


def _render(rc: Any, d: Dialect, verbosity: int) -> tuple[list[str], bool]:
    command, first, second = _OP_WORDS[rc.op]
    table = rc.table_def
    lines = [f"### {command} {_quote_name(table.schema, d)}.{_quote_name(table.table, d)}",
             f"### {first}"]
    image = rc.after if rc.op == "insert" else rc.before
    body, complete = _image_lines(image or {}, table, d, verbosity)
    lines += body
    if complete and second is not None:
        lines.append(f"### {second}")
        body, complete = _image_lines(rc.after or {}, table, d, verbosity)
        lines += body
    return lines, complete


def render_row_change(rc: Any, verbosity: int = 2, flavor: str | Dialect = "mysql",
                      version: str | tuple[int, ...] | None = None) -> list[str]:
    """The `###` lines the tool prints for one row change (a `rows.RowChange`, rendered from its
    values and `rc.table_def`). `verbosity` is 1 for -v, 2 for -vv; `flavor` "mysql" or
    "mariadb" (or a `Dialect`); `version` the tool's version, None for a current one."""
    return _render(rc, _resolve(flavor, version), verbosity)[0]


def render_rows(row_changes: Iterable[Any], verbosity: int = 2, flavor: str | Dialect = "mysql",
                version: str | tuple[int, ...] | None = None) -> Iterator[list[str]]:
    """One block of lines per row change, as `render_row_change`; when the tool would stop printing
    an event (a value it cannot print), the rest of that event's rows are left out as it does."""
    d = _resolve(flavor, version)
    stopped = None
    for rc in row_changes:
        if stopped == (rc.file, rc.pos):
            continue
        lines, complete = _render(rc, d, verbosity)
        if not complete:
            stopped = (rc.file, rc.pos)
        yield lines
