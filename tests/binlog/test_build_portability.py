"""The spec compiles, generated/ is fresh, and the JavaScript build reads the corpus like Python does."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import binlog_spec

from conftest import CORPUS, ROOT, manifest_rows

BUILD = [sys.executable, str(ROOT / "build.py")]


def test_generated_parsers_are_fresh():
    r = subprocess.run(BUILD + ["--check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_build_check_notices_a_stale_tree(tmp_path):
    out = tmp_path / "gen"
    shutil.copytree(ROOT / "generated", out)
    (out / "binlog.py").write_text((out / "binlog.py").read_text() + "\n# edited by hand\n")
    r = subprocess.run(BUILD + ["--check", "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1 and "binlog.py" in r.stderr


def u64(value: int) -> str:
    """A u8 field as JavaScript's Kaitai runtime holds it: the nearest double (exact below 2^53)."""
    return str(int(float(value)))


# A few decoded fields per type: the same choice as tools/walk.js makes in JavaScript.
def _fields(ev: binlog_spec.Event) -> dict:
    f, t = ev.fields, ev.type
    if t == "FORMAT_DESCRIPTION_EVENT":
        return {"server_version": f["server_version"], "num_post_header_lens": f["num_post_header_lens"]}
    if t == "QUERY_EVENT":
        return {"db": f["db"], "num_status_vars": len(f["status_vars"])}
    if t == "TABLE_MAP_EVENT":
        return {"table_id": f["table_id"], "schema": f["schema"], "table": f["table"],
                "num_columns": f["num_columns"], "num_optional_metadata": len(f["optional_metadata"])}
    if t in ("WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT", "DELETE_ROWS_EVENT", "WRITE_ROWS_EVENT_V1",
             "UPDATE_ROWS_EVENT_V1", "DELETE_ROWS_EVENT_V1", "PARTIAL_UPDATE_ROWS_EVENT"):
        return {"table_id": f["table_id"], "num_columns": f["num_columns"], "len_rows": len(f["rows"])}
    if t in ("GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"):
        return {"gno": u64(f["gno"])}
    if t == "PREVIOUS_GTIDS_LOG_EVENT":
        return {"num_sids": f["num_sids"]}
    if t == "XID_EVENT":
        return {"xid": u64(f["xid"])}
    if t == "ROTATE_EVENT":
        return {"next_file": f["next_file"]}
    if t == "GTID_EVENT":
        return {"seq_no": u64(f["seq_no"]), "domain_id": f["domain_id"]}
    if t == "GTID_LIST_EVENT":
        return {"num_gtids": f["num_gtids"]}
    if t == "TRANSACTION_PAYLOAD_EVENT":
        return {"len_payload": len(f["payload"]), "num_header_fields": 4}
    return {}


def python_walk(path) -> list[dict]:
    out = []
    try:
        for ev in binlog_spec.open(path, binlog_spec.ReadOptions(expand_payloads=False)):
            rec = {"pos": ev.pos, "type_code": ev.type_code, "size": ev.size, "end_log_pos": ev.end_log_pos}
            if ev.error is not None:
                rec["malformed"] = True
            else:
                rec["fields"] = _fields(ev)
            out.append(rec)
    except binlog_spec.BinlogError as exc:
        out.append({"error": type(exc).__name__, "offset": exc.offset})
    return out


@pytest.fixture(scope="module")
def js_build(tmp_path_factory):
    if shutil.which("node") is None:
        pytest.fail("node is required for the JavaScript portability test")
    out = tmp_path_factory.mktemp("js")
    r = subprocess.run(BUILD + ["--target", "javascript", "--out", str(out)], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return out


def test_javascript_build_walks_the_corpus_like_python(js_build):
    files = [CORPUS / r["file"] for r in manifest_rows() if not r["file"].endswith(".gz")]
    env = dict(os.environ, NODE_PATH=str(ROOT / "node_modules"))
    r = subprocess.run(["node", str(ROOT / "tools" / "walk.js"), str(js_build), *map(str, files)],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    js = {rec["file"]: rec["events"] for rec in map(json.loads, r.stdout.splitlines())}
    assert len(js) == len(files)
    total = 0
    for f in files:
        py = python_walk(f)
        assert js[str(f)] == py, f"JavaScript and Python differ on {f}"
        total += len(py)
    assert total > 30000


def test_javascript_reads_6_byte_table_ids_above_32_bits(js_build, tmp_path):
    """A 6-byte table id needs more than 32-bit shifts: 0x0102_0304_0506."""
    from test_reader_errors import MAGIC, FDE, event
    tm_body = (bytes.fromhex("060504030201") + b"\x00\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x01\x03\x00\x00")
    p = tmp_path / "bigid.000001"
    p.write_bytes(MAGIC + FDE + event(19, tm_body))
    env = dict(os.environ, NODE_PATH=str(ROOT / "node_modules"))
    r = subprocess.run(["node", str(ROOT / "tools" / "walk.js"), str(js_build), str(p)],
                       capture_output=True, text=True, env=env, check=True)
    js = json.loads(r.stdout)["events"]
    assert js == python_walk(p)
    assert js[1]["fields"]["table_id"] == 0x010203040506
