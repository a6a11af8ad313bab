"""Decoders of the fixed-layout values of row images: integers, YEAR, BIT, floats, decimals, dates
and times (see `binlog_spec.rows.values` for the table of types and what each gives)."""
from __future__ import annotations

import decimal
import datetime as dt
import struct

from binlog_spec.errors import ValueDecodeError
from binlog_spec.rows.column_types import Column, DATETIME, Decoder, TIME, TIMESTAMP, _TYPE_NAMES


UTC = dt.timezone.utc

# --------------------------------------------------------------------------
# Helpers


def _error(col: Column, pos: int, message: str) -> ValueDecodeError:
    type_name = _TYPE_NAMES.get(col.type_code, str(col.type_code))
    who = f"column {col.name!r} " if col.name else "column "
    return ValueDecodeError(f"{who}({type_name}) at offset {pos}: {message}")


def _take(buf: bytes, pos: int, size: int, col: Column) -> bytes:
    end = pos + size
    if pos < 0 or end > len(buf):
        raise _error(col, pos, f"needs {size} bytes, only {max(len(buf) - pos, 0)} left")
    return bytes(buf[pos:end])


def _meta_int(col: Column, key: str, pos: int) -> int:
    value = col.meta.get(key) if isinstance(col.meta, dict) else None
    if not isinstance(value, int):
        raise _error(col, pos, f"column metadata has no {key!r} (got {col.meta!r})")
    return value


def _length_prefixed(buf: bytes, pos: int, col: Column, prefix: int) -> tuple[bytes, int]:
    """Bytes after a little-endian length of `prefix` bytes (1-4)."""
    if not 1 <= prefix <= 4:
        raise _error(col, pos, f"length prefix of {prefix} bytes is not 1-4")
    length = int.from_bytes(_take(buf, pos, prefix, col), "little")
    return _take(buf, pos + prefix, length, col), pos + prefix + length


def _fsp(col: Column, pos: int) -> int:
    fsp = _meta_int(col, "fsp", pos)
    if not 0 <= fsp <= 6:
        raise _error(col, pos, f"fractional seconds precision {fsp} is not 0-6")
    return fsp


def _frac_text(usec: int, fsp: int) -> str:
    return f".{usec:06d}"[: fsp + 1] if fsp else ""


def _date_or_str(year: int, month: int, day: int) -> dt.date | str:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}"


def _datetime_or_str(year: int, month: int, day: int, hour: int, minute: int, second: int, usec: int,
                     fsp: int) -> dt.datetime | str:
    try:
        return dt.datetime(year, month, day, hour, minute, second, usec)
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}{_frac_text(usec, fsp)}"


def _timedelta(negative: bool, hour: int, minute: int, second: int, usec: int, col: Column,
               pos: int) -> dt.timedelta:
    if minute > 59 or second > 59 or usec > 999999:
        raise _error(col, pos, f"time {hour}:{minute}:{second}.{usec} is out of range")
    value = dt.timedelta(hours=hour, minutes=minute, seconds=second, microseconds=usec)
    return -value if negative else value


# --------------------------------------------------------------------------
# Integers


def _int_decoder(size: int) -> Decoder:
    def decode(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
        raw = _take(buf, pos, size, col)
        return int.from_bytes(raw, "little", signed=not col.unsigned), pos + size
    decode.__name__ = f"decode_int{size * 8}"
    return decode


decode_tiny = _int_decoder(1)
decode_short = _int_decoder(2)
decode_int24 = _int_decoder(3)
decode_long = _int_decoder(4)
decode_longlong = _int_decoder(8)


def decode_year(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
    byte = _take(buf, pos, 1, col)[0]
    return (1900 + byte if byte else 0), pos + 1


def decode_bit(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
    bits, whole = _meta_int(col, "bits", pos), _meta_int(col, "bytes", pos)
    if bits > 7:
        raise _error(col, pos, f"BIT metadata has {bits} bits in the partial byte")
    size = whole + (1 if bits else 0)
    return int.from_bytes(_take(buf, pos, size, col), "big"), pos + size


# --------------------------------------------------------------------------
# Floating point and decimals


def decode_float(buf: bytes, pos: int, col: Column) -> tuple[float, int]:
    return struct.unpack("<f", _take(buf, pos, 4, col))[0], pos + 4


def decode_double(buf: bytes, pos: int, col: Column) -> tuple[float, int]:
    return struct.unpack("<d", _take(buf, pos, 8, col))[0], pos + 8


_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_binary_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (decimal_bin_size)."""
    intg0, intg0x = divmod(precision - scale, 9)
    frac0, frac0x = divmod(scale, 9)
    return intg0 * 4 + _DIG2BYTES[intg0x] + frac0 * 4 + _DIG2BYTES[frac0x]


def _bin2decimal(raw: bytes, precision: int, scale: int, col: Column, pos: int) -> decimal.Decimal:
    """strings/decimal.cc bin2decimal: 9-digit groups in 4 big-endian bytes, sign bit inverted,
    negative numbers stored with every byte inverted."""
    data = bytearray(raw)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    intg0, intg0x = divmod(precision - scale, 9)
    frac0, frac0x = divmod(scale, 9)
    groups = ([intg0x] if intg0x else []) + [9] * intg0 + [9] * frac0 + ([frac0x] if frac0x else [])
    text, offset = [], 0
    for ndigits in groups:
        nbytes = _DIG2BYTES[ndigits]
        group = int.from_bytes(data[offset:offset + nbytes], "big")
        if group >= 10 ** ndigits:
            raise _error(col, pos, f"DECIMAL({precision},{scale}) group {group} has more than {ndigits} digits")
        text.append(f"{group:0{ndigits}d}")
        offset += nbytes
    digits = "".join(text)
    int_len = len(digits) - scale
    number = (digits[:int_len].lstrip("0") or "0") + ("." + digits[int_len:] if scale else "")
    value = decimal.Decimal(number)
    return value.copy_negate() if negative and value else value


def decode_newdecimal(buf: bytes, pos: int, col: Column) -> tuple[decimal.Decimal, int]:
    precision, scale = _meta_int(col, "precision", pos), _meta_int(col, "scale", pos)
    if not (1 <= precision <= 65 and 0 <= scale <= precision):
        raise _error(col, pos, f"DECIMAL({precision},{scale}) is not a valid precision/scale")
    size = decimal_binary_size(precision, scale)
    return _bin2decimal(_take(buf, pos, size, col), precision, scale, col, pos), pos + size


def decode_old_decimal(buf: bytes, pos: int, col: Column) -> tuple[decimal.Decimal, int]:
    """MySQL <= 4.1 DECIMAL: the number as space-padded ASCII text of the column's width.
    TABLE_MAP gives no width for it, so only a caller-supplied {"pack_length": n} makes it readable."""
    size = col.meta.get("pack_length") if isinstance(col.meta, dict) else None
    if not isinstance(size, int) or size <= 0:
        raise _error(col, pos, "old DECIMAL (MySQL 4.1 and earlier) is stored as ASCII text of the column "
                               "width, which TABLE_MAP does not record; the value cannot be delimited "
                               "(mysqlbinlog cannot print it either)")
    text = _take(buf, pos, size, col).decode("ascii", errors="replace").strip()
    try:
        return decimal.Decimal(text), pos + size
    except decimal.InvalidOperation:
        raise _error(col, pos, f"old DECIMAL text {text!r} is not a number") from None


# --------------------------------------------------------------------------
# Dates and times


def decode_date(buf: bytes, pos: int, col: Column) -> tuple[dt.date | str, int]:
    """3 bytes little-endian: day in bits 0-4, month in bits 5-8, year above (Field_newdate)."""
    value = int.from_bytes(_take(buf, pos, 3, col), "little")
    return _date_or_str(value >> 9, (value >> 5) & 15, value & 31), pos + 3


# MariaDB 5.3 high-resolution temporals (sql/field.cc, Field_time_hires, Field_datetime_hires,
# Field_timestamp_hires): a TIME(n), DATETIME(n) or TIMESTAMP(n) column, n > 0, created with
# mysql56_temporal_format=OFF is logged as the old TIME, DATETIME or TIMESTAMP type with no
# metadata, so its size is not in the binlog. The precision comes from the CREATE TABLE (DDL
# replay or --schema; schema.py puts it in the column's meta as "fsp"). Without it, the column
# reads as the old type, as mariadb-binlog reads it.

#: old type -> bytes of a MariaDB hires value by precision 0-6 (0: the old type itself). TIME and DATETIME:
#: sql/field.cc's time_hires_bytes / datetime_hires_bytes; TIMESTAMP: 4 bytes of seconds then the fraction in
#: sec_part_bytes(n) = 0, 1, 1, 2, 2, 3, 3 bytes (Field_timestamp_hires::pack_length; TIMESTAMP(5) is 7 bytes,
#: tests/rows/test_hires_temporal_server.py).
_HIRES_SIZES = {TIME: (3, 4, 4, 5, 5, 5, 6), DATETIME: (8, 6, 6, 7, 7, 7, 8), TIMESTAMP: (4, 5, 5, 6, 6, 7, 7)}
#: TIME hires values are stored offset by 838:59:59 + 1 s (Field_time_hires::zero_point), in microseconds.
_HIRES_TIME_ZERO = (838 * 3600 + 59 * 60 + 59 + 1) * 1_000_000


def _hires_fsp(col: Column) -> int:
    fsp = col.meta.get("fsp", 0) if isinstance(col.meta, dict) else 0
    return fsp if isinstance(fsp, int) and 1 <= fsp <= 6 else 0


def old_temporal_size(col: Column) -> int:
    """Bytes of an old TIME, DATETIME or TIMESTAMP value (a MariaDB hires one when meta has "fsp")."""
    return _HIRES_SIZES[col.type_code][_hires_fsp(col)]


def _hires_packed(buf: bytes, pos: int, col: Column, fsp: int) -> tuple[int, int]:
    """The big-endian packed value of a hires TIME/DATETIME, scaled back to microseconds."""
    size = _HIRES_SIZES[col.type_code][fsp]
    return int.from_bytes(_take(buf, pos, size, col), "big") * 10 ** (6 - fsp), pos + size


def decode_time(buf: bytes, pos: int, col: Column) -> tuple[dt.timedelta, int]:
    """Old TIME: signed 3-byte little-endian integer [-]HHMMSS (Field_time). MariaDB hires TIME(n):
    big-endian microseconds (in units of the precision) offset by _HIRES_TIME_ZERO."""
    fsp = _hires_fsp(col)
    if fsp:
        usec, end = _hires_packed(buf, pos, col, fsp)
        usec -= _HIRES_TIME_ZERO
        seconds, frac = divmod(abs(usec), 1_000_000)
        return _timedelta(usec < 0, seconds // 3600, seconds // 60 % 60, seconds % 60, frac, col, pos), end
    value = int.from_bytes(_take(buf, pos, 3, col), "little", signed=True)
    hhmmss = abs(value)
    return _timedelta(value < 0, hhmmss // 10000, hhmmss // 100 % 100, hhmmss % 100, 0, col, pos), pos + 3


def decode_datetime(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """Old DATETIME: 8-byte little-endian integer YYYYMMDDhhmmss (Field_datetime). MariaDB hires
    DATETIME(n): big-endian ((((year*13+month)*32+day)*24+hour)*60+minute)*60+second in
    microseconds (pack_time), in units of the precision."""
    fsp = _hires_fsp(col)
    if fsp:
        packed, end = _hires_packed(buf, pos, col, fsp)
        rest, usec = divmod(packed, 1_000_000)
        rest, second = divmod(rest, 60)
        rest, minute = divmod(rest, 60)
        rest, hour = divmod(rest, 24)
        rest, day = divmod(rest, 32)
        year, month = divmod(rest, 13)
        return _datetime_or_str(year, month, day, hour, minute, second, usec, fsp), end
    value = int.from_bytes(_take(buf, pos, 8, col), "little")
    date, time = divmod(value, 1000000)
    return _datetime_or_str(date // 10000, date // 100 % 100, date % 100,
                            time // 10000, time // 100 % 100, time % 100, 0, 0), pos + 8


def _zero_timestamp(fsp: int) -> str:
    return "0000-00-00 00:00:00" + _frac_text(0, fsp)


def decode_timestamp(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """Old TIMESTAMP: 4-byte little-endian seconds since the epoch (UTC). MariaDB hires TIMESTAMP(n):
    4-byte big-endian seconds, then the fraction big-endian in units of the precision."""
    fsp = _hires_fsp(col)
    if fsp:
        size = _HIRES_SIZES[TIMESTAMP][fsp]
        raw = _take(buf, pos, size, col)
        seconds, usec = int.from_bytes(raw[:4], "big"), int.from_bytes(raw[4:], "big") * 10 ** (6 - fsp)
        if usec > 999999:
            raise _error(col, pos, f"fraction {usec} is more than 999999 microseconds")
        if seconds == 0 and usec == 0:
            return _zero_timestamp(fsp), pos + size
        return dt.datetime.fromtimestamp(seconds, UTC) + dt.timedelta(microseconds=usec), pos + size
    seconds = int.from_bytes(_take(buf, pos, 4, col), "little")
    if seconds == 0:
        return _zero_timestamp(0), pos + 4
    return dt.datetime.fromtimestamp(seconds, UTC), pos + 4


def _time_from_packed(packed: int, col: Column, pos: int) -> dt.timedelta:
    """TIME_from_longlong_time_packed: sign, then hour<<12 | minute<<6 | second above 24 bits of usec."""
    magnitude = abs(packed)
    hms, usec = magnitude >> 24, magnitude % (1 << 24)
    return _timedelta(packed < 0, (hms >> 12) % (1 << 10), (hms >> 6) % (1 << 6), hms % (1 << 6), usec, col, pos)


def decode_time2(buf: bytes, pos: int, col: Column) -> tuple[dt.timedelta, int]:
    """TIME2 (my_time_packed_from_binary): 3 bytes big-endian hh:mm:ss offset by 0x800000, then the
    fraction in (fsp+1)//2 bytes. A negative value with a fraction is stored as the next lower
    integer second plus the complement of the fraction (0x100 - f or 0x10000 - f)."""
    fsp = _fsp(col, pos)
    size = 3 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    intpart = int.from_bytes(raw[:3], "big") - 0x800000
    if fsp == 0:
        packed = intpart << 24
    elif fsp <= 2:
        frac = raw[3]
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x100
        packed = (intpart << 24) + frac * 10000
    elif fsp <= 4:
        frac = int.from_bytes(raw[3:5], "big")
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x10000
        packed = (intpart << 24) + frac * 100
    else:
        packed = int.from_bytes(raw[:6], "big") - 0x800000000000
    return _time_from_packed(packed, col, pos), pos + size


def _datetime_from_packed(packed: int, fsp: int, col: Column, pos: int) -> dt.datetime | str:
    """TIME_from_longlong_datetime_packed: (year*13+month)<<22 | day<<17 | hms, above 24 bits of usec."""
    if packed < 0:
        raise _error(col, pos, "negative DATETIME")
    ymdhms, usec = packed >> 24, packed % (1 << 24)
    if usec > 999999:
        raise _error(col, pos, f"fraction {usec} is more than 999999 microseconds")
    ymd, hms = ymdhms >> 17, ymdhms % (1 << 17)
    year_month = ymd >> 5
    return _datetime_or_str(year_month // 13, year_month % 13, ymd % (1 << 5),
                            hms >> 12, (hms >> 6) % (1 << 6), hms % (1 << 6), usec, fsp)


def _signed_frac(raw: bytes, fsp: int) -> int:
    """The fraction bytes of DATETIME2/TIMESTAMP2 as microseconds (signed, as MySQL reads them)."""
    if fsp == 0:
        return 0
    if fsp <= 2:
        return int.from_bytes(raw[:1], "big", signed=True) * 10000
    if fsp <= 4:
        return int.from_bytes(raw[:2], "big", signed=True) * 100
    return int.from_bytes(raw[:3], "big", signed=True)


def decode_datetime2(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """DATETIME2 (my_datetime_packed_from_binary): 5 bytes big-endian offset by 0x8000000000, then the
    fraction in (fsp+1)//2 big-endian bytes."""
    fsp = _fsp(col, pos)
    size = 5 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    packed = ((int.from_bytes(raw[:5], "big") - 0x8000000000) << 24) + _signed_frac(raw[5:], fsp)
    return _datetime_from_packed(packed, fsp, col, pos), pos + size


def decode_timestamp2(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """TIMESTAMP2 (my_timestamp_from_binary): 4 bytes big-endian seconds, then the fraction in
    (fsp+1)//2 big-endian bytes. 0 seconds and no fraction is the zero timestamp (MariaDB also
    stores 1970-01-01 00:00:00.f as 0 seconds plus a fraction)."""
    fsp = _fsp(col, pos)
    size = 4 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    seconds = int.from_bytes(raw[:4], "big")
    usec = raw[4] * 10000 if fsp in (1, 2) else _signed_frac(raw[4:], fsp)
    if not 0 <= usec <= 999999:
        raise _error(col, pos, f"fraction {usec} is not 0-999999 microseconds")
    if seconds == 0 and usec == 0:
        return _zero_timestamp(fsp), pos + size
    return dt.datetime.fromtimestamp(seconds, UTC) + dt.timedelta(microseconds=usec), pos + size
