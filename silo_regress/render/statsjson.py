"""The stats gate in a JSON report: per task its tier, counts, p-values, intervals and
pass^k; the suite decision with its pass^k curves (docs/statistics.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from silo_regress.stats.intervals import Interval
    from silo_regress.stats.passk import SuitePoint
    from silo_regress.stats.tally import Tally
    from silo_regress.stats.verdicts import StatsJudgement, SuiteDecision, TaskJudgement


def _side(tally: Tally | None, interval: Interval | None) -> dict[str, Any] | None:
    if tally is None:
        return None
    return {
        "passed": tally.passed,
        "rollouts": tally.rollouts,
        "rate": tally.rate,
        "interval": [interval.low, interval.high] if interval is not None else None,
        "reward_mean": tally.reward_mean,
    }


def _task(task: TaskJudgement) -> dict[str, Any]:
    k = task.pass_hat_k
    return {
        "task": task.task,
        "tier": task.tier.value,
        "tally": task.tally_path,
        "failed": task.failed,
        "reasons": [r.value for r in task.reasons],
        "baseline": _side(task.baseline, task.baseline_interval),
        "candidate": _side(task.candidate, task.candidate_interval),
        "rollouts_used": task.candidate.rollouts if task.candidate else 0,
        "p_decline": task.p_decline,
        "p_adjusted": task.p_adjusted,
        "p_increase": task.p_increase,
        "pass_hat_k": {"k": k.k, "baseline": k.baseline, "candidate": k.candidate} if k else None,
        "below_floor": task.below_floor,
        "needed_rollouts": task.needed_rollouts,
        "checks": [
            {
                "label": c.label,
                "baseline": [c.base_passed, c.base_rollouts],
                "candidate": [c.cand_passed, c.cand_rollouts],
                "p_decline": c.p_decline,
            }
            for c in task.checks
        ],
        "renamed_checks": list(task.renamed_checks),
        "decided": task.decided,
        "without_result": list(task.without_result),
        "changed": list(task.changed),
        "retried": task.retried,
    }


def _curve(points: tuple[SuitePoint, ...]) -> list[dict[str, Any]]:
    return [{"k": p.k, "value": p.value, "tasks": p.tasks, "rollouts": p.rollouts} for p in points]


def _suite(suite: SuiteDecision) -> dict[str, Any]:
    return {
        "verdict": suite.verdict.value,
        "gate": suite.gate.value,
        "failed": suite.failed,
        "tasks": suite.tasks,
        "p_decline": suite.p_decline,
        "p_task": suite.p_task,
        "p_increase": suite.p_increase,
        "baseline": {"passed": suite.base_passed, "rollouts": suite.base_rollouts},
        "candidate": {"passed": suite.cand_passed, "rollouts": suite.cand_rollouts},
        "baseline_rate": suite.base_rate,
        "candidate_rate": suite.cand_rate,
        "down": suite.down,
        "up": suite.up,
        "sign_test_p": suite.sign_p,
        "movers": [
            {"task": m.task, "baseline_rate": m.base_rate, "candidate_rate": m.cand_rate}
            for m in suite.movers
        ],
        "pass_hat_k": {
            "baseline": _curve(suite.baseline_curve),
            "candidate": _curve(suite.candidate_curve),
        },
    }


def stats_json(judgement: StatsJudgement) -> dict[str, Any]:
    policy = judgement.policy
    floor = policy.floor
    return {
        "alpha": policy.alpha,
        # what merge needs to judge the shards' tasks again as one suite
        "policy": {
            "suite_gate": policy.suite_gate.value,
            "sequential": policy.sequential,
            "require_power": policy.require_power,
            "judged_in_ci": policy.judged_in_ci,
            "k": policy.k,
            "floor": {"k": floor.k, "value": floor.value} if floor else None,
        },
        "failed": judgement.failed,
        "not_decided": judgement.not_decided,
        "suite": _suite(judgement.suite),
        "tasks": [_task(t) for t in judgement.tasks],
    }
