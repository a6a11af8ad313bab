# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: libraries = z
"""The compiled part of a rollback's conflict check (output/conflicts.py, the pure-Python reference):

* `KeySet`: the undone keys of the tables whose key is one integer column, exactly (table slot, value)
  -> the first undone key record of that row, in a C hash table of at most MAX_SLOTS entries (12 bytes
  each); past that it is dropped (`full`) and the check runs as without it;
* `Sink(check)`: called by the reader (binlog.reader.BinlogReader, `sink=`) with the window's bytes
  before it walks them, once the check reads past the rollback's window (`armed`, set by
  ConflictCheck.watch when the transaction tracker is between transactions). It takes whole events,
  with the checks of framing.walk_events (size, CRC32), as long as each is one the reference would read
  as it does:

  - a MariaDB GTID_EVENT that opens a transaction (not FL_STANDALONE, no XA, no extra flags);
  - then ANNOTATE_ROWS_EVENTs; TABLE_MAP_EVENTs whose body bytes the check met before under the same
    schema (ConflictCheck._learn, from the reference path), mapped again in the check's decoder;
    WRITE/UPDATE/DELETE_ROWS_EVENT_V1 of a table the rollback writes no rows of (passed over, as the
    reference passes them over by their table id), or of a table all of whose undone keys are in the
    KeySet: the keys of its images read by rows/_crows.pyx `image_keys` with conflict_keys.KeyReader's
    plans, looked up in the KeySet, a row found there and not reported yet is a conflict, spooled as
    ConflictCheck._fast_conflict would (one per row, in the order of the stream); and the XID_EVENT
    that commits the transaction.

  It stops at the first event it cannot take so (any other type: a QUERY's DDL, TRUNCATE, statement;
  a TABLE_MAP not met yet; a table with an undone key the KeySet lacks; images `image_keys` does not
  read), hands an open transaction to the Python tracker as the reference would have it there, and
  the reader yields that event to the reference path. An event is taken whole or not at all.
  Returns the bytes taken (0: none).

The differential test (tests/test_compiled_core.py) runs checked rollbacks both ways.
"""
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (GROUP_COMMIT_ID, LEN_COMMIT_ID, LEN_GTID_FIXED, XA_FLAGS, gtid_xid_reads_agree,
                                         le as _le, u4 as _u4)
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE, FL_STANDALONE

cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char* buf, unsigned int len) nogil

ET = spec.EventType
cdef Py_ssize_t H = spec.LEN_EVENT_HEADER
cdef int FDE = int(ET.format_description_event)
cdef int START_ENCRYPTION = int(ET.start_encryption_event)
cdef int GTID = int(ET.gtid_event)
cdef int ANNOTATE = int(ET.annotate_rows_event)
cdef int TABLE_MAP = int(ET.table_map_event)
cdef int XID = int(ET.xid_event)
cdef int WRITE_V1 = int(ET.write_rows_event_v1)
cdef int UPDATE_V1 = int(ET.update_rows_event_v1)
cdef int DELETE_V1 = int(ET.delete_rows_event_v1)
cdef int STANDALONE = FL_STANDALONE
cdef object OPS = (INSERT, UPDATE, DELETE)
cdef object _rows_offsets = spec.rows_offsets

#: Entries of a KeySet at most (12 bytes each): past 3/4 of them it is dropped.
MAX_SLOTS = 1 << 20
cdef uint32_t EMPTY = 0xFFFFFFFF

#: The GTID and XID layouts checked against the generated parser (False: the sink never takes an event).
LAYOUTS_AGREE = gtid_xid_reads_agree()


cdef inline uint64_t _mix(uint64_t x) noexcept:
    x ^= x >> 33
    x *= <uint64_t>0xff51afd7ed558ccd
    x ^= x >> 33
    x *= <uint64_t>0xc4ceb9fe1a85ec53
    x ^= x >> 33
    return x


cdef inline uint64_t _bits(object v) except? 0:
    """An integer key value as 64 bits (two's complement for a negative one: a column is signed or
    not, so within one table's key the map is one to one)."""
    if v < 0:
        return <uint64_t>(<int64_t>v)
    return <uint64_t>v


cdef class KeySet:
    """(slot, integer value) -> the first key record added with them; `full` once it would pass MAX_SLOTS."""
    cdef uint64_t* vals
    cdef uint32_t* recs         # (record << 8 | slot), EMPTY: a free entry
    cdef Py_ssize_t size, used, limit
    cdef public bint full

    def __cinit__(self, Py_ssize_t limit=MAX_SLOTS):
        self.limit = limit
        self.size = 0
        self.used = 0
        self.full = False
        self.vals = NULL
        self.recs = NULL
        self._alloc(1 << 12)

    def __dealloc__(self):
        free(self.vals)
        free(self.recs)

    cdef int _alloc(self, Py_ssize_t size) except -1:
        cdef Py_ssize_t i
        self.vals = <uint64_t*>malloc(size * sizeof(uint64_t))
        self.recs = <uint32_t*>malloc(size * sizeof(uint32_t))
        if self.vals == NULL or self.recs == NULL:
            raise MemoryError()
        for i in range(size):
            self.recs[i] = EMPTY
        self.size = size
        return 0

    cdef void _drop(self) noexcept:
        free(self.vals)
        free(self.recs)
        self.vals = NULL
        self.recs = NULL
        self.size = self.used = 0
        self.full = True

    cdef int _grow(self) except -1:
        cdef uint64_t* vals = self.vals
        cdef uint32_t* recs = self.recs
        cdef Py_ssize_t size = self.size, i
        if size * 2 > self.limit:
            free(vals)
            free(recs)
            self.vals = NULL
            self.recs = NULL
            self.size = self.used = 0
            self.full = True
            return 0
        self._alloc(size * 2)
        self.used = 0
        for i in range(size):
            if recs[i] != EMPTY:
                self._put(recs[i] & 0xFF, vals[i], recs[i] >> 8)
        free(vals)
        free(recs)
        return 0

    cdef inline Py_ssize_t _where(self, uint32_t slot, uint64_t v) noexcept:
        """The entry of (slot, v), or the free entry where it goes."""
        cdef uint64_t mask = self.size - 1
        cdef Py_ssize_t i = _mix(v * <uint64_t>0x9e3779b97f4a7c15 + slot) & mask
        cdef uint32_t r
        while True:
            r = self.recs[i]
            if r == EMPTY or (self.vals[i] == v and (r & 0xFF) == slot):
                return i
            i = (i + 1) & mask

    cdef inline void _put(self, uint32_t slot, uint64_t v, uint32_t rec) noexcept:
        cdef Py_ssize_t i = self._where(slot, v)
        if self.recs[i] == EMPTY:
            self.vals[i] = v
            self.recs[i] = (rec << 8) | slot
            self.used += 1

    def add(self, int slot, list found, Py_ssize_t first):
        """The keys of conflict_keys.KeyReader.keys' list (one integer column each), record numbers from
        `first` on; a key already in keeps its first record. False once full."""
        cdef Py_ssize_t k
        if self.full:
            return False
        if not 0 <= slot < 256 or first + len(found) >= (1 << 24):
            self._drop()
            return False
        for k in range(len(found)):
            if (self.used + 1) * 4 > self.size * 3:
                self._grow()
                if self.full:
                    return False
            self._put(slot, _bits(found[k][2][0]), <uint32_t>(first + k))
        return True

    cdef inline long long find(self, uint32_t slot, uint64_t v) noexcept:
        cdef Py_ssize_t i
        if self.full:
            return -1
        i = self._where(slot, v)
        return -1 if self.recs[i] == EMPTY else <long long>(self.recs[i] >> 8)

    def get(self, int slot, v):
        """The first record of (slot, v), or -1."""
        return self.find(slot, _bits(v))


cdef class Sink:
    cdef object check, tracker, decoder, tables, quick, image_keys, add_found, dumps, schema, pickle_protocol
    cdef public bint armed
    cdef public dict maps           # TABLE_MAP body bytes -> (table, generation, collation, slot: -1 untouched)
    cdef dict plans                 # (table id, code, n, bitmaps) -> (table, KeyReader plan)
    cdef dict mapped                # table id -> (table, slot) of the TABLE_MAPs taken
    cdef KeySet keys
    cdef object fde
    cdef bint usable
    cdef int len_post_header_xid, len_post_header_rows[3]
    cdef bint own
    cdef str file
    cdef Py_ssize_t start_pos
    cdef uint32_t first_ts, server_id, domain
    cdef uint64_t seq_no
    cdef long long found

    def __init__(self, check, KeySet keys):
        self.check = check
        self.tracker = check._tracker
        self.decoder = check.decoder
        self.tables = check.decoder.tables
        self.schema = check.decoder.schema_source
        self.quick = check.quick
        self.image_keys = check.quick.crows.image_keys
        self.add_found = check.found.add
        import pickle
        self.dumps = pickle.dumps
        self.pickle_protocol = pickle.HIGHEST_PROTOCOL
        self.keys = keys
        self.maps = {}
        self.plans = {}
        self.mapped = {}
        self.armed = False
        self.own = False
        self.fde = None
        self.usable = False

    def forget(self):
        """What the sink learnt of tables (a statement the reference replayed may change them)."""
        self.maps.clear()
        self.plans.clear()
        self.mapped.clear()

    cdef _set_fde(self, fde):
        self.fde = fde
        self.forget()
        self.usable = LAYOUTS_AGREE and fde.len_common_header == H and fde.len_checksum in (0, 4)
        self.len_post_header_xid = fde.post_header_len(XID)
        self.len_post_header_rows[0] = fde.post_header_len(WRITE_V1)
        self.len_post_header_rows[1] = fde.post_header_len(UPDATE_V1)
        self.len_post_header_rows[2] = fde.post_header_len(DELETE_V1)

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole events of buf from off (file position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, len_body, at
        cdef const unsigned char* e
        cdef const unsigned char* body
        cdef uint32_t len_event
        cdef int code, len_checksum, flags2, r
        cdef Py_ssize_t min_len
        if not self.armed:
            return 0
        if fde is not self.fde:
            self._set_fde(fde)
        if not self.usable:
            return 0
        len_checksum = fde.len_checksum
        min_len = H + len_checksum
        self.found = 0
        try:
            while n - off >= H:
                e = p + off
                code = e[4]
                len_event = _u4(e + 9)
                if code == FDE or code == START_ENCRYPTION or len_event < <uint32_t>min_len \
                        or <Py_ssize_t>len_event > n - off:
                    break
                if verify and len_checksum == 4 and <uint32_t>crc32(0, e, len_event - 4) != _u4(e + len_event - 4):
                    break
                body = e + H
                len_body = len_event - H - len_checksum
                if not self.own:
                    if code != GTID or len_body < LEN_GTID_FIXED:
                        break
                    flags2 = body[12]
                    if flags2 & (STANDALONE | XA_FLAGS):
                        break
                    at = LEN_GTID_FIXED + (LEN_COMMIT_ID if flags2 & GROUP_COMMIT_ID else 0)
                    if len_body < at or (len_body > at and body[at] != 0):
                        break
                    self.own = True
                    self.file = path
                    self.start_pos = pos + (off - start)
                    self.first_ts = _u4(e)
                    self.server_id = _u4(e + 5)
                    self.seq_no = _le(body, 8)
                    self.domain = _u4(body + 8)
                elif code == ANNOTATE:
                    pass
                elif code == TABLE_MAP:
                    if not self._table_map(PyBytes_FromStringAndSize(<const char*>body, len_body)):
                        break
                elif code == WRITE_V1 or code == UPDATE_V1 or code == DELETE_V1:
                    r = self._rows(code, PyBytes_FromStringAndSize(<const char*>body, len_body),
                                   pos + (off - start), path)
                    if r < 0:
                        break
                elif code == XID:
                    if len_body != self.len_post_header_xid + 8:
                        break
                    self.own = False
                else:
                    break
                off += len_event
        finally:
            if self.own:
                self._hand_over()
            if self.found:
                self.check.count += self.found
        return off - start

    cdef bint _table_map(self, bytes body) except -1:
        """A TABLE_MAP the check met before under this schema: mapped again in its decoder."""
        got = self.maps.get(body)
        if got is None:
            return False
        table, generation, collation, slot = got
        schema = self.schema
        if schema is not None and (getattr(schema, "generation", None) != generation
                                   or getattr(schema, "server_collation", None) != collation):
            return False
        self.tables[table.table_id] = table
        self.mapped[table.table_id] = (table, slot)
        return True

    cdef int _rows(self, int code, bytes body, Py_ssize_t at, str path) except -2:
        """A rows event checked (0), or -1 where the reference path must read it."""
        cdef int op = code - WRITE_V1, k, slot, step
        cdef long long rec
        cdef uint64_t v
        cdef bint update = code == UPDATE_V1
        cdef char* reported
        cdef Py_ssize_t n_reported, i, count
        try:
            o = _rows_offsets(code, self.len_post_header_rows[op], body)
        except Exception:
            return -1
        table = self.tables.get(o.table_id)
        got = self.mapped.get(o.table_id)
        if table is None or got is None or got[0] is not table:
            return -1
        slot = got[1]
        if slot < 0:
            return 0                    # a table the rollback writes no rows of: passed over
        if self.keys.full:
            return -1
        n = o.num_columns
        before = body[o.ofs_columns_before_image:o.ofs_columns_before_image + o.len_columns_bitmap]
        after = body[o.ofs_columns_after_image:o.ofs_columns_after_image + o.len_columns_bitmap] if update else None
        key = (o.table_id, code, n, before, after)
        entry = self.plans.get(key)
        if entry is None or entry[0] is not table:
            plan = self.quick._plan(table, OPS[op], n, before, after)
            if len(self.plans) > 4096:
                self.plans.clear()
            entry = self.plans[key] = (table, plan)
        plan = entry[1]
        if not plan or len(plan[2]) != 1:
            return -1
        keys = self.image_keys(body[o.ofs_rows:], *plan)
        if keys is None:
            return -1
        count = len(keys)
        if count == 0:
            return 0
        reported_obj = self.check.reported
        reported = PyByteArray_AS_STRING(reported_obj)
        n_reported = PyByteArray_GET_SIZE(reported_obj)
        step = 2 if update else 1
        i = 0
        while i < count:
            v = _bits(keys[i][0])
            rec = self.keys.find(slot, v)
            if rec >= 0 and rec < n_reported and not reported[rec]:
                reported[rec] = 1
                self._conflict(rec, slot, keys[i][0], op, at, path)
            if update and keys[i + 1] != keys[i]:
                v = _bits(keys[i + 1][0])
                rec = self.keys.find(slot, v)
                if rec >= 0 and rec < n_reported and not reported[rec]:
                    reported[rec] = 1
                    self._conflict(rec, slot, keys[i + 1][0], op, at, path)
            i += step
        return 0

    cdef _conflict(self, long long rec, int slot, value, int op, Py_ssize_t at, str path):
        gtid = f"{self.domain}-{self.server_id}-{self.seq_no}"
        self.add_found(self.dumps(("F", rec, slot, value, OPS[op], gtid, self.file, self.start_pos,
                                   self.first_ts, path, at), self.pickle_protocol))
        self.found += 1

    cdef _hand_over(self):
        """The open transaction to the Python tracker, as the reference would have it here."""
        self.own = False
        self.armed = False
        gtid = f"{self.domain}-{self.server_id}-{self.seq_no}"
        self.tracker.mode = "begin"
        self.tracker.gtid = gtid
        self.check._adopt(gtid, self.file, self.start_pos, self.first_ts)
