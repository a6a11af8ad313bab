"""The planning of reads: a binlog cut into byte ranges that read as binlogs of their own (pieces), the
header pass that finds where to cut (scan), the splits of the Spark source and of --jobs (splits), byte
ranges resolved by their readers (resync), the --start-position seek (seek), and the DDL before a cut (ddl)."""
