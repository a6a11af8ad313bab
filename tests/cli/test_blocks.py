"""cli/blocks.py: lines that come partly as blocks of UTF-8 bytes (a compiled lane's) are written in their order,
the blocks to the binary stream under a UTF-8 output, decoded elsewhere: the same bytes either way."""
from __future__ import annotations

import io

from binlog_spec.cli import blocks
from binlog_spec.cli.commands import _WRITE_BATCH, _write_lines

ITEMS = ["a", b"b1\nb2 \xc3\xa9", "c", "d", b"e", "f \u00e9"]
WANT = "a\nb1\nb2 é\nc\nd\ne\nf é\n"


class _Tty(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def _written(out_class=io.TextIOWrapper, encoding="utf-8", batch=_WRITE_BATCH, items=ITEMS) -> bytes:
    raw = io.BytesIO()
    out = out_class(raw, encoding=encoding, newline="")
    blocks.write_blocks(iter(items), out, _write_lines, batch)
    out.flush()
    return raw.getvalue()


def test_blocks_and_lines_are_written_in_their_order_to_a_utf8_stream():
    assert _written() == WANT.encode("utf-8")
    assert _written(batch=1) == WANT.encode("utf-8")
    many = [f"line {i}" for i in range(600)] + [b"block"] + ["end"]
    assert _written(items=many) == ("\n".join(f"line {i}" for i in range(600)) + "\nblock\nend\n").encode()


def test_elsewhere_the_blocks_are_decoded():
    assert _written(encoding="latin-1") == WANT.encode("latin-1")
    assert _written(_Tty) == WANT.encode("utf-8")
    out = io.StringIO()
    blocks.write_blocks(iter(ITEMS), out, _write_lines, _WRITE_BATCH)
    assert out.getvalue() == WANT


def test_utf8_says_which_outputs_take_the_blocks_bytes():
    assert blocks.utf8(io.StringIO())
    assert blocks.utf8(io.TextIOWrapper(io.BytesIO(), encoding="UTF_8"))
    assert not blocks.utf8(io.TextIOWrapper(io.BytesIO(), encoding="latin-1"))


class _Writes(io.StringIO):
    """A file that keeps the size of each write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, s: str) -> int:
        self.sizes.append(len(s))
        return super().write(s)


def test_a_write_joins_lines_up_to_a_megabyte_of_characters():
    # (a compiled lane hands on strings of many lines: 256 of them a write was a string of tens of MB)
    lines = [f"{i:07d}" * 10_000 for i in range(300)]       # 70,000 characters each
    out = _Writes()
    _write_lines(iter(lines), out)
    assert out.getvalue() == "".join(line + "\n" for line in lines)
    assert max(out.sizes) <= (1 << 20) + 70_001
    small = [str(i) for i in range(600)]
    out = _Writes()
    _write_lines(iter(small), out)
    assert out.getvalue() == "".join(line + "\n" for line in small) and len(out.sizes) == 3
