"""Direction of a change: regression, improvement, mixed or drift, from result.json alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.silofixture import SiloProject, make_result, make_state_diff

from silo_regress.judging.direction import (
    Direction,
    Scores,
    classify,
    compare_scores,
    read_scores,
    review_rank,
    total,
)


def _checks(*passed: bool) -> list[dict[str, Any]]:
    return [
        {"label": f"check {n}", "passed": ok, "detail": "", "required": n == 0}
        for n, ok in enumerate(passed)
    ]


BASE = make_result(passed=True, reward=1, checks=_checks(True, True))


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (make_result(passed=False, reward=1, checks=_checks(True, True)), Direction.REGRESSION),
        (make_result(passed=True, reward=0.5, checks=_checks(True, True)), Direction.REGRESSION),
        (make_result(passed=True, reward=1, checks=_checks(True, False)), Direction.REGRESSION),
        (make_result(passed=True, reward=1, checks=_checks(True, True), tool_calls=9),
         Direction.DRIFT),
        (make_result(passed=True, reward=1, checks=_checks(True, True), agent_output="Other."),
         Direction.DRIFT),
    ],
)  # fmt: skip
def test_worse_scores_are_a_regression_and_same_scores_drift(
    run: dict[str, Any], expected: Direction
) -> None:
    assert classify(BASE, run) is expected


def test_the_mirror_image_is_an_improvement() -> None:
    worse = make_result(passed=False, reward=0.25, checks=_checks(False, True))
    assert classify(BASE, worse) is Direction.REGRESSION
    assert classify(worse, BASE) is Direction.IMPROVEMENT


def test_better_and_worse_at_once_is_mixed() -> None:
    base = make_result(passed=False, reward=0.5, checks=_checks(False, True))
    run = make_result(passed=False, reward=0.5, checks=_checks(True, False))
    movement = compare_scores(read_scores(base), read_scores(run))
    assert movement.direction is Direction.MIXED
    assert movement.better == ('check "check 0" failed -> passed',)
    assert movement.worse == ('check "check 1" passed -> failed',)


def test_reward_up_with_a_check_lost_is_mixed() -> None:
    run = make_result(passed=True, reward=2, checks=_checks(True, False))
    assert classify(BASE, run) is Direction.MIXED


def test_checks_are_matched_by_label_not_position() -> None:
    run = make_result(passed=True, reward=1, checks=list(reversed(_checks(True, True))))
    assert classify(BASE, run) is Direction.DRIFT


def test_added_or_removed_checks_are_no_evidence() -> None:
    run = make_result(passed=True, reward=1, checks=_checks(True, True, False))
    assert classify(BASE, run) is Direction.DRIFT


@pytest.mark.parametrize(
    "odd", [None, [], "text", {"passed": "yes", "reward": True, "checks": {"a": 1}}]
)
def test_unreadable_scores_are_no_evidence(odd: Any) -> None:
    assert read_scores(odd).passed is None
    assert read_scores(odd).reward is None
    assert classify(BASE, odd) is Direction.DRIFT
    assert classify(odd, BASE) is Direction.DRIFT


def test_a_boolean_reward_is_not_a_number() -> None:
    assert read_scores({"reward": True}).reward is None
    assert read_scores({"reward": 0}).reward == 0


def test_reward_words_print_numbers_as_silo_does() -> None:
    movement = compare_scores(Scores(reward=1), Scores(reward=0.1 + 0.2))
    assert movement.worse == ("reward 1 -> 0.30000000000000004",)


def test_review_order_puts_regressions_first() -> None:
    found = [Direction.DRIFT, None, Direction.IMPROVEMENT, Direction.REGRESSION, Direction.MIXED]
    assert sorted(found, key=review_rank) == [
        Direction.REGRESSION,
        Direction.MIXED,
        Direction.IMPROVEMENT,
        Direction.DRIFT,
        None,
    ]


def test_totals_give_pass_rate_and_reward_before_and_after() -> None:
    pairs = [
        (Scores(passed=True, reward=1), Scores(passed=False, reward=0.5)),
        (Scores(passed=True, reward=1), Scores(passed=True, reward=1)),
        (Scores(), Scores(passed=True)),
    ]
    totals = total(pairs)
    assert totals.tasks == 3
    assert (totals.passed_before, totals.scored_before) == (2, 2)
    assert (totals.passed_after, totals.scored_after) == (2, 3)
    assert totals.pass_rate_before == 1.0
    assert totals.pass_rate_after == pytest.approx(2 / 3)
    assert (totals.reward_before, totals.reward_after) == (2.0, 1.5)
    assert total([]).pass_rate_before is None


# --- through the judge, the JSON report, merge and the exit code ---------------


def _recorded(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z", result=BASE)
    project.add_run("TASK-003", started="2026-03-16T09:00:01.000Z", result=BASE)
    assert project.cli("record", "TASK-002", "TASK-003").exit_code == 0


def _directions(project: SiloProject, *args: str) -> tuple[int, dict[tuple[str, str], Any]]:
    result = project.cli("check", "--format", "json", *args)
    document = json.loads(result.stdout)
    return result.exit_code, {
        (r["task"], r["artifact"]): r["direction"] for r in document["results"]
    }


def test_json_results_carry_the_direction_of_changed_results_only(project: SiloProject) -> None:
    _recorded(project)
    project.add_run(
        "TASK-002",
        started="2026-03-16T10:00:00.000Z",
        result=make_result(passed=False, reward=0, checks=_checks(False, True)),
    )
    project.add_run(
        "TASK-003",
        started="2026-03-16T10:00:01.000Z",
        result=BASE,
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0009")),
    )
    code, found = _directions(project)
    assert code == 1
    assert found == {
        ("TASK-002", "result.json"): "regression",
        ("TASK-002", "state-diff.json"): None,  # matches: no direction
        ("TASK-003", "result.json"): None,
        ("TASK-003", "state-diff.json"): "drift",  # same scores, other records
    }


def test_fail_on_regression_passes_improvements_and_drift(project: SiloProject) -> None:
    worse = make_result(passed=False, reward=0, checks=_checks(False, True))
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z", result=worse)
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", result=BASE)
    code, found = _directions(project, "--fail-on", "regression")
    assert found[("TASK-002", "result.json")] == "improvement"
    assert code == 0
    assert project.cli("check", "--fail-on", "change").exit_code == 1
    assert project.cli("check").exit_code == 1  # change is the default
    project.add_run("TASK-002", started="2026-03-16T11:00:00.000Z", result=worse)
    project.add_run("TASK-002", started="2026-03-16T12:00:00.000Z", files={"result.json": b"{"})
    assert project.cli("check", "--fail-on", "regression").exit_code == 1  # broken run


def test_merge_keeps_directions_and_scores(project: SiloProject, tmp_path: Path) -> None:
    _recorded(project)
    project.add_run("TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0.5))
    report = tmp_path / "r.json"
    project.cli("check", "--format", "json", "--output", str(report))
    merged = project.cli("merge", str(report), "--format", "json")
    results = json.loads(merged.stdout)["results"]
    first = next(r for r in results if r["artifact"] == "result.json" and r["task"] == "TASK-002")
    assert first["direction"] == "regression"
    assert first["scores"] == {
        "baseline": {"passed": True, "reward": 1},
        "run": {"passed": True, "reward": 0.5},
    }
    assert project.cli("merge", str(report), "--fail-on", "regression").exit_code == 1
