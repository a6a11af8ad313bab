"""A case of the randomized replay (random_schema.make_case, or a reproducer of proof_cases/), written
and read back as a .sql file (`Case.to_sql`, `Case.from_sql`): the settings in `-- @seed` and
`-- @setting` lines, other `-- ` lines before the sections a note, then one statement per line under
`-- @ddl`, `-- @start` and `-- @workload`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Case:
    seed: int | None
    metadata: str
    image: str
    ddl: list[str]
    start: list[str]
    workload: list[str]
    note: str = ""
    db_charset: str = "utf8mb4"
    compress: str = "OFF"        # log_bin_compress: QUERY_COMPRESSED and *_ROWS_COMPRESSED events
    names: str = "schema"        # MINIMAL metadata: names from --schema, or from the CREATE TABLEs in the files

    def to_sql(self) -> str:
        head = [f"-- @seed {self.seed}", f"-- @setting binlog_row_metadata={self.metadata} "
                f"binlog_row_image={self.image} database_charset={self.db_charset} "
                f"log_bin_compress={self.compress} names={self.names}"]
        head += [f"-- {line}" for line in self.note.splitlines()]
        return "\n".join(head + ["-- @ddl", *self.ddl, "-- @start", *self.start, "-- @workload",
                                 *self.workload]) + "\n"

    @classmethod
    def from_sql(cls, text: str) -> "Case":
        sections: dict[str, list[str]] = {"ddl": [], "start": [], "workload": []}
        seed, setting, current, note = None, {}, None, []
        for line in text.splitlines():
            if line.startswith("-- @seed "):
                value = line.split()[2]
                seed = None if value == "None" else int(value)
            elif line.startswith("-- @setting "):
                setting = dict(kv.split("=", 1) for kv in line.split()[2:])
            elif line.strip() in ("-- @ddl", "-- @start", "-- @workload"):
                current = sections[line.strip()[4:]]
            elif line.startswith("--") or not line.strip():
                if current is None and line.startswith("-- "):
                    note.append(line[3:])
            else:
                assert current is not None, f"statement before a section header: {line[:60]}"
                current.append(line)
        return cls(seed, setting["binlog_row_metadata"], setting["binlog_row_image"], sections["ddl"],
                   sections["start"], sections["workload"], "\n".join(note),
                   setting.get("database_charset", "utf8mb4"), setting.get("log_bin_compress", "OFF"),
                   setting.get("names", "schema"))


def q(name: str) -> str:
    """A quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def table_names(case: Case) -> list[str]:
    """The tables a case creates, from its DDL."""
    names = []
    for ddl in case.ddl:
        m = re.match(r"CREATE TABLE `((?:[^`]|``)*)`", ddl)
        assert m, ddl
        names.append(m.group(1).replace("``", "`"))
    return names
