"""The set-ups of docs/distributed.md, run here as written: the GitHub workflow's jobs
(its ``run:`` lines with bash, one clone per matrix job, artifacts passed between the
jobs), the Kubernetes Indexed Job's command with ``JOB_COMPLETION_INDEX`` set, and the
``xargs -P`` lines; each merge must give the one-machine check's JSON report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.unitkit import SILO_REGRESS, cli, clone, environ, make_suite, seeded

DOC = Path(__file__).parents[2] / "docs" / "distributed.md"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def block_with(language: str, marker: str) -> str:
    (found,) = [b for b in blocks(language) if marker in b]
    return found


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    control = tmp_path / "control" / "control.json"
    origin = make_suite(tmp_path / "origin", control, tasks=3)
    seeded(control, seed=7, rate=0.75)
    # A runner's tools: npm and pip are set up already (no-ops), silo-regress installed.
    shims = tmp_path / "shims"
    shims.mkdir()
    for tool in ("npm", "pip"):
        (shims / tool).write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        (shims / tool).chmod(0o755)
    (shims / "silo-regress").symlink_to(SILO_REGRESS)
    env = environ(control, PATH=f"{shims}{os.pathsep}{os.environ['PATH']}")
    return origin, control, env


def one_machine_json(origin: Path, tmp_path: Path, env: dict[str, str], repeat: int) -> str:
    where = clone(origin, tmp_path / "one-machine", env)
    args = ("check", "--run", "--repeat", str(repeat), "--format", "json")
    return cli(where, *args, env=env, check=None).stdout


def merged_json(origin: Path, reports: list[Path], env: dict[str, str]) -> str:
    paths = [str(p) for p in reports]
    return cli(origin, "merge", *paths, "--format", "json", env=env, check=None).stdout


def substitute(text: str, values: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def run_job(
    job: dict[str, Any],
    *,
    workspace: Path,
    origin: Path,
    artifacts: Path,
    values: dict[str, str],
    env: dict[str, str],
) -> list[subprocess.CompletedProcess[str]]:
    """A job's steps as a runner takes them: uses: emulated, run: through bash."""
    done = []
    job_env = {**env, **{k: substitute(str(v), values) for k, v in job.get("env", {}).items()}}
    for step in job["steps"]:
        uses = step.get("uses", "")
        given = {k: substitute(str(v), values) for k, v in step.get("with", {}).items()}
        if uses.startswith("actions/checkout"):
            clone(origin, workspace, env)
        elif uses.startswith("actions/upload-artifact"):
            target = artifacts / given["name"]
            target.mkdir(parents=True)
            shutil.copy(workspace / given["path"], target)
        elif uses.startswith("actions/download-artifact"):
            into = workspace / given["path"]
            into.mkdir(parents=True, exist_ok=True)
            for folder in sorted(artifacts.glob(given["pattern"])):
                for file in folder.iterdir():
                    shutil.copy(file, into)
        elif "run" in step:
            script = substitute(step["run"], values)
            ran = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                cwd=workspace,
                env=job_env,
                capture_output=True,
                text=True,
                check=False,
            )
            done.append(ran)
            if ran.returncode != 0:
                break
    return done


def test_the_github_workflow_runs_its_units_and_merges_them(
    suite: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    origin, _, env = suite
    workflow = yaml.safe_load(block_with("yaml", "jobs:"))
    units, merge = workflow["jobs"]["units"], workflow["jobs"]["merge"]
    assert merge["needs"] == "units" and merge["if"] == "always()"
    assert units["strategy"]["fail-fast"] is False
    matrix = units["strategy"]["matrix"]["unit"]
    artifacts = tmp_path / "artifacts"
    for index, unit in enumerate(matrix):
        values = {
            "matrix.unit": str(unit),
            "strategy.job-index": str(index),
            "strategy.job-total": str(len(matrix)),
        }
        steps = run_job(
            units,
            workspace=tmp_path / f"job-{unit}",
            origin=origin,
            artifacts=artifacts,
            values=values,
            env=env,
        )
        assert all(s.returncode == 0 for s in steps), [s.stderr for s in steps]
        assert f"unit {unit}/{len(matrix)}:" in steps[-1].stdout
    steps = run_job(
        merge, workspace=tmp_path / "merge", origin=origin, artifacts=artifacts, values={}, env=env
    )
    judged = steps[-1]
    assert "stats gate" in judged.stdout, judged.stderr
    repeat = int(re.search(r"--repeat (\d+)", units["steps"][4]["run"]).group(1))  # type: ignore[union-attr]
    reports = sorted((tmp_path / "merge" / "units").glob("unit-*.json"))
    assert len(reports) == len(matrix)
    expected = one_machine_json(origin, tmp_path, env, repeat)
    assert merged_json(origin, reports, env) == expected
    assert judged.returncode == (1 if json.loads(expected)["stats"]["failed"] else 0)


def test_the_kubernetes_indexed_job_runs_each_index_as_its_unit(
    suite: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    origin, _, env = suite
    manifest = yaml.safe_load(block_with("yaml", "kind: Job"))
    spec = manifest["spec"]
    assert spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    (mount,) = container["volumeMounts"]
    reports = tmp_path / "reports-volume"
    reports.mkdir()
    pod_env = {**env, **{e["name"]: e["value"] for e in container["env"]}}
    for index in range(spec["completions"]):
        pod = clone(origin, tmp_path / f"pod-{index}", env)
        argv = [*container["command"], *container["args"]]
        argv = [a.replace(mount["mountPath"], str(reports)) for a in argv]
        ran = subprocess.run(
            argv,
            cwd=pod,
            env={**pod_env, "JOB_COMPLETION_INDEX": str(index)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
    written = sorted(reports.glob("unit-*.json"))
    assert [p.name for p in written] == sorted(f"unit-{i}.json" for i in range(spec["completions"]))
    units = {json.loads(p.read_text())["unit"]["index"] for p in written}
    assert units == set(range(1, spec["completions"] + 1))
    repeat = int(re.search(r"--repeat (\d+)", container["args"][0]).group(1))  # type: ignore[union-attr]
    assert merged_json(origin, written, env) == one_machine_json(origin, tmp_path, env, repeat)


def test_xargs_on_one_machine_runs_every_unit_in_its_own_worktree(
    suite: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    origin, _, env = suite
    script = block_with("sh", "xargs -P")
    ran = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=origin,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    expected = one_machine_json(origin, tmp_path, env, 8)
    assert ran.returncode == (1 if json.loads(expected)["stats"]["failed"] else 0), ran.stderr
    assert "stats gate" in ran.stdout
    reports = sorted(tmp_path.glob("unit-*.json"))
    assert len(reports) == 8
    assert merged_json(origin, reports, env) == expected
    assert not (origin / ".silo" / "runs").exists()  # every rollout ran in a worktree
