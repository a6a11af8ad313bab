"""Run-time code generation, in one place: the template mechanism (a function's source is a list of
lines, nested with `indent`, compiled by `compile_function`), and the Python statements that decode
one column inline (`inline_source`). `binlog_spec.rows.decoder` compiles one row decoder per row
image layout with them, and `binlog_spec.rows.walker` one image walker per layout; nothing else in
the package compiles source."""
from __future__ import annotations

import struct
from typing import Any, Callable

from binlog_spec.rows.charsets import BINARY_COLLATION, _MYSQL_LATIN1_TABLE, _mysql_latin1, codec_for
from binlog_spec.rows.column_types import (DEFAULT_PACK_LENGTH, BLOB, Column, DOUBLE, ENUM, FLOAT, INT24, LONG,
                                           LONGLONG, LONG_BLOB, MEDIUM_BLOB, SET, SHORT, STRING, TINY, TINY_BLOB,
                                           VARCHAR, VAR_STRING, YEAR)
from binlog_spec.rows.column_sizes import layout
from binlog_spec.rows.values import COLUMN_TYPES


# --------------------------------------------------------------------------
# The template mechanism
#
# Generated code is built as a list of source lines, one statement or clause each; a block of
# lines nested in a clause is `indent(block, depth)`. `compile_function` compiles the lines of one
# `def` and returns the function.

def indent(lines: list[str], depth: int = 1) -> list[str]:
    """The lines, each indented `depth` levels (4 spaces a level) deeper."""
    pad = "    " * depth
    return [pad + line for line in lines]


def compile_function(lines: list[str], globs: dict[str, Any], name: str, where: str) -> Callable:
    """Compile source lines that define the function `name`, with `globs` as its globals (the
    objects the lines refer to), and return the function. `where` is the file name that tracebacks
    and profilers show for it; the source is kept as the function's `source` attribute (for
    debugging: print(function.source))."""
    source = "\n".join(lines) + "\n"
    exec(compile(source, where, "exec"), globs)  # noqa: S102
    function = globs[name]
    function.source = source
    return function


# --------------------------------------------------------------------------
# Inline fast paths
#
# rows.py compiles one Python function per row image layout (the present columns of a
# table) instead of calling `decode_value` once per value. `inline_source` gives the
# statements of one column. They are a fast path only: they skip the bounds checks and the
# error messages, so the caller must run them on `bytes` (never bytearray or memoryview),
# and must discard their result, and decode the image again with `decode_value`, when they
# raise anything or leave `pos` beyond the end of the buffer. Otherwise value and position
# are exactly `decode_value`'s. Column types without an inline form call their
# COLUMN_TYPES decoder directly.

_UNPACK: dict[str, Callable] = {fmt: struct.Struct(fmt).unpack_from
                                for fmt in ("<b", "<B", "<h", "<H", "<i", "<I", "<q", "<Q", "<f", "<d")}
#: (type code, unsigned) -> struct format of the fixed-size numbers.
_FIXED_FORMATS = {
    (TINY, False): "<b", (TINY, True): "<B", (SHORT, False): "<h", (SHORT, True): "<H",
    (LONG, False): "<i", (LONG, True): "<I", (LONGLONG, False): "<q", (LONGLONG, True): "<Q",
    (FLOAT, False): "<f", (FLOAT, True): "<f", (DOUBLE, False): "<d", (DOUBLE, True): "<d",
}


#: Name under which inline_source puts the MySQL latin1 translation table into the globals it fills;
#: its presence says the statements read the `text` variable (see inline_source).
LATIN1_TEXT_TABLE = "_mysql_latin1_table"


def _inline_text(col: Column, var: str, names: dict[str, Any], text: bool) -> list[str]:
    """The bytes buf[start:pos] -> `var`, as _text_or_bytes(data, col, pos) when it does not raise."""
    codec = codec_for(col.charset)
    if codec is None:
        return [f"{var} = buf[start:pos]"]
    if codec == "cp1252":
        if text:
            # `text` is buf.decode("latin-1"): one character per byte, so the same slice.
            names[LATIN1_TEXT_TABLE] = _MYSQL_LATIN1_TABLE
            return [f"{var} = text[start:pos]",
                    f"if not {var}.isascii():",
                    f"    {var} = {var}.translate({LATIN1_TEXT_TABLE})"]
        names["_mysql_latin1"] = _mysql_latin1
        return ["data = buf[start:pos]", f"{var} = data.decode('ascii') if data.isascii() else _mysql_latin1(data)"]
    return [f"{var} = buf[start:pos].decode({codec!r})"]


def _inline_length_prefixed(prefix: int) -> list[str]:
    """`start` <- where the bytes after a little-endian length of `prefix` (1-4) bytes begin;
    `pos` <- where they end."""
    if prefix == 1:
        length = "buf[pos]"
    else:
        length = " | ".join(f"buf[pos + {j}] << {8 * j}" if j else "buf[pos]" for j in range(prefix))
    return [f"start = pos + {prefix}", f"pos = start + ({length})"]


def fixed_format(col: Column) -> str | None:
    """The struct format ('<i', '<Q', '<d', ...) of a column whose value is one fixed-size
    little-endian number that `decode_value` returns as struct unpacks it; else None."""
    return _FIXED_FORMATS.get((col.type_code, bool(col.unsigned)))


def inline_source(col: Column, var: str, names: dict[str, Any], text: bool = False) -> list[str]:
    """Statements that decode one non-NULL value of `col` in `buf` at `pos` into `var` and
    advance `pos`, as `decode_value` does (see the contract above). Objects they refer to are
    added to `names` (the globals of the compiled function), under names made from `var`.
    With `text`, the statements may also read a variable `text` that holds
    buf.decode("latin-1"), for MySQL latin1 columns (LATIN1_TEXT_TABLE then is in `names`)."""
    code = col.type_code
    meta = col.meta if isinstance(col.meta, dict) else {}
    fmt = fixed_format(col)
    if fmt is not None:
        names[f"_unpack_{var}"] = _UNPACK[fmt]
        return [f"{var} = _unpack_{var}(buf, pos)[0]", f"pos += {layout(col)[0]}"]
    if code == INT24:
        size = layout(col)[0]
        return [f"{var} = int.from_bytes(buf[pos:pos + {size}], 'little', signed={not col.unsigned})", f"pos += {size}"]
    if code == YEAR:
        return [f"{var} = buf[pos]", f"{var} = 1900 + {var} if {var} else 0", f"pos += {layout(col)[0]}"]
    if code in (STRING, VARCHAR, VAR_STRING):
        max_length = meta.get("max_length")
        if (isinstance(max_length, int) and meta.get("real_type", STRING) not in (ENUM, SET)):
            lines = _inline_length_prefixed(1 if max_length < 256 else 2)
            if code == STRING and col.charset == BINARY_COLLATION:
                return lines + [f"{var} = buf[start:pos]", f"if len({var}) < {max_length}:",
                                f"    {var} += bytes({max_length} - len({var}))"]
            return lines + _inline_text(col, var, names, text)
    if code in (TINY_BLOB, BLOB, MEDIUM_BLOB, LONG_BLOB):
        prefix = meta.get("pack_length", DEFAULT_PACK_LENGTH.get(code))
        if isinstance(prefix, int) and 1 <= prefix <= 4:
            return _inline_length_prefixed(prefix) + _inline_text(col, var, names, text)
    decoder = COLUMN_TYPES.get(code)
    if decoder is None:
        return ["raise ValueError('unknown column type')"]      # decode_value says which
    names[f"_decode_{var}"], names[f"_col_{var}"] = decoder, col
    return [f"{var}, pos = _decode_{var}(buf, pos, _col_{var})"]
