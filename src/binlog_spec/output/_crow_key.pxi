# The JSON lines of one rows event (output/_crow_text.pyx's RowLane, included there after it), and the --key check
# of the filtered lane (`rows --table DB.T --key V --format jsonl`: stream.row_filters.RowSelector's, compiled).
#
# `json_rows` writes a line per row change of a rows event, as row_text.row_json writes it. With a KeyCheck
# (RowLane's `keys`), each row's key is read first straight from its image bytes (rows/_cdecoder.pxd `key_walk`:
# the key columns' integers, no value made into a Python object) and compared with the --key values typed as the
# columns (RowSelector.key_values): a row is kept when its before or its after image matches (an UPDATE's MINIMAL
# after image without a key column has its before image's where it is the smaller, none otherwise, as RowSelector
# merges them), as RowSelector.keeps decides; the others are stepped over, nothing written. Their values are not
# written but checked (key_walk's check): a value the pure decoder might refuse (its error would end the
# reference's run) leaves the event to the ordinary path, which says what it is. `KeyCheck.make(TableDef, code,
# layout)` (row_text's) gives the KeyPlan of a layout, or None where the lane leaves the event to the reference: a
# key that is not integers, a table without a key, a --key value that does not fit its column (the reference's
# error, exit 2), a column read by a call back (rows.image_plan.key_plan says). A row whose key does not read so
# (a NULL key column, bytes short) leaves the event too.
#
# The rows checked are counted in the selector (`seen`, `kept`: the note of a run that kept none) for each rows
# event the lane takes, by the end of the lane's call; those of a transaction the filtered lane rewinds (the
# ordinary path reads all of it, and checks them) are counted off again.

from binlog_spec.rows._cdecoder cimport ImageDecoder, key_slots, key_walk


cdef class KeyPlan:
    """How the rows of one layout of a table's rows events are checked: the image decoders of
    rows.image_plan.key_plan, the key's places in each, and the wanted integers (each as its 64 bits)."""
    cdef ImageDecoder image_b, image_a
    cdef Py_ssize_t n_key
    cdef Py_ssize_t *slot_b
    cdef Py_ssize_t *slot_a
    cdef Py_ssize_t *key_a          # the after image's places (-1: the before image's value)
    cdef bint keyless_after         # an after image without the key, not merged over the before image: no match
    cdef unsigned long long *wanted
    cdef unsigned long long *got_b
    cdef unsigned long long *got_a

    def __cinit__(self, ImageDecoder image_b not None, ImageDecoder image_a, tuple key_b not None, tuple key_a,
                  tuple wanted not None):
        cdef Py_ssize_t j, n = len(key_b)
        if n == 0 or len(wanted) != n or image_b.n == 0 or \
                image_a is not None and (image_a.n == 0 or key_a is not None and len(key_a) != n):
            raise ValueError("not a key plan")
        self.image_b, self.image_a, self.n_key = image_b, image_a, n
        self.keyless_after = image_a is not None and key_a is None
        if self.keyless_after:
            key_a = (-1,) * n
        self.slot_b = key_slots(image_b, key_b)
        if image_a is not None:
            self.slot_a = key_slots(image_a, () if self.keyless_after else key_a)
        self.key_a = <Py_ssize_t *>PyMem_Malloc(n * sizeof(Py_ssize_t))
        self.wanted = <unsigned long long *>PyMem_Malloc(3 * n * sizeof(unsigned long long))
        if self.key_a == NULL or self.wanted == NULL:
            raise MemoryError()
        self.got_b, self.got_a = self.wanted + n, self.wanted + 2 * n
        for j in range(n):
            self.key_a[j] = key_a[j] if image_a is not None else -1
            self.wanted[j] = <unsigned long long>(wanted[j] & 0xFFFFFFFFFFFFFFFF)

    def __dealloc__(self):
        PyMem_Free(self.slot_b)
        PyMem_Free(self.slot_a)
        PyMem_Free(self.key_a)
        PyMem_Free(self.wanted)

    cdef int row(self, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t *row_end) except -2:
        """Whether the row at p[pos] matches (1) or not (0), the position after it in row_end; -1 where its key
        does not read, or a value might not (key_walk's check: the event is left to the ordinary path)."""
        cdef Py_ssize_t j
        cdef bint match_b = True, match_a = True
        pos = key_walk(self.image_b, p, pos, end, self.slot_b, self.got_b, True)
        if pos < 0:
            return -1
        for j in range(self.n_key):
            if self.got_b[j] != self.wanted[j]:
                match_b = False
                break
        if self.image_a is not None:
            pos = key_walk(self.image_a, p, pos, end, self.slot_a, self.got_a, True)
            if pos < 0:
                return -1
            match_a = not self.keyless_after
            for j in range(self.n_key):
                if not match_a or (self.got_b[j] if self.key_a[j] < 0 else self.got_a[j]) != self.wanted[j]:
                    match_a = False
                    break
        else:
            match_a = False
        row_end[0] = pos
        return match_b or match_a


cdef class KeyCheck:
    """The --key check of a lane: the RowSelector it counts in, and `make`, which gives the KeyPlan of a
    table's rows events of a layout (or None)."""
    cdef object selector, make
    cdef dict plans         # (TableText, rows event type code, layout) -> KeyPlan or None
    cdef object last_table, last_plan
    cdef bytes last_layout
    cdef int last_code
    cdef Py_ssize_t tx_seen, tx_kept, seen, kept     # the open transaction's; those not yet in the selector

    def __init__(self, selector, make):
        self.selector, self.make = selector, make
        self.plans = {}
        self.last_table = self.last_plan = self.last_layout = None
        self.last_code = -1
        self.tx_seen = self.tx_kept = self.seen = self.kept = 0

    cdef object plan(self, object table, int code, bytes layout):
        if table is self.last_table and code == self.last_code and layout == self.last_layout:
            return self.last_plan
        key = (table, code, layout)
        got = self.plans.get(key, False)
        if got is False:
            if len(self.plans) > 4096:
                self.plans.clear()
            got = self.plans[key] = self.make((<TableText>table).table, code, layout)
        self.last_table, self.last_code, self.last_layout, self.last_plan = table, code, layout, got
        return got

    cdef void opened(self) noexcept:
        self.tx_seen = self.tx_kept = 0

    cdef void count(self, Py_ssize_t seen, Py_ssize_t kept) noexcept:
        self.seen += seen
        self.kept += kept
        self.tx_seen += seen
        self.tx_kept += kept

    cdef void rewound(self) noexcept:
        """The transaction the lane took is left whole to the ordinary path (which checks its rows): its rows
        counted off."""
        self.count(-self.tx_seen, -self.tx_kept)
        self.tx_seen = self.tx_kept = 0

    cdef int flush(self) except -1:
        """The rows counted, into the selector (RowLane._hand_text: at the end of each of its calls)."""
        if self.seen or self.kept:
            self.selector.seen += self.seen
            self.selector.kept += self.kept
            self.seen = self.kept = 0
        return 0


cdef bint json_rows(RowLane lane, tuple images, object table, const unsigned char *e, int op,
                    const unsigned char *body, Py_ssize_t pos, Py_ssize_t len_body, Py_ssize_t at, Py_ssize_t mark,
                    bytes layout) except -1:
    """Whether the lane writes the lines of the rows event at e (its rows from body[pos]; `op` its v1 code), those of
    the rows its key check keeps; nothing written (out back to mark) when it does not."""
    cdef TextImage before = images[0], after = images[1]
    cdef KeyPlan plan = None
    cdef Py_ssize_t row_end = 0, seen = 0, kept = 0
    cdef int got = 1
    cdef bint headed = False
    if lane.keys is not None:
        plan = (<KeyCheck>lane.keys).plan(table, e[OFS_TYPE_CODE], layout)
        if plan is None:
            return False
    while pos < len_body:
        if plan is not None:
            got = plan.row(body, pos, len_body, &row_end)
            if got < 0:
                lane.out.n = mark
                return False
            seen += 1
            if not got:         # (its values checked by key_walk: the reference reads them, and drops the row)
                pos = row_end
                continue
        if not headed:
            _head(lane, table, e, at)
            headed = True
        put(&lane.out, lane.head.p, lane.head.n)
        if op == WRITE_ROWS_EVENT_V1:
            put(&lane.out, 'null,"after":', 13)
        pos = before._encode(&lane.out, body, pos, len_body)
        if pos >= 0 and op == UPDATE_ROWS_EVENT_V1:
            put(&lane.out, ',"after":', 9)
            pos = after._encode(&lane.out, body, pos, len_body)
        if pos < 0 or (plan is not None and pos != row_end):
            lane.out.n = mark
            return False
        put(&lane.out, ',"after":null}\n' if op == DELETE_ROWS_EVENT_V1 else '}\n',
            15 if op == DELETE_ROWS_EVENT_V1 else 2)
        kept += 1
    if plan is not None:
        (<KeyCheck>lane.keys).count(seen, kept)
    return True


cdef int _head(RowLane lane, object table, const unsigned char *e, Py_ssize_t at) except -1:
    """The text every line of the rows event at e begins with, in lane.head: its file, position, time, server id,
    GTID, table and operation."""
    lane.head.n = 0
    put_bytes(&lane.head, lane.file_head)
    put_u(&lane.head, at)
    put(&lane.head, ',"timestamp":"', 14)
    put_epoch(&lane.head, u4(e + OFS_TIMESTAMP))
    put(&lane.head, 'Z","server_id":', 15)
    put_u(&lane.head, u4(e + OFS_SERVER_ID))
    put(&lane.head, ',"gtid":', 8)
    lane._put_gtid(&lane.head)
    put(&lane.head, ',', 1)
    put_bytes(&lane.head, (<TableText>table).head)
    put_bytes(&lane.head, <bytes>lane.ops[e[OFS_TYPE_CODE]])
    return 0


# A transaction no row of which the --key check keeps, stepped over whole (`quiet`): where the filtered lane
# (_crow_filter.pxi's walk_filtered) may open a MariaDB transaction, it first looks whether the transaction is one
# the lane would take writing nothing: GTID_EVENT, ANNOTATE_ROWS_EVENTs, TABLE_MAP_EVENTs the lane met last
# (_crow_hand.pxi `body_met`) of tables the filters keep and whose names they learnt,
# WRITE/UPDATE/DELETE_ROWS_EVENT_V1s of those tables, of a layout met last (its shape, its TextImages, its
# KeyPlan), none of whose rows matches, and the XID_EVENT, all
# whole in the window. It then does at once what taking it event by event would have done (the filters' counts,
# the table ids kept, the rows checked, what the ordinary path may be handed back), without one Python call per
# event. Anything else in it (a row that matches, a layout not met yet, a TABLE_MAP not met) leaves the transaction
# to the lane's walk, which takes it event by event.

#: The TABLE_MAPs of a transaction `quiet` steps over, at most.
cdef enum:
    QUIET_MAPS = 8


cdef object plan_met(KeyCheck keys, object table, int code, const unsigned char *q, Py_ssize_t n):
    """The KeyPlan of a layout (`n` bytes at q) the check met last, of this table and type; None where it is not."""
    cdef bytes last = keys.last_layout
    if table is not keys.last_table or code != keys.last_code or last is None or PyBytes_GET_SIZE(last) != n or \
            memcmp(PyBytes_AS_STRING(last), q, n) != 0:
        return None
    return keys.last_plan


cdef Py_ssize_t quiet(RowLane lane, LaneFilter f, const unsigned char *p, Py_ssize_t off, Py_ssize_t n, Py_ssize_t at,
                      bint verify) except -1:
    """The offset after the transaction whose GTID_EVENT is at off (stream position at), stepped over when it is
    quiet (above); 0 where it is not."""
    cdef KeyCheck keys = lane.keys
    cdef const unsigned char *e
    cdef const unsigned char *body
    cdef const unsigned char *gtid = p + off
    cdef const unsigned char *maps_e[QUIET_MAPS]
    cdef Py_ssize_t maps_at[QUIET_MAPS]
    cdef uint32_t maps_len[QUIET_MAPS]
    cdef Py_ssize_t met[QUIET_MAPS]
    cdef unsigned long long ids[QUIET_MAPS]
    cdef Py_ssize_t n_maps = 0, events = 0, rows_events = 0, seen = 0, start = off, len_body, ofs_count, pos, i
    cdef Py_ssize_t row_end = 0
    cdef int code, got
    cdef uint32_t len_event
    cdef long key
    cdef unsigned long long table_id
    cdef KeyPlan plan
    if lane.sql or lane.undo is not None or f.tables is None and f.keeps_table is None or \
            lane.marks.n_maps > MAX_MARKED // 2 - QUIET_MAPS:
        return 0
    if not event_at(p, off, n, lane.lens.len_checksum, verify, &code, &len_event) or code != GTID_EVENT or \
            not opens_plain_transaction(gtid + H, len_event - H - lane.lens.len_checksum):
        return 0
    off += len_event
    events = 1
    while True:
        if not event_at(p, off, n, lane.lens.len_checksum, verify, &code, &len_event):
            return 0
        e = p + off
        body = e + H
        len_body = len_event - H - lane.lens.len_checksum
        events += 1
        if code == XID_EVENT:
            if len_body != lane.lens.xid + 8:
                return 0
            break
        if code == ANNOTATE_ROWS_EVENT:
            if len_body < lane.lens.annotate:
                return 0
        elif code == TABLE_MAP_EVENT:
            if n_maps == QUIET_MAPS:
                return 0
            i = body_met(lane, body, len_body)
            status, table = lane.met_status[i], lane.met_tables[i]
            if status is False or status is None or not status[3] or f.tables is not None and not lane.met_learnt[i] \
                    or table is False or table is None:
                return 0
            maps_e[n_maps], maps_at[n_maps], maps_len[n_maps], met[n_maps] = e, at + off - start, len_event, i
            ids[n_maps] = (<TableText>table).table_id
            n_maps += 1
        elif WRITE_ROWS_EVENT_V1 <= code <= DELETE_ROWS_EVENT_V1:
            key = code << 8 | lane.lens.rows[code - WRITE_ROWS_EVENT_V1]
            if key != lane.c_head_key or lane.c_ofs_count >= len_body:
                return 0
            ofs_count = lane.c_ofs_count
            shape = lane.c_shape
            if key << 8 | body[ofs_count] != lane.c_shape_key or shape is None or shape[0] != ofs_count or \
                    shape[6] > len_body:
                return 0
            table_id = le(body, <int>shape[1])
            table = None
            for i in range(n_maps - 1, -1, -1):
                if ids[i] == table_id:
                    table = lane.met_tables[met[i]]
                    break
            if table is None or shape[2] > (<TableText>table).n_columns:
                return 0
            pos = shape[6]
            got_plan = plan_met(keys, table, code, body + ofs_count, pos - ofs_count)
            if got_plan is None or not (<TableText>table).image_met(code, body + ofs_count, pos - ofs_count):
                return 0
            plan = got_plan
            while pos < len_body:
                got = plan.row(body, pos, len_body, &row_end)
                if got != 0:    # (a row kept, or one the check does not read: the lane's walk)
                    return 0
                seen += 1
                pos = row_end
            rows_events += 1
        else:
            return 0
        off += len_event
    # taken: what the lane, its filters and its key check would have done of it, event by event (what they keep
    # of one transaction for the next, and what they count)
    f.n_tx = 0
    lane.gtid_domain, lane.gtid_server = u4(gtid + H + OFS_GTID_DOMAIN_ID), u4(gtid + OFS_SERVER_ID)
    lane.gtid_seq, lane.gtid_due = le(gtid + H + OFS_GTID_SEQ_NO, 8), True
    for i in range(n_maps):
        mark_map(&lane.marks, ids[i], maps_e[i], maps_at[i], maps_len[i])
        f.table_kept((<TableText>lane.met_tables[met[i]]).table_id, True)
    f.settle()
    f.n_tx = 0
    f.sel_kept += events
    f.sel_rows += rows_events
    f.lane_first = True
    keys.seen += seen
    lane.gtid_null = True
    lane.c_table = None
    lane.gtid_event = lane.begin_event = None
    lane.marks.gtid.e = lane.marks.begin.e = NULL
    mark(&lane.marks.xid, p + off, at + off - start, len_event)
    lane.tx_tables.clear()
    return off + len_event
