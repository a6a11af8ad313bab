"""binlog."""
