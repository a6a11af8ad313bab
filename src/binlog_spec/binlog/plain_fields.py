"""Finishing touches on the plain fields of parsed event bodies (text, UUIDs, GTID strings,
payload header fields): plain dicts in, no generated code (`spec` keeps the table of which
event type gets which)."""
from __future__ import annotations

import uuid
from typing import Any


def uuid_text(b: bytes) -> str:
    return str(uuid.UUID(bytes=bytes(b)))


def text(b: bytes) -> str:
    return bytes(b).decode("utf-8", errors="replace")


def refine_query(d: dict, header: Any) -> None:
    d["query"] = text(d["query"])


def refine_previous_gtids(d: dict, header: Any) -> None:
    parts = []
    for s in d.get("sids", []):
        s["sid"] = uuid_text(s["sid"])
        ranges = ":".join(f"{iv['start']}" if iv["end"] - iv["start"] == 1 else f"{iv['start']}-{iv['end'] - 1}"
                          for iv in s["intervals"])
        tag = f":{s['tag']}" if s.get("tag") else ""
        parts.append(f"{s['sid']}{tag}:{ranges}" if ranges else f"{s['sid']}{tag}")
    d["gtid_set"] = ",".join(parts)


def refine_mariadb_gtid(d: dict, header: Any) -> None:
    d["gtid"] = f"{d['domain_id']}-{header.server_id}-{d['seq_no']}"


def refine_gtid_list(d: dict, header: Any) -> None:
    d["gtid_list"] = ",".join(f"{g['domain_id']}-{g['server_id']}-{g['seq_no']}" for g in d.get("gtids", []))


PAYLOAD_FIELDS = {1: "payload_size", 2: "compression_type", 3: "uncompressed_size"}
COMPRESSION_TYPES = {0: "ZSTD", 255: "NONE"}


def refine_payload(d: dict, header: Any) -> None:
    for f in d.pop("header_fields"):
        name = PAYLOAD_FIELDS.get(f["field_type"])
        if name is not None:
            d[name] = f["value"]
    if "compression_type" in d:
        d["compression_type"] = COMPRESSION_TYPES.get(d["compression_type"], d["compression_type"])


# GTID_TAGGED_LOG_EVENT field ids (Gtid_event::define_fields); True marks ZigZag-signed fields.
TAGGED_GTID_FIELDS = {0: ("gtid_flags", False), 1: ("sid", False), 2: ("gno", True), 3: ("tag", False),
                       4: ("last_committed", True), 5: ("sequence_number", True),
                       6: ("immediate_commit_timestamp", False), 7: ("original_commit_timestamp", False),
                       8: ("transaction_length", False), 9: ("immediate_server_version", False),
                       10: ("original_server_version", False), 11: ("commit_group_ticket", False)}


def zigzag(u: int) -> int:
    return (u >> 1) ^ -(u & 1)


def refine_tagged_gtid(d: dict, header: Any) -> None:
    for item in d.pop("fields"):
        name, signed = TAGGED_GTID_FIELDS.get(item["field_id"], (f"field_{item['field_id']}", False))
        value = item["value"]
        if name == "sid":
            value = uuid_text(bytes(value["bytes"]))
        elif signed:
            value = zigzag(value)
        d[name] = value
    d.setdefault("original_commit_timestamp", d.get("immediate_commit_timestamp"))
    d.setdefault("original_server_version", d.get("immediate_server_version"))
    d.setdefault("commit_group_ticket", 0)
    d["gtid"] = f"{d.get('sid')}:{d.get('tag')}:{d.get('gno')}" if d.get("tag") else f"{d.get('sid')}:{d.get('gno')}"
