"""What bisect found and what blame read from git: the values their renderers word.

``bisect``'s flow is :mod:`silo_regress.commands.bisecting`; its result is here, below
``render``, so the text, JSON and Markdown renderers read typed values. ``blame`` reads
git history alone (no rollouts): for an exact baseline, the commit that introduced each
current value under a JSON Pointer; for a stats task, the change point over the tally's
history (each commit that changed the tally is one position, its counts the evidence).
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass
from typing import Any

from silo_regress.canon.canonical import parse
from silo_regress.canon.jsondiff import Missing
from silo_regress.errors import InputError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.stats.changepoint import Rates
from silo_regress.store.baselinenames import baseline_relpath, tally_relpath
from silo_regress.vcs import gitio


@dataclass(frozen=True)
class Step:
    """One round: a commit, what its rollouts came to, or why it was skipped."""

    sha: str
    passed: int
    rollouts: int
    infra: int  # rollouts that left no run: not counted
    skipped: str | None = None


@dataclass(frozen=True)
class Untested:
    sha: str
    subject: str
    reason: str


class Ending(enum.StrEnum):
    FOUND = "found"
    UNDECIDED = "undecided"  # the budget ran out, or no commit was left to test


@dataclass(frozen=True)
class BisectResult:
    task: str
    gate: str  # "stats" or "exact"
    ending: Ending
    good: str
    bad: str
    commits: int  # candidates: the commits after good up to bad
    culprit: str | None
    subject: str | None
    files: tuple[str, ...]  # what the culprit changed under the configured inputs
    probability: float | None  # posterior of the culprit (1.0 for an exact bisection)
    confidence: float
    before: Rates | None
    after: Rates | None
    rollouts: int  # started by this bisect, all sessions of it
    rounds: int
    free_rollouts: int  # evidence in hand: the baseline tally, the failing check's runs
    untested: tuple[Untested, ...]
    suspects: tuple[str, ...] = ()  # skipped commits just before the culprit: could be it
    resumed: bool = False


# --- blame: an exact baseline --------------------------------------------------------


@dataclass(frozen=True)
class BlameLine:
    """One current leaf value under the pointer and the commit that introduced it."""

    pointer: str
    value: Any
    commit: str
    subject: str
    day: str
    boundary: bool  # history stops there (a root commit, or a shallow clone's edge)


@dataclass(frozen=True)
class Blame:
    task: str
    artifact: str
    pointer: str
    lines: tuple[BlameLine, ...]


def blame_pointer(config: Config, ref: TaskRef, pointer: str, *, artifact: str) -> Blame:
    """For each leaf value under ``pointer`` in the committed baseline (HEAD) of
    ``artifact``: the oldest commit of the unbroken run of commits that held it there,
    going back from HEAD through every commit that changed that file."""
    from silo_regress.canon.jsondiff import resolve
    from silo_regress.canon.pointer import format_pointer, split_pointer, walk

    try:
        parts = split_pointer(pointer)
    except ValueError as exc:
        raise InputError(f"{pointer!r}: {exc}") from None
    repo = gitio.find_repository(config.project)
    directory = repo.path_of(config.baselines_dir)
    name = baseline_relpath(ref, artifact)
    path = f"{directory}/{name}" if directory else name
    commits = gitio.history(repo, [path])
    if not commits:
        raise InputError(f"{path}: no commit holds this baseline, so there is nothing to blame")
    blobs = gitio.read_blobs(repo, [f"{c.sha}:{path}" for c in commits])
    versions: list[tuple[gitio.CommitInfo, Any]] = []
    for commit, blob in zip(commits, blobs, strict=True):
        value: Any = _MISSING
        if blob is not None:
            with contextlib.suppress(InputError):
                value = parse(blob, source=f"{commit.short}:{path}")
        versions.append((commit, value))
    current = versions[0][1]
    if current is _MISSING:
        raise InputError(f"{commits[0].short}:{path}: the newest committed baseline does not parse")
    top = resolve(current, parts)
    if isinstance(top, Missing):
        raise InputError(f"{commits[0].short}:{path}: nothing at JSON Pointer {pointer!r}")
    lines = []
    for sub, leaf in walk(top, tuple(parts)):
        if isinstance(leaf, dict | list) and leaf:
            continue
        introduced = versions[0][0]
        for commit, doc in versions[1:]:
            then = _MISSING if doc is _MISSING else resolve(doc, sub)
            if isinstance(then, Missing) or then is _MISSING or not _same(then, leaf):
                break
            introduced = commit
        lines.append(
            BlameLine(
                format_pointer(sub),
                leaf,
                introduced.sha,
                introduced.subject,
                introduced.day.isoformat(),
                introduced.boundary or introduced.parent is None,
            )
        )
    return Blame(str(ref), artifact, pointer, tuple(lines))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


class _Absent:
    pass


_MISSING: Any = _Absent()


# --- blame: a stats task's tally -----------------------------------------------------


@dataclass(frozen=True)
class TallyPoint:
    commit: str
    subject: str
    day: str
    passed: int
    rollouts: int


@dataclass(frozen=True)
class TallyBlame:
    """The tally at each commit that changed it, oldest first, and the change point:
    the recorded tally from which the pass rate is most probably lower."""

    task: str
    points: tuple[TallyPoint, ...]
    culprit: str | None
    probability: float | None
    before: Rates | None
    after: Rates | None


def blame_tally(config: Config, ref: TaskRef) -> TallyBlame:
    from silo_regress.stats import changepoint
    from silo_regress.stats.tally import TallyError, parse_tally

    repo = gitio.find_repository(config.project)
    directory = repo.path_of(config.baselines_dir)
    name = tally_relpath(ref)
    path = f"{directory}/{name}" if directory else name
    commits = list(reversed(gitio.history(repo, [path])))
    blobs = gitio.read_blobs(repo, [f"{c.sha}:{path}" for c in commits])
    points = []
    for commit, blob in zip(commits, blobs, strict=True):
        if blob is None:
            continue
        with contextlib.suppress(TallyError):
            tally = parse_tally(blob, source=f"{commit.short}:{path}")
            points.append(
                TallyPoint(
                    commit.sha, commit.subject, commit.day.isoformat(), tally.passed, tally.rollouts
                )
            )
    if not points:
        raise InputError(f"{path}: no commit holds a tally of {ref}, so there is nothing to blame")
    if len(points) < 2:
        return TallyBlame(str(ref), tuple(points), None, None, None, None)
    counts = changepoint.Counts(tuple(p.passed for p in points), tuple(p.rollouts for p in points))
    post = changepoint.posterior(counts)
    k = max(range(1, len(post)), key=lambda i: (post[i], -i))
    before, after = changepoint.side_rates(counts, k)
    return TallyBlame(str(ref), tuple(points), points[k].commit, post[k], before, after)
