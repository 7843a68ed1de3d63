"""Reports as text for people: check, record and status. Values in, strings out.

pygments is imported only when colour is on, so the plain hook path never pays
for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from silo_regress.judging.outcome import Outcome, Report, Verdict

if TYPE_CHECKING:
    # Types only: importing them would load the judge and the recorder (with their
    # dataclasses) into every `check`, which reads neither.
    from silo_regress.behaviour.notes import Note
    from silo_regress.recording.recorder import Recording
    from silo_regress.reports.overview import Status, StatusRow

DIFF_LINE_CAP = 200
_FAIL_WORD = {
    Verdict.CHANGED: "CHANGED",
    Verdict.MISSING_BASELINE: "MISSING BASELINE",
    Verdict.MISSING_RUN: "MISSING RUN",
    Verdict.INCOMPLETE_RUN: "INCOMPLETE RUN",
    Verdict.NOT_CANONICAL: "NOT CANONICAL",
    Verdict.VOLATILE: "VOLATILE",
    Verdict.FORMAT_VERSION: "FORMAT VERSION",
    Verdict.STALE_RUN: "STALE RUN",
    Verdict.MATCH: "match",
}
_SEGMENT_STYLE = {"same": (), "removed": ("red",), "added": ("green",)}
_ANSI = {"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m", "bold": "\x1b[1m"}


@dataclass(frozen=True)
class Palette:
    color: bool

    def paint(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        return "".join(_ANSI[s] for s in styles) + text + "\x1b[0m"

    def note(self, note: Note) -> str:
        """A behaviour note: a word diff's ``[-removed-]`` red, ``{+added+}`` green."""
        from silo_regress.render.wording import MARKERS, phrase

        return "".join(
            self.paint(MARKERS[s.kind][0] + s.text + MARKERS[s.kind][1], *_SEGMENT_STYLE[s.kind])
            for s in phrase(note)
        )


def task_label(outcome: Outcome) -> str:
    """``TASK-004 (crm-west)`` for an unqualified ref, ``crm-west/TASK-004`` otherwise."""
    if outcome.task.qualified or outcome.environment is None:
        return str(outcome.task)
    return f"{outcome.task} ({outcome.environment})"


# --- text ---------------------------------------------------------------------


def render_text(
    report: Report,
    *,
    color: bool = False,
    cap: int = DIFF_LINE_CAP,
    show_matches: bool = False,
    headline: str | None = None,
) -> str:
    """The check report: the summary first, then every failing artifact in agent terms."""
    palette = Palette(color)
    out: list[str] = [summary_line(report, palette=palette, headline=headline)]
    if report.repeat is not None:
        from silo_regress.render.tallies import tally_lines

        out += tally_lines(report)
    if report.stats is not None:
        from silo_regress.render.statslines import stats_lines

        out += [*stats_lines(report.stats, paint=palette.paint), ""]
    shared: set[str] = set()
    if any(not o.ok for o in report.outcomes):
        head, shared = summary_block(report, palette=palette)
        out += [*head, ""]
    for outcome in report.outcomes:
        if outcome.ok:
            if show_matches:
                out.append(
                    f"{palette.paint('ok', 'green')}  {task_label(outcome)}  {outcome.artifact}"
                )
            continue
        out.extend(
            render_outcome(
                outcome,
                palette=palette,
                cap=cap,
                shared=shared,
                rollouts=_rollouts(outcome, report),
            )
        )
        out.append("")
    hint = accept_hint(report)
    if hint:
        out.append(hint)
    return "\n".join(out) + "\n"


def summary_block(report: Report, *, palette: Palette) -> tuple[list[str], set[str]]:
    """Counts by direction, scores before -> after, one line per task, shared notes.

    Returns the lines and the texts of the notes shared by several tasks, which the
    details below then leave out.
    """
    from silo_regress.render.summary import (
        counts_phrase,
        scored_unit,
        scores_phrase,
        summarize_report,
    )

    summary = summarize_report(report)
    out = [f"by task: {counts_phrase(summary)}"]
    scores = scores_phrase(summary.totals, per=scored_unit(report))
    if scores:
        out.append(scores)
    width = max((len(line.kind) for line in summary.lines), default=0)
    for line in summary.lines:
        style = ("green",) if line.kind == "improvement" else ("red",)
        kind = palette.paint(f"{line.kind:<{width}}", *style)
        out.append(f"  {kind}  {line.label}: {line.what}")
    for note in summary.shared:
        out.append(f"  same in {', '.join(note.tasks)} ({note.artifact}): {note.text}")
    return out, {note.text for note in summary.shared}


def _rollouts(outcome: Outcome, report: Report) -> str:
    if report.repeat is None:
        return ""
    from silo_regress.render.tallies import outcome_rollouts

    return outcome_rollouts(outcome, report)


def render_outcome(
    outcome: Outcome,
    *,
    palette: Palette,
    cap: int = DIFF_LINE_CAP,
    shared: set[str] | frozenset[str] = frozenset(),
    rollouts: str = "",
) -> list[str]:
    """One failing artifact; ``rollouts`` names the repeats it stands for (--repeat)."""
    heading = _FAIL_WORD[outcome.verdict]
    context = [rollouts] if rollouts else []
    if outcome.run_name:
        context.append(f"run {outcome.run_name}")
    out = [
        palette.paint(f"{heading}  {task_label(outcome)}  {outcome.artifact}", "bold", "red")
        + (f"  ({', '.join(context)})" if context else "")
    ]
    if outcome.baseline_label:
        out.append(f"  baseline: {outcome.baseline_label}")
    if outcome.run_path:
        out.append(f"  run:      {outcome.run_path}")
    from silo_regress.render.excerpt import made_by  # only a failing outcome needs it

    pedigree = made_by(outcome)
    if pedigree:
        out.append(f"  {pedigree}")
    if outcome.detail:
        out.append(f"  {outcome.detail}")
    if outcome.behaviour:
        from silo_regress.render.wording import word

        own = [note for note in outcome.behaviour if word(note) not in shared]
        out.append("  behaviour:")
        out.extend(f"    - {palette.note(note)}" for note in own)
        if len(own) < len(outcome.behaviour):
            folded = len(outcome.behaviour) - len(own)
            out.append(f"    - and {folded} shared with other tasks (listed above)")
    if outcome.verdict is Verdict.CHANGED and outcome.baseline_text is not None:
        out.append("  diff (- baseline, + run):")
        diff = unified_diff(
            outcome.baseline_text,
            outcome.run_text or b"",
            before_name=outcome.baseline_label or "baseline",
            after_name=(outcome.run_path or "run") + " (canonical)",
            cap=cap,
        )
        out.extend("    " + line for line in highlight_diff(diff, color=palette.color))
    return out


def unified_diff(
    before: bytes, after: bytes, *, before_name: str, after_name: str, cap: int = DIFF_LINE_CAP
) -> list[str]:
    """A unified diff of two canonical files, capped at ``cap`` lines.

    Only the changed region goes through difflib (render/hunks.py), so a 50 MB
    artifact with one changed value is diffed in milliseconds.
    """
    from silo_regress.render.hunks import unified_diff as diff_around_changes

    return diff_around_changes(
        before, after, before_name=before_name, after_name=after_name, cap=cap
    )


def highlight_diff(lines: Sequence[str], *, color: bool) -> list[str]:
    if not color or not lines:
        return list(lines)
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import DiffLexer

    text: str = highlight("\n".join(lines) + "\n", DiffLexer(), TerminalFormatter())
    return text.rstrip("\n").split("\n")


def summary_line(report: Report, *, palette: Palette, headline: str | None = None) -> str:
    counts = report.summary()
    tasks = len({(o.task, o.environment) for o in report.outcomes})
    where = "" if report.source.is_working_tree else f" (baselines from {report.source.label})"
    if not report.outcomes:
        if report.stats is not None:
            verdict = "failed" if report.stats.failed else "passed"
            count = len(report.stats.tasks)
            text = f"stats gate {verdict}: {count} task{'s' * (count != 1)} judged{where}"
            return palette.paint(text, "red" if report.stats.failed else "green")
        return headline or f"no baselines to check{where}"
    parts = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    artifacts = len(report.outcomes)
    scope = f"{artifacts} artifact{'s' * (artifacts != 1)} of {tasks} task{'s' * (tasks != 1)}"
    if report.repeat is not None:
        from silo_regress.render.excerpt import artifacts_phrase, rollouts_each

        scope = f"{artifacts_phrase(report)} of {tasks} task{'s' * (tasks != 1)}"
        scope += rollouts_each(report)
    text = f"{parts} ({scope}){where}"
    if headline:
        text = f"{headline}: {text}"
    return palette.paint(text, "green" if report.ok else "red")


def accept_hint(report: Report) -> str:
    """The closing advice (render/summary.py), one line per step."""
    if all(o.verdict is not Verdict.CHANGED for o in report.outcomes):
        return ""  # nothing to accept: a passing hook never loads the advice
    from silo_regress.render.advice import advise

    return "\n".join(
        f"{step.why}: {' && '.join(step.commands)}"
        if step.chained
        else f"{step.why}:" + "".join(f"\n  {command}" for command in step.commands)
        for step in advise(report)
    )


# --- record, status -----------------------------------------------------------


def render_recordings(recordings: Iterable[Recording], *, color: bool = False) -> str:
    from silo_regress.recording.recorder import FileState

    palette = Palette(color)
    style = {FileState.NEW: ("green",), FileState.CHANGED: ("yellow",), FileState.UNCHANGED: ()}
    out = []
    for recording in recordings:
        out.append(
            f"{recording.ref}: from run {recording.run.name} "
            f"({recording.run.environment}, started {recording.run.started_at})"
        )
        if recording.passed_over:
            newer = ", ".join(recording.passed_over)
            out.append(
                palette.paint(
                    f"  note: passed over newer run(s) without a complete result.json: {newer}",
                    "yellow",
                )
            )
        for file in recording.files:
            out.append(
                f"  {palette.paint(f'{file.state.value:<9}', *style[file.state])} {file.path}"
            )
        out.extend(f"  {palette.paint('removed  ', 'yellow')} {path}" for path in recording.removed)
    return "\n".join(out) + "\n"


def format_age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(seconds, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return f"{int(seconds)}s ago"


def _baseline_names(row: StatusRow) -> str:
    """``result,state-diff``; an artifact with accepted variants shows how many: ``result(3)``."""
    counts = row.variants or (1,) * len(row.baselines)
    return ",".join(
        a.removesuffix(".json") + (f"({n})" if n > 1 else "")
        for a, n in zip(row.baselines, counts, strict=True)
    )


def render_status(status: Status, *, color: bool = False) -> str:
    palette = Palette(color)
    header = ("TASK", "ENVIRONMENT", "BASELINES", "NEWEST RUN", "AGE", "VERDICT", "GIT")
    rows = []
    for row in status.rows:
        verdict = row.verdict.value if row.verdict else "-"
        if row.note:
            verdict = f"{verdict} ({row.note})" if row.verdict else row.note
        if row.gate:
            tally = f"tally {row.tally[0]}/{row.tally[1]}" if row.tally else "no tally"
            # under "stats" the bytes decide nothing: name the tally instead
            verdict = f"stats gate, {tally}" if row.gate == "stats" else f"{verdict} ({tally})"
        rows.append(
            (
                str(row.task),
                row.environment or "-",
                _baseline_names(row) or "-",
                row.newest_run or "-",
                format_age(row.run_age_seconds),
                verdict,
                row.git_state or "-",
            )
        )
    show_git = any(r[6] != "-" for r in rows)
    columns = header if show_git else header[:-1]
    table = [columns, *[r[: len(columns)] for r in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    out = []
    for n, r in enumerate(table):
        line = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip()
        if n and r[5] not in ("match",) and not r[5].startswith("stats gate, tally") and color:
            line = palette.paint(line, "yellow" if "untracked" in r[5] else "red")
        out.append(line)
    if not status.rows:
        out.append("(no baselines and no runs)")
    counts = status.report.summary()
    untracked = sum(1 for r in status.rows if r.note == "untracked")
    orphaned = sum(1 for r in status.rows if r.note == "orphaned")
    refused = sum(1 for r in status.rows if r.note == "refused")
    tail = ", ".join(f"{n} {v}" for v, n in counts.items()) or "no baselines"
    loose = f"{untracked} untracked, {orphaned} orphaned" + (f", {refused} refused" * bool(refused))
    out.append("")
    out.append(f"{len(status.rows)} tasks: {tail}; {loose}")
    return "\n".join(out) + "\n"
