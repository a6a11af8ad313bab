# cython: language_level=3
"""The skipping loop of stream/_cskipping.pyx, declared for the compiled lanes that call it at C level
(output/_crow_text.pyx's LaneFilter): `Skipper.skip` is its __call__ with no Python call."""
from libc.stdint cimport uint32_t

from binlog_spec.binlog._cbytes cimport Fde


cdef class Skipper:
    cdef object gate, keeps_table, tables, names, fde, server_ids, exclude_server_ids, keeps_gtid
    cdef long long lo, hi
    cdef Fde lens
    cdef dict maps          # TABLE_MAP body bytes -> (table id, schema, table, dropped, (schema, table)) or None
    # rows events, per FDE and type (WRITE, UPDATE, DELETE_ROWS_EVENT_V1): the offset of a one-byte column count
    # (-1: none; -2: not known yet), and with that byte, the length of the table id and ofs_rows (what
    # spec.rows_offsets reads; -1: not known yet)
    cdef Py_ssize_t shape_at[3]
    cdef int shape_len_id[3][256]
    cdef Py_ssize_t shape_ofs_rows[3][256]
    cdef list recent_bodies, recent_got     # RECENT TABLE_MAP bodies and their maps' entries
    cdef int recent_next
    cdef list tx_maps       # the transaction's TABLE_MAPs: maps' (table id, schema, table, dropped, name),
    cdef Py_ssize_t n_tx    # its first n_tx items (the list is reused from one transaction to the next)
    cdef set excluded       # the gate's excluded_tables

    cdef Py_ssize_t skip(self, bytes buf, Py_ssize_t off, Py_ssize_t pos, object fde, bint verify, str path) except? -1
    cdef int _forget_layouts(self) except -1
    cdef bint _server_kept(self, uint32_t server_id) except -1
    cdef Py_ssize_t _dropped_whole(self, const unsigned char* p, Py_ssize_t at, Py_ssize_t n, int len_checksum,
                                   bint verify) except? -1
    cdef bint _skipped(self, int code, const unsigned char* e, uint32_t len_event, int len_checksum,
                       bint by_table) except -1
    cdef object _recent(self, const unsigned char* body, Py_ssize_t len_body)
    cdef object _mapped(self, const unsigned char* e, uint32_t len_event, Py_ssize_t len_body)
    cdef object _table_id(self, int code, const unsigned char *body, Py_ssize_t len_body)
