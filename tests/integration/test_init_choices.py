"""init prints (and with --write writes) one hook, points every snippet at a real source
or at marked placeholders, writes the stats gate's action inputs for a stats project,
and a key set twice in the config is named (issue 33)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from support.silofixture import SiloProject, git_init
from test_node_workflow import printed_blocks

from silo_regress.recording import scaffold

ROOT = Path(__file__).resolve().parents[2]
ACTION_INPUTS = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])


def _bare_dir(root: Path, config: str | None = None) -> SiloProject:
    root.mkdir(parents=True)
    git_init(root)
    if config is not None:
        (root / "silo-regress.toml").write_text(config)
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


def test_init_prints_one_hook_and_the_workflow(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent")
    done = project.cli("init")
    assert done.exit_code == 0, done.output
    local, workflow = printed_blocks(done.stdout)
    assert yaml.safe_load(local)["repos"][0]["repo"] == "local"
    assert "jobs" in yaml.safe_load(workflow)
    assert "husky" not in local and "lefthook" not in done.stdout.split("Another hook")[0]
    assert "Another hook instead: `silo-regress init --hook husky|lefthook|git`." in done.stdout
    every = project.cli("init", "--hook", "all").stdout
    print(
        f"init prints {len(done.stdout.splitlines())} lines; --hook all {len(every.splitlines())}"
    )
    assert len(done.stdout.splitlines()) < len(every.splitlines()) - 20

    husky = project.cli("init", "--hook", "husky")
    (block, _) = printed_blocks(husky.stdout)
    assert block == scaffold.husky_snippet(scaffold.Layout(prefix="", baselines="baselines"))


@pytest.mark.parametrize(
    ("hook", "path"),
    [
        ("pre-commit", ".pre-commit-config.yaml"),
        ("husky", ".husky/pre-commit"),
        ("lefthook", "lefthook.yml"),
        ("git", ".git/hooks/pre-commit"),
    ],
)
def test_init_hook_write_writes_that_hook_only(tmp_path: Path, hook: str, path: str) -> None:
    project = _bare_dir(tmp_path / "agent")
    done = project.cli("init", "--hook", hook, "--write")
    assert done.exit_code == 0, done.output
    written = project.root / path
    assert written.is_file()
    assert "check --staged --allow-no-runs" in written.read_text()
    others = {".pre-commit-config.yaml", ".husky/pre-commit", "lefthook.yml"} - {path}
    assert not [p for p in others if (project.root / p).exists()]
    assert (project.root / scaffold.WORKFLOW_PATH).is_file()
    again = project.cli("init", "--hook", hook, "--write")
    assert again.exit_code == 0 and "unchanged" in again.stdout


def test_snippets_name_placeholders_until_a_source_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _bare_dir(tmp_path / "agent")
    plain = project.cli("init", "--hook", "all").stdout
    assert "uses: OWNER/silo-regress@REF  # placeholder" in plain
    assert "rev: REF  # placeholder" in plain

    source = "https://github.com/acme/silo-regress@v0.4.1"
    filled = project.cli("init", "--hook", "pre-commit", "--source", source)
    _, remote, workflow = printed_blocks(filled.stdout)
    repo = yaml.safe_load(remote)["repos"][0]
    assert (repo["repo"], repo["rev"]) == ("https://github.com/acme/silo-regress", "v0.4.1")
    uses = [s["uses"] for s in yaml.safe_load(workflow)["jobs"]["silo-regress"]["steps"]]
    assert uses[-2:] == ["acme/silo-regress@v0.4.1"] * 2
    assert "OWNER" not in filled.stdout and "REF" not in filled.stdout

    monkeypatch.setenv("SILO_REGRESS_SOURCE", "git@ghe.corp.example:tools/silo-regress.git@abc1234")
    enterprise = project.cli("init").stdout
    assert "uses: tools/silo-regress@abc1234" in enterprise

    bad = project.cli("init", "--source", "https://github.com/acme/silo-regress")
    assert bad.exit_code == 3
    assert "--source is 'https://github.com/acme/silo-regress': use URL@REF" in bad.output


def test_no_file_of_the_repository_names_a_tag_that_does_not_exist() -> None:
    tags = subprocess.run(
        ["git", "-C", str(ROOT), "tag"], capture_output=True, text=True, check=False
    ).stdout.split()
    for page in [ROOT / "README.md", ROOT / "action.yml", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for ref in ("@v0.3.0", "rev: v0.3.0", "@v0.4.0\n"):
            if ref.strip("@\n").removeprefix("rev: ") not in tags:
                assert ref not in text, (page.name, ref)


def test_init_write_gives_a_stats_project_the_stats_gate_inputs(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent", config='gate = "stats"\n')
    done = project.cli("init", "--write")
    assert done.exit_code == 0, done.output
    workflow = yaml.safe_load((project.root / scaffold.WORKFLOW_PATH).read_text())
    (check,) = [
        s
        for s in workflow["jobs"]["silo-regress"]["steps"]
        if s.get("with", {}).get("command") == "check --run"
    ]
    assert {"repeat", "max-repeat", "suite-gate"} <= set(check["with"])
    assert check["with"]["repeat"] == ""  # empty: the project's config decides
    assert set(check["with"]) <= ACTION_INPUTS
    exact = _bare_dir(tmp_path / "exact")
    exact.cli("init", "--write")
    plain = yaml.safe_load((exact.root / scaffold.WORKFLOW_PATH).read_text())
    assert "repeat" not in str(plain)


def test_a_key_set_twice_is_named_and_the_readme_recipe_runs_twice(tmp_path: Path) -> None:
    project = _bare_dir(tmp_path / "agent", config='environment = "crm-west"\n')
    (project.root / "silo-regress.toml").write_text(
        'runs-dir = ".silo/runs"\nenvironment = "crm-west"\nenvironment = "crm-east"\n'
    )
    done = project.cli("status")
    assert done.exit_code == 3
    assert "key 'environment' is set twice; keep one" in done.output

    (project.root / "silo-regress.toml").write_text('environment = "crm-west"\n')
    line = next(
        text
        for text in (ROOT / "README.md").read_text().splitlines()
        if "environment = " in text and ">>" in text
    )
    for _ in range(2):
        subprocess.run(["sh", "-c", line], cwd=project.root, check=True)
    assert (project.root / "silo-regress.toml").read_text() == 'environment = "crm-west"\n'
