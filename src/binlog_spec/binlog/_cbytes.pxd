# cython: language_level=3
"""What the compiled modules read from event bytes, in one place (inline; setup.py links every module with
the CRC32's library; every `_c*.pyx` that reads little-endian integers or MariaDB GTID/XID bodies, or checks
CRC32s, from a window cimports it):

* `u4`, `le`: little-endian unsigned integers of 4 and of `size` (at most 8) bytes;
* the layout of mariadb_gtid_event (formats/binlog.ksy): seq_no u8, domain_id u4, flags2 u1, commit_id u8
  when flags2 & FL_GROUP_COMMIT_ID, XA fields when flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA), then
  flags_extra (a zero byte: padding follows); an xid_event's xid (u8) after its post-header;
* `whole_and_sound`: the size and CRC32 checks an event passes before a compiled loop takes it;
* `event_crc32`: the CRC32 of an event's bytes (binlog/_crc32.h: Intel's ISA-L where setup.py found it,
  else zlib; `CRC32_IMPLEMENTATION` names the one built in);
* `gtid_xid_reads_agree()`: whether those reads give what the generated parser gives for the same bytes
  (as spec._FAST_HEADER checks the header), so that the spec stays the one source of the layouts and a
  loop that reads them never runs where they differ.
"""
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport uint32_t, uint64_t

cdef extern from "binlog_spec/binlog/_crc32.h" nogil:
    uint32_t event_crc32 "binlog_spec_crc32"(const unsigned char* p, size_t n)
    const char* CRC32_IMPLEMENTATION "BINLOG_SPEC_CRC32_IMPL"

cdef enum:
    GROUP_COMMIT_ID = 2
    XA_FLAGS = 192
    LEN_GTID_FIXED = 13
    LEN_COMMIT_ID = 8


cdef inline uint32_t u4(const unsigned char* p) noexcept:
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t le(const unsigned char* p, int size) noexcept:
    cdef uint64_t v = 0
    cdef int i
    for i in range(size - 1, -1, -1):
        v = (v << 8) | p[i]
    return v


cdef inline bint whole_and_sound(const unsigned char* e, uint32_t len_event, Py_ssize_t avail, Py_ssize_t min_len,
                                 int len_checksum, bint verify) noexcept:
    """Whether the event at `e`, of `len_event` bytes (its header's size field), is whole in the `avail`
    bytes left, at least `min_len` long (its header and checksum), and, where `verify`, its CRC32 is right:
    what every compiled loop requires of an event before it takes it (framing.walk_events' checks; the loop
    stops before any other, and the reader's full path reports what is wrong with it)."""
    if len_event < <uint32_t>min_len or <Py_ssize_t>len_event > avail:
        return False
    return not (verify and len_checksum == 4 and event_crc32(e, len_event - 4) != u4(e + len_event - 4))


cdef inline bint gtid_xid_reads_agree():
    from binlog_spec.binlog import spec
    cdef const unsigned char* p
    cdef Py_ssize_t at
    cdef int len_post_header
    cdef int H = spec.LEN_EVENT_HEADER, GTID = int(spec.EventType.gtid_event), XID = int(spec.EventType.xid_event)
    lens = bytearray(255)
    lens[GTID - 1] = 19
    for flags2 in (0, GROUP_COMMIT_ID):
        body = bytes(range(1, 13)) + bytes([flags2]) + (bytes(range(0x31, 0x39)) if flags2 else b"") + bytes(6)
        fde = spec.FormatDescription(4, "probe", 0, H, bytes(lens), None, None, 0)
        event = spec.HEADER_STRUCT.pack(1, GTID, 2, H + len(body), 0, 0) + body
        try:
            got = spec.parse_event(event, fde)
        except Exception:
            return False
        p = <const unsigned char*>PyBytes_AS_STRING(body)
        if (got.seq_no, got.domain_id, got.flags2) != (le(p, 8), u4(p + 8), p[12]):
            return False
        at = LEN_GTID_FIXED + (LEN_COMMIT_ID if flags2 else 0)
        if flags2 and got.commit_id != le(p + LEN_GTID_FIXED, LEN_COMMIT_ID) or len(body) < at:
            return False
    for len_post_header in (0, 3):
        lens[XID - 1] = len_post_header
        fde = spec.FormatDescription(4, "probe", 0, H, bytes(lens), None, None, 0)
        body = bytes(range(0x41, 0x41 + len_post_header + 8))
        event = spec.HEADER_STRUCT.pack(1, XID, 2, H + len(body), 0, 0) + body
        try:
            got = spec.parse_event(event, fde)
        except Exception:
            return False
        p = <const unsigned char*>PyBytes_AS_STRING(body)
        if got.xid != le(p + len_post_header, 8):
            return False
    return True
