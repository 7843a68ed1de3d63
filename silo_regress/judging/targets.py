"""Which tasks a check compares: baselines grouped by task, each mapped to its runs;
and which ref a task's runs go by."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from silo_regress.errors import TaskRefError
from silo_regress.project.config import Config
from silo_regress.project.taskref import TaskRef
from silo_regress.runs.index import RunIndex
from silo_regress.store.baselines import Baseline, BaselineSource, Refused


@dataclass(frozen=True)
class Target:
    """A task to compare: its baselines (maybe none) and the run key it maps to.

    With ``refused``, the files of a name that maps to no task (``crm~west/TASK``):
    no run to map, nothing to compare, a verdict naming each file all the same.
    """

    ref: TaskRef
    key: tuple[str, str] | None
    baselines: tuple[Baseline, ...]
    # Environments that ran an unqualified task when none is configured: the
    # task gets one named result instead of stopping the whole check.
    ambiguous: tuple[str, ...] = ()
    refused: tuple[Refused, ...] = ()


def ref_for_run(config: Config, index: RunIndex, environment: str, task_id: str) -> TaskRef:
    """The ref a task's runs are known by, and its baselines written under.

    Unqualified for the configured environment, or when only one environment has
    runs of the task; qualified (``ENV/TASK``) otherwise.
    """
    if config.environment is not None:
        return TaskRef(task_id, None if environment == config.environment else environment)
    if len(index.environments_of(task_id)) > 1:
        return TaskRef(task_id, environment)
    return TaskRef(task_id)


def describe_ambiguous(config: Config, target: Target) -> str:
    """Why an unqualified baseline cannot be judged, and the two ways to resolve it."""
    ref = target.ref
    envs = target.ambiguous
    return (
        f"ambiguous: {ref} ran in {len(envs)} environments ({', '.join(envs)}) and none "
        f"is configured; record a baseline per environment with "
        f"`silo-regress record {envs[0]}/{ref.task_id}`, or set "
        f'`environment = "{envs[0]}"` in {config.where}'
    )


def select_targets(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    refs: Sequence[TaskRef] = (),
) -> list[Target]:
    """Group baselines by task and map each task to the runs it is compared with.

    Files named like a baseline that name no task are targets too, one per name they
    spell, so every check lists them; a ref given selects those its task id names.
    """
    listing = source.listing()
    grouped: dict[TaskRef, list[Baseline]] = {}
    for baseline in listing.baselines:
        grouped.setdefault(baseline.ref, []).append(baseline)
    refused: dict[TaskRef, list[Refused]] = {}
    for item in listing.refused:
        refused.setdefault(item.ref, []).append(item)
    if refs:
        refused = {s: items for s, items in refused.items() if any(_names(r, s) for r in refs)}
        chosen: dict[TaskRef, list[Baseline]] = {}
        for ref in refs:
            hits = [r for r in grouped if r == ref]
            if not hits and not ref.qualified:
                hits = [r for r in grouped if r.task_id == ref.task_id]
            if hits:
                for hit in hits:
                    chosen[hit] = grouped[hit]
            else:
                key = index.resolve(
                    ref, default_environment=config.environment, config=config.location
                )
                if key is None or not index.runs_of(*key):
                    if any(_names(ref, spelt) for spelt in refused):
                        continue  # its only file has a refused name: that is its verdict
                    baselines = config.relative(config.baselines_dir)
                    raise TaskRefError(
                        f"task {ref}: no baseline under {baselines}/ ({source.label}) "
                        f"and no run under {config.relative(index.runs_dir)}/"
                    )
                chosen[ref] = []
        grouped = chosen
    targets = []
    for ref in sorted(grouped, key=TaskRef.sort_key):
        try:
            key = index.resolve(ref, default_environment=config.environment, config=config.location)
        except TaskRefError:
            environments = tuple(index.environments_of(ref.task_id))
            targets.append(
                Target(ref=ref, key=None, baselines=tuple(grouped[ref]), ambiguous=environments)
            )
            continue
        targets.append(Target(ref=ref, key=key, baselines=tuple(grouped[ref])))
    if refused:
        targets += [
            Target(ref=s, key=None, baselines=(), refused=tuple(refused[s])) for s in refused
        ]
        targets.sort(key=lambda t: t.ref.sort_key())  # stable: a real task before its look-alike
    return targets


def _names(ref: TaskRef, spelt: TaskRef) -> bool:
    """Whether ``ref``, as given, selects the task a refused file's name spells."""
    return spelt == ref or (not ref.qualified and spelt.task_id == ref.task_id)
