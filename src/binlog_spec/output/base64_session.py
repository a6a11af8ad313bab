"""What the base64 script has set so far, and the lines that set it: the session (PRINT_EVENT_INFO of
the tools), the Q_FLAGS2 options, the script's opening and closing lines."""
from __future__ import annotations

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


def flags2_settings(old: int | None, new: int, mariadb: bool) -> str | None:
    """The SET line of the Q_FLAGS2 options that differ from the old ones (all of them after None)."""
    changed = ~0 if old is None else old ^ new
    settings = [f"{name}={int(bool(new & bit) != negated)}"
                for bit, name, negated in _FLAGS2_COMMON + (_FLAGS2_MARIADB if mariadb else []) if changed & bit]
    return "SET " + ", ".join(settings) + DELIMITER if settings else None
