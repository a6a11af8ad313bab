# The rollback mode of output/_crow_text.pyx's SQL lane (included there): `Undo` writes the undo statements of
# the transactions the lane takes (SqlImage's plans made by output/sql/lane.py with the images swapped: a
# WRITE row's image is a DELETE's, a DELETE row's an INSERT's, an UPDATE row's before image the SET and its
# after image the WHERE) and hands them, reversed, to the rollback's Spool (output/rollback/spool.py), the
# spool script.rollback reads back: what the reference writes, statements last first.
#
# The statements of the lane's transactions go to the lane's buffer one a line, each transaction between a
# "COMMIT;" line at its start and a "BEGIN;" line at its end: the lines of a run of whole transactions read
# last first are their undo, transactions last first, each framed by BEGIN; and COMMIT;. Such a run goes to
# the spool as one BLOCK record, a spool transaction of its own (Spool.add_block), its lines already reversed.
# A transaction still open when the buffer is handed on (the buffer is full, or the lane gives the reader an
# event to read, which the reference may add to it) becomes a spool transaction as the reference makes them
# (Spool.begin): its statements, reversed, are records of it, and script.rollback frames them.

cdef extern from "string.h":
    void *memrchr(const void *s, int c, size_t n)


cdef int put_reversed(Buf *b, const char *s, Py_ssize_t n) except -1:
    """The newline-ended lines of s[:n] last first, joined by newlines (no newline after the last)."""
    cdef Py_ssize_t end = n - 1, start
    cdef const char *q
    reserve(b, n)
    while end >= 0:
        q = <const char *>memrchr(s, 10, end)
        start = 0 if q == NULL else q - s + 1
        put(b, s + start, end - start)
        if start:
            put(b, "\n", 1)
        end = start - 1
    return 0


cdef class Undo:
    """The lane's rollback state: the spool, where the open transaction starts in the buffer (its "COMMIT;" line)
    and whether it is already a spool transaction of its own (`framed`); and the tally the spool keeps of what
    its records restore (output/rollback/summary.py): the rows per label of the buffer's statements (`rows`, the
    open transaction's also in `open_rows`: label, rows, ...), its whole transactions with rows (`txs`), the first
    and last of them and the open one (`first`, `last`, `open_tx`: (GTID JSON, file, position, timestamp))."""
    cdef object spool
    cdef Py_ssize_t tx_at, txs
    cdef bint framed
    cdef Buf rev
    cdef dict rows
    cdef list open_rows
    cdef object first, last, open_tx

    def __cinit__(self, spool):
        self.spool = spool
        self.tx_at, self.framed, self.txs = 0, False, 0
        self.rev.p, self.rev.n, self.rev.cap = NULL, 0, 0
        self.rows, self.open_rows = {}, []
        self.first = self.last = self.open_tx = None

    def __dealloc__(self):
        PyMem_Free(self.rev.p)

    cdef int opens(self, Buf *out, object tx) except -1:
        """A transaction opens (its GTID event taken; `tx`: where it is)."""
        self.tx_at, self.framed, self.open_tx = out.n, False, tx
        if self.open_rows:
            self.open_rows = []
        return put(out, "COMMIT;\n", 8)

    cdef int commits(self, Buf *out) except -1:
        """The open transaction ends (its XID_EVENT taken)."""
        if self.framed:
            self._add(out.p, out.n, False)
            out.n = 0
            self.framed = False
        elif out.n == self.tx_at + 8:       # no row: nothing to undo, left out (Spool.last_first)
            out.n = self.tx_at
        else:
            put(out, "BEGIN;\n", 7)
            self.txs += 1
            if self.first is None:
                self.first = self.open_tx
            self.last = self.open_tx
        if self.open_rows:
            self.open_rows = []
        return 0

    cdef int flush(self, Buf *out, bint in_tx) except -1:
        """The buffer to the spool: the whole transactions as a BLOCK, the open one as records of its own."""
        cdef Py_ssize_t j
        if in_tx and not self.framed:
            opened = {}         # (the open transaction's rows, out of the whole ones')
            for j in range(0, len(self.open_rows), 2):
                label, n = self.open_rows[j], self.open_rows[j + 1]
                opened[label] = opened.get(label, 0) + n
                self.rows[label] -= n
            self._add(out.p, self.tx_at, True)
            self.spool.begin(self.open_tx)
            self.framed = True
            self.rows = opened
            self._add(out.p + self.tx_at + 8, out.n - self.tx_at - 8, False)
        else:
            self._add(out.p, out.n, not self.framed)
        self.open_rows = []
        out.n = self.tx_at = 0
        return 0

    cdef int _add(self, const char *s, Py_ssize_t n, bint block) except -1:
        """The lines of s[:n], reversed, to the spool with their tally, which starts again."""
        rows = {label: k for label, k in self.rows.items() if k} if self.rows else None
        first, last, txs = self.first, self.last, self.txs
        self.rows, self.first, self.last, self.txs = {}, None, None, 0
        if n <= 0:
            return 0
        self.rev.n = 0
        put_reversed(&self.rev, s, n)
        data = PyBytes_FromStringAndSize(self.rev.p, self.rev.n)
        if block:
            self.spool.add_block(data, rows, first, last, txs)
        else:
            self.spool.add_rows(data, rows)
        return 0

    cdef bint statements(self, Buf *out, tuple images, int code, const unsigned char *p, Py_ssize_t pos,
                         Py_ssize_t end, Py_ssize_t mark) except -1:
        """The undo statements of a rows event's rows (the images of output/sql/lane.py's rollback plans), one a
        line in the rows' order; nothing written when the lane leaves one."""
        cdef SqlImage first = images[0], second = images[1]
        cdef int op = 1 if code == WRITE_ROWS_EVENT_V1 else (0 if code == DELETE_ROWS_EVENT_V1 else 2)
        cdef Py_ssize_t n = 0
        while pos < end:
            pos = first.write(out, op, p, pos, end, None) if op != 2 else undo_update(out, first, second, p, pos, end)
            if pos < 0:
                out.n = mark
                return False
            put(out, "\n", 1)
            n += 1
        if n:       # (the tally: images[2] is the rows' label, output/sql/lane.py's)
            label = images[2]
            self.rows[label] = self.rows.get(label, 0) + n
            self.open_rows.append(label)
            self.open_rows.append(n)
        return True


cdef Py_ssize_t undo_update(Buf *b, SqlImage before, SqlImage after, const unsigned char *p, Py_ssize_t pos,
                            Py_ssize_t end) except -2:
    """The UPDATE that undoes an UPDATE row: SET the before image (`before`: its columns as SET's), WHERE the
    after image's row key (`after`: keyed); the position after both images, or -1 (nothing written)."""
    cdef Py_ssize_t mark = b.n, k
    put_bytes(b, before.prefix)
    pos = before._walk(b, R_SET, p, pos, end)
    if pos >= 0:
        pos = after._walk(NULL, 0, p, pos, end)
    if pos < 0:
        b.n = mark
        return -1
    put(b, " WHERE ", 7)
    for k in range(after.n_key):
        if k:
            put(b, " AND ", 5)
        put_bytes(b, <bytes>after.pieces[after.key_col[k]])
        put(b, after.scratch.p + after.key_at[2 * k], after.key_at[2 * k + 1] - after.key_at[2 * k])
    put(b, ";", 1)
    return pos
