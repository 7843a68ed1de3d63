"""The review page's history chart: pass rate and mean reward per commit, inline SVG.

No script and no external asset. The SVG stretches to the page width at a fixed
height (``preserveAspectRatio="none"``), so it reads the same at 1400 and 390 px:
its lines keep their width (``non-scaling-stroke``), its dots are zero-length round
caps (round whatever the stretch), and every word is HTML beside it, never SVG
text that would shrink with the drawing. Colours come from CSS variables, so dark
mode recolours it; the reward line is dashed, so the two differ without colour.
For screen readers the SVG has a title and a description of the trend, and the
numbers are in a table under it.
"""

from __future__ import annotations

from html import escape

from silo_regress.canon.canonical import format_number
from silo_regress.reports.history import ScoreHistory, ScorePoint

# Chart colours as (pass rate, mean reward) per scheme: drawn on --bg, WCAG 1.4.11
# asks 3:1 for graphics; these reach 4.5:1 and tests read them from here.
CHART_COLOURS = {
    "light": ("#0550ae", "#953800"),
    "dark": ("#79c0ff", "#ffa657"),
}

WIDTH = 600  # user units across; the drawing is stretched to the page width
HEIGHT = 100  # user units down: 0 at the bottom, 1 (100%, reward 1) at the top
PAD = 6  # room for the dots at the edges

CHART_CSS = """
figure.history { margin: 1em 0 .5em; max-width: 900px; }
figure.history figcaption { font-weight: 600; margin-bottom: .3em; }
div.plot { display: grid; grid-template-columns: auto 1fr; column-gap: .4em; }
div.axis-y { display: flex; flex-direction: column; justify-content: space-between;
  color: var(--muted); font-size: 12px; text-align: right; height: 140px; }
svg.chart { width: 100%; height: 140px; display: block; background: var(--panel);
  border: 1px solid var(--line); box-sizing: border-box; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart .pass { stroke: var(--chart-pass); }
svg.chart .reward { stroke: var(--chart-reward); stroke-dasharray: 6 4; }
svg.chart .line { fill: none; stroke-width: 2.5; }
svg.chart .dot { stroke-width: 7; stroke-linecap: round; }
div.axis-x { grid-column: 2; display: flex; justify-content: space-between; gap: 1em;
  color: var(--muted); font-size: 12px; }
ul.legend { list-style: none; padding: 0; margin: .3em 0; display: flex; flex-wrap: wrap;
  gap: .3em 1.2em; }
ul.legend .swatch { display: inline-block; width: 2em; height: 0; vertical-align: middle;
  margin-right: .4em; border-top: 3px solid; }
ul.legend .pass .swatch { border-top-color: var(--chart-pass); }
ul.legend .reward .swatch { border-top-color: var(--chart-reward); border-top-style: dashed; }
details.history-table summary { cursor: pointer; }
"""


def chart_variables(scheme: str) -> str:
    """The chart's CSS variables for one colour scheme (``light`` or ``dark``)."""
    passing, reward = CHART_COLOURS[scheme]
    return f"--chart-pass: {passing}; --chart-reward: {reward};"


def chart_html(history: ScoreHistory) -> list[str]:
    """The history figure: legend, chart with axis labels, and the numbers as a table."""
    points = history.points
    first, last = points[0], points[-1]
    count = len(points)
    caption = f"Pass rate and mean reward over the last {count} commits that changed baselines"
    out = [
        '<figure class="history" id="history" aria-labelledby="history-caption">',
        f'<figcaption id="history-caption">{escape(caption)}</figcaption>',
        '<ul class="legend">',
        f'<li class="pass"><span class="swatch"></span>pass rate (now {_rate(last)})</li>',
        f'<li class="reward"><span class="swatch"></span>mean reward (now {_reward(last)})</li>',
        "</ul>",
        '<div class="plot">',
        '<div class="axis-y" aria-hidden="true">'
        + "".join(f"<span>{label}</span>" for label in _axis(_top(history)))
        + "</div>",
        *_svg(history),
        '<div class="axis-x" aria-hidden="true">'
        f"<span>{escape(_commit_label(first))}</span>"
        f"<span>{escape(_commit_label(last))}</span></div>",
        "</div>",
        '<details class="history-table">',
        "<summary>The numbers per commit</summary>",
        '<div class="scroll"><table class="summary" id="history-table">',
        "<thead><tr><th>Commit</th><th>Date</th><th>Subject</th><th>Tasks</th>"
        "<th>Pass rate</th><th>Mean reward</th></tr></thead>",
        "<tbody>",
    ]
    for point in reversed(points):  # newest first, as git log reads
        c = point.commit
        out.append(
            f"<tr><td><code>{escape(c.short)}</code></td><td>{c.day.isoformat()}</td>"
            f"<td>{escape(c.subject)}</td><td>{point.tasks}</td>"
            f"<td>{_rate(point)}</td><td>{_reward(point)}</td></tr>"
        )
    out += ["</tbody>", "</table></div>", "</details>", "</figure>"]
    return out


def _svg(history: ScoreHistory) -> list[str]:
    points = history.points
    top = _top(history)
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)

    def xy(n: int, value: float) -> str:
        y = PAD + (HEIGHT - 2 * PAD) * (1 - value / top)
        return f"{PAD + n * step:.1f} {y:.1f}"

    out = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="none"'
        ' role="img" aria-labelledby="history-title history-desc"'
        ' xmlns="http://www.w3.org/2000/svg">',
        '<title id="history-title">Pass rate and mean reward per commit</title>',
        f'<desc id="history-desc">{escape(_trend(history))}</desc>',
    ]
    for value in (0.0, 0.5, 1.0):
        y = xy(0, value).split()[1]
        out.append(
            f'<line class="grid" x1="0" x2="{WIDTH}" y1="{y}" y2="{y}"'
            ' vector-effect="non-scaling-stroke"/>'
        )
    for css, values in (
        ("pass", [p.pass_rate for p in points]),
        ("reward", [p.mean_reward for p in points]),
    ):
        drawn = [(n, v) for n, v in enumerate(values) if v is not None]
        if not drawn:
            continue
        path = " ".join(("M" if i == 0 else "L") + xy(n, v) for i, (n, v) in enumerate(drawn))
        out.append(f'<path class="line {css}" d="{path}" vector-effect="non-scaling-stroke"/>')
        for n, v in drawn:
            point = points[n]
            label = f"{point.commit.short} {point.commit.day.isoformat()}: " + (
                f"pass rate {_rate(point)}" if css == "pass" else f"mean reward {_reward(point)}"
            )
            out.append(
                f'<path class="dot {css}" d="M{xy(n, v)} h0" vector-effect="non-scaling-stroke">'
                f"<title>{escape(label)}</title></path>"
            )
    out.append("</svg>")
    return out


def _top(history: ScoreHistory) -> float:
    """The value at the top of the chart: 1 (100%, reward 1), or a larger mean reward."""
    return max([1.0, *(p.mean_reward or 0.0 for p in history.points)])


def _axis(top: float) -> tuple[str, str, str]:
    if top == 1.0:
        return ("100% / 1", "50%", "0")
    # Rewards above 1: the scale is the reward's, a pass rate of 1 is drawn at 1.
    return (format_number(round(top, 3)), format_number(round(top / 2, 3)), "0")


def _trend(history: ScoreHistory) -> str:
    first, last = history.points[0], history.points[-1]
    return (
        f"Over {len(history.points)} commits from {_commit_label(first)} to "
        f"{_commit_label(last)}: pass rate {_rate(first)} to {_rate(last)}, "
        f"mean reward {_reward(first)} to {_reward(last)}."
    )


def _commit_label(point: ScorePoint) -> str:
    return f"{point.commit.short} ({point.commit.day.isoformat()})"


def _rate(point: ScorePoint) -> str:
    rate = point.pass_rate
    if rate is None:
        return "unknown"
    return f"{rate:.0%} ({point.passed} of {point.judged})"


def _reward(point: ScorePoint) -> str:
    if point.mean_reward is None:
        return "unknown"
    return format_number(round(point.mean_reward, 3))
