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


DEFAULT_OPTIONS = ReadOptions()
