"""Start Silo's command line for tasks, in parallel, and collect the runs it makes.

Values only: progress goes to an ``on_event`` callback, results come back as
values; nothing here prints or picks an exit code.

Which run belongs to which rollout
----------------------------------
Silo prints no run paths, has no flag for the runs directory, and every rollout
of a project writes into the same one. So the names in the runs directory are
snapshotted before a batch starts, and a directory that appears later is new. A
new directory is tied to a task only by its ``run.json`` (``environment`` and
``taskId``), never by its name or its timing, so rollouts of *different* tasks
can never be confused, however they interleave.

Rollouts of the *same* task run the very same command, and ``run.json`` does not
name the process that wrote it, so the runner does not guess which of two
simultaneous processes made which directory. It counts instead: a task's new
runs are collected only when every rollout of that task that has started has
also been seen to exit (so no directory of that task can still be in the making),
and then they are handed to those rollouts by kind: complete runs first to
rollouts that exited 0, then to rollouts that exited 1 (a verifier check failed),
runs without a result last (crashes, timeouts). What a task ran is exact; which
of two identical processes wrote which directory is unknowable and does not
matter. (Runs that some other process makes meanwhile, in the same runs
directory, of a task this batch is running cannot be told from this batch's.)

Silo's exit code 1 means "a verifier check failed" as well as "configuration
error"; the two are told apart by whether a new complete run exists.

Processes
---------
Each rollout starts in a new session (``start_new_session``): its process group
holds Silo and everything Silo starts (npx, node, tools). When the leader exits,
whatever is left of its group is killed; on timeout the group gets SIGTERM, then
SIGKILL after a grace period; on Ctrl-C (or SIGTERM to silo-regress) every
running group gets the same before ``KeyboardInterrupt`` goes on up. The leader
is awaited with ``waitid(WNOWAIT)``, which leaves it a zombie until its group has
been signalled: the zombie keeps its pid, which is the group id, reserved, so a
signal can never reach an unrelated process that reused the number. A process
that starts its own session escapes its group; nothing short of a cgroup catches
it.
"""

from __future__ import annotations

import contextlib
import enum
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from silo_regress.baselines import BaselineSource
from silo_regress.canonical import apply_ignores, canonicalize, serialize
from silo_regress.config import Config
from silo_regress.errors import InputError, RunnerError, TaskRefError
from silo_regress.jsondiff import MISSING, diff_values, resolve, show
from silo_regress.pointer import split_pointer
from silo_regress.runs import (
    Run,
    RunIndex,
    list_run_dirs,
    read_artifact,
    read_run,
    result_is_complete,
)
from silo_regress.targets import Target, select_targets
from silo_regress.taskref import TaskRef

Key = tuple[str, str]

DEFAULT_KILL_GRACE = 2.0
_STDERR_TAIL = 8192
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_DISK_FULL = re.compile(r"ENOSPC|no space left on device|disk quota exceeded", re.IGNORECASE)


# --- what to run --------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A task to start Silo for: the ref it is known by and where it runs."""

    ref: TaskRef
    environment: str
    task_id: str

    @property
    def key(self) -> Key:
        return (self.environment, self.task_id)

    @property
    def label(self) -> str:
        return f"{self.environment}/{self.task_id}"


def plan_tasks(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    refs: Sequence[TaskRef] = (),
    *,
    include_run_tasks: bool = False,
) -> list[Task]:
    """The tasks to run: the named ones, or every baselined task of ``source``.

    ``include_run_tasks`` adds every task that has runs (``record --repeat --all``).
    A task's environment comes from its ref, the configured ``environment``, or
    the one environment whose runs name it; Silo needs it as ``--env``.
    """
    baselines = config.relative(config.baselines_dir)
    targets: list[Target] = []
    if refs:
        for ref in refs:
            targets.extend(_targets_of(config, index, source, ref))
    else:
        targets = select_targets(config, index, source)
    if include_run_tasks:
        covered = {t.key for t in targets}
        for environment, task_id in index.task_keys():
            if (environment, task_id) not in covered:
                ref = _ref_for_run(config, index, environment, task_id)
                targets.append(Target(ref=ref, key=(environment, task_id), baselines=()))
    if not targets:
        raise RunnerError(
            f"{baselines}/: no baselines ({source.label}), so there is no task to run; "
            "name the tasks instead, e.g. silo-regress run ENV/TASK-001"
        )
    tasks: dict[Key, Task] = {}
    for target in targets:
        if target.key is None:
            raise TaskRefError(
                f"{baselines}/: cannot tell which environment to run task {target.ref} in "
                f"(no run under {config.relative(config.runs_dir)}/ names it); set "
                f"'environment' in [tool.silo-regress], or name it as ENV/{target.ref.task_id}"
            )
        tasks.setdefault(target.key, Task(target.ref, *target.key))
    return list(tasks.values())


def _targets_of(
    config: Config, index: RunIndex, source: BaselineSource, ref: TaskRef
) -> list[Target]:
    try:
        return select_targets(config, index, source, [ref])
    except TaskRefError:
        # Neither baseline nor run: fine for a first run, if the environment is known.
        environment = ref.environment or config.environment
        if environment is None:
            raise TaskRefError(
                f"task {ref}: no baseline and no run name it, so its environment is unknown; "
                f"run it as ENV/{ref.task_id}, or set 'environment' in [tool.silo-regress]"
            ) from None
        return [Target(ref=ref, key=(environment, ref.task_id), baselines=())]


def _ref_for_run(config: Config, index: RunIndex, environment: str, task_id: str) -> TaskRef:
    """The ref ``record --all`` would write this task's baselines under."""
    if config.environment is not None:
        return TaskRef(task_id, None if environment == config.environment else environment)
    if len(index.environments_of(task_id)) > 1:
        return TaskRef(task_id, environment)
    return TaskRef(task_id)


@dataclass(frozen=True)
class Rollout:
    """One start of Silo's command line for one task."""

    task: Task
    number: int
    repeat: int
    argv: tuple[str, ...]
    timeout: float | None

    @property
    def label(self) -> str:
        return self.task.label + (f" #{self.number}" if self.repeat > 1 else "")


def prepare_rollouts(
    config: Config,
    tasks: Sequence[Task],
    *,
    repeat: int = 1,
    agent: str | None = None,
    timeout: float | None = None,
) -> list[Rollout]:
    """Build each rollout's command line; ``agent`` and ``timeout`` override config.

    Raises :class:`RunnerError` before anything starts when Silo's command cannot
    be found or an agent file does not exist. Repeats are interleaved (every task
    once, then every task again) so a slow task does not hold a whole batch.
    """
    if repeat < 1:
        raise RunnerError(f"--repeat must be at least 1, not {repeat}")
    where = (config.relative(config.source) if config.source else "pyproject.toml") + (
        " [tool.silo-regress]"
    )
    checked: set[tuple[str, ...]] = set()
    argvs: list[tuple[str, ...]] = []
    timeouts: list[float | None] = []
    for task in tasks:
        settings = config.settings_for(task.environment)
        command = settings.silo_command or config.silo_command
        if command not in checked:
            own = config.environments.get(task.environment)
            scope = f" environments.{task.environment}" if own and own.silo_command else ""
            _require_command(config, command, where=where + scope)
            checked.add(command)
        agent_path = agent if agent is not None else settings.agent
        if agent_path is not None:
            _require_agent(config, agent_path, given=agent is not None, where=where)
        argv = (*command, "run", "--env", task.environment, "--task", task.task_id)
        argvs.append(argv + (("--agent", agent_path) if agent_path is not None else ()))
        timeouts.append(timeout if timeout is not None else settings.timeout)
    return [
        Rollout(task=task, number=n, repeat=repeat, argv=argv, timeout=limit)
        for n in range(1, repeat + 1)
        for task, argv, limit in zip(tasks, argvs, timeouts, strict=True)
    ]


def _require_command(config: Config, command: tuple[str, ...], *, where: str) -> None:
    program = command[0]
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else config.project / program
        found = path.is_file() and os.access(path, os.X_OK)
        place = f"{path} is not an executable file"
    else:
        found = shutil.which(program) is not None
        place = f"{program!r} is not on PATH"
    if not found:
        raise RunnerError(
            f"{where}: silo-command {list(command)} cannot start Silo: "
            f'{place}; set silo-command to how you start Silo, e.g. ["npx", "--no", "silo"]'
        )


def _require_agent(config: Config, agent: str, *, given: bool, where: str) -> None:
    path = Path(agent) if os.path.isabs(agent) else config.project / agent
    if not path.is_file():
        origin = "--agent" if given else f"{where} agent"
        raise RunnerError(
            f"{config.relative(path)}: agent file not found ({origin} {agent!r}, "
            "relative to the project directory)"
        )


def default_jobs() -> int:
    """Parallel rollouts when neither ``--jobs`` nor ``jobs`` says: the usable CPUs."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# --- events and outcomes ------------------------------------------------------


@dataclass(frozen=True)
class Started:
    rollout: Rollout
    running: int
    total: int


@dataclass(frozen=True)
class Exited:
    rollout: Rollout
    exit_code: int | None  # None: it could not be started; negative: killed by a signal
    seconds: float
    timed_out: bool
    done: int
    total: int


Event = Started | Exited


class RolloutState(enum.StrEnum):
    PASSED = "passed"  # exit 0, complete run
    CHECK_FAILED = "check-failed"  # exit 1, complete run: a verifier check failed
    INCOMPLETE = "incomplete"  # a run without a complete result.json: Silo crashed
    NO_RUN = "no-run"  # no run at all: a configuration error, Silo's message says which
    TIMED_OUT = "timed-out"
    DISK_FULL = "disk-full"


# Problems with the setup rather than verdicts about a run.
SETUP_PROBLEMS = frozenset({RolloutState.NO_RUN, RolloutState.TIMED_OUT, RolloutState.DISK_FULL})


@dataclass(frozen=True)
class RolloutOutcome:
    rollout: Rollout
    state: RolloutState
    exit_code: int | None
    seconds: float
    run: Run | None
    message: str

    @property
    def problem(self) -> bool:
        return self.state in SETUP_PROBLEMS


@dataclass(frozen=True)
class Batch:
    """What a batch of rollouts did: one outcome per rollout, the new runs per task."""

    outcomes: tuple[RolloutOutcome, ...]
    runs: dict[Key, tuple[Run, ...]]  # new runs of each task, oldest first
    strays: tuple[str, ...]  # new directories not tied to a rollout of this batch
    seconds: float

    @property
    def problems(self) -> tuple[RolloutOutcome, ...]:
        return tuple(o for o in self.outcomes if o.problem)

    def newest(self) -> dict[Key, Run]:
        return {key: runs[-1] for key, runs in self.runs.items() if runs}


# --- running ------------------------------------------------------------------


def execute(
    config: Config,
    rollouts: Sequence[Rollout],
    *,
    jobs: int,
    on_event: Callable[[Event], None] | None = None,
    kill_grace: float = DEFAULT_KILL_GRACE,
) -> Batch:
    """Run ``rollouts``, ``jobs`` at a time, in the project directory; collect their runs.

    ``on_event`` is called from the calling thread only. On ``KeyboardInterrupt``
    every running rollout's process group is stopped before it propagates.
    """
    started = time.monotonic()
    pool = _Pool(config, rollouts, jobs=max(1, jobs), on_event=on_event, kill_grace=kill_grace)
    with _sigterm_as_interrupt():
        pool.run()
    outcomes = tuple(o for o in pool.outcomes if o is not None)
    return Batch(
        outcomes=outcomes,
        runs={key: tuple(runs) for key, runs in pool.claimed.items()},
        strays=tuple(pool.strays()),
        seconds=time.monotonic() - started,
    )


@dataclass
class _Live:
    rollout: Rollout
    proc: subprocess.Popen[bytes]
    started: float
    deadline: float | None
    timed_out: bool = False
    term_at: float | None = None
    killed: bool = False


@dataclass(frozen=True)
class _Exit:
    index: int
    rollout: Rollout
    code: int | None
    seconds: float
    timed_out: bool
    stderr: str
    stdout: str = ""
    error: str | None = None


@dataclass
class _Pool:
    config: Config
    rollouts: Sequence[Rollout]
    jobs: int
    on_event: Callable[[Event], None] | None
    kill_grace: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    events: queue.Queue[tuple[str, Any]] = field(default_factory=queue.Queue)
    live: dict[int, _Live] = field(default_factory=dict)
    started_per_key: Counter[Key] = field(default_factory=Counter)
    exited_per_key: Counter[Key] = field(default_factory=Counter)
    waiting: dict[Key, list[_Exit]] = field(default_factory=dict)
    claimed: dict[Key, list[Run]] = field(default_factory=dict)
    claimed_names: set[str] = field(default_factory=set)
    known: dict[str, Run] = field(default_factory=dict)
    stopping: bool = False

    def __post_init__(self) -> None:
        self.before = frozenset(e.name for e in list_run_dirs(self.config.runs_dir))
        self.pending: deque[tuple[int, Rollout]] = deque(enumerate(self.rollouts))
        self.outcomes: list[RolloutOutcome | None] = [None] * len(self.rollouts)
        self.threads = [
            threading.Thread(target=self._work, name=f"silo-rollout-{i}", daemon=True)
            for i in range(min(self.jobs, len(self.rollouts)))
        ]

    # -- worker threads: start, wait, report; nothing else touches a process --

    def _work(self) -> None:
        try:
            while self._run_next():
                pass
        except BaseException as exc:  # a bug: let the main thread raise it
            self.events.put(("bug", exc))

    def _run_next(self) -> bool:
        with self.lock:
            if self.stopping or not self.pending:
                return False
            index, rollout = self.pending.popleft()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            exit_ = self._roll(index, rollout, out, err)
        if exit_ is not None:
            self.events.put(("exited", exit_))
        return True

    def _roll(self, index: int, rollout: Rollout, out: IO[bytes], err: IO[bytes]) -> _Exit | None:
        with self.lock:
            if self.stopping:  # Ctrl-C came between taking the rollout and starting it
                return None
            self.started_per_key[rollout.task.key] += 1
            try:
                proc = subprocess.Popen(
                    rollout.argv,
                    cwd=self.config.project,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                return _Exit(index, rollout, None, 0.0, False, "", "", exc.strerror or str(exc))
            now = time.monotonic()
            deadline = now + rollout.timeout if rollout.timeout is not None else None
            self.live[index] = _Live(rollout, proc, now, deadline)
            running = len(self.live)
        self.events.put(("started", (rollout, running)))
        _await_exit(proc)
        with self.lock:
            entry = self.live.pop(index)
            # The leader is a zombie still, so its pid (the group id) cannot have been reused.
            _signal_group(proc.pid, signal.SIGKILL)
        code = proc.wait()
        seconds = time.monotonic() - entry.started
        return _Exit(index, rollout, code, seconds, entry.timed_out, _tail(err), _tail(out))

    # -- the calling thread: events, deadlines, attribution ---------------------

    def run(self) -> None:
        total, done = len(self.rollouts), 0
        try:
            for thread in self.threads:
                thread.start()
            while done < total:
                try:
                    kind, payload = self.events.get(timeout=self._tick())
                except queue.Empty:
                    self._enforce_deadlines()
                    continue
                if kind == "bug":
                    raise payload
                if kind == "started":
                    rollout, running = payload
                    self._emit(Started(rollout, running, total))
                else:
                    done += 1
                    self._exited(payload, done, total)
                self._enforce_deadlines()
        except BaseException:
            self._stop_all()
            raise
        for key in list(self.waiting):
            with self.lock:
                runs = self._new_runs_of(key)
            self._settle(key, runs)

    def _tick(self) -> float:
        now, wake = time.monotonic(), 0.25
        with self.lock:
            for entry in self.live.values():
                if entry.term_at is not None:
                    wake = min(wake, entry.term_at + self.kill_grace - now)
                elif entry.deadline is not None:
                    wake = min(wake, entry.deadline - now)
        return max(wake, 0.01)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        with self.lock:
            for entry in self.live.values():
                if entry.term_at is None:
                    if entry.deadline is not None and now >= entry.deadline:
                        entry.timed_out, entry.term_at = True, now
                        _signal_group(entry.proc.pid, signal.SIGTERM)
                elif not entry.killed and now >= entry.term_at + self.kill_grace:
                    entry.killed = True
                    _signal_group(entry.proc.pid, signal.SIGKILL)

    def _stop_all(self) -> None:
        """Stop every rollout: SIGTERM, then SIGKILL after the grace period; reap them."""
        with _ignoring_interrupts():
            with self.lock:
                self.stopping = True
                self.pending.clear()
                for entry in self.live.values():
                    _signal_group(entry.proc.pid, signal.SIGTERM)
            deadline = time.monotonic() + self.kill_grace
            for thread in self.threads:
                if thread.ident is not None:
                    thread.join(max(0.0, deadline - time.monotonic()))
            with self.lock:
                for entry in self.live.values():
                    _signal_group(entry.proc.pid, signal.SIGKILL)
            for thread in self.threads:
                if thread.ident is not None:
                    thread.join(10)

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def _exited(self, exit_: _Exit, done: int, total: int) -> None:
        self._emit(Exited(exit_.rollout, exit_.code, exit_.seconds, exit_.timed_out, done, total))
        key = exit_.rollout.task.key
        self.waiting.setdefault(key, []).append(exit_)
        self.exited_per_key[key] += 1
        # Under the lock no rollout can start meanwhile, so when every started
        # rollout of the task has exited, every directory of the task is complete.
        with self.lock:
            if self.started_per_key[key] > self.exited_per_key[key]:
                return
            runs = self._new_runs_of(key)
        self._settle(key, runs)

    def _settle(self, key: Key, runs: list[Run]) -> None:
        """Hand the task's new runs to its exited rollouts, by kind (module docstring)."""
        exits = self.waiting.pop(key, [])
        self.claimed.setdefault(key, []).extend(runs)
        self.claimed[key].sort(key=lambda r: r.order)
        complete = [r for r in runs if result_is_complete(r)]
        broken = [r for r in runs if r not in complete]
        for exit_ in sorted(exits, key=_claim_order):
            run: Run | None = None
            whole = False
            if exit_.error is None and complete:
                run, whole = complete.pop(0), True
            elif exit_.error is None and broken:
                run = broken.pop(0)
            self.outcomes[exit_.index] = self._classify(exit_, run, complete=whole)

    def _new_runs_of(self, key: Key) -> list[Run]:
        found = []
        for name, run in self._identify_new().items():
            if run.key == key and name not in self.claimed_names:
                self.claimed_names.add(name)
                found.append(run)
        return sorted(found, key=lambda r: r.order)

    def _identify_new(self) -> dict[str, Run]:
        for entry in list_run_dirs(self.config.runs_dir):
            if entry.name in self.before or entry.name in self.known:
                continue
            found = read_run(Path(entry.path))
            if isinstance(found, Run):
                self.known[entry.name] = found
        return self.known

    def strays(self) -> Iterator[str]:
        runs_dir = self.config.relative(self.config.runs_dir)
        for entry in sorted(list_run_dirs(self.config.runs_dir), key=lambda e: e.name):
            if entry.name in self.before or entry.name in self.claimed_names:
                continue
            found = read_run(Path(entry.path))
            if isinstance(found, Run):
                yield (
                    f"{runs_dir}/{entry.name}: a new run of {found.environment}/{found.task_id}, "
                    "which this command did not start (another Silo process?)"
                )
            else:
                yield f"{runs_dir}/{entry.name}: new, but not a usable run: {found.reason}"

    def _classify(self, exit_: _Exit, run: Run | None, *, complete: bool) -> RolloutOutcome:
        rollout = exit_.rollout

        def outcome(state: RolloutState, message: str) -> RolloutOutcome:
            return RolloutOutcome(rollout, state, exit_.code, exit_.seconds, run, message)

        label = rollout.label
        said = _said(exit_)
        where = f" ({self.config.relative(run.path)})" if run is not None else ""
        if exit_.error is not None:
            return outcome(
                RolloutState.NO_RUN,
                f"{label}: cannot start {rollout.argv[0]!r}: {exit_.error}",
            )
        if exit_.timed_out:
            left = f"; it left {self.config.relative(run.path)} behind" if run is not None else ""
            return outcome(
                RolloutState.TIMED_OUT,
                f"{label}: timed out after {rollout.timeout:g} s; "
                f"its process group was killed{left}",
            )
        if run is not None and complete:
            if exit_.code == 0:
                return outcome(RolloutState.PASSED, f"{label}: passed{where}")
            return outcome(
                RolloutState.CHECK_FAILED,
                f"{label}: a verifier check failed (Silo {_exit_words(exit_.code)}){where}",
            )
        if _DISK_FULL.search(exit_.stderr):
            return outcome(
                RolloutState.DISK_FULL,
                f"{label}: the disk is full, Silo could not write its run{where}: {said}",
            )
        if run is not None:
            return outcome(
                RolloutState.INCOMPLETE,
                f"{label}: Silo {_exit_words(exit_.code)} and left no complete result.json"
                f"{where}: {said}",
            )
        if exit_.code == 0:
            hint = ""
            if self.config.runs_dir != self.config.project / ".silo" / "runs":
                hint = (
                    "; Silo's command line writes to .silo/runs/ of the project directory: "
                    "is runs-dir right?"
                )
            runs_dir = self.config.relative(self.config.runs_dir)
            return outcome(
                RolloutState.NO_RUN,
                f"{label}: Silo exited 0 but no new run appeared under {runs_dir}/{hint}",
            )
        return outcome(
            RolloutState.NO_RUN,
            f"{label}: Silo {_exit_words(exit_.code)} without writing a run: {said}",
        )


def _claim_order(exit_: _Exit) -> tuple[bool, bool, bool, int]:
    return (exit_.timed_out, exit_.code != 0, exit_.code != 1, exit_.index)


def _exit_words(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited {code}"


def _said(exit_: _Exit) -> str:
    text = exit_.stderr.strip() or exit_.stdout.strip()
    if not text:
        return "it printed nothing"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-10:])


def _tail(handle: IO[bytes]) -> str:
    try:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - _STDERR_TAIL))
        data = handle.read()
    except OSError:
        return ""
    return _ANSI_ESCAPE.sub("", data.decode("utf-8", "replace"))


def _await_exit(proc: subprocess.Popen[bytes]) -> None:
    """Block until the process exits, without reaping it (see the module docstring)."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # no waitid: reaping here is the best that can be done
        proc.wait()
        return
    with contextlib.suppress(ChildProcessError):
        waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM (a cancelled CI job) like Ctrl-C, so rollouts are stopped, not orphaned."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _ignoring_interrupts() -> Iterator[None]:
    """A second Ctrl-C must not cut the clean-up of the first one short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# --- repeats: do the runs agree? ----------------------------------------------


@dataclass(frozen=True)
class Variation:
    """One JSON Pointer whose value differs between the repeats of a task."""

    artifact: str
    path: str
    variants: tuple[tuple[Any, int], ...]  # (value or MISSING, count), most common first

    def describe(self) -> str:
        """``/agentOutput: 3 variants`` or ``/checks/2/passed: true x2, false x1``."""
        path = self.path or "(whole document)"
        if all(_listable(value) for value, _ in self.variants):
            return f"{path}: " + ", ".join(f"{show(v)} x{n}" for v, n in self.variants)
        return f"{path}: {len(self.variants)} variants"


_TOKEN = re.compile(r"[\w.:+-]{1,24}")


def _listable(value: Any) -> bool:
    """Short scalar values are worth listing; prose and structures are counted."""
    if value is MISSING or value is None or isinstance(value, bool | int | float):
        return True
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


@dataclass(frozen=True)
class Stability:
    """Whether a task's repeated rollouts left byte-identical canonical artifacts."""

    task: Task
    expected: int
    runs: tuple[Run, ...]  # complete runs, oldest first
    broken: tuple[Run, ...]  # runs with a missing or unparseable artifact
    distinct: int  # distinct artifact sets among the complete runs
    variations: tuple[Variation, ...]

    @property
    def identical(self) -> bool:
        return not self.variations

    @property
    def stable(self) -> bool:
        return self.identical and not self.broken and len(self.runs) >= self.expected


def assess(config: Config, batch: Batch, tasks: Sequence[Task], *, repeat: int) -> list[Stability]:
    """Compare each task's new runs artifact by artifact, after canonicalization.

    Ignored paths (``ignore`` in config) are replaced by their placeholder first,
    as ``check`` does, so a field the project ignores cannot make a task flaky.
    """
    return [_assess_task(config, task, batch.runs.get(task.key, ()), repeat) for task in tasks]


def _assess_task(config: Config, task: Task, runs: Sequence[Run], repeat: int) -> Stability:
    complete: list[tuple[Run, dict[str, tuple[bytes, Any]]]] = []
    broken: list[Run] = []
    for run in runs:
        docs = _canonical_artifacts(config, run)
        if docs is None:
            broken.append(run)
        else:
            complete.append((run, docs))
    variations: list[Variation] = []
    for artifact in config.artifacts:
        texts = {docs[artifact][0] for _, docs in complete}
        if len(texts) > 1:
            values = [docs[artifact][1] for _, docs in complete]
            variations.extend(_variations(artifact, values))
    distinct = len({tuple(d[a][0] for a in config.artifacts) for _, d in complete})
    return Stability(
        task=task,
        expected=repeat,
        runs=tuple(run for run, _ in complete),
        broken=tuple(broken),
        distinct=distinct,
        variations=tuple(variations),
    )


def _canonical_artifacts(config: Config, run: Run) -> dict[str, tuple[bytes, Any]] | None:
    docs: dict[str, tuple[bytes, Any]] = {}
    for artifact in config.artifacts:
        data = read_artifact(run, artifact)
        if data is None:
            return None
        try:
            doc = canonicalize(data, source=config.relative(run.path / artifact))
        except InputError:
            return None
        value = apply_ignores(doc.value, artifact=artifact, ignore=config.ignore)
        docs[artifact] = (doc.text if value is doc.value else serialize(value), value)
    return docs


def _variations(artifact: str, values: Sequence[Any]) -> list[Variation]:
    paths: dict[str, None] = {}
    for other in values[1:]:
        for change in diff_values(values[0], other):
            paths.setdefault(change.path, None)
    found = []
    for path in paths:
        parts = split_pointer(path)
        counts: dict[bytes, list[Any]] = {}
        for value in values:
            member = resolve(value, parts)
            identity = b"" if member is MISSING else serialize(member)
            counts.setdefault(identity, [member, 0])[1] += 1
        ranked = sorted(counts.values(), key=lambda pair: -int(pair[1]))
        found.append(Variation(artifact, path, tuple((v, int(n)) for v, n in ranked)))
    return found
