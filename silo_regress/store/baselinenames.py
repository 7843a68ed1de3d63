"""How baseline files are named: ``[ENV/]TASK[~N].ARTIFACT`` under the baselines directory.

Pure string work on paths relative to that directory, shared by every
:class:`~silo_regress.store.baselines.BaselineSource` and by the writers: which task,
artifact and variant a name stands for, why a name that looks like a baseline
names no task, and whether a task's variants are numbered as they must be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from silo_regress.project.taskref import TaskRef, printable, unsafe_reason

MAX_VARIANTS = 10
VARIANT_MARK = "~"  # baselines/TASK~2.result.json: the task's second accepted variant
# baselines/[ENV/]TASK.tally.json: the stats gate's pass counts (docs/statistics.md).
# Config refuses an artifact named like it, so no baseline name ends in it.
TALLY_SUFFIX = ".tally.json"


@dataclass(frozen=True)
class Baseline:
    """One artifact of one task, as stored under the baselines directory.

    ``variant`` is 1 for ``TASK.ARTIFACT`` and N for ``TASK~N.ARTIFACT``.
    ``name_problem`` says why a ``~`` name is no variant number (``~1``, ``~02``,
    ``~x``): such a file is listed, never skipped, so check can name it.
    """

    ref: TaskRef
    artifact: str
    relpath: str  # relative to the baselines directory, with "/" separators
    variant: int = 1
    name_problem: str | None = None


@dataclass(frozen=True)
class Refused:
    """A file named like a baseline that names no task: listed so that check fails on it.

    Its name ends in a known artifact's, but it lies deeper than ``ENV/``, or its
    environment or task id is one :func:`unsafe_reason` refuses. Nothing maps it to
    a task, so nothing would compare it: a gate that skipped it would pass without
    ever reading it (``crm~west/TASK-002.result.json``, a task id with ``..``).
    """

    relpath: str  # as found, maybe with control characters: messages print ``shown``
    artifact: str
    reason: str  # printable already

    @property
    def shown(self) -> str:
        return printable(self.relpath)

    @property
    def ref(self) -> TaskRef:
        """The task the name spells, printable: what reports and status list it under."""
        folder, _, name = self.shown.rpartition("/")
        return TaskRef(name[: -len(self.artifact) - 1], folder or None)


def baseline_relpath(ref: TaskRef, artifact: str, variant: int = 1) -> str:
    mark = f"{VARIANT_MARK}{variant}" if variant > 1 else ""
    name = f"{ref.task_id}{mark}.{artifact}"
    return f"{ref.environment}/{name}" if ref.environment else name


def tally_relpath(ref: TaskRef) -> str:
    """``[ENV/]TASK.tally.json``, relative to the baselines directory."""
    name = f"{ref.task_id}{TALLY_SUFFIX}"
    return f"{ref.environment}/{name}" if ref.environment else name


def parse_tally_relpath(relpath: str) -> TaskRef | None:
    """The task whose tally ``relpath`` is, or None for any other name."""
    environment, slash, name = relpath.rpartition("/")
    if not name.endswith(TALLY_SUFFIX) or (slash and "/" in environment):
        return None
    task_id = name[: -len(TALLY_SUFFIX)]
    if not task_id or unsafe_reason(task_id) or VARIANT_MARK in task_id:
        return None
    if slash and (unsafe_reason(environment) or environment.startswith(".")):
        return None
    return TaskRef(task_id, environment if slash else None)


def parse_relpath(relpath: str, artifacts: Iterable[str]) -> Baseline | None:
    """The baseline a path under the baselines directory names, or None."""
    # Partition and endswith, no split or generator: every check lists every baseline.
    environment: str | None
    environment, slash, name = relpath.rpartition("/")
    if slash:
        if "/" in environment or environment.startswith("."):
            return None
    else:
        environment = None
    if name.startswith("."):
        return None
    for artifact in artifacts:
        cut = len(name) - len(artifact) - 1
        if cut > 0 and name.endswith(artifact) and name[cut] == ".":
            task_id = name[:cut]
            variant, problem = 1, None
            if VARIANT_MARK in task_id:
                # Task ids never hold a "~", so all after the first one is the variant
                # mark: TA~SK~2 is a misnamed variant of TA, listed for check to name.
                task_id, _, number = task_id.partition(VARIANT_MARK)
                variant, problem = _variant_number(number)
            if unsafe_reason(task_id) or (environment is not None and unsafe_reason(environment)):
                return None
            return Baseline(TaskRef(task_id, environment), artifact, relpath, variant, problem)
    return None


def refusal(relpath: str, artifacts: Iterable[str]) -> Refused | None:
    """Why a path that :func:`parse_relpath` maps to no task is refused, when it is
    named like a baseline; None for the other files a baselines directory may hold.

    Named like a baseline: its file name ends in ``.ARTIFACT`` after something, and
    no part of its path starts with a dot. Dotted names are never baselines (the
    format marker, ``.gitattributes``, the writers' ``.silo-regress-tmp/``), nor is a
    file of another name (a README). Only paths that failed to parse come here,
    so the listing of well-named baselines pays nothing for it.
    """
    parts = relpath.split("/")
    if any(p.startswith(".") for p in parts):
        return None
    name = parts[-1]
    artifact = next(
        (a for a in artifacts if name.endswith("." + a) and len(name) > len(a) + 1), None
    )
    if artifact is None:
        return None
    if len(parts) > 2:
        depth = len(parts) - 1
        return Refused(
            relpath,
            artifact,
            f"it lies {depth} directories down (a baseline is TASK.ARTIFACT or ENV/TASK.ARTIFACT)",
        )
    task_id = name[: -len(artifact) - 1].partition(VARIANT_MARK)[0]
    named = [("task id", task_id)]
    if len(parts) == 2:
        named.insert(0, ("environment name", parts[0]))
    for what, part in named:
        why = unsafe_reason(part)
        if why is not None:
            return Refused(relpath, artifact, f"its {what} '{printable(part)}' is refused: {why}")
    return None  # parse_relpath maps it to a task: not refused


def _variant_number(text: str) -> tuple[int, str | None]:
    if text.isascii() and text.isdigit() and not text.startswith("0") and int(text) >= 2:
        return int(text), None
    if text == "1":
        return 0, "'~1' is not a variant name (variant 1 has no '~' suffix)"
    return 0, f"'~{text}' is not a variant number (variants are ~2, ~3, ...)"


def group_variants(found: Iterable[Baseline]) -> dict[tuple[TaskRef, str], list[Baseline]]:
    """The variants of each (task, artifact), numbered ones in order, misnamed ones last."""
    groups: dict[tuple[TaskRef, str], list[Baseline]] = {}
    for baseline in found:
        groups.setdefault((baseline.ref, baseline.artifact), []).append(baseline)
    for members in groups.values():
        if len(members) > 1:  # most artifacts have one baseline: nothing to order
            members.sort(key=lambda b: (b.name_problem is not None, b.variant, b.relpath))
    return groups


def layout_problem(variants: Sequence[Baseline], *, shown: Callable[[Baseline], str]) -> str | None:
    """Why these variants of one artifact are not numbered 1, 2, ... N (N <= 10), or None."""
    misnamed = [b for b in variants if b.name_problem is not None]
    if misnamed:
        return (
            f"{shown(misnamed[0])}: {misnamed[0].name_problem}; run `silo-regress fmt` to renumber"
        )
    numbers = [b.variant for b in variants]
    expected = list(range(1, len(numbers) + 1))
    if numbers != expected:
        gap = next(n for n, m in zip(expected, numbers, strict=True) if n != m)
        return (
            f"{shown(variants[0])}: variants are numbered {', '.join(map(str, numbers))}, "
            f"with no variant {gap}; run `silo-regress fmt` to renumber them"
        )
    if len(variants) > MAX_VARIANTS:
        return (
            f"{shown(variants[0])}: {len(variants)} accepted variants, more than "
            f"{MAX_VARIANTS}; a task this unstable needs ignored paths, not more variants"
        )
    return None


def sort_baselines(found: Iterable[Baseline], artifacts: tuple[str, ...]) -> list[Baseline]:
    order = {a: i for i, a in enumerate(artifacts)}
    return sorted(
        found,
        key=lambda b: (b.ref.task_id, b.ref.environment or "", order[b.artifact], b.variant),
    )
