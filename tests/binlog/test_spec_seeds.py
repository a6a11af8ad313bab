"""The seed documents' hex dumps decode to the values the documents state.

../shared/seeds/001_* is a MySQL 5.7.14 FORMAT_DESCRIPTION_EVENT as an
offset/hex dump with mysqlbinlog's reading of it; 000_* describes a
TABLE_MAP_EVENT field by field. The FDE note says the array has 40 entries;
the bytes (and the event size 0x77 = 119) hold 38, then the algorithm byte.
"""
from __future__ import annotations

import re
import struct

import binlog_spec

from conftest import SEEDS


def seed_fde_bytes() -> bytes:
    """The FDE event bytes, from the hex dump lines of the seed (offsets 0x00-0x7a)."""
    text = next(SEEDS.glob("001_*.txt")).read_text(encoding="utf-8")
    out = bytearray()
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]{8})\s(.*)$", line)
        if m:  # offset, hex pairs (separated by spaces and no-break spaces), then |ascii|
            assert int(m.group(1), 16) == len(out)
            hex_part = m.group(2).split("|")[0]
            out += bytes(int(tok, 16) for tok in re.findall(r"\b[0-9a-f]{2}\b", hex_part))
    return bytes(out)


# 000_*: the TABLE_MAP fields as the note lists them (header, table id 433,
# reserved 01 00, `darren`.`t`, one LONG column, no metadata, null bitmap 00,
# CRC32 0x7d07cb8f).
SEED_TABLE_MAP = bytes.fromhex(
    "212e0e5b" "13" "5c276b94" "2e000000" "aa010000" "0000"
    "b10100000000" "0100"
    "06" "64617272656e" "00"
    "01" "74" "00"
    "01" "03" "00" "00"
    "8fcb077d"
)


def _read(tmp_path, *events: bytes) -> list[binlog_spec.Event]:
    path = tmp_path / "seed.000001"
    path.write_bytes(b"\xfebin" + b"".join(events))
    return list(binlog_spec.open(path))


def test_seed_fde_decodes_to_the_documented_values(tmp_path):
    raw = seed_fde_bytes()
    fde_bytes = raw[4:]
    assert len(fde_bytes) == 0x77
    (ev,) = _read(tmp_path, fde_bytes)
    assert ev.type == "FORMAT_DESCRIPTION_EVENT"
    assert ev.timestamp == 1486413756  # 170207 4:42:36 +08:00 in the note
    assert ev.server_id == 1 and ev.size == 119 and ev.end_log_pos == 123
    assert ev.binlog_version == 4
    assert ev.server_version == "5.7.14-7-debug-log"
    assert ev.len_common_header == 19
    # The dump's array: 38 entries after the 0x13 header length, then 01, then the CRC.
    expected = bytes.fromhex("380d0008001200040404041200005f00041a08000000080808020000000a0a0a2a2a00123400")
    assert ev.post_header_lens == expected
    assert len(ev.post_header_lens) == 38
    assert ev.post_header_lens[29:32] == b"\x0a\x0a\x0a"  # WRITE/UPDATE/DELETE_ROWS_EVENT: 10
    assert ev.checksum_alg == "CRC32"
    assert ev.fde_checksum == 0x872C8855


def test_seed_table_map_decodes_to_the_documented_values(tmp_path):
    fde_bytes = seed_fde_bytes()[4:]
    assert struct.unpack_from("<I", SEED_TABLE_MAP, 9)[0] == len(SEED_TABLE_MAP)
    fde, tm = _read(tmp_path, fde_bytes, SEED_TABLE_MAP)  # the reader also verifies the CRC
    assert tm.type == "TABLE_MAP_EVENT"
    assert tm.server_id == 2490050396 and tm.end_log_pos == 426
    assert tm.table_id == 433
    assert tm.table_map_flags == 1
    assert (tm.schema, tm.table) == ("darren", "t")
    assert tm.num_columns == 1
    assert tm.column_types == [3] and tm.column_type_names == ["LONG"]
    assert tm.column_metadata == [{}]
    assert tm.null_bitmap == b"\x00"
    assert tm.optional_metadata == []


def test_seed_table_map_with_a_flipped_byte_fails_its_checksum(tmp_path):
    broken = bytearray(SEED_TABLE_MAP)
    broken[30] ^= 0x20  # 'd' of darren -> 'D'
    path = tmp_path / "seed.000001"
    path.write_bytes(b"\xfebin" + seed_fde_bytes()[4:] + bytes(broken))
    events = []
    try:
        for ev in binlog_spec.open(path):
            events.append(ev)
    except binlog_spec.ChecksumError as exc:
        assert exc.offset == 4 + 0x77 and exc.event_type == "TABLE_MAP_EVENT"
        assert "0x7d07cb8f" in str(exc)
    else:
        raise AssertionError("no ChecksumError")
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT"]
