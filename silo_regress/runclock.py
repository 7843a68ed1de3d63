"""The wall-clock window of one run, from its ``run.json``, for the volatile scan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from silo_regress.runs import RUN_FILE, Run, parse_started
from silo_regress.volatile import Clock


def clock_of(run: Run) -> Clock:
    """The span a time in ``run``'s artifacts must avoid: its own start to its finish.

    Read only when the prefilter has seen something time-like, so the hot path never
    opens run.json twice. A run.json without a usable ``finishedAt`` (Silo killed
    before writing it) ends at ``startedAt + durationMs``, or else at this moment.
    """
    finished: datetime | None = None
    try:
        meta = orjson.loads((run.path / RUN_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        meta = None
    if isinstance(meta, dict):
        text = meta.get("finishedAt")
        if isinstance(text, str):
            finished = parse_started(text)
        duration = meta.get("durationMs")
        if finished is None and isinstance(duration, int | float) and duration >= 0:
            finished = run.started + timedelta(milliseconds=duration)
    return Clock.of_run(run.started, finished or datetime.now(UTC))
