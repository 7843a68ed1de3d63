"""``init``: set a repository up: the config section, ``.gitattributes`` for baselines, the
runs and the project's venv ignored, the merge driver registered, and with ``--write``
the workflow and the chosen hook's file. Running it again changes nothing.

What it writes and infers is decided here; the snippets it prints are worded by the CLI
from the typed :class:`Initialised` (the layout, the workflow, where snippets come from).
"""

from __future__ import annotations

import contextlib
import enum
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.errors import ConfigError

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.recording import scaffold as scaffold_t


class InitHook(enum.StrEnum):
    PRE_COMMIT = "pre-commit"
    HUSKY = "husky"
    LEFTHOOK = "lefthook"
    GIT = "git"
    ALL = "all"


@dataclass(frozen=True)
class InitRequest:
    project: Path
    explicit: bool = False  # --project given: that directory is the project
    write: bool = False  # --write: the workflow and the hook's file too
    hook: InitHook | None = None
    source: str | None = None  # --source URL@REF


@dataclass(frozen=True)
class Initialised:
    """What init did (each step's file and state) and what its snippets need."""

    steps: tuple[scaffold_t.Step, ...]
    config: Config
    layout: scaffold_t.Layout
    top: Path | None  # the repository's top; None outside git
    workflow: str
    snippets: scaffold_t.SnippetSource
    hook: InitHook


def initialise(request: InitRequest) -> Initialised:
    """Set the project up; nothing that exists is overwritten."""
    from silo_regress.errors import GitError
    from silo_regress.project.config import NoProjectError, find_project, load_config
    from silo_regress.recording import scaffold
    from silo_regress.runs.cache import index_runs
    from silo_regress.vcs import gitio

    project = request.project.resolve()
    if not project.is_dir():
        raise ConfigError(f"{project}: project directory does not exist")
    if not request.explicit:
        # From a subdirectory: the project it belongs to, as every command finds it.
        with contextlib.suppress(NoProjectError):
            project = find_project(project)
    try:
        runs_dir = load_config(project).runs_dir
    except ConfigError:  # reported by the step that would change the file
        runs_dir = project / ".silo" / "runs"
    runs = index_runs(runs_dir)
    environments = {key[0] for key in runs.task_keys()}
    inferred = scaffold.infer_settings(project, environments)
    try:
        top: Path | None = gitio.find_repository(project).root
    except GitError:
        top = None  # not in git (yet): snippets as for the top of a repository
    # Files are followed through links only while they stay in the repository: a
    # cloned project's .gitignore linked to ~/.bashrc is refused, not appended to.
    within = top or project
    steps = [scaffold.add_config_section(project, inferred, within=within)]
    config = load_config(project)
    steps.append(scaffold.write_gitattributes(config.baselines_dir, within=within))
    steps.append(scaffold.ignore_runs(project, within=within))
    snippets = scaffold.source_of(request.source)
    # Every hook printed looks for silo-regress in the project's .venv/: never commit it.
    steps.append(scaffold.ignore_venv(project, within=within))
    steps.append(scaffold.register_merge_driver(config.baselines_dir, within=within))
    layout = scaffold.layout_of(config, top=top)
    node = scaffold.find_node(project, top=top)
    workflow = scaffold.workflow(layout, node, source=snippets, stats=config.gates_statistically)
    chosen = request.hook or InitHook.PRE_COMMIT
    if request.write:
        workflow_path = (top or project) / scaffold.WORKFLOW_PATH
        steps.append(
            scaffold.write_new_file(
                workflow_path, workflow, what="GitHub Actions", within=top or project
            )
        )
        steps += write_hook(chosen, config, layout, top=top or project)
    return Initialised(tuple(steps), config, layout, top, workflow, snippets, chosen)


def write_hook(
    hook: InitHook, config: Config, layout: scaffold_t.Layout, *, top: Path
) -> list[scaffold_t.Step]:
    """The chosen hook's file, written as init writes the workflow: never over another."""
    from silo_regress.recording import scaffold

    if hook is InitHook.PRE_COMMIT:
        text = scaffold.pre_commit_snippet(config, layout)
        return [
            scaffold.write_new_file(
                top / ".pre-commit-config.yaml", text, what="pre-commit", within=top
            )
        ]
    if hook is InitHook.HUSKY:
        text = scaffold.husky_snippet(layout)
        return [
            scaffold.write_new_file(top / ".husky" / "pre-commit", text, what="husky", within=top)
        ]
    if hook is InitHook.LEFTHOOK:
        text = scaffold.lefthook_snippet(layout)
        return [scaffold.write_new_file(top / "lefthook.yml", text, what="lefthook", within=top)]
    if hook is InitHook.GIT:
        from silo_regress.vcs import gitio

        repo = gitio.find_repository(config.project)
        path = gitio.hook_path(repo, "pre-commit")
        own = Path(sys.executable).parent / "silo-regress"
        script = scaffold.hook_script(
            executable=own if own.is_file() else None, project=repo.path_of(config.project)
        )
        state = scaffold.install_hook(path, script, force=False)
        return [scaffold.Step(path, state, "git pre-commit hook")]
    return []
