"""Random tables and workloads, replayed on a real MariaDB: every output of binlog-spec gives the tables
the server has (issue 27, section 2; the round is proof_round.py, the generator random_schema.py).

- A seeded, bounded run: ROUNDS seeds, each setting of random_schema.SETTINGS in turn (FULL and MINIMAL
  row metadata, FULL, NOBLOB and MINIMAL row images), on one server.
- Every reproducer in proof_cases/ (what `make proof` saved of a failure, or a case written by hand),
  replayed the same way: a bug it found stays found.

`make proof SECONDS=N` runs new seeds for N seconds (run_proof.py); docs/proof.md says what it found.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from proof_round import Proof, available, save_failure
from proof_case import Case
from random_schema import make_case

ROUNDS = 20
FIRST_SEED = 27_000
CASES = sorted((Path(__file__).parent / "proof_cases").glob("*.sql"))

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadbd (make apt)")


@pytest.fixture(scope="module")
def proof():
    with Proof() as p:
        yield p


def _play(proof: Proof, case: Case, folder: Path) -> None:
    rnd = proof.run(case, folder)
    assert rnd.checks == 5, rnd.failures
    if rnd.failures:
        where = save_failure(rnd, folder)
        pytest.fail(f"{len(rnd.failures)} outputs differ from the server (reproducer: {where}):\n"
                    + "\n".join(rnd.failures), pytrace=False)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + ROUNDS))
def test_random_tables_replay_like_the_server(proof, seed, tmp_path):
    _play(proof, make_case(seed), tmp_path)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_saved_reproducers_replay_like_the_server(proof, path, tmp_path):
    _play(proof, Case.from_sql(path.read_text(encoding="utf-8")), tmp_path)
