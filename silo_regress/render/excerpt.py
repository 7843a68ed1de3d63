"""What every CI format says about one outcome: a title, a capped diff, a line number.

The diff comes from the canonical texts when the outcome carries them (a fresh
check), otherwise from its structural changes (a report merged from JSON files
whose baselines are not at hand), so every format renders both.
"""

from __future__ import annotations

from typing import Any

import orjson

from silo_regress.canon.jsondiff import MISSING, array_index, child, show
from silo_regress.canon.pointer import split_pointer
from silo_regress.canon.visible import visible
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.render.wording import one_line, word_sides

DIFF_CAP = 200
MARKDOWN_DIFF_CAP = 120


def made_by(outcome: Outcome) -> str | None:
    """``made by agent X at commit abc1234+dirty`` for a result worth a look, when known.

    A stale run's detail says it already; a match needs no pedigree.
    """
    if outcome.ok or outcome.provenance is None or outcome.verdict is Verdict.STALE_RUN:
        return None
    return outcome.provenance.made_by() or None


def headline(outcome: Outcome) -> str:
    """One line: what happened to this artifact, in agent terms when it changed."""
    if outcome.verdict is Verdict.MATCH:
        return "matches its baseline"
    if outcome.verdict is Verdict.CHANGED:
        return f"changed: {one_line(word_sides(note) for note in outcome.behaviour)}"
    return f"{outcome.verdict.value}: {outcome.detail or ''}".rstrip(": ")


def diff_lines(outcome: Outcome, *, cap: int = DIFF_CAP) -> list[str]:
    """A unified diff (- baseline, + run) of a changed artifact, capped at ``cap`` lines."""
    if outcome.verdict is not Verdict.CHANGED:
        return []
    if outcome.baseline_text is not None and outcome.run_text is not None:
        from silo_regress.render.hunks import unified_diff

        return unified_diff(
            outcome.baseline_text,
            outcome.run_text,
            before_name=visible(outcome.baseline_label or "baseline"),
            after_name=visible(outcome.run_path or "run") + " (canonical)",
            cap=cap,
        )
    return change_lines(outcome, cap=cap)


def change_lines(outcome: Outcome, *, cap: int = DIFF_CAP) -> list[str]:
    """The structural changes as diff-like lines: ``@ /path``, ``- old``, ``+ new``."""
    lines: list[str] = []
    for change in outcome.changes:
        lines.append(f"@ {visible(change.path or '/')}")
        if change.baseline is not MISSING:
            lines.append(f"- {show(change.baseline)}")
        if change.run is not MISSING:
            lines.append(f"+ {show(change.run)}")
    if cap and len(lines) > cap:
        left = len(lines) - cap
        where = f"{outcome.baseline_label} and {outcome.run_path}"
        lines = [*lines[:cap], f"... {left} more lines not shown; the full files are {where}"]
    return lines


def first_change_line(outcome: Outcome) -> int | None:
    """The 1-based line of the baseline file where the first changed value sits."""
    if outcome.baseline_text is None or not outcome.changes:
        return None
    try:
        value = orjson.loads(outcome.baseline_text)
    except orjson.JSONDecodeError:
        return None
    try:
        parts = split_pointer(outcome.changes[0].path)
    except ValueError:
        return None
    try:
        return pointer_line(value, parts)
    except RecursionError:
        return 1


def pointer_line(value: Any, parts: tuple[str, ...]) -> int:
    """The line of the value at ``parts`` in the canonical serialization of ``value``.

    ``value`` must hold its keys in canonical order (as parsed from canonical
    bytes). A path that leaves the document points at its deepest existing parent.
    """
    line = 1
    node = value
    for part in parts:
        found = child(node, part)
        if found is MISSING:
            return line
        if isinstance(node, dict):
            line += 1
            for key, member in node.items():
                if key == part:
                    break
                line += height(member)
        else:
            line += 1 + sum(height(member) for member in node[: array_index(part)])
        node = found
    return line


def height(value: Any) -> int:
    """How many lines ``value`` takes in canonical form."""
    if not isinstance(value, dict | list) or not value:
        return 1
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
    except (orjson.JSONEncodeError, TypeError):  # integers beyond 64 bits
        members = value.values() if isinstance(value, dict) else value
        return 2 + sum(height(member) for member in members)


def failing(report: Report) -> list[Outcome]:
    return [o for o in report.outcomes if not o.ok]


def verdict_counts(report: Report) -> str:
    counts = report.summary()
    return ", ".join(f"{n} {verdict}" for verdict, n in counts.items()) or "nothing checked"


def summary_sentence(report: Report) -> str:
    """``2 changed, 10 match (12 artifacts of 6 tasks)``."""
    if not report.outcomes:
        return "no baselines to check"
    tasks = len({(o.task, o.environment) for o in report.outcomes})
    return (
        f"{verdict_counts(report)} ({artifacts_phrase(report)} "
        f"of {tasks} task{'s' * (tasks != 1)}{rollouts_each(report)})"
    )


def artifacts_phrase(report: Report) -> str:
    """``12 artifacts``: under --repeat an artifact's rollouts count once."""
    artifacts = len(report.outcomes)
    if report.repeat is not None:
        artifacts = len({(o.task, o.environment, o.artifact) for o in report.outcomes})
    return f"{artifacts} artifact{'s' * (artifacts != 1)}"


def rollouts_each(report: Report) -> str:
    """``, 3 rollouts each`` for check --run --repeat 3, else ``""``."""
    return f", {report.repeat} rollouts each" if report.repeat is not None else ""
