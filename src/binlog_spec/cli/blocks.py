"""Lines that come partly as blocks of UTF-8 bytes: a compiled lane's (api.event_json_lines), written to the
binary stream under the output with no str made of them."""
from __future__ import annotations

import os
from typing import Callable, Iterable, TextIO


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
