"""The core commands: record, check, diff, fmt, status."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from silo_regress.cli.app import app
from silo_regress.cli.common import (
    globals_of,
    handled,
    out,
    parse_refs,
    setup,
    warn,
    working_tree,
)
from silo_regress.cli.failon import FailOn
from silo_regress.cli.options import (
    FailOnOption,
    FormatOption,
    OutputOption,
    SuiteGateOption,
    VerboseOption,
)
from silo_regress.cli.output import ReportFormat, emit_report, start_history
from silo_regress.cli.rolloutoptions import (
    AgentOption,
    JobsOption,
    RolloutFlags,
    TimeoutOption,
    at_least,
)
from silo_regress.errors import UsageError

if TYPE_CHECKING:
    pass

# --- record -------------------------------------------------------------------


@app.command()
@handled
def record(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(help="Task refs: TASK-002 or ENV/TASK-002.", show_default=False),
    ] = None,
    all_tasks: Annotated[
        bool, typer.Option("--all", help="Record every task that has a complete run.")
    ] = False,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            metavar="RUN_ID",
            help="Record this run (a directory name) instead of the newest.",
            show_default=False,
        ),
    ] = None,
    old_run_id: Annotated[
        str | None,
        typer.Option("--run", metavar="RUN_ID", hidden=True, help="Deprecated: --run-id."),
    ] = None,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            callback=at_least(1),
            help="Start Silo N times (at least 1) per task first; refuse a task whose runs "
            "disagree.",
            show_default=False,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="With --repeat: record even when the runs disagree.")
    ] = False,
    variants: Annotated[
        bool,
        typer.Option(
            "--variants",
            help="With --repeat: accept each distinct result as a variant (TASK~2...), up to 10.",
        ),
    ] = False,
    add_variant: Annotated[
        bool,
        typer.Option(
            "--add-variant",
            help="Keep the task's accepted variants and add the newest run as another.",
        ),
    ] = False,
    paths: Annotated[
        list[str] | None,
        typer.Option(
            "--path",
            metavar="POINTER",
            help="Take only this JSON Pointer's value from the run (repeatable; "
            "ARTIFACT:POINTER for one artifact); the rest of the baseline stays.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; write nothing.")
    ] = False,
    jobs: JobsOption = None,
    agent: AgentOption = None,
    timeout: TimeoutOption = None,
) -> int:
    """Store the newest complete run of each task as its baselines (canonical form).

    A task ref or a baseline path as reports print it (baselines/TASK-002.result.json,
    which records that artifact only). Each file reports new, changed or unchanged,
    with the behaviour it accepts. Nothing is written when any artifact is invalid
    or holds volatile content (timestamps, run ids).
    """
    from silo_regress.cli.runner import ConsoleWatcher, print_repeated
    from silo_regress.commands.recording import RecordRequest, RepeatedRecord
    from silo_regress.commands.recording import record as record_runs
    from silo_regress.render.recording import render_record

    g, config = setup(ctx)
    request = RecordRequest(
        refs=tuple(refs or ()),
        all_tasks=all_tasks,
        run_id=run_id,
        old_run_id=old_run_id,
        repeat=repeat,
        force=force,
        variants=variants,
        add_variant=add_variant,
        paths=tuple(paths or ()),
        dry_run=dry_run,
        flags=RolloutFlags(jobs=jobs, agent=agent, timeout=timeout),
    )
    done = record_runs(config, request, watcher=ConsoleWatcher(g))
    if isinstance(done, RepeatedRecord):
        return print_repeated(g, config, done, repeat=repeat or 1)
    colour = g.use_color()
    out(render_record(done.recordings, color=colour, dry_run=done.dry_run), colour=colour)
    return 0


# --- check --------------------------------------------------------------------


@app.command()
@handled
def check(
    ctx: typer.Context,
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Only these tasks (default: every baselined task).", show_default=False
        ),
    ] = None,
    report_format: FormatOption = ReportFormat.TEXT,
    output: OutputOption = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="K/N",
            help="Check only shard K of N (K/N, 1-based), split by task ref.",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="GITREF",
            help="Compare with the baselines as of this git commit (e.g. origin/main).",
            show_default=False,
        ),
    ] = None,
    staged: Annotated[
        bool,
        typer.Option("--staged", help="Compare with the baselines staged in the git index."),
    ] = False,
    allow_no_runs: Annotated[
        bool,
        typer.Option(
            "--allow-no-runs",
            help="Pass with a note when no run exists at all, and skip tasks that have no "
            "run (fresh clones; the pre-commit hook).",
        ),
    ] = False,
    run_first: Annotated[
        bool,
        typer.Option("--run", help="Start Silo for the tasks first, then check the new runs."),
    ] = False,
    repeat: Annotated[
        int | None,
        typer.Option(
            "--repeat",
            "-n",
            callback=at_least(1),
            metavar="N",
            help="With --run: rollouts per task (at least 1), each judged against the accepted "
            "variants; "
            'a task passes when every rollout matches one. A task with gate = "stats" is '
            "judged by its pass count instead (at least 2).",
            show_default=False,
        ),
    ] = None,
    jobs: JobsOption = None,
    agent: AgentOption = None,
    timeout: TimeoutOption = None,
    verbose: VerboseOption = False,
    fail_on: FailOnOption = FailOn.CHANGE,
    suite_gate: SuiteGateOption = None,
    allow_stale: Annotated[
        bool,
        typer.Option(
            "--allow-stale",
            help="Judge runs made from other inputs (stale-run) anyway, with a warning.",
        ),
    ] = False,
    until_decided: Annotated[
        bool,
        typer.Option(
            "--repeat-until-decided",
            help='With --run and --max-repeat: run the rollouts of gate = "stats" tasks in '
            "rounds of --repeat N (default 4) and decide the check at each round (the "
            "sequential check, as the sequential config key sets up), never past K.",
        ),
    ] = False,
    max_repeat: Annotated[
        int | None,
        typer.Option(
            "--max-repeat",
            callback=at_least(1),
            metavar="K",
            help="With --repeat-until-decided: at most K rollouts per task.",
            show_default=False,
        ),
    ] = None,
    require_power: Annotated[
        bool,
        typer.Option(
            "--require-power",
            help='Fail a gate = "stats" task whose rollouts were too few to show any '
            "regression (insufficient-data), instead of warning.",
        ),
    ] = False,
    unit: Annotated[
        str | None,
        typer.Option(
            "--unit",
            metavar="I/N",
            help="With --run --repeat M: run only worker I's rollouts of N (1-based; auto/N "
            "takes I from JOB_COMPLETION_INDEX or SILO_REGRESS_UNIT_INDEX, 0-based) and "
            "write a unit report for merge (docs/distributed.md).",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Compare the newest run of each baselined task with its baselines; never writes one.

    Exit 0 when every artifact matches, 1 with a report when any does not.

    Tasks with gate = "stats" (docs/statistics.md) are judged by pass counts over
    --repeat N rollouts against their tally: the whole suite first (an exact
    stratified test at 0.045, or the smallest task p times the task count at
    0.005), then each task by Fisher's exact test with Holm's correction at 0.05,
    only once the suite declined. With no change anywhere, the whole check (suite
    and tasks together) fails falsely at most 5% of the time.
    With --repeat-until-decided (or the sequential config key and no --repeat), the
    same test is taken at each round with alpha spent over the rounds, and stops once
    it decides; a task whose baseline never passed runs no rollouts.
    --suite-gate warn reports a suite-regression without failing; off does not test
    the suite (its config key is suite-gate).
    """
    from silo_regress.cli.checking import CheckOptions, run_check

    RolloutFlags(jobs=jobs, agent=agent, timeout=timeout).require(run_first, needs="--run")
    options = CheckOptions(
        refs=tuple(refs or ()),
        report_format=report_format,
        output=output,
        shard=shard,
        against=against,
        staged=staged,
        allow_no_runs=allow_no_runs,
        run_first=run_first,
        jobs=jobs,
        agent=agent,
        timeout=timeout,
        verbose=verbose,
        fail_on=fail_on,
        allow_stale=allow_stale,
        repeat=repeat,
        until_decided=until_decided,
        max_repeat=max_repeat,
        require_power=require_power,
        suite_gate=suite_gate,
        unit=unit,
    )
    return run_check(globals_of(ctx), options)


# --- diff ---------------------------------------------------------------------


@app.command()
@handled
def diff(
    ctx: typer.Context,
    ref: Annotated[
        str | None,
        typer.Argument(
            help="The task: TASK-002 or ENV/TASK-002 (optional with --from).", show_default=False
        ),
    ] = None,
    report_format: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            help="Report format on stdout: any of these for a task; text, markdown or json "
            "with --from.",
        ),
    ] = ReportFormat.TEXT,
    from_ref: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="GITREF",
            help="Show baselines changed since this git commit instead (e.g. origin/main).",
            show_default=False,
        ),
    ] = None,
    to_ref: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="GITREF",
            help="With --from: up to this commit (default: the working tree).",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Show how a task's newest run differs from its baselines (exit 0 either way).

    With --from GITREF: which tasks' baselines changed between two commits, each
    with its behaviour summary; --format markdown gives a PR-comment table.
    """
    from silo_regress.judging.judge import check as run_check
    from silo_regress.runs.cache import index_runs

    g, config = setup(ctx)
    if from_ref is not None:
        from silo_regress.cli.gitcmds import diff_between

        return diff_between(
            g,
            config,
            from_ref=from_ref,
            to_ref=to_ref,
            refs=[ref] if ref else [],
            output_format=report_format.value,
        )
    if to_ref is not None or ref is None:
        raise UsageError("name a task (diff TASK-002), or compare commits with --from GITREF")
    index = index_runs(config.runs_dir)
    report = run_check(config, index, working_tree(config), parse_refs([ref]))
    history = start_history(report_format, config, [o.task for o in report.outcomes])
    emit_report(report, report_format, g, verbose=True, history=history)
    return 0


# --- fmt ----------------------------------------------------------------------


@app.command()
@handled
def fmt(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Baseline files (default: every baseline).", show_default=False),
    ] = None,
    check_only: Annotated[
        bool, typer.Option("--check", help="Only report; exit 1 if any file would change.")
    ] = False,
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve",
            help="Merge baselines that hold git's conflict markers by JSON key, as the "
            "merge driver would (default: every baseline with markers); exit 1 while a "
            "conflict is left.",
        ),
    ] = False,
) -> int:
    """Rewrite baseline files in canonical form, and scan them for volatile content."""
    from silo_regress.recording import formatter

    _, config = setup(ctx)
    if resolve:
        if check_only:
            raise UsageError("fmt --resolve rewrites files; it does not go with --check")
        from silo_regress.cli.mergedriver import report_resolution

        return report_resolution(config, paths or [])
    result = formatter.format_baselines(config, paths or [], check_only=check_only)
    for line in result.lines:
        out(line + "\n")
    if result.problems:
        hint = "run `silo-regress fmt` to rewrite them" if check_only else ""
        out(
            f"{len(result.problems)} of {result.total} baseline files need attention"
            + (f"; {hint}" if hint and result.reformattable else "")
            + "\n"
        )
        return 1
    out(f"{result.total} baseline files are canonical" + (" now" if result.written else "") + "\n")
    return 0


# --- status -------------------------------------------------------------------


class StatusFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"


@app.command()
@handled
def status(
    ctx: typer.Context,
    status_format: Annotated[
        StatusFormat,
        typer.Option("--format", help="text (a table) or json (one object per task)."),
    ] = StatusFormat.TEXT,
) -> int:
    """One row per task: baselines, newest run, its age and agent, verdict, loose ends."""
    from silo_regress.render.text import render_status
    from silo_regress.reports.overview import build_status
    from silo_regress.runs.cache import index_runs

    g, config = setup(ctx)
    index = index_runs(config.runs_dir)
    store = working_tree(config)
    from silo_regress.project.fingerprint import current_inputs

    inputs = current_inputs(config, staged=False)
    result = build_status(config, index, store, inputs=inputs)
    if inputs is None:
        warn(
            f"no stale-run detection: {config.where} sets neither 'inputs' nor 'agent', so "
            "a run made from other code than this looks as good as a fresh one"
        )
    from silo_regress.reports.history import mark_git_states

    result = mark_git_states(config, result)
    for warning in result.report.warnings:
        warn(warning)
    for why in result.refused:
        warn(why)
    if status_format is StatusFormat.JSON:
        import json

        from silo_regress.render.machine import status_json

        out(json.dumps(status_json(result), indent=2, ensure_ascii=False) + "\n")
        return 0
    out(render_status(result, color=g.use_color()), colour=g.use_color())
    return 0
