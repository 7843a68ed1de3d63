"""What one rollout came to: a state from its exit and the run it left, and why.

Silo's exit code 1 means "a verifier check failed" as well as "configuration
error"; the two are told apart by whether a new complete run exists.
"""

from __future__ import annotations

import enum
import re
import signal
from dataclasses import dataclass

from silo_regress.judging.tallying import RolloutResult
from silo_regress.project.config import Config
from silo_regress.runner.plan import HINT, Rollout, command_place
from silo_regress.runner.process import GroupExit
from silo_regress.runs.index import Run

_DISK_FULL = re.compile(r"ENOSPC|no space left on device|disk quota exceeded", re.IGNORECASE)


class RolloutState(enum.StrEnum):
    PASSED = "passed"  # exit 0, complete run
    CHECK_FAILED = "check-failed"  # exit 1, complete run: a verifier check failed
    INCOMPLETE = "incomplete"  # a run without a complete result.json: Silo crashed
    NO_RUN = "no-run"  # no run at all: a configuration error, Silo's message says which
    TIMED_OUT = "timed-out"
    DISK_FULL = "disk-full"
    NOT_STARTED = "not-started"  # Silo itself could not be started: silo-command is wrong


# Problems with the setup rather than verdicts about a run: infrastructure errors, never
# in a tally. A timed-out rollout that left a run is the agent's (it ran too long): it
# counts as a failed rollout, like any run without a complete result.
SETUP_PROBLEMS = frozenset(
    {
        RolloutState.NO_RUN,
        RolloutState.TIMED_OUT,
        RolloutState.DISK_FULL,
        RolloutState.NOT_STARTED,
    }
)


@dataclass(frozen=True)
class RolloutOutcome:
    rollout: Rollout
    state: RolloutState
    exit_code: int | None
    seconds: float
    run: Run | None
    message: str
    # What the rollout counts for, read when it ended (None: it left no run to read).
    result: RolloutResult | None = None

    @property
    def problem(self) -> bool:
        """An infrastructure error: Silo could not start, or left no run of its own."""
        if self.state is RolloutState.TIMED_OUT:
            return self.run is None
        return self.state in SETUP_PROBLEMS

    @property
    def without_result(self) -> bool:
        """It started, left a run, and no complete result: a failed rollout."""
        return (
            self.run is not None
            and not self.problem
            and (self.result is None or not self.result.has_result)
        )


def classify(
    config: Config, rollout: Rollout, exit_: GroupExit, run: Run | None, *, complete: bool
) -> RolloutOutcome:
    """The outcome of ``rollout``, which ended as ``exit_`` and left ``run``."""

    def outcome(state: RolloutState, message: str) -> RolloutOutcome:
        return RolloutOutcome(rollout, state, exit_.code, exit_.seconds, run, message)

    label = rollout.label
    said = _said(exit_)
    where = f" ({config.relative(run.path)})" if run is not None else ""
    if exit_.error is not None or run is None:
        missing = exit_.error or _missing_silo(exit_)
        if missing is not None:
            # The same for every rollout of the command, so the task is not named.
            where = command_place(config, rollout.task.environment)
            command = list(rollout.command or rollout.argv[:1])
            return outcome(
                RolloutState.NOT_STARTED,
                f"{where}: silo-command {command} cannot start Silo: {missing}; {HINT}",
            )
    if exit_.timed_out:
        left = f"; it left {config.relative(run.path)} behind" if run is not None else ""
        return outcome(
            RolloutState.TIMED_OUT,
            f"{label}: timed out after {rollout.timeout:g} s; its process group was killed{left}",
        )
    if run is not None and complete:
        if exit_.code == 0:
            return outcome(RolloutState.PASSED, f"{label}: passed{where}")
        return outcome(
            RolloutState.CHECK_FAILED,
            f"{label}: a verifier check failed (Silo {exit_words(exit_.code)}){where}",
        )
    if _DISK_FULL.search(exit_.stderr):
        return outcome(
            RolloutState.DISK_FULL,
            f"{label}: the disk is full, Silo could not write its run{where}: {said}",
        )
    if run is not None:
        return outcome(
            RolloutState.INCOMPLETE,
            f"{label}: Silo {exit_words(exit_.code)} and left no complete result.json"
            f"{where}: {said}",
        )
    if exit_.code == 0:
        hint = ""
        if config.runs_dir != config.project / ".silo" / "runs":
            hint = (
                "; Silo's command line writes to .silo/runs/ of the project directory: "
                "is runs-dir right?"
            )
        runs_dir = config.relative(config.runs_dir)
        return outcome(
            RolloutState.NO_RUN,
            f"{label}: Silo exited 0 but no new run appeared under {runs_dir}/{hint}",
        )
    return outcome(
        RolloutState.NO_RUN, f"{label}: Silo {exit_words(exit_.code)} without writing a run: {said}"
    )


# npm and npx, when the package or its executable is not there (npm 7 and later).
_NPM_404 = re.compile(r"npm (?:ERR!|error) 404 Not Found - GET (\S+)")
_NPM_MISSING = (
    (re.compile(r"npm (?:ERR!|error) could not determine executable to run"), "no such executable"),
    (re.compile(r"npx canceled due to missing packages"), "the package is not installed"),
)


def _missing_silo(exit_: GroupExit) -> str | None:
    """Why Silo's command could not start Silo, from its output; None if it did start."""
    said = exit_.stderr + exit_.stdout
    found = _NPM_404.search(said)
    if found is not None:
        name = found.group(1).rstrip("/").rpartition("/")[2]
        return f"npm has no package {name!r} to run (404 Not Found from the registry)"
    for pattern, reason in _NPM_MISSING:
        if pattern.search(said):
            return f"npm found {reason}"
    if exit_.code == 127:  # a shell's "command not found"
        last = [line for line in said.splitlines() if line.strip()][-1:]
        return "command not found" + (f" ({last[0].strip()})" if last else "")
    return None


def exit_words(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited {code}"


def _said(exit_: GroupExit) -> str:
    text = exit_.stderr.strip() or exit_.stdout.strip()
    if not text:
        return "it printed nothing"
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-10:])
