# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled framing loop: framing.walk_events in C, with the CRC32 of binlog/_crc32.h (ISA-L or zlib).

Walks the whole events of a window's bytes from an offset and returns, for each, its header (a
spec.EventHeader, built without its dataclass __init__), its bytes and its CRC32 trailer; it stops,
without taking it, at the first event that needs the reader's full path (see framing.walk_events,
the pure-Python reference, which gives the same list for the same arguments).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_SetItem
from libc.stdint cimport uint32_t

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (CRC32_IMPLEMENTATION, LEN_EVENT_HEADER, OFS_END_LOG_POS, OFS_FLAGS,
                                         OFS_LEN_EVENT, OFS_SERVER_ID, OFS_TIMESTAMP, OFS_TYPE_CODE, event_at,
                                         event_crc32, u4 as _u4, whole_and_sound)


cdef object _HEADER = spec.EventHeader
cdef object _NEW = object.__new__
#: The common header's length, as a Py_ssize_t in the size arithmetic (the spec's constants: binlog/_cbytes.pxd).
cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef str K_TS = "timestamp", K_CODE = "type_code", K_SID = "server_id", K_LEN = "len_event"
cdef unsigned char STOP = 1, SHOW = 2, RUN = 3
cdef str K_END = "end_log_pos", K_FLAGS = "flags"

#: The CRC32 the compiled loops run: "ISA-L" or "zlib" (binlog/_crc32.h; setup.py chooses).
CRC32 = CRC32_IMPLEMENTATION.decode()


def crc32(const unsigned char[::1] data) -> int:
    """The compiled loops' CRC32 of `data`: zlib.crc32's value (the tests compare them)."""
    return event_crc32(&data[0] if data.shape[0] else NULL, data.shape[0])


def walk_events(bytes buf, Py_ssize_t off, int len_checksum, bint verify, Py_ssize_t max_events):
    """See framing.walk_events."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(buf)
    cdef Py_ssize_t count = 0
    cdef const unsigned char* e
    cdef uint32_t len_event
    cdef int code
    cdef list out = []
    cdef dict d
    while count < max_events and off >= 0 and event_at(p, off, n, len_checksum, verify, &code, &len_event):
        e = p + off
        checksum = _u4(e + len_event - 4) if len_checksum == 4 else None
        header = _NEW(_HEADER)
        d = header.__dict__
        PyDict_SetItem(d, K_TS, _u4(e + OFS_TIMESTAMP))
        PyDict_SetItem(d, K_CODE, code)
        PyDict_SetItem(d, K_SID, _u4(e + OFS_SERVER_ID))
        PyDict_SetItem(d, K_LEN, len_event)
        PyDict_SetItem(d, K_END, _u4(e + OFS_END_LOG_POS))
        PyDict_SetItem(d, K_FLAGS, <int>(e[OFS_FLAGS] | (e[OFS_FLAGS + 1] << 8)))
        out.append((header, PyBytes_FromStringAndSize(<const char*>e, len_event), checksum))
        off += len_event
        count += 1
    return out



def skip_events(bytes buf, Py_ssize_t off, Py_ssize_t end, int len_checksum, bint verify, bytes marks,
                Py_ssize_t max_events, Py_ssize_t run_end=-1):
    """See framing.skip_events."""
    cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
    cdef const unsigned char* mark = <const unsigned char*>PyBytes_AS_STRING(marks)
    cdef Py_ssize_t min_len = H + len_checksum
    cdef Py_ssize_t count = 0
    cdef const unsigned char* e
    cdef uint32_t len_event
    cdef unsigned char m
    cdef list shown = []
    cdef bint in_run = False
    cdef object last = None         # the run's latest event, not reported yet
    if PyBytes_GET_SIZE(marks) != 256:
        raise ValueError("marks must have 256 bytes")
    if end > PyBytes_GET_SIZE(buf):
        end = PyBytes_GET_SIZE(buf)
    while count < max_events and off >= 0 and end - off >= H:
        e = p + off
        len_event = _u4(e + OFS_LEN_EVENT)
        m = mark[e[OFS_TYPE_CODE]]
        if m == STOP or not whole_and_sound(e, len_event, end - off, min_len, len_checksum, verify):
            break
        if m == RUN and off <= run_end:
            if in_run:
                last = (off, e[OFS_TYPE_CODE], len_event, count)
            else:
                shown.append((off, e[OFS_TYPE_CODE], len_event, count))
                in_run = True
        elif m == SHOW or m == RUN:
            if last is not None:
                shown.append(last)
                last = None
            in_run = False
            shown.append((off, e[OFS_TYPE_CODE], len_event, count))
        off += len_event
        count += 1
    if last is not None:
        shown.append(last)
    return off, count, shown
