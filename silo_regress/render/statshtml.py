"""The stats gate on the HTML page: the suite sentence, pass^k against k for both sides
as a small SVG chart, and each task's pass rate with its interval, baseline beside candidate."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from silo_regress.render.statslines import percent, show_p, suite_sentence

if TYPE_CHECKING:
    from silo_regress.stats.passk import SuitePoint
    from silo_regress.stats.verdicts import StatsJudgement, TaskJudgement

WIDTH, HEIGHT = 360, 180
# Room for the axes' tick labels and titles: left, right, top, bottom.
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 10, 34

# The stats section's styles, read by render/html.py into the page's one <style>.
STATS_CSS = """
section.stats table#stats-tasks { border-collapse: collapse; margin: .6em 0; width: 100%; }
section.stats table#stats-tasks th, section.stats table#stats-tasks td {
  border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
section.stats table#stats-tasks th { background: var(--panel); }
section.stats table#stats-tasks td.num { font-variant-numeric: tabular-nums; }
section.stats tr.t-regression td.tier { color: var(--regression-fg);
  background: var(--regression-bg); font-weight: 600; }
section.stats tr.t-improvement td.tier { color: var(--improvement-fg);
  background: var(--improvement-bg); }
section.stats tr.t-suspect td.tier, section.stats tr.t-insufficient-data td.tier,
section.stats tr.t-unreliable-baseline td.tier { color: var(--mixed-fg);
  background: var(--mixed-bg); }
svg.passk { display: block; margin: .6em 0; color: var(--fg); }
svg.passk text { font: 11px system-ui, sans-serif; fill: currentColor; }
svg.passk line.grid { stroke: var(--line); stroke-width: 1; }
"""


def _x(k: int, top_k: int) -> float:
    return LEFT + (k - 1) * (WIDTH - LEFT - RIGHT) / max(1, top_k - 1)


def _y(value: float) -> float:
    return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * value


def _points(curve: tuple[SuitePoint, ...], top_k: int) -> str:
    return " ".join(f"{_x(p.k, top_k):.1f},{_y(p.value):.1f}" for p in curve if p.value is not None)


def _axes(top_k: int) -> list[str]:
    """Both axes with ticks, tick labels and titles: pass^k from 0 to 1 against k."""
    bottom, right = _y(0.0), WIDTH - RIGHT
    out = [
        f'<line class="axis" x1="{LEFT}" y1="{bottom:.1f}" x2="{right}" y2="{bottom:.1f}" '
        'stroke="currentColor" stroke-width="1"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom:.1f}" '
        'stroke="currentColor" stroke-width="1"/>',
    ]
    for value in (0.0, 0.5, 1.0):
        y = _y(value)
        if value:
            out.append(f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}"/>')
        out.append(
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value:g}</text>'
        )
    ticks = sorted({1, (top_k + 1) // 2, top_k})
    for k in ticks:
        x = _x(k, top_k)
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle">{k}</text>'
        )
    out += [
        f'<text class="axis-title" x="{(LEFT + right) / 2:.1f}" y="{HEIGHT - 4}" '
        'text-anchor="middle">k (rollouts that must all pass)</text>',
        f'<text class="axis-title" x="12" y="{(TOP + bottom) / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {(TOP + bottom) / 2:.1f})">pass^k</text>',
    ]
    return out


def pass_k_chart(judgement: StatsJudgement) -> list[str]:
    suite = judgement.suite
    top_k = max(len(suite.baseline_curve), len(suite.candidate_curve))
    if top_k == 0:
        return []
    return [
        f'<svg class="passk" id="passk" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="suite pass^k against k, baseline and '
        'candidate" xmlns="http://www.w3.org/2000/svg">',
        *_axes(top_k),
        f'<polyline class="baseline" fill="none" stroke="#888" stroke-width="2" '
        f'points="{_points(suite.baseline_curve, top_k)}"><title>baseline</title></polyline>',
        f'<polyline class="candidate" fill="none" stroke="#d33" stroke-width="2" '
        f'points="{_points(suite.candidate_curve, top_k)}"><title>candidate</title></polyline>',
        "</svg>",
        f"<p>pass^k for k = 1..{top_k}: grey the baseline, red the candidate.</p>",
    ]


def _rate(task: TaskJudgement, *, baseline: bool) -> str:
    tally = task.baseline if baseline else task.candidate
    interval = task.baseline_interval if baseline else task.candidate_interval
    if tally is None:
        return "none"
    text = f"{tally.passed}/{tally.rollouts} ({percent(tally.rate)}"
    if interval is not None:
        text += f", 95% {percent(interval.low)}–{percent(interval.high)}"
    return text + ")"


def stats_html(judgement: StatsJudgement) -> list[str]:
    out = [
        '<section id="stats" class="stats">',
        "<h2>Stats gate</h2>",
        f'<p id="suite">{escape(suite_sentence(judgement.suite))}</p>',
        *pass_k_chart(judgement),
        '<table id="stats-tasks"><thead><tr><th>task</th><th>tier</th><th>baseline</th>'
        "<th>candidate</th><th>p (Holm)</th></tr></thead><tbody>",
    ]
    for task in judgement.tasks:
        p = f"{show_p(task.p_decline)} ({show_p(task.p_adjusted)})"
        out.append(
            f'<tr class="t-{escape(task.tier.value)}"><td><code>{escape(task.task)}</code></td>'
            f'<td class="tier">{escape(task.tier.value)}</td>'
            f'<td class="num">{escape(_rate(task, baseline=True))}</td>'
            f'<td class="num">{escape(_rate(task, baseline=False))}</td>'
            f'<td class="num">{escape(p)}</td></tr>'
        )
    out += ["</tbody></table>", "</section>"]
    return out
