"""Targets whose every artifact plainly matches, judged in one pass: the common case, cheap.

Most checks (the pre-commit hook, CI on a green branch) find every artifact equal
to its baseline. :func:`plain_matches` takes a target with one baseline per
artifact (no variants), a result.json baseline, no ignore pattern and no derived
artifact; it reads each baseline and run file once, canonicalizes the run's bytes
and gives exactly the outcomes :mod:`silo_regress.judging.judge` gives
(tests/test_plainmatch.py holds the two equal over many projects). The first
artifact that is not a plain match hands the whole target back to the judge, which
judges it the full way: a change pays for reading its files twice, a match does
not pay for the judge's generality (variants, direction, freshness, diffs).
"""

from __future__ import annotations

import os

from silo_regress.canon.canonical import canonicalize
from silo_regress.canon.prefilter import might_be_volatile
from silo_regress.errors import InputError
from silo_regress.judging.comparison import run_path
from silo_regress.judging.direction import read_scores
from silo_regress.judging.outcome import BaselineOrigin, Outcome, Verdict, outcome_of
from silo_regress.judging.targets import Target
from silo_regress.project.config import Config, TaskSettings
from silo_regress.runs.derived import is_derived
from silo_regress.runs.index import RESULT_FILE, Run, read_artifact
from silo_regress.store.baselines import BaselineSource


def plain_matches(
    config: Config,
    source: BaselineSource,
    target: Target,
    run: Run | None,
    *,
    settings: TaskSettings,
    origin: BaselineOrigin,
    environment: str | None,
) -> list[Outcome] | None:
    """The match outcomes of ``target``'s baselines, in order; None when any artifact
    is not a plain match, or the target is not plain: the judge then decides."""
    if run is None or settings.ignore:
        return None
    baselines = target.baselines
    if not any(b.artifact == RESULT_FILE for b in baselines):
        return None  # the judge reads result.json whether or not it is baselined
    outcomes: list[Outcome] = []
    project_baselines = f"{config.baselines_dir}{os.sep}"
    for baseline in baselines:
        artifact = baseline.artifact
        # Variant 1 of each artifact at most once: another of the same artifact is ~N.
        if baseline.variant != 1 or baseline.name_problem is not None or is_derived(artifact):
            return None
        try:
            expected = source.read(baseline)
            data = read_artifact(run, artifact)
            if data is None:
                return None
            doc = canonicalize(data, source=artifact)
        except InputError:  # a FIFO, an unreadable or invalid file: the judge words it
            return None
        text = doc.text
        if text != expected or might_be_volatile(text):
            return None
        scores = None
        if artifact == RESULT_FILE:
            if not isinstance(doc.value, dict):
                return None
            same = read_scores(doc.value)
            scores = (same, same)
        # Every field, in Outcome's order: what comparison._Common.outcome gives a match.
        outcomes.append(
            outcome_of(
                {
                    "task": baseline.ref,
                    "environment": environment,
                    "artifact": artifact,
                    "verdict": Verdict.MATCH,
                    "baseline_path": config.relative(project_baselines + baseline.relpath),
                    "run_path": run_path(config, run, artifact),
                    "run_name": run.name,
                    "detail": None,
                    "changes": (),
                    "behaviour": (),
                    "baseline_text": expected,
                    "run_text": text,
                    "direction": None,
                    "variant": 1,
                    "provenance": None,
                    "baseline_source": origin,
                    "scores": scores,
                    "repeats": (),
                    "remedy": None,
                }
            )
        )
    return outcomes
