"""Baselines across git history: what changed between two commits, a task's log.

Values only: each change carries the typed behaviour notes of :mod:`behaviour` (checks
flipped, reward, state changes), so a pull request's effect reads in agent terms.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import orjson

from silo_regress import behaviour
from silo_regress.behaviour.notes import (
    BaselineRemoved,
    ChangesNothing,
    FormatOnly,
    Note,
    Recorded,
    ValuesChanged,
)
from silo_regress.canon.canonical import apply_ignores, canonicalize
from silo_regress.canon.jsondiff import Change, diff_values
from silo_regress.errors import GitError, InputError, SiloRegressError, TaskRefError
from silo_regress.judging.direction import Scores, read_scores
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.reports.overview import RowNote, Status, StatusRow
from silo_regress.store.baselinenames import tally_relpath
from silo_regress.store.baselines import (
    MAX_VARIANTS,
    Baseline,
    BaselineSource,
    baseline_relpath,
    parse_relpath,
)
from silo_regress.vcs import gitio

if TYPE_CHECKING:
    from silo_regress.stats.tally import Tally


class ChangeKind(enum.StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    FORMAT = "format-only"  # other bytes, same values: a `fmt` rewrite
    UNREADABLE = "unreadable"  # one side does not parse (conflict markers, bad JSON)
    SNAPSHOT = "snapshot"  # the edge of a shallow clone: no parent to compare with


# How a task's tally (baselines/[ENV/]TASK.tally.json) is named among its artifacts.
TALLY_ARTIFACT = "tally.json"


@dataclass(frozen=True)
class PassCount:
    """``passed`` of ``rollouts``: one side of a tally, or of one check in it."""

    passed: int
    rollouts: int


@dataclass(frozen=True)
class CheckMove:
    """A check whose pass count differs between two tallies (None: absent on that side)."""

    label: str
    before: PassCount | None
    after: PassCount | None


@dataclass(frozen=True)
class TallyMove:
    """How a task's tally moved: the pass counts on each side (None: no tally there)."""

    before: PassCount | None
    after: PassCount | None
    checks: tuple[CheckMove, ...] = ()  # only the checks whose count moved


@dataclass(frozen=True)
class ArtifactChange:
    artifact: str
    kind: ChangeKind
    behaviour: tuple[Note, ...] = ()
    detail: str | None = None
    changes: tuple[Change, ...] = ()
    variant: int = 1  # which accepted variant of the artifact (TASK~N) changed
    # Each side's file named with its source (``HEAD~1:baselines/X.json``, or the
    # working-tree path); None for the side it is absent from.
    before: str | None = None
    after: str | None = None
    tally: TallyMove | None = None  # set for the task's tally, whose notes are pass counts

    @property
    def label(self) -> str:
        return self.artifact if self.variant == 1 else f"{self.artifact} (variant {self.variant})"


@dataclass(frozen=True)
class TaskChange:
    task: TaskRef
    artifacts: tuple[ArtifactChange, ...]


@dataclass(frozen=True)
class SourceDiff:
    """Baselines between two sources (commits, or a commit and the working tree)."""

    before: str
    after: str
    tasks: tuple[TaskChange, ...]
    unchanged: int  # tasks present on both sides with identical bytes


@dataclass(frozen=True)
class LogEntry:
    commit: gitio.CommitInfo
    artifacts: tuple[ArtifactChange, ...]


@dataclass(frozen=True)
class TaskLog:
    task: TaskRef
    paths: tuple[str, ...]  # relative to the top of the repository
    entries: tuple[LogEntry, ...]
    shallow_edge: str | None  # short hash where a shallow clone's history stops


# --- comparing two versions of one artifact --------------------------------------


def compare_versions(
    config: Config,
    artifact: str,
    before: bytes | None,
    after: bytes | None,
    *,
    before_name: str,
    after_name: str,
) -> ArtifactChange | None:
    """How ``after`` differs from ``before`` (None: an absent side), or None if identical."""
    if before == after:
        return None
    try:
        old = None if before is None else _value(config, artifact, before, before_name)
        new = None if after is None else _value(config, artifact, after, after_name)
    except InputError as exc:
        return ArtifactChange(artifact, ChangeKind.UNREADABLE, detail=exc.message)
    if before is None:
        return ArtifactChange(artifact, ChangeKind.ADDED, behaviour=describe(artifact, new))
    if after is None:
        return ArtifactChange(artifact, ChangeKind.REMOVED, behaviour=(BaselineRemoved(),))
    changes = tuple(diff_values(old, new))
    if not changes:
        return ArtifactChange(artifact, ChangeKind.FORMAT, behaviour=(FormatOnly(),))
    return ArtifactChange(
        artifact,
        ChangeKind.CHANGED,
        behaviour=behaviour.compare(artifact, old, new) or (ValuesChanged(),),
        changes=changes,
    )


def _value(config: Config, artifact: str, data: bytes, name: str) -> Any:
    value = canonicalize(data, source=name).value
    return apply_ignores(value, artifact=artifact, ignore=config.ignore)


def compare_tallies(
    before: bytes | None, after: bytes | None, *, before_name: str, after_name: str
) -> ArtifactChange | None:
    """How a task's tally moved from ``before`` to ``after`` (None: absent), or None if
    the bytes are identical. A tally that does not read is ``unreadable``, never a crash."""
    if before == after:
        return None
    try:
        old = None if before is None else _pass_counts(before, before_name)
        new = None if after is None else _pass_counts(after, after_name)
    except InputError as exc:
        return ArtifactChange(TALLY_ARTIFACT, ChangeKind.UNREADABLE, detail=exc.message)
    move = _move(old, new)
    if old is None:
        return ArtifactChange(TALLY_ARTIFACT, ChangeKind.ADDED, tally=move)
    if new is None:
        return ArtifactChange(TALLY_ARTIFACT, ChangeKind.REMOVED, tally=move)
    if old == new:
        return ArtifactChange(TALLY_ARTIFACT, ChangeKind.FORMAT, behaviour=(FormatOnly(),))
    return ArtifactChange(TALLY_ARTIFACT, ChangeKind.CHANGED, tally=move)


def _pass_counts(data: bytes, name: str) -> Tally:
    """The tally in ``data``, its counts fully validated (an InputError otherwise). Its
    layout is not: as for a baseline, other bytes with the same values are a change of
    format (``fmt``), which the caller tells from a move."""
    # Lazy: diff and log load the stats package only when a tally is there to read.
    from silo_regress.stats.tally import check_tally_size, parse_tally

    check_tally_size(data, source=name)  # before a 100 MB blob is parsed as JSON
    return parse_tally(canonicalize(data, source=name).text, source=name)


def _move(old: Tally | None, new: Tally | None) -> TallyMove:
    def side(tally: Tally | None) -> PassCount | None:
        return None if tally is None else PassCount(tally.passed, tally.rollouts)

    def check(tally: Tally | None, label: str) -> PassCount | None:
        if tally is None or (found := tally.check_passed(label)) is None:
            return None
        return PassCount(found, tally.rollouts)

    labels = sorted(frozenset().union(*(t.labels for t in (old, new) if t is not None)))
    moved = [CheckMove(label, check(old, label), check(new, label)) for label in labels]
    both = old is not None and new is not None
    checks = tuple(m for m in moved if m.before != m.after) if both else ()
    return TallyMove(side(old), side(new), checks)


def describe(artifact: str, value: Any) -> tuple[Note, ...]:
    """A new baseline in a few notes: did it pass, what reward, what it changed."""
    return behaviour.describe(artifact, value)


# --- diff between two sources ---------------------------------------------------


def diff_sources(
    config: Config,
    before: BaselineSource,
    after: BaselineSource,
    refs: Sequence[TaskRef] = (),
) -> SourceDiff:
    """Every task whose baselines differ between ``before`` and ``after``."""
    old = {b.relpath: b for b in before.entries()}
    new = {b.relpath: b for b in after.entries()}
    by_task: dict[TaskRef, list[Baseline]] = {}
    for baseline in [*old.values(), *(b for p, b in new.items() if p not in old)]:
        by_task.setdefault(baseline.ref, []).append(baseline)
    if refs:
        chosen = {
            task: found for task, found in by_task.items() if any(_names(ref, task) for ref in refs)
        }
        missing = [ref for ref in refs if not any(_names(ref, task) for task in by_task)]
        if missing:
            raise TaskRefError(
                f"task {missing[0]}: no baseline under {config.relative(config.baselines_dir)}/ "
                f"in {before.label} or {after.label}"
            )
        by_task = chosen
    order = {a: i for i, a in enumerate(config.known_artifacts)}
    tasks: list[TaskChange] = []
    unchanged = 0
    for task in sorted(by_task, key=TaskRef.sort_key):
        found: list[ArtifactChange] = []
        for baseline in sorted(by_task[task], key=lambda b: (order.get(b.artifact, 99), b.variant)):
            then, now = old.get(baseline.relpath), new.get(baseline.relpath)
            before_name, after_name = before.display_path(baseline), after.display_path(baseline)
            change = compare_versions(
                config,
                baseline.artifact,
                before.read(then) if then is not None else None,
                after.read(now) if now is not None else None,
                before_name=before_name,
                after_name=after_name,
            )
            if change is not None:
                found.append(
                    replace(
                        change,
                        variant=max(baseline.variant, 1),
                        before=before_name if then is not None else None,
                        after=after_name if now is not None else None,
                    )
                )
        tally = _tally_change(before, after, task)
        if tally is not None:
            found.append(tally)
        if found:
            tasks.append(TaskChange(task, tuple(found)))
        else:
            unchanged += 1
    return SourceDiff(before.label, after.label, tuple(tasks), unchanged)


def _tally_change(
    before: BaselineSource, after: BaselineSource, task: TaskRef
) -> ArtifactChange | None:
    """How the task's tally moved between the sources, or None when it did not."""
    sides: list[tuple[bytes | None, str | None]] = []
    detail = None
    for source in (before, after):
        tally = Baseline(task, TALLY_ARTIFACT, tally_relpath(task))
        if not source.has(tally.relpath):
            sides.append((None, None))
            continue
        name = source.display_path(tally)
        try:
            sides.append((source.read(tally), name))
        except SiloRegressError as exc:  # a link or FIFO in its place: named, not a crash
            sides.append((None, name))
            detail = exc.message
    (then, then_name), (now, now_name) = sides
    if detail is not None:
        change: ArtifactChange | None = ArtifactChange(
            TALLY_ARTIFACT, ChangeKind.UNREADABLE, detail=detail
        )
    else:
        change = compare_tallies(
            then, now, before_name=then_name or "(none)", after_name=now_name or "(none)"
        )
    return None if change is None else replace(change, before=then_name, after=now_name)


def _names(ref: TaskRef, task: TaskRef) -> bool:
    return ref == task or (not ref.qualified and ref.task_id == task.task_id)


# --- a task's log ------------------------------------------------------------------


def task_log(config: Config, ref: TaskRef) -> TaskLog:
    """Every commit that changed the baselines of ``ref``, newest first, summarised."""
    repo = gitio.find_repository(config.project)
    directory = repo.path_of(config.baselines_dir)
    ref = _log_ref(config, repo, directory, ref)
    # Every name an accepted variant can have: a commit that only added or
    # dropped TASK~2 changed the task's behaviour too.
    every = {
        (a, n): _join(directory, baseline_relpath(ref, a, n))
        for a in config.known_artifacts
        for n in range(1, MAX_VARIANTS + 1)
    }
    paths = {a: every[(a, 1)] for a in config.task_settings(ref).artifacts}
    tally_path = _join(directory, tally_relpath(ref))
    commits = gitio.history(repo, [*every.values(), tally_path])
    names: list[str] = []
    for commit in commits:
        for path in [*every.values(), tally_path]:
            names.append(f"{commit.sha}:{path}")
            if commit.parent is not None:
                names.append(f"{commit.parent}:{path}")
    blobs = dict(zip(names, gitio.read_blobs(repo, names), strict=True))
    entries = []
    for commit in commits:
        found: list[ArtifactChange] = []
        for (artifact, variant), path in every.items():
            now = blobs.get(f"{commit.sha}:{path}")
            if commit.boundary:
                if now is not None:
                    snapshot = _snapshot(config, artifact, now, f"{commit.short}:{path}")
                    found.append(replace(snapshot, variant=variant))
                continue
            then = blobs.get(f"{commit.parent}:{path}") if commit.parent else None
            change = compare_versions(
                config,
                artifact,
                then,
                now,
                before_name=f"{commit.parent[:7] if commit.parent else '(none)'}:{path}",
                after_name=f"{commit.short}:{path}",
            )
            if change is not None:
                found.append(replace(change, variant=variant))
        tally = _logged_tally(commit, blobs, tally_path)
        if tally is not None:
            found.append(tally)
        entries.append(LogEntry(commit, tuple(found)))
    # git shows the edge of a shallow clone as a root commit, so when the baselines
    # are older than the edge, that commit is in the list; otherwise nothing is missing.
    edge = next((c.short for c in commits if c.boundary), None)
    return TaskLog(ref, tuple(paths.values()), tuple(entries), edge)


def _logged_tally(
    commit: gitio.CommitInfo, blobs: Mapping[str, bytes | None], path: str
) -> ArtifactChange | None:
    """How ``commit`` moved the tally at ``path`` (at a shallow edge: what it holds)."""
    now = blobs.get(f"{commit.sha}:{path}")
    if commit.boundary:
        if now is None:
            return None
        change = compare_tallies(
            None, now, before_name="(none)", after_name=f"{commit.short}:{path}"
        )
        return None if change is None else replace(change, kind=ChangeKind.SNAPSHOT)
    then = blobs.get(f"{commit.parent}:{path}") if commit.parent else None
    return compare_tallies(
        then,
        now,
        before_name=f"{commit.parent[:7] if commit.parent else '(none)'}:{path}",
        after_name=f"{commit.short}:{path}",
    )


def _snapshot(config: Config, artifact: str, data: bytes, name: str) -> ArtifactChange:
    try:
        value = _value(config, artifact, data, name)
    except InputError as exc:
        return ArtifactChange(artifact, ChangeKind.SNAPSHOT, detail=exc.message)
    notes = tuple(_as_of(note) for note in describe(artifact, value))
    return ArtifactChange(artifact, ChangeKind.SNAPSHOT, behaviour=notes)


def _as_of(note: Note) -> Note:
    """A snapshot's note: the oldest version a shallow clone holds, not a new one."""
    if isinstance(note, Recorded | ChangesNothing):
        return replace(note, as_of=True)
    return note


def _join(directory: str, relpath: str) -> str:
    return f"{directory}/{relpath}" if directory else relpath


def _log_ref(config: Config, repo: gitio.Repository, directory: str, ref: TaskRef) -> TaskRef:
    """``ref`` itself, or the one environment an unqualified ref's baselines live in."""
    if ref.qualified:
        return ref
    if any(
        (config.baselines_dir / baseline_relpath(ref, a)).is_file() for a in config.known_artifacts
    ):
        return ref
    names: set[str] = set()
    if gitio.has_commits(repo):
        names.update(gitio.list_tree(repo, gitio.resolve_commit(repo, "HEAD"), directory))
    if config.baselines_dir.is_dir():
        names.update(
            p.relative_to(config.baselines_dir).as_posix() for p in config.baselines_dir.glob("*/*")
        )
    found = {b.ref for n in names if (b := parse_relpath(n, config.known_artifacts)) is not None}
    if ref in found:
        return ref
    qualified = sorted(str(r) for r in found if r.task_id == ref.task_id)
    if len(qualified) == 1:
        return TaskRef(ref.task_id, qualified[0].split("/")[0])
    if qualified:
        raise TaskRefError(
            f"task {ref} has baselines in several environments ({', '.join(qualified)}); "
            f"name one, e.g. silo-regress log {qualified[0]}"
        )
    return ref


# --- pass rate and reward across commits ----------------------------------------

HISTORY_LIMIT = 30  # commits on the review page's chart
RESULT_ARTIFACT = "result.json"


@dataclass(frozen=True)
class ScorePoint:
    """The checked tasks' result.json baselines as one commit holds them."""

    commit: gitio.CommitInfo
    tasks: int  # checked tasks with a readable result.json baseline in this commit
    passed: int  # of those, how many pass
    judged: int  # of those, how many say whether they pass
    mean_reward: float | None  # over the tasks with a numeric reward

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None


@dataclass(frozen=True)
class ScoreHistory:
    points: tuple[ScorePoint, ...]  # oldest first


def score_history(
    config: Config, tasks: Iterable[TaskRef], *, limit: int = HISTORY_LIMIT
) -> ScoreHistory | None:
    """Pass rate and mean reward of ``tasks`` at each of the last ``limit`` commits that
    changed the baselines, oldest first.

    None when there is no history to draw: outside a git repository, before the
    first commit, or with fewer than two such commits (a shallow CI clone). A
    chart is an extra, so git trouble means no chart, never an error.
    """
    try:
        repo = gitio.find_repository(config.project)
        directory = repo.path_of(config.baselines_dir)
        commits = gitio.recent_commits(repo, directory, limit=limit)
        if len(commits) < 2:
            return None
        wanted = sorted(
            {baseline_relpath(t, RESULT_ARTIFACT).encode("utf-8", "surrogateescape") for t in tasks}
        )
        size = len(commits[0].sha) // 2
        roots = gitio.read_trees(repo, [f"{c.sha}:{directory}" for c in commits], hash_size=size)
        # Qualified refs live one directory down (ENV/TASK.result.json).
        folders = {path.split(b"/")[0] + b"/" for path in wanted if b"/" in path}
        below = sorted({root[f] for root in roots if root for f in folders if f in root})
        found = gitio.read_trees(repo, [sha.hex() for sha in below], hash_size=size)
        subtrees = dict(zip(below, found, strict=True))
        ids = [_resolve(root or {}, subtrees, wanted) for root in roots]
        # Most baselines are the same blob from one commit to the next: read each once.
        unique = sorted({sha for found_ids in ids for sha in found_ids})
        blobs = gitio.read_blobs(repo, [sha.hex() for sha in unique])
    except GitError:
        return None
    scores = {sha: _blob_scores(data) for sha, data in zip(unique, blobs, strict=True)}
    points = []
    for commit, present in zip(commits, ids, strict=True):
        point = _point(commit, [s for sha in present if (s := scores[sha]) is not None])
        if point.tasks:
            points.append(point)
    if len(points) < 2:
        return None
    return ScoreHistory(tuple(reversed(points)))


def _resolve(
    root: Mapping[bytes, bytes],
    subtrees: Mapping[bytes, dict[bytes, bytes] | None],
    paths: Iterable[bytes],
) -> list[bytes]:
    """The blob hashes of ``paths`` (relative to the baselines directory) in one commit."""
    found = []
    for path in paths:
        folder, _, name = path.rpartition(b"/")
        tree = subtrees.get(root.get(folder + b"/", b"")) if folder else root
        sha = tree.get(name) if tree else None
        if sha is not None:
            found.append(sha)
    return found


def _blob_scores(data: bytes | None) -> Scores | None:
    if data is None:
        return None
    try:
        value = orjson.loads(data)  # a thousand baselines per chart: json is slower
    except orjson.JSONDecodeError:
        return None  # a conflicted or broken baseline in an old commit: not counted
    if not isinstance(value, dict):
        return None
    # Only what the chart draws: the per-check list is most of a result.json.
    return read_scores({"passed": value.get("passed"), "reward": value.get("reward")})


def _point(commit: gitio.CommitInfo, found: Sequence[Scores]) -> ScorePoint:
    judged = [s.passed for s in found if s.passed is not None]
    rewards = [float(s.reward) for s in found if s.reward is not None]
    return ScorePoint(
        commit=commit,
        tasks=len(found),
        passed=sum(judged),
        judged=len(judged),
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
    )


# --- git state for status -----------------------------------------------------------

_STATE_ORDER = (gitio.PathState.UNTRACKED, gitio.PathState.MODIFIED, gitio.PathState.STAGED)


def mark_git_states(config: Config, status: Status) -> Status:
    """``status`` with each task's baselines marked untracked, modified or staged.

    Outside a git repository the rows stay unmarked: status does not need git.
    """
    try:
        repo = gitio.find_repository(config.project)
        states = gitio.path_states(repo, repo.path_of(config.baselines_dir))
    except GitError:
        return status
    rows = tuple(
        replace(row, git_state=_state_of(row, states)) if row.baselines else row
        for row in status.rows
    )
    return replace(status, rows=rows)


def _state_of(row: StatusRow, states: Mapping[str, gitio.PathState]) -> str:
    found = {states.get(baseline_relpath(row.task, a)) for a in row.baselines}
    if None in found and row.note is RowNote.REFUSED:
        return ""  # a refused name printed with escapes is not the path git knows
    if None in found:
        return "ignored"  # in the working tree, unknown to git: a .gitignore hides it
    pending = [s.value for s in _STATE_ORDER if s in found]
    return "+".join(pending) if pending else gitio.PathState.COMMITTED.value
