# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of analysis/collector.py, the loop of `analyze`: the common transaction of a MariaDB binlog counted straight from the
framing loop's window, with no Event object, no generator and no body parse.

`Sink(analyzer, schema)` is called by the reader (binlog.reader.BinlogReader, `sink=`) with the window's
bytes before it walks them. It takes whole events, with the checks of framing.walk_events (size, CRC32),
as long as each is one it counts exactly as `Analyzer.feed` would count it (the pure-Python reference):

* a MariaDB GTID_EVENT that opens a transaction (not FL_STANDALONE, no XA, no extra flags), when the
  transaction tracker is between transactions;
* then, inside that transaction: ANNOTATE_ROWS_EVENTs; TABLE_MAP_EVENTs whose body bytes the analyzer
  already mapped under the same schema (Analyzer._fast_maps, filled by the reference path);
  WRITE/UPDATE/DELETE_ROWS_EVENT_V1 whose rows the walker counts (the row images stepped over by the
  plans of rows.walker.RowWalker, built from column_sizes.layout: no value decoded); and the XID_EVENT
  that commits it.

It stops at the first event it cannot take so (any other type, a TABLE_MAP not mapped yet, a rows event
whose images do not walk, a body the spec's layout would not read the same way...), and before it returns
it hands an open transaction to the Python tracker (Analyzer._adopt_fast): the reader then yields that
event to the reference path. An event is taken whole or not at all: nothing is counted for an event the
loop leaves. Returns the bytes taken (0: none).

With `window` (time bounds as the only filters, the stream.skipping gate before them) it runs while the
filters do, between transactions: a transaction the bounds keep only if it takes it whole, one they drop
skipped (its events checked as above, its TABLE_MAPs parsed once by Analyzer._skip_table), the gate
dropping what the loop hands back of it.

The pure-Python reference is the reader's events through `Analyzer.feed`; the differential test
(tests/test_compiled_core.py) runs `analyze` both ways over the corpus, the fixtures and fuzz cases.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint32_t, uint64_t

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, GTID_EVENT, LEN_EVENT_HEADER,
                                         OFS_END_LOG_POS, OFS_FLAGS, OFS_GTID_DOMAIN_ID, OFS_LEN_EVENT, OFS_GTID_SEQ_NO,
                                         OFS_SERVER_ID, OFS_TIMESTAMP, TABLE_MAP_EVENT, UPDATE_ROWS_EVENT_V1,
                                         WRITE_ROWS_EVENT_V1, XID_EVENT, Fde, event_at, gtid_kept, gtid_xid_reads_agree,
                                         le as _le, opens_plain_transaction, read_fde, u4 as _u4)
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE


#: The common header's length, as a Py_ssize_t in the size arithmetic (the spec's constants: binlog/_cbytes.pxd).
cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef str COMMIT_EVENT = "commit_event"
cdef object OPS = (INSERT, UPDATE, DELETE)
cdef object _rows_offsets = spec.rows_offsets
#: At most this many bytes of one transaction are asked into the reader's window (window mode).
cdef Py_ssize_t MAX_WHOLE = 64 << 20


#: The GTID and XID layouts checked against the generated parser (binlog/_cbytes.pxd: the spec stays the one
#: source of the layouts; False: the loop never runs).
LAYOUTS_AGREE = gtid_xid_reads_agree()


include "_cimages.pxi"


cdef class Sink:
    cdef object an, tracker, schema, walker, maps, fast_maps, tables, types, seq
    cdef object fde
    cdef Fde lens                  # what the loop takes from self.fde (read_fde)
    cdef dict plans
    # the transaction the loop has open (own), its figures
    cdef bint own
    cdef str file
    cdef Py_ssize_t start_pos, end
    cdef long long size, events, rows, ops[3]
    cdef uint32_t begin, last_ts, server_id, first_ts, first_len, first_end, first_flags
    cdef uint32_t domain
    cdef uint64_t seq_no
    cdef object xid
    cdef list tx_tables
    # event counters, put into the analyzer's dicts when the call ends
    cdef long long type_events[256]
    cdef long long type_bytes[256]
    # window mode (`window`): the filters' time bounds, the gate between the schema stage and the filters,
    # their tally, and the tables of the transaction being skipped (table id -> table)
    cdef bint windowed
    cdef long long lo, hi
    cdef object gate, selection, skip_table
    cdef dict skip_maps, drop_maps, overlay
    # with server-id, GTID, schema or table filters too (`window`'s skipper): the loop that skips what they drop
    # whole (stream/_cskipping.pyx), the server ids kept and dropped, the filters' excluded table ids (SkipGate's),
    # the names their Selection learns (None: it learns none) and their choice of a GTID (None: any)
    cdef object skipper, server_ids, exclude_server_ids, excluded, learnt, keeps_gtid
    # what _whole counted of the rows events of the transaction it found whole, in order: the taking pass reads
    # them there instead of walking the images again (`counted_next`: the next one; -1: none to read)
    cdef list counted
    # (whole_*: a walk of _whole the window cut, its stream position and bytes walked; the next call goes on)
    cdef Py_ssize_t counted_next, whole_at, whole_done, whole_from

    def __init__(self, analyzer, schema):
        self.an = analyzer
        self.tracker = analyzer._summarizer
        self.schema = schema
        self.walker = analyzer._walker
        self.maps = analyzer._maps
        self.tables = analyzer.tables
        self.types = analyzer.types
        self.seq = analyzer._seq
        analyzer._fast_maps = self.fast_maps = {}
        analyzer._fast_schema = schema
        self.plans = {}
        self.fde = None
        self.lens.usable = False
        self.own = False
        self.windowed = False
        self.skip_maps, self.drop_maps, self.overlay = {}, {}, {}
        self.skipper = self.excluded = self.learnt = self.server_ids = None
        self.counted, self.counted_next = [], -1
        self.whole_at, self.whole_from, self.whole_done = -1, -1, 0
        self.exclude_server_ids = frozenset()

    def window(self, lo, hi, gate, selection, skipper=None, server_ids=None, exclude_server_ids=frozenset(),
               learnt=None, keeps_gtid=None):
        """Run under time bounds alone (FilterOptions.kept_seconds: kept when lo <= the first event's timestamp
        < hi), between transactions as `gate` (stream.skipping.SkipGate) says: a transaction they keep is taken
        whole, counted in `selection` (the filters' Selection) too; one they drop is skipped, uncounted.
        With `skipper` (stream/_cskipping.pyx: the filters are time bounds, server ids, GTIDs, schema and table
        filters, FilterOptions.skippable), it skips the transactions they drop whole, and the loop takes a transaction
        only where the filters keep its first event (time, server id, GTID) and every TABLE_MAP of it is one the
        analyzer mapped before (so one they keep: the analyzer is fed what they keep); its table ids are then
        kept again in the gate's excluded_tables and its names `learnt` (the Selection's), as filter_events
        does. Anything else goes to the reference path whole."""
        self.skipper, self.server_ids, self.exclude_server_ids, self.learnt, self.keeps_gtid = skipper, server_ids, \
            exclude_server_ids, learnt, keeps_gtid
        self.excluded = gate.excluded_tables if skipper is not None else None
        self.windowed = True
        self.lo = -(1 << 62) if lo is None else lo
        self.hi = (1 << 62) if hi is None else hi
        self.gate = gate
        self.selection = selection
        self.skip_table = self.an._skip_table

    cdef _set_fde(self, fde):
        self.fde = fde
        self.plans.clear()
        read_fde(fde, LAYOUTS_AGREE, &self.lens)

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole events of buf from off (file position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, len_body, count
        cdef const unsigned char* e
        cdef const unsigned char* body
        cdef uint32_t len_event, ts
        cdef int code, len_checksum, op
        cdef Py_ssize_t at
        cdef long long taken_events = 0, taken_bytes = 0, taken_rows = 0
        cdef object tracker = self.tracker
        self.whole_from, self.whole_at = self.whole_at, -1
        if tracker.open is not None or tracker.tx.mode is not None:
            return 0
        if fde is not self.fde:
            self._set_fde(fde)
        if not self.lens.usable:
            return 0
        len_checksum = self.lens.len_checksum
        an = self.an
        bucket_ts = an._bucket_ts
        bucket = an._bucket
        cdef uint32_t cur_ts = <uint32_t>bucket_ts
        cdef long long acc_events = 0, acc_rows = 0, acc_bytes = 0, rows_events = 0
        cdef Py_ssize_t whole, checked = 0    # (the window's bytes before `checked` had their CRC32 checked)
        cdef bint windowed = self.windowed, dropping = False
        gate = self.gate
        if windowed:
            dropping = gate.dropping
            if not dropping and not gate.between:
                return 0
            if dropping and self.skipper is not None:   # (the skipper's transaction: it goes on dropping it)
                return self.skipper(buf, off, pos, fde, verify, path)
        try:
            while event_at(p, off, n, len_checksum, verify and off >= checked, &code, &len_event):
                e = p + off
                body = e + H
                len_body = len_event - H - len_checksum
                ts = _u4(e + OFS_TIMESTAMP)
                count = 0
                if dropping:        # a transaction the filters drop: skipped, nothing counted
                    if not sink_skippable(self, code, body, len_body, e, len_event, path, pos + (off - start)):
                        break
                    off += len_event
                    if code == XID_EVENT:
                        dropping = False
                        gate.skip_done()
                    continue
                if windowed and not self.own:
                    whole = 0
                    if self.skipper is not None and code == GTID_EVENT and self.lo <= ts < self.hi and \
                            opens_plain_transaction(body, len_body) and sink_kept(self, e, n - off, len_checksum):
                        # (one taken whole maps tables the analyzer was fed: kept, the skipper is not asked)
                        whole = sink_whole(self, p, off, n, len_checksum, verify, pos + (off - start))
                    if whole > 0:
                        self.counted_next, checked = 0, off + whole
                    elif self.skipper is not None:
                        whole = self.skipper(buf, off, pos + (off - start), fde, verify, path)
                        if whole < 0:       # (it wants more of the window)
                            if off == start:
                                return whole
                            break
                        if whole > 0:
                            off += whole
                            if gate.dropping:   # (a transaction it began to skip: the next call goes on)
                                break
                            continue
                    if code != GTID_EVENT or not opens_plain_transaction(body, len_body):
                        break
                    if self.skipper is not None and not sink_kept(self, e, n - off, len_checksum):
                        break
                    if ts < self.lo or ts >= self.hi:
                        if self.skipper is not None:    # (the skipper's to drop, names learnt: not the loop's)
                            break
                        dropping = True
                        gate.skip_open()
                        self.drop_maps.clear()
                        off += len_event
                        continue
                    if checked <= off:
                        whole = sink_whole(self, p, off, n, len_checksum, verify, pos + (off - start))
                        self.counted_next, checked = (0, off + whole) if whole > 0 else (-1, checked)
                    if whole < 0 and off == start:
                        return whole        # (the reader reads that much into its window, and calls again)
                    if whole <= 0:
                        break
                if not self.own:
                    if code != GTID_EVENT or not opens_plain_transaction(body, len_body):
                        break
                    self.own = True
                    self.file = path
                    self.start_pos = pos + (off - start)
                    self.size = self.events = self.rows = 0
                    self.ops[0] = self.ops[1] = self.ops[2] = 0
                    self.begin = self.last_ts = self.first_ts = ts
                    self.server_id = _u4(e + OFS_SERVER_ID)
                    self.first_len = len_event
                    self.first_end = _u4(e + OFS_END_LOG_POS)
                    self.first_flags = e[OFS_FLAGS] | (e[OFS_FLAGS + 1] << 8)
                    self.seq_no = _le(body + OFS_GTID_SEQ_NO, 8)
                    self.domain = _u4(body + OFS_GTID_DOMAIN_ID)
                    self.xid = None
                    self.tx_tables = []
                elif code == ANNOTATE_ROWS_EVENT:
                    pass
                elif code == TABLE_MAP_EVENT:
                    if not self._table_map(PyBytes_FromStringAndSize(<const char*>body, len_body)):
                        break
                elif code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
                    op = code - WRITE_ROWS_EVENT_V1
                    count = self._rows(code, self.lens.rows[op],
                                       PyBytes_FromStringAndSize(<const char*>body, len_body), len_event)
                    if count < 0:
                        break
                    rows_events += 1
                elif code == XID_EVENT:
                    if len_body != self.lens.xid + 8:
                        break
                    self.xid = _le(body + self.lens.xid, 8)
                else:
                    break
                # taken: the event's figures (Analyzer.feed), then the transaction's (_Open.add)
                self.type_events[code] += 1
                self.type_bytes[code] += len_event
                taken_events += 1
                taken_bytes += len_event
                taken_rows += count
                if ts == cur_ts:
                    acc_events += 1
                    acc_rows += count
                    acc_bytes += len_event
                elif ts:
                    if acc_events:
                        bucket[0] += acc_events
                        bucket[1] += acc_rows
                        bucket[2] += acc_bytes
                    if an.first_ts is None or ts < an.first_ts:
                        an.first_ts = ts
                    if an.last_ts is None or ts > an.last_ts:
                        an.last_ts = ts
                    key = ts - ts % an.options.bucket_s
                    bucket = an.timeline.get(key)
                    if bucket is None:
                        bucket = an.timeline[key] = [0, 0, 0]
                    cur_ts = ts
                    acc_events, acc_rows, acc_bytes = 1, count, len_event
                else:
                    untimed = an.untimed
                    untimed[0] += 1
                    untimed[1] += count
                    untimed[2] += len_event
                self.events += 1
                if ts < self.begin:
                    self.begin = ts
                self.last_ts = ts
                self.end = pos + (off - start) + len_event
                self.size += len_event
                off += len_event
                if code == XID_EVENT:
                    self._commit()
        finally:
            if acc_events:
                bucket[0] += acc_events
                bucket[1] += acc_rows
                bucket[2] += acc_bytes
            an._bucket_ts = cur_ts
            an._bucket = bucket
            if self.own:
                self._hand_over()
            if taken_events:
                self._flush(path, taken_events, taken_bytes, taken_rows)
                if self.selection is not None:      # (windowed: every event taken is kept by the filters)
                    self.selection.kept += taken_events
                    self.selection.rows += rows_events
        return off - start

    cdef object _known_map(self, bytes body):
        """(table, name) of a TABLE_MAP the analyzer mapped before under this schema, or None."""
        got = self.fast_maps.get(body)
        if got is None:
            return None
        table, name, generation, collation = got
        schema = self.schema
        if schema.generation != generation or schema.server_collation != collation:
            return None
        return table, name

    cdef bint _table_map(self, bytes body) except -1:
        """A TABLE_MAP the analyzer mapped before under this schema: mapped again (Analyzer._table_map)."""
        got = self._known_map(body)
        if got is None:
            return False
        table, name = got
        if self.excluded is not None:       # (the filters keep it: filter_events' bookkeeping)
            self.excluded.discard(table.table_id)
            if self.learnt is not None:
                self.learnt.add((table.schema, table.table))
        self.maps[table.table_id] = got
        if name not in self.tx_tables:
            self.tx_tables.append(name)
        return True

    cdef long long _rows(self, int code, int len_post_header, bytes body, uint32_t len_event) except -2:
        """The rows of a rows event counted (Analyzer._rows), or -1 where the reference path must count
        them (its error, or a layout the spec reads otherwise)."""
        cdef long long count
        if 0 <= self.counted_next < len(self.counted):     # (_whole walked it: the same table, the same rows)
            got = self.counted[self.counted_next]
            self.counted_next += 1
        else:
            got = self._count(code, len_post_header, body, self.maps, False)
        if got is None:
            return -1
        count, name = got
        op = OPS[code - WRITE_ROWS_EVENT_V1]
        st = self.tables.get(name)
        if st is None:
            st = self.tables[name] = self.an._new_table_stat()
        st.events[op] += 1
        st.rows[op] += count
        st.bytes[op] += len_event
        self.rows += count
        self.ops[code - WRITE_ROWS_EVENT_V1] += count
        return count

    cdef object _count(self, int code, int len_post_header, bytes body, dict maps, bint then_mapped):
        """(rows, table name) of a rows event whose table `maps` has by its table id (then_mapped: or
        the analyzer's maps), the rows walked, nothing counted; None where the reference path must read it."""
        cdef const unsigned char* p
        cdef Py_ssize_t pos, end, k, n, ofs_rows, at
        cdef long long count = 0
        cdef _Image b, a
        cdef bint update = code == UPDATE_ROWS_EVENT_V1
        try:
            o = _rows_offsets(code, len_post_header, body)
        except Exception:
            return None
        mapped = maps.get(o.table_id)
        if mapped is None and then_mapped:
            if self.excluded and o.table_id in self.excluded:   # (rows the filters drop)
                return None
            mapped = self.maps.get(o.table_id)
        if mapped is None:
            return None
        table, name = mapped
        n = o.num_columns
        if n > len(table.columns):
            return None
        before = body[o.ofs_columns_before_image:o.ofs_columns_before_image + o.len_columns_bitmap]
        after = body[o.ofs_columns_after_image:o.ofs_columns_after_image + o.len_columns_bitmap] if update else None
        key = (o.table_id, n, before, after)
        entry = self.plans.get(key)
        if entry is None or entry[0] is not table:
            try:
                made = self.walker.plans(table, n, before, after, update)
                entry = (table, _Image(made[1]), _Image(made[2]) if update else None)
            except Exception:
                return None
            if len(self.plans) > 4096:
                self.plans.clear()
            self.plans[key] = entry
        b = entry[1]
        ofs_rows = o.ofs_rows
        p = <const unsigned char*>PyBytes_AS_STRING(body) + ofs_rows
        end = PyBytes_GET_SIZE(body) - ofs_rows
        if end:     # rows.walker.check_rows: a row image has a column present
            if not _any_bit(before, n) or (update and not _any_bit(after, n)):
                return None
        pos = 0
        if update:
            a = entry[2]
            while pos < end:
                at = pos
                pos = b.skip(p, pos, end)
                if pos < 0:
                    return None
                pos = a.skip(p, pos, end)
                if pos <= at:       # -1, or images of no byte (check_rows above leaves none)
                    return None
                count += 1
        else:
            while pos < end:
                at = pos
                pos = b.skip(p, pos, end)
                if pos <= at:
                    return None
                count += 1
        return count, name

    cdef _commit(self):
        """The transaction's XID taken: its figures (Analyzer._close), or the reference's close when the
        transaction goes into a top list or is flagged."""
        self.counted_next = -1
        an = self.an
        o = an.options
        size = <object>self.size
        duration = float(<long long>self.last_ts - <long long>self.begin)
        slow = size > o.big_trx_bytes or duration > o.long_trx_seconds
        if not slow and o.top > 0:
            for heap, key in ((an._top_bytes, size), (an._top_duration, duration)):
                if len(heap) < o.top or key > heap[0][0]:
                    slow = True
                    break
        if slow:
            self._hand_over()
            self.tracker.tx.mode = None      # the XID ended it (Transactions.step)
            an._close(self.tracker._close(True))
            return
        self.own = False
        next(self.seq)
        an.tx_count += 1
        sources = an.tx_sources
        sources[COMMIT_EVENT] = sources.get(COMMIT_EVENT, 0) + 1
        an.tx_bytes_total += size
        an.tx_rows_total += <object>self.rows
        if duration > an.tx_max_duration:
            an.tx_max_duration = duration
        bucket = max(8, max(size, 1).bit_length())
        hist = an.tx_hist
        hist[bucket] = hist.get(bucket, 0) + 1

    cdef _hand_over(self):
        """The open transaction to the Python tracker, as the reference would have it here."""
        self.own = False
        self.counted_next = -1
        header = spec.EventHeader(self.first_ts, GTID_EVENT, self.server_id, self.first_len, self.first_end,
                                  self.first_flags)
        gtid = f"{self.domain}-{self.server_id}-{self.seq_no}"
        self.an._adopt_fast(self.file, self.start_pos, header, gtid, self.begin, self.last_ts, self.end,
                            self.size, self.events, self.xid, self.tx_tables,
                            {INSERT: self.ops[0], UPDATE: self.ops[1], DELETE: self.ops[2]})

    cdef _flush(self, str path, long long events, long long nbytes, long long rows):
        cdef int code
        an = self.an
        for code in range(256):
            if self.type_events[code]:
                t = self.types.get(code)
                if t is None:
                    t = self.types[code] = [0, 0, 0, 0]
                t[0] += self.type_events[code]
                t[1] += self.type_bytes[code]
                self.type_events[code] = 0
                self.type_bytes[code] = 0
        f = an.files[path]
        f["events"] += events
        f["bytes"] += nbytes
        an.total_events += events
        an.total_bytes += nbytes
        an.total_rows += rows


include "_ccollector_window.pxi"
