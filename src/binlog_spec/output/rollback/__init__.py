"""A rollback: the undo and its spool (spool), and the conflict check of what the undo would overwrite
(check, with its key index, key reader, savepoints, statements, report, and compiled part _ccheck.pyx)."""
