"""Projects inside real git repositories, for the git, hook and pre-commit tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support.silofixture import GIT_IDENTITY, SiloProject, git, git_init, make_project, make_result

BIN = Path(sys.executable).parent  # the venv's bin: silo-regress, pre-commit
SILO = BIN / "silo-regress"


def repo_project(root: Path, *, config: str = "") -> SiloProject:
    """A project at the top of a new git repository whose runs are ignored."""
    project = make_project(root, config=config)
    git_init(root)
    (root / ".gitignore").write_text(".silo/\n", encoding="utf-8")
    return project


def commit_all(project: SiloProject | Path, message: str, *, date: str | None = None) -> str:
    root = project if isinstance(project, Path) else project.root
    git(root, "add", "-A")
    env = {} if date is None else {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    run(root, "git", "commit", "-q", "--no-verify", "-m", message, env=env)
    return head(root)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").stdout.strip()


def recorded(root: Path, *, tasks: tuple[str, ...] = ("TASK-001", "TASK-002")) -> SiloProject:
    """A repository with one run per task, recorded and committed."""
    project = repo_project(root)
    for task in tasks:
        project.add_run(task)
    result = project.cli("record", "--all")
    assert result.exit_code == 0, result.output
    commit_all(project, "Record the tasks")
    return project


def rerun(project: SiloProject, task: str = "TASK-001", **result: object) -> None:
    """A newer run of ``task`` whose result.json is ``make_result(**result)``."""
    project.add_run(task, result=make_result(**result))  # type: ignore[arg-type]


def run(
    cwd: Path,
    *args: str | Path,
    env: dict[str, str] | None = None,
    path: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """A real subprocess with the fixed git identity and no user or system git config."""
    full = {**os.environ, **GIT_IDENTITY, **(env or {})}
    if path is not None:
        full["PATH"] = path
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=full, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def system_path() -> str:
    """PATH with the venv's bin first, as for a developer with the venv activated."""
    return f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"


def readme_snippet(name: str, *, document: str | None = None) -> str:
    """The fenced block after ``<!-- snippet:NAME -->``, as users copy it: from ``document``
    (a path from the repository's top) or else from the one page of README.md and docs/
    that holds it."""
    root = Path(__file__).resolve().parents[2]
    marker = f"<!-- snippet:{name} -->\n```"
    pages = (
        [root / document]
        if document is not None
        else [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    )
    found = [text for page in pages if marker in (text := page.read_text(encoding="utf-8"))]
    assert len(found) == 1, f"snippet {name!r} is in {len(found)} pages, not 1"
    text = found[0]
    start = text.index(marker)
    body = text.index("\n", start + len(marker)) + 1
    return text[body : text.index("```\n", body)]


FAKE_SILO = Path(__file__).with_name("fake_silo.py")


def agent_project(
    root: Path, *, extra: str = "", files: dict[str, str] | None = None
) -> SiloProject:
    """A committed project whose Silo is tests/fake_silo.py and whose agent is silo.agent.ts.

    ``extra`` is appended to the config; ``files`` are written and committed with it.
    """
    command = json.dumps([sys.executable, str(FAKE_SILO)])
    project = make_project(
        root,
        config=f'silo-command = {command}\nenvironment = "crm-west"\nagent = "silo.agent.ts"\n'
        + extra,
    )
    git_init(project.root)
    (project.root / ".gitignore").write_text(".silo/\n")
    (project.root / "silo.agent.ts").write_text("export default 1;\n")
    for name, text in (files or {}).items():
        (project.root / name).write_text(text)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "start")
    return project


def framework_commit(root: Path, home: Path, message: str) -> tuple[int, str]:
    """``git commit`` through the hooks the pre-commit framework installed (its cache in
    ``home``), on a PATH without this venv: (exit code, what the hooks printed)."""
    done = run(
        root,
        "git",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        message,
        env={"PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"},
        path="/usr/bin:/bin",
        check=False,
    )
    return done.returncode, done.stdout + done.stderr
