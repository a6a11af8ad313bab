"""bench_speed.py's commands, figures and targets (issue 29's Targets table, issue 16's where 29 has none, issue 31's
`--key`)."""
from __future__ import annotations

TAIL_SHARE = 0.01          # --start-position: a transaction start in the last 1 % of the file
WINDOW_SHARE = 1 / 6       # a time window of the file's middle sixth when its workload names none
MEMORY_TARGET_MB = 100     # 10^6 bytes
PROFILE_SCALE = 0.2
PROFILE_TOP = 15
#: The commands profiled when their figure misses its target.
PROFILED = ("rows", "sql2", "sql", "events", "analyze", "sql2-tail", "analyze-window", "sql2-window", "sql-window",
            "rows-table", "rows-key", "rows-keep", "sql2-keep", "sql-keep", "analyze-keep", "rows-gtids")
#: The commands that need a time window, a table.
WINDOWED = ("analyze-window", "sql2-window", "sql-window")
TABLED = ("rows-table", "rows-keep", "sql2-keep", "sql-keep", "analyze-keep")
#: A GTID set of the figure of a GTID filter: the first 1,000 transactions of the workloads' domain and server
#: (a filter that keeps nearly all; one that keeps all of a binlog of other GTIDs).
GTIDS = "0-1-1-1000"
#: The commands that need a table's integer key value (issue 31's `--key`): the workloads that have one, by name.
KEYED = ("rows-key",)
KEYS = {"mixed": ("shop.customers", "42")}

#: name: (argv after the program, which program, what it is)
COMMANDS = {
    "mb":           ("mariadb-binlog", [], "`mariadb-binlog FILE`"),
    "mb-v":         ("mariadb-binlog", ["-v"], "`mariadb-binlog -v FILE`"),
    "mb-flashback": ("mariadb-binlog", ["--flashback"], "`mariadb-binlog --flashback FILE`"),
    "rows":         ("binlog-spec", ["rows", "--format", "jsonl"], "`binlog-spec rows --format jsonl FILE`"),
    "rows-table":   ("binlog-spec", ["rows", "--format", "jsonl", "--table", "{T}"],
                     "`binlog-spec rows --format jsonl --table T FILE`"),
    "rows-key":     ("binlog-spec", ["rows", "--format", "jsonl", "--table", "{KT}", "--key", "{KV}"],
                     "`binlog-spec rows --format jsonl --table KT --key KV FILE`"),
    "rows-keep":    ("binlog-spec", ["rows", "--format", "jsonl", "--exclude-table", "{T}"],
                     "`binlog-spec rows --format jsonl --exclude-table T FILE`"),
    "rows-gtids":   ("binlog-spec", ["rows", "--format", "jsonl", "--exclude-gtids", GTIDS],
                     f"`binlog-spec rows --format jsonl --exclude-gtids {GTIDS} FILE`"),
    "sql2":         ("binlog-spec", ["sql", "--sql2"], "`binlog-spec sql --sql2 FILE`"),
    "sql2-keep":    ("binlog-spec", ["sql", "--sql2", "--exclude-table", "{T}"],
                     "`binlog-spec sql --sql2 --exclude-table T FILE`"),
    "sql-keep":     ("binlog-spec", ["sql", "--exclude-table", "{T}"],
                     "`binlog-spec sql --exclude-table T FILE` (base64)"),
    "analyze-keep": ("binlog-spec", ["analyze", "--format", "json", "--exclude-table", "{T}"],
                     "`binlog-spec analyze --format json --exclude-table T FILE`"),
    "sql2-tail":    ("binlog-spec", ["sql", "--sql2", "--start-position", "{P}"],
                     "`binlog-spec sql --sql2 --start-position P FILE`"),
    "sql":          ("binlog-spec", ["sql"], "`binlog-spec sql FILE` (base64)"),
    "events":       ("binlog-spec", ["events", "--format", "jsonl"], "`binlog-spec events --format jsonl FILE`"),
    "analyze":      ("binlog-spec", ["analyze", "--format", "json"], "`binlog-spec analyze --format json FILE`"),
    "analyze-window": ("binlog-spec", ["analyze", "--format", "json", "--timezone", "UTC", "--start-datetime",
                                       "{START}", "--stop-datetime", "{STOP}"],
                       "`binlog-spec analyze --format json --timezone UTC --start-datetime START "
                       "--stop-datetime STOP FILE`"),
    "sql2-window":  ("binlog-spec", ["sql", "--sql2", "--timezone", "UTC", "--start-datetime", "{START}",
                                     "--stop-datetime", "{STOP}"],
                     "`binlog-spec sql --sql2 --timezone UTC --start-datetime START --stop-datetime STOP FILE`"),
    "sql-window":   ("binlog-spec", ["sql", "--timezone", "UTC", "--start-datetime", "{START}", "--stop-datetime",
                                     "{STOP}"],
                     "`binlog-spec sql --timezone UTC --start-datetime START --stop-datetime STOP FILE` (base64)"),
    "rollback":     ("binlog-spec", ["sql", "--sql2", "--rollback"], "`binlog-spec sql --sql2 --rollback FILE`"),
    "rows-jobs2":   ("binlog-spec", ["rows", "--format", "jsonl", "--jobs", "2"],
                     "`binlog-spec rows --format jsonl --jobs 2 FILE` on 2 CPUs"),
}
TWO_CPUS = {"rows-jobs2"}
REFERENCES = {"mb", "mb-v", "mb-flashback"}

#: The figures: (key, ours, reference, target ratio or None, target text). Issue 29's targets; `sql`
#: (base64), `analyze` and the tail are issue 16's, which issue 29 does not restate.
FIGURES = [
    ("rows", "rows", "mb-v", 1.5, "≤ 1.5× (moonshot ≤ 1×)"),
    ("sql2", "sql2", "mb-v", 1.5, "≤ 1.5× (moonshot ≤ 1×)"),
    ("sql", "sql", "mb", 2.0, "≤ 2× (issue 16)"),
    ("events", "events", "mb", 1.5, "≤ 1.5× (moonshot ≤ 1×)"),
    ("analyze", "analyze", "mb", 1.5, "≤ 1.5× (issue 16)"),
    ("tail", "sql2-tail", "sql2", 0.1, "≤ 0.1× (issue 16)"),
    ("window", "analyze-window", "analyze", 1.0, "≤ 1×"),
    ("window-sql2", "sql2-window", "sql2", 1.0, "≤ 1×"),
    ("window-sql", "sql-window", "sql", 1.0, "≤ 1×"),
    ("table", "rows-table", "rows", 0.3, "≤ 0.3× (moonshot ≤ 0.15×)"),
    ("key", "rows-key", "rows", 0.3, "≤ 0.3× (issue 31)"),
    ("keep-rows", "rows-keep", "rows", 1.0, "≤ 1×"),
    ("keep-sql2", "sql2-keep", "sql2", 1.0, "≤ 1×"),
    ("keep-sql", "sql-keep", "sql", 1.0, "≤ 1×"),
    ("keep-analyze", "analyze-keep", "analyze", 1.0, "≤ 1×"),
    ("gtids", "rows-gtids", "rows", 1.0, "≤ 1×"),
    ("jobs2", "rows-jobs2", "mb-v", 0.75, "≤ 0.75× (moonshot ≤ 0.6×)"),
    ("rollback", "rollback", "mb-flashback", 1.5, "≤ 1.5× and ≤ 100 MB (moonshot ≤ 1×)"),
]
FIGURE_TITLES = {
    "rows": "`rows --format jsonl` vs `mariadb-binlog -v`",
    "sql2": "`sql --sql2` vs `mariadb-binlog -v`",
    "sql": "`sql` (base64) vs `mariadb-binlog`",
    "events": "`events --format jsonl` vs `mariadb-binlog`",
    "analyze": "`analyze --format json` vs `mariadb-binlog`",
    "tail": "`sql --sql2 --start-position P` (last 1 %) vs `sql --sql2` on the whole file",
    "window": "`analyze` with the `--start/--stop-datetime` window START – STOP vs `analyze` unfiltered",
    "window-sql2": "`sql --sql2` with the window START – STOP vs `sql --sql2` unfiltered",
    "window-sql": "`sql` (base64) with the window START – STOP vs `sql` unfiltered",
    "table": "`rows --format jsonl --table T` vs `rows --format jsonl` (all rows)",
    "key": "`rows --format jsonl --table KT --key KV` vs `rows --format jsonl` (all rows)",
    "keep-rows": "`rows --format jsonl --exclude-table T` (the others kept) vs `rows --format jsonl`",
    "keep-sql2": "`sql --sql2 --exclude-table T` (the others kept) vs `sql --sql2`",
    "keep-sql": "`sql --exclude-table T` (base64, the others kept) vs `sql`",
    "keep-analyze": "`analyze --exclude-table T` (the others kept) vs `analyze`",
    "gtids": f"`rows --format jsonl --exclude-gtids {GTIDS}` vs `rows --format jsonl`",
    "jobs2": "`rows --format jsonl --jobs 2` on 2 cores vs `mariadb-binlog -v` on one",
    "rollback": "`sql --sql2 --rollback` vs `mariadb-binlog --flashback`",
}

#: One round: groups of commands run back to back (reversed every other round). `rows`, `sql2` and
#: `analyze` serve two figures each, run next to (or one command away from) each partner.
GROUPS = [["rows-table", "rows", "rows-key", "mb-v"], ["sql2-tail", "sql2", "mb-v"], ["sql-window", "sql", "mb"],
          ["events", "mb"],
          ["analyze-window", "analyze", "mb"], ["sql2-window", "sql2"], ["rows-jobs2", "mb-v"],
          ["rollback", "mb-flashback"], ["rows-keep", "rows", "rows-gtids"], ["sql2-keep", "sql2"], ["sql-keep", "sql"],
          ["analyze-keep", "analyze"]]


def figure_met(target: float | None, ratio: float, ours: str, peak_mb: float | None) -> bool | None:
    """Whether a figure meets its target; rollback's includes its memory."""
    if target is None:
        return None
    return ratio <= target and (ours != "rollback" or peak_mb is None or peak_mb <= MEMORY_TARGET_MB)
