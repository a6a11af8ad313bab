"""--jobs N: a command run over pieces of its input in N processes, its output byte for byte that of one.

The parent makes the header pass over each file (binlog_spec.stream.planning.scan.scan_file: the framing only,
the pieces check the CRC32s as they read them), cuts the files
at transaction boundaries into pieces (plan_splits) and gives each piece the schema state of the DDL
before it (with_schema_states). Each worker process (forked: nothing is pickled on the way in) runs
the command's own function on its piece, reading it with `iter_split_events`, and writes its stdout
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
progress bar, by the pieces copied. This is how the CLI runs a command, so it lives in cli/; what it plans with is
in stream/.
"""
from __future__ import annotations

import argparse
import codecs
import dataclasses
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from typing import Callable, TextIO

from binlog_spec import api
from binlog_spec.binlog.reader import GZIP_MAGIC, STDIN, display_name
from binlog_spec.cli.arguments import MARK, schema_tracker  # a stderr line given once per run: MARK, key, MARK, line
from binlog_spec.stream.planning.pieces import LocalFile, QUERY_CODES, Split
from binlog_spec.stream.planning.scan import ScanResult, scan_file, statements_with_collation
from binlog_spec.stream.planning.splits import plan_splits, with_schema_states

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
        return Mode(header=1 if args.format == "text" else 0, when_output=True)
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


def _checked_rollback_runs_alone(args: argparse.Namespace) -> bool:
    """Whether a checked rollback (a SQL rollback under a filter: cli/rollback_check.py) runs in one process:
    where the check's compiled loop runs, one process reads the input once, checking and undoing as it
    goes, where under --jobs the parent reads all of it to check first and the pieces read the window
    again, which on two cores was slower than one process (docs/benchmarks.md, issue 18)."""
    return bool(args.rollback and args.filters.active) and api.conflict_check_compiled()


def plan(args: argparse.Namespace, err: TextIO) -> list[Split] | None:
    """The pieces of the run, or None when it runs in one process."""
    jobs = args.jobs if getattr(args, "jobs", None) is not None else default_jobs()
    if jobs <= 1 or mode_of(args) is None:
        return None
    f = args.filters
    if f.start_position is not None or f.stop_position is not None:
        return None
    refs = []
    for path in args.files:
        p = os.fspath(path)
        if p == STDIN or not os.path.isfile(p):
            return None
        try:
            with open(p, "rb") as fh:
                if fh.read(2) == GZIP_MAGIC:
                    return None
        except OSError:
            return None       # the run reports it, in order
        refs.append(LocalFile.of(p, display_name(p)))
    total = sum(r.size for r in refs)
    forced = os.environ.get(PIECE_ENV)
    piece = int(forced) if forced else max(MIN_PIECE, total // (jobs * PIECES_PER_JOB))
    if not forced and total < 2 * MIN_PIECE:
        return None
    schema = mode_of(args).schema
    scans, pieces = [], []
    for i, ref in enumerate(refs):
        # The pieces check the CRC32s as they read (a fault ends the run where it ends one process:
        # the pieces after it are dropped), so the header pass checks only the framing.
        scan = scan_file(ref, ddl=schema, verify_checksums=False)
        scans.append(scan)
        pieces += plan_splits(i, ref, scan, piece)
    if len(pieces) < 2:
        return None
    if mode_of(args).base64 and not _one_format(args, refs, scans):
        return None
    if schema:
        statements = []
        for i, scan in enumerate(scans):
            found = _statements(args, refs[i], scan)
            if found is None:
                return None
            statements.append(found[0])
            if found[1] is not None:    # the piece whose first QUERY_EVENT is the file's first
                args.first_query_pieces = getattr(args, "first_query_pieces", set()) | {
                    k for k, p in enumerate(pieces) if p.file_index == i and p.start <= found[1]
                    and (p.end is None or found[1] < p.end)}
        tracker = schema_tracker(args)  # (a --schema file is read here; the first piece reads it again)
        pieces = with_schema_states(pieces, statements.__getitem__, lambda i: tracker, quiet=True)
        pieces[0] = dataclasses.replace(pieces[0], schema_state=None)  # the run's own tracker, its notes
    return pieces


def _one_format(args: argparse.Namespace, refs, scans) -> bool:
    """The base64 script: whether every file has one FDE, all of one format (what the script's framing
    and flavour follow: one process prints a later file's FDE of another format); `args.mariadb`, the
    first file's flavour."""
    from binlog_spec.binlog import spec
    from binlog_spec.binlog.writer import H, events_have_checksum, fde_has_checksum
    formats = set()
    for ref, scan in zip(refs, scans):
        if len(scan.fdes) != 1 or scan.fault is not None and scan.fault[0] <= scan.fdes[0][0]:
            return False
        pos, size = scan.fdes[0]
        with ref.open() as f:
            f.seek(pos)
            data = f.read(size)
        try:
            fde = spec.parse_fde(data[H:])
        except Exception:  # noqa: BLE001 - one process reports it
            return False
        mariadb = "mariadb" in fde.server_version.lower()
        formats.add((tuple(fde.post_header_lens), fde.binlog_version, fde_has_checksum(fde),
                     events_have_checksum(fde), mariadb))
        if not hasattr(args, "mariadb"):
            args.mariadb = mariadb
    return len(formats) == 1


def _statements(args: argparse.Namespace, ref: LocalFile, scan: ScanResult
                ) -> tuple[list[tuple], int | None] | None:
    """What the rows stage replays into the schema before each cut of a file: its DDL, and the server's
    collation of its first QUERY_EVENT (rows.decoder.observe_schema), with that event's position;
    None when that is not known (more than one FDE, a fault before it): one process reads it."""
    statements = statements_with_collation(scan)
    if len(scan.fdes) != 1:       # (a file not cut too: the collation it leaves goes on to the next file)
        return None
    from binlog_spec.binlog.reader import read_events
    from binlog_spec.cli.arguments import read_options
    from binlog_spec.rows.decoder import server_collation
    events = read_events([ref.path], read_options(args))
    try:
        for ev in events:
            if ev.error is None and ev.type_code in QUERY_CODES:
                if all(pos != ev.pos for pos, *_ in statements):
                    statements.append((ev.pos, ev.fields.get("db", ""), ev.fields["query"], server_collation(ev)))
                    statements.sort(key=lambda st: st[0])
                return statements, ev.pos
    except Exception:  # noqa: BLE001 - a broken file: one process reports it
        return None
    finally:
        events.close()
    return statements, None


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
    pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
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
