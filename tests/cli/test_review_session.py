"""``review``'s policy without typer or a terminal: what settling an item means.

The keys and prompts are tested on a pty (tests/integration/test_review_keys.py);
here a :class:`~silo_regress.commands.reviewing.Review` is driven directly, on a real
project with recorded baselines and new runs."""

from __future__ import annotations

import shutil

import pytest
from support.silofixture import SiloProject, make_result, make_state_diff

from silo_regress.commands.reviewing import (
    Accepted,
    NothingToUndo,
    Refused,
    Rejected,
    Review,
    ReviewRequest,
    Undone,
    check_request,
    open_review,
    review_scripted,
)
from silo_regress.errors import UsageError
from silo_regress.project.config import load_config
from silo_regress.project.taskref import parse_ref

WORSE = [{"label": "Lead qualified", "passed": False, "detail": "", "required": True}]


def _changed(project: SiloProject) -> None:
    """TASK-003 regresses in two artifacts of one run; TASK-004 drifts."""
    for n, task in enumerate(("TASK-003", "TASK-004")):
        project.add_run(task, started=f"2026-03-16T09:00:0{n}.000Z", result=make_result())
    assert project.cli("record", "--all").exit_code == 0
    project.add_run(
        "TASK-003",
        name="run_worse",
        started="2026-03-16T10:00:01.000Z",
        result=make_result(passed=False, reward=0, checks=WORSE),
        state_diff=make_state_diff(added=("AUD-0001", "AUD-0009")),
    )
    project.add_run(
        "TASK-004", started="2026-03-16T10:00:02.000Z", result=make_result(agent_output="More.")
    )


def _open(project: SiloProject, **request: object) -> Review:
    return open_review(load_config(project.root), ReviewRequest(terminal=True, **request))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ReviewRequest(accept_all=True, reject=True), "choose opposite things"),
        (ReviewRequest(reject=True), "name the tasks"),
        (ReviewRequest(), "review needs a terminal"),
    ],
)
def test_options_that_cannot_go_together_are_refused_before_anything_is_read(
    request_: ReviewRequest, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        check_request(request_)


def test_rejecting_a_run_settles_every_item_judged_from_it(project: SiloProject) -> None:
    _changed(project)
    review = _open(project)
    assert [str(o.task) for o in review.items] == ["TASK-003", "TASK-003", "TASK-004"]
    first = review.next_item()
    assert first is not None
    done = review.reject(first)
    assert isinstance(done, Rejected) and done.moved_to.endswith("run_worse")
    # The state diff of the same run went with it: only TASK-004 is left.
    assert [str(o.task) for o in review.pending] == ["TASK-004"]
    summary = review.summary()
    assert (summary.rejected, summary.unreviewed, summary.rejected_runs) == (2, 1, ("run_worse",))


def test_undo_reopens_the_accept_and_puts_back_the_bytes(project: SiloProject) -> None:
    _changed(project)
    baseline = project.baselines / "TASK-003.result.json"
    before = baseline.read_bytes()
    review = _open(project)
    assert isinstance(review.undo(), NothingToUndo)
    first = review.next_item()
    assert first is not None
    accepted = review.accept(first)
    assert isinstance(accepted, Accepted)
    assert accepted.written == ("baselines/TASK-003.result.json",)
    assert baseline.read_bytes() != before
    undone = review.undo()
    assert isinstance(undone, Undone) and undone.outcome is first
    assert baseline.read_bytes() == before
    assert review.pending[0] is first  # back at the front of the queue
    summary = review.summary()
    assert (summary.accepted, summary.undone, summary.files) == (0, 1, ())


def test_a_refused_accept_stays_open_on_a_terminal_and_is_counted_when_scripted(
    project: SiloProject,
) -> None:
    _changed(project)
    only = (parse_ref("TASK-004"),)
    review = _open(project, refs=only)
    scripted = _open(project, refs=only, accept_all=True)
    item = review.next_item()
    assert item is not None and item.run_name
    # The run the item was judged from is gone before it is accepted.
    shutil.rmtree(project.runs_dir / item.run_name)
    refused = review.accept(item)
    assert isinstance(refused, Refused) and not refused.counted
    assert review.summary().failed == 0
    review.accept_all = True  # [A]: every remaining item, so a refusal is counted
    again = review.accept(item)
    assert isinstance(again, Refused) and again.counted and review.summary().failed == 1
    events: list[object] = []
    summary = review_scripted(scripted, reject=False, on_event=events.append)
    assert len(events) == 1 and isinstance(events[0], Refused) and events[0].counted
    assert (summary.failed, summary.accepted, summary.unreviewed) == (1, 0, 0)
    assert not any(project.baselines.glob("*.tmp*"))
