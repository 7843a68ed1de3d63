"""The stats gate across shards: read each shard's ``stats`` back, judge all tasks as one suite.

One suite decision per check (issue 28): the shards of ``check --shard K/N`` each saw
part of the suite, so ``merge`` takes every shard's tallies (the counts the JSON report
carries) and runs :func:`~silo_regress.stats.verdicts.judge_tasks` once over all of
them. A task the sequential mode decided keeps its decision.
"""

from __future__ import annotations

import math
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

# TODO(issue 31): import MAX_ROLLOUTS from silo_regress.stats.tally once the bound lands
# there; until then the same documented bound is kept here.
MAX_ROLLOUTS = 100_000
MAX_ALPHA = 0.5
MAX_K = 100


def _count(value: Any, where: str) -> int:
    # A forged count of 10**400 would hang the exact tests: bound it before any math.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ROLLOUTS:
        raise InputError(f"{where} must be a whole number from 0 to {MAX_ROLLOUTS}")
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
    reward = 0.0
    try:
        if isinstance(mean, int | float) and not isinstance(mean, bool) and math.isfinite(mean):
            reward = float(mean) * rollouts
    except OverflowError:  # a 400-digit integer is no mean reward
        raise InputError(f"{where}.reward_mean is out of range") from None
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


def read_policy(raw: Any, alpha: Any, where: str) -> Policy:
    """A report's statistical policy, validated: a forged ``alpha`` of 0, -1 or ``"0"``
    would turn every regression into a pass (issue 31), so each value must be one a
    config can give, or the report is refused with one sentence naming the key."""
    if not isinstance(raw, dict):
        raise InputError(f"{where}.policy must be an object (a report of this version)")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha <= MAX_ALPHA:
        raise InputError(f"{where}.alpha must be a number in (0, {MAX_ALPHA}], not {alpha!r}")
    gates = {g.value: g for g in SuiteGate}
    if raw.get("suite_gate") not in gates:
        raise InputError(
            f"{where}.policy.suite_gate must be one of {', '.join(gates)}, "
            f"not {raw.get('suite_gate')!r}"
        )
    if not isinstance(raw.get("judged_in_ci", False), bool):  # absent before 0.4
        raise InputError(f"{where}.policy.judged_in_ci must be true or false")
    for key in ("sequential", "require_power"):
        if not isinstance(raw.get(key), bool):
            raise InputError(f"{where}.policy.{key} must be true or false")
    k = raw.get("k")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InputError(f"{where}.policy.k must be a whole number from 1 to {MAX_K}")
    floor = raw.get("floor")
    read_floor = None
    if floor is not None:
        fk, value = floor.get("k") if isinstance(floor, dict) else None, None
        if isinstance(floor, dict):
            value = floor.get("value")
        if (
            isinstance(fk, bool)
            or not isinstance(fk, int)
            or not 1 <= fk <= MAX_K
            or isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= 1
        ):
            raise InputError(
                f'{where}.policy.floor must be null or {{"k": 1..{MAX_K}, "value": 0..1}}'
            )
        read_floor = Floor(fk, float(value))
    return Policy(
        alpha=float(alpha),
        k=k,
        floor=read_floor,
        suite_gate=gates[raw["suite_gate"]],
        sequential=raw["sequential"],
        require_power=raw["require_power"],
        judged_in_ci=raw.get("judged_in_ci", False),
    )


def policy_json(policy: Policy) -> dict[str, Any]:
    """The policy as a report carries it (the keys :func:`read_policy` reads)."""
    floor = policy.floor
    return {
        "suite_gate": policy.suite_gate.value,
        "sequential": policy.sequential,
        "require_power": policy.require_power,
        "judged_in_ci": policy.judged_in_ci,
        "k": policy.k,
        "floor": {"k": floor.k, "value": floor.value} if floor else None,
    }


def same_policy(a: Policy, b: Policy) -> bool:
    """Whether two reports were judged by one policy: alpha, suite gate, sequential
    mode, --require-power, k and the floor."""
    return policy_json(a) == policy_json(b) and a.alpha == b.alpha


def read_stats(value: Any, source: str) -> tuple[Policy, list[Evidence], dict[str, Decision]]:
    """The policy, evidence and sequential decisions of one report's ``stats`` object."""
    where = f"{source}: stats"
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), list):
        raise InputError(f"{where} must be an object with a 'tasks' list")
    policy = read_policy(value.get("policy"), value.get("alpha"), where)
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
