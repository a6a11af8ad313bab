# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of output/event_json.py (whose `render`, ``jsonenc.dumps(ev.to_dict())``, is the pure-Python
reference): `Lane`, the loop that writes the JSON line of `events --format jsonl` straight from the reader's
window, with no Event object, for the common events of a MariaDB binlog:

* GTID_EVENT (MariaDB's) of no XA and no extra flags (flags_extra absent or 0), with or without commit_id;
* XID_EVENT (a body of its post-header and the xid, no more), ANNOTATE_ROWS_EVENT;
* WRITE/UPDATE/DELETE_ROWS_EVENT_V1 of a 6- or 8-byte post-header (a 4- or 6-byte table id), their bitmaps and
  rows in hex;
* TABLE_MAP_EVENTs whose body bytes the Python side rendered before under the same FDE (`remember`: the text
  after the header's fields, kept by body).

Every line is the header's fields (file, pos, end_log_pos, type, type_code, timestamp, server_id, size, flags,
checksum), then the body's in the order `Event.to_dict` gives them. The loop stops at the first event it
cannot write so (any other type, a body the spec would not read alike, a bad CRC32 or size: binlog/_cbytes.pxd
`event_at`), and the reader yields that event to the Python side. event_json.agree() checks, at import, that
the lines written here are the reference's for probes of every kind taken (else the loop never runs).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy

from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, FL_GROUP_COMMIT_ID, GTID_EVENT,
                                         LEN_COMMIT_ID, LEN_EVENT_HEADER, LEN_GTID_FIXED, OFS_END_LOG_POS, OFS_FLAGS,
                                         OFS_GTID_DOMAIN_ID, OFS_GTID_FLAGS2, OFS_GTID_SEQ_NO, OFS_LEN_EVENT,
                                         OFS_SERVER_ID, OFS_TIMESTAMP, OFS_TYPE_CODE, TABLE_MAP_EVENT,
                                         UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1, XA_FLAGS, XID_EVENT, Fde, event_at,
                                         le, read_fde, rows_v1_ofs_rows, u4)

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

cdef Py_ssize_t H = LEN_EVENT_HEADER
#: The text is handed on in blocks of about this many bytes.
cdef Py_ssize_t CHUNK = 1 << 18
#: A call takes no more events once the text not yet written holds this many bytes.
cdef Py_ssize_t HELD = 4 << 20
#: At most this many bytes of one event are asked into the reader's window.
cdef Py_ssize_t MAX_WANT = 64 << 20
#: The TABLE_MAP texts kept (`remember`) hold at most this many bytes (bodies and texts); then they are forgotten.
cdef Py_ssize_t KEPT = 16 << 20
cdef const char* HEX = b"0123456789abcdef"


cdef inline bint _utf8_valid(const unsigned char* s, Py_ssize_t n) noexcept:
    """Whether n bytes are UTF-8 as Python's strict decoder reads it (no overlong form, no surrogate, <= U+10FFFF)."""
    cdef Py_ssize_t i = 0
    cdef unsigned char c, lo, hi
    cdef int k, j
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        lo, hi = 0x80, 0xBF
        if 0xC2 <= c <= 0xDF:
            k = 1
        elif c == 0xE0:
            k, lo = 2, 0xA0
        elif c == 0xED:
            k, hi = 2, 0x9F
        elif 0xE1 <= c <= 0xEF:
            k = 2
        elif c == 0xF0:
            k, lo = 3, 0x90
        elif c == 0xF4:
            k, hi = 3, 0x8F
        elif 0xF1 <= c <= 0xF3:
            k = 3
        else:
            return False
        if i + k >= n:
            return False
        if not lo <= s[i + 1] <= hi:
            return False
        for j in range(2, k + 1):
            if not 0x80 <= s[i + j] <= 0xBF:
                return False
        i += k + 1
    return True


cdef class Lane:
    """See the module. Called by the reader (binlog.reader.BinlogReader, `sink=`) with its window; appends the
    lines of the events it takes to `taken` (blocks of UTF-8 lines joined by newlines, bytes, in file order), which
    the Python side writes before the next event the reader yields to it. Returns the bytes taken, or minus the bytes it
    wants from `pos` in the window (an event it would take runs past it)."""

    cdef readonly list taken
    cdef dict maps              # TABLE_MAP body bytes -> the line's text after the header's fields
    cdef dict files             # file name -> its JSON string (bytes), or None: not written here
    cdef list names             # type code -> its name as a JSON string (bytes) or None
    cdef object fde
    cdef Fde lens
    cdef char* out
    cdef Py_ssize_t used, cap, held, kept
    cdef Py_ssize_t vstart, shift   # a --jobs piece: its range starts at vstart of the reader's stream; file - stream
    cdef uint32_t last_ts
    cdef char when[20]

    def __init__(self, list names):
        self.taken = []
        self.maps, self.files = {}, {}
        self.names = names
        self.fde = None
        self.lens.usable = False
        self.out = NULL
        self.used = self.cap = self.held = self.kept = 0
        self.vstart = self.shift = 0
        self.last_ts = 0
        self._iso(0)

    def __dealloc__(self):
        PyMem_Free(self.out)

    # -- the text ---------------------------------------------------------------------------------------
    cdef int _reserve(self, Py_ssize_t more) except -1:
        cdef Py_ssize_t want = self.used + more
        cdef char* p
        if want > self.cap:
            want = max(want, 2 * self.cap, 1 << 16)
            p = <char*>PyMem_Realloc(self.out, want)
            if p == NULL:
                raise MemoryError()
            self.out, self.cap = p, want
        return 0

    cdef inline void _put(self, const char* s, Py_ssize_t n) noexcept:
        memcpy(self.out + self.used, s, n)
        self.used += n

    cdef inline void _bytes(self, bytes b) noexcept:
        self._put(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))

    cdef inline void _num(self, uint64_t v) noexcept:
        cdef char tmp[24]
        cdef int i = 24
        while True:
            i -= 1
            tmp[i] = <char>(48 + v % 10)
            v //= 10
            if v == 0:
                break
        self._put(tmp + i, 24 - i)

    cdef inline void _hex(self, const unsigned char* s, Py_ssize_t n) noexcept:
        """{"hex":"..."}: bytes as jsonenc writes them."""
        cdef char* d
        cdef Py_ssize_t i
        self._put(b'{"hex":"', 8)
        d = self.out + self.used
        for i in range(n):
            d[2 * i] = HEX[s[i] >> 4]
            d[2 * i + 1] = HEX[s[i] & 15]
        self.used += 2 * n
        self._put(b'"}', 2)

    cdef void _string(self, const unsigned char* s, Py_ssize_t n) noexcept:
        """A JSON string of valid UTF-8 bytes, escaped as orjson and json.dumps(ensure_ascii=False) escape."""
        cdef char* d = self.out + self.used
        cdef Py_ssize_t i
        cdef unsigned char c
        d[0] = 34
        d += 1
        for i in range(n):
            c = s[i]
            if c >= 0x20 and c != 34 and c != 92:
                d[0] = c
                d += 1
            elif c == 34 or c == 92:
                d[0], d[1] = 92, c
                d += 2
            elif c == 10 or c == 13 or c == 9 or c == 8 or c == 12:
                d[0] = 92
                d[1] = 110 if c == 10 else 114 if c == 13 else 116 if c == 9 else 98 if c == 8 else 102
                d += 2
            else:
                memcpy(d, b"\\u00", 4)
                d[4], d[5] = HEX[c >> 4], HEX[c & 15]
                d += 6
        d[0] = 34
        self.used = d + 1 - self.out

    cdef void _iso(self, uint32_t ts) noexcept:
        """timezones.iso_utc of ts: YYYY-MM-DDTHH:MM:SSZ (a u4 is within 1970..2106)."""
        cdef long long z = ts // 86400 + 719468, era, doe, yoe, y, doy, mp, d, m
        cdef long long s = ts % 86400
        era = z // 146097
        doe = z - era * 146097
        yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
        y = yoe + era * 400
        doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
        mp = (5 * doy + 2) // 153
        d = doy - (153 * mp + 2) // 5 + 1
        m = mp + 3 if mp < 10 else mp - 9
        if m <= 2:
            y += 1
        cdef char* w = self.when
        w[0], w[1], w[2], w[3] = 48 + y // 1000, 48 + y // 100 % 10, 48 + y // 10 % 10, 48 + y % 10
        w[4], w[5], w[6], w[7] = 45, 48 + m // 10, 48 + m % 10, 45
        w[8], w[9], w[10] = 48 + d // 10, 48 + d % 10, 84
        w[11], w[12], w[13] = 48 + s // 36000, 48 + s // 3600 % 10, 58
        w[14], w[15], w[16] = 48 + s // 600 % 6, 48 + s // 60 % 10, 58
        w[17], w[18], w[19] = 48 + s % 60 // 10, 48 + s % 10, 90
        self.last_ts = ts

    cdef int _head(self, bytes file_json, bytes name, const unsigned char* e, Py_ssize_t pos,
                   uint32_t len_event) except -1:
        """The header's fields of the event at e (Event.to_dict's first ones), without the closing brace;
        room for them reserved."""
        cdef uint32_t ts = u4(e + OFS_TIMESTAMP)
        self._reserve(PyBytes_GET_SIZE(file_json) + PyBytes_GET_SIZE(name) + 400)
        if self.used:
            self._put(b"\n", 1)
        self._put(b'{"file":', 8)
        self._bytes(file_json)
        self._put(b',"pos":', 7)
        self._num(pos)
        self._put(b',"end_log_pos":', 15)
        self._num(u4(e + OFS_END_LOG_POS))
        self._put(b',"type":', 8)
        self._bytes(name)
        self._put(b',"type_code":', 13)
        self._num(e[OFS_TYPE_CODE])
        self._put(b',"timestamp":"', 14)
        if ts != self.last_ts:
            self._iso(ts)
        self._put(self.when, 20)
        self._put(b'","server_id":', 14)
        self._num(u4(e + OFS_SERVER_ID))
        self._put(b',"size":', 8)
        self._num(len_event)
        self._put(b',"flags":', 9)
        self._num(e[OFS_FLAGS] | (e[OFS_FLAGS + 1] << 8))
        if self.lens.len_checksum == 4:
            self._put(b',"checksum":', 12)
            self._num(u4(e + len_event - 4))
        return 0

    cdef int _flush(self) except -1:
        if self.used:
            self.taken.append(PyBytes_FromStringAndSize(self.out, self.used))
            self.held += self.used
            self.used = 0
        return 0

    # -- the events -------------------------------------------------------------------------------------
    cdef bint _body(self, int code, const unsigned char* e, uint32_t len_event, bytes file_json,
                    Py_ssize_t pos) except -1:
        """Write the line of the event at e (its header is `code`'s, its size len_event), or nothing and False
        where the loop does not take it."""
        cdef const unsigned char* b = e + H
        cdef Py_ssize_t n = len_event - H - self.lens.len_checksum, at, lph, size, bitmap
        cdef int flags2
        cdef uint64_t count
        name = self.names[code]
        if name is None:
            return False
        if code == GTID_EVENT:
            if n < LEN_GTID_FIXED:
                return False
            flags2 = b[OFS_GTID_FLAGS2]
            at = LEN_GTID_FIXED + (LEN_COMMIT_ID if flags2 & FL_GROUP_COMMIT_ID else 0)
            if flags2 & XA_FLAGS or n < at or (n > at and b[at] != 0):
                return False
            self._head(file_json, name, e, pos, len_event)
            self._reserve(320)
            self._put(b',"seq_no":', 10)
            self._num(le(b + OFS_GTID_SEQ_NO, 8))
            self._put(b',"domain_id":', 13)
            self._num(u4(b + OFS_GTID_DOMAIN_ID))
            self._put(b',"flags2":', 10)
            self._num(flags2)
            if flags2 & FL_GROUP_COMMIT_ID:
                self._put(b',"commit_id":', 13)
                self._num(le(b + LEN_GTID_FIXED, LEN_COMMIT_ID))
            if n > at:
                self._put(b',"flags_extra":0', 16)
            self._put(b',"gtid":"', 9)
            self._num(u4(b + OFS_GTID_DOMAIN_ID))
            self._put(b"-", 1)
            self._num(u4(e + OFS_SERVER_ID))
            self._put(b"-", 1)
            self._num(le(b + OFS_GTID_SEQ_NO, 8))
            self._put(b'"}', 2)
        elif code == XID_EVENT:
            lph = self.lens.xid
            if n != lph + 8:
                return False
            self._head(file_json, name, e, pos, len_event)
            self._reserve(2 * lph + 64)
            self._put(b',"post_header":', 15)
            self._hex(b, lph)
            self._put(b',"xid":', 7)
            self._num(le(b + lph, 8))
            self._put(b"}", 1)
        elif code == ANNOTATE_ROWS_EVENT:
            lph = self.lens.annotate
            if n < lph:
                return False
            query = None
            if not _utf8_valid(b + lph, n - lph):      # plain_fields.text: decoded with U+FFFD for what is not UTF-8
                query = PyBytes_FromStringAndSize(<const char*>b + lph, n - lph).decode("utf-8", "replace") \
                    .encode("utf-8")
            self._head(file_json, name, e, pos, len_event)
            self._reserve(2 * lph + 6 * (n - lph if query is None else len(query)) + 64)
            self._put(b',"post_header":', 15)
            self._hex(b, lph)
            self._put(b',"query":', 9)
            if query is None:
                self._string(b + lph, n - lph)
            else:
                self._string(<const unsigned char*>PyBytes_AS_STRING(query), len(query))
            self._put(b"}", 1)
        elif code == TABLE_MAP_EVENT:
            tail = self.maps.get(PyBytes_FromStringAndSize(<const char*>b, n))
            if tail is None:
                return False
            self._head(file_json, name, e, pos, len_event)
            self._reserve(len(tail))
            self._bytes(tail)
        elif WRITE_ROWS_EVENT_V1 <= code <= DELETE_ROWS_EVENT_V1:
            lph = self.lens.rows[code - WRITE_ROWS_EVENT_V1]
            if (lph != 6 and lph != 8) or lph >= n:
                return False
            at = rows_v1_ofs_rows(b, n, lph, code == UPDATE_ROWS_EVENT_V1, &count, &size)
            if at < 0:
                return False
            bitmap = <Py_ssize_t>((count + 7) // 8)
            self._head(file_json, name, e, pos, len_event)
            self._reserve(2 * n + 320)
            self._put(b',"rows_flags":', 14)
            self._num(b[lph - 2] | (b[lph - 1] << 8))
            self._put(b',"num_columns":', 15)
            self._num(count)
            self._put(b',"columns_before_image":', 24)
            self._hex(b + lph + size, bitmap)
            if code == UPDATE_ROWS_EVENT_V1:
                self._put(b',"columns_after_image":', 23)
                self._hex(b + lph + size + bitmap, bitmap)
            self._put(b',"rows":', 8)
            self._hex(b + at, n - at)
            if lph == 8:
                self._put(b',"len_table_id":6,"table_id":', 29)
                self._num(u4(b) | (<uint64_t>(b[4] | (b[5] << 8)) << 32))
            else:
                self._put(b',"len_table_id":4,"table_id":', 29)
                self._num(u4(b))
            self._put(b"}", 1)
        else:
            return False
        return True

    cdef bytes _file(self, str path):
        got = self.files.get(path, False)
        if got is False:
            from binlog_spec.output import jsonenc
            try:
                got = jsonenc.dumps(path).encode("utf-8")
            except UnicodeEncodeError:          # (a name of undecodable bytes: the Python side writes it)
                got = None
            self.files[path] = got
        return got

    cdef _set_fde(self, fde, bint agree):
        self.fde = fde
        self.maps.clear()
        self.kept = 0
        read_fde(fde, agree, &self.lens)

    def place(self, Py_ssize_t vstart, Py_ssize_t shift):
        """The reader that calls next reads a --jobs piece (stream.planning.pieces.read_piece): its own range
        starts at `vstart` of the reader's stream, at file position vstart + shift; the loop takes nothing before
        it (the FDE put in front, which is no event of the piece), and writes the file's positions."""
        self.vstart, self.shift = vstart, shift

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Write the lines of whole events of buf from off (stream position pos: the file's, less `shift` in a
        piece); the bytes taken, or minus the bytes wanted from pos."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, want
        cdef int code
        cdef uint32_t len_event
        if pos < self.vstart:
            return 0
        if not self.taken:
            self.held = 0
        elif self.held >= HELD:
            return 0            # (its text not written yet: the reader yields an event, the Python side writes it)
        if fde is not self.fde:
            self._set_fde(fde, True)
        file_json = self._file(path)
        if not self.lens.usable or file_json is None:
            return 0
        try:
            while event_at(p, off, n, self.lens.len_checksum, verify, &code, &len_event):
                if not self._body(code, p + off, len_event, file_json, pos + (off - start) + self.shift):
                    break
                off += len_event
                if self.used >= CHUNK:
                    self._flush()
                    if self.held >= HELD:
                        break
            else:
                if off == start and n - off < H:
                    return -H
                if off == start and self.names[p[off + OFS_TYPE_CODE]] is not None:
                    want = u4(p + off + OFS_LEN_EVENT)
                    if n - off < want <= MAX_WANT:
                        return -want
        finally:
            self._flush()
        return off - start

    def remember(self, ev, str line):
        """The line the Python side wrote of a TABLE_MAP_EVENT (ev, an Event read under the FDE the loop was last
        given): its text after the header's fields, kept by its body bytes for the next ones."""
        cdef bytes raw = ev.raw
        cdef const unsigned char* e = <const unsigned char*>PyBytes_AS_STRING(raw)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), mark
        if ev.error is not None or ev.payload_pos is not None or not self.lens.usable \
                or n < H + self.lens.len_checksum \
                or u4(e + OFS_LEN_EVENT) != n or e[OFS_TYPE_CODE] != TABLE_MAP_EVENT \
                or (ev.checksum is not None) != (self.lens.len_checksum == 4):
            return
        file_json = self._file(ev.file)
        if file_json is None:
            return
        mark = self.used
        self._head(file_json, self.names[TABLE_MAP_EVENT], e, ev.pos, <uint32_t>n)
        head = PyBytes_FromStringAndSize(self.out + mark + (1 if mark else 0), self.used - mark - (1 if mark else 0))
        self.used = mark
        try:
            text = line.encode("utf-8")
        except UnicodeEncodeError:      # (text the lane would not write alike)
            return
        if not (text.startswith(head) and text[len(head):len(head) + 1] == b","):
            return
        body, tail = raw[H:n - self.lens.len_checksum], text[len(head):]
        if len(self.maps) >= 4096 or self.kept + len(body) + len(tail) > KEPT:
            self.maps.clear()
            self.kept = 0
        self.maps[body] = tail
        self.kept += len(body) + len(tail)

    def line(self, bytes raw not None, Py_ssize_t pos, fde, str path):
        """The line this loop writes of one whole event (raw, at pos, under fde), or None where it takes none (for
        the probes of event_json.agree and the tests)."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(raw)
        cdef int code
        cdef uint32_t len_event
        if fde is not self.fde:
            self._set_fde(fde, True)
        file_json = self._file(path)
        if not self.lens.usable or file_json is None or self.used:
            return None
        if not event_at(p, 0, len(raw), self.lens.len_checksum, True, &code, &len_event) or len_event != len(raw):
            return None
        if not self._body(code, p, len_event, file_json, pos):
            return None
        text = PyUnicode_DecodeUTF8(self.out, self.used, NULL)
        self.used = 0
        return text
