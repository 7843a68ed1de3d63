"""The typed behaviour notes: what changed, as data for every renderer to word.

One frozen dataclass per kind of statement. Values are JSON values (or
``MISSING`` for an absent side) exactly as the artifacts hold them; nothing here
is worded or clipped for display. ``KIND`` names each note in the JSON report.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from silo_regress.canon.canonical import JsonValue
from silo_regress.canon.jsondiff import MISSING, Missing

# --- result.json ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PassedChanged:
    """The run's top-level ``passed`` differs (true -> false is a new failure)."""

    KIND: ClassVar[str] = "passed-changed"
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class RewardMoved:
    KIND: ClassVar[str] = "reward-moved"
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CheckFlipped:
    """A check (by label) went from passed to failed or back."""

    KIND: ClassVar[str] = "check-flipped"
    label: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CheckFieldChanged:
    """Another field of a check (``required``, ``detail``) differs."""

    KIND: ClassVar[str] = "check-field-changed"
    label: str
    field: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CheckAdded:
    KIND: ClassVar[str] = "check-added"
    label: str
    passed: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CheckRemoved:
    KIND: ClassVar[str] = "check-removed"
    label: str


@dataclass(frozen=True, slots=True)
class ChecksReordered:
    """Same checks with the same outcomes, in another order."""

    KIND: ClassVar[str] = "checks-reordered"


@dataclass(frozen=True, slots=True)
class FieldChanged:
    """A descriptive field of the result (``terminationReason``, ``error``)."""

    KIND: ClassVar[str] = "field-changed"
    field: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CountChanged:
    """A counter of the result (``toolCalls``, ``checksFailed`` ...)."""

    KIND: ClassVar[str] = "count-changed"
    field: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing

    @property
    def delta(self) -> int | None:
        a, b = self.baseline, self.run
        if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
            return b - a
        return None


class SegmentKind(enum.StrEnum):
    SAME = "same"
    REMOVED = "removed"
    ADDED = "added"


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of words in a word diff; long unchanged runs are already elided (``…``)."""

    kind: SegmentKind
    text: str


@dataclass(frozen=True, slots=True)
class OutputChanged:
    """The agent's output (or one member of it) differs.

    ``words`` is the word diff when both sides are long text; ``limit`` is how
    many characters the one-line wording may take.
    """

    KIND: ClassVar[str] = "output-changed"
    path: str  # "/agentOutput", or the JSON Pointer of a member beneath it
    baseline: JsonValue | Missing
    run: JsonValue | Missing
    words: tuple[Segment, ...] | None = None
    limit: int = 400


@dataclass(frozen=True, slots=True)
class MoreChanges:
    """``count`` further changed values under ``scope`` that are not listed."""

    KIND: ClassVar[str] = "more-changes"
    scope: str
    count: int


# --- state-diff.json --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IdsChanged:
    """Record ids the run gained or lost in one change kind of a collection.

    Both empty: the same ids in another order.
    """

    KIND: ClassVar[str] = "ids-changed"
    collection: str
    change: str  # "created", "updated", "deleted" ...
    gained: tuple[JsonValue, ...]
    lost: tuple[JsonValue, ...]


@dataclass(frozen=True, slots=True)
class CollectionChanged:
    """A collection (``change`` None) or one change kind of it that is not a list."""

    KIND: ClassVar[str] = "collection-changed"
    collection: str
    change: str | None
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class Transition:
    """A scalar's ``from`` and ``to`` in a state diff."""

    start: JsonValue | Missing = MISSING
    end: JsonValue | Missing = MISSING


@dataclass(frozen=True, slots=True)
class ScalarChanged:
    """A world scalar changes differently; None: it does not change on that side."""

    KIND: ClassVar[str] = "scalar-changed"
    field: str
    baseline: Transition | None
    run: Transition | None


@dataclass(frozen=True, slots=True)
class ScalarsReordered:
    KIND: ClassVar[str] = "scalars-reordered"


# --- tool-events.json (the tool path) ---------------------------------------------
# Calls are numbered from 1 in the order the agent made them; ``call`` is the run's
# number, except for a dropped call, which only the baseline has.


@dataclass(frozen=True, slots=True)
class CallsCounted:
    """The number of tool calls differs."""

    KIND: ClassVar[str] = "tool-calls-counted"
    baseline: int
    run: int


@dataclass(frozen=True, slots=True)
class ToolCountChanged:
    """One tool is called more or less often."""

    KIND: ClassVar[str] = "tool-count-changed"
    tool: str
    baseline: int
    run: int


@dataclass(frozen=True, slots=True)
class CallChanged:
    """The first call where the paths diverge: one changed value of its input or output.

    ``side`` is ``input`` or ``output``; ``path`` the JSON Pointer beneath it.
    """

    KIND: ClassVar[str] = "tool-call-changed"
    call: int
    tool: str
    side: str
    path: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing


@dataclass(frozen=True, slots=True)
class CallErrorChanged:
    """A call that now errors (``errors``) or no longer does; ``code`` is the error's."""

    KIND: ClassVar[str] = "tool-error-changed"
    call: int
    tool: str
    errors: bool
    code: str | None = None


@dataclass(frozen=True, slots=True)
class CallInserted:
    """A call only the run makes; ``code`` when it errors."""

    KIND: ClassVar[str] = "tool-call-inserted"
    call: int
    tool: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class CallDropped:
    """A call only the baseline makes (``call`` is the baseline's number)."""

    KIND: ClassVar[str] = "tool-call-dropped"
    call: int
    tool: str
    code: str | None = None


@dataclass(frozen=True, slots=True)
class ToolPathRecorded:
    """A new tool-path baseline: how many calls, how many of them errors."""

    KIND: ClassVar[str] = "tool-path-recorded"
    calls: int
    errors: int
    as_of: bool = False


# --- any artifact -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ValueChanged:
    """A value no profile has words for, at its JSON Pointer."""

    KIND: ClassVar[str] = "value-changed"
    path: str
    baseline: JsonValue | Missing
    run: JsonValue | Missing


# --- a baseline on its own (history: added, removed, snapshots) --------------------


@dataclass(frozen=True, slots=True)
class Recorded:
    """A new baseline; for result.json whether it passes and its reward.

    ``as_of`` marks the oldest version a shallow clone holds, not a new one.
    """

    KIND: ClassVar[str] = "recorded"
    passes: bool | None = None
    reward: JsonValue | Missing = MISSING
    as_of: bool = False


@dataclass(frozen=True, slots=True)
class FailedRequired:
    KIND: ClassVar[str] = "failed-required"
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChangesNothing:
    """A recorded state diff in which the rollout changed nothing."""

    KIND: ClassVar[str] = "changes-nothing"
    as_of: bool = False


@dataclass(frozen=True, slots=True)
class ValuesChanged:
    """Values differ where no profile has more to say (fields it deliberately skips)."""

    KIND: ClassVar[str] = "values-changed"


@dataclass(frozen=True, slots=True)
class BaselineRemoved:
    KIND: ClassVar[str] = "baseline-removed"


@dataclass(frozen=True, slots=True)
class FormatOnly:
    """Other bytes, the same values: a ``fmt`` rewrite."""

    KIND: ClassVar[str] = "format-only"


@dataclass(frozen=True, slots=True)
class Worded:
    """A note known only by its words: a JSON report written without typed notes."""

    KIND: ClassVar[str] = "worded"
    text: str


Note: TypeAlias = (
    PassedChanged
    | RewardMoved
    | CheckFlipped
    | CheckFieldChanged
    | CheckAdded
    | CheckRemoved
    | ChecksReordered
    | FieldChanged
    | CountChanged
    | OutputChanged
    | MoreChanges
    | IdsChanged
    | CollectionChanged
    | ScalarChanged
    | ScalarsReordered
    | CallsCounted
    | ToolCountChanged
    | CallChanged
    | CallErrorChanged
    | CallInserted
    | CallDropped
    | ToolPathRecorded
    | ValueChanged
    | Recorded
    | FailedRequired
    | ChangesNothing
    | ValuesChanged
    | BaselineRemoved
    | FormatOnly
    | Worded
)
