"""The CI examples in examples/crm-demo/ci and the README: valid YAML, real commands."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml
from typer.testing import CliRunner

from silo_regress.cli import app

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / "examples" / "crm-demo" / "ci"


def _commands(node: object) -> list[str]:
    if isinstance(node, dict):
        return [c for value in node.values() for c in _commands(value)]
    if isinstance(node, list):
        return [c for value in node for c in _commands(value)]
    if isinstance(node, str) and node.startswith("silo-regress "):
        return [node]
    return []


def _check_command(command: str) -> None:
    """The command's words parse: every option exists (``--help`` stops before running)."""
    text = command.replace("${{ matrix.shard }}", "1")
    words = shlex.split(text.replace("$CI_NODE_INDEX", "1").replace("$CI_NODE_TOTAL", "4"))
    assert words[0] == "silo-regress"
    assert any(w in {"check", "merge"} for w in words), command
    result = CliRunner().invoke(app, [*words[1:], "--help"])
    assert result.exit_code == 0, (command, result.output)


def test_github_actions_example() -> None:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text(encoding="utf-8"))
    assert workflow["jobs"]["check"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert workflow["jobs"]["merge"]["needs"] == "check"
    commands = _commands(workflow)
    assert any("--format github" in c and "--shard" in c for c in commands)
    assert any(" merge " in c for c in commands)
    for command in commands:
        _check_command(command)


def test_gitlab_example() -> None:
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))
    assert pipeline["behaviour"]["parallel"] == 4
    assert pipeline["behaviour"]["artifacts"]["reports"]["junit"] == "junit.xml"
    commands = _commands(pipeline)
    assert any("--format junit" in c for c in commands)
    assert any(" merge " in c for c in commands)
    for command in commands:
        _check_command(command)


def test_readme_ci_section_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("<!-- section:ci -->", 1)[1]
    blocks = section.split("```yaml")[1:]
    assert len(blocks) == 2
    for block in blocks:
        yaml.safe_load(block.split("```", 1)[0])
