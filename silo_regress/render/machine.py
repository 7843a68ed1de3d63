"""The JSON report of DESIGN.md: one document, exact enough for scripts to act on.

Each result carries its behaviour twice: ``behaviour`` in words (the text
report's lines) and ``notes`` as typed data, which ``merge`` reads back.
"""

from __future__ import annotations

import json
from typing import Any

from silo_regress.behaviour.codec import note_json
from silo_regress.jsondiff import MISSING, Change
from silo_regress.outcome import Outcome, Report
from silo_regress.render.wording import words


def change_json(change: Change) -> dict[str, Any]:
    item: dict[str, Any] = {"path": change.path}
    if change.baseline is not MISSING:
        item["baseline"] = change.baseline
    if change.run is not MISSING:
        item["run"] = change.run
    return item


def report_json(report: Report) -> dict[str, Any]:
    shard: dict[str, Any] = {}
    if report.shard is not None:
        shard["shard"] = {"index": report.shard[0], "count": report.shard[1]}
    return {
        "version": 1,
        **shard,
        "summary": report.summary(),
        "results": [
            {
                "task": str(o.task),
                "environment": o.environment,
                "artifact": o.artifact,
                "status": o.verdict.value,
                "direction": o.direction.value if o.direction else None,
                "baseline": o.baseline_path,
                "run": o.run_path,
                "runId": o.run_name,
                "variant": o.variant,
                "detail": o.detail,
                "behaviour": words(o.behaviour),
                "notes": [note_json(n) for n in o.behaviour],
                "changes": [change_json(c) for c in o.changes],
                **_scores_json(o),
            }
            for o in report.outcomes
        ],
    }


def _scores_json(outcome: Outcome) -> dict[str, Any]:
    """A result.json outcome's pass and reward on both sides, for merge's totals."""
    if outcome.scores is None:
        return {}
    before, after = outcome.scores
    return {
        "scores": {
            side: {"passed": scores.passed, "reward": scores.reward}
            for side, scores in (("baseline", before), ("run", after))
        }
    }


def render_json(report: Report) -> str:
    return dumps(report_json(report))


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
