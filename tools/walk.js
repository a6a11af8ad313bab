// Walk binlog files with the JavaScript build of formats/binlog.ksy.
//
//   python build.py --target javascript --out DIR
//   NODE_PATH=node_modules node tools/walk.js DIR FILE...
//
// Prints one JSON line per event (and one per fatal error), in the same
// shape as tests/test_build_portability.py builds from Python, so that the two can be
// compared: the spec must read the same in both languages. Streaming is done
// the same way as the Python runtime: header first, then the whole event,
// parsed with the post-header lengths of the FDE in force.
"use strict";
const fs = require("fs");
const path = require("path");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

const { Binlog } = require(path.resolve(process.argv[2], "Binlog.js"));
const ET = Binlog.EventType;
const HEADER = 19;
const MAGIC = [0xfe, 0x62, 0x69, 0x6e];

function crc32(bytes, start, end) {
  let c = ~0;
  for (let i = start; i < end; i++) {
    c ^= bytes[i];
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return (~c) >>> 0;
}

// JavaScript's TextDecoder replaces bad UTF-8 where Python's codec raises;
// treat a replacement character as the same "body does not match" outcome.
function hasReplacement(value) {
  return typeof value === "string" && value.includes("\ufffd");
}

// The Kaitai JavaScript runtime reads u8 as a double (exact to 2^53); print
// such fields as the exact decimal of that double. Python compares likewise.
function u64(value) {
  return BigInt(value).toString();
}

// A few decoded fields per type, as in tests/test_build_portability.py.
function fieldsOf(typeCode, body) {
  switch (typeCode) {
    case ET.FORMAT_DESCRIPTION_EVENT:
      return { server_version: body.serverVersion, num_post_header_lens: body.numPostHeaderLens };
    case ET.QUERY_EVENT:
      return { db: body.db, num_status_vars: body.statusVars.entries.length };
    case ET.TABLE_MAP_EVENT:
      return { table_id: body.tableId, schema: body.schema, table: body.table,
               num_columns: body.numColumns.value, num_optional_metadata: body.optionalMetadata.length };
    case ET.WRITE_ROWS_EVENT: case ET.UPDATE_ROWS_EVENT: case ET.DELETE_ROWS_EVENT:
    case ET.WRITE_ROWS_EVENT_V1: case ET.UPDATE_ROWS_EVENT_V1: case ET.DELETE_ROWS_EVENT_V1:
    case ET.PARTIAL_UPDATE_ROWS_EVENT:
      return { table_id: body.tableId, num_columns: body.numColumns.value, len_rows: body.rows.length };
    case ET.GTID_LOG_EVENT: case ET.ANONYMOUS_GTID_LOG_EVENT:
      return { gno: u64(body.gno) };
    case ET.PREVIOUS_GTIDS_LOG_EVENT:
      return { num_sids: body.numSids };
    case ET.XID_EVENT:
      return { xid: u64(body.xid) };
    case ET.ROTATE_EVENT:
      return { next_file: body.nextFile };
    case ET.GTID_EVENT:
      return { seq_no: u64(body.seqNo), domain_id: body.domainId };
    case ET.GTID_LIST_EVENT:
      return { num_gtids: body.numGtids };
    case ET.TRANSACTION_PAYLOAD_EVENT:
      return { len_payload: body.payload.length, num_header_fields: body.headerFields.length };
    default:
      return {};
  }
}

function walk(file) {
  const out = [];
  const data = new Uint8Array(fs.readFileSync(file));
  const fail = (offset, kind) => { out.push({ error: kind, offset }); return out; };
  if (data.length < 4 || MAGIC.some((b, i) => data[i] !== b)) return fail(0, "NotABinlogError");
  let pos = 4;
  let fde = null;
  while (pos < data.length) {
    if (data.length - pos < HEADER) return fail(pos, "TruncatedEventError");
    const header = new Binlog.EventHeader(new KaitaiStream(data.subarray(pos, pos + HEADER)));
    const typeCode = header.typeCode;
    if (fde === null && typeCode !== ET.FORMAT_DESCRIPTION_EVENT) return fail(pos, "NotABinlogError");
    if (pos + header.lenEvent > data.length) return fail(pos, "TruncatedEventError");
    const buf = data.subarray(pos, pos + header.lenEvent);
    if (typeCode === ET.FORMAT_DESCRIPTION_EVENT) {
      fde = new Binlog.FormatDescriptionEvent(new KaitaiStream(buf.subarray(HEADER)));
      if (fde.hasChecksum) {
        const clean = Uint8Array.from(buf);
        clean[17] &= ~1;
        if (crc32(clean, 0, clean.length - 4) !== fde.fdeChecksum) return fail(pos, "ChecksumError");
      }
    } else if (fde.lenChecksum === 4) {
      const stored = (buf[buf.length - 4] | (buf[buf.length - 3] << 8) | (buf[buf.length - 2] << 16)
                      | (buf[buf.length - 1] << 24)) >>> 0;
      if (crc32(buf, 0, buf.length - 4) !== stored) return fail(pos, "ChecksumError");
    }
    const record = { pos, type_code: typeCode, size: header.lenEvent, end_log_pos: header.endLogPos };
    try {
      const ev = new Binlog.Event(new KaitaiStream(buf), null, null, fde.postHeaderLens, fde.lenChecksum,
                                  fde.lenCommonHeader);
      const fields = fieldsOf(typeCode, ev.body);
      if (Object.values(fields).some(hasReplacement)) record.malformed = true;
      else record.fields = fields;
    } catch (e) {
      record.malformed = true;
    }
    out.push(record);
    pos += header.lenEvent;
  }
  return out;
}

for (const file of process.argv.slice(3)) {
  let events;
  try {
    events = walk(file);
  } catch (e) {
    events = [{ error: "crash", message: String(e && e.stack || e) }];
  }
  process.stdout.write(JSON.stringify({ file, events }) + "\n");
}
