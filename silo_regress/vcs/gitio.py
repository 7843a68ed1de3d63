"""Git: find the repository of a project, read files from its index or a commit, history.

The pre-commit hook path (``check --staged``) runs plain ``git`` subprocesses: one
``rev-parse``, one ``ls-files`` and one ``cat-file --batch``, a few milliseconds in
all. GitPython costs 50-80 ms to import (it runs ``git version`` on import) and its
index reader ignores ``GIT_INDEX_FILE``, which git points at a temporary index
during ``git commit -a`` and ``git commit PATH``; it is used, imported inside the
function, only where start-up does not matter: walking history for ``log``.

Paths are exchanged with git NUL-separated and pathspecs are literal, so names
with spaces, quotes, glob characters or non-ASCII letters need no quoting.
"""

from __future__ import annotations

import enum
import functools
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from silo_regress.errors import GitError
from silo_regress.vcs.worktreeblobs import worktree_blobs

# Variables git exports to hooks (GIT_INDEX_FILE is ".git/index" on a plain first
# commit). Relative values mean "relative to where git started the hook": they are
# made absolute once, so git subprocesses started elsewhere see the same repository.
_PATH_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
)
_REGULAR_FILE_MODES = {b"100644", b"100755"}
_TREE_MODE = b"40000"  # as a tree object writes it (ls-tree prints 040000)
_SPECIAL_MODES = {b"120000": "symbolic link", b"160000": "submodule"}
_NOT_A_REPO = "not a git repository"


@dataclass(frozen=True)
class Repository:
    """A git repository with a working tree."""

    root: Path  # top of the working tree
    git_dir: Path
    shallow: bool
    shallow_file: Path
    environment: Mapping[str, str] = field(default_factory=dict, compare=False)

    def path_of(self, path: Path) -> str:
        """``path`` relative to the top of the working tree, with "/" separators."""
        resolved = path.resolve()
        try:
            relative = resolved.relative_to(self.root)
        except ValueError:
            raise GitError(
                f"{path}: lies outside the git repository {self.root}, so git cannot track it"
            ) from None
        text = relative.as_posix()
        return "" if text == "." else text


@dataclass(frozen=True)
class IndexFiles:
    """Files under a directory as staged in the index (stage 0), and unmerged paths."""

    files: dict[str, bytes]  # path relative to the directory -> staged bytes
    conflicted: tuple[str, ...]  # paths relative to the directory
    # Paths staged as something other than a file (a symbolic link, a submodule):
    # path -> what it is. A baseline staged as a link must get a verdict, not vanish.
    special: dict[str, str] = field(default_factory=dict)


class PathState(enum.StrEnum):
    COMMITTED = "committed"
    STAGED = "staged"
    MODIFIED = "modified"  # changed in the working tree, not staged
    UNTRACKED = "untracked"


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    short: str
    day: date
    author: str
    subject: str
    parent: str | None  # first parent, None for a root commit or the edge of a shallow clone
    boundary: bool  # history stops here because the clone is shallow


# --- running git ----------------------------------------------------------------


def _environment() -> dict[str, str]:
    here = Path.cwd()
    env = dict(os.environ)
    for name in _PATH_VARIABLES:
        value = env.get(name)
        if value:
            env[name] = str(here / value)
    # Never wait for a password or a pager: the hook has no terminal to ask on.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"
    return env


def _run(
    cwd: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    command = ["git", "--no-optional-locks", "--literal-pathspecs", *args]
    if not cwd.is_dir():
        raise GitError(f"{cwd}: no such directory")
    try:
        done = subprocess.run(
            command, cwd=cwd, env=dict(env), input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH; install git first") from None
    if check and done.returncode != 0:
        raise GitError(f"{cwd}: git {args[0]} failed: {_git_message(done.stderr)}")
    return done


def _git_message(stderr: bytes) -> str:
    """git's own sentence: its fatal or error line (hints follow it), else the last line."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    for line in lines:
        if line.startswith(("fatal: ", "error: ")):
            return line.split(": ", 1)[1]
    lines = [line for line in lines if line]
    return lines[-1] if lines else "no message"


def _git(repo: Repository, *args: str, stdin: bytes | None = None) -> bytes:
    return _run(repo.root, args, env=repo.environment, stdin=stdin).stdout


def _decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


# --- finding the repository -----------------------------------------------------


def find_repository(start: Path) -> Repository:
    """The git repository whose working tree holds ``start``.

    While git runs a hook it exports ``GIT_DIR`` (in linked worktrees) and
    ``GIT_INDEX_FILE``; then git's own rule applies, which takes the current
    directory as the top of the working tree, so discovery starts there.
    """
    env = _environment()
    cwd = Path.cwd() if os.environ.get("GIT_DIR") else start
    done = _run(
        cwd,
        [
            "rev-parse",
            "--is-bare-repository",
            "--is-inside-git-dir",
            "--absolute-git-dir",
            "--is-shallow-repository",
            "--git-path",
            "shallow",
            "--show-toplevel",
        ],
        env=env,
        check=False,
    )
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode != 0 or len(lines) < 6:
        message = _git_message(done.stderr)
        if _NOT_A_REPO in message:
            raise GitError(
                f"{start.resolve()}: not a git repository (nor any of its parents); "
                "run `git init` there, or run this command inside a clone"
            )
        if lines[:1] == ["true"]:
            raise GitError(
                f"{lines[2] if len(lines) > 2 else start}: is a bare git repository, which has "
                "no working tree, index or runs; run silo-regress in a clone of it"
            )
        if lines[1:2] == ["true"]:
            raise GitError(
                f"{start.resolve()}: is inside a .git directory; run silo-regress in the "
                "working tree"
            )
        raise GitError(f"{start.resolve()}: git rev-parse failed: {message}")
    root = Path(lines[5]).resolve()
    shallow_file = Path(lines[4])
    return Repository(
        root=root,
        git_dir=Path(lines[2]),
        shallow=lines[3] == "true",
        shallow_file=shallow_file if shallow_file.is_absolute() else cwd / shallow_file,
        environment=env,
    )


# --- refs ------------------------------------------------------------------------


def resolve_commit(repo: Repository, ref: str) -> str:
    """The full hash of the commit ``ref`` names, or :class:`GitError` saying why not."""
    if not ref or ref.startswith("-") or "\n" in ref:
        raise GitError(f"{ref!r} is not a git ref")
    done = _run(
        repo.root,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        env=repo.environment,
        check=False,
    )
    sha = done.stdout.decode("ascii", "replace").strip()
    if done.returncode == 0 and sha:
        return sha
    if not has_commits(repo):
        raise GitError(
            f"{repo.root}: the repository has no commits yet, so git ref {ref!r} names nothing"
        )
    hint = (
        "; this is a shallow clone, so fetch more history (`git fetch --unshallow`) or the ref"
        if repo.shallow
        else "; is it a branch, tag or commit you have fetched?"
    )
    raise GitError(f"{repo.root}: unknown git ref {ref!r}{hint}")


def has_commits(repo: Repository) -> bool:
    done = _run(
        repo.root, ["rev-parse", "--verify", "--quiet", "HEAD"], env=repo.environment, check=False
    )
    return done.returncode == 0


def hook_path(repo: Repository, name: str) -> Path:
    """Where git looks for hook ``name`` (honours core.hooksPath and linked worktrees)."""
    out = _git(repo, "rev-parse", "--git-path", f"hooks/{name}").decode("utf-8", "surrogateescape")
    path = Path(out.strip())
    return path if path.is_absolute() else repo.root / path


def read_blobs(repo: Repository, names: Sequence[str]) -> list[bytes | None]:
    """The contents of objects (``sha`` or ``commit:path``), None for missing ones.

    One ``git cat-file --batch`` for all of them: starting git once per file would
    cost milliseconds each, which the hook pays on every commit.
    """
    return _read_objects(repo, names, kind=b"blob")


def read_trees(
    repo: Repository, names: Sequence[str], *, hash_size: int
) -> list[dict[bytes, bytes] | None]:
    """The entries of trees (``sha`` or ``commit:dir``), None for missing ones.

    Each tree maps an entry's name to its raw object hash, for regular files and
    subdirectories (their names end in "/"); bytes, as git stores them, because a
    caller looks up a few of thousands of entries in each of many trees. One
    ``git cat-file --batch`` for all of them: git resolves a ``commit:dir/file`` name
    by scanning the directory's tree, so asking for thousands of files in each of
    many commits one by one takes seconds. ``hash_size`` is the repository's hash
    length in bytes (20 for SHA-1, 32 for SHA-256), which the tree format does not say.
    """
    return [
        None if data is None else _tree_entries(data, hash_size=hash_size)
        for data in _read_objects(repo, names, kind=b"tree")
    ]


def _tree_entries(data: bytes, *, hash_size: int) -> dict[bytes, bytes]:
    # Entries are "<mode> <name>\0" and the raw hash, back to back. findall never
    # overlaps, so matched lengths adding up to the whole object mean no bytes of a
    # hash were skipped or read as a name.
    entries = _tree_entry_pattern(hash_size).findall(data)
    size = sum(len(mode) + len(name) for mode, name, _ in entries)
    if size + len(entries) * (2 + hash_size) != len(data):
        raise GitError("git cat-file gave a malformed tree object")
    return {
        name + b"/" if mode == _TREE_MODE else name: sha
        for mode, name, sha in entries
        if mode == _TREE_MODE or mode in _REGULAR_FILE_MODES
    }


@functools.cache
def _tree_entry_pattern(hash_size: int) -> re.Pattern[bytes]:
    return re.compile(rb"(\d+) ([^\0]*)\0(.{%d})" % hash_size, re.DOTALL)


def _read_objects(repo: Repository, names: Sequence[str], *, kind: bytes) -> list[bytes | None]:
    if not names:
        return []
    unique = list(dict.fromkeys(names))
    payload = "".join(name + "\n" for name in unique).encode("utf-8", "surrogateescape")
    out = _git(repo, "cat-file", "--batch", stdin=payload)
    found: dict[str, bytes | None] = {}
    pos = 0
    for name in unique:
        end = out.index(b"\n", pos)
        header = out[pos:end]
        if header.endswith((b" missing", b" ambiguous")):
            found[name] = None
            pos = end + 1
            continue
        found_kind, size = header.split(b" ")[1:3]
        start = end + 1
        found[name] = out[start : start + int(size)] if found_kind == kind else None
        pos = start + int(size) + 1
    return [found[name] for name in names]


def _pathspec(directory: str) -> list[str]:
    return ["--", directory] if directory else []


def _strip(path: str, directory: str) -> str:
    return path[len(directory) + 1 :] if directory else path


def read_index(repo: Repository, directory: str) -> IndexFiles:
    """Every regular file under ``directory`` (relative to the top) as staged.

    Reads whichever index git uses (``GIT_INDEX_FILE`` included). Unmerged
    paths, which have no single staged content, are listed apart.
    """
    out = _git(repo, "ls-files", "--stage", "-z", "--full-name", *_pathspec(directory))
    shas: dict[str, str] = {}
    conflicted: list[str] = []
    special: dict[str, str] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, sha, stage = meta.split(b" ")
        path = _strip(_decode_path(raw_path), directory)
        if stage != b"0":
            conflicted.append(path)
        elif mode in _REGULAR_FILE_MODES:
            shas[path] = sha.decode("ascii")
        elif mode in _SPECIAL_MODES:
            special[path] = _SPECIAL_MODES[mode]
    top = f"{directory}/" if directory else ""
    blobs = read_tracked_blobs(repo, {f"{top}{path}": sha for path, sha in shas.items()})
    files = {path: data for path, data in zip(shas, blobs, strict=True) if data is not None}
    return IndexFiles(files=files, conflicted=tuple(sorted(set(conflicted))), special=special)


def list_tree(repo: Repository, commit: str, directory: str) -> dict[str, str]:
    """Regular files under ``directory`` in ``commit`` (a full hash): path -> blob hash."""
    return _ls_tree(repo, commit, directory)[0]


def _ls_tree(
    repo: Repository, commit: str, directory: str
) -> tuple[dict[str, str], dict[str, str]]:
    """(regular files: path -> blob hash, links and submodules: path -> what it is)."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, *_pathspec(directory))
    shas: dict[str, str] = {}
    special: dict[str, str] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, sha = meta.split(b" ")
        if kind == b"blob" and mode in _REGULAR_FILE_MODES:
            shas[_strip(_decode_path(raw_path), directory)] = sha.decode("ascii")
        elif mode in _SPECIAL_MODES:
            special[_strip(_decode_path(raw_path), directory)] = _SPECIAL_MODES[mode]
    return shas, special


def read_tree_entries(
    repo: Repository, commit: str, directory: str
) -> tuple[dict[str, bytes], dict[str, str]]:
    """:func:`read_tree`, plus the links and submodules it leaves out (path -> kind)."""
    shas, special = _ls_tree(repo, commit, directory)
    top = f"{directory}/" if directory else ""
    # `check --against HEAD` and `diff --from main` name commits whose baselines
    # mostly equal the working tree's: those are read there, proven by their hash.
    blobs = read_tracked_blobs(repo, {f"{top}{path}": sha for path, sha in shas.items()})
    files = {path: data for path, data in zip(shas, blobs, strict=True) if data is not None}
    return files, special


def read_tree(repo: Repository, commit: str, directory: str) -> dict[str, bytes]:
    """Every regular file under ``directory`` in ``commit`` (a full hash)."""
    return read_tree_entries(repo, commit, directory)[0]


# --- working tree state ----------------------------------------------------------


def path_states(repo: Repository, directory: str) -> dict[str, PathState]:
    """Tracked and untracked files under ``directory`` and how they stand.

    A file both staged and changed again in the working tree is ``modified``:
    what it holds now is not what would be committed.
    """
    tracked = _git(repo, "ls-files", "-z", "--full-name", *_pathspec(directory))
    states = {
        _strip(_decode_path(p), directory): PathState.COMMITTED for p in tracked.split(b"\0") if p
    }
    out = _git(
        repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", *_pathspec(directory)
    )
    records = iter(out.split(b"\0"))
    for record in records:
        if len(record) < 4:
            continue
        x, y, path = chr(record[0]), chr(record[1]), _strip(_decode_path(record[3:]), directory)
        if x in "RC":
            next(records, None)  # the rename's source path follows
        if x == "?":
            states[path] = PathState.UNTRACKED
        elif y not in " ?":
            states[path] = PathState.MODIFIED
        elif x != " ":
            states[path] = PathState.STAGED
    return states


# --- history -------------------------------------------------------------------


def shallow_commits(repo: Repository) -> frozenset[str]:
    """Commits at the edge of a shallow clone: their parents were not fetched."""
    if not repo.shallow:
        return frozenset()
    try:
        text = repo.shallow_file.read_text(encoding="ascii")
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def history(repo: Repository, paths: Iterable[str], *, start: str = "HEAD") -> list[CommitInfo]:
    """Every commit reachable from ``start`` that changed any of ``paths``, newest first."""
    import git  # GitPython: see the module docstring for why only here

    wanted = list(paths)
    if not has_commits(repo):
        return []
    edge = shallow_commits(repo)
    overrides = {k: repo.environment[k] for k in _PATH_VARIABLES if k in repo.environment}
    found: list[CommitInfo] = []
    try:
        with git.Repo(repo.root) as handle:
            handle.git.update_environment(**overrides)
            for commit in handle.iter_commits(start, paths=wanted):
                boundary = commit.hexsha in edge
                parent = None if boundary or not commit.parents else commit.parents[0].hexsha
                found.append(
                    CommitInfo(
                        sha=commit.hexsha,
                        short=commit.hexsha[:7],
                        day=commit.authored_datetime.date(),
                        author=str(commit.author.name or commit.author.email or "?"),
                        subject=commit.summary if isinstance(commit.summary, str) else "",
                        parent=parent,
                        boundary=boundary,
                    )
                )
            if found:
                # Abbreviated as git abbreviates: long enough to be unique in this repository.
                pairs = handle.git.log(
                    "--no-walk=unsorted", "--format=%H %h", *(c.sha for c in found)
                )
                shorts = dict(line.split(" ", 1) for line in pairs.splitlines())
                found = [replace(c, short=shorts.get(c.sha, c.short)) for c in found]
    except git.GitCommandError as exc:
        raise GitError(f"{repo.root}: git log failed: {_git_message(str(exc).encode())}") from None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{repo.root}: GitPython cannot open this repository") from None
    return found


def recent_commits(repo: Repository, directory: str, *, limit: int) -> list[CommitInfo]:
    """The newest ``limit`` commits reachable from HEAD that changed ``directory``.

    Plain ``git log``, not GitPython as :func:`history` uses: this runs for
    ``check --format html``, where GitPython's import would cost more than the log.
    Short hashes are git's own (``%h``); nothing when there are no commits.
    """
    if not has_commits(repo):
        return []
    fields = "%H%x1f%h%x1f%P%x1f%as%x1f%an%x1f%ae%x1f%s"
    out = _git(
        repo,
        "log",
        "-z",
        f"--max-count={limit}",
        f"--format={fields}",
        "HEAD",
        *_pathspec(directory) or ["--"],
    )
    edge = shallow_commits(repo)
    found: list[CommitInfo] = []
    for record in out.decode("utf-8", "replace").split("\0"):
        parts = record.split("\x1f")
        if len(parts) != 7:
            continue
        sha, short, parents, day, name, email, subject = parts
        boundary = sha in edge
        first = parents.split()[0] if parents.split() and not boundary else None
        found.append(
            CommitInfo(
                sha=sha,
                short=short,
                day=date.fromisoformat(day),
                author=name or email or "?",
                subject=subject,
                parent=first,
                boundary=boundary,
            )
        )
    return found


# --- provenance: what a run was made from ---------------------------------------

_SYMLINK_MODE = b"120000"


@dataclass(frozen=True)
class HeadState:
    """The commit checked out and whether tracked files differ from it."""

    commit: str | None  # None before the first commit
    dirty: bool


def head_state(repo: Repository) -> HeadState:
    """HEAD's full hash and whether the working tree or index has tracked changes."""
    done = _run(
        repo.root, ["rev-parse", "--verify", "--quiet", "HEAD"], env=repo.environment, check=False
    )
    sha = done.stdout.decode("ascii", "replace").strip()
    commit = sha if done.returncode == 0 and sha else None
    status = _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=no")
    return HeadState(commit=commit, dirty=bool(status.strip(b"\0")))


def read_staged(repo: Repository, prefixes: Sequence[str]) -> dict[str, bytes]:
    """Staged regular files and symlinks under ``prefixes`` (relative to the top).

    A symlink's blob is its target path, as git stores it: what a commit would
    hold, never the content of whatever it points at. Unmerged paths are left out.
    """
    spec = ["--", *prefixes] if prefixes and "" not in prefixes else []
    out = _git(repo, "ls-files", "--stage", "-z", "--full-name", *spec)
    shas: dict[str, str] = {}
    links: dict[str, str] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, sha, stage = meta.split(b" ")
        if stage == b"0" and mode in _REGULAR_FILE_MODES:
            shas[_decode_path(raw_path)] = sha.decode("ascii")
        elif stage == b"0" and mode == _SYMLINK_MODE:
            links[_decode_path(raw_path)] = sha.decode("ascii")
    staged = dict(zip(shas, read_tracked_blobs(repo, shas), strict=True))
    staged.update(zip(links, read_blobs(repo, list(links.values())), strict=True))
    return {path: data for path, data in staged.items() if data is not None}


def read_tracked_blobs(repo: Repository, shas: Mapping[str, str]) -> list[bytes | None]:
    """The blobs ``shas`` names (path from the top -> object id), in that order: from
    the working tree where a file hashes to its object id, else from git."""
    return worktree_blobs(repo.root, shas, ask_git=lambda names: read_blobs(repo, names))


def list_files_below(directory: Path, *, environment: Mapping[str, str] | None = None) -> list[str]:
    """Every file git tracks or would track (staged, committed, untracked but not
    ignored) at or below ``directory``, relative to it with "/" separators; GitError
    when ``directory`` is in no git repository."""
    env = dict(environment) if environment is not None else _environment()
    out = _run(
        directory, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], env=env
    ).stdout
    return sorted({_decode_path(p) for p in out.split(b"\0") if p})
