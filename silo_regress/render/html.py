"""The check report as one self-contained HTML page, laid out for review.

Counts by direction and the pass-rate and reward deltas first; then one section
per kind of change (regressions, improvements, mixed, drift, other verdicts), a
card per task with its behaviour notes and a side-by-side diff highlighted by
pygments; the matching tasks folded into one count that expands. Styles are
inline and nothing is loaded from anywhere: the page works as a CI artifact
opened from disk, offline. Dark mode follows the reader's colour scheme.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from silo_regress.behaviour.notes import IdsChanged, Note, SegmentKind
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.render.chart import CHART_CSS, chart_html, chart_variables
from silo_regress.render.excerpt import (
    change_lines,
    headline,
    made_by,
    summary_sentence,
)
from silo_regress.render.hunks import Row, Span, cut_note, intraline, line_diff, side_by_side
from silo_regress.render.summary import (
    Summary,
    TaskLine,
    counts_phrase,
    scored_unit,
    scores_phrase,
    summarize_report,
)
from silo_regress.render.wording import ID_CAP, one_line, phrase

if TYPE_CHECKING:
    from silo_regress.reports.history import ScoreHistory

ROW_CAP = 400

# (section id, heading, the TaskLine kinds it holds); "other" takes every other kind.
SECTIONS = (
    ("regressions", "Regressions", ("regression",)),
    ("improvements", "Improvements", ("improvement",)),
    ("mixed", "Mixed", ("mixed",)),
    ("drift", "Drift", ("drift",)),
    ("other", "Other verdicts", ()),
)

# Verdict colours as (foreground, background) per scheme; tests read them from here.
COLOURS = {
    "light": {
        "regression": ("#a40e26", "#ffebe9"),
        "improvement": ("#116329", "#dafbe1"),
        "mixed": ("#7d4e00", "#fff8c5"),
        "drift": ("#0a3069", "#ddf4ff"),
        "other": ("#762c00", "#fff1e5"),
        "match": ("#116329", "#dafbe1"),
    },
    "dark": {
        "regression": ("#ffa198", "#3d1214"),
        "improvement": ("#7ee787", "#0f2d1a"),
        "mixed": ("#e3b341", "#2e2408"),
        "drift": ("#a5d6ff", "#0c2d4a"),
        "other": ("#ffa657", "#33200d"),
        "match": ("#7ee787", "#0f2d1a"),
    },
}


def _variables(scheme: str) -> str:
    base = {
        "light": "--fg: #1f2328; --bg: #ffffff; --muted: #57606a; --line: #d0d7de;"
        " --panel: #f6f8fa; --link: #0550ae; --del: #fff0ee; --add: #e6ffec;"
        " --del-strong: #ffc1bc; --add-strong: #aceebb;",
        "dark": "--fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d;"
        " --panel: #161b22; --link: #79c0ff; --del: #301014; --add: #0f2a18;"
        " --del-strong: #6e2128; --add-strong: #1f5c32;",
    }[scheme]
    kinds = " ".join(
        f"--{kind}-fg: {fg}; --{kind}-bg: {bg};" for kind, (fg, bg) in COLOURS[scheme].items()
    )
    return base + " " + kinds + " " + chart_variables(scheme)


_CSS = (
    ":root { color-scheme: light dark; " + _variables("light") + " }\n"
    "@media (prefers-color-scheme: dark) { :root { "
    + _variables("dark")
    + " } }\n"
    + """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  padding: 1.5em 2em; max-width: 1400px; box-sizing: border-box;
  color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, summary:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
h1 { font-size: 1.6em; margin: 0 0 .3em; }
h2 { font-size: 1.3em; margin: 1.8em 0 .5em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.08em; margin: 0 0 .4em; overflow-wrap: anywhere; }
h4 { font-size: 1em; margin: 1em 0 .3em; overflow-wrap: anywhere; }
code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
p.verdicts { font-size: 1.05em; margin: .2em 0; }
p.headline { font-size: 1.1em; font-weight: 600; margin: .2em 0 .4em; }
p.scores { margin: .3em 0 1em; color: var(--fg); }
ul.counts { list-style: none; padding: 0; margin: .6em 0; display: flex; flex-wrap: wrap;
  gap: .5em; }
.badge { display: inline-block; padding: .15em .6em; border-radius: 1em; font-weight: 600;
  text-decoration: none; white-space: nowrap; }
""".lstrip("\n")
    + "".join(
        f".k-{kind}, .k-{kind} a, a.k-{kind} {{ color: var(--{kind}-fg);"
        f" background: var(--{kind}-bg); }}\n"
        for kind in COLOURS["light"]
    )
    + """
table.summary { border-collapse: collapse; margin: .6em 0; width: 100%; }
table.summary th, table.summary td { border: 1px solid var(--line); padding: 4px 8px;
  text-align: left; vertical-align: top; overflow-wrap: break-word; }
table.summary th { background: var(--panel); }
span.whole { white-space: nowrap; }
article.card { border: 1px solid var(--line); border-left: 6px solid var(--line);
  border-radius: 6px; padding: .8em 1em; margin: 1em 0; background: var(--bg); }
article.card.k-regression { border-left-color: var(--regression-fg); }
article.card.k-improvement { border-left-color: var(--improvement-fg); }
article.card.k-mixed { border-left-color: var(--mixed-fg); }
article.card.k-drift { border-left-color: var(--drift-fg); }
article.card.k-other { border-left-color: var(--other-fg); }
article.card { color: var(--fg); background: var(--bg); }
ul.behaviour { padding-left: 1.3em; margin: .3em 0; }
ul.behaviour li { margin: .15em 0; overflow-wrap: anywhere; }
p.paths { color: var(--muted); margin: .1em 0; overflow-wrap: anywhere; }
del.removed { background: var(--del-strong); color: var(--fg); }
ins.added { background: var(--add-strong); color: var(--fg); text-decoration: none; }
div.scroll { overflow-x: auto; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; margin: .5em 0; }
table.diff th { background: var(--panel); border: 1px solid var(--line); padding: 4px;
  text-align: left; font-weight: normal; overflow-wrap: anywhere; }
table.diff td { padding: 0 6px; vertical-align: top; white-space: pre-wrap;
  overflow-wrap: anywhere; }
table.diff col.num { width: 3.5em; }
table.diff td.num { color: var(--muted); text-align: right; user-select: none; }
table.diff tr.gap td { background: var(--panel); height: .8em; }
td.del { background: var(--del); } td.add { background: var(--add); }
td.num.del { background: var(--del-strong); } td.num.add { background: var(--add-strong); }
table.diff td.num.del, table.diff td.num.add { color: var(--fg); }
span.intra { border-radius: 2px; font-weight: 600; }
td.del span.intra { background: var(--del-strong); text-decoration: line-through; }
td.add span.intra { background: var(--add-strong); }
p.note { color: var(--muted); font-style: italic; }
pre.changes { background: var(--panel); padding: .6em; overflow-x: auto; }
div.step pre { background: var(--panel); padding: .6em; overflow-x: auto; margin-top: 0; }
details.matches summary { cursor: pointer; font-weight: 600; padding: .3em 0; }
@media (max-width: 700px) {
  body { padding: 1em .8em; font-size: 14px; }
  table.diff { min-width: 620px; }
  article.card { padding: .6em .7em; }
}
"""
    # The run's changed words take the card's direction: red for a regression, green
    # for an improvement, the neutral drift colour for drift.
    + "".join(
        f"article.card.k-{kind} td.add span.intra {{ color: var(--{kind}-fg);"
        f" background: var(--{kind}-bg); outline: 1px solid var(--{kind}-fg); }}\n"
        for kind in ("regression", "improvement", "mixed", "drift")
    )
    + CHART_CSS.lstrip("\n")
)


def _style_defs() -> str:
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    # The diff cells carry their own backgrounds; pygments' would hide them.
    drop = ("background", ".hll")
    keep = [
        line for part in (dark,) for line in part.splitlines() if not any(d in line for d in drop)
    ]
    light_lines = [line for line in light.splitlines() if not any(d in line for d in drop)]
    return (
        "\n".join(light_lines)
        + "\n@media (prefers-color-scheme: dark) {\n"
        + "\n".join(keep)
        + "\n}\n"
    )


@functools.cache
def _pygments() -> tuple[Any, Any]:
    """One lexer and formatter for every diff: a new HtmlFormatter builds its whole
    style sheet, which for 50 changed tasks was a tenth of a second."""
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import JsonLexer

    return JsonLexer(), HtmlFormatter(nowrap=True)


def _highlight(lines: list[str]) -> list[str]:
    """Each line of JSON as highlighted HTML (spans balanced per line)."""
    if not lines:
        return []
    from pygments import highlight

    lexer, formatter = _pygments()
    html: str = highlight("\n".join(lines) + "\n", lexer, formatter)
    out = html.split("\n")
    if len(out) < len(lines):  # never expected; fall back to plain escaped text
        return [escape(line) for line in lines]
    return out[: len(lines)]


def render_html(
    report: Report, *, title: str = "silo-regress check", history: ScoreHistory | None = None
) -> str:
    """The page; ``history`` (from git, when there is one) adds the pass-rate chart."""
    summary = summarize_report(report)
    where = "" if report.source.is_working_tree else f" (baselines from {report.source.label})"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        "<style>" + _CSS + _style_defs() + _stats_css(report) + "</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{escape(title)}</h1>",
        *_headline(report),
    ]
    if report.outcomes:
        out.append(
            f'<p class="verdicts" id="verdicts">{escape(counts_phrase(summary) + where)};'
            f" {escape(summary_sentence(report))}</p>"
        )
    elif where:
        out.append(f'<p class="verdicts" id="verdicts">{escape(where.strip(" ()"))}</p>')
    scores = scores_phrase(summary.totals, per=scored_unit(report))
    if scores is not None:
        out.append(f'<p class="scores" id="scores">{escape(scores)}</p>')
    if report.repeat is not None:
        from silo_regress.render.tallies import tally_lines

        out.append('<ul class="tallies" id="tallies">')
        out += [f"<li>{escape(line)}</li>" for line in tally_lines(report)]
        out.append("</ul>")
    out += _counts(summary)
    if report.stats is not None:
        from silo_regress.render.statshtml import stats_html

        out += stats_html(report.stats)
    if history is not None:
        out += chart_html(history)
    out.append("</header>")
    out.append("<main>")
    grouped = _grouped(summary)
    if summary.lines:
        out += _index(grouped)
    card = 0
    for section, heading, lines in grouped:
        out.append(f'<section id="{section}" class="group">')
        out.append(f"<h2>{escape(heading)} ({len(lines)})</h2>")
        for line in lines:
            out += _card(card, line)
            card += 1
        out.append("</section>")
    out += _next_steps(report)
    if report.outcomes or report.stats is None:  # a stats-only check has no artifacts
        out += _matches(report)
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def _stats_css(report: Report) -> str:
    if report.stats is None:
        return ""
    from silo_regress.render.statshtml import STATS_CSS

    return STATS_CSS


def _headline(report: Report) -> list[str]:
    """The badge and what failed (render/summary.py's headline), first on the page."""
    from silo_regress.render.summary import headline

    kind, word = ("match", "passed") if report.ok else ("regression", "failed")
    said = headline(report).removeprefix(f"{word}: ")
    return [
        f'<p class="headline" id="headline"><span class="badge k-{kind}">{word}</span> '
        f"{escape(said)}</p>"
    ]


def _next_steps(report: Report) -> list[str]:
    """The closing advice (render/advice.py), a block per step: why, then the lines to
    run or paste. The verdict each answers is on the block, for a reader's script."""
    if report.ok:
        return []
    from silo_regress.render.advice import advise, step_body

    steps = advise(report)
    if not steps:
        return []
    out = ['<section id="next-steps" class="group">', "<h2>Next steps</h2>"]
    for step in steps:
        verdict = step.kind.value if step.kind is not None else "skip"
        kind = "config" if step.lines else "commands"
        why = step.why[:1].upper() + step.why[1:]
        body = "\n".join(escape(line) for line in step_body(step))
        out.append(f'<div class="step" data-verdict="{verdict}">')
        if body:
            out += [f"<p>{escape(why)}:</p>", f'<pre class="{kind}"><code>{body}</code></pre>']
        else:  # nothing to run as printed: the why says what to do by hand
            out.append(f"<p>{escape(why)}.</p>")
        out.append("</div>")
    out.append("</section>")
    return out


def _kind_class(kind: str) -> str:
    return kind if kind in COLOURS["light"] else "other"


def _grouped(summary: Summary) -> list[tuple[str, str, list[TaskLine]]]:
    claimed = {kind for _, _, kinds in SECTIONS for kind in kinds}
    out = []
    for section, heading, kinds in SECTIONS:
        lines = [
            line
            for line in summary.lines
            if (line.kind in kinds if kinds else line.kind not in claimed)
        ]
        if lines:
            out.append((section, heading, lines))
    return out


def _counts(summary: Summary) -> list[str]:
    out = ['<ul class="counts" id="counts">']
    for kind, n in summary.counts:
        target = "matches" if kind == "match" else _section_of(kind)
        out.append(
            f'<li><a class="badge k-{_kind_class(kind)}" href="#{target}">'
            f"{n} {escape(kind)}</a></li>"
        )
    out.append("</ul>")
    return out


def _section_of(kind: str) -> str:
    for section, _, kinds in SECTIONS:
        if kind in kinds:
            return section
    return "other"


def _index(grouped: list[tuple[str, str, list[TaskLine]]]) -> list[str]:
    out = [
        '<div class="scroll"><table class="summary" id="summary">',
        "<thead><tr><th>Task</th><th>Kind</th><th>What changed</th></tr></thead>",
        "<tbody>",
    ]
    card = 0
    for _, _, lines in grouped:
        for line in lines:
            what = one_line(_outcome_brief(o) for o in line.outcomes)
            kind = _kind_class(line.kind)
            out.append(
                f'<tr><td><a href="#{_card_id(card)}"><code>{_unbroken(line.label)}</code></a></td>'
                f'<td><span class="badge k-{kind}">{escape(line.kind)}</span></td>'
                f"<td>{what}</td></tr>"
            )
            card += 1
    out += ["</tbody>", "</table></div>"]
    return out


def _unbroken(label: str) -> str:
    """A task label that wraps only between its words: a narrow column would
    otherwise break ``TASK-003`` at its hyphen."""
    return " ".join(f'<span class="whole">{escape(word)}</span>' for word in label.split(" "))


def _outcome_brief(outcome: Outcome) -> str:
    if outcome.verdict is Verdict.CHANGED:
        return f"<code>{escape(outcome.artifact)}</code>: " + one_line(
            note_html(note) for note in outcome.behaviour
        )
    return f"<code>{escape(outcome.artifact)}</code>: {escape(headline(outcome))}"


def _card_id(n: int) -> str:
    return f"task-{n}"


def _card(n: int, line: TaskLine) -> list[str]:
    kind = _kind_class(line.kind)
    out = [
        f'<article class="card k-{kind}" id="{_card_id(n)}">',
        f'<h3><code>{escape(line.label)}</code> <span class="badge k-{kind}">'
        f"{escape(line.kind)}</span></h3>",
    ]
    for outcome in line.outcomes:
        out += _artifact(outcome)
    out.append("</article>")
    return out


def _artifact(outcome: Outcome) -> list[str]:
    out = [
        f"<h4><code>{escape(outcome.artifact)}</code>: {escape(outcome.verdict.value)}</h4>",
    ]
    paths = []
    if outcome.baseline_label:
        paths.append(f"baseline <code>{escape(outcome.baseline_label)}</code>")
    if outcome.run_path:
        paths.append(f"run <code>{escape(outcome.run_path)}</code>")
    pedigree = made_by(outcome)
    if pedigree:
        paths.append(escape(pedigree))
    if paths:
        out.append(f'<p class="paths">{", ".join(paths)}</p>')
    if outcome.detail:
        out.append(f"<p>{escape(outcome.detail)}</p>")
    if outcome.behaviour:
        out.append('<ul class="behaviour">')
        out += [f"<li>{note_html(note)}</li>" for note in outcome.behaviour]
        out.append("</ul>")
    if outcome.baseline_text is not None and outcome.run_text is not None:
        out += _diff_table(outcome)
    elif outcome.changes:
        out.append('<pre class="changes">')
        out += [escape(line) for line in change_lines(outcome)]
        out.append("</pre>")
    return out


def _matches(report: Report) -> list[str]:
    failing = {o.task_label for o in report.outcomes if not o.ok}
    matching = [o for o in report.outcomes if o.ok and o.task_label not in failing]
    tasks = list(dict.fromkeys(o.task_label for o in matching))
    out = ['<section id="matches" class="group">', f"<h2>Matches ({len(tasks)})</h2>"]
    if not tasks:
        out += ["<p>No task matches all its baselines.</p>", "</section>"]
        return out
    out += [
        '<details class="matches">',
        f"<summary>{len(tasks)} task{'s' * (len(tasks) != 1)} match"
        f" ({len(matching)} artifact{'s' * (len(matching) != 1)}); show them</summary>",
        '<table class="summary" id="match-table">',
        "<thead><tr><th>Task</th><th>Artifact</th><th>Run</th></tr></thead>",
        "<tbody>",
    ]
    out += [
        f"<tr><td><code>{escape(o.task_label)}</code></td>"
        f"<td><code>{escape(o.artifact)}</code></td>"
        f"<td><code>{escape(o.run_name or '')}</code></td></tr>"
        for o in matching
    ]
    out += ["</tbody>", "</table>", "</details>", "</section>"]
    return out


def _capped(note: Note) -> tuple[list[Note], list[int]]:
    """A note with long id lists as clauses naming ``ID_CAP`` ids, and how many each left out."""
    if not isinstance(note, IdsChanged) or len(note.gained) + len(note.lost) <= ID_CAP:
        return [note], [0]
    parts: list[Note] = []
    more: list[int] = []
    if note.lost:
        parts.append(dataclasses.replace(note, gained=(), lost=note.lost[:ID_CAP]))
        more.append(max(0, len(note.lost) - ID_CAP))
    if note.gained:
        parts.append(dataclasses.replace(note, gained=note.gained[:ID_CAP], lost=()))
        more.append(max(0, len(note.gained) - ID_CAP))
    return parts, more


def note_html(note: Note) -> str:
    """A behaviour note as HTML: a word diff's words as ``<del>`` and ``<ins>``, long id
    lists cut to a few ids and "and N more"."""
    parts, more = _capped(note)
    clauses = []
    for i, (part, left_out) in enumerate(zip(parts, more, strict=True)):
        text = _segments_html(part)
        if i and isinstance(note, IdsChanged):
            text = text.removeprefix(escape(f"{note.collection}: "))
        if left_out:
            text += f" and {left_out} more"
        clauses.append(text)
    return "; ".join(clauses)


def _segments_html(note: Note) -> str:
    out = []
    for segment in phrase(note, marked=False):
        text = escape(segment.text)
        if segment.kind is SegmentKind.REMOVED:
            text = f'<del class="removed">{text}</del>'
        elif segment.kind is SegmentKind.ADDED:
            text = f'<ins class="added">{text}</ins>'
        out.append(text)
    return "".join(out)


def _diff_table(outcome: Outcome) -> list[str]:
    before_name = outcome.baseline_label or "baseline"
    after_name = (outcome.run_path or "run") + " (canonical)"
    diff = line_diff(outcome.baseline_text or b"", outcome.run_text or b"")
    rows, left_out = side_by_side(diff, cap=ROW_CAP)
    left = _highlight([r.before for r in rows if r.before_number is not None])
    right = _highlight([r.after for r in rows if r.after_number is not None])
    out = [
        '<div class="scroll">',
        '<table class="diff hl">',
        '<colgroup><col class="num"><col><col class="num"><col></colgroup>',
        f'<thead><tr><th colspan="2">{escape(before_name)}</th>'
        f'<th colspan="2">{escape(after_name)}</th></tr></thead>',
        "<tbody>",
    ]
    li = ri = 0
    for row in rows:
        if row.tag == "gap":
            out.append('<tr class="gap"><td colspan="4"></td></tr>')
            continue
        left_html = ""
        if row.before_number is not None:
            left_html, li = left[li], li + 1
        right_html = ""
        if row.after_number is not None:
            right_html, ri = right[ri], ri + 1
        if row.tag == "replace" and row.before_number and row.after_number:
            spans = intraline(row.before, row.after)
            if spans is not None:  # the changed words marked, in place of JSON colours
                left_html, right_html = _marked(spans[0]), _marked(spans[1])
        out.append(f'<tr class="{row.tag}">' + _cells(row, left_html, right_html) + "</tr>")
    out += ["</tbody>", "</table>", "</div>"]
    if left_out:
        out.append(
            f'<p class="note">{left_out} more diff rows not shown; the full files are '
            f"{escape(before_name)} and {escape(after_name)}</p>"
        )
    if diff.cut is not None:
        note = cut_note(diff.cut, before_name=before_name, after_name=after_name)
        out.append(f'<p class="note">{escape(note)}</p>')
    return out


def _marked(spans: Sequence[Span]) -> str:
    return "".join(
        f'<span class="intra">{escape(s.text)}</span>' if s.changed else escape(s.text)
        for s in spans
    )


def _cells(row: Row, left_html: str, right_html: str) -> str:
    left_css = "del" if row.tag in {"replace", "delete"} and row.before_number else ""
    right_css = "add" if row.tag in {"replace", "insert"} and row.after_number else ""
    return (
        f'<td class="num {left_css}">{row.before_number or ""}</td>'
        f'<td class="code {left_css}">{left_html}</td>'
        f'<td class="num {right_css}">{row.after_number or ""}</td>'
        f'<td class="code {right_css}">{right_html}</td>'
    )
