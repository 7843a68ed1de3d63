"""Targets whose every artifact plainly matches, judged in one pass: the common case, cheap.

Most checks (the pre-commit hook, CI on a green branch) find every artifact equal
to its baseline. :func:`plain_matches` takes a target with one baseline per
artifact (no variants), a result.json baseline, no ignore pattern and no derived
artifact; it reads each baseline and run file once, canonicalizes the run's bytes
and gives exactly the outcomes :mod:`silo_regress.judging.judge` gives
(tests/unit/test_plainmatch.py holds the two equal over many projects). The first
artifact that is not a plain match hands the whole target back to the judge, which
judges it the full way: a change pays for reading its files twice, a match does
not pay for the judge's generality (variants, direction, freshness, diffs).
"""

from __future__ import annotations

from silo_regress.canon.canonical import canonicalize
from silo_regress.canon.prefilter import might_be_volatile
from silo_regress.errors import InputError
from silo_regress.judging.context import TargetContext
from silo_regress.judging.direction import read_scores
from silo_regress.judging.outcome import Outcome, Verdict
from silo_regress.judging.targets import Target
from silo_regress.runs.derived import is_derived
from silo_regress.runs.index import RESULT_FILE, read_artifact


def plain_matches(context: TargetContext, target: Target) -> list[Outcome] | None:
    """The match outcomes of ``target``'s baselines, in order; None when any artifact
    is not a plain match, or the target is not plain: the judge then decides."""
    run = context.run
    if run is None or context.settings.ignore:
        return None
    source = context.source
    outcomes: list[Outcome] = []
    has_result = False
    for baseline in target.baselines:
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
            has_result = True
            if not isinstance(doc.value, dict):
                return None
            same = read_scores(doc.value)
            scores = (same, same)
        # The full comparison's own factory: the match it would give, field for field.
        outcomes.append(
            context.outcome(
                baseline, Verdict.MATCH, match_scores=scores, baseline_text=expected, run_text=text
            )
        )
    # The judge reads result.json whether or not it is baselined: without its baseline
    # a broken result.json would go unseen here (checked last, not first: no generator
    # over the baselines on the hook's hot path).
    return outcomes if has_result else None
