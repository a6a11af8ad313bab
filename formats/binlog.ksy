meta:
  id: binlog
  title: MySQL / MariaDB binary log (binlog v4)
  application:
    - MySQL 5.0 - 9.x
    - MariaDB 10.x - 11.x
  file-extension:
    - "000001"
  xref:
    wikidata: Q6702779
  license: GPL-2.0-only
  ks-version: "0.11"
  endian: le
  bit-endian: le
doc: |
  A binary log is the 4-byte magic followed by a stream of events. Every v4
  file starts with a FORMAT_DESCRIPTION_EVENT (FDE) whose post-header length
  array tells how long the fixed part of every other event type is, and
  whether events end in a CRC32.

  The top-level type parses a whole file in one go, with the parameters of
  the first FDE; it suits small files and visual tools. A streaming reader
  instead reads one `event` at a time and passes the parameters of the FDE
  in force (a relay log may carry a second FDE that replaces the first).

  Naming: `num_` counts, `len_` byte lengths, `ofs_` offsets. `-orig-id`
  gives the name the server source uses for the field.
doc-ref:
  - https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_replication_binlog_event.html
  - libbinlogevents/include/binlog_event.h
  - sql/log_event.h (MariaDB)
seq:
  - id: magic
    contents: [0xfe, "bin"]
    -orig-id: BINLOG_MAGIC
  - id: fde_header
    type: event_header
    valid:
      expr: _.type_code == event_type::format_description_event
  - id: fde
    size: fde_header.len_event - 19
    type: format_description_event
    doc: The FORMAT_DESCRIPTION_EVENT body, with its own checksum trailer.
  - id: events
    type: 'event(fde.post_header_lens, fde.len_checksum, fde.len_common_header)'
    repeat: eos
types:
  # ------------------------------------------------------------------ framing
  event_header:
    doc: The v4 common header that starts every event (19 bytes).
    doc-ref: libbinlogevents/include/binlog_event.h (Log_event_header)
    seq:
      - id: timestamp
        type: u4
        -orig-id: when
        doc: Seconds since the epoch, UTC, when the statement began.
      - id: type_code
        type: u1
        enum: event_type
      - id: server_id
        type: u4
        -orig-id: unmasked_server_id
      - id: len_event
        type: u4
        -orig-id: data_written
        doc: Size of the whole event, header and checksum included.
        valid:
          min: 19
      - id: end_log_pos
        type: u4
        -orig-id: log_pos
        doc: |
          Position just past this event in the server's own log (modulo 2^32:
          it wraps in files over 4 GiB). 0 for events that were not written to
          a file, such as events inside a TRANSACTION_PAYLOAD.
      - id: flags
        type: u2
        doc: LOG_EVENT_*_F bits; 0x1 is LOG_EVENT_BINLOG_IN_USE_F.

  event:
    doc-ref: libbinlogevents/include/binlog_event.h (Binary_log_event)
    doc: |
      One event: header, body and checksum. The body is bounded by the event
      size; each body type gets its post-header length from the FDE array,
      so a newer server that grows a post-header does not break parsing.
    params:
      - id: post_header_lens
        type: bytes
        doc: The FDE array; entry i is the post-header length of type i + 1.
      - id: len_checksum
        type: u1
        doc: 4 when events end in a CRC32, else 0. The FDE always sizes itself.
      - id: len_common_header
        type: u1
        doc: Common header length announced by the FDE (19 for v4).
    seq:
      - id: header
        type: event_header
      - id: header_extra
        size: len_common_header - 19
        doc: Header bytes a future server might add; skipped.
      - id: body
        size: 'header.len_event - len_common_header - len_trailer'
        type:
          switch-on: header.type_code
          cases:
            'event_type::format_description_event': format_description_event
            'event_type::query_event': query_event(len_post_header, false)
            'event_type::execute_load_query_event': query_event(len_post_header, true)
            'event_type::stop_event': empty_event
            'event_type::rotate_event': rotate_event(len_post_header)
            'event_type::intvar_event': intvar_event(len_post_header)
            'event_type::rand_event': rand_event(len_post_header)
            'event_type::user_var_event': user_var_event(len_post_header)
            'event_type::xid_event': xid_event(len_post_header)
            'event_type::begin_load_query_event': file_block_event(len_post_header)
            'event_type::append_block_event': file_block_event(len_post_header)
            'event_type::delete_file_event': file_block_event(len_post_header)
            'event_type::table_map_event': table_map_event(len_post_header)
            'event_type::pre_ga_write_rows_event': rows_event(len_post_header, 0, false)
            'event_type::pre_ga_update_rows_event': rows_event(len_post_header, 0, true)
            'event_type::pre_ga_delete_rows_event': rows_event(len_post_header, 0, false)
            'event_type::write_rows_event_v1': rows_event(len_post_header, 1, false)
            'event_type::update_rows_event_v1': rows_event(len_post_header, 1, true)
            'event_type::delete_rows_event_v1': rows_event(len_post_header, 1, false)
            'event_type::write_rows_event': rows_event(len_post_header, 2, false)
            'event_type::update_rows_event': rows_event(len_post_header, 2, true)
            'event_type::delete_rows_event': rows_event(len_post_header, 2, false)
            'event_type::partial_update_rows_event': rows_event(len_post_header, 2, true)
            'event_type::incident_event': incident_event(len_post_header)
            'event_type::heartbeat_log_event': heartbeat_log_event(len_post_header)
            'event_type::ignorable_log_event': ignorable_log_event(len_post_header)
            'event_type::rows_query_log_event': rows_query_log_event(len_post_header)
            'event_type::gtid_log_event': gtid_log_event(len_post_header)
            'event_type::anonymous_gtid_log_event': gtid_log_event(len_post_header)
            'event_type::previous_gtids_log_event': previous_gtids_log_event(len_post_header)
            'event_type::transaction_context_event': transaction_context_event(len_post_header)
            'event_type::view_change_event': view_change_event(len_post_header)
            'event_type::xa_prepare_log_event': xa_prepare_log_event(len_post_header)
            'event_type::transaction_payload_event': transaction_payload_event
            'event_type::heartbeat_log_event_v2': heartbeat_log_event_v2(len_post_header)
            'event_type::gtid_tagged_log_event': gtid_tagged_log_event
            'event_type::annotate_rows_event': annotate_rows_event(len_post_header)
            'event_type::binlog_checkpoint_event': binlog_checkpoint_event(len_post_header)
            'event_type::gtid_event': mariadb_gtid_event(len_post_header)
            'event_type::gtid_list_event': gtid_list_event(len_post_header)
            'event_type::start_encryption_event': start_encryption_event(len_post_header)
            'event_type::query_compressed_event': query_event(len_post_header, false)
            'event_type::write_rows_compressed_event_v1': rows_event(len_post_header, 1, false)
            'event_type::update_rows_compressed_event_v1': rows_event(len_post_header, 1, true)
            'event_type::delete_rows_compressed_event_v1': rows_event(len_post_header, 1, false)
            'event_type::write_rows_compressed_event': rows_event(len_post_header, 2, false)
            'event_type::update_rows_compressed_event': rows_event(len_post_header, 2, true)
            'event_type::delete_rows_compressed_event': rows_event(len_post_header, 2, false)
            _: unknown_event(len_post_header)
      - id: checksum
        type: u4
        if: len_trailer == 4
        -orig-id: crc
        doc: CRC32 (ISO-HDLC) of every byte of the event before it.
    instances:
      type_code_num:
        value: header.type_code.to_i
      len_post_header:
        value: |
          type_code_num >= 1 and type_code_num <= post_header_lens.size
            ? post_header_lens[type_code_num - 1] : 0
        doc: |
          From the FDE array. A type the array does not cover (only possible
          for unknown types) gets 0: its whole body is then the payload.
      len_trailer:
        value: 'header.type_code == event_type::format_description_event ? 0 : len_checksum'
        doc: The FDE parses its own algorithm byte and checksum.

  empty_event:
    doc: An event with no body (STOP_EVENT).
    doc-ref: libbinlogevents/include/control_events.h (Stop_event)

  unknown_event:
    doc-ref: libbinlogevents/include/binlog_event.h (Unknown_event)
    doc: A type this spec does not describe; the post-header and payload are kept raw.
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: payload
        size-eos: true

  # -------------------------------------------------- FORMAT_DESCRIPTION_EVENT
  format_description_event:
    doc: |
      Describes the layout of every later event. Its size tells whether an
      algorithm byte and a CRC32 follow the post-header length array: the
      array's own entry for this event type (index 14) is the length of
      everything before the algorithm byte, so a body 5 bytes longer than
      that entry carries the checksum algorithm and a CRC32 (MySQL >= 5.6.1,
      MariaDB >= 5.3), while an equal one carries neither.
    doc-ref:
      - libbinlogevents/include/control_events.h (Format_description_event)
      - libbinlogevents/src/control_events.cpp
    seq:
      - id: binlog_version
        type: u2
        valid: 4
      - id: server_version
        type: strz
        size: 50
        encoding: ASCII
      - id: create_timestamp
        type: u4
        -orig-id: created
      - id: len_common_header
        type: u1
        -orig-id: common_header_len
        valid:
          min: 19
      - id: post_header_lens
        size: num_post_header_lens
        -orig-id: post_header_len
      - id: checksum_alg
        type: u1
        enum: checksum_alg
        if: has_checksum
        doc: The algorithm of every later event; the FDE itself always has a CRC32 when this byte is there.
      - id: fde_checksum
        type: u4
        if: has_checksum
        doc: CRC32 of the FDE, computed with LOG_EVENT_BINLOG_IN_USE_F (flags bit 0x1) clear.
    instances:
      len_fde_post_header:
        pos: 57 + 14
        type: u1
        doc: The array's own entry for FORMAT_DESCRIPTION_EVENT (type 15).
      len_before_alg:
        value: 57
        doc: version (2) + server version (50) + create time (4) + header length (1).
      has_checksum:
        value: _io.size - len_fde_post_header == 5
      num_post_header_lens:
        value: '_io.size - len_before_alg - (has_checksum ? 5 : 0)'
      len_checksum:
        value: '(has_checksum and checksum_alg == checksum_alg::crc32) ? 4 : 0'
        doc: Trailer length of every later event.

  # --------------------------------------------------------- statement events
  query_event:
    doc: |
      A statement (QUERY_EVENT), the same layout compressed (MariaDB
      QUERY_COMPRESSED_EVENT: the `query` bytes are then a MariaDB compressed
      block), or EXECUTE_LOAD_QUERY_EVENT, whose post-header adds the LOAD
      DATA file fields.
    doc-ref:
      - libbinlogevents/include/statement_events.h (Query_event)
      - libbinlogevents/include/load_data_events.h (Execute_load_query_event)
    params:
      - id: len_post_header
        type: u1
      - id: has_load_fields
        type: bool
    seq:
      - id: thread_id
        type: u4
        -orig-id: thread_id
      - id: exec_time
        type: u4
        -orig-id: query_exec_time
      - id: len_db
        type: u1
        -orig-id: db_len
      - id: error_code
        type: u2
      - id: len_status_vars
        type: u2
        -orig-id: status_vars_len
        if: has_status_vars
      - id: file_id
        type: u4
        if: has_load_fields
      - id: ofs_filename_start
        type: u4
        -orig-id: fn_pos_start
        if: has_load_fields
      - id: ofs_filename_end
        type: u4
        -orig-id: fn_pos_end
        if: has_load_fields
      - id: dup_handling
        type: u1
        enum: load_dup_handling
        if: has_load_fields
      - id: post_header_extra
        size: len_post_header - len_post_header_known
        if: len_post_header > len_post_header_known
      - id: status_vars
        type: status_vars
        size: 'has_status_vars ? len_status_vars : 0'
      - id: db
        type: str
        size: len_db
        encoding: UTF-8
      - id: db_terminator
        contents: [0]
      - id: query
        size-eos: true
        doc: The statement text, in the connection character set.
    instances:
      has_status_vars:
        value: len_post_header >= 13
        doc: Pre-5.0 servers log an 11-byte post-header, without len_status_vars.
      len_post_header_known:
        value: 'has_load_fields ? 26 : 13'
        doc: The post-header fields this spec names (with len_status_vars).
      ofs_len_db:
        value: 8
        doc: Offset of len_db (u1) from the body start (after thread_id and exec_time).
      ofs_len_status_vars:
        value: 11
        doc: Offset of len_status_vars (u2), when present, from the body start (after error_code).
      ofs_status_vars:
        value: |
          11 + (has_status_vars ? 2 : 0) + (has_load_fields ? 13 : 0)
            + (len_post_header > len_post_header_known ? len_post_header - len_post_header_known : 0)
        doc: |
          Offset of status_vars from the body start: the end of the
          post-header (len_post_header, or the fields read when a pre-5.0
          post-header is shorter than 13 bytes).
      ofs_db:
        value: 'ofs_status_vars + (has_status_vars ? len_status_vars : 0)'
        doc: Offset of db from the body start.
      ofs_query:
        value: ofs_db + len_db + 1
        doc: Offset of query from the body start (after db and its NUL).

  status_vars:
    doc-ref: libbinlogevents/include/statement_events.h (Query_event_status_vars)
    seq:
      - id: entries
        type: status_var
        repeat: eos

  status_var:
    doc: |
      One (code, value) pair of a QUERY_EVENT's status variables. A code this
      spec does not know ends the list: its value size cannot be known, so the
      remaining bytes are kept raw, as the server itself stops there.
    doc-ref:
      - libbinlogevents/include/statement_events.h (Query_event_status_vars)
      - sql/log_event.h (MariaDB, Q_HRNOW and later)
    seq:
      - id: code
        type: u1
        enum: query_status_var
      - id: value
        type:
          switch-on: code
          cases:
            'query_status_var::q_flags2_code': u4
            'query_status_var::q_sql_mode_code': u8
            'query_status_var::q_catalog_code': catalog_old
            'query_status_var::q_auto_increment': auto_increment
            'query_status_var::q_charset_code': charset_triple
            'query_status_var::q_time_zone_code': str_u1
            'query_status_var::q_catalog_nz_code': str_u1
            'query_status_var::q_lc_time_names_code': u2
            'query_status_var::q_charset_database_code': u2
            'query_status_var::q_table_map_for_update_code': u8
            'query_status_var::q_master_data_written_code': u4
            'query_status_var::q_invoker': invoker
            'query_status_var::q_updated_db_names': updated_db_names
            'query_status_var::q_microseconds': b24
            'query_status_var::q_explicit_defaults_for_timestamp': u1
            'query_status_var::q_ddl_logged_with_xid': u8
            'query_status_var::q_default_collation_for_utf8mb4': u2
            'query_status_var::q_sql_require_primary_key': u1
            'query_status_var::q_default_table_encryption': u1
            'query_status_var::q_enable_cascade_triggers': u1
            'query_status_var::q_hrnow': b24
            'query_status_var::q_xid': u8
            'query_status_var::q_gtid_flags3': gtid_flags3
            'query_status_var::q_character_set_collations': character_set_collations
            _: raw_rest
    types:
      catalog_old:
        doc-ref: libbinlogevents/include/statement_events.h (Q_CATALOG_CODE)
        doc: Q_CATALOG_CODE (5.0.0-5.0.3), length, text and a NUL.
        seq:
          - id: len_catalog
            type: u1
          - id: catalog
            type: str
            size: len_catalog
            encoding: UTF-8
          - id: terminator
            contents: [0]
      auto_increment:
        doc-ref: libbinlogevents/include/statement_events.h (Q_AUTO_INCREMENT)
        seq:
          - id: increment
            type: u2
            -orig-id: auto_increment_increment
          - id: offset
            type: u2
            -orig-id: auto_increment_offset
      charset_triple:
        doc-ref: libbinlogevents/include/statement_events.h (Q_CHARSET_CODE)
        seq:
          - id: character_set_client
            type: u2
          - id: collation_connection
            type: u2
          - id: collation_server
            type: u2
      invoker:
        doc-ref: libbinlogevents/include/statement_events.h (Q_INVOKER)
        seq:
          - id: user
            type: str_u1
          - id: host
            type: str_u1
      updated_db_names:
        doc-ref: libbinlogevents/include/statement_events.h (Q_UPDATED_DB_NAMES)
        doc: |
          254 (OVER_MAX_DBS_IN_EVENT_MTS) means "too many to list" and is
          followed by nothing.
        seq:
          - id: num_dbs
            type: u1
            -orig-id: mts_accessed_dbs
          - id: dbs
            type: strz
            encoding: UTF-8
            repeat: expr
            repeat-expr: num_dbs
            if: num_dbs != 254
      gtid_flags3:
        doc-ref: sql/log_event.h (Q_GTID_FLAGS3, MariaDB)
        doc: MariaDB; the GTID flags_extra bits of a two-phase ALTER, and the START ALTER's seq_no.
        seq:
          - id: flags_extra
            type: u1
          - id: sa_seq_no
            type: u8
            if: (flags_extra & 12) != 0
      character_set_collations:
        doc-ref: sql/charset_collations.h (MariaDB 11.2+)
        doc: MariaDB 11.2+; pairs of (character set, collation) the session overrides.
        seq:
          - id: num_pairs
            type: u1
          - id: pairs
            type: character_set_collation
            repeat: expr
            repeat-expr: num_pairs
      character_set_collation:
        doc-ref: sql/charset_collations.h (MariaDB 11.2+)
        seq:
          - id: character_set
            type: u2
          - id: collation
            type: u2
      raw_rest:
        doc-ref: libbinlogevents/src/statement_events.cpp (Query_event, where an unknown code ends the list)
        seq:
          - id: data
            size-eos: true

  str_u1:
    doc-ref: libbinlogevents/include/statement_events.h (Q_TIME_ZONE_CODE, Q_INVOKER)
    doc: A string with a 1-byte length prefix.
    seq:
      - id: len_value
        type: u1
      - id: value
        type: str
        size: len_value
        encoding: UTF-8

  rotate_event:
    doc: Names the next binlog file.
    doc-ref: libbinlogevents/include/control_events.h (Rotate_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: position
        type: u8
        -orig-id: pos
        if: len_post_header >= 8
      - id: post_header_extra
        size: len_post_header - 8
        if: len_post_header > 8
      - id: next_file
        type: str
        size-eos: true
        encoding: UTF-8
        -orig-id: new_log_ident

  intvar_event:
    doc-ref: libbinlogevents/include/statement_events.h (Intvar_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: var_type
        type: u1
        enum: intvar_type
        -orig-id: type
      - id: value
        type: u8
        -orig-id: val

  rand_event:
    doc-ref: libbinlogevents/include/statement_events.h (Rand_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: seed1
        type: u8
      - id: seed2
        type: u8

  user_var_event:
    doc: |
      A user variable the next statement reads. The value is in the server's
      own representation of its Item_result type: binary doubles, 8-byte
      integers, and decimals as (precision, scale, binary decimal).
    doc-ref: libbinlogevents/include/statement_events.h (User_var_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: len_name
        type: u4
        -orig-id: name_len
      - id: name
        type: str
        size: len_name
        encoding: UTF-8
      - id: is_null
        type: u1
      - id: value_type
        type: u1
        enum: item_result
        -orig-id: type
        if: is_null == 0
      - id: charset
        type: u4
        -orig-id: charset_number
        if: is_null == 0
      - id: len_value
        type: u4
        -orig-id: val_len
        if: is_null == 0
      - id: value
        size: len_value
        -orig-id: val
        if: is_null == 0
      - id: user_var_flags
        type: u1
        -orig-id: flags
        doc: Bit 0 is UNSIGNED_F, for an unsigned integer (MySQL >= 5.6).
        if: is_null == 0 and not _io.eof

  xid_event:
    doc: Commits an XA-capable (InnoDB) transaction.
    doc-ref: libbinlogevents/include/control_events.h (Xid_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: xid
        type: u8
        -orig-id: xid

  file_block_event:
    doc: |
      BEGIN_LOAD_QUERY_EVENT and APPEND_BLOCK_EVENT carry a block of a LOAD
      DATA file; DELETE_FILE_EVENT carries only the file id.
    doc-ref: libbinlogevents/include/load_data_events.h (Append_block_event, Delete_file_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: file_id
        type: u4
      - id: post_header_extra
        size: len_post_header - 4
        if: len_post_header > 4
      - id: block
        size-eos: true
        -orig-id: block

  incident_event:
    doc-ref: libbinlogevents/include/control_events.h (Incident_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: incident
        type: u2
        enum: incident_type
      - id: post_header_extra
        size: len_post_header - 2
        if: len_post_header > 2
      - id: len_message
        type: u1
        if: not _io.eof
      - id: message
        type: str
        size: len_message
        encoding: UTF-8
        if: not _io.eof

  heartbeat_log_event:
    doc: Sent by a source to an idle replica; names the current binlog.
    doc-ref: libbinlogevents/include/control_events.h (Heartbeat_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: log_ident
        type: str
        size-eos: true
        encoding: UTF-8

  ignorable_log_event:
    doc: An event the server may skip; the base class of ROWS_QUERY.
    doc-ref: libbinlogevents/include/control_events.h (Ignorable_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: payload
        size-eos: true

  rows_query_log_event:
    doc: |
      The statement behind the next row events (binlog_rows_query_log_events).
      The 1-byte length is truncated for long statements; the text runs to
      the end of the body.
    doc-ref: libbinlogevents/include/statement_events.h (Rows_query_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: len_query_truncated
        type: u1
      - id: query
        size-eos: true
        -orig-id: m_rows_query

  annotate_rows_event:
    doc: MariaDB's statement behind the next row events (binlog_annotate_row_events).
    doc-ref: sql/log_event.h (Annotate_rows_log_event, MariaDB)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: query
        size-eos: true
        -orig-id: m_query_txt

  binlog_checkpoint_event:
    doc: MariaDB; names the oldest binlog still needed for crash recovery.
    doc-ref: sql/log_event.h (Binlog_checkpoint_log_event, MariaDB)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: len_binlog_file
        type: u4
        -orig-id: binlog_file_len
      - id: post_header_extra
        size: len_post_header - 4
        if: len_post_header > 4
      - id: binlog_file
        type: str
        size: len_binlog_file
        encoding: UTF-8
        -orig-id: binlog_file_name

  # ------------------------------------------------------------------ tables
  table_map_event:
    doc: |
      Maps a table id to a table definition for the row events that follow.
      The table id is 4 bytes when the post-header is 6 bytes long and 6
      bytes when it is 8; it is read as a low and a high part so that a
      language with 53-bit numbers or 32-bit shifts gets it right.
    doc-ref:
      - libbinlogevents/include/rows_event.h (Table_map_event)
      - libbinlogevents/src/rows_event.cpp
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: table_id_low
        type: u4
      - id: table_id_high
        type: u2
        if: len_table_id == 6
      - id: table_map_flags
        type: u2
        -orig-id: m_flags
        doc: TM_BIT_LEN_EXACT_F 1, TM_REFERRED_FK_DB_F 2, TM_GENERATED_INVISIBLE_PK_F 4.
      - id: post_header_extra
        size: len_post_header - 8
        if: len_post_header > 8
      - id: len_schema
        type: u1
        -orig-id: m_dblen
      - id: schema
        type: str
        size: len_schema
        encoding: UTF-8
        -orig-id: m_dbnam
      - id: schema_terminator
        contents: [0]
      - id: len_table
        type: u1
        -orig-id: m_tbllen
      - id: table
        type: str
        size: len_table
        encoding: UTF-8
        -orig-id: m_tblnam
      - id: table_terminator
        contents: [0]
      - id: num_columns
        type: packed_int
        -orig-id: m_colcnt
      - id: column_types
        size: num_columns.value
        -orig-id: m_coltype
        doc: One enum_field_types code per column.
      - id: len_metadata
        type: packed_int
        -orig-id: m_field_metadata_size
      - id: column_metadata
        size: len_metadata.value
        type: column_metadata(column_types, num_columns.value)
        -orig-id: m_field_metadata
      - id: null_bitmap
        size: (num_columns.value + 7) / 8
        -orig-id: m_null_bits
        doc: Bit i set when column i is nullable.
      - id: optional_metadata
        type: optional_metadata_field
        repeat: eos
        doc: MySQL 8.0.1+ and MariaDB 10.5+ (binlog_row_metadata).
    instances:
      len_table_id:
        value: len_post_header - 2
      table_id:
        value: 'table_id_low + (len_table_id == 6 ? table_id_high * 4294967296 : 0)'

  column_metadata:
    doc: The per-column metadata block, one entry per column in column order.
    doc-ref: sql/field.h (Field::do_save_field_metadata and its overrides)
    params:
      - id: column_types
        type: bytes
      - id: num_columns
        type: u4
    seq:
      - id: columns
        type: column_meta(column_types[_index])
        repeat: expr
        repeat-expr: num_columns

  column_meta:
    doc-ref: sql/rpl_utility.cc (table_def::table_def)
    doc: |
      Metadata of one column; its size depends on the column type. Only
      columns whose type stores metadata consume bytes.
    params:
      - id: column_type
        type: u1
    seq:
      - id: meta
        type:
          switch-on: column_type
          cases:
            'column_type::float.to_i': meta_pack_length
            'column_type::double.to_i': meta_pack_length
            'column_type::tiny_blob.to_i': meta_pack_length
            'column_type::medium_blob.to_i': meta_pack_length
            'column_type::long_blob.to_i': meta_pack_length
            'column_type::blob.to_i': meta_pack_length
            'column_type::geometry.to_i': meta_pack_length
            'column_type::json.to_i': meta_pack_length
            'column_type::vector.to_i': meta_pack_length
            'column_type::varchar.to_i': meta_max_length
            'column_type::varchar_compressed.to_i': meta_max_length
            'column_type::blob_compressed.to_i': meta_pack_length
            'column_type::var_string.to_i': meta_max_length
            'column_type::bit.to_i': meta_bit
            'column_type::newdecimal.to_i': meta_decimal
            'column_type::string.to_i': meta_string
            'column_type::enum.to_i': meta_string
            'column_type::set.to_i': meta_string
            'column_type::timestamp2.to_i': meta_fsp
            'column_type::datetime2.to_i': meta_fsp
            'column_type::time2.to_i': meta_fsp
    types:
      meta_pack_length:
        doc-ref: sql/rpl_utility.cc (table_def::table_def)
        doc: Bytes of the length prefix (BLOB family, JSON, GEOMETRY, VECTOR) or of the value (FLOAT, DOUBLE).
        seq:
          - id: pack_length
            type: u1
      meta_max_length:
        doc-ref: sql/field.cc (Field_varstring::do_save_field_metadata)
        doc: Maximum length in bytes; the value's length prefix is 1 byte below 256, else 2.
        seq:
          - id: max_length
            type: u2
      meta_bit:
        doc-ref: sql/field.cc (Field_bit::do_save_field_metadata)
        seq:
          - id: bits
            type: u1
            doc: Bits in the last, partial byte.
          - id: bytes
            type: u1
            doc: Whole bytes.
      meta_decimal:
        doc-ref: sql/field.cc (Field_new_decimal::do_save_field_metadata)
        seq:
          - id: precision
            type: u1
          - id: scale
            type: u1
            -orig-id: decimals
      meta_string:
        doc: |
          CHAR, ENUM and SET are all written as MYSQL_TYPE_STRING; the real
          type is in the first byte. For CHAR longer than 255 bytes, bits 4-5
          of the first byte, inverted, hold bits 8-9 of the length.
        doc-ref: sql/field.cc (Field_string::do_save_field_metadata)
        seq:
          - id: byte0
            type: u1
          - id: byte1
            type: u1
        instances:
          real_type:
            value: '(byte0 & 0x30) != 0x30 ? (byte0 | 0x30) : byte0'
          max_length:
            value: '(byte0 & 0x30) != 0x30 ? (((byte0 & 0x30) ^ 0x30) << 4) | byte1 : byte1'
            doc: Maximum byte length for CHAR; the pack length (1 or 2) for ENUM and SET.
      meta_fsp:
        doc-ref: sql/field.cc (Field_timestampf/datetimef/timef::do_save_field_metadata)
        seq:
          - id: fsp
            type: u1
            -orig-id: dec
            doc: Fractional seconds precision, 0-6.

  optional_metadata_field:
    doc: |
      One TLV of the TABLE_MAP optional metadata. Lengths and most values are
      packed integers.
    doc-ref:
      - libbinlogevents/include/rows_event.h (Table_map_event::Optional_metadata_field_type)
      - libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
    seq:
      - id: field_type
        type: u1
        enum: optional_metadata_type
        -orig-id: type
      - id: len_value
        type: packed_int
        -orig-id: length
      - id: value
        size: len_value.value
        type:
          switch-on: field_type
          cases:
            'optional_metadata_type::signedness': om_bitmap
            'optional_metadata_type::default_charset': om_default_charset
            'optional_metadata_type::column_charset': om_packed_ints
            'optional_metadata_type::column_name': om_strings
            'optional_metadata_type::set_str_value': om_str_values
            'optional_metadata_type::enum_str_value': om_str_values
            'optional_metadata_type::geometry_type': om_packed_ints
            'optional_metadata_type::simple_primary_key': om_packed_ints
            'optional_metadata_type::primary_key_with_prefix': om_packed_pairs
            'optional_metadata_type::enum_and_set_default_charset': om_default_charset
            'optional_metadata_type::enum_and_set_column_charset': om_packed_ints
            'optional_metadata_type::column_visibility': om_bitmap
            'optional_metadata_type::vector_dimensionality': om_packed_ints
            _: om_raw
    types:
      om_bitmap:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        doc: |
          One bit per column of the relevant kind (numeric columns for
          SIGNEDNESS, all columns for COLUMN_VISIBILITY), most significant
          bit first. Which columns are numeric differs: MySQL counts the
          types of `is_numeric_type()` (sql/field.h: the integers, FLOAT,
          DOUBLE, DECIMAL and NEWDECIMAL); MariaDB counts every Field_num
          (init_signedness_field in sql/log_event_server.cc), YEAR too, as
          Field_year derives from Field_tiny (rows/tablemap.py applies both).
        seq:
          - id: bits
            size-eos: true
      om_packed_ints:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        seq:
          - id: items
            type: packed_int
            repeat: eos
      om_packed_pairs:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        doc: (column index, prefix length) pairs; prefix 0 means the whole column.
        seq:
          - id: items
            type: packed_pair
            repeat: eos
      packed_pair:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        seq:
          - id: first
            type: packed_int
          - id: second
            type: packed_int
      om_default_charset:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        doc: The most common charset, then (column index, charset) for the exceptions.
        seq:
          - id: default_charset
            type: packed_int
          - id: exceptions
            type: packed_pair
            repeat: eos
      om_strings:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        seq:
          - id: items
            type: len_str
            repeat: eos
      om_str_values:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        doc: For each ENUM or SET column, its list of member strings.
        seq:
          - id: columns
            type: str_value_list
            repeat: eos
      str_value_list:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        seq:
          - id: num_values
            type: packed_int
          - id: values
            type: len_bytes
            repeat: expr
            repeat-expr: num_values.value
      om_raw:
        doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
        seq:
          - id: data
            size-eos: true

  len_str:
    doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
    doc: A string with a packed-integer length.
    seq:
      - id: len_value
        type: packed_int
      - id: value
        type: str
        size: len_value.value
        encoding: UTF-8

  len_bytes:
    doc-ref: libbinlogevents/src/rows_event.cpp (Table_map_event::Optional_metadata_fields)
    doc: Bytes with a packed-integer length (member strings in the column charset).
    seq:
      - id: len_value
        type: packed_int
      - id: value
        size: len_value.value

  packed_int:
    doc: |
      The length-encoded integer of the client protocol: one byte below 251,
      else a marker and 2, 3 or 8 bytes.
    doc-ref: libbinlogevents/include/binary_log_funcs.h (net_field_length_ll)
    -orig-id: net_field_length
    seq:
      - id: first
        type: u1
      - id: u2_value
        type: u2
        if: first == 0xfc
      - id: u3_value
        type: b24
        if: first == 0xfd
      - id: u8_value
        type: u8
        if: first == 0xfe
    instances:
      value:
        value: |
          first < 0xfb ? first
            : first == 0xfc ? u2_value
            : first == 0xfd ? u3_value
            : first == 0xfe ? u8_value
            : 0
      len_packed_int:
        value: |
          first == 0xfc ? 3
            : first == 0xfd ? 4
            : first == 0xfe ? 9
            : 1
        doc: The encoded length in bytes (the first byte and the bytes after it).
      is_length:
        value: first != 0xfb and first != 0xff
        doc: |
          False for 0xfb (the protocol's NULL marker) and 0xff (its error
          marker): neither starts a length or a count, and `value` is then 0.

  # -------------------------------------------------------------------- GTIDs
  gtid_log_event:
    doc: |
      GTID_LOG_EVENT and ANONYMOUS_GTID_LOG_EVENT: the identity of the next
      transaction. The post-header grew from 25 bytes (5.6) to 42 (5.7, the
      logical clock); the 8.0 fields follow in the body, each present only
      while bytes remain.
    doc-ref:
      - libbinlogevents/include/control_events.h (Gtid_event)
      - libbinlogevents/src/control_events.cpp (Gtid_event::Gtid_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: gtid_flags
        type: u1
        -orig-id: gtid_flags
        doc: Bit 0 is FLAG_MAY_HAVE_SBR.
      - id: sid
        size: 16
        -orig-id: sid
        doc: The source's server UUID (all zeros for an anonymous GTID).
      - id: gno
        type: u8
        -orig-id: gno
      - id: lt_type
        type: u1
        -orig-id: lt_type
        if: len_post_header >= 26
        doc: 2 is LOGICAL_TIMESTAMP_TYPECODE.
      - id: last_committed
        type: u8
        -orig-id: last_committed
        if: len_post_header >= 42
      - id: sequence_number
        type: u8
        -orig-id: sequence_number
        if: len_post_header >= 42
      - id: post_header_extra
        size: len_post_header - 42
        if: len_post_header > 42
      - id: immediate_commit_timestamp
        type: commit_timestamp
        if: not _io.eof
      - id: original_commit_timestamp
        type: commit_timestamp
        if: 'not _io.eof and immediate_commit_timestamp.has_next'
        doc: Present only when it differs from the immediate one.
      - id: transaction_length
        type: packed_int
        if: not _io.eof
      - id: immediate_server_version
        type: server_version
        if: not _io.eof
      - id: original_server_version
        type: server_version
        if: 'not _io.eof and immediate_server_version.has_next'
      - id: commit_group_ticket
        type: u8
        if: not _io.eof
        doc: MySQL 8.0.33+ (binlog_transaction_dependency tracking for group replication).
    types:
      commit_timestamp:
        doc-ref: libbinlogevents/src/control_events.cpp (Gtid_event::Gtid_event)
        doc: |
          7 bytes, microseconds since the epoch in the low 55 bits; the top
          bit says that an original commit timestamp follows.
        seq:
          - id: low
            type: u4
          - id: high
            type: b24
        instances:
          microseconds:
            value: 'low + (high & 0x7fffff) * 4294967296'
          has_next:
            value: '(high & 0x800000) != 0'
      server_version:
        doc-ref: libbinlogevents/src/control_events.cpp (Gtid_event::Gtid_event)
        doc: 4 bytes, e.g. 80032 for 8.0.32; the top bit says that an original server version follows.
        seq:
          - id: raw
            type: u4
        instances:
          version:
            value: raw & 0x7fffffff
          has_next:
            value: '(raw & 0x80000000) != 0'

  previous_gtids_log_event:
    doc: |
      The GTID set executed before this file. Each SID has a list of
      [start, end) intervals. The first 8 bytes are a little-endian word:
      untagged (format 0), its low 56 bits count the SIDs; tagged (MySQL
      8.4+, format 1, top byte 1) it is (1 << 56) | (count << 8) | 1 and
      every SID carries a tag.
    doc-ref:
      - libs/mysql/binlog/event/control_events.h (Previous_gtids_event)
      - sql/rpl_gtid_set.cc (Gtid_set::encode, encode_nsids_format)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: word_byte0
        type: u1
      - id: word_bytes1_4
        type: u4
      - id: word_bytes5_6
        type: u2
      - id: gtid_format
        type: u1
        valid:
          any-of: [0, 1]
        doc: 0 untagged, 1 tagged.
      - id: sids
        type: gtid_sid_intervals(gtid_format)
        repeat: expr
        repeat-expr: num_sids
    instances:
      num_sids:
        value: |
          gtid_format == 1
            ? word_bytes1_4 + word_bytes5_6 * 4294967296
            : word_byte0 + word_bytes1_4 * 256 + word_bytes5_6 * 1099511627776
        -orig-id: n_sids

  gtid_sid_intervals:
    doc-ref: sql/rpl_gtid_set.cc (Gtid_set::add_gtid_encoding)
    params:
      - id: gtid_format
        type: u1
    seq:
      - id: sid
        size: 16
      - id: tag
        type: gtid_tag
        if: gtid_format == 1
      - id: num_intervals
        type: u8
        -orig-id: n_intervals
      - id: intervals
        type: gtid_interval
        repeat: expr
        repeat-expr: num_intervals

  gtid_tag:
    doc-ref: libs/mysql/gtid/tag.cpp (Tag::encode_tag)
    doc: A GTID tag in a tagged GTID set; its length is a serialization-library varlen integer.
    seq:
      - id: len_tag
        type: varlen_uint
      - id: tag
        type: str
        size: len_tag.value
        encoding: ASCII

  gtid_interval:
    doc-ref: sql/rpl_gtid_set.cc (Gtid_set::add_gtid_encoding)
    seq:
      - id: start
        type: u8
      - id: end
        type: u8
        doc: Exclusive.

  varlen_uint:
    doc: |
      Variable-length unsigned integer of MySQL's serialization library: the
      number of trailing one bits in the first byte, plus one, is the number
      of bytes; the remaining bits, little-endian, hold the value.
    doc-ref: libs/mysql/serialization/variable_length_integers.h
    seq:
      - id: first
        type: u1
      - id: rest
        size: len_encoded - 1
    instances:
      len_encoded:
        value: |
          (first & 0x01) == 0 ? 1
            : (first & 0x02) == 0 ? 2
            : (first & 0x04) == 0 ? 3
            : (first & 0x08) == 0 ? 4
            : (first & 0x10) == 0 ? 5
            : (first & 0x20) == 0 ? 6
            : (first & 0x40) == 0 ? 7
            : (first & 0x80) == 0 ? 8 : 9
      value:
        value: |
          len_encoded == 1 ? first >> 1
            : len_encoded == 2 ? (first >> 2) + rest[0] * 64
            : len_encoded == 3 ? (first >> 3) + (rest[0] + rest[1] * 256) * 32
            : len_encoded == 4 ? (first >> 4) + (rest[0] + rest[1] * 256 + rest[2] * 65536) * 16
            : len_encoded == 5 ? (first >> 5) + (rest[0] + rest[1] * 256 + rest[2] * 65536 + rest[3] * 16777216) * 8
            : len_encoded == 6 ? (first >> 6) + (rest[0] + rest[1] * 256 + rest[2] * 65536 + rest[3] * 16777216 + rest[4] * 4294967296) * 4
            : len_encoded == 7 ? (first >> 7) + (rest[0] + rest[1] * 256 + rest[2] * 65536 + rest[3] * 16777216 + rest[4] * 4294967296 + rest[5] * 1099511627776) * 2
            : len_encoded == 8 ? rest[0] + rest[1] * 256 + rest[2] * 65536 + rest[3] * 16777216 + rest[4] * 4294967296 + rest[5] * 1099511627776 + rest[6] * 281474976710656
            : rest[0] + rest[1] * 256 + rest[2] * 65536 + rest[3] * 16777216 + rest[4] * 4294967296 + rest[5] * 1099511627776 + rest[6] * 281474976710656 + rest[7] * 72057594037927936
        doc: Exact up to 2^53 in JavaScript; GTID fields stay far below.
      signed_value:
        value: '(value % 2 == 0) ? value / 2 : -((value + 1) / 2)'
        doc: The ZigZag decoding, for the library's signed fields.

  gtid_tagged_log_event:
    doc: |
      MySQL 8.4+ GTID of a tagged transaction (`uuid:tag:gno`). The body is one
      message of MySQL's serialization library: a format version, the
      message size (counting from the version byte), the last field id a
      reader must understand, then (field id, value) pairs. Absent optional
      fields take their default (original = immediate, ticket 0). The FDE's
      post-header length for this type is 0.
    doc-ref:
      - libs/mysql/binlog/event/control_events.h (Gtid_event::define_fields)
      - libs/mysql/serialization/readme.md
    seq:
      - id: format_version
        type: varlen_uint
        -orig-id: serialization_format_version
      - id: message_size
        type: varlen_uint
        -orig-id: serializable_field_size
      - id: last_non_ignorable_field_id
        type: varlen_uint
      - id: fields
        type: tagged_gtid_field
        size: message_size.value - len_message_header
        -orig-id: define_fields
      - id: unparsed
        size-eos: true
        doc: Bytes after the message (none are written).
    instances:
      len_message_header:
        value: format_version.len_encoded + message_size.len_encoded + last_non_ignorable_field_id.len_encoded

  tagged_gtid_field:
    doc-ref: libs/mysql/binlog/event/control_events.h (Gtid_event::define_fields)
    seq:
      - id: items
        type: tagged_gtid_item
        repeat: eos

  tagged_gtid_item:
    doc-ref: libs/mysql/binlog/event/control_events.h (Gtid_event::define_fields)
    doc: |
      Field ids: 0 gtid_flags, 1 uuid (16 varints, one per byte), 2 gno
      (signed), 3 tag, 4 last_committed (signed), 5 sequence_number (signed),
      6 immediate_commit_timestamp, 7 original_commit_timestamp,
      8 transaction_length, 9 immediate_server_version,
      10 original_server_version, 11 commit_group_ticket.
    seq:
      - id: field_id
        type: varlen_uint
      - id: value
        type:
          switch-on: field_id.value
          cases:
            1: uuid_varints
            3: gtid_tag
            _: varlen_uint
    types:
      uuid_varints:
        doc-ref: libs/mysql/serialization/serializer_default_impl.hpp (std::array fields)
        seq:
          - id: bytes
            type: varlen_uint
            repeat: expr
            repeat-expr: 16

  mariadb_gtid_event:
    doc: |
      MariaDB's GTID_EVENT: starts an event group. domain-server-seq_no is the
      GTID (the server id is the header's). The XA and extra fields follow
      the fixed part when the flags say so; the rest is zero padding.
    doc-ref: sql/log_event.h (Gtid_log_event, MariaDB)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: seq_no
        type: u8
      - id: domain_id
        type: u4
      - id: flags2
        type: u1
        doc: The group's flag bits (mariadb_gtid_flags2).
      - id: commit_id
        type: u8
        if: flags2_bits.group_commit_id
      - id: xa_format_id
        type: u4
        if: flags2_bits.xa
      - id: xa_len_gtrid
        type: u1
        if: flags2_bits.xa
      - id: xa_len_bqual
        type: u1
        if: flags2_bits.xa
      - id: xa_data
        size: xa_len_gtrid + xa_len_bqual
        if: flags2_bits.xa
      - id: flags_extra
        type: u1
        if: not _io.eof
        doc: |
          FL_EXTRA_MULTI_ENGINE_E1 1, FL_START_ALTER_E1 2 (10.8+),
          FL_COMMIT_ALTER_E1 4, FL_ROLLBACK_ALTER_E1 8, 0x10 thread id
          (11.5+). A zero padding byte reads as 0.
      - id: extra_engines
        type: u1
        if: 'not _io.eof and (flags_extra & 1) != 0'
        doc: Number of other engines in the transaction, minus one.
      - id: sa_seq_no
        type: u8
        if: 'not _io.eof and (flags_extra & 12) != 0'
        doc: The seq_no of the START ALTER this COMMIT/ROLLBACK ALTER ends.
      - id: thread_id
        type: u4
        if: 'not _io.eof and (flags_extra & 0x10) != 0'
        doc: MariaDB 11.5+; the id of the session that ran the transaction.
      - id: padding
        size-eos: true
    instances:
      flags2_bits:
        type: mariadb_gtid_flags2(flags2)
        doc: flags2 bit by bit (reads nothing).

  mariadb_gtid_flags2:
    doc: |
      The flag bits of a MariaDB GTID_EVENT's flags2, one instance each (the
      compiled loops' constants are generated from the masks here: build.py).
    doc-ref: sql/log_event.h (Gtid_log_event, MariaDB)
    params:
      - id: value
        type: u1
    instances:
      standalone:
        -orig-id: FL_STANDALONE
        value: (value & 0x01) != 0
        doc: One statement with no BEGIN/COMMIT (DDL, non-transactional).
      group_commit_id:
        -orig-id: FL_GROUP_COMMIT_ID
        value: (value & 0x02) != 0
        doc: Written in a group commit; commit_id follows.
      transactional:
        -orig-id: FL_TRANSACTIONAL
        value: (value & 0x04) != 0
        doc: The group is transactional (can be rolled back).
      allow_parallel:
        -orig-id: FL_ALLOW_PARALLEL
        value: (value & 0x08) != 0
        doc: May be applied in parallel by an optimistic replica.
      waited:
        -orig-id: FL_WAITED
        value: (value & 0x10) != 0
        doc: The transaction waited for a row lock held by another.
      ddl:
        -orig-id: FL_DDL
        value: (value & 0x20) != 0
        doc: The group holds DDL.
      prepared_xa:
        -orig-id: FL_PREPARED_XA
        value: (value & 0x40) != 0
        doc: An XA transaction's prepare (XA START ... XA END, XA_PREPARE_LOG_EVENT).
      completed_xa:
        -orig-id: FL_COMPLETED_XA
        value: (value & 0x80) != 0
        doc: An XA COMMIT or XA ROLLBACK.
      xa:
        value: prepared_xa or completed_xa
        doc: The XA fields follow the fixed part.

  gtid_list_event:
    doc: MariaDB; the last GTID of each replication domain, at the start of each binlog.
    doc-ref: sql/log_event.h (Gtid_list_log_event, MariaDB)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: count_and_flags
        type: u4
      - id: post_header_extra
        size: len_post_header - 4
        if: len_post_header > 4
      - id: gtids
        type: mariadb_gtid
        repeat: expr
        repeat-expr: num_gtids
    instances:
      num_gtids:
        value: count_and_flags & 0x0fffffff
      gtid_list_flags:
        value: count_and_flags >> 28

  mariadb_gtid:
    doc-ref: sql/log_event.h (Gtid_list_log_event, MariaDB)
    seq:
      - id: domain_id
        type: u4
      - id: server_id
        type: u4
      - id: seq_no
        type: u8

  start_encryption_event:
    doc: MariaDB; every later event of the file is encrypted.
    doc-ref: sql/log_event.h (Start_encryption_log_event, MariaDB)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: crypto_scheme
        type: u1
      - id: key_version
        type: u4
      - id: nonce
        size: 12

  # --------------------------------------------- group replication, XA, payload
  transaction_context_event:
    doc: Group replication certification data of a transaction.
    doc-ref: libs/mysql/binlog/event/control_events.h (Transaction_context_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: len_server_uuid
        type: u1
        -orig-id: server_uuid_len
      - id: thread_id
        type: u4
      - id: gtid_specified
        type: u1
      - id: len_encoded_snapshot_version
        type: u4
        -orig-id: encoded_snapshot_version_length
      - id: num_write_set
        type: u4
        -orig-id: write_set_len
      - id: num_read_set
        type: u4
        -orig-id: read_set_len
      - id: post_header_extra
        size: len_post_header - 18
        if: len_post_header > 18
      - id: server_uuid
        type: str
        size: len_server_uuid
        encoding: ASCII
      - id: encoded_snapshot_version
        size: len_encoded_snapshot_version
        doc: A GTID set in the PREVIOUS_GTIDS body encoding.
      - id: write_set
        type: len_u2_bytes
        repeat: expr
        repeat-expr: num_write_set
      - id: read_set
        type: len_u2_bytes
        repeat: expr
        repeat-expr: num_read_set

  len_u2_bytes:
    doc-ref: libs/mysql/binlog/event/event_reader.cpp (read_data_set)
    seq:
      - id: len_value
        type: u2
      - id: value
        size: len_value

  view_change_event:
    doc: A group replication membership change.
    doc-ref: libs/mysql/binlog/event/control_events.h (View_change_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: view_id
        type: strz
        size: 40
        encoding: ASCII
      - id: seq_number
        type: s8
      - id: num_certification_info
        type: u4
        -orig-id: cert_info_len
      - id: post_header_extra
        size: len_post_header - 52
        if: len_post_header > 52
      - id: certification_info
        type: certification_entry
        repeat: expr
        repeat-expr: num_certification_info
    types:
      certification_entry:
        doc-ref: libs/mysql/binlog/event/event_reader.cpp (read_data_map)
        seq:
          - id: len_key
            type: u2
          - id: key
            type: str
            size: len_key
            encoding: UTF-8
          - id: len_value
            type: u4
          - id: value
            size: len_value

  xa_prepare_log_event:
    doc: XA PREPARE, or XA COMMIT ONE PHASE, of an XA transaction.
    doc-ref: libs/mysql/binlog/event/control_events.h (XA_prepare_event)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: one_phase
        type: u1
      - id: format_id
        type: s4
        -orig-id: formatID
      - id: len_gtrid
        type: u4
        -orig-id: gtrid_length
        valid:
          max: 64
      - id: len_bqual
        type: u4
        -orig-id: bqual_length
        valid:
          max: 64
      - id: gtrid
        size: len_gtrid
      - id: bqual
        size: len_bqual

  transaction_payload_event:
    doc: |
      A whole transaction's events, compressed (binlog_transaction_compression).
      A list of (type, length, value) fields, each a packed integer, ends
      with type 0; the payload follows. The inner events have no checksum
      and end_log_pos 0. The real post-header is empty: the server writes 40
      in the FDE array for this type by mistake and ignores it when reading,
      so this body takes no post-header length.
    doc-ref:
      - libs/mysql/binlog/event/control_events.h (Transaction_payload_event)
      - libs/mysql/binlog/event/codecs/binary.cpp (Transaction_payload::decode)
    seq:
      - id: header_fields
        type: payload_field
        repeat: until
        repeat-until: _.field_type.value == 0
      - id: payload
        size-eos: true
    types:
      payload_field:
        doc-ref: libs/mysql/binlog/event/codecs/binary.cpp (Transaction_payload::decode)
        doc: 1 payload_size, 2 compression_type (0 ZSTD, 255 NONE), 3 uncompressed_size, 0 end.
        seq:
          - id: field_type
            type: packed_int
          - id: len_value
            type: packed_int
            if: field_type.value != 0
          - id: value
            size: len_value.value
            type:
              switch-on: field_type.value
              cases:
                1: packed_int
                2: packed_int
                3: packed_int
            if: field_type.value != 0

  heartbeat_log_event_v2:
    doc: |
      A heartbeat with a 64-bit position (sources newer than 8.0.26): fields
      of (type, length, value), each a packed integer, ending with type 0.
    doc-ref: libs/mysql/binlog/event/codecs/binary.cpp (Heartbeat::decode)
    params:
      - id: len_post_header
        type: u1
    seq:
      - id: post_header
        size: len_post_header
      - id: fields
        type: heartbeat_field
        repeat: until
        repeat-until: _.field_type.value == 0 or _io.eof
    types:
      heartbeat_field:
        doc-ref: libs/mysql/binlog/event/codecs/binary.cpp (Heartbeat::decode)
        doc: 1 log file name, 2 log position, 0 end.
        seq:
          - id: field_type
            type: packed_int
          - id: len_value
            type: packed_int
            if: field_type.value != 0
          - id: value
            size: len_value.value
            type:
              switch-on: field_type.value
              cases:
                2: packed_int
            if: field_type.value != 0

  # -------------------------------------------------------------------- rows
  rows_event:
    doc: |
      WRITE, UPDATE and DELETE rows events of every version: v0 (pre-GA,
      types 20-22), v1 (23-25), v2 (30-32), PARTIAL_UPDATE_ROWS (39) and
      MariaDB's compressed variants (166-171, whose `rows` bytes are a
      MariaDB compressed block). The post-header holds the table id (4 or 6
      bytes: the post-header length minus the 2-byte flags and, in v2, the
      2-byte extra-data length) and the flags. The row images are kept as
      bytes: they can only be decoded with the table's TABLE_MAP.
    doc-ref:
      - libbinlogevents/include/rows_event.h (Rows_event)
      - libbinlogevents/src/rows_event.cpp
    params:
      - id: len_post_header
        type: u1
      - id: version
        type: u1
      - id: has_after_image
        type: bool
        doc: UPDATE and PARTIAL_UPDATE carry a second columns-present bitmap.
    seq:
      - id: table_id_low
        type: u4
      - id: table_id_high
        type: u2
        if: len_table_id == 6
      - id: rows_flags
        type: u2
        -orig-id: m_flags
        doc: |
          STMT_END_F 1, NO_FOREIGN_KEY_CHECKS_F 2, RELAXED_UNIQUE_CHECKS_F 4,
          COMPLETE_ROWS_F 8; MariaDB NO_CHECK_CONSTRAINT_CHECKS_F 0x80.
      - id: len_extra_data
        type: u2
        -orig-id: var_header_len
        if: version == 2
        doc: Includes its own 2 bytes.
        valid:
          min: 2
      - id: post_header_extra
        size: len_post_header - len_post_header_known
        if: len_post_header > len_post_header_known
      - id: extra_data
        type: rows_extra_data
        size: len_extra_data - 2
        if: version == 2
      - id: num_columns
        type: packed_int
        -orig-id: m_width
      - id: columns_before_image
        size: len_columns_bitmap
        -orig-id: cols
        doc: Columns present in the before image (the only image of WRITE and DELETE).
      - id: columns_after_image
        size: len_columns_bitmap
        -orig-id: cols_ai
        if: has_after_image
      - id: rows
        size-eos: true
        -orig-id: m_rows_buf
    instances:
      ofs_rows_flags:
        value: len_table_id
        doc: Offset of rows_flags (u2) from the body start (after table_id_low and table_id_high).
      ofs_len_extra_data:
        value: ofs_rows_flags + 2
        doc: Offset of len_extra_data (u2, v2 only) from the body start.
      ofs_num_columns:
        value: |
          (len_post_header > len_post_header_known ? len_post_header : len_post_header_known)
            + (version == 2 ? len_extra_data - 2 : 0)
        doc: Offset of num_columns from the body start (after the post-header and the v2 extra data).
      len_columns_bitmap:
        value: (num_columns.value + 7) / 8
        doc: Bytes of each columns-present bitmap, one bit a column.
      ofs_columns_before_image:
        value: ofs_num_columns + num_columns.len_packed_int
        doc: Offset of columns_before_image from the body start.
      ofs_columns_after_image:
        value: ofs_columns_before_image + len_columns_bitmap
        if: has_after_image
        doc: Offset of columns_after_image from the body start.
      ofs_rows:
        value: 'ofs_columns_before_image + (has_after_image ? 2 : 1) * len_columns_bitmap'
        doc: Offset of rows from the body start.
      len_post_header_known:
        value: 'len_table_id + 2 + (version == 2 ? 2 : 0)'
      len_table_id:
        value: 'len_post_header - (version == 2 ? 4 : 2) >= 6 ? 6 : 4'
      table_id:
        value: 'table_id_low + (len_table_id == 6 ? table_id_high * 4294967296 : 0)'

  rows_extra_data:
    doc-ref: libbinlogevents/include/rows_event.h (Rows_event::Extra_row_info)
    seq:
      - id: items
        type: rows_extra_item
        repeat: eos

  rows_extra_item:
    doc-ref: libbinlogevents/include/rows_event.h (Rows_event::Extra_row_info)
    seq:
      - id: tag
        type: u1
        enum: rows_extra_tag
      - id: value
        type:
          switch-on: tag
          cases:
            'rows_extra_tag::ndb_info': ndb_info
            'rows_extra_tag::part_info': part_info
            _: raw_rest
    types:
      ndb_info:
        doc-ref: libbinlogevents/include/rows_event.h (Extra_row_info, RW_V_EXTRAINFO_TAG)
        seq:
          - id: len_info
            type: u1
            doc: Includes the length and format bytes.
          - id: format
            type: u1
          - id: data
            size: len_info - 2
      part_info:
        doc-ref: libbinlogevents/include/rows_event.h (Extra_row_info, PART info)
        seq:
          - id: partition_id
            type: u2
          - id: source_partition_id
            type: u2
            if: not _io.eof
            doc: Only in UPDATE events.
      raw_rest:
        doc-ref: libbinlogevents/include/rows_event.h (Extra_row_info, where an unknown tag skips the rest)
        seq:
          - id: data
            size-eos: true
enums:
  event_type:
    0: unknown_event
    1: start_event_v3
    2: query_event
    3: stop_event
    4: rotate_event
    5: intvar_event
    6: load_event
    7: slave_event
    8: create_file_event
    9: append_block_event
    10: exec_load_event
    11: delete_file_event
    12: new_load_event
    13: rand_event
    14: user_var_event
    15: format_description_event
    16: xid_event
    17: begin_load_query_event
    18: execute_load_query_event
    19: table_map_event
    20: pre_ga_write_rows_event
    21: pre_ga_update_rows_event
    22: pre_ga_delete_rows_event
    23: write_rows_event_v1
    24: update_rows_event_v1
    25: delete_rows_event_v1
    26: incident_event
    27: heartbeat_log_event
    28: ignorable_log_event
    29: rows_query_log_event
    30: write_rows_event
    31: update_rows_event
    32: delete_rows_event
    33: gtid_log_event
    34: anonymous_gtid_log_event
    35: previous_gtids_log_event
    36: transaction_context_event
    37: view_change_event
    38: xa_prepare_log_event
    39: partial_update_rows_event
    40: transaction_payload_event
    41: heartbeat_log_event_v2
    42: gtid_tagged_log_event
    43: large_transaction_header_event
    160: annotate_rows_event
    161: binlog_checkpoint_event
    162: gtid_event
    163: gtid_list_event
    164: start_encryption_event
    165: query_compressed_event
    166: write_rows_compressed_event_v1
    167: update_rows_compressed_event_v1
    168: delete_rows_compressed_event_v1
    169: write_rows_compressed_event
    170: update_rows_compressed_event
    171: delete_rows_compressed_event
  checksum_alg:
    0: off
    1: crc32
    255: undef
  query_status_var:
    0: q_flags2_code
    1: q_sql_mode_code
    2: q_catalog_code
    3: q_auto_increment
    4: q_charset_code
    5: q_time_zone_code
    6: q_catalog_nz_code
    7: q_lc_time_names_code
    8: q_charset_database_code
    9: q_table_map_for_update_code
    10: q_master_data_written_code
    11: q_invoker
    12: q_updated_db_names
    13: q_microseconds
    14: q_commit_ts
    15: q_commit_ts2
    16: q_explicit_defaults_for_timestamp
    17: q_ddl_logged_with_xid
    18: q_default_collation_for_utf8mb4
    19: q_sql_require_primary_key
    20: q_default_table_encryption
    21: q_enable_cascade_triggers
    128: q_hrnow
    129: q_xid
    130: q_gtid_flags3
    131: q_character_set_collations
  intvar_type:
    0: invalid_int_event
    1: last_insert_id_event
    2: insert_id_event
  item_result:
    -1: invalid_result
    0: string_result
    1: real_result
    2: int_result
    3: row_result
    4: decimal_result
  load_dup_handling:
    0: load_dup_error
    1: load_dup_ignore
    2: load_dup_replace
  incident_type:
    0: incident_none
    1: incident_lost_events
  rows_extra_tag:
    0: ndb_info
    1: part_info
  optional_metadata_type:
    1: signedness
    2: default_charset
    3: column_charset
    4: column_name
    5: set_str_value
    6: enum_str_value
    7: geometry_type
    8: simple_primary_key
    9: primary_key_with_prefix
    10: enum_and_set_default_charset
    11: enum_and_set_column_charset
    12: column_visibility
    13: vector_dimensionality
  column_type:
    0: decimal
    1: tiny
    2: short
    3: long
    4: float
    5: double
    6: "null"
    7: timestamp
    8: longlong
    9: int24
    10: date
    11: time
    12: datetime
    13: year
    14: newdate
    15: varchar
    16: bit
    17: timestamp2
    18: datetime2
    19: time2
    20: typed_array
    140: blob_compressed
    141: varchar_compressed
    242: vector
    243: invalid
    244: bool
    245: json
    246: newdecimal
    247: enum
    248: set
    249: tiny_blob
    250: medium_blob
    251: long_blob
    252: blob
    253: var_string
    254: string
    255: geometry
