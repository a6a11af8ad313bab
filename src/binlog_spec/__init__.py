"""binlog-spec: read MySQL and MariaDB binary logs offline.

    import binlog_spec
    for ev in binlog_spec.open("mysql-bin.000001"):
        print(ev.pos, ev.type, ev.to_dict())
"""
from binlog_spec.errors import (BinlogError, ChecksumError, DecompressionError, EncryptedBinlogError, EventSizeError,
                                MalformedEventError, MissingTableMapError, NotABinlogError,
                                RowsLayoutError, TruncatedEventError)
from binlog_spec.binlog.event import Event
from binlog_spec.options import ReadOptions
from binlog_spec.binlog.reader import BinlogReader, open, read_events  # noqa: A004

__version__ = "0.1.0"

__all__ = [
    "open", "read_events", "BinlogReader", "Event", "ReadOptions",
    "BinlogError", "NotABinlogError", "TruncatedEventError", "EventSizeError", "ChecksumError",
    "MalformedEventError", "DecompressionError", "EncryptedBinlogError", "MissingTableMapError", "RowsLayoutError",
]
