"""The judge's one-step Outcome builder gives exactly what the dataclass constructor gives."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from silo_regress.judging.comparison import _Common
from silo_regress.judging.direction import Scores
from silo_regress.judging.outcome import OUTCOME_FIELDS, WORKING_TREE, Outcome, Verdict
from silo_regress.project.taskref import TaskRef

SCORES = (Scores(passed=True, reward=1.0), Scores(passed=True, reward=1.0))


def _common() -> _Common:
    return _Common(
        task=TaskRef("TASK-002", "crm-west"),
        environment="crm-west",
        artifact="result.json",
        baseline_path="baselines/crm-west/TASK-002.result.json",
        run_path=".silo/runs/run_1/result.json",
        run_name="run_1",
        variant=1,
        provenance=None,
        baseline_source=WORKING_TREE,
        match_scores=SCORES,
    )


@pytest.mark.parametrize("verdict", list(Verdict))
def test_the_one_step_outcome_equals_the_constructor(verdict: Verdict) -> None:
    common = _common()
    fast = common.outcome(verdict, detail="why", baseline_text=b"a", run_text=b"b")
    slow = Outcome(
        task=common.task,
        environment=common.environment,
        artifact=common.artifact,
        verdict=verdict,
        baseline_path=common.baseline_path,
        run_path=common.run_path,
        run_name=common.run_name,
        detail="why",
        baseline_text=b"a",
        run_text=b"b",
        variant=1,
        baseline_source=WORKING_TREE,
        scores=SCORES if verdict is Verdict.MATCH else None,
    )
    assert type(fast) is Outcome
    assert fast == slow and hash(fast) == hash(slow)
    # Every field, in order: a field added to Outcome and not to the builder fails here.
    assert list(vars(fast)) == list(vars(slow)) == list(OUTCOME_FIELDS)
    assert dataclasses.replace(fast, detail="other") == dataclasses.replace(slow, detail="other")
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert copy.deepcopy(fast) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.detail = "changed"  # type: ignore[misc]
