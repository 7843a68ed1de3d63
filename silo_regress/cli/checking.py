"""The body of `check`, with no CLI framework: the typer command and the lean start-up
path (cli/quick.py) both run it, so a hook or CI job that takes the lean path gets the
same command, not a copy of it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.cli.common import (
    Globals,
    baseline_source,
    out,
    parse_refs,
    project_config,
    warn,
)
from silo_regress.cli.failon import FailOn, exit_code
from silo_regress.cli.output import ReportFormat, emit_report, start_history
from silo_regress.errors import InputError, UsageError
from silo_regress.judging.outcome import HOOK_VARIABLE, Hook

if TYPE_CHECKING:
    from silo_regress.judging.targets import Target
    from silo_regress.project.config import Config
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runs.index import Run, RunIndex
    from silo_regress.stats.sequential import Decision
    from silo_regress.store.baselines import BaselineSource


@dataclass(frozen=True)
class CheckOptions:
    """What `check` was asked for, as its options and arguments give it."""

    refs: tuple[str, ...] = ()
    report_format: ReportFormat = ReportFormat.TEXT
    output: Path | None = None
    shard: str | None = None
    against: str | None = None
    staged: bool = False
    allow_no_runs: bool = False
    run_first: bool = False
    jobs: int | None = None
    agent: str | None = None
    timeout: float | None = None
    verbose: bool = False
    fail_on: FailOn = FailOn.CHANGE
    allow_stale: bool = False
    repeat: int | None = None  # rollouts per task with run_first, each judged on its own
    until_decided: bool = False  # --repeat-until-decided: rounds of `repeat` rollouts
    max_repeat: int | None = None  # --max-repeat K: the cap on a task's rollouts
    require_power: bool = False  # insufficient-data fails a stats task


def run_check(g: Globals, options: CheckOptions) -> int:
    """Compare the newest run of each baselined task with its baselines; the exit code."""
    from silo_regress.judging.judge import check as judge_check
    from silo_regress.judging.targets import select_targets
    from silo_regress.project.config import NoProjectError
    from silo_regress.runs.cache import index_runs

    refs = list(options.refs)
    if options.repeat is not None and not options.run_first:
        raise UsageError(
            f"--repeat {options.repeat} needs --run: it sets how many rollouts check --run "
            "starts per task, and a check without --run starts none"
        )
    round_size = _check_rounds(options)
    try:
        config = project_config(g)
    except NoProjectError as exc:
        if not options.allow_no_runs:
            raise
        out(f"silo-regress: {exc.message} (--allow-no-runs: nothing to compare)\n")
        return 0
    if options.repeat == 1 and config.gates_statistically and not options.until_decided:
        raise UsageError(
            "--repeat 1 gives the stats gate one rollout a task, which can never show a "
            "change in a pass rate; give --repeat 2 or more (docs/statistics.md)"
        )
    decisions: dict[TaskRef, Decision] | None = None
    chosen_shard = None
    if options.shard is not None:
        from silo_regress.judging.sharding import parse_shard

        chosen_shard = parse_shard(options.shard)
    source = baseline_source(config, against=options.against, staged=options.staged)
    pinned: list[dict[tuple[str, str], Run]] | None = None
    if options.run_first:
        from silo_regress.cli.rolloutoptions import RolloutFlags
        from silo_regress.cli.runner import run_before_check

        run_refs = parse_refs(refs)
        pinned = [{} for _ in range(round_size or options.repeat or 1)]
        if chosen_shard is not None:
            # Run only this shard's tasks: the other shards' jobs run theirs.
            from silo_regress.judging.sharding import select_shard

            planned = select_targets(config, index_runs(config.runs_dir), source, run_refs)
            run_refs = [t.ref for t in select_shard(planned, chosen_shard) if not t.refused]
        if run_refs or chosen_shard is None:
            flags = RolloutFlags(jobs=options.jobs, agent=options.agent, timeout=options.timeout)
            if round_size is not None and options.max_repeat is not None:
                from silo_regress.cli.runner import run_until_decided

                pinned, decisions = run_until_decided(
                    g,
                    config,
                    source,
                    run_refs,
                    flags=flags,
                    round_size=round_size,
                    cap=options.max_repeat,
                )
            else:
                pinned = run_before_check(
                    g, config, source, run_refs, flags=flags, repeat=options.repeat or 1
                )
    index = index_runs(config.runs_dir)
    if options.allow_no_runs and not index.by_task:
        # A name that maps to no task needs no run to be judged: it fails a fresh clone too.
        targets = [t for t in select_targets(config, index, source) if t.refused]
        if not targets:
            out(
                f"silo-regress: no runs under {config.relative(config.runs_dir)}/, "
                "nothing to compare (run Silo, or use `silo-regress check` in CI)\n"
            )
            return 0
    else:
        targets = select_targets(config, index, source, parse_refs(refs))
    if not targets:
        note = _nothing_to_check(config, source)
        if not options.allow_no_runs:
            raise InputError(note)
        out(f"silo-regress: {note} (--allow-no-runs)\n")
        return 0
    if options.allow_no_runs:
        targets = _with_runs(config, index, targets)
    if not refs and chosen_shard is None:
        _name_unbaselined(config, index, targets)
    if chosen_shard is not None:
        from silo_regress.judging.sharding import select_shard

        targets = select_shard(targets, chosen_shard)
    history = start_history(
        options.report_format, config, [t.ref for t in targets if not t.refused]
    )
    inputs = None
    if config.input_globs:  # without inputs there is no stale detection to load
        from silo_regress.project.fingerprint import current_inputs

        # The hook judges the inputs being committed; every other check the working tree.
        inputs = current_inputs(config, staged=options.staged)
    # Under --repeat-until-decided the first round holds every task; later rounds only
    # the undecided stats tasks, whose byte outcomes the stats gate sets aside anyway.
    first_round = pinned[: round_size or len(pinned)] if pinned is not None else None
    reports = [
        judge_check(
            config,
            index,
            source,
            targets=targets,
            runs=runs,
            inputs=inputs,
            allow_stale=options.allow_stale,
        )
        for runs in (first_round if first_round is not None else [None])
    ]
    report = reports[0]
    folded = round_size or options.repeat or 1
    if folded > 1:
        from silo_regress.judging.repeats import fold_repeats

        # Set even for a shard that ran nothing, so merge sees one rollout count.
        report = replace(fold_repeats(reports), repeat=folded)
    if config.gates_statistically:  # only then is the stats gate loaded at all
        from silo_regress.judging.statsgate import apply_stats_gate

        report = apply_stats_gate(
            config,
            source,
            index,
            report,
            targets=targets,
            pins=pinned,
            decisions=decisions,
            require_power=options.require_power,
        )
    if chosen_shard is not None:
        report = replace(report, shard=(chosen_shard.index, chosen_shard.count))
    if options.staged:
        report = replace(report, hook=running_hook(os.environ))
    emit_report(
        report,
        options.report_format,
        g,
        output=options.output,
        verbose=options.verbose,
        history=history,
    )
    return exit_code(report, options.fail_on)


def _check_rounds(options: CheckOptions) -> int | None:
    """The round size of --repeat-until-decided (None without it), or a usage error."""
    if not options.until_decided:
        if options.max_repeat is not None:
            raise UsageError("--max-repeat K caps --repeat-until-decided: give it with that")
        return None
    if not options.run_first or options.max_repeat is None:
        raise UsageError(
            "--repeat-until-decided needs --run and --max-repeat K: it starts rollouts in "
            "rounds, and K caps a task's rollouts"
        )
    size = options.repeat or min(4, options.max_repeat)
    if options.max_repeat < size:
        raise UsageError(
            f"--max-repeat {options.max_repeat} is below the round of --repeat {size}: "
            "give K at least M"
        )
    return size


def _nothing_to_check(config: Config, source: BaselineSource) -> str:
    """A check that compared nothing must say where it looked: it is never a pass."""
    where = config.relative(config.baselines_dir)
    return (
        f"no baselines to check: no baseline files under {where}/ ({source.label}) in "
        f"project {config.project} (config: {config.where if config.source else 'defaults'}); "
        "record some with `silo-regress record --all`, or pass --project DIR"
    )


def _name_unbaselined(config: Config, index: RunIndex, targets: list[Target]) -> None:
    """One line naming the tasks that have runs but no baseline: check skips them."""
    covered = {t.key for t in targets if t.key is not None}
    covered |= {(e, t.ref.task_id) for t in targets for e in t.ambiguous}  # named already
    loose = [f"{e}/{t}" for e, t in index.task_keys() if (e, t) not in covered]
    if not loose:
        return
    shown = ", ".join(loose[:10]) + (f" and {len(loose) - 10} more" if len(loose) > 10 else "")
    count = len(loose)
    warn(
        f"{count} task{'s' * (count != 1)} with runs but no baseline, not checked: {shown} "
        "(record them with `silo-regress record TASK`)"
    )


def _with_runs(config: Config, index: RunIndex, targets: list[Target]) -> list[Target]:
    """The targets that have a run; the hook cannot judge a task nobody has run here."""
    kept = [
        t for t in targets if not t.baselines or t.ambiguous or (t.key and index.runs_of(*t.key))
    ]
    if len(kept) < len(targets):
        skipped = len(targets) - len(kept)
        out(
            f"silo-regress: {skipped} baselined task{'s' * (skipped != 1)} "
            f"{'have' if skipped != 1 else 'has'} no run under "
            f"{config.relative(config.runs_dir)}/ and {'were' if skipped != 1 else 'was'} "
            "not compared (--allow-no-runs)\n"
        )
    return kept


def running_hook(environ: Mapping[str, str]) -> Hook | None:
    """The hook a ``check --staged`` runs in: the pre-commit framework sets PRE_COMMIT=1
    for its hooks, and install-hook's script sets SILO_REGRESS_HOOK; None for neither
    (a hook written by an older version, or a check run by hand)."""
    if environ.get("PRE_COMMIT") == "1":
        return Hook.FRAMEWORK
    if environ.get(HOOK_VARIABLE) == Hook.GIT.value:
        return Hook.GIT
    return None
