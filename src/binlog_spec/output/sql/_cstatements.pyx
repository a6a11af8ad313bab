# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled formatter of the SQL statements of one table's row changes: the text of
`binlog_spec.output.sql.statements` (build_insert, build_delete, build_update) for the common case, written
into one buffer with no Python object per piece.

`RowFormatter` is made once per table and SqlOptions by `statements.formatter`, which precomputes in
Python, with the reference functions, every piece that does not depend on the row: the statement
prefixes (verb, quoted table, the quoted column list), the quoted `name=` of every column, and a kind per
column. Per value it writes in C what `sql_text.literal` gives for the commonest values, exactly:

- None: `NULL`;
- an int (exactly int, not bool) outside JSON and BIT columns: its decimal digits;
- a str outside JSON columns: `sql_text.string_literal` (printable ASCII but the backslash quoted,
  quotes doubled; anything else `_utf8mb4 X'...'`, its UTF-8 bytes, surrogates passed);
- bytes outside JSON and BIT columns: `sql_text.hex_literal`;
- a finite float outside JSON and BIT columns: its repr;
- a Decimal, a date, a datetime (naive, or aware in UTC), a timedelta (TIME), a frozenset of text (SET,
  in the column's member order the formatter is given) outside JSON and BIT columns, and an int of a BIT
  column (its width given): the text of `sql_text.literal` (_cliterals.pxi).

Any other value, and every value of a JSON column, is written by the Python callback the
formatter holds (`literal(i, value)`, or `set_value(i, value)` for a SET clause: the reference
functions). Its methods return None when the row is not the common case (an image that lacks a column,
a key column NULL or missing, a callback's text not ASCII): the caller then builds the statement with the
reference code, which gives the text or the error.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.unicode cimport (PyUnicode_1BYTE_KIND, PyUnicode_AsEncodedString, PyUnicode_DATA,
                              PyUnicode_DecodeASCII, PyUnicode_GET_LENGTH, PyUnicode_KIND)
from libc.math cimport isfinite
from libc.string cimport memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)

# Column kinds (statements.formatter chooses one per column).
cdef enum:
    K_VALUE = 0        # the values above in C, any other by the callback
    K_CALL = 1         # NULL in C, any other value by the callback (JSON)
    K_BIT = 2          # NULL and ints in C (the column's width: its extra), any other by the callback

KINDS = {"value": K_VALUE, "call": K_CALL, "bit": K_BIT}

include "_cliterals.pxi"

cdef const char *HEX = b"0123456789ABCDEF"
#: The buffer's size, and the size above which it is given back after a statement.
cdef Py_ssize_t FIRST_BUFFER = 4096, BIG_BUFFER = 1 << 20


class NotCommon(Exception):
    """The row is not the common case: the reference code writes it."""


cdef class RowFormatter:
    cdef char *buf
    cdef Py_ssize_t len, cap
    cdef tuple insert_names, insert_slots, key_names, key_slots, key_eq
    cdef dict set_slots
    cdef tuple extras
    cdef int *kinds
    cdef Py_ssize_t n_kinds
    cdef bytes insert_prefix, delete_prefix, update_prefix
    cdef object literal, set_value
    cdef bint busy

    def __cinit__(self):
        self.buf = NULL
        self.kinds = NULL

    def __init__(self, kinds, str insert_prefix, insert_columns, str delete_prefix, key_columns,
                 str update_prefix, set_columns, literal, set_value, extras=None):
        """`kinds`: the kind code of every column of the table (by index). `insert_columns`: (index,
        name) of the columns an INSERT writes, in order; `key_columns`: (index, name, "`name`=") of the
        row key (empty: no key; DELETE and UPDATE are not the common case then); `set_columns`: name ->
        (index, "`name`=") of the columns a SET clause can name. The prefixes end where the values
        begin; every text given must be ASCII. `literal(i, value)` and `set_value(i, name, value)`:
        the text of any value of column i. `extras`: per column, the width in bits of a K_BIT column, the
        SET member order (member -> index, text.set_order; empty: alphabetical) of a K_VALUE one."""
        cdef Py_ssize_t k
        self.n_kinds = len(kinds)
        self.kinds = <int *>PyMem_Malloc(max(self.n_kinds, 1) * sizeof(int))
        self.cap = FIRST_BUFFER
        self.buf = <char *>PyMem_Malloc(self.cap)
        if self.kinds == NULL or self.buf == NULL:
            raise MemoryError()
        for k in range(self.n_kinds):
            if kinds[k] not in (K_VALUE, K_CALL, K_BIT):
                raise ValueError(f"unknown kind {kinds[k]}")
            self.kinds[k] = kinds[k]
        self.extras = tuple(extras) if extras is not None else (None,) * self.n_kinds
        if len(self.extras) != self.n_kinds:
            raise ValueError("one extra per column")
        for k in range(self.n_kinds):
            if self.kinds[k] == K_BIT and type(self.extras[k]) is not int:
                raise ValueError("a BIT column's extra is its width")
            if self.kinds[k] == K_VALUE and self.extras[k] is not None and type(self.extras[k]) is not dict:
                raise ValueError("a column's extra is its SET member order")
        self.insert_prefix = _ascii(insert_prefix)
        self.insert_names = tuple(n for _i, n in insert_columns)
        self.insert_slots = tuple(_slot(i, self.n_kinds) for i, _n in insert_columns)
        self.delete_prefix = _ascii(delete_prefix)
        self.key_names = tuple(n for _i, n, _eq in key_columns)
        self.key_slots = tuple(_slot(i, self.n_kinds) for i, _n, _eq in key_columns)
        self.key_eq = tuple(_ascii(eq) for _i, _n, eq in key_columns)
        self.update_prefix = _ascii(update_prefix)
        self.set_slots = {n: (_slot(i, self.n_kinds), _ascii(eq)) for n, (i, eq) in set_columns.items()}
        self.literal = literal
        self.set_value = set_value

    def __dealloc__(self):
        PyMem_Free(self.buf)
        PyMem_Free(self.kinds)

    # -- the buffer -----------------------------------------------------------------------------

    cdef int _reserve(self, Py_ssize_t n) except -1:
        cdef Py_ssize_t cap = self.cap
        cdef char *grown
        if self.len + n <= cap:
            return 0
        while self.len + n > cap:
            cap *= 2
        grown = <char *>PyMem_Realloc(self.buf, cap)
        if grown == NULL:
            raise MemoryError()
        self.buf, self.cap = grown, cap
        return 0

    cdef inline int _put(self, const char *s, Py_ssize_t n) except -1:
        self._reserve(n)
        memcpy(self.buf + self.len, s, n)
        self.len += n
        return 0

    cdef inline int _put_bytes(self, bytes b) except -1:
        return self._put(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))

    cdef int _put_ascii(self, object text) except -1:
        """A str that must be ASCII (a callback's text): NotCommon when it is not."""
        if type(text) is not str or not PyUnicode_IS_ASCII(text):
            raise NotCommon
        return self._put(<const char *>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text))

    cdef str _take(self):
        cdef str text = PyUnicode_DecodeASCII(self.buf, self.len, NULL)
        self.len = 0
        return text

    # -- values -----------------------------------------------------------------------------------

    cdef int _put_int(self, object value) except -1:
        cdef int overflow = 0
        cdef long long v = PyLong_AsLongLongAndOverflow(value, &overflow)
        cdef unsigned long long u
        cdef char digits[24]
        cdef int n = 0
        if overflow:
            return self._put_ascii(str(value))
        if v < 0:
            u = <unsigned long long>(-(v + 1)) + 1
        else:
            u = <unsigned long long>v
        while True:
            digits[23 - n] = <char>(48 + u % 10)
            n += 1
            u //= 10
            if u == 0:
                break
        if v < 0:
            digits[23 - n] = 45    # '-'
            n += 1
        return self._put(digits + 24 - n, n)

    cdef int _put_str(self, str value) except -1:
        """sql_text.string_literal."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(value), k, quotes = 0
        cdef const unsigned char *p
        cdef unsigned char c
        cdef char *out
        if PyUnicode_KIND(value) == PyUnicode_1BYTE_KIND:
            p = <const unsigned char *>PyUnicode_DATA(value)
            for k in range(n):
                c = p[k]
                if c < 0x20 or c > 0x7e or c == 0x5c:
                    break
                if c == 0x27:
                    quotes += 1
            else:
                self._reserve(n + quotes + 2)
                out = self.buf + self.len
                out[0] = 0x27
                if quotes:
                    out += 1
                    for k in range(n):
                        out[0] = <char>p[k]
                        out += 1
                        if p[k] == 0x27:
                            out[0] = 0x27
                            out += 1
                    out[0] = 0x27
                else:
                    memcpy(out + 1, p, n)
                    out[n + 1] = 0x27
                self.len += n + quotes + 2
                return 0
        self._put(b"_utf8mb4 X'", 11)
        self._put_hex(PyUnicode_AsEncodedString(value, b"utf-8", b"surrogatepass"))
        return self._put(b"'", 1)

    cdef int _put_hex(self, bytes data) except -1:
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), k
        cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(data)
        cdef char *out
        self._reserve(2 * n)
        out = self.buf + self.len
        for k in range(n):
            out[2 * k] = HEX[p[k] >> 4]
            out[2 * k + 1] = HEX[p[k] & 15]
        self.len += 2 * n
        return 0

    cdef int _put_value(self, Py_ssize_t i, object value, object name) except -1:
        """The literal of `value` of column i (name: not None in a SET clause, for set_value)."""
        cdef type cls
        cdef char tmp[LITERAL_ROOM]
        cdef Py_ssize_t n = -1
        cdef object text
        if value is None:
            return self._put(b"NULL", 4)
        if self.kinds[i] == K_BIT:
            n = literal_bit(tmp, value, <int>self.extras[i])
            if n >= 0:
                return self._put(tmp, n)
        elif self.kinds[i] == K_VALUE:
            cls = type(value)
            if cls is int:
                return self._put_int(value)
            if cls is str:
                return self._put_str(<str>value)
            if cls is bytes:
                if PyBytes_GET_SIZE(value) == 0:
                    return self._put(b"''", 2)
                self._put(b"X'", 2)
                self._put_hex(<bytes>value)
                return self._put(b"'", 1)
            if cls is float and isfinite(PyFloat_AS_DOUBLE(value)):
                return self._put_ascii(repr(value))
            if cls is DECIMAL:
                n = literal_decimal(tmp, value)
            elif cls is DATETIME:
                n = literal_datetime(tmp, value)
            elif cls is DATE:
                n = literal_date(tmp, value)
            elif cls is TIMEDELTA:
                n = literal_time(tmp, value)
            elif cls is frozenset:
                text = set_text(value, self.extras[i] or {})
                if text is not None:
                    return self._put_str(<str>text)
            if n >= 0:
                return self._put(tmp, n)
        if name is None:
            return self._put_ascii(self.literal(i, value))
        return self._put_ascii(self.set_value(i, name, value))

    cdef int _put_where(self, dict image) except -1:
        """The key's conditions (statements._where when the image holds the whole key, not NULL)."""
        cdef Py_ssize_t k
        cdef PyObject *got
        if not self.key_names:
            raise NotCommon
        for k in range(len(self.key_names)):
            got = PyDict_GetItem(image, self.key_names[k])
            if got == NULL or <object>got is None:
                raise NotCommon
            if k:
                self._put(b" AND ", 5)
            self._put_bytes(<bytes>self.key_eq[k])
            self._put_value(<Py_ssize_t>self.key_slots[k], <object>got, None)
        return 0

    # -- statements -------------------------------------------------------------------------------

    def insert(self, dict image not None):
        """build_insert's text of an image that holds every column an INSERT writes; else None."""
        return self._insert(image)

    def delete(self, dict image not None):
        """build_delete's text of a row found by its key; else None."""
        return self._delete(image)

    def update(self, dict before not None, dict after not None, bint full):
        """build_update's text (no REPLACE) of a row found by its key; None when it is not that case, or
        when `full` and the after image lacks a column an INSERT writes (statements._check)."""
        return self._update(before, after, full)

    def texts(self, list changes not None, table, op, int kind, bint swap, bint full, type diffs not None):
        """The texts of the leading row changes of `changes` that are the common case, and how many: each
        of `table` (identical) and operation `op`, written as `kind` (0 INSERT of the after image, 1 DELETE
        of the before image, 2 UPDATE), with `swap` (a rollback) the images swapped first, and none then
        whose after image holds a value of type `diffs` (statements._refuse_diff_rollback). It stops at
        the first row that is not the common case, or whose text raises: `statement` writes (or raises)
        that one and the rest."""
        cdef list out = []
        cdef Py_ssize_t k, n = len(changes), pos
        cdef object rc, before, after, text
        cdef PyObject *key
        cdef PyObject *value
        for k in range(n):
            rc = changes[k]
            try:
                if rc.table_def is not table or rc.op != op:
                    break
                before, after = rc.before, rc.after
                if swap:
                    if type(after) is dict:
                        pos = 0
                        while PyDict_Next(after, &pos, &key, &value):
                            if type(<object>value) is diffs:
                                return out, k
                    before, after = after, before
                if kind == 0:
                    if type(after) is not dict:
                        break
                    text = self._insert(after)
                elif kind == 1:
                    if type(before) is not dict:
                        break
                    text = self._delete(before)
                else:
                    if type(before) is not dict or type(after) is not dict:
                        break
                    text = self._update(before, after, full)
            except Exception:       # statement() raises it again, after the texts before it
                self.len = 0
                break
            if text is None:
                break
            out.append(text)
        else:
            return out, n
        return out, k

    cdef object _insert(self, dict image):
        if self.busy:
            return None
        self.busy = True
        try:
            return self._insert_text(image)
        finally:
            self._done()

    cdef object _delete(self, dict image):
        if self.busy:
            return None
        self.busy = True
        try:
            return self._delete_text(image)
        finally:
            self._done()

    cdef object _update(self, dict before, dict after, bint full):
        if self.busy:
            return None
        self.busy = True
        try:
            return self._update_text(before, after, full)
        finally:
            self._done()

    cdef void _done(self) noexcept:
        """The buffer free for the next statement (None is returned while a statement is being written: a
        callback that lets another thread in), and back to its first size after a large value."""
        cdef char *small
        self.busy = False
        self.len = 0
        if self.cap > BIG_BUFFER:
            small = <char *>PyMem_Realloc(self.buf, FIRST_BUFFER)
            if small != NULL:
                self.buf, self.cap = small, FIRST_BUFFER

    cdef object _insert_text(self, dict image):
        cdef Py_ssize_t k
        cdef PyObject *got
        self.len = 0
        for k in range(len(self.insert_names)):     # first: the reference checks the image before any value
            if PyDict_GetItem(image, self.insert_names[k]) == NULL:
                return None
        try:
            self._put_bytes(self.insert_prefix)
            for k in range(len(self.insert_names)):
                got = PyDict_GetItem(image, self.insert_names[k])
                if k:
                    self._put(b", ", 2)
                self._put_value(<Py_ssize_t>self.insert_slots[k], <object>got, None)
            self._put(b");", 2)
        except NotCommon:
            self.len = 0
            return None
        return self._take()

    cdef object _delete_text(self, dict image):
        self.len = 0
        try:
            self._put_bytes(self.delete_prefix)
            self._put_where(image)
            self._put(b";", 1)
        except NotCommon:
            self.len = 0
            return None
        return self._take()

    cdef object _update_text(self, dict before, dict after, bint full):
        cdef Py_ssize_t pos = 0, k = 0
        cdef PyObject *key
        cdef PyObject *value
        cdef PyObject *slot
        cdef tuple entry
        self.len = 0
        try:
            if full:
                for k in range(len(self.insert_names)):
                    if PyDict_GetItem(after, self.insert_names[k]) == NULL:
                        raise NotCommon
                k = 0
            self._put_bytes(self.update_prefix)
            while PyDict_Next(after, &pos, &key, &value):
                slot = PyDict_GetItem(self.set_slots, <object>key)
                if slot == NULL:
                    continue
                entry = <tuple>slot
                if k:
                    self._put(b", ", 2)
                k += 1
                self._put_bytes(<bytes>entry[1])
                self._put_value(<Py_ssize_t>entry[0], <object>value, <object>key)
            self._put(b" WHERE ", 7)
            self._put_where(before)
            self._put(b";", 1)
        except NotCommon:
            self.len = 0
            return None
        return self._take()


cdef bytes _ascii(str text):
    if not text.isascii():
        raise ValueError("the formatter takes ASCII text only")
    return text.encode("ascii")


cdef object _slot(object i, Py_ssize_t n):
    if not 0 <= i < n:
        raise ValueError(f"column {i} out of range")
    return i
