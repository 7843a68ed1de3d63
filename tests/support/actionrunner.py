"""Run a composite action's ``run:`` steps here, as a GitHub runner would.

Each step's ``env:`` is evaluated (``${{ inputs.X }}``, ``${{ github.action_path }}``,
``${{ steps.ID.outputs.NAME }}``: the only expressions an action should pass to a
shell), then its script runs with ``bash --noprofile --norc -eo pipefail``, GitHub's
``shell: bash``, with fresh GITHUB_OUTPUT and the job's GITHUB_STEP_SUMMARY and
GITHUB_PATH files. ``uses:`` steps (setup-python, upload-artifact) are skipped: they
are other projects' code. The first failing step ends the run, as on GitHub.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> outputs
    ran: list[str] = field(default_factory=list)  # names of the steps that ran

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def base_path(tmp: Path) -> str:
    """PATH of a bare runner: a python3 (not this test's venv) and the system's tools."""
    shims = tmp / "runner-bin"
    shims.mkdir(exist_ok=True)
    python = shims / "python3"
    if not python.exists():
        python.symlink_to(getattr(sys, "_base_executable", sys.executable))
    return f"{shims}{os.pathsep}/usr/bin{os.pathsep}/bin"


def run_action(
    action: dict[str, Any],
    *,
    action_path: Path,
    workspace: Path,
    runner_temp: Path,
    inputs: Mapping[str, str] | None = None,
    skip: Mapping[str, dict[str, str]] | None = None,
    env: Mapping[str, str] | None = None,
) -> ActionRun:
    """Run ``action``'s steps in ``workspace``; ``skip`` maps step ids to outputs to
    assume instead of running them (an install done once for many tests)."""
    declared = action["inputs"]
    given = dict(inputs or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:  # GitHub only warns ("Unexpected input(s)"); a test should fail
        raise AssertionError(f"unexpected input(s) {unknown}; valid inputs are {sorted(declared)}")
    values = {
        name: given.get(name, str(spec.get("default", ""))) for name, spec in declared.items()
    }
    runner_temp.mkdir(parents=True, exist_ok=True)
    summary = runner_temp / "step-summary.md"
    github_path = runner_temp / "github-path"
    summary.touch()
    github_path.touch()
    outputs: dict[str, dict[str, str]] = {k: dict(v) for k, v in (skip or {}).items()}
    result = ActionRun(code=0, stdout="", stderr="", summary="", outputs=outputs)

    def evaluate(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression.startswith("inputs."):
                return values[expression.removeprefix("inputs.")]
            if expression == "github.action_path":
                return str(action_path)
            parts = expression.split(".")
            if len(parts) == 4 and parts[0] == "steps" and parts[2] == "outputs":
                return outputs.get(parts[1], {}).get(parts[3], "")
            raise AssertionError(f"expression {expression!r} is not one an action step may use")

        return EXPRESSION.sub(one, text)

    for number, step in enumerate(action["runs"]["steps"]):
        if "uses" in step or step.get("id") in (skip or {}):
            continue
        assert step.get("shell") == "bash", step
        assert "if" not in step, "a run step here always runs"
        output_file = runner_temp / f"github-output-{number}"
        output_file.write_text("")
        step_env = {
            "HOME": os.environ.get("HOME", "/root"),
            "PATH": base_path(runner_temp),
            "LANG": "C.UTF-8",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_PATH": str(github_path),
            "RUNNER_TEMP": str(runner_temp),
            **(env or {}),
            **{k: evaluate(str(v)) for k, v in (step.get("env") or {}).items()},
        }
        script = runner_temp / f"step-{number}.sh"
        script.write_text(step["run"], encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            check=False,
        )
        result.ran.append(step["name"])
        result.stdout += done.stdout
        result.stderr += done.stderr
        if "id" in step:
            outputs[step["id"]] = parse_outputs(output_file.read_text(encoding="utf-8"))
        if done.returncode != 0:
            result.code = done.returncode
            break
    result.summary = summary.read_text(encoding="utf-8")
    return result


def parse_outputs(text: str) -> dict[str, str]:
    """``name=value`` lines, as the steps here write them (no multi-line values)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        assert equals, f"GITHUB_OUTPUT line without '=': {line!r}"
        found[name] = value
    return found
