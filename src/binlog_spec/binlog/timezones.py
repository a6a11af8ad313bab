"""Time zones and the date-time forms of the command line, in one place.

Binlog timestamps are seconds since the epoch (UTC). As mysqlbinlog does, a date and time given
without an offset is read in a time zone: the local one (the `TZ` variable) unless `--timezone`
names another; the text outputs print their times in that zone. JSON keeps ISO 8601 UTC (`Z`).
"""
from __future__ import annotations

import functools
import os
import re
from datetime import datetime, timedelta, timezone, tzinfo

from binlog_spec.errors import ZoneError

UTC = timezone.utc

_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
#: YYYYMMDDHHMMSS (mysqlbinlog's compact form), and YYYYMMDD.
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?$")
#: An offset at the end of a date and time: Z, +08:00, -0530, +08.
_TRAILING_OFFSET = re.compile(r"(Z|[+-]\d{2}(?::?\d{2})?)$", re.IGNORECASE)


def parse_zone(text: str) -> tzinfo:
    """'UTC', 'Z', '+08:00', '-0530', 'UTC+8', or an IANA name ('Asia/Shanghai')."""
    name = text.strip().lstrip(":")
    if name.upper() in ("UTC", "Z", "GMT", "UTC0", "GMT0", "ETC/UTC"):
        return UTC
    m = _OFFSET.match(name)
    if m:
        sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if hours > 23 or minutes > 59:
            raise ZoneError(f"not a time zone offset: {text!r}")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if sign == "-" else delta)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ZoneError(f"not a time zone: {text!r} (use UTC, +08:00 or a name such as Asia/Shanghai)") from None


def local_zone() -> tzinfo:
    """The zone of `TZ`, as the C library reads it for mysqlbinlog; the system's when TZ is unset."""
    tz = os.environ.get("TZ")
    if tz:
        try:
            return parse_zone(tz)
        except ZoneError:
            pass
    target = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in target:              # the system zone by name, so that DST is followed
        try:
            return parse_zone(target.split("zoneinfo/", 1)[1])
        except ZoneError:
            pass
    local = datetime.now().astimezone().tzinfo
    if local is None or local.utcoffset(None) == timedelta(0):
        return UTC
    return local


def zone_name(tz: tzinfo) -> str:
    """'UTC', an IANA name ('Asia/Shanghai'), or a fixed offset, which is its own name ('+08:00'). No
    offset is printed for a named zone: today's would differ from the printed times' across DST."""
    if tz is UTC:
        return "UTC"
    key = getattr(tz, "key", None)
    if key:
        return key
    offset = datetime.now(tz).strftime("%z")
    return f"{offset[:3]}:{offset[3:]}"


def parse_datetime(text: str, tz: tzinfo) -> datetime:
    """'2026-01-01 08:02:00', '2026-01-01T08:02:00', '2026-01-01 08:02:00.123456', '2026-01-01',
    '2026-01-01 08:02', '20260101080200'; read in `tz` unless it ends with Z or an offset
    (+08:00), which overrides it. Raises ValueError naming the forms."""
    raw = text.strip()
    body, offset = raw, None
    m = _TRAILING_OFFSET.search(raw)
    if m and len(raw) > 10 and not _COMPACT.match(raw):      # not the '-01' of a date
        body, offset = raw[:m.start()].rstrip(), m.group(1)
    c = _COMPACT.match(body)
    if c:
        body = f"{c[1]}-{c[2]}-{c[3]}" + (f" {c[4]}:{c[5]}:{c[6]}" if c[4] else "")
    try:
        if not re.match(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?$", body):
            raise ValueError
        value = datetime.fromisoformat(body)
    except ValueError:
        raise ValueError(f"not a date and time: {text!r} (use 'YYYY-MM-DD HH:MM:SS[.ffffff]', "
                         "'YYYY-MM-DD', 'YYYYMMDDHHMMSS', optionally with Z or +08:00)") from None
    zone = tz if offset is None else parse_zone(offset)
    return value.replace(tzinfo=zone)


_TEXT_CACHE: dict[tuple[int, tzinfo], str] = {}


def local_text(timestamp: int, tz: tzinfo = UTC) -> str:
    """'YYYY-MM-DD HH:MM:SS' of a binlog timestamp in `tz` (cached: the events of a second share it)."""
    key = (timestamp, tz)
    text = _TEXT_CACHE.get(key)
    if text is None:
        text = datetime.fromtimestamp(timestamp, tz=tz).strftime("%Y-%m-%d %H:%M:%S")
        if len(_TEXT_CACHE) >= 4096:
            _TEXT_CACHE.clear()
        _TEXT_CACHE[key] = text
    return text


@functools.lru_cache(maxsize=1024)   # the events of a second share their time
def tool_text(timestamp: int, tz: tzinfo = UTC) -> str:
    """A binlog timestamp as mysqlbinlog and mariadb-binlog print it in their ``#`` lines, in `tz`:
    '260101  9:05:00' (Log_event::print_timestamp: "%02d%02d%02d %2d:%02d:%02d" of localtime)."""
    t = datetime.fromtimestamp(timestamp, tz=tz)
    return f"{t:%y%m%d} {t.hour:2d}:{t:%M:%S}"


def local_datetime(timestamp: int, tz: tzinfo = UTC) -> datetime:
    return datetime.fromtimestamp(timestamp, tz=tz)


def iso_z(value: datetime) -> str:
    """ISO 8601 text of an instant, 'Z' for UTC ('2026-01-01T00:01:00Z', '...T00:01:00.250000Z'): the one
    spelling of times in JSON output (events, row changes, transactions, analyze)."""
    return value.isoformat().replace("+00:00", "Z")


def from_iso_z(text: str) -> datetime:
    """The instant of an `iso_z` text (an aware datetime in UTC); ValueError when it is none."""
    if not text.endswith("Z") or "T" not in text:
        raise ValueError(f"not an ISO 8601 UTC time: {text!r}")
    return datetime.fromisoformat(text[:-1] + "+00:00")


_ISO_CACHE: dict[int, str] = {}


def iso_utc(timestamp: int) -> str:
    """iso_z of a binlog timestamp; the rows of one event (and of one second) share it, so it is cached."""
    text = _ISO_CACHE.get(timestamp)
    if text is None:
        text = iso_z(datetime.fromtimestamp(timestamp, tz=UTC))
        if len(_ISO_CACHE) >= 4096:
            _ISO_CACHE.clear()
        _ISO_CACHE[timestamp] = text
    return text
