"""What the filters kept (stream.filters.filter_events counts it as it runs), and what to say when they
kept nothing: that they did, and which --table / --database (or their --exclude- forms) names no table
or schema the files have, with the nearest names that they do have.

A `Selection` is merged over the pieces of a --jobs run (`merge`). Its cost is a counter per kept event
and, under a table or schema filter, a set insertion per TABLE_MAP and a substring search per statement
for the names not met yet."""
from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS, QUERY_EVENTS, ROWS_EVENTS
from binlog_spec.stream.filters import _table_matches
from binlog_spec.stream.transactions import is_begin, is_commit

ET = spec.EventType
_GLOB = frozenset("*?[")

#: FilterOptions field -> its command-line option (what the notes name).
OPTIONS = {"databases": "--database", "exclude_databases": "--exclude-database", "tables": "--table",
           "exclude_tables": "--exclude-table", "include_gtids": "--include-gtids",
           "exclude_gtids": "--exclude-gtids", "server_ids": "--server-id",
           "exclude_server_ids": "--exclude-server-id", "start_datetime": "--start-datetime",
           "stop_datetime": "--stop-datetime", "start_position": "--start-position",
           "stop_position": "--stop-position", "start_gtid": "--start-position", "stop_gtid": "--stop-position",
           "ops": "--op", "thread_ids": "--thread-id"}


def _literal(glob: str) -> bool:
    return not _GLOB & set(glob)


@dataclass
class Selection:
    """What the filters of a run kept: `kept` events besides the control events (FORMAT_DESCRIPTION,
    ROTATE, ... which are always kept), `rows` of them rows events; under a table or schema filter, the
    (schema, table) of every TABLE_MAP read, the schemas read (TABLE_MAPs, statements' default database),
    and the literal names of the filters that a statement's text holds."""

    kept: int = 0
    rows: int = 0
    tables: set = field(default_factory=set)
    schemas: set = field(default_factory=set)
    in_statements: set = field(default_factory=set)

    def count(self, events: Iterable[Event]) -> Iterator[Event]:
        """The kept events, counted."""
        control, rows = CONTROL_EVENTS, ROWS_EVENTS
        for ev in events:
            code = ev.type_code
            if code not in control and not ev.replayed:     # (a lane counted those it took: stream.skipping)
                self.kept += 1
                if code in rows:
                    self.rows += 1
            yield ev

    def watcher(self, options):
        """What filter_events calls with every TABLE_MAP and statement event it reads (kept or not) and
        its type code, to learn the names the files have; None when no table or schema filter is given."""
        globs = (*options.tables, *options.exclude_tables, *options.databases, *options.exclude_databases)
        if not globs:
            return None
        wanted = set()          # the names of literal globs, looked for in the statements' text
        for glob in globs:
            if _literal(glob):
                wanted.update(part.encode("utf-8") for part in glob.split(".", 1) if part)
        wanted -= {n.encode("utf-8") for n in self.in_statements}
        pattern = [_identifiers(wanted)]
        tables, schemas, found = self.tables, self.schemas, self.in_statements
        table_map, queries = ET.table_map_event, QUERY_EVENTS

        def see(ev: Event, code: int) -> None:
            if (code != table_map and code not in queries) or ev.error is not None:
                return
            if code == table_map:       # (fields the filters read too: built once)
                fields = ev.fields
                tables.add((fields["schema"], fields["table"]))
                return
            if is_begin(ev) or is_commit(ev):
                return
            schemas.add(ev.fields.get("db", "") or "")
            if pattern[0] is not None:
                named = set(pattern[0].findall(ev.statement_bytes()))
                if named:
                    found.update(n.decode("utf-8") for n in named)
                    wanted.difference_update(named)
                    pattern[0] = _identifiers(wanted)
        return see

    def merge(self, other: "Selection") -> None:
        """--jobs: another piece's selection added to this one."""
        self.kept += other.kept
        self.rows += other.rows
        self.tables |= other.tables
        self.schemas |= other.schemas
        self.in_statements |= other.in_statements

    # -- what is said --------------------------------------------------------------------------------
    def notes(self, options, rows: bool = False) -> list[str]:
        """What to say of the run's selection: that the filters kept nothing (`rows`: the output is made
        of rows events, so a run that kept statements only is empty too), and each name of a table or
        schema filter that the files do not have (whatever the others kept); [] when all is well."""
        lines = []
        given = ", ".join(dict.fromkeys(OPTIONS[name] for name in OPTIONS if _given(options, name)))
        if not self.kept:
            lines.append(f"the filters ({given}) kept no transaction and no statement: the output has none")
        elif rows and not self.rows:
            lines.append(f"the filters ({given}) kept no rows event, only statements: the output has no row "
                         "change")
        return lines + self.unknown_names(options)

    def names(self) -> tuple[set[tuple[str, str]], set[str]]:
        """The (schema, table) pairs and the schemas read."""
        return self.tables, self.schemas | {s for s, _ in self.tables}

    def unknown_names(self, options) -> list[str]:
        """A note for each table or schema glob that no TABLE_MAP or statement read names, with the
        nearest names that they do."""
        lines = []
        tables, schemas_read = self.names()
        names = sorted(f"{s}.{t}" for s, t in tables)
        for option, globs in (("--table", options.tables), ("--exclude-table", options.exclude_tables)):
            for glob in globs:
                if any(_table_matches(s, t, glob) for s, t in tables):
                    continue
                if _literal(glob) and glob.rsplit(".", 1)[-1] in self.in_statements:
                    continue
                pool = names if "." in glob else sorted({t for _, t in tables})
                what = "or statement read names this table" if _literal(glob) else "read names a table it matches"
                lines.append(f"{option} {glob}: no TABLE_MAP {what}" + _nearest(glob, pool))
        schemas = sorted(s for s in schemas_read if s)
        for option, globs in (("--database", options.databases), ("--exclude-database", options.exclude_databases)):
            for glob in globs:
                if any(fnmatch.fnmatchcase(s, glob) for s in schemas_read):
                    continue
                if _literal(glob) and glob in self.in_statements:
                    continue
                what = "names this schema" if _literal(glob) else "names a schema it matches"
                lines.append(f"{option} {glob}: no TABLE_MAP or statement read {what}" + _nearest(glob, schemas))
        return lines


def _identifiers(names: set[bytes]):
    """A regular expression that finds these names (UTF-8) as whole identifiers in a statement's bytes
    (not in `orders` for `order`; a byte of a non-ASCII character is part of an identifier); None for
    no name."""
    if not names:
        return None
    words = b"|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rb"(?<![\w$\x80-\xff])(?:" + words + rb")(?![\w$\x80-\xff])")


def _given(options, name: str) -> bool:
    value = getattr(options, name)
    return value is not None and value != () and value != frozenset()


def _nearest(glob: str, names: list[str]) -> str:
    close = difflib.get_close_matches(glob, names, n=3, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(glob.lower(), names, n=3, cutoff=0.6)
    return f" (nearest: {', '.join(close)})" if close else ""
