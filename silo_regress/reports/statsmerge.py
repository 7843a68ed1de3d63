"""The stats gate across shards: read each shard's ``stats`` back, judge all tasks as one suite.

One suite decision per check (issue 28): the shards of ``check --shard K/N`` each saw
part of the suite, so ``merge`` takes every shard's tallies (the counts the JSON report
carries) and runs :func:`~silo_regress.stats.verdicts.judge_tasks` once over all of
them. A task the sequential mode decided keeps its decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from silo_regress.errors import InputError
from silo_regress.stats.sequential import Decision
from silo_regress.stats.tally import Tally
from silo_regress.stats.verdicts import (
    Evidence,
    Floor,
    Policy,
    Reason,
    StatsJudgement,
    SuiteGate,
    Tier,
    judge_tasks,
)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{where} must be a whole number of at least 0")
    return value


def _side(value: Any, checks: list[tuple[str, int]], where: str) -> Tally | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"{where} must be an object or null")
    rollouts = _count(value.get("rollouts"), f"{where}.rollouts")
    passed = _count(value.get("passed"), f"{where}.passed")
    if passed > rollouts or any(n > rollouts for _, n in checks):
        raise InputError(f"{where}: counts above its {rollouts} rollouts")
    mean = value.get("reward_mean")
    reward = float(mean) * rollouts if isinstance(mean, int | float) and mean is not True else 0
    return Tally(rollouts=rollouts, passed=passed, checks=tuple(sorted(checks)), reward_sum=reward)


def _checks(value: Any, index: int, where: str) -> list[tuple[str, int]]:
    if not isinstance(value, list):
        raise InputError(f"{where}.checks must be a list")
    found = []
    for n, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("label"), str):
            raise InputError(f"{where}.checks[{n}] must have a label")
        pair = item.get(("baseline", "candidate")[index])
        if not isinstance(pair, list) or len(pair) != 2:
            raise InputError(f"{where}.checks[{n}] must hold [passed, rollouts] pairs")
        found.append((item["label"], _count(pair[0], f"{where}.checks[{n}]")))
    return found


def _names(value: Any, where: str) -> tuple[str, ...]:
    """Run names a shard reported (absent in a report of 0.3: none)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where} must be a list of run names")
    return tuple(value)


def _decision(item: dict[str, Any]) -> Decision | None:
    reasons = item.get("reasons") or []
    if Reason.UNDECIDED.value in reasons:
        return Decision.CONTINUE
    if Reason.DECIDED_SEQUENTIALLY.value in reasons:
        return Decision.REGRESSION if item.get("tier") == Tier.REGRESSION.value else Decision.STABLE
    return None


def read_stats(value: Any, source: str) -> tuple[Policy, list[Evidence], dict[str, Decision]]:
    """The policy, evidence and sequential decisions of one report's ``stats`` object."""
    where = f"{source}: stats"
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), list):
        raise InputError(f"{where} must be an object with a 'tasks' list")
    raw = value.get("policy")
    if not isinstance(raw, dict):
        raise InputError(f"{where}.policy must be an object (a report of this version)")
    try:
        floor = raw.get("floor")
        policy = Policy(
            alpha=float(value["alpha"]),
            k=int(raw["k"]),
            floor=Floor(int(floor["k"]), float(floor["value"])) if floor else None,
            suite_gate=SuiteGate(raw["suite_gate"]),
            sequential=raw["sequential"] is True,
            require_power=raw["require_power"] is True,
            judged_in_ci=raw.get("judged_in_ci") is True,
        )
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}.policy is not a stats policy of this version") from None
    evidence, decisions = [], {}
    for n, item in enumerate(value["tasks"]):
        at = f"{where}.tasks[{n}]"
        if not isinstance(item, dict) or not isinstance(item.get("task"), str):
            raise InputError(f"{at} must be an object naming its task")
        baseline = _side(item.get("baseline"), _checks(item.get("checks", []), 0, at), at)
        candidate = _side(item.get("candidate"), _checks(item.get("checks", []), 1, at), at)
        tally = item.get("tally")
        evidence.append(
            Evidence(
                item["task"],
                baseline,
                candidate,
                tally if isinstance(tally, str) else None,
                without_result=_names(item.get("without_result"), f"{at}.without_result"),
                changed=_names(item.get("changed"), f"{at}.changed"),
            )
        )
        decision = _decision(item)
        if decision is not None:
            decisions[item["task"]] = decision
    return policy, evidence, decisions


def decisions_of(stats: StatsJudgement) -> dict[str, Decision]:
    """The sequential decisions a judgement kept in its tasks' reasons."""
    found = {}
    for task in stats.tasks:
        if Reason.UNDECIDED in task.reasons:
            found[task.task] = Decision.CONTINUE
        elif Reason.DECIDED_SEQUENTIALLY in task.reasons:
            regression = task.tier is Tier.REGRESSION
            found[task.task] = Decision.REGRESSION if regression else Decision.STABLE
    return found


def judge_again(
    parts: Sequence[tuple[Policy, list[Evidence], dict[str, Decision]]],
) -> StatsJudgement | None:
    """All the shards' stats tasks judged as one suite, under the first shard's policy."""
    if not parts:
        return None
    policy = parts[0][0]
    evidence = [e for _, found, _ in parts for e in found]
    decisions = {k: v for _, _, found in parts for k, v in found.items()}
    return judge_tasks(evidence, policy, decisions=decisions if policy.sequential else None)
