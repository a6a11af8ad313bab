# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: libraries = z
"""The base64 script's per-event text in C (output/base64_text.py is the pure-Python reference, which
gives the same strings for the same arguments): an event framed at its position (size, end_log_pos,
the CRC32 appended), its ``# at`` comment lines, and the base64 lines of the framed bytes."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

from binlog_spec.binlog import writer as binwriter

cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char* buf, unsigned int len) nogil

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object o)

cdef Py_ssize_t OFS_LEN = binwriter.OFS_LEN
cdef Py_ssize_t OFS_END = binwriter.OFS_END_LOG_POS
cdef Py_ssize_t OFS_TYPE = binwriter.OFS_TYPE
cdef int FDE = int(binwriter.ET.format_description_event)
cdef Py_ssize_t LINE = 76
cdef const char* ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


cdef inline void _put4(unsigned char* p, uint32_t v) noexcept:
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = (v >> 24) & 0xFF


cdef str _encode(const unsigned char* src, Py_ssize_t n):
    """base64 of n bytes, a newline after every 76 characters but the last line's."""
    cdef Py_ssize_t chars = ((n + 2) // 3) * 4
    cdef Py_ssize_t breaks = (chars - 1) // LINE if chars > 0 else 0
    cdef object out = PyUnicode_New(chars + breaks, 127)
    cdef unsigned char* d = <unsigned char*>PyUnicode_DATA(out)
    cdef Py_ssize_t i = 0, col = 0
    cdef uint32_t v
    cdef int k
    cdef unsigned char quad[4]
    while i < n:
        v = <uint32_t>src[i] << 16
        if i + 1 < n:
            v |= <uint32_t>src[i + 1] << 8
        if i + 2 < n:
            v |= src[i + 2]
        quad[0] = ALPHABET[(v >> 18) & 63]
        quad[1] = ALPHABET[(v >> 12) & 63]
        quad[2] = ALPHABET[(v >> 6) & 63] if i + 1 < n else 61   # '='
        quad[3] = ALPHABET[v & 63] if i + 2 < n else 61
        for k in range(4):
            if col == LINE:
                d[0] = 10
                d += 1
                col = 0
            d[0] = quad[k]
            d += 1
            col += 1
        i += 3
    return <str>out


def base64_lines(bytes data):
    """See base64_text.base64_lines."""
    return _encode(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


def event_text(bytes data, Py_ssize_t n, Py_ssize_t pos, bint checksum, str when, server_id, str summary,
               bint encode):
    """See base64_text.event_text."""
    if not 0 <= n <= PyBytes_GET_SIZE(data):
        raise ValueError("n is beyond the bytes given")
    cdef Py_ssize_t size = n + (4 if checksum else 0)
    cdef bytes framed = PyBytes_FromStringAndSize(NULL, size)
    cdef unsigned char* f = <unsigned char*>PyBytes_AS_STRING(framed)
    cdef const unsigned char* b = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef uint32_t end, crc = 0
    if n < binwriter.H or b[OFS_TYPE] == FDE:
        raise ValueError("event_text frames the bare bytes of a whole event, not of an FDE")
    memcpy(f, b, n)
    end = <uint32_t>((pos + size) & 0xFFFFFFFF)
    _put4(f + OFS_LEN, <uint32_t>size)
    _put4(f + OFS_END, end)
    if checksum:
        crc = <uint32_t>crc32(0, f, <unsigned int>n)
        _put4(f + n, crc)
        comment = f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} CRC32 0x{crc:08x} \t{summary}"
    else:
        comment = f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} \t{summary}"
    if not encode:
        return comment, None
    return comment, _encode(f, size)
