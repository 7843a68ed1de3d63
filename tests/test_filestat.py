"""read_regular: a regular file is read whole with its stat key; anything else is refused
without blocking or reading without end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from silo_regress.filestat import NotRegularFileError, read_regular, stat_key


def test_a_regular_file_and_its_stat_key(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(b'{"a": 1}\n')
    data, key = read_regular(str(path), limit=100)
    assert data == b'{"a": 1}\n'
    assert key == stat_key(path.stat())
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(str(tmp_path / "empty"), limit=1)[0] == b""


def test_a_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"x" * 10)
    (tmp_path / "link").symlink_to("target")
    assert read_regular(str(tmp_path / "link"), limit=10)[0] == b"x" * 10


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegularFileError, match="is a FIFO"):
        read_regular(str(tmp_path / "fifo"), limit=1 << 20)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_a_device_is_refused_without_reading(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(NotRegularFileError, match="is a device"):
        read_regular(str(tmp_path / "zero"), limit=1 << 20)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="is a directory"):
        read_regular(str(tmp_path), limit=1 << 20)


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(NotRegularFileError, match="over the limit of 100"):
        read_regular(str(tmp_path / "big"), limit=100)
    assert len(read_regular(str(tmp_path / "big"), limit=101)[0]) == 101


def test_a_symlink_loop_and_a_missing_file_raise_their_os_errors(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError) as raised:
        read_regular(str(tmp_path / "loop" / "run.json"), limit=100)
    assert not isinstance(raised.value, NotRegularFileError)
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "nothing"), limit=100)
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        read_regular(str(tmp_path / "file" / "run.json"), limit=100)
