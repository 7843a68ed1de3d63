"""The plan of units (judging/units.py), unit reports read back (reports/unitreport.py)
and pooled (reports/unitmerge.py): pure values, no processes."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from silo_regress.errors import InputError, UsageError
from silo_regress.judging.units import (
    PlannedTask,
    Unit,
    Worker,
    parse_rollout,
    parse_worker,
    plan_units,
)
from silo_regress.project.taskref import parse_ref
from silo_regress.reports.unitmerge import merge_units, pool_tally
from silo_regress.reports.unitreport import (
    PlanCache,
    PlanTaskEntry,
    UnitOutcome,
    UnitReport,
    UnitResult,
    load_unit_report,
    unit_report_json,
)
from silo_regress.runs.provenance import ResourceClass
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import Policy, SuiteGate

FINGERPRINT = "a" * 64
SHA = "b" * 64


def tasks(n: int) -> list[PlannedTask]:
    return [PlannedTask(parse_ref(f"TASK-{i:03d}"), "crm-west", f"TASK-{i:03d}") for i in range(n)]


# --- the plan -----------------------------------------------------------------


def test_the_plan_is_the_same_whatever_order_the_tasks_come_in() -> None:
    forward = plan_units(tasks(5), repeat=3, fingerprint=FINGERPRINT)
    backward = plan_units(list(reversed(tasks(5))), repeat=3, fingerprint=FINGERPRINT)
    assert forward == backward
    assert forward.units[:4] == (
        Unit("crm-west", "TASK-000", 1),
        Unit("crm-west", "TASK-000", 2),
        Unit("crm-west", "TASK-000", 3),
        Unit("crm-west", "TASK-001", 1),
    )


def test_the_digest_names_the_tasks_the_repeat_and_the_fingerprint() -> None:
    base = plan_units(tasks(5), repeat=3, fingerprint=FINGERPRINT)
    assert plan_units(tasks(5), repeat=4, fingerprint=FINGERPRINT).digest != base.digest
    assert plan_units(tasks(4), repeat=3, fingerprint=FINGERPRINT).digest != base.digest
    assert plan_units(tasks(5), repeat=3, fingerprint="c" * 64).digest != base.digest


def test_2000_rollouts_over_64_workers_are_balanced_and_spread() -> None:
    plan = plan_units(tasks(50), repeat=40, fingerprint=FINGERPRINT)
    parts = [plan.part(Worker(i, 64)) for i in range(1, 65)]
    assert sorted(u for part in parts for u in part) == sorted(plan.units)  # each unit once
    assert {len(p) for p in parts} == {31, 32}
    # one task's 40 rollouts land on 40 different workers
    owners = {u: i for i, part in enumerate(parts) for u in part}
    for task in plan.tasks:
        assert len({owners[u] for u in plan.units if u.task_id == task.task_id}) == 40


def test_more_workers_than_units_leaves_some_idle() -> None:
    plan = plan_units(tasks(1), repeat=2, fingerprint=None)
    assert plan.part(Worker(3, 4)) == ()
    assert plan.part(Worker(2, 4)) == (Unit("crm-west", "TASK-000", 2),)


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("3/64", {}, Worker(3, 64)),
        (" 1 / 2 ", {}, Worker(1, 2)),
        ("auto/8", {"JOB_COMPLETION_INDEX": "0"}, Worker(1, 8)),
        ("auto/8", {"SILO_REGRESS_UNIT_INDEX": "7"}, Worker(8, 8)),
        (None, {"SILO_REGRESS_UNIT": "2/5"}, Worker(2, 5)),
        (None, {"SILO_REGRESS_UNIT": "auto/5", "JOB_COMPLETION_INDEX": "4"}, Worker(5, 5)),
        (None, {}, None),
    ],
)
def test_a_worker_comes_from_the_option_or_the_engines_variables(
    text: str | None, environ: dict[str, str], expected: Worker | None
) -> None:
    assert parse_worker(text, environ) == expected


@pytest.mark.parametrize(
    ("text", "environ", "words"),
    [
        ("0/4", {}, "I must be between 1 and N"),
        ("5/4", {}, "I must be between 1 and N"),
        ("1/0", {}, "N must be between"),
        ("x/4", {}, "expected I/N"),
        ("auto/4", {}, "auto needs JOB_COMPLETION_INDEX"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "4"}, "I must be between 1 and N"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "-1"}, "not a 0-based index"),
        (None, {"SILO_REGRESS_UNIT": "3"}, "SILO_REGRESS_UNIT '3'"),
    ],
)
def test_a_bad_worker_is_a_usage_error_naming_where_it_came_from(
    text: str | None, environ: dict[str, str], words: str
) -> None:
    with pytest.raises(UsageError, match=words):
        parse_worker(text, environ)


def test_rollout_identities_parse_back() -> None:
    assert parse_rollout("crm-west/TASK-001#12") == Unit("crm-west", "TASK-001", 12)
    assert str(Unit("crm-west", "TASK-001", 12)) == "crm-west/TASK-001#12"
    for bad in ("TASK-001#1", "crm-west/TASK-001#0", "a/b/c#1", "crm-west/TASK-001#x"):
        assert parse_rollout(bad) is None


# --- unit reports -------------------------------------------------------------


def baseline() -> Tally:
    return Tally(rollouts=20, passed=16, checks=(("Lead qualified", 16),), reward_sum=16)


def outcome(unit: Unit, result: UnitResult = UnitResult.PASSED, **extra: Any) -> UnitOutcome:
    passed = result is UnitResult.PASSED
    counted = result in (UnitResult.PASSED, UnitResult.FAILED)
    fields: dict[str, Any] = {
        "unit": unit,
        "result": result,
        "result_sha256": (SHA if passed else "c" * 64) if counted else None,
        "run": "run_1" if result is not UnitResult.INFRA_ERROR else None,
        "reward": 1.0 if passed else 0.33 if counted else 0.0,
        "checks": (("Lead qualified", passed),) if counted else (),
        "attempts": 1,
    }
    fields.update(extra)
    return UnitOutcome(**fields)


def report(
    worker: Worker,
    *,
    n_tasks: int = 2,
    repeat: int = 4,
    results: dict[Unit, UnitResult] | None = None,
    **extra: Any,
) -> UnitReport:
    plan = plan_units(tasks(n_tasks), repeat=repeat, fingerprint=FINGERPRINT)
    entries = tuple(
        PlanTaskEntry(t, f"baselines/{t.task_id}.tally.json", baseline()) for t in plan.tasks
    )
    results = results or {}
    fields: dict[str, Any] = {
        "worker": worker,
        "plan": plan,
        "fingerprint": FINGERPRINT,
        "resource": ResourceClass("ubuntu-latest", 4),
        "policy": Policy(),
        "tasks": entries,
        "outcomes": tuple(outcome(u, results.get(u, UnitResult.PASSED)) for u in plan.part(worker)),
    }
    fields.update(extra)
    return UnitReport(**fields)


def roundtrip(value: UnitReport) -> UnitReport:
    document = json.loads(json.dumps(unit_report_json(value)))
    return load_unit_report(document, source="unit.json")


def test_a_unit_report_reads_back_as_written() -> None:
    written = report(Worker(2, 3), results={Unit("crm-west", "TASK-000", 2): UnitResult.FAILED})
    assert roundtrip(written) == written


def forged(change: Any) -> dict[str, Any]:
    document = json.loads(json.dumps(unit_report_json(report(Worker(1, 2)))))
    change(document)
    return document  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(alpha=0), r"alpha must be a number in \(0, 0.5\]"),
        (lambda d: d.update(alpha=-1), "alpha must be"),
        (lambda d: d.update(alpha="0"), "alpha must be"),
        (lambda d: d.update(alpha=True), "alpha must be"),
        (lambda d: d["policy"].update(suite_gate="never"), "suite_gate must be one of"),
        (lambda d: d["policy"].update(k=10**400), "policy.k must be"),
        (lambda d: d["plan"].update(repeat=10**400), "/plan/repeat must be"),
        (lambda d: d["plan"].update(repeat=5), "/plan does not match"),
        (lambda d: d["unit"].update(index=3), "/unit/index must be"),
        (lambda d: d.update(version=True), "/version True is not 1"),
        (lambda d: d["rollouts"][0].update(rollout="crm-west/TASK-000#2"), "this unit's"),
        (lambda d: d["rollouts"][0].update(result="great"), "result must be one of"),
        (lambda d: d["rollouts"][0].update(reward=10**400), "reward is out of range"),
        (lambda d: d["rollouts"][0].update(resultSha256=None), "needs a result.json digest"),
        (lambda d: d["tasks"][0]["baseline"].update(rollouts=10**400), "baseline"),
        (lambda d: d["tasks"][0]["baseline"].update(passed=True), "baseline"),
        (lambda d: d.update(resourceClass={"name": "a\nb", "cpus": 2}), "resourceClass"),
        (lambda d: d["rollouts"].append(d["rollouts"][0]), "reported twice|at most"),
    ],
)
def test_a_forged_unit_report_is_refused_naming_the_file_and_path(change: Any, words: str) -> None:
    with pytest.raises(InputError, match=words) as caught:
        load_unit_report(forged(change), source="unit.json")
    assert caught.value.message.startswith("unit.json: ")


# --- pooling ------------------------------------------------------------------


def named(*reports: UnitReport) -> list[tuple[str, UnitReport]]:
    return [(f"unit-{n}.json", r) for n, r in enumerate(reports, 1)]


def test_pooled_counts_add_exactly_and_a_retried_job_counts_once() -> None:
    failing = {Unit("crm-west", "TASK-000", 2): UnitResult.FAILED}
    one, two = report(Worker(1, 2), results=failing), report(Worker(2, 2), results=failing)
    pooled = merge_units(named(one, two, two))  # the second worker's job ran twice
    assert pooled.duplicates == len(two.outcomes)
    assert pooled.coverage.complete and pooled.coverage.counted == 8
    stats = pooled.report.stats
    assert stats is not None
    first = next(t for t in stats.tasks if t.task == "TASK-000")
    assert first.candidate is not None
    assert (first.candidate.rollouts, first.candidate.passed) == (4, 3)
    assert first.candidate.check_passed("Lead qualified") == 3
    assert first.candidate.reward_sum == 3.33
    assert first.baseline == baseline()


def test_two_results_for_one_unit_are_refused_naming_both_reports() -> None:
    one = report(Worker(1, 2))
    again = report(Worker(1, 2), results={Unit("crm-west", "TASK-000", 1): UnitResult.FAILED})
    with pytest.raises(
        InputError, match=r"unit-2.json: rollout crm-west/TASK-000#1 is failed"
    ) as caught:
        merge_units(named(one, again))
    assert "unit-1.json says it is passed" in caught.value.message


def test_a_unit_that_never_started_is_replaced_by_a_retry_that_did() -> None:
    unit = Unit("crm-west", "TASK-000", 1)
    lost = report(Worker(1, 2), results={unit: UnitResult.INFRA_ERROR})
    pooled = merge_units(named(lost, report(Worker(1, 2)), report(Worker(2, 2))))
    assert pooled.coverage.complete
    pooled = merge_units(named(lost, report(Worker(2, 2))))
    assert pooled.coverage.infra_errors == (unit,)
    assert pooled.coverage.counted == 7
    assert "1 rollouts never started" in pooled.warnings[0]


def test_missing_units_are_named_and_the_decision_says_fewer_rollouts() -> None:
    pooled = merge_units(named(report(Worker(1, 2))))
    assert pooled.coverage.missing == report(Worker(2, 2)).plan.part(Worker(2, 2))
    assert not pooled.coverage.complete
    assert "4 of 8 planned rollouts have no report" in pooled.warnings[0]
    assert "units 2/2" in pooled.warnings[0]
    assert "decided on 4 of 8 rollouts" in pooled.warnings[0]


def test_units_of_other_inputs_are_refused_naming_both() -> None:
    other = report(Worker(2, 2), fingerprint="d" * 64)
    with pytest.raises(InputError, match=r"unit-2.json: its rollouts were made from inputs dddd"):
        merge_units(named(report(Worker(1, 2)), other))


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"policy": Policy(alpha=0.01)}, "stats policy"),
        ({"policy": Policy(suite_gate=SuiteGate.WARN)}, "stats policy"),
        ({"worker": Worker(2, 3)}, "another split"),
    ],
)
def test_units_of_another_policy_or_split_are_refused(extra: dict[str, Any], words: str) -> None:
    other = replace(report(Worker(2, 2)), **extra)
    with pytest.raises(InputError, match=words):
        merge_units(named(report(Worker(1, 2)), other))


def test_units_planned_differently_are_refused() -> None:
    with pytest.raises(InputError, match="planned from other tasks or another --repeat"):
        merge_units(named(report(Worker(1, 2)), report(Worker(2, 2), repeat=5)))


def test_other_baselines_are_refused() -> None:
    two = report(Worker(2, 2))
    entries = (replace(two.tasks[0], baseline=Tally(rollouts=3, passed=1)), *two.tasks[1:])
    with pytest.raises(InputError, match="the baseline tally of TASK-000 differs"):
        merge_units(named(report(Worker(1, 2)), replace(two, tasks=entries)))


def test_resource_classes_are_pooled_only_when_asked() -> None:
    big = report(Worker(2, 2), resource=ResourceClass("ubuntu-latest", 16))
    with pytest.raises(
        InputError, match=r"ran on ubuntu-latest \(16 CPUs\).*--pool-across-classes"
    ):
        merge_units(named(report(Worker(1, 2)), big))
    assert merge_units(named(report(Worker(1, 2)), big), pool_across_classes=True).coverage.complete


def test_a_rollout_without_a_result_is_a_failed_rollout_of_the_tally() -> None:
    unit = Unit("crm-west", "TASK-000", 1)
    tally = pool_tally([outcome(unit), outcome(unit, UnitResult.NO_RESULT)])
    assert (tally.rollouts, tally.passed, tally.reward_sum) == (2, 1, 1)
    assert Counter(dict(tally.checks)) == Counter({"Lead qualified": 1})


def test_a_plan_of_too_many_tasks_is_refused_before_any_math() -> None:
    document = json.loads(json.dumps(unit_report_json(report(Worker(1, 2), n_tasks=2))))
    entry = document["tasks"][0]
    document["tasks"] = [
        {**entry, "task": f"T-{n}", "taskId": f"T-{n}", "tally": None} for n in range(1001)
    ]
    with pytest.raises(InputError, match="lists 1001 tasks, over the 1000"):
        load_unit_report(document, source="unit.json")


def test_reports_that_share_their_tasks_read_them_once_and_alike() -> None:
    cache: PlanCache = {}
    first = json.loads(json.dumps(unit_report_json(report(Worker(1, 2)))))
    second = json.loads(json.dumps(unit_report_json(report(Worker(2, 2)))))
    one = load_unit_report(first, source="a.json", cache=cache)
    two = load_unit_report(second, source="b.json", cache=cache)
    assert len(cache) == 1 and one.plan is two.plan
    assert two == load_unit_report(second, source="b.json")  # the cache changes nothing


# --- a shard's stats, as merge reads them back (issue 31) ------------------------


def shard_stats(**changes: Any) -> dict[str, Any]:
    task = {
        "task": "TASK-001",
        "tier": "stable",
        "reasons": [],
        "baseline": {"passed": 9, "rollouts": 10, "reward_mean": 0.9},
        "candidate": {"passed": 8, "rollouts": 10, "reward_mean": 0.8},
        "checks": [],
    }
    task.update(changes.pop("task", {}))
    stats = {
        "alpha": 0.05,
        "policy": {
            "suite_gate": "fail",
            "sequential": False,
            "require_power": False,
            "k": 1,
            "floor": None,
        },
        "tasks": [task],
    }
    stats.update(changes)
    return stats


@pytest.mark.parametrize(
    ("stats", "words"),
    [
        (shard_stats(alpha=0), "alpha must be a number in"),
        (shard_stats(alpha=0.51), "alpha must be a number in"),
        (shard_stats(alpha=float("nan")), "alpha must be a number in"),
        (
            shard_stats(task={"candidate": {"passed": 1, "rollouts": 10**400}}),
            "more than the 100000 rollouts",
        ),
        (
            shard_stats(task={"candidate": {"passed": 1, "rollouts": 100_001}}),
            "more than the 100000 rollouts",
        ),
        (shard_stats(task={"candidate": {"passed": True, "rollouts": 2}}), "passed must be"),
        (
            shard_stats(task={"candidate": {"passed": 1, "rollouts": 2, "reward_mean": 10**400}}),
            "reward_mean is beyond the",
        ),
    ],
)
def test_a_forged_shard_is_refused_before_any_math(stats: dict[str, Any], words: str) -> None:
    from silo_regress.reports.statsmerge import read_stats

    with pytest.raises(InputError, match=words) as caught:
        read_stats(stats, "shard-2.json")
    assert caught.value.message.startswith("shard-2.json: stats")


@pytest.mark.parametrize(
    ("run_first", "repeat", "conflicting", "message"),
    [
        (False, 8, (), "runs a fixed plan of rollouts: give it with --run and --repeat M$"),
        (
            True,
            8,
            ("--repeat-until-decided", "--staged"),
            "without --repeat-until-decided, --staged$",
        ),
        (True, None, (), "needs --repeat M or the repeat key"),
    ],
)
def test_a_unit_worker_refuses_what_is_not_a_fixed_plan(
    run_first: bool, repeat: int | None, conflicting: tuple[str, ...], message: str
) -> None:
    from silo_regress.commands.unitwork import unit_options
    from silo_regress.judging.units import parse_worker

    worker = parse_worker("3/8", {})
    assert worker is not None
    with pytest.raises(UsageError, match=message):
        unit_options(worker, run_first=run_first, repeat=repeat, conflicting=conflicting)
    made = unit_options(worker, run_first=True, repeat=4, refs=[parse_ref("TASK-001")])
    assert (made.repeat, [str(r) for r in made.refs]) == (4, ["TASK-001"])
