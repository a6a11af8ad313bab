# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled twin of rows/decoder.py's row images (planned by rows/image_plan.py): the decoder of one row
image, the null bitmap over the present columns, then their values, straight to the Python values of `binlog_spec.rows.values.decode_value`.

`ImageDecoder(plan)` is built once per row-image layout from the plan that
`binlog_spec.rows.image_plan.plan` makes (one entry per present column: its dict key, a kind code, three
int parameters and one object). `ImageDecoder.decode(buf, pos)` returns `(row dict, position after the
image)`. It is a fast path only, like the generated Python code it replaces: on anything unusual
(bytes short, text not valid in its charset, a date that is no calendar date, ...) it raises, and the
caller decodes the image again with the pure `decode_image`, which gives the value or the precise
error. Kinds without a C form call their `COLUMN_TYPES` decoder (the plan's object: (decoder, column)).
The values of DECIMAL, TIME2, BIT, the old temporal types, ENUM, SET, GEOMETRY and VECTOR are made by
rows/_cscalars.pxd (the twins of rows/scalars.py's decoders) and `ImageDecoder._value`.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.datetime cimport import_datetime, date_new, datetime_new
from cpython.dict cimport PyDict_SetItem
from cpython.set cimport PyFrozenSet_New
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject_GenericSetAttr
from cpython.unicode cimport PyUnicode_Decode, PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.string cimport memcpy, memset

from binlog_spec.binlog._cbytes cimport le as _le
from binlog_spec.rows._cscalars cimport (be, date_fields, datetime2_fields, decimal_reads, decimal_value,
                                         old_datetime_value, old_time_value, old_timestamp_value,
                                         time2_fields, time2_value, timestamp2_fields)

cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030B0000
    #define PyFloat_Unpack4 _PyFloat_Unpack4
    #define PyFloat_Unpack8 _PyFloat_Unpack8
    #endif
    """
    double PyFloat_Unpack4(const char *p, int le) except? -1.0
    double PyFloat_Unpack8(const char *p, int le) except? -1.0

import_datetime()

# Kind codes, by name in KINDS (image_plan.py builds plans with them).
cdef enum:
    K_INT = 1          # a: size 1, 2, 3, 4 or 8; b: signed
    K_YEAR = 2
    K_FLOAT = 3
    K_DOUBLE = 4
    K_TEXT = 5         # a: length prefix 1-4; b: codec kind; c: pad to c bytes with 0x00; obj: codec name
    K_DATE = 6
    K_DATETIME2 = 7    # a: fsp 0-6
    K_TIMESTAMP2 = 8   # a: fsp 0-6; obj: the UTC tzinfo
    K_CALL = 9         # obj: (decoder, column)
    # the kinds of a fixed size, c (_key_image steps over them)
    K_DECIMAL = 10     # a: precision 1-65; b: scale; obj: decimal.Decimal
    K_TIME2 = 11       # a: fsp 0-6
    K_TIME = 12        # a: MariaDB hires fsp 1-6, 0: the classic TIME
    K_DATETIME = 13    # a: as K_TIME
    K_TIMESTAMP = 14   # a: as K_TIME; obj: the UTC tzinfo
    K_BIT = 15         # c: 0-8
    K_ENUM = 16        # b: members, -1 when unknown (the index then); obj: index -> member ('' first)
    K_SET = 17         # b: members, -1 when unknown (the bitmask then); obj: the members
    K_GEOMETRY = 18    # a: length prefix 1-4
    K_VECTOR = 19      # a: length prefix 1-4

# Codec kinds of K_TEXT, by name in CODECS.
cdef enum:
    C_BYTES = 0
    C_UTF8 = 1
    C_LATIN1 = 2       # MySQL latin1: ASCII here, else obj is the Python function (_mysql_latin1)
    C_CODEC = 3        # obj: codec name (bytes)

KINDS = {"int": K_INT, "year": K_YEAR, "float": K_FLOAT, "double": K_DOUBLE, "text": K_TEXT, "date": K_DATE,
         "datetime2": K_DATETIME2, "timestamp2": K_TIMESTAMP2, "call": K_CALL, "decimal": K_DECIMAL,
         "time2": K_TIME2, "time": K_TIME, "datetime": K_DATETIME, "timestamp": K_TIMESTAMP, "bit": K_BIT,
         "enum": K_ENUM, "set": K_SET, "geometry": K_GEOMETRY,
         "vector": K_VECTOR}
CODECS = {"bytes": C_BYTES, "utf8": C_UTF8, "latin1": C_LATIN1, "codec": C_CODEC}


class Fallback(Exception):
    """The fast path does not take this image: decode it with the pure decoder."""


cdef class ImageDecoder:
    # (its fields and C methods are declared in _cdecoder.pxd: the lanes step over images with `key_walk`)

    def __cinit__(self, plan):
        cdef Py_ssize_t k
        self.n = len(plan)
        self.n_null = (self.n + 7) >> 3
        self.kinds = <int *>PyMem_Malloc(max(self.n, 1) * sizeof(int))
        self.params = <long long *>PyMem_Malloc(max(self.n, 1) * 3 * sizeof(long long))
        if self.kinds == NULL or self.params == NULL:
            raise MemoryError()
        names, objs = [], []
        for k, (name, kind, a, b, c, obj) in enumerate(plan):
            if kind not in KINDS.values():
                raise ValueError(f"unknown kind {kind}")
            self.kinds[k] = kind
            self.params[3 * k], self.params[3 * k + 1], self.params[3 * k + 2] = a, b, c
            names.append(name)
            objs.append(obj)
        self.names, self.objs = tuple(names), tuple(objs)

    def __dealloc__(self):
        PyMem_Free(self.kinds)
        PyMem_Free(self.params)

    def decode(self, bytes buf not None, Py_ssize_t pos):
        """(row dict, position after the image) of the image at buf[pos]; raises when the pure
        decoder must do it."""
        return self._decode(buf, pos)

    cdef tuple _decode(self, bytes buf, Py_ssize_t pos):
        cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t end = len(buf)
        cdef Py_ssize_t nulls = pos, k, size, length, start
        cdef long long *prm
        cdef unsigned long long u
        cdef long long s
        cdef long long f[7]
        cdef int kind, i
        cdef dict row = {}
        cdef object value, got
        cdef bytes padded
        if pos < 0 or pos + self.n_null > end:
            raise Fallback
        pos += self.n_null
        for k in range(self.n):
            if p[nulls + (k >> 3)] >> (k & 7) & 1:
                PyDict_SetItem(row, self.names[k], None)
                continue
            kind = self.kinds[k]
            prm = self.params + 3 * k
            if kind == K_INT:
                size = prm[0]
                if pos + size > end:
                    raise Fallback
                u = _le(p + pos, <int>size)
                pos += size
                if prm[1]:
                    if size < 8 and u >> (8 * size - 1):
                        s = <long long>u - (<long long>1 << (8 * size))
                    else:
                        s = <long long>u
                    value = s
                else:
                    value = u
            elif kind == K_TEXT:
                size = prm[0]
                if pos + size > end:
                    raise Fallback
                length = <Py_ssize_t>_le(p + pos, <int>size)
                start = pos + size
                if start + length > end:
                    raise Fallback
                pos = start + length
                i = <int>prm[1]
                if i == C_UTF8:
                    value = PyUnicode_DecodeUTF8(<const char *>p + start, length, NULL)
                elif i == C_BYTES:
                    if length < prm[2]:
                        padded = PyBytes_FromStringAndSize(NULL, prm[2])
                        memcpy(PyBytes_AS_STRING(padded), p + start, length)
                        memset(PyBytes_AS_STRING(padded) + length, 0, prm[2] - length)
                        value = padded
                    else:
                        value = PyBytes_FromStringAndSize(<const char *>p + start, length)
                elif i == C_LATIN1:
                    for size in range(start, pos):
                        if p[size] & 0x80:
                            value = self.objs[k](PyBytes_FromStringAndSize(<const char *>p + start, length))
                            break
                    else:
                        value = PyUnicode_DecodeASCII(<const char *>p + start, length, NULL)
                else:
                    value = PyUnicode_Decode(<const char *>p + start, length, <bytes>self.objs[k], NULL)
            elif kind == K_FLOAT:
                if pos + 4 > end:
                    raise Fallback
                value = PyFloat_Unpack4(<const char *>p + pos, 1)
                pos += 4
            elif kind == K_DOUBLE:
                if pos + 8 > end:
                    raise Fallback
                value = PyFloat_Unpack8(<const char *>p + pos, 1)
                pos += 8
            elif kind == K_YEAR:
                if pos + 1 > end:
                    raise Fallback
                value = 1900 + p[pos] if p[pos] else 0
                pos += 1
            elif kind == K_DATE:
                if pos + 3 > end or not date_fields(p + pos, f):
                    raise Fallback              # '0000-00-00' and the like: str, by the pure decoder
                value = date_new(f[0], f[1], f[2])
                pos += 3
            elif kind == K_DATETIME2:
                size = 5 + (prm[0] + 1) // 2
                if pos + size > end or not datetime2_fields(p + pos, <int>prm[0], f):
                    raise Fallback
                value = datetime_new(f[0], f[1], f[2], f[3], f[4], f[5], f[6], None)
                pos += size
            elif kind == K_TIMESTAMP2:
                size = 4 + (prm[0] + 1) // 2
                if pos + size > end or not timestamp2_fields(p + pos, <int>prm[0], f):
                    raise Fallback
                value = datetime_new(f[0], f[1], f[2], f[3], f[4], f[5], f[6], self.objs[k])
                pos += size
            elif kind == K_CALL:
                got = self.objs[k]
                value, pos = got[0](buf, pos, got[1])
            else:
                value, pos = self._value(kind, prm, p, pos, end, k)
            PyDict_SetItem(row, self.names[k], value)
        return row, pos

    cdef tuple _value(self, int kind, const long long *prm, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                      Py_ssize_t k):
        """(value, position after it) of a kind from K_DECIMAL on (rows/_cscalars.pxd), or Fallback."""
        cdef Py_ssize_t size = prm[2], length, i
        cdef unsigned long long u
        cdef object value
        cdef list members
        if kind == K_GEOMETRY or kind == K_VECTOR:
            size = prm[0]
            if pos + size > end:
                raise Fallback
            length = <Py_ssize_t>_le(p + pos, <int>size)
            pos += size
            if length > end - pos or (length < 4 if kind == K_GEOMETRY else length % 4):
                raise Fallback
            if kind == K_VECTOR:           # values.decode_vector: float32 values, little-endian
                members = [PyFloat_Unpack4(<const char *>p + i, 1) for i in range(pos, pos + length, 4)]
                return members, pos + length
            return {"srid": <unsigned long>_le(p + pos, 4),
                    "wkb": PyBytes_FromStringAndSize(<const char *>p + pos + 4, length - 4)}, pos + length
        if pos + size > end:
            raise Fallback
        if kind == K_DECIMAL:
            value = decimal_value(p + pos, <int>prm[0], <int>prm[1], self.objs[k])
        elif kind == K_TIME2:
            value = time2_value(p + pos, <int>prm[0])
        elif kind == K_BIT:
            value = be(p + pos, <int>size)
        elif kind == K_ENUM:
            u = _le(p + pos, <int>size)
            if prm[1] < 0:
                value = u
            elif u > <unsigned long long>prm[1]:
                raise Fallback
            else:
                value = (<tuple>self.objs[k])[u]
        elif kind == K_SET:
            u = _le(p + pos, <int>size)
            if prm[1] < 0:
                value = u
            elif prm[1] < 64 and u >> prm[1]:
                raise Fallback
            else:
                members = []
                for i in range(min(prm[1], 64)):      # a bitmask of 8 bytes at most
                    if u >> i & 1:
                        members.append((<tuple>self.objs[k])[i])
                value = PyFrozenSet_New(members)     # added in member order, as the pure decoder adds them
        elif kind == K_TIME:
            value = old_time_value(p + pos, <int>prm[0], <int>size)
        elif kind == K_DATETIME:
            value = old_datetime_value(p + pos, <int>prm[0], <int>size)
        elif kind == K_TIMESTAMP:
            value = old_timestamp_value(p + pos, <int>prm[0], <int>size, self.objs[k])
        else:
            raise Fallback
        if value is None:
            raise Fallback
        return value, pos + size


cdef tuple _image(ImageDecoder image, fallback, bytes buf, Py_ssize_t pos):
    """The image at buf[pos] by the compiled decoder, or by the pure one when it is handed back."""
    try:
        return image._decode(buf, pos)
    except Exception:
        return tuple(fallback(buf, pos))


def rows(decoder, ev, bytes buf not None, dict template not None, ImageDecoder image_b not None,
         ImageDecoder image_a, fallback_b, fallback_a, key, type row_change, malformed, value_error):
    """The RowChange objects of a rows event whose images `image_b` (and `image_a`: UPDATE) decode, as
    the generated generator of decoder.compile_rows makes them: an image the compiled decoder hands
    back is decoded again by `fallback_b(buf, pos)` / `fallback_a` (the pure decode_image); the
    dict `template` holds the event's RowChange fields; `key` is "after" (insert) or "before"
    (delete), None for an update (both); a `value_error` raised at row i becomes
    `malformed(ev, i, exc)`."""
    cdef Py_ssize_t end = len(buf), row_pos = 0, index = 0
    cdef object b_row, a_row, rc, pos
    cdef dict d
    try:
        while row_pos < end:
            b_row, pos = _image(image_b, fallback_b, buf, row_pos)
            row_pos = pos
            if image_a is not None:
                a_row, pos = _image(image_a, fallback_a, buf, row_pos)
                row_pos = pos
            d = template.copy()
            d["gtid"] = decoder.gtid
            if key is None:
                d["before"] = b_row
                d["after"] = a_row
            else:
                d[key] = b_row
            d["row_index"] = index
            rc = row_change.__new__(row_change)
            PyObject_GenericSetAttr(rc, "__dict__", d)
            yield rc
            index += 1
    except value_error as exc:
        raise malformed(ev, index, exc) from None


cdef Py_ssize_t key_walk(ImageDecoder image, const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                        const Py_ssize_t *slot, unsigned long long *out, bint check) except -2:
    """Steps over the image at p[pos] (position after it), putting its key columns' integers in `out`
    (`slot[k]`: column k's place in the key, or -1), each as its 64 bits (a signed one sign-extended: two
    integers are equal when their bits are); -1 when the image is not as the plan expects (bytes short, a
    NULL key column, a key column not K_INT, a kind this does not step over). No Python object is made.
    With `check`, -1 too for a value the pure decoder might refuse (rows/scalars.py, values.py: its errors,
    and more: an old temporal kind, an invalid date or time, anything the compiled decoder hands back),
    so that an image walked so is one the pure decoder reads without error."""
    cdef Py_ssize_t nulls = pos, k, size, length
    cdef long long *prm
    cdef unsigned long long u
    cdef long long f[7]
    cdef int kind
    if pos < 0 or pos + image.n_null > end:
        return -1
    pos += image.n_null
    for k in range(image.n):
        if p[nulls + (k >> 3)] >> (k & 7) & 1:
            if slot[k] >= 0:
                return -1               # a NULL key column: the row is named by its whole image
            continue
        kind = image.kinds[k]
        prm = image.params + 3 * k
        if kind == K_INT:
            size = prm[0]
        elif kind == K_TEXT or kind == K_GEOMETRY or kind == K_VECTOR:
            size = prm[0]
            if slot[k] >= 0 or pos + size > end:
                return -1
            length = <Py_ssize_t>_le(p + pos, <int>size)
            if length > end - pos - size or (check and (length < 4 if kind == K_GEOMETRY else
                                                        kind == K_VECTOR and length % 4)):
                return -1
            pos += size + length
            continue
        elif kind == K_FLOAT:
            size = 4
        elif kind == K_DOUBLE:
            size = 8
        elif kind == K_YEAR:
            size = 1
        elif kind == K_DATE:
            size = 3
        elif kind == K_DATETIME2:
            size = 5 + (prm[0] + 1) // 2
        elif kind == K_TIMESTAMP2:
            size = 4 + (prm[0] + 1) // 2
        elif K_DECIMAL <= kind <= K_SET:
            size = prm[2]
        else:
            return -1
        if pos + size > end or (check and kind >= K_DATETIME2 and not _reads(kind, prm, p + pos, f)):
            return -1
        if slot[k] >= 0:
            if kind != K_INT:
                return -1
            u = _le(p + pos, <int>size)
            if prm[1] and size < 8 and u >> (8 * size - 1):
                u -= <unsigned long long>1 << (8 * size)        # (sign-extended, modulo 2**64)
            out[slot[k]] = u
        pos += size
    return pos


cdef inline bint _reads(int kind, const long long *prm, const unsigned char *q, long long *f) noexcept:
    """Whether the pure decoder reads the value at q of a fixed-size kind from K_DATETIME2 on without error
    (ImageDecoder._value's checks, or stricter: False where it would hand the value back)."""
    cdef unsigned long long u
    if kind == K_DATETIME2:
        return datetime2_fields(q, <int>prm[0], f)
    if kind == K_TIMESTAMP2:
        return timestamp2_fields(q, <int>prm[0], f)
    if kind == K_DECIMAL:
        return decimal_reads(q, <int>prm[0], <int>prm[1])
    if kind == K_TIME2:
        return time2_fields(q, <int>prm[0], f)
    if kind == K_BIT:
        return True
    if kind == K_ENUM or kind == K_SET:
        u = _le(q, <int>prm[2])
        if prm[1] < 0:
            return True
        return u <= <unsigned long long>prm[1] if kind == K_ENUM else not (prm[1] < 64 and u >> prm[1])
    return False        # (the old TIME, DATETIME, TIMESTAMP)


cdef Py_ssize_t *key_slots(ImageDecoder image, tuple key) except NULL:
    """The places in the key of the image's present columns (-1: not a key column) of the key columns'
    places among them `key` (-1 for one the image lacks), for key_walk; PyMem_Free it."""
    cdef Py_ssize_t *slot = <Py_ssize_t *>PyMem_Malloc(max(image.n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t k, j
    if slot == NULL:
        raise MemoryError()
    for k in range(image.n):
        slot[k] = -1
    for j in range(len(key)):
        k = key[j]
        if 0 <= k < image.n:
            slot[k] = j
    return slot


cdef tuple _key_values(ImageDecoder image, tuple key, const unsigned long long *vals, tuple fallback):
    """The key integers key_walk put in `vals` as Python integers (signed as their columns are); a place
    the image lacks (-1 in `key`) has fallback's."""
    cdef Py_ssize_t j, k
    out = []
    for j in range(len(key)):
        k = key[j]
        if k < 0:
            out.append(fallback[j])
        else:
            out.append(<long long>vals[j] if image.params[3 * k + 1] else vals[j])
    return tuple(out)


def image_keys(bytes buf not None, ImageDecoder image_b not None, ImageDecoder image_a, tuple key_b not None,
               tuple key_a):
    """The integer key of every image of a rows event's rows, read straight from the images without
    decoding the other columns (output.rollback.check: the rows a rollback undoes, and the later ones): a
    list of tuples, each image's in order (an UPDATE's before then after image), or None when an image
    is not as the plans expect (bytes short, a NULL key column, a kind this does not step over): the
    caller decodes the event then. `key_b`: the key columns' places among `image_b`'s present columns
    (all present, all K_INT); `key_a` (an UPDATE: `image_a`'s, -1 for a column its after image lacks:
    the before image's value)."""
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t end = len(buf), pos = 0, n_key = len(key_b)
    cdef Py_ssize_t *slot_b = NULL
    cdef Py_ssize_t *slot_a = NULL
    cdef unsigned long long *vals = NULL
    cdef list out = []
    cdef tuple kb
    if image_b.n == 0 or (image_a is not None and image_a.n == 0):
        return None                     # an image of no bytes would never end the rows
    try:
        vals = <unsigned long long *>PyMem_Malloc(max(n_key, 1) * sizeof(unsigned long long))
        if vals == NULL:
            raise MemoryError()
        slot_b = key_slots(image_b, key_b)
        if image_a is not None:
            slot_a = key_slots(image_a, key_a)
        while pos < end:
            pos = key_walk(image_b, p, pos, end, slot_b, vals, False)
            if pos < 0:
                return None
            kb = _key_values(image_b, key_b, vals, None)
            out.append(kb)
            if image_a is not None:
                pos = key_walk(image_a, p, pos, end, slot_a, vals, False)
                if pos < 0:
                    return None
                out.append(_key_values(image_a, key_a, vals, kb))
        return out
    finally:
        PyMem_Free(vals)
        PyMem_Free(slot_b)
        PyMem_Free(slot_a)
