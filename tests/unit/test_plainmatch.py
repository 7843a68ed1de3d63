"""The plain-match lane gives exactly the judge's report, whatever the project holds.

Differential: one project of many tasks, each changed in its own way (fixed seed),
judged with the lane and with it switched off (``check(..., fast_lane=False)``); the
reports must be equal, outcome for outcome, bytes included. The lane must also take
the plain matches, or the test proves nothing.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_project, make_result, silo_json

from silo_regress.cli.common import ColorWhen, Globals, project_config, working_tree
from silo_regress.judging import judge
from silo_regress.judging.context import TargetContext, origin_of
from silo_regress.judging.outcome import Report, Verdict
from silo_regress.judging.plainmatch import plain_matches
from silo_regress.judging.targets import select_targets
from silo_regress.runs.index import index_runs

Mutation = Callable[[SiloProject, str, Path], None]


def _edit_json(path: Path, change: Callable[[dict[str, object]], None]) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_bytes(silo_json(value))


def _untouched(project: SiloProject, task: str, run: Path) -> None:
    pass


def _reward_moved(project: SiloProject, task: str, run: Path) -> None:
    _edit_json(run / "result.json", lambda v: v.update(reward=0.5))


def _state_changed(project: SiloProject, task: str, run: Path) -> None:
    _edit_json(run / "state-diff.json", lambda v: v.update(extra={"id": "X-1"}))


def _result_missing(project: SiloProject, task: str, run: Path) -> None:
    (run / "result.json").unlink()


def _state_missing(project: SiloProject, task: str, run: Path) -> None:
    (run / "state-diff.json").unlink()


def _result_truncated(project: SiloProject, task: str, run: Path) -> None:
    data = (run / "result.json").read_bytes()
    (run / "result.json").write_bytes(data[: len(data) // 2])


def _result_an_array(project: SiloProject, task: str, run: Path) -> None:
    (run / "result.json").write_bytes(b"[]\n")


def _duplicate_key(project: SiloProject, task: str, run: Path) -> None:
    data = (run / "result.json").read_bytes()
    (run / "result.json").write_bytes(data.replace(b"{\n", b'{\n  "reward": 7,\n', 1))


def _baseline_not_canonical(project: SiloProject, task: str, run: Path) -> None:
    path = project.baselines / f"{task}.result.json"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\n ", 1))


def _variant_added(project: SiloProject, task: str, run: Path) -> None:
    base = project.baselines / f"{task}.state-diff.json"
    (project.baselines / f"{task}~2.state-diff.json").write_bytes(
        base.read_bytes().replace(b"{\n", b'{\n  "another": true,\n', 1)
    )


def _both_an_array(project: SiloProject, task: str, run: Path) -> None:
    """Run and baseline agree, but a result.json that is no object is no result."""
    (run / "result.json").write_bytes(b"[]\n")
    (project.baselines / f"{task}.result.json").write_bytes(b"[]\n")


def _broken_result_unbaselined(project: SiloProject, task: str, run: Path) -> None:
    """The state diff matches, but the run's result.json (not baselined) is cut off."""
    (project.baselines / f"{task}.result.json").unlink()
    _result_truncated(project, task, run)


def _only_variant_two(project: SiloProject, task: str, run: Path) -> None:
    """A variant 2 without a variant 1: misnumbered, whatever its bytes."""
    base = project.baselines / f"{task}.state-diff.json"
    base.rename(project.baselines / f"{task}~2.state-diff.json")


def _result_baseline_deleted(project: SiloProject, task: str, run: Path) -> None:
    (project.baselines / f"{task}.result.json").unlink()


def _baseline_a_fifo(project: SiloProject, task: str, run: Path) -> None:
    path = project.baselines / f"{task}.state-diff.json"
    path.unlink()
    os.mkfifo(path)


def _wall_clock_in_output(project: SiloProject, task: str, run: Path) -> None:
    """A time inside the run's own clock window, in both run and baseline: volatile."""
    moment = json.loads((run / "run.json").read_text(encoding="utf-8"))["startedAt"]
    _edit_json(run / "result.json", lambda v: v.update(agentOutput=f"done at {moment}"))
    # The baseline is what the run now prints, canonical: only the clock tells.
    value = json.loads((run / "result.json").read_text(encoding="utf-8"))
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (project.baselines / f"{task}.result.json").write_text(text, encoding="utf-8")


def _key_order_hazard(project: SiloProject, task: str, run: Path) -> None:
    """Keys whose UTF-16 and code-point orders differ: the exact canonical path."""
    extra = {"\ue000": 1, "\U0001f600": 2}
    _edit_json(run / "state-diff.json", lambda v: v.update(extra))
    path = project.baselines / f"{task}.state-diff.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value.update(extra)
    body = json.dumps(value, indent=2, ensure_ascii=False)
    # Canonical order: UTF-16 code units, so the surrogate pair sorts before U+E000.
    ordered = dict(sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be")))
    body = json.dumps(ordered, indent=2, ensure_ascii=False)
    path.write_text(body + "\n", encoding="utf-8")


MUTATIONS: list[Mutation] = [
    _untouched,
    _untouched,
    _untouched,
    _reward_moved,
    _state_changed,
    _result_missing,
    _state_missing,
    _result_truncated,
    _result_an_array,
    _duplicate_key,
    _baseline_not_canonical,
    _variant_added,
    _result_baseline_deleted,
    _both_an_array,
    _broken_result_unbaselined,
    _only_variant_two,
    _baseline_a_fifo,
    _wall_clock_in_output,
    _key_order_hazard,
]


def _report(project: SiloProject, *, fast_lane: bool | None) -> Report:
    config = project_config(Globals(project=project.root, color=ColorWhen.NEVER, explicit=True))
    index = index_runs(config.runs_dir)
    return judge.check(config, index, working_tree(config), workers=1, fast_lane=fast_lane)


def _lane_takes(project: SiloProject) -> set[str]:
    """The tasks the lane judges on its own, asked target by target as the judge asks."""
    config = project_config(Globals(project=project.root, color=ColorWhen.NEVER, explicit=True))
    index = index_runs(config.runs_dir)
    source = working_tree(config)
    taken: set[str] = set()
    for target in select_targets(config, index, source, ()):
        if target.key is None or not target.baselines:
            continue
        context = TargetContext(
            config=config,
            source=source,
            ref=target.ref,
            environment=target.key[0],
            run=index.newest(*target.key),
            settings=config.task_settings(target.ref, environment=target.key[0]),
            origin=origin_of(source),
        )
        if plain_matches(context, target) is not None:
            taken.add(target.ref.task_id)
    return taken


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("seed", [3, 14])
def test_the_lane_gives_the_judges_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    config = '\n[tool.silo-regress.tasks."TASK-007"]\nignore = ["result.json:/agentOutput"]\n'
    project = make_project(tmp_path / "p", config=config)
    tasks = [f"TASK-{n:03d}" for n in range(40)]
    results = {task: make_result(reward=rng.choice([0, 0.5, 1])) for task in tasks}
    for task in tasks:
        project.add_run(task, result=results[task])
    assert project.cli("record", "--all").exit_code == 0
    # A newer run of each task, as recorded until its mutation changes it.
    newest = {task: project.add_run(task, result=results[task]) for task in tasks}
    # Every case once, the rest at random.
    others = [task for task in tasks if task != "TASK-007"]
    rng.shuffle(others)
    chosen = dict(zip(others, MUTATIONS, strict=False))
    chosen.update({task: rng.choice(MUTATIONS) for task in others[len(MUTATIONS) :]})
    chosen["TASK-007"] = _untouched  # its ignore pattern alone must send it the full way
    for task, mutate in chosen.items():
        mutate(project, task, newest[task])

    with_lane = _report(project, fast_lane=True)
    without = _report(project, fast_lane=False)

    assert with_lane == without
    assert [o.baseline_text for o in with_lane.outcomes] == [
        o.baseline_text for o in without.outcomes
    ]
    taken = _lane_takes(project)
    untouched = {t for t, m in chosen.items() if m is _untouched and t != "TASK-007"}
    assert untouched and untouched <= taken, "plain matches take the lane"
    assert "TASK-007" not in taken, "a task with ignore patterns is judged the full way"
    not_matching = {o.task.task_id for o in without.outcomes if o.verdict is not Verdict.MATCH}
    assert not taken & not_matching, "the lane takes nothing the judge does not call a match"
    assert set(MUTATIONS) <= set(chosen.values()), "every case is in the project"
    verdicts = {o.verdict for o in without.outcomes}
    assert Verdict.MATCH in verdicts and len(verdicts) >= 4, verdicts
    # The switch's variable turns the lane off where no argument says otherwise.
    monkeypatch.setenv(judge.FAST_LANE_VARIABLE, "0")
    assert not judge.fast_lane_default()
    assert _report(project, fast_lane=None) == without
    monkeypatch.setenv(judge.FAST_LANE_VARIABLE, "1")
    assert judge.fast_lane_default()
