"""`make proof SECONDS=N`: random rounds (new seeds) on one MariaDB server until N seconds have passed.

Each failure is saved in OUT/seed-S/ (case.sql: setting, seed, DDL, statements and the failures; the
round's binlog; the --schema dump under MINIMAL metadata), and its folder printed. Copied to
tests/proof/proof_cases/NAME.sql, case.sql becomes a regression test. Exit code 1 when a round failed.

    python tests/proof/run_proof.py --seconds 600 [--out DIR] [--first-seed S]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "output")]

from proof_round import Proof, save_failure  # noqa: E402
from random_schema import make_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "binlog-spec-proof")
    ap.add_argument("--first-seed", type=int, default=None, help="default: from the clock")
    args = ap.parse_args()
    seed = args.first_seed if args.first_seed is not None else int(time.time()) % 10_000_000 * 1000
    args.out.mkdir(parents=True, exist_ok=True)
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines() if line.startswith("Model name")), "?")
    print(f"proof: seeds from {seed}, {args.seconds:.0f} s, failures in {args.out}; CPU {cpu}", flush=True)
    start = time.monotonic()
    rounds, failed, refusals, changes, notes = 0, [], 0, 0, Counter()
    settings = Counter()
    with Proof() as proof:
        while time.monotonic() - start < args.seconds:
            case = make_case(seed)
            work = args.out / f"seed-{seed}"
            rnd = proof.run(case, work)
            rounds += 1
            settings[(case.metadata, case.image)] += 1
            refusals += rnd.refusals
            changes += rnd.row_changes
            notes.update(n.split(":")[0] for n in rnd.notes)
            if rnd.failures:
                failed.append(save_failure(rnd, work))
                print(f"FAIL seed {seed} ({case.metadata} metadata, {case.image} image): {work}", flush=True)
                for f in rnd.failures:
                    print(f"    {f[:400]}", flush=True)
            else:
                shutil.rmtree(work, ignore_errors=True)
            seed += 1
    took = time.monotonic() - start
    print(f"proof: {rounds} rounds in {took:.0f} s ({rounds * 5} checks, {changes} row changes, "
          f"{refusals} documented refusals), {len(failed)} failed; CPU {cpu}")
    print("proof: rounds per setting (metadata, image): "
          + ", ".join(f"{m}/{i} {n}" for (m, i), n in sorted(settings.items())))
    if notes:
        print("proof: rounds where the server's own binlog does not give its end state: "
              + ", ".join(f"{k} {n}" for k, n in notes.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
