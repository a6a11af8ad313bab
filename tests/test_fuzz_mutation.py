"""The bounded, seeded mutation run (tests/fuzz/mutate.py) over the corpus and fixture binlogs: every
mutated file ends each library pipeline with success or a BinlogError, within 10 s and bounded memory,
and a truncated file delivers the original's events up to the cut, field for field.
BINLOG_SPEC_FUZZ_SECONDS sets the budget (default 90 s); `make fuzz` runs the coverage-guided fuzzer."""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import mutate  # noqa: E402
from seeds import seed_files  # noqa: E402

BUDGET_SECONDS = float(os.environ.get("BINLOG_SPEC_FUZZ_SECONDS", "90"))
SEED = 14


def test_mutated_binlogs_end_in_success_or_a_binlog_error_in_bounded_time_and_memory(tmp_path):
    seeds = seed_files()
    assert len(seeds) >= 50, "the corpus and fixtures give the mutation run its seeds"
    report = mutate.run(seeds, BUDGET_SECONDS, SEED, str(tmp_path))
    problems = "\n\n".join(f"{f.path} (from {f.seed_file}: {f.mutation}):\n{f.problem}" for f in report.failures[:5])
    assert not report.failures, f"{len(report.failures)} of {report.cases} cases failed:\n{problems}"
    assert report.cases >= 100 and report.truncations >= 20
    assert report.outcomes.get("ok", 0) > 0 and sum(report.outcomes.values()) > report.outcomes.get("ok", 0)


def test_the_mutation_run_is_reproducible_from_its_seed():
    import random
    data = seed_files()[-1].read_bytes()
    a = [mutate.mutate(data, random.Random(7)) for _ in range(3)]
    b = [mutate.mutate(data, random.Random(7)) for _ in range(3)]
    assert a == b and any(m[0] != data for m in a)


def test_a_case_that_hangs_is_stopped_and_reported(tmp_path, monkeypatch):
    """The watchdog: a worker that does not answer in time is killed and the case is a failure."""
    monkeypatch.setattr(mutate, "WALL_SECONDS", 0.0)
    report = mutate.run(seed_files()[-1:], 30, SEED, str(tmp_path), max_cases=1)
    assert report.cases == 1 and len(report.failures) == 1
    assert "no answer within" in report.failures[0].problem


def test_the_coverage_guided_fuzzer_runs_on_the_seeds(tmp_path):
    """`make fuzz` in small: atheris over a few seeds for a bounded number of runs, no bug kept."""
    import json
    import shutil
    import subprocess

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for p in seed_files(8 * 1024)[:5]:
        shutil.copyfile(p, corpus / p.name)
    r = subprocess.run([sys.executable, str(Path(mutate.__file__).with_name("fuzz_atheris.py")), str(tmp_path / "bugs"),
                        str(corpus), "-runs=200", "-max_len=8192", "-seed=14"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    stats = json.loads((tmp_path / "bugs/stats.json").read_text())
    assert stats["cases"] >= 200 and stats["bugs"] == {}, stats


def test_a_case_over_its_cpu_time_is_a_failure(tmp_path, monkeypatch):
    """The CPU timer of the worker (set from CASE_SECONDS, read by the worker from the environment)."""
    monkeypatch.setenv("BINLOG_SPEC_FUZZ_CASE_SECONDS", "0.001")
    report = mutate.run(sorted(seed_files(), key=lambda p: -p.stat().st_size)[:1], 60, SEED, str(tmp_path),
                        max_cases=1)
    assert report.cases == 1 and len(report.failures) == 1
    assert "s of CPU" in report.failures[0].problem
