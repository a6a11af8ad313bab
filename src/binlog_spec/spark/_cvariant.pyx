# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled VARIANT encoder of row images: `encode(value)` is `binlog_spec.spark.variant.encode`, byte
for byte, with the values of a flat image (int, str, None, bytes, bool; float and the text types through
the pure module's helpers) written by C into one buffer; the layout of each shape (dictionary, field
order, id widths, metadata) is the pure module's `_layout`. Anything else (a document, a list, a set, an
integer beyond 64 bits, a key that is not a string) is encoded by the pure module, the reference.

`encode_column(images)` encodes a column of images (None: NULL) into the three buffers of an Arrow
struct<value: binary, metadata: binary> column at once, with no Python object per image: see
`binlog_spec.spark.records`.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy

cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030B0000
    #define PyFloat_Pack8 _PyFloat_Pack8
    #endif
    """
    int PyFloat_Pack8(double x, char *p, int le) except -1

# Basic types and primitive type ids (org.apache.spark.types.variant.VariantUtil), as in variant.py.
cdef enum:
    SHORT_STR = 1
    NULL_H = 0
    TRUE_H = 1 << 2
    FALSE_H = 2 << 2
    INT1_H = 3 << 2
    INT2_H = 4 << 2
    INT4_H = 5 << 2
    INT8_H = 6 << 2
    LONG_STR_H = 16 << 2
    MAX_SHORT_STR = 0x3F

# The pure module's helpers, bound on first use (binlog_spec.spark.variant loads this module: importing
# it here at once would be circular).
cdef object _pure = None
cdef object _TEXT_TYPES, _default, _number_text, _pure_encode, _pure_layout
cdef double _INF = float("inf")


cdef int _bind() except -1:
    global _pure, _TEXT_TYPES, _default, _number_text, _pure_encode, _pure_layout
    from binlog_spec.output import jsonenc
    from binlog_spec.spark import variant
    _TEXT_TYPES, _default, _number_text = variant._TEXT_TYPES, jsonenc.default, variant._number_text
    _pure_encode, _pure_layout = variant.encode_pure, variant._layout
    _pure = variant
    return 0

#: shape (keys, or (keys, the indexes of the bytes values)) -> _Layout
cdef dict _LAYOUTS = {}


cdef class _Layout:
    """What every image of one shape shares: the field order by name, the object's first bytes for each
    offset width, the metadata, the {"hex": ...} object's header."""
    cdef Py_ssize_t n
    cdef Py_ssize_t *order
    cdef list prefixes
    cdef bytes metadata
    cdef int hex_flags
    cdef bytes hex_mid

    def __cinit__(self, tuple keys, tuple hexed):
        cdef Py_ssize_t i
        self.n = len(keys)
        self.order = <Py_ssize_t *>PyMem_Malloc(max(self.n, 1) * sizeof(Py_ssize_t))
        if self.order == NULL:
            raise MemoryError()
        _getter, prefixes, metadata, hex_head = _pure_layout(keys, hexed)
        for i, k in enumerate(sorted(range(self.n), key=keys.__getitem__)):
            self.order[i] = k
        self.prefixes, self.metadata = prefixes, metadata
        if hex_head is not None:
            self.hex_flags, self.hex_mid = hex_head
        else:
            self.hex_flags, self.hex_mid = 0, b""

    def __dealloc__(self):
        PyMem_Free(self.order)


cdef struct Buf:
    uint8_t *data
    Py_ssize_t len
    Py_ssize_t cap


cdef int _reserve(Buf *b, Py_ssize_t more) except -1:
    cdef Py_ssize_t cap
    cdef uint8_t *p
    if b.len + more <= b.cap:
        return 0
    cap = max(b.cap * 2, b.len + more, 256)
    p = <uint8_t *>PyMem_Realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data, b.cap = p, cap
    return 0


cdef inline int _put(Buf *b, const void *src, Py_ssize_t n) except -1:
    _reserve(b, n)
    memcpy(b.data + b.len, src, n)
    b.len += n
    return 0


cdef inline int _put_le(Buf *b, unsigned long long v, int size) except -1:
    cdef int i
    _reserve(b, size)
    for i in range(size):
        b.data[b.len + i] = <uint8_t>(v >> (8 * i))
    b.len += size
    return 0


cdef inline int _int_size(Py_ssize_t v) noexcept:
    return 1 if v <= 0xFF else 2 if v <= 0xFFFF else 3


cdef int _put_str(Buf *b, const char *s, Py_ssize_t n) except -1:
    """A string value: the short form up to 63 bytes, else the long one."""
    if n > MAX_SHORT_STR:
        _reserve(b, 5 + n)
        b.data[b.len] = LONG_STR_H
        b.len += 1
        _put_le(b, <unsigned long long>n, 4)
    else:
        _reserve(b, 1 + n)
        b.data[b.len] = <uint8_t>(n << 2 | SHORT_STR)
        b.len += 1
    _put(b, s, n)
    return 0


cdef int _put_text(Buf *b, str s) except -1:
    cdef Py_ssize_t n
    cdef const char *u
    try:
        u = PyUnicode_AsUTF8AndSize(s, &n)
    except UnicodeEncodeError:          # lone surrogates: as the pure module writes them
        data = s.encode("utf-8", "surrogatepass")
        return _put_str(b, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    return _put_str(b, u, n)


cdef int _put_bytes_obj(Buf *b, bytes data) except -1:
    return _put(b, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef int _put_value(Buf *b, object v) except -1:
    """One value of a flat image; 1 when it is not flat (the pure encoder takes the image), 2 for bytes
    (written as its hex string: the caller wraps it), else 0."""
    cdef type t = type(v)
    cdef long long i
    if t is int:
        try:
            i = v
        except OverflowError:
            return 1
        _reserve(b, 9)
        if -0x80 <= i <= 0x7F:
            b.data[b.len] = INT1_H
            b.len += 1
            _put_le(b, <unsigned long long>i, 1)
        elif -0x8000 <= i <= 0x7FFF:
            b.data[b.len] = INT2_H
            b.len += 1
            _put_le(b, <unsigned long long>i, 2)
        elif -0x80000000 <= i <= 0x7FFFFFFF:
            b.data[b.len] = INT4_H
            b.len += 1
            _put_le(b, <unsigned long long>i, 4)
        else:
            b.data[b.len] = INT8_H
            b.len += 1
            _put_le(b, <unsigned long long>i, 8)
    elif t is str:
        _put_text(b, <str>v)
    elif v is None:
        _reserve(b, 1)
        b.data[b.len] = NULL_H
        b.len += 1
    elif t is bytes:
        _put_text(b, (<bytes>v).hex())
        return 2
    elif t is float:
        _put_bytes_obj(b, _float(<double>v))
    elif t is bool:
        _reserve(b, 1)
        b.data[b.len] = TRUE_H if v else FALSE_H
        b.len += 1
    elif isinstance(v, _TEXT_TYPES):
        _put_text(b, _default(v))
    else:
        return 1
    return 0


cdef bytes _float(double v):
    cdef char d[9]
    if v != v or v == _INF or v == -_INF:
        d[0] = 7 << 2
        PyFloat_Pack8(v, d + 1, 1)
        return PyBytes_FromStringAndSize(d, 9)
    return _number_text(repr(v))


cdef class _Scratch:
    """The buffers of one image's values and their offsets, kept between calls."""
    cdef Buf vals
    cdef Py_ssize_t *starts
    cdef int *kinds
    cdef Py_ssize_t cap

    cdef int fit(self, Py_ssize_t n) except -1:
        if n + 1 > self.cap:
            self.cap = max(2 * self.cap, n + 1, 64)
            self.starts = <Py_ssize_t *>PyMem_Realloc(self.starts, self.cap * sizeof(Py_ssize_t))
            self.kinds = <int *>PyMem_Realloc(self.kinds, self.cap * sizeof(int))
            if self.starts == NULL or self.kinds == NULL:
                raise MemoryError()
        return 0

    def __dealloc__(self):
        PyMem_Free(self.vals.data)
        PyMem_Free(self.starts)
        PyMem_Free(self.kinds)


cdef _Scratch _S = _Scratch()


cdef _Layout _flat(dict d, _Scratch s):
    """Encode the values of `d` into s.vals (their starts in s.starts, s.kinds 2 for bytes) and give its
    layout; None when the image is not flat."""
    cdef Py_ssize_t n = len(d), k = 0
    cdef int got, any_hex = 0
    cdef list hexed
    cdef object shape, layout
    s.fit(n)
    s.vals.len = 0
    for v in d.values():
        s.starts[k] = s.vals.len
        got = _put_value(&s.vals, v)
        if got == 1:
            return None
        s.kinds[k] = got
        if got == 2:
            any_hex = 1
        k += 1
    s.starts[k] = s.vals.len
    if n == 0:
        return None
    keys = tuple(d)
    if any_hex:
        hexed = [i for i in range(n) if s.kinds[i] == 2]
        shape = (keys, tuple(hexed))
    else:
        shape = keys
    layout = _LAYOUTS.get(shape)
    if layout is None:
        for key in keys:
            if type(key) is not str:
                return None
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        layout = _LAYOUTS[shape] = _Layout(keys, tuple(hexed) if any_hex else ())
    return <_Layout>layout


cdef int _assemble(Buf *out, _Layout layout, _Scratch s) except -1:
    """The object of the image in s (values, starts) with `layout`, appended to out."""
    cdef Py_ssize_t n = layout.n, k, i, total, size, vlen, hsize
    cdef Py_ssize_t *starts = s.starts
    cdef Py_ssize_t *offs
    cdef bytes prefix
    cdef const uint8_t *v = s.vals.data
    # the length each value takes in the object (a hex string wrapped in its {"hex": ...} object)
    total = 0
    for k in range(n):
        vlen = starts[k + 1] - starts[k]
        if s.kinds[k] == 2:
            hsize = _int_size(vlen)
            vlen += 1 + len(layout.hex_mid) + 2 * hsize
        total += vlen
    size = _int_size(total)
    prefix = layout.prefixes[size]
    _reserve(out, len(prefix) + (n + 1) * size + total)
    _put_bytes_obj(out, prefix)
    # offsets in key order: the start of each value in insertion order
    offs = <Py_ssize_t *>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    if offs == NULL:
        raise MemoryError()
    try:
        total = 0
        for k in range(n):
            offs[k] = total
            vlen = starts[k + 1] - starts[k]
            if s.kinds[k] == 2:
                vlen += 1 + len(layout.hex_mid) + 2 * _int_size(vlen)
            total += vlen
        for i in range(n):
            _put_le(out, <unsigned long long>offs[layout.order[i]], <int>size)
    finally:
        PyMem_Free(offs)
    _put_le(out, <unsigned long long>total, <int>size)
    for k in range(n):
        vlen = starts[k + 1] - starts[k]
        if s.kinds[k] == 2:
            hsize = _int_size(vlen)
            _reserve(out, 1)
            out.data[out.len] = <uint8_t>(layout.hex_flags | ((hsize - 1) << 2))
            out.len += 1
            _put_bytes_obj(out, layout.hex_mid)
            _put_le(out, 0, <int>hsize)
            _put_le(out, <unsigned long long>vlen, <int>hsize)
        _put(out, v + starts[k], vlen)
    return 0


cdef Buf _OUT


def encode(value):
    """(value, metadata) of the VARIANT that parse_json makes of ``jsonenc.dumps(value)``: as
    binlog_spec.spark.variant.encode."""
    cdef _Layout layout
    if _pure is None:
        _bind()
    if type(value) is dict:
        layout = _flat(<dict>value, _S)
        if layout is not None:
            _OUT.len = 0
            _assemble(&_OUT, layout, _S)
            return PyBytes_FromStringAndSize(<const char *>_OUT.data, _OUT.len), layout.metadata
    return _pure_encode(value)


def encode_column(list images):
    """The VARIANT column of `images` (each a value or None: NULL) as Arrow buffers: (validity bytes,
    or None when no image is NULL; the value column's int32 offsets and data; the metadata column's
    int32 offsets and data; the number of NULLs). A NULL image has an empty value and metadata."""
    cdef Py_ssize_t n = len(images), i, nulls = 0
    cdef Buf val, meta, voff, moff
    cdef bytearray valid = None
    cdef _Layout layout
    cdef object image
    cdef int32_t o
    cdef bytes mdata
    if _pure is None:
        _bind()
    val.data = meta.data = voff.data = moff.data = NULL
    val.len = meta.len = voff.len = moff.len = val.cap = meta.cap = voff.cap = moff.cap = 0
    try:
        _reserve(&voff, 4 * (n + 1))
        _reserve(&moff, 4 * (n + 1))
        o = 0
        _put(&voff, &o, 4)
        _put(&moff, &o, 4)
        for i in range(n):
            image = images[i]
            if image is None:
                if valid is None:
                    valid = bytearray(b"\xff" * ((n + 7) >> 3))
                valid[i >> 3] &= ~(1 << (i & 7))
                nulls += 1
            else:
                layout = _flat(<dict>image, _S) if type(image) is dict else None
                if layout is not None:
                    _assemble(&val, layout, _S)
                    mdata = layout.metadata
                else:
                    vb, mdata = _pure_encode(image)
                    _put_bytes_obj(&val, vb)
                _put_bytes_obj(&meta, mdata)
            if val.len > 0x7FFFFFFF or meta.len > 0x7FFFFFFF:
                raise OverflowError("a VARIANT column over 2 GiB")
            o = <int32_t>val.len
            _put(&voff, &o, 4)
            o = <int32_t>meta.len
            _put(&moff, &o, 4)
        return (None if valid is None else bytes(valid),
                PyBytes_FromStringAndSize(<const char *>voff.data, voff.len),
                PyBytes_FromStringAndSize(<const char *>val.data, val.len),
                PyBytes_FromStringAndSize(<const char *>moff.data, moff.len),
                PyBytes_FromStringAndSize(<const char *>meta.data, meta.len), nulls)
    finally:
        PyMem_Free(val.data)
        PyMem_Free(meta.data)
        PyMem_Free(voff.data)
        PyMem_Free(moff.data)
