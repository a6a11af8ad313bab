# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled part of a rollback's conflict check (output/rollback/check.py, the pure-Python reference):

* `KeySet`: the undone keys of the tables whose key is one integer column, exactly: (table slot, value)
  -> the first undone change of that row (its transaction's number and its kind) and whether a conflict
  was reported for it, in a C hash table of at most MAX_SLOTS entries (12 bytes each, and 5 bytes per
  key). ConflictCheck puts such keys there instead of its spool and index (`CompiledKeys.undone`), and looks
  there first; once `full` it takes no more keys (those in it stay), and a table with an undone key it
  lacks is `slow`: its later rows go the Python way, which looks in both;
* `Sink(check)`: called by the reader (binlog.reader.BinlogReader, `sink=`) with the window's bytes
  before it walks them, once the check reads past the rollback's window (`armed` by
  ConflictCheck.watch between transactions; `resume` inside one a BEGIN or GTID opened). It takes whole events,
  with the checks of framing.walk_events (size, CRC32), as long as each is one the reference would read
  as it does:

  - a MariaDB GTID_EVENT that opens a transaction (not FL_STANDALONE, no XA, no extra flags);
  - then ANNOTATE_ROWS_EVENTs; TABLE_MAP_EVENTs whose body bytes the check met before under the same
    schema (CompiledKeys.learn, from the reference path), mapped again in the check's decoder;
    WRITE/UPDATE/DELETE_ROWS_EVENT_V1 of a table the rollback writes no rows of (passed over, as the
    reference passes them over by their table id), or of a table all of whose undone keys are in the
    KeySet: the keys of its images read by rows/_cdecoder.pyx `image_keys` with output/rollback/keys.py KeyReader's
    plans (the rows offsets are spec.rows_offsets', kept per shape), looked up in the KeySet, a row
    found there and not reported yet is a conflict, spooled as CompiledKeys.conflict spools one
    (a batch per call, in the order of the stream); and the XID_EVENT that commits the transaction.

  It stops at the first event it cannot take so (any other type: a QUERY's DDL, TRUNCATE, statement;
  a TABLE_MAP not met yet; a table with an undone key the KeySet lacks; images `image_keys` does not
  read), hands an open transaction to the Python tracker as the reference would have it there, and
  the reader yields that event to the reference path. An event is taken whole or not at all.
  Returns the bytes taken (0: none).

  With `window(lo, hi)` (ConflictCheck.watch, when the time bounds are the only filters: their
  FilterOptions.kept_seconds) it also runs while the filters do, armed only between transactions, and
  takes only whole transactions whose GTID_EVENT's timestamp is outside [lo, hi), those the filters
  exclude, which then no one else sees: one it cannot take to its XID_EVENT within the window (any event
  above, or the reader's window ends) is not taken at all, what the loop did of it undone (the tables it
  mapped, the keys it marked reported, the conflicts it found), and goes to the filters from its GTID on.

The differential test (tests/test_compiled_core.py) runs checked rollbacks both ways.
"""
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, GTID_EVENT, LEN_EVENT_HEADER,
                                         OFS_GTID_DOMAIN_ID, OFS_GTID_SEQ_NO, OFS_SERVER_ID, OFS_TIMESTAMP,
                                         TABLE_MAP_EVENT, UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1, XID_EVENT, Fde,
                                         event_at, gtid_xid_reads_agree, le as _le, opens_plain_transaction,
                                         read_fde, u4 as _u4)
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE


#: The common header's length, as a Py_ssize_t in the size arithmetic (the spec's constants: binlog/_cbytes.pxd).
cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef object OPS = (INSERT, UPDATE, DELETE)
cdef object _rows_offsets = spec.rows_offsets

#: The GTID and XID layouts checked against the generated parser (False: the sink never takes an event).
LAYOUTS_AGREE = gtid_xid_reads_agree()


include "_ckeyset.pxi"


cdef class Sink:
    cdef object check, tracker, decoder, tables, quick, image_keys, add_found, dumps, schema, pickle_protocol
    cdef public bint armed
    cdef public dict maps           # TABLE_MAP body bytes -> (table, generation, collation, slot: -1 untouched)
    cdef dict plans                 # (table id, code, n, bitmaps) -> (table, KeyReader plan)
    cdef public dict mapped         # table id -> (table, slot) of the TABLE_MAPs taken or learnt
    cdef list batch                 # the conflicts found by this call
    cdef list shapes                # per rows event type: the offsets of the last one (_rows)
    cdef list last_plans            # per rows event type: (table, n, bitmaps, plan) of the last one
    cdef object last_map_body, last_map     # the last TABLE_MAP taken: its body, its entry of `maps`
    cdef KeySet keys
    cdef object fde
    cdef Fde lens                   # what the loop takes from self.fde (read_fde)
    cdef bint own, adopted
    cdef str file
    cdef object gtid                # the open transaction's GTID text or None (once `gtid_made`, see _gtid)
    cdef bint gtid_made
    cdef Py_ssize_t start_pos
    cdef uint32_t first_ts, domain, server_id
    cdef uint64_t seq_no
    cdef public bint whole          # inside the window: whole transactions the filters do not keep, or nothing
    cdef public long long lo, hi    # the kept transactions' first timestamps (FilterOptions.kept_seconds)
    cdef list undo                  # what taking the open transaction changed: (table id, old table, old pair)
    cdef list undo_reported         # ... and the KeySet keys it marked reported
    cdef Py_ssize_t refused_pos     # the position of the last transaction not taken whole (in refused_path)
    cdef object refused_path

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
        self.shapes = [None, None, None]
        self.last_plans = [None, None, None]
        self.last_map_body = self.last_map = None
        self.armed = False
        self.own = self.adopted = False
        self.batch = []
        self.fde = None
        self.lens.usable = False
        self.whole = False
        self.lo, self.hi = -(1 << 62), 1 << 62
        self.undo = []
        self.undo_reported = []
        self.refused_pos = -1
        self.refused_path = None

    def window(self, lo, hi):
        """Take, while the filters run, only whole transactions whose GTID event's timestamp is outside
        [lo, hi) (None: no bound), those the time filters keep not (`armed` between transactions)."""
        self.whole = True
        self.lo = -(1 << 62) if lo is None else lo
        self.hi = (1 << 62) if hi is None else hi

    def resume(self, tx):
        """Take the events of the transaction the Python path has open (`tx`: its conflicts.Tx) too."""
        self.own = self.adopted = self.armed = self.gtid_made = True
        self.gtid, self.file, self.start_pos, self.first_ts = tx

    def forget(self):
        """What the sink learnt of tables (a statement the reference replayed may change them)."""
        self.maps.clear()
        self.plans.clear()
        self.mapped.clear()
        self.shapes = [None, None, None]
        self.last_plans = [None, None, None]
        self.last_map_body = self.last_map = None

    cdef _set_fde(self, fde):
        self.fde = fde
        self.forget()
        read_fde(fde, LAYOUTS_AGREE, &self.lens)

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole events of buf from off (file position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, len_body, at
        cdef const unsigned char* e
        cdef const unsigned char* body
        cdef uint32_t len_event
        cdef int code, len_checksum, r
        cdef Py_ssize_t tx_off = -1, batch_at = 0
        cdef uint32_t ts
        if not self.armed:
            return 0
        if fde is not self.fde:
            self._set_fde(fde)
        if not self.lens.usable:
            return 0
        if self.whole and pos == self.refused_pos and path is self.refused_path:
            return 0                    # (the transaction here was not taken whole a moment ago)
        len_checksum = self.lens.len_checksum
        try:
            while event_at(p, off, n, len_checksum, verify, &code, &len_event):
                e = p + off
                body = e + H
                len_body = len_event - H - len_checksum
                if not self.own:
                    if code != GTID_EVENT or not opens_plain_transaction(body, len_body):
                        break
                    if self.whole:
                        ts = _u4(e + OFS_TIMESTAMP)
                        if self.lo <= ts < self.hi:
                            break           # the filters keep it: theirs
                        tx_off, batch_at = off, len(self.batch)
                    self.own = True
                    self.file = path
                    self.start_pos = pos + (off - start)
                    self.first_ts = _u4(e + OFS_TIMESTAMP)
                    self.gtid_made = False
                    self.domain = _u4(body + OFS_GTID_DOMAIN_ID)
                    self.server_id = _u4(e + OFS_SERVER_ID)
                    self.seq_no = _le(body + OFS_GTID_SEQ_NO, 8)
                elif code == ANNOTATE_ROWS_EVENT:
                    pass
                elif code == TABLE_MAP_EVENT:
                    if not self._table_map(body, len_body):
                        break
                elif code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
                    r = self._rows(code, body, len_body, pos + (off - start), path)
                    if r < 0:
                        break
                elif code == XID_EVENT:
                    if len_body != self.lens.xid + 8:
                        break
                    self.own = False
                    if self.whole:
                        tx_off = -1
                        self.undo.clear()
                        self.undo_reported.clear()
                    if self.adopted:        # it ends the transaction the Python tracker has open
                        self.adopted = False
                        self.tracker.mode = None
                else:
                    break
                off += len_event
        finally:
            if self.own:
                if self.whole:          # a transaction taken whole or not at all: not, from its GTID on
                    self._undo(batch_at)
                    off = tx_off
                    self.refused_pos, self.refused_path = pos + (off - start), path
                else:
                    self._hand_over()
            if self.batch:
                self.add_found(self.dumps(("B", self.batch), self.pickle_protocol))
                self.check.count += len(self.batch)
                self.batch = []
        return off - start

    cdef _undo(self, Py_ssize_t batch_at):
        """What taking the open transaction (its first `batch_at` conflicts kept) changed, undone."""
        cdef KeySet keys = self.keys
        cdef Py_ssize_t k
        self.own = False
        del self.batch[batch_at:]
        for k in self.undo_reported:
            keys.reported[k] = 0
        for table_id, table, pair in reversed(self.undo):
            if table is None:
                self.tables.pop(table_id, None)
            else:
                self.tables[table_id] = table
            if pair is None:
                self.mapped.pop(table_id, None)
            else:
                self.mapped[table_id] = pair
        self.undo.clear()
        self.undo_reported.clear()

    cdef bint _table_map(self, const unsigned char* p, Py_ssize_t len_body) except -1:
        """A TABLE_MAP the check met before under this schema: mapped again in its decoder."""
        last = self.last_map_body
        if last is not None and PyBytes_GET_SIZE(last) == len_body and \
                memcmp(PyBytes_AS_STRING(last), p, len_body) == 0:
            got = self.last_map
        else:
            body = PyBytes_FromStringAndSize(<const char*>p, len_body)
            got = self.maps.get(body)
            if got is None:
                return False
            self.last_map_body, self.last_map = body, got
        table, generation, collation, pair = got
        schema = self.schema
        if schema is not None and (schema.generation != generation
                                   or getattr(schema, "server_collation", None) != collation):
            return False
        table_id = table.table_id
        if self.whole:
            self.undo.append((table_id, self.tables.get(table_id), self.mapped.get(table_id)))
        self.tables[table_id] = table
        self.mapped[table_id] = pair
        return True

    cdef int _rows(self, int code, const unsigned char* body, Py_ssize_t len_body, Py_ssize_t at,
                   str path) except -2:
        """A rows event checked (0), or -1 where the reference path must read it."""
        cdef int op = code - WRITE_ROWS_EVENT_V1, slot, step
        cdef bint update = code == UPDATE_ROWS_EVENT_V1
        cdef Py_ssize_t i, count, ofs_flags, ofs_rows, len_bitmap, ofs_before, ofs_after
        cdef uint64_t table_id
        # the offsets of spec.rows_offsets, kept for the next event of the same type whose bytes from its
        # rows flags to its bitmaps (extra data, column count: all the offsets depend on) are the same
        shape = self.shapes[op]
        if shape is None or len_body < <Py_ssize_t>shape[6] or \
                memcmp(body + <Py_ssize_t>shape[1], PyBytes_AS_STRING(shape[0]), PyBytes_GET_SIZE(shape[0])) != 0:
            whole = PyBytes_FromStringAndSize(<const char*>body, len_body)
            try:
                o = _rows_offsets(code, self.lens.rows[op], whole)
            except Exception:
                return -1
            shape = (whole[o.ofs_rows_flags:o.ofs_columns_before_image], o.ofs_rows_flags, o.num_columns,
                     o.len_columns_bitmap, o.ofs_columns_before_image, o.ofs_columns_after_image, o.ofs_rows)
            if not 0 < o.ofs_rows_flags <= 8 or _le(body, o.ofs_rows_flags) != o.table_id:
                return -1           # (the table id is read as the spec's offsets say, or not here)
            self.shapes[op] = shape
        ofs_flags = shape[1]
        table_id = _le(body, ofs_flags)
        table = self.tables.get(table_id)
        got = self.mapped.get(table_id)
        if table is None or got is None or got[0] is not table:
            return -1
        slot = got[1]
        if slot < 0:
            return 0                    # a table the rollback writes no rows of: passed over
        n = shape[2]
        len_bitmap = shape[3]
        ofs_before = shape[4]
        ofs_rows = shape[6]
        ofs_after = shape[5] if update else 0
        last = self.last_plans[op]
        if last is not None and last[0] is table and last[1] == n and PyBytes_GET_SIZE(last[2]) == len_bitmap \
                and memcmp(PyBytes_AS_STRING(last[2]), body + ofs_before, len_bitmap) == 0 \
                and (not update or memcmp(PyBytes_AS_STRING(last[3]), body + ofs_after, len_bitmap) == 0):
            plan = last[4]
        else:
            before = PyBytes_FromStringAndSize(<const char*>body + ofs_before, len_bitmap)
            after = PyBytes_FromStringAndSize(<const char*>body + ofs_after, len_bitmap) if update else None
            key = (table_id, code, n, before, after)
            entry = self.plans.get(key)
            if entry is None or entry[0] is not table:
                plan = self.quick._plan(table, OPS[op], n, before, after)
                if len(self.plans) > 4096:
                    self.plans.clear()
                entry = self.plans[key] = (table, plan)
            plan = entry[1]
            self.last_plans[op] = (table, n, before, after, plan)
        if not plan or len(plan[2]) != 1:
            return -1
        keys = self.image_keys(PyBytes_FromStringAndSize(<const char*>body + ofs_rows, len_body - ofs_rows), *plan)
        if keys is None:
            return -1
        count = len(keys)
        if count == 0:
            return 0
        step = 2 if update else 1
        i = 0
        while i < count:
            self._look(slot, keys[i][0], op, at, path)
            if update and keys[i + 1] != keys[i]:
                self._look(slot, keys[i + 1][0], op, at, path)
            i += step
        return 0

    cdef int _look(self, int slot, value, int op, Py_ssize_t at, str path) except -1:
        cdef KeySet keys = self.keys
        cdef long long k = keys.find(slot, _bits(value))
        if k < 0 or keys.reported[k]:
            return 0
        keys.reported[k] = 1
        if self.whole:
            self.undo_reported.append(k)
        self.batch.append(("F", keys.origin[k] >> 2, keys.origin[k] & 3, slot, value, OPS[op], self._gtid(),
                           self.file, self.start_pos, self.first_ts, path, at))
        return 0

    cdef inline object _gtid(self):
        """The open transaction's GTID as Transactions.gtid has it (spec: plain_fields' domain-server-seq)."""
        if not self.gtid_made:
            self.gtid = f"{self.domain}-{self.server_id}-{self.seq_no}"
            self.gtid_made = True
        return self.gtid

    cdef _hand_over(self):
        """The open transaction to the Python tracker, as the reference would have it here."""
        self.own = self.adopted = self.armed = False
        self.tracker.mode = "begin"
        gtid = self._gtid()
        self.tracker.gtid = gtid
        self.check._adopt(gtid, self.file, self.start_pos, self.first_ts)
