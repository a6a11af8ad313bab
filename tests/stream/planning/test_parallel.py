"""The pieces of a --jobs run (stream.planning.parallel, reached through api): which inputs can be cut, the
cuts at transaction boundaries, one format for the base64 script, the schema state at each cut.

Expected values come from mariadb-binlog's output of the demo fixture (fixtures/demo/mariadb-binlog.txt: the
`# at` positions of its events, its GTID events') and from the workload the server ran (workload.sql)."""
from __future__ import annotations

import gzip
import re
import shutil

from binlog_spec import api
from binlog_spec.options import ReadOptions
from conftest import CORPUS, FIXTURES

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
MYSQL = CORPUS / "MyFlash" / "haha.000005"     # MySQL 5.7.18 (MANIFEST.tsv)

TEXT = (FIXTURES / "demo" / "mariadb-binlog.txt").read_text(encoding="utf-8")
#: Where mariadb-binlog says each event starts, and each GTID event (what opens a transaction).
POSITIONS = sorted({int(n) for n in re.findall(r"^# at (\d+)$", TEXT, re.M)})
GTIDS = [int(n) for n in re.findall(r"^# at (\d+)\n#.* end_log_pos \d+ CRC32 0x[0-9a-f]+ \tGTID ", TEXT, re.M)]


def _plan(paths, piece_size=400, ddl=False, one_format=False):
    refs = api.local_files(paths)
    assert refs is not None
    return api.plan_pieces(refs, piece_size, ddl=ddl, one_format=one_format, read=ReadOptions(),
                           tracker=api.schema_tracker)


def test_only_plain_local_files_can_be_cut(tmp_path):
    zipped = tmp_path / "mariadb-bin.000001.gz"
    with open(DEMO, "rb") as src, gzip.open(zipped, "wb") as dst:
        shutil.copyfileobj(src, dst)
    refs = api.local_files([str(DEMO)])
    assert [(r.name, r.size) for r in refs] == [(str(DEMO), DEMO.stat().st_size)]
    for paths in (["-"], [str(zipped)], [str(tmp_path)], [str(tmp_path / "missing")], [str(DEMO), "-"]):
        assert api.local_files(paths) is None, paths


def test_the_pieces_start_at_transactions_and_hold_every_event_once():
    assert len(GTIDS) == 8
    plan = _plan([str(DEMO)])
    assert len(plan.pieces) >= 2
    assert [p.start for p in plan.pieces[1:]] == [p.end for p in plan.pieces[:-1]]
    assert {p.start for p in plan.pieces[1:]} <= set(GTIDS)
    read = [ev.pos for p in plan.pieces for ev in api.piece_events(p) if not api.is_prefix(p, ev)
            and not ev.is_inner]
    assert read == POSITIONS


def test_the_base64_script_is_not_cut_over_files_of_two_formats():
    assert _plan([str(DEMO)], one_format=True).mariadb is True
    assert _plan([str(MYSQL), str(MYSQL)], piece_size=1000, one_format=True).mariadb is False
    assert _plan([str(DEMO), str(MYSQL)], one_format=True) is None
    assert _plan([str(DEMO), str(MYSQL)]).mariadb is None      # (the other outputs are cut)


def test_each_piece_starts_with_the_tables_the_ddl_before_it_made():
    plan = _plan([str(DEMO)], ddl=True)
    assert plan.pieces[0].schema_state is None          # the run's own schema, its notes
    schemas = {p.start: api.piece_schema(p, False) for p in plan.pieces[1:]}
    # workload.sql: CREATE TABLE customers, CREATE TABLE orders (GTIDs 0-1-2, 0-1-3), three transactions,
    # then ALTER TABLE customers ADD COLUMN vip (0-1-7) and one more transaction (0-1-8).
    first_dml, last = GTIDS[3], GTIDS[7]
    assert {first_dml, last} <= set(schemas)
    for start, schema in schemas.items():
        names = [c.name for c in schema.columns("shop", "customers") or ()]
        if start < GTIDS[2]:
            assert names == []
        elif start < last:
            assert names == ["id", "name", "email", "balance", "created"]
            assert [c.name for c in schema.columns("shop", "orders")] == ["id", "customer_id", "status", "total",
                                                                          "note"]
        else:
            assert names == ["id", "name", "email", "balance", "created", "vip"]
