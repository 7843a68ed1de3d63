"""The words of ``silo-regress plan``: a line per stats task, then the suite."""

from __future__ import annotations

from silo_regress.stats.planning import (
    LEAST_ROLLOUTS,
    SIMULATED_CHECKS,
    Plan,
    SuitePlan,
    TaskPlan,
)

_NAMED = 5  # tasks named in a line; the config lines name every one


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
    if task.power is not None:
        fewer = (
            f"; {task.rollouts - 1} gives {task.power_fewer:.2f}"
            if task.rollouts is not None and task.power_fewer is not None
            else ""
        )
        need += f" (power {task.power:.2f}{fewer})"
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
    lines.append(
        f"suite ({suite.tasks} tasks that can decline, every one down {plan.detect:g}): "
        f"{_allocation_words(suite, plan)}; M = {plan.configured_m} catches a drop of "
        f"{_drop(suite.smallest_drop)}"
    )
    lines += _config_lines(suite, plan)
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
                f"  below {plan.power:g}: a cap of {suite.cap_needed} (looks scaled) gives "
                f"{suite.cap_power:.2f}"
                if suite.cap_needed is not None
                else f"  below {plan.power:g}: no cap up to {plan.limit} reaches it (by a "
                "normal approximation, confirmed on simulated checks)"
            )
    allocation = suite.allocation
    how = (
        f"on {SIMULATED_CHECKS:,} seeded simulated checks of the check's own suite test "
        "(one standard error about 0.013 at 0.8)"
        if allocation is None or allocation.simulated
        else "by a normal approximation (over 200 tasks)"
    )
    lines.append(
        f"(per-task powers exact, at the tally's own rate; the suite's rollouts and powers "
        f"{how}, and so are the sequential check's; the smallest drops by a normal "
        "approximation)"
    )
    return "\n".join(lines) + "\n"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def _allocation_words(suite: SuitePlan, plan: Plan) -> str:
    """What the suite needs: the fewest rollouts and their power, the next-smaller
    choice's, and the equal M's."""
    found = suite.allocation
    if found is None:
        return f"more than {plan.limit} rollouts a task"
    chosen = found.chosen
    if found.at_least:
        return (
            f"{LEAST_ROLLOUTS} a task, the least a check runs (it refuses 1), gives power "
            f"{chosen.power:.2f} ({chosen.total} rollouts)"
        )
    spread = f"{found.low} a task"
    if found.extra:
        extra = [suite.names[i] for i in found.order[: found.extra]]
        spread += f", {found.low + 1} for the {found.extra} most informative ({_names(extra)})"
    smaller = found.smaller
    fewer = f"; {smaller.total} give {smaller.power:.2f}" if smaller is not None else ""
    equal = max(found.uniform.rollouts)
    uniform = (
        f"; equal M = {equal} a task: {found.uniform.total} rollouts, power "
        f"{found.uniform.power:.2f}"
        if found.extra
        else ""
    )
    cannot = len(found.chosen.rollouts) - suite.tasks
    if cannot:
        spread += f", {LEAST_ROLLOUTS} for the {cannot} that cannot decline"
    return f"{chosen.total} rollouts in all, power {chosen.power:.2f}{fewer}: {spread}{uniform}"


def _config_lines(suite: SuitePlan, plan: Plan) -> list[str]:
    """The allocation as the keys ``check --run`` reads (a plain ``--repeat N`` would
    give every task N)."""
    found = suite.allocation
    if found is None:
        return []
    counts = dict(zip(suite.names, found.chosen.rollouts, strict=True))
    own = {o.task: o.repeat for o in suite.overrides}
    tasks = [n for n, c in counts.items() if c != found.low or n in own]
    prefix = "tool.silo-regress." if plan.pyproject else ""
    where = "pyproject.toml [tool.silo-regress]" if plan.pyproject else "the config file"
    lines = [
        f"  to run it: in {where}, repeat = {found.low}"
        + (", and in each task's table:" if tasks else "")
    ]
    lines += [f'    [{prefix}tasks."{n}"] repeat = {counts[n]}' for n in tasks]
    if plan.looks_configured:
        # check --run with the sequential key and no --repeat runs the looks instead
        lines.append(
            "  then `silo-regress check --run` without the `sequential` key (with it, "
            "check --run runs its looks; a --repeat N would give every task N)"
        )
    else:
        lines.append("  then `silo-regress check --run` (a --repeat N would give every task N)")
    return lines
