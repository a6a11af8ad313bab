# MySQL's transactions in output/_crow_text.pyx's RowLane (included there): what opens one and what it holds,
# what the lane learns of the events the ordinary path reads, and the checks of the MySQL reads (binlog/_cbytes.pxd
# mysql_gtid_reads, query_is_begin) against the generated parser.
#
# A MySQL transaction of the common shape: GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT or GTID_TAGGED_LOG_EVENT,
# a QUERY_EVENT whose statement is BEGIN, ROWS_QUERY_LOG_EVENTs, TABLE_MAP_EVENTs, WRITE/UPDATE/DELETE_ROWS_EVENTs
# (v1, or v2 with no extra data) and the XID_EVENT; or, where no GTID is open (5.5, and 5.6 without GTIDs), the
# same from its BEGIN. rows.observe_schema reads a file's first QUERY_EVENT for the server's collation (then BEGIN
# no more): the lane takes a BEGIN only once it saw the ordinary path read a QUERY_EVENT of the file
# (`settled`); and it opens a transaction at a BEGIN only where the RowDecoder's GTID is None (`gtid_null`).
# Both are learnt from the events the lane took and from the one it leaves to the ordinary path each time it
# stops (the reader then reads that event, and calls the lane at the next: `learns` said what it tells).

cdef enum:
    LEARN_NOTHING = 0       # what the ordinary path learns of an event it reads: nothing the lane tracks,
    LEARN_GTID_NULL = 1     # no GTID open (an XID_EVENT, an ANONYMOUS_GTID_LOG_EVENT, read without error),
    LEARN_GTID_UNKNOWN = 2  # a GTID the lane does not know (or what it read is unknown),
    LEARN_SETTLED = 3       # the file's first QUERY_EVENT read without error (the server's collation),
    LEARN_FDE = 4           # a new FORMAT_DESCRIPTION_EVENT (collation wanted again).
    # len_extra_data of a v2 rows event with no extra data: it counts its own 2 bytes (rows_event, its
    # `valid: min`); checked against the parser below. The lane takes no other (its items are not read here).
    EMPTY_EXTRA_DATA = 2

cdef bytes NULL_JSON = b"null"


cdef inline bint is_rows(int code) noexcept:
    """WRITE/UPDATE/DELETE_ROWS_EVENT_V1 or WRITE/UPDATE/DELETE_ROWS_EVENT (v2)."""
    return WRITE_ROWS_EVENT_V1 <= code <= DELETE_ROWS_EVENT_V1 or WRITE_ROWS_EVENT <= code <= DELETE_ROWS_EVENT


cdef inline bint opens_transaction(int code, bint at_begin) noexcept:
    """Whether an event of this type may open a transaction the lane takes (`at_begin`: a BEGIN may)."""
    return (code == GTID_EVENT or code == GTID_LOG_EVENT or code == ANONYMOUS_GTID_LOG_EVENT or
            code == GTID_TAGGED_LOG_EVENT or (at_begin and code == QUERY_EVENT))


cdef inline bint in_transaction(int code) noexcept:
    """Whether an event of this type may be taken inside a transaction (after its BEGIN, for MySQL's)."""
    return (code == ANNOTATE_ROWS_EVENT or code == ROWS_QUERY_LOG_EVENT or code == TABLE_MAP_EVENT or
            code == XID_EVENT or is_rows(code))


def _empty_extra_data_agrees():
    """Whether a v2 rows event whose len_extra_data is EMPTY_EXTRA_DATA reads (no extra item) with its column
    count where spec.rows_offsets says."""
    from binlog_spec.binlog import spec
    cdef int H = LEN_EVENT_HEADER, code = WRITE_ROWS_EVENT
    lens = bytearray(255)
    lens[code - 1] = 10
    fde = spec.FormatDescription(4, "probe", 0, H, bytes(lens), None, None, 0)
    at = spec.rows_extra_at(code, 10)
    if at is None:
        return False
    body = bytearray(b"\x07\x00\x00\x00\x00\x00\x01\x00" + bytes(max(0, at + 2 - 8)))
    body[at:at + 2] = EMPTY_EXTRA_DATA.to_bytes(2, "little")
    body += bytes(10 - len(body)) + b"\x01\x01\x00\x05"
    event = spec.HEADER_STRUCT.pack(1, code, 2, H + len(body), 0, 0) + bytes(body)
    try:
        got = spec.parse_event(event, fde)
        o = spec.rows_offsets(code, 10, bytes(body))
    except Exception:
        return False
    return list(got.extra_data.items) == [] and got.num_columns.value == 1 and o.ofs_columns_before_image == 11


cdef int _mysql_agree = -1


cdef inline bint mysql_ok() except -1:
    """Whether the MySQL reads agree with the generated parser (False: the lane takes MariaDB's transactions
    alone); checked once, when the lane first meets a MySQL event (a MariaDB run never pays for it)."""
    global _mysql_agree
    if _mysql_agree < 0:
        _mysql_agree = mysql_reads_agree() and _empty_extra_data_agrees()
    return _mysql_agree


def mysql_layouts_agree():
    """mysql_ok(), for the tests."""
    return mysql_ok()
