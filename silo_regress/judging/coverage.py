"""What a check did not cover: runs and configured artifacts no baseline answers for.

A check that compares 10 artifacts and says "10 match" while a task, an artifact
newly added to ``artifacts``, or a whole environment goes unjudged gives a pass it
cannot vouch for; the report names each kind in one line (``--fail-on uncovered``
makes them fail).
"""

from __future__ import annotations

from collections.abc import Sequence

from silo_regress.judging.outcome import Uncovered
from silo_regress.judging.targets import Target
from silo_regress.project.config import Config
from silo_regress.runs.index import RunIndex


def find_uncovered(config: Config, index: RunIndex, targets: Sequence[Target]) -> Uncovered:
    """The tasks, artifacts and environments with runs or settings but no baseline."""
    covered = {t.key for t in targets if t.key is not None}
    covered |= {(e, t.ref.task_id) for t in targets for e in t.ambiguous}  # named already
    named = {t.key[0] for t in targets if t.key is not None and t.baselines}
    named |= {e for t in targets for e in t.ambiguous}
    keys = index.task_keys()
    environments = sorted({e for e, _ in keys} - named) if named else []
    tasks = [f"{e}/{t}" for e, t in keys if (e, t) not in covered and e not in environments]
    artifacts: list[tuple[str, str]] = []
    for target in targets:
        if target.key is None or not target.baselines or target.refused or target.ambiguous:
            continue
        environment, task_id = target.key
        have = {b.artifact for b in target.baselines}
        settings = config.task_settings(target.ref, environment=environment)
        artifacts += [(f"{environment}/{task_id}", a) for a in settings.artifacts if a not in have]
    return Uncovered(tuple(tasks), tuple(artifacts), tuple(environments))
