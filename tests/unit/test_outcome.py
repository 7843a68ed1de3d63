"""The judge's one Outcome factory, TargetContext.outcome, gives exactly what the dataclass
constructor gives, for every verdict, on a real project's baseline and run."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from pathlib import Path

import pytest
from support.silofixture import make_project, make_result

from silo_regress.cli.common import ColorWhen, Globals, project_config, working_tree
from silo_regress.judging.context import TargetContext, origin_of
from silo_regress.judging.direction import Scores
from silo_regress.judging.outcome import OUTCOME_FIELDS, Outcome, Verdict
from silo_regress.judging.targets import select_targets
from silo_regress.runs.index import index_runs
from silo_regress.store.baselines import Baseline

SCORES = (Scores(passed=True, reward=1.0), Scores(passed=True, reward=1.0))


def _context(tmp_path: Path) -> tuple[TargetContext, Baseline]:
    project = make_project(tmp_path / "p")
    project.add_run("TASK-002", result=make_result(reward=1))
    assert project.cli("record", "--all").exit_code == 0
    config = project_config(Globals(project=project.root, color=ColorWhen.NEVER, explicit=True))
    index = index_runs(config.runs_dir)
    source = working_tree(config)
    (target,) = select_targets(config, index, source, ())
    assert target.key is not None
    environment = target.key[0]
    context = TargetContext(
        config,
        source,
        target.ref,
        environment,
        index.newest(*target.key),
        config.task_settings(target.ref, environment=environment),
        origin_of(source),
    )
    fields = [getattr(context, f.name) for f in dataclasses.fields(TargetContext)]
    built = TargetContext.of(*fields)  # the judge's one-step build: the same value
    assert (
        type(built) is TargetContext
        and built == context
        and list(vars(built)) == [f.name for f in dataclasses.fields(TargetContext)]
    )
    (baseline,) = (b for b in target.baselines if b.artifact == "result.json")
    return built, baseline


@pytest.mark.parametrize("verdict", list(Verdict))
def test_the_one_step_outcome_equals_the_constructor(tmp_path: Path, verdict: Verdict) -> None:
    context, baseline = _context(tmp_path)
    run = context.run
    assert run is not None
    fast = context.outcome(
        baseline,
        verdict,
        match_scores=SCORES,
        detail="why",
        baseline_text=b"a",
        run_text=b"b",
    )
    slow = Outcome(
        task=baseline.ref,
        environment=context.environment,
        artifact="result.json",
        verdict=verdict,
        baseline_path=f"baselines/{baseline.relpath}",
        run_path=context.run_path("result.json"),
        run_name=run.name,
        detail="why",
        baseline_text=b"a",
        run_text=b"b",
        variant=1,
        baseline_source=context.origin,
        scores=SCORES if verdict is Verdict.MATCH else None,
    )
    assert slow.run_path is not None and slow.run_path.endswith("/result.json")
    assert type(fast) is Outcome
    assert fast == slow and hash(fast) == hash(slow)
    # Every field, in order: a field added to Outcome and not to the factory fails here.
    assert list(vars(fast)) == list(vars(slow)) == list(OUTCOME_FIELDS)
    assert dataclasses.replace(fast, detail="other") == dataclasses.replace(slow, detail="other")
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert copy.deepcopy(fast) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.detail = "changed"  # type: ignore[misc]


def test_only_a_matching_result_carries_scores(tmp_path: Path) -> None:
    context, baseline = _context(tmp_path)
    state = dataclasses.replace(baseline, artifact="state-diff.json")
    assert context.outcome(baseline, Verdict.MATCH, match_scores=SCORES).scores == SCORES
    assert context.outcome(state, Verdict.MATCH, match_scores=SCORES).scores is None
    assert context.outcome(baseline, Verdict.CHANGED, match_scores=SCORES).scores is None
