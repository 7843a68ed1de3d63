"""Which way a changed task moved: worse, better, both, or sideways (re-exported by outcome).

Pure functions over ``result.json`` values (the baseline's and the run's), so the
judge can class a change without rendering anything, and renderers can total
pass rates and rewards without reading files. Scores are read leniently: a
field that is missing or of the wrong type is no evidence either way.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from silo_regress.canon.canonical import format_number


class Direction(enum.StrEnum):
    """Which way a ``changed`` result moved the task's scores (DESIGN.md "Direction")."""

    REGRESSION = "regression"  # something got worse, nothing better
    IMPROVEMENT = "improvement"  # something got better, nothing worse
    MIXED = "mixed"  # both
    DRIFT = "drift"  # behaviour changed with the same scores


# The order every report lists changed tasks in: what needs a look first.
REVIEW_ORDER = (Direction.REGRESSION, Direction.MIXED, Direction.IMPROVEMENT, Direction.DRIFT)


@dataclass(frozen=True)
class Scores:
    """The scored parts of one result.json: overall pass, reward, each check's pass."""

    passed: bool | None = None
    reward: int | float | None = None
    checks: tuple[tuple[str, bool], ...] = ()  # (label, passed), first of each label


@dataclass(frozen=True)
class Movement:
    """What got worse and what got better, each in a few words (``reward 1 -> 0.5``)."""

    worse: tuple[str, ...] = ()
    better: tuple[str, ...] = ()

    @property
    def direction(self) -> Direction:
        if self.worse and self.better:
            return Direction.MIXED
        if self.worse:
            return Direction.REGRESSION
        if self.better:
            return Direction.IMPROVEMENT
        return Direction.DRIFT


# A tuple, not ``int | float``: that expression builds a union at every call.
_NUMBER = (int, float)


def read_scores(result: Any) -> Scores:
    """The scores of a result.json value; anything unrecognised is left out."""
    if not isinstance(result, dict):
        return Scores()
    passed = result.get("passed")
    reward = result.get("reward")
    checks: dict[str, bool] = {}
    raw_checks = result.get("checks")
    if isinstance(raw_checks, list):
        for check in raw_checks:
            if not isinstance(check, dict):
                continue
            label, ok = check.get("label"), check.get("passed")
            if isinstance(label, str) and isinstance(ok, bool):
                checks.setdefault(label, ok)
    # Positionally (passed, reward, checks): the plain-match lane reads one per target.
    return Scores(
        passed if isinstance(passed, bool) else None,
        reward if _is_number(reward) else None,
        tuple(checks.items()),
    )


def _is_number(value: Any) -> bool:
    """A reward a total can add up: an integer past a float's range (a 400-digit
    one, which no JSON.stringify writes) is left out like any unrecognised value."""
    if type(value) is float:  # the common case, first: the plain-match lane reads one a target
        return True
    if isinstance(value, bool) or not isinstance(value, _NUMBER):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def compare_scores(before: Scores, after: Scores) -> Movement:
    """What moved between two score sets; checks are matched by label."""
    worse: list[str] = []
    better: list[str] = []
    if before.passed is not None and after.passed is not None and before.passed != after.passed:
        (better if after.passed else worse).append(
            f"passed {_word(before.passed)} -> {_word(after.passed)}"
        )
    if before.reward is not None and after.reward is not None and before.reward != after.reward:
        (better if after.reward > before.reward else worse).append(
            f"reward {_number(before.reward)} -> {_number(after.reward)}"
        )
    old = dict(before.checks)
    for label, now in after.checks:
        was = old.get(label)
        if was is not None and was != now:
            (better if now else worse).append(f'check "{label}" {_word(was)} -> {_word(now)}')
    return Movement(worse=tuple(worse), better=tuple(better))


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else format_number(value)


def _word(value: bool) -> str:
    return "passed" if value else "failed"


def classify(baseline_result: Any, run_result: Any) -> Direction:
    """The direction of a changed task from its baseline's and its run's result.json."""
    return compare_scores(read_scores(baseline_result), read_scores(run_result)).direction


def review_rank(direction: Direction | None) -> int:
    """Sort key: regressions first, then mixed, improvements, drift, then the rest."""
    return REVIEW_ORDER.index(direction) if direction is not None else len(REVIEW_ORDER)


@dataclass(frozen=True)
class Totals:
    """Pass rate and total reward over a set of tasks, before and after.

    ``tasks`` counts the tasks with a readable result on both sides; a task whose
    result has no ``passed`` (or no ``reward``) adds nothing to that measure.
    """

    tasks: int = 0
    passed_before: int = 0
    passed_after: int = 0
    scored_before: int = 0
    scored_after: int = 0
    reward_before: float = 0.0
    reward_after: float = 0.0

    @property
    def pass_rate_before(self) -> float | None:
        return self.passed_before / self.scored_before if self.scored_before else None

    @property
    def pass_rate_after(self) -> float | None:
        return self.passed_after / self.scored_after if self.scored_after else None


def total(pairs: Iterable[tuple[Scores, Scores]]) -> Totals:
    """Totals over (baseline, run) score pairs, one pair per checked task."""
    tasks = passed_before = passed_after = scored_before = scored_after = 0
    reward_before = reward_after = 0.0
    for before, after in pairs:
        tasks += 1
        if before.passed is not None:
            scored_before += 1
            passed_before += before.passed
        if after.passed is not None:
            scored_after += 1
            passed_after += after.passed
        reward_before += before.reward or 0
        reward_after += after.reward or 0
    return Totals(
        tasks=tasks,
        passed_before=passed_before,
        passed_after=passed_after,
        scored_before=scored_before,
        scored_after=scored_after,
        reward_before=reward_before,
        reward_after=reward_after,
    )
