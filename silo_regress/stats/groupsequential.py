"""The sequential check: a few looks at the suite, alpha spent over them, and no rollout
spent where it cannot change the decision.

The check's fixed-sample decision (:mod:`silo_regress.stats.verdicts`) is a closed
test: a global step ("no task declined": the exact stratified test at 0.9 alpha, or
the smallest task p times the number of tasks at 0.1 alpha), then Holm across the
tasks at alpha. The sequential check takes the same decision at a few *looks* (by
default after 2, 4, 6 and 8 candidate rollouts a task; the last look is the cap, and
the fixed M a team would otherwise run is compared in bench/sequential.py):

- **Global step, stratified branch**: at look k it rejects when the exact stratified
  p-value is at most the look's nominal level. The levels spend 0.9 alpha over the looks
  (:func:`silo_regress.stats.spending.nominal_levels`, Hwang-Shih-DeCani spending at
  the looks' information fractions, ``n1 n2 / (n1 + n2)`` summed over the tasks).
- **Global step, smallest-p branch**: at look k it rejects when m times the smallest
  task p is at most 0.1 alpha times the share the same spending function gives look k:
  the shares add up to 0.1 alpha, so this branch keeps its level over all the looks by
  Bonferroni, with no approximation.
- **Futility** (non-binding): before the last look, a stratified p-value at or above
  the look's futility level stops the check with the suite ``stable``. The efficacy
  levels are computed as if it did not exist, so obeying it only lowers the false-alarm
  rate.
- **Tasks that cannot change the decision run no rollouts**: a task whose baseline
  never passed cannot show a decline (its decline p is 1 whatever it does); a task with
  no usable baseline tally is judged ``unreliable-baseline`` whatever it does.
- **The tasks**: once the global step rejects, the check stops and the tasks are Holm at
  alpha on the rollouts made (the closed test's later steps); when it accepts, no task
  can be a regression.

What is guaranteed and what is measured: under "no change" every false alarm needs the
global step to reject at some look. The smallest-p branch keeps 0.1 alpha exactly. The
stratified branch's levels are exact for a normal statistic; the exact stratified test
is discrete and conservative, and leaving out the tasks whose baseline never passed
conditions on the baseline, so its false-alarm rate is *verified by simulation* over a
grid of baseline populations (tests/unit/test_stats_groupsequential.py,
bench/sequential.py), not proved.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from silo_regress.stats.exact import (
    Table,
    decline_p_given_baseline_passed,
    stratified_decline_p,
)
from silo_regress.stats.spending import nominal_levels, normal_tail, spent
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import MIN_BASELINE_ROLLOUTS, Evidence

DEFAULT_LOOKS = (2, 4, 6, 8)
# Chosen by simulation (bench/sequential.py): gamma -1 spends a little earlier than
# O'Brien-Fleming; the futility z rises with the information fraction t.
DEFAULT_GAMMA = -1.0
FUTILITY_INTERCEPT = -0.9
FUTILITY_SLOPE = 2.2


class SuiteStep(enum.StrEnum):
    REJECT = "reject"  # the global step rejected: the suite declined
    ACCEPT = "accept"  # the check stops with the suite stable
    CONTINUE = "continue"  # another round


class SuiteWhy(enum.StrEnum):
    STRATIFIED = "stratified-bound"  # the stratified p reached this look's level
    SMALLEST_P = "smallest-p-bound"  # m x the smallest task p reached its level
    FUTILITY = "futility-bound"  # the stratified p is at or above the futility level
    LAST_LOOK = "last-look"  # the cap: neither branch rejected
    NOTHING_TO_TEST = "nothing-to-test"  # no task can show a decline
    BETWEEN = "between-bounds"  # neither bound reached: more rollouts


class TaskStep(enum.StrEnum):
    RUN = "run"  # more rollouts before the next look
    STOP = "stop"


class TaskWhy(enum.StrEnum):
    CANNOT_DECLINE = "cannot-decline"  # the baseline never passed
    NO_BASELINE = "no-baseline"  # no tally, or too small: judged unreliable whatever it does
    SUITE_DECIDED = "suite-decided"
    UNDECIDED = "undecided"  # the suite goes on and the task counts in it


@dataclass(frozen=True)
class SequentialPolicy:
    """The design: its looks (candidate rollouts a task at each), its error rate and
    how alpha is spent and futility judged."""

    looks: tuple[int, ...] = DEFAULT_LOOKS
    alpha: float = 0.05
    suite_share: float = 0.9  # of alpha, to the stratified branch; the rest to smallest-p
    gamma: float = DEFAULT_GAMMA
    futility_intercept: float = FUTILITY_INTERCEPT
    futility_slope: float = FUTILITY_SLOPE
    min_baseline: int = MIN_BASELINE_ROLLOUTS

    def __post_init__(self) -> None:
        looks = self.looks
        if not looks or looks[0] < 1 or any(b <= a for a, b in itertools.pairwise(looks)):
            raise ValueError(f"looks must be increasing rollout counts from 1: {looks}")
        if not 0.0 < self.alpha < 1.0 or not 0.0 < self.suite_share <= 1.0:
            raise ValueError("alpha must be in (0, 1) and suite_share in (0, 1]")

    @property
    def cap(self) -> int:
        return self.looks[-1]

    def futility_level(self, fraction: float) -> float:
        """The stratified p at or above which a look before the last stops (stable)."""
        return normal_tail(self.futility_intercept + self.futility_slope * fraction)


@dataclass(frozen=True)
class TaskLook:
    task: str
    step: TaskStep
    why: TaskWhy
    rollouts: int  # candidate rollouts it has made
    more: int  # rollouts to start before the next look (0 when it stops)


@dataclass(frozen=True)
class LookDecision:
    """What one look decided: the suite's step and each task's."""

    look: int  # 0 before any rollout, then 1 .. len(looks)
    rollouts: int  # candidate rollouts a task at this look
    suite: SuiteStep
    why: SuiteWhy
    tasks: tuple[TaskLook, ...]
    tested: int  # tasks in the global step
    fraction: float | None  # information fraction of this look (None at look 0)
    p_stratified: float | None
    p_smallest: float | None  # m x the smallest task decline p
    stratified_level: float | None  # reject at or below
    smallest_level: float | None
    futility_level: float | None  # stop (stable) at or above; None at the last look

    @property
    def done(self) -> bool:
        return self.suite is not SuiteStep.CONTINUE

    @property
    def running(self) -> tuple[TaskLook, ...]:
        return tuple(t for t in self.tasks if t.step is TaskStep.RUN)

    @property
    def declined(self) -> bool | None:
        """The global step's decision for the final judgement; None while it goes on."""
        if self.suite is SuiteStep.CONTINUE:
            return None
        return self.suite is SuiteStep.REJECT


def can_decline(evidence: Evidence, policy: SequentialPolicy) -> TaskWhy | None:
    """None when the task's rollouts can move the global step; else why not."""
    base = evidence.baseline
    if base is None or base.rollouts < policy.min_baseline:
        return TaskWhy.NO_BASELINE
    if base.passed == 0:
        return TaskWhy.CANNOT_DECLINE
    return None


def information(base_rollouts: int, cand_rollouts: int) -> float:
    """A task's information in the comparison, up to its pass-rate variance."""
    return base_rollouts * cand_rollouts / (base_rollouts + cand_rollouts)


def fractions_of(baseline_rollouts: Sequence[int], looks: Sequence[int]) -> tuple[float, ...]:
    """The information fraction of each look, for tasks with these baseline rollouts
    (rounded so that suites of like tallies share one computation of the levels)."""
    full = sum(information(n, looks[-1]) for n in baseline_rollouts)
    if full <= 0:
        return tuple(float(i + 1) / len(looks) for i in range(len(looks)))
    raw = [sum(information(n, look) for n in baseline_rollouts) / full for look in looks]
    return (*tuple(round(f, 4) for f in raw[:-1]), 1.0)


@dataclass(frozen=True)
class Levels:
    fractions: tuple[float, ...]
    stratified: tuple[float, ...]
    smallest: tuple[float, ...]


def levels_for(baseline_rollouts: Sequence[int], policy: SequentialPolicy) -> Levels:
    fractions = fractions_of(baseline_rollouts, policy.looks)
    share = policy.suite_share * policy.alpha
    stratified = nominal_levels(fractions, alpha=share, gamma=policy.gamma)
    rest = (1 - policy.suite_share) * policy.alpha
    cumulative = [spent(f, gamma=policy.gamma) for f in fractions]
    steps = [b - a for a, b in zip([0.0, *cumulative[:-1]], cumulative, strict=True)]
    return Levels(fractions, stratified, tuple(rest * s for s in steps))


def decide_look(
    evidence: Sequence[Evidence], policy: SequentialPolicy, *, look: int
) -> LookDecision:
    """The decision at ``look`` (0 before any rollout, else 1-based) on the candidate
    tallies so far: the suite's step and, per task, whether it runs more and why.

    A task that can move the global step is expected to have ``looks[look - 1]``
    candidate rollouts; one with fewer (a rollout left no run) is judged on what it has.
    """
    if not 0 <= look <= len(policy.looks):
        raise ValueError(f"look {look} is not one of 0..{len(policy.looks)}")
    movable = [e for e in evidence if can_decline(e, policy) is None]
    rollouts = policy.looks[look - 1] if look else 0
    if not movable:
        return _decision(
            evidence, policy, look, rollouts, SuiteStep.ACCEPT, SuiteWhy.NOTHING_TO_TEST
        )
    if look == 0:
        return _decision(evidence, policy, look, rollouts, SuiteStep.CONTINUE, SuiteWhy.BETWEEN)
    levels = levels_for([e.baseline.rollouts for e in movable if e.baseline], policy)
    tables = [
        Table(e.baseline.passed, e.baseline.rollouts, e.candidate.passed, e.candidate.rollouts)
        for e in movable
        if e.baseline is not None and e.candidate is not None and e.candidate.rollouts > 0
    ]
    index = look - 1
    last = look == len(policy.looks)
    p_strat = stratified_decline_p(tables, given_baseline_passed=True) if tables else 1.0
    p_small = min(
        1.0, len(tables) * min((decline_p_given_baseline_passed(t) for t in tables), default=1.0)
    )
    futility = None if last else policy.futility_level(levels.fractions[index])
    if tables and p_strat <= levels.stratified[index]:
        step, why = SuiteStep.REJECT, SuiteWhy.STRATIFIED
    elif tables and p_small <= levels.smallest[index]:
        step, why = SuiteStep.REJECT, SuiteWhy.SMALLEST_P
    elif last:
        step, why = SuiteStep.ACCEPT, SuiteWhy.LAST_LOOK
    elif futility is not None and p_strat >= futility:
        step, why = SuiteStep.ACCEPT, SuiteWhy.FUTILITY
    else:
        step, why = SuiteStep.CONTINUE, SuiteWhy.BETWEEN
    return _decision(
        evidence,
        policy,
        look,
        rollouts,
        step,
        why,
        tested=len(tables),
        fraction=levels.fractions[index],
        p_stratified=p_strat,
        p_smallest=p_small,
        stratified_level=levels.stratified[index],
        smallest_level=levels.smallest[index],
        futility_level=futility,
    )


def _decision(
    evidence: Sequence[Evidence],
    policy: SequentialPolicy,
    look: int,
    rollouts: int,
    step: SuiteStep,
    why: SuiteWhy,
    *,
    tested: int = 0,
    fraction: float | None = None,
    p_stratified: float | None = None,
    p_smallest: float | None = None,
    stratified_level: float | None = None,
    smallest_level: float | None = None,
    futility_level: float | None = None,
) -> LookDecision:
    tasks = []
    following = policy.looks[look] if look < len(policy.looks) else rollouts
    for item in evidence:
        made = item.candidate.rollouts if item.candidate is not None else 0
        cannot = can_decline(item, policy)
        if cannot is not None:
            tasks.append(TaskLook(item.task, TaskStep.STOP, cannot, made, 0))
        elif step is not SuiteStep.CONTINUE:
            tasks.append(TaskLook(item.task, TaskStep.STOP, TaskWhy.SUITE_DECIDED, made, 0))
        else:
            more = max(0, following - made)
            tasks.append(TaskLook(item.task, TaskStep.RUN, TaskWhy.UNDECIDED, made, more))
    return LookDecision(
        look=look,
        rollouts=rollouts,
        suite=step,
        why=why,
        tasks=tuple(tasks),
        tested=tested,
        fraction=fraction,
        p_stratified=p_stratified,
        p_smallest=p_smallest,
        stratified_level=stratified_level,
        smallest_level=smallest_level,
        futility_level=futility_level,
    )


@dataclass(frozen=True)
class LookedCheck:
    """A sequential check run to its end: the last look's decision, the candidate
    rollouts each task made, and the looks taken."""

    decision: LookDecision
    made: tuple[int, ...]
    looks: int


def run_looks(
    baselines: Sequence[Tally | None],
    policy: SequentialPolicy,
    *,
    passes: Callable[[int, int, int], int],
) -> LookedCheck:
    """Drive :func:`decide_look` from look 0 until the check is done, making the rollouts
    each look asks for: ``passes(i, before, after)`` is how many of task ``i``'s
    rollouts ``before + 1 .. after`` passed. Tasks are named ``T0``, ``T1``, ... The one
    loop the planner and the benches simulate the check with."""
    names = [f"T{i}" for i in range(len(baselines))]
    made = [0] * len(baselines)
    passed = [0] * len(baselines)
    evidence = [Evidence(n, b, None) for n, b in zip(names, baselines, strict=True)]
    decision = decide_look(evidence, policy, look=0)
    look = 0
    while not decision.done:
        look += 1
        more = {t.task: t.more for t in decision.running}
        for i, name in enumerate(names):
            extra = more.get(name, 0)
            if extra:
                passed[i] += passes(i, made[i], made[i] + extra)
                made[i] += extra
        evidence = [
            Evidence(n, b, Tally(m, p) if m else None)
            for n, b, m, p in zip(names, baselines, made, passed, strict=True)
        ]
        decision = decide_look(evidence, policy, look=look)
    return LookedCheck(decision, tuple(made), look)
