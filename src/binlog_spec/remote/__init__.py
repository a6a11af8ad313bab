"""Reading a live server's binary logs over the replication protocol.

protocol.py   the replication commands' byte layouts and the packets' status bytes
connection.py connect(ConnectOptions) -> Connection over PyMySQL; errors as errors.RemoteError's classes
dump.py       dump_events(): every event the server sends, as RemoteEvent
logs.py       log_heads(): each log's size, first time and first GTID
streams.py    remote_logs(): the logs a run reads, as the reader's input (events, rows, sql, analyze -R)
folder.py     the folder `download` writes: resume point, trim of a cut transaction, whole transactions
download.py   download(): a byte-exact copy of the server's logs into a folder, following it (--stop-never)

binlog_spec.api re-exports EXPORTS (the command line reaches this package through api only); nothing is
imported before a name is asked for, so that a run on files loads no PyMySQL.
"""
from __future__ import annotations

import importlib

#: The names api re-exports -> the module of this package that has them.
EXPORTS = {"connect": "connection", "Connection": "connection", "dump_events": "dump", "RemoteEvent": "dump",
           "log_heads": "logs", "LogHead": "logs", "remote_logs": "streams", "download": "download"}


def export(name: str):
    """The object EXPORTS names (AttributeError for any other name, as a module's missing attribute)."""
    module = EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'binlog_spec.api' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
