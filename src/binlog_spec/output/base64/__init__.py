"""The base64 script (mysqlbinlog's default output): its session header and footer, its per-event text
(compiled as _ctext.pyx), the parts a piece of a parallel run writes, and the lane that writes most events."""
