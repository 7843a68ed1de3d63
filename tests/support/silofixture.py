"""Build Silo projects for tests: run directories in Silo's exact layout and serialization.

Silo writes ``JSON.stringify(value, null, 2) + "\\n"``; for the values used here
(ints, short decimals, strings without lone surrogates) ``json.dumps`` with
``indent=2, ensure_ascii=False`` prints the same bytes. The differential tests in
test_canonical.py check the general case against Node itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from silo_regress.cli import app

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def silo_json(value: Any) -> bytes:
    """Bytes as Silo's serializer writes them."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def make_result(
    *,
    passed: bool = True,
    reward: float = 1,
    checks: Sequence[dict[str, Any]] | None = None,
    agent_output: Any = "Done.",
    tool_calls: int = 3,
    tool_errors: int = 0,
    termination: str = "completed",
    error: str | None = None,
) -> dict[str, Any]:
    """A result.json value with Silo's key order."""
    if checks is None:
        checks = [
            {"label": "Lead qualified", "passed": passed, "detail": "", "required": True},
            {"label": "Note logged", "passed": True, "detail": "AUD-0001", "required": False},
        ]
    required = [c for c in checks if c["required"]]
    return {
        "passed": passed,
        "reward": reward,
        "requiredPassed": sum(1 for c in required if c["passed"]),
        "requiredTotal": len(required),
        "failedRequired": [c["label"] for c in required if not c["passed"]],
        "checksPassed": sum(1 for c in checks if c["passed"]),
        "checksFailed": sum(1 for c in checks if not c["passed"]),
        "toolCalls": tool_calls,
        "toolErrors": tool_errors,
        "terminationReason": termination,
        "agentOutput": agent_output,
        "error": error,
        "checks": list(checks),
    }


def make_state_diff(
    *, added: Sequence[str] = ("AUD-0001",), changed: Sequence[str] = ("OPP-005",)
) -> dict[str, Any]:
    return {
        "scalars": [{"field": "pipeline.stage", "from": "lead", "to": "qualified"}],
        "collections": {
            "opportunities": {"added": [], "removed": [], "changed": list(changed)},
            "auditLog": {"added": list(added), "removed": [], "changed": []},
        },
    }


@dataclass
class SiloProject:
    """A project directory with a pyproject.toml and a Silo runs directory."""

    root: Path
    runs_dir: Path
    counter: int = 0
    runner: CliRunner = field(default_factory=CliRunner)

    @property
    def baselines(self) -> Path:
        return self.root / "baselines"

    def add_run(
        self,
        task: str = "TASK-001",
        *,
        env: str = "crm-west",
        started: str | None = None,
        result: Any = None,
        state_diff: Any = None,
        name: str | None = None,
        files: dict[str, bytes | None] | None = None,
    ) -> Path:
        """Write one rollout; ``files`` overrides or (with None) removes a file."""
        self.counter += 1
        if started is None:
            started = f"2026-03-16T10:{self.counter // 60:02d}:{self.counter % 60:02d}.000Z"
        stamp = started[:19].replace("-", "").replace(":", "").replace("T", "")
        name = name or f"run_{stamp}_{self.counter + 1000:x}"
        path = self.runs_dir / name
        path.mkdir(parents=True, exist_ok=True)
        content: dict[str, bytes | None] = {
            "run.json": silo_json(
                {
                    "runId": name,
                    "environment": env,
                    "taskId": task,
                    "startedAt": started,
                    "finishedAt": started,
                    "durationMs": 1234,
                    "terminationReason": "completed",
                    "toolCallCount": 3,
                }
            ),
            "result.json": silo_json(make_result() if result is None else result),
            "state-diff.json": silo_json(make_state_diff() if state_diff is None else state_diff),
            "trace.jsonl": b'{"at":"' + started.encode() + b'","event":"start"}\n',
        }
        content.update(files or {})
        for file_name, data in content.items():
            if data is not None:
                (path / file_name).write_bytes(data)
        return path

    def cli(self, *args: str, color: str = "never") -> Any:
        """Run the real typer app in-process with ``--project`` pointing here."""
        return self.runner.invoke(
            app, ["--project", str(self.root), "--color", color, *args], catch_exceptions=False
        )

    def baseline_bytes(self) -> dict[str, bytes]:
        if not self.baselines.is_dir():
            return {}
        return {
            p.relative_to(self.baselines).as_posix(): p.read_bytes()
            for p in sorted(self.baselines.rglob("*"))
            if p.is_file()
        }


def make_project(root: Path, *, config: str = "") -> SiloProject:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "agent"\nversion = "0"\n\n[tool.silo-regress]\n' + config,
        encoding="utf-8",
    )
    return SiloProject(root=root, runs_dir=root / ".silo" / "runs")


@contextlib.contextmanager
def unreadable(path: Path) -> Iterator[None]:
    """``path`` without read permission for the test's duration.

    Root reads any file regardless, so the test is skipped rather than passed.
    """
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user who can read any file (root)")
        yield
    finally:
        path.chmod(0o644)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run real git with a fixed identity and no user or system config."""
    env = {**os.environ, **GIT_IDENTITY}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=check, capture_output=True, text=True
    )


def git_init(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    return path
