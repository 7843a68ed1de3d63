"""The documentation holds: the README's promises, the generated CLI reference, every link,
and every captured report, reproduced from the bundled example.

docs/commands.md is regenerated with ``python docs/gen_cli.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import typer.main
from support.gitrepo import readme_snippet
from typer.testing import CliRunner

from silo_regress.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
EXAMPLE = ROOT / "examples" / "crm-demo"
# Every page whose relative links must resolve.
PAGES = [README, ROOT / "CONTRIBUTING.md", ROOT / "bench" / "README.md", *sorted(DOCS.glob("*.md"))]


def _gen_cli() -> ModuleType:
    """docs/gen_cli.py, loaded as a module (docs/ is not a package)."""
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands() -> dict[str, object]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _visible(command: object) -> bool:
    return not getattr(command, "hidden", False)


# --- the README -------------------------------------------------------------------


def test_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 260, f"README.md has {len(lines)} lines; move reference text to docs/"
    # The two set-up commands, exactly as a fresh machine runs them.
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/silo-regress check"
        in lines
    )
    assert (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest'
        in lines
    )
    assert "Linux and macOS" in text and "fcntl" in text
    for step in ("init", "run", "record", "check", "review", "install-hook"):
        assert f"silo-regress {step}" in text, step
    assert "pre-commit install" in text


def test_the_bundled_example_is_configured_where_the_readme_says() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[tool.silo-regress]" in pyproject
    assert 'runs-dir = "examples/crm-demo/.silo/runs"' in pyproject


def _edit_json(path: Path, edit: dict[str, object]) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    value.update(edit)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def test_the_readme_behaviour_report_is_what_check_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's report: TASK-002's newest run edited, in a copy, to touch OPP-009."""
    demo = tmp_path / "demo"
    shutil.copytree(EXAMPLE, demo)
    runner = CliRunner()
    monkeypatch.chdir(demo)  # as the reader runs it: in the project, so no -C in the advice

    def cli(*args: str) -> str:
        return runner.invoke(app, ["--project", str(demo), "--color", "never", *args]).stdout

    cli("record", "--all")
    run = demo / ".silo" / "runs" / "run_20260316085733_12ze"
    result = json.loads((run / "result.json").read_text(encoding="utf-8"))
    checks = result["checks"]
    assert checks[2]["label"] == "closed opportunities untouched"
    checks[2].update(passed=False, detail="OPP-009 stage: Closed Lost")
    _edit_json(
        run / "result.json",
        {"passed": False, "reward": 0.75, "checksPassed": 3, "checksFailed": 1, "checks": checks},
    )
    state = json.loads((run / "state-diff.json").read_text(encoding="utf-8"))
    state["collections"]["opportunities"]["changed"].append("OPP-009")
    _edit_json(run / "state-diff.json", state)

    assert cli("check", "TASK-002") == readme_snippet("behaviour-report")


def test_the_documented_failing_report_is_what_check_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/verdicts.md's captured report, reproduced from the bundled example."""
    demo = tmp_path / "demo"
    shutil.copytree(EXAMPLE, demo)
    runner = CliRunner()
    monkeypatch.chdir(demo)  # as the reader runs it: in the project, so no -C in the advice

    def cli(*args: str) -> str:
        result = runner.invoke(app, ["--project", str(demo), "--color", "never", *args])
        return result.stdout

    cli("record", "--all")
    cli("record", "TASK-005", "--run-id", "run_20260315164458_ze7")
    page = (DOCS / "verdicts.md").read_text(encoding="utf-8")
    section = page.split("## What a failing check looks like", 1)[1]
    captured = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert cli("check", "TASK-005") == captured


# --- the CLI reference ------------------------------------------------------------


def test_commands_md_is_up_to_date() -> None:
    gen_cli = _gen_cli()
    current = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert gen_cli.updated(current) == current, (
        "docs/commands.md is out of date with the commands' --help; "
        f"regenerate it with: {gen_cli.REGENERATE}"
    )


def test_the_generated_reference_ignores_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    gen_cli = _gen_cli()
    monkeypatch.setenv("COLUMNS", "40")
    narrow = gen_cli.render()
    monkeypatch.setenv("COLUMNS", "250")
    assert gen_cli.render() == narrow
    assert max(len(line) for line in narrow.splitlines()) <= gen_cli.WIDTH


def test_every_command_has_help_text() -> None:
    for name, command in _commands().items():
        text = (getattr(command, "help", None) or "").strip()
        assert text, f"command {name!r} has no help text (give its function a docstring)"
        helped = CliRunner().invoke(app, [name, "--help"])
        assert helped.exit_code == 0, (name, helped.output)
        assert text.splitlines()[0][:40] in " ".join(helped.stdout.split()), name


def test_every_command_has_a_section_in_commands_md() -> None:
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    generated = page.split(_gen_cli().BEGIN, 1)[1]
    sections = set(re.findall(r"^## `silo-regress (\S+)`$", generated, re.MULTILINE))
    visible = {name for name, command in _commands().items() if _visible(command)}
    assert {"record", "check", "fmt", "status", "diff"} <= visible
    missing = sorted(visible - sections)
    assert not missing, f"docs/commands.md has no section for {missing}: {_gen_cli().REGENERATE}"
    gone = sorted(sections - visible)
    assert not gone, f"docs/commands.md documents commands that no longer exist: {gone}"


def test_every_command_is_in_the_readme_or_docs() -> None:
    """Named in prose, not only in the generated reference."""
    gen_cli = _gen_cli()
    texts = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        if gen_cli.BEGIN in text:
            head, rest = text.split(gen_cli.BEGIN, 1)
            text = head + rest.split(gen_cli.END, 1)[1]
        texts.append(text)
    prose = "\n".join(texts)
    missing = [
        name
        for name, command in _commands().items()
        if _visible(command) and f"silo-regress {name}" not in prose
    ]
    assert not missing, f"README.md and docs/ never show `silo-regress <cmd>` for: {missing}"


# --- links ------------------------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown page."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", "")).replace(" ", "-")
        anchors.add(slug)
    return anchors


def _links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def test_the_link_finder_sees_links_and_anchors() -> None:
    assert "docs/index.md" in _links(README)
    assert "check---run---repeat-n-every-rollout-against-the-accepted-variants" in _anchors(
        DOCS / "runner.md"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_docs_page_is_listed_in_the_index() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in DOCS.glob("*.md") if p.name != "index.md" and p.name not in index]
    assert not unlisted, f"docs/index.md does not link {unlisted}"


def _architecture_map() -> dict[str, set[str]]:
    """docs/architecture.md's package list: each `pkg/` item and the modules it names."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Packages and modules", 1)[1].split("\n## ", 1)[0]
    mapped: dict[str, set[str]] = {}
    package = ""
    for line in section.splitlines():
        if match := re.match(r"^- `(\w+)/`", line):
            package = match[1]
            mapped[package] = set()
        elif line.startswith("  ") and package:
            mapped[package] |= set(re.findall(r"`(\w+)`", line))
    return mapped


def test_the_architecture_maps_every_module() -> None:
    mapped = _architecture_map()
    assert "comparison" in mapped["judging"]
    unmapped = [
        f"{module.parent.name}/{module.stem}"
        for module in sorted((ROOT / "silo_regress").glob("*/*.py"))
        if module.stem != "__init__" and module.stem not in mapped.get(module.parent.name, set())
    ]
    assert not unmapped, f"docs/architecture.md does not map the modules {unmapped}"


def test_the_architecture_names_every_package() -> None:
    packages = sorted(p.parent.name for p in (ROOT / "silo_regress").glob("*/__init__.py"))
    assert "judging" in packages
    for page in (DOCS / "architecture.md", ROOT / "CONTRIBUTING.md"):
        text = page.read_text(encoding="utf-8")
        missing = [name for name in packages if f"{name}/" not in text]
        assert not missing, f"{page.relative_to(ROOT)} does not map the packages {missing}"
