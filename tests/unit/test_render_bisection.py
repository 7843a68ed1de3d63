"""bisect's result in words: what each format says, and commit subjects made harmless."""

from __future__ import annotations

import json

from silo_regress.render.bisection import render_bisect
from silo_regress.reports.bisection import BisectResult, Ending, Untested
from silo_regress.stats.changepoint import Counts, side_rates

CULPRIT = "3f1c2a9d0b7e" + "0" * 28
COUNTS = Counts((18, 9, 1), (20, 10, 10))


def result(ending: Ending = Ending.FOUND) -> BisectResult:
    before, after = side_rates(COUNTS, 2)
    return BisectResult(
        task="crm-west/TASK-002",
        gate="stats",
        ending=ending,
        good="a" * 40,
        bad="b" * 40,
        commits=32,
        culprit=CULPRIT,
        subject="Prompt \x1b[31mshorter\x1b[0m | system",
        files=("prompts/system.md",),
        probability=0.981,
        confidence=0.95,
        before=before,
        after=after,
        rollouts=140,
        rounds=28,
        free_rollouts=30,
        untested=(Untested("c" * 40, "Bump deps", "bisect-setup ['npm', 'ci'] exited 1"),),
    )


def test_text_names_the_culprit_rates_and_skips_without_raw_escapes() -> None:
    text = render_bisect(result(), "text")
    assert "first worse commit 3f1c2a9d0b7e" in text
    assert "posterior 0.981, asked 0.95" in text
    assert "pass rate before: 88% (27/30 passed" in text  # Beta(28, 4) mean
    assert "pass rate after:  17% (1/10 passed" in text
    assert "140 rollouts in 28 rounds, plus 30 already in hand" in text
    assert "skipped cccccccccccc Bump deps: bisect-setup" in text
    assert "\x1b" not in text


def test_undecided_never_reads_as_found() -> None:
    text = render_bisect(result(Ending.UNDECIDED), "text")
    assert text.startswith("crm-west/TASK-002: undecided after 140 rollouts")
    assert "first worse" not in text
    assert json.loads(render_bisect(result(Ending.UNDECIDED), "json"))["decided"] is False


def test_json_and_markdown_carry_the_same() -> None:
    document = json.loads(render_bisect(result(), "json"))
    assert document["culprit"]["commit"] == CULPRIT
    assert document["culprit"]["files"] == ["prompts/system.md"]
    assert document["before"]["passed"] == 27 and document["after"]["rollouts"] == 10
    assert document["untested"][0]["reason"].startswith("bisect-setup")
    markdown = render_bisect(result(), "markdown")
    assert "| culprit | `3f1c2a9d0b7e`" in markdown
    assert "\x1b" not in markdown
    assert "\\| system" in markdown  # a pipe cannot end the table cell
