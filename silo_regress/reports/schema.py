"""The JSON report's schema in one place: the document ``check --format json`` writes
(:func:`report_json`, through :mod:`silo_regress.render.machine`) and ``merge`` reads back
(:func:`read_report`, :func:`load_report`), its key names and its version. Behaviour
notes travel as :mod:`silo_regress.behaviour.codec` codes them, once as typed ``notes``
and once as ``behaviour`` lines in words.

Version 1, byte for byte as 0.2 wrote it. One value travels inside another: the
project's directory in its git repository (``agents/crm/``, for baselines read from a
commit or the index) is part of ``baselineSource.label``, as ``git show`` wants it, and
has no key of its own; a key would change every such report's bytes. The label is
written by :meth:`BaselineOrigin.locate` and read back by :func:`_git_prefix`, its
inverse, here and nowhere else: the merge gets a typed :class:`BaselineOrigin`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silo_regress.behaviour.codec import NoteError, note_from_json, note_json
from silo_regress.behaviour.notes import Note, Worded
from silo_regress.canon.jsondiff import MISSING, Change
from silo_regress.canon.visible import visible
from silo_regress.errors import InputError, TaskRefError
from silo_regress.judging.direction import Scores, read_scores
from silo_regress.judging.outcome import (
    WORKING_TREE,
    BaselineOrigin,
    Direction,
    Outcome,
    Report,
    SourceKind,
    Verdict,
)
from silo_regress.judging.remedies import RefusedName
from silo_regress.project.taskref import TaskRef, parse_ref
from silo_regress.store.baselines import INDEX_LABEL

if TYPE_CHECKING:
    from silo_regress.runs.provenance import Provenance

REPORT_VERSION = 1  # written as "version"; a report of another version is refused
REPORT_LIMIT = 1 << 28  # far beyond any report of a real suite; /dev/zero stops here
_VERDICTS = {v.value: v for v in Verdict}


# --- reading ------------------------------------------------------------------


def read_report(path: Path) -> Report:
    """Load one JSON report file, or raise :class:`InputError` naming it."""
    from silo_regress.system.fsio import read_regular

    try:
        # A report named by the user may be a FIFO or /dev/zero: never block on it.
        data = read_regular(path, shown=str(path), limit=REPORT_LIMIT)
    except FileNotFoundError:
        raise InputError(f"{path}: no such report file") from None
    return load_report(data, source=str(path))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def load_report(data: bytes, *, source: str) -> Report:
    """A :class:`Report` from the bytes of a ``check --format json`` document."""
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise InputError(f"{source}: not valid UTF-8, so not a silo-regress JSON report") from None
    except ValueError as exc:
        raise InputError(
            f"{source}: not a silo-regress JSON report (invalid JSON: {exc}); "
            "make it with `silo-regress check --format json --output FILE`"
        ) from None
    except RecursionError:
        raise InputError(
            f"{source}: not a silo-regress JSON report (nested too deeply to read); "
            "make it with `silo-regress check --format json --output FILE`"
        ) from None
    if not isinstance(document, dict) or "results" not in document:
        raise InputError(
            f"{source}: not a silo-regress JSON report (no 'results'); "
            "make it with `silo-regress check --format json --output FILE`"
        )
    version = document.get("version")
    if isinstance(version, bool) or version != REPORT_VERSION:  # true == 1 in Python
        raise InputError(
            f"{source}: report version {version!r} is not {REPORT_VERSION}, the version this "
            "silo-regress reads; make every report with the same silo-regress version"
        )
    results = document["results"]
    if not isinstance(results, list):
        raise InputError(f"{source}: 'results' must be a list")
    outcomes = tuple(_outcome(item, f"{source}: results[{n}]") for n, item in enumerate(results))
    repeat = _repeat(document.get("repeat"), source)
    if repeat is not None:
        for n, outcome in enumerate(outcomes):
            if not outcome.repeats or max(outcome.repeats) > repeat:
                raise InputError(
                    f"{source}: results[{n}].repeats must list rollouts 1..{repeat} "
                    "(a check --run --repeat report)"
                )
    origins = list(dict.fromkeys(o.baseline_source for o in outcomes if o.baseline_source))
    stats = None
    if document.get("stats") is not None:  # the stats gate (docs/statistics.md)
        from silo_regress.reports.statsmerge import judge_again, read_stats

        stats = judge_again([read_stats(document["stats"], source)])
    return Report(
        outcomes=outcomes,
        shard=_shard(document.get("shard"), source),
        source=origins[0] if len(origins) == 1 else WORKING_TREE,
        repeat=repeat,
        stats=stats,
    )


def _repeat(value: Any, source: str) -> int | None:
    """N of a check --run --repeat N report; the per-task tallies are derived again."""
    if value is None:
        return None
    count = value.get("count") if isinstance(value, dict) else None
    if isinstance(count, int) and not isinstance(count, bool) and count >= 2:
        return count
    raise InputError(f"{source}: 'repeat' must be {{\"count\": N, ...}} with N >= 2")


def _refused_name(item: dict[str, Any], where: str) -> RefusedName | None:
    """The typed marker of a file whose name maps to no task, so a merged report's next
    step is rename-or-remove (not fmt) as the check's was; absent for every other result."""
    value = item.get("refusedName")
    if value is None:
        return None
    baseline = item.get("baseline")
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("exact"), bool)
        or not isinstance(baseline, str)
        or item.get("status") != Verdict.NOT_CANONICAL
    ):
        raise InputError(
            f'{where}.refusedName must be an object {{"exact": true or false}} on a '
            "not-canonical result with a baseline"
        )
    return RefusedName(baseline, exact=value["exact"])


def _repeats(item: dict[str, Any], where: str) -> tuple[int, ...]:
    """The rollouts a result stands for; absent outside check --run --repeat."""
    value = item.get("repeats", [])
    if not isinstance(value, list) or not all(
        isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in value
    ):
        raise InputError(f"{where}.repeats must be a list of rollout numbers (1, 2, ...)")
    return tuple(value)


def _shard(value: Any, source: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        index, count = value.get("index"), value.get("count")
        if (
            isinstance(index, int)
            and isinstance(count, int)
            and not isinstance(index, bool)
            and not isinstance(count, bool)
            and 1 <= index <= count
        ):
            return (index, count)
    raise InputError(f'{source}: \'shard\' must be {{"index": K, "count": N}} with 1 <= K <= N')


def _text(item: dict[str, Any], key: str, where: str, *, optional: bool = True) -> str | None:
    value = item.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        kind = "a string or null" if optional else "a string"
        raise InputError(f"{where}.{key} must be {kind}")
    return value


def _outcome(item: Any, where: str) -> Outcome:
    if not isinstance(item, dict):
        raise InputError(f"{where} must be an object")
    task_text = _text(item, "task", where, optional=False) or ""
    status = _text(item, "status", where, optional=False) or ""
    if status not in _VERDICTS:
        raise InputError(
            f"{where}.status {status!r} is not a verdict ({', '.join(sorted(_VERDICTS))})"
        )
    try:
        task = parse_ref(task_text)
    except TaskRefError as exc:
        spelt = _refused_task(item, task_text, status)
        if spelt is None:
            raise InputError(f"{where}.task: {exc.message}") from None
        task = spelt
    behaviour = _notes(item, where)
    changes = item.get("changes", [])
    if not isinstance(changes, list):
        raise InputError(f"{where}.changes must be a list")
    return Outcome(
        task=task,
        environment=_text(item, "environment", where),
        artifact=_text(item, "artifact", where, optional=False) or "",
        verdict=_VERDICTS[status],
        baseline_path=_text(item, "baseline", where),
        baseline_source=_origin(item, where),
        run_path=_text(item, "run", where),
        run_name=_text(item, "runId", where),
        provenance=_provenance(item, where, task=task),
        variant=_variant(item, where),
        detail=_text(item, "detail", where),
        changes=tuple(_change(c, f"{where}.changes[{n}]") for n, c in enumerate(changes)),
        behaviour=behaviour,
        direction=_direction(item, where),
        scores=_scores(item, where),
        repeats=_repeats(item, where),
        remedy=_refused_name(item, where),
    )


def _refused_task(item: dict[str, Any], text: str, status: str) -> TaskRef | None:
    """The task a file's refused name spells (``crm~west/TASK-002``), as check reports it:
    ``not-canonical``, with no run: that ref only labels the file in the merged report.
    Any other result must name a task ref that parses."""
    if status != Verdict.NOT_CANONICAL or item.get("run") is not None or not text:
        return None
    folder, _, name = text.rpartition("/")
    return TaskRef(name, folder or None)


def _origin(item: dict[str, Any], where: str) -> BaselineOrigin | None:
    """Where the baseline was read (``baselineSource``); absent in older reports."""
    value = item.get("baselineSource")
    if value is None:
        return None
    kinds = {k.value: k for k in SourceKind}
    kind = kinds.get(str(value.get("kind"))) if isinstance(value, dict) else None
    ref = value.get("ref") if isinstance(value, dict) else None
    commit = value.get("commit") if isinstance(value, dict) else None
    if (
        kind is None
        or (kind is SourceKind.COMMIT) != (isinstance(ref, str) and ref != "")
        or not (commit is None or (kind is SourceKind.COMMIT and isinstance(commit, str)))
    ):
        raise InputError(
            f"{where}.baselineSource must be null or an object with a kind "
            f"({', '.join(kinds)}); a commit's also has its ref and hash (or null)"
        )
    for key, text in (("ref", ref), ("commit", commit), ("label", value.get("label"))):
        # A git name prints; a newline in one would start a CI command where it is shown.
        if isinstance(text, str) and not text.isprintable():
            raise InputError(
                f"{where}.baselineSource.{key} {visible(text)} holds a character that does "
                "not print (a newline or control): no git name does"
            )
    if kind is SourceKind.WORKING_TREE:
        return WORKING_TREE
    label = value.get("label")
    baseline = item.get("baseline")
    prefix = ""
    if isinstance(label, str) and isinstance(baseline, str):
        prefix = _git_prefix(label, f"{ref}:" if kind is SourceKind.COMMIT else ":", baseline)
    if kind is SourceKind.COMMIT:
        return BaselineOrigin(kind, str(ref), commit, prefix)
    return BaselineOrigin(kind, INDEX_LABEL, git_prefix=prefix)


def _git_prefix(label: str, head: str, baseline: str) -> str:
    """The project's directory as git knows it, read back from a label: ``agents/crm/``
    from ``HEAD~1:agents/crm/baselines/X.json`` and ``baselines/X.json``.

    A report names no prefix of its own; the label holds it. "" for a label that is
    not the baseline's (an older report's, a hand-edited one): the label gets rebuilt.
    """
    if head == ":" and label.startswith("index:"):  # the hook's labels before 0.2's release
        head = "index:"
    path = label[len(head) :] if label.startswith(head) else ""
    if not path.endswith("/" + baseline):
        return ""
    return path[: -len(baseline)]


def _provenance(item: dict[str, Any], where: str, *, task: TaskRef) -> Provenance | None:
    """What made the run (``provenance``), as the report gave it; absent in older reports."""
    value = item.get("provenance")
    if value is None:
        return None
    fields = {"agent": str, "agentSha256": str, "commit": str, "dirty": bool, "toolVersion": str}
    if not isinstance(value, dict) or any(
        value.get(key) is not None and not isinstance(value.get(key), kind)
        for key, kind in fields.items()
    ):
        raise InputError(
            f"{where}.provenance must be null or an object of agent, agentSha256, commit, "
            "toolVersion (strings or null) and dirty (true, false or null)"
        )
    from silo_regress.runs.provenance import Provenance  # a report's reader only

    return Provenance(
        environment=_text(item, "environment", where) or task.environment or "",
        task_id=task.task_id,
        fingerprint=None,  # a report names what made the run, not what it was made from
        inputs=(),
        agent=value.get("agent"),
        agent_sha256=value.get("agentSha256"),
        silo_command=(),
        commit=value.get("commit"),
        dirty=value.get("dirty"),
        tool_version=value.get("toolVersion") or "?",
    )


def _variant(item: dict[str, Any], where: str) -> int | None:
    """Which accepted variant matched or was closest; absent in 0.1 reports."""
    value = item.get("variant")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{where}.variant must be a variant number (1, 2, ...) or null")
    return value


def _direction(item: dict[str, Any], where: str) -> Direction | None:
    value = item.get("direction")
    if value is None:
        return None
    try:
        return Direction(value)
    except ValueError:
        known = ", ".join(d.value for d in Direction)
        raise InputError(f"{where}.direction {value!r} is not a direction ({known})") from None


def _scores(item: dict[str, Any], where: str) -> tuple[Scores, Scores] | None:
    """The pass and reward of both sides, when the report has them (0.2 and later)."""
    scores = item.get("scores")
    if scores is None:
        return None
    if not isinstance(scores, dict) or not all(
        isinstance(scores.get(side), dict) for side in ("baseline", "run")
    ):
        raise InputError(f"{where}.scores must hold a baseline and a run object")
    read = [read_scores(scores[side]) for side in ("baseline", "run")]
    return read[0], read[1]


def _notes(item: dict[str, Any], where: str) -> tuple[Note, ...]:
    """The typed ``notes``; a report without them (0.1) keeps its ``behaviour`` words."""
    notes = item.get("notes")
    if notes is not None:
        if not isinstance(notes, list):
            raise InputError(f"{where}.notes must be a list")
        found = []
        for n, note in enumerate(notes):
            try:
                found.append(note_from_json(note))
            except NoteError as exc:
                raise InputError(f"{where}.notes[{n}]: {exc}") from None
        return tuple(found)
    behaviour = item.get("behaviour", [])
    if not isinstance(behaviour, list) or not all(isinstance(b, str) for b in behaviour):
        raise InputError(f"{where}.behaviour must be a list of strings")
    return tuple(Worded(text) for text in behaviour)


def _change(item: Any, where: str) -> Change:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        raise InputError(f"{where} must be an object with a string 'path'")
    if item["path"] and not item["path"].startswith("/"):
        raise InputError(f"{where}.path {item['path']!r} is not a JSON Pointer")
    if "baseline" not in item and "run" not in item:
        raise InputError(f"{where} has neither a 'baseline' nor a 'run' side: nothing changed")
    return Change(
        path=item["path"],
        baseline=item.get("baseline", MISSING),
        run=item.get("run", MISSING),
    )


# --- writing ------------------------------------------------------------------


def change_json(change: Change) -> dict[str, Any]:
    item: dict[str, Any] = {"path": change.path}
    if change.baseline is not MISSING:
        item["baseline"] = change.baseline
    if change.run is not MISSING:
        item["run"] = change.run
    return item


def report_json(
    report: Report,
    *,
    word: Callable[[tuple[Note, ...]], list[str]],
    next_steps: list[dict[str, Any]] | None = None,
    stats: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The document of ``report``; ``word`` gives each result's ``behaviour`` lines and
    ``next_steps`` the closing advice as data and ``stats`` the stats gate's results (each
    the renderers', above this layer)."""
    shard: dict[str, Any] = {}
    if report.shard is not None:
        shard["shard"] = {"index": report.shard[0], "count": report.shard[1]}
    return {
        "version": REPORT_VERSION,
        **shard,
        **_repeat_json(report),
        **({"stats": stats} if stats is not None else {}),
        **_units_json(report),
        "summary": report.summary(),
        "results": [
            {
                "task": str(o.task),
                "environment": o.environment,
                "artifact": o.artifact,
                "status": o.verdict.value,
                "direction": o.direction.value if o.direction else None,
                "baseline": o.baseline_path,
                "baselineSource": source_json(o),
                "run": o.run_path,
                "runId": o.run_name,
                "provenance": _provenance_json(o),
                "variant": o.variant,
                "detail": o.detail,
                "behaviour": word(o.behaviour),
                "notes": [note_json(n) for n in o.behaviour],
                "changes": [change_json(c) for c in o.changes],
                **_scores_json(o),
                **({"repeats": list(o.repeats)} if report.repeat is not None else {}),
                **(
                    {"refusedName": {"exact": o.remedy.exact}}
                    if isinstance(o.remedy, RefusedName)
                    else {}
                ),
            }
            for o in report.outcomes
        ],
        "nextSteps": next_steps or [],
        "uncovered": {
            "tasks": list(report.uncovered.tasks),
            "artifacts": [{"task": t, "artifact": a} for t, a in report.uncovered.artifacts],
            "environments": list(report.uncovered.environments),
        },
    }


def _units_json(report: Report) -> dict[str, Any]:
    """A merge of unit reports that did not count every planned rollout says which:
    absent when it did, so the merged report is byte for byte the one-machine check's."""
    units = report.units
    if units is None or not units.eventful:
        return {}
    return {
        "units": {
            "planned": units.planned,
            "counted": units.counted,
            "missing": [str(u) for u in units.missing],
            "infraErrors": [str(u) for u in units.infra_errors],
            "retried": [str(u) for u in units.retried],
        }
    }


def _repeat_json(report: Report) -> dict[str, Any]:
    """check --run --repeat N: the rollouts per task, and each task's pass count."""
    if report.repeat is None:
        return {}
    from silo_regress.judging.repeats import tally_repeats

    return {
        "repeat": {
            "count": report.repeat,
            "tasks": [
                {
                    "task": str(t.task),
                    "environment": t.environment,
                    "matched": len(t.matched),
                    "rollouts": t.rollouts,
                    "failing": list(t.failed),
                    "variants": {artifact: list(numbers) for artifact, numbers in t.variants},
                }
                for t in tally_repeats(report)
            ],
        }
    }


def source_json(outcome: Outcome) -> dict[str, Any] | None:
    """Where the baseline's bytes were read: kind, the commit as named and its hash, the label."""
    origin = outcome.baseline_source
    if outcome.baseline_path is None or origin is None:
        return None
    return {
        "kind": origin.kind.value,
        "ref": origin.ref,
        "commit": origin.commit,
        "label": outcome.baseline_label,
    }


def _provenance_json(outcome: Outcome) -> dict[str, Any] | None:
    """What made the run, from its silo-regress.json; null for a run without one."""
    record = outcome.provenance
    if record is None:
        return None
    return {
        "agent": record.agent,
        "agentSha256": record.agent_sha256,
        "commit": record.commit,
        "dirty": record.dirty,
        "toolVersion": record.tool_version,
    }


def _scores_json(outcome: Outcome) -> dict[str, Any]:
    """A result.json outcome's pass and reward on both sides, for merge's totals."""
    if outcome.scores is None:
        return {}
    before, after = outcome.scores
    return {
        "scores": {
            side: {"passed": scores.passed, "reward": scores.reward}
            for side, scores in (("baseline", before), ("run", after))
        }
    }
