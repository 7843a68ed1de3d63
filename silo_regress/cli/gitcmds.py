"""The git-aware commands: log, init, install-hook, and ``diff --from``."""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import (
    Globals,
    globals_of,
    handled,
    out,
    parse_refs,
    setup,
    working_tree,
)
from silo_regress.commands.initialising import InitHook
from silo_regress.errors import UsageError

if TYPE_CHECKING:
    from silo_regress.project.config import Config
    from silo_regress.recording import scaffold as scaffold_t


class HistoryFormat(enum.StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


def diff_between(
    g: Globals,
    config: Config,
    *,
    from_ref: str,
    to_ref: str | None,
    refs: list[str],
    output_format: str,
) -> int:
    """``diff --from A [--to B]``: tasks whose baselines differ between two commits."""
    from silo_regress.render.history import render_source_diff
    from silo_regress.reports.history import diff_sources
    from silo_regress.store.gitsource import git_source

    if output_format not in {f.value for f in HistoryFormat}:
        raise UsageError(
            f"--format {output_format} is for a task's diff (diff TASK); diff --from "
            "prints text, markdown or json"
        )
    before = git_source(config, ref=from_ref, staged=False)
    after = (
        git_source(config, ref=to_ref, staged=False) if to_ref is not None else working_tree(config)
    )
    result = diff_sources(config, before, after, parse_refs(refs))
    out(render_source_diff(result, output_format, color=g.use_color()), colour=g.use_color())
    return 0


@app.command()
@handled
def log(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="The task: TASK-002 or ENV/TASK-002.")],
    output_format: Annotated[
        HistoryFormat, typer.Option("--format", help="text, markdown (a table) or json.")
    ] = HistoryFormat.TEXT,
) -> int:
    """Every commit that changed a task's baselines, newest first, with what changed.

    Each line: short hash, date, author, subject, and the behaviour summary of the
    change (reward 1 -> 0.75, check "X" passed -> failed, +AUD-0003). In a shallow
    clone it says where history stops.
    """
    from silo_regress.render.history import render_log
    from silo_regress.reports.history import task_log

    g, config = setup(ctx)
    (task,) = parse_refs([ref])
    colour = g.use_color()
    out(render_log(task_log(config, task), output_format.value, color=colour), colour=colour)
    return 0


@app.command()
@handled
def init(
    ctx: typer.Context,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Also write the GitHub Actions workflow to .github/workflows/silo-regress.yml "
            "and the --hook's file (an existing one is left as it is).",
        ),
    ] = False,
    hook: Annotated[
        InitHook | None,
        typer.Option(
            "--hook",
            help="The commit hook to print (and with --write, write): pre-commit "
            "(.pre-commit-config.yaml), husky (.husky/pre-commit), lefthook (lefthook.yml), "
            "git (.git/hooks/pre-commit), or all of them, printed only.",
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            metavar="URL@REF",
            help="Where the printed snippets get silo-regress from: a git URL and a tag or "
            "commit that exists there (default: $SILO_REGRESS_SOURCE, else placeholders "
            "to fill in).",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Set a repository up for silo-regress; running it again changes nothing.

    Writes silo-regress.toml (or adds [tool.silo-regress] to an existing
    pyproject.toml) with the environment and agent it can infer, writes
    baselines/.gitattributes (git never converts baseline bytes; diffs as text; merges
    go through merge-driver), adds .silo/ and .venv/ (where the hooks look for
    silo-regress) to .gitignore, then prints the git config line that sets the merge
    driver up, one commit hook (--hook, default pre-commit) and a GitHub Actions workflow
    to copy, each naming the project when it sits below the top of the repository.
    """
    from silo_regress.commands.initialising import InitRequest, initialise
    from silo_regress.recording import scaffold

    g = globals_of(ctx)
    done = initialise(
        InitRequest(g.project, explicit=g.explicit, write=write, hook=hook, source=source)
    )
    config, layout, top, snippets = done.config, done.layout, done.top, done.snippets
    chosen, workflow = done.hook, done.workflow
    steps = done.steps
    for step in steps:
        # The workflow lies at the top of the repository, outside a monorepo's project.
        shown = config.relative(step.path)
        if os.path.isabs(shown):
            shown = os.path.relpath(step.path, config.project)
        out(f"{step.state.value:<10} {shown}: {step.what}\n")
    at = f"the top of the repository ({top})" if layout.prefix else "the top of the repository"
    shown_hooks = list(InitHook) if chosen is InitHook.ALL else [chosen]
    text = ""
    for one in shown_hooks:
        if one is InitHook.ALL:
            continue
        text += _hook_text(one, config, layout, snippets, at=at, real=chosen is not InitHook.ALL)
    if chosen is not InitHook.ALL:
        others = "|".join(h.value for h in InitHook if h not in (chosen, InitHook.ALL))
        text += f"\nAnother hook instead: `silo-regress init --hook {others}`.\n"
    out(
        "\nMerge baselines by JSON key: run once per clone (a committed .gitattributes "
        f"cannot register a merge driver): {scaffold.DRIVER_CONFIG}\n"
        + text
        + f"\nCheck every push and pull request: {scaffold.WORKFLOW_PATH}"
        + (" (written above)" if write else " (`silo-regress init --write` writes it)")
        + ":\n\n"
        + _indent(workflow)
        + f"\n{snippets.note()}.\n"
    )
    return 0


def _hook_text(
    hook: InitHook,
    config: Config,
    layout: scaffold_t.Layout,
    source: scaffold_t.SnippetSource,
    *,
    at: str,
    real: bool,
) -> str:
    from silo_regress.recording import scaffold

    if hook is InitHook.PRE_COMMIT:
        text = (
            f"\nBlock behaviour changes at commit time: put this in .pre-commit-config.yaml at "
            f"{at} and run `pre-commit install`:\n\n"
            + _indent(scaffold.pre_commit_snippet(config, layout))
        )
        if not real or not source.placeholder:
            text += (
                "\nOr let pre-commit install silo-regress itself, pinned to a ref:\n\n"
                + _indent(scaffold.pre_commit_remote_snippet(layout, source))
            )
        return text
    if hook is InitHook.HUSKY:
        return "\nWith husky, .husky/pre-commit:\n\n" + _indent(scaffold.husky_snippet(layout))
    if hook is InitHook.LEFTHOOK:
        return "\nWith lefthook, lefthook.yml:\n\n" + _indent(scaffold.lefthook_snippet(layout))
    return (
        "\nA plain git hook, with no framework: `silo-regress install-hook` writes "
        ".git/hooks/pre-commit (`init --hook git --write` does too).\n"
    )


def _indent(text: str) -> str:
    return "".join(f"    {line}" if line.strip() else line for line in text.splitlines(True))


@app.command(name="install-hook")
@handled
def install_hook(
    ctx: typer.Context,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a pre-commit hook someone else wrote.")
    ] = False,
) -> int:
    """Write .git/hooks/pre-commit running `silo-regress check --staged --allow-no-runs`.

    For repositories without the pre-commit framework. The hook blocks a commit
    when the newest local runs differ from the staged baselines, and passes when
    there are no runs at all. An existing hook is only replaced with --force.
    """
    from silo_regress.recording import scaffold
    from silo_regress.vcs import gitio

    _, config = setup(ctx)
    repo = gitio.find_repository(config.project)
    path = gitio.hook_path(repo, "pre-commit")
    own = Path(sys.executable).parent / "silo-regress"
    script = scaffold.hook_script(
        executable=own if own.is_file() else None, project=repo.path_of(config.project)
    )
    state = scaffold.install_hook(path, script, force=force)
    shown = config.relative(path)
    out(f"{state.value:<10} {shown}: runs silo-regress {' '.join(scaffold.HOOK_COMMAND)}\n")
    return 0
