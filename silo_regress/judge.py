"""Verdicts: the newest run of each target against its baselines, one outcome per artifact.

Values only: nothing here prints or decides an exit code. The structural changes
come from :mod:`silo_regress.jsondiff`, their meaning from
:mod:`silo_regress.behaviour`; this module decides which verdict applies.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from silo_regress.baselines import Baseline, BaselineSource, group_variants, layout_problem
from silo_regress.canonical import (
    FORMAT_VERSION,
    Document,
    apply_ignores,
    canonicalize,
    serialize,
)
from silo_regress.config import Config, TaskSettings
from silo_regress.direction import compare_scores, read_scores
from silo_regress.errors import InputError
from silo_regress.fsio import FileError
from silo_regress.outcome import BaselineOrigin, Direction, Outcome, Report, Verdict
from silo_regress.runs import RESULT_FILE, Run, RunIndex, UnreadableArtifactError, read_artifact
from silo_regress.targets import Target, describe_ambiguous, select_targets
from silo_regress.taskref import TaskRef
from silo_regress.toolpath import IncompleteTraceError, is_derived, source_file
from silo_regress.volatile import might_be_volatile, scan_volatile

if TYPE_CHECKING:
    # Loaded only when used: a matching check without configured inputs (the
    # pre-commit hook, most days) judges no freshness and diffs nothing.
    from silo_regress.fingerprint import InputSnapshot
    from silo_regress.freshness import RunFreshness
    from silo_regress.jsondiff import Change


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
) -> Report:
    """Compare the newest run of every selected task with its baselines.

    ``runs`` pins the run used for a task (``check --run`` compares the runs it
    just made, not whatever is newest on disk). ``inputs`` are the inputs being
    checked: a run made from others is ``stale-run`` (with ``allow_stale``, a
    warning and the ordinary verdict).
    """
    if targets is None:
        targets = select_targets(config, index, source, refs)
    version = source.format_version()
    wrong_version = _version_problem(version, source, config) if targets else None
    outcomes: list[Outcome] = []
    notes: list[str] = list(inputs.warnings) if inputs is not None else []
    for target in targets:
        run = None
        if target.key is not None:
            # With pinned runs (check --run) only those count: an older run on
            # disk is not a result anybody just produced.
            run = runs.get(target.key) if runs is not None else index.newest(*target.key)
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
                        run_path=_run_path(config, run, artifact),
                        run_name=run.name if run else None,
                        detail=f"no baseline; record it with: silo-regress record {target.ref}",
                    )
                )
            continue
        if target.ambiguous:
            outcomes.extend(_ambiguous(config, target))
            continue
        fresh = None
        if run is not None and inputs is not None:
            from silo_regress.freshness import judge_run

            fresh = judge_run(config, run, inputs, ref=target.ref)
        if fresh is not None:
            notes.extend(fresh.warnings)
        result = _read_result(config, run) if run is not None else None
        judged: list[Outcome] = []
        for variants in group_variants(target.baselines).values():
            compare = functools.partial(
                _compare_one,
                config,
                source,
                environment=environment,
                run=run,
                result=result,
                wrong_version=wrong_version,
                settings=settings,
            )
            if len(variants) == 1 and variants[0].variant == 1:
                judged.append(compare(variants[0]))
            else:
                judged.append(_judge_variants(source, variants, compare))
        directed = _with_direction(settings, judged, result)
        outcomes.extend(_with_freshness(o, fresh, allow_stale=allow_stale) for o in directed)
        if fresh is not None and fresh.stale is not None and allow_stale:
            notes.append(f"{fresh.describe()} (judged anyway: --allow-stale)")
    return Report(
        outcomes=tuple(outcomes),
        warnings=_warnings(config, index) + tuple(notes),
        source=BaselineOrigin(source.kind, source.label),
    )


def _ambiguous(config: Config, target: Target) -> list[Outcome]:
    """One missing-run outcome per baseline artifact, saying which runs could be meant."""
    detail = describe_ambiguous(config, target)
    return [
        Outcome(
            task=target.ref,
            environment=None,
            artifact=variants[0].artifact,
            verdict=Verdict.MISSING_RUN,
            baseline_path=config.relative(os.path.join(config.baselines_dir, variants[0].relpath)),
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


def _with_freshness(outcome: Outcome, fresh: RunFreshness | None, *, allow_stale: bool) -> Outcome:
    """A stale run cannot judge the code being checked: its verdict says so."""
    if fresh is None:
        return outcome
    outcome = replace(outcome, provenance=fresh.record)
    if fresh.stale is None or allow_stale:
        return outcome
    if outcome.verdict in (Verdict.FORMAT_VERSION, Verdict.MISSING_RUN):
        return outcome
    return replace(
        outcome,
        verdict=Verdict.STALE_RUN,
        detail=fresh.describe(),
        changes=(),
        behaviour=(),
    )


def _run_path(config: Config, run: Run | None, artifact: str) -> str | None:
    if run is None:
        return None
    return config.relative(os.path.join(run.path, source_file(artifact)))


@dataclass(frozen=True)
class _Result:
    """A run's result.json: why it is unusable, or its canonical document."""

    problem: str | None
    doc: Document | None = None


def _read_result(config: Config, run: Run) -> _Result:
    path = config.relative(os.path.join(run.path, RESULT_FILE))
    try:
        data = read_artifact(run, RESULT_FILE)
    except UnreadableArtifactError as exc:
        return _Result(f"{path} {exc.reason}")
    if data is None:
        return _Result(f"{path} is missing: the rollout crashed or is still running")
    try:
        doc = canonicalize(data, source=path)
    except InputError as exc:
        return _Result(exc.message)
    if not isinstance(doc.value, dict):
        return _Result(f"{path} is not a JSON object")
    return _Result(None, doc)


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
            first, verdict=Verdict.NOT_CANONICAL, detail=problem, changes=(), behaviour=()
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

    from silo_regress.jsondiff import MISSING

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


def _compare_one(
    config: Config,
    source: BaselineSource,
    baseline: Baseline,
    /,
    *,
    environment: str | None,
    run: Run | None,
    result: _Result | None,
    wrong_version: str | None,
    settings: TaskSettings,
    details: bool = True,
) -> Outcome:
    artifact = baseline.artifact
    blank = Outcome(
        task=baseline.ref,
        environment=environment,
        artifact=artifact,
        verdict=Verdict.MATCH,
        baseline_path=config.relative(os.path.join(config.baselines_dir, baseline.relpath)),
        run_path=_run_path(config, run, artifact),
        run_name=run.name if run else None,
        variant=baseline.variant if baseline.name_problem is None else None,
    )
    return _judge(
        config,
        source,
        baseline,
        blank,
        run=run,
        result=result,
        wrong_version=wrong_version,
        settings=settings,
        details=details,
    )


def _judge(
    config: Config,
    source: BaselineSource,
    baseline: Baseline,
    blank: Outcome,
    *,
    run: Run | None,
    result: _Result | None,
    wrong_version: str | None,
    settings: TaskSettings,
    details: bool = True,
) -> Outcome:
    """``blank`` with its verdict, detail, texts, changes and behaviour filled in.

    Without ``details`` a changed artifact gets no changes or behaviour: enough to
    learn the run's text before deciding which variant is worth a diff.
    """
    artifact = baseline.artifact
    if wrong_version is not None:
        return replace(blank, verdict=Verdict.FORMAT_VERSION, detail=wrong_version)
    try:
        baseline_bytes = source.read(baseline)
    except FileError as exc:
        if exc.kind is None:  # unreadable (permission, I/O): a setup problem, exit 3
            raise
        # A FIFO, link or directory where a baseline belongs: compared with nothing,
        # so it must fail the check, never be skipped.
        return replace(blank, verdict=Verdict.NOT_CANONICAL, detail=exc.message)
    read = replace(blank, baseline_text=baseline_bytes)
    if run is None or result is None:
        return replace(
            read,
            verdict=Verdict.MISSING_RUN,
            detail=f"no run of {baseline.ref} under {config.relative(config.runs_dir)}/",
        )
    if result.problem is not None:
        return replace(
            read, verdict=Verdict.INCOMPLETE_RUN, detail=f"newest run {run.name}: {result.problem}"
        )
    if artifact == RESULT_FILE and result.doc is not None:
        run_doc = result.doc
    else:
        run_source = config.relative(os.path.join(run.path, artifact))
        try:
            data = read_artifact(run, artifact, trace_events=config.trace_events)
        except UnreadableArtifactError as exc:
            detail = f"{run_source} {exc.reason}"
            return replace(read, verdict=Verdict.INCOMPLETE_RUN, detail=detail)
        except IncompleteTraceError as exc:
            gap = exc.incomplete
            detail = f"newest run {run.name}: {gap.describe(config.relative(gap.path))}"
            return replace(read, verdict=Verdict.INCOMPLETE_RUN, detail=detail)
        if data is None:
            return replace(read, verdict=Verdict.INCOMPLETE_RUN, detail=f"{run_source} is missing")
        if (
            is_derived(artifact)
            and data == baseline_bytes
            and _plain_match(settings, data, artifact)
        ):
            # Derived bytes are canonical already: a matching tool path of 100 MB
            # is never parsed into objects.
            return replace(read, run_text=data)
        try:
            run_doc = canonicalize(data, source=run_source)
        except InputError as exc:
            return replace(read, verdict=Verdict.INCOMPLETE_RUN, detail=exc.message)
    run_doc = _ignored(settings, run_doc, artifact)
    read = replace(read, run_text=run_doc.text)
    if baseline_bytes == run_doc.text:
        findings = _findings(settings, run_doc, artifact, run)
        if findings:
            return replace(
                read, verdict=Verdict.VOLATILE, detail=_describe(findings, blank.baseline_path)
            )
        return read
    shown = source.display_path(baseline)
    try:
        base_doc = canonicalize(baseline_bytes, source=shown)
    except InputError as exc:
        return replace(read, verdict=Verdict.NOT_CANONICAL, detail=exc.message)
    if base_doc.text != baseline_bytes:
        return replace(
            read,
            verdict=Verdict.NOT_CANONICAL,
            detail=f"{shown} is not in canonical form; run `silo-regress fmt` to rewrite it",
        )
    findings = _findings(settings, base_doc, artifact, run)
    if findings:
        return replace(read, verdict=Verdict.VOLATILE, detail=_describe(findings, shown))
    base_doc = _ignored(settings, base_doc, artifact)
    if base_doc.text == run_doc.text:
        return read
    if not details:
        return replace(read, verdict=Verdict.CHANGED)
    # Only a changed artifact needs the profiles: a matching check (the pre-commit
    # hook, most days) never pays for importing them.
    from silo_regress import behaviour
    from silo_regress.jsondiff import diff_values

    return replace(
        read,
        verdict=Verdict.CHANGED,
        changes=tuple(diff_values(base_doc.value, run_doc.value)),
        behaviour=behaviour.compare(artifact, base_doc.value, run_doc.value),
    )


def _plain_match(settings: TaskSettings, text: bytes, artifact: str) -> bool:
    """True when canonical ``text`` equal to its baseline is a match with no parse."""
    ignored = any(p.applies_to(artifact) for p in settings.ignore)
    return not ignored and not might_be_volatile(text)


def _with_direction(
    settings: TaskSettings, judged: list[Outcome], result: _Result | None
) -> list[Outcome]:
    """A task's outcomes with the scores of its result.json and the direction of its changes.

    The direction is the task's, read from result.json alone, so a task whose
    state diff changed while its scores held is drift.
    """
    if result is None or result.doc is None:
        return judged
    at = next((n for n, o in enumerate(judged) if o.artifact == RESULT_FILE), None)
    scores = None
    if at is not None:
        outcome = judged[at]
        after = _ignored(settings, result.doc, RESULT_FILE).value
        before = None
        if outcome.verdict is Verdict.MATCH:
            before = after
        elif outcome.verdict is Verdict.CHANGED and outcome.baseline_text is not None:
            value = canonicalize(outcome.baseline_text, source=outcome.baseline_path or "").value
            before = apply_ignores(value, artifact=RESULT_FILE, ignore=settings.ignore)
        if before is after:  # a match: one value, read once
            same = read_scores(after)
            scores = (same, same)
        elif before is not None:
            scores = (read_scores(before), read_scores(after))
        if scores is not None:
            judged[at] = replace(outcome, scores=scores)
    if not any(o.verdict is Verdict.CHANGED for o in judged):
        return judged
    direction = compare_scores(*scores).direction if scores else Direction.DRIFT
    return [replace(o, direction=direction) if o.verdict is Verdict.CHANGED else o for o in judged]


def _ignored(settings: TaskSettings, doc: Document, artifact: str) -> Document:
    if not any(p.applies_to(artifact) for p in settings.ignore):
        return doc
    value = apply_ignores(doc.value, artifact=artifact, ignore=settings.ignore)
    return Document(value=value, text=serialize(value))


def _findings(settings: TaskSettings, doc: Document, artifact: str, run: Run) -> list[str]:
    if not might_be_volatile(doc.text):
        return []
    # The baseline is judged by the clock of the run it is compared with: a
    # wall-clock time copied into either is that run's, or far from it.
    from silo_regress.runclock import clock_of  # only once a volatile hint is seen

    clock = clock_of(run)
    found = scan_volatile(doc.value, artifact=artifact, clock=clock, exempt=settings.scan_exempt)
    return [f"{f.pointer} ({f.reason})" for f in found]


def _describe(findings: Sequence[str], where: str | None) -> str:
    head = ", ".join(findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return (
        f"{where} holds volatile content at {head}{more}; "
        "exempt or ignore these paths in [tool.silo-regress], or fix the producer"
    )
