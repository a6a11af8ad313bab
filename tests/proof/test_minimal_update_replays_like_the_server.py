"""--minimal-update on random tables and workloads, replayed on a real MariaDB (issue 31): the script that
sets only the columns each UPDATE changed, found by the row's key, gives the server's end state from its
start state, and its rollback gives the start state from the end state, under every setting of
random_schema.SETTINGS (FULL and MINIMAL row metadata, FULL, NOBLOB and MINIMAL row images: a MINIMAL
before image holds only the key, so every column of the after image is set). The round is proof_round.py's
(CHECKSUM TABLE against the server's own tables), with these two scripts besides its own; a rollback of
partial images may refuse only as the README documents it (exit 6), as without the option.
"""
from __future__ import annotations

import pytest

from proof_round import Proof, available
from random_schema import make_case

ROUNDS = 10
FIRST_SEED = 31_000
EXTRA = (("sql --sql2 --minimal-update", ("--sql2", "--minimal-update"), False),
         ("sql --sql2 --minimal-update --complete-insert", ("--sql2", "--minimal-update", "--complete-insert"), False),
         ("sql --sql2 --minimal-update --rollback", ("--sql2", "--minimal-update", "--rollback"), True))

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadbd (make apt)")


@pytest.fixture(scope="module")
def proof():
    with Proof(EXTRA) as p:
        yield p


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + ROUNDS))
def test_minimal_update_scripts_replay_like_the_server(proof, seed, tmp_path):
    rnd = proof.run(make_case(seed), tmp_path)
    assert rnd.checks == 5 + len(EXTRA), rnd.failures
    assert not rnd.failures, "\n".join(rnd.failures)
