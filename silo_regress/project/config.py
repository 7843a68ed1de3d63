"""Finding the project and reading its configuration.

A project is found like git, ruff and pre-commit find theirs: by walking up from
the current directory to the nearest directory that holds ``silo-regress.toml``
(or ``.silo-regress.toml``), a ``pyproject.toml`` with a ``[tool.silo-regress]``
table, or, for projects that keep every default, ``baselines/.silo-regress-format``
or ``.silo/``; the walk stops at the root of the git repository. ``--project DIR``
names the project and skips the walk.

Outside a repository the walk would reach ``/`` and take a config from any
directory above, whose ``silo-command`` ``run`` then executes (git's
CVE-2022-24765). So, as git does, the walk stops at the user's home directory and
at a file-system boundary, and a config file it finds that belongs to another
user (neither root nor the current user) is refused, with the two ways to allow
it: ``--project DIR``, or the directory in ``SILO_REGRESS_SAFE_DIRECTORIES``.

Config files are written by whoever controls the repository (a cloned one too),
so every value is checked once, by ``configvalues``, with a sentence naming the
file and key; this module decides which keys exist where.
"""

from __future__ import annotations

import enum
import functools
import os
import re
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from silo_regress import __version__
from silo_regress.canon.pointer import PathPattern
from silo_regress.errors import ConfigError, TaskRefError
from silo_regress.project.configvalues import (
    check_inside,
    check_name,
    check_required_version,
    describe_kind,
    quote_key,
    read_artifacts,
    read_choice,
    read_inputs,
    read_number,
    read_pass_floor,
    read_path_string,
    read_patterns,
    read_string,
    read_strings,
    read_table,
    require_known_keys,
)
from silo_regress.project.taskref import TaskRef, parse_ref

DEFAULT_ARTIFACTS = ("result.json", "state-diff.json")
DEFAULT_TRACE_EVENTS = ("tool_call", "tool_result")
DEFAULT_SILO_COMMAND = ("npx", "--no", "silo")
SECTION = "tool.silo-regress"
STANDALONE_NAMES = ("silo-regress.toml", ".silo-regress.toml")
PYPROJECT = "pyproject.toml"
FORMAT_MARKER = "baselines/.silo-regress-format"
RUNS_MARKER = ".silo"
LOOKED_FOR = (
    "silo-regress.toml, .silo-regress.toml, pyproject.toml with [tool.silo-regress], "
    f"{FORMAT_MARKER} or {RUNS_MARKER}/"
)
# A config file is a few hundred bytes; anything this large is not one, and
# reading it whole could exhaust memory (a FIFO or /dev/zero never ends).
MAX_CONFIG_BYTES = 1 << 20
MAX_JOBS = 1024
MAX_TIMEOUT = 7 * 24 * 3600.0


class NoProjectError(ConfigError):
    """No project was found walking up from the current directory."""

    def __init__(self, message: str, *, looked_in: tuple[Path, ...]) -> None:
        super().__init__(message)
        self.looked_in = looked_in


class ConfigStyle(enum.StrEnum):
    """How a config file holds the keys."""

    STANDALONE = "standalone"  # silo-regress.toml: the keys at the top level
    PYPROJECT = "pyproject"  # pyproject.toml: the keys in a [tool.silo-regress] table


# A NamedTuple, not a frozen dataclass: built at every start-up of the hook, where a
# dataclass costs 0.7 ms to create (bench/README.md, 0.3.0 against 0.2) and this 0.1 ms.
class ConfigLocation(NamedTuple):
    """Where the project's settings live, as every message that names a key says it.

    One value for all of them, so no message tells a silo-regress.toml user to edit
    ``[tool.silo-regress]``, nor prints a top-level line for a key the project sets
    per task.
    """

    path: str  # the file as the user should see it (relative to the project)
    style: ConfigStyle
    exists: bool = True  # False: defaults only; the file a setting would go in

    def header(self, *table: str) -> str | None:
        """The TOML header of ``table`` (("tasks", "crm/TASK-001") -> ``[tasks."crm/TASK-001"]``
        or ``[tool.silo-regress.tasks."crm/TASK-001"]``); None for the top level of a
        standalone file, which has no header."""
        parts = [quote_key(t) for t in table]
        if self.style is ConfigStyle.PYPROJECT:
            return "[" + ".".join([SECTION, *parts]) + "]"
        return "[" + ".".join(parts) + "]" if parts else None

    def place(self, *table: str) -> str:
        """Where a key of ``table`` goes: ``silo-regress.toml``,
        ``pyproject.toml [tool.silo-regress]``, ``silo-regress.toml [tasks."crm/TASK-001"]``."""
        header = self.header(*table)
        return f"{self.path} {header}" if header else self.path

    def key(self, name: str, *table: str) -> str:
        """``'environment' in silo-regress.toml`` and the like."""
        return f"'{name}' in {self.place(*table)}"

    def __str__(self) -> str:
        return self.place()


def task_table(task_id: str, environment: str | None) -> tuple[str, str]:
    """The table of one task's own settings: ("tasks", "crm-demo/TASK-001")."""
    return ("tasks", f"{environment}/{task_id}" if environment else task_id)


class Gate(enum.StrEnum):
    """How a task's runs are judged (docs/statistics.md)."""

    EXACT = "exact"  # every artifact byte-exact against an accepted variant: the default
    STATS = "stats"  # pass counts over repeated rollouts against the baseline tally
    BOTH = "both"  # both: the byte-exact rule still holds for every artifact


# `repeat`: a task's rollouts a check; a tally holds at most 100,000 (stats/tally.py).
MAX_REPEAT = 10_000
MAX_RETRIES = 10
DEFAULT_RETRY_INFRA = 1


class SuiteGate(enum.StrEnum):
    """What a significant decline of the whole suite does under the stats gate."""

    FAIL = "fail"
    WARN = "warn"
    OFF = "off"


# A NamedTuple, not a frozen dataclass: built at every start-up of the hook, where a
# dataclass costs 0.7 ms to create (bench/README.md, 0.3.0 against 0.2) and this 0.1 ms.
class PassFloor(NamedTuple):
    """``min-pass-hat-k = {k = 3, value = 0.8}``: the candidate's pass^k must reach it."""

    k: int
    value: float


@dataclass(frozen=True)
class EnvironmentSettings:
    """Runner settings that one environment overrides."""

    agent: str | None = None
    timeout: float | None = None
    silo_command: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TaskSettings:
    """What is compared for one task, and how: the per-task or per-environment table
    when there is one, else the top-level keys."""

    artifacts: tuple[str, ...] = DEFAULT_ARTIFACTS
    ignore: tuple[PathPattern, ...] = ()
    volatile_exempt: tuple[PathPattern, ...] = ()
    gate: Gate = Gate.EXACT
    min_pass_hat_k: PassFloor | None = None
    # gate = "both": the artifacts that stay byte-exact (None: every artifact)
    exact_artifacts: tuple[str, ...] | None = None
    # rollouts a task gets from `check --run` (None: not configured)
    repeat: int | None = None

    @property
    def scan_exempt(self) -> tuple[PathPattern, ...]:
        """Paths the volatile scan skips: exempted ones, and ignored ones (their key stays)."""
        return self.volatile_exempt + self.ignore


@dataclass(frozen=True)
class Overrides:
    """The keys a ``[tasks."REF"]`` or ``[environments.ENV]`` table sets (None: inherited)."""

    artifacts: tuple[str, ...] | None = None
    ignore: tuple[PathPattern, ...] | None = None
    volatile_exempt: tuple[PathPattern, ...] | None = None
    gate: Gate | None = None
    min_pass_hat_k: PassFloor | None = None
    exact_artifacts: tuple[str, ...] | None = None
    repeat: int | None = None

    def over(self, base: TaskSettings) -> TaskSettings:
        return TaskSettings(
            artifacts=self.artifacts if self.artifacts is not None else base.artifacts,
            ignore=self.ignore if self.ignore is not None else base.ignore,
            volatile_exempt=(
                self.volatile_exempt if self.volatile_exempt is not None else base.volatile_exempt
            ),
            gate=self.gate if self.gate is not None else base.gate,
            min_pass_hat_k=(
                self.min_pass_hat_k if self.min_pass_hat_k is not None else base.min_pass_hat_k
            ),
            exact_artifacts=(
                self.exact_artifacts if self.exact_artifacts is not None else base.exact_artifacts
            ),
            repeat=self.repeat if self.repeat is not None else base.repeat,
        )


@dataclass(frozen=True)
class Config:
    project: Path
    runs_dir: Path
    baselines_dir: Path
    artifacts: tuple[str, ...] = DEFAULT_ARTIFACTS
    environment: str | None = None
    silo_command: tuple[str, ...] = DEFAULT_SILO_COMMAND
    agent: str | None = None
    jobs: int | None = None
    timeout: float | None = None
    volatile_exempt: tuple[PathPattern, ...] = ()
    ignore: tuple[PathPattern, ...] = ()
    environments: dict[str, EnvironmentSettings] = field(default_factory=dict)
    source: Path | None = None
    inputs: tuple[str, ...] = ()
    trace_events: tuple[str, ...] = DEFAULT_TRACE_EVENTS
    task_overrides: dict[TaskRef, Overrides] = field(default_factory=dict)
    environment_overrides: dict[str, Overrides] = field(default_factory=dict)
    required_version: str | None = None  # checked against the running version on load
    gate: Gate = Gate.EXACT
    suite_gate: SuiteGate = SuiteGate.FAIL
    min_pass_hat_k: PassFloor | None = None
    exact_artifacts: tuple[str, ...] | None = None
    repeat: int | None = None  # `repeat`: rollouts a task for `check --run`
    # A rollout Silo could not start (no run of its own) is run again up to this many
    # times before the command gives up on it (an infrastructure error, never counted).
    retry_infra: int = DEFAULT_RETRY_INFRA
    # Opt-in: a rollout that left no complete result is run again up to this many times;
    # each retry is one more rollout, and the report names the one it stands in for.
    retry_incomplete: int = 0
    # bisect: run in each commit's worktree before its rollouts, e.g. ["npm", "ci"]
    bisect_setup: tuple[str, ...] = ()

    @property
    def gates_statistically(self) -> bool:
        """Whether any task may be judged by the stats gate: only then is it loaded."""
        tables = (*self.task_overrides.values(), *self.environment_overrides.values())
        return self.gate is not Gate.EXACT or any(
            t.gate is not None and t.gate is not Gate.EXACT for t in tables
        )

    @functools.cached_property
    def _project_text(self) -> tuple[str, str]:
        """The project as text, alone and as a prefix (computed once, not per path)."""
        text = str(self.project)
        return text, text + os.sep

    @functools.cached_property
    def baselines_prefix(self) -> str:
        """The baselines directory as text, with a separator: ``check`` joins it to the
        name of every baseline it reports (computed once, not per artifact)."""
        return f"{self.baselines_dir}{os.sep}"

    def relative(self, path: Path | str) -> str:
        """``path`` as the user should see it: relative to the project when inside it."""
        # String prefix arithmetic: check calls this thousands of times, and
        # PurePath.relative_to costs ~10 us a call.
        text = str(path)
        project, prefix = self._project_text
        if text.startswith(prefix):
            text = text[len(prefix) :]
        elif text == project:
            return "."
        else:
            return text
        return text if os.sep == "/" else text.replace(os.sep, "/")

    @property
    def scan_exempt(self) -> tuple[PathPattern, ...]:
        """Paths the volatile scan skips: exempted ones, and ignored ones (their key stays)."""
        return self.volatile_exempt + self.ignore

    @functools.cached_property
    def location(self) -> ConfigLocation:
        """The config file messages name: the one read, else the one a setting would go in
        (a project's pyproject.toml when it has one, as `init` would use)."""
        if self.source is not None:
            style = (
                ConfigStyle.PYPROJECT if self.source.name == PYPROJECT else ConfigStyle.STANDALONE
            )
            return ConfigLocation(self.relative(self.source), style)
        if os.path.isfile(self.project / PYPROJECT):
            return ConfigLocation(PYPROJECT, ConfigStyle.PYPROJECT, exists=False)
        return ConfigLocation(STANDALONE_NAMES[0], ConfigStyle.STANDALONE, exists=False)

    @property
    def where(self) -> str:
        """The config file as a user should see it, for messages that point at a key."""
        return self.location.place()

    @property
    def known_artifacts(self) -> tuple[str, ...]:
        """Every artifact any task may baseline: the top-level list, then the tables' own."""
        names = list(self.artifacts)
        for overrides in (*self.environment_overrides.values(), *self.task_overrides.values()):
            names.extend(a for a in overrides.artifacts or () if a not in names)
        return tuple(names)

    @property
    def input_globs(self) -> tuple[str, ...]:
        """The files whose content defines behaviour: ``inputs``, else the agent file."""
        if self.inputs:
            return self.inputs
        agents = [self.agent] if self.agent else []
        agents += [s.agent for s in self.environments.values() if s.agent]
        return tuple(dict.fromkeys(_project_glob(a) for a in agents))

    def settings_for(self, environment: str) -> EnvironmentSettings:
        own = self.environments.get(environment, EnvironmentSettings())
        return EnvironmentSettings(
            agent=own.agent if own.agent is not None else self.agent,
            timeout=own.timeout if own.timeout is not None else self.timeout,
            silo_command=own.silo_command or self.silo_command,
        )

    @functools.cached_property
    def _top_settings(self) -> TaskSettings:
        return TaskSettings(
            self.artifacts,
            self.ignore,
            self.volatile_exempt,
            self.gate,
            self.min_pass_hat_k,
            self.exact_artifacts,
            self.repeat,
        )

    def task_settings(self, ref: TaskRef, *, environment: str | None = None) -> TaskSettings:
        """Artifacts, ignore and volatile-exempt for one task.

        The most specific table wins, key by key: ``[tasks."ENV/TASK"]``, then
        ``[tasks.TASK]``, then ``[environments.ENV]``, then the top level. A
        table's key replaces the inherited value (repeat shared patterns there).
        ``environment`` is where the task's runs live when ``ref`` is unqualified.
        """
        base = self._top_settings
        if not self.task_overrides and not self.environment_overrides:
            return base
        env = ref.environment or environment or self.environment
        layers = []
        if env is not None:
            layers.append(self.environment_overrides.get(env))
        layers.append(self.task_overrides.get(TaskRef(ref.task_id)))
        if env is not None:
            layers.append(self.task_overrides.get(TaskRef(ref.task_id, env)))
        for layer in layers:
            if layer is not None:
                base = layer.over(base)
        return base


def _project_glob(agent: str) -> str:
    text = agent[2:] if agent.startswith("./") else agent
    return text


# --- discovery ----------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    path: Path
    table: dict[str, Any]
    where: str


def find_project(start: Path) -> Path:
    """The nearest directory at or above ``start`` that is a silo-regress project.

    Stops at the top of the git repository (the directory holding ``.git``), so a
    project never borrows the config of whatever happens to lie above it.
    """
    here = Path(os.path.abspath(start))
    looked: list[Path] = []
    home = _home()
    try:
        device = os.stat(here).st_dev
    except OSError:
        device = None
    for directory in (here, *here.parents):
        if looked and device is not None and _device(directory) != device:
            break  # another file system: like git, never discover across one
        looked.append(directory)
        if _is_project(directory):
            _check_owner(directory)
            return directory
        if os.path.lexists(directory / ".git") or directory == home:
            break
    raise NoProjectError(_not_found(looked), looked_in=tuple(looked))


SAFE_DIRECTORIES = "SILO_REGRESS_SAFE_DIRECTORIES"


def _home() -> Path | None:
    try:
        return Path(os.path.abspath(Path.home()))
    except (RuntimeError, KeyError, OSError):
        return None


def _device(directory: Path) -> int | None:
    try:
        return os.stat(directory).st_dev
    except OSError:
        return None


def _check_owner(project: Path) -> None:
    """Refuse a discovered config file that belongs to another user (git's safe.directory).

    Root's files and the current user's are trusted; so is a directory the user
    lists in ``SILO_REGRESS_SAFE_DIRECTORIES`` (``os.pathsep``-separated, ``*`` for
    any) or names with ``--project`` (which never walks, so never comes here).
    """
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is None:
        return
    allowed = [p for p in os.environ.get(SAFE_DIRECTORIES, "").split(os.pathsep) if p]
    if "*" in allowed or any(os.path.abspath(p) == str(project) for p in allowed):
        return
    for name in (*STANDALONE_NAMES, PYPROJECT):
        path = project / name
        try:
            owner = os.lstat(path).st_uid
        except OSError:
            continue
        if name == PYPROJECT and _pyproject_table(path) is None:
            continue  # configures nothing here
        if owner not in (0, uid):
            raise ConfigError(
                f"{path}: refused: it belongs to another user (uid {owner}), and a config "
                "found by walking up can name a command that `run` executes; if you trust "
                f"it, pass --project {project} or add that directory to {SAFE_DIRECTORIES}"
            )


def _not_found(looked: list[Path]) -> str:
    if len(looked) == 1:
        where = f"in {looked[0]}"
    elif len(looked) <= 3:
        where = "in " + ", ".join(str(p) for p in looked)
    else:
        where = f"in {looked[0]} and its parents up to {looked[-1]}"
    top = looked[-1]
    stop = " (the top of the git repository)" if os.path.lexists(top / ".git") else ""
    if not stop and top == _home():
        stop = " (your home directory: the walk stops there)"
    elif not stop and top.parent != top:
        stop = " (the walk stops at a file-system boundary)"
    return (
        f"no silo-regress project found: looked for {LOOKED_FOR} {where}{stop}; "
        "run `silo-regress init` at the project's root, or pass --project DIR"
    )


def _is_project(directory: Path) -> bool:
    if any(os.path.isfile(directory / name) for name in STANDALONE_NAMES):
        return True
    pyproject = directory / PYPROJECT
    if os.path.isfile(pyproject) and _pyproject_table(pyproject) is not None:
        return True
    return os.path.isfile(directory / FORMAT_MARKER) or os.path.isdir(directory / RUNS_MARKER)


def discover_config(start: Path) -> Config:
    """The configuration of the project that holds ``start`` (walking up)."""
    return load_config(find_project(start))


def load_config(project: Path) -> Config:
    """Read the configuration of the project at ``project``; no config file means defaults."""
    project = project.resolve()
    if not project.is_dir():
        if os.path.lexists(project):
            raise ConfigError(
                f"{project}: is a file, not a project directory (--project/-C names the "
                "directory that holds the project's config, baselines/ and .silo/)"
            )
        raise ConfigError(f"{project}: project directory does not exist")
    candidates = list(_candidates(project))
    if len(candidates) > 1:
        first, second = candidates[0].path, candidates[1].path
        raise ConfigError(
            f"{first} and {second} both configure silo-regress for {project}; "
            "keep one of them (the settings are the same keys in either)"
        )
    if not candidates:
        return _build(project, {}, where=str(project / STANDALONE_NAMES[0]), source=None)
    (chosen,) = candidates
    return _build(project, chosen.table, where=chosen.where, source=chosen.path)


def _candidates(project: Path) -> Iterator[_Candidate]:
    for name in STANDALONE_NAMES:
        path = project / name
        if os.path.lexists(path):
            table = _parse(path)
            if (
                "tool" in table
                and isinstance(table["tool"], dict)
                and "silo-regress" in table["tool"]
            ):
                raise ConfigError(
                    f"{path}: holds a [{SECTION}] table; in {name} the keys go at the top "
                    "level, without a table header"
                )
            yield _Candidate(path, table, str(path))
    pyproject = project / PYPROJECT
    if os.path.lexists(pyproject):
        section = _pyproject_table(pyproject)
        if section is not None:
            yield _Candidate(pyproject, section, f"{pyproject} [{SECTION}]")


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    data = _read(path)
    if b"silo-regress" not in data:  # most pyproject files: no parse on the hook's path
        return None
    document = _loads(path, data)
    tool = document.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: 'tool' must be a table, not {describe_kind(tool)}")
    section = tool.get("silo-regress")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [{SECTION}] must be a table")
    return section


def _parse(path: Path) -> dict[str, Any]:
    return _loads(path, _read(path))


def _read(path: Path) -> bytes:
    """The file's bytes, refusing what is not a small regular file (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (a dangling symlink?)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: is not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: is {info.st_size} bytes; a config file over "
                f"{MAX_CONFIG_BYTES} bytes is refused"
            )
        chunks = []
        total = 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > MAX_CONFIG_BYTES:
                raise ConfigError(f"{path}: grew past {MAX_CONFIG_BYTES} bytes while read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def _loads(path: Path, data: bytes) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 at byte {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}{_set_twice(data, exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: values nested too deeply") from None


def _set_twice(data: bytes, exc: tomllib.TOMLDecodeError) -> str:
    """``: key 'environment' is set twice`` when tomllib refused a repeated key, whose
    message names only a line (an `echo KEY = ... >>` after init wrote KEY)."""
    found = re.search(r"line (\d+)", str(exc))
    if "overwrite" not in str(exc) or found is None:
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    number = int(found.group(1))
    key = lines[number - 1].partition("=")[0].strip() if 0 < number <= len(lines) else ""
    return f": key {key!r} is set twice; keep one" if key else ""


# --- validation -----------------------------------------------------------------

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
    "inputs",
    "trace-events",
    "tasks",
    "required-version",
    "gate",
    "suite-gate",
    "min-pass-hat-k",
    "exact-artifacts",
    "repeat",
    "retry-infra",
    "retry-incomplete",
    "bisect-setup",
}
_OVERRIDE_KEYS = {
    "artifacts",
    "ignore",
    "volatile-exempt",
    "gate",
    "min-pass-hat-k",
    "exact-artifacts",
    "repeat",
}
_ENVIRONMENT_KEYS = {"agent", "timeout", "silo-command"} | _OVERRIDE_KEYS


def _build(project: Path, table: dict[str, Any], *, where: str, source: Path | None) -> Config:
    # First: a config written for another version may hold keys this one does not know,
    # and "install 0.4" is the answer then, not "unknown key".
    required_version = check_required_version(table, where, running=__version__)
    require_known_keys(table, _KNOWN, where)
    artifacts = read_artifacts(table, where) or DEFAULT_ARTIFACTS
    environments: dict[str, EnvironmentSettings] = {}
    environment_overrides: dict[str, Overrides] = {}
    for env, sub in read_table(table, "environments", where).items():
        sub_where = f"{where} environments.{quote_key(env)}"
        check_name(env, "environment name", sub_where)
        if not isinstance(sub, dict):
            raise ConfigError(f"{sub_where}: must be a table, not {describe_kind(sub)}")
        require_known_keys(sub, _ENVIRONMENT_KEYS, sub_where)
        command = read_strings(sub, "silo-command", sub_where)
        environments[env] = EnvironmentSettings(
            agent=read_path_string(sub, "agent", sub_where),
            timeout=read_number(sub, "timeout", sub_where, maximum=MAX_TIMEOUT),
            silo_command=tuple(command) if command else None,
        )
        overrides = _overrides(sub, sub_where)
        if overrides != Overrides():
            environment_overrides[env] = overrides
    task_overrides: dict[TaskRef, Overrides] = {}
    for text, sub in read_table(table, "tasks", where).items():
        sub_where = f"{where} tasks.{quote_key(text)}"
        if "~" in text:
            raise ConfigError(f"{sub_where}: a task ref cannot contain '~' (variants use it)")
        try:
            ref = parse_ref(text)
        except TaskRefError as exc:
            raise ConfigError(f"{sub_where}: {exc.message}") from None
        if not isinstance(sub, dict):
            raise ConfigError(f"{sub_where}: must be a table, not {describe_kind(sub)}")
        require_known_keys(sub, _OVERRIDE_KEYS, sub_where)
        task_overrides[ref] = _overrides(sub, sub_where)
    jobs = read_number(table, "jobs", where, maximum=MAX_JOBS)
    if jobs is not None and jobs != int(jobs):
        raise ConfigError(f"{where}: 'jobs' must be a whole number, not {jobs!r}")
    command = read_strings(table, "silo-command", where)
    environment = read_string(table, "environment", where)
    if environment is not None:
        check_name(environment, "'environment'", where)
    runs_dir = read_path_string(table, "runs-dir", where) or ".silo/runs"
    baselines_dir = read_path_string(table, "baselines-dir", where) or "baselines"
    check_inside(baselines_dir, "baselines-dir", where)
    return Config(
        project=project,
        runs_dir=project / runs_dir,
        baselines_dir=project / baselines_dir,
        artifacts=artifacts,
        environment=environment,
        silo_command=tuple(command) if command else DEFAULT_SILO_COMMAND,
        agent=read_path_string(table, "agent", where),
        jobs=int(jobs) if jobs is not None else None,
        timeout=read_number(table, "timeout", where, maximum=MAX_TIMEOUT),
        volatile_exempt=read_patterns(table, "volatile-exempt", where) or (),
        ignore=read_patterns(table, "ignore", where) or (),
        environments=environments,
        source=source,
        inputs=read_inputs(table, where),
        trace_events=tuple(read_strings(table, "trace-events", where) or DEFAULT_TRACE_EVENTS),
        task_overrides=task_overrides,
        environment_overrides=environment_overrides,
        required_version=required_version,
        gate=_gate(table, where) or Gate.EXACT,
        suite_gate=SuiteGate(
            read_choice(table, "suite-gate", where, [g.value for g in SuiteGate]) or "fail"
        ),
        min_pass_hat_k=_floor(table, where),
        exact_artifacts=_exact(table, where),
        repeat=_whole(table, "repeat", where, least=1, most=MAX_REPEAT),
        retry_infra=_or(
            _whole(table, "retry-infra", where, least=0, most=MAX_RETRIES), DEFAULT_RETRY_INFRA
        ),
        retry_incomplete=_whole(table, "retry-incomplete", where, least=0, most=MAX_RETRIES) or 0,
        bisect_setup=tuple(read_strings(table, "bisect-setup", where) or ()),
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _whole(table: dict[str, Any], key: str, where: str, *, least: int, most: int) -> int | None:
    """A whole-number key in [least, most], or None when it is not set."""
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}: {key!r} must be a whole number, not {describe_kind(value)}")
    if not least <= value <= most:
        raise ConfigError(f"{where}: {key!r} must be from {least} to {most}, not {value}")
    return value


def _exact(table: dict[str, Any], where: str) -> tuple[str, ...] | None:
    """``exact-artifacts``: names like ``artifacts`` (only meaningful with gate = "both")."""
    names = read_strings(table, "exact-artifacts", where)
    return None if names is None else tuple(names)


def _gate(table: dict[str, Any], where: str) -> Gate | None:
    value = read_choice(table, "gate", where, [g.value for g in Gate])
    return None if value is None else Gate(value)


def _floor(table: dict[str, Any], where: str) -> PassFloor | None:
    found = read_pass_floor(table, "min-pass-hat-k", where)
    return None if found is None else PassFloor(*found)


def _overrides(sub: dict[str, Any], where: str) -> Overrides:
    return Overrides(
        artifacts=read_artifacts(sub, where),
        ignore=read_patterns(sub, "ignore", where),
        volatile_exempt=read_patterns(sub, "volatile-exempt", where),
        gate=_gate(sub, where),
        min_pass_hat_k=_floor(sub, where),
        exact_artifacts=_exact(sub, where),
        repeat=_whole(sub, "repeat", where, least=1, most=MAX_REPEAT),
    )
