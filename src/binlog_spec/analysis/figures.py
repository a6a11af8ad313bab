"""The report of an Analyzer's figures (collector.Analyzer.report): a plain dict, which report.py renders
as text, markdown, JSON or CSV and html.py as a page with charts."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from binlog_spec.binlog import spec
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE
from binlog_spec.binlog.timezones import iso_z
from binlog_spec.errors import BinlogError

UTC = timezone.utc
OPS = (INSERT, UPDATE, DELETE)
#: At most this many flagged (big or long) transactions are listed (the count goes on).
MAX_FLAGGED = 1000
#: Transaction size histogram: powers of two from 2**MIN_BUCKET bytes.
MIN_BUCKET = 8


def _iso(ts: float | datetime | None) -> str | None:
    if ts is None:
        return None
    if not isinstance(ts, datetime):
        ts = datetime.fromtimestamp(ts, tz=UTC)
    return iso_z(ts)


def _error_dict(exc: BinlogError) -> dict[str, Any]:
    return {"file": exc.file, "offset": exc.offset, "event_type": exc.event_type, "error": type(exc).__name__,
            "message": exc.message}


def filters_text(filters: list[tuple[str, str]]) -> str:
    """The filters of a report on one line, as the command line gives them: --table shop.t --start-datetime ..."""
    return " ".join(f"{k} {v}" for k, v in filters)


def report(a) -> dict[str, Any]:
    """The report of the figures of `a`, a collector.Analyzer (its transactions closed: Analyzer.finish;
    not imported here: the collector imports this module)."""
    o = a.options
    total = a.total_bytes or 1
    types = [{"type": spec.event_type_name(code), "type_code": code, "events": v[0], "bytes": v[1],
              "share": round(v[1] / total, 6), "inner_events": v[2], "inner_bytes": v[3]}
             for code, v in a.types.items()]
    types.sort(key=lambda r: (-r["bytes"], -r["inner_bytes"], r["type"]))
    tables = []
    for name, st in a.tables.items():
        row: dict[str, Any] = {"table": name}
        for op in OPS:
            row[f"{op}_events"] = st.events[op]
            row[f"{op}_rows"] = st.rows[op]
            row[f"{op}_bytes"] = st.bytes[op]
        row["events"] = sum(st.events.values())
        row["rows"] = sum(st.rows.values())
        row["bytes"] = sum(st.bytes.values())
        tables.append(row)
    sort = o.sort
    if sort == "name":
        tables.sort(key=lambda r: r["table"])
    else:
        key = {"inserts": "insert_rows", "updates": "update_rows", "deletes": "delete_rows"}.get(sort, sort)
        tables.sort(key=lambda r: (-r[key], r["table"]))
    top_bytes = [d for _, _, d in sorted(a._top_bytes, key=lambda x: (-x[0], -x[1]))]
    top_duration = [d for _, _, d in sorted(a._top_duration, key=lambda x: (-x[0], -x[1]))]
    bins = range(min(a.tx_hist), max(a.tx_hist) + 1) if a.tx_hist else ()   # empty bins too
    hist = [{"min_bytes": 0 if b == MIN_BUCKET else 1 << (b - 1), "max_bytes": (1 << b) - 1,
             "count": a.tx_hist.get(b, 0)} for b in bins]
    timeline = [{"start": _iso(k), "events": v[0], "rows": v[1], "bytes": v[2]}
                for k, v in sorted(a.timeline.items())]
    untimed = dict(zip(("events", "rows", "bytes"), a.untimed))
    timeline_note = "buckets with no event are not listed (the HTML chart leaves their place empty)"
    if a.untimed[0]:
        timeline_note += (f"; {untimed['events']} events with timestamp 0 ({untimed['rows']} rows, "
                          f"{untimed['bytes']} bytes) are in no bucket (untimed)")
    if a.outside[0]:
        timeline_note += (f"; {a.outside[0]} control events ({a.outside[2]} bytes) the filters keep "
                          "whatever their time are in no bucket")
    filters = o.filters.described() + (o.row_filters.described() if o.row_filters is not None else [])
    window = {"start": _iso(o.filters.start_datetime), "stop": _iso(o.filters.stop_datetime)}
    sources = a.tx_sources
    shown = len(a._flagged)
    if sources.get("immediate_commit_timestamp"):
        note = ("commit times from the GTID events' immediate_commit_timestamp (MySQL 8.0, microseconds)"
                + (f" for {sources['immediate_commit_timestamp']} transactions, from the XID/COMMIT event "
                   f"timestamps (whole seconds) for {sources.get('commit_event')}"
                   if sources.get("commit_event") else "")
                + "; begin times are event timestamps (whole seconds), so durations are whole seconds "
                  "(the commit time cut to its second minus the begin time)")
    else:
        note = ("commit times from the XID/COMMIT event timestamps; begin times, commit times and durations "
                "in whole seconds")
    return {
        "files": [{"file": k, **v} for k, v in a.files.items()],
        "summary": {"files": len(a.files), "events": a.total_events, "bytes": a.total_bytes,
                    "rows": a.total_rows, "tables": len(a.tables), "transactions": a.tx_count,
                    "ddl": a.ddl_count, "first_event": _iso(a.first_ts),
                    "last_event": _iso(a.last_ts), "row_errors": a.row_errors,
                    "untimed_events": a.untimed[0], "faults": len(a.faults),
                    **({"filters": filters_text(filters)} if filters else {})},
        "filters": [{"option": k, "value": v} for k, v in filters],
        "window": window if any(window.values()) else None,
        "faults": a.faults,
        "row_errors": [_error_dict(e) for e in a.row_error_list],
        "event_types": types,
        "tables": tables,
        "transactions": {
            "count": a.tx_count, "bytes": a.tx_bytes_total, "rows": a.tx_rows_total,
            "time_source": sources,
            "time_source_note": note, "duration_resolution_s": 1,
            "big_trx_bytes": o.big_trx_bytes, "long_trx_seconds": o.long_trx_seconds,
            "big": a.tx_big, "long": a.tx_long, "max_duration_s": round(a.tx_max_duration, 6),
            "top_by_bytes": top_bytes, "top_by_duration": top_duration,
            "flagged": a._flagged, "flagged_count": a.tx_flagged, "flagged_shown": shown,
            "flagged_note": f"flagged: {a.tx_flagged}, showing {shown}"
                            + (f" (at most {MAX_FLAGGED} are listed)" if shown < a.tx_flagged else ""),
            "size_histogram": hist,
        },
        "ddl": a.ddl,
        "timeline": timeline,
        "timeline_untimed": untimed,
        "timeline_outside": dict(zip(("events", "rows", "bytes"), a.outside)),
        "timeline_note": timeline_note,
        "options": {"top": o.top, "sort": o.sort, "bucket_s": o.bucket_s},
    }
