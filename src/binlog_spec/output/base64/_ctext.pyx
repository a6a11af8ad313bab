# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of output/base64/text.py (and of lane.py's loop), which are the pure-Python reference and
give the same strings for the same arguments: the base64 script's per-event text in C, an event framed at its
position (size, end_log_pos, the CRC32 appended), its ``# at`` comment lines, and the base64 lines of the framed
bytes. And `Lane`, the base64 lane's loop over the reader's window (lane.sink; lane._lane is its reference)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint32_t
from libc.string cimport memcmp, memcpy

from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, FL_ALLOW_PARALLEL,
                                         FORMAT_DESCRIPTION_EVENT, GTID_EVENT, LEN_EVENT_HEADER, OFS_END_LOG_POS,
                                         OFS_GTID_DOMAIN_ID, OFS_GTID_FLAGS2, OFS_GTID_SEQ_NO, OFS_LEN_EVENT,
                                         OFS_SERVER_ID, OFS_TIMESTAMP, OFS_TYPE_CODE, TABLE_MAP_EVENT,
                                         UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1, XID_EVENT, Fde, event_at,
                                         event_crc32, gtid_kept, gtid_xid_reads_agree, le as _le,
                                         opens_plain_transaction,
                                         read_fde, rows_v1_ofs_rows, u4 as _u4)


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object o)

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
    """See text.base64_lines."""
    return _encode(<const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


def event_text(bytes data, Py_ssize_t n, Py_ssize_t pos, bint checksum, str when, server_id, str summary,
               bint encode):
    """See text.event_text."""
    if not 0 <= n <= PyBytes_GET_SIZE(data):
        raise ValueError("n is beyond the bytes given")
    cdef Py_ssize_t size = n + (4 if checksum else 0)
    cdef bytes framed = PyBytes_FromStringAndSize(NULL, size)
    cdef unsigned char* f = <unsigned char*>PyBytes_AS_STRING(framed)
    cdef const unsigned char* b = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef uint32_t end, crc = 0
    if n < LEN_EVENT_HEADER or b[OFS_TYPE_CODE] == FORMAT_DESCRIPTION_EVENT:
        raise ValueError("event_text frames the bare bytes of a whole event, not of an FDE")
    memcpy(f, b, n)
    end = <uint32_t>((pos + size) & 0xFFFFFFFF)
    _put4(f + OFS_LEN_EVENT, <uint32_t>size)
    _put4(f + OFS_END_LOG_POS, end)
    if checksum:
        crc = event_crc32(f, n)
        _put4(f + n, crc)
        comment = f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} CRC32 0x{crc:08x} \t{summary}"
    else:
        comment = f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} \t{summary}"
    if not encode:
        return comment, None
    return comment, _encode(f, size)


# -- the lane's loop over the reader's window (lane.sink) -----------------------------------------

from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport uint64_t

from binlog_spec.binlog import spec
from binlog_spec.output.base64.session import DELIMITER

cdef str COMMIT = f"COMMIT{DELIMITER}"
#: The text handed on in strings of about this many characters (_write_lines joins 256 of them).
cdef Py_ssize_t JOINED = 1 << 14
#: A call takes no more events once it holds this many characters of text (the lane writes them first).
cdef Py_ssize_t HELD = 1 << 18

#: The common header's length, as a Py_ssize_t in the size arithmetic (the spec's constants: binlog/_cbytes.pxd).
cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef Py_ssize_t _ofs_rows(const unsigned char* body, Py_ssize_t len_body, Py_ssize_t len_post_header,
                          bint update) noexcept:
    """Where a v1 rows event's rows start in its body (spec.rows_offsets' ofs_rows), or -1 where the
    spec's layout does not hold (the reference path then reads it: its error, or its value)."""
    cdef uint64_t count
    cdef Py_ssize_t size
    return rows_v1_ofs_rows(body, len_body, len_post_header, update, &count, &size)


def _layout_probe() -> bool:
    """Whether the loop's reads give what the generated parser gives for the same bytes: a MariaDB
    GTID_EVENT's seq_no, domain_id and flags2, an XID_EVENT's xid after its post-header, and where a v1
    rows event's rows start (spec.rows_offsets). The spec stays the one source of the layouts, and the
    loop never runs where they differ."""
    cdef const unsigned char* p
    cdef int len_post_header
    if not gtid_xid_reads_agree():          # binlog/_cbytes.pxd
        return False
    for code in (WRITE_ROWS_EVENT_V1, UPDATE_ROWS_EVENT_V1, DELETE_ROWS_EVENT_V1):
        for len_post_header in (6, 8):
            for count in (b"\x03", b"\x11", b"\xfc\x09\x00", b"\xfd\x0a\x00\x00", b"\xfe" + bytes([12]) + bytes(7)):
                body = bytes(range(1, len_post_header + 1)) + count + bytes(8) + b"\x01\x02"
                p = <const unsigned char*>PyBytes_AS_STRING(body)
                try:
                    want = spec.rows_offsets(code, len_post_header, body).ofs_rows
                except Exception:
                    return False
                if _ofs_rows(p, len(body), len_post_header, code == UPDATE_ROWS_EVENT_V1) != want:
                    return False
    return True


#: The layouts the lane reads checked against the generated parser (False: the lane never runs).
LAYOUTS_AGREE = _layout_probe()


cdef class Lane:
    """The events base64_lane writes unchanged (the pure-Python reference: lane._lane), written
    straight from the reader's window (binlog.reader.BinlogReader, `sink=`) with no Event object, while
    the Python lane holds nothing (no BINLOG block, no rows event pending, no Item held by the script):

    * a MariaDB GTID_EVENT that opens a transaction (not FL_STANDALONE, no XA, no extra flags) whose
      session settings (skip_parallel, domain, server id) are the script's already;
    * ANNOTATE_ROWS_EVENTs, XID_EVENTs (a body of the post-header and the xid, no more);
    * a statement's BINLOG block: TABLE_MAP_EVENTs whose bodies the Python lane wrote before (`maps`,
      body -> summary), then WRITE/UPDATE/DELETE_ROWS_EVENT_V1s up to the one with STMT_END_F, taken
      whole or not (as Base64Script._flush writes it, where the Python lane hands such a block on).

    It stops at the first event it cannot take so; the reader then yields it to the Python lane. The
    text is appended to `taken` (one string per call, its lines joined), which the Python lane writes
    before the next event it is given; until then the loop takes nothing more (about HELD characters
    at most are held). Returns the bytes taken (0: none)."""

    cdef readonly list hold, taken
    cdef public list replay         # what the filtered lane hands back (binlog.replay: its `walk_filtered`)
    cdef object script, rewriter, when_fn, annotate_fn, rows_fn, gtid_fn, xid_fn, tz
    cdef public dict maps
    cdef dict heads
    cdef object fde, out_fde
    cdef bint checksum
    cdef Fde lens                   # what the loop takes from self.fde (read_fde)
    cdef long long last_ts
    cdef str last_when
    cdef unsigned char* scratch
    cdef Py_ssize_t scratch_size
    # what _event and _block took of the last event or block: events, rows events; under filters (`filt`,
    # _ctext_filter.pxi) the filters' reading of the TABLE_MAPs of the transaction taken, its first n_maps items
    # (the list reused from one transaction to the next)
    cdef Py_ssize_t block_events, block_rows
    cdef object filt                # a Base64Filter, or None
    cdef bint track                 # (False: nothing to learn of a transaction's tables)
    cdef list tx_maps
    cdef Py_ssize_t n_maps

    def __init__(self, script, rewriter, list hold, list taken, when, annotate, rows_head, gtid_summary,
                 xid_summary, filt=None):
        self.script, self.rewriter, self.hold, self.taken = script, rewriter, hold, taken
        self.replay = []
        self.when_fn, self.annotate_fn, self.rows_fn = when, annotate, rows_head
        self.gtid_fn, self.xid_fn = gtid_summary, xid_summary
        self.tz = script.options.tz
        self.maps, self.heads = {}, {}
        self.fde = self.out_fde = None
        self.lens.usable = False
        self.last_ts = -1
        self.scratch = NULL
        self.scratch_size = 0
        self.filt = filt
        self.track = filt is not None and (<Base64Filter>filt).need_names
        self.tx_maps, self.n_maps = [], 0

    def __dealloc__(self):
        PyMem_Free(self.scratch)

    cdef _set_fde(self, fde, out_fde):
        self.fde, self.out_fde = fde, out_fde
        self.maps.clear()
        self.heads.clear()
        # the output's FDE frames the events as the input's: same header, checksum and post-header lengths
        read_fde(fde, LAYOUTS_AGREE and out_fde is not None and out_fde.len_common_header == H
                 and fde.len_checksum == out_fde.len_checksum and fde.post_header_lens == out_fde.post_header_lens,
                 &self.lens)
        self.checksum = out_fde is not None and out_fde.len_checksum == 4

    def remember(self, fde, bytes body, str summary):
        """A TABLE_MAP's summary, written by the Python lane for the body bytes (under `fde`)."""
        if fde is self.out_fde:
            if len(self.maps) > 4096:
                self.maps.clear()
            self.maps[body] = summary

    cdef str _when(self, uint32_t ts):
        if ts != self.last_ts:
            self.last_when = self.when_fn(ts, self.tz)
            self.last_ts = ts
        return self.last_when

    cdef const unsigned char* _framed(self, const unsigned char* e, uint32_t len_event, Py_ssize_t pos,
                                      bint verified, uint32_t* size, uint32_t* crc) except NULL:
        """The event framed at pos (text.event_text): the window's bytes when they are so already."""
        cdef Py_ssize_t n = len_event - self.lens.len_checksum
        cdef uint32_t want = <uint32_t>(n + (4 if self.checksum else 0))
        cdef uint32_t end = <uint32_t>((pos + want) & 0xFFFFFFFF)
        cdef unsigned char* f
        size[0] = want
        if _u4(e + OFS_LEN_EVENT) == want and _u4(e + OFS_END_LOG_POS) == end and (verified or not self.checksum):
            if self.checksum:
                crc[0] = _u4(e + n)
            return e
        if want > self.scratch_size:
            f = <unsigned char*>PyMem_Realloc(self.scratch, want)
            if f == NULL:
                raise MemoryError()
            self.scratch, self.scratch_size = f, want
        f = self.scratch
        memcpy(f, e, n)
        _put4(f + OFS_LEN_EVENT, want)
        _put4(f + OFS_END_LOG_POS, end)
        if self.checksum:
            crc[0] = event_crc32(f, n)
            _put4(f + n, crc[0])
        return f

    cdef str _comment(self, Py_ssize_t pos, const unsigned char* e, uint32_t size, uint32_t crc, str summary):
        cdef uint32_t end = <uint32_t>((pos + size) & 0xFFFFFFFF)
        when = self._when(_u4(e + OFS_TIMESTAMP))
        server_id = _u4(e + OFS_SERVER_ID)
        if self.checksum:
            return f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} CRC32 0x{crc:08x} \t{summary}"
        return f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} \t{summary}"

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Write whole events of buf from off (file position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off
        cdef uint32_t len_event
        cdef int code
        cdef bint gtids
        if self.filt is not None:       # (_ctext_filter.pxi)
            return walk_filtered(self, buf, p, off, n, pos, fde, verify, path)
        if self.taken or self.hold or self.script.block or self.rewriter.pending is not None:
            return 0        # (its text not written yet: the reader yields an event, the lane writes it)
        out_fde = self.rewriter.out_fde
        if fde is not self.fde or out_fde is not self.out_fde:
            self._set_fde(fde, out_fde)
        if not self.lens.usable:
            return 0
        session = self.script.session
        skip_parallel, domain, server = session.skip_parallel, session.gtid_domain, session.gtid_server
        gtids = type(skip_parallel) is int and type(domain) is int and type(server) is int
        cdef list lines = []
        cdef Py_ssize_t chars = 0, mark = 0, held = 0, took
        try:
            while event_at(p, off, n, self.lens.len_checksum, verify, &code, &len_event):
                took = self._event(p, off, n, pos + (off - start), verify, code, len_event, lines, gtids,
                                   skip_parallel, domain, server)
                if not took:
                    break
                off += took
                while mark < len(lines):
                    chars += len(<str>lines[mark]) + 1
                    mark += 1
                if chars >= JOINED:         # handed on in strings of about this size (_write_lines batches them)
                    self.taken.append("\n".join(lines))
                    lines.clear()
                    held += chars
                    chars = mark = 0
                    if held >= HELD:
                        break
        finally:
            if lines:
                self.taken.append("\n".join(lines))
        return off - start

    cdef Py_ssize_t _event(self, const unsigned char* p, Py_ssize_t off, Py_ssize_t n, Py_ssize_t at, bint verify,
                           int code, uint32_t len_event, list lines, bint gtids, skip_parallel, domain,
                           server) except -1:
        """The event at off (file position at) written to lines, as the Python lane writes it: the bytes taken
        (a statement's BINLOG block whole: _block), or 0 where the lane stops before it."""
        cdef const unsigned char* e = p + off
        cdef const unsigned char* body = e + H
        cdef Py_ssize_t len_body = len_event - H - self.lens.len_checksum
        cdef const unsigned char* f
        cdef uint32_t size, crc = 0
        cdef int flags2
        cdef uint64_t seq_no
        self.block_events = 1
        if code == TABLE_MAP_EVENT:
            return self._block(p, off, n, at, verify, lines)
        if code == GTID_EVENT:
            if not gtids or not opens_plain_transaction(body, len_body):
                return 0
            flags2 = body[OFS_GTID_FLAGS2]
            if skip_parallel != (0 if flags2 & FL_ALLOW_PARALLEL else 1) \
                    or domain != _u4(body + OFS_GTID_DOMAIN_ID) \
                    or server != _u4(e + OFS_SERVER_ID):
                return 0
            seq_no = _le(body + OFS_GTID_SEQ_NO, 8)
            summary = self.gtid_fn(_u4(body + OFS_GTID_DOMAIN_ID), _u4(e + OFS_SERVER_ID), seq_no, flags2)
            f = self._framed(e, len_event, at, verify, &size, &crc)
            lines.append(self._comment(at, e, size, crc, summary))
            lines.append(f"/*M!100001 SET @@session.gtid_seq_no={seq_no}*/{DELIMITER}\n"
                         f"START TRANSACTION\n{DELIMITER}")
        elif code == XID_EVENT:
            if len_body != self.lens.xid + 8:
                return 0
            summary = self.xid_fn(_le(body + self.lens.xid, 8))
            f = self._framed(e, len_event, at, verify, &size, &crc)
            lines.append(self._comment(at, e, size, crc, summary))
            lines.append(COMMIT)
        elif code == ANNOTATE_ROWS_EVENT:
            if len_body < self.lens.annotate:
                return 0
            summary, text = self.annotate_fn(PyBytes_FromStringAndSize(
                <const char*>body + self.lens.annotate, len_body - self.lens.annotate))
            f = self._framed(e, len_event, at, verify, &size, &crc)
            lines.append(self._comment(at, e, size, crc, summary))
            lines.append(text)
        else:
            return 0
        return len_event

    cdef Py_ssize_t _block(self, const unsigned char* p, Py_ssize_t off, Py_ssize_t n, Py_ssize_t pos,
                           bint verify, list lines) except -1:
        """A statement's BINLOG block from off (TABLE_MAPs, then rows events up to the one with STMT_END_F)
        written to lines, as lane._lane_flush (one rows event) and Base64Script._flush write it:
        its bytes, or 0 where it is not taken whole."""
        cdef Py_ssize_t at = off, start = off, len_body, lph, k
        cdef const unsigned char* e
        cdef const unsigned char* f
        cdef uint32_t len_event, size, crc = 0
        cdef int code
        cdef list summaries = []
        cdef bint rows_seen = False
        cdef Py_ssize_t rows = 0
        while True:
            if not event_at(p, at, n, self.lens.len_checksum, verify, &code, &len_event):
                return 0
            e = p + at
            len_body = len_event - H - self.lens.len_checksum
            if code == TABLE_MAP_EVENT:
                if rows_seen:       # (the reference sets STMT_END_F on the rows event before it)
                    return 0
                body = PyBytes_FromStringAndSize(<const char*>e + H, len_body)
                summary = self.maps.get(body)
                if summary is None:
                    return 0
                summaries.append(summary)
                if self.track and not (<Base64Filter>self.filt).map_kept(self, body, e):
                    return 0
                at += len_event
                continue
            if code != WRITE_ROWS_EVENT_V1 and code != UPDATE_ROWS_EVENT_V1 and code != DELETE_ROWS_EVENT_V1:
                return 0
            lph = self.lens.rows[code - WRITE_ROWS_EVENT_V1]
            if _ofs_rows(e + H, len_body, lph, code == UPDATE_ROWS_EVENT_V1) < 0:
                return 0
            key = PyBytes_FromStringAndSize(<const char*>e + OFS_TYPE_CODE, 1) + \
                PyBytes_FromStringAndSize(<const char*>e + H, lph)
            head = self.heads.get(key)
            if head is None:
                try:
                    head = self.rows_fn(code, lph, PyBytes_FromStringAndSize(<const char*>e + H, len_body))
                except Exception:
                    return 0
                if len(self.heads) > 4096:
                    self.heads.clear()
                self.heads[key] = head
            summaries.append(head[0])
            rows += 1
            if self.track and not (<Base64Filter>self.filt).rows_kept(self, head[2]):
                return 0
            at += len_event
            if head[1]:             # STMT_END_F: the block ends
                break
            rows_seen = True        # the statement goes on: only its next rows event may follow
        encoded = ["", "BINLOG '"]
        k = 0
        while off < at:
            e = p + off
            len_event = _u4(e + OFS_LEN_EVENT)
            f = self._framed(e, len_event, pos, verify, &size, &crc)
            lines.append(self._comment(pos, e, size, crc, summaries[k]))
            encoded.append(_encode(f, size))
            k += 1
            off += len_event
            pos += len_event
        encoded.append(f"'{DELIMITER}")
        lines += encoded
        self.block_events, self.block_rows = len(summaries), rows
        return at - start


include "_ctext_filter.pxi"
