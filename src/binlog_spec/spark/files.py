"""The files of a read: paths (a file, a folder, a glob, or a URI any `pyarrow.fs` filesystem opens)
listed as `FileRef`s in name order, and opened for reading (local files directly, others through
pyarrow)."""
from __future__ import annotations

import dataclasses
import fnmatch
import glob as globmod
import io
import os
import re
from dataclasses import dataclass
from typing import BinaryIO



@dataclass(frozen=True)
class FileRef:
    """One input file. `name` is what the output's `file` column says."""

    name: str
    #: Path for the filesystem: a local path, or the path inside `uri_prefix`'s filesystem.
    fs_path: str
    size: int
    #: "" for the local filesystem, else the URI that `pyarrow.fs.FileSystem.from_uri` opens.
    uri: str = ""
    #: Given by a folder or a glob under a name unlike a binlog's: read only if it starts like one
    #: (`stream.planning.pieces.starts_like_binlog`, checked by its reader: `Split.if_binlog`), else left out.
    sniff: bool = False

    @property
    def local(self) -> bool:
        return not self.uri

    def open(self) -> BinaryIO:
        """An unbuffered, seekable binary file."""
        if self.local:
            return io.open(self.fs_path, "rb", buffering=0)
        fs, path = _filesystem(self.uri)
        return _ArrowRaw(fs.open_input_file(path))


def _is_uri(path: str) -> bool:
    head, sep, _ = path.partition("://")
    return bool(sep) and head.isidentifier()


def _filesystem(uri: str):
    from pyarrow import fs as pafs
    return pafs.FileSystem.from_uri(uri)


class _ArrowRaw(io.RawIOBase):
    """A pyarrow RandomAccessFile as a Python raw file."""

    def __init__(self, f) -> None:
        self._f = f

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self._f.read(len(b))
        n = len(data)
        b[:n] = data
        return n

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


#: A binlog's file name as the server makes it (`mysql-bin.000042`), maybe gzipped.
_BINLOG_NAME = re.compile(r"\.\d{6,}(\.gz)?$")


def _listed(ref: FileRef) -> FileRef:
    """A file a folder or a glob contributes, as listed (nothing is opened): one named like a binlog is
    read whatever it starts with, so that a damaged binlog is read and fails (or is skipped with
    onError=skip) instead of being left out unseen; any other is read only if it starts like a binlog
    (`sniff`: its reader checks, `stream.planning.pieces.starts_like_binlog`)."""
    if _BINLOG_NAME.search(os.path.basename(ref.name.rstrip("/"))):
        return ref
    return dataclasses.replace(ref, sniff=True)


def list_files(paths: list[str], recursive: bool = False, path_glob: str | None = None) -> list[FileRef]:
    """The files named by `paths`: files as they are; folders and globs expanded to their files
    with the sizes of the listing, none opened (`_listed`: those not named like a binlog are read
    only if they start like one), hidden and ``_``-names left out.

    Sorted by name within each path; duplicates dropped. Raises FileNotFoundError for a path
    that names nothing.
    """
    out: list[FileRef] = []
    seen: set[str] = set()
    for p in paths:
        for ref in _expand(p, recursive, path_glob):
            if ref.name not in seen:
                seen.add(ref.name)
                out.append(ref)
    return out


def _expand(path: str, recursive: bool, path_glob: str | None) -> list[FileRef]:
    if _is_uri(path) and not path.startswith("file://"):
        return _expand_uri(path, recursive, path_glob)
    if path.startswith("file://"):
        path = path[len("file://"):]
    path = os.path.abspath(os.path.expanduser(path))
    if any(ch in path for ch in "*?["):
        matches = sorted(globmod.glob(path, recursive=True))
        if not matches:
            raise FileNotFoundError(f"no file matches {path}")
        refs: list[FileRef] = []
        for m in matches:
            if os.path.isdir(m):
                refs.extend(_expand(m, recursive, path_glob))
            elif _keep_name(m, path_glob):
                refs.append(_listed(FileRef(m, m, os.path.getsize(m))))
        return refs
    if os.path.isdir(path):
        names: list[str] = []
        if recursive:
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                names.extend(os.path.join(root, f) for f in files)
        else:
            names = [os.path.join(path, f) for f in os.listdir(path) if os.path.isfile(os.path.join(path, f))]
        refs = []
        for n in sorted(names):
            if _keep_name(n, path_glob):
                refs.append(_listed(FileRef(n, n, os.path.getsize(n))))
        return refs
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file or folder: {path}")
    return [FileRef(path, path, os.path.getsize(path))]


def _keep_name(path: str, path_glob: str | None) -> bool:
    base = os.path.basename(path)
    if base.startswith((".", "_")):
        return False
    return path_glob is None or fnmatch.fnmatchcase(base, path_glob)


def _expand_uri(uri: str, recursive: bool, path_glob: str | None) -> list[FileRef]:
    from pyarrow import fs as pafs
    filesystem, fs_path = pafs.FileSystem.from_uri(uri)
    prefix = uri[: len(uri) - len(fs_path)] if uri.endswith(fs_path) else uri.split("://", 1)[0] + "://"

    def ref(info) -> FileRef:
        return FileRef(prefix + info.path, info.path, info.size, prefix + info.path)

    if any(ch in fs_path for ch in "*?["):
        base = fs_path
        while any(ch in base for ch in "*?["):
            base = base.rsplit("/", 1)[0]
        infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
        refs = [ref(i) for i in infos if i.type == pafs.FileType.File and fnmatch.fnmatchcase(i.path, fs_path)
                and _keep_name(i.path, path_glob)]
        refs = [_listed(r) for r in sorted(refs, key=lambda r: r.name)]
        if not refs:
            raise FileNotFoundError(f"no file matches {uri}")
        return refs
    info = filesystem.get_file_info(fs_path)
    if info.type == pafs.FileType.NotFound:
        raise FileNotFoundError(f"no such file or folder: {uri}")
    if info.type == pafs.FileType.Directory:
        infos = filesystem.get_file_info(pafs.FileSelector(fs_path, recursive=recursive))
        refs = [ref(i) for i in infos if i.type == pafs.FileType.File and _keep_name(i.path, path_glob)]
        return [_listed(r) for r in sorted(refs, key=lambda r: r.name)]
    return [ref(info)]
