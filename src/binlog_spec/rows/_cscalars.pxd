# cython: language_level=3
"""The compiled twins of rows/scalars.py's value decoders, inline, for rows/_cdecoder.pyx's ImageDecoder: each
gives the Python value the pure decoder gives for the same bytes (same type, same value), or None where the
pure decoder gives something else (a str for a zero or invalid date, an error): the caller then hands the
image back to the pure decoder. The caller has checked that the value's bytes are there.

* `decimal_value`: NEWDECIMAL, bin2decimal (strings/decimal.cc) as scalars._bin2decimal reads it, made into
  the same decimal.Decimal from the same digit text (never a negative zero);
* `time2_value`, `old_time_value`: TIME2 (my_time_packed_from_binary) and the old TIME, classic or MariaDB
  hires (Field_time, Field_time_hires), as datetime.timedelta;
* `old_datetime_value`, `old_timestamp_value`: the old DATETIME and TIMESTAMP, classic or hires;
* `utc_datetime`, `signed_frac`, `valid_date`, `be`: what the DATETIME2/TIMESTAMP2 kinds use too;
* `decimal_text`, `date_fields`, `datetime2_fields`, `timestamp2_fields`, `time2_fields`, `civil`: the digits,
  fields and dates those values are made of (the decoder's checks with them), which
  output/_crow_text.pyx writes as text without making the value.
"""
cimport cython

from cpython.datetime cimport datetime_new, timedelta_new
from cpython.unicode cimport PyUnicode_DecodeASCII


cdef inline unsigned long long be(const unsigned char *q, int size) noexcept:
    """The big-endian unsigned integer of `size` (at most 8) bytes."""
    cdef unsigned long long v = 0
    cdef int i
    for i in range(size):
        v = (v << 8) | q[i]
    return v


cdef inline unsigned long long pow10(int n) noexcept:
    cdef unsigned long long v = 1
    while n > 0:
        v *= 10
        n -= 1
    return v


cdef inline bint valid_date(long long year, long long month, long long day) noexcept:
    """Whether datetime.date takes it (a proleptic calendar date of years 1-9999)."""
    cdef int days = 31
    if month == 2:
        days = 29 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 28
    elif month == 4 or month == 6 or month == 9 or month == 11:
        days = 30
    return 1 <= year <= 9999 and 1 <= month <= 12 and 1 <= day <= days


cdef inline object naive_datetime(long long year, long long month, long long day, long long hour,
                                  long long minute, long long second, long long usec):
    """datetime.datetime(...), or None where it raises (scalars._datetime_or_str gives a str then)."""
    if not valid_date(year, month, day) or not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59):
        return None
    return datetime_new(<int>year, <int>month, <int>day, <int>hour, <int>minute, <int>second, <int>usec, None)


cdef inline long long signed_frac(const unsigned char *q, int fsp) noexcept:
    """The fraction bytes of DATETIME2/TIMESTAMP2 as microseconds (signed, as MySQL reads them)."""
    cdef long long v
    if fsp == 0:
        return 0
    if fsp <= 2:
        return (<signed char>q[0]) * 10000
    if fsp <= 4:
        v = <long long>be(q, 2)
        return (v - 0x10000 if v & 0x8000 else v) * 100
    v = <long long>be(q, 3)
    return v - 0x1000000 if v & 0x800000 else v


@cython.cdivision(True)     # (no operand is negative)
cdef inline void civil(long long days, long long *year, long long *month, long long *day) noexcept:
    """The proleptic Gregorian date `days` after 1970-01-01 (days >= 0)."""
    cdef long long z = days + 719468, era, doe, yoe, doy, mp
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day[0] = doy - (153 * mp + 2) // 5 + 1
    month[0] = mp + 3 if mp < 10 else mp - 9
    year[0] = yoe + era * 400 + (1 if month[0] <= 2 else 0)


cdef inline object utc_datetime(long long seconds, int usec, object utc):
    """datetime.fromtimestamp(seconds, utc) + timedelta(microseconds=usec), for 0 <= seconds < 2**32."""
    cdef long long rem = seconds % 86400, year, month, day
    civil(seconds // 86400, &year, &month, &day)
    return datetime_new(year, month, day, rem // 3600, rem // 60 % 60, rem % 60, usec, utc)


cdef inline bint date_fields(const unsigned char *q, long long *f) noexcept:
    """DATE (3 bytes little-endian, year << 9 | month << 5 | day) as year, month, day in f[0..2]; False where the
    pure decoder gives no datetime.date (a zero or invalid date: a str)."""
    cdef long long u = q[0] | (q[1] << 8) | (q[2] << 16)
    f[0], f[1], f[2] = u >> 9, (u >> 5) & 15, u & 31
    return valid_date(f[0], f[1], f[2])


@cython.cdivision(True)     # (no operand is negative)
cdef inline bint datetime2_fields(const unsigned char *q, int fsp, long long *f) noexcept:
    """DATETIME2 (5 bytes big-endian offset by 0x8000000000: year*13+month << 22 | day << 17 | hour << 12 |
    minute << 6 | second, then the fraction) as year, month, day, hour, minute, second, microsecond in f[0..6];
    False where the pure decoder gives no datetime (a negative value or fraction, an invalid date or time)."""
    cdef long long s = <long long>be(q, 5) - 0x8000000000, frac = signed_frac(q + 5, fsp), hms
    if s < 0 or frac < 0 or frac > 999999:
        return False
    hms = s % (1 << 17)
    s >>= 17
    f[0], f[1], f[2] = (s >> 5) // 13, (s >> 5) % 13, s % 32
    f[3], f[4], f[5], f[6] = hms >> 12, (hms >> 6) % 64, hms % 64, frac
    return valid_date(f[0], f[1], f[2]) and f[3] <= 23 and f[4] <= 59 and f[5] <= 59


@cython.cdivision(True)     # (no operand is negative)
cdef inline bint timestamp2_fields(const unsigned char *q, int fsp, long long *f) noexcept:
    """TIMESTAMP2 (4 bytes big-endian seconds, then the fraction; fsp 1-2 unsigned) as the UTC year, month, day,
    hour, minute, second, microsecond in f[0..6]; False for the zero timestamp and a fraction out of range."""
    cdef long long seconds = <long long>be(q, 4), usec
    usec = q[4] * 10000 if fsp == 1 or fsp == 2 else signed_frac(q + 4, fsp)
    if usec < 0 or usec > 999999 or (seconds == 0 and usec == 0):
        return False
    civil(seconds // 86400, &f[0], &f[1], &f[2])
    f[3], f[4], f[5], f[6] = seconds % 86400 // 3600, seconds // 60 % 60, seconds % 60, usec
    return True


@cython.cdivision(True)     # (no operand is negative)
cdef inline bint time2_fields(const unsigned char *q, int fsp, long long *f) noexcept:
    """TIME2 (time2_packed) as negative (0 or 1), hours, minutes, seconds, microseconds in f[0..4]; False where
    the pure decoder refuses it (a part out of range)."""
    cdef long long packed = time2_packed(q, fsp), magnitude, hms
    magnitude = -packed if packed < 0 else packed
    hms = magnitude >> 24
    f[0], f[1], f[2], f[3], f[4] = packed < 0, (hms >> 12) % 1024, (hms >> 6) % 64, hms % 64, magnitude % 16777216
    return f[2] <= 59 and f[3] <= 59 and f[4] <= 999999


cdef inline bint decimal_reads(const unsigned char *q, int precision, int scale) noexcept:
    """Whether `decimal_text` reads the NEWDECIMAL at q (no group has more digits than it holds), its text not
    made (rows/_cdecoder.pyx's check of a value not written)."""
    cdef int intg = precision - scale, ngroups, g, nd, nbytes, i, offset = 0
    cdef unsigned char mask = 0 if q[0] & 0x80 else 0xFF
    cdef unsigned long long group
    ngroups = (1 if intg % 9 else 0) + intg // 9 + scale // 9 + (1 if scale % 9 else 0)
    for g in range(ngroups):
        if g == 0 and intg % 9:
            nd = intg % 9
        elif g == ngroups - 1 and scale % 9:
            nd = scale % 9
        else:
            nd = 9
        nbytes = 4 if nd == 9 else (nd + 1) // 2
        group = 0
        for i in range(offset, offset + nbytes):
            group = (group << 8) | ((q[i] ^ mask ^ 0x80) if i == 0 else (q[i] ^ mask))
        if group >= pow10(nd):
            return False
        offset += nbytes
    return True


cdef inline int decimal_text(const unsigned char *q, int precision, int scale, char *text) noexcept:
    """scalars._bin2decimal's digit text into `text` (72 bytes at least): 9-digit groups in 4 big-endian bytes
    (1-8 digits in 1-4 bytes at either end), sign bit inverted, a negative number with every byte inverted;
    an optional '-', the integer digits without leading zeros (one 0 at least), then '.' and `scale` digits.
    Its length, or -1 when a group has more digits than it holds (the pure decoder's error). The text is the
    Decimal's (and the JSON and SQL forms' digits: output/_crow_text.pyx)."""
    cdef char digits[72]
    cdef int intg = precision - scale, ngroups, g, nd, nbytes, n = 0, t = 0, i, offset = 0
    cdef unsigned char mask = 0 if q[0] & 0x80 else 0xFF
    cdef unsigned long long group
    cdef bint nonzero = 0
    ngroups = (1 if intg % 9 else 0) + intg // 9 + scale // 9 + (1 if scale % 9 else 0)
    for g in range(ngroups):
        if g == 0 and intg % 9:
            nd = intg % 9
        elif g == ngroups - 1 and scale % 9:
            nd = scale % 9
        else:
            nd = 9
        nbytes = 4 if nd == 9 else (nd + 1) // 2
        group = 0
        for i in range(offset, offset + nbytes):
            group = (group << 8) | ((q[i] ^ mask ^ 0x80) if i == 0 else (q[i] ^ mask))
        if group >= pow10(nd):
            return -1
        offset += nbytes
        for i in range(n + nd - 1, n - 1, -1):
            digits[i] = <char>(48 + group % 10)
            group //= 10
        n += nd
    for i in range(n):
        if digits[i] != 48:
            nonzero = 1
            break
    if mask and nonzero:
        text[t] = 45                      # '-': a negative zero is read as zero
        t += 1
    i = 0
    while i < intg and digits[i] == 48:
        i += 1
    if i == intg:
        text[t] = 48
        t += 1
    while i < intg:
        text[t] = digits[i]
        t += 1
        i += 1
    if scale:
        text[t] = 46
        t += 1
        for i in range(intg, n):
            text[t] = digits[i]
            t += 1
    return t


cdef inline object decimal_value(const unsigned char *q, int precision, int scale, object decimal_type):
    """scalars._bin2decimal: the decimal.Decimal of `decimal_text`, None where it has none."""
    cdef char text[72]
    cdef int t = decimal_text(q, precision, scale, text)
    if t < 0:
        return None
    return decimal_type(PyUnicode_DecodeASCII(text, t, NULL))


cdef inline object _timedelta(bint negative, long long hour, long long minute, long long second, long long usec):
    """scalars._timedelta: the signed time, or None when a part is out of range (the pure decoder's error)."""
    cdef long long total, days
    if minute > 59 or second > 59 or usec > 999999:
        return None
    total = ((hour * 60 + minute) * 60 + second) * 1000000 + usec
    if negative:
        total = -total
    days = total // 86400000000
    if total - days * 86400000000 < 0:
        days -= 1
    total -= days * 86400000000
    return timedelta_new(<int>days, <int>(total // 1000000), <int>(total % 1000000))


cdef inline long long time2_packed(const unsigned char *q, int fsp) noexcept:
    """scalars.decode_time2's packed value: 3 bytes big-endian offset by 0x800000, then the fraction in
    (fsp+1)//2 bytes; a negative value with a fraction is the next lower second plus the complement of the
    fraction. Its magnitude's bits: hours << 36 | minutes << 30 | seconds << 24 | microseconds."""
    cdef long long intpart = <long long>be(q, 3) - 0x800000, frac
    if fsp == 0:
        return intpart * 16777216
    if fsp <= 2:
        frac = q[3]
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x100
        return intpart * 16777216 + frac * 10000
    if fsp <= 4:
        frac = <long long>be(q + 3, 2)
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x10000
        return intpart * 16777216 + frac * 100
    return <long long>be(q, 6) - 0x800000000000


cdef inline object time2_value(const unsigned char *q, int fsp):
    """scalars.decode_time2, as datetime.timedelta (time2_fields)."""
    cdef long long f[5]
    if not time2_fields(q, fsp, f):
        return None
    return _timedelta(f[0], f[1], f[2], f[3], f[4])


#: MariaDB's hires TIME zero point, 838:59:59 + 1 s in microseconds (Field_time_hires::zero_point).
cdef enum:
    HIRES_TIME_ZERO_S = 838 * 3600 + 59 * 60 + 59 + 1


cdef inline object old_time_value(const unsigned char *q, int fsp, int size):
    """scalars.decode_time: the classic TIME (signed 3-byte little-endian [-]HHMMSS), or MariaDB's hires
    TIME(fsp) (big-endian units of the precision offset by the zero point) in `size` bytes."""
    cdef long long v, seconds, usec
    if fsp:
        v = <long long>be(q, size) * <long long>pow10(6 - fsp) - HIRES_TIME_ZERO_S * <long long>1000000
        usec = -v if v < 0 else v
        seconds = usec // 1000000
        return _timedelta(v < 0, seconds // 3600, seconds // 60 % 60, seconds % 60, usec % 1000000)
    v = q[0] | (q[1] << 8) | (q[2] << 16)
    if v & 0x800000:
        v -= 0x1000000
    seconds = -v if v < 0 else v
    return _timedelta(v < 0, seconds // 10000, seconds // 100 % 100, seconds % 100, 0)


cdef inline object old_datetime_value(const unsigned char *q, int fsp, int size):
    """scalars.decode_datetime: the classic DATETIME (8 bytes little-endian YYYYMMDDhhmmss), or MariaDB's
    hires DATETIME(fsp) (big-endian packed time in units of the precision); None for what is no datetime."""
    cdef unsigned long long v = 0, date, time, mult
    cdef int i
    if fsp:
        v, mult = be(q, size), pow10(6 - fsp)
        if v > 0xFFFFFFFFFFFFFFFF // mult:
            return None
        v *= mult
        return naive_datetime(v // 1000000 // 60 // 60 // 24 // 32 // 13, v // 1000000 // 60 // 60 // 24 // 32 % 13,
                              v // 1000000 // 60 // 60 // 24 % 32, v // 1000000 // 60 // 60 % 24,
                              v // 1000000 // 60 % 60, v // 1000000 % 60, v % 1000000)
    for i in range(7, -1, -1):
        v = (v << 8) | q[i]
    date, time = v // 1000000, v % 1000000
    return naive_datetime(date // 10000, date // 100 % 100, date % 100, time // 10000, time // 100 % 100,
                          time % 100, 0)


cdef inline object old_timestamp_value(const unsigned char *q, int fsp, int size, object utc):
    """scalars.decode_timestamp: the classic TIMESTAMP (4 bytes little-endian seconds), or MariaDB's hires
    TIMESTAMP(fsp) (4 bytes big-endian seconds, the fraction big-endian in units of the precision); None
    for the zero timestamp and a fraction past 999999."""
    cdef long long seconds, usec = 0
    if fsp:
        seconds = <long long>be(q, 4)
        usec = <long long>be(q + 4, size - 4) * <long long>pow10(6 - fsp)
    else:
        seconds = q[0] | (q[1] << 8) | (q[2] << 16) | (<long long>q[3] << 24)
    if usec > 999999 or (seconds == 0 and usec == 0):
        return None
    return utc_datetime(seconds, <int>usec, utc)
