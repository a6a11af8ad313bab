"""What the base64 script has set so far, and the lines that set it: the session (PRINT_EVENT_INFO of
the tools), the Q_FLAGS2 options, the script's opening and closing lines."""
from __future__ import annotations

import functools
import re

DELIMITER = "/*!*/;"
_MARIADB_ONLY = ("/*!40019 SET @@session.max_delayed_threads=0*/;", "ROLLBACK /* added by mysqlbinlog */;")
HEADER = [
    "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;",
    "/*!40019 SET @@session.max_delayed_threads=0*/;",
    "/*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;",
    f"DELIMITER {DELIMITER}",
]
FOOTER = [
    "DELIMITER ;",
    "# End of log file",
    "ROLLBACK /* added by mysqlbinlog */;",
    "/*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;",
    "/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;",
]


def header(mariadb: bool) -> list[str]:
    """mariadb-binlog's opening lines; mysqlbinlog's lack max_delayed_threads (gone in MySQL 8.4)."""
    return [line for line in HEADER if mariadb or line not in _MARIADB_ONLY]


def footer(mariadb: bool) -> list[str]:
    return [line for line in FOOTER if mariadb or line not in _MARIADB_ONLY]


#: Q_FLAGS2 bits (sql_priv.h), with the variable each stands for and whether a set bit means 0.
_FLAGS2_COMMON = [
    (1 << 26, "@@session.foreign_key_checks", True),    # OPTION_NO_FOREIGN_KEY_CHECKS
    (1 << 14, "@@session.sql_auto_is_null", False),     # OPTION_AUTO_IS_NULL
    (1 << 27, "@@session.unique_checks", True),         # OPTION_RELAXED_UNIQUE_CHECKS
    (1 << 19, "@@session.autocommit", True),            # OPTION_NOT_AUTOCOMMIT
]
_FLAGS2_MARIADB = [
    (1 << 15, "@@session.check_constraint_checks", True),          # OPTION_NO_CHECK_CONSTRAINT_CHECKS
    (1 << 28, "@@session.sql_if_exists", False),                     # OPTION_IF_EXISTS
    (1 << 24, "@@session.explicit_defaults_for_timestamp", False),   # OPTION_EXPLICIT_DEF_TIMESTAMP
    (1 << 30, "@@session.system_versioning_insert_history", False),  # OPTION_INSERT_HISTORY
]


class Session:
    """What the script has set so far (PRINT_EVENT_INFO of the tools)."""

    def __init__(self, unset=None) -> None:
        self.db: bytes | None = unset
        self.thread_id: int | None = unset
        self.flags2: int | None = unset
        self.sql_mode: int | None = unset
        self.auto_increment: tuple[int, int] | None = unset
        self.charset: tuple | None = unset
        self.time_zone: str | None = unset
        self.lc_time_names: int | None = unset
        self.charset_database: int | None = unset
        self.mysql_vars: dict[str, object] = {}
        self.gtid_domain: int | None = unset
        self.skip_parallel: int | None = unset
        self.gtid_server: int | None = unset
        self.unset = unset


#: The Q_FLAGS2 bits every server's binlog carries (OPTIONS_WRITTEN_TO_BIN_LOG of MySQL and MariaDB 5.x).
FLAGS2_COMMON = sum(bit for bit, _, _ in _FLAGS2_COMMON)
_IF_EXISTS, _EXPLICIT_DEF_TIMESTAMP = 1 << 28, 1 << 24
#: MariaDB 10.x: the first release of each series whose binlog carries OPTION_EXPLICIT_DEF_TIMESTAMP.
_EXPLICIT_DEF_TIMESTAMP_FROM = {5: 17, 6: 9, 7: 5, 8: 4, 9: 2}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@functools.lru_cache(maxsize=64)
def flags2_written(server_version: str) -> int:
    """The Q_FLAGS2 bits a file's server wrote, told by its FORMAT_DESCRIPTION's server version, as
    mariadb-binlog tells them (Format_description_log_event::deduct_options_written_to_bin_log, MariaDB's
    sql/log_event.cc; Query_log_event::print_query_header prints only those): the older servers'
    binlogs leave the newer bits at 0, which means nothing, and an older server rejects their
    variables. OPTION_IF_EXISTS (sql_if_exists) from MariaDB 10.5.2; OPTION_EXPLICIT_DEF_TIMESTAMP
    from 10.5.17, 10.6.9, 10.7.5, 10.8.4, 10.9.2 and 10.10 on. check_constraint_checks and
    system_versioning_insert_history are printed for every MariaDB file, as mariadb-binlog does; a
    MySQL file, whose script is mysqlbinlog's, has the four MySQL options only."""
    if "mariadb" not in server_version.lower():
        return FLAGS2_COMMON
    written = FLAGS2_COMMON | (1 << 15) | (1 << 30)
    m = _VERSION.match(server_version)
    version = tuple(int(x) for x in m.groups()) if m else (0, 0, 0)
    if version < (10, 5, 2):
        return written
    written |= _IF_EXISTS
    major, minor, patch = version
    if major == 10 and patch < _EXPLICIT_DEF_TIMESTAMP_FROM.get(minor, 0 if minor > 9 else 99):
        return written
    return written | _EXPLICIT_DEF_TIMESTAMP


def flags2_settings(old: int | None, new: int, written: int) -> str | None:
    """The SET line of the Q_FLAGS2 options that differ from the old ones (all of them after None),
    of the bits `written` (flags2_written of the file's server) only."""
    changed = (~0 if old is None else old ^ new) & written
    settings = [f"{name}={int(bool(new & bit) != negated)}"
                for bit, name, negated in _FLAGS2_COMMON + _FLAGS2_MARIADB if changed & bit]
    return "SET " + ", ".join(settings) + DELIMITER if settings else None
