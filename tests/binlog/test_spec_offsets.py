"""The ofs_/len_ instances of rows_event, query_event and packed_int, through spec.rows_offsets,
spec.query_offsets and the writer's layouts that use them. Byte-literal events, offsets counted
by hand from the layouts in libbinlogevents/include/rows_event.h and statement_events.h."""
from __future__ import annotations

import dataclasses
import struct

import pytest

from binlog_spec.binlog import spec, writer
from binlog_spec.errors import MalformedEventError

ET = spec.EventType
H = spec.LEN_EVENT_HEADER


def fde(**post_header_lens: int) -> spec.FormatDescription:
    """An FDE without checksums whose array gives these types (by name) these post-header lengths."""
    lens = bytearray(40)
    for name, n in post_header_lens.items():
        lens[ET[name] - 1] = n
    return spec.FormatDescription(4, "8.0.0", 0, H, bytes(lens), 0, None, 0)


def event(code: int, body: bytes) -> bytes:
    """A bare event (no checksum): the 19-byte header, then `body`."""
    return struct.pack("<IBIIIH", 0, code, 1, H + len(body), 0, 0) + body


def test_a_v1_rows_event_has_its_column_count_right_after_an_8_byte_post_header():
    body = (b"\x2a\x00\x00\x00\x00\x00"   # table id 42, 6 bytes
            b"\x01\x00"                   # rows_flags STMT_END_F
            b"\x02"                       # 2 columns
            b"\x03"                       # columns present: both
            b"\x00\x07\x00\x00\x00\x01")  # one row
    o = spec.rows_offsets(ET.write_rows_event_v1, 8, body)
    assert (o.table_id, o.rows_flags, o.num_columns) == (42, 1, 2)
    assert (o.ofs_rows_flags, o.len_columns_bitmap, o.ofs_columns_before_image) == (6, 1, 9)
    assert o.ofs_columns_after_image is None and o.ofs_rows == 10


def test_a_6_byte_post_header_has_a_4_byte_table_id():
    body = b"\x2a\x00\x00\x00" b"\x01\x00" b"\x01" b"\x01" b"\x00\x07"
    o = spec.rows_offsets(ET.write_rows_event_v1, 6, body)
    assert (o.table_id, o.ofs_rows_flags, o.ofs_columns_before_image, o.ofs_rows) == (42, 4, 7, 8)


def test_a_v2_rows_event_counts_its_extra_data_before_the_column_count():
    body = (b"\x2a\x00\x00\x00\x00\x00" b"\x00\x00"
            b"\x05\x00"           # len_extra_data 5: its own 2 bytes and 3 of extra data
            b"\x01\x03\x00"       # PART_INFO, partition 3
            b"\x01" b"\x01" b"\x00\x07")
    o = spec.rows_offsets(ET.write_rows_event, 10, body)
    assert (o.ofs_rows_flags, o.ofs_columns_before_image, o.ofs_rows) == (6, 14, 15)
    assert body[o.ofs_rows:] == b"\x00\x07"


def test_an_update_rows_event_has_two_bitmaps_one_after_the_other():
    body = (b"\x2a\x00\x00\x00\x00\x00" b"\x01\x00" b"\x02\x00"
            b"\x0a"                    # 10 columns: 2-byte bitmaps
            b"\xff\x03" b"\x05\x00"    # before image: all 10; after image: columns 1 and 3
            b"rows")
    o = spec.rows_offsets(ET.update_rows_event, 10, body)
    assert (o.num_columns, o.len_columns_bitmap) == (10, 2)
    assert (o.ofs_columns_before_image, o.ofs_columns_after_image, o.ofs_rows) == (11, 13, 15)
    lay = writer.rows_layout(event(ET.update_rows_event, body), fde(update_rows_event=10))
    assert (lay.ofs_flags, lay.ofs_before, lay.ofs_after, lay.ofs_rows) == (H + 6, H + 11, H + 13, H + 15)
    assert (lay.table_id, lay.flags, lay.num_columns, lay.len_bitmap) == (42, 1, 10, 2)


def test_a_column_count_of_300_is_a_3_byte_packed_integer():
    body = b"\x2a\x00\x00\x00\x00\x00" b"\x00\x00" b"\xfc\x2c\x01" + b"\xff" * 38 + b"rows"
    o = spec.rows_offsets(ET.delete_rows_event_v1, 8, body)
    assert (o.num_columns, o.len_columns_bitmap) == (300, 38)
    assert (o.ofs_columns_before_image, o.ofs_rows) == (8 + 3, 8 + 3 + 38)


def test_a_column_count_that_is_no_packed_length_is_a_malformed_event_for_the_writer():
    bare = event(ET.write_rows_event_v1, b"\x2a\x00\x00\x00\x00\x00" b"\x00\x00" b"\xfb" b"\x00")
    with pytest.raises(MalformedEventError, match="packed integer first byte 0xfb") as exc:
        writer.rows_layout(bare, fde(write_rows_event_v1=8), "f.bin", 120)
    assert (exc.value.file, exc.value.offset, exc.value.event_type) == ("f.bin", 120, "WRITE_ROWS_EVENT_V1")


def test_a_rows_event_that_ends_inside_its_bitmap_is_a_malformed_event_for_the_writer():
    bare = event(ET.update_rows_event_v1, b"\x2a\x00\x00\x00\x00\x00" b"\x00\x00" b"\x0a" b"\xff\x03\xff")
    with pytest.raises(MalformedEventError, match="rows event layout") as exc:
        writer.rows_layout(bare, fde(update_rows_event_v1=8), "f.bin", 120)
    assert exc.value.event_type == "UPDATE_ROWS_EVENT_V1"


QUERY_BODY = (b"\x05\x00\x00\x00"      # thread id
              b"\x00\x00\x00\x00"      # exec time
              b"\x04"                  # len_db
              b"\x00\x00"              # error code
              b"\x0a\x00"              # len_status_vars 10
              b"\x00\x00\x00\x00\x00"  # Q_FLAGS2_CODE, 4 bytes
              b"\x03\x01\x00\x01\x00"  # Q_AUTO_INCREMENT, increment 1, offset 1
              b"shop\x00"
              b"BEGIN")


def test_a_query_event_has_its_database_after_the_status_variables():
    bare = event(ET.query_event, QUERY_BODY)
    o = spec.query_offsets(bare, fde(query_event=13))
    assert (o.ofs_len_db, o.len_db, o.ofs_status_vars, o.ofs_db, o.ofs_query) == (8, 4, 13, 23, 28)
    assert writer.query_parts(bare, fde(query_event=13)) == (b"shop", b"BEGIN")
    lay = writer.query_layout(bare, fde(query_event=13))
    assert (lay.ofs_len_db, lay.ofs_db, lay.ofs_query) == (H + 8, H + 23, H + 28)


def test_the_query_offsets_skip_a_checksum_trailer_the_fde_announces():
    with_crc = dataclasses.replace(fde(query_event=13), len_checksum=4)
    bare = event(ET.query_event, QUERY_BODY + b"\xde\xad\xbe\xef")
    assert spec.query_offsets(bare, with_crc).ofs_query == 28


def test_an_execute_load_query_event_has_its_status_variables_after_the_load_fields():
    body = QUERY_BODY[:13] + bytes(13) + QUERY_BODY[13:]   # file id, filename start/end, dup handling
    o = spec.query_offsets(event(ET.execute_load_query_event, body), fde(execute_load_query_event=26))
    assert (o.ofs_status_vars, o.ofs_db, o.ofs_query) == (26, 36, 41)


def test_a_pre_5_0_query_event_has_no_status_variables():
    body = b"\x05\x00\x00\x00" b"\x00\x00\x00\x00" b"\x01" b"\x00\x00" b"d\x00" b"DROP TABLE t"
    o = spec.query_offsets(event(ET.query_event, body), fde(query_event=11))
    assert (o.ofs_status_vars, o.ofs_db, o.ofs_query) == (11, 11, 13)


def test_a_query_event_without_a_nul_after_its_database_is_a_malformed_event_for_the_writer():
    bare = event(ET.query_event, QUERY_BODY.replace(b"shop\x00", b"shop!"))
    with pytest.raises(MalformedEventError, match="no NUL after the database name") as exc:
        writer.query_parts(bare, fde(query_event=13), "f.bin", 300)
    assert (exc.value.file, exc.value.offset, exc.value.event_type) == ("f.bin", 300, "QUERY_EVENT")


def test_the_query_offsets_agree_with_the_spec_parse_of_the_whole_event():
    bare = event(ET.query_event, QUERY_BODY)
    body = spec.parse_event(bare, fde(query_event=13))
    o = spec.query_offsets(bare, fde(query_event=13))
    assert (body.db.encode(), bytes(body.query)) == (QUERY_BODY[o.ofs_db:o.ofs_db + o.len_db], QUERY_BODY[o.ofs_query:])
