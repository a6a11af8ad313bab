"""binlog_spec.stream.planning.ddl: the DDL statements of splits (scan mode), their JSON-lines form, and the cache."""
from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from binlog_spec.stream.planning.ddl import (CACHE_ENV, DdlCache, FileKey, Statement, cache_dir, gather, read_ddl,
                                             split_statements, write_jsonl)
from binlog_spec.stream.planning.pieces import LocalFile, Split
from binlog_spec.stream.planning.scan import ScanResult, scan_file, statements_with_collation
from binlog_spec.stream.planning.splits import plan_splits

from conftest import CORPUS, FIXTURES

ALL_FILES = sorted(str(p) for p in CORPUS.glob("*/*") if p.is_file() and p.suffix not in (".tsv", ".md", ".xxd")) \
    + sorted(str(p) for p in FIXTURES.glob("*/mariadb-bin.*"))
SAKILA = str(CORPUS / "mbcj_osheroff" / "mysql-bin.sakila")


def _pieces(path: str, size: int) -> tuple[ScanResult, list[Split]]:
    ref = LocalFile.of(path)
    scan = scan_file(ref, ddl=True)
    return scan, plan_splits(0, ref, scan, size)


@pytest.mark.parametrize("size", [2000, 50_000])
def test_the_statements_of_the_pieces_of_a_file_are_those_of_its_header_pass(size):
    """On every corpus and fixture file cut into pieces: the pieces' statements, one after the other, are
    the header pass's (position, db, statement, collation), and the last piece ends at the pass's fault."""
    cut = statements = 0
    for path in ALL_FILES:
        scan, pieces = _pieces(path, size)
        got, faults = [], []
        for piece in pieces:
            found, fault = split_statements(piece)
            assert all(piece.start <= st.pos and (piece.end is None or st.pos < piece.end) for st in found)
            got += found
            if fault is not None:
                faults.append(fault)
        want = [Statement(path, *st) for st in statements_with_collation(scan)]
        assert got == want, path
        if scan.fault is None or scan.size is None:
            assert faults == [] or scan.size is None, (path, faults)
        else:
            assert [f.offset for f in faults] == [scan.fault[0]], (path, faults, scan.fault)
            assert faults[0].file == path
        cut += len(pieces) > 1
        statements += len(got)
    assert cut >= (20 if size < 10_000 else 10) and statements > 500


def test_a_piece_after_the_first_starts_at_its_own_statements():
    scan, pieces = _pieces(SAKILA, 100_000)
    assert len(pieces) > 5
    firsts = [split_statements(p)[0] for p in pieces]
    assert any(f for f in firsts[1:])           # DDL after the first piece (sakila's CREATE TABLEs spread)
    assert all(f[0].pos >= p.start for f, p in zip(firsts, pieces) if f)
    assert all(st.collation is not None for f in firsts for st in f)   # MySQL 5.6: Q_CHARSET_CODE on each


def test_statements_round_trip_through_json_lines_with_the_file_records(tmp_path):
    st = [Statement("a.000001", 120, "shop", "CREATE TABLE t (i INT)", 45),
          Statement("a.000001", 4, "", "CREATE DATABASE shop", None)]
    write_jsonl(tmp_path / "d.jsonl", st, [("a.000001", 500), ("a.000002", 300)])
    got = read_ddl(tmp_path / "d.jsonl")
    assert got.of("a.000001") == [(4, "", "CREATE DATABASE shop", None), (120, "shop", "CREATE TABLE t (i INT)", 45)]
    assert got.of("a.000002") == [] and got.sizes == {"a.000001": 500, "a.000002": 300}
    got.check([("a.000001", 500), ("a.000002", 300)])
    with pytest.raises(ValueError, match="a.000003"):
        got.check([("a.000003", 1)])
    with pytest.raises(ValueError, match="a.000002.*300 bytes, it has 301"):
        got.check([("a.000002", 301)])


def test_a_folder_of_spark_json_parts_is_read_and_a_bad_line_is_named(tmp_path):
    """Spark's df.write.json: part files, nulls left out (no collation key), _SUCCESS beside them."""
    (tmp_path / "part-00000.json").write_text('{"file":"f","pos":9,"db":"d","statement":"DROP TABLE t"}\n')
    (tmp_path / "part-00001.json").write_text('{"file":"f","pos":5,"db":"d","statement":"CREATE TABLE t (i INT)",'
                                              '"collation":8}\n')
    (tmp_path / "_SUCCESS").write_text("")
    got = read_ddl(tmp_path)
    assert got.of("f") == [(5, "d", "CREATE TABLE t (i INT)", 8), (9, "d", "DROP TABLE t", None)]
    got.check([("anything", 1)])      # no file records: nothing to check against
    (tmp_path / "part-00002.json").write_text('{"file":"f"}\n{"pos":1}\n')
    with pytest.raises(ValueError, match="part-00002.json: line 1"):
        read_ddl(tmp_path)
    with pytest.raises(ValueError, match="no such file"):
        read_ddl(tmp_path / "missing")


def test_the_cache_reads_only_new_and_changed_files(tmp_path):
    files = []
    for n in (1, 2):
        p = tmp_path / f"bin.00000{n}"
        p.write_bytes(b"x" * (10 * n))
        files.append(p)

    def keys():
        return [FileKey(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]

    asked: list[list[str]] = []

    def read_missing(names):
        asked.append(names)
        return [Statement(n, 4 + i, "db", f"CREATE TABLE t{i} (i INT)", 8)
                for n in names for i in (1, 0)]

    cache = DdlCache(tmp_path / "cache")
    path, read = gather(keys(), read_missing, cache)
    assert read == [str(p) for p in files] and asked == [read]
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert lines[:2] == [{"file": str(files[0]), "size": 10}, {"file": str(files[1]), "size": 20}]
    assert [(d["file"], d["pos"]) for d in lines[2:]] == [(str(files[0]), 4), (str(files[0]), 5),
                                                          (str(files[1]), 4), (str(files[1]), 5)]
    again, read = gather(keys(), read_missing, cache)
    assert read == [] and len(asked) == 1 and again == path
    st = files[1].stat()
    os.utime(files[1], ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))   # touched: read again
    _, read = gather(keys(), read_missing, cache)
    assert read == [str(files[1])]
    files[0].write_bytes(b"y" * 11)                                            # grown: read again
    path, read = gather(keys(), read_missing, cache)
    assert read == [str(files[0])] and read_ddl(path).sizes[str(files[0])] == 11


def test_the_cache_lives_under_binlog_spec_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    assert cache_dir() == tmp_path / "ddl"
    monkeypatch.delenv(CACHE_ENV)
    assert cache_dir() == Path.home() / ".cache" / "binlog-spec" / "ddl"
