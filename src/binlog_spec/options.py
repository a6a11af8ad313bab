"""The one frozen options object of the reader."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReadOptions:
    #: Verify each event's CRC32 when the FDE announces one.
    verify_checksums: bool = True
    #: Yield the events inside TRANSACTION_PAYLOAD_EVENTs (after the payload event itself).
    expand_payloads: bool = True
    #: Decompress MariaDB compressed events (QUERY_COMPRESSED, *_ROWS_COMPRESSED) in place.
    decompress: bool = True
    #: Raise MalformedEventError when a body does not match its type's layout. When False (the
    #: default) such an event is still yielded, with `error` set and its body kept raw: the event
    #: framing (sizes, checksum) is intact, so the stream goes on.
    strict: bool = False
    #: Read buffer size in bytes.
    buffer_size: int = 1 << 20
    #: The event type codes whose bodies are parsed as the events are read (None: every type). The
    #: body of another type is parsed only if its fields are asked for: an event whose body nothing
    #: reads costs its header, its CRC32 check and a slice. Its malformed body is then never reported;
    #: one parsed late gives the error it would have given when read (strict: MalformedEventError
    #: raised where the fields are asked for; otherwise `error` set then). The FORMAT_DESCRIPTION_EVENT,
    #: and TRANSACTION_PAYLOAD_EVENT when payloads are expanded, are always parsed as read, and so are
    #: the events inside a payload.
    parse_bodies: frozenset[int] | None = None


DEFAULT_OPTIONS = ReadOptions()


#: Size units, powers of 1024 ("1 MiB"): K, KB, KiB, M, ... (case-insensitive), B for bytes.
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: object) -> int:
    """'1048576', '1M', '1MiB', '1 mb', '64m', '1.5G' -> bytes (powers of 1024). ValueError otherwise."""
    import re

    t = str(text).strip().lower().replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)(i?b)?", t)
    if not m or (m.group(3) and not m.group(2) and m.group(3) != "b"):
        raise ValueError(f"not a size: {text!r} (bytes, or a number with K, M, G, KiB, MiB or GiB)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])
