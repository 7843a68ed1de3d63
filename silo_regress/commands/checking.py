"""``check``: compare each baselined task's runs with its baselines, from typed options to
a typed report; the policy of the whole command (which runs it judges, when it runs Silo
first, what a check that found nothing to compare says) without any CLI framework.

The typer command and the lean start-up path (cli/quick.py) both call :func:`check` and
only render its result and pick the exit code, so a hook or CI job that takes the lean
path gets the same command, not a copy of it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from silo_regress.commands.rollouts import QuietWatcher, RolloutFlags, Watcher
from silo_regress.commands.sources import baseline_source, load_project, parse_refs
from silo_regress.errors import InputError, UsageError
from silo_regress.judging.outcome import HOOK_VARIABLE, Hook

if TYPE_CHECKING:
    from silo_regress.commands.rollouts import Made
    from silo_regress.judging.outcome import Invocation, Report
    from silo_regress.judging.targets import Target
    from silo_regress.project.config import Config, SuiteGate
    from silo_regress.project.taskref import TaskRef
    from silo_regress.runs.index import Run, RunIndex
    from silo_regress.stats.sequential import Decision
    from silo_regress.store.baselines import BaselineSource


@dataclass(frozen=True)
class CheckRequest:
    """What ``check`` was asked for: its options and arguments, parsed."""

    project: Path = Path()
    explicit: bool = False  # --project given: that directory is the project
    refs: tuple[str, ...] = ()
    shard: str | None = None
    against: str | None = None
    staged: bool = False
    allow_no_runs: bool = False
    run_first: bool = False
    jobs: int | None = None
    agent: str | None = None
    timeout: float | None = None
    allow_stale: bool = False
    repeat: int | None = None  # rollouts per task with run_first, each judged on its own
    until_decided: bool = False  # --repeat-until-decided: rounds of `repeat` rollouts
    max_repeat: int | None = None  # --max-repeat K: the cap on a task's rollouts
    require_power: bool = False  # insufficient-data fails a stats task
    suite_gate: SuiteGate | None = None  # --suite-gate: overrides the suite-gate config key


@dataclass(frozen=True)
class Checked:
    """What a check came to: its report, or None when it passed with nothing to compare
    (``--allow-no-runs``); ``notes`` are lines for the person, said before the report."""

    report: Report | None
    notes: tuple[str, ...] = ()
    config: Config | None = None


# Called once the tasks to judge are known, so a slow reading (the HTML page's git
# history) can run while the check judges.
TargetsHook = Callable[["Config", "list[TaskRef]"], None]


def check(
    request: CheckRequest,
    *,
    watcher: Watcher | None = None,
    on_targets: TargetsHook | None = None,
) -> Checked:
    """Compare the newest run of each baselined task with its baselines (or the runs
    ``--run`` makes first); the report, never a write under ``baselines/``."""
    from silo_regress.judging.judge import check as judge_check
    from silo_regress.judging.targets import select_targets
    from silo_regress.project.config import NoProjectError
    from silo_regress.runs.cache import index_runs

    watcher = watcher or QuietWatcher()
    options = request
    refs = list(options.refs)
    notes: list[str] = []
    if options.repeat is not None and not options.run_first:
        raise UsageError(
            f"--repeat {options.repeat} needs --run: it sets how many rollouts check --run "
            "starts per task, and a check without --run starts none"
        )
    round_size = _check_rounds(options)
    try:
        config = load_project(options.project, explicit=options.explicit)
    except NoProjectError as exc:
        if not options.allow_no_runs:
            raise
        _refuse_baselines_elsewhere(options.project, exc.message.split(";")[0], excluding=None)
        return Checked(
            None, (f"silo-regress: {exc.message} (--allow-no-runs: nothing to compare)\n",)
        )
    if options.suite_gate is not None:
        # The command line outranks the config file, as --fail-on outranks its default.
        config = replace(config, suite_gate=options.suite_gate)
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
    made: Made | None = None
    if options.run_first:
        from silo_regress.commands.rollouts import Made, run_before_check

        run_refs = parse_refs(refs)
        made = Made([{} for _ in range(round_size or options.repeat or 1)], {})
        if chosen_shard is not None:
            # Run only this shard's tasks: the other shards' jobs run theirs.
            from silo_regress.judging.sharding import select_shard

            planned = select_targets(config, index_runs(config.runs_dir), source, run_refs)
            run_refs = [t.ref for t in select_shard(planned, chosen_shard) if not t.refused]
        if run_refs or chosen_shard is None:
            if options.repeat is None and round_size is None:
                _refuse_single_rollouts(config, source, run_refs)
            flags = RolloutFlags(jobs=options.jobs, agent=options.agent, timeout=options.timeout)
            if round_size is not None and options.max_repeat is not None:
                from silo_regress.commands.rounds import run_until_decided

                made, decisions = run_until_decided(
                    config,
                    source,
                    run_refs,
                    flags=flags,
                    watcher=watcher,
                    round_size=round_size,
                    cap=options.max_repeat,
                )
            else:
                made = run_before_check(
                    config, source, run_refs, flags=flags, watcher=watcher, repeat=options.repeat
                )
    pinned = made.pins if made is not None else None
    index = index_runs(config.runs_dir)
    if options.allow_no_runs and not index.by_task:
        # A name that maps to no task needs no run to be judged: it fails a fresh clone too.
        targets = [t for t in select_targets(config, index, source) if t.refused]
        if not targets and config.source is None and not os.path.lexists(config.baselines_dir):
            # A project only by its runs directory: its baselines may be elsewhere.
            _refuse_baselines_elsewhere(
                config.project,
                f"project {config.project} has no config file and no "
                f"{config.relative(config.baselines_dir)}/",
                excluding=None,
            )
        if not targets and config.source is None and _has_baselines(config, index, source):
            # Found by its baselines alone (no config file): a hook whose project lost its
            # config (runs-dir elsewhere) would find no runs and pass every commit.
            from silo_regress.errors import ConfigError

            raise ConfigError(
                f"project {config.project} has baselines under "
                f"{config.relative(config.baselines_dir)}/ but no config file and no runs "
                f"under {config.relative(config.runs_dir)}/, so --allow-no-runs cannot tell "
                "a fresh clone from a hook that lost its config: write one "
                "(`silo-regress init --write`, or a silo-regress.toml naming runs-dir)"
            )
        if not targets:
            return Checked(
                None,
                (
                    f"silo-regress: no runs under {config.relative(config.runs_dir)}/, "
                    "nothing to compare (run Silo, or use `silo-regress check` in CI)\n",
                ),
                config,
            )
    else:
        targets = select_targets(config, index, source, parse_refs(refs))
    if not targets:
        note = _nothing_to_check(config, source)
        if not options.allow_no_runs:
            raise InputError(note)
        _refuse_baselines_elsewhere(
            config.project,
            f"project {config.project} has no baselines under "
            f"{config.relative(config.baselines_dir)}/ ({source.label})",
            excluding=config.baselines_dir,
        )
        return Checked(None, (f"silo-regress: {note} (--allow-no-runs)\n",), config)
    if options.allow_no_runs:
        targets, skipped = _with_runs(config, index, targets)
        notes += skipped
    uncovered = None
    if not refs and chosen_shard is None:  # named tasks or a shard: the rest is not theirs
        from silo_regress.judging.coverage import find_uncovered

        uncovered = find_uncovered(config, index, targets)
    if chosen_shard is not None:
        from silo_regress.judging.sharding import select_shard

        targets = select_shard(targets, chosen_shard)
    if on_targets is not None:
        on_targets(config, [t.ref for t in targets if not t.refused])
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
            # A task with fewer rollouts than another (its own `repeat`) has no k-th one
            # to judge: it is judged on the rollouts it had, not reported missing.
            targets=targets if k == 0 else [t for t in targets if runs and t.key in runs],
            runs=runs,
            inputs=inputs,
            allow_stale=options.allow_stale,
            # The runs check --run just made were made by --agent: judge them by it.
            agent=options.agent if options.run_first else None,
        )
        for k, runs in enumerate(first_round if first_round is not None else [None])
    ]
    report = reports[0]
    folded = len(first_round) if first_round is not None else 1
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
            results=made.results if made is not None else None,
            retried=_retried_by_task(made),
            decisions=decisions,
            require_power=options.require_power,
            inputs=inputs,
            hook=options.staged,
        )
        if pinned is not None and folded > 1 and report.stats is not None:
            _keep_candidates(config, source, report, targets=targets, pinned=pinned)
    if chosen_shard is not None:
        report = replace(report, shard=(chosen_shard.index, chosen_shard.count))
    if options.staged:
        report = replace(report, hook=running_hook(os.environ))
    report = replace(report, invocation=invocation_of(config, options))
    if uncovered:
        report = replace(report, uncovered=uncovered)
    return Checked(report, tuple(notes), config)


def _keep_candidates(
    config: Config,
    source: BaselineSource,
    report: Report,
    *,
    targets: list[Target],
    pinned: list[dict[tuple[str, str], Run]],
) -> None:
    """Keep each stats task's candidate tally and the rollouts behind it, for `review`
    to accept: nothing else names the M rollouts of this check afterwards."""
    from silo_regress.recording.candidates import keep_candidates
    from silo_regress.store.baselinenames import Baseline, tally_relpath

    assert report.stats is not None
    judged = {t.task for t in report.stats.tasks}
    runs_of: dict[str, list[str]] = {}
    baselines: dict[str, bytes | None] = {}
    for target in targets:
        if target.key is None or str(target.ref) not in judged:
            continue
        name = str(target.ref)
        runs_of[name] = [pin[target.key].name for pin in pinned if target.key in pin]
        tally = Baseline(target.ref, "tally.json", tally_relpath(target.ref))
        baselines[name] = source.read(tally) if source.has(tally.relpath) else None
    keep_candidates(config.runs_dir, report.stats, runs_of=runs_of, baselines=baselines)


def _has_baselines(config: Config, index: RunIndex, source: BaselineSource) -> bool:
    from silo_regress.judging.targets import select_targets

    return any(t.baselines for t in select_targets(config, index, source))


def _retried_by_task(made: Made | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for outcome in made.retried if made is not None else ():
        if outcome.run is not None:  # infra errors stand in for nothing counted
            name = str(outcome.rollout.task.ref)
            counts[name] = counts.get(name, 0) + 1
    return counts


def _refuse_single_rollouts(config: Config, source: BaselineSource, refs: list[TaskRef]) -> None:
    """``check --run`` with no --repeat gives each task its configured ``repeat``, else
    one rollout; one rollout can never show a stats task's pass rate moving, so an
    implied single rollout is refused the way ``--repeat 1`` is (a CI job that ran it
    would pass whatever the agent did)."""
    if not config.gates_statistically:
        return
    from silo_regress.judging.statsgate import gated_targets
    from silo_regress.judging.targets import select_targets
    from silo_regress.runs.cache import index_runs

    single = [
        t
        for t in gated_targets(
            config, select_targets(config, index_runs(config.runs_dir), source, refs)
        )
        if (config.task_settings(t.ref, environment=t.key[0] if t.key else None).repeat or 1) < 2
    ]
    if single:
        names = ", ".join(str(t.ref) for t in single[:5]) + (
            f" and {len(single) - 5} more" if len(single) > 5 else ""
        )
        raise UsageError(
            f"check --run would give the stats task{'s' * (len(single) != 1)} {names} one "
            "rollout each, which can never show a pass rate moving: set the repeat count in "
            f"{config.where} (repeat = 8, at the top level, per environment or per task) or "
            "give --repeat N (N >= 2; docs/statistics.md)"
        )


def _check_rounds(options: CheckRequest) -> int | None:
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


def _refuse_baselines_elsewhere(scope: Path, what: str, *, excluding: Path | None) -> None:
    """--allow-no-runs passes a check with nothing to compare only when there is truly
    nothing: baselines anywhere below the hook's directory mean the hook is pointed at
    the wrong place (a monorepo without --project), and passing would be a lie."""
    from silo_regress.errors import ConfigError
    from silo_regress.project.survey import find_baselines_below

    found = find_baselines_below(scope, excluding=excluding)
    if not found:
        return
    shown = [_from_here(scope, f.baselines) + "/" for f in found]
    projects = list(dict.fromkeys(_from_here(scope, f.project) for f in found))
    listed = ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
    raise ConfigError(
        f"{what}, but baselines lie below {_from_here(scope, Path('.'))}/ in {listed}; "
        f"--allow-no-runs passes only where there are no baselines at all: {_aim(projects)}"
    )


def _aim(projects: list[str]) -> str:
    """The --project for every project found: a hook given only the first would leave
    the others' regressions ungated (each project needs its own check)."""
    if len(projects) == 1:
        return (
            f"give the check --project {projects[0]} "
            f"(in .pre-commit-config.yaml: args: [--project, {projects[0]}])"
        )
    shown = projects[:5]
    more = f" and {len(projects) - 5} more" if len(projects) > 5 else ""
    return (
        f"give each of the {len(projects)} projects its own check: "
        + ", ".join(f"--project {p}" for p in shown)
        + more
        + " (in .pre-commit-config.yaml, one silo-regress-check hook each: "
        + "; ".join(f"args: [--project, {p}]" for p in shown)
        + ")"
    )


def _from_here(scope: Path, relative: object) -> str:
    """``scope / relative`` as a path that works from the current directory."""
    text = os.path.relpath(os.path.join(os.path.abspath(scope), str(relative)))
    return text.replace(os.sep, "/")


def _with_runs(
    config: Config, index: RunIndex, targets: list[Target]
) -> tuple[list[Target], list[str]]:
    """The targets that have a run, and the note for those left out: the hook cannot
    judge a task nobody has run here."""
    kept = [
        t for t in targets if not t.baselines or t.ambiguous or (t.key and index.runs_of(*t.key))
    ]
    notes = []
    if len(kept) < len(targets):
        skipped = len(targets) - len(kept)
        notes.append(
            f"silo-regress: {skipped} baselined task{'s' * (skipped != 1)} "
            f"{'have' if skipped != 1 else 'has'} no run under "
            f"{config.relative(config.runs_dir)}/ and {'were' if skipped != 1 else 'was'} "
            "not compared (--allow-no-runs)\n"
        )
    return kept, notes


def invocation_of(config: Config, options: CheckRequest) -> Invocation:
    """How check was run, for next steps that work pasted where they were printed: the
    -C DIR as the user wrote it (only when their directory is outside the project, where
    a command without it would find no project), paths from their directory, and the
    rollout options."""
    from silo_regress.judging.outcome import Invocation

    here = _reach(config.project)
    # Inside the project (here is "." or "../.."), a command finds it by walking up.
    outside = any(part not in (".", "..") for part in here.split("/"))
    return Invocation(
        project=str(options.project) if options.explicit and outside else None,
        here="" if here == "." else here,
        baselines=posix_join(here, config.relative(config.baselines_dir)),
        agent=options.agent,
        timeout=options.timeout,
    )


def _reach(directory: Path) -> str:
    """``directory`` from the current one: relative when that is short, else absolute."""
    try:
        text = os.path.relpath(directory).replace(os.sep, "/")
    except (OSError, ValueError):  # the current directory is gone, or another drive
        return str(directory)
    return str(directory) if text.count("../") > 2 else text


def posix_join(head: str, tail: str) -> str:
    import posixpath

    return posixpath.normpath(posixpath.join(head, tail))


def running_hook(environ: Mapping[str, str]) -> Hook | None:
    """The hook a ``check --staged`` runs in: the pre-commit framework sets PRE_COMMIT=1
    for its hooks, and install-hook's script sets SILO_REGRESS_HOOK; None for neither
    (a hook written by an older version, or a check run by hand)."""
    if environ.get("PRE_COMMIT") == "1":
        return Hook.FRAMEWORK
    if environ.get(HOOK_VARIABLE) == Hook.GIT.value:
        return Hook.GIT
    return None
