"""BinlogReader.scan, the planning mode: the events' positions, types and sizes without parsing
bodies, and the framing faults that iteration raises, at the same offsets."""
from __future__ import annotations

import gzip

import pytest

import binlog_spec
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.options import ReadOptions

from conftest import CORPUS
from test_reader_errors import FDE, MAGIC, TM, event

FRAMING = ReadOptions(expand_payloads=False, decompress=False)   # what scan looks at


def iterated(path, options=FRAMING):
    """(positions, type codes and sizes of the events, error) by iteration."""
    out, err = [], None
    try:
        for ev in BinlogReader(path, options):
            out.append((ev.pos, ev.type_code, ev.size))
    except binlog_spec.BinlogError as exc:
        err = exc
    return out, err


def scanned(path, options=FRAMING, **kwargs):
    out, err = [], None
    try:
        for pos, code, size, _ in BinlogReader(path, options).scan(**kwargs):
            out.append((pos, code, size))
    except binlog_spec.BinlogError as exc:
        err = exc
    return out, err


def same_fault(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return (type(a), a.file, a.offset, a.event_type, a.message) == (type(b), b.file, b.offset, b.event_type, b.message)


def _crc_broken(tm: bytes) -> bytes:
    bad = bytearray(tm)
    bad[-1] ^= 0xFF
    return bytes(bad)


BROKEN = {
    "no magic": b"SELECT 1;\n" * 5,
    "empty": b"",
    "first event not an FDE": MAGIC + TM,
    "truncated event": MAGIC + FDE + TM[:30],
    "truncated header": MAGIC + FDE + TM + TM[:7],
    "crc mismatch": MAGIC + FDE + _crc_broken(TM) + TM,
    "impossible size": MAGIC + FDE + event(19, b"", size=20),
    "encrypted": MAGIC + FDE + event(164, b"\x01" + b"\x00" * 16) + TM,
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_scan_stops_with_the_error_iteration_raises_at_the_same_offset(tmp_path, name):
    p = tmp_path / "t.000001"
    p.write_bytes(BROKEN[name])
    events, err = iterated(p)
    assert err is not None
    assert scanned(p)[0] == events
    assert same_fault(scanned(p)[1], err), (scanned(p)[1], err)


def test_scan_of_a_gzip_file_reads_its_events_and_its_cut(tmp_path):
    p = tmp_path / "t.000001.gz"
    p.write_bytes(gzip.compress(MAGIC + FDE + TM + TM[:10]))
    events, err = iterated(p)
    got, fault = scanned(p)
    assert got == events and len(got) == 2 and same_fault(fault, err)


def test_scan_leaves_crc_checks_out_when_asked(tmp_path):
    p = tmp_path / "t.000001"
    p.write_bytes(BROKEN["crc mismatch"])
    off = ReadOptions(verify_checksums=False)
    assert scanned(p, off) == (iterated(p, off)[0], None) and len(scanned(p, off)[0]) == 3


def test_scan_reports_only_the_types_asked_for_and_counts_every_event(tmp_path):
    p = tmp_path / "t.000001"
    p.write_bytes(MAGIC + FDE + TM + TM + TM)
    reader = BinlogReader(p, FRAMING)
    seen = [(pos, code, bytes(ev) if ev is not None else None)
            for pos, code, _, ev in reader.scan(read=(), report=())]
    assert seen == [(4, 15, FDE)]   # the FDE always, with its bytes
    assert reader.scanned == 4 and reader.position == 4 + len(FDE) + 3 * len(TM)
    reader = BinlogReader(p, ReadOptions(verify_checksums=False))
    seen = [(pos, ev is not None) for pos, code, _, ev in reader.scan(read={19}, report=())]
    assert seen == [(4, True), (123, True), (169, True), (215, True)]


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.rglob("*") if p.is_file() and "expected" not in p.parts
                                        and p.suffix not in (".tsv", ".md", ".txt", ".json")),
                         ids=lambda p: str(p.relative_to(CORPUS)))
def test_scan_of_a_corpus_file_finds_the_events_and_the_framing_fault_iteration_finds(path):
    events, err = iterated(path)
    got, fault = scanned(path)
    assert got == events and same_fault(fault, err)
