# The filters in output/_crow_text.pyx's RowLane (included there, after it): the lane under the filters a compiled
# loop decides (FilterOptions.skippable: time bounds, server ids, schema and table filters), for `rows --format
# jsonl` and `sql --sql2`.
#
# `LaneFilter(skipper, gate, selection, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names,
# keeps_gtid)`: the
# stream/_cskipping.pyx Skipper first skips the transactions the filters drop whole; the lane then opens a
# transaction only where the filters are between transactions (the SkipGate of select_events says so), whose first
# event they keep (its timestamp in [lo, hi), its server id and its GTID kept, as FilterOptions.keeps_transaction
# decides; with a GTID filter, one a MariaDB GTID_EVENT or a MySQL GTID_LOG_EVENT opens).
#
# Inside it, as filter_events: a TABLE_MAP_EVENT of a table `keeps_table` drops (names parsed once per body by
# `names`, stream.skipping's) is dropped, its table id excluded, and the rows events of that id; the transaction is
# written (BEGIN and COMMIT of the SQL script with it) when it keeps a rows event, or when nothing was removed
# from it. At its XID the lane does what the filters would have done of it: the table ids excluded and kept again
# (SkipGate.excluded_tables), the names of its TABLE_MAPs learnt (`tables`, the Selection's, as its watcher learns
# them), the events kept and the rows events among them counted (Selection.count), in the order filter_events
# yields framing, attached events (ANNOTATE_ROWS_EVENT, ROWS_QUERY_LOG_EVENT) and content.
#
# Where the lane cannot go on inside a transaction (an event of another type, a value it cannot write, a rows
# event of a table id not mapped in it, an event past the reader's window and MAX_EVENT bytes):
# * before the transaction kept a rows event, the filters' choice of it is still open: the lane rewinds to its
#   first event, its text unwritten, and the ordinary path reads all of it;
# * once it kept one, the filters keep all of it (its framing is out): the lane keeps what it wrote, and hands the
#   rest on (`hand_on`), from its first event not yet written (an ANNOTATE_ROWS_EVENT waiting for its rows event is
#   given back with it): what the filters would have done of the part it took (counted, table ids excluded), and
#   RowLane's `replay` with the transaction's GTID event (and BEGIN), which the gate and the filters take as an open
#   transaction they keep, with content (Event.replayed; stream.skipping.SkipGate.watch, stream.filters). Its text
#   is handed on as it is written, CHUNK at a time; and while the text handed on waits past MAX_HELD for its
#   consumer, the ordinary path reads one rows event of it (RowLane's `resume_at`) and the lane goes on after it,
#   to the transaction's end, where it tells the gate the transaction ended.
# So the filters (stream.filters.filter_events) and what they keep always know where a transaction stands: what the
# lane hands back to the ordinary path (RowLane's `replay`) is of whole transactions the filters kept, or of the one
# it hands on.

#: The text handed on (RowLane.taken) that may wait for its consumer, at most: past it, the lane leaves the next
#: transaction to the ordinary path, whose lines let the consumer take the text (output/lane_text.py). (Larger
#: than the unfiltered lane's CHUNK: it leaves a whole transaction, not one rows event.)
cdef Py_ssize_t MAX_HELD = 8 << 20
#: _rows: a rows event of a table the filters drop (taken, nothing written).
cdef int ROWS_DROPPED = 2


cdef class LaneFilter:
    cdef object skipper, gate, selection, keeps_table, tables, names, fde, server_ids, exclude_server_ids, keeps_gtid
    cdef long long lo, hi
    cdef dict statuses      # TABLE_MAP body bytes -> (table id, schema, table, kept) or None (not read)
    # the transaction the lane is taking: what filter_events would hold and yield of it (the fields read at each
    # transaction first, together, the arrays last)
    cdef Py_ssize_t framing, attached, kept, rows, mark, n_tx
    cdef Py_ssize_t sel_kept, sel_rows      # counted, not yet in the Selection (`flush`: at the end of each call)
    cdef Py_ssize_t attached_at     # the stream position of the first attached event waiting for its statement
    cdef bint content, removed, begin_due, saved_gtid_null
    cdef bint handed_on             # the ordinary path has read part of the transaction (hand_on)
    cdef bint lane_first            # the last transaction was kept: the next is tried by the lane before the skipper
    cdef bint dropped_some          # a TABLE_MAP of the transaction was dropped
    cdef object saved_last_xid
    cdef set excluded               # the gate's excluded_tables
    cdef Skipper cskip              # the skipper, called at C level (None: a Python one)
    # the table ids of the transaction's TABLE_MAPs, each once (its first n_tx; the list is reused), and whether
    # the filters keep each (its last TABLE_MAP says)
    cdef list tx_ids
    cdef unsigned long long tx_cids[MAX_TX_IDS]
    cdef unsigned char tx_kept[MAX_TX_IDS]
    cdef Marks saved_marks

    def __init__(self, skipper, gate, selection, lo, hi, server_ids, exclude_server_ids, keeps_table, tables, names,
                 keeps_gtid=None):
        self.skipper, self.gate, self.selection, self.keeps_gtid = skipper, gate, selection, keeps_gtid
        self.lo = -(1 << 62) if lo is None else lo
        self.hi = (1 << 62) if hi is None else hi
        self.server_ids, self.exclude_server_ids = server_ids, exclude_server_ids
        self.keeps_table, self.tables, self.names = keeps_table, tables, names
        self.fde = None
        self.statuses, self.tx_ids, self.n_tx = {}, [], 0
        self.excluded = gate.excluded_tables
        self.cskip = skipper if isinstance(skipper, Skipper) else None
        self.sel_kept = self.sel_rows = 0

    cdef Py_ssize_t skips(self, bytes buf, Py_ssize_t off, Py_ssize_t pos, object fde, bint verify,
                          str path) except? -1:
        """The skipper's call: the bytes it took from off, or minus those it wants from pos."""
        if self.cskip is not None:
            return self.cskip.skip(buf, off, pos, fde, verify, path)
        return self.skipper(buf, off, pos, fde, verify, path)

    cdef bint may_open(self, const unsigned char *e, Py_ssize_t avail, RowLane lane) except -1:
        """Whether the lane may open the transaction whose first event is at e (`avail` bytes from it in the
        window): the filters between transactions, and keeping it by its time, server id and GTID."""
        cdef long long ts = u4(e + OFS_TIMESTAMP)
        gate = self.gate
        if not gate.between or gate.dropping or ts < self.lo or ts >= self.hi:
            return False
        if self.keeps_gtid is not None and not gtid_kept(self.keeps_gtid, e, avail, lane.lens.len_checksum,
                                                         lane.lens.gtid if mysql_ok() else -1):
            return False        # (or a GTID the lane does not read: the reference path decides)
        if self.server_ids is None and not self.exclude_server_ids:
            return True
        sid = u4(e + OFS_SERVER_ID)
        return (self.server_ids is None or sid in self.server_ids) and sid not in self.exclude_server_ids

    cdef int open(self, RowLane lane) except -1:
        self.n_tx = 0
        self.framing = self.attached = self.kept = self.rows = 0
        self.content = self.removed = self.handed_on = self.dropped_some = False
        self.begin_due = lane.sql
        self.mark = lane.out.n
        if lane.marks.n_maps > MAX_MARKED // 2:
            made(lane)
        self.saved_last_xid, self.saved_gtid_null = lane.last_xid, lane.gtid_null
        restore_marks(&self.saved_marks, &lane.marks)   # (lane.recent is not changed in a call: its marks are)
        return 0

    cdef int restore(self, RowLane lane) except -1:
        """What the ordinary path is handed back of the lane's transactions, as it was when this one opened."""
        restore_marks(&lane.marks, &self.saved_marks)
        lane.last_xid, lane.gtid_null = self.saved_last_xid, self.saved_gtid_null
        return 0

    cdef int flush(self) except -1:
        """What was counted, into the Selection (RowLane._hand_text: at the end of each of its calls)."""
        if self.sel_kept:
            self.selection.kept += self.sel_kept
            self.sel_kept = 0
        if self.sel_rows:
            self.selection.rows += self.sel_rows
            self.sel_rows = 0
        return 0

    cdef int rewind(self, RowLane lane) except -1:
        """The transaction begun is left whole to the ordinary path: the lane as it was before it."""
        lane.out.n = self.mark
        lane.in_tx = lane.begin_wanted = False
        lane.tx_tables.clear()
        lane.c_table = None
        lane.gtid_event = None
        self.restore(lane)
        lane.marks.gtid.e = NULL
        if lane.keys is not None:   # (the rows it checked: the ordinary path checks them, _crow_key.pxi)
            (<KeyCheck>lane.keys).rewound()
        return 0

    cdef int hand_on(self, RowLane lane) except -1:
        """The transaction, which keeps a rows event, goes on in the ordinary path: what the filters would have
        done of the part the lane took (its counts, the table ids it excluded and kept), done now."""
        self.settle()
        self.sel_kept += self.kept
        self.sel_rows += self.rows
        self.kept = self.rows = 0
        self.attached = 0       # (given back with the rest)
        self.handed_on = True
        return 0

    cdef int settle(self) except -1:
        """The table ids of the transaction's TABLE_MAPs excluded and kept, as the filters leave them."""
        cdef Py_ssize_t i
        cdef set excluded = self.excluded
        if not self.dropped_some and not excluded:     # (all kept, none excluded before)
            return 0
        for i in range(self.n_tx):
            if self.tx_kept[i]:
                excluded.discard(self.tx_ids[i])
            else:
                excluded.add(self.tx_ids[i])
        return 0

    cdef bint table_kept(self, object table_id, bint kept) except -1:
        """A TABLE_MAP of the transaction, of table_id, kept or dropped; False where MAX_TX_IDS table ids are."""
        cdef unsigned long long cid = table_id
        cdef Py_ssize_t i
        for i in range(self.n_tx):
            if self.tx_cids[i] == cid:
                self.tx_kept[i] = kept
                return True
        if self.n_tx == MAX_TX_IDS:
            return False
        if self.n_tx < PyList_GET_SIZE(self.tx_ids):
            self.tx_ids[self.n_tx] = table_id
        else:
            self.tx_ids.append(table_id)
        self.tx_cids[self.n_tx], self.tx_kept[self.n_tx] = cid, kept
        self.n_tx += 1
        return True

    # what filter_events holds and yields (its _Held), counted
    cdef inline void frame(self) noexcept:
        if self.content:
            self.kept += 1
        else:
            self.framing += 1

    cdef object table_status(self, const unsigned char *e, uint32_t len_event, bytes body, object fde):
        """(table id, schema, table, kept, (schema, table)) of a TABLE_MAP_EVENT whose body is `body`, None where
        its body does not read."""
        if fde is not self.fde:
            self.fde = fde
            self.statuses.clear()
        got = self.statuses.get(body, False)
        if got is False:
            named = self.names(PyBytes_FromStringAndSize(<const char *>e, len_event), fde)
            got = None if named is None else (named[0], named[1], named[2],
                                              self.keeps_table is None or self.keeps_table(named[1], named[2]),
                                              (named[1], named[2]))
            if len(self.statuses) > 4096:
                self.statuses.clear()
            self.statuses[body] = got
        return got

    cdef bint dropped(self, unsigned long long table_id) noexcept:
        cdef Py_ssize_t i
        for i in range(self.n_tx - 1, -1, -1):
            if self.tx_cids[i] == table_id:
                return not self.tx_kept[i]
        return False

    cdef bint end(self, RowLane lane) except -1:
        """The XID_EVENT ends the transaction: what the filters would have done of it; whether they yield it."""
        cdef bint yields = self.content or not self.removed
        self.attached = 0
        self.frame()
        if yields:
            self.kept += self.framing
            if lane.sql:
                if self.begin_due:
                    put(&lane.out, "BEGIN;\n", 7)
                put(&lane.out, "COMMIT;\n", 8)
        self.settle()
        self.sel_kept += self.kept
        self.sel_rows += self.rows
        self.lane_first = yields
        if self.handed_on:      # (the gate saw its start, in what the lane handed back: it ends here)
            self.gate.tx.reset()
            self.gate.between = True
        return yields


cdef bint take_filtered(RowLane lane, LaneFilter f, bytes buf, const unsigned char *e, int code, uint32_t len_event,
                        Py_ssize_t at) except -1:
    """Whether the lane takes the event at e of a transaction the filters keep, as they keep or drop it."""
    cdef Py_ssize_t len_body = len_event - H - lane.lens.len_checksum, met
    cdef int got
    if code == TABLE_MAP_EVENT:
        met = body_met(lane, e + H, len_body)
        if f.keeps_table is not None or f.tables is not None:
            status = lane.met_status[met]
            if status is False:
                status = lane.met_status[met] = f.table_status(e, len_event, lane.met_bodies[met], lane.fde)
            if status is None:
                return False
            if f.tables is not None and not lane.met_learnt[met]:   # (a set: learnt once)
                f.tables.add(status[4])
                lane.met_learnt[met] = True
            if not f.table_kept(status[0], status[3]):
                return False
            if not status[3]:
                lane.tx_tables.pop(status[0], None)
                lane.c_table = None
                f.removed = f.dropped_some = True
                return True
        if not lane._map(e, len_event, at, met):
            return False
        f.frame()
        if f.content:
            f.kept += f.attached
        else:
            f.framing += f.attached
        f.attached = 0
        return True
    if is_rows(code):
        got = lane._rows(e, code, len_body, at)
        if got == ROWS_DROPPED:
            f.removed, f.attached = True, 0
        elif got:
            if not f.content:
                f.content = True
                f.kept += f.framing
                f.framing = 0
            f.kept += f.attached + 1
            f.attached = 0
            f.rows += 1
        return got != 0
    if code == XID_EVENT:
        if len_body != lane.lens.xid + 8:
            return False
        yields = f.end(lane)
        lane._take(buf, e, code, len_event, at)
        if not yields:      # (the filters drop all of it: the ordinary path never hears of it)
            f.restore(lane)
        return True
    if not lane._take(buf, e, code, len_event, at):
        return False
    if code == ANNOTATE_ROWS_EVENT or code == ROWS_QUERY_LOG_EVENT:
        f.attached += 1
    else:                   # (its GTID event, its BEGIN)
        f.frame()
    return True


cdef bint maps_dropped(RowLane lane, const unsigned char *p, Py_ssize_t off, Py_ssize_t n) except -1:
    """Whether the first TABLE_MAP_EVENT of the transaction whose first event is at off (after its GTID event and
    ANNOTATE_ROWS_EVENTs, in the window) is one the lane met last, of a table the filters drop: the skipping loop
    is asked of it first, even after a transaction they kept (in a workload whose transactions of the tables kept
    and dropped alternate, it drops the others whole, at the cost of their headers and CRC32)."""
    cdef uint32_t len_event
    cdef int code
    cdef Py_ssize_t i
    if n - off < H:
        return False
    off += u4(p + off + OFS_LEN_EVENT)
    while n - off >= H:
        code = p[off + OFS_TYPE_CODE]
        len_event = u4(p + off + OFS_LEN_EVENT)
        if <Py_ssize_t>len_event > n - off or len_event < H + lane.lens.len_checksum:
            return False
        if code == TABLE_MAP_EVENT:
            i = body_met(lane, p + off + H, len_event - H - lane.lens.len_checksum)
            status = lane.met_status[i]
            return status is not False and status is not None and not status[3]
        if code != ANNOTATE_ROWS_EVENT:
            return False
        off += len_event
    return False


cdef Py_ssize_t walk_filtered(RowLane lane, bytes buf, const unsigned char *p, Py_ssize_t off, Py_ssize_t n,
                              Py_ssize_t pos, Py_ssize_t start, bint verify, Py_ssize_t *want) except -2:
    """The filtered lane's walk from off: the offset after what it took (whole transactions, and the start of one it
    hands on); `want` set to the bytes it wants from pos in the window (a transaction that runs past it, first in the
    window)."""
    cdef LaneFilter f = lane.filt
    cdef Py_ssize_t tx_start = off, need = 0, skipped
    cdef int code
    cdef uint32_t len_event
    while True:
        if n - off < H:
            need = H
            break
        code = p[off + OFS_TYPE_CODE]
        len_event = u4(p + off + OFS_LEN_EVENT)
        if not lane.in_tx:
            # What the filters drop whole, skipped here too (at start: the lane's caller asked). After a transaction
            # they kept, the lane tries the next first (it takes one whose tables they drop all itself, writing
            # nothing of it), and asks the skipping loop only of one it may not open.
            if off != start and not (f.lane_first and opens_transaction(code, False) and
                                     (f.keeps_table is None or not maps_dropped(lane, p, off, n))):
                skipped = f.skips(buf, off, pos + off - start, lane.fde, verify, lane.path)
                if skipped < 0:     # (it wants more of the window: the reader calls again from here)
                    break
                if skipped > 0:
                    off += skipped
                    tx_start = off
                    f.lane_first = False
                    continue
            if not opens_transaction(code, False) or lane.held >= MAX_HELD or not f.may_open(p + off, n - off, lane):
                if off != start and f.lane_first and lane.held < MAX_HELD:
                    f.lane_first = False    # (the skipping loop asked at the next turn)
                    continue
                break
        elif not (code == QUERY_EVENT and lane.settled if lane.begin_wanted else in_transaction(code)):
            break
        elif f.content and lane.held >= MAX_HELD and is_rows(code) and f.attached == 0:
            if off == start:    # its text waits to be taken: the ordinary path reads this rows event
                lane.resume_at = pos + len_event
            break
        if <Py_ssize_t>len_event > n - off:
            need = len_event
            break
        if not event_at(p, off, n, lane.lens.len_checksum, verify, &code, &len_event):
            break
        if not lane.in_tx:
            if lane.keys is not None and code == GTID_EVENT:    # (a transaction --key keeps nothing of: _crow_key.pxi)
                skipped = quiet(lane, f, p, off, n, pos + off - start, verify)
                if skipped:
                    off = tx_start = skipped
                    continue
            tx_start = off
            f.open(lane)
        elif f.attached == 0 and (code == ANNOTATE_ROWS_EVENT or code == ROWS_QUERY_LOG_EVENT):
            f.attached_at = pos + off - start
        if not take_filtered(lane, f, buf, p + off, code, len_event, pos + off - start):
            break
        off += len_event
        if not lane.in_tx:
            tx_start = off
            if lane.out.n >= CHUNK:
                lane._hand_text()
        elif f.content and lane.out.n >= CHUNK:     # (the filters keep it: its text goes as it is written)
            lane._hand_text()
            f.mark = 0
    if lane.in_tx:
        if f.content:
            # What the filters would have done of what the lane took is done: the ordinary path may read the rest
            # (RowLane hands the transaction's start back when it takes nothing), or the lane goes on at its next
            # call (the reader reads no event between: it wants the event past the window, or the lane took some).
            if need and off - start + need <= MAX_EVENT:
                want[0] = off - start + need
            if f.attached:      # (not taken: given back with its statement, read again)
                off = start + f.attached_at - pos
                f.attached = 0
            f.hand_on(lane)
            return off
        f.rewind(lane)
    if need and tx_start == start and off - start + need <= MAX_EVENT:
        # (at least twice the window's bytes: a transaction read again from its start costs its size twice at most)
        want[0] = max(off - start + need, min(2 * (n - start), MAX_EVENT))
    return tx_start
