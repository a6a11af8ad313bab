# What the ordinary path is handed back of what output/_crow_text.pyx's RowLane took, what the lane learns of
# the events the ordinary path reads, and the TABLE_MAP bodies it met last (included there, after RowLane).


cdef int made(RowLane lane) except -1:
    """What is marked (Marks) made into the objects `hand_back` replays, while the window is there."""
    cdef Marks *m = &lane.marks
    cdef Py_ssize_t i
    if m.gtid.e != NULL:
        lane.gtid_event = marked(&m.gtid)
    if m.begin.e != NULL:
        lane.begin_event = marked(&m.begin)
    if m.xid.e != NULL:
        lane.last_xid = marked(&m.xid)
    for i in range(m.n_maps):
        lane.recent[m.map_ids[i]] = marked(&m.maps[i])
    unmark(m)
    return 0


cdef int hand_back(RowLane lane) except -1:
    """What the ordinary path must read before its next event, in file order."""
    events = list(lane.recent.values())
    if lane.in_tx and lane.gtid_event is not None:
        events.append(lane.gtid_event)
    elif lane.last_xid is not None:
        events.append(lane.last_xid)
    if lane.in_tx and lane.begin_event is not None:     # (a rollback's, the filters': where it starts)
        events.append(lane.begin_event)
    if events:
        events.sort(key=_position)
        lane.replay = [(lane.path, at, raw, lane.fde) for at, raw in events]
    lane.handed = True
    return 0


cdef int learn(RowLane lane, int what) except -1:
    """What the lane knows of the ordinary path's state once it read an event (what `learns` said of it)."""
    if what == LEARN_GTID_NULL:
        lane.gtid_null = True
    elif what == LEARN_GTID_UNKNOWN:
        lane.gtid_null = False
    elif what == LEARN_SETTLED:
        lane.settled = True
    elif what == LEARN_FDE:
        lane.settled = lane.gtid_null = False
    return 0


cdef int learns(RowLane lane, bytes buf, const unsigned char *p, Py_ssize_t off, Py_ssize_t n, bint verify) except -1:
    """What the ordinary path learns when it reads the event at off (its header in the window), which the
    lane leaves to it (LEARN_*)."""
    cdef int code = p[off + OFS_TYPE_CODE]
    cdef uint32_t len_event = 0
    cdef bint sound
    cdef Py_ssize_t len_body
    if code == FORMAT_DESCRIPTION_EVENT:
        return LEARN_FDE
    if code == GTID_LOG_EVENT or code == GTID_TAGGED_LOG_EVENT or code == GTID_EVENT or \
            code == TRANSACTION_PAYLOAD_EVENT:
        return LEARN_GTID_UNKNOWN
    if not (code == XID_EVENT or code == ANONYMOUS_GTID_LOG_EVENT or code == QUERY_EVENT and not lane.settled):
        return LEARN_NOTHING
    sound = event_at(p, off, n, lane.lens.len_checksum, verify, &code, &len_event)
    len_body = <Py_ssize_t>len_event - H - lane.lens.len_checksum
    if code == QUERY_EVENT:
        if not sound or \
                lane.tables.reads(PyBytes_FromStringAndSize(<const char *>p + off, len_event), lane.fde) is None:
            return LEARN_NOTHING
        return LEARN_SETTLED
    if code == XID_EVENT:
        return LEARN_GTID_NULL if sound and len_body == lane.lens.xid + 8 else LEARN_GTID_UNKNOWN
    return LEARN_GTID_NULL if sound and mysql_ok() and \
        mysql_gtid_reads(p + off + H, len_body, lane.lens.anonymous) else LEARN_GTID_UNKNOWN


cdef int forget_met(RowLane lane) except -1:
    lane.met_bodies, lane.met_tables, lane.met_status, lane.met_next = [], [], [], 0
    return 0


cdef Py_ssize_t body_met(RowLane lane, const unsigned char *body, Py_ssize_t len_body) except -1:
    """The place of a TABLE_MAP body among those met last (entered where it is not: nothing known of it)."""
    cdef Py_ssize_t i, n = PyList_GET_SIZE(lane.met_bodies)
    cdef bytes b
    for i in range(n):
        b = <bytes>lane.met_bodies[i]
        if PyBytes_GET_SIZE(b) == len_body and memcmp(PyBytes_AS_STRING(b), body, len_body) == 0:
            return i
    got = PyBytes_FromStringAndSize(<const char *>body, len_body)
    if n < MET:
        lane.met_bodies.append(got)
        lane.met_tables.append(False)
        lane.met_status.append(False)
        i = n
    else:
        i = lane.met_next
        lane.met_next = (i + 1) % MET
        lane.met_bodies[i], lane.met_tables[i], lane.met_status[i] = got, False, False
    lane.met_learnt[i] = False
    return i
