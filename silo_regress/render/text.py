"""Reports as text for people: check, record and status. Values in, strings out.

pygments is imported only when colour is on, so the plain hook path never pays
for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from silo_regress.canon.visible import one_line, visible
from silo_regress.judging.outcome import Outcome, Report, Verdict

if TYPE_CHECKING:
    # Types only: importing them would load the judge and the recorder (with their
    # dataclasses) into every `check`, which reads neither.
    from silo_regress.behaviour.notes import Note
    from silo_regress.recording.recorder import Recording
    from silo_regress.render.hunks import Span
    from silo_regress.reports.overview import Status, StatusRow
    from silo_regress.stats.verdicts import StatsJudgement

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
_ANSI = {
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "cyan": "\x1b[36m",
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
    "underline": "\x1b[4m",
    "reverse": "\x1b[7m",
}
# An outcome's colour by its direction: a regression red, an improvement green, both
# at once yellow, the same scores with other behaviour (drift) a neutral cyan.
DIRECTION_COLOUR = {
    "regression": "red",
    "improvement": "green",
    "mixed": "yellow",
    "drift": "cyan",
}


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
            self.paint(
                MARKERS[s.kind][0] + visible(s.text) + MARKERS[s.kind][1], *_SEGMENT_STYLE[s.kind]
            )
            for s in phrase(note)
        )


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
                    f"{palette.paint('ok', 'green')}  {outcome.task_label}  {outcome.artifact}"
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
    if report.uncovered:
        from silo_regress.render.summary import uncovered_lines

        out += uncovered_lines(report)
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
        out.append(f"  {kind}  {line.label}: {one_line(line.what)}")
    for note in summary.shared:
        tasks = ", ".join(note.tasks)
        out.append(f"  same in {tasks} ({note.artifact}): {one_line(note.text)}")
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
        context.append(f"run {visible(outcome.run_name)}")
    out = [
        palette.paint(
            f"{heading}  {outcome.task_label}  {outcome.artifact}", "bold", _colour_of(outcome)
        )
        + (f"  ({', '.join(context)})" if context else "")
    ]
    if outcome.baseline_label:
        out.append(f"  baseline: {visible(outcome.baseline_label)}")
    if outcome.run_path:
        out.append(f"  run:      {visible(outcome.run_path)}")
    from silo_regress.render.excerpt import made_by  # only a failing outcome needs it

    pedigree = made_by(outcome)
    if pedigree:
        out.append(f"  {one_line(pedigree)}")
    if outcome.detail:
        out.append(f"  {one_line(outcome.detail)}")
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
            before_name=visible(outcome.baseline_label or "baseline"),
            after_name=visible(outcome.run_path or "run") + " (canonical)",
            cap=cap,
        )
        colour = _colour_of(outcome)
        out.extend("    " + line for line in highlight_diff(diff, color=palette.color, run=colour))
    return out


def _colour_of(outcome: Outcome) -> str:
    """The direction's colour for a changed result; red for any other failure."""
    if outcome.direction is None:
        return "red"
    return DIRECTION_COLOUR.get(outcome.direction.value, "red")


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


def highlight_diff(lines: Sequence[str], *, color: bool, run: str = "green") -> list[str]:
    """A unified diff for a terminal: headers bold, hunk ranges cyan, the baseline's
    lines dim with their changed words underlined, the run's lines in ``run`` (the
    direction's colour) with their changed words in reverse video. A line whose
    partner shares too little is marked whole. Without colour, the lines as given."""
    if not color or not lines:
        return list(lines)
    from silo_regress.render.hunks import intraline, paired

    out: list[str] = []
    n = 0
    while n < len(lines):
        line = lines[n]
        if line.startswith(("---", "+++")) and n + 1 < len(lines) and _is_header(lines, n):
            out.append(_ANSI["bold"] + line + _RESET)
            n += 1
            continue
        if line.startswith("@@"):
            out.append(_ANSI["cyan"] + line + _RESET)
            n += 1
            continue
        if not line.startswith(("-", "+")):
            out.append(line)
            n += 1
            continue
        removed = _run_of(lines, n, "-")
        added = _run_of(lines, n + len(removed), "+")
        left = [_whole(text[1:], "-", "dim") for text in removed]
        right = [_whole(text[1:], "+", run) for text in added]
        for i, j in paired([t[1:] for t in removed], [t[1:] for t in added]):
            spans = intraline(removed[i][1:], added[j][1:])
            if spans is not None:
                left[i] = _spans("-", spans[0], ("dim",), ("underline",))
                right[j] = _spans("+", spans[1], (run,), (run, "reverse"))
        out += left + right
        n += len(removed) + len(added)
    return out


_RESET = "\x1b[0m"


def _is_header(lines: Sequence[str], n: int) -> bool:
    """``---``/``+++`` names the files only before the first hunk (a ``---`` later is a
    removed line that starts with two dashes)."""
    return not any(line.startswith("@@") for line in lines[:n])


def _run_of(lines: Sequence[str], start: int, mark: str) -> list[str]:
    end = start
    while end < len(lines) and lines[end].startswith(mark):
        if mark == "+" and lines[end].startswith("+++") and _is_header(lines, end):
            break
        end += 1
    return list(lines[start:end])


def _whole(text: str, mark: str, colour: str) -> str:
    return _ANSI[colour] + mark + text + _RESET


def _spans(
    mark: str, spans: Sequence[Span], plain: tuple[str, ...], marked: tuple[str, ...]
) -> str:
    base = "".join(_ANSI[s] for s in plain)
    strong = "".join(_ANSI[s] for s in marked)
    body = "".join(
        (strong + span.text + _RESET + base) if span.changed else span.text for span in spans
    )
    return base + mark + body + _RESET


def stats_headline(stats: StatsJudgement) -> str:
    """What the stats gate came to, in words that never say "passed" for what it did not
    judge: failed, not decided (no test could judge any task), or passed for the tasks
    it decided, naming how many it did not."""
    count = len(stats.tasks)
    tasks = f"{count} task{'s' * (count != 1)}"
    if stats.policy.judged_in_ci:
        verdict = "failed" if stats.failed else "tallies present"
        return f"stats gate {verdict}: {tasks}; pass rates are judged in CI (check --run)"
    if stats.failed:
        return f"stats gate failed: {tasks} judged"
    if stats.not_decided:
        return f"stats gate not decided: no test could judge any of {tasks}"
    undecided = len(stats.undecided)
    if undecided:
        return f"stats gate passed for {count - undecided} of {tasks}; {undecided} not decided"
    return f"stats gate passed: {tasks} judged"


def summary_line(report: Report, *, palette: Palette, headline: str | None = None) -> str:
    counts = report.summary()
    tasks = len({(o.task, o.environment) for o in report.outcomes})
    where = (
        "" if report.source.is_working_tree else f" (baselines from {visible(report.source.label)})"
    )
    if not report.outcomes:
        if report.stats is not None:
            return palette.paint(
                stats_headline(report.stats) + where, "green" if report.ok else "red"
            )
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
    """The closing advice (render/advice.py), one line per step; a config step's lines
    follow it, indented, ready to paste."""
    if report.ok:
        return ""  # nothing to do: a passing hook never loads the advice
    from silo_regress.render.advice import advise

    out = []
    for step in advise(report):
        if step.lines:
            out.append(f"{step.why}:" + "".join(f"\n  {line}" for line in step.lines))
        elif not step.commands:  # nothing a shell could run as printed: the why says it
            out.append(step.why)
        elif step.chained:
            out.append(f"{step.why}: {' && '.join(step.commands)}")
        else:
            out.append(f"{step.why}:" + "".join(f"\n  {command}" for command in step.commands))
    return "\n".join(out)


# --- record, status -----------------------------------------------------------


def render_recordings(recordings: Iterable[Recording], *, color: bool = False) -> str:
    from silo_regress.recording.recorder import FileState

    palette = Palette(color)
    style = {FileState.NEW: ("green",), FileState.CHANGED: ("yellow",), FileState.UNCHANGED: ()}
    out = []
    for recording in recordings:
        out.append(
            f"{recording.ref}: from run {visible(recording.run.name)} "
            f"({recording.run.environment}, started {recording.run.started_at})"
        )
        if recording.passed_over:
            newer = ", ".join(map(visible, recording.passed_over))
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
    """``result.json, state-diff.json``; an artifact with accepted variants says how many:
    ``result.json: 3 variants``."""
    counts = row.variants or (1,) * len(row.baselines)
    return ", ".join(
        a + (f": {n} variants" if n > 1 else "") for a, n in zip(row.baselines, counts, strict=True)
    )


def render_status(status: Status, *, color: bool = False) -> str:
    from silo_regress.reports.overview import RowNote

    palette = Palette(color)
    header = ("TASK", "ENVIRONMENT", "BASELINES", "NEWEST RUN", "AGE", "AGENT", "VERDICT", "GIT")
    rows = []
    for row in status.rows:
        verdict = row.verdict.value if row.verdict else "-"
        if row.note:
            verdict = f"{verdict} ({row.note})" if row.verdict else row.note.value
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
                row.agent or "-",
                verdict,
                row.git_state or "-",
            )
        )
    # Columns nobody has a value in are left out: no git, or no run made by silo-regress.
    shown = [n for n in range(len(header)) if n not in (5, 7) or any(r[n] != "-" for r in rows)]
    table = [tuple(r[n] for n in shown) for r in [header, *rows]]
    verdict_at = shown.index(6)
    widths = [max(len(r[i]) for r in table) for i in range(len(shown))]
    out = []
    for n, r in enumerate(table):
        line = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip()
        verdict_shown = r[verdict_at]
        if (
            n
            and verdict_shown != "match"
            and not verdict_shown.startswith("stats gate, tally")
            and color
        ):
            no_baseline = verdict_shown == RowNote.NO_BASELINE.value
            line = palette.paint(line, "yellow" if no_baseline else "red")
        out.append(line)
    if not status.rows:
        out.append("(no baselines and no runs)")
    tail = ", ".join(f"{n} {kind}" for kind, n in status.counts()) or "nothing to show"
    out.append("")
    count = len(status.rows)
    # Discarded runs are runs, not tasks: a count of their own, apart from the tasks'.
    gone = len(status.discarded)
    aside = f"; {gone} discarded run{'s' * (gone != 1)}" if gone else ""
    out.append(f"{count} task{'s' * (count != 1)}: {tail}{aside}")
    if status.discarded:
        out.append("")
        out.append("discarded (not judged; `silo-regress restore RUN_ID` puts one back):")
        out.extend(
            f"  {d.name}  {d.task or '(no task: run.json unreadable)'}" for d in status.discarded
        )
    return "\n".join(out) + "\n"
