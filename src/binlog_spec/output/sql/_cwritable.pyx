# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled part of the SQL script's exact pre-pass (output/sql/writable.py `problems`, the pure-Python
reference, which reads every event): a reader sink that takes, straight from the window, the events that
pass needs no Event for.

`Prepass(schema, read)` is called by the reader (binlog.reader.BinlogReader, `sink=`) with the window's bytes
before it walks them, in a pass over unfiltered events (no filter stands between the schema stage and
`problems`), once `problems` has bound it (`bind`: its decoder's tables, its problems found so far, and its
`judge` of a rows event). It takes whole events, with the checks of framing.walk_events (size, CRC32), as
long as each is one the reference would read to the same end:

* an event of a type that neither the schema stage (rows.decoder.observe_schema) nor `problems` reads, nor the
  reader expands (`read`, 256 bytes, one per type code: writable.READ marks those): GTIDs, XIDs, ANNOTATE_ROWS
  and ROWS_QUERY texts ...: passed over;
* a TABLE_MAP_EVENT whose body bytes `problems` met before under the same schema (`learn`: the table the
  schema stage made of them, at its generation and server collation), mapped again in the decoder's tables;
* a WRITE/UPDATE/DELETE_ROWS_EVENT (v1 and v2) of a table the decoder has: its table id, column count and
  bitmaps at spec.rows_offsets' offsets (kept per shape, as output/rollback/_ccheck.pyx keeps them), its
  verdict asked of `judge` once per table, bitmaps and whether it has rows (what stops the script:
  writable._met, as tuples (schema, table, cause)), and a verdict already met counted in the problems found;
* a QUERY_EVENT whose statement is exactly BEGIN, once `problems` has seen a QUERY_EVENT since the last
  FORMAT_DESCRIPTION_EVENT (`query_seen`: the schema stage has taken the file's server collation, and
  passes BEGIN over), where the MySQL layouts agree with the generated parser.

It stops at the first event it cannot take so (a QUERY_EVENT's DDL, a TABLE_MAP not met yet, a rows event of a
table the decoder lacks or that its verdict would end the pass at, a problem not found yet, a transaction
payload, any other rows event type), and the reader yields that event to the reference path. Returns the
bytes taken (0: none).

The differential test (tests/test_compiled_core.py) runs `sql --sql2` (and --rollback) both ways, over the
corpus, the fixtures and fuzz cases; tests/output/sql/test_writable_sink.py on server-made MINIMAL binlogs and the corpus's.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint32_t
from libc.string cimport memcmp

from binlog_spec.binlog import spec
from binlog_spec.binlog._cbytes cimport (DELETE_ROWS_EVENT, DELETE_ROWS_EVENT_V1, LEN_EVENT_HEADER, QUERY_EVENT,
                                         TABLE_MAP_EVENT, WRITE_ROWS_EVENT, WRITE_ROWS_EVENT_V1, Fde, event_at,
                                         le as _le, mysql_reads_agree, query_is_begin, read_fde)

cdef Py_ssize_t H = LEN_EVENT_HEADER
cdef object _rows_offsets = spec.rows_offsets
#: Bound on the TABLE_MAP bodies and the verdicts kept (emptied when reached).
cdef Py_ssize_t MAX_KEPT = 4096
#: Rows event shapes (their offsets) kept per rows event type.
cdef Py_ssize_t MAX_SHAPES = 8

cdef int _mysql_agree = -1


cdef inline bint mysql_ok() except -1:
    """Whether query_is_begin agrees with the generated parser; checked once, at the first QUERY_EVENT met."""
    global _mysql_agree
    if _mysql_agree < 0:
        _mysql_agree = mysql_reads_agree()
    return _mysql_agree


cdef class Prepass:
    cdef object schema, judge
    cdef bytes read                 # type code -> 1: an event `problems` or the schema stage reads
    cdef dict tables                # the decoder's: table id -> TableDef
    cdef dict found                 # problems' (schema, table, cause) -> Problem
    cdef dict maps                  # TABLE_MAP body bytes -> (table, generation, collation)
    cdef dict verdicts              # (table id, code, n, bitmaps, has rows) -> (table, keys or None)
    cdef list shapes                # per rows event type (v1, v2 x write, update, delete): offsets met
    cdef public bint query_seen
    cdef object fde
    cdef Fde lens
    cdef Py_ssize_t vstart          # (a piece of a file: nothing taken before it, `place`)

    def __init__(self, schema, bytes read not None):
        if len(read) != 256:
            raise ValueError("read: one byte per type code")
        self.schema = schema
        self.read = read
        self.tables = self.found = None
        self.judge = None
        self.maps = {}
        self.verdicts = {}
        self.shapes = [[] for _ in range(6)]
        self.query_seen = False
        self.fde = None
        self.lens.usable = False

    def bind(self, dict tables not None, dict found not None, judge not None):
        """What `problems` shares with the loop: its decoder's tables, its problems found, its judge."""
        self.tables, self.found, self.judge = tables, found, judge

    def learn(self, bytes body not None, table):
        """A TABLE_MAP_EVENT's body bytes `problems` met, and the table the schema stage made of them."""
        schema = self.schema
        generation = getattr(schema, "generation", None)
        if generation is None:
            return
        if len(self.maps) >= MAX_KEPT:
            self.maps.clear()
        self.maps[body] = (table, generation, getattr(schema, "server_collation", None))

    def place(self, Py_ssize_t vstart, Py_ssize_t shift):
        """The reader that calls next reads a piece of a file (stream.planning.pieces.read_piece: --start-position
        read by a seek): the pass takes nothing before `vstart` of its stream."""
        self.vstart = vstart

    def reset(self):
        """A FORMAT_DESCRIPTION_EVENT went to `problems`: a new file, or a new layout."""
        self.maps.clear()
        self.query_seen = False

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole events of buf from off (file position pos); the bytes taken."""
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(buf)
        cdef const unsigned char* read = <const unsigned char*>PyBytes_AS_STRING(self.read)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, len_body
        cdef const unsigned char* e
        cdef int code, len_checksum
        cdef uint32_t len_event
        if pos < self.vstart:
            return 0
        if self.tables is None:
            return 0
        if fde is not self.fde:
            self.fde = fde
            self.maps.clear()
            self.verdicts.clear()
            self.shapes = [[] for _ in range(6)]
            read_fde(fde, True, &self.lens)
        if not self.lens.usable:
            return 0
        len_checksum = self.lens.len_checksum
        while event_at(p, off, n, len_checksum, verify, &code, &len_event):
            e = p + off
            if read[code]:
                len_body = <Py_ssize_t>len_event - H - len_checksum
                if code == TABLE_MAP_EVENT:
                    if not self._table_map(e + H, len_body):
                        break
                elif WRITE_ROWS_EVENT_V1 <= code <= DELETE_ROWS_EVENT_V1 or WRITE_ROWS_EVENT <= code <= DELETE_ROWS_EVENT:
                    if not self._rows(code, e + H, len_body):
                        break
                elif code == QUERY_EVENT:
                    if not (self.query_seen and mysql_ok() and query_is_begin(e + H, len_body, self.lens.query)):
                        break
                else:
                    break
            off += len_event
        return off - start

    cdef bint _table_map(self, const unsigned char* p, Py_ssize_t len_body) except -1:
        """A TABLE_MAP met before under this schema: mapped again in the decoder's tables."""
        got = self.maps.get(PyBytes_FromStringAndSize(<const char*>p, len_body))
        if got is None:
            return False
        table, generation, collation = got
        schema = self.schema
        if schema.generation != generation or getattr(schema, "server_collation", None) != collation:
            return False
        self.tables[table.table_id] = table
        return True

    cdef bint _rows(self, int code, const unsigned char* body, Py_ssize_t len_body) except -1:
        """A rows event whose verdict is known and changes nothing but the count of a problem found: taken."""
        cdef int slot = code - WRITE_ROWS_EVENT_V1 if code <= DELETE_ROWS_EVENT_V1 else 3 + code - WRITE_ROWS_EVENT
        cdef Py_ssize_t ofs_flags, ofs_before, ofs_rows, len_bitmap
        # the offsets of spec.rows_offsets, kept for the next event of the same type whose bytes from its
        # rows flags to its bitmaps (extra data, column count: all the offsets depend on) are the same
        # (the last MAX_SHAPES of each type: the tables of a workload's transactions take turns)
        kept = <list>self.shapes[slot]
        for shape in kept:
            if len_body >= <Py_ssize_t>shape[6] and memcmp(body + <Py_ssize_t>shape[1], PyBytes_AS_STRING(shape[0]),
                                                           PyBytes_GET_SIZE(shape[0])) == 0:
                break
        else:
            whole = PyBytes_FromStringAndSize(<const char*>body, len_body)
            try:
                o = _rows_offsets(code, self.lens.rows[slot] if slot < 3 else self.lens.rows2[slot - 3], whole)
            except Exception:
                return False
            if not 0 < o.ofs_rows_flags <= 8 or _le(body, o.ofs_rows_flags) != o.table_id:
                return False        # (the table id is read as the spec's offsets say, or not here)
            shape = (whole[o.ofs_rows_flags:o.ofs_columns_before_image], o.ofs_rows_flags, o.num_columns,
                     o.len_columns_bitmap, o.ofs_columns_before_image, o.ofs_columns_after_image, o.ofs_rows)
            if len(kept) >= MAX_SHAPES:
                kept.pop()
            kept.insert(0, shape)
        ofs_flags = shape[1]
        table_id = _le(body, ofs_flags)
        table = self.tables.get(table_id)
        if table is None:
            return False
        len_bitmap = shape[3]
        ofs_before = shape[4]
        ofs_rows = shape[6]
        before = PyBytes_FromStringAndSize(<const char*>body + ofs_before, len_bitmap)
        after = None if shape[5] is None else \
            PyBytes_FromStringAndSize(<const char*>body + <Py_ssize_t>shape[5], len_bitmap)
        key = (table_id, code, shape[2], before, after, len_body > ofs_rows)
        got = self.verdicts.get(key)
        if got is None or got[0] is not table:
            got = (table, self.judge(table, code, shape[2], before, after, len_body - ofs_rows))
            if len(self.verdicts) >= MAX_KEPT:
                self.verdicts.clear()
            self.verdicts[key] = got
        keys = got[1]
        if keys is None:
            return False            # (the reference ends the pass there)
        if keys:
            found = self.found
            for k in keys:
                if k not in found:
                    return False    # (the reference makes the problem, at this event)
            for k in keys:
                found[k].events += 1
        return True
