"""The verdict of a file named like a baseline that names no task (:func:`baselines.refusal`).

No run can be compared with such a file, and ``fmt`` cannot tell which task was
meant, so it is ``not-canonical`` with its reason: check fails on it, in every
format, as on a baseline that does not parse. A gate that skipped it would pass
without ever reading it.
"""

from __future__ import annotations

from silo_regress.judging.outcome import BaselineOrigin, Outcome, Verdict
from silo_regress.judging.targets import Target
from silo_regress.project.config import Config
from silo_regress.store.baselines import Refused


def describe(refused: Refused, shown: str) -> str:
    """Why the file at ``shown`` (as messages name it) is compared with nothing."""
    return (
        f"{shown}: named like a baseline, but {refused.reason}; no task is compared with "
        "it: rename or remove it (fmt cannot tell which task was meant)"
    )


def refused_outcomes(config: Config, target: Target, origin: BaselineOrigin) -> list[Outcome]:
    """One ``not-canonical`` outcome per file of a refused target, in name order."""
    from silo_regress.judging.remedies import RefusedName  # only for a refused name

    outcomes = []
    for refused in target.refused:
        path = f"{config.relative(config.baselines_dir)}/{refused.shown}"
        outcomes.append(
            Outcome(
                task=target.ref,
                environment=target.ref.environment,
                artifact=refused.artifact,
                verdict=Verdict.NOT_CANONICAL,
                baseline_path=path,
                baseline_source=origin,
                detail=describe(refused, origin.locate(path)),
                remedy=RefusedName(path, exact=refused.shown == refused.relpath),  # not fmt
            )
        )
    return outcomes
