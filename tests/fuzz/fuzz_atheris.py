"""Coverage-guided fuzzer (atheris, libFuzzer) over the library API: targets.run on every input.

    python tests/fuzz/fuzz_atheris.py OUT_DIR CORPUS_DIR... [libFuzzer flags, e.g. -max_total_time=1800]
    python tests/fuzz/fuzz_atheris.py --replay DIR...     (run targets.run on every file, e.g. under coverage)

`make fuzz FUZZ_SECONDS=N` seeds a working corpus with the small corpus and fixture binlogs and runs
this. A BinlogError is the contract for bad input; any other exception, a run longer than
10 s or a MemoryError (the address space is bounded) is a bug: the input is kept in OUT_DIR as
bug-<key>.bin with its traceback beside it, one per distinct place, and the fuzzer goes on, so
that one run finds every bug it can reach. OUT_DIR/stats.json counts the cases and the bugs.
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

#: CPU seconds one input may take (all pipelines together) before it counts as a hang (the CPU clock,
#: ITIMER_PROF: libFuzzer's own -timeout keeps SIGALRM, and a busy machine does not slow the CPU clock).
CASE_SECONDS = 10
#: Address space of the fuzzing process.
MEMORY_BYTES = 3 << 30


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so that no `except Exception` in the code swallows it."""


def _cpu_timeout(signum, frame):
    raise Hang(f"input took more than {CASE_SECONDS} s of CPU")


def bug_key(exc: BaseException) -> str:
    """Where a bug is: its type and the innermost frame in binlog_spec (one file per place)."""
    place = "?"
    for fs in traceback.extract_tb(exc.__traceback__):
        if "binlog_spec" in fs.filename or fs.filename.startswith("<"):
            place = f"{os.path.basename(fs.filename)}:{fs.lineno}"
    return f"{type(exc).__name__}@{place}"


class Recorder:
    def __init__(self, out_dir: str):
        self.out_dir = out_dir
        os.makedirs(out_dir, exist_ok=True)
        self.cases = self.bug_cases = 0
        self.bugs: dict[str, int] = {}
        self.start = time.time()
        fd, self.path = tempfile.mkstemp(prefix="binlog-fuzz-", suffix=".bin", dir="/dev/shm"
                                         if os.path.isdir("/dev/shm") else None)
        os.close(fd)

    def case(self, data: bytes) -> None:
        import targets
        self.cases += 1
        with open(self.path, "wb") as f:
            f.write(data)
        signal.setitimer(signal.ITIMER_PROF, CASE_SECONDS)
        try:
            targets.run(self.path)
        except (Exception, Hang) as exc:   # noqa: BLE001 - every one of these is a bug to keep
            self.record(data, exc)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        self.write_stats()      # after every case: libFuzzer ends the process by exit(), past any atexit

    def record(self, data: bytes, exc: BaseException) -> None:
        self.bug_cases += 1
        key = bug_key(exc)
        first = key not in self.bugs
        self.bugs[key] = self.bugs.get(key, 0) + 1
        if first:
            name = "bug-" + hashlib.sha1(key.encode()).hexdigest()[:12]
            with open(os.path.join(self.out_dir, name + ".bin"), "wb") as f:
                f.write(data)
            with open(os.path.join(self.out_dir, name + ".txt"), "w") as f:
                f.write(key + "\n" + "".join(traceback.format_exception(exc)))
            print(f"\n#### new bug {key} -> {name}.bin", file=sys.stderr, flush=True)
        self.write_stats()

    def write_stats(self) -> None:
        with open(os.path.join(self.out_dir, "stats.json"), "w") as f:
            json.dump({"cases": self.cases, "seconds": round(time.time() - self.start, 1),
                       "bug_cases": self.bug_cases, "bugs": self.bugs}, f, indent=1)


def replay(dirs: list[str]) -> int:
    import targets
    n = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if os.path.isfile(path) and not name.endswith((".txt", ".json")):
                try:
                    targets.run(path)
                except Exception as exc:  # noqa: BLE001
                    print(f"{path}: {bug_key(exc)}", file=sys.stderr)
                n += 1
    print(f"replayed {n} inputs", file=sys.stderr)
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--replay"]:
        return replay(sys.argv[2:])
    import atheris
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    signal.signal(signal.SIGPROF, _cpu_timeout)
    out_dir = sys.argv[1]
    with atheris.instrument_imports(include=["binlog_spec"]):
        import binlog_spec  # noqa: F401
        import binlog_spec.analysis.collector  # noqa: F401
        import binlog_spec.binlog.writer  # noqa: F401
        import binlog_spec.output.base64.script  # noqa: F401
        import binlog_spec.output.sql.script  # noqa: F401
        import binlog_spec.rows.decoder  # noqa: F401
    import targets  # noqa: F401
    recorder = Recorder(out_dir)
    atheris.Setup([sys.argv[0]] + sys.argv[2:], recorder.case)
    try:
        atheris.Fuzz()
    finally:
        recorder.write_stats()
    return 0


if __name__ == "__main__":
    sys.exit(main())
