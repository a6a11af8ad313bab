"""Renderers of an analysis report (analyze.Analyzer.report()): text, markdown, json, csv.

A report is cut into named sections, each a table (columns, rows); text and
markdown print them one after the other, csv writes one file per section
(`write_csv_dir`) or every section in one stream after a `# section` line.
"""
from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Iterator

from binlog_spec.binlog.timezones import from_iso_z

Section = tuple[str, str, list[str], list[list[Any]]]   # (name, title, columns, rows)

OPS = ("insert", "update", "delete")
#: The timeline row of the events with timestamp 0 (in no bucket).
UNTIMED = "untimed (timestamp 0)"
TX_COLUMNS = ["file", "start_pos", "end_pos", "begin_time", "commit_time", "duration_s", "time_source",
              "gtid", "xid", "bytes", "rows", "tables", "flags"]


def _tx_rows(txs: list[dict]) -> list[list[Any]]:
    out = []
    for t in txs:
        flags = ",".join(f for f in ("big", "long") if t.get(f)) + ("" if t.get("complete", True) else ",cut")
        out.append([t["file"], t["start_pos"], t["end_pos"], t["begin_time"], t["commit_time"], t["duration_s"],
                    t["time_source"], t["gtid"] or "", "" if t["xid"] is None else t["xid"], t["bytes"],
                    t["rows"], " ".join(t["tables"]), flags.strip(",")])
    return out


def sections(r: dict[str, Any]) -> list[Section]:
    s = r["summary"]
    tx = r["transactions"]
    out: list[Section] = [
        ("summary", "Summary", ["item", "value"],
         [[k, v] for k, v in s.items()] + [["time_source", tx["time_source_note"]],
                                           [f"transactions > {tx['big_trx_bytes']} bytes", tx["big"]],
                                           [f"transactions > {tx['long_trx_seconds']} s", tx["long"]]]),
        ("files", "Files", ["file", "events", "bytes"], [[f["file"], f["events"], f["bytes"]] for f in r["files"]]),
        ("event_types", "Event types", ["type", "events", "bytes", "share_pct", "inner_events", "inner_bytes"],
         [[t["type"], t["events"], t["bytes"], round(t["share"] * 100, 2), t["inner_events"], t["inner_bytes"]]
          for t in r["event_types"]]),
        ("tables", "Tables", ["table"] + [f"{op}_{k}" for op in OPS for k in ("events", "rows", "bytes")]
         + ["rows", "bytes"],
         [[t["table"]] + [t[f"{op}_{k}"] for op in OPS for k in ("events", "rows", "bytes")] + [t["rows"], t["bytes"]]
          for t in r["tables"]]),
        ("top_transactions_by_bytes", "Top transactions by size", TX_COLUMNS, _tx_rows(tx["top_by_bytes"])),
        ("top_transactions_by_duration", "Top transactions by duration", TX_COLUMNS,
         _tx_rows(tx["top_by_duration"])),
        ("flagged_transactions", f"Flagged transactions (big or long; {tx['flagged_note']})", TX_COLUMNS,
         _tx_rows(tx["flagged"])),
        ("transaction_sizes", "Transaction sizes", ["min_bytes", "max_bytes", "count"],
         [[h["min_bytes"], h["max_bytes"], h["count"]] for h in tx["size_histogram"]]),
        ("ddl", "DDL", ["time", "file", "pos", "database", "statement"],
         [[d["time"], d["file"], d["pos"], d["database"], " ".join(d["statement"].split())] for d in r["ddl"]]),
        ("timeline", f"Timeline (per {r['options']['bucket_s']} s; {r['timeline_note']})",
         ["start", "events", "rows", "bytes"],
         [[t["start"], t["events"], t["rows"], t["bytes"]] for t in r["timeline"]]
         + ([[UNTIMED, u["events"], u["rows"], u["bytes"]]] if (u := r["timeline_untimed"])["events"] else [])),
        ("faults", "Faults (files not read to their end; the figures count what was read before)",
         ["file", "offset", "event_type", "error", "message"],
         [[f["file"], f["offset"], f["event_type"], f["error"], f["message"]] for f in r["faults"]]),
        ("row_errors", f"Rows events whose rows are not counted ({r['summary']['row_errors']}"
                       + (f", the first {len(r['row_errors'])} listed" if len(r["row_errors"]) <
                          r["summary"]["row_errors"] else "") + ")",
         ["file", "offset", "event_type", "error", "message"],
         [[f["file"], f["offset"], f["event_type"], f["error"], f["message"]] for f in r["row_errors"]]),
    ]
    return out


def _cell(v: Any) -> str:
    if v is None:
        return ""
    return str(v)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def text_lines(r: dict[str, Any]) -> Iterator[str]:
    for name, title, cols, rows in sections(r):
        yield f"== {title} =="
        if not rows:
            yield "(none)"
            yield ""
            continue
        cells = [[_cell(v) for v in row] for row in rows]
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
        numeric = [all(_is_num(row[i]) or row[i] is None for row in rows) for i in range(len(cols))]

        def fmt(row: list[str]) -> str:
            return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric)).rstrip()
        yield fmt(list(cols))
        yield "  ".join("-" * w for w in widths)
        for row in cells:
            yield fmt(row)
        yield ""


def _md(v: str) -> str:
    return v.replace("|", "\\|").replace("\n", " ")


def markdown_lines(r: dict[str, Any]) -> Iterator[str]:
    yield "# Binlog analysis"
    yield ""
    for name, title, cols, rows in sections(r):
        yield f"## {title}"
        yield ""
        if not rows:
            yield "(none)"
            yield ""
            continue
        yield "| " + " | ".join(cols) + " |"
        yield "|" + "|".join("---:" if all(_is_num(row[i]) for row in rows) else "---"
                             for i in range(len(cols))) + "|"
        for row in rows:
            yield "| " + " | ".join(_md(_cell(v)) for v in row) + " |"
        yield ""


def json_lines(r: dict[str, Any]) -> Iterator[str]:
    yield json.dumps(r, indent=2, ensure_ascii=False, default=str)


def csv_lines(r: dict[str, Any]) -> Iterator[str]:
    """Every section in one stream: `# name`, then a CSV header and rows, then a blank line."""
    for name, _title, cols, rows in sections(r):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        w.writerows([[_cell(v) for v in row] for row in rows])
        yield f"# {name}"
        yield buf.getvalue().rstrip("\n")
        yield ""


def write_csv_dir(r: dict[str, Any], directory: str) -> list[str]:
    """One `<section>.csv` per section; returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, _title, cols, rows in sections(r):
        path = os.path.join(directory, f"{name}.csv")
        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(cols)
            w.writerows([[_cell(v) for v in row] for row in rows])
        paths.append(path)
    return paths


FORMATS = {"text": text_lines, "markdown": markdown_lines, "json": json_lines, "csv": csv_lines}

__all__ = ["FORMATS", "sections", "text_lines", "markdown_lines", "json_lines", "csv_lines", "write_csv_dir"]


def in_zone(r: dict[str, Any], tz, zone_name: str) -> dict[str, Any]:
    """A copy of the report for the text and markdown formats: its ISO 8601 UTC times ('...Z') shown in
    `tz` with their offset ('2026-01-01T08:00:00+08:00'), and a `time_zone` line in the summary. JSON and
    CSV keep UTC."""
    def local(v: Any) -> Any:
        if isinstance(v, str) and v.endswith("Z") and "T" in v:
            try:
                return from_iso_z(v).astimezone(tz).isoformat()
            except ValueError:
                return v
        return v

    def txs(rows: list[dict]) -> list[dict]:
        return [{**t, "begin_time": local(t["begin_time"]), "commit_time": local(t["commit_time"])} for t in rows]

    out = dict(r)
    out["summary"] = {"time_zone": zone_name,
                      **{k: local(v) if k in ("first_event", "last_event") else v for k, v in r["summary"].items()}}
    if "filters" in r["summary"]:       # the time bounds in the zone too
        out["summary"]["filters"] = " ".join(f"{f['option']} {local(f['value'])}" for f in r["filters"])
    tx = dict(r["transactions"])
    for key in ("top_by_bytes", "top_by_duration", "flagged"):
        tx[key] = txs(tx[key])
    out["transactions"] = tx
    out["ddl"] = [{**d, "time": local(d["time"])} for d in r["ddl"]]
    out["timeline"] = [{**t, "start": local(t["start"])} for t in r["timeline"]]
    return out
