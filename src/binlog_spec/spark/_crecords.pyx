# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled loop of the Spark rows mode (spark/records.py `read_split` with VARIANT images): the common
MariaDB transaction taken straight from the reader's window, its row changes put into the columns of the
`ChangeBatcher`, with no Event object, no generator and no RowChange per row.

`Sink(batcher, decoder, schema, tail)` is called by the reader (binlog.reader.BinlogReader, `sink=`, through
stream.planning.resync.iter_resuming_events and stream.planning.splits.iter_split_events) with the window's bytes before it walks
them. It takes whole transactions only, each with the checks of framing.walk_events (size, CRC32), and only
when every event of it is one that the reference path (records._row_changes) would read so:

* a MariaDB GTID_EVENT that opens a transaction (not FL_STANDALONE, no XA, no extra flags), when the
  transaction tracker of `_row_changes` is between transactions (`tx.mode is None`);
* then ANNOTATE_ROWS_EVENTs; TABLE_MAP_EVENTs whose body bytes the reference path completed before under the
  same schema (`learn`: the TableDef observe_schema made for them); WRITE/UPDATE/DELETE_ROWS_EVENT_V1 of a
  mapped table whose every image the compiled image decoder (rows/_cdecoder.pyx ImageDecoder, the plans of
  rows/image_plan.py) decodes; and the XID_EVENT that commits it, all of them whole in the window;
* the transaction ends before `limit` (a split's range end: the events around a split's end, where
  resync checks the boundary, are the reference's), and past the piece's prefix (the FDE put in front).

It stops at the first transaction it cannot take so, and takes nothing of it: the reader yields that
transaction's events to the reference path, which gives its rows, faults and errors. Rows fill the batcher's
columns as `ChangeBatcher.add_changes` would; a full batch goes to `ready` (read_split yields it), and the
sink takes nothing more until `ready` is emptied. Returns the bytes taken (0: none).

The pure-Python reference is records._row_changes over the reader's events; the differential test
(tests/differential.py, tests/test_compiled_core.py) reads every corpus and fixture file and fuzz case both
ways, whole and in pieces, and requires the same batches and errors.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint32_t, uint64_t

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, GTID_EVENT, LEN_EVENT_HEADER,
                                         OFS_END_LOG_POS, OFS_GTID_DOMAIN_ID, OFS_GTID_SEQ_NO, OFS_LEN_EVENT,
                                         OFS_SERVER_ID, OFS_TIMESTAMP, OFS_TYPE_CODE, TABLE_MAP_EVENT,
                                         UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1, XID_EVENT, Fde, event_at,
                                         gtid_xid_reads_agree, le as _le, opens_plain_transaction, read_fde,
                                         u4 as _u4)
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE
from binlog_spec.rows import image_plan
from binlog_spec.rows.walker import check_rows, present_columns


#: The common header's length, as a Py_ssize_t in the size arithmetic (the spec's constants: binlog/_cbytes.pxd).
cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef tuple OPS = (INSERT, UPDATE, DELETE)
cdef object _rows_offsets = spec.rows_offsets

#: The GTID and XID layouts checked against the generated parser (False: the loop never runs).
LAYOUTS_AGREE = gtid_xid_reads_agree()


cdef class Sink:
    cdef public object batcher, decoder, schema, tx
    cdef public list ready
    cdef public object limit            # a real position: transactions must end before it (None: no limit)
    cdef Py_ssize_t vstart, shift       # the piece's last range starts at vstart (assembled stream); real - virtual
    cdef tuple tail
    cdef object fde
    cdef Fde lens                       # what the loop takes from self.fde (read_fde)
    cdef dict maps, plans

    def __init__(self, batcher, decoder, schema, tx, tuple tail):
        self.batcher = batcher
        self.decoder = decoder
        self.schema = schema
        self.tx = tx
        self.tail = tail
        self.ready = []
        self.limit = None
        self.vstart = 0
        self.shift = 0
        self.fde = None
        self.lens.usable = False
        self.maps = {}
        self.plans = {}

    def place(self, Py_ssize_t vstart, Py_ssize_t shift):
        """The reader that calls next reads a piece whose last byte range starts at `vstart` of its stream,
        at file position vstart + shift (stream.planning.splits.iter_split_events)."""
        self.vstart = vstart
        self.shift = shift

    def learn(self, bytes body not None, table):
        """A TABLE_MAP_EVENT's body and the TableDef the reference made of it (observe_schema), under the
        schema and FDE in force now."""
        if table is None:
            return
        if len(self.maps) > 4096:
            self.maps.clear()
        self.maps[body] = (table, self.decoder.mariadb, self.schema.generation, self.schema.server_collation)

    cdef _set_fde(self, fde):
        self.fde = fde
        self.maps.clear()
        self.plans.clear()
        read_fde(fde, LAYOUTS_AGREE, &self.lens)

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole transactions of buf from off (stream position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, at, len_body
        cdef const unsigned char* e
        cdef uint32_t len_event
        cdef int code, len_checksum
        cdef bint done
        if self.ready or self.tx.mode is not None or pos < self.vstart:
            return 0
        if fde is not self.fde:
            self._set_fde(fde)
        if not self.lens.usable:
            return 0
        len_checksum = self.lens.len_checksum
        limit = -1 if self.limit is None else self.limit
        while not self.ready:
            # first pass: the transaction's events whole in the window, framed and checked, of the types taken
            at = off
            done = False
            while event_at(p, at, n, len_checksum, verify, &code, &len_event):
                e = p + at
                len_body = len_event - H - len_checksum
                if at == off:
                    if code != GTID_EVENT or not opens_plain_transaction(e + H, len_body):
                        break
                elif code == XID_EVENT:
                    if len_body != self.lens.xid + 8:
                        break
                    at += len_event
                    done = True
                    break
                elif not (code == ANNOTATE_ROWS_EVENT or code == TABLE_MAP_EVENT or code == WRITE_ROWS_EVENT_V1
                          or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1):
                    break
                at += len_event
            if not done:
                break
            if limit >= 0 and pos + (at - start) + self.shift >= limit:
                break
            if not self._take(p, buf, off, at, pos + (off - start) + self.shift, len_checksum, path):
                break
            off = at
        return off - start

    cdef bint _take(self, const unsigned char* p, bytes buf, Py_ssize_t off, Py_ssize_t stop, Py_ssize_t real,
                    int len_checksum, str path) except -1:
        """The transaction of buf[off:stop] (checked by the first pass; at file position `real`) decoded and
        put into the batcher's columns; False (nothing put) where the reference must read it."""
        cdef const unsigned char* e = p + off
        cdef const unsigned char* body
        cdef uint32_t len_event, server_id = _u4(e + OFS_SERVER_ID)
        cdef Py_ssize_t at = off, len_body, rpos, end, k
        cdef int code, op
        cdef object td, entry, img_b, img_a, row, before, after
        cdef list events = []          # (same columns, befores, afters) of each rows event
        cdef list befores, afters
        cdef dict tables = {}
        decoder = self.decoder
        known = decoder.tables
        mariadb = decoder.mariadb
        schema = self.schema
        gtid = f"{_u4(e + H + OFS_GTID_DOMAIN_ID)}-{server_id}-{_le(e + H + OFS_GTID_SEQ_NO, 8)}"
        xid = None
        while at < stop:
            e = p + at
            code = e[OFS_TYPE_CODE]
            len_event = _u4(e + OFS_LEN_EVENT)
            body = e + H
            len_body = len_event - H - len_checksum
            if code == TABLE_MAP_EVENT:
                got = self.maps.get(PyBytes_FromStringAndSize(<const char*>body, len_body))
                if got is None or got[1] != mariadb or got[2] != schema.generation or got[3] != schema.server_collation:
                    return False
                td = got[0]
                tables[td.table_id] = td
            elif code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
                op = code - WRITE_ROWS_EVENT_V1
                raw = PyBytes_FromStringAndSize(<const char*>body, len_body)
                try:
                    o = _rows_offsets(code, self.lens.rows[op], raw)
                except Exception:
                    return False
                td = tables.get(o.table_id)
                if td is None:
                    td = known.get(o.table_id)
                    if td is None:
                        return False
                ncol = o.num_columns
                bb = raw[o.ofs_columns_before_image:o.ofs_columns_before_image + o.len_columns_bitmap]
                ab = None
                if op == 1:
                    if o.ofs_columns_after_image is None:
                        return False
                    ab = raw[o.ofs_columns_after_image:o.ofs_columns_after_image + o.len_columns_bitmap]
                rows = raw[o.ofs_rows:]
                end = PyBytes_GET_SIZE(rows)
                try:
                    check_rows(td, ncol, bb, ab, end)
                except Exception:
                    return False
                key = (o.table_id, op, ncol, bb, ab)
                entry = self.plans.get(key)
                if entry is None or entry[0] is not td:
                    try:
                        names = td.names
                        cols = td.columns
                        present = present_columns(bb, ncol)
                        img_b = image_plan.crows.ImageDecoder(image_plan.plan([cols[i] for i in present],
                                                                              [names[i] for i in present]))
                        img_a = None
                        if op == 1:
                            present = present_columns(ab, ncol)
                            img_a = image_plan.crows.ImageDecoder(image_plan.plan([cols[i] for i in present],
                                                                                  [names[i] for i in present]))
                    except Exception:
                        return False
                    if len(self.plans) > 4096:
                        self.plans.clear()
                    entry = self.plans[key] = (td, img_b, img_a)
                img_b = entry[1]
                img_a = entry[2]
                befores = []
                afters = []
                rpos = 0
                try:
                    while rpos < end:
                        k = rpos
                        row, rpos = img_b.decode(rows, rpos)
                        if op == 1:
                            after, rpos = img_a.decode(rows, rpos)
                            befores.append(row)
                            afters.append(after)
                        elif op == 0:
                            befores.append(None)
                            afters.append(row)
                        else:
                            befores.append(row)
                            afters.append(None)
                        if rpos <= k:
                            return False
                except Exception:
                    return False
                if rpos != end:
                    return False
                if befores:
                    events.append(((path, real + (at - off), _u4(e + OFS_END_LOG_POS),
                                    <long long>_u4(e + OFS_TIMESTAMP) * 1_000_000, server_id, gtid),
                                   (td.schema, td.table, OPS[op]), befores, afters))
            elif code == XID_EVENT:
                xid = _le(body + self.lens.xid, 8)
            at += len_event
        # taken: the decoder's state as the reference leaves it after the XID, then the rows
        for table_id, td in tables.items():
            known[table_id] = td
        decoder.gtid = None
        for head, names3, befores, afters in events:
            self._add(head, xid, names3, befores, afters)
        return True

    cdef _add(self, tuple head, object xid, tuple names3, list befores, list afters):
        """One rows event's changes into the batcher's columns (ChangeBatcher.add_changes)."""
        cdef Py_ssize_t total = len(befores), done = 0, take, size, i
        cdef list cols
        batcher = self.batcher
        size = batcher.size
        same = head + (xid,) + names3
        tail = self.tail
        while done < total:
            cols = batcher.cols
            take = min(total - done, size - batcher.n)
            if take == 1:
                for i in range(10):
                    (<list>cols[i]).append(same[i])
                (<list>cols[10]).append(befores[done])
                (<list>cols[11]).append(afters[done])
                (<list>cols[12]).append(done)
                for i in range(len(tail)):
                    (<list>cols[13 + i]).append(tail[i])
            else:
                for i in range(10):
                    (<list>cols[i]).extend([same[i]] * take)
                if take == total:
                    (<list>cols[10]).extend(befores)
                    (<list>cols[11]).extend(afters)
                else:
                    (<list>cols[10]).extend(befores[done:done + take])
                    (<list>cols[11]).extend(afters[done:done + take])
                (<list>cols[12]).extend(range(done, done + take))
                for i in range(len(tail)):
                    (<list>cols[13 + i]).extend([tail[i]] * take)
            done += take
            batcher.n += take
            if batcher.n >= size:
                self.ready.append(batcher.flush())
