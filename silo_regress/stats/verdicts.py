"""The statistical gate's decisions: a tier per task and one decision for the suite.

The false-alarm guarantee of one check, counting the suite decision together with
the per-task tests (the "gated" design, a closed test):

1. The suite ("no task declined") is tested first, at ``alpha``: it declined when the
   exact stratified test of decline over the tasks judged statistically
   (:func:`~silo_regress.stats.exact.stratified_decline_p`) has p <= 0.9 alpha, or when
   the smallest task p-value times the number of tasks is <= 0.1 alpha (Bonferroni).
   Under no change each branch errs at most at its share: together at most ``alpha``.
2. Only when it rejects can a task be a ``regression``: the tasks' one-sided Fisher p-values,
   Holm-adjusted across the tasks, at ``alpha``.

This is a closed test (step 1 is the local test of the intersection of all the tasks'
hypotheses, Holm's steps at ``alpha`` those of every smaller intersection): with no
change anywhere, a false alarm of either kind needs step 1 to reject, so the whole
check's false-alarm rate is at most ``alpha``; when some tasks did decline, the
family-wise error rate over the tasks that did not is at most ``alpha`` (strong
control). With ``suite-gate = "off"`` the suite is not tested and the tasks are Holm at
``alpha`` on their own (the same guarantee). ``suspect`` and ``improvement`` never fail
a check and are outside the guarantee; so is the ``min-pass-hat-k`` floor, which is a
threshold the user sets, not a test.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from silo_regress.stats.exact import (
    Table,
    decline_p,
    increase_p,
    sign_test_p,
    smallest_p_at,
    stratified_decline_p,
    stratified_increase_p,
)
from silo_regress.stats.intervals import Interval, wilson
from silo_regress.stats.multiplicity import holm_adjust
from silo_regress.stats.passk import SuitePoint, pass_hat_k, suite_curve
from silo_regress.stats.sequential import Decision
from silo_regress.stats.tally import Tally

MIN_BASELINE_ROLLOUTS = 3
SUSPECT_P = 0.2
_MOST_ROLLOUTS = 10_000  # the search for the rollouts that would decide gives up here
_MOVERS = 5


class Tier(enum.StrEnum):
    REGRESSION = "regression"  # fails the check
    SUSPECT = "suspect"  # a warning: raw p <= 0.2, not significant yet
    STABLE = "stable"
    IMPROVEMENT = "improvement"  # reported, never a failure
    INSUFFICIENT_DATA = "insufficient-data"  # even 0 passes could not be significant
    UNRELIABLE_BASELINE = "unreliable-baseline"  # no baseline tally, or too small
    UNDECIDED = "undecided"  # its sequential test had not decided at the cap
    NOT_JUDGED = "not-judged"  # the pre-commit hook: tallies read, pass rates judged in CI


# The tiers of a task whose pass rate a test actually judged (decided either way).
DECIDED_TIERS = frozenset({Tier.REGRESSION, Tier.SUSPECT, Tier.STABLE, Tier.IMPROVEMENT})


class Reason(enum.StrEnum):
    """Why a task's tier is what it is, where the counts alone do not say."""

    BASELINE_MISSING = "baseline-missing"
    BASELINE_TOO_SMALL = "baseline-too-small"
    CANDIDATE_MISSING = "candidate-missing"
    CANNOT_DECLINE = "cannot-decline"  # the baseline never passed
    CHECK_DECLINED = "check-declined"  # stable on `passed`, but a check fell (raw p <= alpha)
    UNDECIDED = "undecided"  # --repeat-until-decided reached --max-repeat undecided
    DECIDED_SEQUENTIALLY = "decided-sequentially"  # its sequential test stopped it
    # A rollout's result.json changed between the end of its rollout and the verdict:
    # what was counted is not what is on disk, so the task fails.
    RESULT_CHANGED = "result-changed"
    JUDGED_IN_CI = "judged-in-ci"  # the hook starts no rollouts: CI judges the pass rate


class SuiteGate(enum.StrEnum):
    FAIL = "fail"
    WARN = "warn"
    OFF = "off"


class SuiteVerdict(enum.StrEnum):
    REGRESSION = "suite-regression"
    IMPROVEMENT = "suite-improvement"
    STABLE = "suite-stable"
    NOT_TESTED = "suite-not-tested"  # no task judged statistically, or the gate is off


@dataclass(frozen=True)
class Floor:
    """``min-pass-hat-k = {k = 3, value = 0.8}``: a task whose pass^k is below fails."""

    k: int
    value: float


@dataclass(frozen=True)
class Policy:
    alpha: float = 0.05
    suspect_p: float = SUSPECT_P
    k: int = 1  # the pass^k reported per task
    floor: Floor | None = None
    suite_gate: SuiteGate = SuiteGate.FAIL
    min_baseline: int = MIN_BASELINE_ROLLOUTS
    # --repeat-until-decided: each task's tier is its sequential test's decision, taken
    # at alpha / (2 m); the suite is tested at alpha / 2 on every rollout made.
    sequential: bool = False
    # --require-power: a task that could not have shown a regression fails
    require_power: bool = False
    # The pre-commit hook: no rollouts, so tallies are read and validated, not judged.
    judged_in_ci: bool = False
    # The global step's split: the stratified test gets this share of alpha, the
    # Bonferroni-corrected smallest task p the rest (bench/power.py chose 0.9).
    suite_share: float = 0.9

    @property
    def suite_alpha(self) -> float:
        """The level of the suite test and of the fixed-sample task tests."""
        return self.alpha / 2 if self.sequential else self.alpha


@dataclass(frozen=True)
class Evidence:
    """One task's tallies: the baseline's (recorded) and the candidate's (this check)."""

    task: str
    baseline: Tally | None
    candidate: Tally | None
    tally_path: str | None = None  # where the baseline tally is (or would be), as shown
    # Rollouts counted as failed because they left no complete result.json (run names).
    without_result: tuple[str, ...] = ()
    # Rollouts whose result.json changed after they were counted (run names): fails.
    changed: tuple[str, ...] = ()
    retried: int = 0  # rollouts that a retry stood in for (retry-incomplete)


@dataclass(frozen=True)
class CheckMove:
    """One check (by label) compared like the task: its passes on both sides."""

    label: str
    base_passed: int
    base_rollouts: int
    cand_passed: int
    cand_rollouts: int
    p_decline: float


@dataclass(frozen=True)
class PassHatK:
    k: int
    baseline: float | None
    candidate: float | None


@dataclass(frozen=True)
class TaskJudgement:
    task: str
    tier: Tier
    reasons: tuple[Reason, ...]
    baseline: Tally | None
    candidate: Tally | None
    p_decline: float | None  # raw one-sided Fisher p
    p_adjusted: float | None  # Holm-adjusted across the tasks judged
    p_increase: float | None
    baseline_interval: Interval | None
    candidate_interval: Interval | None
    pass_hat_k: PassHatK | None
    below_floor: bool
    # The rollouts a candidate would need: for insufficient-data, the fewest at which
    # 0 passes would be significant; for suspect, the fewest at which the rate seen
    # would be. None when no count up to 10,000 would do.
    needed_rollouts: int | None
    checks: tuple[CheckMove, ...]  # in the labels' order, those on both sides
    renamed_checks: tuple[str, ...]  # labels on one side only
    tally_path: str | None = None
    power_required: bool = False  # --require-power: insufficient-data fails
    without_result: tuple[str, ...] = ()  # rollouts counted as failed: no complete result
    changed: tuple[str, ...] = ()  # rollouts whose result changed after they were counted
    retried: int = 0

    @property
    def decided(self) -> bool:
        """Whether a test judged this task's pass rate (either way)."""
        return self.tier in DECIDED_TIERS

    @property
    def underpowered(self) -> bool:
        """insufficient-data while --require-power asks for tests that could decide."""
        return self.power_required and self.tier is Tier.INSUFFICIENT_DATA

    @property
    def failed(self) -> bool:
        """A regression, a pass^k below the floor, or no baseline tally at all: a stats
        gate that passed without its evidence would pass a deleted tally."""
        missing = Reason.BASELINE_MISSING in self.reasons
        return (
            self.tier is Tier.REGRESSION
            or self.below_floor
            or missing
            or self.underpowered
            or bool(self.changed)
        )

    @property
    def declined_checks(self) -> tuple[CheckMove, ...]:
        """Checks whose own decline is at least suspect (raw p <= 0.2), most significant first."""
        moved = [
            c
            for c in self.checks
            if c.p_decline <= SUSPECT_P
            and c.cand_passed * c.base_rollouts < c.base_passed * c.cand_rollouts
        ]
        return tuple(sorted(moved, key=lambda c: (c.p_decline, c.label)))


@dataclass(frozen=True)
class Mover:
    task: str
    base_rate: float
    cand_rate: float


@dataclass(frozen=True)
class SuiteDecision:
    verdict: SuiteVerdict
    gate: SuiteGate
    tasks: int  # judged statistically (with both tallies)
    p_decline: float | None  # the exact stratified test, at suite_share x alpha
    p_task: float | None  # m x the smallest task p, at (1 - suite_share) x alpha
    p_increase: float | None
    base_passed: int
    base_rollouts: int
    cand_passed: int
    cand_rollouts: int
    down: int  # tasks whose pass rate fell
    up: int
    sign_p: float | None  # the exact sign test of down against up (reported only)
    movers: tuple[Mover, ...]  # the tasks that fell most, most first
    baseline_curve: tuple[SuitePoint, ...]  # pass^1 .. pass^M
    candidate_curve: tuple[SuitePoint, ...]

    @property
    def failed(self) -> bool:
        return self.verdict is SuiteVerdict.REGRESSION and self.gate is SuiteGate.FAIL

    @property
    def base_rate(self) -> float | None:
        return self.base_passed / self.base_rollouts if self.base_rollouts else None

    @property
    def cand_rate(self) -> float | None:
        return self.cand_passed / self.cand_rollouts if self.cand_rollouts else None


@dataclass(frozen=True)
class StatsJudgement:
    tasks: tuple[TaskJudgement, ...]
    suite: SuiteDecision
    policy: Policy

    @property
    def failed(self) -> bool:
        return self.suite.failed or any(t.failed for t in self.tasks)

    @property
    def not_decided(self) -> bool:
        """Stats tasks were to be judged and no test judged any of them: a check that
        cannot say "passed" (the hook, which judges none by design, excepted)."""
        if self.policy.judged_in_ci or not self.tasks:
            return False
        return not any(t.decided for t in self.tasks)

    @property
    def undecided(self) -> tuple[TaskJudgement, ...]:
        """The tasks no test judged (insufficient data, no candidate, undecided at the cap)."""
        if self.policy.judged_in_ci:
            return ()
        return tuple(t for t in self.tasks if not t.decided and not t.failed)


def _table(baseline: Tally, candidate: Tally) -> Table:
    return Table(baseline.passed, baseline.rollouts, candidate.passed, candidate.rollouts)


@lru_cache(maxsize=4096)
def rollouts_for_zero(base_passed: int, base_rollouts: int, *, alpha: float) -> int | None:
    """The fewest candidate rollouts at which 0 passes would be significant at ``alpha``."""
    if base_passed == 0:
        return None
    low, high = 1, _MOST_ROLLOUTS
    if smallest_p_at(base_passed, base_rollouts, high) > alpha:
        return None
    while low < high:  # the smallest p falls as the rollouts grow
        middle = (low + high) // 2
        if smallest_p_at(base_passed, base_rollouts, middle) <= alpha:
            high = middle
        else:
            low = middle + 1
    return low


def rollouts_to_decide(table: Table, *, alpha: float) -> int | None:
    """The fewest candidate rollouts at which the candidate's rate seen so far would be
    significant at ``alpha`` (raw), None when it never would be (up to 10,000)."""
    rate = table.cand_passed / table.cand_rollouts
    if rate * table.base_rollouts >= table.base_passed:
        return None
    for rollouts in range(table.cand_rollouts, _MOST_ROLLOUTS + 1):
        passed = round(rate * rollouts)
        if decline_p(Table(table.base_passed, table.base_rollouts, passed, rollouts)) <= alpha:
            return rollouts
        if rollouts > 4 * table.cand_rollouts + 200:  # the p-value has stopped falling fast
            break
    return None


def _checks(baseline: Tally, candidate: Tally) -> tuple[tuple[CheckMove, ...], tuple[str, ...]]:
    moves = []
    for label, base in baseline.checks:
        cand = candidate.check_passed(label)
        if cand is None:
            continue
        table = Table(base, baseline.rollouts, cand, candidate.rollouts)
        moves.append(
            CheckMove(label, base, baseline.rollouts, cand, candidate.rollouts, decline_p(table))
        )
    renamed = tuple(sorted(baseline.labels ^ candidate.labels))
    return tuple(moves), renamed


def _pass_hat_k(baseline: Tally | None, candidate: Tally | None, k: int) -> PassHatK:
    def value(tally: Tally | None) -> float | None:
        if tally is None or tally.rollouts < k:
            return None
        return pass_hat_k(tally.passed, tally.rollouts, k)

    return PassHatK(k, value(baseline), value(candidate))


def judge_tasks(
    evidence: Sequence[Evidence],
    policy: Policy,
    *,
    decisions: Mapping[str, Decision] | None = None,
) -> StatsJudgement:
    """Tiers for every task and the suite decision, by the gated design above.

    With ``decisions`` (``--repeat-until-decided``, ``policy.sequential``), a task its
    sequential test decided takes that tier (``regression`` or ``stable``, or
    ``improvement`` by Fisher's test), and one it left undecided is ``suspect``.
    """
    testable = [
        e
        for e in evidence
        if e.baseline is not None
        and e.baseline.rollouts >= policy.min_baseline
        and e.candidate is not None
        and e.candidate.rollouts > 0
    ]
    tables = {
        e.task: _table(e.baseline, e.candidate) for e in testable if e.baseline and e.candidate
    }
    suite = decide_suite(testable, policy)
    adjusted = dict(zip(tables, holm_adjust([decline_p(t) for t in tables.values()]), strict=True))
    up_adjusted = dict(
        zip(tables, holm_adjust([increase_p(t) for t in tables.values()]), strict=True)
    )
    gate_open = suite.verdict is SuiteVerdict.REGRESSION or policy.suite_gate is SuiteGate.OFF
    judged = []
    for item in evidence:
        table = tables.get(item.task)
        reasons: list[Reason] = []
        checks: tuple[CheckMove, ...] = ()
        renamed: tuple[str, ...] = ()
        p_down = p_up = p_adj = None
        needed = None
        if item.baseline is None:
            tier, reasons = Tier.UNRELIABLE_BASELINE, [Reason.BASELINE_MISSING]
        elif policy.judged_in_ci:
            tier, reasons = Tier.NOT_JUDGED, [Reason.JUDGED_IN_CI]
        elif item.baseline.rollouts < policy.min_baseline:
            tier, reasons = Tier.UNRELIABLE_BASELINE, [Reason.BASELINE_TOO_SMALL]
        elif table is None or item.candidate is None:
            tier, reasons = Tier.INSUFFICIENT_DATA, [Reason.CANDIDATE_MISSING]
        else:
            p_down, p_up, p_adj = decline_p(table), increase_p(table), adjusted[item.task]
            checks, renamed = _checks(item.baseline, item.candidate)
            floor_p = smallest_p_at(table.base_passed, table.base_rollouts, table.cand_rollouts)
            decided = (decisions or {}).get(item.task)
            if decided is Decision.REGRESSION:
                tier, reasons = Tier.REGRESSION, [Reason.DECIDED_SEQUENTIALLY]
            elif decided is Decision.CONTINUE:
                tier, reasons = Tier.UNDECIDED, [Reason.UNDECIDED]
            elif decided is Decision.STABLE:
                improved = up_adjusted[item.task] <= policy.alpha
                tier = Tier.IMPROVEMENT if improved else Tier.STABLE
                reasons = [Reason.DECIDED_SEQUENTIALLY]
            elif gate_open and p_adj <= policy.suite_alpha:
                tier = Tier.REGRESSION
            elif up_adjusted[item.task] <= policy.alpha:
                tier = Tier.IMPROVEMENT
            elif table.base_passed == 0:
                tier, reasons = Tier.STABLE, [Reason.CANNOT_DECLINE]
            elif floor_p > policy.alpha:
                tier = Tier.INSUFFICIENT_DATA
                needed = rollouts_for_zero(
                    table.base_passed, table.base_rollouts, alpha=policy.alpha
                )
            elif p_down <= policy.suspect_p:
                tier = Tier.SUSPECT
                needed = rollouts_to_decide(table, alpha=policy.alpha)
            elif any(c.p_decline <= policy.alpha for c in checks):
                tier, reasons = Tier.SUSPECT, [Reason.CHECK_DECLINED]
            else:
                tier = Tier.STABLE
        below = False
        floor, cand = policy.floor, item.candidate
        if floor is not None and cand is not None and cand.rollouts >= floor.k:
            below = pass_hat_k(cand.passed, cand.rollouts, floor.k) < floor.value
        judged.append(
            TaskJudgement(
                task=item.task,
                tier=tier,
                reasons=tuple(reasons),
                baseline=item.baseline,
                candidate=item.candidate,
                p_decline=p_down,
                p_adjusted=p_adj,
                p_increase=p_up,
                baseline_interval=(
                    wilson(item.baseline.passed, item.baseline.rollouts) if item.baseline else None
                ),
                candidate_interval=(
                    wilson(item.candidate.passed, item.candidate.rollouts)
                    if item.candidate
                    else None
                ),
                pass_hat_k=_pass_hat_k(item.baseline, item.candidate, policy.k),
                below_floor=below,
                needed_rollouts=needed,
                checks=checks,
                renamed_checks=renamed,
                tally_path=item.tally_path,
                power_required=policy.require_power,
                without_result=item.without_result,
                changed=item.changed,
                retried=item.retried,
            )
        )
        if item.changed:
            judged[-1] = replace(judged[-1], reasons=(*judged[-1].reasons, Reason.RESULT_CHANGED))
    return StatsJudgement(tasks=tuple(judged), suite=suite, policy=policy)


def decide_suite(testable: Sequence[Evidence], policy: Policy) -> SuiteDecision:
    """The suite decision over the tasks with both tallies (the caller's ``testable``)."""
    pairs = [(e.task, e.baseline, e.candidate) for e in testable if e.baseline and e.candidate]
    tables = [_table(b, c) for _, b, c in pairs]
    down = sum(
        1 for t in tables if t.cand_passed * t.base_rollouts < t.base_passed * t.cand_rollouts
    )
    up = sum(1 for t in tables if t.cand_passed * t.base_rollouts > t.base_passed * t.cand_rollouts)
    movers = sorted(
        (Mover(task, b.rate, c.rate) for task, b, c in pairs if c.rate < b.rate),
        key=lambda m: (m.cand_rate - m.base_rate, m.task),
    )[:_MOVERS]
    up_to = max((c.rollouts for _, _, c in pairs), default=0)
    base_up_to = max((b.rollouts for _, b, _ in pairs), default=0)
    p_down = p_up = p_task = None
    verdict = SuiteVerdict.NOT_TESTED
    if tables and policy.suite_gate is not SuiteGate.OFF and not policy.judged_in_ci:
        p_down = stratified_decline_p(tables)
        alpha = policy.suite_alpha
        # The other branch of the closed test's global step: the smallest task p,
        # Bonferroni-corrected (a few tasks that fell hard, in a suite that barely moved).
        p_task = min(1.0, len(tables) * min(decline_p(t) for t in tables))
        declined = p_down <= policy.suite_share * alpha or (
            p_task <= (1 - policy.suite_share) * alpha
        )
        # A suite that declined significantly cannot also have improved: its increase
        # is not tested (None), which saves a convolution as long as the decline's.
        p_up = None if declined else stratified_increase_p(tables)
        if declined:
            verdict = SuiteVerdict.REGRESSION
        elif p_up is not None and p_up <= alpha:
            verdict = SuiteVerdict.IMPROVEMENT
        else:
            verdict = SuiteVerdict.STABLE
    return SuiteDecision(
        verdict=verdict,
        gate=policy.suite_gate,
        tasks=len(tables),
        p_decline=p_down,
        p_task=p_task,
        p_increase=p_up,
        base_passed=sum(t.base_passed for t in tables),
        base_rollouts=sum(t.base_rollouts for t in tables),
        cand_passed=sum(t.cand_passed for t in tables),
        cand_rollouts=sum(t.cand_rollouts for t in tables),
        down=down,
        up=up,
        sign_p=sign_test_p(down, up) if tables else None,
        movers=tuple(movers),
        baseline_curve=suite_curve([(b.passed, b.rollouts) for _, b, _ in pairs], up_to=base_up_to),
        candidate_curve=suite_curve([(c.passed, c.rollouts) for _, _, c in pairs], up_to=up_to),
    )
