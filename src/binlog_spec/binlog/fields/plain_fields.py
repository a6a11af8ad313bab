"""Plain fields of parsed event bodies: the generic Kaitai object -> plain values conversion (`spec`
hands it the tables of the generated classes: this module imports no generated code), and finishing
touches on the plain dicts (text, UUIDs, GTID strings, payload header fields; `spec` keeps the table
of which event type gets which)."""
from __future__ import annotations

import dis
import uuid
from enum import IntEnum
from typing import Any, Callable, Collection, Sequence

from kaitaistruct import KaitaiStruct


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


# --------------------------------------------------------------------------
# Kaitai objects -> plain values

#: Field values that are already plain.
_AS_IS = frozenset((int, str, bytes, bool, float))


def seq_names(cls: type) -> tuple[str, ...]:
    """The attributes a Kaitai-generated class's _read assigns, in the order it first assigns them: the
    order they take in an object's __dict__ (a field the layout leaves out is missing, never moved)."""
    return tuple(dict.fromkeys(i.argval for i in dis.get_instructions(cls._read) if i.opname == "STORE_ATTR"))


def kaitai_to_plain(scalar_of: dict[type, str], hidden: Collection[str], params_of: Callable[[type], Collection[str]],
                    instances_of: Callable[[type], Sequence[str]]) -> Callable[[Any], Any]:
    """The function that converts a Kaitai value tree to plain values: a struct to the dict of its seq
    fields (in layout order) then its instances (in class order), leaving out its params, `hidden`,
    names starting with _ and None values; a struct of a `scalar_of` type to the value of that
    attribute; an enum to its upper-case name; a list element by element; a bytearray to bytes.
    How to convert a struct class, and a value type, is worked out once, on first sight."""
    plans: dict[type, Any] = {}
    converters: dict[type, Callable[[Any], Any]] = {}

    def plan(cls: type) -> Any:
        found = scalar_of.get(cls)
        if found is None:
            params = params_of(cls)
            fields = tuple(n for n in seq_names(cls) if not n.startswith("_") and n not in params and n not in hidden)
            found = fields, tuple(n for n in instances_of(cls) if n not in hidden and n not in fields)
        plans[cls] = found
        return found

    def struct(value: Any) -> Any:
        how = plans.get(type(value)) or plan(type(value))
        if type(how) is str:
            v = getattr(value, how)
            return v if type(v) in _AS_IS else to_plain(v)
        fields, instances = how
        d = value.__dict__
        out: dict[str, Any] = {}
        for name in fields:
            v = d.get(name)
            if v is not None:
                out[name] = v if type(v) in _AS_IS else to_plain(v)
        for name in instances:
            v = getattr(value, name)
            if v is not None:
                out[name] = v if type(v) in _AS_IS else to_plain(v)
        return out

    def elements(value: list) -> list:
        return [v if type(v) in _AS_IS else to_plain(v) for v in value]

    def converter(t: type) -> Callable[[Any], Any]:
        if issubclass(t, KaitaiStruct):
            conv = struct
        elif issubclass(t, IntEnum):
            conv = _enum_name
        elif issubclass(t, list):
            conv = elements
        elif issubclass(t, bytearray):
            conv = bytes
        else:
            conv = _same
        converters[t] = conv
        return conv

    def to_plain(value: Any) -> Any:
        t = type(value)
        if t in _AS_IS:
            return value
        return (converters.get(t) or converter(t))(value)

    return to_plain


def _enum_name(value: IntEnum) -> str:
    return value.name.upper()


def _same(value: Any) -> Any:
    return value
