"""One line per look of a sequential check: what was decided, and why the rest goes on."""

from __future__ import annotations

from silo_regress.stats.groupsequential import LookDecision, SuiteStep, SuiteWhy, TaskStep, TaskWhy


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value < 0.01 else f"{value:.3f}"


def _tasks(count: int, noun: str = "task") -> str:
    return f"{count} {noun}{'s' if count != 1 else ''}"


def describe_look(decision: LookDecision, *, skipped: int | None = None) -> str:
    """``look 2 of 4 (4 rollouts a task): suite p = 0.21, between reject <= 0.0094 and
    stable >= 0.31; 36 tasks run 2 more, 14 stop (cannot decline)``."""
    cannot = sum(1 for t in decision.tasks if t.why is TaskWhy.CANNOT_DECLINE)
    unusable = sum(1 for t in decision.tasks if t.why is TaskWhy.NO_BASELINE)
    left = []
    if cannot:
        left.append(f"{cannot} whose baseline never passed")
    if unusable:
        left.append(f"{unusable} without a usable tally")
    if decision.look == 0:
        return (
            f"sequential check: {_tasks(skipped or 0, 'stats task')} "
            f"{'runs' if skipped == 1 else 'run'} no rollouts, as "
            f"they cannot change the decision ({', '.join(left) or 'none'})"
        )
    head = f"look {decision.look} ({decision.rollouts} rollouts a task)"
    suite = (
        f"suite p = {_p(decision.p_stratified)} (reject <= {_p(decision.stratified_level)}), "
        f"m x smallest p = {_p(decision.p_smallest)} (reject <= {_p(decision.smallest_level)})"
    )
    if decision.suite is SuiteStep.REJECT:
        branch = "stratified" if decision.why is SuiteWhy.STRATIFIED else "smallest-p"
        return f"{head}: suite declined by the {branch} bound, {suite}; stopping"
    if decision.why is SuiteWhy.NOTHING_TO_TEST:
        return f"{head}: no task can show a decline; stopping, suite stable"
    if decision.suite is SuiteStep.ACCEPT:
        if decision.why is SuiteWhy.FUTILITY:
            return (
                f"{head}: suite stable, p = {_p(decision.p_stratified)} is at or above the "
                f"futility level {_p(decision.futility_level)}; stopping"
            )
        return f"{head}: last look, no bound reached ({suite}); suite stable"
    running = [t for t in decision.tasks if t.step is TaskStep.RUN]
    more = max((t.more for t in running), default=0)
    stopped = len(decision.tasks) - len(running)
    rest = f"; {stopped} stay stopped" if stopped else ""
    return (
        f"{head}: undecided, {suite}, futility at p >= {_p(decision.futility_level)}; "
        f"{_tasks(len(running))} {'runs' if len(running) == 1 else 'run'} {more} more{rest}"
    )
