"""The wall-clock window of one run, from its ``run.json``, for the volatile scan."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from silo_regress.canon.volatile import Clock
from silo_regress.runs.index import RUN_FILE, RUN_FILE_LIMIT, Run, parse_started
from silo_regress.system.fsio import FileError, read_regular


def clock_of(run: Run) -> Clock:
    """The span a time in ``run``'s artifacts must avoid: its own start to its finish.

    Read only when the prefilter has seen something time-like, so the hot path never
    opens run.json twice; read without blocking, as it was the first time, since a
    FIFO could have taken its place since. A run.json without a usable ``finishedAt`` (Silo killed
    before writing it) ends at ``startedAt + durationMs``, or else at this moment.
    """
    finished: datetime | None = None
    try:
        path = run.path / RUN_FILE
        meta = orjson.loads(read_regular(path, shown=str(path), limit=RUN_FILE_LIMIT))
    except (OSError, FileError, orjson.JSONDecodeError):
        meta = None
    if isinstance(meta, dict):
        text = meta.get("finishedAt")
        if isinstance(text, str):
            finished = parse_started(text)
        duration = meta.get("durationMs")
        if finished is None and isinstance(duration, int | float) and duration >= 0:
            finished = run.started + timedelta(milliseconds=duration)
    return Clock.of_run(run.started, finished or datetime.now(UTC))
