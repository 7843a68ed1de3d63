"""Commits on a first-parent line, and temporary detached worktrees to run them in.

Plain ``git`` processes (no GitPython): bisect checks out each commit it tests in a
worktree of its own under the system's temporary directory, never in the user's
working tree or index, and removes it (and prunes git's record of it) however it ends.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from silo_regress.errors import GitError
from silo_regress.vcs.gitio import Repository


def _run(
    repo: Repository, args: list[str], *, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    env = dict(repo.environment) if repo.environment else None
    try:
        done = subprocess.run(
            ["git", *args], cwd=repo.root, env=env, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH; install git first") from None
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"{repo.root}: git {args[0]} failed: {said[-1] if said else 'no message'}")
    return done


def _git(repo: Repository, *args: str) -> bytes:
    return _run(repo, list(args)).stdout


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


def first_parent_line(repo: Repository, good: str, bad: str) -> list[Commit]:
    """The commits after ``good`` up to ``bad`` on ``bad``'s first-parent line, oldest
    first; :class:`GitError` when ``good`` is not an ancestor on that line."""
    done = _run(repo, ["merge-base", "--is-ancestor", good, bad], check=False)
    if done.returncode != 0:
        raise GitError(f"{repo.root}: good commit {good[:7]} is not an ancestor of {bad[:7]}")
    raw = _git(
        repo, "log", "--first-parent", "--reverse", "--format=%H%x00%s", f"{good}..{bad}"
    ).decode("utf-8", "replace")
    found = []
    for line in raw.splitlines():
        sha, _, subject = line.partition("\0")
        found.append(Commit(sha, subject))
    if found and not _on_line(repo, good, found[0].sha):
        raise GitError(
            f"{repo.root}: good commit {good[:7]} is not on the first-parent line of {bad[:7]}"
        )
    return found


def _on_line(repo: Repository, good: str, first: str) -> bool:
    parent = _git(repo, "rev-parse", f"{first}^1").decode("ascii").strip()
    return parent == good


def subject_of(repo: Repository, sha: str) -> str:
    return _git(repo, "log", "-1", "--format=%s", sha).decode("utf-8", "replace").strip()


def changed_files(repo: Repository, sha: str) -> list[str]:
    """The paths ``sha`` changed against its first parent (all of them for a root)."""
    raw = _git(
        repo,
        "diff-tree",
        "--no-commit-id",
        "-r",
        "-m",
        "--first-parent",
        "--name-only",
        "--root",
        "-z",
        sha,
    )
    return sorted({p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p})


@contextlib.contextmanager
def detached_worktree(repo: Repository, sha: str) -> Iterator[Path]:
    """A new worktree at ``sha`` (detached HEAD), removed on the way out, even on Ctrl-C."""
    parent = Path(tempfile.mkdtemp(prefix="silo-regress-bisect-"))
    place = parent / "tree"
    try:
        _git(repo, "worktree", "add", "--quiet", "--detach", str(place), sha)
        yield place
    finally:
        remove_worktree(repo, place)
        shutil.rmtree(parent, ignore_errors=True)


def remove_worktree(repo: Repository, place: Path) -> None:
    """Remove a worktree bisect made and forget it; quiet when it is already gone."""
    with contextlib.suppress(GitError, OSError, subprocess.SubprocessError):
        _run(repo, ["worktree", "remove", "--force", str(place)], check=False)
    shutil.rmtree(place, ignore_errors=True)
    with contextlib.suppress(GitError, OSError, subprocess.SubprocessError):
        _run(repo, ["worktree", "prune"], check=False)


def common_dir(repo: Repository) -> Path:
    """The git directory shared by every worktree (where bisect keeps its state)."""
    raw = _git(repo, "rev-parse", "--git-common-dir").decode("utf-8", "surrogateescape").strip()
    path = Path(raw)
    return path if path.is_absolute() else (repo.root / path).resolve()
