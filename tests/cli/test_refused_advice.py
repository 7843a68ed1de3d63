"""A file named like a baseline that maps to no task is `not-canonical`, but `fmt` cannot
fix it: its next step is to rename or remove it, told apart from a fixable baseline by
the outcome's typed RefusedName (never by its prose). The printed command, run where it
was printed, makes the check pass."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.gitrepo import recorded
from support.silofixture import SiloProject, git

from silo_regress.judging.outcome import Report, Verdict
from silo_regress.judging.remedies import RefusedName
from silo_regress.project.config import load_config
from silo_regress.runs.cache import index_runs
from silo_regress.store.baselines import BaselineStore

REFUSED = "crm~west/TASK-002.result.json"  # '~' names variants: no environment has it


def _refused(root: Path) -> SiloProject:
    project = recorded(root)
    target = project.baselines / REFUSED
    target.parent.mkdir()
    shutil.copy(project.baselines / "TASK-002.result.json", target)
    return project


def _steps(project: SiloProject, *args: str) -> list[dict[str, Any]]:
    result = project.cli("check", *args, "--format", "json")
    assert result.exit_code == 1, result.output
    steps: list[dict[str, Any]] = json.loads(result.stdout)["nextSteps"]
    return steps


def _shell(cwd: Path, command: str) -> None:
    done = subprocess.run(
        command, shell=True, cwd=cwd, env=dict(os.environ), capture_output=True, check=False
    )
    assert done.returncode == 0, (command, done.stdout, done.stderr)


def test_the_refused_outcome_carries_a_typed_marker(tmp_path: Path) -> None:
    from silo_regress.judging.judge import check

    project = _refused(tmp_path / "repo")
    config = load_config(project.root)
    report: Report = check(config, index_runs(config.runs_dir), BaselineStore.of(config))
    (refused,) = [o for o in report.outcomes if o.verdict is Verdict.NOT_CANONICAL]
    assert refused.remedy == RefusedName(f"baselines/{REFUSED}", exact=True)


def test_a_refused_name_gets_rename_or_remove_not_fmt_and_removing_it_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _refused(tmp_path / "repo")
    monkeypatch.chdir(project.root)  # the printed paths are from where check ran
    steps = _steps(project)
    assert [s["verdict"] for s in steps] == ["not-canonical"]
    (step,) = steps
    assert "named like a baseline maps to no task" in step["why"]
    assert "rename it to TASK.ARTIFACT or ENV/TASK.ARTIFACT" in step["why"]
    assert step["commands"] == [f"rm -- 'baselines/{REFUSED}'"]
    text = project.cli("check").stdout
    assert "silo-regress fmt" not in text
    assert f"or remove it: rm -- 'baselines/{REFUSED}'" in text

    _shell(project.root, step["commands"][0])
    assert project.cli("check").exit_code == 0


def test_fmt_and_rename_are_two_steps_when_both_are_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _refused(tmp_path / "repo")
    baseline = project.baselines / "TASK-001.result.json"
    baseline.write_bytes(baseline.read_bytes().replace(b"\n  ", b"\n    "))
    monkeypatch.chdir(project.root)
    steps = _steps(project)
    assert [s["verdict"] for s in steps] == ["not-canonical", "not-canonical"]
    assert steps[0]["commands"] == ["silo-regress fmt"]
    assert steps[1]["commands"] == [f"rm -- 'baselines/{REFUSED}'"]


def test_in_the_hook_the_staged_file_is_removed_from_the_index_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _refused(tmp_path / "repo")
    git(project.root, "add", "baselines")
    monkeypatch.chdir(project.root)
    steps = _steps(project, "--staged")
    (step,) = [s for s in steps if s["verdict"] == "not-canonical"]
    assert step["commands"] == [f"git rm -q -f -- 'baselines/{REFUSED}'"]
    assert steps[-1]["verdict"] is None  # how to skip the hook once

    _shell(project.root, step["commands"][0])
    assert project.cli("check", "--staged").exit_code == 0
    assert not (project.baselines / REFUSED).exists()


def test_a_name_with_a_control_character_is_left_to_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = recorded(tmp_path / "repo")
    shutil.copy(
        project.baselines / "TASK-002.result.json", project.baselines / "esc\x1b[31m.result.json"
    )
    monkeypatch.chdir(project.root)
    (step,) = _steps(project)
    assert step["commands"] == []  # an escaped name is not one a shell would find
    assert "1 name with a control character, shown escaped above: by hand" in step["why"]
    text = project.cli("check").stdout
    assert text.rstrip("\n").endswith("shown escaped above: by hand)")
    assert "\x1b" not in text.replace("\\x1b", "")  # never the raw escape character


def test_a_merged_report_keeps_the_marker_and_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JSON report carries the marker (``refusedName``), so `merge` of shard reports
    advises rename-or-remove as the check did, not fmt."""
    project = _refused(tmp_path / "repo")
    monkeypatch.chdir(project.root)
    shards = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        done = project.cli("check", "--shard", f"{k}/2", "--format", "json", "-o", str(path))
        assert done.exit_code in (0, 1), done.output
        shards.append(str(path))
    results = [r for s in shards for r in json.loads(Path(s).read_text())["results"]]
    marked = [r for r in results if "refusedName" in r]
    assert [r["baseline"] for r in marked] == [f"baselines/{REFUSED}"]
    assert marked[0]["refusedName"] == {"exact": True}
    merged = project.cli("merge", *shards, "--format", "json")
    assert merged.exit_code == 1, merged.output
    steps = json.loads(merged.stdout)["nextSteps"]
    assert [s["commands"] for s in steps] == [[f"rm -- 'baselines/{REFUSED}'"]]


def test_a_malformed_marker_is_one_named_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _refused(tmp_path / "repo")
    monkeypatch.chdir(project.root)
    path = tmp_path / "report.json"
    project.cli("check", "--format", "json", "-o", str(path))
    document = json.loads(path.read_text())
    (n,) = [i for i, r in enumerate(document["results"]) if "refusedName" in r]
    document["results"][n]["refusedName"] = {"exact": "yes"}
    path.write_text(json.dumps(document))
    merged = project.cli("merge", str(path))
    assert merged.exit_code == 3, merged.output
    assert f"report.json: results[{n}].refusedName must be an object" in merged.stderr
    assert "Traceback" not in merged.output
