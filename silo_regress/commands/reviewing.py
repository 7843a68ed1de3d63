"""``review``: the queue of changed results, and what settling each item means.

The queue is judged as ``check`` judges (a stale or crashed run is offered for
rejecting, never for accepting); a stats task offers its candidate tally instead of
its bytes. Every item ends as exactly one of accepted, rejected, skipped, failed or
not reviewed: rejecting a run settles every item judged from it; accepting a new task
records the whole task, settling its other new artifacts; an undo reopens the accept
and what it settled. Which key does what, and what is shown, is the CLI's
(``cli/review.py``); a test drives a :class:`Review` without a terminal.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from silo_regress.errors import SiloRegressError, UsageError

if TYPE_CHECKING:
    from silo_regress.judging.outcome import Outcome
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.recording.candidates import AcceptedTally, Candidate
    from silo_regress.recording.recorder import Recording
    from silo_regress.recording.undoing import Undo
    from silo_regress.runs.index import RunIndex
    from silo_regress.store.baselines import BaselineStore

REJECT_ONLY = ("stale-run", "incomplete-run")  # verdicts a review may reject, never accept


@dataclass(frozen=True)
class ReviewRequest:
    refs: tuple[TaskRef, ...] = ()
    accept_all: bool = False
    reject: bool = False
    terminal: bool = False  # stdin and stdout are a terminal

    @property
    def scripted(self) -> bool:
        return self.accept_all or self.reject


def check_request(request: ReviewRequest) -> None:
    """Raise UsageError for options that cannot go together, before anything is read."""
    if request.accept_all and request.reject:
        raise UsageError("--accept-all and --reject choose opposite things: give one")
    if request.reject and not request.refs:
        raise UsageError("--reject discards runs: name the tasks, e.g. review --reject TASK-001")
    if not request.scripted and not request.terminal:
        raise UsageError(
            "review needs a terminal (stdin and stdout); without one, accept with "
            "`silo-regress review --accept-all [TASK...]` or discard the runs with "
            "`silo-regress review --reject TASK...`, or accept each with "
            "`silo-regress record baselines/TASK.ARTIFACT [--path POINTER]`"
        )


@dataclass(frozen=True)
class Accepted:
    outcome: Outcome
    recording: Recording
    pointers: tuple[str, ...]
    written: tuple[str, ...]  # baseline paths whose bytes changed


@dataclass(frozen=True)
class Rejected:
    outcome: Outcome
    moved_to: str  # where the run now lies, relative to the project


@dataclass(frozen=True)
class Refused:
    """An accept, reject or undo that did not happen. ``counted``: the item is settled
    as failed and the review goes on (scripted, or accepting all)."""

    message: str
    counted: bool = False


@dataclass(frozen=True)
class Undone:
    outcome: Outcome
    restored: tuple[str, ...]


@dataclass(frozen=True)
class NothingToUndo:
    pass


@dataclass(frozen=True)
class Passed:
    """An item accepting all passes over: a run that cannot be accepted."""

    outcome: Outcome


@dataclass(frozen=True)
class TallyAccepted:
    candidate: Candidate
    accepted: AcceptedTally


Event = Accepted | Rejected | Refused | Passed | TallyAccepted


@dataclass(frozen=True)
class ReviewSummary:
    total: int
    accepted: int
    rejected: int
    skipped: int
    failed: int
    unreviewed: int  # neither settled nor skipped: quit or interrupted
    undone: int
    files: tuple[str, ...]  # to stage
    rejected_runs: tuple[str, ...]
    unsettled: tuple[Outcome, ...]  # not reviewable here: a new run or a fix first


@dataclass
class Review:
    """One review's queue and what it settled so far (an accumulator)."""

    config: Config
    store: BaselineStore
    index: RunIndex
    items: tuple[Outcome, ...]
    tallies: tuple[Candidate, ...]
    unsettled: tuple[Outcome, ...]  # outside the queue
    everything_unsettled: tuple[Outcome, ...]  # the check's, for "nothing to review"
    interactive: bool  # a person settles each item: a refused one stays open
    accept_all: bool = False  # [A] or --accept-all: every remaining item accepted
    pending: deque[Outcome] = field(default_factory=deque)
    accepted: list[tuple[Outcome, tuple[str, ...]]] = field(default_factory=list)
    accepted_tallies: list[str] = field(default_factory=list)
    rejected: list[Outcome] = field(default_factory=list)
    rejected_runs: list[str] = field(default_factory=list)
    skipped: int = 0
    failed: int = 0
    undone: int = 0
    undos: list[tuple[Outcome, Undo]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.items) + len(self.tallies)

    @property
    def empty(self) -> bool:
        return not self.items and not self.tallies

    def next_item(self) -> Outcome | None:
        return self.pending.popleft() if self.pending else None

    def position(self) -> str:
        """The item just taken among all of them: an undone accept comes back under its
        old number, and items settled with another (a rejected run's) count as done."""
        return f"{len(self.items) - len(self.pending)}/{len(self.items)}"

    @staticmethod
    def acceptable(outcome: Outcome) -> bool:
        return outcome.verdict.value not in REJECT_ONLY

    def skip(self) -> None:
        self.skipped += 1

    def pass_over(self, outcome: Outcome) -> Passed:
        self.skipped += 1
        return Passed(outcome)

    def preview(self, outcome: Outcome) -> Recording | Refused:
        """A missing baseline: what accepting it would record."""
        from silo_regress.recording.reviewing import preview

        try:
            return preview(self.config, self.store, self.index, outcome)
        except SiloRegressError as exc:
            return Refused(exc.message)

    def accept(self, outcome: Outcome, pointers: Sequence[str] = ()) -> Accepted | Refused:
        """Accept one item (only ``pointers`` of it, when given); a refused accept keeps
        the item open on a terminal, and is counted as failed otherwise."""
        from silo_regress.judging.outcome import Verdict
        from silo_regress.recording.recorder import FileState
        from silo_regress.recording.undoing import accept_undoably

        chosen = tuple(pointers)
        try:
            recording, undo = accept_undoably(
                self.config, self.store, self.index, outcome, pointers=chosen
            )
        except SiloRegressError as exc:  # one refused accept does not end the review
            counted = self.accept_all or not self.interactive
            self.failed += counted
            return Refused(exc.message, counted=counted)
        written = tuple(f.path for f in recording.files if f.state is not FileState.UNCHANGED)
        self.accepted.append((outcome, written))
        self.undos.append((outcome, undo))
        if outcome.verdict is Verdict.MISSING_BASELINE:
            # The whole task was recorded: its other new artifacts are accepted with it.
            same = [
                o for o in self.pending if o.task == outcome.task and o.verdict is outcome.verdict
            ]
            for other in same:
                self.pending.remove(other)
                self.accepted.append((other, ()))
        return Accepted(outcome, recording, chosen, written)

    def reject(self, outcome: Outcome) -> Rejected | Refused:
        """Discard the item's run; every other item judged from that run goes with it."""
        from silo_regress.runs.discards import discard_dir, move_out

        config = self.config
        if not outcome.run_name:
            return Refused("this result has no run to reject")
        try:
            path = move_out(
                config.runs_dir, outcome.run_name, shown=config.relative(config.runs_dir)
            )
        except KeyboardInterrupt:
            # The rename is one step: if it happened, the closing line must count it.
            if os.path.isdir(discard_dir(config.runs_dir) / outcome.run_name):
                self._settle_rejected(outcome)
            raise
        except SiloRegressError as exc:
            self.failed += not self.interactive
            return Refused(exc.message, counted=not self.interactive)
        self._settle_rejected(outcome)
        return Rejected(outcome, config.relative(path))

    def _settle_rejected(self, outcome: Outcome) -> None:
        self.rejected.append(outcome)
        self.rejected_runs.append(outcome.run_name or "")
        for other in [o for o in self.pending if o.run_name == outcome.run_name]:
            self.pending.remove(other)
            self.rejected.append(other)

    def undo(self) -> Undone | Refused | NothingToUndo:
        """Put back the bytes the last accept replaced; its item (and what it settled)
        comes back after the one being shown."""
        from silo_regress.recording.undoing import undo

        if not self.undos:
            return NothingToUndo()
        outcome, last = self.undos[-1]
        try:
            restored = undo(self.store, last)
        except SiloRegressError as exc:
            return Refused(exc.message)
        self.undos.pop()
        back = [item for item, _ in self.accepted if item.task == outcome.task]
        back = back[back.index(outcome) :] if outcome in back else [outcome]
        self.accepted = [(o, w) for o, w in self.accepted if not any(o is b for b in back)]
        self.undone += 1
        for item in reversed(back):
            self.pending.appendleft(item)
        return Undone(outcome, restored)

    def accept_tally(self, candidate: Candidate) -> TallyAccepted | Refused:
        """Write the candidate tally as the task's baseline tally, once recounted."""
        from silo_regress.recording.candidates import accept_candidate

        try:
            accepted = accept_candidate(
                self.store,
                self.index,
                candidate,
                runs_dir=self.config.runs_dir,
                environment=self.config.environment,
            )
        except SiloRegressError as exc:
            counted = not self.interactive
            self.failed += counted
            return Refused(exc.message, counted=counted)
        self.accepted_tallies.append(accepted.path)
        return TallyAccepted(candidate, accepted)

    def summary(self) -> ReviewSummary:
        accepted = len(self.accepted) + len(self.accepted_tallies)
        # Whatever was not settled (quit, Ctrl-C) was not reviewed: never "skipped".
        settled = accepted + len(self.rejected) + self.skipped + self.failed
        files = list(dict.fromkeys(path for _, written in self.accepted for path in written))
        return ReviewSummary(
            total=self.total,
            accepted=accepted,
            rejected=len(self.rejected),
            skipped=self.skipped,
            failed=self.failed,
            unreviewed=self.total - settled,
            undone=self.undone,
            files=(*files, *self.accepted_tallies),
            rejected_runs=tuple(dict.fromkeys(self.rejected_runs)),
            unsettled=self.unsettled,
        )


def open_review(config: Config, request: ReviewRequest) -> Review:
    """Judge the project as ``check`` does and queue what a review may settle."""
    from silo_regress.commands.sources import working_tree
    from silo_regress.judging.judge import check
    from silo_regress.project.fingerprint import current_inputs
    from silo_regress.recording.reviewing import review_queue
    from silo_regress.runs.cache import index_runs

    check_request(request)
    index = index_runs(config.runs_dir)
    store = working_tree(config)
    # Judged as `check` judges: a stale run is offered for rejecting, never accepting.
    inputs = current_inputs(config, staged=False)
    report = check(config, index, store, request.refs, inputs=inputs)
    queue = review_queue(report, config=config)
    rejectable = tuple(o for o in queue.unsettled if o.run_name and o.verdict.value in REJECT_ONLY)
    items = queue.items if request.accept_all else queue.items + rejectable
    # A tally is not a run to discard: --reject leaves the stats results alone.
    tallies = () if request.reject else _candidates(config, request.refs)
    review = Review(
        config=config,
        store=store,
        index=index,
        items=items,
        tallies=tuple(tallies),
        unsettled=tuple(o for o in queue.unsettled if o not in items),
        everything_unsettled=queue.unsettled,
        interactive=request.terminal and not request.scripted,
        accept_all=request.accept_all,
    )
    review.pending.extend(items)
    return review


def _candidates(config: Config, refs: Sequence[TaskRef]) -> list[Candidate]:
    if not config.gates_statistically:  # the stats code loads only for a stats project
        return []
    from silo_regress.recording.candidates import reviewable_candidates

    return reviewable_candidates(config.runs_dir, refs)


def review_scripted(
    review: Review, *, reject: bool, on_event: Callable[[Event], None]
) -> ReviewSummary:
    """``--accept-all`` or ``--reject``: every item settled without asking; a refused one
    is counted as failed and the rest go on."""
    while (outcome := review.next_item()) is not None:
        on_event(review.reject(outcome) if reject else review.accept(outcome))
    for candidate in review.tallies:
        on_event(review.accept_tally(candidate))
    return review.summary()
