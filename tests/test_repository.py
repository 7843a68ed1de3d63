"""The repository itself: its own check passes, the docs cover every command, the layers
hold, and the pre-commit path starts without the heavy imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from silofixture import SiloProject, make_result
from typer.testing import CliRunner

from silo_regress.cli import app

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "silo_regress"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_repository_check_passes() -> None:
    result = _run(["-m", "silo_regress", "check"], ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " match (" in result.stdout
    assert "changed" not in result.stdout


# --- documentation --------------------------------------------------------------


def _commands() -> dict[str, object]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_every_command_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = _commands()
    assert {"record", "check", "fmt", "status", "diff"} <= set(commands)
    missing = [name for name in commands if f"silo-regress {name}" not in readme]
    assert not missing, f"README.md never shows `silo-regress <cmd>` for: {', '.join(missing)}"


def test_every_command_has_help_text() -> None:
    for name, command in _commands().items():
        text = (getattr(command, "help", None) or "").strip()
        assert text, f"command {name!r} has no help text (give its function a docstring)"
        helped = CliRunner().invoke(app, [name, "--help"])
        assert helped.exit_code == 0, (name, helped.output)
        assert text.splitlines()[0][:40] in " ".join(helped.stdout.split()), name


# --- layering -------------------------------------------------------------------

# DESIGN.md's layers, lowest first. A module may import only from lower ranks, or
# from its own package (render.*, cli.*). Where the design puts modules side by side
# (canonical and pointer, compare and overview) and one builds on the other, the
# rank below splits the tie in the direction the code depends, so a cycle or a new
# sideways import still fails. A new module must be given a place here.
LAYERS: list[tuple[str, ...]] = [
    ("silo_regress", "silo_regress.errors"),
    ("silo_regress.pointer", "silo_regress.taskref", "silo_regress.filestat"),
    (
        "silo_regress.canonical",
        "silo_regress.volatile",
        "silo_regress.config",
        "silo_regress.gitio",
    ),
    ("silo_regress.toolpath",),  # the derived tool-events.json: runs reads artifacts through it
    ("silo_regress.runs", "silo_regress.baselines"),
    # runcache is an accelerator over runs: builds on it, runs must not import it
    ("silo_regress.runcache", "silo_regress.runclock"),
    ("silo_regress.jsondiff", "silo_regress.targets"),
    ("silo_regress.behaviour",),
    ("silo_regress.outcome",),
    (
        "silo_regress.judge",
        "silo_regress.recorder",
        "silo_regress.formatter",
        "silo_regress.scaffold",
    ),
    ("silo_regress.overview", "silo_regress.merger"),
    ("silo_regress.history",),
    ("silo_regress.render", "silo_regress.runner", "silo_regress.sharding"),
    ("silo_regress.cli",),
    ("silo_regress.__main__",),
]
PACKAGES = (
    "silo_regress.render",
    "silo_regress.runner",
    "silo_regress.cli",
    "silo_regress.behaviour",
)
# Third-party modules and the only places that may import them.
ONLY_IN = {
    "typer": ("silo_regress.cli",),
    "click": ("silo_regress.cli",),
    "git": ("silo_regress.gitio",),
    "pygments": ("silo_regress.render",),
    "rich": ("silo_regress.cli",),
}
# Slow to import: never at module level, so `check` on the hook path does not pay.
LAZY_ONLY = ("git", "pygments", "rich", "pydantic")


@dataclass(frozen=True)
class Import:
    module: str  # importing module
    target: str  # imported module (best resolution)
    line: int
    at_import_time: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.module, self.is_package, self.known = module, is_package, known
        self.found: list[Import] = []
        self.depth = 0  # inside functions: runs on call, not on import
        self.type_checking = 0

    def _add(self, target: str, node: ast.AST) -> None:
        self.found.append(
            Import(
                self.module,
                target,
                node.lineno,  # type: ignore[attr-defined]
                self.depth == 0 and self.type_checking == 0,
            )
        )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # noqa: N815

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            self.type_checking += 1
            for child in node.body:
                self.visit(child)
            self.type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.module if self.is_package else self.module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self._add(candidate if candidate in self.known else base, node)


def _imports() -> list[Import]:
    modules = _modules()
    found: list[Import] = []
    for name, path in modules.items():
        collector = _Collector(name, path.name == "__init__.py", set(modules))
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.found)
    return found


def _rank(module: str) -> int | None:
    for rank, layer in enumerate(LAYERS):
        for entry in layer:
            if module == entry or (entry in PACKAGES and module.startswith(entry + ".")):
                return rank
    return None


def _package(module: str) -> str | None:
    return next((p for p in PACKAGES if module == p or module.startswith(p + ".")), None)


def _within(module: str, owners: tuple[str, ...]) -> bool:
    return any(module == o or module.startswith(o + ".") for o in owners)


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in _modules() if _rank(m) is None]
    assert not unplaced, f"give these modules a layer in LAYERS (see DESIGN.md): {unplaced}"


def test_modules_import_only_from_lower_layers() -> None:
    problems = []
    for item in _imports():
        if not item.target.startswith("silo_regress"):
            continue
        own, other = _rank(item.module), _rank(item.target)
        if own is None or other is None:
            continue  # reported by test_every_module_has_a_layer
        same_package = _package(item.module) is not None and (
            _package(item.module) == _package(item.target)
        )
        if other < own or same_package or item.target == item.module:
            continue
        problems.append(f"{item.module}:{item.line} imports {item.target} (layer {other} >= {own})")
    assert not problems, "\n".join(problems)


def test_third_party_modules_stay_where_they_belong() -> None:
    problems = []
    for item in _imports():
        top = item.target.split(".")[0]
        owners = ONLY_IN.get(top)
        if owners is not None and not _within(item.module, owners):
            problems.append(f"{item.module}:{item.line} imports {item.target}")
        if top in LAZY_ONLY and item.at_import_time:
            problems.append(f"{item.module}:{item.line} imports {item.target} at module level")
    assert not problems, "\n".join(problems)


def test_only_the_command_line_prints_or_exits() -> None:
    problems = []
    for name, path in _modules().items():
        if _within(name, ("silo_regress.cli", "silo_regress.__main__")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(node) if isinstance(node, ast.Call) else ""
            callee = text.split("(")[0]
            if callee in ("print", "sys.exit", "exit", "sys.stdout.write", "sys.stderr.write"):
                problems.append(f"{name}:{node.lineno}: {callee}")
    assert not problems, "\n".join(problems)


def test_the_layering_checker_sees_violations() -> None:
    """The checker itself: a lazy import inside a function is found, and marked lazy."""
    tree = ast.parse(
        "import typer\nfrom . import runs\n"
        "def f():\n    import git\n"
        "if TYPE_CHECKING:\n    import pygments\n"
    )
    collector = _Collector("silo_regress.judge", False, {"silo_regress.runs"})
    collector.visit(tree)
    assert [(i.target, i.at_import_time) for i in collector.found] == [
        ("typer", True),
        ("silo_regress.runs", True),
        ("git", False),
        ("pygments", False),
    ]


# --- start-up -------------------------------------------------------------------

HEAVY = ("git", "pygments", "pydantic", "rich")


def _imported(stderr: str) -> set[str]:
    """Top-level module names from ``python -X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name.split(".")[0])
    return names


@pytest.fixture
def matching_project(project: SiloProject) -> SiloProject:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    project.add_run("TASK-003", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "--all").exit_code == 0
    return project


def test_check_on_a_matching_project_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    result = _run(["-X", "importtime", "-m", "silo_regress", "check"], matching_project.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 match" in result.stdout
    imported = _imported(result.stderr)
    assert {"silo_regress", "orjson"} <= imported  # the parser sees imports at all
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_a_failing_check_without_colour_imports_nothing_heavy(
    matching_project: SiloProject,
) -> None:
    matching_project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(reward=0)
    )
    args = ["-X", "importtime", "-m", "silo_regress", "--color", "never", "check"]
    plain = _run(args, matching_project.root)
    assert plain.returncode == 1
    assert not _imported(plain.stderr) & set(HEAVY)
    # Colour is the one reason to load pygments: proof that the probe would notice.
    coloured = _run([*args[:-3], "--color", "always", "check"], matching_project.root)
    assert coloured.returncode == 1
    assert "pygments" in _imported(coloured.stderr)
    assert "git" not in _imported(coloured.stderr)


def test_the_readme_failing_report_is_what_check_prints(tmp_path: Path) -> None:
    """The README's captured report, reproduced from the bundled example."""
    import shutil

    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "examples" / "crm-demo", demo)
    runner = CliRunner()

    def cli(*args: str) -> str:
        result = runner.invoke(app, ["--project", str(demo), "--color", "never", *args])
        return result.stdout

    cli("record", "--all")
    cli("record", "TASK-005", "--run", "run_20260315164458_ze7")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### What a failing check looks like", 1)[1]
    captured = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert cli("check", "TASK-005") == captured
