# The tables of output/_crow_text.pyx's RowLane (included there, before it).

cdef class TableText:
    """A TABLE_MAP's table as the lane writes it: its id, its column count, `head` (the line's JSON text of
    schema and table: '"schema":...,"table":...') and, by `image`, the TextImages of its rows events' layouts."""
    cdef public object table_id, table, head, images, make
    cdef public Py_ssize_t n_columns
    cdef int last_code
    cdef bytes last_layout
    cdef object last_image

    def __init__(self, table_id, n_columns, head, table, make):
        self.table_id, self.n_columns, self.head, self.table, self.make = table_id, n_columns, head, table, make
        self.images = {}
        self.last_code, self.last_layout, self.last_image = -1, None, None

    cdef object image(self, int code, bytes layout):
        """(before TextImage, after TextImage or None) of a rows event whose count and bitmaps are `layout`, or
        None where the lane leaves such events."""
        if code == self.last_code and layout == self.last_layout:
            return self.last_image
        key = (code, layout)
        got = self.images.get(key, False)
        if got is False:
            got = self.images[key] = self.make(self.table, code, layout)
        self.last_code, self.last_layout, self.last_image = code, layout, got
        return got

    cdef bint image_met(self, int code, const unsigned char *q, Py_ssize_t n) noexcept:
        """Whether `image` gave the TextImages of this layout (`n` bytes at q) last."""
        return code == self.last_code and self.last_image is not None and \
            PyBytes_GET_SIZE(self.last_layout) == n and memcmp(PyBytes_AS_STRING(self.last_layout), q, n) == 0


# What the ordinary path may need of the events RowLane takes (the open transaction's GTID event and BEGIN, the last
# XID_EVENT, the last TABLE_MAP_EVENT of each table id: `hand_back` replays them) is marked while the reader's
# window is there, no object made per event, and made into (position, event bytes) once at the end of the lane's
# call (_crow_hand.pxi `made`).

#: The table ids whose TABLE_MAPs one call marks at most (past it, the lane leaves a TABLE_MAP to the ordinary
#: path); past half of it, what is marked is made at the next transaction's start.
cdef enum:
    MAX_MARKED = 64
    MET = 8             # (RowLane's TABLE_MAP bodies met last)
    MAX_TX_IDS = 64     # (the table ids of a transaction LaneFilter takes, at most)

cdef struct Mark:
    const unsigned char *e      # the event in the window (NULL: none marked)
    Py_ssize_t at
    uint32_t len

cdef struct Marks:
    Mark gtid, begin, xid
    Py_ssize_t n_maps
    unsigned long long map_ids[MAX_MARKED]
    Mark maps[MAX_MARKED]


cdef inline void unmark(Marks *m) noexcept:
    m.gtid.e = m.begin.e = m.xid.e = NULL
    m.n_maps = 0


cdef inline void mark(Mark *k, const unsigned char *e, Py_ssize_t at, uint32_t len_event) noexcept:
    k.e, k.at, k.len = e, at, len_event


cdef inline bint mark_map(Marks *m, unsigned long long table_id, const unsigned char *e, Py_ssize_t at,
                          uint32_t len_event) noexcept:
    """The TABLE_MAP at e marked as its table id's last; False where MAX_MARKED table ids are."""
    cdef Py_ssize_t i
    for i in range(m.n_maps):
        if m.map_ids[i] == table_id:
            mark(&m.maps[i], e, at, len_event)
            return True
    if m.n_maps == MAX_MARKED:
        return False
    m.map_ids[m.n_maps] = table_id
    mark(&m.maps[m.n_maps], e, at, len_event)
    m.n_maps += 1
    return True


cdef inline void restore_marks(Marks *m, const Marks *saved) noexcept:
    """The TABLE_MAPs and the XID_EVENT marked as they were (a transaction the ordinary path reads again, or never
    hears of: LaneFilter)."""
    m.xid = saved.xid
    m.n_maps = saved.n_maps
    memcpy(m.map_ids, saved.map_ids, saved.n_maps * sizeof(unsigned long long))
    memcpy(m.maps, saved.maps, saved.n_maps * sizeof(Mark))


cdef inline object marked(const Mark *k):
    return (k.at, PyBytes_FromStringAndSize(<const char *>k.e, k.len))
