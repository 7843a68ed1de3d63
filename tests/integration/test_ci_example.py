"""The CI examples in examples/crm-demo/ci and the README: every command run as its job would."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest
import yaml

from silo_regress.cli import main

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "examples" / "crm-demo" / "ci"


def _commands(node: object) -> list[str]:
    if isinstance(node, dict):
        return [c for value in node.values() for c in _commands(value)]
    if isinstance(node, list):
        return [c for value in node for c in _commands(value)]
    if isinstance(node, str) and node.startswith("silo-regress "):
        return [node]
    return []


def _checkout(tmp_path: Path) -> Path:
    """What a CI job has: the repository's project (config, baselines, the example's runs)."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(ROOT / "baselines", root / "baselines")
    runs = Path("examples") / "crm-demo" / ".silo"
    shutil.copytree(ROOT / runs, root / runs)
    return root


def _run(command: str, *, cwd: Path, shard: int, total: int) -> int:
    """Run one of the example's commands as its CI job would, with the job's variables."""
    text = command.replace("${{ matrix.shard }}", str(shard))
    text = text.replace("$CI_NODE_INDEX", str(shard)).replace("$CI_NODE_TOTAL", str(total))
    words = shlex.split(text)
    assert words[0] == "silo-regress", command
    # The shell expands the glob in `merge shard-*.json`: so does this.
    argv = [
        arg
        for word in words[1:]
        for arg in (sorted(p.name for p in cwd.glob(word)) if "*" in word else [word])
    ]
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        return main(argv)
    finally:
        os.chdir(previous)


def _run_pipeline(
    checks: list[str], merges: list[str], *, root: Path, total: int
) -> list[tuple[str, int]]:
    codes = []
    for shard in range(1, total + 1):
        codes += [(c, _run(c, cwd=root, shard=shard, total=total)) for c in checks]
    codes += [(c, _run(c, cwd=root, shard=0, total=total)) for c in merges]
    return codes


def test_github_actions_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text(encoding="utf-8"))
    shards = workflow["jobs"]["check"]["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3, 4]
    assert workflow["jobs"]["merge"]["needs"] == "check"
    checks = _commands(workflow["jobs"]["check"])
    merges = _commands(workflow["jobs"]["merge"])
    assert any("--format github" in c and "--shard" in c for c in checks)
    assert merges and all(" merge " in c for c in merges)
    root = _checkout(tmp_path)
    summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    codes = _run_pipeline(checks, merges, root=root, total=len(shards))

    assert [code for _, code in codes] == [0] * len(codes), codes
    assert sorted(p.name for p in root.glob("shard-*.json")) == [f"shard-{k}.json" for k in shards]
    page = (root / "behaviour.html").read_text(encoding="utf-8")
    assert "<html" in page and "TASK-006" in page
    # Every shard appended its Markdown report to the job summary.
    assert summary.read_text(encoding="utf-8").count("match") >= len(shards)
    capsys.readouterr()


def test_gitlab_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))
    total = pipeline["behaviour"]["parallel"]
    assert total == 4
    assert pipeline["behaviour"]["artifacts"]["reports"]["junit"] == "junit.xml"
    checks = _commands(pipeline["behaviour"])
    merges = _commands(pipeline["behaviour-report"])
    assert any("--format junit" in c for c in checks)
    assert merges and all(" merge " in c for c in merges)
    root = _checkout(tmp_path)

    codes = _run_pipeline(checks, merges, root=root, total=total)

    assert [code for _, code in codes] == [0] * len(codes), codes
    assert (root / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert "TASK-006" in (root / "behaviour.md").read_text(encoding="utf-8")
    assert "TASK-006" in (root / "behaviour.html").read_text(encoding="utf-8")
    capsys.readouterr()


def test_ci_example_fails_on_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pipeline is a gate: a changed baseline fails its shard and the merged verdict."""
    pipeline = yaml.safe_load((CI / "gitlab-ci.yml").read_text(encoding="utf-8"))
    root = _checkout(tmp_path)
    baseline = root / "baselines" / "TASK-002.result.json"
    baseline.write_text(
        baseline.read_text(encoding="utf-8").replace('"reward": 1', '"reward": 0.5'),
        encoding="utf-8",
    )
    checks = _commands(pipeline["behaviour"])
    merges = _commands(pipeline["behaviour-report"])

    codes = _run_pipeline(checks, merges, root=root, total=pipeline["behaviour"]["parallel"])

    assert sorted({code for _, code in codes}) == [0, 1]
    assert all(code == 1 for command, code in codes if " merge " in command)
    assert "TASK-002" in (root / "behaviour.md").read_text(encoding="utf-8")
    capsys.readouterr()


def test_docs_ci_section_runs(tmp_path: Path) -> None:
    recipes = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = recipes.split("<!-- section:ci -->", 1)[1]
    blocks = section.split("```yaml")[1:]
    assert len(blocks) == 2  # the sharded GitHub Actions and GitLab CI shapes
    for block in blocks:
        yaml.safe_load(block.split("```", 1)[0])
    for block in recipes.split("```yaml")[1:]:  # every other recipe on the page parses too
        assert yaml.safe_load(block.split("```", 1)[0])


def test_standalone_example_records_the_root_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/crm-demo as its own (Node-style) project records the very bytes of baselines/."""
    example = tmp_path / "crm-demo"
    shutil.copytree(ROOT / "examples" / "crm-demo", example)

    assert main(["--project", str(example), "record", "--all"]) == 0
    assert main(["--project", str(example), "check"]) == 0

    recorded = {
        p.relative_to(example / "baselines"): p.read_bytes()
        for p in (example / "baselines").rglob("*")
        if p.is_file()
    }
    committed = {
        p.relative_to(ROOT / "baselines"): p.read_bytes()
        for p in (ROOT / "baselines").rglob("*")
        if p.is_file()
    }
    assert recorded == committed
    capsys.readouterr()
