"""Accepted variants against the stand-in Silo (tests/fake_silo.py) with a varying agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.runnerkit import LONG_OUTPUTS, behave, silo_project
from support.silofixture import SiloProject, make_result

from silo_regress.project.config import load_config
from silo_regress.project.taskref import TaskRef
from silo_regress.recording.recorder import TooManyVariantsError, prepare_variants
from silo_regress.runs.index import index_runs
from silo_regress.store.baselines import BaselineStore


def test_repeats_find_the_variants_and_variants_records_them(tmp_path: Path, control: Path) -> None:
    project = silo_project(tmp_path)
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": LONG_OUTPUTS[:2]}})
    done = project.cli("record", "--repeat", "4", "--variants", "TASK-001")
    assert done.exit_code == 0, done.output
    assert "/agentOutput: 2 values" in done.stdout  # what the repeats found
    assert "  new       baselines/crm-west/TASK-001~2.result.json" in done.stdout or (
        "  new       baselines/TASK-001~2.result.json" in done.stdout
    )
    stored = project.baseline_bytes()
    outputs = {
        json.loads(data)["agentOutput"]
        for name, data in stored.items()
        if name.endswith(".result.json")
    }
    assert outputs == set(LONG_OUTPUTS[:2])
    assert not any("~2.state-diff" in name for name in stored)  # it never varied

    # A later rollout equal to either variant passes; the JSON says which.
    for _ in range(2):
        checked = project.cli("check", "--run", "--format", "json", "TASK-001")
        assert checked.exit_code == 0, checked.output
        (row,) = [
            r for r in json.loads(checked.stdout)["results"] if r["artifact"] == "result.json"
        ]
        assert row["status"] == "match" and row["variant"] in (1, 2)

    # A new behaviour fails, shown against the closest variant.
    new = LONG_OUTPUTS[1] + " Also booked a call."
    behave(control, **{"TASK-001": {"mode": "vary", "outputs": [new]}})
    checked = project.cli("check", "--run", "--format", "json", "TASK-001")
    assert checked.exit_code == 1
    (row,) = [r for r in json.loads(checked.stdout)["results"] if r["artifact"] == "result.json"]
    assert row["status"] == "changed"
    closest = [n for n, text in enumerate(_variants(project), start=1) if text == LONG_OUTPUTS[1]]
    assert row["variant"] == closest[0]
    assert row["changes"] == [{"path": "/agentOutput", "baseline": LONG_OUTPUTS[1], "run": new}]


def _variants(project: object) -> list[str]:
    root = project.baselines  # type: ignore[attr-defined]
    files = sorted(root.rglob("TASK-001*.result.json"), key=lambda p: (len(p.name), p.name))
    return [json.loads(p.read_bytes())["agentOutput"] for p in files]


def test_more_than_ten_variants_are_refused_naming_the_paths(project: SiloProject) -> None:
    # What record --repeat 11 --variants hands the recorder, without 11 processes.
    for n in range(11):
        project.add_run("TASK-001", result=make_result(agent_output=f"Answer number {n}."))
    config = load_config(project.root)
    index = index_runs(config.runs_dir)
    store = BaselineStore(config.baselines_dir, config.artifacts)
    runs = sorted(index.runs_of("crm-west", "TASK-001"), key=lambda r: r.order)
    with pytest.raises(TooManyVariantsError) as refused:
        prepare_variants(config, store, TaskRef("TASK-001"), runs)
    assert refused.value.message.startswith(
        "refusing to record 11 variants of result.json from 11 rollouts (at most 10); "
        "the paths that vary: /agentOutput."
    )
    assert project.baseline_bytes() == {}
    assert len(prepare_variants(config, store, TaskRef("TASK-001"), runs[:10]).files) == 11
