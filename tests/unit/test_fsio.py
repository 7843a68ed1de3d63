"""system/fsio.py's writes: write_atomic replaces a regular file and nothing else.

A target that is a FIFO, a device, a directory or a socket (directly or behind a
symbolic link) is refused with a FileError naming what it is, and left exactly as it
was, with no temporary file beside it. A regular file keeps its mode; a link stays a link.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from silo_regress.errors import ExitCode
from silo_regress.system.fsio import (
    FileError,
    FileKind,
    is_temp_name,
    read_regular,
    write_atomic,
    write_output,
)


def _fifo(path: Path) -> FileKind:
    os.mkfifo(path)
    return FileKind.FIFO


def _directory(path: Path) -> FileKind:
    path.mkdir()
    (path / "inside").write_bytes(b"kept\n")
    return FileKind.DIRECTORY


def _device_link(path: Path) -> FileKind:
    path.symlink_to("/dev/null")
    return FileKind.CHAR_DEVICE


def _fifo_link(path: Path) -> FileKind:
    os.mkfifo(path.with_name("real-fifo"))
    path.symlink_to("real-fifo")
    return FileKind.FIFO


@pytest.fixture
def bound_socket(tmp_path: Path) -> Iterator[Callable[[Path], FileKind]]:
    sockets: list[socket.socket] = []

    def make(path: Path) -> FileKind:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        sockets.append(server)
        return FileKind.SOCKET

    yield make
    for server in sockets:
        server.close()


@pytest.fixture
def room(tmp_path: Path) -> Path:
    """A directory of the test's own (tmp_path also holds the isolated HOME)."""
    path = tmp_path / "room"
    path.mkdir()
    return path


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """What lstat says of every entry: its type and inode (a replaced file is a new inode)."""
    return {p.name: (stat.S_IFMT(p.lstat().st_mode), p.lstat().st_ino) for p in directory.iterdir()}


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
needs_dev_null = pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_fifo, marks=needs_fifo, id="fifo"),
        pytest.param(_directory, id="directory"),
        pytest.param(_device_link, marks=needs_dev_null, id="link-to-device"),
        pytest.param(_fifo_link, marks=needs_fifo, id="link-to-fifo"),
    ],
)
def test_write_atomic_refuses_what_is_not_a_regular_file_and_leaves_it(
    room: Path, make: Callable[[Path], FileKind]
) -> None:
    target = room / "target.json"
    kind = make(target)
    before = _snapshot(room)
    with pytest.raises(FileError) as refused:
        write_atomic(target, b"new\n", shown="baselines/target.json")
    assert refused.value.kind is kind
    assert refused.value.exit_code == ExitCode.BAD_INPUT
    assert refused.value.message == (
        f"baselines/target.json: is {'an' if kind.value[0] in 'aeiou' else 'a'} {kind.value}, "
        "not a regular file, so it is not replaced"
    )
    assert _snapshot(room) == before  # same entries, same kinds, same inodes
    assert not any(is_temp_name(p.name) for p in room.iterdir())
    if kind is FileKind.DIRECTORY:
        assert (target / "inside").read_bytes() == b"kept\n"


def test_write_atomic_refuses_a_socket(
    tmp_path: Path, bound_socket: Callable[[Path], FileKind]
) -> None:
    target = tmp_path / "s"
    bound_socket(target)
    with pytest.raises(FileError) as refused:
        write_atomic(target, b"x")
    assert refused.value.kind is FileKind.SOCKET
    assert stat.S_ISSOCK(target.lstat().st_mode)


def test_write_atomic_replaces_a_regular_file_keeping_its_mode(room: Path) -> None:
    target = room / "t.json"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    inode = target.stat().st_ino
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # replaced by rename, never rewritten in place
    assert [p.name for p in room.iterdir()] == ["t.json"]


def test_write_atomic_through_a_link_replaces_the_file_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    write_atomic(link, b"new\n")
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert real.read_bytes() == b"new\n"


def test_write_atomic_makes_no_directory_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "t.json"
    with pytest.raises(FileError, match=r"directory .*/a/b does not exist"):
        write_atomic(target, b"x")
    assert not (tmp_path / "a").exists()
    write_atomic(target, b"x", make_parents=True)
    assert target.read_bytes() == b"x"
    new = tmp_path / "fresh.json"
    write_atomic(new, b"y")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask


def test_write_output_refuses_a_directory_and_a_socket(
    tmp_path: Path, bound_socket: Callable[[Path], FileKind]
) -> None:
    with pytest.raises(FileError) as directory:
        write_output(tmp_path, b"x")
    assert directory.value.kind is FileKind.DIRECTORY
    target = tmp_path / "s"
    bound_socket(target)
    with pytest.raises(FileError, match="is a socket, not a regular file, so no report"):
        write_output(target, b"x")


@needs_fifo
def test_read_regular_names_a_fifo_and_a_directory(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match=r"^shown: is a FIFO, not a regular file$") as caught:
        read_regular(fifo, shown="shown")
    assert caught.value.kind is FileKind.FIFO
    with pytest.raises(FileError) as directory:
        read_regular(tmp_path, shown="d")
    assert directory.value.kind is FileKind.DIRECTORY
    assert directory.value.reason == "is a directory, not a regular file"


def test_write_atomic_within_refuses_every_way_out(tmp_path: Path) -> None:
    """A dangling link, a link to a file and a linked parent directory all lead out of
    ``within``: none is written, nothing is created there, and the message names both."""
    inside, outside = tmp_path / "repo", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (outside / "kept").write_bytes(b"old")
    (inside / "dangling").symlink_to(outside / "made")
    (inside / "linked").symlink_to(outside / "kept")
    (inside / "dir").symlink_to(outside)
    for name in ("dangling", "linked", "dir/new"):
        with pytest.raises(FileError, match=f"outside {inside}, so it is not written"):
            write_atomic(inside / name, b"new", within=inside)
    assert sorted(p.name for p in outside.iterdir()) == ["kept"]
    assert (outside / "kept").read_bytes() == b"old"
    (inside / "ok").symlink_to(inside / "real")
    write_atomic(inside / "ok", b"new", within=inside)
    assert (inside / "real").read_bytes() == b"new" and (inside / "ok").is_symlink()
