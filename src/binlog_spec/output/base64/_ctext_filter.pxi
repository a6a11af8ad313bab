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
# A transaction taken is one the filters keep whole: its TABLE_MAPs are those the Python lane wrote, of tables they
# keep (checked as the lane takes each, Lane._block), and its rows events name tables they keep: a table id they
# exclude only where the transaction mapped it before (as filter_events holds its table ids). At its XID the lane
# does what filter_events would have done of it: the events and rows events counted in the Selection (added up
# here, and added to it as the lane's call returns), the names of its TABLE_MAPs learnt (`tables`, as the
# Selection's watcher learns them), their table ids kept again (SkipGate.excluded_tables).
#
# The skipping loop is not asked of a transaction the lane may open and whose first TABLE_MAP names a table the
# filters keep (`opens_kept`): the loop stops at such a table, taking nothing (_cskipping.pyx, _dropped_whole).
#
# The text it hands on waits for the Python lane, which writes it before the next event it is given; past HELD
# characters the lane stops. It then leaves the XID_EVENT of the transaction it is taking to the ordinary path,
# not the whole next transaction: what the filters would have done of the rest is done, and the transaction's
# GTID_EVENT is handed back (`replay`, binlog.replay) for the gate and the filters, which take it as the start of
# a transaction they keep, already written (Event.replayed: stream.skipping.SkipGate.watch, stream.filters; the
# Python lane writes nothing of it, output/base64/lane.py).

#: A transaction the window cuts is asked for whole up to this many bytes (past it: the ordinary path).
cdef Py_ssize_t MAX_TX = 16 << 20
#: The TABLE_MAP bodies met last, compared byte for byte before the dict is asked (a workload's transactions map
#: the same few tables over and over: no bytes object, no hash for them).
cdef Py_ssize_t RECENT = 8


cdef class Base64Filter:
    cdef object skipper, gate, selection, server_ids, exclude_server_ids, keeps_table, tables, names, fde, keeps_gtid
    cdef long long lo, hi
    cdef readonly bint need_names   # (a table filter or a watcher: the transaction's tables are learnt)
    cdef dict statuses              # TABLE_MAP body bytes -> (table id, schema, table, (schema, table)), or None
                                    # (the filters' reading of it fails, or they drop its table)
    cdef list recent_bodies, recent_got     # RECENT TABLE_MAP bodies and their statuses
    cdef Py_ssize_t recent_next
    cdef set excluded               # the gate's excluded_tables
    cdef Py_ssize_t kept, rows      # counted, not yet added to the Selection (flush)
    cdef Py_ssize_t refused         # the position of the last transaction the lane began and left (-1: none)

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
        self.recent_bodies, self.recent_got, self.recent_next = [], [], 0
        self.excluded = gate.excluded_tables
        self.kept = self.rows = 0
        self.refused = -1

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

    cdef bint opens_kept(self, Lane lane, const unsigned char* p, Py_ssize_t off, Py_ssize_t n) except -1:
        """Whether the lane may open the transaction whose GTID_EVENT is at off with no word from the skipping
        loop, which would take none of it: the lane may open it (may_open), and under table filters its first
        TABLE_MAP, in the window after ANNOTATE_ROWS_EVENTs alone, names a table they keep."""
        cdef int len_checksum = lane.lens.len_checksum
        cdef uint32_t len_event
        if n - off < H or p[off + OFS_TYPE_CODE] != GTID_EVENT:
            return False
        len_event = _u4(p + off + OFS_LEN_EVENT)
        if len_event > <uint32_t>(n - off) or not self.may_open(p + off, len_event, len_checksum):
            return False
        if self.keeps_table is None:
            return True
        off += len_event
        while n - off >= H:
            len_event = _u4(p + off + OFS_LEN_EVENT)
            if len_event < <uint32_t>(H + len_checksum) or len_event > <uint32_t>(n - off):
                return False
            if p[off + OFS_TYPE_CODE] == TABLE_MAP_EVENT:
                return self._recent(p + off, len_event - H - len_checksum, lane.fde) is not None
            if p[off + OFS_TYPE_CODE] != ANNOTATE_ROWS_EVENT:
                return False
            off += len_event
        return False

    cdef object _recent(self, const unsigned char* e, Py_ssize_t len_body, fde):
        """The status of the TABLE_MAP_EVENT at e, its body compared with the RECENT ones first."""
        cdef Py_ssize_t i
        cdef bytes b
        if fde is self.fde:
            for i in range(len(self.recent_bodies)):
                b = <bytes>self.recent_bodies[i]
                if PyBytes_GET_SIZE(b) == len_body and memcmp(PyBytes_AS_STRING(b), e + H, len_body) == 0:
                    return self.recent_got[i]
        body = PyBytes_FromStringAndSize(<const char*>e + H, len_body)
        got = self.status(body, e, fde)
        if len(self.recent_bodies) < RECENT:
            self.recent_bodies.append(body)
            self.recent_got.append(got)
        else:
            self.recent_bodies[self.recent_next] = body
            self.recent_got[self.recent_next] = got
            self.recent_next = (self.recent_next + 1) % RECENT
        return got

    cdef object status(self, bytes body, const unsigned char* e, fde):
        if fde is not self.fde:
            self.fde = fde
            self.statuses.clear()
            self.recent_bodies, self.recent_got, self.recent_next = [], [], 0
        got = self.statuses.get(body, False)
        if got is False:
            named = self.names(PyBytes_FromStringAndSize(<const char*>e, _u4(e + OFS_LEN_EVENT)), fde)
            got = None if named is None or (self.keeps_table is not None and not self.keeps_table(named[1], named[2])) \
                else (named[0], named[1], named[2], (named[1], named[2]))
            if len(self.statuses) > 4096:
                self.statuses.clear()
            self.statuses[body] = got
        return got

    cdef bint map_kept(self, Lane lane, bytes body, const unsigned char* e) except -1:
        """Whether the filters keep the TABLE_MAP_EVENT at e (its body bytes) that the lane takes: its table
        listed with the transaction's (Lane.tx_maps)."""
        got = self.status(body, e, lane.fde)
        if got is None:
            return False
        if lane.n_maps < len(lane.tx_maps):
            lane.tx_maps[lane.n_maps] = got
        else:
            lane.tx_maps.append(got)
        lane.n_maps += 1
        return True

    cdef bint rows_kept(self, Lane lane, object table_id) except -1:
        """Whether the filters keep the rows event of table_id that the lane takes: one of a table id they
        exclude is kept where the transaction mapped it before."""
        cdef Py_ssize_t i
        if not self.excluded or table_id not in self.excluded:
            return True
        for i in range(lane.n_maps):
            if (<tuple>lane.tx_maps[i])[0] == table_id:
                return True
        return False

    cdef int commit(self, Lane lane, Py_ssize_t events, Py_ssize_t rows) except -1:
        """The transaction the lane took to its XID: what the filters would have done of it."""
        cdef Py_ssize_t i
        cdef tuple got
        for i in range(lane.n_maps):
            got = <tuple>lane.tx_maps[i]
            if self.excluded:
                self.excluded.discard(got[0])
            if self.tables is not None:
                self.tables.add(got[3])
        self.kept += events
        self.rows += rows
        return 0

    cdef int flush(self) except -1:
        """The events and rows events counted, added to the Selection."""
        if self.kept:
            self.selection.kept += self.kept
            self.kept = 0
        if self.rows:
            self.selection.rows += self.rows
            self.rows = 0
        return 0


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
    try:
        while True:
            if pos + (off - start) == f.refused:      # (left to the ordinary path: not begun again)
                break
            if not (free and f.opens_kept(lane, p, off, n)):
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
            need = _cut(p, off, n, lane.lens.len_checksum)
            if need:                # (not begun where its text would be dropped: read whole first)
                if tx_start != start:
                    break
                if need <= MAX_TX:
                    return -max(need, min(2 * (n - start), MAX_TX))
            events = rows = need = 0
            done = False
            lane.n_maps = 0
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
                    f.commit(lane, events, rows)     # (the rest, its XID, read the ordinary way)
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
                    f.commit(lane, events, rows)
                    done = True
                    break
            if not done:            # the transaction's text dropped: the ordinary path reads all of it
                del lines[tx_mark:]
                if need and tx_start == start and off - start + need <= MAX_TX:
                    # (at least twice the window's bytes: the transaction is written again twice its size at most)
                    return -max(off - start + need, min(2 * (n - start), MAX_TX))
                if not need:
                    f.refused = pos + (tx_start - start)
                off = tx_start
                break
            while mark < len(lines):
                chars += len(<str>lines[mark]) + 1
                mark += 1
            if chars >= JOINED:
                if chars < 4 * JOINED:
                    lane.taken.append("\n".join(lines))
                else:           # (a large transaction's text in strings of about JOINED characters, as the
                    _hand_on(lane.taken, lines)     # unfiltered lane hands them on, not one string)
                lines.clear()
                held += chars
                chars = mark = 0
            if handed or held >= HELD:
                break
    finally:
        if lines:
            lane.taken.append("\n".join(lines))
        f.flush()
    return off - start


cdef Py_ssize_t _cut(const unsigned char* p, Py_ssize_t off, Py_ssize_t n, int len_checksum) noexcept:
    """The bytes from off that the transaction whose GTID_EVENT is at off needs at least, where the window cuts it
    before its XID_EVENT (its events' headers read, none of the others the lane writes: ANNOTATE_ROWS, TABLE_MAP and
    rows events); 0 where it ends in the window, or the lane stops before the cut (its own walk then decides)."""
    cdef Py_ssize_t at = off
    cdef uint32_t len_event
    cdef int code
    while True:
        if n - at < H:
            return at - off + H
        code = p[at + OFS_TYPE_CODE]
        len_event = _u4(p + at + OFS_LEN_EVENT)
        if len_event < <uint32_t>(H + len_checksum):
            return 0
        if at != off and code != ANNOTATE_ROWS_EVENT and code != TABLE_MAP_EVENT and code != XID_EVENT and \
                code != WRITE_ROWS_EVENT_V1 and code != UPDATE_ROWS_EVENT_V1 and code != DELETE_ROWS_EVENT_V1:
            return 0
        if len_event > <uint32_t>(n - at):
            return at - off + len_event
        if code == XID_EVENT:
            return 0
        at += len_event


cdef int _hand_on(list taken, list lines) except -1:
    """The lines joined in strings of JOINED characters or more (a line or more each; the last may be shorter),
    appended to taken."""
    cdef Py_ssize_t first = 0, i = 0, chars = 0
    while i < len(lines):
        chars += len(<str>lines[i]) + 1
        i += 1
        if chars >= JOINED or i == len(lines):
            taken.append("\n".join(lines[first:i]))
            first, chars = i, 0
    return 0


cdef Py_ssize_t _text_size(list lines, Py_ssize_t i):
    """The characters of lines[i:], their newlines counted."""
    cdef Py_ssize_t size = 0
    while i < len(lines):
        size += len(<str>lines[i]) + 1
        i += 1
    return size
