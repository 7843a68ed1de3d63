"""fsio.read_keyed: a regular file is read whole, in one read, with the stat key of the
same fstat; anything else is refused without blocking or reading without end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from silo_regress.system.fsio import FileError, FileKind, read_keyed, stat_key


def test_a_regular_file_and_its_stat_key(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(b'{"a": 1}\n')
    data, key = read_keyed(str(path), shown="run.json", limit=100)
    assert data == b'{"a": 1}\n'
    assert key == stat_key(path.stat())
    (tmp_path / "empty").write_bytes(b"")
    assert read_keyed(str(tmp_path / "empty"), shown="empty", limit=1)[0] == b""


def test_a_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"x" * 10)
    (tmp_path / "link").symlink_to("target")
    assert read_keyed(str(tmp_path / "link"), shown="link", limit=10)[0] == b"x" * 10


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(FileError) as raised:
        read_keyed(str(tmp_path / "fifo"), shown="fifo", limit=1 << 20)
    assert raised.value.kind is FileKind.FIFO
    assert raised.value.reason == "is a FIFO, not a regular file"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_a_device_is_refused_without_reading(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(FileError, match="zero: is a character device, not a regular file"):
        read_keyed(str(tmp_path / "zero"), shown="zero", limit=1 << 20)


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(FileError) as raised:
        read_keyed(str(tmp_path / "big"), shown="big", limit=100)
    assert raised.value.kind is None
    assert raised.value.reason == "101 bytes, more than the 100 read"
    assert len(read_keyed(str(tmp_path / "big"), shown="big", limit=101)[0]) == 101


def test_a_file_that_stats_empty_is_still_read_to_its_end() -> None:
    # /proc files stat as size 0: the one-read fast path must not take that as the end.
    path = "/proc/self/status"
    if not os.path.exists(path):
        pytest.skip("needs /proc")
    data, key = read_keyed(path, shown=path, limit=1 << 20)
    assert key[2] == 0 and b"Name:" in data and data.endswith(b"\n")


def test_a_loop_a_missing_file_and_a_file_as_directory(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(FileError) as raised:
        read_keyed(str(tmp_path / "loop" / "run.json"), shown="run.json", limit=100)
    assert raised.value.kind is None and raised.value.reason == "a loop of symbolic links"
    with pytest.raises(FileNotFoundError):
        read_keyed(str(tmp_path / "nothing"), shown="nothing", limit=100)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(FileError, match="cannot read: Not a directory"):
        read_keyed(str(tmp_path / "file" / "run.json"), shown="run.json", limit=100)
