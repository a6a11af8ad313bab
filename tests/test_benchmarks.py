"""The benchmark machinery on tiny inputs, so that `make bench-speed` cannot rot unseen.

The full benchmark is too slow for `make test`; these run its generator and its measuring script
end to end in a few seconds, and check what they produce with Debian's `mariadb-binlog`.
"""
from __future__ import annotations

import calendar
import json
import os
import re
import subprocess
import sys

from conftest import FIXTURES, ROOT

BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_speed  # noqa: E402
import speed_report  # noqa: E402
import workloads  # noqa: E402

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"


def _mariadb_binlog(*args: str) -> str:
    r = subprocess.run(["mariadb-binlog", *args], capture_output=True, check=True)
    return r.stdout.decode("utf-8", errors="replace")    # a latin1 column's bytes are printed raw


def test_oltp_workload_has_issue16_shape_as_mariadb_binlog_reads_it(tmp_path):
    env = dict(os.environ, BINLOG_SPEC_BENCH_CACHE=str(tmp_path))
    cmd = [sys.executable, str(BENCH / "workloads.py"), "oltp", "--scale", "0.001"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=120)
    meta = json.loads(first.stdout)
    assert "generating" in first.stderr
    path = meta["path"]
    assert path.startswith(str(tmp_path))
    # 1000 rows in one INSERT, 100 single-row UPDATEs and 100 DELETEs, each its own transaction.
    text = _mariadb_binlog("-v", path)
    assert len(re.findall(r"^### INSERT INTO `sbtest`\.`sbtest1`$", text, re.M)) == 1000
    assert len(re.findall(r"^### UPDATE `sbtest`\.`sbtest1`$", text, re.M)) == 100
    assert len(re.findall(r"^### DELETE FROM `sbtest`\.`sbtest1`$", text, re.M)) == 100
    assert len(re.findall(r"\tGTID 0-1-\d+ trans$", text, re.M)) == 201
    assert len(re.findall(r"\tXid = \d+$", text, re.M)) == 201
    # ANNOTATE_ROWS before every statement's rows, CRC32 on every event, the full row image
    # (the UPDATE's before image has all four columns), FULL metadata (column names in the TABLE_MAP).
    assert len(re.findall(r"\tAnnotate_rows:$", text, re.M)) == 201
    headers = re.findall(r"^#\d{6} .* end_log_pos \d+ (\S+) 0x[0-9a-f]{8} ", text, re.M)
    assert headers and set(headers) == {"CRC32"}
    before = text.split("### UPDATE `sbtest`.`sbtest1`\n### WHERE\n", 1)[1].split("### SET", 1)[0]
    assert [line.split("=")[0] for line in before.splitlines()] == ["###   @1", "###   @2", "###   @3", "###   @4"]
    assert "# Columns(`id` INT NOT NULL," in _mariadb_binlog("--print-table-metadata", path)
    # The second call finds it in the cache.
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(again.stdout)["path"] == path and "generating" not in again.stderr


def _generate(tmp_path, *args):
    env = dict(os.environ, BINLOG_SPEC_BENCH_CACHE=str(tmp_path))
    r = subprocess.run([sys.executable, str(BENCH / "workloads.py"), *args], env=env, capture_output=True,
                       text=True, check=True, timeout=180)
    return json.loads(r.stdout)


def _row_ops(text: str) -> dict:
    """(op, table) -> rows, as mariadb-binlog -v prints them."""
    ops: dict = {}
    for op, table in re.findall(r"^### (INSERT INTO|UPDATE|DELETE FROM) `shop`\.`(\w+)`$", text, re.M):
        ops[op.split()[0], table] = ops.get((op.split()[0], table), 0) + 1
    return ops


def _rows_event_bytes(path) -> dict:
    """db.table -> bytes of its rows events, from mariadb-binlog's `# at` positions and table ids."""
    text = _mariadb_binlog(str(path))
    names = {n: t.replace("`.`", ".") for t, n in re.findall(r"Table_map: `(\w+`\.`\w+)` mapped to number (\d+)",
                                                            text)}
    out: dict = {}
    for at, end, tid in re.findall(r"^# at (\d+)\n#\d{6} .* end_log_pos (\d+) .*(?:Write|Update|Delete)_rows: "
                                   r"table id (\d+)", text, re.M):
        out[names[tid]] = out.get(names[tid], 0) + int(end) - int(at)
    return out


def test_mixed_workload_has_issue29_shape_as_mariadb_binlog_reads_it(tmp_path):
    meta = _generate(tmp_path, "mixed", "--scale", "0.001")
    path = meta["path"]
    plan = workloads.mixed_plan(workloads.mixed_sizes(0.001))
    text = _mariadb_binlog("-v", path)
    ops = _row_ops(text)
    # 200 customers, 500 orders (1 to 20 per INSERT), 20 places; then 200 customer and 10 place UPDATEs,
    # the bulk UPDATEs of half the orders and a tenth of the customers; the bulk and single-row DELETEs.
    assert ops[("INSERT", "customers")] == 200 and ops[("INSERT", "orders")] == 500
    assert ops[("INSERT", "places")] == 20
    assert ops[("UPDATE", "customers")] == 200 + 20 and ops[("UPDATE", "orders")] == 250
    assert ops[("UPDATE", "places")] == 10
    assert ops[("DELETE", "orders")] == 10 + 50 and ops[("DELETE", "customers")] == 4
    assert ops[("DELETE", "places")] == 2
    assert sum(ops.values()) == meta["row_changes"] == plan["row_changes"]
    assert len(re.findall(r"\tXid = \d+$", text, re.M)) == meta["transactions"] == plan["transactions"]
    # The transactions' times spread over 12 hours from 2026-01-01 00:00 UTC; a sixth in the window.
    times = [calendar.timegm((2000 + int(d[:2]), int(d[2:4]), int(d[4:]), int(h), int(m), int(sec)))
             for d, h, m, sec in re.findall(r"^#(\d{6}) +(\d+):(\d\d):(\d\d) server id .*\tGTID 0-1-\d+ trans$",
                                            text, re.M)]
    assert len(times) == meta["transactions"]
    assert min(times) == workloads.MIXED_BASE and max(times) > workloads.MIXED_BASE + 11.9 * 3600
    lo, hi = (workloads.MIXED_BASE + s for s in workloads.MIXED_WINDOW)
    inside = sum(lo <= t < hi for t in times)
    assert abs(inside / meta["transactions"] - 1 / 6) < 0.02
    assert meta["window"] == {"start": "2026-01-01 05:00:00", "stop": "2026-01-01 07:00:00", "timezone": "UTC"}
    assert meta["small_table"] == "shop.places" and meta["metadata"] == "FULL"
    # FULL metadata: the column names and the ENUM/SET members are in the TABLE_MAPs.
    tables = _mariadb_binlog("--print-table-metadata", path)
    assert "# Columns(`id` INT UNSIGNED NOT NULL," in tables
    assert "`status` ENUM NOT NULL('new','active','vip','closed')" in tables   # mariadb-binlog's spelling


def test_mixed_minimal_workload_is_logged_with_minimal_metadata(tmp_path):
    full, minimal = workloads.mixed(0.001), workloads.WORKLOADS["mixed-minimal"](0.001)
    assert minimal.server_args == ("--binlog-row-metadata=MINIMAL",) and minimal.key() != full.key()
    meta = _generate(tmp_path, "mixed-minimal", "--scale", "0.001")
    assert meta["metadata"] == "MINIMAL" and meta["workload"] == "mixed-minimal"
    tables = _mariadb_binlog("--print-table-metadata", meta["path"])
    assert "# Columns(INT UNSIGNED NOT NULL," in tables and "`id`" not in tables
    assert sum(_row_ops(_mariadb_binlog("-v", meta["path"])).values()) == meta["row_changes"]


def test_mixed_workload_sql_writes_every_type_and_statement_kind():
    sz = {"customers": 30, "orders": 60, "updates": 40, "places": 20}
    sql = "".join(workloads.mixed_sql(sz))
    ddl = workloads.MIXED_DDL
    for t in workloads.MIXED_TYPES:
        assert t in ddl, t
    for statement in ("INSERT INTO shop.customers VALUES", "INSERT INTO shop.places VALUES",
                      "INSERT INTO shop.orders (id", "UPDATE shop.customers SET balance=",
                      "UPDATE shop.customers SET profile=JSON_SET", "UPDATE shop.places SET seen=",
                      "UPDATE shop.orders SET state='shipped'", "DELETE FROM shop.orders WHERE id BETWEEN",
                      "DELETE FROM shop.customers WHERE id % 50", "DELETE FROM shop.places WHERE id=",
                      "ST_GeomFromText('POINT(", "ST_GeomFromText('LINESTRING(", "X'", "b'"):
        assert statement in sql, statement
    # one SET TIMESTAMP per transaction, rising, the last near 12 hours on
    stamps = [float(x) for x in re.findall(r"^SET TIMESTAMP=([\d.]+);$", sql, re.M)][1:]   # [0]: the DDL
    assert len(stamps) == workloads.mixed_plan(sz)["transactions"] == len(list(workloads.mixed_transactions(sz)))
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert workloads.MIXED_BASE + 11 * 3600 < stamps[-1] < workloads.MIXED_BASE + workloads.MIXED_SPAN
    # non-ASCII text in utf8mb4 and latin1 columns, and quotes escaped
    assert "渡辺" in sql or "山田" in sql
    assert "O\\'Brien" in sql or "d\\'Arc" in sql


def test_workload_cache_key_follows_the_generator_source():
    w = workloads.oltp(0.001)
    assert w.key() == workloads.oltp(0.001).key()
    assert w.key() != workloads.oltp(0.002).key()
    changed = workloads.Workload(w.name, w.params, w.sql, w.rows_left, w.counts,
                                 sources=(*w.sources, workloads.range_statements))
    assert changed.key() != w.key()
    # the server options and the constants the SQL is written from key it too
    m = workloads.mixed(0.001)
    assert m.key() != workloads.mixed(0.001, "MINIMAL").key()
    other = workloads.Workload(m.name, m.params, m.sql, m.rows_left, m.counts,
                               sources=(*m.sources[:-1], ("other names",)), server_args=m.server_args)
    assert other.key() != m.key()


def test_figure_ratio_is_median_of_back_to_back_pairs():
    def run(wall):
        return {"wall_s": wall, "cpu_s": wall, "maxrss_mib": 10.0, "load1": 1.0}
    rounds = [{"rows@0": run(10.0), "mb-v@0": run(2.0), "mb-v@1": run(100.0)},
              {"rows@0": run(9.0), "mb-v@0": run(1.0), "mb-v@1": run(100.0)},
              {"rows@0": run(30.0), "mb-v@0": run(10.0), "mb-v@1": run(100.0)}]
    ctx = {"commands": ["rows", "mb-v"]}
    fig = {f["key"]: f for f in bench_speed.summarise(rounds, ctx)["figures"]}
    # Each round's own ratio (5, 9, 3), never the mb-v run of another group (100 s).
    assert fig["rows"]["ratios"] == [5.0, 9.0, 3.0]
    assert fig["rows"]["ratio"] == 5.0 and fig["rows"]["met"] is False
    assert fig["rows"]["ours_s"] == 10.0 and fig["rows"]["ref_s"] == 2.0
    assert fig["sql2"]["available"] is False


def test_filtered_figures_window_and_table_come_from_the_workload_or_the_file():
    facts = {"bytes": 1000, "total_bytes": 1000, "first_event": "2026-01-01T00:00:00Z",
             "last_event": "2026-01-01T06:00:00Z", "tables": {"a.big": 900, "a.small": 60, "a.mid": 100}}
    # a file: the middle sixth of its times, its table of the fewest bytes
    w = bench_speed.time_window({}, facts)
    assert (w["start"], w["stop"], w["timezone"]) == ("2026-01-01 02:30:00", "2026-01-01 03:30:00", "UTC")
    t = bench_speed.small_table({}, facts)
    assert t["name"] == "a.small" and t["share"] == 0.06
    # a workload: its own window and table
    meta = workloads.mixed(0.001).counts
    assert bench_speed.time_window(meta, facts)["start"] == "2026-01-01 05:00:00"
    assert bench_speed.small_table(meta, {**facts, "tables": {"shop.places": 10}})["name"] == "shop.places"
    # one table, or a few seconds of events: no figure
    assert bench_speed.small_table({}, {**facts, "tables": {"a.big": 900}}) is None
    assert bench_speed.time_window({}, {**facts, "last_event": "2026-01-01T00:00:05Z"}) is None


def test_rollback_misses_its_target_above_100_mb():
    def run(wall, mib):
        return {"wall_s": wall, "cpu_s": wall, "maxrss_mib": mib, "load1": 1.0}
    g = next(i for i, group in enumerate(bench_speed.GROUPS) if "rollback" in group)
    fig = lambda mib: {f["key"]: f for f in bench_speed.summarise(  # noqa: E731
        [{f"rollback@{g}": run(1.0, mib), f"mb-flashback@{g}": run(1.0, 10)}],
        {"commands": ["rollback", "mb-flashback"]})["figures"]}["rollback"]
    assert fig(50)["met"] is True and fig(200)["met"] is False


def test_bench_speed_measures_every_figure_on_the_demo_file(tmp_path):
    out = tmp_path / "speed.json"
    r = subprocess.run([sys.executable, str(BENCH / "bench_speed.py"), "--binlog", str(DEMO), "--rounds", "1",
                        "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    help_text = subprocess.run([bench_speed.cli_path(), "rows", "--help"], capture_output=True, text=True).stdout
    jobs = "--jobs" in help_text
    assert rec["jobs_available"] is jobs
    [part] = rec["workloads"]
    figures = {f["key"]: f for f in part["summary"]["figures"]}
    assert list(figures) == [f[0] for f in bench_speed.FIGURES]
    for key, f in figures.items():
        if key == "jobs2" and not jobs:
            assert f["available"] is False
            continue
        assert f["available"] and f["rounds"] == 1 and f["ratio"] > 0 and f["ours_s"] > 0 and f["ref_s"] > 0
        assert ("met" in f) == (f["target"] is not None)
    memory = {m["command"] for m in part["summary"]["memory"]}
    assert memory == {n for n in bench_speed.COMMANDS if jobs or n not in bench_speed.TWO_CPUS}
    assert all(m["peak_mb"] > 1 for m in part["summary"]["memory"])
    # P is a transaction start near the end, as mariadb-binlog sees it.
    pos = part["tail"]["pos"]
    assert 0 < pos < DEMO.stat().st_size
    assert re.search(rf"^# at {pos}\n#\d{{6}} .*\tGTID 0-1-\d+", _mariadb_binlog(str(DEMO)), re.M)
    # the filtered figures: the middle sixth of the file's times, its smallest table (by mariadb-binlog's rows)
    assert part["window"]["timezone"] == "UTC" and part["window"]["start"] < part["window"]["stop"]
    assert part["table"]["name"] == min(_rows_event_bytes(DEMO).items(), key=lambda kv: kv[1])[0]
    # The printed section: the CPU first, every figure with its target, the memory table, the profile.
    assert r.stdout.startswith(f"**CPU: {rec['machine']['cpu']}**") and rec["machine"]["cpu_model"] in r.stdout
    for key, _ours, _ref, _t, target_text in bench_speed.FIGURES:
        assert bench_speed.FIGURE_TITLES[key] in r.stdout
        assert target_text in r.stdout
    assert "not available" in r.stdout if not jobs else "not available" not in r.stdout
    assert "sql --sql2 --rollback FILE` | " in r.stdout and "mariadb-binlog --flashback FILE` | " in r.stdout
    assert f"`START` – `STOP` = {part['window']['start']} – {part['window']['stop']} UTC" in r.stdout
    assert "`T` = `shop.orders`" in r.stdout
    # the key figure (issue 31's --key): the table's first row's integer key
    assert part["key"]["table"] == "shop.orders" and int(part["key"]["value"]) >= 0
    assert f"`KT` = `shop.orders`, `KV` = `{part['key']['value']}`" in r.stdout
    # a profile of each command that misses its target, `rows` first, one process each
    missed = [f["ours"] for f in part["summary"]["figures"] if f["available"] and f.get("met") is False
              and f["ours"] in bench_speed.PROFILED]
    assert [p["command"] for p in part["profile"]] == (missed if "rows" in missed else ["rows", *missed])
    for p in part["profile"]:
        assert len(p["top_tottime"]) == bench_speed.PROFILE_TOP
        argv = speed_report.command_argv(p["command"])    # P, START, STOP, T as letters
        assert f"cProfile of `binlog-spec {argv} --jobs 1`" in r.stdout
    assert f"Top {bench_speed.PROFILE_TOP} by own time" in r.stdout
