"""The Spark data source (binlog_spec.spark) against the CLI, on local[2] and on a standalone cluster.

One SparkSession on local[2] serves the module; the standalone-cluster test (last) stops
it and starts a master and two workers in their own JVMs from the pyspark package's
`bin/spark-class`, on loopback, and stops them at the end.
"""
from __future__ import annotations

import collections
import datetime as dt
import decimal
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
import zlib
from pathlib import Path

import pytest

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"

import pyspark  # noqa: E402
from pyspark.errors import PySparkException  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.utils import CapturedException  # noqa: E402

import binlog_spec  # noqa: E402
from binlog_spec.spark.files import _expand_uri, list_files
from binlog_spec import cli  # noqa: E402
from binlog_spec.output import jsonenc
from binlog_spec.rows.decoder import ROW_OPS, read_rows
from binlog_spec.stream.planning.ddl import cache_dir, split_statements, write_jsonl
from binlog_spec.stream.planning.pieces import LocalFile, starts_like_binlog
from binlog_spec.stream.planning.scan import scan_file, statements_with_collation
from binlog_spec.stream.planning.splits import iter_split_events, plan_splits
from binlog_spec.spark.variant import encode
from binlog_spec.spark import BinlogDataSource, BinlogSparkError, register, sequence_key  # noqa: E402

from conftest import CORPUS, FIXTURES, ROOT, split_sequence  # noqa: E402

ALL_FILES = sorted(str(p) for p in CORPUS.glob("*/*") if p.is_file() and p.suffix not in (".tsv", ".md", ".xxd")) \
    + sorted(str(p) for p in FIXTURES.glob("*/mariadb-bin.*"))
DEMO = str(FIXTURES / "demo" / "mariadb-bin.000001")
MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")          # 2.3 MB, ANONYMOUS_GTID, 8.0 commit times
SAKILA = str(CORPUS / "mbcj_osheroff" / "mysql-bin.sakila")   # 1.4 MB, MySQL 5.6, DDL before the rows
TYPES = str(FIXTURES / "types-full" / "mariadb-bin.000001")   # 109 kB, MariaDB
SPARK_ERRORS = (PySparkException, CapturedException, Exception)


def _require_java() -> None:
    """Spark needs a JVM: say so plainly instead of failing deep inside py4j."""
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and Path(home, "bin", "java").is_file()):
        pytest.fail("the Spark tests need Java 17+ (`java` on PATH or JAVA_HOME); `make test` installs "
                    "openjdk-17-jre-headless through tools/ensure-apt.sh when `java` is missing", pytrace=False)


def _session(master: str, **conf) -> SparkSession:
    _require_java()
    b = (SparkSession.builder.master(master).appName("binlog-spec tests")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").config("spark.pyspark.python", sys.executable)
         .config("spark.driver.host", "127.0.0.1").config("spark.sql.shuffle.partitions", "4"))
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


@pytest.fixture(scope="module")
def spark():
    s = _session("local[2]")
    yield s
    s.stop()


# ------------------------------------------------------------------------ comparison
def _norm(x):
    """JSON values compared by value: integral floats as ints (22650.0 and the DECIMAL 22650.0
    that parse_json makes of it print differently), -0.0 as 0."""
    if isinstance(x, float):
        return int(x) if x.is_integer() else x
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_norm(v) for v in x]
    return x


def _key(d: dict) -> str:
    return json.dumps(_norm(d), sort_keys=True, ensure_ascii=False)


def cli_rows(files: list[str], *flags: str, together: bool = False
             ) -> tuple[collections.Counter, dict[str, str]]:
    """`binlog-spec rows --format jsonl` (in process): the row changes, each with its index in its
    rows event, and the error line of each file the CLI stops on (exit 3). One run per file, or
    one run over all `files` (`together`), as the data source reads them: one stream in order."""
    expected: collections.Counter = collections.Counter()
    faults: dict[str, str] = {}
    for group in ([files] if together else [[f] for f in files]):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["rows", "--format", "jsonl", *flags, *group], out=out, err=err)
        index: collections.Counter = collections.Counter()
        for line in out.getvalue().splitlines():
            d = json.loads(line)
            d["row_index"] = index[d["file"], d["pos"]]
            index[d["file"], d["pos"]] += 1
            expected[_key(d)] += 1
        if code == 3:   # the error line (warnings, e.g. of names unknown, may come before it)
            faults[group[-1]] = "\n".join(line for line in err.getvalue().splitlines()
                                          if line.startswith("binlog-spec: error:"))
        else:
            assert code in (0, 1), err.getvalue()
    return expected, faults


def spark_rows(df) -> tuple[collections.Counter, dict[str, list[tuple[int, str]]]]:
    """The DataFrame's row changes in the CLI's JSON form, and its _corrupt_record rows by file
    ((offset, message), in offset order)."""
    cols = ["file", "pos", "date_format(timestamp, \"yyyy-MM-dd'T'HH:mm:ss'Z'\") AS ts", "server_id", "gtid",
            "schema", "`table`", "op", "to_json(before) AS b", "to_json(after) AS a", "row_index"]
    corrupt = "_corrupt_record" in df.columns
    got: collections.Counter = collections.Counter()
    bad: dict[str, list[tuple[int, str]]] = {}
    for r in df.selectExpr(*cols, "_corrupt_record" if corrupt else "NULL AS _corrupt_record").collect():
        if r._corrupt_record is not None:
            bad.setdefault(r.file, []).append((r.pos, r._corrupt_record))
            continue
        got[_key({"file": r.file, "pos": r.pos, "timestamp": r.ts, "server_id": r.server_id, "gtid": r.gtid,
                  "schema": r.schema, "table": r.table, "op": r.op,
                  "before": json.loads(r.b) if r.b is not None else None,
                  "after": json.loads(r.a) if r.a is not None else None, "row_index": r.row_index})] += 1
    return got, {f: sorted(v) for f, v in bad.items()}


def cli_events(path: str) -> tuple[int, list[dict]]:
    """`binlog-spec events --format jsonl FILE` (in process): exit code and events."""
    out = io.StringIO()
    code = cli.main(["events", "--format", "jsonl", path], out=out, err=io.StringIO())
    return code, [json.loads(line) for line in out.getvalue().splitlines()]


def read(spark, paths, **options):
    r = spark.read.format("binlog")
    for k, v in options.items():
        r = r.option(k, v)
    if isinstance(paths, (list, tuple)):
        return r.option("paths", json.dumps([str(p) for p in paths])).load()
    return r.load(str(paths))


def sequences(files: list[str]) -> list[list[str]]:
    """The files grouped by binlog sequence (folder and name without the last extension)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f in files:
        groups.setdefault(sequence_key(f), []).append(f)
    return list(groups.values())


_EXPECTED: dict[tuple[str, ...], tuple] = {}


def cli_expectation(files: list[str]) -> tuple[collections.Counter, dict[str, str], list[str]]:
    """What the CLI gives for `files` (see assert_same_rows_as_cli), computed once per list."""
    key = tuple(files)
    if key not in _EXPECTED:
        expected: collections.Counter = collections.Counter()
        faults: dict[str, str] = {}
        broken: list[str] = []
        for group in sequences(files):
            rows_, fault = cli_rows(group, together=True)
            if not fault:
                expected.update(rows_)
                continue
            # the CLI stops at the first fault: sort the sequence's files into good and broken
            bad = [f for f in group if cli_rows([f])[1]]
            broken.extend(bad)
            for f in bad:
                rows_, fault = cli_rows([f])
                expected.update(rows_)
                faults.update(fault)
            good = [f for f in group if f not in bad]
            if good:
                expected.update(cli_rows(good, together=True)[0])
        _EXPECTED[key] = expected, faults, broken
    return _EXPECTED[key]


def assert_same_rows_as_cli(spark, files, **options):
    """One read of all `files` gives, for the files the CLI reads to the end, the row changes of
    one CLI run over each binlog sequence (CREATE TABLEs carry from file to file within one);
    for the files it stops on (exit 3), read with onError=skip, the CLI's rows of each and a
    _corrupt_record at the same offset with the same message. A decode fault (the file's events
    read to the end: its rows events fail, not its framing) does not end the file: each rows
    event that does not decode has its own _corrupt_record, and reading goes on (docs/spark.md)."""
    expected, faults, broken = cli_expectation(files)
    assert sum(expected.values()) > 10000 and len(broken) >= 5
    got, bad = spark_rows(read(spark, files, onError="skip", **options))
    assert got == expected, (list((got - expected).items())[:3], list((expected - got).items())[:3])
    assert sorted(bad) == sorted(faults) == sorted(broken)
    decode_faults = 0
    for f, ((offset, message), *more) in bad.items():
        assert faults[f] == f"binlog-spec: error: {message}"
        assert f"offset {offset}:" in message
        code, events = cli_events(f)
        if code == 3:   # a framing fault ends the file: one record
            assert not more, (f, more)
            continue
        decode_faults += 1
        rows_events = {e["pos"] for e in events if e["type_code"] in ROW_OPS}
        assert offset in rows_events and all(o > offset and o in rows_events for o, _ in more), (f, more)
    assert decode_faults >= 1   # rust_mysql_common/ver_5_1-wl2325_s.001: rows events without TABLE_MAP


# ------------------------------------------------------------------------ pure python
def test_variants_are_byte_identical_to_pyspark_parse_of_the_cli_json():
    from pyspark.sql.variant_utils import VariantBuilder
    n = 0
    for f in (DEMO, MYSQL8, str(CORPUS / "rust_mysql_common" / "json.binlog.000001"),
              str(FIXTURES / "types-full" / "mariadb-bin.000001")):
        for rc in read_rows(binlog_spec.open(f)):
            for image in (rc.before, rc.after):
                if image is not None:
                    assert encode(image) == VariantBuilder().build(jsonenc.dumps(image))
                    n += 1
    edge = [18446744073709551615, -9223372036854775808, 10 ** 40, 1.5e300, 1e-05, -0.0, 0.1, "é" * 70,
            {"b": [None, True, False], "a": {"hex": "00"}}, list(range(300)), {str(i): i for i in range(300)}]
    for v in edge:
        assert encode(v) == VariantBuilder().build(jsonenc.dumps(v)), v
    assert n > 10000


def test_header_pass_finds_transaction_boundaries_and_faults(tmp_path):
    ref = list_files([MYSQL8])[0]
    res = scan_file(ref)
    assert res.fault is None and res.events == 2900
    events = list(binlog_spec.open(MYSQL8))
    starts = {e.pos for e in events if e.type in ("ANONYMOUS_GTID_LOG_EVENT", "GTID_LOG_EVENT")}
    assert starts <= set(res.boundaries) and len(starts) > 500
    broken = tmp_path / "broken.000001"
    data = bytearray(Path(MYSQL8).read_bytes())
    data[1_000_000] ^= 0xFF
    broken.write_bytes(bytes(data))
    res = scan_file(list_files([str(broken)])[0])
    assert res.fault is not None and res.fault[0] <= 1_000_000 and res.fault[1].startswith("CRC32 mismatch")
    assert max(res.boundaries) <= res.fault[0]


def test_a_file_read_through_pyarrow_fs_is_the_file(tmp_path):
    listed = _expand_uri(f"file://{FIXTURES / 'demo'}", False, None)
    # listed without opening: the .txt and .sql files are only read if they start like a binlog
    assert [r.name for r in listed if r.sniff] == [f"file://{FIXTURES / 'demo' / n}"
                                                   for n in ("mariadb-binlog.txt", "workload.sql")]
    assert not any(starts_like_binlog(r) for r in listed if r.sniff)
    refs = [r for r in listed if not r.sniff]
    assert [r.name for r in refs] == [f"file://{DEMO}"] and refs[0].uri
    split = plan_splits(0, refs[0], None, 0)[0]
    via_arrow = [(e.pos, e.type) for e in iter_split_events(split)]
    assert via_arrow == [(e.pos, e.type) for e in binlog_spec.open(DEMO)]


# ------------------------------------------------------------------------ local[2]
def test_rows_equal_the_cli_on_the_corpus_and_the_fixtures(spark):
    assert_same_rows_as_cli(spark, ALL_FILES)


def test_rows_equal_the_cli_with_every_file_cut_in_pieces(spark):
    """Every corpus and fixture file cut every 32 kB (resync planning where it can be trusted, the
    header pass elsewhere and where the names need the DDL replayed): the CLI's rows, as sets."""
    assert_same_rows_as_cli(spark, ALL_FILES, splitSize="32k")
    assert_same_rows_as_cli(spark, ALL_FILES, splitSize="32k", planning="scan")


def test_splitting_a_file_changes_nothing(spark):
    """A tiny splitSize cuts each file into many self-contained pieces: the same rows, events and
    transactions as reading each file whole. MYSQL8's and SAKILA's rows need the DDL replayed for
    their names, so their pieces are cut by the header pass (at transaction boundaries: 33 and 12
    pieces); TYPES's have their names and are cut by resync (one byte range per 4 kB: 27 pieces),
    as are MYSQL8's events and transactions, and its rows without DDL replay."""
    for f, size, n in ((MYSQL8, "64k", 33), (SAKILA, "8k", 12), (TYPES, "4k", 27)):
        whole = read(spark, f, splitSize="0")
        pieces = read(spark, f, splitSize=size)
        assert (whole.rdd.getNumPartitions(), pieces.rdd.getNumPartitions()) == (1, n)
        a = spark_rows(whole)[0]
        assert a == spark_rows(pieces)[0] and sum(a.values()) > 200
        if f == TYPES:
            scanned = read(spark, f, splitSize=size, planning="scan")
            assert scanned.rdd.getNumPartitions() == 19 and spark_rows(scanned)[0] == a
        if f == MYSQL8:
            bare = read(spark, f, splitSize=size, replayDdl="never")
            assert bare.rdd.getNumPartitions() == -(-os.path.getsize(f) // 65536)
            # without the DDL before each piece the names may differ from the whole read's: the rows are the same
            ops = lambda df: collections.Counter(map(tuple, df.select("pos", "op", "table").collect()))
            assert ops(bare) == ops(read(spark, f, splitSize="0", replayDdl="never")) == ops(whole)
        if f == SAKILA:  # its rows need the CREATE TABLEs before each piece for their names
            assert a == spark_rows(read(spark, f, splitSize=size, replayDdl="always"))[0]
            assert any('"address_id"' in k for k in a)
        modes = ("events", "transactions") if f == MYSQL8 else ("transactions",)
        for mode in modes:
            w, p = (_records(read(spark, f, mode=mode, splitSize=s)) for s in ("0", size))
            assert w == p and len(w) > 50


#: Files whose rows take their names (and signedness, charsets) from DDL replay: MySQL with MINIMAL row
#: metadata (8.0's default, 5.6/5.7 with none), MariaDB without optional metadata.
NAMELESS = [(MYSQL8, "64k"), (SAKILA, "8k"), (str(CORPUS / "rust_mysql_common" / "minimal_row_metadata.000001"), "100"),
            (str(FIXTURES / "charsets-nolog" / "mariadb-bin.000001"), "1k"),
            (str(FIXTURES / "types-minimal" / "mariadb-bin.000001"), "2k")]


def _minimal_sequence(folder) -> list[str]:
    """types-minimal cut in two files of one sequence: the CREATE TABLEs in the first, rows in both; the
    second file read alone has rows with unknown names (@1, ...), so the test below can fail."""
    src = FIXTURES / "types-minimal" / "mariadb-bin.000001"
    scan = scan_file(LocalFile.of(str(src)))
    cut = min(scan.boundaries, key=lambda b: abs(b - scan.size // 5))
    files = split_sequence(src, folder, cut)
    alone, together = cli_rows(files[1:])[0], cli_rows(files, together=True)[0]
    assert any('"@1"' in k for k in alone) and not any('"@1"' in k for k in together)
    return files


def _split_rows(cfg_options: dict) -> collections.Counter:
    """The rows of a read planned and read in this process (planning.plan, records.read_split), in the
    CLI's JSON form: no JVM, many small splits."""
    from binlog_spec.spark.options import Config
    from binlog_spec.spark.planning import plan
    from binlog_spec.spark.records import output_schema, read_split
    cfg = Config.from_options({**cfg_options, "images": "json"})
    schema = output_schema(cfg)
    got: collections.Counter = collections.Counter()
    for s in plan(cfg):
        for batch in read_split(cfg, schema, s):
            for r in batch.to_pylist():
                ts = dt.datetime.fromtimestamp(r["timestamp"].timestamp(), dt.timezone.utc)
                got[_key({"file": r["file"], "pos": r["pos"], "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "server_id": r["server_id"], "gtid": r["gtid"], "schema": r["schema"],
                          "table": r["table"], "op": r["op"],
                          "before": json.loads(r["before"]) if r["before"] is not None else None,
                          "after": json.loads(r["after"]) if r["after"] is not None else None,
                          "row_index": r["row_index"]})] += 1
    return got


def test_the_ddl_option_gives_every_split_the_clis_names_charsets_and_keys(tmp_path):
    """Statements gathered per split (stream.planning.ddl.split_statements, what mode=ddl's tasks run), given as
    the ddl option: each of many small splits has the schema of the DDL before it, in file order across
    a binlog sequence, and no planning pass reads DDL. Rows equal the CLI's (with DDL replay)."""
    from binlog_spec.spark.options import Config
    from binlog_spec.spark.planning import plan
    cases = [([f], size) for f, size in NAMELESS] + [(_minimal_sequence(tmp_path), "2k")]
    real_scan = scan_file
    for files, size in cases:
        options = {"paths": json.dumps(files), "splitSize": size}
        found = [st for s in plan(Config.from_options({**options, "mode": "ddl"}))
                 for st in split_statements(s)[0]]
        ddl = tmp_path / "ddl.jsonl"
        write_jsonl(ddl, found, [(f, os.path.getsize(f)) for f in files])
        scans = []
        with pytest.MonkeyPatch.context() as m:     # every header pass of the planning, recorded
            m.setattr("binlog_spec.spark.planning.scan_file", lambda *a, **k: scans.append(k) or real_scan(*a, **k))
            got = _split_rows({**options, "ddl": str(ddl)})
            assert all(not k.get("ddl") for k in scans)   # the DDL is the option's, not a pass's
            assert len(plan(Config.from_options({**options, "ddl": str(ddl)}))) >= (2 if len(files) > 1 else 3)
        expected = cli_rows(files, together=True)[0]
        assert got == expected and sum(got.values()) > 0, (files, list((got - expected).items())[:2])
        if files[0] in (SAKILA, MYSQL8) or len(files) > 1:     # ... and they need that DDL
            write_jsonl(ddl, [], [(f, os.path.getsize(f)) for f in files])
            assert _split_rows({**options, "ddl": str(ddl)}) != expected


def test_a_ddl_option_of_other_files_is_an_error(tmp_path):
    from binlog_spec.spark.options import Config
    from binlog_spec.spark.planning import plan
    ddl = tmp_path / "ddl.jsonl"
    write_jsonl(ddl, [], [(SAKILA, os.path.getsize(SAKILA) - 1)])
    with pytest.raises(BinlogSparkError, match="mysql-bin.sakila are of a file of"):
        plan(Config.from_options({"path": SAKILA, "ddl": str(ddl)}))
    with pytest.raises(BinlogSparkError, match=r"no statements of .*binlog.000693"):
        plan(Config.from_options({"path": MYSQL8, "ddl": str(ddl)}))


def test_read_binlog_gathers_the_ddl_in_a_distributed_job_and_caches_it(spark, tmp_path):
    """mode=ddl on local[2] gives the header pass's statements; read_binlog gives every small split the
    CLI's rows, and reads again only the files that changed."""
    from binlog_spec.spark import read_binlog
    folder = tmp_path / "seq"
    folder.mkdir()
    files = _minimal_sequence(folder) + [SAKILA]
    ddl = read(spark, files, mode="ddl", splitSize="4k")
    assert ddl.rdd.getNumPartitions() > 10
    assert [f.name for f in ddl.schema.fields] == ["file", "pos", "db", "statement", "collation"]
    want = [(f, *st) for f in files
            for st in statements_with_collation(scan_file(LocalFile.of(f),
                                                                                      ddl=True))]
    assert sorted(tuple(r) for r in ddl.collect()) == sorted(want) and len(want) > 40
    cache = tmp_path / "cache"
    df = read_binlog(spark, files, cache=cache, splitSize="4k")
    assert df.rdd.getNumPartitions() > 10
    expected = collections.Counter()
    for group in sequences(files):
        expected.update(cli_rows(group, together=True)[0])
    assert spark_rows(df)[0] == expected
    entries = sorted((cache / "files").iterdir())
    assert len(entries) == 3 and len(list((cache / "reads").iterdir())) == 1
    read_binlog(spark, files, cache=cache, splitSize="4k")
    assert sorted((cache / "files").iterdir()) == entries      # nothing read again
    st = os.stat(files[1])
    os.utime(files[1], ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    df = read_binlog(spark, files, cache=cache, splitSize="4k")
    assert len(list((cache / "files").iterdir())) == 4          # the touched file, read again
    assert spark_rows(df)[0] == expected
    assert cache_dir().name == "ddl"


def _records(df) -> collections.Counter:
    if "body" in df.columns:
        df = df.selectExpr("*", "to_json(body) AS body_json").drop("body")
    return collections.Counter(json.dumps(r.asDict(), default=str, sort_keys=True) for r in df.collect())


def test_a_corrupt_file_fails_naming_the_file_and_the_offset(spark, tmp_path):
    bad = tmp_path / "mysql-bin.000002"
    data = bytearray(Path(MYSQL8).read_bytes())
    data[1_000_000] ^= 0xFF
    bad.write_bytes(bytes(data))
    _, faults = cli_rows([str(bad)])
    offset = int(faults[str(bad)].split("offset ")[1].split(":")[0])
    for split in ("0", "64k"):
        with pytest.raises(SPARK_ERRORS) as exc:
            read(spark, bad, splitSize=split).count()
        text = str(exc.value)
        assert f"{bad}: offset {offset}: " in text and "CRC32 mismatch" in text


def test_on_error_skip_keeps_every_good_row_and_names_the_broken_file(spark, tmp_path):
    folder = tmp_path / "binlogs"
    folder.mkdir()
    shutil.copy(DEMO, folder / "mariadb-bin.000001")
    shutil.copy(MYSQL8, folder / "binlog.000693")
    data = Path(MYSQL8).read_bytes()
    (folder / "binlog.000694").write_bytes(data[:1_500_000])          # cut inside an event
    (folder / "notes.txt").write_text("not a binlog: left out of the folder\n")
    files = sorted(str(p) for p in folder.glob("*.0*"))
    expected, faults = cli_rows(files)
    assert list(faults) == [str(folder / "binlog.000694")]
    for split in ("0", "128k"):
        df = read(spark, folder, onError="skip", splitSize=split)
        got, bad = spark_rows(df)
        assert got == expected
        ((pos, message),), = bad.values()
        assert faults[str(folder / "binlog.000694")] == f"binlog-spec: error: {message}"
        assert message.startswith(f"{folder / 'binlog.000694'}: offset {pos}: ")
    # every mode has the record
    for mode in ("events", "transactions"):
        df = read(spark, folder / "binlog.000694", onError="skip", mode=mode)
        assert df.filter("_corrupt_record IS NOT NULL").count() == 1


def test_a_damaged_binlog_in_a_folder_is_read_not_left_out(spark, tmp_path):
    """A binlog whose magic is damaged still has a binlog's name: the folder gives it to the reader,
    which fails on it naming the file and offset 0 (onError=fail), or skips it with its record
    (onError=skip); a file neither named nor starting like a binlog is left out."""
    folder = tmp_path / "binlogs"
    folder.mkdir()
    shutil.copy(DEMO, folder / "mariadb-bin.000001")
    damaged = folder / "mariadb-bin.000002"
    data = bytearray(Path(DEMO).read_bytes())
    data[0] = 0
    damaged.write_bytes(bytes(data))
    (folder / "mariadb-bin.index").write_text("./mariadb-bin.000001\n./mariadb-bin.000002\n")
    expected, faults = cli_rows([str(folder / "mariadb-bin.000001"), str(damaged)])
    assert list(faults) == [str(damaged)] and f"{damaged}: offset 0: not a binlog" in faults[str(damaged)]
    with pytest.raises(SPARK_ERRORS) as exc:
        read(spark, folder).count()
    assert f"{damaged}: offset 0: not a binlog" in str(exc.value)
    got, bad = spark_rows(read(spark, folder, onError="skip"))
    assert got == expected and sum(expected.values()) > 0
    assert bad == {str(damaged): [(0, faults[str(damaged)].removeprefix("binlog-spec: error: "))]}


def _without_table_map(src: str, dst: Path, after: int) -> tuple[int, str, int]:
    """Copy `src` to `dst` with the first rows event past byte `after` pointing at a table id no
    TABLE_MAP defines (its CRC32 recomputed: the framing stays good, only its decoding fails).
    Returns (its position, its type, the number of rows events after it)."""
    data = bytearray(Path(src).read_bytes())
    events = [e for e in binlog_spec.open(src) if e.type_code in ROW_OPS and not e.is_inner]
    ev = next(e for e in events if e.pos > after)
    body = 19  # MySQL 8 rows event: table id, 6 bytes little-endian, first in the post-header
    assert int.from_bytes(data[ev.pos + body:ev.pos + body + 6], "little") == ev.fields["table_id"]
    data[ev.pos + body:ev.pos + body + 6] = (999_999).to_bytes(6, "little")
    end = ev.pos + ev.size
    data[end - 4:end] = zlib.crc32(bytes(data[ev.pos:end - 4])).to_bytes(4, "little")
    dst.write_bytes(bytes(data))
    return ev.pos, ev.type, sum(1 for e in events if e.pos > ev.pos)


def test_a_decode_fault_gives_one_record_and_reading_goes_on_whole_or_split(spark, tmp_path):
    """onError=skip with a rows event that does not decode (no TABLE_MAP for its table id) in the
    middle of a file: its _corrupt_record, and every other row of the file, read whole or in 33
    pieces; the rows are the CLI's rows of the unpatched file less the rows of that event."""
    bad = tmp_path / "binlog.000693"
    pos, typ, after = _without_table_map(MYSQL8, bad, 1_000_000)
    assert after > 100
    message = f"{bad}: offset {pos}: {typ}: no TABLE_MAP_EVENT defines table id 999999"
    code, events = cli_events(str(bad))
    assert code == 0   # the framing is good
    assert cli_rows([str(bad)])[1] == {str(bad): f"binlog-spec: error: {message}"}   # the CLI stops there
    original, _ = cli_rows([MYSQL8])
    expected: collections.Counter = collections.Counter()
    for k, n in original.items():
        d = json.loads(k)
        if d["pos"] != pos:
            d["file"] = str(bad)
            expected[_key(d)] += n
    assert 0 < sum(original.values()) - sum(expected.values()) < sum(expected.values())
    results = {}
    for split in ("0", "64k"):
        df = read(spark, bad, onError="skip", splitSize=split)
        assert df.rdd.getNumPartitions() == (1 if split == "0" else 33)
        results[split] = spark_rows(df)
        assert results[split] == (expected, {str(bad): [(pos, message)]})
    # transactions: the same records whole and split, the fault's among them
    tx = {split: _records(read(spark, bad, mode="transactions", onError="skip", splitSize=split))
          for split in ("0", "64k")}
    assert tx["0"] == tx["64k"]
    assert sum(n for k, n in tx["0"].items() if json.loads(k)["_corrupt_record"] == message) == 1
    # onError=fail: the error, naming the file and the offset, whole or split
    for split in ("0", "64k"):
        with pytest.raises(SPARK_ERRORS) as exc:
            read(spark, bad, splitSize=split).count()
        assert message in str(exc.value)


def test_events_are_the_cli_events(spark):
    for f in (DEMO, MYSQL8, str(CORPUS / "rust_mysql_common" / "json.binlog.000001")):
        out = io.StringIO()
        assert cli.main(["events", "--format", "jsonl", f], out=out, err=io.StringIO()) == 0
        expected = collections.Counter(_key(json.loads(line)) for line in out.getvalue().splitlines())
        df = read(spark, f, mode="events").selectExpr(
            "*", "date_format(timestamp, \"yyyy-MM-dd'T'HH:mm:ss'Z'\") AS ts", "to_json(body) AS j")
        got: collections.Counter = collections.Counter()
        for r in df.collect():
            d = {k: r[k] for k in ("file", "pos", "end_log_pos", "type", "type_code", "server_id", "size", "flags",
                                   "checksum", "payload_pos", "payload_offset", "error") if r[k] is not None}
            d["timestamp"] = r.ts
            d.update(json.loads(r.j))
            got[_key(d)] += 1
        assert got == expected


def test_transactions_use_8_0_commit_timestamps_when_present(spark):
    tx = read(spark, MYSQL8, mode="transactions")
    assert tx.agg({"rows": "sum"}).first()[0] == sum(cli_rows([MYSQL8])[0].values())
    r = tx.orderBy("start_pos").first()
    assert (r.start_pos, r.gtid, r.commit_time_source) == (157, "ANONYMOUS", "immediate_commit_timestamp")
    assert r.commit_time == dt.datetime(2023, 12, 4, 1, 50, 7, 205861) and r.bytes == 723  # transaction_length
    assert tx.filter("commit_time_source <> 'immediate_commit_timestamp'").count() == 0
    demo = read(spark, DEMO, mode="transactions").orderBy("start_pos").collect()
    assert {r.commit_time_source for r in demo} == {"commit_event"}
    t = next(r for r in demo if r.gtid == "0-1-4")
    assert (t.rows, t.inserts, t.tables, t.xid) == (6, 6, ["shop.customers", "shop.orders"], decimal.Decimal(11))
    assert t.end_pos - t.start_pos == t.bytes and t.complete


#: The server's own description of the fixture's tables (information_schema.COLUMNS).
FULL_COLUMNS = json.loads((FIXTURES / "types-full" / "columns.json").read_text())
TYPED_META = ["_op", "_file", "_pos", "_end_log_pos", "_row_index", "_timestamp", "_server_id", "_gtid"]


def _issue_type(col: dict) -> str | None:
    """The Spark type the issue asks for a server column type, or None for the types it leaves open."""
    data_type, column_type = col["data_type"], col["column_type"]
    if data_type == "decimal":
        p, s = map(int, re.fullmatch(r"decimal\((\d+),(\d+)\)( unsigned)?", column_type).group(1, 2))
        return f"decimal({p},{s})"
    if data_type == "bigint" and column_type.endswith("unsigned"):
        return "decimal(20,0)"
    return {"datetime": "timestamp_ntz", "timestamp": "timestamp", "json": "variant"}.get(data_type)


def test_typed_view_maps_column_types(spark):
    checked = collections.Counter()
    for table in ("coltypes.ints", "coltypes.decimals", "coltypes.datetimes"):
        types = dict(read(spark, TYPES, table=table).dtypes)
        assert list(types) == [c["name"] for c in FULL_COLUMNS[table]] + TYPED_META
        for col in FULL_COLUMNS[table]:
            want = _issue_type(col)
            if want is None:
                continue
            if want.startswith("decimal(") and int(want[8:].split(",")[0]) > 38:
                want = "string"   # DECIMAL(65,30) has no Spark decimal (38 digits at most): its exact text
            assert types[col["name"]] == want, (table, col)
            checked[want.split("(")[0]] += 1
    assert checked == {"decimal": 8, "timestamp_ntz": 7, "timestamp": 7, "string": 2}
    ints = dict(read(spark, TYPES, table="coltypes.ints").dtypes)
    assert [ints[n] for n in ("ti", "tiu", "si", "siu", "i", "iu", "bi", "biu")] == [
        "tinyint", "smallint", "smallint", "int", "int", "bigint", "bigint", "decimal(20,0)"]
    j = dict(read(spark, str(CORPUS / "rust_mysql_common" / "json.binlog.000001"), table="mysql.t").dtypes)
    assert [j[n] for n in ("id", "json_col", "name", "age")] == ["int", "variant", "string", "int"]


def _server_state(table: str) -> dict[int, dict[str, str | None]]:
    """The table's rows at the end of the workload as the server exported them (expected.jsonl:
    the table's content after each statement), id -> column -> the server's text (TIMESTAMPs:
    their UNIX_TIMESTAMP)."""
    last = None
    for line in (FIXTURES / "types-full" / "expected.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d["table"] == table:
            last = d
    return {r["id"]: {k: None if v is None else v.get("unix", v["text"]) for k, v in r.items() if k != "id"}
            for r in last["rows"]}


def _spark_state(df) -> dict[int, dict[str, str | None]]:
    """The typed view's changes replayed in binlog order, by primary key, each value as text."""
    exprs = []
    for name, typ in df.dtypes:
        if typ == "timestamp":
            exprs.append(f"CAST(unix_micros(`{name}`) AS STRING) AS `{name}`")
        elif typ == "timestamp_ntz":
            exprs.append(f"date_format(`{name}`, 'yyyy-MM-dd HH:mm:ss.SSSSSS') AS `{name}`")
        else:
            exprs.append(f"CAST(`{name}` AS STRING) AS `{name}`")
    state: dict[int, dict] = {}
    order = {"update_before": 0}   # an update's before image first, then its after image
    for r in sorted(df.selectExpr(*exprs).collect(),
                    key=lambda r: (int(r._pos), int(r._row_index), order.get(r._op, 1))):
        d = {k: v for k, v in r.asDict().items() if not k.startswith("_")}
        key = int(d.pop("id"))
        if r._op in ("delete", "update_before"):
            del state[key]
        else:
            state[key] = d
    return state


def _server_text(typ: str, text: str | None) -> str | None:
    """The server's text of a value as Spark prints the typed view's column (a date with a zero
    year, month or day has no Spark value: NULL)."""
    if text is None or (typ == "timestamp_ntz" and (text[:4] == "0000" or "00" in (text[5:7], text[8:10]))):
        return None
    if typ == "timestamp":      # UNIX_TIMESTAMP, seconds with the column's fraction -> microseconds
        return str(int(decimal.Decimal(text) * 1_000_000))
    if typ == "timestamp_ntz":
        day, _, frac = text.partition(".")
        return f"{day}.{frac.ljust(6, '0')}"
    return text


def test_typed_view_values_are_the_servers(spark):
    """The typed view's values, against the server's own export of the tables (not our decoder):
    the changes replayed by primary key give the tables' final content, value by value."""
    compared = 0
    for table in ("coltypes.ints", "coltypes.decimals", "coltypes.datetimes"):
        df = read(spark, TYPES, table=table, beforeImage="true")
        types = dict(df.dtypes)
        want = {k: {c: _server_text(types[c], v) for c, v in row.items()}
                for k, row in _server_state(table).items()}
        got = _spark_state(df)
        assert got == want, table
        compared += sum(len(r) for r in want.values())
    assert compared > 150
    # a few values spelled out
    ints = read(spark, TYPES, table="coltypes.ints").filter("id = 2 AND _op = 'insert'").first()
    assert (ints.ti, ints.tiu, ints.bi, ints.biu) == (127, 255, 9223372036854775807,
                                                      decimal.Decimal(18446744073709551615))


def test_typed_view_takes_names_from_the_binlog_ddl_or_the_schema_file_and_json_becomes_variant(spark):
    f = str(FIXTURES / "types-minimal" / "mariadb-bin.000001")
    names = [c["name"] for c in json.loads((FIXTURES / "types-minimal" / "columns.json").read_text())["coltypes.ints"]]
    # MINIMAL metadata: the names come from the CREATE TABLE in the binlog itself...
    assert read(spark, f, table="coltypes.ints").columns == names + TYPED_META
    # ... or, without it, are the CLI's @1, @2, ...
    assert read(spark, f, table="coltypes.ints", replayDdl="never").columns == \
        [f"@{i}" for i in range(1, len(names) + 1)] + TYPED_META
    named = read(spark, f, table="coltypes.ints", replayDdl="never",
                 schema=str(FIXTURES / "types-minimal" / "schema.sql"), schemaDatabase="coltypes")
    assert named.columns == names + TYPED_META
    path = str(CORPUS / "rust_mysql_common" / "json.binlog.000001")
    typed = read(spark, path, table="mysql.t")
    assert dict(typed.dtypes)["json_col"] == "variant"
    got = collections.Counter(_key({"id": r.id, "j": json.loads(r.j)})
                              for r in typed.filter("_op = 'insert'").selectExpr("id", "to_json(json_col) AS j").collect())
    expected = collections.Counter(_key({"id": d["after"]["id"], "j": d["after"]["json_col"]})
                                   for d in map(json.loads, cli_rows([path])[0]) if d["op"] == "insert")
    assert got == expected and sum(got.values()) > 5


def test_a_column_type_changed_by_alter_table_is_a_fault_of_its_rows_event(spark, tmp_path):
    """A real MariaDB binlog: d.t created with v DECIMAL(5,2), a row, ALTER TABLE ... MODIFY v
    DECIMAL(12,2), a row that only the new type holds. The typed view (its schema from the first
    TABLE_MAP) gives the first row; the second rows event is a fault naming the file, its offset and
    the column: raised, or one _corrupt_record with onError=skip."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    from mariadb_server import MariaDBServer
    srv = MariaDBServer().start()
    try:
        srv.sql("FLUSH BINARY LOGS;")
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v DECIMAL(5,2), n INT);"
                "INSERT INTO d.t VALUES (1, 123.45, 7);"
                "ALTER TABLE d.t MODIFY v DECIMAL(12,2), MODIFY n BIGINT;"
                "INSERT INTO d.t VALUES (2, 1234567.89, 10000000000);")
        path = tmp_path / srv.binlogs()[-1].name
        path.write_bytes(srv.binlogs()[-1].read_bytes())
    finally:
        srv.cleanup()
    second = [ev for ev in binlog_spec.open(path) if ev.type_code in ROW_OPS][1]
    message = (f"{path}: offset {second.pos}: {second.type}: d.t: column v is decimal(12,2) here, decimal(5,2) "
               "in the DataFrame; column n is bigint here, int in the DataFrame")
    with pytest.raises(SPARK_ERRORS) as exc:
        read(spark, path, table="d.t").collect()
    assert message in str(exc.value)
    got = read(spark, path, table="d.t", onError="skip").orderBy("_pos").collect()
    assert [(r.id, r.v, r.n, r._pos, r._corrupt_record) for r in got] == [
        (1, decimal.Decimal("123.45"), 7, got[0]._pos, None), (None, None, None, second.pos, got[1]._corrupt_record)]
    assert got[1]._corrupt_record.startswith(message)
    assert read(spark, path).count() == 2        # the rows mode holds both


def test_rows_carry_the_end_log_pos_and_the_xid_of_the_cli_events(spark):
    for f in (DEMO, MYSQL8):
        code, events = cli_events(f)
        assert code == 0
        want: dict[int, tuple[int, int | None]] = {}
        open_tx: list[int] = []
        for e in events:   # a rows event's XID is the one that ends its transaction
            if e["type"] in ("GTID_EVENT", "GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"):
                open_tx = []
            elif e["type_code"] in ROW_OPS:
                want[e["pos"]] = (e["end_log_pos"], None)
                open_tx.append(e["pos"])
            elif e["type"] == "XID_EVENT":
                for p in open_tx:
                    want[p] = (want[p][0], e["xid"])
                open_tx = []
        got = {r.pos: (r.end_log_pos, None if r.xid is None else int(r.xid))
               for r in read(spark, f).select("pos", "end_log_pos", "xid").distinct().collect()}
        assert got == want and sum(x is not None for _, x in got.values()) > 3


def test_filter_options_equal_the_cli_filters(spark):
    files = [DEMO, MYSQL8]
    cases = [
        ({"database": "shop"}, ["--database", "shop"]),
        ({"table": "shop.ord*"}, ["--table", "shop.ord*"]),
        ({"excludeTable": "shop.orders"}, ["--exclude-table", "shop.orders"]),
        ({"startDatetime": "2026-01-01 00:02:00", "stopDatetime": "2026-01-01 00:05:00"},
         ["--start-datetime", "2026-01-01 00:02:00", "--stop-datetime", "2026-01-01 00:05:00"]),
        ({"includeGtids": "0-1-5,0-1-7-9"}, ["--include-gtids", "0-1-5,0-1-7-9"]),
        ({"excludeGtids": "0-1-4"}, ["--exclude-gtids", "0-1-4"]),
        ({"serverId": "1"}, ["--server-id", "1"]),
        # positions: the start in the first file of the read, the stop in the last
        ({"startPosition": "2224", "stopPosition": "1000000"}, ["--start-position", "2224", "--stop-position", "1000000"]),
        # a time without an offset: in the timeZone option's zone (UTC by default), as the CLI's --timezone
        ({"startDatetime": "2026-01-01 08:02:00", "timeZone": "Asia/Shanghai"},
         ["--timezone", "Asia/Shanghai", "--start-datetime", "2026-01-01 08:02:00"]),
        ({"startPosition": "0-1-4", "stopPosition": "0-1-6"}, ["--start-position", "0-1-4", "--stop-position", "0-1-6"]),
    ]
    everything = sum(cli_rows(files, together=True)[0].values())
    for options, flags in cases:
        positions = "startPosition" in options
        expected, _ = cli_rows(files, *flags, together=positions)
        got, _ = spark_rows(read(spark, files, mode="rows", **options))
        assert got == expected, options
        assert 0 < sum(got.values()) < everything or not positions, options
    ops = read(spark, DEMO, op="update,delete")
    assert sorted(r.op for r in ops.collect()) == ["delete", "update", "update", "update"]


def test_filter_options_do_not_stop_the_ddl_replay(spark):
    """binlog.000693's CREATE TABLEs come before the window: the filters choose the rows, the names
    still come from the DDL before them (issue 12, case 1)."""
    for options, flags in (({"startPosition": "108517"}, ["--start-position", "108517"]),
                           ({"startDatetime": "2023-12-04 01:50:12"}, ["--start-datetime", "2023-12-04 01:50:12"])):
        expected, _ = cli_rows([MYSQL8], *flags)
        got, _ = spark_rows(read(spark, MYSQL8, mode="rows", **options))
        assert got == expected and sum(got.values()) > 100, options
        assert not any('"@1"' in key for key in got), options
        assert any('"ROLE_NAME"' in key for key in got), options


def _spark_filter_line(df) -> str:
    """The Filter Spark applies above the scan ('' when it applies none)."""
    text = df._jdf.queryExecution().executedPlan().toString()
    return next((line for line in text.splitlines() if "Filter" in line and "BatchScan" not in line), "")


def test_spark_filters_are_pushed_down_with_the_option_and_give_the_same_rows(spark):
    where = ("`table` = 'orders' AND op IN ('update', 'delete') AND timestamp >= timestamp'2026-01-01 00:02:00' "
             "AND server_id = 1 AND row_index = 0")
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        pushed = read(spark, [DEMO, MYSQL8], pushFilters="true").filter(where)
        line = _spark_filter_line(pushed)
        assert "row_index" in line and "op#" not in line and "table#" not in line  # pushed: Spark drops them
        assert spark_rows(pushed)[0] == spark_rows(read(spark, [DEMO, MYSQL8]).filter(where))[0]
        assert pushed.count() == 2
        ev = read(spark, MYSQL8, mode="events", pushFilters="true").filter("type = 'XID_EVENT' AND pos > 1000000")
        assert "type#" not in _spark_filter_line(ev)
        assert ev.count() == sum(1 for e in binlog_spec.open(MYSQL8) if e.type == "XID_EVENT" and e.pos > 1000000)
        tx = read(spark, MYSQL8, mode="transactions", pushFilters="true").filter("rows > 2 AND gtid = 'ANONYMOUS'")
        assert tx.count() == read(spark, MYSQL8, mode="transactions").filter("rows > 2").count() > 0
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")
    # Spark's default (pushdown off): the option degrades to no pushdown instead of failing
    plain = read(spark, [DEMO, MYSQL8], pushFilters="true").filter(where)
    assert "op#" in _spark_filter_line(plain) and plain.count() == 2


def test_a_dataframe_reused_for_several_queries_keeps_every_row(spark):
    """Without pushFilters (the default) the read Spark caches per DataFrame holds no filter."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        df = read(spark, DEMO)
        assert df.filter("op = 'delete'").count() == 1
        assert df.count() == 10
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")


def test_partial_json_updates_give_the_whole_after_document(spark, tmp_path):
    """Byte-literal PARTIAL_UPDATE_ROWS_EVENT with the documents in the before image (test_rows):
    the after VARIANT is the document the diffs give, worked out by hand."""
    from test_rows import partial_update_file
    path, expected = partial_update_file(tmp_path)
    got = read(spark, path).selectExpr("to_json(before) AS b", "to_json(after) AS a").collect()
    assert sorted((json.loads(r.b)["@1"], json.loads(r.b)["@2"], json.loads(r.a)["@2"]) for r in got) \
        == sorted(expected, key=lambda e: e[0])


def test_paths_folders_globs_and_json_images(spark, tmp_path):
    by_glob = read(spark, str(FIXTURES / "*" / "mariadb-bin.0*"), onError="skip")
    by_folder = read(spark, FIXTURES, recursiveFileLookup="true", onError="skip")
    assert by_glob.select("file").distinct().count() == len(list(FIXTURES.glob("*/mariadb-bin.0*")))
    assert by_glob.count() == by_folder.count()
    assert read(spark, FIXTURES / "demo").count() == 10            # the folder's .txt/.sql files are left out
    from binlog_spec.spark import parse_images
    j = read(spark, DEMO, images="json")
    assert dict(j.dtypes)["after"] == "string"
    assert spark_rows(parse_images(j))[0] == spark_rows(read(spark, DEMO))[0]
    with pytest.raises(SPARK_ERRORS):
        read(spark, tmp_path / "nothing-here").count()


def _run(code_or_args, tmp_path, timeout=600) -> subprocess.CompletedProcess:
    """A child Python (its own SparkSession, its own JVM), from tmp_path."""
    _require_java()
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
           "BINLOG_SPEC_CACHE": str(tmp_path / "cache")}     # read_binlog's DDL cache
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=timeout)


def test_the_example_script_counts_changes_per_table_per_hour(tmp_path):
    """examples/changes_per_hour.py run as a script on the fixtures folder: its Parquet output
    holds, per (schema, table, hour), the counts of the CLI's row changes."""
    out = tmp_path / "changes.parquet"
    r = _run([str(ROOT / "examples" / "changes_per_hour.py"), str(FIXTURES), str(out), "--master", "local[2]"],
             tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
    import pyarrow.parquet as pq
    got = {}
    for row in pq.read_table(out).to_pylist():
        hour = row["hour"].astimezone(dt.timezone.utc) if row["hour"].tzinfo else row["hour"]
        got[row["schema"], row["table"], hour.strftime("%Y-%m-%dT%H")] = (
            row["inserts"], row["updates"], row["deletes"], row["changes"])
    expected_rows, faults, _ = cli_expectation(sorted(str(p) for p in FIXTURES.glob("*/mariadb-bin.0*")))
    assert not faults
    counts: dict = collections.defaultdict(lambda: [0, 0, 0, 0])
    for k, n in expected_rows.items():
        d = json.loads(k)
        c = counts[d["schema"], d["table"], d["timestamp"][:13]]
        c[("insert", "update", "delete").index(d["op"])] += n
        c[3] += n
    assert got == {k: tuple(v) for k, v in counts.items()}
    assert got["shop", "orders", "2026-01-01T00"] == (3, 1, 1, 5)   # fixtures/demo, by hand
    assert len(got) >= 15


def test_a_new_session_reads_the_format_without_register(tmp_path):
    """pyspark registers the DefaultSource of every top-level `pyspark_*` module by itself
    (src/pyspark_binlog.py): a fresh SparkSession in its own process reads the format without
    binlog_spec.spark.register, and without the driver importing binlog_spec at all."""
    code = textwrap.dedent(f"""
        import sys
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
                 .config("spark.driver.host", "127.0.0.1").getOrCreate())
        df = spark.read.format("binlog").load({DEMO!r})
        print("RESULT", df.count(), df.filter("op = 'delete'").count(), ",".join(df.columns),
              "binlog_spec" in sys.modules)
        spark.stop()
    """)
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
    line = next(line for line in r.stdout.splitlines() if line.startswith("RESULT "))
    assert line.split() == ["RESULT", "10", "1", "file,pos,end_log_pos,timestamp,server_id,gtid,xid,schema,table,op,"
                            "before,after,row_index", "False"]


def test_push_filters_relies_on_a_pinned_pyspark_internal_and_fails_loudly_without_it():
    """pushFilters=true reads the planning worker's `enable_pushdown` (pyspark 4.3 internals, see
    spark._planning_pushdown_setting). Pinned here on the installed pyspark: the variable and the
    call are where the source expects them; outside that frame the option is an error that says
    why, never a silent guess (the filter pushdown test checks both settings through Spark)."""
    import inspect

    from binlog_spec.spark.pushdown import _PUSHDOWN_WORKER
    from pyspark.sql.worker import plan_data_source_read as worker
    body = inspect.getsource(worker._main)
    assert "enable_pushdown = read_bool(infile)" in body
    assert body.index("enable_pushdown = read_bool(infile)") < body.index("reader = data_source.reader(schema=schema)")
    assert "if is_pushdown_implemented and not enable_pushdown:" in body
    # the other worker that asks for a reader, to hand it Spark's filters (run only with pushdown on)
    from pyspark.sql.worker import data_source_pushdown_filters as filters_worker
    body = inspect.getsource(filters_worker._main)
    assert filters_worker.__file__.endswith(_PUSHDOWN_WORKER)
    assert body.index("reader = data_source.reader(schema=schema)") < body.index("reader.pushFilters(")
    source = BinlogDataSource({"path": DEMO, "pushFilters": "true"})
    with pytest.raises(BinlogSparkError, match="enable_pushdown.*pyspark 4"):
        source.reader(source.schema())

    def _main(enable_pushdown):   # the worker's frame, as pyspark 4.3 has it
        return source.reader(source.schema())
    from binlog_spec.spark import BinlogPushdownReader, BinlogReader
    assert type(_main(False)) is BinlogReader and type(_main(True)) is BinlogPushdownReader
    assert type(BinlogDataSource({"path": DEMO}).reader(source.schema())) is BinlogReader


# ------------------------------------------------------------------ standalone cluster
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise TimeoutError(what)


def _master_state(ui_port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return json.load(r)
    except OSError:
        return {}


def test_standalone_cluster_gives_the_cli_rows(spark, tmp_path):
    """A master and two workers, each its own JVM started with pyspark's bin/spark-class on loopback."""
    spark.stop()  # one SparkContext per process
    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOG_DIR": str(tmp_path / "logs"), "SPARK_WORKER_DIR": str(tmp_path / "work")}
    port, ui = _free_port(), _free_port()
    procs: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> None:
        log = open(tmp_path / f"{name}.log", "wb")
        procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    session = None
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui))
        _wait(lambda: _master_state(ui).get("status") == "ALIVE", 60, "master up")
        for i in (1, 2):
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "1g", "--webui-port", str(_free_port()), "--work-dir", str(tmp_path / f"work{i}"),
                  f"spark://127.0.0.1:{port}")
        _wait(lambda: _master_state(ui).get("aliveworkers") == 2, 60, "two workers registered")
        session = _session(f"spark://127.0.0.1:{port}", **{"spark.executor.memory": "512m",
                                                            "spark.executor.cores": "1", "spark.cores.max": "2"})
        _wait(lambda: session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() == 3, 60, "two executors")
        assert_same_rows_as_cli(session, ALL_FILES)
        pieces = read(session, MYSQL8, splitSize="64k")
        assert pieces.rdd.getNumPartitions() > 20
        assert spark_rows(pieces)[0] == cli_rows([MYSQL8])[0]
        # a folder with a file large enough to be split (resync planning), its DDL gathered by a
        # distributed mode=ddl read (read_binlog)
        folder = tmp_path / "binlogs"
        folder.mkdir()
        copies = [folder / Path(f).name for f in (MYSQL8, TYPES)]
        for f, c in zip((MYSQL8, TYPES), copies):
            c.write_bytes(Path(f).read_bytes())
        from binlog_spec.spark import read_binlog
        df = read_binlog(session, str(folder), cache=tmp_path / "ddl-cache", splitSize="64k")
        assert df.rdd.getNumPartitions() > 20
        assert spark_rows(df)[0] == cli_rows([str(c) for c in copies])[0]
        hosts = {w["host"] for w in _master_state(ui)["workers"]}
        assert hosts == {"127.0.0.1"} and len(_master_state(ui)["workers"]) == 2
    finally:
        if session is not None:
            session.stop()
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
