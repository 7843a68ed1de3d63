"""Safe file access for files that other programs wrote and other people control.

Runs, baselines and reports come from clones, CI caches and agents: any of them
can be a FIFO (a read that never returns), a device (``/dev/zero`` reads for
ever), a symbolic link out of the project, or a directory. Every read of a file
that should be regular goes through :func:`read_regular`: it opens without
blocking, checks with ``fstat`` that it got a regular file and reads at most
``limit`` bytes. Every write goes through :func:`write_atomic` (temporary file in
the same directory, fsync, rename) or, for ``--output``, :func:`write_output`,
which streams into a FIFO or character device instead of replacing it.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import stat
import time
from pathlib import Path

from silo_regress.errors import InputError

# No artifact, baseline or report comes near this; /proc files, which stat as
# regular files of size 0, and files growing while read stop here.
READ_LIMIT = 1 << 30
# `mkfifo f; reader f & silo-regress check --output f`: the reader may open it a
# moment after us. Longer than this, nobody is coming: an error, not a hang.
READER_WAIT = 2.0
TEMP_MARK = ".silo-regress-"  # every temporary file the tool makes has this in its name
TEMP_SUFFIX = ".tmp"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_READ_FLAGS = os.O_RDONLY | _NONBLOCK | _NOCTTY | _CLOEXEC
_READ_FLAGS_NOFOLLOW = _READ_FLAGS | _NOFOLLOW

# What says a file changed without reading it: mtime_ns, ctime_ns, size, inode.
StatKey = tuple[int, int, int, int]


class FileKind(enum.StrEnum):
    REGULAR = "regular file"
    DIRECTORY = "directory"
    SYMLINK = "symbolic link"
    FIFO = "FIFO"
    CHAR_DEVICE = "character device"
    BLOCK_DEVICE = "block device"
    SOCKET = "socket"
    OTHER = "special file"


def kind_of(mode: int) -> FileKind:
    """What a ``st_mode`` describes."""
    checks = (
        (stat.S_ISREG, FileKind.REGULAR),
        (stat.S_ISDIR, FileKind.DIRECTORY),
        (stat.S_ISLNK, FileKind.SYMLINK),
        (stat.S_ISFIFO, FileKind.FIFO),
        (stat.S_ISCHR, FileKind.CHAR_DEVICE),
        (stat.S_ISBLK, FileKind.BLOCK_DEVICE),
        (stat.S_ISSOCK, FileKind.SOCKET),
    )
    for test, kind in checks:
        if test(mode):
            return kind
    return FileKind.OTHER


class FileError(InputError):
    """A file that cannot be used as a regular file; ``kind`` says what it is instead.

    ``kind`` is None when the file is regular (or absent) but could not be read:
    permission denied, too large, an I/O error. Callers that owe the user a
    verdict (``check``) turn this into one; others let it end the command.
    """

    def __init__(
        self, message: str, *, kind: FileKind | None = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        # Why, without the file's name, for callers that word the name themselves:
        # "is a FIFO, not a regular file" when ``kind`` is set, else the cause alone.
        self.reason = message if reason is None else reason


def stat_key(info: os.stat_result) -> StatKey:
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def describe(kind: FileKind) -> str:
    article = "an" if kind.value[0] in "aeiou" else "a"
    return f"is {article} {kind.value}, not a regular file"


def read_regular(
    path: str | os.PathLike[str],
    *,
    shown: str,
    limit: int = READ_LIMIT,
    follow: bool = True,
) -> bytes:
    """The bytes of the regular file at ``path``, read without ever blocking.

    Raises FileNotFoundError when nothing is there (callers decide what a missing
    file means) and :class:`FileError`, naming the file as ``shown``, for anything
    else: a FIFO, device, socket or directory, a symbolic link when ``follow`` is
    false, a file longer than ``limit``, or a failed read.
    """
    return read_keyed(path, shown=shown, limit=limit, follow=follow)[0]


def read_keyed(
    path: str | os.PathLike[str],
    *,
    shown: str,
    limit: int = READ_LIMIT,
    follow: bool = True,
    dir_fd: int | None = None,
) -> tuple[bytes, StatKey]:
    """:func:`read_regular`, with the file's :data:`StatKey` from the same ``fstat``.

    The run-index cache keys each ``run.json`` by it, so a run is stat'ed once, not twice.
    A relative ``path`` is taken from the directory ``dir_fd`` when it is given.
    """
    try:
        fd = os.open(path, _READ_FLAGS if follow else _READ_FLAGS_NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _open_error(path, shown, exc, follow=follow, dir_fd=dir_fd) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = kind_of(info.st_mode)
            raise FileError(f"{shown}: {describe(kind)}", kind=kind, reason=describe(kind))
        size = info.st_size
        if size > limit:
            why = f"{size} bytes, more than the {limit} read"
            raise FileError(f"{shown}: {why}", reason=why)
        return _read_all(fd, size, shown=shown, limit=limit), stat_key(info)
    finally:
        os.close(fd)


def read_optional(
    path: str | os.PathLike[str], *, shown: str, limit: int = READ_LIMIT, follow: bool = True
) -> bytes | None:
    """:func:`read_regular`, with None for a file that does not exist."""
    try:
        return read_regular(path, shown=shown, limit=limit, follow=follow)
    except FileNotFoundError:
        return None


def _open_error(
    path: str | os.PathLike[str],
    shown: str,
    exc: OSError,
    *,
    follow: bool,
    dir_fd: int | None = None,
) -> FileError:
    if exc.errno == errno.ELOOP:
        if not follow and _is_link(path, dir_fd=dir_fd):
            return _kind_error(shown, FileKind.SYMLINK)
        return _cannot_read(shown, "a loop of symbolic links")
    if exc.errno == errno.EISDIR:
        return _kind_error(shown, FileKind.DIRECTORY)
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket, or a device with no driver
        with contextlib.suppress(OSError):
            return _kind_error(shown, kind_of(os.stat(path, dir_fd=dir_fd).st_mode))
    return _cannot_read(shown, str(exc.strerror or exc))


def _is_link(path: str | os.PathLike[str], *, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _kind_error(shown: str, kind: FileKind) -> FileError:
    return FileError(f"{shown}: {describe(kind)}", kind=kind, reason=describe(kind))


def _cannot_read(shown: str, cause: str) -> FileError:
    return FileError(f"{shown}: cannot read: {cause}", reason=cause)


def _read_all(fd: int, size: int, *, shown: str, limit: int) -> bytes:
    # One read asks for a byte more than fstat said: a regular file that returns
    # fewer bytes than asked for is at its end, so a file that did not grow is read
    # with one system call (two would double the cost of a small artifact). Files
    # that stat as empty (/proc) or grew since are read on, to ``limit``.
    try:
        first = os.read(fd, max(size + 1, 1 << 16) if size == 0 else size + 1)
    except OSError as exc:
        raise _cannot_read(shown, str(exc.strerror or exc)) from None
    if len(first) <= size:
        return first
    chunks = [first]
    total = len(first)
    while True:
        if total > limit:
            why = f"more than the {limit} bytes read (still growing?)"
            raise FileError(f"{shown}: {why}", reason=why)
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError as exc:
            raise _cannot_read(shown, str(exc.strerror or exc)) from None
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


# --- writing ------------------------------------------------------------------


def temp_name(target: str) -> str:
    """A temporary file name the tool owns: hidden, marked, never a baseline name."""
    return f".{target}{TEMP_MARK}{os.urandom(4).hex()}{TEMP_SUFFIX}"


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and TEMP_MARK in name and name.endswith(TEMP_SUFFIX)


def default_mode() -> int:
    umask = os.umask(0o022)  # the only way to read it is to set it
    os.umask(umask)
    return 0o666 & ~umask


def stage(directory: Path, name: str, data: bytes, *, mode: int, shown: str) -> Path:
    """Write ``data`` to a new fsynced file ``directory/name`` (exclusive) and return it.

    The mode is set explicitly: mkstemp's 0600 would hide baselines from everyone
    else on a shared checkout.
    """
    path = directory / name
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        raise FileError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException as exc:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        if isinstance(exc, OSError):
            raise FileError(f"{shown}: cannot write: {exc.strerror or exc}") from None
        raise
    os.close(fd)
    return path


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable; some file systems cannot, which is fine."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(
    path: Path,
    data: bytes,
    *,
    shown: str | None = None,
    make_parents: bool = False,
    follow: bool = True,
    within: Path | None = None,
) -> None:
    """Replace the regular file ``path`` so a reader sees the old bytes or the new, never half.

    A symbolic link stays a link: the file it points to is replaced, unless
    ``follow`` is false, when a link there is refused like anything else that is
    not a regular file (a directory, FIFO, device); a missing parent directory is
    an error unless ``make_parents``. ``follow=False`` is for files in places an
    agent can write (the runs directory): a link planted there never sends the
    write elsewhere, and the final rename replaces a name, never what a link
    swapped in meanwhile points to.

    ``within`` bounds where the write may land once every link on the way is
    followed (the file's own, a dangling one, or a linked parent directory): a
    file a cloned repository links to ``~/.bashrc`` is refused, never appended to.
    """
    shown = shown or str(path)
    if within is not None:
        refuse_outside(path, within=within, shown=shown)
    target = _link_target(path) if follow else path
    try:
        info: os.stat_result | None = os.lstat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise FileError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = kind_of(info.st_mode)
        raise FileError(f"{shown}: {describe(kind)}, so it is not replaced", kind=kind)
    directory = target.parent
    if make_parents and not directory.is_dir():
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FileError(f"{shown}: cannot create its directory: {exc.strerror}") from None
    if not directory.is_dir():
        raise FileError(
            f"{shown}: directory {directory} does not exist (silo-regress creates none here)"
        )
    mode = stat.S_IMODE(info.st_mode) if info is not None else default_mode()
    tmp = stage(directory, temp_name(target.name), data, mode=mode, shown=shown)
    try:
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise FileError(f"{shown}: cannot write: {exc.strerror or exc}") from None
        raise
    fsync_directory(directory)


def refuse_outside(path: Path, *, within: Path, shown: str | None = None) -> None:
    """Raise FileError unless ``path``, its links followed, lies inside ``within``."""
    real = Path(os.path.realpath(path))
    bound = Path(os.path.realpath(within))
    if not real.is_relative_to(bound):
        raise FileError(f"{shown or path}: leads to {real}, outside {within}, so it is not written")


def _link_target(path: Path) -> Path:
    """``path``, or the file a symbolic link at ``path`` finally points to."""
    if os.path.islink(path):
        return Path(os.path.realpath(path))
    return path


def write_output(path: Path, data: bytes, *, shown: str | None = None) -> None:
    """Write a report to ``--output PATH``, whatever the user pointed it at.

    A regular file (or a new one) is replaced atomically, through a symbolic link
    if one is there. A FIFO, a character device (``/dev/stdout``, ``/dev/null``)
    or a path that is this process's own stdout or stderr is written as a stream:
    it is never read, never replaced, and a FIFO nobody reads is an error, not a
    hang. The old content is never read.
    """
    shown = shown or str(path)
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise FileError(f"{shown}: cannot write the report: {exc.strerror or exc}") from None
    if info is not None:
        own = _own_stream(info)
        if own is not None:
            _write_fd(own, data, shown=shown)
            return
        kind = kind_of(info.st_mode)
        if kind in (FileKind.FIFO, FileKind.CHAR_DEVICE):
            _write_stream(path, data, shown=shown)
            return
        if kind is not FileKind.REGULAR:
            raise FileError(f"{shown}: {describe(kind)}, so no report is written there", kind=kind)
    write_atomic(path, data, shown=shown)


def _own_stream(info: os.stat_result) -> int | None:
    """1 or 2 when ``info`` is the file this process's stdout or stderr writes to."""
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            mine = os.fstat(fd)
            if (mine.st_dev, mine.st_ino) == (info.st_dev, info.st_ino):
                return fd
    return None


def _write_stream(path: Path, data: bytes, *, shown: str) -> None:
    flags = os.O_WRONLY | _NONBLOCK | _NOCTTY | _CLOEXEC
    deadline = time.monotonic() + READER_WAIT
    while True:
        try:
            fd = os.open(path, flags)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise FileError(
                    f"{shown}: cannot write the report: {exc.strerror or exc}"
                ) from None
            if time.monotonic() >= deadline:
                raise FileError(
                    f"{shown}: no process is reading this FIFO (waited {READER_WAIT:g} s)"
                ) from None
            time.sleep(0.02)
    try:
        # Non-blocking only for the open (a FIFO with no reader fails instead of
        # waiting for one); a slow reader is then waited for like any pipe.
        os.set_blocking(fd, True)
        _write_fd(fd, data, shown=shown)
    finally:
        os.close(fd)


def _write_fd(fd: int, data: bytes, *, shown: str) -> None:
    if fd in (1, 2):
        import sys

        stream = sys.stdout if fd == 1 else sys.stderr
        with contextlib.suppress(Exception):
            stream.flush()  # keep what was printed before the report in front of it
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise FileError(f"{shown}: cannot write the report: {exc.strerror or exc}") from None
