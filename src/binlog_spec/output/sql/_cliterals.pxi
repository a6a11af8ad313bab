# Included by _cstatements.pyx: the SQL literals of the decoded values of DECIMAL, DATE, DATETIME, TIMESTAMP,
# TIME, SET and BIT columns, exactly as `sql_text.literal` writes them. Each writer puts the text in `out`
# (at least LITERAL_ROOM bytes) and gives its length, or -1 where the value is not the common case (the
# callback, the reference `literal`, writes it then).
from cpython.datetime cimport (date_day, date_month, date_year, datetime_day, datetime_hour,
                               datetime_microsecond, datetime_minute, datetime_month, datetime_second,
                               datetime_tzinfo, datetime_year, import_datetime, timedelta_days,
                               timedelta_microseconds, timedelta_seconds)
from cpython.long cimport PyLong_AsUnsignedLongLongMask
from decimal import Decimal
import datetime as _dt

import_datetime()

cdef type DECIMAL = Decimal, DATETIME = _dt.datetime, DATE = _dt.date, TIMEDELTA = _dt.timedelta
cdef object UTC = _dt.timezone.utc
#: The room a writer may fill: a DECIMAL of 65 digits, a sign, a point and quotes; BIT(64) and quotes.
DEF LITERAL_ROOM = 128


cdef inline Py_ssize_t _digits(char *out, unsigned long long v, int width) noexcept:
    """v in decimal, zero-padded to `width`."""
    cdef char tmp[24]
    cdef int n = 0, k
    while True:
        tmp[n] = <char>(48 + v % 10)
        n += 1
        v //= 10
        if v == 0:
            break
    while n < width:
        tmp[n] = 48
        n += 1
    for k in range(n):
        out[k] = tmp[n - 1 - k]
    return n


cdef inline Py_ssize_t _frac6(char *out, long micro) noexcept:
    """text._frac: `.ffffff` when there are microseconds, else nothing."""
    if not micro:
        return 0
    out[0] = 46    # '.'
    return 1 + _digits(out + 1, micro, 6)


cdef Py_ssize_t _date_text(char *out, int y, int m, int d) noexcept:
    """'YYYY-MM-DD (no closing quote)."""
    cdef Py_ssize_t n = 1
    out[0] = 39
    n += _digits(out + n, y, 4)
    out[n] = 45
    n += 1 + _digits(out + n + 1, m, 2)
    out[n] = 45
    n += 1 + _digits(out + n + 1, d, 2)
    return n


cdef Py_ssize_t literal_datetime(char *out, object value):
    """text.literal of a datetime: naive, or aware in UTC (written as it is, no conversion needed);
    strftime's %Y gives no zero padding below year 1000: those go to the reference."""
    cdef object tz = datetime_tzinfo(value)
    cdef Py_ssize_t n
    cdef int y = datetime_year(value)
    if (tz is not None and tz is not UTC) or y < 1000:
        return -1
    n = _date_text(out, y, datetime_month(value), datetime_day(value))
    out[n] = 32
    n += 1 + _digits(out + n + 1, datetime_hour(value), 2)
    out[n] = 58
    n += 1 + _digits(out + n + 1, datetime_minute(value), 2)
    out[n] = 58
    n += 1 + _digits(out + n + 1, datetime_second(value), 2)
    n += _frac6(out + n, datetime_microsecond(value))
    out[n] = 39
    return n + 1


cdef Py_ssize_t literal_date(char *out, object value):
    """text.literal of a date: its isoformat, quoted."""
    cdef Py_ssize_t n = _date_text(out, date_year(value), date_month(value), date_day(value))
    out[n] = 39
    return n + 1


cdef Py_ssize_t literal_time(char *out, object value):
    """text._time: '[-]HH:MM:SS[.ffffff]', hours past 24 as they are; a span of more than 10^6 days goes
    to the reference."""
    cdef long long days = timedelta_days(value), total
    cdef unsigned long long a, secs
    cdef Py_ssize_t n = 1
    if days > 1000000 or days < -1000000:
        return -1
    total = (days * 86400 + timedelta_seconds(value)) * 1000000 + timedelta_microseconds(value)
    out[0] = 39
    if total < 0:
        out[1] = 45
        n = 2
        a = <unsigned long long>(-total)
    else:
        a = <unsigned long long>total
    secs = a // 1000000
    n += _digits(out + n, secs // 3600, 2)
    out[n] = 58
    n += 1 + _digits(out + n + 1, secs // 60 % 60, 2)
    out[n] = 58
    n += 1 + _digits(out + n + 1, secs % 60, 2)
    n += _frac6(out + n, a % 1000000)
    out[n] = 39
    return n + 1


cdef Py_ssize_t literal_decimal(char *out, object value):
    """format(value, "f"): str(value) where it has no exponent and is a number (the same digits then)."""
    cdef str text = str(value)
    cdef Py_ssize_t n = len(text), k
    cdef Py_UCS4 c
    if n > LITERAL_ROOM:
        return -1
    for k in range(n):
        c = text[k]
        if not (48 <= c <= 57 or c == 46 or c == 45):
            return -1
        out[k] = <char>c
    return n


cdef Py_ssize_t literal_bit(char *out, object value, int nbits):
    """text.literal of a BIT column's int: b'...', `nbits` digits (0: as many as the value has, at least
    one)."""
    cdef unsigned long long v
    cdef int width = nbits, k
    if type(value) is not int or value < 0 or value.bit_length() > 64 or nbits > 64:
        return -1
    v = PyLong_AsUnsignedLongLongMask(value)
    if width == 0:
        width = max(value.bit_length(), 1)
    out[0] = 98    # b
    out[1] = 39
    for k in range(width):
        out[2 + k] = <char>(48 + ((v >> (width - 1 - k)) & 1))
    out[2 + width] = 39
    return width + 3


cdef object set_text(object value, dict order):
    """The text text.literal quotes for a SET whose members are all text: joined by commas in the column's
    order (`order`: member -> its index, text._set_order), or alphabetical where the order is unknown
    (empty). None where not that case (a member that is bytes, or not among the column's)."""
    cdef list members = []
    cdef object m, got
    cdef unsigned long long seen = 0
    cdef PyObject *slots[64]       # borrowed: the set holds its members
    cdef Py_ssize_t i
    if not order:
        for m in value:
            if type(m) is not str:
                return None
            members.append(m)
        members.sort()
        return ",".join(members)
    for m in value:
        if type(m) is not str:
            return None
        got = order.get(m)
        if got is None or not 0 <= got < 64 or seen & (1ULL << <int>got):
            return None
        seen |= 1ULL << <int>got
        slots[<int>got] = <PyObject *>m
    for i in range(64):
        if seen & (1ULL << i):
            members.append(<object>slots[i])
    return ",".join(members)
