"""A bad command line in one line: the parser (`Parser`) prints one line naming the option, never its
usage block, and exits 2. The mysqlbinlog / mariadb-binlog options that binlog-spec spells differently
(or does not have) get a hint in that line instead of the parser's message: `HINTS`, the one home of
these hints (docs/mysqlbinlog.md, the comparison with mysqlbinlog, lists them).

The options are those of MySQL's client/mysqlbinlog.cc (`my_long_options`) and of MariaDB's
`mariadb-binlog --help`: `-T` is mariadb-binlog's --table (mysqlbinlog has none), `-B` is
mariadb-binlog's --flashback (mysqlbinlog has none); `-r`, `-R`, `-H` and `-s` are the same in both.
The spellings binlog-spec shares but with another meaning (`-t`, `-o`, `-j`) parse, so they get no hint
here: docs/mysqlbinlog.md names them."""
from __future__ import annotations

import argparse
import sys

_BOTH, _MYSQL, _MARIADB = "mysqlbinlog's and mariadb-binlog's", "mysqlbinlog's", "mariadb-binlog's"
_REMOTE = "reading from a live server is not supported yet: give binlog-spec the binlog files (copies, or " \
          "what mysqlbinlog --read-from-remote-server --raw fetched)"
_ROLLBACK = "binlog-spec writes the undo with: sql --rollback (BINLOG blocks, as --flashback; with --sql2, " \
            "SQL statements)"
_OUTPUT = "binlog-spec writes to a file with: -o FILE"
_HEXDUMP = "binlog-spec has no hex dump: events lists each event's position and size (--format jsonl its " \
           "fields), and xxd -s POS -l SIZE FILE shows its bytes"
_SHORT = "binlog-spec has no short form: sql --sql2 writes the statements, row changes included, with no " \
         "BINLOG blocks and no comments"

#: The option as mysqlbinlog / mariadb-binlog spell it (a long option without its =value) -> (whose
#: option it is, the long option a short one stands for or "", the hint).
HINTS: dict[str, tuple[str, str, str]] = {
    "--flashback": (_MARIADB, "", _ROLLBACK),
    "-B": (_MARIADB, "--flashback", _ROLLBACK),
    "--base64-output": (_BOTH, "", "binlog-spec sql writes BINLOG blocks as --base64-output=auto does; for "
                        "--base64-output=decode-rows -v, binlog-spec rows prints the decoded row changes, one a "
                        "line, sql --sql the row changes as commented statements, and sql -v the BINLOG blocks "
                        "with the ### pseudo-SQL under each"),
    "--result-file": (_BOTH, "", _OUTPUT),
    "-r": (_BOTH, "--result-file", _OUTPUT),
    "-T": (_MARIADB, "--table", "binlog-spec spells it --table (or -t) [DB.]TABLE"),
    "--hexdump": (_BOTH, "", _HEXDUMP),
    "-H": (_BOTH, "--hexdump", _HEXDUMP),
    "--short-form": (_BOTH, "", _SHORT),
    "-s": (_BOTH, "--short-form", _SHORT),
    "--read-from-remote-server": (_BOTH, "", _REMOTE),
    "-R": (_BOTH, "--read-from-remote-server", _REMOTE),
    "--read-from-remote-master": (_MYSQL, "", _REMOTE),
    "--stop-never": (_BOTH, "", _REMOTE),
    "--raw": (_BOTH, "", _REMOTE),
    "--host": (_BOTH, "", _REMOTE),
    "--user": (_BOTH, "", _REMOTE),
    "-u": (_BOTH, "--user", _REMOTE),
    "--password": (_BOTH, "", _REMOTE),
    "-p": (_BOTH, "--password", _REMOTE),
    "--port": (_BOTH, "", _REMOTE),
    "-P": (_BOTH, "--port", _REMOTE),
    "--socket": (_BOTH, "", _REMOTE),
    "-S": (_BOTH, "--socket", _REMOTE),
}


def _spelling(token: str) -> str | None:
    """The option a command-line token spells as HINTS keys it: a long option without its =value (mysql
    options take _ for -), a short one without a value glued to it; None for anything else."""
    if token.startswith("--") and len(token) > 2:
        return token.split("=", 1)[0].replace("_", "-")
    if token.startswith("-") and len(token) > 1 and token[1].isalpha():
        return token[:2]
    return None


def hint(argv: list[str]) -> str | None:
    """The hint line for the first mysqlbinlog / mariadb-binlog option of `argv` binlog-spec spells
    differently ('OPTION: hint'), or None. Tokens after `--` are file names."""
    for token in argv:
        if token == "--":
            return None
        option = _spelling(token)
        if option in HINTS:
            whose, long, text = HINTS[option]
            named = f"{option} is {whose} {long}" if long else f"{option} is {whose}"
            return f"{named}: {text}"
    return None


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line on stderr, exit code 2: the hint of a mysqlbinlog
    option in the arguments it parsed (`hint`), else the parser's message, which names the option.
    (The subcommands' parsers are of this class too: add_subparsers makes them of the parent's.)"""

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:      # (argparse's own message, said by the command's parser)
            command = getattr(namespace, "command", None)
            self._fail(f"{self.prog} {command}" if command else self.prog,
                       f"unrecognized arguments: {' '.join(extras)}")
        return namespace

    def error(self, message: str):
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str):
        line = hint(getattr(self, "_argv", [])) or f"{message} ({prog} --help lists the options)"
        (getattr(self, "err", None) or sys.stderr).write(f"binlog-spec: error: {line}\n")
        self.exit(2)


def errors_to(parser: argparse.ArgumentParser, err) -> None:
    """The parser's and its commands' parsers' error line written to `err` (default: sys.stderr)."""
    parser.err = err
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                errors_to(command, err)
