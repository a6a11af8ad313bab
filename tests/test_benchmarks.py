"""The benchmark machinery on tiny inputs, so that `make bench-speed` cannot rot unseen.

The full benchmark is too slow for `make test`; these run its generator and its measuring script
end to end in a few seconds, and check what they produce with Debian's `mariadb-binlog`.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import FIXTURES, ROOT

BENCH = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_speed  # noqa: E402
import workloads  # noqa: E402

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"


def _mariadb_binlog(*args: str) -> str:
    r = subprocess.run(["mariadb-binlog", *args], capture_output=True, text=True, check=True)
    return r.stdout


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


def test_workload_cache_key_follows_the_generator_source():
    w = workloads.oltp(0.001)
    assert w.key() == workloads.oltp(0.001).key()
    assert w.key() != workloads.oltp(0.002).key()
    changed = workloads.Workload(w.name, w.params, w.sql, w.rows_left, w.counts,
                                 sources=(*w.sources, workloads.range_statements))
    assert changed.key() != w.key()


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


def test_bench_speed_measures_every_figure_on_the_demo_file(tmp_path):
    out = tmp_path / "speed.json"
    r = subprocess.run([sys.executable, str(BENCH / "bench_speed.py"), "--binlog", str(DEMO), "--rounds", "1",
                        "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(out.read_text())
    help_text = subprocess.run([bench_speed.cli_path(), "rows", "--help"], capture_output=True, text=True).stdout
    jobs = "--jobs" in help_text
    assert rec["jobs_available"] is jobs
    figures = {f["key"]: f for f in rec["summary"]["figures"]}
    assert list(figures) == [f[0] for f in bench_speed.FIGURES]
    for key, f in figures.items():
        if key == "jobs2" and not jobs:
            assert f["available"] is False
            continue
        assert f["available"] and f["rounds"] == 1 and f["ratio"] > 0 and f["ours_s"] > 0 and f["ref_s"] > 0
        assert ("met" in f) == (f["target"] is not None)
    memory = {m["command"] for m in rec["summary"]["memory"]}
    assert memory == {n for n in bench_speed.COMMANDS if jobs or n not in bench_speed.TWO_CPUS}
    assert all(m["peak_mb"] > 1 for m in rec["summary"]["memory"])
    # P is a transaction start near the end, as mariadb-binlog sees it.
    pos = rec["tail"]["pos"]
    assert 0 < pos < DEMO.stat().st_size
    assert re.search(rf"^# at {pos}\n#\d{{6}} .*\tGTID 0-1-\d+", _mariadb_binlog(str(DEMO)), re.M)
    # The printed section: every figure with its target, the memory table, the profile.
    for key, _ours, _ref, _t, target_text in bench_speed.FIGURES:
        assert bench_speed.FIGURE_TITLES[key] in r.stdout
        assert target_text in r.stdout
    assert "not available" in r.stdout if not jobs else "not available" not in r.stdout
    assert "sql --sql2 --rollback FILE` | " in r.stdout and "mariadb-binlog --flashback FILE` | " in r.stdout
    # a profile of each command that misses its target (of rows when none does), one process each
    missed = [f["ours"] for f in rec["summary"]["figures"] if f["available"] and f.get("met") is False
              and f["ours"] in bench_speed.PROFILED]
    assert [p["command"] for p in rec["profile"]] == (missed or ["rows"])
    for p in rec["profile"]:
        assert len(p["top_tottime"]) == bench_speed.PROFILE_TOP
        argv = " ".join(bench_speed.COMMANDS[p["command"]][1]).replace("{P}", "P")    # the seek's position
        assert f"cProfile of `binlog-spec {argv} --jobs 1`" in r.stdout
    assert f"Top {bench_speed.PROFILE_TOP} by own time" in r.stdout
