"""Canonicalization throughput against orjson's own load and sorted dump, paired.

    python bench/canonical.py                  # 15 pairs, every CPU allowed
    python bench/canonical.py --cpus 0         # the same pinned to one CPU (taskset -c 0)

In-process: ``canonicalize`` (A) against ``orjson.dumps(orjson.loads(x),
option=OPT_INDENT_2 | OPT_SORT_KEYS)`` (B) over the same files, A B A B. Each side
of a pair is the best of three rounds of ``--repeat`` passes over the files; the
figure is the throughput ratio B time / A time (1.0: as fast as orjson), the median
and the minimum over the pairs. The files are those bench/generate.py writes: 200
realistic result.json (1.8 KB, non-ASCII names) and 200 state-diff.json (0.4 KB),
as Silo writes them (insertion order, so the fast path compares two prints), and the
same result.json files in canonical form, as a baseline is read (one print).

    python bench/canonical.py --against /tmp/old   # also another tree's canonical.py
    python bench/canonical.py --clock cpu          # CPU time, not wall time

``--against`` loads ``silo_regress/canon/canonical.py`` of another source tree (``git archive
REV | tar -x -C /tmp/old``) beside this one and times it in the same rounds, each pair
then A B A' B in turn (A' first in odd pairs): the change measured under the same load.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import result_value, silo_json, state_diff_value  # noqa: E402

from silo_regress.canon.canonical import canonicalize  # noqa: E402

SORTED = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


Canonicalize = Callable[..., object]
Clock = Callable[[], float]
# --clock cpu: this process's CPU time, which a neighbour's load on a shared machine
# moves less than wall time (it cannot count the time this process waited for a CPU).
CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.process_time}


def load_canonicalize(tree: Path) -> Canonicalize:
    """``canonicalize`` of another tree's canonical.py, loaded beside this one's."""
    path = tree / "silo_regress" / "canon" / "canonical.py"
    if not path.exists():  # a tree from before the layer packages (0.2)
        path = tree / "silo_regress" / "canonical.py"
    spec = importlib.util.spec_from_file_location("against_canonical", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    func: Canonicalize = module.canonicalize
    return func


def passes(func: Canonicalize) -> Callable[[list[bytes]], None]:
    def run(files: list[bytes]) -> None:
        for data in files:
            func(data, source="bench")

    return run


def orjsons(files: list[bytes]) -> None:
    for data in files:
        orjson.dumps(orjson.loads(data), option=SORTED)


def best_of(
    func: Callable[[list[bytes]], None], files: list[bytes], *, repeat: int, clock: Clock
) -> float:
    best = float("inf")
    for _ in range(3):
        start = clock()
        for _ in range(repeat):
            func(files)
        best = min(best, clock() - start)
    return best


def paired(
    sides: list[Callable[[list[bytes]], None]],
    files: list[bytes],
    *,
    pairs: int,
    repeat: int,
    clock: Clock,
) -> tuple[list[list[float]], float]:
    """Per side, the per-pair throughput ratios to orjson; and orjson's µs per file."""
    for side in [*sides, orjsons]:  # warm every side before anything is timed
        best_of(side, files, repeat=1, clock=clock)
    ratios: list[list[float]] = [[] for _ in sides]
    reference = []
    for turn in range(pairs):
        order = list(enumerate(sides))
        for index, side in order[::-1] if turn % 2 else order:
            mine = best_of(side, files, repeat=repeat, clock=clock)
            theirs = best_of(orjsons, files, repeat=repeat, clock=clock)
            ratios[index].append(theirs / mine)
            reference.append(theirs / repeat / len(files) * 1e6)
    return ratios, statistics.median(reference)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=20, help="passes over the files per round")
    parser.add_argument("--cpus", help="pin this process to these CPUs (taskset -c), e.g. 0")
    parser.add_argument("--against", type=Path, help="another source tree to time beside")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    if args.cpus is not None:
        os.sched_setaffinity(0, {int(cpu) for cpu in args.cpus.split(",")})
    results = [silo_json(result_value(t, t % 5)) for t in range(1, 201)]
    state_diffs = [silo_json(state_diff_value(t, t % 5)) for t in range(1, 201)]
    baselines = [canonicalize(data, source="bench").text for data in results]
    cases = {
        "result.json as Silo writes it": results,
        "state-diff.json as Silo writes it": state_diffs,
        "result.json baseline (canonical already)": baselines,
    }
    cpus = len(os.sched_getaffinity(0))
    print(
        f"# {cpus} CPU(s), {args.pairs} pairs A B A B, {args.clock} time; "
        "throughput ours / orjson's"
    )
    sides = [passes(canonicalize)]
    if args.against is not None:
        sides.append(passes(load_canonicalize(args.against)))
    for label, files in cases.items():
        ratios, reference = paired(
            sides, files, pairs=args.pairs, repeat=args.repeat, clock=CLOCKS[args.clock]
        )
        size = sum(map(len, files)) / len(files) / 1000
        shown = [f"median {statistics.median(r):.2f}, min {min(r):.2f}" for r in ratios]
        against = f"; {args.against}: {shown[1]}" if len(shown) > 1 else ""
        print(
            f"{label} ({size:.1f} KB): {shown[0]}{against} (orjson {reference:.1f} us per file)",
            flush=True,
        )


if __name__ == "__main__":
    main()
