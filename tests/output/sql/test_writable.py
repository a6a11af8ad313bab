"""output/sql/writable.py: the pre-pass's verdicts are those of the writers. Over the corpus, a rows event
it passes is one `statements.statement` writes (no SqlGenerationError), one it refuses is one the
writers refuse; and its quick pass (scan mode, no DDL) never passes what the exact pass refuses."""
from __future__ import annotations

import pytest

from binlog_spec import api
from binlog_spec.errors import BinlogError, RowRefusedError, SqlGenerationError
from binlog_spec.options import ReadOptions
from binlog_spec.output.sql import writable
from binlog_spec.output.sql.statements import SqlOptions, statement
from binlog_spec.rows.decoder import observe_schema, read_rows
from binlog_spec.rows.ddl.schema import SchemaTracker
from conftest import CORPUS, manifest_rows

MODES = {"forward": SqlOptions(), "rollback": SqlOptions(rollback=True), "replace": SqlOptions(replace=True)}


def _files() -> list:
    """The corpus files under 256 KiB (the larger ones repeat the same tables, at length)."""
    return [CORPUS / r["file"] for r in manifest_rows()
            if (CORPUS / r["file"]).is_file() and (CORPUS / r["file"]).stat().st_size < 256 << 10]


def _events(path):
    return observe_schema(api.read_events([str(path)], ReadOptions()), SchemaTracker())


def _until_fault(events):
    try:
        yield from events
    except BinlogError:
        return


def _refused_tables(path, options: SqlOptions) -> set:
    """The tables of the rows the writers refuse with a SqlGenerationError (not a RowRefusedError)."""
    refused = set()
    try:
        for rc in read_rows(_events(path)):
            try:
                statement(rc, options)
            except RowRefusedError:
                pass
            except SqlGenerationError:
                refused.add((rc.schema, rc.table))
    except BinlogError:
        pass
    return refused


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_pre_pass_refuses_the_tables_the_writers_refuse(mode):
    options, compared = MODES[mode], 0
    for path in _files():
        found = writable.problems(_until_fault(_events(path)), options)
        expected = _refused_tables(path, options)
        assert {(p.schema, p.table) for p in found} == expected, path
        compared += bool(expected)
    assert compared >= 10


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_quick_pass_never_passes_what_the_exact_pass_refuses(mode):
    options = MODES[mode]
    for path in _files():
        quick = writable.may_have_problems([str(path)], options, ReadOptions())
        exact = writable.problems(_until_fault(_events(path)), options)
        if exact:
            assert quick is not False, path


def test_an_insert_of_a_partial_image_is_no_problem_but_undoing_a_delete_of_one_is():
    from binlog_spec.binlog.event_types import DELETE, INSERT
    from binlog_spec.rows.column_types import Column
    from binlog_spec.rows.tablemap import TableDef
    table = TableDef(1, "d", "t", tuple(Column(type_code=3, meta={}, name=n) for n in "abc"), (True,) * 3,
                     has_names=True)
    partial = bytes([0b101])
    assert writable.causes(table, INSERT, 3, partial, None, MODES["forward"]) == ()
    assert writable.causes(table, INSERT, 3, partial, None, MODES["rollback"]) == ()
    assert writable.causes(table, DELETE, 3, partial, None, MODES["rollback"]) == (writable.BEFORE_IMAGE,)
    assert writable.causes(table, DELETE, 3, bytes([0b111]), None, MODES["rollback"]) == ()
