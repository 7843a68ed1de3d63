"""--repeat-until-decided's alpha split: each of the m gated tasks' sequential tests has an
exact false-alarm rate of at most alpha / (2 m) at its baseline's rate, so the tasks'
regressions together keep half the check's alpha (the suite step keeps the other half,
tests/unit/test_stats_verdicts.py). Driven through decide_rounds on real run directories
and a real baseline tally; the rate is summed exactly over every candidate count."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support.silofixture import make_project, make_result

from silo_regress.judging.statsgate import decide_rounds, sequential_design
from silo_regress.judging.targets import Target
from silo_regress.project.config import load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import Run, read_run
from silo_regress.stats.sequential import Decision, Design, binomial_cdf
from silo_regress.stats.tally import Tally, serialize_tally
from silo_regress.store.baselinenames import tally_relpath
from silo_regress.store.baselines import BaselineStore

ALPHA = 0.05
LOOK = 20  # one look after 20 rollouts (round = cap): a size computable by hand
BASE = Tally(rollouts=100, passed=90)  # p0 = 0.9


def _binomial(n: int, rate: float) -> list[float]:
    return [math.comb(n, x) * rate**x * (1 - rate) ** (n - x) for x in range(n + 1)]


def _regression_region(tmp_path: Path, m: int) -> list[set[int]]:
    """For each of m gated tasks, the candidate pass counts (of 20) decide_rounds calls a
    regression."""
    project = make_project(tmp_path / f"m{m}", config='gate = "stats"\n')
    config = load_config(project.root)
    tasks = [f"TASK-{i:03d}" for i in range(1, m + 1)]
    runs: dict[str, tuple[list[Run], list[Run]]] = {}
    for task in tasks:
        tally = config.baselines_dir / tally_relpath(TaskRef(task))
        tally.parent.mkdir(parents=True, exist_ok=True)
        tally.write_bytes(serialize_tally(BASE))
        sides = []
        for passed in (True, False):
            read = [
                read_run(project.add_run(task, result=make_result(passed=passed)))
                for _ in range(LOOK)
            ]
            assert all(isinstance(r, Run) for r in read)
            sides.append([r for r in read if isinstance(r, Run)])
        runs[task] = (sides[0], sides[1])
    gated = [Target(TaskRef(t), ("crm-west", t), ()) for t in tasks]
    source = BaselineStore.of(config)
    regions: list[set[int]] = [set() for _ in tasks]
    for passes in range(LOOK + 1):
        made = {("crm-west", t): p[:passes] + f[: LOOK - passes] for t, (p, f) in runs.items()}
        decisions = decide_rounds(config, source, gated, made, round_size=LOOK, cap=LOOK)
        assert set(decisions) == {TaskRef(t) for t in tasks}
        for region, task in zip(regions, tasks, strict=True):
            if decisions[TaskRef(task)] is Decision.REGRESSION:
                region.add(passes)
    return regions


@pytest.mark.parametrize("m", [1, 3])
def test_each_sequential_task_test_errs_at_most_alpha_over_2m(tmp_path: Path, m: int) -> None:
    regions = _regression_region(tmp_path, m)
    chances = _binomial(LOOK, 0.9)
    for region in regions:
        assert region, "no count is a regression: the test checks nothing"
        assert region == set(range(max(region) + 1))  # fewer passes never look better
        size = math.fsum(chances[k] for k in region)
        assert size <= ALPHA / (2 * m), (m, sorted(region), size)
    # each task's test is the same test
    assert all(r == regions[0] for r in regions)


def test_more_gated_tasks_make_each_task_test_stricter(tmp_path: Path) -> None:
    one = _regression_region(tmp_path, 1)[0]
    three = _regression_region(tmp_path, 3)[0]
    assert three < one  # Bonferroni over the tasks: 0.025 for one, 0.0083 each for three


def test_a_baseline_that_always_passed_gets_a_design_below_rate_one() -> None:
    """100 of 100 is not a rate of 1 (no failure could then be anything but a regression):
    half a failure, p0 = 1 - 1/200."""
    design = sequential_design(Tally(rollouts=100, passed=100), alpha=0.025, round_size=4, cap=40)
    assert design is not None and design.p0 == pytest.approx(0.995)
    for too_small_or_too_low in (Tally(rollouts=2, passed=2), Tally(rollouts=10, passed=1)):
        assert sequential_design(too_small_or_too_low, alpha=0.025, round_size=4, cap=40) is None


@pytest.mark.parametrize(
    "arguments",
    [
        {"p0": 1.0, "p1": 0.8},
        {"p0": 0.8, "p1": 0.8},
        {"p0": 0.8, "p1": 0.0},
        {"p0": 0.9, "p1": 0.8, "round_size": 0},
        {"p0": 0.9, "p1": 0.8, "round_size": 5, "max_rollouts": 4},
        {"p0": 0.9, "p1": 0.8, "alpha": 0.0},
        {"p0": 0.9, "p1": 0.8, "beta": 1.0},
    ],
)
def test_a_design_refuses_what_has_no_test(arguments: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Design(**arguments)  # type: ignore[arg-type]


def test_binomial_cdf_is_the_sum_of_the_binomial_terms() -> None:
    for n in range(0, 12):
        for k in range(-1, n + 1):
            expected = math.fsum(_binomial(n, 0.3)[: k + 1])
            assert binomial_cdf(k, n, 0.3) == pytest.approx(expected, abs=1e-15)
