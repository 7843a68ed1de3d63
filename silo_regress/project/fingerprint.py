"""The fingerprint of a project's behaviour-defining inputs.

The configured ``inputs`` globs (default: the agent file) are expanded and hashed
into the SHA-256 of the sorted (path, content SHA-256) pairs, from the working tree
or from the git index (what the pre-commit hook is about to commit).

Inputs are files in a repository anyone can clone, so hashing them is bounded:
symlinks are hashed as the path they hold (as git stores them, never followed
out of the project), huge files and huge matches are refused, FIFOs and devices
are skipped with a warning, and a file that changes while it is hashed is read
again and then refused.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from silo_regress.errors import InputError
from silo_regress.project.config import Config

MAX_INPUT_FILES = 5000
MAX_WALKED = 200_000  # directory entries looked at while expanding the globs
MAX_FILE_BYTES = 64 << 20
MAX_TOTAL_BYTES = 512 << 20
_GLOB_CHARS = re.compile(r"[*?\[]")
WORKING_TREE = "working tree"
GIT_INDEX = "git index"


class ProvenanceError(InputError):
    """An input that cannot be fingerprinted: unreadable, too large, changing."""


# --- the fingerprint --------------------------------------------------------------


@dataclass(frozen=True)
class InputDigest:
    """One input file: its project-relative path and the SHA-256 of its content."""

    path: str
    sha256: str
    mtime_ns: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputSnapshot:
    """The inputs as they are now (working tree) or about to be committed (git index)."""

    source: str  # WORKING_TREE or GIT_INDEX
    globs: tuple[str, ...]
    files: tuple[InputDigest, ...]
    warnings: tuple[str, ...] = ()

    @functools.cached_property
    def fingerprint(self) -> str:
        # Cached: the hook compares it with the record of every run.
        return fingerprint_of((f.path, f.sha256) for f in self.files)

    @functools.cached_property
    def _digests(self) -> dict[str, str]:
        return {f.path: f.sha256 for f in self.files}

    def digests(self) -> dict[str, str]:
        return dict(self._digests)

    def digest_of(self, path: str) -> str | None:
        """The SHA-256 of one input, None when it is not among them (no copy made)."""
        return self._digests.get(path)


def fingerprint_of(pairs: Iterable[tuple[str, str]]) -> str:
    """SHA-256 of the sorted (path, content SHA-256) pairs, one ``path NUL digest LF`` each."""
    digest = hashlib.sha256()
    for path, sha in sorted(pairs):
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + sha.encode() + b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class _Glob:
    text: str
    base: str  # the literal leading directories ("" for the project root)
    pattern: re.Pattern[str]
    literal: bool


def _compile(text: str) -> _Glob:
    """A glob relative to the project: ``*`` and ``?`` within a name, ``**`` across."""
    parts = [p for p in text.split("/") if p not in ("", ".")]
    literal: list[str] = []
    for part in parts:
        if _GLOB_CHARS.search(part):
            break
        literal.append(part)
    regex = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += _segment(part) + ("" if last else "/")
    is_literal = len(literal) == len(parts)
    if is_literal:  # a file, or a directory meaning everything under it
        regex = re.escape("/".join(parts)) + "(?:/.*)?"
    return _Glob(text, "/".join(literal), re.compile(regex + r"\Z", re.S), is_literal)


def _segment(part: str) -> str:
    out = ""
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            skip = 2 if i + 1 < len(part) and part[i + 1] in "!]" else 1
            end = part.find("]", i + skip)
            if end == -1:
                out += re.escape(char)
            else:
                body = part[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += "[" + body.replace("\\", "\\\\") + "]"
                i = end
        else:
            out += re.escape(char)
        i += 1
    return out


def _candidates(project: Path, glob: _Glob, *, budget: list[int]) -> Iterator[str]:
    """Project-relative paths under the glob's literal base: files and symlinks, no dirs."""
    base = project / glob.base if glob.base else project
    try:
        info = os.lstat(base)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        yield glob.base
        return
    for top, dirs, files in os.walk(base, followlinks=False):
        relative_top = os.path.relpath(top, project).replace(os.sep, "/")
        prefix = "" if relative_top == "." else relative_top + "/"
        budget[0] -= len(dirs) + len(files)
        if budget[0] < 0:
            raise ProvenanceError(
                f"inputs: {glob.text!r} walks more than {MAX_WALKED} entries; "
                "narrow the glob in the config's 'inputs'"
            )
        kept = []
        for name in dirs:
            if os.path.islink(os.path.join(top, name)):
                yield prefix + name  # as git sees it: a link, never descended
            elif name != ".git":
                kept.append(name)
        dirs[:] = sorted(kept)
        for name in sorted(files):
            yield prefix + name


def expand_inputs(project: Path, globs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The project-relative paths ``globs`` match in the working tree, and warnings."""
    budget = [MAX_WALKED]
    found: dict[str, None] = {}
    warnings: list[str] = []
    for text in globs:
        glob = _compile(text)
        before = len(found)
        for path in _candidates(project, glob, budget=budget):
            if glob.pattern.match(path):
                found[path] = None
        if len(found) == before:
            warnings.append(f"inputs: {text!r} matches no file in the working tree")
        if len(found) > MAX_INPUT_FILES:
            raise ProvenanceError(
                f"inputs: the globs match more than {MAX_INPUT_FILES} files; "
                "narrow them in the config's 'inputs'"
            )
    return sorted(found), warnings


def working_tree_snapshot(project: Path, globs: Sequence[str]) -> InputSnapshot:
    """Hash every input as it is on disk now."""
    paths, warnings = expand_inputs(project, globs)
    files: list[InputDigest] = []
    total = 0
    for path in paths:
        digest = _digest(project, path, warnings)
        if digest is not None:
            files.append(digest[0])
            total += digest[1]
            if total > MAX_TOTAL_BYTES:
                raise ProvenanceError(
                    f"inputs: more than {MAX_TOTAL_BYTES >> 20} MiB to fingerprint; "
                    "narrow the config's 'inputs'"
                )
    return InputSnapshot(WORKING_TREE, tuple(globs), tuple(files), tuple(warnings))


def index_snapshot(project: Path, globs: Sequence[str]) -> InputSnapshot:
    """Hash every input as staged in the git index: the content a commit would hold."""
    from silo_regress.vcs import gitio

    repo = gitio.find_repository(project)
    top = repo.path_of(project)
    compiled = [_compile(g) for g in globs]
    prefixes = sorted({"/".join(p for p in (top, g.base) if p) for g in compiled})
    staged = gitio.read_staged(repo, prefixes)
    lead = top + "/" if top else ""
    files: list[InputDigest] = []
    warnings: list[str] = []
    total = 0
    for glob in compiled:
        matched = False
        for full, data in staged.items():
            if not full.startswith(lead):
                continue
            path = full[len(lead) :]
            if glob.pattern.match(path):
                matched = True
                if any(f.path == path for f in files):
                    continue
                total += len(data)
                if total > MAX_TOTAL_BYTES or len(files) >= MAX_INPUT_FILES:
                    raise ProvenanceError(
                        "inputs: too much staged content to fingerprint; "
                        "narrow the config's 'inputs'"
                    )
                files.append(
                    InputDigest(path, hashlib.sha256(data).hexdigest(), _mtime(project, path))
                )
        if not matched:
            warnings.append(f"inputs: {glob.text!r} matches no file in the git index")
    files.sort(key=lambda f: f.path)
    return InputSnapshot(GIT_INDEX, tuple(globs), tuple(files), tuple(warnings))


def _mtime(project: Path, path: str) -> int | None:
    try:
        return os.lstat(project / path).st_mtime_ns
    except OSError:
        return None


def _digest(project: Path, path: str, warnings: list[str]) -> tuple[InputDigest, int] | None:
    full = project / path
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        warnings.append(f"inputs: {path} vanished while it was fingerprinted")
        return None
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(full)
        resolved = os.path.realpath(full)
        if not (resolved + os.sep).startswith(str(project.resolve()) + os.sep):
            warnings.append(
                f"inputs: {path} is a symlink out of the project; the path it holds "
                "is fingerprinted, as git stores it, not what it points at"
            )
        data = os.fsencode(target)
        return InputDigest(path, hashlib.sha256(data).hexdigest(), info.st_mtime_ns), len(data)
    if not stat.S_ISREG(info.st_mode):
        warnings.append(f"inputs: {path} is not a regular file (a FIFO or device?); skipped")
        return None
    for _attempt in range(3):
        read = _hash_regular(full, path)
        if read is not None:
            sha, size, mtime_ns = read
            return InputDigest(path, sha, mtime_ns), size
    raise ProvenanceError(
        f"inputs: {path} kept changing while it was fingerprinted; "
        "wait for whatever writes it to finish, then run again"
    )


def _hash_regular(full: Path, path: str) -> tuple[str, int, int] | None:
    """(sha256, size, mtime_ns) of a regular file, or None when it changed while read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(full, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise ProvenanceError(f"inputs: {path} is not a regular file")
        if before.st_size > MAX_FILE_BYTES:
            raise ProvenanceError(
                f"inputs: {path} is {before.st_size} bytes; inputs over "
                f"{MAX_FILE_BYTES >> 20} MiB are not fingerprinted; narrow the config's 'inputs'"
            )
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                return None  # grew while read
            digest.update(chunk)
        after = os.fstat(fd)
    except OSError as exc:
        raise ProvenanceError(f"inputs: {path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
    same = (before.st_size, before.st_mtime_ns, before.st_ctime_ns) == (
        after.st_size,
        after.st_mtime_ns,
        after.st_ctime_ns,
    )
    return (digest.hexdigest(), size, after.st_mtime_ns) if same and size == after.st_size else None


def current_inputs(config: Config, *, staged: bool) -> InputSnapshot | None:
    """The inputs being checked; None when neither ``inputs`` nor ``agent`` is configured."""
    globs = config.input_globs
    if not globs:
        return None
    if staged:
        return index_snapshot(config.project, globs)
    return working_tree_snapshot(config.project, globs)
