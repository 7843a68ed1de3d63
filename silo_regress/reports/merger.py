"""The reports of ``check --shard K/N`` jobs into one, as typed values.

Each report is read by :mod:`silo_regress.reports.schema`; this module checks that the
shards fit together and merges their outcomes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from silo_regress.errors import InputError
from silo_regress.judging.outcome import (
    WORKING_TREE,
    BaselineOrigin,
    Outcome,
    Report,
    SourceKind,
)
from silo_regress.project.taskref import TaskRef

if TYPE_CHECKING:
    from silo_regress.stats.verdicts import StatsJudgement


def merge_reports(reports: Sequence[tuple[str, Report]]) -> Report:
    """One report from the reports of all shards; refuses overlaps and missing shards."""
    _check_shards(reports)
    seen: dict[tuple[str, str | None, str], str] = {}
    outcomes: list[Outcome] = []
    warnings: list[str] = []
    for name, report in reports:
        for outcome in report.outcomes:
            key = (str(outcome.task), outcome.environment, outcome.artifact)
            # Under --repeat one report holds an outcome per distinct result of an artifact.
            if seen.get(key, name) != name:
                label = f"{outcome.task} {outcome.artifact}"
                raise InputError(
                    f"{name}: {label} is also in {seen[key]}; every task must be checked by "
                    "exactly one shard (same N in every job, each K once)"
                )
            seen[key] = name
            outcomes.append(outcome)
        warnings.extend(w for w in report.warnings if w not in warnings)
    # check orders tasks by ref and keeps each task's artifacts in config order;
    # a stable sort by ref alone restores exactly that order.
    outcomes.sort(key=lambda o: TaskRef.sort_key(o.task))
    if not outcomes and all(r.stats is None for _, r in reports):  # stats tasks have no results
        raise InputError(
            f"the report{'s' * (len(reports) > 1)} compared nothing (no results in "
            f"{', '.join(name for name, _ in reports)}): a merge of nothing is not a pass"
        )
    # A shard that drew no task says nothing of where baselines were read.
    sources = list(dict.fromkeys(r.source for _, r in reports if r.outcomes)) or [WORKING_TREE]
    return Report(
        outcomes=tuple(outcomes),
        warnings=tuple(warnings),
        source=sources[0] if len(sources) == 1 else _mixed(sources),
        repeat=reports[0][1].repeat,
        stats=_merged_stats(reports),
    )


def _merged_stats(reports: Sequence[tuple[str, Report]]) -> StatsJudgement | None:
    """One suite decision over every shard's stats tasks (issue 28), judged again."""
    judged = [(name, r.stats) for name, r in reports if r.stats is not None]
    if not judged:
        return None
    from silo_regress.reports.statsmerge import decisions_of, judge_again, policy_json, same_policy
    from silo_regress.stats.verdicts import Evidence

    first, policy = judged[0][0], judged[0][1].policy
    for name, stats in judged[1:]:
        if not same_policy(stats.policy, policy):
            # The merge judges every task under one policy: a shard judged under another
            # (or forged) would decide for the others what their tasks mean.
            raise InputError(
                f"{name}: its stats policy (alpha {stats.policy.alpha}, "
                f"{_policy_words(policy_json(stats.policy))}) differs from {first}'s (alpha "
                f"{policy.alpha}, {_policy_words(policy_json(policy))}); make every shard with "
                "one config and the same check options"
            )
    seen: dict[str, str] = {}
    parts = []
    for name, stats in judged:
        for task in stats.tasks:
            if seen.setdefault(task.task, name) != name:
                raise InputError(
                    f"{name}: stats task {task.task} is also in {seen[task.task]}; every task "
                    "must be checked by exactly one shard"
                )
        evidence = [Evidence(t.task, t.baseline, t.candidate, t.tally_path) for t in stats.tasks]
        parts.append((stats.policy, evidence, decisions_of(stats)))
    return judge_again(parts)


def _policy_words(policy: dict[str, object]) -> str:
    return ", ".join(f"{key} {value}" for key, value in policy.items())


def _mixed(sources: Sequence[BaselineOrigin]) -> BaselineOrigin:
    """Shards that read their baselines from different places (never in one CI run)."""
    kinds = {s.kind for s in sources}
    kind = kinds.pop() if len(kinds) == 1 else SourceKind.COMMIT
    return BaselineOrigin(kind, ", ".join(s.label for s in sources))


def _check_shards(reports: Sequence[tuple[str, Report]]) -> None:
    if not reports:
        raise InputError("no reports to merge")
    repeats = {r.repeat for _, r in reports}
    if len(repeats) > 1:
        listed = ", ".join(
            f"{name} ({f'--repeat {r.repeat}' if r.repeat else 'no --repeat'})"
            for name, r in reports
        )
        raise InputError(f"reports come from different rollout counts: {listed}")
    sharded = [(name, r.shard) for name, r in reports if r.shard is not None]
    if not sharded:
        return
    if len(sharded) != len(reports):
        plain = next(name for name, r in reports if r.shard is None)
        raise InputError(
            f"{plain}: not made with --shard, but {sharded[0][0]} was; "
            "merge the reports of one sharded run"
        )
    counts = {shard[1] for _, shard in sharded if shard}
    if len(counts) > 1:
        listed = ", ".join(f"{name} ({shard[0]}/{shard[1]})" for name, shard in sharded if shard)
        raise InputError(f"reports come from different shard counts: {listed}")
    count = counts.pop()
    owners: dict[int, str] = {}
    for name, shard in sharded:
        assert shard is not None
        if shard[0] in owners:
            raise InputError(
                f"{name}: shard {shard[0]}/{count} is also {owners[shard[0]]}; "
                "give each shard's report once"
            )
        owners[shard[0]] = name
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in owners]
    if missing:
        raise InputError(
            f"shard{'s' * (len(missing) > 1)} {', '.join(missing)} missing: their tasks "
            f"were not checked; merge the JSON reports of all {count} shards"
        )
