"""Writes to the baselines directory: one writer at a time, a whole batch or nothing.

Every writer (``record``, ``fmt``, variants, ``review``'s accept) holds the
writer lock, ``BASELINES/.silo-regress-tmp/lock`` (an ``flock``, so a killed
writer never leaves it held); readers never take it, because each file is
replaced by a rename and is always either old or new. The same hidden directory
holds the batch's temporary files and its journal. Its own ``.gitignore``
(``*``) keeps them out of ``git add baselines/``, and the next writer removes
whatever a killed one left there.

A batch is committed in three steps: stage every new file (fsynced) and a hard
link to every old one, write the journal naming them, then rename the new files
into place with SIGINT and SIGTERM blocked. A signal that arrived meanwhile rolls
the whole batch back before it is delivered; a ``kill -9`` part-way leaves the
journal, and the next writer rolls that batch back before doing anything else.
So a batch is all-or-nothing against anything short of a power cut between two
renames, and even then the journal restores it.

A journal is anyone's file once a clone can carry it (``git add -f``), and a
forged one would make the next writer delete or replace baselines. So a journal
names the machine and the boot it was written in (hostname and the kernel's boot
id), and a random batch token that every staging file of the batch carries in its
name. Hostname and boot id can be copied by anyone who has seen the machine, and a
clone can carry files named with any token, so neither is the proof: the journal
also records the identity (``st_dev``, ``st_ino``) of every file the batch staged,
the new bytes and the hard-linked backups, as the writer saw them when it made
them. Those numbers are handed out by the file system when the file is created; a
file checked out of a clone, or written by anyone else, has others, and nothing
that writes a journal ahead of time can know them. Recovery acts only on a file
that still has the identity the journal recorded for it, and a journal none of
whose staging files is provably there is refused (:class:`ForeignJournalError`)
and left where it is for the user to look at. A power cut is a new boot: that
batch is refused too, with the same sentence, rather than trusted on its say-so.
(Why not an HMAC under a key file: the key would live in the same directory a
clone can fill, or in the user's home where a second checkout or a CI cache
shares it; the inode is made by the kernel and cannot be carried.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from silo_regress.errors import InputError
from silo_regress.system.fsio import (
    TEMP_MARK,
    TEMP_SUFFIX,
    FileError,
    default_mode,
    describe,
    fsync_directory,
    is_temp_name,
    kind_of,
    read_optional,
    stage,
    temp_name,
)

try:
    import fcntl
except ImportError:  # Windows: importing and reading work; only a writer needs flock
    fcntl = None  # type: ignore[assignment]

# The platforms a writer's lock is taken on, named when it cannot be.
SUPPORTED_PLATFORMS = "Linux and macOS"

WORK_DIR = ".silo-regress-tmp"
LOCK_FILE = "lock"
JOURNAL_FILE = "journal.json"
LOCK_WAIT = 10.0  # seconds a writer waits for another to finish before giving up
_SIGNALS = {signal.SIGINT, signal.SIGTERM}

_held: dict[str, int] = {}  # lock path -> depth, so a writer may call another writer
_held_lock = threading.Lock()


class LockHeldError(InputError):
    """Another silo-regress process is writing the same baselines directory."""


class ForeignJournalError(InputError):
    """A journal that is not this machine's own interrupted batch: never followed."""


_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def machine_identity() -> tuple[str, str]:
    """(hostname, boot id) of this machine now; the boot id is "" where the kernel
    does not say (then the hostname alone is the proof, a weaker one)."""
    import socket

    try:
        boot = _BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        boot = ""
    return socket.gethostname(), boot


def containment_problem(root: Path, path: Path, *, project: Path | None = None) -> str | None:
    """Why writing ``path`` would not stay inside the baselines directory ``root``.

    The one rule every writer applies: ``path`` lies under ``root``; no component
    from the project (or ``root``) down to ``path`` is a symbolic link, so nothing
    a clone carries can send a write elsewhere; ``root`` itself is inside the
    project; and ``path`` is absent or a regular file.
    """
    top = project if project is not None else root
    if ".." in root.parts or ".." in path.parts:
        return "the path holds '..'"
    if project is not None and not _is_within(root, project):
        return "the baselines directory lies outside the project"
    if not _is_within(path, root) or path == root:
        return "it lies outside the baselines directory"
    if os.path.islink(root):
        return "the baselines directory is a symbolic link (writes never follow one)"
    current = top
    for part in path.relative_to(top).parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{current} cannot be examined: {exc.strerror or exc}"
        if stat.S_ISLNK(info.st_mode):
            return f"{_shown_part(current, top)} is a symbolic link (writes never follow one)"
        if current == path:
            return None if stat.S_ISREG(info.st_mode) else describe(kind_of(info.st_mode))
        if not stat.S_ISDIR(info.st_mode):
            return f"{_shown_part(current, top)} is not a directory"
    return None


def _shown_part(path: Path, top: Path) -> str:
    return path.relative_to(top).as_posix() if _is_within(path, top) and path != top else str(path)


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


# --- the work directory and the lock ----------------------------------------------


def work_dir(root: Path) -> Path:
    return root / WORK_DIR


def _ensure_work_dir(root: Path, *, shown: str) -> Path:
    work = work_dir(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        work.mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(f"{shown}/{WORK_DIR}: cannot create: {exc.strerror or exc}") from None
    info = os.lstat(work)
    if not stat.S_ISDIR(info.st_mode):
        raise InputError(
            f"{shown}/{WORK_DIR}: {describe(kind_of(info.st_mode))}; silo-regress keeps its "
            "lock and temporary files in this directory, so remove it"
        )
    ignore = work / ".gitignore"
    if not os.path.lexists(ignore):
        # Ignoring "*" ignores this .gitignore too: nothing in here is ever staged.
        with contextlib.suppress(InputError, OSError):
            temp = stage(work, temp_name(".gitignore"), b"*\n", mode=default_mode(), shown=shown)
            os.replace(temp, ignore)
    return work


@dataclass(frozen=True)
class Holder:
    pid: int
    command: str
    since: str


@contextlib.contextmanager
def writer_lock(
    root: Path, *, command: str, shown: str = "baselines", wait: float = LOCK_WAIT
) -> Iterator[None]:
    """Hold the baselines writer lock; re-entrant within one process.

    On taking it, roll back a batch a killed writer left half done and remove
    stale temporary files; on leaving, remove the work directory again, so a
    finished writer leaves nothing but baselines. Raises :class:`LockHeldError`
    naming the holder when another process keeps it longer than ``wait`` seconds.
    """
    lock_path = work_dir(root) / LOCK_FILE
    key = str(lock_path)
    with _held_lock:
        depth = _held.get(key, 0)
        _held[key] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _held_lock:
                _held[key] -= 1
        return
    try:
        fd = _acquire(root, command=command, shown=shown, wait=wait)
    except BaseException:
        with _held_lock:
            del _held[key]
        raise
    try:
        recover(root, shown=shown)
        sweep(root)
        yield
    finally:
        with _held_lock:
            del _held[key]
        _tidy(root)
        os.close(fd)  # closing releases the flock


def _acquire(root: Path, *, command: str, shown: str, wait: float) -> int:
    """Open and flock the lock file, and make sure it is still the one at its path.

    The last writer removes the lock file while holding it; a process that was
    waiting on the removed file then holds a lock nobody else sees, so it checks
    the inode after locking and starts again when the file was replaced.
    """
    lock_path = work_dir(root) / LOCK_FILE
    label = f"{shown}/{WORK_DIR}/{LOCK_FILE}"
    if fcntl is None:  # before anything is created: the baselines stay as they are
        raise InputError(
            f"{label}: cannot take the writer lock: this platform has no flock "
            f"(fcntl); silo-regress writes baselines on {SUPPORTED_PLATFORMS}"
        )
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    deadline = time.monotonic() + wait
    while True:
        _ensure_work_dir(root, shown=shown)
        try:
            fd = os.open(lock_path, flags, 0o666 & ~_umask())
        except FileNotFoundError:
            continue  # the work directory was removed by the writer before us
        except OSError as exc:
            raise InputError(
                f"{label}: cannot open the writer lock: {exc.strerror or exc}"
            ) from None
        try:
            _lock(fd, lock_path, label=label, deadline=deadline, wait=wait)
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.path.samestat(os.fstat(fd), os.lstat(lock_path))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)
    record = {
        "pid": os.getpid(),
        "command": command,
        "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode() + b"\n", 0)
    return fd


def _lock(fd: int, lock_path: Path, *, label: str, deadline: float, wait: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockHeldError(_held_message(label, read_holder(lock_path), wait)) from None
            time.sleep(0.05)
        except OSError as exc:
            raise InputError(f"{label}: cannot take the writer lock: {exc.strerror}") from None


def _tidy(root: Path) -> None:
    """Remove the work directory, lock included, unless a journal must stay for recovery."""
    work = work_dir(root)
    if os.path.lexists(work / JOURNAL_FILE):
        return
    sweep(root)
    # The .gitignore goes last: a kill between the two unlinks must not leave a
    # lock file that nothing ignores, which `git add baselines` would stage.
    for name in (LOCK_FILE, ".gitignore"):
        with contextlib.suppress(OSError):
            os.unlink(work / name)
    with contextlib.suppress(OSError):
        os.rmdir(work)


def _umask() -> int:
    return 0o666 & ~default_mode()


def read_holder(lock_path: Path) -> Holder | None:
    """Who holds the lock, as its holder wrote it (None when unknown)."""
    try:
        data = read_optional(lock_path, shown=str(lock_path), limit=4096, follow=False)
        record = json.loads(data or b"null")
        return Holder(int(record["pid"]), str(record["command"]), str(record["since"]))
    except (InputError, ValueError, TypeError, KeyError):
        return None


def _held_message(shown: str, holder: Holder | None, wait: float) -> str:
    who = (
        f"silo-regress {holder.command} (pid {holder.pid}, since {holder.since})"
        if holder is not None
        else "another silo-regress process"
    )
    return (
        f"{shown}: {who} is writing these baselines; waited {wait:g} s. "
        "Run one writer (record, fmt, accept) at a time"
    )


def sweep(root: Path) -> int:
    """Remove temporary files a killed writer left; call only with the lock held."""
    removed = 0
    work = work_dir(root)
    with contextlib.suppress(OSError), os.scandir(work) as entries:
        for entry in entries:
            if is_temp_name(entry.name) or entry.name.endswith(".old"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed += 1
    # Temporary files of 0.1 (".NAME.XXXX.tmp" beside the baseline) are swept too.
    for directory in (root, *_subdirectories(root)):
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        if entry.is_file(follow_symlinks=False):
                            os.unlink(entry.path)
                            removed += 1
    return removed


def _subdirectories(root: Path) -> list[Path]:
    found = []
    with contextlib.suppress(OSError), os.scandir(root) as entries:
        for entry in entries:
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                found.append(Path(entry.path))
    return found


# --- the batch ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    target: Path
    temp: Path | None  # None: the batch removes ``target`` (its backup keeps the bytes)
    backup: Path | None  # a hard link to the old file; None when there was none
    inode: tuple[int, int]  # (st_dev, st_ino) of the staged file, to know it later
    digest: str | None  # SHA-256 of the new bytes, for recovery after a kill; None: removed
    backup_inode: tuple[int, int] = (0, 0)  # (st_dev, st_ino) of ``backup`` as staged


def commit(
    root: Path,
    files: Sequence[tuple[Path, bytes]],
    *,
    shown: Callable[[Path], str],
    project: Path | None = None,
    command: str = "record",
    removals: Sequence[Path] = (),
) -> None:
    """Write every file of the batch and remove every one of ``removals``, or (on any
    failure or signal) none of them. A removed file's bytes stay in the journal's
    backup until the batch is committed, so a rollback puts it back."""
    if not files and not removals:
        return
    for path in [*(path for path, _ in files), *removals]:
        problem = containment_problem(root, path, project=project)
        if problem is not None:
            raise FileError(f"{shown(path)}: refused: {problem}")
    import secrets

    token = secrets.token_hex(16)
    with writer_lock(root, command=command, shown=shown(root)):
        entries = _stage_all(root, files, token=token, shown=shown)
        try:
            entries += _stage_removals(root, removals, token=token, shown=shown)
        except BaseException:
            _discard(root, entries)
            raise
        try:
            _journal(root, entries, token=token, shown=f"{shown(root)}/{WORK_DIR}/{JOURNAL_FILE}")
            _rename_all(root, entries, shown=shown)
        except BaseException:
            _discard(root, entries)
            raise
        _forget(root, entries)


def _staging_name(target: str, token: str) -> str:
    """A staging file's name: a temporary name (swept like any) carrying the batch token."""
    return f".{target}{TEMP_MARK}{token}-{os.urandom(4).hex()}{TEMP_SUFFIX}"


def _backup_name(target: str, token: str) -> str:
    return f"{_staging_name(target, token)[: -len(TEMP_SUFFIX)]}.old"


def _identity(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return (info.st_dev, info.st_ino)


def _stage_all(
    root: Path, files: Sequence[tuple[Path, bytes]], *, token: str, shown: Callable[[Path], str]
) -> list[_Entry]:
    work = work_dir(root)
    entries: list[_Entry] = []
    try:
        for path, data in files:
            if not path.parent.is_dir():
                try:
                    _make_dirs(root, path.parent)
                except OSError as exc:
                    raise FileError(f"{shown(path)}: cannot write: {exc.strerror}") from None
                except FileError:
                    raise FileError(
                        f"{shown(path.parent)}: not a directory (or a symbolic link)"
                    ) from None
            old_mode = _old_mode(path, shown=shown(path))
            mode = old_mode if old_mode is not None else default_mode()
            temp = stage(work, _staging_name(path.name, token), data, mode=mode, shown=shown(path))
            info = os.stat(temp)
            backup = None
            backup_inode = (0, 0)
            if old_mode is not None:
                backup = work / f"{temp.name[: -len(TEMP_SUFFIX)]}.old"
                backup_inode = _back_up(path, backup, mode=old_mode, shown=shown(path))
            entries.append(
                _Entry(
                    target=path,
                    temp=temp,
                    backup=backup,
                    inode=(info.st_dev, info.st_ino),
                    digest=hashlib.sha256(data).hexdigest(),
                    backup_inode=backup_inode,
                )
            )
    except BaseException:
        _discard(root, entries)
        raise
    return entries


def _back_up(path: Path, backup: Path, *, mode: int, shown: str) -> tuple[int, int]:
    """Keep the old file at ``backup`` (a hard link, else a copy); its identity."""
    try:
        os.link(path, backup)
    except OSError:
        # No hard links here (some FUSE file systems): keep a copy instead.
        old = read_optional(path, shown=shown, follow=False)
        stage(backup.parent, backup.name, old or b"", mode=mode, shown=shown)
    return _identity(backup)


def _stage_removals(
    root: Path, removals: Sequence[Path], *, token: str, shown: Callable[[Path], str]
) -> list[_Entry]:
    """A backup (hard link, else a copy) of each file to remove; nothing is removed yet."""
    work = work_dir(root)
    entries: list[_Entry] = []
    try:
        for path in dict.fromkeys(removals):
            old_mode = _old_mode(path, shown=shown(path))
            if old_mode is None:
                continue  # already gone: nothing to remove, nothing to put back
            backup = work / _backup_name(path.name, token)
            backup_inode = _back_up(path, backup, mode=old_mode, shown=shown(path))
            entries.append(
                _Entry(
                    target=path,
                    temp=None,
                    backup=backup,
                    inode=(0, 0),
                    digest=None,
                    backup_inode=backup_inode,
                )
            )
    except BaseException:
        _discard(root, entries)
        raise
    return entries


def _make_dirs(root: Path, directory: Path) -> None:
    """Create the environment directory (containment was checked: it is under root)."""
    root.mkdir(parents=True, exist_ok=True)
    current = root
    for part in directory.relative_to(root).parts:
        current = current / part
        with contextlib.suppress(FileExistsError):
            current.mkdir()
        if os.path.islink(current) or not current.is_dir():
            raise FileError(f"{current}: not a directory (or a symbolic link)")


def _old_mode(path: Path, *, shown: str) -> int | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileError(f"{shown}: cannot write: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = kind_of(info.st_mode)
        raise FileError(f"{shown}: {describe(kind)}, so it is not replaced", kind=kind)
    return stat.S_IMODE(info.st_mode)


def _journal(root: Path, entries: Sequence[_Entry], *, token: str, shown: str) -> None:
    work = work_dir(root)
    host, boot = machine_identity()
    document = {
        "batch": token,
        "host": host,
        "boot": boot,
        "pid": os.getpid(),
        "entries": [
            {
                "target": str(e.target.relative_to(root)),
                "temp": e.temp.name if e.temp is not None else None,
                "staged": list(e.inode) if e.temp is not None else None,
                "backup": e.backup.name if e.backup is not None else None,
                "backupStaged": list(e.backup_inode) if e.backup is not None else None,
                "sha256": e.digest,
            }
            for e in entries
        ],
    }
    data = json.dumps(document, indent=0).encode()
    temp = stage(work, temp_name(JOURNAL_FILE), data, mode=0o644, shown=shown)
    try:
        os.replace(temp, work / JOURNAL_FILE)
    except OSError as exc:
        raise FileError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    fsync_directory(work)


@contextlib.contextmanager
def _signals_held() -> Iterator[Callable[[], bool]]:
    """Block SIGINT and SIGTERM; yield a probe telling whether one is waiting."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    # A signal the process ignores (SIGINT in a job started with `&`) is still
    # queued while blocked, but lifting the mask discards it: it must not undo a
    # batch the command then reports as written.
    heeded = {s for s in _SIGNALS if signal.getsignal(s) is not signal.SIG_IGN}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield lambda: bool(signal.sigpending() & heeded)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _rename_all(root: Path, entries: Sequence[_Entry], *, shown: Callable[[Path], str]) -> None:
    with _signals_held() as interrupted:
        current = root
        try:
            for entry in entries:
                current = entry.target
                if entry.temp is None:
                    os.unlink(entry.target)
                else:
                    os.replace(entry.temp, entry.target)
            for directory in dict.fromkeys(e.target.parent for e in entries):
                fsync_directory(directory)
        except BaseException as exc:
            _roll_back(entries)
            if isinstance(exc, OSError):
                raise FileError(
                    f"{shown(current)}: cannot write: {exc.strerror or exc}; "
                    "no baseline was changed"
                ) from None
            raise
        if interrupted():
            # Delivered when the mask is lifted, after this: the batch is undone first.
            _roll_back(entries)


def _roll_back(entries: Sequence[_Entry]) -> None:
    """Put back every file of the batch that holds the staged bytes; the rest are old."""
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.temp is None:  # a removal: put the file back if it is gone
                if entry.backup is not None and not os.path.lexists(entry.target):
                    os.replace(entry.backup, entry.target)
                continue
            info = os.lstat(entry.target)
            if (info.st_dev, info.st_ino) != entry.inode:
                continue
            if entry.backup is not None:
                os.replace(entry.backup, entry.target)
            else:
                os.unlink(entry.target)
    with contextlib.suppress(OSError):
        for directory in dict.fromkeys(e.target.parent for e in entries):
            fsync_directory(directory)


def _discard(root: Path, entries: Sequence[_Entry]) -> None:
    for entry in entries:
        for path in (entry.temp, entry.backup):
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)
    with contextlib.suppress(OSError):
        os.unlink(work_dir(root) / JOURNAL_FILE)


def _forget(root: Path, entries: Sequence[_Entry]) -> None:
    """The commit point: once the journal is gone the batch stays."""
    with contextlib.suppress(OSError):
        os.unlink(work_dir(root) / JOURNAL_FILE)
    fsync_directory(work_dir(root))
    for entry in entries:
        if entry.backup is not None:
            with contextlib.suppress(OSError):
                os.unlink(entry.backup)


@dataclass(frozen=True)
class _Recorded:
    """One entry of a journal as read back: what the batch did to ``target`` and the
    identity (st_dev, st_ino) of each staging file when the writer made it."""

    target: Path
    digest: str | None  # SHA-256 of the new bytes; None: the batch removed ``target``
    temp: Path | None
    staged: tuple[int, int] | None
    backup: Path | None
    backup_staged: tuple[int, int] | None


def recover(root: Path, *, shown: str = "baselines") -> int:
    """Roll back the batch a killed writer left half renamed; the number of files put back.

    Only this machine's own batch (:func:`_own_entries`) is followed, and of it only
    files that still are the very files the batch staged (same identity, same bytes):
    a file someone changed or replaced since is theirs. Raises
    :class:`ForeignJournalError` for any other journal, and for one none of whose
    staging files is provably there while it names files that exist.
    """
    work = work_dir(root)
    path = work / JOURNAL_FILE
    label = f"{shown}/{WORK_DIR}/{JOURNAL_FILE}"
    if not os.path.lexists(path):
        return 0
    entries = _own_entries(root, path, label=label)
    if not any(_proven(e) for e in entries) and any(_touches(e) for e in entries):
        raise _foreign(
            label,
            "none of the staging files it names is a file this writer made (a journal "
            "records each one's file identity, and these differ or are missing)",
        )
    restored = 0
    for entry in entries:
        with contextlib.suppress(OSError, InputError):
            restored += _roll_back_one(entry)
    with contextlib.suppress(OSError):
        os.unlink(path)
    return restored


def _roll_back_one(entry: _Recorded) -> int:
    target, backup = entry.target, entry.backup
    backup_ours = backup is not None and _is_identity(backup, entry.backup_staged)
    if entry.digest is None:  # a removal: its file goes back only if it is still gone
        if backup is not None and backup_ours and not os.path.lexists(target):
            os.replace(backup, target)
            return 1
        return 0
    if not _is_identity(target, entry.staged):
        return 0  # never renamed into place, or replaced since: not the batch's file
    current = read_optional(target, shown=str(target), follow=False)
    if current is None or hashlib.sha256(current).hexdigest() != entry.digest:
        return 0
    if backup is None:
        os.unlink(target)
        return 1
    if backup_ours:
        os.replace(backup, target)
        return 1
    return 0


def _is_identity(path: Path, identity: tuple[int, int] | None) -> bool:
    if identity is None:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) == identity


def _proven(entry: _Recorded) -> bool:
    """Whether a file this entry's batch staged is still there, as the writer made it
    (a backup already put back counts: a recovery killed part-way is resumed)."""
    return any(
        _is_identity(where, identity)
        for where, identity in (
            (entry.target, entry.staged),
            (entry.target, entry.backup_staged),
            (entry.temp, entry.staged),
            (entry.backup, entry.backup_staged),
        )
        if where is not None
    )


def _touches(entry: _Recorded) -> bool:
    return any(
        os.path.lexists(where) for where in (entry.target, entry.backup) if where is not None
    )


def _own_entries(root: Path, path: Path, *, label: str) -> list[_Recorded]:
    """The entries a journal names, when it is this machine's own interrupted batch by
    its host, boot and token, and names nothing but baselines and staging files that
    carry its token. Whether those files are the ones the batch made is
    :func:`_proven`'s question."""
    try:
        data = read_optional(path, shown=label, follow=False, limit=1 << 24)
        document = json.loads(data or b"null")
    except (InputError, ValueError, RecursionError):
        raise _foreign(label, "it is not a journal silo-regress can read") from None
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise _foreign(label, "it is not a journal this silo-regress writes")
    host, boot = machine_identity()
    if document.get("host") != host:
        raise _foreign(label, f"it was written on host {document.get('host')!r}, not {host!r}")
    token = document.get("batch")
    if document.get("boot") != boot or not isinstance(token, str):
        raise _foreign(label, "it was written before this machine last started (or elsewhere)")
    if len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        raise _foreign(label, "its batch token is not one this silo-regress makes")
    work = work_dir(root)
    found: list[_Recorded] = []
    for n, item in enumerate(document["entries"]):
        if not isinstance(item, dict):
            raise _foreign(label, f"entry {n} names no target and digest")
        target_text, digest, backup = item.get("target"), item.get("sha256"), item.get("backup")
        removal = digest is None and backup is not None
        if not isinstance(target_text, str) or not (isinstance(digest, str) or removal):
            raise _foreign(label, f"entry {n} names no target and digest")
        target = root / target_text
        if Path(target_text).is_absolute() or containment_problem(root, target) is not None:
            raise _foreign(label, f"entry {n} names a file outside the baselines directory")
        temp = _staging_file(item.get("temp"), token=token, suffix=TEMP_SUFFIX)
        backup_file = _staging_file(backup, token=token, suffix=".old")
        if temp is False or backup_file is False:
            raise _foreign(label, f"entry {n} names a staging file that is not this batch's")
        found.append(
            _Recorded(
                target=target,
                digest=digest if isinstance(digest, str) else None,
                temp=work / temp if isinstance(temp, str) else None,
                staged=_identity_of(item.get("staged")),
                backup=work / backup_file if isinstance(backup_file, str) else None,
                backup_staged=_identity_of(item.get("backupStaged")),
            )
        )
    return found


def _staging_file(name: object, *, token: str, suffix: str) -> str | bool | None:
    """``name`` when it is one of the batch's staging files in the work directory (its
    token in the name, never a path), None when absent, False when anything else."""
    if name is None:
        return None
    if (
        not isinstance(name, str)
        or "/" in name
        or "\\" in name
        or not name.startswith(".")
        or not name.endswith(suffix)
        or f"{TEMP_MARK}{token}-" not in name
    ):
        return False
    return name


def _identity_of(value: object) -> tuple[int, int] | None:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return (value[0], value[1])
    return None


def _foreign(label: str, why: str) -> ForeignJournalError:
    return ForeignJournalError(
        f"{label}: refused: {why}, so it is not this machine's own interrupted batch; "
        "it was neither followed nor removed. Nothing is written until it is gone: look "
        "at it, and if no silo-regress was killed here, remove the directory (and "
        "`git rm -r --cached` it if a commit carried it)"
    )
