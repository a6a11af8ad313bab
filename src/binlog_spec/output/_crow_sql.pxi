# The SQL statements of output/_crow_text.pyx's lane (included there): `SqlImage`, one row-image layout as the
# pieces of `sql --sql2`'s statements, each value as output/sql/text.py's `literal` writes the value the pure
# decoder makes of the same bytes, and the statements as output/sql/statements.py's builders put them
# together (INSERT of every writable column, DELETE and UPDATE by the table's row key). Its plan is made by
# output/sql/lane.py with the builders' own functions (prefixes, quoted names, member literals).

# Roles of a column in a statement (SqlImage.roles).
cdef enum:
    R_VALUE = 1         # one of INSERT's VALUES (a writable column)
    R_SET = 2           # one of UPDATE's SET (a writable column): its `name`= piece in `pieces`


cdef inline bint plain(unsigned char c) noexcept:
    """Written between quotes as it is (text.string_literal): printable ASCII but the backslash."""
    return 0x20 <= c <= 0x7e and c != 92


cdef int put_hex_upper(Buf *b, const unsigned char *s, Py_ssize_t n, Py_ssize_t pad) except -1:
    """X'...' of the bytes, then `pad` zero bytes (text.hex_literal); '' for none."""
    cdef Py_ssize_t i
    if n + pad == 0:
        return put(b, "''", 2)
    reserve(b, 2 * (n + pad) + 3)
    put(b, "X'", 2)
    for i in range(n):
        b.p[b.n], b.p[b.n + 1] = HEX_UPPER[s[i] >> 4], HEX_UPPER[s[i] & 15]
        b.n += 2
    for i in range(pad):
        put(b, "00", 2)
    return put(b, "'", 1)


cdef int put_sql_text(Buf *b, const unsigned char *s, Py_ssize_t n, int codec) except -2:
    """text.string_literal of text in `codec` (C_UTF8, C_ASCII, C_LATIN1): quoted where every byte is plain
    (quotes doubled), else _utf8mb4 X'...' of its UTF-8; -1 (nothing written) where the bytes are no valid
    UTF-8 in C_UTF8 (or not ASCII in C_ASCII)."""
    cdef Py_ssize_t i, need
    cdef bint all_plain = True
    for i in range(n):
        if not plain(s[i]):
            all_plain = False
            break
    if all_plain:
        reserve(b, 2 * n + 2)
        b.p[b.n] = 39
        b.n += 1
        for i in range(n):
            b.p[b.n] = <char>s[i]
            b.n += 1
            if s[i] == 39:
                b.p[b.n] = 39
                b.n += 1
        b.p[b.n] = 39
        b.n += 1
        return 0
    if codec == C_LATIN1:           # each byte's character in UTF-8, in hex
        reserve(b, 6 * n + 12)
        put(b, "_utf8mb4 X'", 11)
        for i in range(n):
            for need in range(LATIN1_UTF8[s[i]][3]):
                b.p[b.n] = HEX_UPPER[LATIN1_UTF8[s[i]][need] >> 4]
                b.p[b.n + 1] = HEX_UPPER[LATIN1_UTF8[s[i]][need] & 15]
                b.n += 2
        return put(b, "'", 1)
    i = 0
    while i < n:                    # strict UTF-8 (what the pure decoder decodes), ASCII in C_ASCII
        if s[i] < 0x80:
            i += 1
            continue
        need = 0 if codec == C_ASCII else utf8_sequence(s, i, n)
        if need == 0:
            return -1
        i += need
    put(b, "_utf8mb4 ", 9)
    return put_hex_upper(b, s, n, 0)


cdef int put_sql_datetime(Buf *b, const long long *f) except -2:
    """'YYYY-MM-DD HH:MM:SS[.ffffff]' of the fields f[0..6] (strftime: a year before 1000 is left, strftime does not
    pad it)."""
    if f[0] < 1000:
        return -1
    put(b, "'", 1)
    put_date(b, f)
    put(b, " ", 1)
    put_clock(b, f + 3)
    return put(b, "'", 1)


cdef class SqlImage:
    """One row-image layout as statement pieces: per present column (kind, a, b, c, obj) as TextImage's, its
    roles (R_VALUE, R_SET), its place in the row key (or -1) and its `name`= piece; `prefix` the statement's
    start (INSERT ... VALUES (, DELETE FROM ... WHERE , UPDATE ... SET )."""
    cdef Py_ssize_t n, n_null, n_key
    cdef int *kinds
    cdef int *roles
    cdef Py_ssize_t *slots
    cdef long long *params
    cdef tuple objs, pieces
    cdef public bytes prefix
    cdef Buf scratch, joined
    cdef Py_ssize_t *key_at         # per key column: (start, end) of its text in scratch
    cdef Py_ssize_t *key_col        # per key column: its place among the present columns

    def __cinit__(self, plan, bytes prefix not None, Py_ssize_t n_key):
        cdef Py_ssize_t k
        self.n, self.n_key, self.prefix = len(plan), n_key, prefix
        self.n_null = (self.n + 7) >> 3
        self.kinds = <int *>PyMem_Malloc(max(self.n, 1) * sizeof(int))
        self.roles = <int *>PyMem_Malloc(max(self.n, 1) * sizeof(int))
        self.slots = <Py_ssize_t *>PyMem_Malloc(max(self.n, 1) * sizeof(Py_ssize_t))
        self.params = <long long *>PyMem_Malloc(max(self.n, 1) * 3 * sizeof(long long))
        self.key_at = <Py_ssize_t *>PyMem_Malloc(max(n_key, 1) * 2 * sizeof(Py_ssize_t))
        self.key_col = <Py_ssize_t *>PyMem_Malloc(max(n_key, 1) * sizeof(Py_ssize_t))
        self.scratch.p, self.scratch.n, self.scratch.cap = NULL, 0, 0
        self.joined.p, self.joined.n, self.joined.cap = NULL, 0, 0
        if not (self.kinds and self.roles and self.slots and self.params and self.key_at and self.key_col):
            raise MemoryError()
        objs, pieces = [], []
        for k, (kind, a, b, c, obj, role, slot, piece) in enumerate(plan):
            if kind not in KINDS.values() or not -1 <= slot < n_key or type(piece) is not bytes:
                raise ValueError(f"not a statement plan: {kind!r}")
            self.kinds[k], self.roles[k], self.slots[k] = kind, role, slot
            if slot >= 0:
                self.key_col[slot] = k
            self.params[3 * k], self.params[3 * k + 1], self.params[3 * k + 2] = a, b, c
            objs.append(obj)
            pieces.append(piece)
        self.objs, self.pieces = tuple(objs), tuple(pieces)

    def __dealloc__(self):
        PyMem_Free(self.kinds)
        PyMem_Free(self.roles)
        PyMem_Free(self.slots)
        PyMem_Free(self.params)
        PyMem_Free(self.key_at)
        PyMem_Free(self.key_col)
        PyMem_Free(self.scratch.p)
        PyMem_Free(self.joined.p)

    def statement(self, int op, bytes buf not None, Py_ssize_t pos, SqlImage after=None):
        """(the statement, position after its images) of op 0 INSERT, 1 DELETE, 2 UPDATE (`after`: the after
        image's layout) of the images at buf[pos], or None where the lane leaves them."""
        cdef Buf b
        b.p, b.n, b.cap = NULL, 0, 0
        try:
            end = self.write(&b, op, <const unsigned char *>PyBytes_AS_STRING(buf), pos, len(buf), after)
            return None if end < 0 else (PyUnicode_DecodeUTF8(b.p, b.n, NULL), end)
        finally:
            PyMem_Free(b.p)

    cdef Py_ssize_t write(self, Buf *b, int op, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                          SqlImage after) except -2:
        """The statement of the images at p[pos] (op: 0 INSERT, 1 DELETE, 2 UPDATE): position after them, or -1."""
        cdef Py_ssize_t mark = b.n, k
        if op == 2:
            pos = self._walk(NULL, 0, p, pos, end)      # the row key of the before image, in scratch
            if pos < 0:
                return -1
            put_bytes(b, after.prefix)
            pos = after._walk(b, R_SET, p, pos, end)
        elif op == 1:
            pos = self._walk(NULL, 0, p, pos, end)
        else:
            put_bytes(b, self.prefix)
            pos = self._walk(b, R_VALUE, p, pos, end)
        if pos < 0:
            b.n = mark
            return -1
        if op == 0:
            put(b, ");", 2)
            return pos
        if op == 1:
            put_bytes(b, self.prefix)
        else:
            put(b, " WHERE ", 7)
        for k in range(self.n_key):
            if k:
                put(b, " AND ", 5)
            put_bytes(b, <bytes>self.pieces[self.key_col[k]])
            put(b, self.scratch.p + self.key_at[2 * k], self.key_at[2 * k + 1] - self.key_at[2 * k])
        put(b, ";", 1)
        return pos

    cdef Py_ssize_t _walk(self, Buf *b, int role, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end) except -2:
        """Every value of the image at p[pos] read as the pure decoder reads it; those of `role` written to b
        (', '-separated, SET's with their `name`= piece), those of the row key to scratch (role 0); the
        position after the image, or -1 (a key column NULL or missing, a value the lane leaves)."""
        cdef Py_ssize_t nulls = pos, k, found = 0
        cdef bint first = True
        cdef Buf *to
        self.scratch.n = 0
        if pos < 0 or pos + self.n_null > end:
            return -1
        pos += self.n_null
        for k in range(self.n):
            if role == 0:
                to = &self.scratch
                if self.slots[k] >= 0:
                    self.key_at[2 * self.slots[k]] = self.scratch.n
                    found += 1
            elif self.roles[k] & role:
                to = b
                if not first:
                    put(b, ", ", 2)
                first = False
                if role == R_SET:
                    put_bytes(b, <bytes>self.pieces[k])
            else:
                to = &self.scratch
            if p[nulls + (k >> 3)] >> (k & 7) & 1:
                if role == 0 and self.slots[k] >= 0:
                    return -1               # a NULL key: the builders match the whole image
                put(to, "NULL", 4)
            else:
                pos = self._literal(to, k, p, pos, end)
                if pos < 0:
                    return -1
            if role == 0 and self.slots[k] >= 0:
                self.key_at[2 * self.slots[k] + 1] = self.scratch.n
            elif to == &self.scratch and role != 0:
                self.scratch.n = 0
        if role == 0 and found != self.n_key:
            return -1
        if role != 0 and first:
            return -1                       # nothing to write (the builders' text would be odd): left
        return pos

    cdef Py_ssize_t _literal(self, Buf *b, Py_ssize_t k, const unsigned char *p, Py_ssize_t pos,
                             Py_ssize_t end) except -2:
        """text.literal of column k's value at p[pos], written to b: the position after it, or -1."""
        cdef int kind = self.kinds[k], t
        cdef const long long *prm = self.params + 3 * k
        cdef Py_ssize_t size, length, start, i
        cdef unsigned long long u
        cdef long long f[7]
        cdef bint negative
        cdef char digits[72]
        cdef double v
        cdef tuple texts
        cdef bint first = True
        size = prm[2] if K_DECIMAL <= kind <= K_SET else (prm[0] if kind == K_INT or kind == K_TEXT else 0)
        if kind == K_TEXT or kind == K_GEOMETRY:
            size = prm[0]
            if pos + size > end:
                return -1
            length = <Py_ssize_t>le(p + pos, <int>size)
            start = pos + size
            if length > end - start:
                return -1
            pos = start + length
            if kind == K_GEOMETRY:
                if length < 4:
                    return -1
                put(b, "ST_GeomFromWKB(", 15)
                put_hex_upper(b, p + start + 4, length - 4, 0)
                put(b, ", ", 2)
                put_u(b, le(p + start, 4))
                put(b, ")", 1)
            elif prm[1] == C_BYTES:
                put_hex_upper(b, p + start, length, max(prm[2] - length, 0))
            elif put_sql_text(b, p + start, length, prm[1]) < 0:
                return -1
            return pos
        if kind == K_FLOAT or kind == K_DOUBLE:
            size = 4 if kind == K_FLOAT else 8
        elif kind == K_YEAR:
            size = 1
        elif kind == K_DATE:
            size = 3
        elif kind == K_DATETIME2:
            size = 5 + (prm[0] + 1) // 2
        elif kind == K_TIMESTAMP2:
            size = 4 + (prm[0] + 1) // 2
        if pos + size > end:
            return -1
        if kind == K_INT or kind == K_ENUM or kind == K_SET or kind == K_BIT:
            u = le(p + pos, <int>size) if kind != K_BIT else be(p + pos, <int>size)
            if kind == K_INT:
                if prm[1] and size < 8 and u >> (8 * size - 1):
                    put_i(b, <long long>u - (<long long>1 << (8 * size)))
                elif prm[1]:
                    put_i(b, <long long>u)
                else:
                    put_u(b, u)
            elif kind == K_BIT:             # b'...' in the column's width (prm[0])
                if prm[0] <= 0 or prm[0] > 64 or (prm[0] < 64 and u >> prm[0]):
                    return -1
                put(b, "b'", 2)
                for i in range(prm[0] - 1, -1, -1):
                    put(b, "1" if u >> i & 1 else "0", 1)
                put(b, "'", 1)
            elif prm[1] < 0:
                put_u(b, u)
            elif kind == K_ENUM:
                if u > <unsigned long long>prm[1]:
                    return -1
                put_bytes(b, <bytes>(<tuple>self.objs[k])[u])
            else:
                if prm[1] < 64 and u >> prm[1]:
                    return -1
                texts = self.objs[k]        # the members' UTF-8, in the column's order
                self.joined.n = 0
                for i in range(min(prm[1], 64)):
                    if u >> i & 1:
                        if not first:
                            put(&self.joined, ",", 1)
                        first = False
                        put_bytes(&self.joined, <bytes>texts[i])
                if put_sql_text(b, <const unsigned char *>self.joined.p, self.joined.n, C_UTF8) < 0:
                    return -1
            return pos + size
        if kind == K_FLOAT or kind == K_DOUBLE:
            v = PyFloat_Unpack4(<const char *>p + pos, 1) if kind == K_FLOAT else PyFloat_Unpack8(<const char *>p + pos, 1)
            if v != v or v - v != 0.0:
                return -1                   # (no SQL literal: the builders say so)
            put_float(b, v)
        elif kind == K_YEAR:
            put_u(b, 1900 + p[pos] if p[pos] else 0)
        elif kind == K_DATE:
            if not date_fields(p + pos, f):
                return -1
            put(b, "'", 1)
            put_date(b, f)
            put(b, "'", 1)
        elif kind == K_DATETIME2 or kind == K_TIMESTAMP2:
            if not (datetime2_fields(p + pos, <int>prm[0], f) if kind == K_DATETIME2
                    else timestamp2_fields(p + pos, <int>prm[0], f)) or put_sql_datetime(b, f) < 0:
                return -1
        elif kind == K_DECIMAL:
            t = decimal_text(p + pos, <int>prm[0], <int>prm[1], digits)
            if t < 0:
                return -1
            put(b, digits, t)
        elif kind == K_TIME2:
            if not time2_fields(p + pos, <int>prm[0], f):
                return -1
            negative = f[0] and (f[1] or f[2] or f[3] or f[4])      # (a timedelta of 0 has no sign)
            put(b, "'-" if negative else "'", 2 if negative else 1)
            put_clock(b, f + 1)
            put(b, "'", 1)
        else:
            return -1
        return pos + size
