"""Seeded, budgeted mutation fuzzing of binlog files (the bounded run inside `make test`).

Each case takes a seed binlog (tests/fuzz/seeds.py), applies one to three mutations (bit flips,
a truncation, an edge value in an event's size or end_log_pos field or anywhere in a body, a chunk
duplicated or zeroed) and runs every library pipeline on it (targets.run) in a worker process
that has its address space bounded (RLIMIT_AS). The case passes when every pipeline ends with
success or a BinlogError, within CASE_SECONDS of CPU (and WALL_SECONDS of wall clock: the worker is
killed and replaced otherwise), and,
for a pure truncation, when the events delivered are the original's first events field for field
and include every event that ends before the cut.

    python tests/fuzz/mutate.py [--seconds N] [--seed S] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import select
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: CPU seconds one case (all pipelines) may take: measured on the worker's CPU clock, so that a busy
#: machine does not make a slow case of a fast one.
CASE_SECONDS = float(os.environ.get("BINLOG_SPEC_FUZZ_CASE_SECONDS", "10"))
#: Wall-clock seconds before the parent kills a worker that does not answer (a hang outside Python
#: code, where the CPU timer cannot interrupt it, or a machine too busy to run it).
WALL_SECONDS = 60
#: Address space of a worker.
MEMORY_BYTES = 2 << 30

from binlog_spec.binlog import spec  # noqa: E402
from binlog_spec.binlog.writer import OFS_END_LOG_POS, OFS_LEN  # noqa: E402

EDGE_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF)
EDGE_WORDS = (0, 1, 2, 3, 4, 18, 19, 0x7F, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)


# --------------------------------------------------------------------------
# Worker: runs cases, one JSON line in, one out


def _strip(events: list[dict], path: str) -> list[dict]:
    """The events' dicts without the file's name (in `file`, and in the messages of malformed ones)."""
    return [{k: v.replace(path, "FILE") if isinstance(v, str) else v for k, v in d.items() if k != "file"}
            for d in events]


class Hang(BaseException):
    """The CPU timer ran out (not an Exception: no `except Exception` in the code under test takes it)."""


def _cpu_timeout(signum, frame):
    raise Hang(f"the case took more than {CASE_SECONDS} s of CPU")


def worker() -> int:
    import signal
    import warnings
    import targets
    warnings.simplefilter("ignore")     # SchemaWarning on mutated DDL: expected, and not the question here
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    signal.signal(signal.SIGPROF, _cpu_timeout)
    originals: dict[str, list[dict]] = {}
    for line in sys.stdin:
        case = json.loads(line)
        reply: dict = {"status": "ok"}
        signal.setitimer(signal.ITIMER_PROF, CASE_SECONDS)
        try:
            delivered, reply["outcomes"] = targets.run(case["path"])
            cut = case.get("cut")
            if cut is not None:
                orig = originals.get(case["original"])
                if orig is None:
                    orig = originals[case["original"]] = _strip(targets.events(case["original"])[0], case["original"])
                got = _strip(delivered, case["path"])
                need = next((k for k, d in enumerate(orig) if d["pos"] + d["size"] > cut), len(orig))
                if got != orig[:len(got)]:
                    k = next(k for k, (a, b) in enumerate(zip(got, orig)) if a != b)
                    reply = {"status": "bug", "trace": f"truncated at {cut}: event {k} differs from the "
                                                       f"original's: {got[k]!r} != {orig[k]!r}"}
                elif len(got) < need:
                    reply = {"status": "bug", "trace": f"truncated at {cut}: {len(got)} events delivered, "
                                                       f"{need} end before the cut"}
        except BaseException as exc:  # noqa: BLE001 - a bug, reported to the parent
            reply = {"status": "bug", "trace": "".join(traceback.format_exception(exc))}
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        sys.stdout.write(json.dumps(reply, default=str) + "\n")
        sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------
# Mutations


def _event_starts(data: bytes) -> list[int]:
    """Event positions by the size fields (the original file's framing)."""
    starts, pos = [], 4
    while pos + OFS_LEN + 4 <= len(data):
        size = int.from_bytes(data[pos + OFS_LEN:pos + OFS_LEN + 4], "little")
        starts.append(pos)
        if size < OFS_END_LOG_POS:
            break
        pos += size
    return starts


def event_spans(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of the events by their size fields, up to one whose size is under a header."""
    out, pos = [], spec.LEN_MAGIC
    while pos + spec.LEN_EVENT_HEADER <= len(data):
        size = int.from_bytes(data[pos + OFS_LEN:pos + OFS_LEN + 4], "little")
        if size < spec.LEN_EVENT_HEADER:
            break
        out.append((pos, size))
        pos += size
    return out


def damaged_with_valid_checksums(data: bytes, rng: random.Random,
                                 change: Callable[[bytearray, int, int, random.Random], None]) -> bytes:
    """Bytes changed inside 1, 2 or 4 events after the FDE (`change(buf, position, size, rng)` changes one),
    each event's CRC32 made right again, and one case in five cut short: the framing takes them, the
    bodies are what a compiled loop must judge as its reference does."""
    b = bytearray(data)
    starts = event_spans(data)[1:]          # the FDE stays
    for _ in range(rng.choice((1, 1, 2, 4))):
        pos, size = rng.choice(starts)
        change(b, pos, size, rng)
        if pos + size <= len(b):
            b[pos + size - 4:pos + size] = zlib.crc32(bytes(b[pos:pos + size - 4])).to_bytes(4, "little")
    if rng.random() < 0.2:
        del b[rng.randrange(len(b)):]
    return bytes(b)


def change_in_event(b: bytearray, pos: int, size: int, rng: random.Random) -> None:
    """One change inside an event (for `damaged_with_valid_checksums`): its body (a bit, or an edge value),
    its timestamp, or its type code."""
    kind = rng.random()
    if kind < 0.5:
        i = pos + spec.LEN_EVENT_HEADER + rng.randrange(max(1, size - spec.LEN_EVENT_HEADER - 4))
        b[i] ^= 1 << rng.randrange(8)
    elif kind < 0.8:
        i = pos + spec.LEN_EVENT_HEADER + rng.randrange(max(1, size - spec.LEN_EVENT_HEADER - 4))
        b[i] = rng.choice((0, 1, 2, 64, 0x80, 0xfb, 0xfc, 0xfd, 0xfe, 0xff))
    elif kind < 0.9:
        b[pos] = rng.randrange(256)     # the timestamp
    else:
        b[pos + 4] = rng.choice((2, 16, 19, 23, 24, 25, 160, 162))     # the type code


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str, int | None]:
    """(mutated bytes, description, cut position when the mutation is a pure truncation)."""
    starts = _event_starts(data) or [4]
    if rng.random() < 0.25:                    # pure truncation: inside an event, or at/next to a boundary
        if rng.random() < 0.5:
            cut = rng.choice(starts) + rng.choice((-1, 0, 1, OFS_LEN, 19))
        else:
            cut = rng.randrange(len(data))
        cut = max(0, min(cut, len(data) - 1))
        return data[:cut], f"truncate at {cut}", cut
    b = bytearray(data)
    notes = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.choice(("bits", "size", "edge", "edge", "dup", "zero", "cut"))
        ev = rng.choice(starts)
        if kind == "bits":
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
            notes.append("bit flips")
        elif kind == "size" and ev + OFS_END_LOG_POS + 4 <= len(b):
            ofs = ev + rng.choice((OFS_LEN, OFS_END_LOG_POS))
            size = int.from_bytes(b[ofs:ofs + 4], "little")
            value = rng.choice(EDGE_WORDS + (size - 1, size + 1, size * 2, size - 4))
            b[ofs:ofs + 4] = (value & 0xFFFFFFFF).to_bytes(4, "little")
            notes.append(f"header field at {ofs} = {value}")
        elif kind == "edge":
            i = rng.randrange(ev, len(b)) if ev < len(b) and rng.random() < 0.8 else rng.randrange(len(b))
            width = rng.choice((1, 1, 2, 4))
            value = rng.choice(EDGE_BYTES) if width == 1 else rng.choice(EDGE_WORDS) & ((1 << 8 * width) - 1)
            b[i:i + width] = value.to_bytes(width, "little")
            notes.append(f"{value:#x} ({width} bytes) at {i}")
        elif kind == "dup":
            i = rng.randrange(len(b))
            n = rng.randint(1, 256)
            j = rng.randrange(len(b))
            b[j:j] = b[i:i + n]
            notes.append(f"{n} bytes from {i} duplicated at {j}")
        elif kind == "zero":
            i = rng.randrange(len(b))
            n = rng.randint(1, 64)
            b[i:i + n] = bytes(len(b[i:i + n]))
            notes.append(f"{n} bytes zeroed at {i}")
        else:
            cut = rng.randrange(len(b) + 1)
            del b[cut:]
            notes.append(f"cut at {cut}")
        if not b:
            break
    return bytes(b), "; ".join(notes), None


# --------------------------------------------------------------------------
# Parent: budget, watchdog, report


@dataclass
class Failure:
    seed_file: str
    mutation: str
    problem: str
    path: str       # the mutated file, kept


@dataclass
class Report:
    cases: int = 0
    truncations: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, case: dict, timeout: float) -> dict | None:
        """The worker's reply, or None when it took longer than `timeout` or died."""
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        return self.proc.returncode


def run(seed_files: list[Path], seconds: float, seed: int, out_dir: str | None = None,
        max_cases: int | None = None) -> Report:
    rng = random.Random(seed)
    out = Path(out_dir or tempfile.mkdtemp(prefix="binlog-spec-mutate-"))
    out.mkdir(parents=True, exist_ok=True)
    originals = [(p, p.read_bytes()) for p in seed_files]
    report = Report()
    w = _Worker()
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and (max_cases is None or report.cases < max_cases):
            src, data = rng.choice(originals)
            mutated, what, cut = mutate(data, rng)
            path = out / f"case-{report.cases:06d}.bin"
            path.write_bytes(mutated)
            case = {"path": str(path), "original": str(src), "cut": cut}
            reply = w.ask(case, WALL_SECONDS)
            if reply is None:       # once more in a new worker: a busy machine is not a hang, a hang is again
                w.stop()
                w = _Worker()
                reply = w.ask(case, WALL_SECONDS)
            report.cases += 1
            report.truncations += cut is not None
            problem = None
            if reply is None:
                code = w.stop()
                problem = (f"no answer within {WALL_SECONDS} s" if code in (-9, None)
                           else f"worker died (exit {code})")
                w = _Worker()
            elif reply["status"] != "ok":
                problem = reply["trace"]
            else:
                for outcome in reply["outcomes"].values():
                    report.outcomes[outcome] = report.outcomes.get(outcome, 0) + 1
            if problem is None:
                path.unlink()
            else:
                report.failures.append(Failure(str(src), what, problem, str(path)))
    finally:
        w.stop()
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", help="where failing cases are kept (default: a new temporary directory)")
    args = ap.parse_args()
    if args.worker:
        return worker()
    from seeds import seed_files
    report = run(seed_files(), args.seconds, args.seed, args.out)
    for f in report.failures:
        print(f"{f.path}: {f.seed_file}: {f.mutation}\n{f.problem}", file=sys.stderr)
    print(json.dumps({"cases": report.cases, "truncations": report.truncations, "failures": len(report.failures),
                      "outcomes": report.outcomes}), file=sys.stderr)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
