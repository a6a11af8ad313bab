# The window mode of analysis/_ccollector.pyx's Sink (included there, after it): whether the transaction at a
# GTID_EVENT can be taken whole (`sink_whole`), whether an event of a transaction the filters drop is skipped
# (`sink_skippable`), whether the filters keep a transaction by its server id and GTID (`sink_kept`).

cdef Py_ssize_t sink_whole(Sink self, const unsigned char* p, Py_ssize_t at, Py_ssize_t n, int len_checksum,
                           bint verify, Py_ssize_t pos_at) except? -1:
    """The transaction's bytes when the loop takes the transaction whose GTID_EVENT is at `at` whole, to its
    XID_EVENT, in the window: each event one it takes (the checks of __call__, _table_map and _rows, its CRC32
    checked), with no effect; 0 when it does not; minus the bytes it needs from `at` when the transaction runs
    past the window (the next call goes on from where this one stopped: `pos_at`, its stream position)."""
    cdef int code
    cdef uint32_t len_event
    cdef Py_ssize_t len_body, want
    cdef const unsigned char* body
    cdef Py_ssize_t off = at + <Py_ssize_t>_u4(p + at + OFS_LEN_EVENT)
    overlay = self.overlay
    counted = self.counted
    if pos_at == self.whole_from and self.whole_done > 0 and at + self.whole_done <= n:
        off = at + self.whole_done
    else:
        overlay.clear()
        counted.clear()
    while True:
        if not event_at(p, off, n, len_checksum, verify, &code, &len_event):
            if n - off >= H and <Py_ssize_t>_u4(p + off + OFS_LEN_EVENT) <= n - off:
                return 0        # a whole event the loop does not take (its CRC32, its size, its type)
            want = 2 * (n - at) + (<Py_ssize_t>_u4(p + off + OFS_LEN_EVENT) if n - off >= H else 0)
            if want > MAX_WHOLE:
                return 0
            self.whole_at, self.whole_done = pos_at, off - at
            return -want
        body = p + off + H
        len_body = len_event - H - len_checksum
        if code == ANNOTATE_ROWS_EVENT:
            pass
        elif code == TABLE_MAP_EVENT:
            got = self._known_map(PyBytes_FromStringAndSize(<const char*>body, len_body))
            if got is None:
                return 0
            overlay[got[0].table_id] = got
        elif code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
            got = self._count(code, self.lens.rows[code - WRITE_ROWS_EVENT_V1],
                              PyBytes_FromStringAndSize(<const char*>body, len_body), overlay, True)
            if got is None:
                return 0
            counted.append(got)
        elif code == XID_EVENT:
            return off + len_event - at if len_body == self.lens.xid + 8 else 0
        else:
            return 0
        off += len_event

cdef bint sink_skippable(Sink self, int code, const unsigned char* body, Py_ssize_t len_body, const unsigned char* e,
                     uint32_t len_event, str path, Py_ssize_t at) except -1:
    """Whether an event of a transaction the filters drop is skipped: one the reference path reads
    without a fault (what __call__ takes, its TABLE_MAPs checked by parsing them once)."""
    if code == ANNOTATE_ROWS_EVENT:
        return True
    if code == TABLE_MAP_EVENT:
        raw = PyBytes_FromStringAndSize(<const char*>body, len_body)
        got = self._known_map(raw)
        if got is not None:
            table = got[0]
        else:
            schema = self.schema
            entry = self.skip_maps.get(raw)
            if entry is None or entry[1] != schema.generation or entry[2] != schema.server_collation:
                table = self.skip_table(PyBytes_FromStringAndSize(<const char*>e, len_event), self.fde, path, at)
                if len(self.skip_maps) > 4096:
                    self.skip_maps.clear()
                self.skip_maps[raw] = (table, schema.generation, schema.server_collation)
            else:
                table = entry[0]
            if table is None:
                return False
        self.drop_maps[table.table_id] = (table, None)
        return True
    if code == WRITE_ROWS_EVENT_V1 or code == UPDATE_ROWS_EVENT_V1 or code == DELETE_ROWS_EVENT_V1:
        return self._count(code, self.lens.rows[code - WRITE_ROWS_EVENT_V1],
                           PyBytes_FromStringAndSize(<const char*>body, len_body), self.drop_maps,
                           False) is not None
    if code == XID_EVENT:
        return len_body == self.lens.xid + 8
    return False


cdef bint sink_kept(Sink self, const unsigned char* e, Py_ssize_t avail, int len_checksum) except -1:
    """Whether the filters keep the transaction whose GTID_EVENT is at e (`avail` bytes from it in the window) by its
    server id and its GTID (a GTID that does not read there: not kept, the skipper or the reference path decides)."""
    sid = _u4(e + OFS_SERVER_ID)
    if not ((self.server_ids is None or sid in self.server_ids) and sid not in self.exclude_server_ids):
        return False
    return self.keeps_gtid is None or gtid_kept(self.keeps_gtid, e, avail, len_checksum, -1)
