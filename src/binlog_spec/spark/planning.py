"""Planning a read, on the driver: the files listed and cut into splits at transaction boundaries (the
header pass of binlog_spec.stream.planning.splits), and the typed view's table found by replaying the DDL before it."""
from __future__ import annotations

from pyspark.sql.datasource import InputPartition

from binlog_spec.stream.planning import resync
from binlog_spec.stream.planning.ddl import DdlStatements, read_ddl
from binlog_spec.stream.planning.pieces import Split, starts_like_binlog
from binlog_spec.stream.planning.scan import ScanResult, ddl_statements, scan_file
from binlog_spec.stream.planning.splits import plan_splits, with_schema_states
from binlog_spec.spark.types import SQL_ONLY
from binlog_spec.binlog import spec
from binlog_spec.binlog.fields import bodies
from binlog_spec.errors import BinlogSparkError
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.spark.options import Config


def _table_probe(db: str, name: str):
    needle_db, needle_t = db.encode("utf-8"), name.encode("utf-8")

    def probe(pos: int, ev: bytes, fde, res) -> TableDef | None:
        if needle_t not in ev or needle_db not in ev:
            return None
        try:
            fields = bodies.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:19]))
        except spec.SpecError:
            return None
        if fields.get("schema") != db or fields.get("table") != name:
            return None
        return TableDef.from_fields(fields, res.mariadb)
    return probe


def _replay(tracker: SchemaTracker, statements) -> None:
    for _pos, db, query in statements:
        tracker.observe_query(db, query)


def find_table(cfg: Config) -> TableDef:
    """The typed view's columns: the first TABLE_MAP of the table in the input, with names and
    signs completed by the schema file and the DDL before it; else the schema file alone."""
    db, _, name = cfg.table.partition(".")
    trackers: dict[tuple[str, str], SchemaTracker] = {}
    probe = _table_probe(db, name)
    for ref in cfg.files():
        key = sequence_key(ref.name)
        if key not in trackers:          # the schema file is parsed once a sequence, not once a file
            trackers[key] = cfg.tracker()
        tracker = trackers[key]
        res = scan_file(ref, ddl=cfg.replay_ddl != "never", verify_checksums=False, probe=probe)
        _replay(tracker, ddl_statements(res))  # up to that TABLE_MAP, when found
        found: TableDef | None = res.probe_result
        if found is not None:
            return tracker.complete(found)
    cols = cfg.tracker().columns(db, name)
    if cols is None:
        raise BinlogSparkError(f"table {cfg.table}: no TABLE_MAP_EVENT of it in the input and no CREATE TABLE "
                               "for it in the schema option's file")
    return _table_from_schema(db, name, cols)


def _table_from_schema(db: str, name: str, cols) -> TableDef:
    from binlog_spec.rows.column_types import Column
    columns = tuple(Column(type_code=SQL_ONLY, meta={"sql": c.data_type, "unsigned": c.unsigned},
                           name=c.name) for c in cols)
    return TableDef(table_id=-1, schema=db, table=name, columns=columns, nullable=tuple(True for _ in cols),
                    has_names=True, has_signedness=True)


class BinlogPartition(InputPartition):
    """One split; `first_last`: the run's first and last file (for startPosition/stopPosition)."""

    def __init__(self, split: Split, first_last: tuple[str, ...] = ()):
        super().__init__(split.ref.name)
        self.split = split
        self.first_last = first_last

    def __repr__(self) -> str:
        s = self.split
        return f"BinlogPartition({s.ref.name}, {s.start}..{'end' if s.end is None else s.end})"


def plan(cfg: Config) -> list[Split]:
    """Every split of the read, in file order, with the schema state each needs.

    The files are listed with their sizes, none opened (spark.files). A file larger than
    `splitSize` is cut by `planning` (`_cut`): `resync` reads its head only and cuts byte ranges that
    their readers resolve to transaction boundaries (binlog_spec.stream.planning.resync); `scan` makes the
    header pass over it (`scan_file`) and cuts at the boundaries it found; `auto`
    resyncs where the head says it can be trusted, else scans.

    Names (replayDdl): with the ``ddl`` option (the statements of a `mode=ddl` read, as
    `read_binlog` gathers them) each split's schema state is that of the statements before the
    boundary its reader starts at, and no planning pass reads DDL. Without it, in rows mode the first
    TABLE_MAP of each file is probed to tell whether the DDL must be replayed; when it must, the
    header pass reads the DDL of every file a later one of its sequence needs and of every file cut
    into pieces, whose pieces are then cut where that pass says (`DDL_HOOK`).
    The planning passes run on up to `PLAN_THREADS` files at once (what they wait for is I/O:
    object stores answer one request at a time per stream).
    """
    refs = cfg.files()
    if _positions_named(cfg):   # startPosition/stopPosition apply to the run's first and last binlog
        refs = [r for r in refs if not r.sniff or starts_like_binlog(r)]
    rows = cfg.mode in ("rows", "table")
    scans: dict[int, ScanResult] = {}
    given = given_ddl(cfg, refs) if rows else None
    cuts = _cut(cfg, refs)

    def first_pass(i: int) -> ScanResult:
        probe = _names_probe()
        return scan_file(refs[i], ddl=True, verify_checksums=cfg.read.verify_checksums,
                                       probe=_recording(probe) if cuts[i] == "scan" else probe)

    needs_ddl = rows and cfg.replay_ddl == "always" and given is None
    if rows and cfg.replay_ddl == "auto" and given is None:
        for i, res in enumerate(_map_files(first_pass, list(range(len(refs))))):
            if cuts[i] == "scan" or res.probe_result is None:
                scans[i] = res  # a whole pass (a file cut by scan, or a file with no TABLE_MAP)
            lacks = res.probe_result if res.probe_result is not None else getattr(res, "lacks_names", None)
            if lacks:
                needs_ddl = True
    keys = [sequence_key(ref.name) for ref in refs]
    last_of_sequence = {k: i for i, k in enumerate(keys)}
    todo = [i for i in range(len(refs)) if i not in scans
            and (cuts[i] == "scan" or (needs_ddl and (cuts[i] == "resync" or last_of_sequence[keys[i]] != i)))]
    done = _map_files(lambda i: scan_file(refs[i], ddl=needs_ddl,
                                                        verify_checksums=cfg.read.verify_checksums), todo)
    scans.update(zip(todo, done))
    splits: list[Split] = []
    for i, ref in enumerate(refs):
        if cuts[i] == "resync" and not (needs_ddl and DDL_HOOK):
            starts = cost_starts(ref, cuts.heads[i], cfg.split_size) if cfg.split_by == "cost" else None
            splits.extend(resync.plan_ranges(i, ref, cuts.heads[i], cfg.split_size, starts))
        elif cuts[i] in ("resync", "scan"):
            splits.extend(plan_splits(i, ref, scans.get(i), cfg.split_size))
        else:
            splits.append(Split(i, ref, 0, None, if_binlog=ref.sniff))
    if given is not None:
        starts = _resolved_starts(splits, cuts.heads)
        return schema_states(cfg, refs, splits, lambda i: given.of(refs[i].name), starts)
    if rows and (needs_ddl or cfg.schema_file):
        starts = _resolved_starts(splits, cuts.heads) if needs_ddl else {}
        splits = schema_states(cfg, refs, splits, lambda i: ddl_statements(scans[i])
                               if needs_ddl and i in scans else [], starts)
    return splits


def given_ddl(cfg: Config, refs: list) -> DdlStatements | None:
    """The ``ddl`` option's statements (stream.planning.ddl.read_ddl), checked against the files of the read;
    None without the option, or with replayDdl=never."""
    if not cfg.ddl_file or cfg.replay_ddl == "never":
        return None
    try:
        given = read_ddl(cfg.ddl_file)
        given.check((ref.name, ref.size) for ref in refs)
    except (ValueError, OSError) as exc:
        raise BinlogSparkError(str(exc)) from None
    return given


def schema_states(cfg: Config, refs: list, splits: list[Split], statements_of,
                  starts: dict[tuple[int, int], int] | None = None) -> list[Split]:
    """Each split with the schema state at its start: the DDL statements of each file
    (`statements_of(file_index)`: (position, db, query[, collation]) in position order) replayed
    in file order, one schema history per binlog sequence: files of one folder and one base name
    (mysql-bin.000001, mysql-bin.000002, ...) carry their CREATE/ALTER TABLEs to the next.
    `starts`: a resync split's range start -> the boundary its reader starts at (`_resolved_starts`)."""
    keys = [sequence_key(ref.name) for ref in refs]
    last_of_sequence = {k: i for i, k in enumerate(keys)}
    trackers: dict[tuple[str, str], SchemaTracker] = {}
    starts = starts or {}

    def tracker_of(i: int) -> SchemaTracker:
        if keys[i] not in trackers:
            trackers[keys[i]] = cfg.tracker()
        return trackers[keys[i]]
    return with_schema_states(splits, statements_of, tracker_of,
                                            carries=lambda i: last_of_sequence[keys[i]] != i,
                                            start_of=lambda s: starts.get((s.file_index, s.start), s.start))


#: Cutting by cost: the reading cost of an event, in bytes of row images (measured on the OLTP workload,
#: compiled core: about 10 µs per event of single-row transactions, 12 ns per byte of 1000-row INSERTs).
EVENT_COST = 800
#: Samples of the event density per piece (at most MAX_SAMPLES per file), each SAMPLE_SPAN bytes of headers.
SAMPLES_PER_PIECE, MAX_SAMPLES, SAMPLE_SPAN = 2, 32, 32 << 10


def cost_starts(ref, head: resync.Head, split_size: int) -> list[int]:
    """The starts of the ranges a file cut by resync is read in: as many as splitSize gives, of equal
    estimated cost rather than equal bytes (a stretch of small transactions costs many times a stretch
    of large rows events of the same size). The cost of each of k equal stretches is its bytes times
    (1 + EVENT_COST x its events per byte), the density sampled at the stretch's start
    (`resync.event_counts`: k small reads in the driver, 2 per piece, at most 32); the cuts fall
    where the cumulative cost reaches each piece's share, linearly within a stretch. Any cut is correct: each reader
    resolves its range to transaction boundaries."""
    size = ref.size
    n = -(-size // split_size)
    if n <= 1:
        return [0]
    k = min(MAX_SAMPLES, SAMPLES_PER_PIECE * n)
    edges = [size * j // k for j in range(k + 1)]
    counts = resync.event_counts(ref, head, edges[:-1], SAMPLE_SPAN)
    costs = [(e1 - e0) * (1 + EVENT_COST * events / got if got else 1)
             for e0, e1, (events, got) in zip(edges, edges[1:], counts)]
    total = sum(costs)
    starts, done, j = [0], 0.0, 0
    for piece in range(1, n):
        target = total * piece / n
        while j < k - 1 and done + costs[j] < target:
            done += costs[j]
            j += 1
        cut = edges[j] + int((edges[j + 1] - edges[j]) * min(1.0, (target - done) / costs[j]))
        if starts[-1] < cut < size:
            starts.append(cut)
    return starts


def _resolved_starts(splits: list[Split], heads: dict[int, resync.Head]) -> dict[tuple[int, int], int]:
    """(file index, range start) -> the transaction boundary its reader starts at, for the resync
    splits (a little read around each range start: `resync.resolved_starts`)."""
    by_file: dict[int, list[Split]] = {}
    for s in splits:
        if s.resync:
            by_file.setdefault(s.file_index, []).append(s)
    out: dict[tuple[int, int], int] = {}
    for i, starts in zip(by_file, _map_files(
            lambda i: resync.resolved_starts(by_file[i][0].ref, heads[i], [s.start for s in by_file[i]]), list(by_file))):
        out.update(((i, s.start), b) for s, b in zip(by_file[i], starts))
    return out


#: Where resync planning meets DDL replay. The DDL statements of a file come from its header pass
#: (`scans`) today, and while this is True a file cut by resync whose rows need the DDL replayed
#: (replayDdl=always, or auto with names missing) is cut where that pass says instead. When the
#: statements come from elsewhere (a distributed DDL read), set it False: the file is cut by resync
#: and each piece's schema state is that of the statements before the boundary its reader resolves
#: its range start to (`_resolved_starts`: a little read around each range start, in the driver).
DDL_HOOK = True


class _Cuts(list):
    """How each file is cut: "whole", "resync" or "scan"; `heads`: the heads read for resync."""

    heads: dict[int, resync.Head]


def _cut(cfg: Config, refs: list) -> _Cuts:
    """How each file is cut (see `plan`): a file no larger than splitSize is read whole and not
    opened; a larger one has its head read (`resync.read_head`) unless planning=scan."""
    big = [i for i, ref in enumerate(refs) if cfg.split_size > 0 and ref.size > cfg.split_size]
    out = _Cuts(["whole"] * len(refs))
    out.heads = {}
    if cfg.planning == "scan":
        for i in big:
            out[i] = "scan"
        return out
    out.heads = dict(zip(big, _map_files(lambda i: resync.read_head(refs[i]), big)))
    for i, head in out.heads.items():
        if head.fde is None:
            out[i] = "whole"        # gzip, or not a binlog (its reader says so, or leaves it out: sniff)
        elif head.reason is None:
            out[i] = "resync"
        elif cfg.planning == "resync":
            raise BinlogSparkError(f"{refs[i].name}: planning=resync cannot be trusted on this file "
                                   f"({head.reason}); use planning=auto or scan")
        else:
            out[i] = "scan"
    return out


def _positions_named(cfg: Config) -> bool:
    """Whether startPosition or stopPosition is set (they need the first and last binlog of the run)."""
    return cfg.filters.start_position is not None or cfg.filters.stop_position is not None


#: How many files the planning passes read at once.
PLAN_THREADS = 8


def _map_files(fn, items: list) -> list:
    """`fn` over `items` on a few threads, results in order (the first exception is raised)."""
    if len(items) < 2:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(PLAN_THREADS, len(items)), thread_name_prefix="binlog-plan") as pool:
        return list(pool.map(fn, items))


def sequence_key(name: str) -> tuple[str, str]:
    """The binlog sequence a file belongs to: its folder and its name without the last extension."""
    folder, _, base = name.rpartition("/")
    return folder, base.rsplit(".", 1)[0] if "." in base else base


def _names_probe():
    """Probe for the first TABLE_MAP of a file: True when it lacks names or signedness (so the
    row decoder needs the CREATE TABLE statements), False when it has both."""
    def probe(pos: int, ev: bytes, fde, res):
        try:
            fields = bodies.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:19]))
            t = TableDef.from_fields(fields, res.mariadb)
        except (*spec.SpecError, KeyError):
            return None
        return not (t.has_names and t.has_signedness)
    return probe


def _recording(probe):
    """A probe that records its first answer on the result but lets the pass go on."""
    def rec(pos, ev, fde, res):
        if not hasattr(res, "lacks_names"):
            answer = probe(pos, ev, fde, res)
            if answer is not None:
                res.lacks_names = answer
        return None
    return rec
