"""``check --run --repeat-until-decided``: rollouts in rounds until each stats task decides.

The round loop's policy: after the first round of every task, only the stats-gated tasks
whose sequential test has not decided run again, never past the cap; each round's decision
comes from :func:`silo_regress.judging.statsgate.decide_rounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import Made, RolloutFlags, Watcher, run_before_check

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runs.index import Run
    from silo_regress.stats.sequential import Decision
    from silo_regress.store.baselines import BaselineSource


def run_until_decided(
    config: Config,
    source: BaselineSource,
    refs: Sequence[TaskRef],
    *,
    flags: RolloutFlags,
    watcher: Watcher,
    round_size: int,
    cap: int,
) -> tuple[Made, dict[TaskRef, Decision]]:
    """The first round runs every task ``round_size`` times; each later round runs only
    the stats-gated tasks whose sequential test has not decided, never more than ``cap``
    rollouts a task. Returns one pin per rollout (later ones hold only the tasks that ran
    in that round) and each gated task's last decision. A round that fails stops the
    check (exit 3); the rollouts already made stay on disk."""
    from silo_regress.judging.statsgate import decide_rounds, gated_targets
    from silo_regress.judging.targets import select_targets
    from silo_regress.runs.cache import index_runs
    from silo_regress.stats.sequential import Decision

    made = run_before_check(config, source, refs, flags=flags, watcher=watcher, repeat=round_size)
    targets = select_targets(config, index_runs(config.runs_dir), source, refs)
    gated = gated_targets(config, targets)
    while True:
        runs: dict[tuple[str, str], list[Run]] = {}
        for pin in made.pins:
            for key, run in pin.items():
                runs.setdefault(key, []).append(run)
        decisions = decide_rounds(
            config, source, gated, runs, results=made.results, round_size=round_size, cap=cap
        )
        open_tasks = [
            t
            for t in gated
            if t.key is not None
            and decisions.get(t.ref) is Decision.CONTINUE
            and len(runs.get(t.key, [])) < cap
        ]
        if not open_tasks:
            return made, decisions
        size = min(round_size, cap - max(len(runs.get(t.key, [])) for t in open_tasks if t.key))
        names = ", ".join(str(t.ref) for t in open_tasks[:5])
        more = f" and {len(open_tasks) - 5} more" if len(open_tasks) > 5 else ""
        watcher.warn(f"undecided after this round: {names}{more}; {size} more rollouts each")
        made = made + run_before_check(
            config, source, [t.ref for t in open_tasks], flags=flags, watcher=watcher, repeat=size
        )
