"""Baselines merged through real ``git merge``: with the merge driver, and by ``fmt --resolve``
from the markers git leaves without it (issue 36).

    python bench/merge_driver.py                     # 1,000 pairs, 200 overlaps, 50 tallies
    python bench/merge_driver.py --pairs 100 --overlaps 20 --tallies 5 --modes driver

One repository per mode holds one file per case, ``baselines/TASK-NNNN.ARTIFACT``:
result.json, state-diff.json and tool-events.json in turn. Each disjoint pair edits
different members on the two sides (keys, check labels, scalar fields, collection ids,
tool events; both sides may append to one id list or to ``checks``); which side lands on
``main`` and which on the merged branch is a coin flip per file. The expected document
is both edits applied to the base; a case counts when the merged bytes equal its
canonical bytes. An overlap sets one pointer to two values: it counts when the file is
left conflicted and the pointer is named. A tally changed on both sides counts when it
stays conflicted, named. Modes:

- ``driver``: ``git merge`` with ``merge.silo-regress.driver`` configured;
- ``diff3`` / ``merge``: ``git merge`` without the driver (``merge.conflictStyle``
  diff3 or the default), then ``fmt --resolve``'s use case on each conflicted file while
  the merge is in progress (git's index holds the three versions);
- ``diff3-markers`` / ``merge-markers``: the same merge, then ``git merge --abort`` and
  every file written back as the merge left it: ``fmt --resolve`` has the markers alone
  (a rebase done elsewhere, a file copied out, GitHub's editor).

A disjoint pair git merged by lines (no markers) is git's; of those it left with
markers, each resolved file counts as equal to the expected document, or as resolved
but NOT equal (silently wrong: must be 0), or as left conflicted (told, by pointer).

``--large`` also times the driver on a 10 MB result.json with one change per side: the
whole command as git starts it, and the merge alone in-process. ``--startup`` times the
driver on a small file as git starts it (no typer) against the same call through typer.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import serialize

SILO = Path(sys.executable).parent / "silo-regress"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
Edit = Callable[[Any], None]
Group = Callable[..., Any]  # a side's tag -> its edit


@dataclass(frozen=True)
class Case:
    name: str
    base: Any
    first: Any  # side A, whose new items sort first
    second: Any
    expected: Any | None  # None: a conflict is expected
    pointer: str | None  # the pointer an overlap must name
    a_on_main: bool


# --- documents and edits -------------------------------------------------------------


def result_doc(rng: random.Random) -> dict[str, Any]:
    checks = [
        {"detail": "", "label": f"Check {j:02}", "passed": rng.random() < 0.8, "required": j < 3}
        for j in range(rng.randint(3, 8))
    ]
    return {
        "agentOutput": {
            "fields": {f"k{j}": f"value {rng.randint(0, 99)}" for j in range(6)},
            "reply": "Hi",
        },
        "checks": checks,
        "checksFailed": 0,
        "checksPassed": len(checks),
        "error": None,
        "failedRequired": [],
        "passed": True,
        "requiredPassed": 3,
        "requiredTotal": 3,
        "reward": 1,
        "terminationReason": "completed",
        "toolCalls": rng.randint(1, 9),
        "toolErrors": 0,
    }


def state_doc(rng: random.Random) -> dict[str, Any]:
    collections = {}
    for k in range(rng.randint(2, 4)):
        ids = [f"C{k}-{n:04}" for n in range(rng.randint(2, 6))]
        collections[f"coll{k}"] = {"added": ids[:2], "changed": ids[2:], "removed": []}
    scalars = [{"field": f"record.f{j}", "from": j, "to": j + 1} for j in range(rng.randint(2, 5))]
    return {"collections": collections, "scalars": scalars}


def tool_doc(rng: random.Random) -> list[dict[str, Any]]:
    events = []
    for call in range(1, rng.randint(3, 6) + 1):
        tool = rng.choice(["crm.search", "crm.update", "mail.send"])
        events.append(
            {
                "callId": call,
                "input": {"q": f"q{call}"},
                "seq": 2 * call - 1,
                "tool": tool,
                "type": "tool_call",
            }
        )
        events.append(
            {
                "callId": call,
                "isError": False,
                "output": {"n": call},
                "seq": 2 * call,
                "tool": tool,
                "type": "tool_result",
            }
        )
    return events


def by(items: list[Any], key: str, identity: Any) -> dict[str, Any]:
    return next(item for item in items if item[key] == identity)


def result_groups(doc: dict[str, Any], rng: random.Random) -> list[Group]:
    """Each group is owned by one side; called with the side's tag, it returns an edit."""
    groups: list[Group] = [
        lambda tag: lambda d: d.__setitem__("reward", 0.5 if tag == "A" else 0.25),
        lambda tag: lambda d: d["agentOutput"].__setitem__("reply", f"reply {tag}"),
        lambda tag: lambda d: d.__setitem__("error", f"error {tag}"),
    ]
    for j in range(6):
        groups.append(
            lambda tag, j=j: lambda d: d["agentOutput"]["fields"].__setitem__(f"k{j}", f"new {tag}")
        )
    for check in doc["checks"]:
        label = check["label"]
        groups.append(
            lambda tag, label=label: rng.choice(
                [
                    lambda d: by(d["checks"], "label", label).__setitem__(
                        "detail", f"detail {tag}"
                    ),
                    lambda d: by(d["checks"], "label", label).__setitem__("passed", False),
                    lambda d: d.__setitem__(
                        "checks", [c for c in d["checks"] if c["label"] != label]
                    ),
                ]
            )
        )
    return groups


def shared_result_groups() -> list[Group]:
    """Edits both sides make to one array: each appends its own check."""
    return [
        lambda tag: (
            lambda d: d["checks"].append(
                {"detail": "", "label": f"New {tag}", "passed": True, "required": False}
            )
        )
    ]


def state_groups(doc: dict[str, Any], rng: random.Random) -> list[Group]:
    groups: list[Group] = []
    for scalar in doc["scalars"]:
        field = scalar["field"]
        groups.append(
            lambda tag, field=field: rng.choice(
                [
                    lambda d: by(d["scalars"], "field", field).__setitem__("to", f"to {tag}"),
                    lambda d: d.__setitem__(
                        "scalars", [s for s in d["scalars"] if s["field"] != field]
                    ),
                ]
            )
        )
    for name, lists in doc["collections"].items():
        for kind, ids in lists.items():
            if ids:
                gone = rng.choice(ids)
                groups.append(
                    lambda tag, n=name, k=kind, g=gone: (
                        lambda d: d["collections"][n].__setitem__(
                            k, [i for i in d["collections"][n][k] if i != g]
                        )
                    )
                )
    groups.append(
        lambda tag: (
            lambda d: d["collections"].__setitem__(
                f"new{tag}", {"added": [f"{tag}-0001"], "changed": [], "removed": []}
            )
        )
    )
    return groups


def shared_state_groups(doc: dict[str, Any]) -> list[Group]:
    name = sorted(doc["collections"])[0]
    return [
        lambda tag: lambda d: d["collections"][name]["changed"].append(f"{tag}-0002"),
        lambda tag: lambda d: d["scalars"].append({"field": f"new.{tag}", "to": tag}),
    ]


def tool_groups(doc: list[Any], rng: random.Random) -> list[Group]:
    groups: list[Group] = []
    for event in doc:
        seq, part = event["seq"], "input" if event["type"] == "tool_call" else "output"
        groups.append(
            lambda tag, seq=seq, part=part: (
                lambda d: by(d, "seq", seq).__setitem__(part, {"by": tag})
            )
        )
    last = len(doc)
    groups.append(
        lambda tag: (
            lambda d: d.append(
                {
                    "callId": 99,
                    "input": {},
                    "seq": last + 1,
                    "tool": f"extra.{tag}",
                    "type": "tool_call",
                }
            )
        )
    )
    return groups


def overlap(doc: Any, artifact: str, rng: random.Random) -> tuple[str, Edit, Edit]:
    """A pointer and two edits setting it to different values."""
    if artifact == "result.json":
        j = rng.randrange(len(doc["checks"]))
        options: list[tuple[str, Callable[..., Any]]] = [
            ("/reward", lambda d, v: d.__setitem__("reward", v)),
            ("/agentOutput/reply", lambda d, v: d["agentOutput"].__setitem__("reply", str(v))),
            (f"/checks/{j}/detail", lambda d, v: d["checks"][j].__setitem__("detail", str(v))),
        ]
    elif artifact == "state-diff.json":
        j = rng.randrange(len(doc["scalars"]))
        options = [(f"/scalars/{j}/to", lambda d, v: d["scalars"][j].__setitem__("to", v))]
    else:
        j = rng.randrange(len(doc))
        options = [(f"/{j}/tool", lambda d, v: d[j].__setitem__("tool", f"t{v}"))]
    pointer, setter = rng.choice(options)
    return pointer, (lambda d: setter(d, 0.5)), (lambda d: setter(d, 0.25))


ARTIFACTS = ("result.json", "state-diff.json", "tool-events.json")


def make_cases(*, pairs: int, overlaps: int, tallies: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for n in range(pairs + overlaps):
        artifact = ARTIFACTS[n % 3]
        base: Any = {
            "result.json": result_doc,
            "state-diff.json": state_doc,
            "tool-events.json": tool_doc,
        }[artifact](rng)
        first, second = copy.deepcopy(base), copy.deepcopy(base)
        name = f"TASK-{n:04}.{artifact}"
        if n >= pairs:
            pointer, edit_a, edit_b = overlap(base, artifact, rng)
            edit_a(first)
            edit_b(second)
            cases.append(Case(name, base, first, second, None, pointer, rng.random() < 0.5))
            continue
        if artifact == "result.json":
            groups, shared = result_groups(base, rng), shared_result_groups()
        elif artifact == "state-diff.json":
            groups, shared = state_groups(base, rng), shared_state_groups(base)
        else:
            groups, shared = tool_groups(base, rng), []
        rng.shuffle(groups)
        take = rng.randint(2, min(6, len(groups)))
        owned = groups[:take]
        edits_a = [g("A") for g in owned[: take // 2]]
        edits_b = [g("B") for g in owned[take // 2 :]]
        for group in shared:
            if rng.random() < 0.3:
                edits_a.append(group("A"))
                edits_b.append(group("B"))
        expected = copy.deepcopy(base)
        for edit in edits_a:
            edit(first)
            edit(expected)
        for edit in edits_b:
            edit(second)
            edit(expected)
        cases.append(Case(name, base, first, second, expected, None, rng.random() < 0.5))
    for n in range(tallies):
        base = {
            "checks": {"Check": 9},
            "format": 1,
            "passed": 9,
            "reward": {"sum": 9, "sum-of-squares": 9},
            "rollouts": 10,
            "variants": {},
        }
        first, second = copy.deepcopy(base), copy.deepcopy(base)
        first["checks"]["Check"] = 8
        second["passed"] = 8
        cases.append(
            Case(f"TASK-{n:04}.tally.json", base, first, second, None, None, rng.random() < 0.5)
        )
    return cases


# --- git -------------------------------------------------------------------------------


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=root, env=GIT_ENV, capture_output=True, text=True, check=check
    )


def build(root: Path, cases: list[Case], *, mode: str) -> None:
    baselines = root / "baselines"
    baselines.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "silo-regress.toml").write_text('baselines-dir = "baselines"\n')
    (baselines / ".gitattributes").write_text("* -text diff\n*.json merge=silo-regress\n")
    if mode == "driver":
        git(root, "config", "merge.silo-regress.driver", f"{SILO} merge-driver %O %A %B %P")
    elif mode.startswith("diff3"):
        git(root, "config", "merge.conflictStyle", "diff3")

    def commit(pick: Callable[[Case], Any], message: str) -> None:
        for case in cases:
            (baselines / case.name).write_bytes(serialize(pick(case)))
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", message)

    commit(lambda c: c.base, "base")
    git(root, "checkout", "-q", "-b", "other")
    commit(lambda c: c.second if c.a_on_main else c.first, "theirs")
    git(root, "checkout", "-q", "main")
    commit(lambda c: c.first if c.a_on_main else c.second, "ours")


@dataclass
class Tally:
    clean_ok: int = 0
    clean_total: int = 0
    overlap_ok: int = 0
    overlap_total: int = 0
    tally_ok: int = 0
    tally_total: int = 0
    marked_ok: int = 0  # of the disjoint pairs git left with markers: resolved == expected
    marked_total: int = 0
    marked_wrong: int = 0  # resolved clean, members not those of the expected document
    marked_order: int = 0  # resolved clean, the expected members in git's line-merge order
    marked_left: int = 0  # left conflicted or refused, with the reason told
    line_wrong: int = 0  # merged by git's lines (no markers), not equal to the expected
    overlap_silent: int = 0  # an overlap or tally that came out without markers
    paths: dict[str, int] | None = None  # how fmt --resolve read each file -> count
    seconds: float = 0.0
    failures: list[str] | None = None


def run_mode(cases: list[Case], *, mode: str, work: Path) -> Tally:
    from silo_regress.commands.resolution import resolve_conflicts
    from silo_regress.errors import InputError
    from silo_regress.project.config import load_config

    root = work / mode
    build(root, cases, mode=mode)
    started = time.perf_counter()
    done = git(root, "merge", "-q", "--no-edit", "other", check=False)
    named: dict[str, str] = {}  # file -> what it was told (driver stderr or resolve)
    for line in done.stderr.splitlines():
        for case in cases:
            if f"baselines/{case.name}" in line:
                named[case.name] = named.get(case.name, "") + line
    marked = [c for c in cases if b"<<<<<<<" in (root / "baselines" / c.name).read_bytes()]
    if mode.endswith("-markers"):
        # the index and MERGE_HEAD gone, the files as the merge left them: markers alone
        left = {c.name: (root / "baselines" / c.name).read_bytes() for c in cases}
        git(root, "merge", "--abort")
        for name, data in left.items():
            (root / "baselines" / name).write_bytes(data)
    paths: dict[str, int] = {}
    clean_resolved: set[str] = set()
    if mode != "driver":
        config = load_config(root)
        for case in marked:
            try:
                result = resolve_conflicts(config, [root / "baselines" / case.name])
                named[case.name] = " ".join(", ".join(f.pointers) for f in result.files)
                for item in result.files:
                    paths[item.read.value] = paths.get(item.read.value, 0) + 1
                    if item.clean:
                        clean_resolved.add(case.name)
            except InputError as exc:
                named[case.name] = exc.message
    seconds = time.perf_counter() - started
    out = Tally(seconds=seconds, failures=[], paths=paths)
    for case in cases:
        data = (root / "baselines" / case.name).read_bytes()
        conflicted = b"<<<<<<<" in data
        told = named.get(case.name, "")
        if case.name.endswith(".tally.json"):
            out.tally_total += 1
            ok = conflicted and "never merged" in told
            out.tally_ok += ok
            out.overlap_silent += case in marked and not conflicted
        elif case.expected is None:
            out.overlap_total += 1
            ok = conflicted and case.pointer is not None and case.pointer in told
            out.overlap_ok += ok
            out.overlap_silent += not conflicted
        else:
            out.clean_total += 1
            ok = data == serialize(case.expected)
            out.clean_ok += ok
            if mode != "driver" and case in marked:
                out.marked_total += 1
                out.marked_ok += ok
                if case.name in clean_resolved and not ok:
                    if unordered(json.loads(data)) == unordered(case.expected):
                        out.marked_order += 1
                    else:
                        out.marked_wrong += 1
                out.marked_left += case.name not in clean_resolved
            elif mode != "driver":
                out.line_wrong += not ok
        if not ok and out.failures is not None:
            out.failures.append(case.name)
    return out


def unordered(value: Any) -> Any:
    """``value`` with every array sorted: equal for two documents that hold the same
    members and items, whatever order git's line merge left appended items in."""
    if isinstance(value, dict):
        return {key: unordered(item) for key, item in value.items()}
    if isinstance(value, list):
        return sorted((unordered(item) for item in value), key=lambda v: json.dumps(v))
    return value


def time_large(work: Path) -> tuple[float, float, float, int]:
    """On a 10 MB file, median of 5: the driver command as git starts it (wall, CPU),
    and the CPU time of the merge in-process; and the bytes."""
    from silo_regress.canon.jsonmerge import merge_documents

    rng = random.Random(3)
    base = result_doc(rng)
    base["agentOutput"]["records"] = [
        {"id": f"REC-{n:06}", "name": f"Customer {n}", "notes": "x" * 60, "total": n * 1.5}
        for n in range(55_000)
    ]
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    ours["reward"] = 0.5
    theirs["agentOutput"]["records"][30_000]["name"] = "Renamed"
    files = {}
    for side, value in (("O", base), ("A", ours), ("B", theirs)):
        files[side] = work / f"large.{side}"
        files[side].write_bytes(serialize(value))
    size = files["O"].stat().st_size
    original_a = files["A"].read_bytes()
    expected = copy.deepcopy(ours)
    expected["agentOutput"]["records"][30_000]["name"] = "Renamed"
    commands, cpus = [], []
    for _ in range(5):
        files["A"].write_bytes(original_a)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(
            [
                str(SILO),
                "merge-driver",
                str(files["O"]),
                str(files["A"]),
                str(files["B"]),
                "TASK.result.json",
            ],
            check=True,
        )
        commands.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        assert files["A"].read_bytes() == serialize(expected)
    data = [files["O"].read_bytes(), original_a, files["B"].read_bytes()]
    started = time.process_time()
    done = merge_documents(
        data[0], data[1], data[2], name="TASK.result.json", sources=("o", "a", "b")
    )
    in_process = time.process_time() - started
    assert done.merge.clean
    return statistics.median(commands), statistics.median(cpus), in_process, size


def time_startup(work: Path, *, runs: int = 20) -> dict[str, tuple[float, float]]:
    """The driver on a small result.json, as git starts it (the lean path) and through
    typer (a global option sends it there), interleaved: median CPU and wall, seconds."""
    base = result_doc(random.Random(5))
    sides = {"O": base, "A": {**base, "reward": 0.5}, "B": {**base, "toolErrors": 1}}
    tail = ["merge-driver", *(str(work / s) for s in "OAB"), "TASK.result.json"]
    commands = {"lean": [str(SILO), *tail], "typer": [str(SILO), "-C", str(work), *tail]}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    for n in range(runs):
        for name in sorted(commands, reverse=n % 2 == 1):
            for side, value in sides.items():
                (work / side).write_bytes(serialize(value))
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(commands[name], check=True)
            wall[name].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {n: (statistics.median(cpu[n]), statistics.median(wall[n])) for n in commands}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--overlaps", type=int, default=200)
    parser.add_argument("--tallies", type=int, default=50)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument(
        "--modes",
        default="driver,diff3,merge",
        help="any of driver, diff3, merge, diff3-markers, merge-markers",
    )
    parser.add_argument("--large", action="store_true", help="also time a 10 MB baseline")
    parser.add_argument(
        "--startup", action="store_true", help="also time the driver's start-up, lean vs typer"
    )
    args = parser.parse_args()
    cases = make_cases(
        pairs=args.pairs, overlaps=args.overlaps, tallies=args.tallies, seed=args.seed
    )
    work = Path(tempfile.mkdtemp(prefix="merge-bench-"))
    try:
        rows = {}
        for mode in args.modes.split(","):
            rows[mode] = run_mode(cases, mode=mode, work=work)
        print(
            "| mode | disjoint pairs merged == fmt(expected) | overlaps left conflicted, "
            "pointer named | tallies left conflicted, named | seconds |"
        )
        print("|---|---|---|---|---|")
        for mode, t in rows.items():
            share = 100 * t.clean_ok / max(1, t.clean_total)
            print(
                f"| {mode} | {t.clean_ok}/{t.clean_total} ({share:.1f}%) "
                f"| {t.overlap_ok}/{t.overlap_total} | {t.tally_ok}/{t.tally_total} "
                f"| {t.seconds:.1f} |"
            )
        for mode, t in rows.items():
            if t.marked_total:
                print(
                    f"{mode}: of the {t.marked_total} disjoint pairs git left with markers, "
                    f"fmt --resolve made {t.marked_ok} equal fmt(expected), "
                    f"{t.marked_order} with the expected members in git's line-merge order, "
                    f"resolved {t.marked_wrong} with other members (silently wrong), "
                    f"left {t.marked_left} "
                    f"conflicted; git merged the other {t.clean_total - t.marked_total} by "
                    f"lines, {t.line_wrong} of them not as expected; overlaps or tallies "
                    f"without markers: {t.overlap_silent}; read from: {t.paths}"
                )
        for mode, t in rows.items():
            if t.failures:
                print(f"{mode}: failed {len(t.failures)}: {', '.join(t.failures[:10])}")
        if args.large:
            wall, cpu, in_process, size = time_large(work)
            print(
                f"\n{size / 1e6:.1f} MB baseline: merge-driver command {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU (median of 5); the merge in-process {in_process:.2f} s CPU"
            )
        if args.startup:
            for name, (cpu, wall) in time_startup(work).items():
                print(
                    f"merge-driver start-up, {name}: {cpu * 1000:.0f} ms CPU, "
                    f"{wall * 1000:.0f} ms wall (median of 20, interleaved)"
                )
        print(json.dumps({"seed": args.seed, "pairs": args.pairs}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
