"""The unit report: what one worker of ``check --run --unit I/N`` ran, as ``merge`` reads it.

A JSON document, versioned like the check report (:mod:`.schema`), written by the
worker and validated field by field when read back: a report is written by a machine
somebody else controls, so every count, name and digest is checked before it decides
anything, and a bad one is one sentence naming the file and the JSON path (exit 3)::

    {"kind": "silo-regress-units", "version": 1,
     "unit": {"index": 3, "count": 64},
     "plan": {"digest": "...", "repeat": 40, "units": 2000},
     "fingerprint": "..." or null,
     "resourceClass": {"name": "ubuntu-latest", "cpus": 4},
     "alpha": 0.05, "policy": {...},
     "tasks": [{"task": "crm-west/TASK-001", "environment": "crm-west",
                "taskId": "TASK-001", "tally": "baselines/...", "baseline": {tally}|null}],
     "rollouts": [{"rollout": "crm-west/TASK-001#3", "result": "passed",
                   "resultSha256": "...", "run": "run_...", "reward": 1,
                   "checks": {"Lead qualified": true}, "attempts": 1,
                   "infraErrors": []}]}

``tasks`` lists every task of the plan, not only this worker's, so ``merge`` can
rebuild the whole plan and name the units nobody reported.
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silo_regress.errors import InputError
from silo_regress.judging.units import (
    MAX_WORKERS,
    Plan,
    PlannedTask,
    Unit,
    Worker,
    plan_units,
)
from silo_regress.project.taskref import parse_ref
from silo_regress.reports.statsmerge import MAX_ROLLOUTS, policy_json, read_policy
from silo_regress.runs.provenance import ResourceClass, read_resource_class
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Policy

UNIT_REPORT_KIND = "silo-regress-units"
UNIT_REPORT_VERSION = 1
UNIT_REPORT_LIMIT = 1 << 28  # as the check report's: /dev/zero stops here
# The suite's exact test grows with the square of the tasks: 1,000 judge in about a
# second; a forged report of 100,000 tasks would hold merge for hours.
MAX_PLAN_TASKS = 1000
MAX_MESSAGES = 20  # infra errors kept per rollout: the first ones say why
_HEX64 = re.compile(r"[0-9a-f]{64}")


class UnitResult(enum.StrEnum):
    """What one unit (rollout) came to, as a tally counts it."""

    PASSED = "passed"
    FAILED = "failed"
    NO_RESULT = "no-result"  # started, left no complete result.json: a failed rollout
    INFRA_ERROR = "infra-error"  # never started (after retries): in no tally

    @property
    def counted(self) -> bool:
        return self is not UnitResult.INFRA_ERROR


@dataclass(frozen=True)
class UnitOutcome:
    """One unit's result, with the digest of the ``result.json`` it was counted from."""

    unit: Unit
    result: UnitResult
    result_sha256: str | None
    run: str | None
    reward: float
    checks: tuple[tuple[str, bool], ...]
    attempts: int
    infra_errors: tuple[str, ...] = ()

    def same_result(self, other: UnitOutcome) -> bool:
        """Whether two reports of this unit say the same (a retried job): counted once."""
        return (self.result, self.result_sha256, self.reward, self.checks) == (
            other.result,
            other.result_sha256,
            other.reward,
            other.checks,
        )


@dataclass(frozen=True)
class PlanTaskEntry:
    """A task of the plan with its baseline tally, as the worker read it."""

    task: PlannedTask
    tally_path: str | None
    baseline: Tally | None


@dataclass(frozen=True)
class UnitReport:
    """One worker's report: its place in the plan and its units' results."""

    worker: Worker
    plan: Plan
    fingerprint: str | None
    resource: ResourceClass
    policy: Policy
    tasks: tuple[PlanTaskEntry, ...]
    outcomes: tuple[UnitOutcome, ...]


# --- writing ------------------------------------------------------------------


def unit_report_json(report: UnitReport) -> dict[str, Any]:
    return {
        "kind": UNIT_REPORT_KIND,
        "version": UNIT_REPORT_VERSION,
        "unit": {"index": report.worker.index, "count": report.worker.count},
        "plan": {
            "digest": report.plan.digest,
            "repeat": report.plan.repeat,
            "units": len(report.plan.units),
        },
        "fingerprint": report.fingerprint,
        "resourceClass": report.resource.to_json(),
        "alpha": report.policy.alpha,
        "policy": policy_json(report.policy),
        "tasks": [
            {
                "task": str(entry.task.ref),
                "environment": entry.task.environment,
                "taskId": entry.task.task_id,
                "tally": entry.tally_path,
                "baseline": entry.baseline.to_json() if entry.baseline is not None else None,
            }
            for entry in report.tasks
        ],
        "rollouts": [
            {
                "rollout": str(o.unit),
                "result": o.result.value,
                "resultSha256": o.result_sha256,
                "run": o.run,
                "reward": o.reward,
                "checks": dict(o.checks),
                "attempts": o.attempts,
                "infraErrors": list(o.infra_errors),
            }
            for o in report.outcomes
        ],
    }


def dump_unit_report(report: UnitReport) -> str:
    return json.dumps(unit_report_json(report), indent=2, ensure_ascii=False) + "\n"


# --- reading ------------------------------------------------------------------


def is_unit_report(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") == UNIT_REPORT_KIND


def read_report_file(path: Path) -> tuple[bytes, Any]:
    """A report file's bytes and their JSON (None when they are not JSON: the check
    report's reader then says why), or InputError naming it."""
    from silo_regress.system.fsio import read_regular

    try:
        data = read_regular(path, shown=str(path), limit=UNIT_REPORT_LIMIT)
    except FileNotFoundError:
        raise InputError(f"{path}: no such report file") from None
    try:
        return data, json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return data, None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


PlanCache = dict[str, tuple[tuple[PlanTaskEntry, ...], dict[tuple[int, str | None], Plan]]]


def load_unit_report(document: Any, *, source: str, cache: PlanCache | None = None) -> UnitReport:
    """A :class:`UnitReport` from a parsed document, every field validated.

    ``cache`` shares the tasks and plans already read between the reports of one merge:
    64 workers send the same 50 tasks, which need reading (and their tallies parsing)
    once. A cached entry was validated the first time, under the same bytes."""
    if not is_unit_report(document):
        raise InputError(f'{source}: not a unit report (no "kind": "{UNIT_REPORT_KIND}")')
    version = document.get("version")
    if isinstance(version, bool) or version != UNIT_REPORT_VERSION:
        raise InputError(
            f"{source}: /version {version!r} is not {UNIT_REPORT_VERSION}, the unit report "
            "version this silo-regress reads; make every report with the same version"
        )
    worker = _worker(document.get("unit"), source)
    plan_value = _object(document.get("plan"), f"{source}: /plan")
    repeat = _whole(plan_value.get("repeat"), f"{source}: /plan/repeat", low=1, high=MAX_ROLLOUTS)
    raw_tasks = document.get("tasks")
    key = json.dumps(raw_tasks, sort_keys=True, ensure_ascii=False) if cache is not None else ""
    if cache is not None and key in cache:
        tasks, plans = cache[key]
    else:
        tasks, plans = _tasks(raw_tasks, source), {}
        if cache is not None:
            cache[key] = (tasks, plans)
    fingerprint = document.get("fingerprint")
    if fingerprint is not None and (
        not isinstance(fingerprint, str) or not _HEX64.fullmatch(fingerprint)
    ):
        raise InputError(f"{source}: /fingerprint must be a SHA-256 in hex or null")
    if len(tasks) > MAX_PLAN_TASKS:
        raise InputError(
            f"{source}: /tasks lists {len(tasks)} tasks, over the {MAX_PLAN_TASKS} a plan of "
            "units may hold"
        )
    if len(tasks) * repeat > MAX_ROLLOUTS:
        raise InputError(
            f"{source}: /plan holds {len(tasks)} tasks x {repeat} rollouts, over the "
            f"{MAX_ROLLOUTS} rollouts a check may count"
        )
    plan = plans.get((repeat, fingerprint)) or plan_units(
        [e.task for e in tasks], repeat=repeat, fingerprint=fingerprint
    )
    plans[(repeat, fingerprint)] = plan
    if plan_value.get("digest") != plan.digest or plan_value.get("units") != len(plan.units):
        raise InputError(
            f"{source}: /plan does not match its tasks, repeat and fingerprint (edited, or "
            "written by another version)"
        )
    try:
        resource = read_resource_class(document.get("resourceClass"))
    except ValueError as exc:
        raise InputError(f"{source}: /resourceClass: {exc}") from None
    if resource is None:
        raise InputError(f"{source}: /resourceClass is missing")
    policy = read_policy(document.get("policy"), document.get("alpha"), f"{source}: ")
    mine = set(plan.part(worker))
    outcomes = _outcomes(document.get("rollouts"), source, mine=mine)
    return UnitReport(worker, plan, fingerprint, resource, policy, tasks, outcomes)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be an object")
    return value


def _whole(value: Any, where: str, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{where} must be a whole number from {low} to {high}")
    return value


def _worker(value: Any, source: str) -> Worker:
    item = _object(value, f"{source}: /unit")
    count = _whole(item.get("count"), f"{source}: /unit/count", low=1, high=MAX_WORKERS)
    index = _whole(item.get("index"), f"{source}: /unit/index", low=1, high=count)
    return Worker(index, count)


def _tasks(value: Any, source: str) -> tuple[PlanTaskEntry, ...]:
    from silo_regress.canon.canonical import serialize
    from silo_regress.errors import TaskRefError
    from silo_regress.stats.tally import parse_tally

    if not isinstance(value, list) or not value or len(value) > MAX_ROLLOUTS:
        raise InputError(f"{source}: /tasks must be a list of the plan's tasks")
    entries = []
    for n, item in enumerate(value):
        where = f"{source}: /tasks/{n}"
        item = _object(item, where)
        names = [item.get(key) for key in ("task", "environment", "taskId")]
        if not all(isinstance(x, str) and x and x.isprintable() for x in names):
            raise InputError(f"{where} must name its task, environment and taskId")
        try:
            ref = parse_ref(str(names[0]))
        except TaskRefError as exc:
            raise InputError(f"{where}/task: {exc.message}") from None
        if "/" in str(names[1]) + str(names[2]) or "#" in str(names[1]) + str(names[2]):
            raise InputError(f"{where}: environment and taskId must be plain names")
        tally_path = item.get("tally")
        if tally_path is not None and not isinstance(tally_path, str):
            raise InputError(f"{where}/tally must be a path or null")
        baseline = None
        if item.get("baseline") is not None:
            try:
                data = serialize(item["baseline"])
            except (InputError, TypeError, ValueError):
                raise InputError(f"{where}/baseline is not a tally") from None
            baseline = parse_tally(data, source=f"{where}/baseline")
            if baseline.rollouts > MAX_ROLLOUTS:
                raise InputError(f"{where}/baseline counts over {MAX_ROLLOUTS} rollouts")
        entries.append(
            PlanTaskEntry(PlannedTask(ref, str(names[1]), str(names[2])), tally_path, baseline)
        )
    return tuple(entries)


def _outcomes(value: Any, source: str, *, mine: set[Unit]) -> tuple[UnitOutcome, ...]:
    if not isinstance(value, list) or len(value) > len(mine):
        raise InputError(f"{source}: /rollouts must be a list of at most this unit's rollouts")
    by_name = {str(u): u for u in mine}  # a worker's own units, by the names it gives them
    results = {r.value: r for r in UnitResult}
    found: dict[Unit, UnitOutcome] = {}
    for n, item in enumerate(value):
        where = f"{source}: /rollouts/{n}"
        item = _object(item, where)
        named = item.get("rollout")
        unit = by_name.get(named) if isinstance(named, str) else None
        if unit is None:
            raise InputError(f"{where}/rollout must be one of this unit's rollouts (ENV/TASK#k)")
        if unit in found:
            raise InputError(f"{where}: rollout {unit} is reported twice in one unit report")
        result = results.get(str(item.get("result")))
        if result is None:
            raise InputError(f"{where}/result must be one of {', '.join(results)}")
        digest = item.get("resultSha256")
        if digest is not None and (not isinstance(digest, str) or not _HEX64.fullmatch(digest)):
            raise InputError(f"{where}/resultSha256 must be a SHA-256 in hex or null")
        if (digest is None) != (result in (UnitResult.NO_RESULT, UnitResult.INFRA_ERROR)):
            raise InputError(
                f"{where}: a {result} rollout {'has no' if digest else 'needs a'} "
                "result.json digest"
            )
        reward = item.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise InputError(f"{where}/reward must be a number")
        try:
            reward_value = float(reward)
        except OverflowError:
            reward_value = math.inf
        if not math.isfinite(reward_value) or abs(reward_value) > 1e12:
            raise InputError(f"{where}/reward is out of range")
        checks = item.get("checks")
        if (
            not isinstance(checks, dict)
            or len(checks) > 1000
            or not all(isinstance(v, bool) for v in checks.values())
        ):
            raise InputError(f"{where}/checks must map check labels to true or false")
        run = item.get("run")
        if run is not None and (not isinstance(run, str) or not run.isprintable()):
            raise InputError(f"{where}/run must be a run id or null")
        attempts = _whole(item.get("attempts"), f"{where}/attempts", low=1, high=1000)
        errors = item.get("infraErrors")
        if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
            raise InputError(f"{where}/infraErrors must be a list of messages")
        found[unit] = UnitOutcome(
            unit=unit,
            result=result,
            result_sha256=digest,
            run=run,
            reward=reward_value,
            checks=tuple(sorted(checks.items())),
            attempts=attempts,
            infra_errors=tuple(errors[:MAX_MESSAGES]),
        )
    return tuple(found.values())
