"""The schema learnt from the binlogs' DDL: the tracker that replays it (schema), CREATE TABLE read into
columns and keys (schema_sql), and the tokens of DDL statements (ddl_tokens)."""
