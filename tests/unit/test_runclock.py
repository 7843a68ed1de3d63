"""runclock.clock_of: a run's window from its run.json, never blocking on what replaced it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from silo_regress.runs.clock import clock_of
from silo_regress.runs.index import Run, parse_started

STARTED = "2026-03-16T10:00:00.000Z"


def _run(path: Path) -> Run:
    started = parse_started(STARTED)
    assert started is not None
    return Run("r", path, "env", "TASK-001", STARTED, started)


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def fail(_signum: int, _frame: object) -> None:
        raise TimeoutError("clock_of blocked")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_the_window_ends_at_finished_at(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_bytes(
        orjson.dumps({"startedAt": STARTED, "finishedAt": "2026-03-16T10:05:00.000Z"})
    )
    clock = clock_of(_run(tmp_path))
    assert clock.holds(datetime(2026, 3, 16, 10, 4, tzinfo=UTC))
    assert not clock.holds(datetime(2026, 3, 16, 11, 0, tzinfo=UTC))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_run_json_swapped_for_a_fifo_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "run.json")  # no writer: a plain read would wait for ever
    with _deadline(5):
        clock = clock_of(_run(tmp_path))
    # No finish time to be had: the window runs to now, as for a killed run.
    assert clock.holds(datetime.now(UTC))
