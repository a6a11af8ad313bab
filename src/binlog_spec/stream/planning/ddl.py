"""The DDL of binlogs as data: what a reader needs to know of the schema before a split that starts mid-file
or in a later file of a binlog sequence, gathered by a pass of its own (the Spark source's ``mode=ddl``,
one task per split) instead of a header pass on the planning side.

* `split_statements` reads one `Split` in the reader's scan mode: event bodies are stepped over by their
  header, except the QUERY events that may be DDL (those `scan_file` keeps), and those are returned as
  `Statement`s: file, position, default database, statement, server collation (Q_CHARSET_CODE).
* `write_jsonl` / `read_ddl`: the statements of many files as JSON lines (one object a line, the keys of
  `Statement`), the form the Spark source's ``ddl`` option reads. A line with ``size`` and no ``statement``
  is a file record: the file of that name and size was read whole, so a file of the read without one is
  not covered (`DdlStatements.check`).
* `DdlCache` keeps each file's statements under a key of its path, size and modification time
  (`cache_dir`: ``$BINLOG_SPEC_CACHE/ddl``, by default ``~/.cache/binlog-spec/ddl``), and `gather` reads
  only the files the cache does not hold (a changed file is read again) and writes the statements of a
  whole read to one file there.

Replaying the statements (`splits.with_schema_states`) in file order, up to each split's start, gives the
schema state the CLI's rows stage has at that position.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, NamedTuple

import orjson

from binlog_spec.errors import BinlogError
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.stream.planning.pieces import Split, SplitReader, starts_like_binlog
from binlog_spec.stream.planning.resync import resolve
from binlog_spec.stream.planning.scan import DEFAULT_CHUNK, ScanResult, scan_reader, statements_with_collation

#: Environment variable: the root of binlog-spec's caches (default ~/.cache/binlog-spec).
CACHE_ENV = "BINLOG_SPEC_CACHE"


class Statement(NamedTuple):
    """A QUERY event that may be DDL: where it is, its default database, its text, its server collation."""

    file: str
    pos: int
    db: str
    statement: str
    collation: int | None = None


def split_statements(split: Split, options: ReadOptions = DEFAULT_OPTIONS,
                     chunk: int = DEFAULT_CHUNK) -> tuple[list[Statement], BinlogError | None]:
    """The statements of one split that may be DDL, in order, and the fault that ended the split early
    (the reader's BinlogError, at the file's offset), or None. The split's bytes are read in the
    reader's scan mode (`BinlogReader.scan`): the framing and the CRC32s are checked as reading does,
    the bodies are not parsed but those of the QUERY events (`splits.statements_with_collation`)."""
    if split.if_binlog:        # a file not named like a binlog: left out unless it starts like one
        if not starts_like_binlog(split.ref):
            return [], None
        split = dataclasses.replace(split, if_binlog=False)
    if split.resync:           # a byte range: read from the transaction boundaries it resolves to
        try:
            resolved, _head = resolve(split)
        except BinlogError as exc:
            return [], exc
        if resolved is None:
            return [], None
        split = resolved
    reader = SplitReader(split, options)
    res = ScanResult()
    fault: BinlogError | None = None
    try:
        scan_reader(reader, res, True, None, chunk)
    except BinlogError as exc:
        exc.offset = reader.real(exc.offset)
        fault = exc
    except (OSError, EOFError) as exc:
        fault = BinlogError(f"cannot read: {exc}", file=split.ref.name, offset=split.start)
    finally:
        reader.close()
    res.ddl = [(p, ev, fde) for p, ev, fde in ((reader.real(v), ev, fde) for v, ev, fde in res.ddl)
               if p >= split.start]
    name = split.ref.name
    return [Statement(name, *st) for st in statements_with_collation(res)], fault


# ------------------------------------------------------------------------------ JSON lines
def statement_json(st: Statement) -> bytes:
    """One statement as a JSON line (no newline)."""
    return orjson.dumps(st._asdict())


def write_jsonl(path: str | os.PathLike, statements: Iterable[Statement],
                files: Iterable[tuple[str, int]] = ()) -> None:
    """Write `statements` (and `files`, (name, size) of each file read whole) as JSON lines, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as f:
            for name, size in files:
                f.write(orjson.dumps({"file": name, "size": size}) + b"\n")
            for st in statements:
                f.write(statement_json(st) + b"\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@dataclass
class DdlStatements:
    """The statements of a ``ddl`` file or folder, by file, in position order; `sizes`: the file records."""

    by_file: dict[str, list[tuple[int, str, str, int | None]]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    source: str = ""

    def of(self, name: str) -> list[tuple[int, str, str, int | None]]:
        """(position, db, statement, collation) of one file, as `splits.with_schema_states` replays them."""
        return self.by_file.get(name, [])

    def check(self, files: Iterable[tuple[str, int]]) -> None:
        """With file records: raise ValueError naming a file of the read that they do not cover, or whose
        size is not the one read (the statements are of another file, or of an older state of it)."""
        if not self.sizes:
            return
        for name, size in files:
            if name not in self.sizes:
                raise ValueError(f"{self.source}: no statements of {name} (its file record is missing): "
                                 "read its DDL again (binlog_spec.spark.read_binlog does)")
            if self.sizes[name] != size:
                raise ValueError(f"{self.source}: the statements of {name} are of a file of "
                                 f"{self.sizes[name]} bytes, it has {size} now: read its DDL again")


def read_ddl(path: str | os.PathLike) -> DdlStatements:
    """The statements of a JSON-lines file, or of every file of a folder (Spark's ``df.write.json``
    output: ``part-*`` files; names starting with ``.`` or ``_`` left out). Raises ValueError naming
    the file and line of a line that is not a statement or a file record."""
    p = Path(os.path.expanduser(str(path)))
    if p.is_dir():
        parts = sorted(x for x in p.iterdir() if x.is_file() and not x.name.startswith((".", "_")))
    elif p.is_file():
        parts = [p]
    else:
        raise ValueError(f"ddl: no such file or folder: {path}")
    out = DdlStatements(source=str(path))
    for part in parts:
        with open(part, "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    d = orjson.loads(line)
                    name = d["file"]
                    if "statement" not in d:
                        out.sizes[name] = int(d["size"])
                        continue
                    out.by_file.setdefault(name, []).append(
                        (int(d["pos"]), d.get("db") or "", d["statement"], d.get("collation")))
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"ddl: {part}: line {n}: not a statement or a file record "
                                     f"({type(exc).__name__}: {exc})") from None
    for statements in out.by_file.values():
        statements.sort(key=lambda st: st[0])
    return out


# ------------------------------------------------------------------------------------ cache
def cache_dir() -> Path:
    """Where `DdlCache` keeps its files: ``$BINLOG_SPEC_CACHE/ddl``, by default ``~/.cache/binlog-spec/ddl``."""
    root = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "binlog-spec")
    return Path(root) / "ddl"


class FileKey(NamedTuple):
    """What a file's cached statements are kept under: a changed size or mtime is a changed file."""

    name: str
    size: int
    mtime_ns: int

    def digest(self) -> str:
        return hashlib.sha256(orjson.dumps(list(self))).hexdigest()


class DdlCache:
    """Each file's statements in ``<dir>/files/<sha256 of path, size, mtime>.jsonl`` (a file of no DDL
    has an empty one), and the statements of whole reads in ``<dir>/reads/``."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.dir = Path(directory) if directory is not None else cache_dir()

    def _entry(self, key: FileKey) -> Path:
        return self.dir / "files" / f"{key.digest()}.jsonl"

    def get(self, key: FileKey) -> list[Statement] | None:
        path = self._entry(key)
        if not path.is_file():
            return None
        try:
            found = read_ddl(path)
        except ValueError:
            return None     # a damaged entry: read the file again
        return [Statement(key.name, *st) for st in found.of(key.name)]

    def put(self, key: FileKey, statements: Iterable[Statement]) -> None:
        write_jsonl(self._entry(key), sorted(statements, key=lambda st: st.pos))

    def read_path(self, keys: list[FileKey]) -> Path:
        """Where the statements of a read of these files are written."""
        digest = hashlib.sha256(b"".join(k.digest().encode() for k in keys)).hexdigest()
        return self.dir / "reads" / f"{digest}.jsonl"


def gather(keys: list[FileKey], read_missing: Callable[[list[str]], Iterable[Statement]],
           cache: DdlCache | None = None) -> tuple[Path, list[str]]:
    """The statements of the files `keys` name, in one JSON-lines file (with their file records), and
    the names of the files that were read: those the cache does not hold under their current key are
    read by `read_missing(names)` (e.g. a distributed ``mode=ddl`` read) and stored; the others are
    taken from the cache."""
    cache = cache or DdlCache()
    found: dict[str, list[Statement]] = {}
    missing = []
    for key in keys:
        got = cache.get(key)
        if got is None:
            missing.append(key)
        else:
            found[key.name] = got
    if missing:
        fresh: dict[str, list[Statement]] = {k.name: [] for k in missing}
        for st in read_missing([k.name for k in missing]):
            if st.file not in fresh:
                raise ValueError(f"a statement of {st.file}, which was not asked for")
            fresh[st.file].append(st)
        for key in missing:
            cache.put(key, fresh[key.name])
            found[key.name] = sorted(fresh[key.name], key=lambda st: st.pos)
    path = cache.read_path(keys)
    write_jsonl(path, (st for k in keys for st in found[k.name]), [(k.name, k.size) for k in keys])
    return path, [k.name for k in missing]
