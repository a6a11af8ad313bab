"""The reader's access to bytes: a gzip file as a stream that keeps what it decompressed, standard
input left open, and a window of large reads that events are sliced from."""
from __future__ import annotations

import gzip
import io
import zlib
from typing import BinaryIO

class GunzipStream(io.RawIOBase):
    """The uncompressed bytes of a gzip file, as a raw stream that never loses what it has
    decompressed: a cut or damaged gzip file ends the stream early, and the fault is kept in
    `fault` for the reader to raise with the offset it reached. (io.BufferedReader over
    gzip.GzipFile drops the data of a read that meets the fault, up to its buffer size.)"""

    def __init__(self, fileobj: BinaryIO):
        super().__init__()
        self._gz = gzip.GzipFile(fileobj=fileobj, mode="rb")
        self._fileobj = fileobj   # closed with this stream
        self.fault: Exception | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.fault is not None:
            return 0
        try:
            data = self._gz.read1(len(b))    # one decompression step: data, or the fault and no data
        except (EOFError, zlib.error, OSError) as exc:
            self.fault = exc
            return 0
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._gz.close()
        self._fileobj.close()
        super().close()


class Unclosed(io.RawIOBase):
    """A binary stream (a test's sys.stdin) read without closing it."""

    def __init__(self, source: BinaryIO):
        super().__init__()
        self._source = source

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self._source.read(len(b))
        b[:len(data)] = data
        return len(data)


SCAN_CHUNK = 8 << 20


#: The largest single read of Window.take (an event size read from damaged bytes may be huge).
MAX_READ = 16 << 20


class Window:
    """Sequential access to a stream through a window of large reads (forward only)."""

    def __init__(self, f: BinaryIO, chunk: int, limit: int | None = None):
        self.f, self.chunk, self.buf, self.base = f, chunk, b"", 0
        #: take() reads nothing at or past this offset (the file's size when it was opened).
        self.limit = limit

    def take(self, pos: int, n: int) -> bytes:
        """The bytes [pos, pos+n), fewer where the stream (or `limit`) ends first. Positions only go
        forward: pos is never before the previous call's."""
        buf, off = self.buf, pos - self.base
        if off + n <= len(buf):
            return buf[off:off + n]
        if self.limit is not None:
            n = max(min(n, self.limit - pos), 0)
        parts = [buf[off:]]
        have = len(parts[0])
        while have < n:
            want = max(self.chunk, min(n - have, MAX_READ))
            if self.limit is not None:
                want = min(want, self.limit - pos - have)
            data = self.f.read(want)
            if not data:
                break
            parts.append(data)
            have += len(data)
        self.buf, self.base = b"".join(parts), pos
        return self.buf[:n]

    def ensure(self, pos: int, n: int) -> int:
        """Make [pos, pos+n) available if the stream has it; return how many bytes are there."""
        end = self.base + len(self.buf)
        if self.base <= pos and pos + n <= end:
            return n
        if pos > end and self.f.seekable():
            self.f.seek(pos)
            self.buf, self.base = b"", pos
        elif pos > end:  # step over bytes never needed
            skip = pos - end
            while skip > 0:
                data = self.f.read(min(skip, self.chunk))
                if not data:
                    break
                skip -= len(data)
            self.buf, self.base = b"", pos - skip
            if skip:
                return 0
        else:
            self.buf, self.base = self.buf[pos - self.base:], pos
        parts = [self.buf]
        have = len(self.buf)
        while have < n:
            data = self.f.read(max(self.chunk, n - have))
            if not data:
                break
            parts.append(data)
            have += len(data)
        self.buf = b"".join(parts) if len(parts) > 1 else parts[0]
        return min(n, len(self.buf))

    def view(self, pos: int, n: int) -> memoryview:
        return memoryview(self.buf)[pos - self.base: pos - self.base + n]
