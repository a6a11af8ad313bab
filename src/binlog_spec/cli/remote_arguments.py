"""The options that reach a live server, spelled as mysqlbinlog spells them (-R, --host, --port, --socket,
--user, --password, --ssl-*, --connection-server-id, --defaults-file), and what they become: a
ConnectOptions (connect_options).

Where each value comes from, first found wins, as the mysql clients read them: the command line; the
[client] group of --defaults-file (alone), else of ~/.my.cnf (none with --no-defaults); MYSQL_PWD for the
password. `-p`/`--password` given alone prompts (getpass, on the terminal); a value must be glued to it
(`-pSECRET`, `--password=SECRET`), as mysql's: `-p mysql-bin.000042` prompts and keeps the log name. A
password given on the command line is wiped from the process title as soon as it is read (the safe ways
are the prompt, MYSQL_PWD and an option file)."""
from __future__ import annotations

import argparse
import configparser
import getpass
import os
import sys
from pathlib import Path

from binlog_spec.errors import UsageError
from binlog_spec.options import SSL_MODES, ConnectOptions

#: The value of --password when it was given with none: ask on the terminal.
PROMPT = object()
_PROMPT_FLAG = "--password-prompt"      # (hidden: what a bare -p / --password becomes, password_argv)


def password_argv(argv: list[str]) -> list[str]:
    """argv with a bare `-p` / `--password` (no glued value) made the hidden prompt flag, so that the next
    argument stays what it is (a log name), as the mysql clients read it; `-pSECRET` -> --password=SECRET.
    Arguments after `--` are left alone."""
    out = []
    for i, token in enumerate(argv):
        if token == "--":
            return out + argv[i:]
        if token in ("-p", "--password"):
            out.append(_PROMPT_FLAG)
        elif token.startswith("-p") and not token.startswith("--"):
            out.append("--password=" + token[2:])
        else:
            out.append(token)
    return out


def _whole_number(what: str, noun: str, low: int, high: int):
    """An argparse `type=` of a whole number in [low, high]: `what` names a value that is none, `noun` one
    out of range."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{noun} is {low}-{high}, not {value}")
        return value
    return convert


_port = _whole_number("a port number", "a port", 1, 65535)
#: (0 is no replica's id: the server refuses it)
_server_id = _whole_number("a server id", "a server id", 1, (1 << 32) - 1)


def _ssl_mode(text: str) -> str:
    mode = text.upper().replace("-", "_")
    if mode not in SSL_MODES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(SSL_MODES)}")
    return mode


def add_connection_arguments(p: argparse.ArgumentParser) -> None:
    """-R and the options that reach the server (argparse's -h stays help: mysqlbinlog users type --host)."""
    g = p.add_argument_group(
        "reading from a server",
        "With -R the arguments are log names on the server (SHOW BINARY LOGS), read over the replication "
        "protocol as a replica does (mysqlbinlog --read-from-remote-server). The user needs REPLICATION SLAVE "
        "(and BINLOG MONITOR on MariaDB, REPLICATION CLIENT on MySQL, to list the logs). Values not given "
        "come from the [client] group of --defaults-file, else of ~/.my.cnf; the password also from "
        "MYSQL_PWD.")
    g.add_argument("-R", "--read-from-remote-server", dest="remote", action="store_true",
                   help="read the logs from a server instead of files")
    g.add_argument("--host", metavar="HOST", help="the server's host (default localhost)")
    g.add_argument("-P", "--port", type=_port, metavar="PORT", help="its TCP port (default 3306)")
    g.add_argument("-S", "--socket", metavar="PATH", help="its Unix socket, instead of host and port")
    g.add_argument("-u", "--user", metavar="USER", help="the user to connect as")
    g.add_argument("-p", "--password", nargs="?", const=PROMPT, metavar="PASSWORD",
                   help="the password; given alone (-p), asked for on the terminal. Glue a value to it "
                        "(-pSECRET, --password=SECRET) if you must: the process list would show it until "
                        "it is read, so prefer the prompt, MYSQL_PWD or an option file")
    g.add_argument(_PROMPT_FLAG, dest="password", action="store_const", const=PROMPT, help=argparse.SUPPRESS)
    g.add_argument("--ssl-mode", type=_ssl_mode, metavar="MODE",
                   help="DISABLED, PREFERRED (TLS if the server offers it; the default), REQUIRED, VERIFY_CA "
                        "(the default with --ssl-ca), VERIFY_IDENTITY")
    g.add_argument("--ssl-ca", metavar="FILE", help="the CA certificate the server's must be signed by")
    g.add_argument("--ssl-cert", metavar="FILE", help="a client certificate")
    g.add_argument("--ssl-key", metavar="FILE", help="the client certificate's key")
    g.add_argument("--connection-server-id", type=_server_id, metavar="ID",
                   help="the server id the dump registers with (default: a random one, so that two reads "
                        "never take each other's place; a replica's id would cut that replica off)")
    g.add_argument("--defaults-file", metavar="FILE", help="read the [client] group of this option file only")
    g.add_argument("--no-defaults", action="store_true", help="read no option file")


#: The keys of an option file's [client] group that are read (mysql's spelling; _ and - are the same).
_FILE_KEYS = ("host", "port", "socket", "user", "password", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key")


def read_defaults(path: str | os.PathLike) -> dict[str, str]:
    """The [client] group of an option file (my.cnf syntax: `key=value`, quotes stripped, `#`/`;`
    comments; !include lines are not followed). UsageError when the file cannot be read."""
    parser = configparser.RawConfigParser(allow_no_value=True, strict=False, comment_prefixes=("#", ";"),
                                          inline_comment_prefixes=None, interpolation=None)
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        parser.read_string("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("!")),
                           source=str(path))
    except OSError as exc:
        raise UsageError(f"--defaults-file {path}: {exc.strerror or exc}") from None
    except configparser.Error as exc:
        raise UsageError(f"--defaults-file {path}: not an option file ({type(exc).__name__})") from None
    if not parser.has_section("client"):
        return {}
    values = {}
    for key, value in parser.items("client"):
        key = key.strip().replace("_", "-")
        if key in _FILE_KEYS and value is not None:
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            values[key] = value
    return values


def _defaults(args: argparse.Namespace) -> tuple[dict[str, str], str | None]:
    if getattr(args, "no_defaults", False):
        return {}, None
    if getattr(args, "defaults_file", None):
        return read_defaults(args.defaults_file), args.defaults_file
    home = Path(os.path.expanduser("~")) / ".my.cnf"
    if home.is_file():
        return read_defaults(home), str(home)
    return {}, None


def connect_options(args: argparse.Namespace, *, prompt=None) -> ConnectOptions:
    """The ConnectOptions of the parsed arguments (add_connection_arguments'), with the option file and
    MYSQL_PWD; a bare -p asks `prompt` (getpass.getpass: on the terminal). A bad value in the option file
    is a UsageError naming it."""
    conf, conf_path = _defaults(args)
    password = args.password
    if password is PROMPT:
        password = (prompt or getpass.getpass)("Enter password: ")
    elif password is not None:
        scrub_process_title(password)
    if password is None:
        password = conf.get("password", os.environ.get("MYSQL_PWD"))
    port = args.port
    if port is None and "port" in conf:
        try:
            port = _port(conf["port"])
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"{conf_path}: [client] port: {exc}") from None
    ssl_mode = args.ssl_mode
    if ssl_mode is None and "ssl-mode" in conf:
        try:
            ssl_mode = _ssl_mode(conf["ssl-mode"])
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"{conf_path}: [client] ssl-mode: {exc}") from None
    return ConnectOptions(
        host=args.host or conf.get("host") or "localhost", port=port or 3306,
        socket=args.socket or conf.get("socket"), user=args.user or conf.get("user") or getpass.getuser(),
        password=password, ssl_mode=ssl_mode, ssl_ca=args.ssl_ca or conf.get("ssl-ca"),
        ssl_cert=args.ssl_cert or conf.get("ssl-cert"), ssl_key=args.ssl_key or conf.get("ssl-key"),
        connection_server_id=args.connection_server_id, defaults_file=conf_path)


def scrub_process_title(secret: str) -> bool:
    """Overwrite `secret` with x's where the process's command line holds it (what ps and /proc/PID/cmdline
    show: the kernel reads the argument strings from the process's own memory, arg_start..arg_end of
    /proc/self/stat), as the mysql clients do with their argv. Linux only; False when it could not."""
    raw = secret.encode(sys.getfilesystemencoding(), "surrogateescape")
    if not raw or not sys.platform.startswith("linux"):
        return False
    try:
        stat = Path("/proc/self/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        start, end = int(fields[45]), int(fields[46])      # fields 48 and 49 of proc(5), arg_start / arg_end
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            tokens = mem.read(end - start).split(b"\0")
            wiped = [t[:len(t) - len(raw)] + b"x" * len(raw)
                     if t in (b"-p" + raw, b"--password=" + raw) else t for t in tokens]
            if wiped != tokens:
                mem.seek(start)
                mem.write(b"\0".join(wiped))
        return True
    except (OSError, ValueError, IndexError):
        return False


__all__ = ["add_connection_arguments", "connect_options", "password_argv", "read_defaults", "PROMPT",
           "scrub_process_title"]
