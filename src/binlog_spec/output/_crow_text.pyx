# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twin of output/row_text.py's `row_json`: the JSON lines of the `rows` command written straight
from the reader's window, with no Event, no RowChange and no Python object per value.

`RowLane(tables, ops)` is a reader sink (binlog.reader.Sink). It takes whole transactions of the common
shape, event by event: MariaDB's, a GTID_EVENT that opens a plain transaction (`opens_plain_transaction`),
then ANNOTATE_ROWS_EVENTs, TABLE_MAP_EVENTs, WRITE/UPDATE/DELETE_ROWS_EVENT_V1s and the XID_EVENT that ends
it; MySQL's (_crow_mysql.pxi), a GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT or GTID_TAGGED_LOG_EVENT and a BEGIN
QUERY_EVENT (or that BEGIN alone where no GTID is open), then ROWS_QUERY_LOG_EVENTs, TABLE_MAP_EVENTs, rows
events (v1, or v2 with no extra data) and the XID_EVENT.
Each rows event's lines go to its text as soon as the event is read (the text of a reader call is one
string of `taken`, lines joined by newlines), so a large transaction is never held. It stops at any other
event, and at any value it cannot write exactly as `row_json` writes it (`TextImage.encode` says -1: a
DATE that is no calendar date, text that is not valid UTF-8, a kind with no text form here ...); that event
and the rest of its transaction go the ordinary way (rows.read_rows).

What the ordinary path must know of the events the lane took (the open transaction's GTID event, the last
TABLE_MAP_EVENT of each table id, the last XID_EVENT; a BEGIN tells it nothing once the file's first
QUERY_EVENT was read, and the lane takes none before) is handed back as `replay`, (file, position, event
bytes, FDE), whenever the lane gives the reader an event to read; `row_text.replayed` yields them as Events
before it, so the RowDecoder's state is what it would be had it read every event.

`tables` is row_text's `_LaneTables`: `table(event bytes, fde, file, position)` (a TABLE_MAP's `TableText`,
or None where the lane leaves the table to the ordinary path), `shape(code, len_post_header, body)` (a rows
event's layout from spec.rows_offsets) and `generation()` (the schema's: a DDL replayed drops the tables
made). The plans of the images (`TextImage`) are made by row_text from rows.image_plan's column plans, the
one home of how a column's bytes read.

With `keys` (a KeyCheck: `rows --table T --key V`, output/_crow_key.pxi, where the JSON lines of a rows event are
written), only the lines of the rows whose integer key matches are written, the others stepped over unwritten.

With `sql` and a `spool` (a rollback's, output/rollback/spool.py), the SQL lane writes the undo of the
transactions it takes (_crow_undo.pxi) to that spool instead of its text to `taken`; where it stops inside one,
the BEGIN it took is handed back too (the rollback's reference starts its transactions there).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint32_t
from cpython.list cimport PyList_GET_SIZE
from libc.string cimport memcmp, memcpy, strlen

from binlog_spec.binlog._cbytes cimport (ANNOTATE_ROWS_EVENT, ANONYMOUS_GTID_LOG_EVENT, DELETE_ROWS_EVENT,
                                         DELETE_ROWS_EVENT_V1, FORMAT_DESCRIPTION_EVENT, GTID_EVENT, GTID_LOG_EVENT,
                                         GTID_TAGGED_LOG_EVENT, LEN_EVENT_HEADER, LEN_GTID_FIXED, OFS_GTID_DOMAIN_ID,
                                         OFS_GTID_SEQ_NO, OFS_LEN_EVENT, OFS_MYSQL_GTID_GNO, OFS_MYSQL_GTID_SID,
                                         OFS_QUERY_LEN_DB, OFS_SERVER_ID, OFS_TIMESTAMP, OFS_TYPE_CODE, QUERY_EVENT,
                                         ROWS_QUERY_LOG_EVENT, TABLE_MAP_EVENT, TRANSACTION_PAYLOAD_EVENT,
                                         UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT, WRITE_ROWS_EVENT_V1, XID_EVENT, Fde,
                                         event_at, gtid_kept, gtid_xid_reads_agree, le, mysql_gtid_reads,
                                         mysql_reads_agree,
                                         opens_plain_transaction, query_is_begin, read_fde, u4, uuid_text)
from binlog_spec.rows._cscalars cimport (be, civil, date_fields, datetime2_fields, decimal_text, time2_fields,
                                         timestamp2_fields)
from binlog_spec.stream._cskipping cimport Skipper
from binlog_spec.rows.charsets import _mysql_latin1

cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030B0000
    #define PyFloat_Unpack4 _PyFloat_Unpack4
    #define PyFloat_Unpack8 _PyFloat_Unpack8
    #endif
    """
    double PyFloat_Unpack4(const char *p, int le) except? -1.0
    double PyFloat_Unpack8(const char *p, int le) except? -1.0

cdef extern from "Python.h":
    char* PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    int Py_DTSF_ADD_DOT_0

include "_crow_values.pxi"
include "_crow_sql.pxi"
include "_crow_undo.pxi"
include "_crow_mysql.pxi"


include "_crow_tables.pxi"


cdef class RowLane:
    cdef object tables, fde, path, generation, file_head, filt, keys, counted
    cdef public list taken, replay
    cdef Fde lens
    cdef dict maps, heads, shapes, ops, tx_tables, recent, begins, extra_at
    cdef bint in_tx, handed, begin_wanted, settled, gtid_null, sql
    cdef Py_ssize_t held, resume_at, expect, declined_end
    cdef Py_ssize_t vstart, shift   # a --jobs piece: its range starts at vstart of the reader's stream; file - stream
    cdef int declined
    cdef bytes gtid_json            # (a MariaDB GTID's made only when asked: `_gtid`, or written by `_put_gtid`)
    cdef bint gtid_due
    cdef unsigned long long gtid_domain, gtid_server, gtid_seq
    cdef object gtid_event, last_xid, begin_event
    # what the ordinary path may need of the events taken in this call's window, marked (_crow_tables.pxi's Marks),
    # made into the objects above (recent, gtid_event, last_xid, begin_event) once at the end of the call
    cdef Marks marks
    # the last lookups of _rows: a rows event's head and shape, the table of a table id in the transaction
    cdef long c_head_key, c_shape_key
    cdef Py_ssize_t c_ofs_count
    cdef object c_shape, c_table
    cdef unsigned long long c_table_id
    # the TABLE_MAP bodies met last (MET of them), compared byte for byte before a dict is asked: their TableTexts
    # and the filters' statuses (False: not asked yet), and whether the filters' names learnt it
    cdef list met_bodies, met_tables, met_status
    cdef Py_ssize_t met_next
    cdef bint met_learnt[MET]
    cdef Buf out, head
    cdef Undo undo      # the rollback mode of the SQL lane (_crow_undo.pxi), or None

    def __init__(self, tables, dict ops not None, bint sql=False, spool=None, LaneFilter filt=None, KeyCheck keys=None,
                 counted=None):
        self.tables, self.ops, self.sql, self.filt, self.keys, self.counted = tables, ops, sql, filt, keys, counted
        self.undo = Undo(spool) if sql and spool is not None else None
        self.taken, self.replay = [], []
        self.fde = self.path = self.generation = None
        self.lens.usable = False
        self.maps, self.heads, self.shapes, self.tx_tables, self.recent = {}, {}, {}, {}, {}
        self.begins, self.extra_at = {}, {}
        self.in_tx = self.handed = self.begin_wanted = self.settled = self.gtid_null = False
        self.held, self.resume_at, self.expect, self.declined_end, self.declined = 0, -1, -1, -1, LEARN_NOTHING
        self.gtid_event = self.last_xid = self.begin_event = None
        self.gtid_due = False
        unmark(&self.marks)
        self.c_head_key = self.c_shape_key = -1
        self.c_shape = self.c_table = None
        self.met_bodies, self.met_tables, self.met_status, self.met_next = [], [], [], 0
        self.vstart = self.shift = 0
        self.out.p = self.head.p = NULL
        self.out.n = self.out.cap = self.head.n = self.head.cap = 0

    def __dealloc__(self):
        PyMem_Free(self.out.p)
        PyMem_Free(self.head.p)

    def place(self, Py_ssize_t vstart, Py_ssize_t shift):
        """The reader that calls next reads a --jobs piece (stream.planning.pieces.read_piece): its own range
        starts at `vstart` of the reader's stream, at file position vstart + shift; the lane takes nothing before
        it (the FDE put in front), and writes and hands back the file's positions."""
        self.vstart, self.shift = vstart, shift

    @property
    def spool(self):
        """The rollback's spool the lane writes its undo to (the rollback mode), or None."""
        return None if self.undo is None else self.undo.spool

    def __call__(self, bytes buf not None, Py_ssize_t off, Py_ssize_t pos, fde, bint verify, str path):
        """Take whole events of buf from off (stream position pos: the file's, less `shift` in a piece); the
        bytes taken, or minus the bytes wanted from pos in the window."""
        cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), start = off, want = 0, kept = 0, rows = 0
        cdef int code
        cdef uint32_t len_event
        if pos < self.vstart:       # (what is put in front of a piece: the ordinary path reads it)
            return 0
        if not self.taken:          # (its consumer took the text)
            self.held = 0
        if pos != self.expect:      # the ordinary path read events since the lane's last call
            learn(self, self.declined if pos == self.declined_end else LEARN_GTID_UNKNOWN)
        self.declined_end = -1
        if self.handed:             # what the lane handed back: still there (the reader read no event), or read
            self.handed = False
            if self.replay:
                self.replay = []
            elif pos == self.resume_at:     # the one rows event it left for its text to be taken: read
                self.recent.clear()
                self.last_xid = None
            else:
                self._forget()
        self.resume_at = -1
        if fde is not self.fde or path != self.path:
            self._forget()
            self.fde, self.path = fde, path
            read_fde(fde, LAYOUTS_AGREE, &self.lens)
            self.heads.clear()
            self.shapes.clear()
            self.c_head_key = self.c_shape_key = -1
            forget_met(self)
            self.begins.clear()
            learn(self, LEARN_FDE)
            name = self.tables.json(path)
            self.file_head = None if name is None else b'{"file":' + name + b',"pos":'
        generation = self.tables.generation()
        if generation != self.generation:
            self.generation = generation
            self.maps.clear()
            forget_met(self)
        self.expect = pos
        if self.filt is not None and not self.in_tx:   # what the filters drop whole, skipped (stream/_cskipping.pyx)
            want = (<LaneFilter>self.filt).skips(buf, off, pos, fde, verify, path)
            if want:
                self.expect = pos + want if want > 0 else pos
                return want
        if not self.lens.usable or self.file_head is None:
            self.expect = -1
            return 0
        try:
            if self.filt is not None:       # (_crow_filter.pxi)
                off = walk_filtered(self, buf, p, off, n, pos, start, verify, &want)
            while self.filt is None:
                if n - off < H:
                    want = H
                    break
                code = p[off + OFS_TYPE_CODE]
                len_event = u4(p + off + OFS_LEN_EVENT)
                if not (opens_transaction(code, self.settled and self.gtid_null) if not self.in_tx else
                        code == QUERY_EVENT and self.settled if self.begin_wanted else in_transaction(code)):
                    break
                if self.held >= CHUNK and self.in_tx and is_rows(code):
                    if off == start:    # its text waits to be taken: the ordinary path reads this rows event
                        self.resume_at = pos + len_event
                    break
                if <Py_ssize_t>len_event > n - off:
                    if len_event <= MAX_EVENT:
                        want = len_event
                    break
                if not event_at(p, off, n, self.lens.len_checksum, verify, &code, &len_event):
                    break
                if not self._take(buf, p + off, code, len_event, pos + off - start + self.shift):
                    break
                off += len_event
                kept += 1
                rows += is_rows(code)
                if self.out.n >= CHUNK:
                    self._hand_text()
        finally:
            made(self)
            self._hand_text()
            if kept and self.counted is not None:   # (the events it took, as the Selection counts what is kept)
                self.counted.kept += kept
                self.counted.rows += rows
        if off > start:
            self.expect = pos + off - start
            return off - start
        hand_back(self)
        if not want and n - off >= H:   # the ordinary path reads this event: what it learns of it
            self.declined = learns(self, buf, p, off, n, verify)
            self.declined_end = pos + u4(p + off + OFS_LEN_EVENT)
        return -want if want else 0

    cdef void _forget(self):
        """The ordinary path has read events since the lane took its last: it knows what the lane took."""
        self.in_tx = False
        self.tx_tables.clear()
        self.c_table = None
        unmark(&self.marks)
        self.recent.clear()
        self.gtid_event = self.last_xid = self.begin_event = None

    cdef bytes _gtid(self):
        """The open transaction's GTID as JSON text (a MariaDB GTID's made now)."""
        if self.gtid_due:
            self.gtid_json = b'"%d-%d-%d"' % (self.gtid_domain, self.gtid_server, self.gtid_seq)
            self.gtid_due = False
        return self.gtid_json

    cdef int _put_gtid(self, Buf *b) except -1:
        if not self.gtid_due:
            return put_bytes(b, self.gtid_json)
        put(b, '"', 1)
        put_u(b, self.gtid_domain)
        put(b, '-', 1)
        put_u(b, self.gtid_server)
        put(b, '-', 1)
        put_u(b, self.gtid_seq)
        return put(b, '"', 1)

    cdef int _hand_text(self) except -1:
        if self.filt is not None:   # (what its filters counted: _crow_filter.pxi)
            (<LaneFilter>self.filt).flush()
        if self.keys is not None:   # (the rows it checked, counted: _crow_key.pxi)
            (<KeyCheck>self.keys).flush()
        if self.undo is not None:   # (to the rollback's spool)
            return self.undo.flush(&self.out, self.in_tx)
        if self.out.n:
            self.taken.append(PyBytes_FromStringAndSize(self.out.p, self.out.n - 1))   # UTF-8, less its last newline
            self.held += self.out.n
            self.out.n = 0
        return 0

    cdef int _opens(self, const unsigned char *e, uint32_t len_event, Py_ssize_t at, bint begin_wanted) except -1:
        """A transaction opens at e (its GTID event; NULL: none, at its BEGIN), its GTID's JSON text set."""
        if self.marks.n_maps > MAX_MARKED // 2:
            made(self)
        self.in_tx, self.begin_wanted = True, begin_wanted
        self.gtid_null = not self.gtid_due and self.gtid_json == NULL_JSON     # (the RowDecoder's GTID once it read e)
        self.tx_tables.clear()
        self.c_table = None
        self.gtid_event = self.begin_event = None
        mark(&self.marks.gtid, e, at, len_event)
        self.marks.begin.e = NULL
        if self.keys is not None:
            (<KeyCheck>self.keys).opened()
        if self.undo is not None:   # (where it is: a BEGIN's time is set by _begin)
            self.undo.opens(&self.out, (self._gtid(), self.path, at, 0 if e == NULL else u4(e + OFS_TIMESTAMP)))
        return 0

    cdef bint _mysql_gtid(self, const unsigned char *e, int code, Py_ssize_t len_body, uint32_t len_event,
                          Py_ssize_t at) except -1:
        """Whether the lane takes a MySQL GTID event (its BEGIN must follow): the GTID as the RowDecoder has it,
        "sid:gno" (spec.refine_gtid's), null for an anonymous one, a tagged one's as its fields give it."""
        cdef const unsigned char *body = e + H
        if code == GTID_TAGGED_LOG_EVENT:      # (the serialization library's message: read the ordinary way)
            gtid = self.tables.gtid(PyBytes_FromStringAndSize(<const char *>e, len_event), self.fde)
            if gtid is None:
                return False
            self.gtid_json, self.gtid_due = gtid, False
        elif not (mysql_ok() and mysql_gtid_reads(body, len_body, self.lens.gtid if code == GTID_LOG_EVENT else
                                                   self.lens.anonymous)):
            return False
        elif code == ANONYMOUS_GTID_LOG_EVENT:
            self.gtid_json, self.gtid_due = NULL_JSON, False
        else:
            self.gtid_due = False
            self.gtid_json = b'"%s:%d"' % (uuid_text(body + OFS_MYSQL_GTID_SID), le(body + OFS_MYSQL_GTID_GNO, 8))
        self._opens(e, len_event, at, True)
        return True

    cdef bint _begin(self, const unsigned char *e, Py_ssize_t len_body, uint32_t len_event, Py_ssize_t at) except -1:
        """Whether the lane takes a QUERY_EVENT: a BEGIN (query_is_begin) that reads without error (the parser
        says, once per such body past its thread id and time), after a MySQL GTID event or opening a
        transaction where no GTID is open."""
        cdef const unsigned char *body = e + H
        if not (mysql_ok() and query_is_begin(body, len_body, self.lens.query)):
            return False
        key = PyBytes_FromStringAndSize(<const char *>body + OFS_QUERY_LEN_DB, len_body - OFS_QUERY_LEN_DB)
        reads = self.begins.get(key)
        if reads is None:
            reads = self.tables.begins(PyBytes_FromStringAndSize(<const char *>e, len_event), self.fde)
            if len(self.begins) > 4096:
                self.begins.clear()
            self.begins[key] = reads
        if not reads:
            return False
        if not self.in_tx:
            self.gtid_json, self.gtid_due = NULL_JSON, False
            self._opens(NULL, 0, at, False)
            if self.undo is not None:
                self.undo.open_tx = (NULL_JSON, self.path, at, u4(e + OFS_TIMESTAMP))
        self.begin_wanted = False
        if self.undo is not None or self.filt is not None:  # (where a rollback, or the filters, go on from)
            mark(&self.marks.begin, e, at, len_event)
        elif self.sql and self.filt is None:    # (script.forward's BEGIN of a BEGIN query; filtered: later)
            put(&self.out, "BEGIN;\n", 7)
        return True

    cdef bint _take(self, bytes buf, const unsigned char *e, int code, uint32_t len_event, Py_ssize_t at) except -1:
        """Whether the lane takes the event at e (file position at), its lines written."""
        cdef const unsigned char *body = e + H
        cdef Py_ssize_t len_body = len_event - H - self.lens.len_checksum
        if code == GTID_EVENT:
            if not opens_plain_transaction(body, len_body):
                return False
            self.gtid_domain, self.gtid_server = u4(body + OFS_GTID_DOMAIN_ID), u4(e + OFS_SERVER_ID)
            self.gtid_seq, self.gtid_due = le(body + OFS_GTID_SEQ_NO, 8), True
            self._opens(e, len_event, at, False)
            if self.sql and self.undo is None and self.filt is None:   # (script.forward's BEGIN of a MariaDB GTID
                put(&self.out, "BEGIN;\n", 7)
            return True
        if code == GTID_LOG_EVENT or code == ANONYMOUS_GTID_LOG_EVENT or code == GTID_TAGGED_LOG_EVENT:
            return self._mysql_gtid(e, code, len_body, len_event, at)
        if code == QUERY_EVENT:
            return self._begin(e, len_body, len_event, at)
        if code == ANNOTATE_ROWS_EVENT:
            return len_body >= self.lens.annotate
        if code == ROWS_QUERY_LOG_EVENT:
            return len_body >= self.lens.rows_query + 1
        if code == XID_EVENT:
            if len_body != self.lens.xid + 8:
                return False
            self.in_tx = self.begin_wanted = False
            self.gtid_null = True       # (the RowDecoder's GTID ends with the transaction)
            self.tx_tables.clear()
            self.c_table = None
            self.gtid_event = self.begin_event = None
            self.marks.gtid.e = self.marks.begin.e = NULL
            if self.undo is not None:
                self.undo.commits(&self.out)
            elif self.sql and self.filt is None:    # (filtered: LaneFilter.end)
                put(&self.out, "COMMIT;\n", 8)
            mark(&self.marks.xid, e, at, len_event)
            return True
        if code == TABLE_MAP_EVENT:
            return self._map(e, len_event, at, body_met(self, body, len_body))
        return self._rows(e, code, len_body, at)

    cdef bint _map(self, const unsigned char *e, uint32_t len_event, Py_ssize_t at, Py_ssize_t met) except -1:
        """Whether the lane takes the TABLE_MAP_EVENT at e, whose body is the met-th met."""
        cdef unsigned long long table_id
        table = self.met_tables[met]
        if table is False:
            body = self.met_bodies[met]
            table = self.maps.get(body, False)
            if table is False:
                table = self.tables.table(PyBytes_FromStringAndSize(<const char *>e, len_event), self.fde, self.path,
                                          at)
                if len(self.maps) > 4096:
                    self.maps.clear()
                self.maps[body] = table
            self.met_tables[met] = table
        if table is None:
            return False
        table_id = (<TableText>table).table_id
        if not mark_map(&self.marks, table_id, e, at, len_event):
            return False
        self.tx_tables[(<TableText>table).table_id] = table
        self.c_table_id, self.c_table = table_id, table
        return True

    cdef int _rows(self, const unsigned char *e, int code, Py_ssize_t len_body, Py_ssize_t at) except -1:
        """Whether the lane writes the lines of this rows event (nothing written when it does not); ROWS_DROPPED
        for one of a table the filters drop (_crow_filter.pxi)."""
        cdef const unsigned char *body = e + H
        cdef bint v2 = code >= WRITE_ROWS_EVENT
        cdef int lph = self.lens.rows2[code - WRITE_ROWS_EVENT] if v2 else self.lens.rows[code - WRITE_ROWS_EVENT_V1]
        cdef int op = code - (WRITE_ROWS_EVENT - WRITE_ROWS_EVENT_V1) if v2 else code     # (its v1 code)
        cdef long key = code << 8 | lph
        cdef unsigned long long table_id
        cdef Py_ssize_t ofs_count, ofs_rows, pos, mark = self.out.n, n_columns, len_bitmap, i, extra
        if v2:      # the layout depends on len_extra_data: the lane takes none but the empty (no extra data)
            extra = self.extra_at.get(key, -2)
            if extra == -2:
                extra = self.extra_at[key] = self.tables.extra_at(code, lph)
            if not mysql_ok() or extra < 0 or extra + 2 > len_body or \
                    body[extra] | body[extra + 1] << 8 != EMPTY_EXTRA_DATA:
                return False
            key = key << 16 | EMPTY_EXTRA_DATA
        if key == self.c_head_key:
            ofs_count = self.c_ofs_count
        else:
            ofs_count = self.heads.get(key, -1)
        if ofs_count < 0 or ofs_count >= len_body:
            shape = self.tables.shape(code, lph, PyBytes_FromStringAndSize(<const char *>body, len_body))
            if shape is None:
                return False
            ofs_count = self.heads[key] = shape[0]
            self.shapes[key << 8 | body[ofs_count]] = shape
            self.c_shape_key = -1
        self.c_head_key, self.c_ofs_count = key, ofs_count
        if key << 8 | body[ofs_count] == self.c_shape_key:
            shape = self.c_shape
        else:
            shape = self.shapes.get(key << 8 | body[ofs_count], False)
            if shape is False:
                shape = self.shapes[key << 8 | body[ofs_count]] = \
                    self.tables.shape(code, lph, PyBytes_FromStringAndSize(<const char *>body, len_body))
            self.c_shape_key, self.c_shape = key << 8 | body[ofs_count], shape
        if shape is None or shape[0] != ofs_count:
            return False
        _, len_table_id, n_columns, len_bitmap, ofs_before, ofs_after, ofs_rows = shape
        if ofs_rows > len_body:
            return False
        table_id = le(body, <int>len_table_id)
        if self.c_table is not None and table_id == self.c_table_id:
            table = self.c_table
        else:
            table = self.tx_tables.get(table_id)
            if table is None and self.filt is not None and (<LaneFilter>self.filt).dropped(table_id):
                return ROWS_DROPPED
        if table is None or n_columns > (<TableText>table).n_columns:
            return False
        layout = PyBytes_FromStringAndSize(<const char *>body + ofs_count, ofs_rows - ofs_count)
        images = (<TableText>table).image(code, layout)
        if images is None:
            return False
        if self.undo is not None:
            return self.undo.statements(&self.out, images, op, body, ofs_rows, len_body, mark)
        if self.sql:
            if self.filt is not None and (<LaneFilter>self.filt).begin_due:    # (the transaction keeps a statement)
                (<LaneFilter>self.filt).begin_due = False
                put(&self.out, "BEGIN;\n", 7)
            return self._statements(images, op, body, ofs_rows, len_body, mark)
        return json_rows(self, images, table, e, op, body, ofs_rows, len_body, at, mark, layout)   # (_crow_key.pxi)

    cdef bint _statements(self, tuple images, int code, const unsigned char *body, Py_ssize_t pos,
                          Py_ssize_t len_body, Py_ssize_t mark) except -1:
        """The SQL lane's statements of a rows event (SqlImage), one a line; nothing written when it leaves one."""
        cdef SqlImage before = images[0], after = images[1]
        cdef int op = 0 if code == WRITE_ROWS_EVENT_V1 else (1 if code == DELETE_ROWS_EVENT_V1 else 2)
        while pos < len_body:
            pos = before.write(&self.out, op, body, pos, len_body, after)
            if pos < 0:
                self.out.n = mark
                return False
            put(&self.out, "\n", 1)
        return True


def _position(event):
    return event[0]


include "_crow_hand.pxi"
include "_crow_filter.pxi"
include "_crow_key.pxi"

