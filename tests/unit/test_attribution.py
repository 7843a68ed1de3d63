"""Run attribution without processes: listings and run.json values in, claims out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from silo_regress.runner.attribution import Ended, Ledger, claim_order, hand_out
from silo_regress.runs.index import Run

T0 = datetime(2026, 3, 16, 10, 0, tzinfo=UTC)


def run(name: str, task: str = "TASK-001", *, env: str = "crm-west", second: int = 0) -> Run:
    started = T0 + timedelta(seconds=second)
    return Run(
        name=name,
        path=Path("/runs") / name,
        environment=env,
        task_id=task,
        started_at=started.isoformat(),
        started=started,
    )


def complete_if_named(*names: str) -> Callable[[Run], bool]:
    return lambda r: r.name in names


KEY = ("crm-west", "TASK-001")


def test_old_directories_are_never_new() -> None:
    ledger = Ledger(before=frozenset({"run_old"}))
    ledger.start(KEY)
    assert ledger.exit(Ended(0, KEY, 0))
    found = {"run_old": run("run_old"), "run_new": run("run_new", second=1)}
    (claim,) = ledger.settle(KEY, found, complete=lambda r: True)
    assert claim.run is not None and claim.run.name == "run_new"
    assert ledger.claimed[KEY] == [found["run_new"]]


def test_runs_of_other_tasks_go_to_their_own_task_whatever_the_order() -> None:
    ledger = Ledger(before=frozenset())
    other = ("crm-east", "TASK-001")
    for key in (KEY, other):
        ledger.start(key)
    found = {
        "run_a": run("run_a", env="crm-east"),
        "run_b": run("run_b", second=5),
    }
    assert ledger.exit(Ended(0, KEY, 0))
    (mine,) = ledger.settle(KEY, found, complete=lambda r: True)
    assert mine.run == found["run_b"]
    assert ledger.exit(Ended(1, other, 0))
    (theirs,) = ledger.settle(other, found, complete=lambda r: True)
    assert theirs.run == found["run_a"]


def test_a_task_is_not_settled_while_one_of_its_rollouts_runs() -> None:
    ledger = Ledger(before=frozenset())
    ledger.start(KEY)
    ledger.start(KEY)
    assert not ledger.exit(Ended(0, KEY, 0))
    assert ledger.exit(Ended(1, KEY, 0))
    assert ledger.unsettled() == [KEY]


def test_a_run_is_handed_out_once() -> None:
    ledger = Ledger(before=frozenset())
    ledger.start(KEY)
    ledger.exit(Ended(0, KEY, 0))
    found = {"run_a": run("run_a")}
    assert ledger.settle(KEY, found, complete=lambda r: True)[0].run is not None
    ledger.start(KEY)  # a repeat that starts later and leaves nothing
    ledger.exit(Ended(1, KEY, 1))
    (claim,) = ledger.settle(KEY, found, complete=lambda r: True)
    assert claim.run is None
    assert ledger.strays(["run_a", "run_x"]) == ["run_x"]


def test_complete_runs_go_to_clean_exits_first_broken_ones_last() -> None:
    exits = [
        Ended(0, KEY, -9, timed_out=True),
        Ended(1, KEY, 1),
        Ended(2, KEY, 0),
        Ended(3, KEY, None),  # never started: gets nothing
    ]
    runs = [run("run_broken", second=1), run("run_x", second=2), run("run_y", second=3)]
    claims = {
        c.ended.index: c
        for c in hand_out(exits, runs, complete=complete_if_named("run_x", "run_y"))
    }
    assert (claims[2].run, claims[2].complete) == (runs[1], True)
    assert (claims[1].run, claims[1].complete) == (runs[2], True)
    assert (claims[0].run, claims[0].complete) == (runs[0], False)
    assert claims[3].run is None


def test_claim_order_is_exit_0_then_1_then_others_then_timeouts() -> None:
    exits = [
        Ended(0, KEY, -15, timed_out=True),
        Ended(1, KEY, 2),
        Ended(2, KEY, 1),
        Ended(3, KEY, 0),
    ]
    assert [e.index for e in sorted(exits, key=claim_order)] == [3, 2, 1, 0]
