"""Whether a task's repeated rollouts agree (``record --repeat N``, ``run --repeat N``), in words.

Per task one line when its rollouts agree; for a task the stats gate judges, one line
too, whatever its bytes did: its tally, its pass rate and the rate's 95% Wilson
interval (a dump of every value that varied is noise there: the gate counts passes,
and the newest rollout's verdict is one of N). An exact task that varies gets each
varying path's values and the fix; when ``passed`` itself varies, the fix is the
statistical gate alone, since ignoring ``/passed`` (or the reward) would switch the
gate off rather than settle it.

The values come from :mod:`silo_regress.runner.stability`, a sibling layer: they are
read here through the protocols below, which its ``Stability`` satisfies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from silo_regress.behaviour.notes import Segment
    from silo_regress.canon.canonical import JsonValue
    from silo_regress.canon.jsondiff import Missing
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.render.text import Palette
    from silo_regress.stats.tally import Tally

VARIATION_CAP = 50  # varying paths listed per task
_VALUE_WIDTH = 120  # characters of a long value shown before it is clipped
_WORDS_WIDTH = 160
_NAMED = 12  # runs named in one line


class TaskView(Protocol):
    @property
    def ref(self) -> TaskRef: ...
    @property
    def environment(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def label(self) -> str: ...


class RunView(Protocol):
    @property
    def name(self) -> str: ...


class DistinctView(Protocol):
    @property
    def value(self) -> JsonValue | Missing: ...
    @property
    def count(self) -> int: ...
    @property
    def words(self) -> tuple[Segment, ...] | None: ...


class VariationView(Protocol):
    @property
    def artifact(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def values(self) -> Sequence[DistinctView]: ...
    @property
    def scalar(self) -> bool: ...


class StabilityView(Protocol):
    @property
    def task(self) -> TaskView: ...
    @property
    def expected(self) -> int: ...
    @property
    def runs(self) -> Sequence[RunView]: ...
    @property
    def broken(self) -> Sequence[RunView]: ...
    @property
    def distinct(self) -> int: ...
    @property
    def variations(self) -> Sequence[VariationView]: ...
    @property
    def stable(self) -> bool: ...
    @property
    def ignore_patterns(self) -> tuple[str, ...]: ...


def gated(config: Config, stability: StabilityView) -> bool:
    """Whether the stats gate judges the task (``gate = "stats"`` or ``"both"``)."""
    from silo_regress.project.config import Gate

    task = stability.task
    return config.task_settings(task.ref, environment=task.environment).gate is not Gate.EXACT


def verdict_varies(stability: StabilityView) -> bool:
    """Whether the rollouts disagree on the verdict itself (``passed``)."""
    return any((v.artifact, v.path) == ("result.json", "/passed") for v in stability.variations)


def rate_words(tally: Tally) -> str:
    """``6/10 passed: 60.0% [31.3%, 83.2%]``: the count, its rate and 95% Wilson interval."""
    from silo_regress.stats.intervals import wilson

    if not tally.rollouts:
        return "0/0 passed"
    interval = wilson(tally.passed, tally.rollouts)
    return (
        f"{tally.passed}/{tally.rollouts} passed: {100 * tally.rate:.1f}% "
        f"[{100 * interval.low:.1f}%, {100 * interval.high:.1f}%]"
    )


def render_stability(
    stabilities: Sequence[StabilityView],
    *,
    config: Config,
    color: bool = False,
    tallies: Mapping[str, Tally] | None = None,
) -> str:
    """Per task: one line when its repeats agree or the stats gate judges it (its tally
    from ``tallies``, by task label); else each varying path's values and the fix."""
    from silo_regress.render.text import Palette

    palette = Palette(color)
    out = []
    for s in stabilities:
        if gated(config, s):
            out.append(_stats_line(s, (tallies or {}).get(s.task.label), palette))
            continue
        n = len(s.runs) + len(s.broken)
        if s.stable:
            out.append(
                f"{s.task.label}: {palette.paint('stable', 'green')}, "
                f"{len(s.runs)} of {s.expected} rollouts byte-identical\n"
            )
            continue
        reasons = []
        if s.variations:
            reasons.append(f"{s.distinct} distinct results in {len(s.runs)} complete runs")
        if s.broken:
            reasons.append(f"{len(s.broken)} without a complete result ({_names(s.broken)})")
        if n < s.expected:
            reasons.append(f"only {n} of {s.expected} rollouts left a run")
        if not reasons:
            reasons.append(f"{len(s.runs)} identical runs")
        word = "FLAKY" if s.variations else "UNSETTLED"
        out.append(f"{s.task.label}: {palette.paint(word, 'red', 'bold')}, {'; '.join(reasons)}\n")
        for variation in s.variations[:VARIATION_CAP]:
            out.extend(_variation_lines(variation, palette))
        if len(s.variations) > VARIATION_CAP:
            out.append(f"  ... and {len(s.variations) - VARIATION_CAP} more paths\n")
        if s.variations:
            out.extend(fixes(s, config))
    return "".join(out)


def _stats_line(s: StabilityView, tally: Tally | None, palette: Palette) -> str:
    head = f"{s.task.label}: {palette.paint('stats gate', 'cyan')}, "
    if tally is None:
        n = len(s.runs) + len(s.broken)
        return head + f"{n} of {s.expected} rollouts (judged by pass rate; bytes may differ)\n"
    line = head + rate_words(tally)
    if s.broken:
        line += f", {len(s.broken)} without a result counted as failed"
    return line + "\n"


def tally_line(shown: str, tally: Tally, *, without_result: int = 0) -> str:
    """What ``record --repeat`` wrote to a tally file, with its rate and interval."""
    line = f"{shown}: tally of {tally.rollouts} rollouts, {rate_words(tally)}"
    if without_result:
        line += f", {without_result} of them without a result (counted as failed)"
    return line + "\n"


def _names(runs: Sequence[RunView]) -> str:
    shown = ", ".join(r.name for r in runs[:_NAMED])
    return shown + (f" and {len(runs) - _NAMED} more" if len(runs) > _NAMED else "")


def _variation_lines(variation: VariationView, palette: Palette) -> list[str]:
    """``/checks/2/passed: true x2, false x1``, or one line per distinct long value."""
    from silo_regress.canon.jsondiff import show

    path = variation.path or "(whole document)"
    head = f"  {variation.artifact} {path}"
    if variation.scalar:
        counts = ", ".join(f"{show(d.value)} x{d.count}" for d in variation.values)
        return [f"{head}: {counts}\n"]
    lines = [f"{head}: {len(variation.values)} values\n"]
    for distinct in variation.values:
        lead = f"    {distinct.count} rollout{'s' if distinct.count != 1 else ''}: "
        lines.append(lead + _clip(show(distinct.value), _VALUE_WIDTH) + "\n")
        if distinct.words is not None:
            lines.append(" " * len(lead) + "words: " + _word_diff(distinct.words, palette) + "\n")
    return lines


def _word_diff(segments: Sequence[Segment], palette: Palette) -> str:
    """``[-old-]{+new+}`` against the most common value, coloured on a terminal."""
    from silo_regress.behaviour.notes import SegmentKind

    marks = {SegmentKind.SAME: ("", ""), SegmentKind.REMOVED: ("[-", "-]")}
    marks[SegmentKind.ADDED] = ("{+", "+}")
    styles = {SegmentKind.SAME: (), SegmentKind.REMOVED: ("red",), SegmentKind.ADDED: ("green",)}
    out, room = [], _WORDS_WIDTH
    for segment in segments:
        opening, closing = marks[segment.kind]
        text = segment.text.replace("\n", "⏎")
        if len(text) + len(opening) + len(closing) > room:
            text = text[: max(0, room - len(opening) - len(closing))] + "…"
            out.append(palette.paint(opening + text + closing, *styles[segment.kind]))
            break
        out.append(palette.paint(opening + text + closing, *styles[segment.kind]))
        room -= len(text) + len(opening) + len(closing)
    return "".join(out)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fixes(stability: StabilityView, config: Config) -> list[str]:
    """How to settle an exact task whose rollouts differ.

    When its verdict (``passed``) varies, only the statistical gate: an ``ignore`` of
    ``/passed`` or ``/reward`` would keep a baseline that no longer judges anything,
    and variants would accept a failing rollout as one more right answer. Otherwise the
    ``ignore`` line that would make it stable, in the task's own table (a table's key
    replaces the inherited list, so the line holds all of it), the variants command,
    and the statistical gate."""
    from silo_regress.project.config import task_table

    task = stability.task
    header = config.location.header(*task_table(task.task_id, task.environment))
    stats = [f"    {header}\n", '    gate = "stats"\n']
    if verdict_varies(stability):
        return [
            "  its pass/fail varies, so no byte baseline can hold and ignoring the verdict "
            "would switch the gate off;\n",
            f"  judge it by its pass rate over repeated rollouts (in {config.location.path}, "
            "docs/statistics.md):\n",
            *stats,
        ]
    settings = config.task_settings(task.ref, environment=task.environment)
    patterns = [p.text for p in settings.ignore]
    patterns += [p for p in stability.ignore_patterns if p not in patterns]
    quoted = [json.dumps(p, ensure_ascii=False) for p in patterns]
    line = f"    ignore = [{', '.join(quoted)}]\n"
    if len(line) > 100:  # one entry a line, as a TOML array may be written
        line = "    ignore = [\n" + "".join(f"      {q},\n" for q in quoted) + "    ]\n"
    return [
        f"  to make it stable, ignore what varies (in {config.location.path}):\n",
        f"    {header}\n",
        line,
        "  or accept every distinct result as a variant:\n",
        f"    silo-regress record --repeat {stability.expected} --variants {task.ref}\n",
        "  or judge it by its pass rate over repeated rollouts (docs/statistics.md):\n",
        *stats,
    ]
