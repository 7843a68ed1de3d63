"""Runs against baselines: verdicts, structural changes and behaviour summaries.

Values only: nothing here prints or decides an exit code.
"""

from __future__ import annotations

import difflib
import enum
import itertools
import operator
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from silo_regress.baselines import Baseline, BaselineSource
from silo_regress.canonical import (
    FORMAT_VERSION,
    Document,
    apply_ignores,
    canonicalize,
    format_number,
    might_be_volatile,
    scan_volatile,
    serialize,
)
from silo_regress.config import Config
from silo_regress.errors import InputError, TaskRefError
from silo_regress.pointer import Part, format_pointer
from silo_regress.runs import RESULT_FILE, Run, RunIndex, read_artifact
from silo_regress.taskref import TaskRef


class Verdict(enum.StrEnum):
    MATCH = "match"
    CHANGED = "changed"
    MISSING_BASELINE = "missing-baseline"
    MISSING_RUN = "missing-run"
    INCOMPLETE_RUN = "incomplete-run"
    NOT_CANONICAL = "not-canonical"
    VOLATILE = "volatile"
    FORMAT_VERSION = "format-version"


class _Missing:
    """The side of a change where the path does not exist."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Change:
    """One JSON Pointer whose value differs; ``MISSING`` marks an absent side."""

    path: str
    baseline: Any = MISSING
    run: Any = MISSING


@dataclass(frozen=True)
class Outcome:
    """The verdict for one artifact of one task."""

    task: TaskRef
    environment: str | None
    artifact: str
    verdict: Verdict
    baseline_path: str | None = None
    run_path: str | None = None
    run_name: str | None = None
    detail: str | None = None
    changes: tuple[Change, ...] = ()
    behaviour: tuple[str, ...] = ()
    baseline_text: bytes | None = field(default=None, repr=False)
    run_text: bytes | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.MATCH


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]
    warnings: tuple[str, ...] = ()
    source: str = "working tree"
    shard: tuple[int, int] | None = None  # (K, N) of check --shard K/N

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for outcome in self.outcomes:
            counts[outcome.verdict.value] = counts.get(outcome.verdict.value, 0) + 1
        return dict(sorted(counts.items()))


# --- selecting what to compare ------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A task to compare: its baselines (maybe none) and the run key it maps to."""

    ref: TaskRef
    key: tuple[str, str] | None
    baselines: tuple[Baseline, ...]


def select_targets(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    refs: Sequence[TaskRef] = (),
) -> list[Target]:
    """Group baselines by task and map each task to the runs it is compared with."""
    grouped: dict[TaskRef, list[Baseline]] = {}
    for baseline in source.entries():
        grouped.setdefault(baseline.ref, []).append(baseline)
    if refs:
        chosen: dict[TaskRef, list[Baseline]] = {}
        for ref in refs:
            hits = [r for r in grouped if r == ref]
            if not hits and not ref.qualified:
                hits = [r for r in grouped if r.task_id == ref.task_id]
            if hits:
                for hit in hits:
                    chosen[hit] = grouped[hit]
            else:
                key = index.resolve(ref, default_environment=config.environment)
                if key is None or not index.runs_of(*key):
                    baselines = config.relative(config.baselines_dir)
                    raise TaskRefError(
                        f"task {ref}: no baseline under {baselines}/ ({source.label}) "
                        f"and no run under {config.relative(index.runs_dir)}/"
                    )
                chosen[ref] = []
        grouped = chosen
    targets = []
    for ref in sorted(grouped, key=TaskRef.sort_key):
        key = index.resolve(ref, default_environment=config.environment)
        targets.append(Target(ref=ref, key=key, baselines=tuple(grouped[ref])))
    return targets


# --- comparing ----------------------------------------------------------------


def check(
    config: Config,
    index: RunIndex,
    source: BaselineSource,
    refs: Sequence[TaskRef] = (),
    *,
    targets: Sequence[Target] | None = None,
    runs: dict[tuple[str, str], Run] | None = None,
) -> Report:
    """Compare the newest run of every selected task with its baselines.

    ``runs`` pins the run used for a task (``check --run`` compares the runs it
    just made, not whatever is newest on disk).
    """
    if targets is None:
        targets = select_targets(config, index, source, refs)
    version = source.format_version()
    wrong_version = _version_problem(version, source, config) if targets else None
    outcomes: list[Outcome] = []
    for target in targets:
        run = None
        if target.key is not None:
            # With pinned runs (check --run) only those count: an older run on
            # disk is not a result anybody just produced.
            run = runs.get(target.key) if runs is not None else index.newest(*target.key)
        environment = target.key[0] if target.key else target.ref.environment
        if not target.baselines:
            for artifact in config.artifacts:
                outcomes.append(
                    Outcome(
                        task=target.ref,
                        environment=environment,
                        artifact=artifact,
                        verdict=Verdict.MISSING_BASELINE,
                        run_path=_run_path(config, run, artifact),
                        run_name=run.name if run else None,
                        detail=f"no baseline; record it with: silo-regress record {target.ref}",
                    )
                )
            continue
        result = _read_result(config, run) if run is not None else None
        for baseline in target.baselines:
            outcomes.append(
                _compare_one(
                    config,
                    source,
                    baseline,
                    environment=environment,
                    run=run,
                    result=result,
                    wrong_version=wrong_version,
                )
            )
    return Report(outcomes=tuple(outcomes), warnings=_warnings(config, index), source=source.label)


def _version_problem(version: str | None, source: BaselineSource, config: Config) -> str | None:
    if version == str(FORMAT_VERSION):
        return None
    where = f"{config.relative(config.baselines_dir)}/.silo-regress-format"
    if version is None:
        if not source.entries():
            return None
        return (
            f"{where} is missing ({source.label}), so the baselines' format is unknown; "
            "run `silo-regress fmt` to rewrite them in format 1"
        )
    return (
        f"baselines are in format {version!r} ({where}), this silo-regress writes "
        f"format {FORMAT_VERSION}; run `silo-regress fmt` to rewrite them"
    )


def _warnings(config: Config, index: RunIndex, *, shown: int = 3) -> tuple[str, ...]:
    """One line per skipped run directory, folded per reason when there are many."""
    by_reason: dict[str, list[str]] = {}
    for item in index.unidentified:
        by_reason.setdefault(item.reason, []).append(config.relative(item.path))
    lines: list[str] = []
    for reason, paths in by_reason.items():
        if len(paths) <= shown:
            lines.extend(f"{path}: skipped, {reason}" for path in paths)
        else:
            head, rest = ", ".join(paths[:shown]), len(paths) - shown
            lines.append(f"{len(paths)} run directories skipped, {reason}: {head} and {rest} more")
    return tuple(lines)


def _run_path(config: Config, run: Run | None, artifact: str) -> str | None:
    return config.relative(os.path.join(run.path, artifact)) if run is not None else None


@dataclass(frozen=True)
class _Result:
    """A run's result.json: why it is unusable, or its canonical document."""

    problem: str | None
    doc: Document | None = None


def _read_result(config: Config, run: Run) -> _Result:
    path = config.relative(os.path.join(run.path, RESULT_FILE))
    data = read_artifact(run, RESULT_FILE)
    if data is None:
        return _Result(f"{path} is missing: the rollout crashed or is still running")
    try:
        doc = canonicalize(data, source=path)
    except InputError as exc:
        return _Result(exc.message)
    if not isinstance(doc.value, dict):
        return _Result(f"{path} is not a JSON object")
    return _Result(None, doc)


def _compare_one(
    config: Config,
    source: BaselineSource,
    baseline: Baseline,
    *,
    environment: str | None,
    run: Run | None,
    result: _Result | None,
    wrong_version: str | None,
) -> Outcome:
    artifact = baseline.artifact
    fields: dict[str, Any] = {
        "task": baseline.ref,
        "environment": environment,
        "artifact": artifact,
        "baseline_path": config.relative(os.path.join(config.baselines_dir, baseline.relpath)),
        "run_path": _run_path(config, run, artifact),
        "run_name": run.name if run else None,
    }
    verdict, detail = _judge(
        config, source, baseline, run=run, result=result, wrong_version=wrong_version, fields=fields
    )
    return Outcome(verdict=verdict, detail=detail, **fields)


def _judge(
    config: Config,
    source: BaselineSource,
    baseline: Baseline,
    *,
    run: Run | None,
    result: _Result | None,
    wrong_version: str | None,
    fields: dict[str, Any],
) -> tuple[Verdict, str | None]:
    """The verdict and its detail; fills ``fields`` with texts, changes and behaviour."""
    artifact = baseline.artifact
    if wrong_version is not None:
        return Verdict.FORMAT_VERSION, wrong_version
    baseline_bytes = fields["baseline_text"] = source.read(baseline)
    if run is None or result is None:
        return Verdict.MISSING_RUN, (
            f"no run of {baseline.ref} under {config.relative(config.runs_dir)}/"
        )
    if result.problem is not None:
        return Verdict.INCOMPLETE_RUN, f"newest run {run.name}: {result.problem}"
    if artifact == RESULT_FILE and result.doc is not None:
        run_doc = result.doc
    else:
        run_source = fields["run_path"]
        data = read_artifact(run, artifact)
        if data is None:
            return Verdict.INCOMPLETE_RUN, f"{run_source} is missing"
        try:
            run_doc = canonicalize(data, source=run_source)
        except InputError as exc:
            return Verdict.INCOMPLETE_RUN, exc.message
    run_doc = _ignored(config, run_doc, artifact)
    fields["run_text"] = run_doc.text
    if baseline_bytes == run_doc.text:
        findings = _findings(config, run_doc, artifact)
        if findings:
            return Verdict.VOLATILE, _describe(findings, fields["baseline_path"])
        return Verdict.MATCH, None
    shown = source.display_path(baseline)
    try:
        base_doc = canonicalize(baseline_bytes, source=shown)
    except InputError as exc:
        return Verdict.NOT_CANONICAL, exc.message
    if base_doc.text != baseline_bytes:
        return Verdict.NOT_CANONICAL, (
            f"{shown} is not in canonical form; run `silo-regress fmt` to rewrite it"
        )
    findings = _findings(config, base_doc, artifact)
    if findings:
        return Verdict.VOLATILE, _describe(findings, shown)
    base_doc = _ignored(config, base_doc, artifact)
    if base_doc.text == run_doc.text:
        return Verdict.MATCH, None
    fields["changes"] = tuple(diff_values(base_doc.value, run_doc.value))
    fields["behaviour"] = summarize(artifact, base_doc.value, run_doc.value)
    return Verdict.CHANGED, None


def _ignored(config: Config, doc: Document, artifact: str) -> Document:
    if not any(p.applies_to(artifact) for p in config.ignore):
        return doc
    value = apply_ignores(doc.value, artifact=artifact, ignore=config.ignore)
    return Document(value=value, text=serialize(value))


def _findings(config: Config, doc: Document, artifact: str) -> list[str]:
    if not might_be_volatile(doc.text):
        return []
    found = scan_volatile(doc.value, artifact=artifact, exempt=config.scan_exempt)
    return [f"{f.pointer} ({f.reason})" for f in found]


def _describe(findings: Sequence[str], where: str | None) -> str:
    head = ", ".join(findings[:5])
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    return (
        f"{where} holds volatile content at {head}{more}; "
        "exempt or ignore these paths in [tool.silo-regress], or fix the producer"
    )


# --- structural changes -------------------------------------------------------


def diff_values(before: Any, after: Any, parts: tuple[Part, ...] = ()) -> list[Change]:
    """Every JSON Pointer where ``before`` and ``after`` differ, in document order."""
    out: list[Change] = []
    _diff(before, after, parts, out)
    return out


def _same_leaf(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _number(a) == _number(b)
    return type(a) is type(b) and bool(a == b)


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else format_number(value)


def _identical(a: Any, b: Any) -> bool:
    """True when two containers hold the same JSON, checked at C speed.

    ``==`` alone calls ``true`` and ``1`` equal; orjson's bytes tell them apart.
    False means "look closer", never "different".
    """
    if type(a) is not type(b) or a != b:
        return False
    try:
        return bool(orjson.dumps(a) == orjson.dumps(b))
    except (orjson.JSONEncodeError, TypeError):  # integers beyond 64 bits
        return False


def _suspects(a: list[Any], b: list[Any]) -> Iterable[int]:
    """Indices below both lengths where the items may differ; linear, mostly in C."""
    count = min(len(a), len(b))
    same_type = map(operator.is_, map(type, a), map(type, b))
    same = list(map(operator.and_, map(operator.eq, a, b), same_type))
    containers = map(_CONTAINERS.__contains__, map(type, a))
    maybe_hidden = itertools.compress(range(count), map(operator.and_, same, containers))
    differing = itertools.compress(range(count), map(operator.not_, same))
    hidden = [i for i in maybe_hidden if not _identical(a[i], b[i])]
    return sorted([*differing, *hidden]) if hidden else differing


_CONTAINERS = frozenset({dict, list})


def _diff(a: Any, b: Any, parts: tuple[Part, ...], out: list[Change]) -> None:
    if isinstance(a, dict | list) and _identical(a, b):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(set(a) | set(b), key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        for key in keys:
            path = (*parts, key)
            if key not in b:
                out.append(Change(format_pointer(path), baseline=a[key]))
            elif key not in a:
                out.append(Change(format_pointer(path), run=b[key]))
            else:
                _diff(a[key], b[key], path, out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in _suspects(a, b):
            _diff(a[i], b[i], (*parts, i), out)
        for i in range(min(len(a), len(b)), max(len(a), len(b))):
            path = (*parts, i)
            if i >= len(b):
                out.append(Change(format_pointer(path), baseline=a[i]))
            else:
                out.append(Change(format_pointer(path), run=b[i]))
    elif isinstance(a, dict | list) or isinstance(b, dict | list):
        if a != b:
            out.append(Change(format_pointer(parts), baseline=a, run=b))
    elif not _same_leaf(a, b):
        out.append(Change(format_pointer(parts), baseline=a, run=b))


# --- behaviour in agent terms -------------------------------------------------


def show(value: Any) -> str:
    """A short, exact rendering of a JSON value for one-line summaries."""
    if value is MISSING:
        return "(absent)"
    if isinstance(value, str | int | float | bool) or value is None:
        return serialize(value).decode("utf-8").rstrip("\n")
    # One line per member in canonical form (newlines inside strings are escaped).
    lines = serialize(value).decode("utf-8").rstrip("\n").split("\n")
    return "".join(line.strip(" ") + (" " if line.endswith(",") else "") for line in lines)


def summarize(artifact: str, before: Any, after: Any) -> tuple[str, ...]:
    """What changed, in the words of someone who evaluates agents."""
    if artifact == "result.json" and isinstance(before, dict) and isinstance(after, dict):
        return tuple(_summarize_result(before, after))
    if artifact == "state-diff.json" and isinstance(before, dict) and isinstance(after, dict):
        return tuple(_summarize_state(before, after))
    changes = diff_values(before, after)
    return tuple(f"{c.path or '/'}: {show(c.baseline)} -> {show(c.run)}" for c in changes[:20])


def _get(obj: dict[str, Any], key: str) -> Any:
    return obj.get(key, MISSING)


def _summarize_result(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    if _get(a, "passed") != _get(b, "passed"):
        if b.get("passed") is False:
            notes.append("now FAILS (passed: true -> false)")
        elif b.get("passed") is True:
            notes.append("now passes (passed: false -> true)")
        else:
            notes.append(f"passed: {show(_get(a, 'passed'))} -> {show(_get(b, 'passed'))}")
    if not _same_leaf(_get(a, "reward"), _get(b, "reward")):
        notes.append(f"reward {show(_get(a, 'reward'))} -> {show(_get(b, 'reward'))}")
    notes.extend(_summarize_checks(_get(a, "checks"), _get(b, "checks")))
    for key in ("terminationReason", "error"):
        if _get(a, key) != _get(b, key):
            notes.append(f"{key} {show(_get(a, key))} -> {show(_get(b, key))}")
    for key in ("toolCalls", "toolErrors", "requiredPassed", "checksPassed", "checksFailed"):
        x, y = _get(a, key), _get(b, key)
        if x != y:
            delta = ""
            if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool):
                delta = f" ({y - x:+d})"
            notes.append(f"{key} {show(x)} -> {show(y)}{delta}")
    notes.extend(_summarize_output(_get(a, "agentOutput"), _get(b, "agentOutput")))
    known = {
        "passed", "reward", "checks", "terminationReason", "error", "toolCalls", "toolErrors",
        "requiredPassed", "checksPassed", "checksFailed", "agentOutput", "failedRequired",
        "requiredTotal",
    }  # fmt: skip
    for change in diff_values(
        {k: v for k, v in a.items() if k not in known},
        {k: v for k, v in b.items() if k not in known},
    ):
        notes.append(f"{change.path}: {show(change.baseline)} -> {show(change.run)}")
    return notes


def _summarize_output(before: Any, after: Any, *, limit: int = 6) -> list[str]:
    """agentOutput: a word diff for text, the changed members for objects and arrays."""
    containers = isinstance(before, dict | list), isinstance(after, dict | list)
    if (before == after) if any(containers) else _same_leaf(before, after):
        return []
    if not all(containers):
        return ["agentOutput changed: " + describe_text_change(before, after)]
    changes = diff_values(before, after, ("agentOutput",))
    notes = [
        f"{c.path}: " + describe_text_change(c.baseline, c.run, limit=200) for c in changes[:limit]
    ]
    if len(changes) > limit:
        notes.append(f"agentOutput: {len(changes) - limit} more changed values")
    return notes


def _summarize_checks(before: Any, after: Any) -> list[str]:
    def by_label(checks: Any) -> dict[str, dict[str, Any]]:
        if not isinstance(checks, list):
            return {}
        found: dict[str, dict[str, Any]] = {}
        for check in checks:
            if isinstance(check, dict) and isinstance(check.get("label"), str):
                found.setdefault(check["label"], check)
        return found

    a, b = by_label(before), by_label(after)
    notes = []
    for label, old in a.items():
        new = b.get(label)
        if new is None:
            notes.append(f'check "{label}" removed')
            continue
        if old.get("passed") != new.get("passed"):
            was, now = _pass_word(old.get("passed")), _pass_word(new.get("passed"))
            notes.append(f'check "{label}" {was} -> {now}')
        for key in ("required", "detail"):
            if old.get(key) != new.get(key):
                was, now = show(old.get(key, MISSING)), show(new.get(key, MISSING))
                notes.append(f'check "{label}" {key} {was} -> {now}')
    for label, new in b.items():
        if label not in a:
            notes.append(f'check "{label}" added ({_pass_word(new.get("passed"))})')
    if not notes and before != after:
        notes.append("checks reordered")
    return notes


def _pass_word(value: Any) -> str:
    return (
        {True: "passed", False: "failed"}.get(value, show(value))
        if isinstance(value, bool)
        else show(value)
    )


_WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def describe_text_change(before: Any, after: Any, *, limit: int = 400) -> str:
    """A word-level diff of two strings (``[-old-]{+new+}``), else old -> new."""
    if not (isinstance(before, str) and isinstance(after, str)):
        return f"{_clip(show(before), limit)} -> {_clip(show(after), limit)}"
    if len(before) <= 60 and len(after) <= 60 and "\n" not in before + after:
        return f"{show(before)} -> {show(after)}"
    old, new = _WORDS.findall(before), _WORDS.findall(after)
    pieces: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            text = "".join(old[i1:i2])
            pieces.append(text if len(text) <= 40 else text[:18] + "…" + text[-18:])
        else:
            if i2 > i1:
                pieces.append("[-" + "".join(old[i1:i2]) + "-]")
            if j2 > j1:
                pieces.append("{+" + "".join(new[j1:j2]) + "+}")
    return _clip("".join(pieces).replace("\n", "⏎"), limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summarize_state(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    ca = _as_dict(a.get("collections"))
    cb = _as_dict(b.get("collections"))
    for name in sorted(set(ca) | set(cb)):
        old, new = ca.get(name, {}), cb.get(name, {})
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                notes.append(f"{name}: {show(old)} -> {show(new)}")
            continue
        for kind in sorted(set(old) | set(new)):
            x, y = old.get(kind, []), new.get(kind, [])
            if x == y:
                continue
            if isinstance(x, list) and isinstance(y, list):
                gained, lost = _gained_lost(x, y)
                parts = [f"+{_id(i)}" for i in gained] + [f"-{_id(i)}" for i in lost]
                if not parts:
                    parts = ["same ids, new order"]
                notes.append(f"{name}.{kind}: {' '.join(parts)}")
            else:
                notes.append(f"{name}.{kind}: {show(x)} -> {show(y)}")
    notes.extend(_summarize_scalars(a.get("scalars"), b.get("scalars")))
    rest = diff_values(
        {k: v for k, v in a.items() if k not in {"collections", "scalars"}},
        {k: v for k, v in b.items() if k not in {"collections", "scalars"}},
    )
    notes.extend(f"{c.path}: {show(c.baseline)} -> {show(c.run)}" for c in rest)
    return notes


def _gained_lost(before: list[Any], after: list[Any]) -> tuple[list[Any], list[Any]]:
    """Items only in ``after`` and only in ``before``, in their order; linear.

    A list of millions of ids usually changes in one place: the common start and
    end are skipped at C speed, and a few changed ids are looked up directly.
    """
    shorter = min(len(before), len(after))
    start = _common_prefix(before, after, shorter)
    end = _common_prefix(reversed(before), reversed(after), shorter - start)
    middle_before, middle_after = before[start : len(before) - end], after[start : len(after) - end]
    if len(middle_before) + len(middle_after) <= 32 and all(
        type(i) is str for i in (*middle_before, *middle_after)
    ):
        gained = [i for i in middle_after if i not in before]
        lost = [i for i in middle_before if i not in after]
        return list(dict.fromkeys(gained)), list(dict.fromkeys(lost))
    try:  # a set alone would call true and 1 the same id: tag them where they occur
        old, new = set(before), set(after)
        if old & _BOOLISH or new & _BOOLISH:
            old = {(type(i) is bool, i) for i in before}
            new = {(type(i) is bool, i) for i in after}
            return (
                [i for i in after if (type(i) is bool, i) not in old],
                [i for i in before if (type(i) is bool, i) not in new],
            )
    except TypeError:  # objects in the list: compare them one by one
        return [i for i in after if i not in before], [i for i in before if i not in after]
    return _in_order(new - old, after), _in_order(old - new, before)


def _common_prefix(a: Iterable[Any], b: Iterable[Any], length: int) -> int:
    """How many of the first ``length`` items ``a`` and ``b`` share, counted in C."""
    a, b = itertools.tee(a), itertools.tee(b)
    # Compared with their types too: true and 1 are equal to Python, not to JSON.
    unequal = map(operator.ne, a[0], b[0])
    retyped = map(operator.is_not, map(type, a[1]), map(type, b[1]))
    differs = itertools.islice(map(operator.or_, unequal, retyped), max(length, 0))
    first = next(itertools.compress(itertools.count(), differs), None)
    return max(length, 0) if first is None else first


def _in_order(items: set[Any], order: list[Any]) -> list[Any]:
    """``items`` in the order they appear in ``order``, without a Python pass over it
    when there are few."""
    if len(items) <= 16:
        return sorted(items, key=order.index)
    return [i for i in order if i in items]


_BOOLISH = frozenset({0, 1})


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _id(value: Any) -> str:
    return value if isinstance(value, str) else show(value)


def _summarize_scalars(before: Any, after: Any) -> list[str]:
    def by_field(entries: Any) -> dict[str, Any]:
        if not isinstance(entries, list):
            return {}
        return {
            e["field"]: e
            for e in entries
            if isinstance(e, dict) and isinstance(e.get("field"), str)
        }

    a, b = by_field(before), by_field(after)
    notes = []
    for name in list(a) + [n for n in b if n not in a]:
        old, new = a.get(name), b.get(name)
        if old == new:
            continue
        if new is None:
            notes.append(f"scalar {name} no longer changes (was {_transition(old)})")
        elif old is None:
            notes.append(f"scalar {name} now changes: {_transition(new)}")
        else:
            notes.append(f"scalar {name}: {_transition(old)} became {_transition(new)}")
    if not notes and before != after:
        notes.append("scalars reordered")
    return notes


def _transition(entry: Any) -> str:
    if not isinstance(entry, dict):
        return show(entry)
    return f"{show(entry.get('from', MISSING))} -> {show(entry.get('to', MISSING))}"


def one_line(behaviour: Iterable[str], *, limit: int = 3) -> str:
    notes = list(behaviour)
    if not notes:
        return "no behavioural difference"
    head = "; ".join(notes[:limit])
    return head + (f"; +{len(notes) - limit} more" if len(notes) > limit else "")
