"""One baseline against one artifact of a run: the verdict, and the outcome built once.

:mod:`silo_regress.judging.judge` decides which run and which baselines a task is judged
by (variants, direction, freshness); this module compares one pair. It is the
hot path of ``check``: one call per artifact, so each outcome is built in one
step and paths are joined by f-string.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from silo_regress.canon.canonical import Document, apply_ignores, canonicalize, serialize
from silo_regress.canon.prefilter import might_be_volatile
from silo_regress.errors import InputError
from silo_regress.judging.direction import Scores
from silo_regress.judging.outcome import (
    BaselineOrigin,
    ConfigLine,
    Outcome,
    Verdict,
    outcome_of,
)
from silo_regress.project.config import Config, TaskSettings, task_table
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.derived import is_derived, source_file
from silo_regress.runs.index import RESULT_FILE, Run, UnreadableArtifactError, read_artifact
from silo_regress.store.baselines import Baseline, BaselineSource
from silo_regress.system.fsio import FileError

if TYPE_CHECKING:
    from silo_regress.behaviour.notes import Note
    from silo_regress.canon.jsondiff import Change
    from silo_regress.canon.volatile import Finding
    from silo_regress.runs.provenance import Provenance


def run_path(config: Config, run: Run | None, artifact: str) -> str | None:
    if run is None:
        return None
    # An f-string, not os.path.join: check builds this for every artifact.
    return config.relative(f"{run.path}{os.sep}{source_file(artifact)}")


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
    baseline_source: BaselineOrigin
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
        remedy: tuple[ConfigLine, ...] | None = None,
    ) -> Outcome:
        # Every field, in Outcome's order (tests/test_outcome.py holds the two equal).
        return outcome_of(
            {
                "task": self.task,
                "environment": self.environment,
                "artifact": self.artifact,
                "verdict": verdict,
                "baseline_path": self.baseline_path,
                "run_path": self.run_path,
                "run_name": self.run_name,
                "detail": detail,
                "changes": changes,
                "behaviour": behaviour,
                "baseline_text": baseline_text,
                "run_text": run_text,
                "direction": None,
                "variant": self.variant,
                "provenance": self.provenance,
                "baseline_source": self.baseline_source,
                "scores": self.match_scores if verdict is Verdict.MATCH else None,
                "repeats": (),
                "remedy": remedy,
            }
        )


def origin_of(source: BaselineSource) -> BaselineOrigin:
    """Where a baseline's bytes come from, as the typed value every report reads."""
    return BaselineOrigin(source.kind, source.label, source.commit, source.git_prefix)


def compare_artifact(
    config: Config,
    source: BaselineSource,
    baseline: Baseline,
    /,
    *,
    environment: str | None,
    run: Run | None,
    result: RunResult | None,
    wrong_version: str | None,
    settings: TaskSettings,
    provenance: Provenance | None = None,
    match_scores: tuple[Scores, Scores] | None = None,
    details: bool = True,
    origin: BaselineOrigin | None = None,
) -> Outcome:
    """``origin`` is ``origin_of(source)``, given by a caller that compares many artifacts."""
    artifact = baseline.artifact
    common = _Common(
        task=baseline.ref,
        environment=environment,
        artifact=artifact,
        baseline_path=config.relative(f"{config.baselines_dir}{os.sep}{baseline.relpath}"),
        run_path=run_path(config, run, artifact),
        run_name=run.name if run else None,
        variant=baseline.variant if baseline.name_problem is None else None,
        provenance=provenance,
        baseline_source=origin if origin is not None else origin_of(source),
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
    result: RunResult | None,
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
        except InputError as exc:  # unreadable, or (a tool path) a trace that gives none
            if not isinstance(exc, UnreadableArtifactError) and not _is_trace_gap(exc):
                raise
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
        run_shown = common.run_path  # the file read, unless the artifact is derived from it
        if is_derived(artifact) or run_shown is None:
            run_shown = config.relative(f"{run.path}{os.sep}{artifact}")
        try:
            run_doc = canonicalize(data, source=run_shown)
        except InputError as exc:
            return common.outcome(
                Verdict.INCOMPLETE_RUN, detail=exc.message, baseline_text=baseline_bytes
            )
    run_doc = apply_task_ignores(settings, run_doc, artifact)
    run_text = run_doc.text
    if baseline_bytes == run_text:
        findings = _findings(settings, run_doc, artifact, run)
        if findings:
            return common.outcome(
                Verdict.VOLATILE,
                detail=_describe(findings, common.baseline_path, place=_task_place(config, common)),
                baseline_text=baseline_bytes,
                run_text=run_text,
                remedy=_volatile_fix(config, common, settings, findings),
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
            detail=_describe(findings, shown, place=_task_place(config, common)),
            baseline_text=baseline_bytes,
            run_text=run_text,
            remedy=_volatile_fix(config, common, settings, findings),
        )
    base_doc = apply_task_ignores(settings, base_doc, artifact)
    if base_doc.text == run_text:
        return common.outcome(Verdict.MATCH, baseline_text=baseline_bytes, run_text=run_text)
    if not details:
        return common.outcome(Verdict.CHANGED, baseline_text=baseline_bytes, run_text=run_text)
    # Only a changed artifact needs the profiles: a matching check (the pre-commit
    # hook, most days) never pays for importing them, nor the structural diff.
    from silo_regress import behaviour
    from silo_regress.canon.jsondiff import diff_values

    return common.outcome(
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


def _task_place(config: Config, common: _Common) -> str:
    """The task's own table, where a per-task ``ignore`` or ``volatile-exempt`` goes."""
    return config.location.place(*task_table(common.task.task_id, common.environment))


def _volatile_fix(
    config: Config, common: _Common, settings: TaskSettings, findings: Sequence[Finding]
) -> tuple[ConfigLine, ...]:
    """The task's own ``ignore`` and ``volatile-exempt`` lines that would settle it: each the
    whole list, since a table's key replaces the one it inherits."""
    table = task_table(common.task.task_id, common.environment)
    location = config.location
    found = [f"{common.artifact}:{f.pointer}" for f in findings]
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
