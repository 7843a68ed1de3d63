"""The ``[tool.silo-regress]`` section of a project's pyproject.toml."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silo_regress.errors import ConfigError
from silo_regress.pointer import PathPattern

DEFAULT_ARTIFACTS = ("result.json", "state-diff.json")
SECTION = "tool.silo-regress"


@dataclass(frozen=True)
class EnvironmentSettings:
    """Runner settings that one environment overrides."""

    agent: str | None = None
    timeout: float | None = None
    silo_command: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Config:
    project: Path
    runs_dir: Path
    baselines_dir: Path
    artifacts: tuple[str, ...] = DEFAULT_ARTIFACTS
    environment: str | None = None
    silo_command: tuple[str, ...] = ("npx", "--no", "silo")
    agent: str | None = None
    jobs: int | None = None
    timeout: float | None = None
    volatile_exempt: tuple[PathPattern, ...] = ()
    ignore: tuple[PathPattern, ...] = ()
    environments: dict[str, EnvironmentSettings] = field(default_factory=dict)
    source: Path | None = None

    def relative(self, path: Path | str) -> str:
        """``path`` as the user should see it: relative to the project when inside it."""
        # String prefix arithmetic: check calls this thousands of times, and
        # PurePath.relative_to costs ~10 us a call.
        text = str(path)
        prefix = str(self.project) + os.sep
        if text.startswith(prefix):
            text = text[len(prefix) :]
        elif text == str(self.project):
            return "."
        else:
            return text
        return text if os.sep == "/" else text.replace(os.sep, "/")

    @property
    def scan_exempt(self) -> tuple[PathPattern, ...]:
        """Paths the volatile scan skips: exempted ones, and ignored ones (their key stays)."""
        return self.volatile_exempt + self.ignore

    def settings_for(self, environment: str) -> EnvironmentSettings:
        own = self.environments.get(environment, EnvironmentSettings())
        return EnvironmentSettings(
            agent=own.agent if own.agent is not None else self.agent,
            timeout=own.timeout if own.timeout is not None else self.timeout,
            silo_command=own.silo_command or self.silo_command,
        )


_KNOWN = {
    "runs-dir",
    "baselines-dir",
    "artifacts",
    "environment",
    "silo-command",
    "agent",
    "jobs",
    "timeout",
    "volatile-exempt",
    "ignore",
    "environments",
}


def load_config(project: Path) -> Config:
    """Read the project's configuration; a missing file or section means defaults."""
    project = project.resolve()
    if not project.is_dir():
        raise ConfigError(f"{project}: project directory does not exist")
    pyproject = project / "pyproject.toml"
    table: dict[str, Any] = {}
    source: Path | None = None
    if pyproject.is_file():
        try:
            document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{pyproject}: not valid TOML: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"{pyproject}: cannot read: {exc.strerror}") from None
        section = document.get("tool", {}).get("silo-regress")
        if section is not None:
            if not isinstance(section, dict):
                raise ConfigError(f"{pyproject}: [{SECTION}] must be a table")
            table, source = section, pyproject
    return _build(project, table, where=f"{pyproject} [{SECTION}]", source=source)


def _build(project: Path, table: dict[str, Any], *, where: str, source: Path | None) -> Config:
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KNOWN))})"
        )
    artifacts = tuple(_strings(table, "artifacts", where) or DEFAULT_ARTIFACTS)
    for name in artifacts:
        if "/" in name or name.startswith(".") or name in {"run.json", "trace.jsonl"}:
            raise ConfigError(f"{where}: artifact {name!r} cannot be baselined")
    environments: dict[str, EnvironmentSettings] = {}
    for env, sub in _table(table, "environments", where).items():
        if not isinstance(sub, dict):
            raise ConfigError(f"{where}: environments.{env} must be a table")
        sub_where = f"{where} environments.{env}"
        extra = sorted(set(sub) - {"agent", "timeout", "silo-command"})
        if extra:
            raise ConfigError(f"{sub_where}: unknown key {extra[0]!r}")
        command = _strings(sub, "silo-command", sub_where)
        environments[env] = EnvironmentSettings(
            agent=_string(sub, "agent", sub_where),
            timeout=_positive(sub, "timeout", sub_where),
            silo_command=tuple(command) if command else None,
        )
    jobs = _positive(table, "jobs", where)
    if jobs is not None and jobs != int(jobs):
        raise ConfigError(f"{where}: 'jobs' must be a whole number")
    command = _strings(table, "silo-command", where)
    return Config(
        project=project,
        runs_dir=project / (_string(table, "runs-dir", where) or ".silo/runs"),
        baselines_dir=project / (_string(table, "baselines-dir", where) or "baselines"),
        artifacts=artifacts,
        environment=_string(table, "environment", where),
        silo_command=tuple(command) if command else ("npx", "--no", "silo"),
        agent=_string(table, "agent", where),
        jobs=int(jobs) if jobs is not None else None,
        timeout=_positive(table, "timeout", where),
        volatile_exempt=_patterns(table, "volatile-exempt", where),
        ignore=_patterns(table, "ignore", where),
        environments=environments,
        source=source,
    )


def _string(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigError(f"{where}: {key!r} must be a non-empty string")
    return value


def _strings(table: dict[str, Any], key: str, where: str) -> list[str] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of non-empty strings")
    if not value:
        raise ConfigError(f"{where}: {key!r} must not be empty")
    return value


def _positive(table: dict[str, Any], key: str, where: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"{where}: {key!r} must be a positive number")
    return float(value)


def _table(table: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key!r} must be a table")
    return value


def _patterns(table: dict[str, Any], key: str, where: str) -> tuple[PathPattern, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of JSON Pointer patterns")
    patterns = []
    for text in value:
        try:
            patterns.append(PathPattern.parse(text))
        except ValueError as exc:
            raise ConfigError(f"{where}: {key!r}: {exc}") from None
    return tuple(patterns)
