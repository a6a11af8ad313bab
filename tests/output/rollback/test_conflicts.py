"""The rollback's conflict check (output.rollback.check): which undone rows a later transaction changed.

The reference is a naive check written here from the definition, in memory: every row change of the
file decoded (rows.decoder), the rows the window undoes keyed by their primary key, the first later
change of each. The check (hashed, spooled keys, sorted runs, rows of untouched tables never decoded)
must name exactly the same rows, whatever the hashes and the run sizes.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

import binlog_spec
from binlog_spec import api
from binlog_spec.output.rollback.key_index import KeyIndex
from binlog_spec.output.rollback.report import report_lines
from binlog_spec.output.rollback.check import ConflictCheck, _statement_targets
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions, filter_events
from binlog_spec.stream.transactions import Transactions

from conftest import FIXTURES

TYPES = FIXTURES / "types-full" / "mariadb-bin.000001"
DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
MINIMAL = FIXTURES / "types-minimal" / "mariadb-bin.000001"


def naive(path, undone_tx) -> set[tuple]:
    """(schema, table, key values, later op, later rows event position) of the first later change of
    each row the window's transactions (undone_tx(start position) -> bool) change: by definition."""
    tx, starts = Transactions(), {}
    start = None
    for ev in binlog_spec.open(path):
        if tx.step(ev)[0]:
            start = ev.pos
        starts[ev.pos] = start
    first_undone: dict[tuple, int] = {}
    found: dict[tuple, tuple] = {}
    for rc in api.read_rows(api.select_events(binlog_spec.open(path), FilterOptions(), [str(path)], SchemaTracker())):
        key_cols = [rc.table_def.names[i] for i in rc.table_def.row_key]
        after = {**rc.before, **rc.after} if rc.before and rc.after else rc.after   # MINIMAL: what it left
        images = [im for im in (rc.before, after) if im is not None]
        keys = {(rc.schema, rc.table, tuple(im[c] for c in key_cols)) for im in images}
        if undone_tx(starts[rc.pos]):
            for k in keys:
                first_undone.setdefault(k, rc.pos)
        else:
            for k in keys:
                if k in first_undone and k not in found:
                    found[k] = (rc.op.upper(), rc.pos)
    return {k + v for k, v in found.items()}


def checked(path, filters: FilterOptions, schema=True) -> tuple[set[tuple], list]:
    check = api.check_rollback(binlog_spec.open(path), filters, [str(path)], SchemaTracker() if schema else None)
    with check:
        found = list(check.conflicts())
    rows = {(c.schema, c.table, tuple(int(v) for v in c.key[1]), c.later_op, c.later_at[1])
            for c in found if c.kind == "row"}
    return rows, found


def positions(path) -> list[int]:
    tx = Transactions()
    return [ev.pos for ev in binlog_spec.open(path) if tx.step(ev)[0]]


@pytest.mark.parametrize("path", [TYPES, DEMO, MINIMAL], ids=["types-full", "demo", "types-minimal"])
def test_every_later_change_of_an_undone_row_is_found_as_a_naive_check_finds_it(path):
    starts = positions(path)
    assert len(starts) >= 8
    for cut in starts[2:] if len(starts) < 20 else starts[len(starts) // 4::len(starts) // 6]:
        expected = naive(path, lambda s, cut=cut: s < cut)
        got, _ = checked(path, FilterOptions(stop_position=cut))
        assert got == expected, cut


def test_the_types_file_cut_after_the_inserts_names_the_rows_its_later_updates_and_deletes_touch():
    # fixtures/types-full/workload.sql: after the inserts, each table's rows 3 and 6 are updated, 1 and 2
    # set to NULLs, 1 and 4 deleted; the cut is at 0-1-55 (binaries: 1 and 2 updated), 0-1-56 deletes 1 and 4.
    got, found = checked(TYPES, FilterOptions(stop_position=58797))
    binaries = {(k, op) for s, t, k, op, _ in got if t == "binaries"}
    assert binaries == {((1,), "UPDATE"), ((2,), "UPDATE"), ((4,), "DELETE")}   # 3 and 6: in 0-1-54, undone
    assert all(c.undone.gtid == "0-1-53" for c in found if c.table == "binaries")


@pytest.mark.parametrize("path", [TYPES, DEMO])
def test_hashes_that_all_collide_still_name_only_the_rows_changed_later(path, monkeypatch):
    monkeypatch.setattr("binlog_spec.output.rollback.check.hash", lambda data: 42, raising=False)
    monkeypatch.setattr("binlog_spec.output.rollback.key_index.RECENT", 3)       # sorted runs, merged, from the fourth key on
    starts = positions(path)
    cut = starts[len(starts) // 2]
    assert checked(path, FilterOptions(stop_position=cut))[0] == naive(path, lambda s: s < cut)


def test_small_runs_merge_and_every_key_is_still_found(monkeypatch):
    monkeypatch.setattr("binlog_spec.output.rollback.key_index.RECENT", 2)
    index = KeyIndex()
    for rec in range(1000):
        index.add(rec * 7919, rec)
    assert len(index.runs) < 12 and sum(len(r) for r in index.runs) + len(index.recent) == 1000
    for rec in range(1000):
        assert rec in index.candidates(rec * 7919)
    assert index.candidates(1000 * 7919 + 1) == [] or all(
        c < 1000 for c in index.candidates(1000 * 7919 + 1))


def test_a_window_chosen_by_transaction_filters_checks_the_transactions_left_out_between_and_after():
    # every other transaction undone (--exclude-gtids style): the ones between are later than those before
    starts = positions(TYPES)
    undone = set(starts[16::2])
    gtids = {}
    for ev in binlog_spec.open(TYPES):
        if ev.type_code == 162:           # GTID_EVENT (MariaDB)
            gtids[ev.pos] = ev.fields["gtid"]
    from binlog_spec.binlog.gtid import GtidSet
    keep = GtidSet.parse(",".join(gtids[s] for s in sorted(undone)))
    expected = naive(TYPES, lambda s: s in undone)
    assert expected
    assert checked(TYPES, FilterOptions(include_gtids=keep))[0] == expected


def test_a_select_that_holds_a_transaction_until_its_end_is_followed():
    """The last transaction before --stop-position is held by the filters until it ends."""
    starts = positions(DEMO)
    cut = starts[-2] + 1          # inside the second-to-last transaction: it is cut, left out
    expected = naive(DEMO, lambda s: s < starts[-2])
    assert checked(DEMO, FilterOptions(stop_position=cut))[0] == expected


def test_no_filter_undoes_everything_and_there_is_nothing_later():
    check = ConflictCheck()
    events = list(binlog_spec.open(DEMO))
    assert list(api.select_events(iter(events), FilterOptions(), [str(DEMO)], check=check)) == events
    assert check.count == 0


def test_the_events_kept_are_those_the_filters_keep_and_the_files_are_read_to_their_end():
    starts = positions(DEMO)
    filters = FilterOptions(stop_position=starts[len(starts) // 2])
    seen = []

    def counted():
        for ev in binlog_spec.open(DEMO):
            seen.append(ev.pos)
            yield ev
    check = ConflictCheck(SchemaTracker())
    kept = [ev.pos for ev in api.select_events(counted(), filters, [str(DEMO)], check=check)]
    assert kept == [ev.pos for ev in filter_events(binlog_spec.open(DEMO), filters, [str(DEMO)])]
    assert seen == [ev.pos for ev in binlog_spec.open(DEMO)] and check.done
    check.close()


def test_later_truncate_ddl_and_statements_name_the_touched_tables_they_change():
    touched = {("shop", "orders"): 0, ("shop", "customers"): 1, ("shop", "customers", "*"): 1}
    assert _statement_targets("TRUNCATE TABLE orders", "shop", "TRUNCATE", touched) == [("shop", "orders")]
    assert _statement_targets("ALTER TABLE shop.customers ADD COLUMN x INT", "", "ALTER", touched) == [
        ("shop", "customers")]
    assert _statement_targets("DROP TABLE IF EXISTS other", "shop", "DROP", touched) == []
    assert sorted(_statement_targets("DROP DATABASE shop", "", "DROP", touched)) == [
        ("shop", "customers"), ("shop", "orders")]
    assert _statement_targets("RENAME TABLE orders TO o2", "shop", "RENAME", touched) == [("shop", "orders")]
    assert _statement_targets("UPDATE orders SET total = 0 WHERE id = 1", "shop", "UPDATE", touched) == [
        ("shop", "orders")]
    assert _statement_targets("INSERT INTO other SELECT * FROM orders", "shop", "INSERT", touched) == []
    assert _statement_targets("DELETE FROM shop.customers", "x", "DELETE", touched) == [("shop", "customers")]


def test_a_later_alter_of_an_undone_table_is_a_conflict_of_its_own_kind():
    # demo: the ALTER TABLE customers comes after the first transactions (workload.sql)
    starts = positions(DEMO)
    alter = next(ev for ev in binlog_spec.open(DEMO) if ev.type_code == 2 and "ALTER" in ev.fields["query"])
    cut = max(s for s in starts if s <= alter.pos)
    _, found = checked(DEMO, FilterOptions(stop_position=cut))
    ddl = [c for c in found if c.kind == "DDL"]
    assert [(c.table, c.later_at[1]) for c in ddl] == [("customers", alter.pos)]
    assert "ALTER TABLE customers ADD COLUMN vip" in ddl[0].statement


def test_the_report_says_what_was_checked_and_done():
    _, found = checked(TYPES, FilterOptions(stop_position=58797))
    check = api.check_rollback(binlog_spec.open(TYPES), FilterOptions(stop_position=58797), [str(TYPES)],
                               SchemaTracker())
    with check:
        lines = list(report_lines(check, timezone.utc, forced=False))
    assert lines[0].startswith("conflict check: times in UTC; only the files given were checked")
    assert len(lines) == len(found) + 2 and lines[-1].startswith(f"error: {len(found)} conflicts")
    assert "nothing written (exit 5" in lines[-1]
    row = next(line for line in lines if "`coltypes`.`binaries` (`id`)=(4)" in line)
    assert row.startswith("conflict: row `coltypes`.`binaries` (`id`)=(4): undone INSERT of transaction 0-1-53 at ")
    assert "; later DELETE at " in row and datetime(2026, 1, 1, 0, 2, 30).strftime("%Y-%m-%d %H:%M:%S") in row
