"""Unit reports pooled into one check: counts added exactly, one suite decision.

``merge`` of the reports of ``check --run --unit I/N`` workers. The reports must come
from one plan (the same tasks, repeat count and fingerprint of agent and inputs), one
statistical policy, the same baseline tallies and one resource class (unless the
caller pools across classes); any disagreement is refused naming both files. A unit
reported twice with the same result (a retried job) counts once; two different
results for one unit are refused, naming both. Units nobody reported, and units that
never started after their retries, are named, and the decision says it was taken on
fewer rollouts than planned. Each task's pooled tally is what one machine running the
whole plan would have counted (judging/tallying), so the suite is judged as it would be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.errors import InputError
from silo_regress.judging.outcome import Report
from silo_regress.judging.tallying import RolloutResult, count_results
from silo_regress.judging.units import Unit, UnitCoverage
from silo_regress.reports.statsmerge import policy_json, same_policy
from silo_regress.reports.unitreport import UnitOutcome, UnitReport, UnitResult
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Evidence, judge_tasks

SHOWN = 10  # units named in a sentence; the JSON report lists them all


@dataclass(frozen=True)
class PooledUnits:
    """The merged check and what the workers said beside it."""

    report: Report
    coverage: UnitCoverage
    duplicates: int  # units reported twice with the same result, counted once
    warnings: tuple[str, ...]


def merge_units(
    reports: Sequence[tuple[str, UnitReport]], *, pool_across_classes: bool = False
) -> PooledUnits:
    """One report from every worker's unit report; raises InputError naming two files."""
    if not reports:
        raise InputError("no reports to merge")
    _check_agreement(reports, pool_across_classes=pool_across_classes)
    first = reports[0][1]
    plan = first.plan
    chosen: dict[Unit, tuple[str, UnitOutcome]] = {}
    duplicates = 0
    for name, report in reports:
        for outcome in report.outcomes:
            held = chosen.get(outcome.unit)
            if held is None:
                chosen[outcome.unit] = (name, outcome)
                continue
            if held[1].same_result(outcome):
                duplicates += 1
                continue
            if outcome.result is UnitResult.INFRA_ERROR:
                continue  # a retry elsewhere started it: that result stands
            if held[1].result is UnitResult.INFRA_ERROR:
                chosen[outcome.unit] = (name, outcome)
                continue
            raise InputError(
                f"{name}: rollout {outcome.unit} is {_said(outcome)}, but {held[0]} says it "
                f"is {_said(held[1])}; one unit has one result: keep the report of the run "
                "you trust and merge again"
            )
    missing = tuple(u for u in plan.units if u not in chosen)
    infra = tuple(u for u in plan.units if u in chosen and not chosen[u][1].result.counted)
    retried = tuple(
        u
        for u in plan.units
        if u in chosen and chosen[u][1].result.counted and chosen[u][1].infra_errors
    )
    counted = len(plan.units) - len(missing) - len(infra)
    coverage = UnitCoverage(len(plan.units), counted, missing, infra, retried)
    by_task: dict[tuple[str, str], list[UnitOutcome]] = {}
    for unit in plan.units:  # plan order: k = 1..M within each task
        if unit in chosen:
            by_task.setdefault((unit.environment, unit.task_id), []).append(chosen[unit][1])
    evidence = []
    for entry in first.tasks:
        task = entry.task
        results = by_task.get((task.environment, task.task_id), [])
        tally = pool_tally([o for o in results if o.result.counted])
        evidence.append(
            Evidence(
                str(task.ref),
                entry.baseline,
                tally if tally.rollouts else None,
                tally_path=entry.tally_path,
                without_result=tuple(
                    o.run or str(o.unit) for o in results if o.result is UnitResult.NO_RESULT
                ),
            )
        )
    judged = judge_tasks(evidence, first.policy)
    warnings = _warnings(coverage, reports, chosen)
    merged = Report(
        outcomes=(), warnings=warnings, repeat=plan.repeat, stats=judged, units=coverage
    )
    return PooledUnits(merged, coverage, duplicates, warnings)


def pool_tally(outcomes: Sequence[UnitOutcome]) -> Tally:
    """The tally of these rollouts, counted by the very function that counts one
    machine's (judging/tallying): a rollout without a result is a failed one with
    reward 0 (DESIGN.md, "Counting rollouts"), and the sums do not depend on order."""
    results = [
        RolloutResult(
            run=o.run or str(o.unit),
            digest=o.result_sha256,
            passed=o.result is UnitResult.PASSED,
            reward=o.reward,
            checks=o.checks,
        )
        for o in outcomes
    ]
    return count_results(results, variants={}).tally


def _said(outcome: UnitOutcome) -> str:
    digest = f" (result.json {outcome.result_sha256[:12]})" if outcome.result_sha256 else ""
    return f"{outcome.result}{digest}"


def _check_agreement(
    reports: Sequence[tuple[str, UnitReport]], *, pool_across_classes: bool
) -> None:
    first_name, first = reports[0]
    for name, report in reports:
        if report.fingerprint != first.fingerprint:
            raise InputError(
                f"{name}: its rollouts were made from inputs {_short(report.fingerprint)}, "
                f"{first_name}'s from {_short(first.fingerprint)}; units of different agents "
                "or inputs are never pooled: run every unit from one commit"
            )
        if report.plan.digest != first.plan.digest:
            raise InputError(
                f"{name}: planned from other tasks or another --repeat ({len(report.plan.tasks)} "
                f"tasks x {report.plan.repeat}) than {first_name} ({len(first.plan.tasks)} tasks "
                f"x {first.plan.repeat}); every unit must plan the same check"
            )
        if report.worker.count != first.worker.count:
            raise InputError(
                f"{name}: unit {report.worker} of another split than {first_name}'s "
                f"{first.worker}; give every worker the same N"
            )
        if not same_policy(report.policy, first.policy):
            raise InputError(
                f"{name}: its stats policy (alpha {report.policy.alpha}, "
                f"{policy_json(report.policy)}) differs from {first_name}'s (alpha "
                f"{first.policy.alpha}, {policy_json(first.policy)}); use one config everywhere"
            )
        for mine, theirs in zip(report.tasks, first.tasks, strict=True):
            if mine.baseline != theirs.baseline:
                raise InputError(
                    f"{name}: the baseline tally of {mine.task.ref} differs from the one "
                    f"{first_name} read; check out the same commit in every worker"
                )
        if not pool_across_classes and report.resource != first.resource:
            raise InputError(
                f"{name}: ran on {report.resource}, {first_name} on {first.resource}; pass "
                "rates can differ between machine kinds, so tallies are pooled across "
                "classes only with --pool-across-classes"
            )


def _short(fingerprint: str | None) -> str:
    return fingerprint[:12] if fingerprint else "(no inputs configured)"


def _listed(units: Sequence[Unit]) -> str:
    shown = ", ".join(str(u) for u in units[:SHOWN])
    return shown + (f" and {len(units) - SHOWN} more" if len(units) > SHOWN else "")


def _warnings(
    coverage: UnitCoverage,
    reports: Sequence[tuple[str, UnitReport]],
    chosen: dict[Unit, tuple[str, UnitOutcome]],
) -> tuple[str, ...]:
    out = []
    count = reports[0][1].worker.count
    if coverage.missing:
        position = {u: n for n, u in enumerate(reports[0][1].plan.units)}
        owners = sorted({position[u] % count + 1 for u in coverage.missing})
        workers = ", ".join(f"{i}/{count}" for i in owners[:SHOWN])
        out.append(
            f"{len(coverage.missing)} of {coverage.planned} planned rollouts have no report "
            f"({_listed(coverage.missing)}; units {workers}): the suite was decided on "
            f"{coverage.counted} of {coverage.planned} rollouts"
        )
    if coverage.infra_errors:
        first = chosen[coverage.infra_errors[0]][1]
        why = first.infra_errors[-1] if first.infra_errors else "not started"
        out.append(
            f"{len(coverage.infra_errors)} rollouts never started after their retries "
            f"(infra-error, in no tally: {_listed(coverage.infra_errors)}; first: {why}): "
            f"the suite was decided on {coverage.counted} of {coverage.planned} rollouts"
        )
    if coverage.retried:
        out.append(
            f"{len(coverage.retried)} rollouts started only on a retry after an infrastructure "
            f"error ({_listed(coverage.retried)}); each is counted once"
        )
    return tuple(out)
