"""`silo-regress prune`: remove the baselines of tasks that no longer exist."""

from __future__ import annotations

from typing import Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import handled, out, parse_refs, setup, working_tree


@app.command()
@handled
def prune(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Remove every baseline of these tasks (default: of every task nothing names).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be removed; remove nothing.")
    ] = False,
) -> int:
    """Remove baselines of tasks with no run (discarded ones count) and no definition.

    A task is kept when a run, a discarded run, a [tasks."REF"] config table or a
    file the config's `inputs` match names it. All files go in one batch under the
    writer lock, or none; `check` never prunes.
    """
    from silo_regress.recording.pruning import plan_prune
    from silo_regress.recording.pruning import prune as remove
    from silo_regress.runs.cache import index_runs

    _, config = setup(ctx)
    store = working_tree(config)
    plan = plan_prune(config, index_runs(config.runs_dir), store, parse_refs(refs))
    lines = []
    for kept in plan.kept:
        where = f" ({kept.where})" if kept.where else ""
        lines.append(f"kept {kept.ref}: {kept.why.value}{where}")
    for refused in plan.refused:
        named = "" if refused.problem.startswith(refused.path) else f"{refused.path}: "
        lines.append(
            f"refused {refused.ref}: {named}{refused.problem}; none of its baselines is removed"
        )
    verb = "would remove" if dry_run else "removed"
    if not dry_run:
        remove(config, store, plan)
    for removal in plan.removals:
        why = "named" if removal.chosen else "no run and no task definition names it"
        lines.append(f"{verb} {removal.path} ({why})")
    count = len(plan.removals)
    if not count:
        lines.append("nothing to prune")
    elif dry_run:
        lines.append(f"dry run: {count} file{'s' * (count != 1)} would be removed; nothing was")
    else:
        lines.append(
            f"{count} file{'s' * (count != 1)} removed; stage it with: git add -A "
            f"{config.relative(config.baselines_dir)}"
        )
    out("\n".join(lines) + "\n")
    return 0
