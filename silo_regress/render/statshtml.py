"""The stats gate on the HTML page: the suite sentence, pass^k against k for both sides
as a small SVG chart, and each task's pass rate with its interval, baseline beside candidate."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from silo_regress.render.statslines import percent, show_p, suite_sentence

if TYPE_CHECKING:
    from silo_regress.stats.passk import SuitePoint
    from silo_regress.stats.verdicts import StatsJudgement, TaskJudgement

WIDTH, HEIGHT, PAD = 320, 120, 12


def _points(curve: tuple[SuitePoint, ...], top_k: int) -> str:
    step = (WIDTH - 2 * PAD) / max(1, top_k - 1)
    return " ".join(
        f"{PAD + (p.k - 1) * step:.1f},{HEIGHT - PAD - (HEIGHT - 2 * PAD) * p.value:.1f}"
        for p in curve
        if p.value is not None
    )


def pass_k_chart(judgement: StatsJudgement) -> list[str]:
    suite = judgement.suite
    top_k = max(len(suite.baseline_curve), len(suite.candidate_curve))
    if top_k == 0:
        return []
    return [
        f'<svg class="passk" id="passk" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="suite pass^k against k, baseline and '
        'candidate" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="currentColor" stroke-width="1"/>',
        f'<polyline class="baseline" fill="none" stroke="#888" stroke-width="2" '
        f'points="{_points(suite.baseline_curve, top_k)}"/>',
        f'<polyline class="candidate" fill="none" stroke="#d33" stroke-width="2" '
        f'points="{_points(suite.candidate_curve, top_k)}"/>',
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
            f"<tr><td>{escape(task.task)}</td><td>{escape(task.tier.value)}</td>"
            f"<td>{escape(_rate(task, baseline=True))}</td>"
            f"<td>{escape(_rate(task, baseline=False))}</td><td>{escape(p)}</td></tr>"
        )
    out += ["</tbody></table>", "</section>"]
    return out
