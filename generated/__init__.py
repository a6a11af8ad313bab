"""Parsers generated from formats/binlog.ksy. DO NOT EDIT: run `python build.py`."""
