"""The JSON report of DESIGN.md: one document, exact enough for scripts to act on.

Each result carries its behaviour twice: ``behaviour`` in words (the text
report's lines) and ``notes`` as typed data, which ``merge`` reads back.
"""

from __future__ import annotations

import json
from typing import Any

from silo_regress.behaviour.codec import note_json
from silo_regress.canon.jsondiff import MISSING, Change
from silo_regress.judging.outcome import Outcome, Report
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
        **_repeat_json(report),
        **_stats_json(report),
        "summary": report.summary(),
        "results": [
            {
                "task": str(o.task),
                "environment": o.environment,
                "artifact": o.artifact,
                "status": o.verdict.value,
                "direction": o.direction.value if o.direction else None,
                "baseline": o.baseline_path,
                "baselineSource": _source_json(o),
                "run": o.run_path,
                "runId": o.run_name,
                "provenance": _provenance_json(o),
                "variant": o.variant,
                "detail": o.detail,
                "behaviour": words(o.behaviour),
                "notes": [note_json(n) for n in o.behaviour],
                "changes": [change_json(c) for c in o.changes],
                **_scores_json(o),
                **({"repeats": list(o.repeats)} if report.repeat is not None else {}),
            }
            for o in report.outcomes
        ],
    }


def _stats_json(report: Report) -> dict[str, Any]:
    """The stats gate's results (docs/statistics.md); absent when no task is gated."""
    if report.stats is None:
        return {}
    from silo_regress.render.statsjson import stats_json

    return {"stats": stats_json(report.stats)}


def _repeat_json(report: Report) -> dict[str, Any]:
    """check --run --repeat N: the rollouts per task, and each task's pass count."""
    if report.repeat is None:
        return {}
    from silo_regress.judging.repeats import tally_repeats

    return {
        "repeat": {
            "count": report.repeat,
            "tasks": [
                {
                    "task": str(t.task),
                    "environment": t.environment,
                    "matched": len(t.matched),
                    "rollouts": t.rollouts,
                    "failing": list(t.failed),
                    "variants": {artifact: list(numbers) for artifact, numbers in t.variants},
                }
                for t in tally_repeats(report)
            ],
        }
    }


def _source_json(outcome: Outcome) -> dict[str, Any] | None:
    """Where the baseline's bytes were read: kind, the commit as named and its hash, the label."""
    origin = outcome.baseline_source
    if outcome.baseline_path is None or origin is None:
        return None
    return {
        "kind": origin.kind.value,
        "ref": origin.ref,
        "commit": origin.commit,
        "label": outcome.baseline_label,
    }


def _provenance_json(outcome: Outcome) -> dict[str, Any] | None:
    """What made the run, from its silo-regress.json; null for a run without one."""
    record = outcome.provenance
    if record is None:
        return None
    return {
        "agent": record.agent,
        "agentSha256": record.agent_sha256,
        "commit": record.commit,
        "dirty": record.dirty,
        "toolVersion": record.tool_version,
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
