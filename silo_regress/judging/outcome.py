"""The typed result model of a check: verdicts, outcomes, reports. Every renderer reads it.

Values only: built by :mod:`silo_regress.judging.judge` (or read back from a JSON report
by :mod:`silo_regress.reports.schema`); nothing here compares, words or prints.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from silo_regress.judging.direction import Direction, Scores
from silo_regress.project.taskref import TaskRef
from silo_regress.store.baselines import SourceKind, located

if TYPE_CHECKING:
    from silo_regress.behaviour.notes import Note
    from silo_regress.canon.jsondiff import Change  # loaded by a diff; a matching check never
    from silo_regress.judging.remedies import Remedy
    from silo_regress.judging.units import UnitCoverage
    from silo_regress.runs.provenance import Provenance
    from silo_regress.stats.verdicts import StatsJudgement  # only a stats-gated check

__all__ = [
    "BaselineOrigin",
    "Direction",
    "Hook",
    "Invocation",
    "Outcome",
    "Report",
    "SourceKind",
    "Uncovered",
    "Verdict",
]


class Verdict(enum.StrEnum):
    MATCH = "match"
    CHANGED = "changed"
    MISSING_BASELINE = "missing-baseline"
    MISSING_RUN = "missing-run"
    INCOMPLETE_RUN = "incomplete-run"
    NOT_CANONICAL = "not-canonical"
    VOLATILE = "volatile"
    FORMAT_VERSION = "format-version"
    STALE_RUN = "stale-run"  # the run was made from other inputs than those checked


@dataclass(frozen=True)
class BaselineOrigin:
    """Where a report's baselines were read: the working tree, the git index, a commit."""

    kind: SourceKind
    label: str  # "working tree", "git index", or the commit as the user named it
    commit: str | None = None  # the full hash that commit had when it was read
    # The project's directory from the top of the repository ("agents/crm/"; "" at the
    # top): labels name git's path, since `git show REV:PATH` reads PATH from the top.
    git_prefix: str = ""

    @property
    def is_working_tree(self) -> bool:
        return self.kind is SourceKind.WORKING_TREE

    @property
    def is_index(self) -> bool:
        return self.kind is SourceKind.INDEX

    @property
    def ref(self) -> str | None:
        """The commit as the user named it (``HEAD~1``); None for the tree and the index."""
        return self.label if self.kind is SourceKind.COMMIT else None

    def locate(self, path: str) -> str:
        """``path`` (relative to the project) as read from here: ``HEAD~1:baselines/X.json``
        (``HEAD~1:agents/crm/baselines/X.json`` for a project in agents/crm), or itself."""
        return located(self.kind, self.label, path, self.git_prefix)


WORKING_TREE = BaselineOrigin(SourceKind.WORKING_TREE, "working tree")


# A NamedTuple, not a frozen dataclass: built at every start-up of the hook, where a
# dataclass costs 0.7 ms to create (bench/README.md, 0.3.0 against 0.2) and this 0.1 ms.
class Invocation(NamedTuple):
    """How the command was run, so its advice works pasted where it was printed."""

    project: str | None = None  # the -C DIR the user gave, when commands need it
    here: str = ""  # the project directory from the user's directory ("" when it is that)
    baselines: str = "baselines"  # the baselines directory, from the user's directory
    agent: str | None = None  # --agent, repeated in every command that starts Silo
    timeout: float | None = None  # --timeout, likewise


@dataclass(frozen=True)
class Outcome:
    """The verdict for one artifact of one task.

    ``direction``, ``variant``, ``provenance`` and ``baseline_source`` are filled
    by the features that know them (direction classes, accepted variants, run
    provenance, the source a baseline was read from); None means not known.
    """

    task: TaskRef
    environment: str | None
    artifact: str
    verdict: Verdict
    baseline_path: str | None = None
    run_path: str | None = None
    run_name: str | None = None
    detail: str | None = None
    changes: tuple[Change, ...] = ()
    behaviour: tuple[Note, ...] = ()
    baseline_text: bytes | None = field(default=None, repr=False)
    run_text: bytes | None = field(default=None, repr=False)
    direction: Direction | None = None
    variant: int | None = None  # which accepted variant matched, or was closest
    provenance: Provenance | None = None  # the run's record, when silo-regress started it
    baseline_source: BaselineOrigin | None = None  # where baseline_path's bytes were read
    # On a task's result.json outcome: its (baseline, run) scores, for pass-rate totals.
    scores: tuple[Scores, Scores] | None = field(default=None, repr=False)
    # check --run --repeat N: the rollouts (1..N) this outcome stands for, every one of
    # which gave this artifact the same verdict and bytes; () for a check of one run.
    repeats: tuple[int, ...] = ()
    remedy: Remedy | None = None  # what the next step needs (volatile, stale-run, refused)

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.MATCH

    @property
    def task_label(self) -> str:
        """``TASK-004 (crm-west)`` for an unqualified ref, ``crm-west/TASK-004`` otherwise."""
        return self.task.label_with(self.environment)

    @property
    def baseline_label(self) -> str | None:
        """The baseline named with its source: ``HEAD~1:baselines/X.json``; the path alone
        for the working tree (or a source not known)."""
        if self.baseline_path is None or self.baseline_source is None:
            return self.baseline_path
        return self.baseline_source.locate(self.baseline_path)


# Outcome's fields in order: the judge's factory (judging.context) sets every one of them.
OUTCOME_FIELDS = tuple(Outcome.__dataclass_fields__)


# Set by the script install-hook writes, so the report can say how to skip that hook.
HOOK_VARIABLE = "SILO_REGRESS_HOOK"


class Hook(enum.StrEnum):
    """The git hook a check ran in, which decides how to skip it once."""

    FRAMEWORK = "pre-commit"  # the pre-commit framework: SKIP=<hook id>
    GIT = "git-hook"  # git's own hook, as install-hook writes it: git commit --no-verify


# A NamedTuple, not a frozen dataclass: built at every start-up of the hook, where a
# dataclass costs 0.7 ms to create (bench/README.md, 0.3.0 against 0.2) and this 0.1 ms.
class Uncovered(NamedTuple):
    """What a check did not judge: runs and settings that no baseline answers for."""

    tasks: tuple[str, ...] = ()  # ENV/TASK with runs but no baseline
    artifacts: tuple[tuple[str, str], ...] = ()  # (ENV/TASK, artifact) configured, no baseline
    environments: tuple[str, ...] = ()  # environments with runs that no baseline names

    def __bool__(self) -> bool:
        return bool(self.tasks or self.artifacts or self.environments)


NOTHING_UNCOVERED = Uncovered()


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]
    warnings: tuple[str, ...] = ()
    source: BaselineOrigin = WORKING_TREE
    shard: tuple[int, int] | None = None  # (K, N) of check --shard K/N
    repeat: int | None = None  # N of check --run --repeat N (2 or more)
    hook: Hook | None = None  # the hook this check ran in, when it knows
    invocation: Invocation | None = None  # how check was run, for the next steps
    uncovered: Uncovered = NOTHING_UNCOVERED  # what check did not judge (every task)
    # The stats gate's tiers and suite decision (docs/statistics.md), when any task has
    # gate = "stats" or "both"; its verdicts are the strings of stats.verdicts.Tier and
    # SuiteVerdict ("regression", ..., "suite-regression").
    stats: StatsJudgement | None = None
    # merge of check --run --unit reports: the plan's units judged, missing, unstarted
    units: UnitCoverage | None = None

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes) and (
            self.stats is None or not (self.stats.failed or self.stats.not_decided)
        )

    def summary(self) -> dict[str, int]:
        """Verdicts counted per artifact, and per rollout of it under --repeat."""
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            weight = len(outcome.repeats) or 1
            counts[outcome.verdict.value] = counts.get(outcome.verdict.value, 0) + weight
        return dict(sorted(counts.items()))
