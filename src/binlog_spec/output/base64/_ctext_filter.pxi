# The base64 lane under the filters a compiled loop decides (included in output/base64/_ctext.pyx, after `Lane`):
# time bounds, server ids, schema and table filters (FilterOptions.skippable), for the `sql` script (base64).
#
# `Base64Filter(skipper, gate, selection, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names,
# keeps_gtid)`
# (stream.skipping.decisions gives all but the first three): between transactions, the stream/_cskipping.pyx
# Skipper first skips the transactions the filters drop whole; the lane then takes a transaction only where the
# filters are between transactions (the SkipGate of select_events says so) and keep its first event (its
# timestamp in [lo, hi), its server id kept: FilterOptions.keeps_transaction), and only whole, GTID_EVENT to
# XID_EVENT, within the reader's window. Anything it cannot take inside (an event Lane does not write, a TABLE_MAP
# the Python lane never wrote, so one the filters may drop) drops the transaction's text and leaves all of it to
# the ordinary path: the filters and what they keep are never left inside a transaction the lane began. A
# transaction the window cuts, first in it, asks the reader for the rest (a negative return, as the Skipper's).
#
# A transaction taken is one the filters keep whole: its TABLE_MAPs are those the Python lane wrote (their
# tables kept), and its rows events name them. At its XID the lane does what filter_events would have done of
# it: the events and rows events counted in the Selection, the names of its TABLE_MAPs learnt (`tables`, as the
# Selection's watcher learns them), their table ids kept again (SkipGate.excluded_tables).
#
# The text it hands on waits for the Python lane, which writes it before the next event it is given; past HELD
# characters the lane stops. It then leaves the XID_EVENT of the transaction it is taking to the ordinary path,
# not the whole next transaction: what the filters would have done of the rest is done, and the transaction's
# GTID_EVENT is handed back (`replay`, binlog.replay) for the gate and the filters, which take it as the start of
# a transaction they keep, already written (Event.replayed: stream.skipping.SkipGate.watch, stream.filters; the
# Python lane writes nothing of it, output/base64/lane.py).

#: A transaction the window cuts is asked for whole up to this many bytes (past it: the ordinary path).
cdef Py_ssize_t MAX_TX = 16 << 20


cdef class Base64Filter:
    cdef object skipper, gate, selection, server_ids, exclude_server_ids, keeps_table, tables, names, fde, keeps_gtid
    cdef long long lo, hi
    cdef readonly bint need_names   # (a table filter or a watcher: the transaction's tables are learnt)
    cdef dict statuses              # TABLE_MAP body bytes -> (table id, schema, table), or None (the filters'
                                    # reading of it fails, or they drop its table)

    def __init__(self, skipper, gate, selection, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names,
                 keeps_gtid=None):
        self.skipper, self.gate, self.selection, self.keeps_gtid = skipper, gate, selection, keeps_gtid
        self.lo = -(1 << 62) if lo is None else lo
        self.hi = (1 << 62) if hi is None else hi
        self.server_ids, self.exclude_server_ids = server_ids, exclude_server_ids
        self.keeps_table, self.tables, self.names = keeps_table, tables, names
        self.need_names = keeps_table is not None or tables is not None
        self.fde = None
        self.statuses = {}

    cdef bint may_open(self, const unsigned char* e, Py_ssize_t avail, int len_checksum) except -1:
        """Whether the lane may open the transaction whose first event is at e (`avail` bytes from it in the
        window): the filters between transactions, and keeping it by its time, server id and GTID."""
        cdef long long ts = _u4(e + OFS_TIMESTAMP)
        gate = self.gate
        if not gate.between or gate.dropping or ts < self.lo or ts >= self.hi:
            return False
        if self.keeps_gtid is not None and not gtid_kept(self.keeps_gtid, e, avail, len_checksum, -1):
            return False        # (or one it does not read: the reference path decides)
        if self.server_ids is None and not self.exclude_server_ids:
            return True
        sid = _u4(e + OFS_SERVER_ID)
        return (self.server_ids is None or sid in self.server_ids) and sid not in self.exclude_server_ids

    cdef object status(self, bytes body, const unsigned char* e, fde):
        if fde is not self.fde:
            self.fde = fde
            self.statuses.clear()
        got = self.statuses.get(body, False)
        if got is False:
            named = self.names(PyBytes_FromStringAndSize(<const char*>e, _u4(e + OFS_LEN_EVENT)), fde)
            got = None if named is None or (self.keeps_table is not None and not self.keeps_table(named[1], named[2])) \
                else named
            if len(self.statuses) > 4096:
                self.statuses.clear()
            self.statuses[body] = got
        return got

    cdef bint commit(self, Lane lane, const unsigned char* p, Py_ssize_t events, Py_ssize_t rows) except -1:
        """The transaction the lane took to its XID: what the filters would have done of it; False where they
        would not keep it whole (the lane then leaves it to them)."""
        cdef set ids
        cdef list learnt
        if lane.tx_items is not None:
            excluded = self.gate.excluded_tables
            ids, learnt = set(), []
            for item in lane.tx_items:
                if type(item) is tuple:         # a TABLE_MAP: (body, offset in the window)
                    got = self.status(<bytes>item[0], p + <Py_ssize_t>item[1], lane.fde)
                    if got is None:
                        return False
                    ids.add(got[0])
                    learnt.append(got)
                elif item in excluded and item not in ids:      # a rows event of a table id they drop
                    return False
            for got in learnt:
                excluded.discard(got[0])
                if self.tables is not None:
                    self.tables.add((got[1], got[2]))
        selection = self.selection
        selection.kept += events
        if rows:
            selection.rows += rows
        return True


cdef Py_ssize_t walk_filtered(Lane lane, bytes buf, const unsigned char* p, Py_ssize_t off, Py_ssize_t n,
                              Py_ssize_t pos, fde, bint verify, str path) except? -1:
    """The filtered lane's call (Lane.__call__): the bytes skipped and taken from off, or minus the bytes wanted
    from pos in the window."""
    cdef Base64Filter f = <Base64Filter>lane.filt
    cdef Py_ssize_t start = off, tx_start, tx_mark, took, skipped, need, events, rows
    cdef Py_ssize_t chars = 0, mark = 0, held = 0
    cdef uint32_t len_event
    cdef int code
    cdef bint done, handed = False
    cdef list lines = []
    if lane.replay:         # (a transaction's XID left to the ordinary path: it reads it first)
        return 0
    out_fde = lane.rewriter.out_fde
    if fde is not lane.fde or out_fde is not lane.out_fde:
        lane._set_fde(fde, out_fde)
    # the Python lane holds nothing (no BINLOG block, no rows event pending), and the text the lane handed on and
    # the Python lane has not written yet (it writes it before the next event it is given) is under HELD
    for text in lane.taken:
        held += len(<str>text)
    cdef bint free = lane.lens.usable and held < HELD and not (lane.hold or lane.script.block
                                                               or lane.rewriter.pending is not None)
    session = lane.script.session
    skip_parallel, domain, server = session.skip_parallel, session.gtid_domain, session.gtid_server
    cdef bint gtids = type(skip_parallel) is int and type(domain) is int and type(server) is int
    gate = f.gate
    try:
        while True:
            skipped = f.skipper(buf, off, pos + (off - start), fde, verify, path)
            if skipped < 0:         # (the Skipper wants more of the window)
                if off == start:
                    return skipped
                break
            if skipped > 0:
                off += skipped
                continue
            if not free or n - off < H or p[off + OFS_TYPE_CODE] != GTID_EVENT or \
                    not f.may_open(p + off, n - off, lane.lens.len_checksum):
                break
            tx_start, tx_mark = off, len(lines)
            events = rows = need = 0
            done = False
            if lane.tx_items is not None:
                lane.tx_items.clear()
            while True:
                if not event_at(p, off, n, lane.lens.len_checksum, verify, &code, &len_event):
                    if n - off < H:
                        need = H
                    elif _u4(p + off + OFS_LEN_EVENT) > <uint32_t>(n - off):
                        need = _u4(p + off + OFS_LEN_EVENT)
                    break
                if code == GTID_EVENT and off != tx_start:
                    break
                if code == XID_EVENT and held + chars + _text_size(lines, tx_mark) >= HELD:
                    if f.commit(lane, p, events, rows):     # (the rest, its XID, read the ordinary way)
                        lane.replay = [(path, pos + (tx_start - start), PyBytes_FromStringAndSize(
                            <const char*>p + tx_start, _u4(p + tx_start + OFS_LEN_EVENT)), fde)]
                        done = handed = True
                    break
                took = lane._event(p, off, n, pos + (off - start), verify, code, len_event, lines, gtids,
                                   skip_parallel, domain, server)
                if not took:
                    break
                if code == TABLE_MAP_EVENT:
                    rows += lane.block_rows
                events += lane.block_events
                off += took
                if code == XID_EVENT:
                    done = f.commit(lane, p, events, rows)
                    break
            if not done:            # the transaction's text dropped: the ordinary path reads all of it
                del lines[tx_mark:]
                if need and tx_start == start and off - start + need <= MAX_TX:
                    # (at least twice the window's bytes: the transaction is written again twice its size at most)
                    return -max(off - start + need, min(2 * (n - start), MAX_TX))
                off = tx_start
                break
            while mark < len(lines):
                chars += len(<str>lines[mark]) + 1
                mark += 1
            if handed:
                break
            if chars >= JOINED:
                lane.taken.append("\n".join(lines))
                lines.clear()
                held += chars
                chars = mark = 0
                if held >= HELD:
                    break
    finally:
        if lines:
            lane.taken.append("\n".join(lines))
    return off - start


cdef Py_ssize_t _text_size(list lines, Py_ssize_t i):
    """The characters of lines[i:], their newlines counted."""
    cdef Py_ssize_t size = 0
    while i < len(lines):
        size += len(<str>lines[i]) + 1
        i += 1
    return size
