"""``bisect``: the commit that made a task worse, with as few rollouts as the evidence allows.

The flow: the first-parent commits from the good commit to the bad one; each step runs
a round of rollouts of one commit in a temporary detached worktree (never the user's
working tree or index), after the configured ``bisect-setup`` command; the counts
decide the next commit and when to stop.

- A ``stats`` (or ``both``) task: the Bayesian change point of
  :mod:`silo_regress.stats.changepoint`, both pass rates unknown; a round is ``jobs``
  rollouts at the commit of most expected information; it stops when the culprit is
  named with the stated confidence (rollouts on both sides of it), or at the budget.
- An ``exact`` task: plain bisection on the byte verdict, one rollout a step (as many as
  the task has accepted variants, all of which must match, where it has several).

A rollout that left a run without a complete ``result.json`` is a failed rollout; one
that left no run at all is an infrastructure error, retried once and never counted. A
commit whose set-up fails, whose config does not load, or whose agent Silo cannot load
is skipped, as ``git bisect skip`` does, and named in the result.

State lives in the git directory (``silo-regress-bisect.json``, written atomically after
every round): an interrupted bisect resumes where it stopped. A lock beside it
(``flock``) refuses a second bisect while one runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.errors import InputError, RunnerError, SiloRegressError
from silo_regress.project.config import Config, Gate, load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.reports.bisection import BisectResult, Ending, Step, Untested
from silo_regress.stats import changepoint
from silo_regress.stats.changepoint import Counts
from silo_regress.system.fsio import write_atomic
from silo_regress.vcs import gitio, worktrees

if TYPE_CHECKING:
    from silo_regress.runner.plan import Task
    from silo_regress.runs.index import Run

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STATE_NAME = "silo-regress-bisect.json"
LOCK_NAME = "silo-regress-bisect.lock"
STATE_FORMAT = 1
SETUP_TIMEOUT = 1800.0
STATE_LIMIT = 64 * 1024 * 1024


class BisectBusyError(InputError):
    """Another bisect holds the lock (exit 3)."""


@dataclass(frozen=True)
class BisectOptions:
    ref: TaskRef
    good: str | None = None  # default: the commit that last changed the task's baselines
    bad: str = "HEAD"
    jobs: int = 5  # rollouts in a round (stats), run in parallel
    budget: int = 500  # rollouts at most, this bisect's own
    confidence: float = 0.95
    restart: bool = False  # drop a saved state for another task or range


# --- state ---------------------------------------------------------------------------


@dataclass
class _State:
    task: str
    good: str
    bad: str
    line: list[str]  # positions 0 .. n: good, then the candidates
    passed: dict[str, int] = field(default_factory=dict)
    rollouts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    used: int = 0
    rounds: int = 0
    free: int = 0

    def to_json(self) -> bytes:
        document = {
            "format": STATE_FORMAT,
            "task": self.task,
            "good": self.good,
            "bad": self.bad,
            "line": self.line,
            "passed": self.passed,
            "rollouts": self.rollouts,
            "skipped": self.skipped,
            "used": self.used,
            "rounds": self.rounds,
            "free": self.free,
        }
        return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, *, shown: str) -> _State:
        try:
            doc = json.loads(data)
            if doc.get("format") != STATE_FORMAT:
                raise ValueError("format")
            state = cls(
                task=str(doc["task"]),
                good=str(doc["good"]),
                bad=str(doc["bad"]),
                line=[str(s) for s in doc["line"]],
                passed={str(k): int(v) for k, v in doc["passed"].items()},
                rollouts={str(k): int(v) for k, v in doc["rollouts"].items()},
                skipped={str(k): str(v) for k, v in doc["skipped"].items()},
                used=int(doc["used"]),
                rounds=int(doc["rounds"]),
                free=int(doc["free"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise InputError(
                f"{shown}: not a bisect state this version can resume; remove it, or pass --restart"
            ) from None
        for sha, count in state.rollouts.items():
            if not 0 <= state.passed.get(sha, 0) <= count:
                raise InputError(f"{shown}: /passed/{sha}: more passes than rollouts")
        return state

    def add(self, sha: str, *, passed: int, rollouts: int) -> None:
        self.passed[sha] = self.passed.get(sha, 0) + passed
        self.rollouts[sha] = self.rollouts.get(sha, 0) + rollouts


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BisectBusyError(
                    f"{path}: another silo-regress bisect is running in this repository; "
                    "wait for it, or stop it (Ctrl-C leaves it resumable)"
                ) from None
        yield
    finally:
        os.close(fd)  # closing releases the flock


# --- the use case --------------------------------------------------------------------

Progress = Callable[[Step], None]


def bisect(
    config: Config, options: BisectOptions, *, on_step: Progress | None = None
) -> BisectResult:
    """Find the commit that made ``options.ref`` worse. Interrupting it (Ctrl-C,
    SIGTERM) keeps every finished round in the state file and leaves no worktree."""
    from silo_regress.runner.process import sigterm_as_interrupt

    if not 0.5 <= options.confidence < 1.0:
        raise InputError(f"--confidence must be in [0.5, 1), not {options.confidence}")
    if options.jobs < 1 or options.budget < options.jobs:
        raise InputError(f"need 1 <= --jobs <= --budget, not {options.jobs} and {options.budget}")
    repo = gitio.find_repository(config.project)
    task = _task(config, options.ref)
    settings = config.task_settings(options.ref, environment=task.environment)
    exact = settings.gate is Gate.EXACT
    place = worktrees.common_dir(repo)
    with _lock(place / LOCK_NAME), sigterm_as_interrupt():
        bad = gitio.resolve_commit(repo, options.bad)
        good = (
            gitio.resolve_commit(repo, options.good)
            if options.good
            else _recorded_at(config, repo, options.ref, exact=exact)
        )
        state_path = place / STATE_NAME
        state, resumed = _load_state(state_path, str(options.ref), good, bad, options.restart)
        if state is None:
            line = [good] + [c.sha for c in worktrees.first_parent_line(repo, good, bad)]
            if len(line) < 2:
                raise InputError(
                    f"{repo.root}: no commit lies after the good commit {good[:7]} up to the "
                    f"bad {bad[:7]} on its first-parent line, so there is nothing to bisect"
                )
            state = _State(str(options.ref), good, bad, line)
            if not exact:
                _seed(config, repo, task, options.ref, state)
            write_atomic(state_path, state.to_json())
        runner = _Rounds(config, repo, task, state, state_path, on_step)
        if exact:
            variants = _variant_count(config, options.ref)
            culprit = _bisect_exact(runner, options, variants=variants)
        else:
            culprit = _bisect_stats(runner, options)
        ending = Ending.FOUND if culprit is not None else Ending.UNDECIDED
        result = _result(
            config,
            repo,
            options,
            state,
            exact=exact,
            culprit=culprit,
            ending=ending,
            resumed=resumed,
        )
        if ending is Ending.FOUND:
            state_path.unlink(missing_ok=True)  # done: a new bisect starts afresh
        return result


def _task(config: Config, ref: TaskRef) -> Task:
    from silo_regress import runner
    from silo_regress.runs.cache import index_runs
    from silo_regress.store.baselines import BaselineStore

    index = index_runs(config.runs_dir)
    tasks = runner.plan_tasks(config, index, BaselineStore.of(config), [ref])
    if len(tasks) != 1:
        raise InputError(f"task {ref}: names {len(tasks)} tasks; name one as ENV/TASK")
    return tasks[0]


def _recorded_at(config: Config, repo: gitio.Repository, ref: TaskRef, *, exact: bool) -> str:
    """The commit that last changed the task's baseline tally (stats) or baselines."""
    from silo_regress.store.baselinenames import baseline_relpath, tally_relpath

    directory = repo.path_of(config.baselines_dir)
    if exact:
        names = [baseline_relpath(ref, a) for a in config.task_settings(ref).artifacts]
    else:
        names = [tally_relpath(ref)]
    paths = [f"{directory}/{n}" if directory else n for n in names]
    found = gitio.history(repo, paths)
    if not found:
        raise InputError(
            f"{paths[0]}: no commit has recorded this task's baseline, so bisect has no good "
            "commit to start from; name one with --good REF"
        )
    return found[0].sha


def _load_state(
    path: Path, task: str, good: str, bad: str, restart: bool
) -> tuple[_State | None, bool]:
    from silo_regress.system.fsio import read_optional

    # Never follow a link or block on a FIFO someone left there; a forged size is refused.
    data = read_optional(path, shown=str(path), limit=STATE_LIMIT, follow=False)
    if data is None:
        return None, False
    try:
        state = _State.from_json(data, shown=str(path))
    except InputError:
        if restart:
            return None, False
        raise
    if (state.task, state.good, state.bad) == (task, good, bad):
        return state, True
    if restart:
        return None, False
    raise InputError(
        f"{path}: a bisect of {state.task} between {state.good[:7]} and {state.bad[:7]} is "
        "not finished; run that again to resume it, or pass --restart to drop it"
    )


def _seed(config: Config, repo: gitio.Repository, task: Task, ref: TaskRef, state: _State) -> None:
    """Evidence in hand: the tally recorded at good, and the runs made at bad by an earlier
    ``check --run`` when their provenance says they were made from that commit, clean."""
    from silo_regress.runs.cache import index_runs
    from silo_regress.runs.provenance import read_provenance
    from silo_regress.stats.tally import TallyError, parse_tally
    from silo_regress.store.baselinenames import tally_relpath

    directory = repo.path_of(config.baselines_dir)
    name = tally_relpath(ref)
    path = f"{directory}/{name}" if directory else name
    (blob,) = gitio.read_blobs(repo, [f"{state.good}:{path}"])
    if blob is not None:
        with contextlib.suppress(TallyError, ValueError):
            tally = parse_tally(blob, source=f"{state.good[:7]}:{path}")
            state.add(state.good, passed=tally.passed, rollouts=tally.rollouts)
            state.free += tally.rollouts
    index = index_runs(config.runs_dir)
    passed = counted = 0
    for run in index.runs_of(*task.key):
        record = read_provenance(run.path)
        if record is None or record.commit != state.bad or record.dirty is not False:
            continue
        verdict = _passed(run)
        counted += 1
        passed += verdict
    if counted:
        state.add(state.bad, passed=passed, rollouts=counted)
        state.free += counted


def _passed(run: Run) -> bool:
    """A pass: a complete result.json whose ``passed`` is true; anything else failed."""
    from silo_regress.canon.canonical import parse
    from silo_regress.runs.index import UnreadableArtifactError, read_artifact

    try:
        data = read_artifact(run, "result.json")
        value = parse(data, source=str(run.path / "result.json")) if data is not None else None
    except (UnreadableArtifactError, InputError):
        return False
    return isinstance(value, dict) and value.get("passed") is True


def _variant_count(config: Config, ref: TaskRef) -> int:
    from silo_regress.store.baselinenames import baseline_relpath

    settings = config.task_settings(ref)
    count = 1
    for artifact in settings.artifacts:
        n = 1
        while (config.baselines_dir / baseline_relpath(ref, artifact, n + 1)).is_file():
            n += 1
        count = max(count, n)
    return count


# --- the two searches ----------------------------------------------------------------


def _bisect_stats(rounds: _Rounds, options: BisectOptions) -> int | None:
    """The change point; the culprit's position, or None when the budget ran out."""
    state = rounds.state
    while True:
        live = [sha for sha in state.line if sha not in state.skipped or sha == state.line[0]]
        counts = Counts(
            tuple(state.passed.get(s, 0) for s in live),
            tuple(state.rollouts.get(s, 0) for s in live),
        )
        if len(live) < 2:
            return None
        finding = changepoint.assess(counts, confidence=options.confidence)
        if finding.decided:
            return state.line.index(live[finding.culprit])
        if state.used + options.jobs > options.budget:
            return None
        testable = [sha not in state.skipped for sha in live]
        if not any(testable):
            return None
        j = changepoint.choose(counts, round_size=options.jobs, testable=testable)
        rounds.run(live[j], options.jobs, judge=None)


def _bisect_exact(rounds: _Rounds, options: BisectOptions, *, variants: int) -> int | None:
    """Plain bisection on the byte verdict; the culprit's position, or None."""
    state = rounds.state
    line = state.line
    low, high = 0, len(line) - 1  # low is good, high is bad
    # Resume: what earlier sessions learned bounds the search already.
    verdicts = {
        i: state.passed.get(sha, 0) == state.rollouts[sha]
        for i, sha in enumerate(line[1:-1], start=1)
        if state.rollouts.get(sha, 0) and sha not in state.skipped
    }
    low = max((i for i, good in verdicts.items() if good), default=0)
    high = min((i for i, good in verdicts.items() if not good and i > low), default=high)
    while True:
        between = [i for i in range(low + 1, high) if line[i] not in state.skipped]
        if not between:
            return high
        if state.used + variants > options.budget:
            return None
        middle = (low + high) / 2
        i = min(between, key=lambda k: (abs(k - middle), k))
        step = rounds.run(line[i], variants, judge=rounds.matches)
        if step.skipped is not None:
            continue
        if step.rollouts and step.passed == step.rollouts:
            low = i
        elif step.rollouts:
            high = i


# --- one round -----------------------------------------------------------------------


class _Rounds:
    """Runs a round at one commit, in a worktree of its own, and records it."""

    def __init__(
        self,
        config: Config,
        repo: gitio.Repository,
        task: Task,
        state: _State,
        state_path: Path,
        on_step: Progress | None,
    ) -> None:
        self.config = config
        self.repo = repo
        self.task = task
        self.state = state
        self.state_path = state_path
        self.on_step = on_step
        self.inside = repo.path_of(config.project)

    def run(self, sha: str, rollouts: int, *, judge: Callable[[Run], bool] | None) -> Step:
        step = self._attempt(sha, rollouts, judge=judge)
        if step.skipped is not None:
            self.state.skipped[sha] = step.skipped
        else:
            self.state.add(sha, passed=step.passed, rollouts=step.rollouts)
            self.state.used += step.rollouts
            self.state.rounds += 1
        write_atomic(self.state_path, self.state.to_json())
        if self.on_step is not None:
            self.on_step(step)
        return step

    def _attempt(self, sha: str, rollouts: int, *, judge: Callable[[Run], bool] | None) -> Step:
        from silo_regress import runner
        from silo_regress.commands.rollouts import QuietWatcher, RolloutFlags, execute_rollouts

        with worktrees.detached_worktree(self.repo, sha) as tree:
            project = tree / self.inside if self.inside else tree
            problem = self._set_up(project)
            if problem is not None:
                return Step(sha, 0, 0, 0, skipped=problem)
            try:
                config = load_config(project)
            except SiloRegressError as exc:
                return Step(sha, 0, 0, 0, skipped=f"its config does not load: {exc.message}")
            try:
                planned = runner.prepare_rollouts(config, [self.task], repeat=rollouts)
            except RunnerError as exc:
                return Step(sha, 0, 0, 0, skipped=f"its agent cannot be run: {exc.message}")
            # The shared policy of every command that starts Silo: an infrastructure
            # error (no run of its own) is run again up to retry-infra times, never counted;
            # a run without a complete result is a failed rollout (its result was read
            # when it ended).
            batch = execute_rollouts(
                config, planned, flags=RolloutFlags(jobs=rollouts), watcher=QuietWatcher()
            )
            passed = counted = infra = 0
            for outcome in batch.outcomes:
                if outcome.problem or outcome.run is None:
                    infra += 1
                    continue
                counted += 1
                if judge is None:
                    result = outcome.result
                    passed += result is not None and result.has_result and result.passed
                else:
                    passed += judge(outcome.run)
            if counted == 0 and batch.outcomes:
                reasons = {o.message.split("\n")[0] for o in batch.outcomes}
                return Step(
                    sha,
                    0,
                    0,
                    infra,
                    skipped="Silo could not run it: " + "; ".join(sorted(reasons)[:2]),
                )
            return Step(sha, passed, counted, infra)

    def _set_up(self, project: Path) -> str | None:
        command = self.config.bisect_setup
        if not command:
            return None
        try:
            done = subprocess.run(
                list(command),
                cwd=project,
                capture_output=True,
                timeout=SETUP_TIMEOUT,
                check=False,
                start_new_session=False,
            )
        except FileNotFoundError:
            return f"bisect-setup {list(command)} cannot start: {command[0]!r} not found"
        except subprocess.TimeoutExpired:
            return f"bisect-setup {list(command)} took over {SETUP_TIMEOUT:g} s"
        if done.returncode != 0:
            said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
            tail = f": {said[-1]}" if said else ""
            return f"bisect-setup {list(command)} exited {done.returncode}{tail}"
        return None

    def matches(self, run: Run) -> bool:
        """Whether every artifact of ``run`` matches an accepted variant, byte for byte,
        against the baselines of the user's working tree (what the failing check used)."""
        from silo_regress.judging.judge import check
        from silo_regress.judging.outcome import Verdict
        from silo_regress.runs.cache import index_runs
        from silo_regress.store.baselines import BaselineStore

        index = index_runs(self.config.runs_dir)
        report = check(
            self.config,
            index,
            BaselineStore.of(self.config),
            [self.task.ref],
            runs={self.task.key: run},
            allow_stale=True,
            workers=1,
        )
        return bool(report.outcomes) and all(o.verdict is Verdict.MATCH for o in report.outcomes)


# --- the result ----------------------------------------------------------------------


def _result(
    config: Config,
    repo: gitio.Repository,
    options: BisectOptions,
    state: _State,
    *,
    exact: bool,
    culprit: int | None,
    ending: Ending,
    resumed: bool,
) -> BisectResult:
    untested = tuple(
        Untested(sha, worktrees.subject_of(repo, sha), reason)
        for sha, reason in state.skipped.items()
    )
    sha = subject = None
    files: tuple[str, ...] = ()
    probability = None
    before = after = None
    suspects: tuple[str, ...] = ()
    if culprit is not None:
        sha = state.line[culprit]
        subject = worktrees.subject_of(repo, sha)
        files = tuple(_under_inputs(config, repo, worktrees.changed_files(repo, sha)))
        back = culprit - 1
        while back > 0 and state.line[back] in state.skipped:
            back -= 1
        suspects = tuple(state.line[back + 1 : culprit])
        if not exact:
            live = [s for s in state.line if s not in state.skipped or s == state.line[0]]
            counts = Counts(
                tuple(state.passed.get(s, 0) for s in live),
                tuple(state.rollouts.get(s, 0) for s in live),
            )
            probability = changepoint.posterior(counts)[live.index(sha)]
            before, after = changepoint.side_rates(counts, live.index(sha))
        else:
            probability = 1.0
    elif ending is Ending.UNDECIDED and not exact:
        live = [s for s in state.line if s not in state.skipped or s == state.line[0]]
        if len(live) >= 2:
            counts = Counts(
                tuple(state.passed.get(s, 0) for s in live),
                tuple(state.rollouts.get(s, 0) for s in live),
            )
            finding = changepoint.assess(counts, confidence=options.confidence)
            sha = live[finding.culprit]
            subject = worktrees.subject_of(repo, sha)
            probability = finding.probability
            before, after = changepoint.side_rates(counts, finding.culprit)
    return BisectResult(
        task=str(options.ref),
        gate="exact" if exact else "stats",
        ending=ending,
        good=state.good,
        bad=state.bad,
        commits=len(state.line) - 1,
        culprit=sha,
        subject=subject,
        files=files,
        probability=probability,
        confidence=options.confidence,
        before=before,
        after=after,
        rollouts=state.used,
        rounds=state.rounds,
        free_rollouts=state.free,
        untested=untested,
        suspects=suspects,
        resumed=resumed,
    )


def _under_inputs(config: Config, repo: gitio.Repository, paths: Sequence[str]) -> list[str]:
    """The paths (repository-relative) that match the configured inputs (or the agent)."""
    import fnmatch

    inside = repo.path_of(config.project)
    patterns = list(config.inputs) or ([config.agent] if config.agent else [])
    found = []
    for path in paths:
        if inside and not path.startswith(inside + "/"):
            continue
        local = path[len(inside) + 1 :] if inside else path
        if not patterns or any(
            fnmatch.fnmatch(local, p) or fnmatch.fnmatch(local, p.rstrip("*").rstrip("/") + "/*")
            for p in patterns
        ):
            found.append(path)
    return found


__all__ = [
    "BisectBusyError",
    "BisectOptions",
    "BisectResult",
    "Ending",
    "Step",
    "Untested",
    "bisect",
]
