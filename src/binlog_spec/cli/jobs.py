"""--jobs N: a command run over pieces of its input in N processes, its output byte for byte that of one.

The parent plans the pieces (api.plan_pieces, stream.planning.parallel: the header pass over each file, the
framing only, the pieces check the CRC32s as they read them; the files cut at transaction boundaries; each
piece given the schema state of the DDL before it). Each worker process (forked: nothing is pickled on the
way in) runs the command's own function on its piece, reading it with `api.piece_events`, and writes its stdout
and stderr to temporary files; the parent copies them in order and makes whole what crosses pieces:

* a header printed once (the text outputs' "# binlog-spec ...: times in ..." before the first line,
  the SQL script's SET lines): the pieces after the first leave theirs out;
* warnings given once per run (a table's unknown names or guessed charset, the filters' unparsed
  statement): a worker marks them, the parent keeps the first;
* the exit code: the highest of the pieces';
* a fault (a broken binlog, an unreadable file, a bug): the pieces after the one that raised are
  dropped, and the exception is raised again in the parent, where `main` reports it as it does in
  one process (nothing after it is printed, as when one process stops there).
* a SQL rollback (`sql --sql/--sql2 --rollback`): each piece undoes its own transactions, last
  first; the parent copies the pieces' stderr in order, then their stdout last piece first (the
  header once), then the statements not undone that the pieces handed back (`hand_back`), merged;
  a piece that raised leaves stdout empty, as one process, which writes nothing before the end.
  With a filter, the parent first runs the rollback's conflict check over the whole input (`precheck`):
  on a conflict the pieces' stdout is dropped, and the report follows everything they wrote on stderr.

* the base64 script (`sql`, -v, -vv): the header printed by the first piece, the end by the last,
  the session settings a piece's first statements depend on joined by output.base64.parts, the
  pieces' warnings handed back and merged; files of more than one FDE or format run in one process.

Where this cannot be made exact, the command runs in one process (`plan` returns None): standard
input and gzip files (no positions to cut at), the binlog output and the base64 and binlog
rollbacks (one FDE, GTIDs renumbered over the run), the plain base64 script where its compiled loop
runs (`_base64_loop_runs`: faster on one core than the pieces on several), a checked rollback where the
check's compiled loop runs (`_checked_rollback_runs_alone`), `analyze` (one report of every event), --start-position and
--stop-position (byte positions, and their notes, are the whole run's). On a terminal, the parent shows the
progress bar, by the pieces copied. This is how the CLI runs a command, so it lives in cli/; how its input is
cut is in stream/planning/parallel.py, reached through api.
"""
from __future__ import annotations

import argparse
import codecs
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from typing import Callable, TextIO

from binlog_spec import api
from binlog_spec.api import Split
from binlog_spec.cli.arguments import MARK, read_options, schema_tracker  # MARK: a stderr line given once per run

#: The start of the name of what a piece hands back (`hand_back`) that the parent reports before the pieces' stdout
#: (a rollback's summary of its undo), not after.
BEFORE_OUTPUT = "before."
#: Environment variable: the piece size in bytes (tests set it small to cut small files into many pieces).
PIECE_ENV = "BINLOG_SPEC_PIECE_BYTES"
#: Pieces are at least this big: a smaller input runs in one process (no fork, no header pass).
MIN_PIECE = 16 << 20
#: Pieces per job: enough to balance the work, few enough that each is worth a fork.
PIECES_PER_JOB = 4
MAX_JOBS = 8


def default_jobs() -> int:
    """The CPUs this process may run on (`taskset -c 0` gives 1), up to MAX_JOBS."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cpus))


@dataclass(frozen=True)
class Mode:
    """How a command's pieces join: `header` lines each piece's output starts with, printed once
    (`when_output`: only a piece that prints something prints them)."""

    header: int = 0
    when_output: bool = False
    schema: bool = True
    #: A rollback: each piece undoes its own transactions, last first; the pieces are joined last first.
    reverse: bool = False
    #: The base64 script: its session settings are joined (output.base64.parts); one format for the run.
    base64: bool = False


def mode_of(args: argparse.Namespace) -> Mode | None:
    """How the command's pieces join, or None when it runs in one process (see the module doc)."""
    command = getattr(args, "command", None)
    if command == "events":
        return Mode(header=1 if args.format == "text" else 0, when_output=True, schema=False)
    if command == "rows":
        return Mode(header=1 if args.format in ("text", "history") else 0, when_output=True)
    if command == "sql" and args.output_format == "sql" and (args.commented or args.executable) \
            and not _checked_rollback_runs_alone(args):
        return Mode(header=len(api.sql_header()) + (1 if args.commented else 0), reverse=args.rollback)
    if command == "sql" and args.output_format == "sql" and not args.rollback and not _base64_loop_runs(args):
        return Mode(schema=bool(args.verbose or args.schema), base64=True)
    return None


def _base64_loop_runs(args: argparse.Namespace) -> bool:
    """Whether the base64 script's compiled loop (output/base64/lane.py `sink`) writes this run in one
    process: it takes no --jobs piece, and on one core it is faster than the Python lane on several."""
    return api.base64_compiled() and not (args.verbose or args.schema or args.skip_gtids or args.rewrite_db
                                           or args.filters.active or args.filters.start_position is not None)


def skips_in_one_process(filters) -> bool:
    """Whether a compiled loop skips what `filters` drop in one process (api.skipping_sink), as pieces do not."""
    return api.skipping_sink(api.skip_gate(filters), filters) is not None


def _checked_rollback_runs_alone(args: argparse.Namespace) -> bool:
    """Whether a checked rollback (a SQL rollback under a filter: cli/rollback_check.py) runs in one process:
    where the check's compiled loop runs, one process reads the input once, checking and undoing as it
    goes, where under --jobs the parent reads all of it to check first and the pieces read the window
    again, which on two cores was slower than one process (docs/benchmarks.md, issue 18)."""
    return bool(args.rollback and args.filters.active) and (
        api.conflict_check_compiled() or getattr(args, "skip_conflicts", False))  # (its undo needs its check)


def plan(args: argparse.Namespace, err: TextIO) -> list[Split] | None:
    """The pieces of the run, or None when it runs in one process."""
    jobs = args.jobs if getattr(args, "jobs", None) is not None else default_jobs()
    if jobs <= 1 or mode_of(args) is None:
        return None
    f = args.filters
    if f.start_position is not None or f.stop_position is not None:
        return None
    # A compiled loop skips what the filters drop, in one process only: the pieces would read every event
    # (a --table run on 2 cores took 10x the CPU of one process, docs/benchmarks.md, issue 29). A rollback's
    # filters are its conflict check's (_checked_rollback_runs_alone).
    if f.active and not getattr(args, "rollback", False) and skips_in_one_process(f):
        return None
    refs = api.local_files(args.files)      # None: standard input, gzip, not a regular file
    if refs is None:
        return None
    total = sum(r.size for r in refs)
    forced = os.environ.get(PIECE_ENV)
    piece = int(forced) if forced else max(MIN_PIECE, total // (jobs * PIECES_PER_JOB))
    if not forced and total < 2 * MIN_PIECE:
        return None
    mode = mode_of(args)
    # (a --schema file is read when the pieces' schema states are made; the first piece reads it again)
    planned = api.plan_pieces(refs, piece, ddl=mode.schema, one_format=mode.base64, read=read_options(args),
                              tracker=lambda: schema_tracker(args))
    if planned is None:
        return None
    if mode.base64:
        args.mariadb = planned.mariadb      # the script's flavour, the first file's
    if mode.schema:
        args.first_query_pieces = planned.first_query_pieces
    return planned.pieces


#: What the forked workers run: (run, args, pieces, folder) set by the parent before the fork.
_WORK: tuple | None = None


def _open(path: str):
    return open(path, "w", encoding="utf-8", errors="surrogateescape", newline="")


def _run_piece(index: int) -> tuple[int | None, bytes | None, tuple | None]:
    """In a worker: the command over one piece; (exit code, the pickled exception it raised, where)."""
    run, args, pieces, folder = _WORK
    piece_args = argparse.Namespace(**vars(args))
    piece_args.piece = pieces[index]
    piece_args.piece_index = index
    piece_args.piece_count = len(pieces)
    piece_args.piece_first_query = index in getattr(args, "first_query_pieces", ())
    with _open(os.path.join(folder, f"{index}.out")) as out, _open(os.path.join(folder, f"{index}.err")) as err:
        err.once = True      # warner() marks the warnings given once per run
        try:
            return run(piece_args, out, err), None, None
        except Exception as exc:  # noqa: BLE001 - raised again by the parent, in order
            try:
                data = pickle.dumps(exc)
            except Exception:  # noqa: BLE001
                data = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
            return None, data, getattr(piece_args, "at", None)


def hand_back(args: argparse.Namespace, key: str, value) -> bool:
    """In a worker: give the parent what the command reports at its end (merged over the pieces, in
    order, by the value's `merge`, then reported by the `report` given to `run`); False in one process,
    where the command reports it itself."""
    if getattr(args, "piece", None) is None or _WORK is None:
        return False
    with open(os.path.join(_WORK[3], f"{args.piece_index}.{key}"), "wb") as f:
        pickle.dump(value, f)
    return True


def _handed_back(folder: str, index: int, merged: dict, joiner=None) -> None:
    prefix = f"{index}."
    for name in os.listdir(folder):
        if name.startswith(prefix) and name not in (f"{index}.out", f"{index}.err"):
            with open(os.path.join(folder, name), "rb") as f:
                value = pickle.load(f)
            os.unlink(os.path.join(folder, name))
            key = name[len(prefix):]
            if joiner is not None and key == "base64":
                joiner.end_of_piece(value)
            if key in merged:
                merged[key].merge(value)
            else:
                merged[key] = value


def run(command: Callable[[argparse.Namespace, TextIO, TextIO], int], args: argparse.Namespace, out: TextIO,
        err: TextIO, report: Callable[[str, object, TextIO], None] | None = None, precheck=None) -> int:
    """The command, over pieces in `--jobs` processes when it can be (see the module doc), else as it is.
    `report(key, value, err)`: what the pieces handed back (`hand_back`), merged, reported at the end.
    `precheck(args, err)`: run in the parent before the pieces (a rollback's conflict check over the whole
    input): None, or (whether the pieces' stdout is kept, what ends the run: exit code -> exit code)."""
    if getattr(args, "piece", None) is not None:
        return command(args, out, err)
    pieces = plan(args, err)
    if pieces is None:
        return command(args, out, err)
    verdict = precheck(args, err) if precheck is not None else None
    if verdict is None:
        return _run_pieces(command, args, pieces, out, err, report)
    keep, finish = verdict
    return finish(_run_pieces(command, args, pieces, out if keep else _Nowhere(), err, report))


class _Nowhere:
    """Where the stdout of a rollback that must not be written goes."""

    def write(self, data) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def _run_pieces(command, args: argparse.Namespace, pieces, out: TextIO, err: TextIO, report) -> int:
    mode = mode_of(args)
    jobs = min(args.jobs if args.jobs is not None else default_jobs(), len(pieces))
    import concurrent.futures   # (imported here: one-process runs, most runs, never start a pool)
    import multiprocessing
    global _WORK
    folder = tempfile.mkdtemp(prefix="binlog-spec-jobs.")
    _WORK = (command, args, pieces, folder)
    pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                                  initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        out.flush()
        err.flush()
        if mode.reverse:
            return _join_reversed(pool, len(pieces), mode, folder, out, err, report)
        return _join(pool, len(pieces), jobs, mode, args, folder, out, err, report)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _WORK = None
        shutil.rmtree(folder, ignore_errors=True)


def _die_with_parent(parent: int) -> None:
    """A worker's start: it ends when the run's process ends, even killed with no chance to stop its pool
    (SIGKILL, the OOM killer), where it would wait for work forever (Linux's PR_SET_PDEATHSIG; elsewhere the
    pool stops its workers as it did)."""
    import ctypes
    import signal
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # (1: PR_SET_PDEATHSIG)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:      # (the run ended before the call)
        os._exit(1)


def _join(pool, n: int, jobs: int, mode: Mode, args, folder: str, out: TextIO, err: TextIO, report=None) -> int:
    """The pieces' outputs copied in order (at most 2 × jobs pieces ahead: bounded temporary files)."""
    bar = _bar(args, err)
    try:
        futures: dict = {}
        ahead = 2 * jobs
        for i in range(min(n, ahead)):
            futures[i] = pool.submit(_run_piece, i)
        code = 0
        header_done = False
        given: set[str] = set()
        merged: dict = {}
        joiner = None
        if mode.base64:
            joiner = api.base64_joiner(args.mariadb)
        for i in range(n):
            result = futures.pop(i).result()
            if i + ahead < n:
                futures[i + ahead] = pool.submit(_run_piece, i + ahead)
            if joiner is not None:
                joiner.copy(os.path.join(folder, f"{i}.out"), out)
            else:
                header_done = _copy_out(os.path.join(folder, f"{i}.out"), out, mode, header_done)
            _copy_err(os.path.join(folder, f"{i}.err"), err, given)
            _handed_back(folder, i, merged, joiner)
            for suffix in (".out", ".err"):
                os.unlink(os.path.join(folder, f"{i}{suffix}"))
            if bar is not None:
                piece = _WORK[2][i]
                bar.update((piece.ref.size if piece.end is None else piece.end) - piece.start)
            piece_code, raised, at = result
            if raised is not None:
                for f in futures.values():
                    f.cancel()
                args.at = at
                raise pickle.loads(raised)
            code = max(code, piece_code)
        if report is not None:
            for key, value in merged.items():
                report(key, value, err)
        return code
    finally:
        if bar is not None:
            bar.close()


def _join_reversed(pool, n: int, mode: Mode, folder: str, out: TextIO, err: TextIO, report) -> int:
    """A rollback's pieces: their stderr in order, then (no piece having raised) their stdout last piece
    first, the header once, and what they handed back, merged in order. One process writes nothing to
    stdout before it has read the whole input: a piece that raised leaves stdout empty."""
    futures = [pool.submit(_run_piece, i) for i in range(n)]
    code = 0
    given: set[str] = set()
    merged: dict = {}
    for i, future in enumerate(futures):
        piece_code, raised, at = future.result()
        _copy_err(os.path.join(folder, f"{i}.err"), err, given)
        if raised is not None:
            for f in futures[i + 1:]:
                f.cancel()
            _WORK[1].at = at
            raise pickle.loads(raised)
        _handed_back(folder, i, merged)
        code = max(code, piece_code)
    for key in [key for key in merged if key.startswith(BEFORE_OUTPUT)]:   # (the undo's summary)
        if report is not None:
            report(key, merged.pop(key), err)
    for k, i in enumerate(range(n - 1, -1, -1)):
        with open(os.path.join(folder, f"{i}.out"), encoding="utf-8", errors="surrogateescape", newline="") as f:
            for _ in range(mode.header):
                line = f.readline()
                if k == 0:      # every piece's header is the same: the first written is kept
                    out.write(line)
            shutil.copyfileobj(f, out, 1 << 20)
    if report is not None:
        for key, value in merged.items():
            report(key, value, err)
    return code


def _bar(args, err: TextIO):
    """A progress bar on a terminal (as cli.progress shows for one process), or None."""
    if not err.isatty():
        return None
    from tqdm import tqdm
    return tqdm(total=sum(os.path.getsize(f) for f in args.files), unit="B", unit_scale=True, unit_divisor=1024,
                file=err, desc="binlog-spec", leave=False, dynamic_ncols=True)


def _copy_out(path: str, out: TextIO, mode: Mode, header_done: bool) -> bool:
    raw = _same_bytes(out)
    with open(path, "rb") as f:
        skip = mode.header if header_done else 0
        printed = False
        for _ in range(mode.header):
            line = f.readline()
            if not line:
                break
            printed = True
            if not skip:
                out.write(line.decode("utf-8", "surrogateescape"))
            else:
                skip -= 1
        if raw is not None:     # the rest as bytes: what the piece wrote is what one process writes
            out.flush()
            write = raw.write
        else:
            decode, write = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode, out.write
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            printed = True
            write(chunk if raw is not None else decode(chunk))
        if raw is None:
            write(decode(b"", final=True))
    return header_done or printed or (mode.header > 0 and not mode.when_output)


def _same_bytes(out: TextIO):
    """The binary stream under `out` when `out` encodes as the pieces' files do (UTF-8, surrogateescape,
    no newline translation), so that their bytes can be copied without decoding; else None."""
    raw = getattr(out, "buffer", None)
    if raw is None or getattr(out, "errors", None) != "surrogateescape" or (out.encoding or "").lower().replace(
            "-", "").replace("_", "") != "utf8" or os.linesep != "\n":
        return None
    return raw


def _copy_err(path: str, err: TextIO, given: set[str]) -> None:
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        for line in f:
            if line.startswith(MARK):
                key, _, line = line[len(MARK):].partition(MARK)
                if key in given:
                    continue
                given.add(key)
            elif line.endswith(ONCE_SUFFIX):
                if ONCE_SUFFIX in given:
                    continue
                given.add(ONCE_SUFFIX)
            err.write(line)


#: The end of the filters' warning given once per run (stream.filters).
ONCE_SUFFIX = "(this warning is given once)\n"
