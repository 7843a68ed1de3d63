"""The check report as one sticky pull-request comment, built from the same typed report
as render/markdown.py.

A hidden marker on the first line (``<!-- silo-regress:PROJECT -->``) lets the action
find the comment again and update it in place. What fails comes first and is never
folded: the headline, the suite decision and every regression (exact or stats). The rest
(other changes, the stats table, the matching tasks) sits in ``<details>`` sections,
filled until :data:`LIMIT` bytes are spent: GitHub refuses a comment over 65,536
characters, and a comment cut mid-table renders as rubbish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from silo_regress.judging.direction import Direction
from silo_regress.judging.outcome import Report
from silo_regress.render.markdown import cell, code
from silo_regress.render.summary import TaskLine, headline, summarize_report

if TYPE_CHECKING:
    from silo_regress.stats.tally import Tally
    from silo_regress.stats.verdicts import StatsJudgement, TaskJudgement

LIMIT = 60_000  # bytes of UTF-8, below GitHub's 65,536 characters with room to spare
WHAT_CAP = 300  # characters of "what changed" per row
_FAILING_DIRECTIONS = (Direction.REGRESSION, Direction.MIXED)


def marker(project: str) -> str:
    """The hidden first line that names the project's comment; the name percent-encoded,
    so no project path can end the HTML comment or forge another project's marker."""
    return f"<!-- silo-regress:{quote(project, safe='/._~')} -->"


def _short(text: str) -> str:
    return text if len(text) <= WHAT_CAP else text[: WHAT_CAP - 1] + "…"


def _size(lines: list[str]) -> int:
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def render_pr_comment(report: Report, *, project: str, footer: str = "", limit: int = LIMIT) -> str:
    """The comment body: marker, headline, regressions, then the rest collapsed."""
    status = "✅ passed" if report.ok else "❌ failed"
    name = "" if project in ("", ".") else f" {code(project)}"
    said = headline(report)
    out = [marker(project), f"## silo-regress{name}: {status}", "", cell(said), ""]
    summary = summarize_report(report)
    regressions = [line for line in summary.lines if line.direction in _FAILING_DIRECTIONS]
    stats_failed = [t for t in report.stats.tasks if t.failed] if report.stats else []
    if report.stats is not None:
        out += _suite(report.stats)
    if regressions or stats_failed:
        count = len(regressions) + len(stats_failed)
        out += [f"### Regressions ({count})", "", "| Task | What fell |", "| --- | --- |"]
        out += [f"| {code(line.label)} | {cell(_short(line.what))} |" for line in regressions]
        out += [f"| {code(task.task)} | {cell(_stats_what(task))} |" for task in stats_failed]
        out.append("")
    tail = [""] + ([cell(footer), ""] if footer else [])
    budget = limit - _size(out) - _size(tail) - 200  # room for the "not shown" line
    others = [line for line in summary.lines if line.direction not in _FAILING_DIRECTIONS]
    sections = [
        _collapsed(
            f"{len(others)} other task{'s' * (len(others) != 1)} that need a look",
            ["| Task | Kind | What changed |", "| --- | --- | --- |"],
            [_other_row(line) for line in others],
        ),
        _collapsed(
            _stats_heading(report.stats),
            ["| Task | Tier | Baseline | Candidate |", "| --- | --- | --- | --- |"],
            [_stats_row(task) for task in report.stats.tasks if not task.failed],
        )
        if report.stats is not None
        else None,
        _matching(report),
    ]
    left_out = 0
    for section in sections:
        fitted, dropped = _fit(section, budget)
        budget -= _size(fitted)
        left_out += dropped
        out += fitted
    if left_out:
        out.append(
            f"_{left_out} more row{'s' * (left_out != 1)} not shown here (size limit): "
            "the job summary and the JSON report have them all._"
        )
    return "\n".join(out + tail).rstrip("\n") + "\n"


def _suite(stats: StatsJudgement) -> list[str]:
    from silo_regress.render.statslines import suite_sentence

    return [f"**Suite decision:** {cell(suite_sentence(stats.suite))}", ""]


def _stats_what(task: TaskJudgement) -> str:
    from silo_regress.render.statslines import task_sentence

    return task_sentence(task)


def _stats_heading(stats: StatsJudgement | None) -> str:
    n = 0 if stats is None else len([t for t in stats.tasks if not t.failed])
    return f"{n} other stats task{'s' * (n != 1)}"


def _stats_row(task: TaskJudgement) -> str:
    def side(tally: Tally | None) -> str:
        return "none" if tally is None else f"{tally.passed}/{tally.rollouts}"

    return (
        f"| {code(task.task)} | {task.tier.value} | {side(task.baseline)} | "
        f"{side(task.candidate)} |"
    )


def _other_row(line: TaskLine) -> str:
    return f"| {code(line.label)} | {cell(line.kind)} | {cell(_short(line.what))} |"


def _matching(report: Report) -> Folded | None:
    failing = {o.task_label for o in report.outcomes if not o.ok}
    labels = list(dict.fromkeys(o.task_label for o in report.outcomes if o.ok))
    labels = [label for label in labels if label not in failing]
    n = len(labels)
    return _collapsed(
        f"{n} task{'s match their' if n != 1 else ' matches its'} baselines",
        [],
        [f"- {code(label)}" for label in labels],
    )


@dataclass(frozen=True)
class Folded:
    """A ``<details>`` section: its summary line, table head and rows."""

    summary: str
    head: tuple[str, ...]
    rows: tuple[str, ...]

    def lines(self, rows: int | None = None) -> list[str]:
        shown = self.rows if rows is None else self.rows[:rows]
        return [
            f"<details><summary>{self.summary}</summary>",
            "",
            *self.head,
            *shown,
            "",
            "</details>",
            "",
        ]


def _collapsed(summary: str, head: list[str], rows: list[str]) -> Folded | None:
    return Folded(summary, tuple(head), tuple(rows)) if rows else None


def _fit(section: Folded | None, budget: int) -> tuple[list[str], int]:
    """``section`` whole when it fits, else as many of its rows as the budget holds (its
    ``<details>`` always closed); and how many rows were left out."""
    if section is None:
        return [], 0
    room = budget - _size(section.lines(0))
    shown = 0
    for row in section.rows:
        room -= len(row.encode("utf-8")) + 1
        if room < 0:
            break
        shown += 1
    if not shown:
        return [], len(section.rows)
    return section.lines(shown), len(section.rows) - shown
