from binlog_spec.cli import entry

entry()
