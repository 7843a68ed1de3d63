"""What judging one target needs, built once per target, and the one way the judge builds
an outcome from it: the fast lane (:mod:`~silo_regress.judging.plainmatch`) and the full
comparison (:mod:`~silo_regress.judging.comparison`) share both, so a match is the same
value whichever of them finds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from silo_regress.judging.direction import Scores
from silo_regress.judging.outcome import BaselineOrigin, Outcome, Verdict
from silo_regress.project.config import Config, TaskSettings
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.derived import source_file
from silo_regress.runs.index import RESULT_FILE, Run
from silo_regress.store.baselines import Baseline, BaselineSource

if TYPE_CHECKING:
    from silo_regress.behaviour.notes import Note
    from silo_regress.canon.jsondiff import Change
    from silo_regress.judging.remedies import Remedy
    from silo_regress.runs.provenance import Provenance

_new = object.__new__
_set = object.__setattr__


def origin_of(source: BaselineSource) -> BaselineOrigin:
    """Where a baseline's bytes come from, as the typed value every report reads."""
    return BaselineOrigin(source.kind, source.label, source.commit, source.git_prefix)


def run_path(config: Config, run: Run | None, artifact: str) -> str | None:
    """The run's file ``artifact`` is read from, relative to the project; None without a run."""
    if run is None:
        return None
    # An f-string, not os.path.join: check builds this for every artifact.
    return config.relative(f"{run.path}{os.sep}{source_file(artifact)}")


@dataclass(frozen=True)
class TargetContext:
    """One target's task, run, settings and baseline source, as every artifact of it is judged.

    ``ref`` is the target's task; ``environment`` the one its run (or name) gives.
    """

    config: Config
    source: BaselineSource
    ref: TaskRef
    environment: str | None
    run: Run | None
    settings: TaskSettings
    origin: BaselineOrigin

    @classmethod
    def of(
        cls,
        config: Config,
        source: BaselineSource,
        ref: TaskRef,
        environment: str | None,
        run: Run | None,
        settings: TaskSettings,
        origin: BaselineOrigin,
    ) -> TargetContext:
        """``TargetContext(...)`` exactly, in one step: the judge builds one per target, and
        the frozen dataclass's ``__init__`` stores each field through ``object.__setattr__``
        (valgrind: 12k instructions, 3% of the lane's whole work on a matching target;
        this costs a quarter of that). tests/unit/test_outcome.py holds the two equal."""
        context: TargetContext = _new(cls)
        _set(
            context,
            "__dict__",
            {
                "config": config,
                "source": source,
                "ref": ref,
                "environment": environment,
                "run": run,
                "settings": settings,
                "origin": origin,
            },
        )
        return context

    def run_path(self, artifact: str) -> str | None:
        return run_path(self.config, self.run, artifact)

    def baseline_path(self, baseline: Baseline) -> str:
        """The baseline's file, relative to the project (the path every report shows)."""
        config = self.config
        return config.relative(config.baselines_prefix + baseline.relpath)

    def outcome(
        self,
        baseline: Baseline,
        verdict: Verdict,
        *,
        provenance: Provenance | None = None,
        match_scores: tuple[Scores, Scores] | None = None,
        detail: str | None = None,
        baseline_text: bytes | None = None,
        run_text: bytes | None = None,
        changes: tuple[Change, ...] = (),
        behaviour: tuple[Note, ...] = (),
        remedy: Remedy | None = None,
    ) -> Outcome:
        """The outcome of ``baseline`` against this target's run: the judge's one factory.

        ``match_scores`` counts for a match of result.json only, which carries them. The
        result is ``Outcome(...)`` with these fields, exactly, at an eighth of the cost:
        a frozen dataclass's ``__init__`` stores each of its 18 fields through
        ``object.__setattr__`` (4 us an outcome), and ``check`` makes one per artifact,
        so the instance gets its ``__dict__`` in one step, every field in Outcome's
        order (tests/unit/test_outcome.py holds the two equal).
        """
        artifact = baseline.artifact
        config, run = self.config, self.run
        outcome: Outcome = _new(Outcome)
        _set(
            outcome,
            "__dict__",
            {
                "task": baseline.ref,
                "environment": self.environment,
                "artifact": artifact,
                "verdict": verdict,
                "baseline_path": config.relative(config.baselines_prefix + baseline.relpath),
                "run_path": (
                    None
                    if run is None
                    else config.relative(f"{run.path}{os.sep}{source_file(artifact)}")
                ),
                "run_name": None if run is None else run.name,
                "detail": detail,
                "changes": changes,
                "behaviour": behaviour,
                "baseline_text": baseline_text,
                "run_text": run_text,
                "direction": None,
                "variant": baseline.variant if baseline.name_problem is None else None,
                "provenance": provenance,
                "baseline_source": self.origin,
                "scores": (
                    match_scores if verdict is Verdict.MATCH and artifact == RESULT_FILE else None
                ),
                "repeats": (),
                "remedy": remedy,
            },
        )
        return outcome
