"""Text and bytes out: JSON, event and row lines, SQL, mysqlbinlog-style scripts and -v lines, binlog
output forward and rollback. Renderers never print."""
