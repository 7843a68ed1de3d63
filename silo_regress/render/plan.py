"""The words of ``silo-regress plan``: a line per stats task, then the suite."""

from __future__ import annotations

from silo_regress.stats.planning import Plan, TaskPlan


def _drop(value: float | None) -> str:
    return "none up to a drop to 0" if value is None else f"{value:.2f}"


def _task_line(task: TaskPlan, plan: Plan) -> str:
    if task.base_passed is None or task.base_rollouts is None:
        return f"{task.task}: no tally at {task.tally_path}: record one with --repeat N"
    head = f"{task.task}: tally {task.base_passed}/{task.base_rollouts}"
    if task.cannot_decline:
        return f"{head}: never passed, cannot decline (the sequential check runs none)"
    need = (
        f"fixed M = {task.rollouts}"
        if task.rollouts is not None
        else f"more than {plan.limit} rollouts"
    )
    return (
        f"{head}: {need} to catch a drop of {plan.detect:g} alone; "
        f"M = {plan.configured_m} catches a drop of {_drop(task.smallest_drop)}"
    )


def render_plan(plan: Plan) -> str:
    """The plan as text: what each task and the suite need."""
    lines = [
        f"plan: detect a drop of {plan.detect:g} in pass rate with power {plan.power:g} "
        f"(alpha {plan.alpha:g}; configured M = {plan.configured_m})"
    ]
    lines += [_task_line(t, plan) for t in plan.tasks]
    suite = plan.suite
    if not suite.tasks:
        lines.append("suite: no stats task can show a decline (no tally, or none ever passed)")
        return "\n".join(lines) + "\n"
    fixed = (
        f"fixed M = {suite.rollouts} a task"
        if suite.rollouts is not None
        else f"more than {plan.limit} rollouts a task"
    )
    lines.append(
        f"suite ({suite.tasks} tasks that can decline, every one down {plan.detect:g}): "
        f"{fixed}; M = {plan.configured_m} catches a drop of {_drop(suite.smallest_drop)}"
    )
    seq = suite.sequential
    if seq is not None:
        where = "configured" if plan.looks_configured else "default"
        lines.append(
            f"sequential check, looks {list(seq.looks)} ({where}): power {seq.power:.2f}; "
            f"{seq.rollouts_no_change:.1f} rollouts a task and {seq.rounds_no_change:.1f} "
            f"rounds with no change, {seq.rollouts_with_drop:.1f} and "
            f"{seq.rounds_with_drop:.1f} with the drop"
        )
        if seq.power < plan.power:
            lines.append(
                f"  below {plan.power:g}: a cap of {suite.cap_needed} (looks scaled) would reach it"
                if suite.cap_needed is not None
                else f"  below {plan.power:g}: no cap up to {plan.limit} reaches it"
            )
    lines.append(
        "(per-task figures exact, at the tally's own rate; the suite's fixed M confirmed "
        "on simulated checks, its other figures by a normal approximation)"
    )
    return "\n".join(lines) + "\n"
