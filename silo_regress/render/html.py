"""The check report as one self-contained HTML page, for people who would rather look.

A summary table of every task and artifact, then per failing artifact its
behaviour summary and a side-by-side diff highlighted by pygments. Styles are
inline and nothing is loaded from anywhere: the page works as a CI artifact
opened from disk, offline.
"""

from __future__ import annotations

from html import escape

from silo_regress.behaviour.notes import Note, SegmentKind
from silo_regress.outcome import Outcome, Report, Verdict
from silo_regress.render.excerpt import change_lines, summary_sentence, task_label
from silo_regress.render.hunks import Row, cut_note, line_diff, side_by_side
from silo_regress.render.wording import one_line, phrase

ROW_CAP = 400

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em;
  color: #1f2328; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 .3em; }
h2 { font-size: 1.2em; margin: 2em 0 .4em; border-bottom: 1px solid #d0d7de; }
code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
p.verdicts { font-size: 1.1em; padding: .5em .8em; border-radius: 6px; }
p.verdicts.ok { background: #dafbe1; } p.verdicts.fail { background: #ffebe9; }
table.summary { border-collapse: collapse; margin: 1em 0; }
table.summary th, table.summary td { border: 1px solid #d0d7de; padding: 4px 8px;
  text-align: left; vertical-align: top; }
table.summary th { background: #f6f8fa; }
td.verdict-match { color: #1a7f37; } td.verdict-fail { color: #cf222e; font-weight: 600; }
ul.behaviour li { margin: .15em 0; }
del.removed { background: #ffd7d5; text-decoration: line-through; }
ins.added { background: #ccffd8; text-decoration: none; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; margin: .5em 0; }
table.diff th { background: #f6f8fa; border: 1px solid #d0d7de; padding: 4px; text-align: left;
  font-weight: normal; overflow-wrap: anywhere; }
table.diff td { padding: 0 6px; vertical-align: top; white-space: pre-wrap;
  overflow-wrap: anywhere; }
table.diff col.num { width: 4.5em; }
table.summary code { white-space: nowrap; }
table.diff td.num { color: #6e7781; text-align: right; user-select: none; }
table.diff tr.gap td { background: #f6f8fa; height: .8em; }
td.del { background: #ffebe9; } td.add { background: #e6ffec; }
td.num.del { background: #ffd7d5; } td.num.add { background: #ccffd8; }
p.note { color: #6e7781; font-style: italic; }
pre.changes { background: #f6f8fa; padding: .6em; overflow-x: auto; }
"""


def _style_defs() -> str:
    from pygments.formatters import HtmlFormatter

    css: str = HtmlFormatter(style="default").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    return css


def _highlight(lines: list[str]) -> list[str]:
    """Each line of JSON as highlighted HTML (spans balanced per line)."""
    if not lines:
        return []
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import JsonLexer

    html: str = highlight("\n".join(lines) + "\n", JsonLexer(), HtmlFormatter(nowrap=True))
    out = html.split("\n")
    if len(out) < len(lines):  # never expected; fall back to plain escaped text
        return [escape(line) for line in lines]
    return out[: len(lines)]


def _outcome_id(n: int) -> str:
    return f"artifact-{n}"


def render_html(report: Report, *, title: str = "silo-regress check") -> str:
    state = "ok" if report.ok else "fail"
    where = "" if report.source.is_working_tree else f" (baselines from {report.source.label})"
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        "<style>" + _CSS + _style_defs() + "</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="verdicts {state}" id="verdicts">{escape(summary_sentence(report) + where)}</p>',
    ]
    out += _summary_table(report)
    for n, outcome in enumerate(report.outcomes):
        if not outcome.ok:
            out += _section(n, outcome)
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _summary_table(report: Report) -> list[str]:
    out = [
        '<table class="summary" id="summary">',
        "<thead><tr><th>Task</th><th>Artifact</th><th>Verdict</th><th>Run</th>"
        "<th>What changed</th></tr></thead>",
        "<tbody>",
    ]
    from silo_regress.render.excerpt import headline

    for n, outcome in enumerate(report.outcomes):
        verdict = escape(outcome.verdict.value)
        if not outcome.ok:
            verdict = f'<a href="#{_outcome_id(n)}">{verdict}</a>'
        css = "verdict-match" if outcome.ok else "verdict-fail"
        what = "" if outcome.ok else _what(outcome, headline(outcome))
        out.append(
            f"<tr><td><code>{escape(task_label(outcome))}</code></td>"
            f"<td><code>{escape(outcome.artifact)}</code></td>"
            f'<td class="{css}">{verdict}</td>'
            f"<td><code>{escape(outcome.run_name or '')}</code></td>"
            f"<td>{what}</td></tr>"
        )
    out += ["</tbody>", "</table>"]
    return out


def note_html(note: Note) -> str:
    """A behaviour note as HTML; a word diff's words as ``<del>`` and ``<ins>``."""
    out = []
    for segment in phrase(note, marked=False):
        text = escape(segment.text)
        if segment.kind is SegmentKind.REMOVED:
            text = f'<del class="removed">{text}</del>'
        elif segment.kind is SegmentKind.ADDED:
            text = f'<ins class="added">{text}</ins>'
        out.append(text)
    return "".join(out)


def _what(outcome: Outcome, headline: str) -> str:
    if outcome.verdict is Verdict.CHANGED:
        return "changed: " + one_line(note_html(note) for note in outcome.behaviour)
    return escape(headline)


def _section(n: int, outcome: Outcome) -> list[str]:
    out = [
        f'<section id="{_outcome_id(n)}">',
        f"<h2><code>{escape(task_label(outcome))}</code> <code>{escape(outcome.artifact)}</code>:"
        f" {escape(outcome.verdict.value)}</h2>",
    ]
    if outcome.baseline_path:
        out.append(f"<p>baseline: <code>{escape(outcome.baseline_path)}</code></p>")
    if outcome.run_path:
        out.append(f"<p>run: <code>{escape(outcome.run_path)}</code></p>")
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
    out.append("</section>")
    return out


def _diff_table(outcome: Outcome) -> list[str]:
    before_name = outcome.baseline_path or "baseline"
    after_name = (outcome.run_path or "run") + " (canonical)"
    diff = line_diff(outcome.baseline_text or b"", outcome.run_text or b"")
    rows, left_out = side_by_side(diff, cap=ROW_CAP)
    left = _highlight([r.before for r in rows if r.before_number is not None])
    right = _highlight([r.after for r in rows if r.after_number is not None])
    out = [
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
        out.append(f'<tr class="{row.tag}">' + _cells(row, left_html, right_html) + "</tr>")
    out += ["</tbody>", "</table>"]
    if left_out:
        out.append(
            f'<p class="note">{left_out} more diff rows not shown; the full files are '
            f"{escape(before_name)} and {escape(after_name)}</p>"
        )
    if diff.cut is not None:
        note = cut_note(diff.cut, before_name=before_name, after_name=after_name)
        out.append(f'<p class="note">{escape(note)}</p>')
    return out


def _cells(row: Row, left_html: str, right_html: str) -> str:
    left_css = "del" if row.tag in {"replace", "delete"} and row.before_number else ""
    right_css = "add" if row.tag in {"replace", "insert"} and row.after_number else ""
    return (
        f'<td class="num {left_css}">{row.before_number or ""}</td>'
        f'<td class="code {left_css}">{left_html}</td>'
        f'<td class="num {right_css}">{row.after_number or ""}</td>'
        f'<td class="code {right_css}">{right_html}</td>'
    )
