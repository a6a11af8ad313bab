"""Table definitions from TABLE_MAP_EVENTs: column types, metadata, names, signs and charsets."""
from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Any

from binlog_spec.binlog import spec
from binlog_spec.errors import MalformedEventError
from binlog_spec.rows.column_types import FLOAT_VALUED, Column

CT = spec.ColumnType

#: Columns that SIGNEDNESS has a bit for, in MySQL: `is_numeric_type()` of sql/field.h, which
#: Table_map_log_event::init_signedness_field (sql/log_event.cc) asks of each column's binlog type.
NUMERIC_TYPES = frozenset({CT.tiny, CT.short, CT.int24, CT.long, CT.longlong, CT.decimal, CT.newdecimal,
                           CT.float, CT.double})
#: MariaDB's rule differs: its init_signedness_field (sql/log_event_server.cc) gives a bit to every column
#: whose Binlog_type_info has a signedness, that is every Field_num. Field_year derives from Field_tiny,
#: so YEAR has a bit there, and every integer after a YEAR would take its neighbour's bit without it.
MARIADB_NUMERIC_TYPES = NUMERIC_TYPES | {CT.year}
#: Column types that the (DEFAULT_|COLUMN_)CHARSET fields count (is_character_type in sql/log_event.cc).
#: MySQL's list; MariaDB also counts GEOMETRY ("base class is blob for geom type").
CHARACTER_TYPES = frozenset({CT.string, CT.var_string, CT.varchar, CT.blob, CT.tiny_blob, CT.medium_blob,
                             CT.long_blob, CT.vector, CT.blob_compressed, CT.varchar_compressed})
MARIADB_CHARACTER_TYPES = CHARACTER_TYPES | {CT.geometry}


def real_type(type_code: int, meta: dict) -> int:
    """MYSQL_TYPE_STRING carries ENUM and SET; their real type is in the metadata."""
    if type_code == CT.string and "real_type" in meta:
        return meta["real_type"]
    return type_code


def _bits_msb_first(data: bytes, count: int) -> list[bool]:
    return [bool(data[i // 8] & (0x80 >> (i % 8))) for i in range(count)] if data else []


def _charsets(value: Any, count: int) -> list[int | None]:
    """DEFAULT_CHARSET {default_charset, exceptions[(index, charset)]} or COLUMN_CHARSET [ids]."""
    if isinstance(value, dict):
        out: list[int | None] = [value["default_charset"]] * count
        for pair in value.get("exceptions", []):
            if pair["first"] < count:
                out[pair["first"]] = pair["second"]
        return out
    return list(value) + [None] * (count - len(value))


@dataclass(frozen=True)
class TableDef:
    """What the row decoder needs to know of one table."""

    table_id: int
    schema: str
    table: str
    columns: tuple[Column, ...]
    nullable: tuple[bool, ...]
    #: Column indexes of the PRIMARY KEY: from the TABLE_MAP's metadata, else from DDL (schema.py).
    primary_key: tuple[int, ...] = ()
    visible: tuple[bool, ...] = ()
    has_names: bool = False
    has_signedness: bool = False
    extra: dict = field(default_factory=dict, compare=False)
    #: Column indexes of each UNIQUE key, from DDL (the binlog's metadata has none).
    unique_keys: tuple[tuple[int, ...], ...] = ()
    #: Per column, whether it is generated (`AS (expr)`), from DDL or --schema (a TABLE_MAP cannot
    #: tell): SQL writes no value for it. () when unknown.
    generated: tuple[bool, ...] = ()
    #: Per column, whether it is one of MariaDB's INVISIBLE columns, from DDL or --schema (the TABLE_MAP
    #: cannot tell): an INSERT names its columns, as a list without names skips it. () when unknown.
    invisible: tuple[bool, ...] = ()

    @functools.cached_property
    def names(self) -> list[str]:
        """Each column's name, `@N` (1-based) where it is unknown. Built once: do not change the list."""
        return [c.name or f"@{i + 1}" for i, c in enumerate(self.columns)]

    @functools.cached_property
    def holds_floats(self) -> bool:
        """Whether the rows of this table can hold a float (jsonenc.dumps's `floats`)."""
        return any(c.type_code in FLOAT_VALUED for c in self.columns)

    @functools.cached_property
    def writable_columns(self) -> list[tuple[int, str]]:
        """(index, name) of the columns a statement can give a value: invisible ones (COLUMN_VISIBILITY)
        are left out, and generated ones (`generated`: the server computes them and refuses a value,
        error 3105). Built once: do not change the list."""
        return [(i, n) for i, n in enumerate(self.names) if (not self.visible or self.visible[i])
                and not (self.generated and self.generated[i])]

    @property
    def row_key(self) -> tuple[int, ...]:
        """The columns that find one row: the primary key, else the first UNIQUE key whose columns
        are all NOT NULL (the TABLE_MAP's null bitmap); () when there is neither."""
        if self.primary_key:
            return self.primary_key
        for key in self.unique_keys:
            if key and all(i < len(self.nullable) and not self.nullable[i] for i in key):
                return key
        return ()

    @classmethod
    def from_event(cls, ev, mariadb: bool = False) -> "TableDef":
        """from_fields of a TABLE_MAP_EVENT; MalformedEventError at the event when its fields
        contradict each other (metadata, null bitmap or primary key of other columns)."""
        try:
            return cls.from_fields(ev.fields, mariadb)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            raise MalformedEventError(f"TABLE_MAP fields do not fit: {exc}", file=ev.file, offset=ev.pos,
                                      event_type=ev.type) from None

    @classmethod
    def from_fields(cls, f: dict, mariadb: bool = False) -> "TableDef":
        """Build from the plain fields of a TABLE_MAP_EVENT (see binlog/fields/bodies.py body_fields).

        `mariadb`: the file was written by MariaDB, whose charset metadata also covers GEOMETRY and whose
        SIGNEDNESS bitmap also covers YEAR.
        """
        types: list[int] = f["column_types"]
        metas: list[dict] = f["column_metadata"]
        n = len(types)
        real = [real_type(t, m) for t, m in zip(types, metas)]
        om = {o["field_type"]: o["value"] for o in f.get("optional_metadata", [])}

        numeric_types = MARIADB_NUMERIC_TYPES if mariadb else NUMERIC_TYPES
        numeric = [i for i, t in enumerate(real) if t in numeric_types]
        unsigned = [False] * n
        if "SIGNEDNESS" in om:
            for i, bit in zip(numeric, _bits_msb_first(om["SIGNEDNESS"], len(numeric))):
                unsigned[i] = bit

        character_types = MARIADB_CHARACTER_TYPES if mariadb else CHARACTER_TYPES
        char_cols = [i for i, t in enumerate(real) if t in character_types]
        enum_set_cols = [i for i, t in enumerate(real) if t in (CT.enum, CT.set)]
        charset: list[int | None] = [None] * n
        for key, cols in (("DEFAULT_CHARSET", char_cols), ("COLUMN_CHARSET", char_cols),
                          ("ENUM_AND_SET_DEFAULT_CHARSET", enum_set_cols),
                          ("ENUM_AND_SET_COLUMN_CHARSET", enum_set_cols)):
            if key in om:
                for i, cs in zip(cols, _charsets(om[key], len(cols))):
                    charset[i] = cs

        names: list[str | None] = list(om.get("COLUMN_NAME", [])) + [None] * n
        enum_values: list[tuple[bytes, ...] | None] = [None] * n
        set_values: list[tuple[bytes, ...] | None] = [None] * n
        for key, target, kind in (("ENUM_STR_VALUE", enum_values, CT.enum), ("SET_STR_VALUE", set_values, CT.set)):
            cols = [i for i, t in enumerate(real) if t == kind]
            for i, members in zip(cols, om.get(key, [])):
                target[i] = tuple(members["values"])

        if len(metas) != n or len(f["null_bitmap"]) < (n + 7) >> 3:
            raise ValueError(f"{len(metas)} column metadata and a null bitmap of {len(f['null_bitmap'])} bytes "
                             f"for {n} columns")
        if "SIMPLE_PRIMARY_KEY" in om:
            pk = tuple(om["SIMPLE_PRIMARY_KEY"])
        elif "PRIMARY_KEY_WITH_PREFIX" in om:
            pk = tuple(p["first"] for p in om["PRIMARY_KEY_WITH_PREFIX"])
        else:
            pk = ()
        if any(not 0 <= i < n for i in pk):
            raise ValueError(f"primary key column {max(pk)} of a table of {n} columns")
        visible = tuple(_bits_msb_first(om["COLUMN_VISIBILITY"], n)) if "COLUMN_VISIBILITY" in om else ()

        columns = tuple(
            Column(type_code=types[i], meta=metas[i], unsigned=unsigned[i], charset=charset[i],
                   enum_values=enum_values[i], set_values=set_values[i], name=names[i])
            for i in range(n))
        nullable = tuple(bool(f["null_bitmap"][i // 8] & (1 << (i % 8))) for i in range(n))
        return cls(table_id=f["table_id"], schema=f["schema"], table=f["table"], columns=columns,
                   nullable=nullable, primary_key=pk, visible=visible, has_names="COLUMN_NAME" in om,
                   has_signedness="SIGNEDNESS" in om)
