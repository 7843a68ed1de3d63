"""``check --run --repeat N``: one report from N judged rollouts of each task, and tallies.

Values only: :func:`fold_repeats` turns the N per-rollout reports that
:mod:`silo_regress.judging.judge` made into one, where rollouts that gave an artifact the
same verdict and bytes share one outcome (so a behaviour seen in 3 rollouts is
diffed once, not 3 times); :func:`tally_repeats` counts, per task, the rollouts
that matched an accepted variant in every artifact. Nothing here words or prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from silo_regress.judging.outcome import Direction, Outcome, Report, Verdict
from silo_regress.project.taskref import TaskRef

# Rollouts whose outcomes agree in all of these are one outcome of the folded report.
_Identity = tuple[Verdict, Direction | None, int | None, bytes | None, str | None]


@dataclass(frozen=True)
class RepeatTally:
    """How the N rollouts of one task fared against its accepted variants."""

    task: TaskRef
    environment: str | None
    rollouts: int  # N
    matched: tuple[int, ...]  # rollouts (1-based) whose every artifact matched a variant
    # Per artifact, the accepted variants its matching rollouts equalled, ascending.
    variants: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def ok(self) -> bool:
        return len(self.matched) == self.rollouts

    @property
    def failed(self) -> tuple[int, ...]:
        """The rollouts that matched no variant of some artifact (or left no result)."""
        return tuple(k for k in range(1, self.rollouts + 1) if k not in self.matched)

    @property
    def variants_used(self) -> tuple[int, ...]:
        """The variants worth naming: those of artifacts that matched a later variant.

        An artifact matched only as variant 1 (a state diff that never varies) says
        nothing about which behaviour the agent showed; when no artifact matched a
        later one, that is variant 1.
        """
        varied = [numbers for _, numbers in self.variants if any(n > 1 for n in numbers)]
        if not varied:
            return (1,) if self.variants else ()
        return tuple(sorted({n for numbers in varied for n in numbers}))


def fold_repeats(reports: Sequence[Report]) -> Report:
    """One report from ``reports[k - 1]``, which judged rollout k of every task.

    The outcomes of one artifact that agree in verdict, direction, variant, run
    bytes and detail become one outcome naming its rollouts in ``repeats``; the
    first rollout's outcome stands for them (its run is the one named). A single
    report comes back as it is: ``--repeat 1`` is a plain ``check --run``.
    """
    if len(reports) == 1:
        return reports[0]
    groups: dict[tuple[TaskRef, str | None, str], dict[_Identity, list[Outcome]]] = {}
    for number, report in enumerate(reports, start=1):
        for outcome in report.outcomes:
            place = (outcome.task, outcome.environment, outcome.artifact)
            same = groups.setdefault(place, {}).setdefault(_identity(outcome), [])
            same.append(replace(outcome, repeats=(number,)))
    outcomes = [
        replace(same[0], repeats=tuple(o.repeats[0] for o in same))
        for kinds in groups.values()
        for same in kinds.values()
    ]
    warnings = dict.fromkeys(w for report in reports for w in report.warnings)
    return replace(
        reports[0], outcomes=tuple(outcomes), warnings=tuple(warnings), repeat=len(reports)
    )


def _identity(outcome: Outcome) -> _Identity:
    return (
        outcome.verdict,
        outcome.direction,
        outcome.variant,
        outcome.run_text,
        outcome.detail,
    )


def tally_repeats(report: Report) -> tuple[RepeatTally, ...]:
    """Per task, in report order: which of its rollouts matched; () without --repeat."""
    if report.repeat is None:
        return ()
    tasks: dict[tuple[TaskRef, str | None], list[Outcome]] = {}
    for outcome in report.outcomes:
        tasks.setdefault((outcome.task, outcome.environment), []).append(outcome)
    tallies = []
    for (task, environment), outcomes in tasks.items():
        failing = {k for o in outcomes if not o.ok for k in o.repeats}
        seen = {k for o in outcomes for k in o.repeats}
        # A task's own `repeat` may be below the check's: it counts the rollouts it had.
        rollouts = range(1, max(seen, default=report.repeat) + 1)
        matched = tuple(k for k in rollouts if k in seen and k not in failing)
        variants: dict[str, set[int]] = {}
        for outcome in outcomes:
            # A failing rollout's matching artifacts say nothing about accepted behaviour.
            if outcome.variant is not None and set(outcome.repeats) & set(matched):
                variants.setdefault(outcome.artifact, set()).add(outcome.variant)
        tallies.append(
            RepeatTally(
                task=task,
                environment=environment,
                rollouts=len(rollouts),
                matched=matched,
                variants=tuple((a, tuple(sorted(n))) for a, n in variants.items()),
            )
        )
    return tuple(tallies)
