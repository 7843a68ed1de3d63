"""Snapshots of a directory tree, to prove that a command wrote nothing."""

from __future__ import annotations

import os
from pathlib import Path

Entry = tuple[str, bytes | None, int]  # kind ("file", "dir", "link"), bytes, mtime_ns


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (hidden ones too) with its bytes and mtime."""
    state: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path).encode(), info.st_mtime_ns)
            elif path.is_dir():
                state[rel] = ("dir", None, info.st_mtime_ns)
            else:
                state[rel] = ("file", path.read_bytes(), info.st_mtime_ns)
    return state


def temporaries(root: Path) -> list[str]:
    """Leftover temporary files of an atomic write (``.NAME.XXXX.tmp``)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.tmp"))
