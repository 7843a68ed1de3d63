"""Read a file that must be a regular file: one open, one fstat, one read, never a hang.

Run directories are written by another program and may hold anything: a FIFO named
``result.json`` would block a plain ``open().read()`` for ever, and a link to
``/dev/zero`` would read until memory ran out. Opening with ``O_NONBLOCK`` never
blocks, and the ``fstat`` of the open descriptor says what the name really is before
a byte is read. The same ``fstat`` gives the file's stat key (mtime, ctime, size,
inode), so a ``run.json`` read for the run-index cache is stat'ed once, not twice.

``os.open``/``os.read`` rather than ``open()``: no buffered file object is built for
a file read whole, which halves the cost of reading a small file.
"""

from __future__ import annotations

import os
import stat

StatKey = tuple[int, int, int, int]  # mtime_ns, ctime_ns, size, inode

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class NotRegularFileError(OSError):
    """The name is a directory, FIFO, device or socket, or the file is over the limit."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def read_regular(path: str, *, limit: int) -> tuple[bytes, StatKey]:
    """The bytes of the regular file at ``path`` (symlinks followed) and its stat key.

    Raises :class:`NotRegularFileError` for anything but a regular file of at most
    ``limit`` bytes, and the usual :class:`OSError` subclasses when it cannot be
    opened (FileNotFoundError, PermissionError, NotADirectoryError, ...).
    """
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(f"is {_kind(st.st_mode)}, not a regular file")
        size = st.st_size
        if size > limit:
            raise NotRegularFileError(f"is {size} bytes, over the limit of {limit}")
        data = os.read(fd, size + 1)
        if len(data) > size:  # it grew since the fstat: read on, bounded
            parts = [data]
            total = len(data)
            while chunk := os.read(fd, _CHUNK):
                total += len(chunk)
                if total > limit:
                    raise NotRegularFileError(f"grew past the limit of {limit} bytes while read")
                parts.append(chunk)
            data = b"".join(parts)
    finally:
        os.close(fd)
    return data, (st.st_mtime_ns, st.st_ctime_ns, size, st.st_ino)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"
