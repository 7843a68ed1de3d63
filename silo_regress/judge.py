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
from typing import TYPE_CHECKING, NamedTuple

from silo_regress.baselines import Baseline, BaselineSource, group_variants, layout_problem
from silo_regress.canonical import (
    FORMAT_VERSION,
    Document,
    apply_ignores,
    canonicalize,
    serialize,
)
from silo_regress.config import Config, TaskSettings
from silo_regress.direction import Scores, compare_scores, read_scores
from silo_regress.errors import InputError
from silo_regress.fingerprint import InputSnapshot
from silo_regress.freshness import RunFreshness, judge_run
from silo_regress.fsio import FileError
from silo_regress.jsondiff import MISSING, Change, diff_values
from silo_regress.outcome import BaselineOrigin, Direction, Outcome, Report, Verdict
from silo_regress.runs import RESULT_FILE, Run, RunIndex, UnreadableArtifactError, read_artifact
from silo_regress.targets import Target, describe_ambiguous, select_targets
from silo_regress.taskref import TaskRef
from silo_regress.toolpath import IncompleteTraceError, is_derived, source_file
from silo_regress.volatile import might_be_volatile, scan_volatile

if TYPE_CHECKING:
    from silo_regress.behaviour.notes import Note
    from silo_regress.provenance import Provenance


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
        fresh = judge_run(config, run, inputs, ref=target.ref) if run is not None else None
        if fresh is not None:
            notes.extend(fresh.warnings)
        result = _read_result(config, run) if run is not None else None
        judged: list[Outcome] = []
        match_scores = _match_scores(settings, result)
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
                provenance=fresh.record if fresh is not None else None,
                match_scores=match_scores,
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
    if outcome.provenance is not fresh.record:
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
    # An f-string, not os.path.join: check builds this for every artifact.
    return config.relative(f"{run.path}{os.sep}{source_file(artifact)}")


@dataclass(frozen=True)
class _Result:
    """A run's result.json: why it is unusable, or its canonical document."""

    problem: str | None
    doc: Document | None = None


def _read_result(config: Config, run: Run) -> _Result:
    path = config.relative(f"{run.path}{os.sep}{RESULT_FILE}")
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


class _Common(NamedTuple):
    """What every outcome of one baseline shares, so each outcome is built once.

    A NamedTuple, not a dataclass: ``check`` makes one per artifact, and a match
    used to cost three ``dataclasses.replace`` copies of an 18-field Outcome.
    """

    task: TaskRef
    environment: str | None
    artifact: str
    baseline_path: str
    run_path: str | None
    run_name: str | None
    variant: int | None
    provenance: Provenance | None
    # The scores a match of result.json carries (baseline and run are one value).
    match_scores: tuple[Scores, Scores] | None

    def outcome(
        self,
        verdict: Verdict,
        *,
        detail: str | None = None,
        baseline_text: bytes | None = None,
        run_text: bytes | None = None,
        changes: tuple[Change, ...] = (),
        behaviour: tuple[Note, ...] = (),
    ) -> Outcome:
        return Outcome(
            task=self.task,
            environment=self.environment,
            artifact=self.artifact,
            verdict=verdict,
            baseline_path=self.baseline_path,
            run_path=self.run_path,
            run_name=self.run_name,
            detail=detail,
            changes=changes,
            behaviour=behaviour,
            baseline_text=baseline_text,
            run_text=run_text,
            variant=self.variant,
            provenance=self.provenance,
            scores=self.match_scores if verdict is Verdict.MATCH else None,
        )


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
    provenance: Provenance | None = None,
    match_scores: tuple[Scores, Scores] | None = None,
    details: bool = True,
) -> Outcome:
    artifact = baseline.artifact
    common = _Common(
        task=baseline.ref,
        environment=environment,
        artifact=artifact,
        baseline_path=config.relative(f"{config.baselines_dir}{os.sep}{baseline.relpath}"),
        run_path=_run_path(config, run, artifact),
        run_name=run.name if run else None,
        variant=baseline.variant if baseline.name_problem is None else None,
        provenance=provenance,
        match_scores=match_scores if artifact == RESULT_FILE else None,
    )
    return _judge(
        config,
        source,
        baseline,
        common,
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
    common: _Common,
    *,
    run: Run | None,
    result: _Result | None,
    wrong_version: str | None,
    settings: TaskSettings,
    details: bool = True,
) -> Outcome:
    """The outcome of one baseline: verdict, detail, texts, changes and behaviour.

    Without ``details`` a changed artifact gets no changes or behaviour: enough to
    learn the run's text before deciding which variant is worth a diff.
    """
    artifact = baseline.artifact
    if wrong_version is not None:
        return common.outcome(Verdict.FORMAT_VERSION, detail=wrong_version)
    try:
        baseline_bytes = source.read(baseline)
    except FileError as exc:
        if exc.kind is None:  # unreadable (permission, I/O): a setup problem, exit 3
            raise
        # A FIFO, link or directory where a baseline belongs: compared with nothing,
        # so it must fail the check, never be skipped.
        return common.outcome(Verdict.NOT_CANONICAL, detail=exc.message)
    if run is None or result is None:
        return common.outcome(
            Verdict.MISSING_RUN,
            detail=f"no run of {baseline.ref} under {config.relative(config.runs_dir)}/",
            baseline_text=baseline_bytes,
        )
    if result.problem is not None:
        return common.outcome(
            Verdict.INCOMPLETE_RUN,
            detail=f"newest run {run.name}: {result.problem}",
            baseline_text=baseline_bytes,
        )
    if artifact == RESULT_FILE and result.doc is not None:
        run_doc = result.doc
    else:
        try:
            data = read_artifact(run, artifact, trace_events=config.trace_events)
        except (UnreadableArtifactError, IncompleteTraceError) as exc:
            return common.outcome(
                Verdict.INCOMPLETE_RUN,
                detail=_unreadable(config, run, artifact, exc),
                baseline_text=baseline_bytes,
            )
        if data is None:
            run_source = config.relative(os.path.join(run.path, artifact))
            return common.outcome(
                Verdict.INCOMPLETE_RUN,
                detail=f"{run_source} is missing",
                baseline_text=baseline_bytes,
            )
        if (
            is_derived(artifact)
            and data == baseline_bytes
            and _plain_match(settings, data, artifact)
        ):
            # Derived bytes are canonical already: a matching tool path of 100 MB
            # is never parsed into objects.
            return common.outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=data)
        try:
            run_doc = canonicalize(data, source=config.relative(f"{run.path}{os.sep}{artifact}"))
        except InputError as exc:
            return common.outcome(
                Verdict.INCOMPLETE_RUN, detail=exc.message, baseline_text=baseline_bytes
            )
    run_doc = _ignored(settings, run_doc, artifact)
    run_text = run_doc.text
    if baseline_bytes == run_text:
        findings = _findings(settings, run_doc, artifact, run)
        if findings:
            return common.outcome(
                Verdict.VOLATILE,
                detail=_describe(findings, common.baseline_path),
                baseline_text=baseline_bytes,
                run_text=run_text,
            )
        return common.outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=run_text)
    shown = source.display_path(baseline)
    problem: str | None = None
    try:
        base_doc = canonicalize(baseline_bytes, source=shown)
    except InputError as exc:
        problem = exc.message
    else:
        if base_doc.text != baseline_bytes:
            problem = f"{shown} is not in canonical form; run `silo-regress fmt` to rewrite it"
    if problem is not None:
        return common.outcome(
            Verdict.NOT_CANONICAL, detail=problem, baseline_text=baseline_bytes, run_text=run_text
        )
    findings = _findings(settings, base_doc, artifact, run)
    if findings:
        return common.outcome(
            Verdict.VOLATILE,
            detail=_describe(findings, shown),
            baseline_text=baseline_bytes,
            run_text=run_text,
        )
    base_doc = _ignored(settings, base_doc, artifact)
    if base_doc.text == run_text:
        return common.outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=run_text)
    if not details:
        return common.outcome(Verdict.CHANGED, baseline_text=baseline_bytes, run_text=run_text)
    # Only a changed artifact needs the profiles: a matching check (the pre-commit
    # hook, most days) never pays for importing them.
    from silo_regress import behaviour

    return common.outcome(
        Verdict.CHANGED,
        baseline_text=baseline_bytes,
        run_text=run_text,
        changes=tuple(diff_values(base_doc.value, run_doc.value)),
        behaviour=behaviour.compare(artifact, base_doc.value, run_doc.value),
    )


def _unreadable(
    config: Config, run: Run, artifact: str, exc: UnreadableArtifactError | IncompleteTraceError
) -> str:
    """Why a run's artifact cannot be read, as an incomplete-run detail."""
    if isinstance(exc, UnreadableArtifactError):
        return f"{config.relative(os.path.join(run.path, artifact))} {exc.reason}"
    gap = exc.incomplete
    return f"newest run {run.name}: {gap.describe(config.relative(gap.path))}"


def _plain_match(settings: TaskSettings, text: bytes, artifact: str) -> bool:
    """True when canonical ``text`` equal to its baseline is a match with no parse."""
    ignored = any(p.applies_to(artifact) for p in settings.ignore)
    return not ignored and not might_be_volatile(text)


def _match_scores(settings: TaskSettings, result: _Result | None) -> tuple[Scores, Scores] | None:
    """The scores of the run's result.json, as a match carries them: one value, read once."""
    if result is None or result.doc is None:
        return None
    same = read_scores(_ignored(settings, result.doc, RESULT_FILE).value)
    return (same, same)


def _with_direction(
    settings: TaskSettings, judged: list[Outcome], result: _Result | None
) -> list[Outcome]:
    """A task's outcomes with the scores of its result.json and the direction of its changes.

    The direction is the task's, read from result.json alone, so a task whose
    state diff changed while its scores held is drift. A matching result.json
    carries its scores already (:class:`_Common`).
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
            after = _ignored(settings, result.doc, RESULT_FILE).value
            value = canonicalize(outcome.baseline_text, source=outcome.baseline_path or "").value
            before = apply_ignores(value, artifact=RESULT_FILE, ignore=settings.ignore)
            scores = (read_scores(before), read_scores(after))
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
