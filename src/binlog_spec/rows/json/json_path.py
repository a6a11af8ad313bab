"""Apply the JSON diffs of a PARTIAL_UPDATE_ROWS_EVENT to the before value (sql/json_diff.cc)."""
from __future__ import annotations

import copy
from typing import Any

from binlog_spec.errors import JsonPathError


def parse_path(path: str) -> list[str | int]:
    """`$.a."b c"[2]` -> ["a", "b c", 2]. Only the forms a diff carries: member and array cell legs."""
    if not path.startswith("$"):
        raise JsonPathError(f"JSON path {path!r} does not start with $")
    legs: list[str | int] = []
    i, n = 1, len(path)
    while i < n:
        c = path[i]
        if c == ".":
            i += 1
            if i < n and path[i] == '"':
                j, out = i + 1, []
                while j < n and path[j] != '"':
                    if path[j] == "\\" and j + 1 < n:
                        j += 1
                    out.append(path[j])
                    j += 1
                legs.append("".join(out))
                i = j + 1
            else:
                j = i
                while j < n and path[j] not in ".[":
                    j += 1
                legs.append(path[i:j])
                i = j
        elif c == "[":
            j = path.index("]", i)
            legs.append(int(path[i + 1:j].strip()))
            i = j + 1
        elif c.isspace():
            i += 1
        else:
            raise JsonPathError(f"unexpected {c!r} at {i} in JSON path {path!r}")
    return legs


def apply_diffs(document: Any, diffs) -> Any:
    """The document after REPLACE / INSERT / REMOVE operations, each at a path."""
    doc = copy.deepcopy(document)
    for d in diffs:
        legs = parse_path(d.path)
        if not legs:
            if d.operation == "REMOVE":
                raise JsonPathError("cannot remove the document root")
            doc = copy.deepcopy(d.value)
            continue
        parent = doc
        for leg in legs[:-1]:
            parent = parent[leg]
        last = legs[-1]
        if d.operation == "REPLACE":
            parent[last] = copy.deepcopy(d.value)
        elif d.operation == "INSERT":
            if isinstance(parent, list):
                parent.insert(min(last, len(parent)), copy.deepcopy(d.value))
            else:
                parent[last] = copy.deepcopy(d.value)
        elif d.operation == "REMOVE":
            del parent[last]
        else:
            raise JsonPathError(f"unknown JSON diff operation {d.operation}")
    return doc
