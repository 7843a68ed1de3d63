"""The files ``init`` and ``install-hook`` write, and the snippets they print.

Every step is idempotent: a file that already says what it should is left
byte for byte as it is, so running ``init`` twice changes nothing.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from silo_regress.errors import ConfigError, InputError
from silo_regress.judging.outcome import HOOK_VARIABLE, Hook
from silo_regress.project.config import Config
from silo_regress.store.baselines import write_atomic

CONFIG_SECTION = '[tool.silo-regress]\nruns-dir = ".silo/runs"\nbaselines-dir = "baselines"\n'
GITATTRIBUTES_LINE = "* -text diff"
GITATTRIBUTES = (
    "# silo-regress compares baselines byte for byte: git must never convert their line\n"
    "# endings (-text, whatever core.autocrlf says), and git diff shows them as text (diff).\n"
    f"{GITATTRIBUTES_LINE}\n"
)
IGNORE_LINE = ".silo/"
_IGNORE_FORMS = {".silo", ".silo/", "/.silo", "/.silo/", ".silo/*", "/.silo/*"}
HOOK_MARKER = "# silo-regress: installed by `silo-regress install-hook`"
HOOK_COMMAND = ("check", "--staged", "--allow-no-runs")


class StepState(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Step:
    path: Path
    state: StepState
    what: str


@dataclass(frozen=True)
class Inferred:
    """What ``init`` can tell about a project without asking: each None when unclear."""

    environment: str | None = None
    agent: str | None = None

    def toml_lines(self) -> list[str]:
        lines = ['runs-dir = ".silo/runs"', 'baselines-dir = "baselines"']
        if self.environment is not None:
            lines.append(f"environment = {_toml_string(self.environment)}")
        if self.agent is not None:
            lines.append(f"agent = {_toml_string(self.agent)}")
            lines.append(f"inputs = [{_toml_string(self.agent)}]")
        return lines


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_SKIPPED_DIRS = {".git", ".silo", "node_modules", "dist", "build", ".venv", "venv"}


def infer_settings(project: Path, environments: Collection[str]) -> Inferred:
    """The environment when the runs hold exactly one; the agent when one ``*.agent.ts``."""
    environment = next(iter(environments)) if len(environments) == 1 else None
    agents: list[str] = []
    budget = 20_000  # entries looked at: a monorepo is not walked to the end
    for top, dirs, files in os.walk(project):
        budget -= len(dirs) + len(files)
        if budget < 0:
            break
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in files:
            if name.endswith(".agent.ts"):
                agents.append(os.path.relpath(os.path.join(top, name), project))
    agent = agents[0].replace(os.sep, "/") if len(agents) == 1 else None
    return Inferred(environment=environment, agent=agent)


def add_config_section(project: Path, inferred: Inferred | None = None) -> Step:
    """Append ``[tool.silo-regress]`` to pyproject.toml unless it has the section.

    A project without pyproject.toml (a Node project, as Silo projects are) gets
    ``silo-regress.toml`` instead. A symlinked pyproject.toml is written through
    the link, which stays a link.
    """
    inferred = inferred or Inferred()
    pyproject = project / "pyproject.toml"
    if not os.path.lexists(pyproject):
        for name in ("silo-regress.toml", ".silo-regress.toml"):
            if os.path.lexists(project / name):
                return Step(project / name, StepState.UNCHANGED, "config")
        standalone = project / "silo-regress.toml"
        lines = inferred.toml_lines()
        write_atomic(standalone, ("\n".join(lines) + "\n").encode())
        return Step(standalone, StepState.CREATED, "config: " + ", ".join(lines))
    what = "[tool.silo-regress] section"
    target = Path(os.path.realpath(pyproject)) if os.path.islink(pyproject) else pyproject
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        raise InputError(
            f"{pyproject}: a symlink to nothing ({target}); fix or remove it"
        ) from None
    except OSError as exc:
        raise InputError(f"{pyproject}: cannot read: {exc.strerror}") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError(f"{pyproject}: not valid TOML, so it is left alone: {exc}") from None
    tool = document.get("tool")
    if isinstance(tool, dict) and "silo-regress" in tool:
        return Step(pyproject, StepState.UNCHANGED, what)
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    if not data.strip() or data.endswith(newline * 2):
        gap = b""
    else:
        gap = newline if data.endswith(newline) else newline * 2
    body = "[tool.silo-regress]\n" + "\n".join(inferred.toml_lines()) + "\n"
    section = body.encode().replace(b"\n", newline)
    write_atomic(target, data + gap + section)
    return Step(pyproject, StepState.UPDATED, what + ": " + ", ".join(inferred.toml_lines()))


def write_gitattributes(baselines_dir: Path) -> Step:
    """``baselines/.gitattributes``: no line-ending conversion, diffs as text."""
    return _ensure_line(
        baselines_dir / ".gitattributes",
        GITATTRIBUTES.rstrip("\n"),
        present={GITATTRIBUTES_LINE},
        what=f"`{GITATTRIBUTES_LINE}` for baselines",
    )


def ignore_runs(project: Path) -> Step:
    """``.silo/`` in the project's .gitignore: runs are scratch space, never committed."""
    return _ensure_line(
        project / ".gitignore", IGNORE_LINE, present=_IGNORE_FORMS, what=f"{IGNORE_LINE} ignored"
    )


def _ensure_line(path: Path, line: str, *, present: Collection[str], what: str) -> Step:
    """Create ``path`` holding ``line``, or append it unless a form of it is there."""
    existing = _read_text(path)
    if existing is None:
        write_atomic(path, f"{line}\n".encode())
        return Step(path, StepState.CREATED, what)
    if any(old.strip() in present for old in existing.splitlines()):
        return Step(path, StepState.UNCHANGED, what)
    write_atomic(path, f"{_with_newline(existing)}{line}\n".encode())
    return Step(path, StepState.UPDATED, what)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


# --- snippets ----------------------------------------------------------------------


def _files_pattern(config: Config) -> str:
    return "^" + re.escape(config.relative(config.baselines_dir)) + "/.*\\.json$"


# A local hook with a bare `silo-regress` entry fails every commit made where the
# virtualenv is not on PATH (an IDE, a GUI client, a fresh shell). The entry looks on
# PATH first, then in the project's usual virtualenv folders, and says how to go on
# when it finds neither, instead of pre-commit's "Executable not found".
FIND_TOOL = (
    'sh -c \'if command -v silo-regress >/dev/null 2>&1; then exec silo-regress "$@"; fi;'
    " for t in .venv/bin/silo-regress venv/bin/silo-regress; do"
    ' if [ -x "$t" ]; then exec "$t" "$@"; fi; done;'
    ' echo "silo-regress is not on PATH nor in .venv/bin or venv/bin; install it there,'
    " or skip this hook once with SKIP=$0 git commit\" >&2; exit 1'"
)


def pre_commit_snippet(config: Config) -> str:
    """A ``.pre-commit-config.yaml`` running the silo-regress installed for this project."""
    return (
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: silo-regress-fmt\n"
        "        name: silo-regress fmt (staged baselines are canonical)\n"
        f"        entry: {FIND_TOOL} silo-regress-fmt fmt --check\n"
        "        language: system\n"
        f"        files: {_files_pattern(config)}\n"
        "      - id: silo-regress-check\n"
        "        name: silo-regress check (newest runs match the staged baselines)\n"
        f"        entry: {FIND_TOOL} silo-regress-check check --staged --allow-no-runs\n"
        "        language: system\n"
        "        pass_filenames: false\n"
        "        require_serial: true\n"
        "        always_run: true\n"
    )


def actions_job() -> str:
    """A GitHub Actions workflow: the strict check, and the PR's behaviour diff."""
    return (
        "name: behaviour\n"
        "on:\n"
        "  pull_request:\n"
        "  push:\n"
        "    branches: [main]\n"
        "jobs:\n"
        "  silo-regress:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n"
        "          fetch-depth: 0  # diff --from and log read history\n"
        "      - uses: actions/setup-python@v5\n"
        "        with:\n"
        '          python-version: "3.12"\n'
        "      - uses: actions/setup-node@v4\n"
        "        with:\n"
        '          node-version: "20"\n'
        "      # Install your project's dev dependencies, silo-regress among them.\n"
        '      - run: pip install -e ".[dev]" && npm ci\n'
        "      - name: Behaviour changes in this pull request\n"
        "        if: github.event_name == 'pull_request'\n"
        '        run: silo-regress diff --from "origin/$GITHUB_BASE_REF" --format markdown'
        ' >> "$GITHUB_STEP_SUMMARY"\n'
        "      - name: Newest runs match the baselines\n"
        "        run: silo-regress check --run\n"
    )


# --- the plain git hook ------------------------------------------------------------


def hook_script(*, executable: Path | None, project: str) -> str:
    """A ``pre-commit`` hook for git alone: the behaviour gate, nothing to install.

    It prefers the silo-regress on PATH (an activated virtualenv) and falls back to
    the one that wrote it, for commits made from tools that start without PATH.
    """
    args = ([] if project in ("", ".") else ["--project", project]) + list(HOOK_COMMAND)
    tail = " ".join(shlex.quote(a) for a in args)
    lines = [
        "#!/bin/sh",
        HOOK_MARKER,
        "# Blocks a commit when the newest local Silo runs differ from the staged baselines.",
        f"{HOOK_VARIABLE}={Hook.GIT.value}",
        f"export {HOOK_VARIABLE}  # the report then says how to skip this hook once",
        "if command -v silo-regress >/dev/null 2>&1; then",
        f"  exec silo-regress {tail}",
        "fi",
    ]
    if executable is not None:
        quoted = shlex.quote(str(executable))
        lines += [f"if [ -x {quoted} ]; then", f"  exec {quoted} {tail}", "fi"]
    lines += [
        'echo "silo-regress: not found; install it, or remove $0" >&2',
        "exit 1",
    ]
    return "\n".join(lines) + "\n"


def install_hook(path: Path, script: str, *, force: bool) -> StepState:
    """Write the hook at ``path``; refuse to replace a hook someone else wrote."""
    existing = _read_text(path) if path.exists() else None
    if existing == script:
        return StepState.UNCHANGED
    if existing is not None and HOOK_MARKER not in existing and not force:
        if "pre-commit" in existing and "INSTALL_PYTHON" in existing:
            advice = (
                "it belongs to the pre-commit framework: add the silo-regress hooks to "
                ".pre-commit-config.yaml instead (see `silo-regress init`)"
            )
        else:
            advice = f"add `silo-regress {' '.join(HOOK_COMMAND)}` to it, or pass --force"
        raise InputError(f"{path}: a pre-commit hook is already there; {advice}")
    write_atomic(path, script.encode())
    path.chmod(0o755)
    return StepState.CREATED if existing is None else StepState.UPDATED
