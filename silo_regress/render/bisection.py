"""What ``bisect`` found and what ``blame`` read, as text, JSON and Markdown.

Commit subjects and agent values are anyone's bytes: every one is made visible
(control characters escaped) before it reaches a terminal or a PR comment.
"""

from __future__ import annotations

import json
from typing import Any

from silo_regress.canon.visible import one_line
from silo_regress.render.machine import dumps
from silo_regress.render.markdown import cell, code
from silo_regress.reports.bisection import BisectResult, Blame, Ending, TallyBlame
from silo_regress.stats.changepoint import Rates

FORMATS = ("text", "json", "markdown")


def _rates(rates: Rates | None) -> str:
    if rates is None:
        return "unknown"
    return (
        f"{rates.mean:.0%} ({rates.passed}/{rates.rollouts} passed; "
        f"95% credible {rates.low:.0%}-{rates.high:.0%})"
    )


def _headline(result: BisectResult) -> str:
    if result.ending is Ending.FOUND and result.culprit is not None:
        sure = (
            "the byte verdict flipped here"
            if result.gate == "exact"
            else f"posterior {result.probability:.3f}, asked {result.confidence:g}"
        )
        return (
            f"{result.task}: first worse commit {result.culprit[:12]} "
            f"{one_line(result.subject or '')} ({sure})"
        )
    guess = ""
    if result.culprit is not None and result.probability is not None:
        guess = f"; most probable {result.culprit[:12]} at {result.probability:.3f}"
    return (
        f"{result.task}: undecided after {result.rollouts} rollouts (the budget is spent, or "
        f"every commit left was skipped){guess}; "
        "run bisect again with a larger --budget to go on from here"
    )


def bisect_text(result: BisectResult) -> str:
    lines = [_headline(result)]
    lines.append(
        f"  searched {result.commits} commits after {result.good[:7]} up to {result.bad[:7]} "
        f"(first parents), {result.gate} task"
    )
    if result.files:
        lines.append("  it changed: " + ", ".join(one_line(f) for f in result.files))
    if result.suspects:
        lines.append(
            "  or one of the untested commits just before it: "
            + ", ".join(s[:12] for s in result.suspects)
        )
    if result.gate == "stats" and result.culprit is not None:
        lines.append(f"  pass rate before: {_rates(result.before)}")
        lines.append(f"  pass rate after:  {_rates(result.after)}")
    used = f"  {result.rollouts} rollouts in {result.rounds} rounds"
    if result.free_rollouts:
        used += f", plus {result.free_rollouts} already in hand"
    if result.resumed:
        used += " (resumed)"
    lines.append(used)
    for item in result.untested:
        lines.append(f"  skipped {item.sha[:12]} {one_line(item.subject)}: {one_line(item.reason)}")
    return "\n".join(lines) + "\n"


def _rates_json(rates: Rates | None) -> dict[str, Any] | None:
    if rates is None:
        return None
    return {
        "mean": rates.mean,
        "low": rates.low,
        "high": rates.high,
        "passed": rates.passed,
        "rollouts": rates.rollouts,
    }


def bisect_json(result: BisectResult) -> dict[str, Any]:
    return {
        "version": 1,
        "task": result.task,
        "gate": result.gate,
        "ending": result.ending.value,
        "good": result.good,
        "bad": result.bad,
        "commits": result.commits,
        "culprit": None
        if result.culprit is None
        else {"commit": result.culprit, "subject": result.subject, "files": list(result.files)},
        "decided": result.ending is Ending.FOUND,
        "probability": result.probability,
        "confidence": result.confidence,
        "before": _rates_json(result.before),
        "after": _rates_json(result.after),
        "rollouts": result.rollouts,
        "rounds": result.rounds,
        "freeRollouts": result.free_rollouts,
        "suspects": list(result.suspects),
        "untested": [
            {"commit": u.sha, "subject": u.subject, "reason": u.reason} for u in result.untested
        ],
    }


def bisect_markdown(result: BisectResult) -> str:
    lines = [f"### bisect {code(result.task)}", "", cell(_headline(result)), ""]
    lines += ["| | |", "|---|---|"]
    lines.append(
        f"| searched | {result.commits} commits, {code(result.good[:7])}..{code(result.bad[:7])} |"
    )
    if result.culprit is not None:
        lines.append(f"| culprit | {code(result.culprit[:12])} {cell(result.subject or '')} |")
    if result.files:
        lines.append("| changed | " + ", ".join(code(f) for f in result.files) + " |")
    if result.gate == "stats" and result.culprit is not None:
        lines.append(f"| before | {cell(_rates(result.before))} |")
        lines.append(f"| after | {cell(_rates(result.after))} |")
    used = f"{result.rollouts} in {result.rounds} rounds (+{result.free_rollouts} in hand)"
    lines.append(f"| rollouts | {used} |")
    for item in result.untested:
        lines.append(f"| skipped {code(item.sha[:12])} | {cell(item.reason)} |")
    return "\n".join(lines) + "\n"


def render_bisect(result: BisectResult, output_format: str) -> str:
    if output_format == "json":
        return dumps(bisect_json(result))
    if output_format == "markdown":
        return bisect_markdown(result)
    return bisect_text(result)


# --- blame ---------------------------------------------------------------------------


def _value(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False))


def blame_text(blame: Blame) -> str:
    lines = [f"{blame.task} {blame.artifact} {blame.pointer or '(whole document)'}:"]
    for line in blame.lines:
        since = f"{line.commit[:12]} {line.day} {one_line(line.subject)}"
        if line.boundary:
            since += " (or earlier: history stops here)"
        lines.append(f"  {one_line(line.pointer) or '/'} = {_value(line.value)}  <- {since}")
    if not blame.lines:
        lines.append("  no value is recorded there")
    return "\n".join(lines) + "\n"


def blame_json(blame: Blame) -> dict[str, Any]:
    return {
        "version": 1,
        "task": blame.task,
        "artifact": blame.artifact,
        "pointer": blame.pointer,
        "values": [
            {
                "pointer": line.pointer,
                "value": line.value,
                "commit": line.commit,
                "subject": line.subject,
                "date": line.day,
                "boundary": line.boundary,
            }
            for line in blame.lines
        ],
    }


def blame_markdown(blame: Blame) -> str:
    lines = [
        f"### blame {code(blame.task)} {code(blame.artifact)} {code(blame.pointer or '/')}",
        "",
    ]
    lines += ["| pointer | value | introduced by |", "|---|---|---|"]
    for line in blame.lines:
        lines.append(
            f"| {code(line.pointer or '/')} | {code(_value(line.value))} | "
            f"{code(line.commit[:12])} {cell(line.subject)} |"
        )
    return "\n".join(lines) + "\n"


def tally_blame_text(blame: TallyBlame) -> str:
    lines = [f"{blame.task}: the tally's history ({len(blame.points)} recorded tallies)"]
    for point in blame.points:
        lines.append(
            f"  {point.commit[:12]} {point.day} {point.passed}/{point.rollouts} passed  "
            f"{one_line(point.subject)}"
        )
    if blame.culprit is not None and blame.probability is not None:
        lines.append(
            f"  most probable change: {blame.culprit[:12]} (posterior {blame.probability:.3f}); "
            f"before {_rates(blame.before)}, after {_rates(blame.after)}"
        )
    else:
        lines.append("  fewer than two recorded tallies: no change point to find")
    return "\n".join(lines) + "\n"


def tally_blame_json(blame: TallyBlame) -> dict[str, Any]:
    return {
        "version": 1,
        "task": blame.task,
        "tallies": [
            {
                "commit": p.commit,
                "subject": p.subject,
                "date": p.day,
                "passed": p.passed,
                "rollouts": p.rollouts,
            }
            for p in blame.points
        ],
        "changePoint": None
        if blame.culprit is None
        else {
            "commit": blame.culprit,
            "probability": blame.probability,
            "before": _rates_json(blame.before),
            "after": _rates_json(blame.after),
        },
    }


def tally_blame_markdown(blame: TallyBlame) -> str:
    lines = [f"### blame {code(blame.task)} (tally)", ""]
    lines += ["| commit | passed | subject |", "|---|---|---|"]
    for p in blame.points:
        mark = " **change**" if p.commit == blame.culprit else ""
        lines.append(
            f"| {code(p.commit[:12])}{mark} | {p.passed}/{p.rollouts} | {cell(p.subject)} |"
        )
    return "\n".join(lines) + "\n"


def render_blame(blame: Blame | TallyBlame, output_format: str) -> str:
    if isinstance(blame, TallyBlame):
        if output_format == "json":
            return dumps(tally_blame_json(blame))
        return (
            tally_blame_markdown(blame) if output_format == "markdown" else tally_blame_text(blame)
        )
    if output_format == "json":
        return dumps(blame_json(blame))
    return blame_markdown(blame) if output_format == "markdown" else blame_text(blame)
