"""The JSON report of DESIGN.md: one document, exact enough for scripts to act on.

Its schema (keys, version, notes) is :mod:`silo_regress.reports.schema`, which ``merge``
reads back; this module words the ``behaviour`` lines and prints the document.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from silo_regress.judging.outcome import Report
from silo_regress.render.wording import words
from silo_regress.reports.schema import report_json

if TYPE_CHECKING:
    from silo_regress.reports.overview import Status


def render_json(report: Report) -> str:
    return dumps(
        report_json(
            report, word=words, next_steps=next_steps_json(report), stats=_stats_json(report)
        )
    )


def _stats_json(report: Report) -> dict[str, Any] | None:
    """The stats gate's results (docs/statistics.md); absent when no task is gated."""
    if report.stats is None:
        return None
    from silo_regress.render.statsjson import stats_json

    return stats_json(report.stats)


def next_steps_json(report: Report) -> list[dict[str, Any]]:
    """The closing advice as data: one entry per kind of failure (render/advice.py)."""
    if report.ok:
        return []
    from silo_regress.render.advice import advise

    return [
        {
            "verdict": step.kind.value if step.kind is not None else None,
            "why": step.why,
            "commands": list(step.commands),
            "chained": step.chained,
            "config": list(step.lines),
        }
        for step in advise(report)
    ]


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def status_json(status: Status) -> dict[str, Any]:
    """``status --format json``: one object per task, the counts in tasks."""
    return {
        "version": 1,
        "tasks": [
            {
                "task": str(row.task),
                "environment": row.environment,
                "baselines": [
                    {"artifact": artifact, "variants": variants}
                    for artifact, variants in zip(
                        row.baselines, row.variants or (1,) * len(row.baselines), strict=True
                    )
                ],
                "newestRun": row.newest_run,
                "runAgeSeconds": row.run_age_seconds,
                "agent": row.agent,
                "verdict": row.verdict.value if row.verdict else None,
                "note": row.note.value or None,
                "git": row.git_state or None,
            }
            for row in status.rows
        ],
        "counts": dict(status.counts()),
    }
