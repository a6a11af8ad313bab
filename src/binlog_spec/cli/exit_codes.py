"""The exit codes of the `binlog-spec` command: their one home (the README's table says the same).

    0  every event was read (filters that kept nothing say so in a note on stderr: cli.selection_notes)
    1  read to the end, but some event bodies did not match their layout, or some rows could not be
       counted (analyze), decoded (sql -v) or written exactly (sql --sql/--sql2), or rows in conflict left
       out of an undo (sql --rollback --skip-conflicts): warnings on stderr
    2  bad command line (one line names the option, or hints at binlog-spec's spelling of a mysqlbinlog
       option: cli.hints), a --start-position that is no event boundary, --thread-id over a MariaDB
       row transaction (no thread id: errors.ThreadIdError), or a --schema file with no CREATE TABLE
    3  a binlog is broken (not a binlog, truncated, bad checksum, impossible size); the events
       before the fault were printed
    4  a file could not be opened or read (download: its folder written, or locked by another download)
    5  sql --rollback: a later transaction in the files changed rows the rollback would overwrite (each
       conflict on stderr); nothing was written (--force writes it anyway, and exits 1; --skip-conflicts
       writes the undo of the other rows, and exits 1)
    6  sql --sql/--sql2: the script cannot be written from these binlogs (column names unknown, row
       images incomplete for a rollback or --replace); each table on stderr, with what to do; nothing
       was written (output.sql.writable, checked before the first byte)
    7  a server could not be reached or read (-R): unreachable, access denied, a privilege missing, a log
       it has purged, its binlog disabled, or it went away; one line names the server (errors.RemoteError)
   70  an internal error (a bug): `binlog-spec: internal error at FILE offset N: ...`, and how to
       report it; the traceback only with --debug
  130  -R: stopped by a second SIGINT or SIGTERM (--stop-never's first one ends the run as if the input
       ended there, exit 0), or by one without --stop-never
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_WARNINGS = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_IO = 4
EXIT_CONFLICT = 5       # a rollback would overwrite later changes: nothing written (output.rollback.check)
EXIT_UNWRITABLE = 6     # the script cannot be written from these binlogs: nothing written (output.sql.writable)
EXIT_SERVER = 7         # a server could not be reached or read (errors.RemoteError)
EXIT_INTERNAL = 70      # EX_SOFTWARE (sysexits.h)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it

__all__ = ["EXIT_OK", "EXIT_WARNINGS", "EXIT_USAGE", "EXIT_BAD_INPUT", "EXIT_IO", "EXIT_CONFLICT",
           "EXIT_UNWRITABLE", "EXIT_SERVER", "EXIT_INTERNAL", "EXIT_INTERRUPTED"]
