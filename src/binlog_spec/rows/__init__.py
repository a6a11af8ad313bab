"""Row images <-> values: column types, charsets, value decoders, JSON, the walker (image bounds without
decoding), the row decoder, TABLE_MAPs and the schema tracker that completes them."""
