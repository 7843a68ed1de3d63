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
"""

from __future__ import annotations

import argparse
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

from silo_regress.canonical import canonicalize  # noqa: E402

SORTED = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


def ours(files: list[bytes]) -> None:
    for data in files:
        canonicalize(data, source="bench")


def orjsons(files: list[bytes]) -> None:
    for data in files:
        orjson.dumps(orjson.loads(data), option=SORTED)


def best_of(func: Callable[[list[bytes]], None], files: list[bytes], *, repeat: int) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            func(files)
        best = min(best, time.perf_counter() - start)
    return best


def paired(files: list[bytes], *, pairs: int, repeat: int) -> tuple[float, float, float]:
    """Median and minimum of the per-pair throughput ratios, and orjson's µs per file."""
    best_of(ours, files, repeat=1)  # warm both sides before anything is timed
    best_of(orjsons, files, repeat=1)
    ratios, reference = [], []
    for _ in range(pairs):
        mine = best_of(ours, files, repeat=repeat)
        theirs = best_of(orjsons, files, repeat=repeat)
        ratios.append(theirs / mine)
        reference.append(theirs / repeat / len(files) * 1e6)
    return statistics.median(ratios), min(ratios), statistics.median(reference)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--repeat", type=int, default=20, help="passes over the files per round")
    parser.add_argument("--cpus", help="pin this process to these CPUs (taskset -c), e.g. 0")
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
    print(f"# {cpus} CPU(s), {args.pairs} pairs A B A B; throughput ours / orjson's")
    for label, files in cases.items():
        median, low, reference = paired(files, pairs=args.pairs, repeat=args.repeat)
        size = sum(map(len, files)) / len(files) / 1000
        print(
            f"{label} ({size:.1f} KB): median {median:.2f}, min {low:.2f} "
            f"(orjson {reference:.1f} us per file)",
            flush=True,
        )


if __name__ == "__main__":
    main()
