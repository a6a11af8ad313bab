"""`make proof SECONDS=N`: random rounds (new seeds) on one MariaDB server until N seconds have passed.

Each failure is saved in OUT/seed-S/ (case.sql: setting, seed, DDL, statements and the failures; the
round's binlog; the --schema dump under MINIMAL metadata), and its folder printed; then a smaller case
that still fails (tables and statements left out one at a time) in OUT/seed-S/reduced/. Copied to
tests/proof/proof_cases/NAME.sql, case.sql becomes a regression test. Exit code 1 when a round failed.

    python tests/proof/run_proof.py --seconds 600 [--out DIR] [--first-seed S]
"""
from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "output")]

from proof_round import Proof, Round, save_failure  # noqa: E402
from proof_case import Case, q, table_names  # noqa: E402
from random_schema import make_case  # noqa: E402


def _kinds(failures: list[str]) -> set[str]:
    """Which outputs failed (`sql --sql2`, `rows`, ...), whatever the details."""
    return {f.split(":", 1)[0] for f in failures}


def reduce(proof: Proof, case: Case, kinds: set[str], folder: Path, budget: float) -> Case:
    """A smaller case that still fails one of `kinds`: tables, then workload and start statements, left
    out one at a time while the failure stays (each try is a round; at most `budget` seconds)."""
    deadline = time.monotonic() + budget

    def fails(c: Case) -> bool:
        try:
            return bool(_kinds(proof.run(c, folder / "try").failures) & kinds)
        except Exception:      # noqa: BLE001 - a broken round is not the failure looked for
            return False

    names = table_names(case)
    for name in list(names):
        if len(table_names(case)) == 1 or time.monotonic() > deadline:
            break
        mark = q(name)
        smaller = replace(case, ddl=[d for d in case.ddl if not d.startswith(f"CREATE TABLE {mark} ")],
                          start=[s for s in case.start if mark not in s],
                          workload=[s for s in case.workload if mark not in s])
        if fails(smaller):
            case = smaller
    for part in ("workload", "start"):
        i = len(getattr(case, part)) - 1
        while i >= 0 and time.monotonic() < deadline:
            stmts = getattr(case, part)
            if not stmts[i].startswith("SET time_zone"):
                smaller = replace(case, **{part: stmts[:i] + stmts[i + 1:]})
                if fails(smaller):
                    case = smaller
            i -= 1
    shutil.rmtree(folder / "try", ignore_errors=True)
    return case


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "binlog-spec-proof")
    ap.add_argument("--first-seed", type=int, default=None, help="default: from the clock")
    ap.add_argument("--reduce", type=float, default=120, metavar="SECONDS",
                    help="time to spend making each failure's case smaller (0: none); default 120")
    args = ap.parse_args()
    seed = args.first_seed if args.first_seed is not None else int(time.time()) % 10_000_000 * 1000
    args.out.mkdir(parents=True, exist_ok=True)
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines() if line.startswith("Model name")), "?")
    print(f"proof: seeds from {seed}, {args.seconds:.0f} s, failures in {args.out}; CPU {cpu}", flush=True)
    rounds, failed, refusals, changes, notes = 0, [], 0, 0, Counter()
    settings, extras = Counter(), Counter()
    signal.signal(signal.SIGTERM, signal.default_int_handler)      # stopped: the server is stopped too
    with Proof() as proof:
        start = time.monotonic()
        try:
            while rounds == 0 or time.monotonic() - start < args.seconds:
                case = make_case(seed)
                work = args.out / f"seed-{seed}"
                try:
                    rnd = proof.run(case, work)
                except Exception:      # noqa: BLE001 - the harness or the server broke: saved like a failure
                    rnd = Round(case, failures=["the round broke off: " + traceback.format_exc()])
                rounds += 1
                settings[(case.metadata, case.image)] += 1
                extras.update((["log_bin_compress"] if case.compress == "ON" else [])
                              + (["names from DDL"] if case.metadata != "FULL" and case.names == "ddl" else []))
                refusals += rnd.refusals
                changes += rnd.row_changes
                notes.update(f"{case.metadata}/{case.image}" for _ in rnd.notes)
                if rnd.failures:
                    failed.append(save_failure(rnd, work))
                    print(f"FAIL seed {seed} ({case.metadata} metadata, {case.image} image): {work}", flush=True)
                    for f in rnd.failures:
                        print(f"    {f[:400]}", flush=True)
                    if args.reduce:
                        small = reduce(proof, case, _kinds(rnd.failures), work, args.reduce)
                        again = proof.run(small, work / "reduced")
                        if again.failures:
                            save_failure(again, work / "reduced")
                            print(f"    reduced to {len(small.ddl)} tables, {len(small.start)} + "
                                  f"{len(small.workload)} statements: {work / 'reduced' / 'case.sql'}", flush=True)
                else:
                    shutil.rmtree(work, ignore_errors=True)
                seed += 1
        except KeyboardInterrupt:
            print("proof: interrupted", flush=True)
    took = time.monotonic() - start
    print(f"proof: {rounds} rounds in {took:.0f} s ({rounds * 5} checks, {changes} row changes, "
          f"{refusals} documented refusals), {len(failed)} failed; CPU {cpu}")
    print("proof: rounds per setting (metadata/image): "
          + ", ".join(f"{m}/{i} {n}" for (m, i), n in sorted(settings.items()))
          + "; " + ", ".join(f"{k} {n}" for k, n in sorted(extras.items())))
    if notes:
        print("proof: rounds where the server's own binlog does not give its end state (held to mariadb-binlog's "
              "replay): " + ", ".join(f"{k} {n}" for k, n in sorted(notes.items())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
