"""The plan of units: every rollout of a check as one unit of work, split over N workers.

A unit is one rollout: a task (its ref and environment) and a rollout index k, run from
one fingerprint of agent and inputs. The plan is a pure function of the checked tasks
(from the config and the baselines) and the repeat count, so every worker of a CI
matrix, a Kubernetes Indexed Job or ``xargs -P`` computes the same plan and takes its
own part, with no coordinator: position j of the plan goes to worker ``j % N + 1``.
Round-robin over a task-major order spreads one task's 40 rollouts over 40 workers and
gives every worker the same number of units, give or take one.

Worker I of N comes from ``--unit I/N`` (1-based, like ``--shard``), from
``SILO_REGRESS_UNIT=I/N``, or, with ``--unit auto/N``, from the engine's own 0-based
index: ``JOB_COMPLETION_INDEX`` (a Kubernetes Indexed Job) or ``SILO_REGRESS_UNIT_INDEX``
(set it from a GitHub matrix's ``strategy.job-index``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from silo_regress.errors import UsageError
from silo_regress.project.taskref import TaskRef

MAX_WORKERS = 10_000
UNIT_VARIABLE = "SILO_REGRESS_UNIT"  # I/N, 1-based
INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "SILO_REGRESS_UNIT_INDEX")  # 0-based, for auto/N
ROLLOUT_VARIABLE = "SILO_REGRESS_ROLLOUT"  # ENV/TASK#k, in Silo's environment
_FORM = re.compile(r"\s*(auto|\d+)\s*/\s*(\d+)\s*")
_ROLLOUT = re.compile(r"(?P<env>[^/#]+)/(?P<task>[^/#]+)#(?P<k>[1-9][0-9]{0,8})")


@dataclass(frozen=True, order=True)
class Unit:
    """One rollout of the plan: rollout ``k`` (1-based) of ``environment/task_id``."""

    environment: str
    task_id: str
    k: int

    def __str__(self) -> str:
        return f"{self.environment}/{self.task_id}#{self.k}"


@dataclass(frozen=True)
class Worker:
    """Worker ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class PlannedTask:
    """A task of the plan: the ref it is reported by and the environment it runs in."""

    ref: TaskRef
    environment: str
    task_id: str


@dataclass(frozen=True)
class Plan:
    """Every unit of a check, in plan order, and the digest that names the plan."""

    tasks: tuple[PlannedTask, ...]
    repeat: int
    units: tuple[Unit, ...]
    digest: str
    fingerprint: str | None

    def part(self, worker: Worker) -> tuple[Unit, ...]:
        """The units ``worker`` runs: every N-th unit of the plan, from its own offset."""
        return self.units[worker.index - 1 :: worker.count]


def parse_rollout(text: str) -> Unit | None:
    """``crm-west/TASK-001#3`` -> Unit; None for anything else."""
    match = _ROLLOUT.fullmatch(text)
    if match is None:
        return None
    return Unit(match.group("env"), match.group("task"), int(match.group("k")))


def plan_units(tasks: Sequence[PlannedTask], *, repeat: int, fingerprint: str | None) -> Plan:
    """The plan of ``repeat`` rollouts of each task: tasks by ref, then k = 1..repeat.

    The digest covers the units and the fingerprint, so two workers that planned from
    other baselines, another repeat count or other inputs name different plans."""
    if repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {repeat}")
    ordered = sorted(
        {(t.environment, t.task_id): t for t in tasks}.values(),
        key=lambda t: (TaskRef.sort_key(t.ref), t.environment),
    )
    units = tuple(Unit(t.environment, t.task_id, k) for t in ordered for k in range(1, repeat + 1))
    digest = hashlib.sha256()
    digest.update(f"fingerprint {fingerprint or '-'}\nrepeat {repeat}\n".encode())
    for task in ordered:
        digest.update(f"task {task.ref} {task.environment} {task.task_id}\n".encode())
    return Plan(tuple(ordered), repeat, units, digest.hexdigest(), fingerprint)


def parse_worker(text: str | None, environ: Mapping[str, str]) -> Worker | None:
    """Worker I of N from ``--unit`` (``text``), else ``SILO_REGRESS_UNIT``; None for
    neither. ``auto/N`` takes I from the engine's 0-based index variable."""
    origin = "--unit"
    if text is None:
        text = environ.get(UNIT_VARIABLE, "").strip() or None
        origin = UNIT_VARIABLE
        if text is None:
            return None
    match = _FORM.fullmatch(text)
    if match is None:
        raise UsageError(
            f"{origin} {text!r}: expected I/N (1-based, e.g. 3/64) or auto/N (I from "
            f"{' or '.join(INDEX_VARIABLES)}, 0-based)"
        )
    count = int(match.group(2))
    if not 1 <= count <= MAX_WORKERS:
        raise UsageError(f"{origin} {text!r}: N must be between 1 and {MAX_WORKERS}")
    if match.group(1) == "auto":
        index = _engine_index(environ, origin=origin, text=text)
    else:
        index = int(match.group(1))
    if not 1 <= index <= count:
        raise UsageError(f"{origin} {text!r}: I must be between 1 and N ({count})")
    return Worker(index, count)


def _engine_index(environ: Mapping[str, str], *, origin: str, text: str) -> int:
    for name in INDEX_VARIABLES:
        value = environ.get(name, "").strip()
        if not value:
            continue
        if not value.isdigit() or len(value) > 6:
            raise UsageError(f"{name}={value!r} is not a 0-based index ({origin} {text!r})")
        return int(value) + 1
    raise UsageError(
        f"{origin} {text!r}: auto needs {' or '.join(INDEX_VARIABLES)} set to this worker's "
        "0-based index (a Kubernetes Indexed Job sets the first; a GitHub matrix can pass "
        "${{ strategy.job-index }} as the second)"
    )


@dataclass(frozen=True)
class UnitCoverage:
    """How much of a plan a merged report judged: the units nobody reported, those that
    never started (after retries) and those that started only on a retry."""

    planned: int
    counted: int
    missing: tuple[Unit, ...] = ()
    infra_errors: tuple[Unit, ...] = ()
    retried: tuple[Unit, ...] = ()

    @property
    def complete(self) -> bool:
        """Every planned unit counted: the decision was taken on the whole plan."""
        return not self.missing and not self.infra_errors

    @property
    def eventful(self) -> bool:
        """Anything to say: a unit missing, unstarted, or started only on a retry."""
        return not self.complete or bool(self.retried)
