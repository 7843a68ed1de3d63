"""The wheel and sdist users install: built from this repository, installed (not editable)
into a fresh virtualenv, and used from there in a copy of the bundled example.

Slow (about a minute): `python -m build` makes an isolated build environment, and the
fresh virtualenv installs silo-regress's dependencies from the package registry (or
pip's cache). Everything runs once per session, in one fixture.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from support.gitrepo import run
from support.silofixture import git, git_init

from silo_regress import __version__

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "crm-demo"
# Captured before any test points HOME elsewhere: pip's cache is reused.
USER_ENVIRONMENT = {
    k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "VIRTUAL_ENV", "PYTHON"))
}


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def path(self) -> str:
        """PATH as in a shell with this venv activated, and nothing of the test's venv."""
        return f"{self.bin}{os.pathsep}/usr/bin{os.pathsep}/bin"


def _source_copy(target: Path) -> Path:
    """What a checkout holds: the files the build reads, without build leftovers."""
    target.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(
        ROOT / "silo_regress",
        target / "silo_regress",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    return target


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    source = _source_copy(tmp_path_factory.mktemp("wheel") / "checkout")
    dist = source.parent / "dist"
    env = {**USER_ENVIRONMENT, "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    venv = source.parent / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    return Installed(wheel=wheel, sdist=sdist, venv=venv)


def test_wheel_and_sdist_hold_the_package_typed(installed: Installed) -> None:
    """slow: builds with `python -m build` (the fixture)."""
    assert installed.wheel.name == f"silo_regress-{__version__}-py3-none-any.whl"
    assert installed.sdist.name == f"silo_regress-{__version__}.tar.gz"
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read(f"silo_regress-{__version__}.dist-info/entry_points.txt")
    assert "silo_regress/py.typed" in names
    assert "silo_regress/cli/quick.py" in names
    assert b"silo-regress = silo_regress.cli:main" in entry_points
    # Nothing but the package: no tests, examples or baselines in what users install.
    assert {n.split("/")[0] for n in names} == {
        "silo_regress",
        f"silo_regress-{__version__}.dist-info",
    }
    with tarfile.open(installed.sdist) as sdist:
        members = {m.name.split("/", 1)[-1] for m in sdist.getmembers()}
    assert {"pyproject.toml", "README.md", "silo_regress/py.typed"} <= members


def _example(tmp_path: Path) -> Path:
    project = tmp_path / "crm demo"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("ci"))
    git_init(project)
    return project


def test_installed_wheel_sets_up_records_and_gates_the_example(
    installed: Installed, tmp_path: Path
) -> None:
    """slow: the installed console script, never this checkout, does every step."""
    project = _example(tmp_path)

    def tool(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(project, "silo-regress", *args, path=installed.path(), check=check)

    where = run(
        project,
        "python",
        "-c",
        "import silo_regress; print(silo_regress.__file__)",
        path=installed.path(),
    )
    assert where.stdout.startswith(str(installed.venv)), where.stdout
    installed_typed = Path(where.stdout.strip()).with_name("py.typed")
    assert installed_typed.is_file()
    assert tool("--version").stdout == f"silo-regress {__version__}\n"

    init = tool("init")
    assert "unchanged  silo-regress.toml: config" in init.stdout
    assert "created    .gitignore: .silo/ ignored" in init.stdout
    recorded = tool("record", "--all")
    assert "crm-east/TASK-001" in recorded.stdout + recorded.stderr
    checked = tool("check")
    assert checked.returncode == 0
    assert " match (" in checked.stdout
    git(project, "add", "-A")
    run(project, "git", "commit", "-qm", "Record the example")

    # The published hook definitions, run as pre-commit runs them (language: python: the
    # entry is a console script of the installed package; files are passed unless told not to).
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    staged = sorted(
        p.relative_to(project).as_posix() for p in (project / "baselines").rglob("*.json")
    )

    def hook(definition: dict[str, object]) -> subprocess.CompletedProcess[str]:
        files = staged if definition.get("pass_filenames", True) else []
        argv = shlex.split(str(definition["entry"]))
        framework = {"PRE_COMMIT": "1"}  # what pre-commit sets for its hooks
        return run(project, *argv, *files, env=framework, path=installed.path(), check=False)

    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"silo-regress-fmt", "silo-regress-check"}
    for definition in hooks:
        done = hook(definition)
        assert done.returncode == 0, (definition["id"], done.stdout, done.stderr)

    # A staged baseline that no run matches: the check hook blocks, from the wheel too.
    baseline = project / "baselines" / "TASK-002.result.json"
    baseline.write_text(baseline.read_text().replace('"reward": 1', '"reward": 0.5', 1))
    git(project, "add", "baselines")
    blocked = hook(by_id["silo-regress-check"])
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "CHANGED  TASK-002 (crm-west)  result.json" in blocked.stdout
    assert "or skip this hook once: SKIP=silo-regress-check git commit" in blocked.stdout


def test_pipx_installs_the_release_tag_from_a_git_url(tmp_path: Path) -> None:
    """slow: `pipx install git+URL@v0.3.0`, as docs/install.md says, from a repository
    whose tag is the one the snippets name."""
    from silo_regress.recording.scaffold import release_tag

    source = _source_copy(tmp_path / "silo-regress")
    git_init(source)
    git(source, "add", "-A")
    run(source, "git", "commit", "-qm", "release")
    git(source, "tag", release_tag())
    home = tmp_path / "pipx"
    env = {
        **USER_ENVIRONMENT,
        "PIPX_HOME": str(home),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
    }
    pipx = Path(sys.executable).parent / "pipx"
    done = subprocess.run(
        [str(pipx), "install", f"git+file://{source}@{release_tag()}"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    version = subprocess.run(
        [str(home / "bin" / "silo-regress"), "--version"], capture_output=True, text=True
    )
    assert version.stdout == f"silo-regress {__version__}\n"
