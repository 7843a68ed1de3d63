"""Verdicts: the newest run of each target against its baselines, one outcome per artifact.

Values only: nothing here prints or decides an exit code. The structural changes
come from :mod:`silo_regress.canon.jsondiff`, their meaning from
:mod:`silo_regress.behaviour`; this module decides which verdict applies.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from silo_regress.canon.canonical import (
    FORMAT_VERSION,
    apply_ignores,
    canonicalize,
    serialize,
)
from silo_regress.canon.prefilter import might_be_volatile
from silo_regress.errors import InputError
from silo_regress.judging.comparison import (
    RunResult,
    apply_task_ignores,
    compare_artifact,
    read_result,
)
from silo_regress.judging.context import TargetContext, origin_of, run_path
from silo_regress.judging.direction import Scores, compare_scores, read_scores
from silo_regress.judging.outcome import (
    BaselineOrigin,
    Direction,
    Outcome,
    Report,
    Verdict,
)
from silo_regress.judging.plainmatch import plain_matches
from silo_regress.judging.targets import Target, describe_ambiguous, select_targets
from silo_regress.project.config import Config, TaskSettings
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import RESULT_FILE, Run, RunIndex, discard_dir
from silo_regress.store.baselines import Baseline, BaselineSource, group_variants, layout_problem
from silo_regress.system.cpus import in_halves, split_workers
from silo_regress.system.fsio import FileError

if TYPE_CHECKING:
    # Loaded only when used: a matching check without configured inputs (the
    # pre-commit hook, most days) judges no freshness and diffs nothing.
    from silo_regress.canon.jsondiff import Change
    from silo_regress.judging.remedies import Remedy
    from silo_regress.project.fingerprint import InputSnapshot
    from silo_regress.runs.freshness import RunFreshness

# Below this many tasks a forked child costs more than judging half of them saves.
SPLIT_TARGETS = 200
# Set to 0 to judge every target the full way, never by the plain-match lane: the two
# give the same report (tests/unit/test_plainmatch.py), so this is for debugging the lane.
FAST_LANE_VARIABLE = "SILO_REGRESS_FAST_LANE"


def fast_lane_default() -> bool:
    """Whether ``check`` takes the plain-match lane when not told: yes, unless
    ``SILO_REGRESS_FAST_LANE=0``."""
    return os.environ.get(FAST_LANE_VARIABLE, "1").strip() != "0"


def check(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    refs: Sequence[TaskRef] = (),
    *,
    targets: Sequence[Target] | None = None,
    runs: dict[tuple[str, str], Run] | None = None,
    inputs: InputSnapshot | None = None,
    allow_stale: bool = False,
    workers: int | None = None,
    fast_lane: bool | None = None,
    agent: str | None = None,
) -> Report:
    """Compare the newest run of every selected task with its baselines.

    ``runs`` pins the run used for a task (``check --run`` compares the runs it
    just made, not whatever is newest on disk). ``inputs`` are the inputs being
    checked: a run made from others is ``stale-run`` (with ``allow_stale``, a
    warning and the ordinary verdict). ``workers`` (default: by the CPUs really
    available) is 1 or 2: with 2, a forked child judges the second half of the tasks.
    ``fast_lane`` (default: :func:`fast_lane_default`) lets a target whose every artifact
    plainly matches be judged in one pass (:mod:`silo_regress.judging.plainmatch`);
    without it every target is judged the full way, to the same report.
    ``agent`` is the --agent the runs were just made with (``check --run --agent``):
    they are judged against it, not the configured agent.
    """
    if targets is None:
        targets = select_targets(config, index, source, refs)
    version = source.format_version()
    wrong_version = _version_problem(version, source, config) if targets else None

    origin = origin_of(source)
    lane = fast_lane_default() if fast_lane is None else fast_lane

    def judge_part(part: Sequence[Target]) -> tuple[list[Outcome], list[str]]:
        return _judge_targets(
            config,
            index,
            source,
            part,
            runs=runs,
            inputs=inputs,
            allow_stale=allow_stale,
            wrong_version=wrong_version,
            origin=origin,
            fast_lane=lane,
            agent=agent,
        )

    if workers is None:
        workers = split_workers(len(targets), minimum=SPLIT_TARGETS)
    outcomes: list[Outcome] = []
    notes: list[str] = list(inputs.warnings) if inputs is not None else []
    for judged, part_notes in in_halves(targets, judge_part, workers=workers):
        outcomes += judged
        notes += part_notes
    if runs is None:
        notes += _discard_notes(config, index, targets)
    return Report(
        outcomes=tuple(outcomes),
        warnings=_warnings(config, index) + tuple(notes),
        source=origin,
    )


def _discard_notes(config: Config, index: RunIndex, targets: Sequence[Target]) -> list[str]:
    """Say which judged task has a newer run that was discarded, and what was judged."""
    if not os.path.isdir(discard_dir(index.runs_dir)):  # the usual case: one stat
        return []
    from silo_regress.runs.discards import list_discarded

    keys = {t.key: t.ref for t in targets if t.key is not None and not t.refused}
    # A task whose every run is discarded resolves to no key: match it by its ref.
    runless = {t.ref for t in targets if t.key is None and not t.refused and not t.ambiguous}
    notes = []
    for item in list_discarded(index.runs_dir):
        run = item.run
        if run is None:
            continue
        if run.key not in keys:
            ref = next((r for r in runless if _names(r, run, config)), None)
            if ref is None:
                continue
            keys[run.key] = ref
        judged = index.newest(*run.key)
        if judged is not None and judged.order > run.order:
            continue  # an older experiment: the judged run is newer anyway
        what = (
            f"judged {judged.name}, its newest run that is not discarded"
            if judged
            else ("no run of it is left to judge")
        )
        notes.append(
            f"{keys[run.key]}: {what}; run {item.name} is discarded "
            f"(`silo-regress restore {item.name}` puts it back)"
        )
    return notes


def _judge_targets(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    targets: Sequence[Target],
    *,
    runs: dict[tuple[str, str], Run] | None,
    inputs: InputSnapshot | None,
    allow_stale: bool,
    wrong_version: str | None,
    origin: BaselineOrigin,
    fast_lane: bool,
    agent: str | None = None,
) -> tuple[list[Outcome], list[str]]:
    """The outcomes of ``targets``, in order, and the warnings judging them gave."""
    outcomes: list[Outcome] = []
    notes: list[str] = []
    for target in targets:
        if target.refused:  # a name that maps to no task: no run, nothing to compare
            from silo_regress.judging.refusals import refused_outcomes

            outcomes.extend(refused_outcomes(config, target, origin))
            continue
        run = None
        if target.key is not None:
            # With pinned runs (check --run) only those count: an older run on
            # disk is not a result anybody just produced.
            run = runs.get(target.key) if runs is not None else index.newest(*target.key)
            if runs is None and index.has_future(*target.key):
                notes.extend(_future_notes(config, index, target.key))
        environment = target.key[0] if target.key else target.ref.environment
        settings = config.task_settings(target.ref, environment=environment)
        if not target.baselines:
            for artifact in settings.artifacts:
                outcomes.append(
                    Outcome(
                        task=target.ref,
                        environment=environment,
                        artifact=artifact,
                        verdict=Verdict.MISSING_BASELINE,
                        run_path=run_path(config, run, artifact),
                        run_name=run.name if run else None,
                        # The command is the report's next step, once for every new
                        # task, not a line per artifact (it said it 7 times for 2 tasks).
                        detail="no baseline",
                    )
                )
            continue
        if target.ambiguous:
            outcomes.extend(_ambiguous(config, target, origin=origin))
            continue
        context = TargetContext.of(config, source, target.ref, environment, run, settings, origin)
        if fast_lane and inputs is None and wrong_version is None:
            plain = plain_matches(context, target)
            if plain is not None:  # the common case: every artifact as recorded
                outcomes.extend(plain)
                continue
        fresh = None
        if run is not None and inputs is not None:
            from silo_regress.runs.freshness import judge_run

            fresh = judge_run(config, run, inputs, ref=target.ref, agent=agent)
        if fresh is not None:
            notes.extend(fresh.warnings)
        result = read_result(config, run) if run is not None else None
        judged: list[Outcome] = []
        match_scores = _match_scores(settings, result)
        compare = functools.partial(
            compare_artifact,
            context,
            result=result,
            wrong_version=wrong_version,
            provenance=fresh.record if fresh is not None else None,
            match_scores=match_scores,
        )
        for variants in group_variants(target.baselines).values():
            if len(variants) == 1 and variants[0].variant == 1:
                judged.append(compare(variants[0]))
            else:
                judged.append(_judge_variants(source, variants, compare))
        directed = _with_direction(settings, judged, result)
        if (
            fresh is None
            and run is not None
            and any(o.verdict is not Verdict.MATCH for o in directed)
        ):
            # Without inputs nothing is stale: the run's record serves only to name
            # the agent and commit that made a result that did not match, so a
            # matching check (the hook, most days) never reads it.
            from silo_regress.runs.freshness import judge_run

            fresh = judge_run(config, run, None, ref=target.ref)
            notes.extend(fresh.warnings)
        if fresh is None:
            outcomes.extend(directed)
            continue
        outcomes.extend(_with_freshness(o, fresh, allow_stale=allow_stale) for o in directed)
        if fresh.stale is not None and allow_stale:
            notes.append(f"{fresh.describe()} (judged anyway: --allow-stale)")
    return outcomes, notes


def _ambiguous(config: Config, target: Target, *, origin: BaselineOrigin) -> list[Outcome]:
    """One missing-run outcome per baseline artifact, saying which runs could be meant."""
    detail = describe_ambiguous(config, target)
    return [
        Outcome(
            task=target.ref,
            environment=None,
            artifact=variants[0].artifact,
            verdict=Verdict.MISSING_RUN,
            baseline_path=config.relative(os.path.join(config.baselines_dir, variants[0].relpath)),
            baseline_source=origin,
            detail=detail,
        )
        for variants in group_variants(target.baselines).values()
    ]


def _version_problem(version: str | None, source: BaselineSource, config: Config) -> str | None:
    if version == str(FORMAT_VERSION):
        return None
    where = f"{config.relative(config.baselines_dir)}/.silo-regress-format"
    if version is None:
        if not source.entries():
            return None
        return (
            f"{where} is missing ({source.label}), so the baselines' format is unknown; "
            "run `silo-regress fmt` to rewrite them in format 1"
        )
    return (
        f"baselines are in format {version!r} ({where}), this silo-regress writes "
        f"format {FORMAT_VERSION}; run `silo-regress fmt` to rewrite them"
    )


def _names(ref: TaskRef, run: Run, config: Config) -> bool:
    environment = ref.environment or config.environment
    return ref.task_id == run.task_id and environment in (None, run.environment)


def _warnings(config: Config, index: RunIndex, *, shown: int = 3) -> tuple[str, ...]:
    """One line per skipped run directory, folded per reason when there are many."""
    by_reason: dict[str, list[str]] = {}
    for item in index.unidentified:
        by_reason.setdefault(item.reason, []).append(config.relative(item.path))
    lines: list[str] = []
    for reason, paths in by_reason.items():
        if len(paths) <= shown:
            lines.extend(f"{path}: skipped, {reason}" for path in paths)
        else:
            head, rest = ", ".join(paths[:shown]), len(paths) - shown
            lines.append(f"{len(paths)} run directories skipped, {reason}: {head} and {rest} more")
    return tuple(lines)


def _future_notes(config: Config, index: RunIndex, key: tuple[str, str]) -> list[str]:
    """A warning for each run of the task dated past this machine's clock: never its
    newest, so it hides no later run, and never silently left out."""
    from silo_regress.canon.visible import visible
    from silo_regress.runs.index import CLOCK_SKEW

    minutes = int(CLOCK_SKEW.total_seconds() // 60)
    return [
        f"{visible(config.relative(run.path))}: skipped, its startedAt "
        f"{visible(run.started_at)} is more than {minutes} minutes past this machine's "
        "clock, so it is not taken as the task's newest run (fix the clock that wrote it)"
        for run in index.future_runs(*key)
    ]


def _with_freshness(outcome: Outcome, fresh: RunFreshness | None, *, allow_stale: bool) -> Outcome:
    """A stale run cannot judge the code being checked: its verdict says so."""
    if fresh is None:
        return outcome
    if outcome.provenance is not fresh.record:
        outcome = replace(outcome, provenance=fresh.record)
    if fresh.stale is None or allow_stale:
        return outcome
    if outcome.verdict in (Verdict.FORMAT_VERSION, Verdict.MISSING_RUN):
        return outcome
    return replace(
        outcome,
        verdict=Verdict.STALE_RUN,
        detail=fresh.describe(advice=False),  # the report's next steps say how, once
        changes=(),
        behaviour=(),
        remedy=_stale_inputs(fresh.stale.changed),
    )


def _judge_variants(
    source: BaselineSource,
    variants: Sequence[Baseline],
    compare: Callable[..., Outcome],
) -> Outcome:
    """One outcome for an artifact with accepted variants (DESIGN.md "Accepted variants").

    A broken variant is reported even when another matches: a gate that hides a
    hand-edited file behind its neighbour is not one. Otherwise the run matches
    when it equals any variant, else the closest (fewest changed paths) is shown.
    A match pays for no diff: the other variants are only checked to be canonical
    and free of volatile content.
    """
    first = compare(variants[0], details=False)
    if first.verdict in (Verdict.FORMAT_VERSION, Verdict.MISSING_RUN, Verdict.INCOMPLETE_RUN):
        return first
    problem = layout_problem(variants, shown=source.display_path)
    texts: list[bytes] = []
    for baseline in variants if problem is None else ():
        try:
            texts.append(source.read(baseline))
        except FileError as exc:
            if exc.kind is None:
                raise
            return compare(baseline)  # a FIFO or link where a variant belongs: its own verdict
    problem = problem or _duplicate(source, variants, texts)
    if problem is not None:
        return replace(
            first,
            verdict=Verdict.NOT_CANONICAL,
            detail=problem,
            changes=(),
            behaviour=(),
            scores=None,
        )
    matched = next((n for n, t in enumerate(texts) if t == first.run_text), None)
    if matched is None and first.verdict is Verdict.CHANGED:
        first = compare(variants[0])
    judged = {0: first}
    for n, (baseline, text) in enumerate(zip(variants, texts, strict=True)):
        if n == 0 or n == matched:
            continue
        if matched is None or might_be_volatile(text) or not _is_canonical(text):
            judged[n] = compare(baseline)  # the full verdict, with its detail
            if judged[n].verdict in (Verdict.NOT_CANONICAL, Verdict.VOLATILE):
                return judged[n]
    if first.verdict in (Verdict.NOT_CANONICAL, Verdict.VOLATILE):
        return first
    if matched is not None:
        return judged.get(matched) or compare(variants[matched])
    changed = [
        (len(o.changes), _distance(o.changes), n, o)
        for n, o in judged.items()
        if o.verdict is Verdict.CHANGED
    ]
    if not changed:
        return first
    *_, number, closest = min(changed, key=lambda item: item[:3])
    count = len(variants)
    detail = f"matches none of {count} accepted variants; the closest is variant {number + 1}"
    return replace(closest, detail=detail)


def _is_canonical(text: bytes) -> bool:
    try:
        return canonicalize(text, source="").text == text
    except InputError:
        return False


def _distance(changes: Sequence[Change]) -> float:
    """How unlike the changed values are, to pick between variants with as many changes.

    A reworded answer is closer to the variant it was reworded from than to one
    that says something else: each change counts 0..1 by how many characters the
    two sides share (difflib's cheap upper bound, on the first 2,000 characters).
    """
    import difflib  # only a non-match with several variants pays for it

    from silo_regress.canon.jsondiff import MISSING

    total = 0.0
    for change in changes:
        if change.baseline is MISSING or change.run is MISSING:
            total += 1
            continue
        before = serialize(change.baseline).decode()[:2000]
        after = serialize(change.run).decode()[:2000]
        total += 1 - difflib.SequenceMatcher(None, before, after, autojunk=False).quick_ratio()
    return total


def _duplicate(
    source: BaselineSource, variants: Sequence[Baseline], texts: Sequence[bytes]
) -> str | None:
    seen: dict[bytes, Baseline] = {}
    for baseline, data in zip(variants, texts, strict=True):
        if data in seen:
            return (
                f"{source.display_path(baseline)} is identical to "
                f"{source.display_path(seen[data])}; run `silo-regress fmt` to drop the copy"
            )
        seen[data] = baseline
    return None


def _match_scores(settings: TaskSettings, result: RunResult | None) -> tuple[Scores, Scores] | None:
    """The scores of the run's result.json, as a match carries them: one value, read once."""
    if result is None or result.doc is None:
        return None
    same = read_scores(apply_task_ignores(settings, result.doc, RESULT_FILE).value)
    return (same, same)


def _with_direction(
    settings: TaskSettings, judged: list[Outcome], result: RunResult | None
) -> list[Outcome]:
    """A task's outcomes with the scores of its result.json and the direction of its changes.

    The direction is the task's, read from result.json alone, so a task whose
    state diff changed while its scores held is drift. A matching result.json
    carries its scores already (:meth:`TargetContext.outcome`).
    """
    if result is None or result.doc is None:
        return judged
    at = next((n for n, o in enumerate(judged) if o.artifact == RESULT_FILE), None)
    scores = None
    if at is not None:
        outcome = judged[at]
        if outcome.verdict is Verdict.MATCH:
            scores = outcome.scores
        elif outcome.verdict is Verdict.CHANGED and outcome.baseline_text is not None:
            after = apply_task_ignores(settings, result.doc, RESULT_FILE).value
            value = canonicalize(outcome.baseline_text, source=outcome.baseline_path or "").value
            before = apply_ignores(value, artifact=RESULT_FILE, ignore=settings.ignore)
            scores = (read_scores(before), read_scores(after))
            judged[at] = replace(outcome, scores=scores)
    if not any(o.verdict is Verdict.CHANGED for o in judged):
        return judged
    direction = compare_scores(*scores).direction if scores else Direction.DRIFT
    return [replace(o, direction=direction) if o.verdict is Verdict.CHANGED else o for o in judged]


def _stale_inputs(changed: tuple[str, ...]) -> Remedy:
    from silo_regress.judging.remedies import StaleInputs  # a stale run only

    return StaleInputs(changed)
