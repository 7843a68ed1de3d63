"""The check report as Markdown for pull-request comments and job summaries.

A table of the tasks that need attention (one column per artifact), the matching
tasks folded away, then one collapsible section per failing artifact with its
behaviour summary and diff. GitHub cuts comments at 65,536 characters, so diffs
stop once :data:`DIFF_BUDGET` characters are spent and say where the rest is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from silo_regress.behaviour.notes import Note, SegmentKind
from silo_regress.judging.outcome import Direction, Outcome, Report, Verdict
from silo_regress.render.advice import advise
from silo_regress.render.excerpt import (
    MARKDOWN_DIFF_CAP,
    diff_lines,
    made_by,
    summary_sentence,
)
from silo_regress.render.wording import one_line, phrase

DIFF_BUDGET = 50_000
MATCH_ROWS = 300
# ">" needs no escape once no "<" can open a tag; "->" stays readable in the source.
# Agent text must not render as a link or an image (no "[" opens one), code or an
# @mention (emphasis is harmless, and "update_deal" stays readable in the source).
# A backslash escape does not stop a mention: a code span around the "@" does.
_ESCAPE = {
    "|": "\\|",
    "<": "&lt;",
    "&": "&amp;",
    "\n": " ",
    "\r": " ",
    "@": "`@`",
    **{c: "\\" + c for c in "\\`[]"},
}
_SPECIAL = re.compile(r"[|<&\n\r@\\`\[\]]")
_ICON = {True: "✅", False: "❌"}


# What GitHub's Markdown links by itself (GFM "extended autolinks"): a scheme and "//",
# "www.", or an email address. Inside a code span nothing is linked, so such a word is
# shown as one.
_AUTOLINK = re.compile(
    r"(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)[^\s<>|`]*|[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    re.IGNORECASE,
)


def cell(text: str) -> str:
    """Text that stays inside one table cell and renders literally: never a link, an
    image, an @mention, HTML or code (docs/security.md), nor a bare URL GitHub links."""
    shown = visible_text(text)
    out: list[str] = []
    at = 0
    for match in _AUTOLINK.finditer(shown):
        out.append(_escaped(shown[at : match.start()]))
        out.append(code(match.group()))
        at = match.end()
    out.append(_escaped(shown[at:]))
    return "".join(out)


def _escaped(text: str) -> str:
    return _SPECIAL.sub(lambda m: _ESCAPE[m.group()], text)


def visible_text(text: str) -> str:
    """``text`` with nothing invisible in it, line breaks kept for :func:`cell`."""
    from silo_regress.canon.visible import shielded

    return shielded(text)


def note_markdown(note: Note) -> str:
    """A behaviour note for a table cell or list item; a word diff as ``<del>``/``<ins>``."""
    out = []
    for segment in phrase(note, marked=False):
        text = cell(segment.text)
        if segment.kind is SegmentKind.REMOVED:
            text = f"<del>{text}</del>"
        elif segment.kind is SegmentKind.ADDED:
            text = f"<ins>{text}</ins>"
        out.append(text)
    return "".join(out)


def code(text: str) -> str:
    """An inline code span that holds any backticks in ``text``, on one line, and
    inside a table row (GitHub ends a cell at a ``|`` even in a code span)."""
    from silo_regress.canon.visible import one_line

    text = one_line(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(lines: Iterable[str], language: str = "") -> list[str]:
    body = list(lines)
    longest = max((len(run) for line in body for run in re.findall(r"`{3,}", line)), default=2)
    fence = "`" * (longest + 1)
    return [fence + language, *body, fence]


def _task_key(outcome: Outcome) -> tuple[str, str]:
    return (str(outcome.task), outcome.environment or "")


def _tasks(outcomes: Iterable[Outcome]) -> dict[tuple[str, str], list[Outcome]]:
    grouped: dict[tuple[str, str], list[Outcome]] = {}
    for outcome in outcomes:
        grouped.setdefault(_task_key(outcome), []).append(outcome)
    return grouped


def _verdict_cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return "–"
    if outcome.ok:
        return "match"
    return f"**{outcome.verdict.value}**"


def _what(outcomes: list[Outcome]) -> str:
    notes: list[str] = []
    for outcome in outcomes:
        if outcome.verdict is Verdict.CHANGED:
            notes.append(one_line(note_markdown(note) for note in outcome.behaviour))
        elif not outcome.ok and outcome.detail:
            notes.append(cell(outcome.detail))
    return "; ".join(dict.fromkeys(notes))


def _direction(outcomes: list[Outcome]) -> str:
    found = next((o.direction for o in outcomes if o.direction is not None), None)
    return f"**{found.value}**" if found is Direction.REGRESSION else found.value if found else "–"


def _rank(outcomes: list[Outcome]) -> int:
    """Regressions first, then mixed, improvements, drift, then the other verdicts."""
    from silo_regress.judging.direction import review_rank

    found = next((o.direction for o in outcomes if o.direction is not None), None)
    return review_rank(found)


def render_markdown(report: Report, *, title: str = "silo-regress check") -> str:
    artifacts = list(dict.fromkeys(o.artifact for o in report.outcomes))
    grouped = _tasks(report.outcomes)
    failing = {k: v for k, v in grouped.items() if not all(o.ok for o in v)}
    matching = {k: v for k, v in grouped.items() if k not in failing}
    status = _ICON[report.ok] + (" passed" if report.ok else " failed")
    out = [f"## {cell(title)}: {status}", ""]
    where = (
        "" if report.source.is_working_tree else f" · baselines from {code(report.source.label)}"
    )
    if not report.ok or not report.outcomes:
        # What failed comes first, for stats and exact tasks alike; a stats-only check
        # has no artifact to count, and "no baselines to check" would say it checked none.
        from silo_regress.render.summary import headline

        said = headline(report)
        out += [f"**{cell(said[:1].upper() + said[1:])}**", ""]
    if report.outcomes:
        out += [cell(summary_sentence(report)) + where, ""]
    elif where:
        out += ["B" + where.removeprefix(" · b"), ""]
    if report.repeat is not None:
        out += _tallies(report)
    if report.stats is not None:
        from silo_regress.render.statslines import markdown_lines

        out += markdown_lines(report.stats)
    if failing:
        from silo_regress.render.summary import (
            counts_phrase,
            scored_unit,
            scores_phrase,
            summarize_report,
        )

        summary = summarize_report(report)
        out.append(f"**By task:** {cell(counts_phrase(summary))}")
        scores = scores_phrase(summary.totals, per=scored_unit(report))
        if scores:
            out += ["", cell(scores[:1].upper() + scores[1:])]
        out.append("")
        failing = dict(sorted(failing.items(), key=lambda kv: _rank(kv[1])))
        header = ["Task", "Direction", *[code(a) for a in artifacts], "What changed"]
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + " --- |" * len(header))
        for outcomes in failing.values():
            # Under --repeat an artifact has an outcome per distinct result: a failing one shows.
            by_artifact = {o.artifact: o for o in sorted(outcomes, key=lambda o: not o.ok)}
            row = [
                code(outcomes[0].task_label),
                _direction(outcomes),
                *[_verdict_cell(by_artifact.get(a)) for a in artifacts],
                _what(outcomes),
            ]
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    if matching:
        out += _matching(matching, artifacts)
    budget = DIFF_BUDGET
    left_out = 0
    for outcome in report.outcomes:
        if outcome.ok:
            continue
        section = _section(outcome, report)
        size = sum(len(line) + 1 for line in section)
        if size > budget:
            left_out += 1
            continue
        budget -= size
        out += section
    if left_out:
        out += [
            f"_{left_out} more failing artifact{'s' * (left_out != 1)} not shown here "
            "(size limit); the full report is in the job log or the HTML report._",
            "",
        ]
    if report.uncovered:
        from silo_regress.render.summary import uncovered_lines

        out += [f"- {cell(line)}" for line in uncovered_lines(report)] + [""]
    for step in advise(report):
        why = step.why[:1].upper() + step.why[1:]
        if not step.lines and not step.commands:  # the why says what to do by hand
            out += [f"{cell(why)}.", ""]
            continue
        body = code_block(step.lines, "toml") if step.lines else code_block(step.commands, "sh")
        out += [f"{cell(why)}:", "", *body, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _matching(matching: dict[tuple[str, str], list[Outcome]], artifacts: list[str]) -> list[str]:
    count = len(matching)
    out = [
        f"<details><summary>{count} task{'s match their' if count != 1 else ' matches its'} "
        "baselines</summary>",
        "",
        "| Task | Artifacts |",
        "| --- | --- |",
    ]
    for n, outcomes in enumerate(matching.values()):
        if n == MATCH_ROWS:
            out.append(f"| … and {count - MATCH_ROWS} more | |")
            break
        names = ", ".join(code(o.artifact) for o in outcomes)
        out.append(f"| {code(outcomes[0].task_label)} | {names} |")
    out += ["", "</details>", ""]
    return out


def _tallies(report: Report) -> list[str]:
    """check --run --repeat N: one line per task, its rollouts that matched a variant."""
    from silo_regress.render.tallies import tally_lines

    return [f"- {cell(line)}" for line in tally_lines(report)] + [""]


def _section(outcome: Outcome, report: Report) -> list[str]:
    summary = (
        f"<code>{cell(outcome.task_label)}</code> <code>{cell(outcome.artifact)}</code>: "
        f"<b>{outcome.verdict.value}</b>"
    )
    if report.repeat is not None:
        from silo_regress.render.tallies import outcome_rollouts

        summary += f" ({cell(outcome_rollouts(outcome, report))})"
    out = [f"<details><summary>{summary}</summary>", ""]
    if outcome.baseline_label:
        out.append(f"- baseline: {code(outcome.baseline_label)}")
    if outcome.run_path:
        out.append(f"- run: {code(outcome.run_path)}")
    pedigree = made_by(outcome)
    if pedigree:
        out.append(f"- {cell(pedigree)}")
    if outcome.detail:
        out.append(f"- {cell(outcome.detail)}")
    out.append("")
    if outcome.behaviour:
        out.append("Behaviour:")
        out.append("")
        out += [f"- {note_markdown(note)}" for note in outcome.behaviour]
        out.append("")
    diff = diff_lines(outcome, cap=MARKDOWN_DIFF_CAP)
    if diff:
        out += code_block(diff, "diff")
        out.append("")
    out += ["</details>", ""]
    return out
