# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=False
"""The compiled stream: kaitaistruct 0.11's `KaitaiStream` read API over an in-memory buffer, in C. Its twin is
kaitaistruct's module, not one of the package: hence its name, the one exception to `_cX.pyx` <-> `X.py`.

The generated parsers (generated/binlog.py) read every field through `self._io.read_*()` and build
their sub-streams as `KaitaiStream(BytesIO(raw))`; spec.py rebinds that name to `FastStream`, in one
place, when this module is built (binlog_spec.compiled). Every method gives what KaitaiStream gives
over a BytesIO: the same values, the same position after the call, and the same exceptions (the
kaitaistruct classes, with the same messages), including after a failed read (a short read leaves the
position at the end of the buffer, as BytesIO.read does). The pure-Python KaitaiStream stays the
reference: tests/test_compiled_core.py runs both over the corpus, the fixtures and the fuzz cases.

Only reading is implemented: the runtime never writes through a Kaitai stream.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int16_t, int32_t, int64_t, int8_t, uint64_t
from libc.string cimport memchr

from binlog_spec.binlog._cbytes cimport le as _le

import struct

from kaitaistruct import EndOfStreamError, InvalidArgumentError, NoTerminatorFoundError
from kaitaistruct import KaitaiStream as _Reference

#: KaitaiStream checks the space left before reading this many bytes or more (and reports
#: size - pos as available, which a seek past the end can make negative).
cdef Py_ssize_t _LARGE_READ = 8 * 1024 * 1024

_F4LE = struct.Struct('<f')
_F8LE = struct.Struct('<d')
_F4BE = struct.Struct('>f')
_F8BE = struct.Struct('>d')


cdef inline uint64_t _be(const unsigned char* p, int k) noexcept:
    cdef uint64_t v = 0
    cdef int i
    for i in range(k):
        v = (v << 8) | p[i]
    return v


cdef class FastStream:
    """`KaitaiStream(io)` for reading: io is a BytesIO (read from its current position), bytes, a
    bytearray or memoryview (copied), or a seekable binary file (read whole)."""

    cdef bytes _buf
    cdef const unsigned char* _data
    cdef Py_ssize_t _pos
    cdef Py_ssize_t _size
    cdef object _source
    cdef public Py_ssize_t bits_left
    cdef public unsigned long long bits
    cdef public bint bits_le
    cdef public bint bits_write_mode

    def __init__(self, io):
        cdef Py_ssize_t start = 0
        if type(io) is bytes:
            buf = io
        elif isinstance(io, (bytes, bytearray, memoryview)):
            buf = bytes(io)
        else:
            getvalue = getattr(io, "getvalue", None)
            start = io.tell()
            if getvalue is not None:
                buf = getvalue()
            else:
                io.seek(0)
                buf = io.read()
                io.seek(start)
            buf = bytes(buf) if type(buf) is not bytes else buf
        self._source = io
        self._buf = buf
        self._data = <const unsigned char*> PyBytes_AS_STRING(buf)
        self._size = PyBytes_GET_SIZE(buf)
        self._pos = start
        self.bits_left = 0
        self.bits = 0
        self.bits_le = False
        self.bits_write_mode = False

    def __enter__(self):
        return self

    def __exit__(self, *args, **kwargs):
        self.close()

    def close(self):
        self.align_to_byte()
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    # -- positioning

    def is_eof(self):
        if not self.bits_write_mode and self.bits_left > 0:
            return False
        return self._pos >= self._size

    def seek(self, n):
        if n < 0:
            raise InvalidArgumentError("cannot seek to invalid position %d" % (n,))
        cdef Py_ssize_t to = n
        self.bits_left = 0
        self.bits = 0
        self._pos = to

    def pos(self):
        return self._pos + (1 if self.bits_write_mode and self.bits_left > 0 else 0)

    def size(self):
        return self._size

    def align_to_byte(self):
        self.bits_left = 0
        self.bits = 0

    # -- byte arrays

    cdef int _short(self, Py_ssize_t n) except -1:
        """A read of n bytes that the buffer cannot satisfy: BytesIO.read takes what is left."""
        cdef Py_ssize_t avail = self._size - self._pos
        if avail < 0:
            avail = 0
        self._pos += avail
        raise EndOfStreamError("requested %d bytes, but only %d bytes available" % (n, avail), n, avail)

    cdef bytes _take(self, object n):
        cdef Py_ssize_t k, avail, start
        if n < 0:
            raise InvalidArgumentError("requested invalid %d amount of bytes" % (n,))
        if n >= _LARGE_READ:
            avail = self._size - self._pos
            if n > avail:
                raise EndOfStreamError("requested %d bytes, but only %d bytes available" % (n, avail), n, avail)
        k = n
        start = self._pos
        if k > self._size - start and k > 0:     # BytesIO.read(0) past the end gives b""
            self._short(k)
        self._pos = start + k
        if start == 0 and k == self._size:
            return self._buf
        return PyBytes_FromStringAndSize(<const char*> self._data + start, k)

    def read_bytes(self, n):
        self.bits_left = 0
        self.bits = 0
        return self._take(n)

    def read_bytes_full(self):
        self.bits_left = 0
        self.bits = 0
        cdef Py_ssize_t start = self._pos
        if start >= self._size:
            return b""
        self._pos = self._size
        if start == 0:
            return self._buf
        return PyBytes_FromStringAndSize(<const char*> self._data + start, self._size - start)

    def read_bytes_term(self, term, include_term, consume_term, eos_error):
        self.bits_left = 0
        self.bits = 0
        term_byte = bytes((term,))
        cdef unsigned char t = (<const unsigned char*> PyBytes_AS_STRING(term_byte))[0]
        cdef Py_ssize_t start = self._pos, end
        if start >= self._size:
            if eos_error:
                raise NoTerminatorFoundError(term_byte, 0)
            return b""
        cdef const unsigned char* hit = <const unsigned char*> memchr(self._data + start, t, self._size - start)
        if hit == NULL:
            self._pos = self._size
            if eos_error:
                raise NoTerminatorFoundError(term_byte, 0)
            return PyBytes_FromStringAndSize(<const char*> self._data + start, self._size - start)
        end = hit - self._data
        self._pos = end + 1 if consume_term else end
        return PyBytes_FromStringAndSize(<const char*> self._data + start, end - start + (1 if include_term else 0))

    def read_bytes_term_multi(self, term, include_term, consume_term, eos_error):
        self.bits_left = 0
        self.bits = 0
        cdef Py_ssize_t unit_size = len(term)
        r = bytearray()
        while True:
            c = self._read_upto(unit_size)
            if len(c) < unit_size:
                if eos_error:
                    raise NoTerminatorFoundError(term, len(c))
                r += c
                return bytes(r)
            if c == term:
                if include_term:
                    r += c
                if not consume_term:
                    self._pos -= unit_size
                return bytes(r)
            r += c

    cdef bytes _read_upto(self, Py_ssize_t k):
        """BytesIO.read(k): at most k bytes, no error."""
        cdef Py_ssize_t start = self._pos
        if start >= self._size:
            return b""
        if k > self._size - start:
            k = self._size - start
        self._pos = start + k
        return PyBytes_FromStringAndSize(<const char*> self._data + start, k)

    def to_byte_array(self):
        self.bits_left = 0
        self.bits = 0
        return self._buf

    # -- integers: the bytes in place, no bytes object

    cdef inline const unsigned char* _fixed(self, Py_ssize_t k) except NULL:
        cdef Py_ssize_t start = self._pos
        self.bits_left = 0
        self.bits = 0
        if k > self._size - start:
            self._short(k)
        self._pos = start + k
        return self._data + start

    def read_u1(self):
        return self._fixed(1)[0]

    def read_u2le(self):
        return <unsigned int> _le(self._fixed(2), 2)

    def read_u4le(self):
        return <unsigned long> _le(self._fixed(4), 4)

    def read_u8le(self):
        return <unsigned long long> _le(self._fixed(8), 8)

    def read_u2be(self):
        return <unsigned int> _be(self._fixed(2), 2)

    def read_u4be(self):
        return <unsigned long> _be(self._fixed(4), 4)

    def read_u8be(self):
        return <unsigned long long> _be(self._fixed(8), 8)

    def read_s1(self):
        return <int8_t> self._fixed(1)[0]

    def read_s2le(self):
        return <int16_t> _le(self._fixed(2), 2)

    def read_s4le(self):
        return <int32_t> _le(self._fixed(4), 4)

    def read_s8le(self):
        return <int64_t> _le(self._fixed(8), 8)

    def read_s2be(self):
        return <int16_t> _be(self._fixed(2), 2)

    def read_s4be(self):
        return <int32_t> _be(self._fixed(4), 4)

    def read_s8be(self):
        return <int64_t> _be(self._fixed(8), 8)

    def read_f4le(self):
        return _F4LE.unpack(self.read_bytes(4))[0]

    def read_f8le(self):
        return _F8LE.unpack(self.read_bytes(8))[0]

    def read_f4be(self):
        return _F4BE.unpack(self.read_bytes(4))[0]

    def read_f8be(self):
        return _F8BE.unpack(self.read_bytes(8))[0]

    # -- unaligned bit values (KaitaiStream's arithmetic, on Python ints)

    def read_bits_int_le(self, n):
        self.bits_write_mode = False
        res = 0
        bits_needed = n - self.bits_left
        if bits_needed > 0:
            bytes_needed = ((bits_needed - 1) // 8) + 1
            buf = self._take(bytes_needed)
            for i, byte in enumerate(buf):
                res |= byte << (i * 8)
            new_bits = res >> bits_needed
            res = res << self.bits_left | self.bits
            self.bits = new_bits
        else:
            res = self.bits
            self.bits = self.bits >> n
        self.bits_left = -bits_needed % 8
        return res & ((1 << n) - 1)

    def read_bits_int_be(self, n):
        self.bits_write_mode = False
        res = 0
        bits_needed = n - self.bits_left
        self.bits_left = -bits_needed % 8
        if bits_needed > 0:
            bytes_needed = ((bits_needed - 1) // 8) + 1
            buf = self._take(bytes_needed)
            for byte in buf:
                res = res << 8 | byte
            new_bits = res
            res = res >> self.bits_left | self.bits << bits_needed
            self.bits = new_bits & ((1 << self.bits_left) - 1)
        else:
            res = self.bits >> -bits_needed
            self.bits = self.bits & ((1 << self.bits_left) - 1)
        return res

    # -- the static helpers the generated code calls on the class

    @staticmethod
    def byte_array_index(data, i):
        return data[i]

    @staticmethod
    def bytes_terminate(data, term, include_term):
        term_index = data.find(bytes((term,)))
        if term_index == -1:
            return data[:]
        return data[:term_index + (1 if include_term else 0)]

    @staticmethod
    def resolve_enum(enum_obj, value):
        try:
            return enum_obj(value)
        except ValueError:
            return value

    @staticmethod
    def int_from_byte(v):
        return v

    @staticmethod
    def byte_from_int(i):
        return bytes((i,))

    @staticmethod
    def byte_array_index_of(data, b):
        return data.find(bytes((b,)))

    @staticmethod
    def byte_array_min(b):
        return min(b)

    @staticmethod
    def byte_array_max(b):
        return max(b)

    @staticmethod
    def bytes_strip_right(data, pad_byte):
        return _Reference.bytes_strip_right(data, pad_byte)

    @staticmethod
    def bytes_terminate_multi(data, term, include_term):
        return _Reference.bytes_terminate_multi(data, term, include_term)

    @staticmethod
    def process_xor_one(data, key):
        return _Reference.process_xor_one(data, key)

    @staticmethod
    def process_xor_many(data, key):
        return _Reference.process_xor_many(data, key)

    @staticmethod
    def process_rotate_left(data, amount, group_size):
        return _Reference.process_rotate_left(data, amount, group_size)
