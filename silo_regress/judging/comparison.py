"""One baseline against one artifact of a run: the verdict, and the outcome built once.

:mod:`silo_regress.judging.judge` decides which run and which baselines a task is judged
by (variants, direction, freshness); this module compares one pair. It is the
hot path of ``check``: one call per artifact, so each outcome is built in one
step and paths are joined by f-string.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from silo_regress.canon.canonical import Document, apply_ignores, canonicalize, serialize
from silo_regress.canon.prefilter import might_be_volatile
from silo_regress.errors import InputError
from silo_regress.judging.context import TargetContext
from silo_regress.judging.direction import Scores
from silo_regress.judging.outcome import Outcome, Verdict
from silo_regress.project.config import Config, TaskSettings, task_table
from silo_regress.runs.derived import is_derived
from silo_regress.runs.index import RESULT_FILE, Run, UnreadableArtifactError, read_artifact
from silo_regress.store.baselines import Baseline
from silo_regress.system.fsio import FileError

if TYPE_CHECKING:
    from silo_regress.canon.volatile import Finding
    from silo_regress.judging.remedies import ConfigLine
    from silo_regress.runs.provenance import Provenance


@dataclass(frozen=True)
class RunResult:
    """A run's result.json: why it is unusable, or its canonical document."""

    problem: str | None
    doc: Document | None = None


def read_result(config: Config, run: Run) -> RunResult:
    path = config.relative(f"{run.path}{os.sep}{RESULT_FILE}")
    try:
        data = read_artifact(run, RESULT_FILE)
    except UnreadableArtifactError as exc:
        return RunResult(f"{path} {exc.reason}")
    if data is None:
        return RunResult(f"{path} is missing: the rollout crashed or is still running")
    try:
        doc = canonicalize(data, source=path)
    except InputError as exc:
        return RunResult(exc.message)
    if not isinstance(doc.value, dict):
        return RunResult(f"{path} is not a JSON object")
    return RunResult(None, doc)


def compare_artifact(
    context: TargetContext,
    baseline: Baseline,
    /,
    *,
    result: RunResult | None,
    wrong_version: str | None,
    provenance: Provenance | None = None,
    match_scores: tuple[Scores, Scores] | None = None,
    details: bool = True,
) -> Outcome:
    """The outcome of one baseline: verdict, detail, texts, changes and behaviour.

    Without ``details`` a changed artifact gets no changes or behaviour: enough to
    learn the run's text before deciding which variant is worth a diff.
    """
    # Every return below is this one factory's outcome, for this baseline.
    outcome = functools.partial(
        context.outcome, baseline, provenance=provenance, match_scores=match_scores
    )
    config, source, settings, run = context.config, context.source, context.settings, context.run
    artifact = baseline.artifact
    if wrong_version is not None:
        return outcome(Verdict.FORMAT_VERSION, detail=wrong_version)
    try:
        baseline_bytes = source.read(baseline)
    except FileError as exc:
        if exc.kind is None:  # unreadable (permission, I/O): a setup problem, exit 3
            raise
        # A FIFO, link or directory where a baseline belongs: compared with nothing,
        # so it must fail the check, never be skipped.
        return outcome(Verdict.NOT_CANONICAL, detail=exc.message)
    if run is None or result is None:
        return outcome(
            Verdict.MISSING_RUN,
            detail=f"no run of {baseline.ref} under {config.relative(config.runs_dir)}/",
            baseline_text=baseline_bytes,
        )
    if result.problem is not None:
        return outcome(
            Verdict.INCOMPLETE_RUN,
            detail=f"newest run {run.name}: {result.problem}",
            baseline_text=baseline_bytes,
        )
    if artifact == RESULT_FILE and result.doc is not None:
        run_doc = result.doc
    else:
        try:
            data = read_artifact(run, artifact, trace_events=config.trace_events)
        except InputError as exc:  # unreadable, or (a tool path) a trace that gives none
            if not isinstance(exc, UnreadableArtifactError) and not _is_trace_gap(exc):
                raise
            return outcome(
                Verdict.INCOMPLETE_RUN,
                detail=_unreadable(config, run, artifact, exc),
                baseline_text=baseline_bytes,
            )
        if data is None:
            run_source = config.relative(os.path.join(run.path, artifact))
            return outcome(
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
            return outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=data)
        run_shown = context.run_path(artifact)  # the file read, unless derived from it
        if is_derived(artifact) or run_shown is None:
            run_shown = config.relative(f"{run.path}{os.sep}{artifact}")
        try:
            run_doc = canonicalize(data, source=run_shown)
        except InputError as exc:
            return outcome(Verdict.INCOMPLETE_RUN, detail=exc.message, baseline_text=baseline_bytes)
    run_doc = apply_task_ignores(settings, run_doc, artifact)
    run_text = run_doc.text
    if baseline_bytes == run_text:
        findings = _findings(settings, run_doc, artifact, run)
        if findings:
            return outcome(
                Verdict.VOLATILE,
                detail=_describe(
                    findings,
                    context.baseline_path(baseline),
                    place=_task_place(config, baseline, context),
                ),
                baseline_text=baseline_bytes,
                run_text=run_text,
                remedy=_volatile_fix(config, baseline, context, settings, findings),
            )
        return outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=run_text)
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
        return outcome(
            Verdict.NOT_CANONICAL, detail=problem, baseline_text=baseline_bytes, run_text=run_text
        )
    findings = _findings(settings, base_doc, artifact, run)
    if findings:
        return outcome(
            Verdict.VOLATILE,
            detail=_describe(findings, shown, place=_task_place(config, baseline, context)),
            baseline_text=baseline_bytes,
            run_text=run_text,
            remedy=_volatile_fix(config, baseline, context, settings, findings),
        )
    base_doc = apply_task_ignores(settings, base_doc, artifact)
    if base_doc.text == run_text:
        return outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=run_text)
    if not details:
        return outcome(Verdict.CHANGED, baseline_text=baseline_bytes, run_text=run_text)
    # Only a changed artifact needs the profiles: a matching check (the pre-commit
    # hook, most days) never pays for importing them, nor the structural diff.
    from silo_regress import behaviour
    from silo_regress.canon.jsondiff import diff_values

    return outcome(
        Verdict.CHANGED,
        baseline_text=baseline_bytes,
        run_text=run_text,
        changes=tuple(diff_values(base_doc.value, run_doc.value)),
        behaviour=behaviour.compare(artifact, base_doc.value, run_doc.value),
    )


def _is_trace_gap(exc: InputError) -> bool:
    from silo_regress.runs.toolpath import IncompleteTraceError  # loaded by a tool path only

    return isinstance(exc, IncompleteTraceError)


def _unreadable(config: Config, run: Run, artifact: str, exc: InputError) -> str:
    """Why a run's artifact cannot be read (unreadable, or a trace with no tool path),
    as an incomplete-run detail."""
    if isinstance(exc, UnreadableArtifactError):
        return f"{config.relative(os.path.join(run.path, artifact))} {exc.reason}"
    from silo_regress.runs.toolpath import IncompleteTraceError

    assert isinstance(exc, IncompleteTraceError), exc
    gap = exc.incomplete
    return f"newest run {run.name}: {gap.describe(config.relative(gap.path))}"


def _plain_match(settings: TaskSettings, text: bytes, artifact: str) -> bool:
    """True when canonical ``text`` equal to its baseline is a match with no parse."""
    ignored = any(p.applies_to(artifact) for p in settings.ignore)
    return not ignored and not might_be_volatile(text)


def apply_task_ignores(settings: TaskSettings, doc: Document, artifact: str) -> Document:
    if not any(p.applies_to(artifact) for p in settings.ignore):
        return doc
    value = apply_ignores(doc.value, artifact=artifact, ignore=settings.ignore)
    return Document(value=value, text=serialize(value))


def _findings(settings: TaskSettings, doc: Document, artifact: str, run: Run) -> list[Finding]:
    if not might_be_volatile(doc.text):
        return []
    # The baseline is judged by the clock of the run it is compared with: a
    # wall-clock time copied into either is that run's, or far from it.
    from silo_regress.canon.volatile import scan_volatile
    from silo_regress.runs.clock import clock_of  # only once a volatile hint is seen

    clock = clock_of(run)
    return list(
        scan_volatile(doc.value, artifact=artifact, clock=clock, exempt=settings.scan_exempt)
    )


def _task_place(config: Config, baseline: Baseline, context: TargetContext) -> str:
    """The task's own table, where a per-task ``ignore`` or ``volatile-exempt`` goes."""
    return config.location.place(*task_table(baseline.ref.task_id, context.environment))


def _volatile_fix(
    config: Config,
    baseline: Baseline,
    context: TargetContext,
    settings: TaskSettings,
    findings: Sequence[Finding],
) -> tuple[ConfigLine, ...]:
    """The task's own ``ignore`` and ``volatile-exempt`` lines that would settle it: each the
    whole list, since a table's key replaces the one it inherits."""
    from silo_regress.judging.remedies import ConfigLine

    table = task_table(baseline.ref.task_id, context.environment)
    location = config.location
    found = [f"{baseline.artifact}:{f.pointer}" for f in findings]
    lines = []
    for key, current in (
        ("ignore", settings.ignore),
        ("volatile-exempt", settings.volatile_exempt),
    ):
        values = [p.text for p in current]
        values += [v for v in dict.fromkeys(found) if v not in values]
        lines.append(ConfigLine(location.path, location.header(*table), key, tuple(values)))
    return tuple(lines)


def _describe(found: Sequence[Finding], where: str | None, *, place: str) -> str:
    findings = [f"{f.pointer} ({f.reason})" for f in found]
    head = ", ".join(findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return (
        f"{where} holds volatile content at {head}{more}; "
        f"exempt or ignore these paths in {place}, or fix the producer"
    )
