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

from silo_regress import __version__
from silo_regress.errors import ConfigError, InputError
from silo_regress.judging.outcome import HOOK_VARIABLE, Hook
from silo_regress.project.config import Config
from silo_regress.system.fsio import refuse_outside, write_atomic

CONFIG_SECTION = '[tool.silo-regress]\nruns-dir = ".silo/runs"\nbaselines-dir = "baselines"\n'
GITATTRIBUTES_LINE = "* -text diff"
GITATTRIBUTES = (
    "# silo-regress compares baselines byte for byte: git must never convert their line\n"
    "# endings (-text, whatever core.autocrlf says), and git diff shows them as text (diff).\n"
    f"{GITATTRIBUTES_LINE}\n"
)
MERGE_LINE = "*.json merge=silo-regress"
DRIVER_COMMAND = "silo-regress merge-driver %O %A %B %P"
DRIVER_CONFIG = f'git config merge.silo-regress.driver "{DRIVER_COMMAND}"'
MERGE_ATTRIBUTES = (
    "# Baselines merge by JSON key, tallies never (docs/git.md). A .gitattributes cannot\n"
    f"# register the driver itself: each clone runs once  {DRIVER_CONFIG}\n"
    f"{MERGE_LINE}"
)
IGNORE_LINE = ".silo/"
_IGNORE_FORMS = {".silo", ".silo/", "/.silo", "/.silo/", ".silo/*", "/.silo/*"}
VENV_LINE = ".venv/"
_VENV_FORMS = {".venv", ".venv/", "/.venv", "/.venv/", ".venv/*", "/.venv/*"}
WORKFLOW_PATH = ".github/workflows/silo-regress.yml"
# Where users get silo-regress from. It has no public home and no published tag yet,
# so by default the printed snippets name placeholders a user must fill in (and a tool
# reading them fails on REF, never on a ref that merely looks real); `init --source
# URL@REF` or SILO_REGRESS_SOURCE points every snippet at a real location and ref.
SOURCE_URL = "https://YOUR-GIT-HOST/OWNER/silo-regress"
SOURCE_REF = "REF"
ACTION = "OWNER/silo-regress"
SOURCE_VARIABLE = "SILO_REGRESS_SOURCE"
HOOK_MARKER = "# silo-regress: installed by `silo-regress install-hook`"
HOOK_COMMAND = ("check", "--staged", "--allow-no-runs")


class StepState(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    KEPT = "kept"  # someone else's file, left as it is


def release_tag(version: str = __version__) -> str:
    """The git tag the release of ``version`` creates: v0.3.0 (a .devN names its release)."""
    return "v" + re.sub(r"\.dev\d+$", "", version)


@dataclass(frozen=True)
class SnippetSource:
    """Where the printed snippets get silo-regress from: a git URL and a ref there."""

    url: str = SOURCE_URL
    ref: str = SOURCE_REF

    @property
    def placeholder(self) -> bool:
        return self.url == SOURCE_URL

    @property
    def action(self) -> str:
        """``owner/name`` for ``uses:``: the URL's last two path parts (github.com and
        GitHub Enterprise alike), else the placeholder."""
        if self.placeholder:
            return ACTION
        path = re.sub(r"^[a-z+]+://[^/]+/|^[^@/]+@[^:]+:", "", self.url).removesuffix(".git")
        parts = [p for p in path.split("/") if p]
        return "/".join(parts[-2:]) if len(parts) >= 2 else ACTION

    @property
    def requirement(self) -> str:
        return f"git+{self.url}@{self.ref}"

    def note(self) -> str:
        """What to tell the user about the snippets' source."""
        if self.placeholder:
            return (
                f"{SOURCE_URL}@{SOURCE_REF} and {ACTION}@{SOURCE_REF} are placeholders: "
                "replace them with where you get silo-regress from and a tag or commit "
                "that exists there, or run `silo-regress init --source URL@REF` "
                f"(or set {SOURCE_VARIABLE}=URL@REF) to print them filled in"
            )
        return f"silo-regress from {self.url} at {self.ref}"


_SOURCE = re.compile(r"(?:https?|ssh|git|file)://[^\s@]+|[\w.-]+@[\w.-]+:[^\s@]+")
_REF = re.compile(r"[\w][\w./-]*")


def parse_source(text: str, *, where: str) -> SnippetSource:
    """``URL@REF`` (the last ``@`` splits them: ``git@host:o/r@v1`` works); one sentence
    naming ``where`` it came from when it is not one."""
    url, at, ref = text.strip().rpartition("@")
    if not at or not _SOURCE.fullmatch(url) or not _REF.fullmatch(ref) or ".." in ref:
        raise ConfigError(
            f"{where} is {text!r}: use URL@REF, a git URL (https://, ssh://, git@host:path) "
            "and a tag or commit that exists there, e.g. "
            "https://github.com/acme/silo-regress@v0.4.0"
        )
    return SnippetSource(url=url, ref=ref)


def source_of(option: str | None, environ: dict[str, str] | None = None) -> SnippetSource:
    """The snippets' source: ``--source``, else $SILO_REGRESS_SOURCE, else placeholders."""
    if option:
        return parse_source(option, where="--source")
    value = (os.environ if environ is None else environ).get(SOURCE_VARIABLE, "")
    if value:
        return parse_source(value, where=SOURCE_VARIABLE)
    return SnippetSource()


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


def add_config_section(
    project: Path, inferred: Inferred | None = None, *, within: Path | None = None
) -> Step:
    """Append ``[tool.silo-regress]`` to pyproject.toml unless it has the section.

    A project without pyproject.toml (a Node project, as Silo projects are) gets
    ``silo-regress.toml`` instead. A symlinked pyproject.toml is written through
    the link, which stays a link, as long as it leads somewhere inside ``within``
    (the repository: default the project).
    """
    inferred = inferred or Inferred()
    within = within or project
    pyproject = project / "pyproject.toml"
    if not os.path.lexists(pyproject):
        for name in ("silo-regress.toml", ".silo-regress.toml"):
            if os.path.lexists(project / name):
                return Step(project / name, StepState.UNCHANGED, "config")
        standalone = project / "silo-regress.toml"
        lines = inferred.toml_lines()
        write_atomic(
            standalone, ("\n".join(lines) + "\n").encode(), within=within, make_parents=True
        )
        return Step(standalone, StepState.CREATED, "config: " + ", ".join(lines))
    what = "[tool.silo-regress] section"
    refuse_outside(pyproject, within=within)
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
    write_atomic(target, data + gap + section, within=within, make_parents=True)
    return Step(pyproject, StepState.UPDATED, what + ": " + ", ".join(inferred.toml_lines()))


def write_gitattributes(baselines_dir: Path, *, within: Path | None = None) -> Step:
    """``baselines/.gitattributes``: no line-ending conversion, diffs as text."""
    return _ensure_line(
        baselines_dir / ".gitattributes",
        GITATTRIBUTES.rstrip("\n"),
        present={GITATTRIBUTES_LINE},
        what=f"`{GITATTRIBUTES_LINE}` for baselines",
        within=within or baselines_dir,
    )


def register_merge_driver(baselines_dir: Path, *, within: Path | None = None) -> Step:
    """``*.json merge=silo-regress`` in ``baselines/.gitattributes``: git hands baselines
    both sides changed to ``merge-driver`` once :data:`DRIVER_CONFIG` has been run."""
    return _ensure_line(
        baselines_dir / ".gitattributes",
        MERGE_ATTRIBUTES,
        present={MERGE_LINE},
        what=f"`{MERGE_LINE}` (then run: {DRIVER_CONFIG})",
        within=within or baselines_dir,
    )


def ignore_runs(project: Path, *, within: Path | None = None) -> Step:
    """``.silo/`` in the project's .gitignore: runs are scratch space, never committed."""
    return _ensure_line(
        project / ".gitignore",
        IGNORE_LINE,
        present=_IGNORE_FORMS,
        what=f"{IGNORE_LINE} ignored",
        within=within or project,
    )


def ignore_venv(project: Path, *, within: Path | None = None) -> Step:
    """``.venv/`` in .gitignore: the hooks init prints look for silo-regress there, and
    a committed virtualenv is thousands of files that only work on one machine."""
    return _ensure_line(
        project / ".gitignore",
        VENV_LINE,
        present=_VENV_FORMS,
        what=f"{VENV_LINE} ignored",
        within=within or project,
    )


def write_new_file(path: Path, text: str, *, what: str, within: Path) -> Step:
    """Write ``path`` unless it exists: a file someone edited is theirs (KEPT)."""
    existing = _read_text(path)
    if existing == text:
        return Step(path, StepState.UNCHANGED, what)
    if existing is not None:
        return Step(path, StepState.KEPT, what + " (differs: delete it to have it rewritten)")
    refuse_outside(path, within=within)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode(), within=within, make_parents=True)
    return Step(path, StepState.CREATED, what)


def _ensure_line(
    path: Path, line: str, *, present: Collection[str], what: str, within: Path
) -> Step:
    """Create ``path`` holding ``line``, or append it unless a form of it is there."""
    existing = _read_text(path)
    if existing is None:
        write_atomic(path, f"{line}\n".encode(), within=within, make_parents=True)
        return Step(path, StepState.CREATED, what)
    if any(old.strip() in present for old in existing.splitlines()):
        return Step(path, StepState.UNCHANGED, what)
    write_atomic(
        path, f"{_with_newline(existing)}{line}\n".encode(), within=within, make_parents=True
    )
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


@dataclass(frozen=True)
class Layout:
    """Where the project sits in its git repository, as hooks and CI jobs must name it:
    they run at the top of the repository, not in the project."""

    prefix: str  # the project from the top of the repository, "/"-separated; "" at the top
    baselines: str  # the baselines directory from the top of the repository

    @property
    def project_args(self) -> tuple[str, ...]:
        return ("--project", self.prefix) if self.prefix else ()

    def files_pattern(self) -> str:
        """The ``files:`` regex pre-commit matches against paths from the repository top."""
        return "^" + re.escape(self.baselines) + "/.*\\.json$"


def layout_of(config: Config, *, top: Path | None) -> Layout:
    """``config``'s project seen from ``top``, the top of its git repository (None: none)."""
    baselines = config.relative(config.baselines_dir)
    if top is None:
        return Layout(prefix="", baselines=baselines)
    prefix = os.path.relpath(config.project, top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix
    return Layout(prefix=prefix, baselines=f"{prefix}/{baselines}" if prefix else baselines)


# Characters a path may hold and still be written bare inside the finder's sh -c
# script, which is itself single-quoted in the YAML entry.
_SAFE_PATH = re.compile(r"[A-Za-z0-9._/@+-]+")


def find_tool(layout: Layout, *, skip: str = "SKIP=$0 git commit") -> str:
    """A shell finder: silo-regress on PATH, else in a usual virtualenv folder.

    A local hook with a bare `silo-regress` entry fails every commit made where the
    virtualenv is not on PATH (an IDE, a GUI client, a fresh shell). The entry looks on
    PATH first, then in the project's and the repository's usual virtualenv folders, and
    says how to go on when it finds neither, instead of "Executable not found".
    """
    folders = [".venv/bin", "venv/bin"]
    if layout.prefix and _SAFE_PATH.fullmatch(layout.prefix):
        folders = [f"{layout.prefix}/{f}" for f in folders] + folders
    shown = ", ".join(folders[:-1]) + " or " + folders[-1]
    candidates = " ".join(f"{f}/silo-regress" for f in folders)
    return (
        'sh -c \'if command -v silo-regress >/dev/null 2>&1; then exec silo-regress "$@"; fi;'
        f" for t in {candidates}; do"
        ' if [ -x "$t" ]; then exec "$t" "$@"; fi; done;'
        f' echo "silo-regress is not on PATH nor in {shown}; install it there,'
        f" or skip this hook once with {skip}\" >&2; exit 1'"
    )


FIND_TOOL = find_tool(Layout(prefix="", baselines="baselines"))


def _yaml(text: str) -> str:
    """``text`` as a YAML scalar: bare when YAML reads it back unchanged, else quoted."""
    plain = (
        text
        and text == text.strip()
        and ": " not in text
        and " #" not in text
        and text[0] not in "!&*[]{}|>'\"%@`#,?:"
        and not text.startswith(("- ", "-\t"))
        and text != "-"
        and not text.endswith(":")
        and not re.fullmatch(r"(?i)true|false|yes|no|on|off|null|~|[-+.0-9e]+", text)
    )
    return text if plain else "'" + text.replace("'", "''") + "'"


def _words(args: Collection[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def pre_commit_snippet(config: Config, layout: Layout | None = None) -> str:
    """A ``.pre-commit-config.yaml`` running the silo-regress installed for this project.

    pre-commit reads it at the top of the repository and runs hooks there: a project
    below the top is named with --project, and the fmt hook's ``files:`` is the
    baselines directory seen from the top.
    """
    layout = layout or layout_of(config, top=None)
    finder = find_tool(layout)
    project = _words(layout.project_args)
    global_args = f"{project} " if project else ""
    fmt = _yaml(f"{finder} silo-regress-fmt {global_args}fmt --check")
    check = _yaml(f"{finder} silo-regress-check {global_args}check --staged --allow-no-runs")
    return (
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: silo-regress-fmt\n"
        "        name: silo-regress fmt (staged baselines are canonical)\n"
        f"        entry: {fmt}\n"
        "        language: system\n"
        f"        files: {_yaml(layout.files_pattern())}\n"
        "      - id: silo-regress-check\n"
        "        name: silo-regress check (newest runs match the staged baselines)\n"
        f"        entry: {check}\n"
        "        language: system\n"
        "        pass_filenames: false\n"
        "        require_serial: true\n"
        "        always_run: true\n"
    )


def pre_commit_remote_snippet(layout: Layout, source: SnippetSource | None = None) -> str:
    """The published hooks (.pre-commit-hooks.yaml), pinned to ``source``'s ref."""
    source = source or SnippetSource()
    lines = [
        "repos:",
        f"  - repo: {_yaml(source.url)}",
        f"    rev: {_yaml(source.ref)}" + ("  # placeholder: a tag or commit" * source.placeholder),
        "    hooks:",
        "      - id: silo-regress-fmt",
    ]
    if layout.prefix:
        args = "[" + ", ".join(_yaml(a) for a in layout.project_args) + "]"
        lines += [
            f"        args: {args}",
            f"        files: {_yaml(layout.files_pattern())}",
            "      - id: silo-regress-check",
            f"        args: {args}",
        ]
    else:
        lines.append("      - id: silo-regress-check")
    return "\n".join(lines) + "\n"


def husky_snippet(layout: Layout) -> str:
    """``.husky/pre-commit`` for teams with husky: the behaviour gate (husky runs it at
    the top of the repository with ``sh -e``)."""
    args = _words([*layout.project_args, *HOOK_COMMAND])
    venv = f"{layout.prefix}/.venv/bin/silo-regress" if layout.prefix else ".venv/bin/silo-regress"
    return (
        "# silo-regress: block a commit whose newest Silo runs differ from the staged baselines\n"
        "silo_regress=silo-regress\n"
        "command -v silo-regress >/dev/null 2>&1 || "
        f"silo_regress={shlex.quote(venv)}\n"
        f'{HOOK_VARIABLE}={Hook.GIT.value} "$silo_regress" {args}\n'
    )


def lefthook_snippet(layout: Layout) -> str:
    """``lefthook.yml`` for teams with lefthook: both hooks, found as the local ones are."""
    finder = find_tool(layout, skip="git commit --no-verify")
    project = _words(layout.project_args)
    global_args = f"{project} " if project else ""
    check = _yaml(f"{finder} silo-regress-check {global_args}check --staged --allow-no-runs")
    fmt = _yaml(f"{finder} silo-regress-fmt {global_args}fmt --check {{staged_files}}")
    return (
        "pre-commit:\n"
        "  commands:\n"
        "    silo-regress-fmt:\n"
        f"      glob: {_yaml(layout.baselines + '/**/*.json')}\n"
        f"      run: {fmt}\n"
        "    silo-regress-check:\n"
        f"      run: {check}\n"
        "      env:\n"
        f"        {HOOK_VARIABLE}: {Hook.GIT.value}\n"
    )


@dataclass(frozen=True)
class NodeSetup:
    """How CI installs the project's Node packages (Silo among them)."""

    directory: str  # where package.json is, from the top of the repository; "" at the top
    install: str  # npm ci with a lockfile, else npm install
    version_file: str | None = None  # .nvmrc or .node-version, from the repository top


NPM_LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")


def find_node(project: Path, *, top: Path | None) -> NodeSetup | None:
    """The nearest package.json at or above ``project`` (within its repository), with
    the lockfile beside it or at the top (npm workspaces keep one there); None for none."""
    stop = top or project
    here = project
    chain = [project]
    while here != stop and stop in here.parents:
        here = here.parent
        chain.append(here)
    package = next((d for d in chain if (d / "package.json").is_file()), None)
    if package is None:
        return None

    def shown(directory: Path) -> str:
        text = os.path.relpath(directory, stop).replace(os.sep, "/")
        return "" if text == "." else text

    locked = any((d / name).is_file() for d in (package, stop) for name in NPM_LOCKFILES)
    version = next(
        (
            f"{shown(d) + '/' if shown(d) else ''}{name}"
            for d in (package, stop)
            for name in (".nvmrc", ".node-version")
            if (d / name).is_file()
        ),
        None,
    )
    install = "npm ci --no-audit --no-fund" if locked else "npm install --no-audit --no-fund"
    return NodeSetup(directory=shown(package), install=install, version_file=version)


# The first command of the Node step: on a runner without Node, say what is missing
# instead of "npm: command not found" (exit 127) deep in the log.
NEED_NODE = (
    'command -v npm >/dev/null 2>&1 || { echo "::error title=silo-regress::npm is not on '
    "PATH: this job needs Node (actions/setup-node) to install the project's packages and "
    'run Silo"; exit 1; }'
)


# The stats gate's inputs, written for a project with gate = "stats" tasks: empty means
# the project's config decides, and the lines say what to set.
STATS_INPUTS = (
    '          repeat: ""  # rollouts per task; empty: the repeat key of the config',
    '          max-repeat: ""  # e.g. "32": stop each stats task once its test decides',
    '          suite-gate: ""  # fail, warn or off; empty: the suite-gate key (fail)',
)


def workflow(
    layout: Layout,
    node: NodeSetup | None,
    *,
    source: SnippetSource | None = None,
    stats: bool = False,
) -> str:
    """A GitHub Actions workflow: the pull request's behaviour changes in the job
    summary, then Silo run for every baselined task and checked (the action), with the
    stats gate's inputs when the project has ``stats`` tasks and a sticky comment."""
    source = source or SnippetSource()
    lines = [
        "name: behaviour",
        "on:",
        "  pull_request:",
        "  push:",
        "    branches: [main]",
        "jobs:",
        "  silo-regress:",
        "    runs-on: ubuntu-latest",
        "    permissions:",
        "      contents: read",
        "      pull-requests: write  # the sticky comment (a fork's token cannot: job summary)",
        "    steps:",
        "      - uses: actions/checkout@v4",
        "        with:",
        "          fetch-depth: 0  # diff --from and log read history",
        "      - uses: actions/setup-node@v4",
        "        with:",
    ]
    if node is not None and node.version_file is not None:
        lines.append(f"          node-version-file: {_yaml(node.version_file)}")
    else:
        lines.append('          node-version: "20"')
    if node is not None:
        lines.append("      - name: Install the project's Node packages (Silo among them)")
        if node.directory:
            lines.append(f"        working-directory: {_yaml(node.directory)}")
        lines += ["        run: |", f"          {NEED_NODE}", f"          {node.install}"]
    uses = f"{source.action}@{source.ref}"
    where = "  # placeholder: OWNER/silo-regress@REF, where you get it from" * source.placeholder
    project = [f"          project: {_yaml(layout.prefix)}"] if layout.prefix else []
    lines += [
        "      - name: Behaviour changes in this pull request",
        "        if: github.event_name == 'pull_request'",
        f"        uses: {uses}{where}",
        "        with:",
        "          command: diff --from",
        *project,
        "      - name: Newest runs match the baselines",
        f"        uses: {uses}",
        "        with:",
        "          command: check --run",
        *project,
        *(STATS_INPUTS if stats else ()),
        '          html: "true"',
    ]
    return "\n".join(lines) + "\n"


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
    write_atomic(path, script.encode(), make_parents=True)
    path.chmod(0o755)
    return StepState.CREATED if existing is None else StepState.UPDATED
