# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of stream/skipping.py: the loop that skips, straight from the reader's window, the
transactions the filters drop whole, with no Event object and no body parse.

`Skipper(gate, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names, keeps_gtid)` is called by the
reader (binlog.reader.BinlogReader, `sink=`; keeps_gtid: stream.skipping's GTID rule) with the window's bytes
before it walks them, when the filters are
time bounds, server ids, GTID sets and positions, schema and table filters alone (FilterOptions.skippable). It runs while the gate says the stream is between transactions, or
inside one it began to skip, and takes whole events, with the checks of framing.walk_events (size, CRC32):

* a MariaDB GTID_EVENT that opens a plain transaction (not FL_STANDALONE, no XA, no extra flags) whose
  timestamp is outside [lo, hi), whose server id is not in `server_ids` (None: any) or is in
  `exclude_server_ids`, or whose GTID `keeps_gtid` drops (FilterOptions.keeps_transaction decides by them): the
  transaction is
  skipped, the gate told (SkipGate.skip_open), and then its ANNOTATE_ROWS_EVENTs, TABLE_MAP_EVENTs (each
  parsed once, by `names`: the filters' table-name watcher learns its names in `tables` as it would),
  WRITE/UPDATE/DELETE_ROWS_EVENT_V1 (spec.rows_offsets reads their layout) and the XID_EVENT that
  ends it (SkipGate.skip_done); the gate drops what the loop hands back of it;
* with `keeps_table` (schema or table filters), a transaction of such events inside the bounds whose
  TABLE_MAPs all name tables `keeps_table` drops, and whose rows events are all of those tables: the
  filters would drop all of it, framing included. It is taken only whole, to its XID_EVENT; its table ids
  go into the filters' `gate.excluded_tables` as the filters put them.

It stops at the first event it cannot take so (any other type, a body the spec would not read, a
transaction that keeps something), and the reader yields that event to the filters. Where a transaction of
the second kind runs past the reader's window, it returns minus the bytes it needs from `pos` (the reader
reads them into its window and calls again). An event is taken whole or not at all. Returns the bytes taken.

The pure-Python reference is the reader's events through the filters; the differential test
(tests/test_compiled_core.py) runs both over the corpus, the fixtures and fuzz cases.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_SIZE
from libc.string cimport memcmp
from libc.stdint cimport uint32_t

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, GTID_EVENT, LEN_EVENT_HEADER,
                                         OFS_LEN_EVENT, OFS_SERVER_ID, OFS_TIMESTAMP, TABLE_MAP_EVENT, UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1,
                                         XID_EVENT, Fde, event_at, gtid_kept, gtid_xid_reads_agree,
                                         opens_plain_transaction, read_fde, u4 as _u4)

cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef object _rows_offsets = spec.rows_offsets
#: The GTID and XID layouts checked against the generated parser (False: the loop never takes an event).
LAYOUTS_AGREE = gtid_xid_reads_agree()
#: At most this many bytes of one transaction are asked into the reader's window.
cdef Py_ssize_t MAX_WHOLE = 64 << 20
#: The TABLE_MAP bodies met last, compared byte for byte before the dict is asked (a workload's transactions
#: map the same few tables over and over: no bytes object, no hash for them).
DEF RECENT = 8


cdef class Skipper:
    def __init__(self, gate, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names, keeps_gtid=None):
        self.gate = gate
        self.keeps_gtid = keeps_gtid
        self.server_ids = server_ids
        self.exclude_server_ids = exclude_server_ids
        self.lo = -(1 << 62) if lo is None else lo
        self.hi = (1 << 62) if hi is None else hi
        self.keeps_table = keeps_table
        self.tables = tables
        self.names = names
        self.fde = None
        self.lens.usable = False
        self.maps = {}
        self.tx_maps = []
        self.n_tx = 0
        self.excluded = gate.excluded_tables
        self._forget_layouts()

    cdef int _forget_layouts(self) except -1:
        cdef int c, b
        for c in range(3):
            self.shape_at[c] = -2
            for b in range(256):
                self.shape_len_id[c][b] = -1
        self.recent_bodies, self.recent_got, self.recent_next = [], [], 0
        return 0

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Skip whole events of buf from off (file position pos); the bytes taken, or minus the bytes
        wanted from pos in the window."""
        return self.skip(buf, off, pos, fde, verify, path)

    cdef Py_ssize_t skip(self, bytes buf, Py_ssize_t off, Py_ssize_t pos, object fde, bint verify, str path) except? -1:
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, end, i
        cdef const unsigned char* e
        cdef int code, len_checksum
        cdef uint32_t len_event, ts
        gate = self.gate
        cdef bint dropping = gate.dropping
        if not dropping and not gate.between:
            return 0
        if fde is not self.fde:
            self.fde = fde
            self.maps.clear()
            self._forget_layouts()
            read_fde(fde, LAYOUTS_AGREE, &self.lens)
        if not self.lens.usable:
            return 0
        len_checksum = self.lens.len_checksum
        while event_at(p, off, n, len_checksum, verify, &code, &len_event):
            e = p + off
            if dropping:
                if not self._skipped(code, e, len_event, len_checksum, False):
                    break
                off += len_event
                if code == XID_EVENT:
                    dropping = False
                    gate.skip_done()
                continue
            if code != GTID_EVENT or not opens_plain_transaction(e + H, len_event - H - len_checksum):
                break
            ts = _u4(e + OFS_TIMESTAMP)
            if ts < self.lo or ts >= self.hi or not self._server_kept(_u4(e + OFS_SERVER_ID)) or \
                    self.keeps_gtid is not None and not gtid_kept(self.keeps_gtid, e, len_event, len_checksum, -1):
                dropping = True
                gate.skip_open()
                off += len_event
                continue
            if self.keeps_table is None:
                break
            end = self._dropped_whole(p, off, n, len_checksum, verify)
            if end == 0:
                break
            if end < 0:
                return end if off == start else off - start
            for i in range(self.n_tx):
                self.excluded.add((<tuple>self.tx_maps[i])[0])
            off = end
        return off - start

    cdef bint _server_kept(self, uint32_t server_id) except -1:
        """Whether the server id filters keep a transaction of this server id (FilterOptions.keeps_transaction)."""
        if self.server_ids is None and not self.exclude_server_ids:
            return True
        sid = server_id
        return (self.server_ids is None or sid in self.server_ids) and sid not in self.exclude_server_ids

    cdef Py_ssize_t _dropped_whole(self, const unsigned char* p, Py_ssize_t at, Py_ssize_t n, int len_checksum,
                                   bint verify) except? -1:
        """The offset after the transaction whose GTID_EVENT is at `at`, when the filters drop all of it
        (its names learnt); 0 when they do not or the loop cannot tell; minus the bytes it needs from `at`
        when it runs past the window."""
        cdef int code
        cdef uint32_t len_event
        cdef Py_ssize_t off = at, i
        self.n_tx = 0
        if not event_at(p, off, n, len_checksum, verify, &code, &len_event):
            return 0
        off += len_event
        while True:
            if not event_at(p, off, n, len_checksum, verify, &code, &len_event):
                if n - off >= H and <Py_ssize_t>_u4(p + off + OFS_LEN_EVENT) <= n - off:
                    return 0        # a whole event the loop does not take (its CRC32, its size)
                want = 2 * (n - at) + (<Py_ssize_t>_u4(p + off + OFS_LEN_EVENT) if n - off >= H else 0)
                return -want if want <= MAX_WHOLE and n - at < want else 0
            if code == XID_EVENT:
                if self.n_tx == 0 or not self._skipped(code, p + off, len_event, len_checksum, True):
                    return 0
                if self.tables is not None:
                    for i in range(self.n_tx):
                        self.tables.add((<tuple>self.tx_maps[i])[4])
                return off + len_event
            if not self._skipped(code, p + off, len_event, len_checksum, True):
                return 0
            off += len_event

    cdef bint _skipped(self, int code, const unsigned char* e, uint32_t len_event, int len_checksum,
                       bint by_table) except -1:
        """Whether the loop skips this event of a transaction the filters drop (`by_table`: for its tables;
        else for its time, its TABLE_MAPs' names learnt at once)."""
        cdef Py_ssize_t len_body = len_event - H - len_checksum, i
        if code == ANNOTATE_ROWS_EVENT:
            return True
        if code == XID_EVENT:
            return len_body == self.lens.xid + 8
        if code == TABLE_MAP_EVENT:
            got = self._recent(e + H, len_body)
            if got is False:
                got = self._mapped(e, len_event, len_body)
            if got is None:
                return False
            if by_table:
                if not got[3]:
                    return False
                if self.n_tx < PyList_GET_SIZE(self.tx_maps):
                    self.tx_maps[self.n_tx] = got
                else:
                    self.tx_maps.append(got)
                self.n_tx += 1
            elif self.tables is not None:
                self.tables.add((<tuple>got)[4])
            return True
        if code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
            table_id = self._table_id(code, e + H, len_body)
            if table_id is None:
                return False
            if by_table:
                for i in range(self.n_tx):
                    if (<tuple>self.tx_maps[i])[0] == table_id:
                        return True
                return table_id in self.excluded
            return True
        return False

    cdef object _recent(self, const unsigned char* body, Py_ssize_t len_body):
        """The maps' entry of a TABLE_MAP body met among the last RECENT, else False."""
        cdef Py_ssize_t i
        cdef bytes b
        for i in range(PyList_GET_SIZE(self.recent_bodies)):
            b = <bytes>self.recent_bodies[i]
            if PyBytes_GET_SIZE(b) == len_body and memcmp(PyBytes_AS_STRING(b), body, len_body) == 0:
                return self.recent_got[i]
        return False

    cdef object _mapped(self, const unsigned char* e, uint32_t len_event, Py_ssize_t len_body):
        """The maps' entry of the TABLE_MAP event at e (its names parsed once per body), kept among the recent
        ones."""
        body = PyBytes_FromStringAndSize(<const char*>e + H, len_body)
        got = self.maps.get(body, False)
        if got is False:
            named = self.names(PyBytes_FromStringAndSize(<const char*>e, len_event), self.fde)
            got = None
            if named is not None:
                dropped = self.keeps_table is not None and not self.keeps_table(named[1], named[2])
                got = (named[0], named[1], named[2], dropped, (named[1], named[2]))
            if len(self.maps) > 4096:
                self.maps.clear()
            self.maps[body] = got
        if PyList_GET_SIZE(self.recent_bodies) < RECENT:
            self.recent_bodies.append(body)
            self.recent_got.append(got)
        else:
            self.recent_bodies[self.recent_next] = body
            self.recent_got[self.recent_next] = got
            self.recent_next = (self.recent_next + 1) % RECENT
        return got

    cdef object _table_id(self, int code, const unsigned char *body, Py_ssize_t len_body):
        """The table id of a v1 rows event's body, None where spec.rows_offsets does not read it (the layout of
        a body with a one-byte column count kept per count, as rows_offsets keeps it, for this FDE)."""
        cdef int lph = self.lens.rows[code - WRITE_ROWS_EVENT_V1], k = code - WRITE_ROWS_EVENT_V1, len_id
        cdef Py_ssize_t at = self.shape_at[k], i
        cdef unsigned long long table_id = 0
        if at >= 0 and at < len_body:
            len_id = self.shape_len_id[k][body[at]]
            if len_id >= 0 and self.shape_ofs_rows[k][body[at]] <= len_body:
                for i in range(len_id - 1, -1, -1):
                    table_id = table_id << 8 | body[i]
                return table_id
        try:
            o = _rows_offsets(code, lph, PyBytes_FromStringAndSize(<const char*>body, len_body))
        except Exception:
            return None
        if at == -2:
            at = o.ofs_columns_before_image - 1
            self.shape_at[k] = at if o.num_columns < 251 and 0 <= at < len_body and body[at] == o.num_columns else -1
            at = self.shape_at[k]
        if at >= 0 and o.ofs_columns_before_image - 1 == at and body[at] == o.num_columns and \
                int.from_bytes(PyBytes_FromStringAndSize(<const char*>body, o.ofs_rows_flags), "little") == o.table_id:
            self.shape_len_id[k][body[at]] = o.ofs_rows_flags
            self.shape_ofs_rows[k][body[at]] = o.ofs_rows
        return o.table_id
