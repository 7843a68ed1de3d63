"""Rollout planning: which tasks to start Silo for, and each rollout's command line.

Everything is decided before anything starts: a missing Silo command or agent file
is a :class:`RunnerError` raised here, so a batch never half-starts.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from silo_regress.errors import RunnerError, TaskRefError
from silo_regress.judging.targets import Target, ref_for_run, select_targets
from silo_regress.judging.units import ROLLOUT_VARIABLE, Unit
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import RunIndex
from silo_regress.store.baselines import BaselineSource

Key = tuple[str, str]


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
    # A file whose name maps to no task has no task to run: check names it.
    targets = [t for t in targets if not t.refused]
    if include_run_tasks:
        covered = {t.key for t in targets}
        for environment, task_id in index.task_keys():
            if (environment, task_id) not in covered:
                ref = ref_for_run(config, index, environment, task_id)
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
                f"{config.location.key('environment')}, or name it as ENV/{target.ref.task_id}"
            )
        tasks.setdefault(target.key, Task(target.ref, *target.key))
    return list(tasks.values())


def _targets_of(
    config: Config, index: RunIndex, source: BaselineSource, ref: TaskRef
) -> list[Target]:
    try:
        found = [t for t in select_targets(config, index, source, [ref]) if not t.refused]
    except TaskRefError:
        found = []
    if found:
        return found
    # Neither baseline nor run: fine for a first run, if the environment is known.
    environment = ref.environment or config.environment
    if environment is None:
        raise TaskRefError(
            f"task {ref}: no baseline and no run name it, so its environment is unknown; "
            f"run it as ENV/{ref.task_id}, or set {config.location.key('environment')}"
        )
    return [Target(ref=ref, key=(environment, ref.task_id), baselines=())]


@dataclass(frozen=True)
class Rollout:
    """One start of Silo's command line for one task."""

    task: Task
    number: int
    repeat: int
    argv: tuple[str, ...]
    timeout: float | None
    command: tuple[str, ...] = ()  # the silo-command part of argv
    agent: str | None = None  # the agent file passed as --agent, relative to the project

    @property
    def label(self) -> str:
        return self.task.label + (f" #{self.number}" if self.repeat > 1 else "")

    @property
    def unit(self) -> Unit:
        """The rollout's identity in a plan of units: task and rollout index."""
        return Unit(self.task.environment, self.task.task_id, self.number)

    @property
    def environ(self) -> dict[str, str]:
        """What Silo's process gets in its environment beside ours: the rollout's
        identity, ``ENV/TASK#k``, so a seeded agent or a stand-in can derive from it."""
        return {ROLLOUT_VARIABLE: str(self.unit)}


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
    where = config_place(config)
    checked: set[tuple[str, ...]] = set()
    argvs: list[tuple[str, ...]] = []
    timeouts: list[float | None] = []
    commands: list[tuple[str, ...]] = []
    agents: list[str | None] = []
    for task in tasks:
        settings = config.settings_for(task.environment)
        command = settings.silo_command or config.silo_command
        if command not in checked:
            _require_command(config, command, where=command_place(config, task.environment))
            checked.add(command)
        agent_path = agent if agent is not None else settings.agent
        if agent_path is not None:
            _require_agent(config, agent_path, given=agent is not None, where=where)
        argv = (*command, "run", "--env", task.environment, "--task", task.task_id)
        argvs.append(argv + (("--agent", agent_path) if agent_path is not None else ()))
        timeouts.append(timeout if timeout is not None else settings.timeout)
        commands.append(command)
        agents.append(agent_path)
    return [
        Rollout(task, n, repeat, argv, limit, command=command, agent=agent_path)
        for n in range(1, repeat + 1)
        for task, argv, limit, command, agent_path in zip(
            tasks, argvs, timeouts, commands, agents, strict=True
        )
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
            f"{where}: silo-command {list(command)} cannot start Silo: {place}; {HINT}"
        )


HINT = (
    "set silo-command to how you start Silo in this project, e.g. "
    'silo-command = ["npm", "run", "--silent", "silo", "--"] for a package.json script, '
    'or ["node_modules/.bin/silo"]'
)


def config_place(config: Config) -> str:
    """Where the project's settings live, as messages name it."""
    return config.location.place()


def command_place(config: Config, environment: str) -> str:
    """Where the ``silo-command`` that an environment's rollouts use is set."""
    own = config.environments.get(environment)
    scope = f" environments.{environment}" if own and own.silo_command else ""
    return config_place(config) + scope


def _require_agent(config: Config, agent: str, *, given: bool, where: str) -> None:
    """Refuse an agent Silo could not load or a run could not be judged by: one sentence
    naming it, before anything starts (exit 3)."""
    path = Path(agent) if os.path.isabs(agent) else config.project / agent
    origin = f"--agent {agent!r}" if given else f"{where} agent {agent!r}"
    shown = config.relative(path)
    try:
        info = os.stat(path)
    except OSError:
        raise RunnerError(
            f"{shown}: agent file not found ({origin}, relative to the project directory "
            f"{config.project})"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else kind
        raise RunnerError(f"{shown}: is {kind}, not an agent file ({origin})")
    inside = os.path.realpath(path)
    project = os.path.realpath(config.project)
    if not inside.startswith(project.rstrip(os.sep) + os.sep):
        raise RunnerError(
            f"{shown}: lies outside the project {config.project} ({origin}); a run's agent "
            "is fingerprinted with the project's inputs, so copy it into the project"
        )


def default_jobs() -> int:
    """Parallel rollouts when neither ``--jobs`` nor ``jobs`` says: the usable CPUs."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
