# The tables of output/_crow_text.pyx's RowLane (included there, before it).

cdef class TableText:
    """A TABLE_MAP's table as the lane writes it: its id, its column count, `head` (the line's JSON text of
    schema and table: '"schema":...,"table":...') and, by `image`, the TextImages of its rows events' layouts."""
    cdef public object table_id, table, head, images, make
    cdef public Py_ssize_t n_columns

    def __init__(self, table_id, n_columns, head, table, make):
        self.table_id, self.n_columns, self.head, self.table, self.make = table_id, n_columns, head, table, make
        self.images = {}

    cdef object image(self, int code, bytes layout):
        """(before TextImage, after TextImage or None) of a rows event whose count and bitmaps are `layout`, or
        None where the lane leaves such events."""
        key = (code, layout)
        got = self.images.get(key, False)
        if got is False:
            got = self.images[key] = self.make(self.table, code, layout)
        return got
