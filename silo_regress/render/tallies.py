"""``check --run --repeat N`` in words: each task's pass count, and which rollouts an
outcome stands for. The text, Markdown, GitHub and JUnit reports share these phrases.
"""

from __future__ import annotations

from silo_regress.judging.outcome import Outcome, Report
from silo_regress.judging.repeats import RepeatTally, tally_repeats


def tally_line(tally: RepeatTally) -> str:
    """``TASK-002 (crm-west): 2/3 match, variants 1,2; no match: rollout 3``."""
    text = f"{tally.task.label_with(tally.environment)}: {count_phrase(tally)}"
    if tally.failed:
        text += f"; no match: {rollouts_phrase(tally.failed)}"
    return text


def count_phrase(tally: RepeatTally) -> str:
    """``3/3 match, variants 1,2``: the variant numbers only of rollouts that matched."""
    text = f"{len(tally.matched)}/{tally.rollouts} match"
    used = tally.variants_used
    if used:
        text += f", variant{'s' * (len(used) != 1)} {','.join(map(str, used))}"
    return text


def rollouts_phrase(rollouts: tuple[int, ...]) -> str:
    """``rollout 3`` or ``rollouts 2, 3``."""
    return f"rollout{'s' * (len(rollouts) != 1)} {', '.join(map(str, rollouts))}"


def outcome_rollouts(outcome: Outcome, report: Report) -> str:
    """``rollouts 2, 3 of 3`` for an outcome of a repeated check, else ``""``."""
    if report.repeat is None or not outcome.repeats:
        return ""
    return f"{rollouts_phrase(outcome.repeats)} of {report.repeat}"


def tally_lines(report: Report) -> list[str]:
    """One line per task of a repeated check, failing tasks first; [] otherwise."""
    tallies = tally_repeats(report)
    return [tally_line(t) for t in sorted(tallies, key=lambda t: t.ok)]
