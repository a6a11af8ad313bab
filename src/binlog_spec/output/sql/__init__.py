"""SQL out: literals and WHERE clauses (text), one row change as a statement (statements, compiled as
_cstatements.pyx), the --sql/--sql2 script, and what a script can write whole (writable)."""
