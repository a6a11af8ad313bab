"""The pieces of the base64 script's per-event lines, made the cheap way, are what the plain way
made: base64 lines of 76 characters, the summary collapsed onto one single-spaced line, and a rows
event's summary read off its parsed body."""
from __future__ import annotations

import base64
import sys

import pytest

from binlog_spec.output import event_text
from binlog_spec.output.base64.script import _base64, _one_line

from conftest import CORPUS, FIXTURES, collect, manifest_rows


@pytest.mark.parametrize("size", [0, 1, 2, 3, 56, 57, 58, 113, 114, 115, 171, 1000, 65536 + 7])
def test_base64_lines_are_encodebytes_without_the_last_newline(size):
    data = bytes((i * 37 + 11) & 0xFF for i in range(size))
    assert _base64(data) == base64.encodebytes(data).decode("ascii").rstrip("\n")


@pytest.mark.parametrize("text", ["", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\nb", "a\r\nb", "a\x1cb",
                                  "a\x85b", "a\xa0b", "a\u2028b", "a\u3000b", "x\x00y", "é ü", "  \t ", "q\x0bw\x0cz"])
def test_one_line_is_the_split_join_of_the_text(text):
    assert _one_line(text) == " ".join(text.split())


def test_every_whitespace_character_but_space_is_unprintable():
    # the shortcut in _one_line rests on this
    assert not [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() and c != " " and c.isprintable()]


FILES = ([CORPUS / row["file"] for row in manifest_rows()]
         + sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()))


@pytest.mark.parametrize("path", FILES, ids=[p.parent.name + "/" + p.name if p.parent != CORPUS else p.name
                                              for p in FILES])
def test_rows_event_summary_from_the_body_is_the_one_from_its_fields(path):
    events, _ = collect(path)
    for ev in events:
        if ev.type_code not in event_text._ROWS_LABELS:
            continue
        fast = event_text.summarize(ev)
        if ev.error is None:
            assert ev._fields is None or ev._overrides, "summarize built the fields"
        fields = event_text.SUMMARIES[ev.type_code]
        try:
            slow = f"MALFORMED: {ev.error.message}" if ev.error is not None else fields(ev.fields)
        except KeyError as missing:
            slow = f"{ev.type}: (no field {missing})"
        assert fast == slow, (path, ev.pos)
