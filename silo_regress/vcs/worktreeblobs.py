"""Working-tree files that are byte for byte the git objects they are tracked as.

Reading a staged or committed file through ``git cat-file`` costs git about 70 us
a file while its object is loose (one zlib file each, as right after a commit);
the working-tree file costs a few. A file whose bytes hash to the object id git
has for it (git's own ``blob <size>\\0`` hash, SHA-1 or SHA-256) is that object's
content by construction, whatever filters, timestamps or the stat cache say, so
only the others are asked of git.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# A file larger than this is read from git alone: hashing it as well would cost
# more than git's own read.
WORKTREE_LIMIT = 64 << 20
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def worktree_blobs(
    root: Path,
    shas: Mapping[str, str],
    *,
    ask_git: Callable[[Sequence[str]], Sequence[bytes | None]],
) -> list[bytes | None]:
    """The contents of the objects ``shas`` names (path under ``root`` -> object id),
    in that order; ``ask_git`` reads the ones the working tree does not hold."""
    import hashlib  # only the hook and commit reads need it

    found: dict[str, bytes] = {}
    for path, sha in shas.items():
        data = _regular_bytes(root / path)
        if data is None:
            continue
        digest = hashlib.sha256() if len(sha) == 64 else hashlib.sha1(usedforsecurity=False)
        digest.update(b"blob %d\0" % len(data))
        digest.update(data)
        if digest.hexdigest() == sha:
            found[sha] = data
    missing = [sha for sha in shas.values() if sha not in found]
    from_git = dict(zip(missing, ask_git(missing), strict=True))
    return [found[sha] if sha in found else from_git[sha] for sha in shas.values()]


def _regular_bytes(path: Path) -> bytes | None:
    """A regular file's bytes (never through a link, never blocking); None otherwise."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > WORKTREE_LIMIT:
            return None
        return os.read(fd, info.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
