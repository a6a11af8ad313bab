# The values of output/_crow_text.pyx (included there): a growable text buffer, its writers of numbers, times and
# JSON strings, and `TextImage`, the JSON text of one row-image layout, each value as output/jsonenc.py writes
# the value the pure decoder makes of the same bytes (rows/values.py, rows/scalars.py; their compiled twins,
# rows/_cscalars.pxd, give the digits, parts and dates written here).

# Kinds, by rows.image_plan's kind names in KINDS (the others have no text form here).
cdef enum:
    K_INT = 1           # a: size 1, 2, 3, 4 or 8; b: signed
    K_YEAR = 2
    K_FLOAT = 3
    K_DOUBLE = 4
    K_TEXT = 5          # a: length prefix 1-4; b: C_UTF8, C_ASCII, C_LATIN1 or C_BYTES; c: BINARY(c) padding
    K_DATE = 6
    K_DATETIME2 = 7     # a: fsp
    K_TIMESTAMP2 = 8    # a: fsp
    K_DECIMAL = 9       # a: precision; b: scale; c: size
    K_TIME2 = 10        # a: fsp; c: size
    K_BIT = 11          # c: size
    K_ENUM = 12         # b: members (-1: unknown, the index then); c: size; obj: the members' JSON texts
    K_SET = 13          # b: members (-1: unknown, the bitmask then); c: size; obj: (JSON texts, bits sorted)
    K_GEOMETRY = 14     # a: length prefix 1-4

cdef enum:
    C_BYTES = 0
    C_UTF8 = 1
    C_ASCII = 2         # ASCII: a byte past 0x7f is no text here (-1)
    C_LATIN1 = 3        # MySQL's latin1, each byte one character (LATIN1_UTF8)

KINDS = {"int": K_INT, "year": K_YEAR, "float": K_FLOAT, "double": K_DOUBLE, "text": K_TEXT, "date": K_DATE,
         "datetime2": K_DATETIME2, "timestamp2": K_TIMESTAMP2, "decimal": K_DECIMAL, "time2": K_TIME2,
         "bit": K_BIT, "enum": K_ENUM, "set": K_SET, "geometry": K_GEOMETRY}
CODECS = {"bytes": C_BYTES, "utf8": C_UTF8, "ascii": C_ASCII, "latin1": C_LATIN1}

#: MySQL's latin1 byte -> its character in UTF-8 ([3]: the length), made from the pure decoder's own table
#: (rows.charsets._mysql_latin1: cp1252, the five bytes it leaves undefined as C1 controls).
cdef unsigned char LATIN1_UTF8[256][4]
for _b in range(256):
    _u = _mysql_latin1(bytes([_b])).encode("utf-8")
    assert 1 <= len(_u) <= 3
    LATIN1_UTF8[_b][0], LATIN1_UTF8[_b][1], LATIN1_UTF8[_b][2] = (_u + b"\0\0")[:3]
    LATIN1_UTF8[_b][3] = len(_u)

cdef Py_ssize_t H = LEN_EVENT_HEADER
#: The GTID and XID layouts checked against the generated parser (False: the lane takes no event).
LAYOUTS_AGREE = gtid_xid_reads_agree()
#: An event larger than this is read the ordinary way (the lane asks no more of the reader's window).
cdef Py_ssize_t MAX_EVENT = 16 << 20
#: The lane's text is handed on in strings of about this size.
cdef Py_ssize_t CHUNK = 1 << 20
cdef const char *HEX = b"0123456789abcdef"
cdef const char *HEX_UPPER = b"0123456789ABCDEF"


ctypedef struct Buf:
    char *p
    Py_ssize_t n
    Py_ssize_t cap


cdef int reserve(Buf *b, Py_ssize_t more) except -1:
    cdef Py_ssize_t cap
    cdef char *q
    if b.n + more <= b.cap:
        return 0
    cap = max(2 * b.cap, b.n + more + 65536)
    q = <char *>PyMem_Realloc(b.p, cap)
    if q == NULL:
        raise MemoryError()
    b.p, b.cap = q, cap
    return 0


cdef inline int put(Buf *b, const char *s, Py_ssize_t n) except -1:
    reserve(b, n)
    memcpy(b.p + b.n, s, n)
    b.n += n
    return 0


cdef inline int put_bytes(Buf *b, bytes s) except -1:
    return put(b, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))


cdef int put_u(Buf *b, unsigned long long v) except -1:
    cdef char tmp[24]
    cdef int i = 24
    while True:
        i -= 1
        tmp[i] = <char>(48 + v % 10)
        v //= 10
        if v == 0:
            break
    return put(b, tmp + i, 24 - i)


cdef inline int put_i(Buf *b, long long v) except -1:
    if v < 0:
        put(b, "-", 1)
        return put_u(b, <unsigned long long>0 - <unsigned long long>v)
    return put_u(b, <unsigned long long>v)


cdef inline int put_digits(Buf *b, long long v, int width) except -1:
    """v (>= 0) in at least `width` digits, zero-padded."""
    cdef char tmp[24]
    cdef int i = 24
    while v or 24 - i < width:
        i -= 1
        tmp[i] = <char>(48 + v % 10)
        v //= 10
    return put(b, tmp + i, 24 - i)


cdef int put_date(Buf *b, const long long *f) except -1:
    """date.isoformat() of year, month, day f[0..2]: YYYY-MM-DD."""
    put_digits(b, f[0], 4)
    put(b, "-", 1)
    put_digits(b, f[1], 2)
    put(b, "-", 1)
    return put_digits(b, f[2], 2)


cdef int put_clock(Buf *b, const long long *f) except -1:
    """HH:MM:SS (hours in two digits at least) of f[0..2], then .ffffff of f[3] unless 0."""
    put_digits(b, f[0], 2)
    put(b, ":", 1)
    put_digits(b, f[1], 2)
    put(b, ":", 1)
    put_digits(b, f[2], 2)
    if f[3]:
        put(b, ".", 1)
        put_digits(b, f[3], 6)
    return 0


cdef int put_iso(Buf *b, const long long *f) except -1:
    """datetime.isoformat() of a naive datetime's fields f[0..6]: YYYY-MM-DDTHH:MM:SS, then .ffffff unless 0."""
    put_date(b, f)
    put(b, "T", 1)
    return put_clock(b, f + 3)


cdef int put_epoch(Buf *b, long long seconds) except -1:
    """The ISO text of a time in seconds since the epoch, in UTC, without its zone."""
    cdef long long f[7]
    civil(seconds // 86400, &f[0], &f[1], &f[2])
    f[3], f[4], f[5], f[6] = seconds % 86400 // 3600, seconds // 60 % 60, seconds % 60, 0
    return put_iso(b, f)


cdef inline Py_ssize_t utf8_sequence(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) noexcept:
    """The length of the UTF-8 sequence of a byte past 0x7f at s[i] (strict, as Python decodes it: no overlong
    form, no surrogate, nothing past U+10FFFF), 0 where it is none."""
    cdef unsigned char c = s[i], lo = 0x80, hi = 0xBF
    cdef Py_ssize_t need, k
    if 0xC2 <= c <= 0xDF:
        need = 1
    elif c == 0xE0:
        need, lo = 2, 0xA0
    elif 0xE1 <= c <= 0xEF:
        need = 2
        if c == 0xED:
            hi = 0x9F       # no surrogates
    elif c == 0xF0:
        need, lo = 3, 0x90
    elif 0xF1 <= c <= 0xF3:
        need = 3
    elif c == 0xF4:
        need, hi = 3, 0x8F
    else:
        return 0
    if n - i <= need or s[i + 1] < lo or s[i + 1] > hi:
        return 0
    for k in range(2, need + 1):
        if s[i + k] & 0xC0 != 0x80:
            return 0
    return need + 1


cdef int put_json_text(Buf *b, const unsigned char *s, Py_ssize_t n, int codec) except -2:
    """s, in `codec` (C_UTF8, C_ASCII, C_LATIN1), as a JSON string as jsonenc writes a str (UTF-8 unescaped;
    '"', '\\' and the control characters escaped); -1 (nothing written) when s is not valid UTF-8 (strict, as
    Python decodes it) in C_UTF8, or not ASCII in C_ASCII."""
    cdef Py_ssize_t i = 0, need
    cdef unsigned char c
    cdef char *o
    reserve(b, 6 * n + 2)
    o = b.p + b.n
    o[0] = 34
    o += 1
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            if c >= 0x20 and c != 34 and c != 92:
                o[0] = <char>c
                o += 1
                continue
            o[0] = 92
            if c == 34 or c == 92:
                o[1] = <char>c
            elif c == 8:
                o[1] = 98       # \b
            elif c == 9:
                o[1] = 116      # \t
            elif c == 10:
                o[1] = 110      # \n
            elif c == 12:
                o[1] = 102      # \f
            elif c == 13:
                o[1] = 114      # \r
            else:
                o[1], o[2], o[3], o[4], o[5] = 117, 48, 48, HEX[c >> 4], HEX[c & 15]
                o += 6
                continue
            o += 2
            continue
        if codec == C_LATIN1:       # (no character past 0x7f is escaped)
            memcpy(o, LATIN1_UTF8[c], LATIN1_UTF8[c][3])
            o += LATIN1_UTF8[c][3]
            i += 1
            continue
        if codec == C_ASCII:
            return -1
        need = utf8_sequence(s, i, n) - 1
        if need < 0:
            return -1
        memcpy(o, s + i, need + 1)
        o += need + 1
        i += need + 1
    o[0] = 34
    b.n = o + 1 - b.p
    return 0


cdef int put_float(Buf *b, double v) except -1:
    """repr(v), as the JSON of a float (NaN, Infinity, -Infinity as json.dumps writes them)."""
    cdef char *text
    if v != v:
        return put(b, "NaN", 3)
    if v - v != 0.0:
        return put(b, "Infinity", 8) if v > 0 else put(b, "-Infinity", 9)
    text = PyOS_double_to_string(v, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    try:
        put(b, text, strlen(text))
    finally:
        PyMem_Free(text)
    return 0


cdef class TextImage:
    """The JSON text of one row-image layout: `plan` holds, per present column, (its key's JSON text with
    the '{' or ',' before it, kind, a, b, c, obj)."""
    cdef Py_ssize_t n, n_null
    cdef int *kinds
    cdef long long *params
    cdef tuple keys, objs

    def __cinit__(self, plan):
        cdef Py_ssize_t k
        self.n = len(plan)
        self.n_null = (self.n + 7) >> 3
        self.kinds = <int *>PyMem_Malloc(max(self.n, 1) * sizeof(int))
        self.params = <long long *>PyMem_Malloc(max(self.n, 1) * 3 * sizeof(long long))
        if self.kinds == NULL or self.params == NULL:
            raise MemoryError()
        keys, objs = [], []
        for k, (key, kind, a, b, c, obj) in enumerate(plan):
            if kind not in KINDS.values() or type(key) is not bytes:
                raise ValueError(f"not a text plan: {kind!r}")
            self.kinds[k] = kind
            self.params[3 * k], self.params[3 * k + 1], self.params[3 * k + 2] = a, b, c
            keys.append(key)
            objs.append(obj)
        self.keys, self.objs = tuple(keys), tuple(objs)

    def __dealloc__(self):
        PyMem_Free(self.kinds)
        PyMem_Free(self.params)

    def encode(self, bytes buf not None, Py_ssize_t pos):
        """(JSON text, position after the image) of the image at buf[pos], or None where the lane leaves it."""
        cdef Buf b
        b.p, b.n, b.cap = NULL, 0, 0
        try:
            end = self._encode(&b, <const unsigned char *>PyBytes_AS_STRING(buf), pos, len(buf))
            return None if end < 0 else (PyUnicode_DecodeUTF8(b.p, b.n, NULL), end)
        finally:
            PyMem_Free(b.p)

    cdef Py_ssize_t _encode(self, Buf *b, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end) except -2:
        cdef Py_ssize_t nulls = pos, k, size, length, start, i
        cdef long long *prm
        cdef unsigned long long u
        cdef long long f[7]
        cdef int kind
        if pos < 0 or pos + self.n_null > end:
            return -1
        pos += self.n_null
        for k in range(self.n):
            put_bytes(b, <bytes>self.keys[k])
            if p[nulls + (k >> 3)] >> (k & 7) & 1:
                put(b, "null", 4)
                continue
            kind = self.kinds[k]
            prm = self.params + 3 * k
            size = prm[2] if K_DECIMAL <= kind <= K_SET else (prm[0] if kind == K_INT or kind == K_TEXT else 0)
            if kind == K_INT:
                if pos + size > end:
                    return -1
                u = le(p + pos, <int>size)
                if prm[1] and size < 8 and u >> (8 * size - 1):
                    put_i(b, <long long>u - (<long long>1 << (8 * size)))
                elif prm[1]:
                    put_i(b, <long long>u)
                else:
                    put_u(b, u)
                pos += size
            elif kind == K_GEOMETRY:        # {"srid": its u4, "wkb": the rest as bytes}
                size = prm[0]
                if pos + size > end:
                    return -1
                length = <Py_ssize_t>le(p + pos, <int>size)
                start = pos + size
                if length > end - start or length < 4:
                    return -1
                pos = start + length
                put(b, '{"srid":', 8)
                put_u(b, le(p + start, 4))
                put(b, ',"wkb":{"hex":"', 15)
                reserve(b, 2 * length + 3)
                for i in range(start + 4, pos):
                    b.p[b.n], b.p[b.n + 1] = HEX[p[i] >> 4], HEX[p[i] & 15]
                    b.n += 2
                put(b, '"}}', 3)
            elif kind == K_TEXT:
                if pos + size > end:
                    return -1
                length = <Py_ssize_t>le(p + pos, <int>size)
                start = pos + size
                if length > end - start:
                    return -1
                pos = start + length
                if prm[1] == C_BYTES:
                    reserve(b, 2 * max(length, prm[2]) + 12)
                    put(b, '{"hex":"', 8)
                    for i in range(start, pos):
                        b.p[b.n], b.p[b.n + 1] = HEX[p[i] >> 4], HEX[p[i] & 15]
                        b.n += 2
                    for i in range(length, prm[2]):
                        put(b, "00", 2)
                    put(b, '"}', 2)
                elif put_json_text(b, p + start, length, prm[1]) < 0:
                    return -1
            elif kind == K_FLOAT or kind == K_DOUBLE:
                size = 4 if kind == K_FLOAT else 8
                if pos + size > end:
                    return -1
                put_float(b, PyFloat_Unpack4(<const char *>p + pos, 1) if kind == K_FLOAT
                          else PyFloat_Unpack8(<const char *>p + pos, 1))
                pos += size
            elif kind == K_YEAR:
                if pos + 1 > end:
                    return -1
                put_u(b, 1900 + p[pos] if p[pos] else 0)
                pos += 1
            elif kind == K_DATE:
                if pos + 3 > end or not date_fields(p + pos, f):
                    return -1
                put(b, '"', 1)
                put_date(b, f)
                put(b, '"', 1)
                pos += 3
            elif kind == K_DATETIME2 or kind == K_TIMESTAMP2:
                size = (5 if kind == K_DATETIME2 else 4) + (prm[0] + 1) // 2
                if pos + size > end or not (datetime2_fields(p + pos, <int>prm[0], f) if kind == K_DATETIME2
                                            else timestamp2_fields(p + pos, <int>prm[0], f)):
                    return -1
                put(b, '"', 1)
                put_iso(b, f)
                put(b, '"' if kind == K_DATETIME2 else '+00:00"', 1 if kind == K_DATETIME2 else 7)
                pos += size
            else:
                if pos + size > end:
                    return -1
                if self._fixed(b, kind, prm, p + pos, k) < 0:
                    return -1
                pos += size
        put(b, "}", 1)
        return pos

    cdef int _fixed(self, Buf *b, int kind, const long long *prm, const unsigned char *q, Py_ssize_t k) except -2:
        """The text of a DECIMAL, TIME2, BIT, ENUM or SET value of prm[2] bytes at q; -1 where the lane leaves it."""
        cdef char digits[72]
        cdef int t, i
        cdef long long f[5]
        cdef bint negative
        cdef unsigned long long u
        cdef tuple texts, order
        cdef bint first = True
        if kind == K_DECIMAL:
            t = decimal_text(q, <int>prm[0], <int>prm[1], digits)
            if t < 0:
                return -1
            put(b, '"', 1)
            put(b, digits, t)
            return put(b, '"', 1)
        if kind == K_TIME2:
            if not time2_fields(q, <int>prm[0], f):
                return -1
            negative = f[0] and (f[1] or f[2] or f[3] or f[4])      # (a timedelta of 0 has no sign)
            put(b, '"-' if negative else '"', 2 if negative else 1)
            put_clock(b, f + 1)
            return put(b, '"', 1)
        if kind == K_BIT:
            return put_u(b, be(q, <int>prm[2]))
        u = le(q, <int>prm[2])
        if prm[1] < 0:
            return put_u(b, u)
        if kind == K_ENUM:
            if u > <unsigned long long>prm[1]:
                return -1
            return put_bytes(b, <bytes>(<tuple>self.objs[k])[u])
        if prm[1] < 64 and u >> prm[1]:
            return -1
        texts, order = self.objs[k]
        put(b, "[", 1)
        for i in order:
            if u >> i & 1:
                if not first:
                    put(b, ",", 1)
                first = False
                put_bytes(b, <bytes>texts[i])
        return put(b, "]", 1)
