"""A path git left conflicted: its three versions in the index, and whether the file is
still exactly what git wrote from them.

While a merge, rebase or cherry-pick stops on a conflict, git's index holds the
common ancestor (stage 1), ours (2) and theirs (3) of each conflicted path, and the
working-tree file is a deterministic function of the three. A file that is byte for
byte that function has not been touched by anyone since, so a merge of the three
whole documents replaces nothing a person wrote; a file that differs was edited and
only its markers say what the person wants.

Git's merge (merge-ort) diffs with the histogram algorithm; ``git merge-file`` (2.39)
only with Myers. The file is re-created both ways: ``git merge-file`` with the labels
the file's own markers carry (compared byte for byte), and ``git merge-tree`` over
three throw-away commits in a temporary object directory that borrows the
repository's objects (nothing is written to the repository; its labels are commit
ids, so the text after each marker is left out of that comparison). Plain ``git``
subprocesses: this runs only under ``fmt --resolve``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_LABEL = re.compile(rb"^(<{7}|\|{7}|>{7}) (.*?)\r?$", re.MULTILINE)
_ANY_LABEL = re.compile(rb"^(<{7}|\|{7}|>{7})(?: .*?)?(\r?)$", re.MULTILINE)
_IDENTITY = {
    "GIT_AUTHOR_NAME": "silo-regress",
    "GIT_AUTHOR_EMAIL": "silo-regress@localhost",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_NAME": "silo-regress",
    "GIT_COMMITTER_EMAIL": "silo-regress@localhost",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


@dataclass(frozen=True)
class Stages:
    """A conflicted path's versions in git's index; ``base`` None when the sides added
    the path independently (no stage 1)."""

    base: bytes | None
    ours: bytes
    theirs: bytes


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _git(
    cwd: Path, args: Sequence[str], *, env: Mapping[str, str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=dict(env), input=stdin, capture_output=True, check=False
    )


def read_stages(path: Path) -> Stages | None:
    """The index's stages of ``path``, or None when no merge of it is in progress (or
    git cannot tell: outside a repository, git missing)."""
    env = _environment()
    try:
        listed = _git(
            path.parent, ["--literal-pathspecs", "ls-files", "-u", "-z", "--", path.name], env=env
        )
        if listed.returncode != 0:
            return None
        found: dict[int, bytes] = {}
        for entry in listed.stdout.split(b"\0"):
            fields = entry.partition(b"\t")[0].split()
            if len(fields) != 3 or fields[2] not in (b"1", b"2", b"3"):
                continue
            blob = _git(path.parent, ["cat-file", "blob", fields[1].decode()], env=env)
            if blob.returncode != 0:
                return None
            found[int(fields[2])] = blob.stdout
    except OSError:
        return None
    if 2 not in found or 3 not in found:
        return None  # a side deleted the path, or no conflict: nothing to merge from
    return Stages(base=found.get(1), ours=found[2], theirs=found[3])


def labels_of(data: bytes) -> tuple[str, str, str]:
    """The labels of the first conflict block's markers: ours, base, theirs."""
    found: dict[bytes, str] = {}
    for match in _LABEL.finditer(data):
        found.setdefault(match.group(1)[:1], match.group(2).decode("utf-8", "replace"))
    return (found.get(b"<", ""), found.get(b"|", ""), found.get(b">", ""))


def _without_labels(data: bytes) -> bytes:
    return _ANY_LABEL.sub(rb"\1\2", data)


def written_by_git(path: Path, data: bytes, stages: Stages) -> bool:
    """Whether ``data`` (the working-tree file at ``path``) is what git writes from
    ``stages``: the file nobody edited since the merge stopped."""
    styles = ("diff3", "zdiff3") if re.search(rb"^\|{7}", data, re.MULTILINE) else ("merge",)
    try:
        with tempfile.TemporaryDirectory(prefix="silo-regress-merge-") as scratch:
            place = Path(scratch)
            if any(_by_merge_file(place, data, stages, style=s) == data for s in styles):
                return True
            bare = _without_labels(data)
            return any(
                (made := _by_merge_tree(path, place, stages, style=s)) is not None
                and _without_labels(made) == bare
                for s in styles
            )
    except OSError:
        return False


def _by_merge_file(place: Path, data: bytes, stages: Stages, *, style: str) -> bytes | None:
    """``git merge-file``'s text (Myers diff) with the file's own labels."""
    names = []
    for side, text in (
        ("ours", stages.ours),
        ("base", stages.base or b""),
        ("theirs", stages.theirs),
    ):
        file = place / side
        file.write_bytes(text)
        names.append(str(file))
    ours, base, theirs = labels_of(data)
    style_flag = [] if style == "merge" else [f"--{style}"]
    done = _git(
        place,
        ["merge-file", "-p", *style_flag, "-L", ours, "-L", base, "-L", theirs, *names],
        env=_environment(),
    )
    # merge-file exits with the number of conflicts (negative on error: 255 and above)
    return done.stdout if 0 <= done.returncode < 128 else None


def _by_merge_tree(path: Path, place: Path, stages: Stages, *, style: str) -> bytes | None:
    """The text ``git merge`` itself (merge-ort) writes, from three throw-away commits
    made in a scratch object directory; None when git cannot make it (git before 2.38,
    an object directory whose path an alternates list cannot hold)."""
    env = _environment()
    objects = _git(path.parent, ["rev-parse", "--git-path", "objects"], env=env)
    if objects.returncode != 0:
        return None
    store = (path.parent / objects.stdout.decode().strip()).resolve()
    if any(c in str(store) for c in ':"\n'):
        return None
    scratch = place / "objects"
    scratch.mkdir()
    env.update(_IDENTITY)
    env["GIT_OBJECT_DIRECTORY"] = str(scratch)
    env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(store)
    name = b"file"

    def run(*args: str, stdin: bytes | None = None) -> str | None:
        done = _git(path.parent, list(args), env=env, stdin=stdin)
        if done.returncode not in (0, 1):
            return None
        return done.stdout.decode().split("\n", 1)[0].strip() or None

    def commit(text: bytes, *parents: str) -> str | None:
        blob = run("hash-object", "-w", "--stdin", stdin=text)
        if blob is None:
            return None
        tree = run("mktree", "-z", stdin=b"100644 blob " + blob.encode() + b"\t" + name + b"\0")
        if tree is None:
            return None
        flags = [flag for parent in parents for flag in ("-p", parent)]
        return run("commit-tree", tree, *flags, "-m", "stage")

    base = commit(stages.base or b"")
    ours = commit(stages.ours, base) if base else None
    theirs = commit(stages.theirs, base) if base else None
    if ours is None or theirs is None:
        return None
    tree = run(
        "-c",
        f"merge.conflictStyle={style}",
        "merge-tree",
        "--write-tree",
        "--no-messages",
        ours,
        theirs,
    )
    if tree is None:
        return None
    blob = _git(path.parent, ["cat-file", "blob", f"{tree}:file"], env=env)
    return blob.stdout if blob.returncode == 0 else None
