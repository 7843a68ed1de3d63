"""The review queue: what `silo-regress review` walks through, and what accepting means.

Values and one write path only; the terminal dialogue lives in cli/review.py.
Accepting writes the artifact from the very run that was compared (by its run
name, not "the newest run now"), under the recorder's writer lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.errors import InputError
from silo_regress.judging.direction import review_rank
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.project.config import Config, Gate
from silo_regress.recording.acceptance import PathAcceptance, PathChoice
from silo_regress.recording.recorder import Choice, Recording, record
from silo_regress.runs.index import RunIndex, result_is_complete
from silo_regress.store.baselines import BaselineStore

# Verdicts a review can settle by recording the run: the others need a new run
# (incomplete-run, missing-run) or a fix to the baselines (fmt, config).
REVIEWABLE = (Verdict.CHANGED, Verdict.MISSING_BASELINE)


@dataclass(frozen=True)
class Queue:
    """The outcomes to review, regressions first, and the ones review cannot settle."""

    items: tuple[Outcome, ...]
    unsettled: tuple[Outcome, ...]


def review_queue(report: Report, *, config: Config | None = None) -> Queue:
    """Changed results by direction (regression, mixed, improvement, drift), then new tasks.

    With ``config``, a task the stats gate judges offers only what its gate counts:
    under ``gate = "stats"`` none of its artifacts (its tally is offered instead), under
    ``"both"`` only the artifacts ``exact-artifacts`` names (every one when unset). The
    gate says a byte difference of the others does not count, so accepting one would
    write a baseline from a rollout nobody judged (a failing one, as likely as not)."""
    outcomes = report.outcomes
    if config is not None and config.gates_statistically:
        outcomes = tuple(o for o in outcomes if byte_exact(config, o))
    reviewable = [o for o in outcomes if o.verdict in REVIEWABLE]
    order = {id(o): n for n, o in enumerate(reviewable)}
    items = sorted(
        reviewable,
        key=lambda o: (o.verdict is not Verdict.CHANGED, review_rank(o.direction), order[id(o)]),
    )
    unsettled = [o for o in outcomes if not o.ok and o.verdict not in REVIEWABLE]
    return Queue(items=tuple(items), unsettled=tuple(unsettled))


def byte_exact(config: Config, outcome: Outcome) -> bool:
    """Whether the task's gate judges this artifact by its bytes."""
    settings = config.task_settings(outcome.task, environment=outcome.environment)
    if settings.gate is Gate.EXACT:
        return True
    if settings.gate is Gate.STATS:
        return False
    exact = settings.exact_artifacts
    return exact is None or outcome.artifact in exact


def record_command(outcome: Outcome) -> str:
    """The non-interactive way to accept ``outcome``."""
    if outcome.verdict is Verdict.CHANGED and outcome.baseline_path:
        return f"silo-regress record {outcome.baseline_path}"
    return f"silo-regress record {outcome.task}"


def accept(
    config: Config,
    store: BaselineStore,
    index: RunIndex,
    outcome: Outcome,
    *,
    pointers: Sequence[str] = (),
) -> Recording:
    """Record the outcome's artifact (or only ``pointers`` of it) from the compared run."""
    run = index.find(outcome.run_name) if outcome.run_name else None
    if run is None or not result_is_complete(run):
        raise InputError(
            f"{outcome.run_path or outcome.run_name}: the run this result was compared with "
            "is gone or incomplete now; run `silo-regress review` again"
        )
    artifacts = (outcome.artifact,) if outcome.verdict is Verdict.CHANGED else ()
    choice = Choice(ref=outcome.task, run=run, artifacts=artifacts)
    # Each path is pinned to this artifact, so a pointer in neither side is refused
    # by the splice before anything is written.
    pinned = tuple(PathChoice(pointer=p, artifact=outcome.artifact) for p in pointers)
    narrow = PathAcceptance(pinned) if pinned else None
    # What the reviewer saw is what is accepted: a run rewritten since is refused.
    shown = {(outcome.task, outcome.artifact): outcome.run_text} if outcome.run_text else {}
    return record(config, store, [choice], narrow=narrow, expected=shown)[0]


def preview(config: Config, store: BaselineStore, index: RunIndex, outcome: Outcome) -> Recording:
    """What accepting a missing-baseline outcome would record, vetted; nothing is written."""
    from silo_regress.recording.recorder import prepare

    run = index.find(outcome.run_name) if outcome.run_name else None
    if run is None or not result_is_complete(run):
        raise InputError(
            f"{outcome.run_path or outcome.run_name}: the run this result was compared with "
            "is gone or incomplete now; run `silo-regress review` again"
        )
    return prepare(config, store, [Choice(ref=outcome.task, run=run)])[0]
