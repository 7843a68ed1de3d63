"""The files ``init`` and ``install-hook`` write, and the snippets they print.

Every step is idempotent: a file that already says what it should is left
byte for byte as it is, so running ``init`` twice changes nothing.
"""

from __future__ import annotations

import enum
import re
import shlex
import tomllib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from silo_regress.baselines import write_atomic
from silo_regress.config import Config
from silo_regress.errors import ConfigError, InputError

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


def add_config_section(project: Path) -> Step:
    """Append ``[tool.silo-regress]`` to pyproject.toml unless it has the section."""
    pyproject = project / "pyproject.toml"
    what = "[tool.silo-regress] section"
    try:
        data = pyproject.read_bytes()
    except FileNotFoundError:
        write_atomic(pyproject, CONFIG_SECTION.encode())
        return Step(pyproject, StepState.CREATED, what)
    except OSError as exc:
        raise InputError(f"{pyproject}: cannot read: {exc.strerror}") from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: not valid TOML, so it is left alone: {exc}") from None
    tool = document.get("tool")
    if isinstance(tool, dict) and "silo-regress" in tool:
        return Step(pyproject, StepState.UNCHANGED, what)
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    if not data.strip() or data.endswith(newline * 2):
        gap = b""
    else:
        gap = newline if data.endswith(newline) else newline * 2
    section = CONFIG_SECTION.encode().replace(b"\n", newline)
    write_atomic(pyproject, data + gap + section)
    return Step(pyproject, StepState.UPDATED, what)


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


def pre_commit_snippet(config: Config) -> str:
    """A ``.pre-commit-config.yaml`` running the silo-regress already installed here."""
    return (
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: silo-regress-fmt\n"
        "        name: silo-regress fmt (staged baselines are canonical)\n"
        "        entry: silo-regress fmt --check\n"
        "        language: system\n"
        f"        files: {_files_pattern(config)}\n"
        "      - id: silo-regress-check\n"
        "        name: silo-regress check (newest runs match the staged baselines)\n"
        "        entry: silo-regress check --staged --allow-no-runs\n"
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
