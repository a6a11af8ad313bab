"""binlog/_cspec.pxd, the constants every compiled loop takes (through binlog/_cbytes.pxd), is generated
from formats/binlog.ksy by build.py: it is what the spec says, and what the generated parser reads."""
from __future__ import annotations

import re
import struct
import sys
from io import BytesIO
from pathlib import Path

from kaitaistruct import KaitaiStream

from binlog_spec.binlog import event_types, spec
from binlog_spec.binlog.spec import Binlog

ROOT = Path(__file__).resolve().parents[2]
PXD = ROOT / "src" / "binlog_spec" / "binlog" / "_cspec.pxd"


def constants() -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^    ([A-Z_0-9]+) = (\d+)$", PXD.read_text(), re.M)}


def test_the_constants_file_is_what_build_py_makes_of_the_spec():
    sys.path.insert(0, str(ROOT))
    try:
        import build
    finally:
        sys.path.remove(str(ROOT))
    assert PXD.read_text(encoding="utf-8") == build.cython_constants()


def test_every_event_type_of_the_spec_has_its_code_under_its_mysql_name():
    c = constants()
    for member in spec.EventType:
        assert c[member.name.upper()] == member.value


def test_the_header_offsets_are_where_the_generated_parser_reads_each_field():
    c = constants()
    values = {"timestamp": 0x11223344, "type_code": 0xA2, "server_id": 0x55667788, "len_event": 0x0A0B0C0D,
              "end_log_pos": 0x01020304, "flags": 0xBEEF}
    sizes = {"timestamp": 4, "type_code": 1, "server_id": 4, "len_event": 4, "end_log_pos": 4, "flags": 2}
    buf = bytearray(c["LEN_EVENT_HEADER"])
    for name, value in values.items():
        at = c[f"OFS_{name.upper()}"]
        buf[at:at + sizes[name]] = value.to_bytes(sizes[name], "little")
    header = Binlog.EventHeader(KaitaiStream(BytesIO(bytes(buf))))
    assert c["LEN_EVENT_HEADER"] == spec.LEN_EVENT_HEADER == 19
    assert {name: int(getattr(header, name)) for name in values} == values


def test_each_flags2_bit_is_the_one_the_parser_and_event_types_name():
    c = constants()
    bits = {"FL_STANDALONE": "standalone", "FL_GROUP_COMMIT_ID": "group_commit_id",
            "FL_TRANSACTIONAL": "transactional", "FL_ALLOW_PARALLEL": "allow_parallel", "FL_WAITED": "waited",
            "FL_DDL": "ddl", "FL_PREPARED_XA": "prepared_xa", "FL_COMPLETED_XA": "completed_xa"}
    # MariaDB sql/log_event.h (Gtid_log_event): FL_STANDALONE 1 ... FL_COMPLETED_XA 128
    assert [c[name] for name in bits] == [1, 2, 4, 8, 16, 32, 64, 128]
    for name, attr in bits.items():
        flags = Binlog.MariadbGtidFlags2(c[name], KaitaiStream(BytesIO(b"")))
        assert [a for a in bits.values() if getattr(flags, a)] == [attr]
        if hasattr(event_types, name):
            assert getattr(event_types, name) == c[name]


def test_the_gtid_fixed_part_is_where_the_generated_parser_reads_it():
    c = constants()
    body = struct.pack("<QIB", 0x0102030405060708, 0x0A0B0C0D, 2) + (0x1112131415161718).to_bytes(8, "little")
    gtid = Binlog.MariadbGtidEvent(19, KaitaiStream(BytesIO(body)))
    assert struct.unpack_from("<Q", body, c["OFS_GTID_SEQ_NO"])[0] == gtid.seq_no
    assert struct.unpack_from("<I", body, c["OFS_GTID_DOMAIN_ID"])[0] == gtid.domain_id
    assert body[c["OFS_GTID_FLAGS2"]] == gtid.flags2
    assert int.from_bytes(body[c["LEN_GTID_FIXED"]:c["LEN_GTID_FIXED"] + c["LEN_COMMIT_ID"]], "little") \
        == gtid.commit_id
