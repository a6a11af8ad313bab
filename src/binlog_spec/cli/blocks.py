"""Lines that come partly as blocks of UTF-8 bytes: a compiled lane's (api.event_json_lines), written to the
binary stream under the output with no str made of them; and the -o file that replaces its name whole or not at all
(`replacing`)."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import Callable, Iterable, Iterator, TextIO


def utf8(out: TextIO) -> bool:
    """Whether `out` holds str as they are (no encoding: a StringIO) or encodes them as UTF-8."""
    encoding = getattr(out, "encoding", None)
    return encoding is None or encoding.lower().replace("-", "").replace("_", "") == "utf8"


def write_blocks(items: Iterable[str | bytes], out: TextIO, write_lines: Callable[[Iterable[str], TextIO], None],
                 batch_size: int) -> None:
    """`write_lines` (the CLI's, which joins `batch_size` lines a write) of lines (str) and of blocks of lines
    (UTF-8 bytes, lines joined by newlines): a block goes to the binary stream under `out` where `out` encodes
    UTF-8 to a file or pipe (the text before it flushed first), else it is decoded; the same bytes either way."""
    raw = getattr(out, "buffer", None)
    if raw is None or out.isatty() or not utf8(out) or os.linesep != "\n":
        write_lines((item.decode("utf-8") if type(item) is bytes else item for item in items), out)
        return
    batch: list[str] = []
    texted = False      # text written to `out` since the last block
    try:
        for item in items:
            if type(item) is bytes:
                if batch:
                    batch.append("")
                    out.write("\n".join(batch))
                    batch = []
                    texted = True
                if texted:
                    out.flush()
                    texted = False
                raw.write(item)
                raw.write(b"\n")
                continue
            batch.append(item)
            if len(batch) >= batch_size:
                batch.append("")
                out.write("\n".join(batch))
                batch = []
                texted = True
    finally:
        if batch:
            batch.append("")
            out.write("\n".join(batch))


__all__ = ["utf8", "write_blocks"]


@contextlib.contextmanager
def replacing(path: str, binary: bool = False) -> Iterator:
    """A temporary file next to `path`, renamed to it when the block ends without an exception, removed
    otherwise: a failed run never leaves a half-written file under the final name."""
    folder = os.path.dirname(os.path.abspath(path))
    kw = {} if binary else {"encoding": "utf-8", "errors": "surrogateescape", "newline": ""}
    try:
        tmp = tempfile.NamedTemporaryFile("wb" if binary else "w", dir=folder,
                                          prefix=f".{os.path.basename(path)}.", suffix=".tmp", delete=False, **kw)
    except OSError as exc:      # named as the user gave it, never by the temporary file's name
        raise OSError(exc.errno, exc.strerror, f"-o {path}") from None
    try:
        with contextlib.suppress(OSError):      # (a file system without modes keeps its own)
            os.fchmod(tmp.fileno(), output_mode(path))
        yield tmp
    except BaseException:
        tmp.close()
        os.unlink(tmp.name)
        raise
    tmp.close()
    try:
        os.replace(tmp.name, path)
    except OSError as exc:
        os.unlink(tmp.name)
        raise OSError(exc.errno, exc.strerror, f"-o {path}") from None


def output_mode(path: str) -> int:
    """The mode of an -o file, as a shell redirection leaves it: an existing file's own mode (it is
    replaced, not reset), a new file's 0666 less the umask (the temporary file is made 0600)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0o022)      # (read by setting it: set back at once)
        os.umask(mask)
        return 0o666 & ~mask
