"""The base64 script's per-event text (the pure-Python reference of output/base64/_ctext.pyx): an event framed
at its position, its ``# at`` comment lines, and the base64 lines of its framed bytes.

`event_text` is what `Base64Script` writes for every event but the FORMAT_DESCRIPTION_EVENT (whose
CRC32 is computed with LOG_EVENT_BINLOG_IN_USE_F clear: `binlog.writer.frame` frames it). The
compiled twin gives the same strings for the same arguments; binlog_spec.compiled chooses which runs.
"""
from __future__ import annotations

import binascii

from binlog_spec import compiled
from binlog_spec.binlog.writer import ET, H, OFS_END_LOG_POS, OFS_TYPE, frame

#: base64 characters per line (base64.encodebytes: 57 bytes a line).
LINE = 76


def base64_lines(data: bytes) -> str:
    """base64.encodebytes(data) without its last newline: lines of 76 characters (57 bytes)."""
    text = binascii.b2a_base64(data, newline=False).decode("ascii")
    if len(text) <= LINE:
        return text
    return "\n".join([text[i:i + LINE] for i in range(0, len(text), LINE)])


def event_text(data: bytes, n: int, pos: int, checksum: bool, when: str, server_id: int, summary: str,
               encode: bool) -> tuple[str, str | None]:
    """(the two ``#`` comment lines, and with `encode` the base64 lines of the framed bytes, else None)
    of an event (not an FDE) whose bare bytes (binlog.writer) are data[:n] but for their size field
    (its bytes as read: n is the length without a CRC32 trailer), framed at `pos` (size, end_log_pos,
    and the CRC32 appended when `checksum`): ``# at POS`` then ``#WHEN server id ID  end_log_pos END
    [CRC32 0x........ ]<TAB>SUMMARY``."""
    if not 0 <= n <= len(data):
        raise ValueError("n is beyond the bytes given")
    bare = data[:n]
    if len(bare) < H or bare[OFS_TYPE] == ET.format_description_event:
        raise ValueError("event_text frames the bare bytes of a whole event, not of an FDE")
    framed = frame(bare, pos, checksum)
    crc = f"CRC32 0x{int.from_bytes(framed[-4:], 'little'):08x} " if checksum else ""
    end = int.from_bytes(framed[OFS_END_LOG_POS:OFS_END_LOG_POS + 4], "little")
    comment = f"# at {pos}\n#{when} server id {server_id}  end_log_pos {end} {crc}\t{summary}"
    return comment, base64_lines(framed) if encode else None


_ctext = compiled.load("binlog_spec.output.base64._ctext")
#: base64_lines as the script calls it: the compiled one (output/base64/_ctext.pyx) where it is built.
encode = _ctext.base64_lines if _ctext is not None else base64_lines
#: event_text as the script calls it, compiled where built.
text = _ctext.event_text if _ctext is not None else event_text

__all__ = ["base64_lines", "event_text", "encode", "text"]
