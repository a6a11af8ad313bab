"""The compiled core (setup.py builds every src/binlog_spec/**/_c*.pyx; binlog_spec.compiled says which
core runs): it is the one running under `make test`, and it gives what the pure-Python reference gives,
value for value and error for error, on every corpus and fixture binlog, on seeded fuzz cases, and on binlogs
the real server writes in the test: the mixed-type benchmark workload and random-schema rounds."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, FIXTURES, ROOT, manifest_rows

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import mutate  # noqa: E402
from seeds import seed_files  # noqa: E402

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

DIFFERENTIAL = Path(__file__).resolve().parent / "differential.py"
#: Mutated binlogs (tests/fuzz/mutate.py's generator, this seed) compared besides the real files.
FUZZ_CASES = 120
FUZZ_SEED = 16


def test_every_compiled_module_is_built_and_running():
    """A silent fallback to pure Python (no compiler, a build error) fails here instead of passing
    slowly; BINLOG_SPEC_PURE=1 asks for the pure core, and then every module must report it."""
    from binlog_spec import compiled
    sources = sorted(".".join(p.relative_to(ROOT / "src").with_suffix("").parts)
                     for p in (ROOT / "src").glob("binlog_spec/**/_c*.pyx"))
    assert sources and sorted(compiled.MODULES) == sources, "every _c*.pyx is listed in compiled.MODULES"
    status = compiled.status(every=True)
    if compiled.pure_requested():
        assert all(v == f"{compiled.PURE_ENV} is set" for v in status.values()), status
    else:
        assert status == {name: "compiled" for name in sources}, status
    # the generated parsers read through the stream spec.py chose, the compiled one unless pure is asked for
    from binlog_spec._generated import binlog as generated
    from binlog_spec.binlog import spec
    assert generated.KaitaiStream is spec.KaitaiStream
    assert (spec.KaitaiStream.__module__ == "binlog_spec.binlog._cstream") != compiled.pure_requested()


def test_version_says_which_core_runs():
    env = {k: v for k, v in os.environ.items() if k != "BINLOG_SPEC_PURE"}
    cli = [str(Path(sys.executable).with_name("binlog-spec")), "--version"]
    fast = subprocess.run(cli, capture_output=True, text=True, env=env, check=True).stdout
    pure = subprocess.run(cli, capture_output=True, text=True, env={**env, "BINLOG_SPEC_PURE": "1"}, check=True).stdout
    assert fast.startswith("binlog-spec ") and "compiled core (" in fast and "_cstream" in fast, fast
    assert "pure-Python core" in pure and "BINLOG_SPEC_PURE is set" in pure, pure


def _fuzz_cases(out: Path) -> list[Path]:
    rng = random.Random(FUZZ_SEED)
    seeds = seed_files()
    cases = []
    for k in range(FUZZ_CASES):
        data, _how, _cut = mutate.mutate(rng.choice(seeds).read_bytes(), rng)
        cases.append(out / f"case-{k:03d}.bin")
        cases[-1].write_bytes(data)
    return cases


def _run(files: list[Path], pure: bool) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "BINLOG_SPEC_PURE"}
    env["PYTHONHASHSEED"] = "0"     # sets print in hash order: the same order in both runs
    if pure:
        env["BINLOG_SPEC_PURE"] = "1"
    return subprocess.Popen([sys.executable, str(DIFFERENTIAL), *map(str, files)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _show(path: str, pure: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "BINLOG_SPEC_PURE"}
    env.update({"PYTHONHASHSEED": "0", **({"BINLOG_SPEC_PURE": "1"} if pure else {})})
    shown = subprocess.run([sys.executable, str(DIFFERENTIAL), "--show", path], env=env, capture_output=True,
                           check=True).stdout
    return shown.decode("utf-8", "backslashreplace").splitlines()     # (a transcript may hold any bytes)


def _first_difference(pure: list[str], fast: list[str]) -> str:
    """The first line that differs, from a little before its first differing character."""
    for k, (a, b) in enumerate(zip(pure + [""], fast + [""])):
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"line {k + 1}:\n  pure:     ...{a[max(0, at - 120):at + 200]}\n  compiled: ...{b[max(0, at - 120):at + 200]}"
    return "(the transcripts are the same when shown again: a difference that depends on the run)"


def test_the_compiled_core_gives_what_the_pure_python_core_gives(tmp_path):
    files = [CORPUS / row["file"] for row in manifest_rows()]
    files += sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file())
    files = [p for p in files if p.is_file()]
    assert len(files) >= 120, "the corpus and the fixtures"
    files += _fuzz_cases(tmp_path)
    runs = {"pure": _run(files, pure=True), "compiled": _run(files, pure=False)}
    got = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, f"{name} run: {err[-3000:]}"
        got[name] = dict(line.split("\t", 1) for line in out.splitlines())
    assert got["pure"].pop("core").startswith("pure-Python core (")
    assert got["compiled"].pop("core").startswith("compiled core ("), "the compiled run must run compiled code"
    assert list(got["pure"]) == list(got["compiled"]) == [str(p) for p in files]
    differ = [path for path in got["pure"] if got["pure"][path] != got["compiled"][path]]
    shown = [f"{path}:\n{_first_difference(_show(path, True), _show(path, False))}" for path in differ[:3]]
    assert not differ, f"{len(differ)} of {len(files)} files differ:\n" + "\n\n".join(shown)


#: Random-schema rounds (tests/proof: random tables and workloads played on the real server) whose binlogs
#: the compiled core is compared on, one seed of each setting of random_schema.SETTINGS (metadata, image).
PROOF_SEEDS = range(29_000, 29_005)
#: The mixed-type benchmark workload (benchmarks/workloads.py), FULL and MINIMAL metadata, at this scale.
MIXED_SCALE = "0.002"


def _server_made(tmp_path: Path) -> list[Path]:
    """Binlogs the real server wrote: the mixed-type workloads and the random-schema rounds' files."""
    env = dict(os.environ, BINLOG_SPEC_BENCH_CACHE=str(tmp_path / "bench"))
    files = []
    for name in ("mixed", "mixed-minimal"):
        r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "workloads.py"), name, "--scale", MIXED_SCALE],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        files.append(Path(json.loads(r.stdout)["path"]))
    sys.path.insert(0, str(Path(__file__).resolve().parent / "proof"))
    from proof_round import Proof
    from random_schema import make_case
    with Proof() as proof:
        for seed in PROOF_SEEDS:
            rnd = proof.run(make_case(seed), tmp_path / f"proof-{seed}")
            files += rnd.files
    return files


@pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")
def test_the_compiled_core_gives_what_the_pure_core_gives_on_server_made_random_and_mixed_binlogs(tmp_path):
    files = _server_made(tmp_path)
    assert len(files) >= 2 + len(PROOF_SEEDS)
    runs = {"pure": _run(files, pure=True), "compiled": _run(files, pure=False)}
    got = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, f"{name} run: {err[-3000:]}"
        got[name] = dict(line.split("\t", 1) for line in out.splitlines())
    assert got["compiled"].pop("core").startswith("compiled core (") and got["pure"].pop("core")
    differ = [path for path in got["pure"] if got["pure"][path] != got["compiled"][path]]
    shown = [f"{path}:\n{_first_difference(_show(path, True), _show(path, False))}" for path in differ[:3]]
    assert not differ, f"{len(differ)} of {len(files)} files differ:\n" + "\n\n".join(shown)
