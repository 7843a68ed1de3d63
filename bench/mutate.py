"""A small mutation runner: which one-operator changes of the stats gate no test catches.

    .venv/bin/python bench/mutate.py                       # every mutant (see bench/README.md)
    .venv/bin/python bench/mutate.py --limit 60 --seed 1   # a seeded sample of 60
    .venv/bin/python bench/mutate.py --modules silo_regress/stats/verdicts.py --list

Each mutant changes one thing in one module (a comparison's boundary or sense, ``+``/``-``,
``*``/``/``, a dropped factor, a numeric constant, ``and``/``or``, ``not``, ``min``/``max``,
a removed ``raise``, an ``if`` whose test is made false, the raw p read for the adjusted
one) and is run against the module's tests with ``pytest -x``. A mutant is *killed* when
a test fails, *survives* when all pass, and *times out* past ``--timeout`` seconds
(counted apart; an infinite loop is caught).

Nothing in the working tree is edited. The parent process imports pytest and the test
oracles (scipy, numpy, hypothesis) once and forks one child per mutant; the child puts an
import hook in front of ``sys.meta_path`` that compiles the mutated syntax tree for the one
module (under the module's real file name, so tracebacks point at the line) and then runs
``pytest.main`` in that process. The parent never imports ``silo_regress``. Standard library
only, besides the pytest the tests need; POSIX (fork).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import CodeType, ModuleType

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODULES = (
    *sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "silo_regress" / "stats").glob("*.py")
        if p.name != "__init__.py"
    ),
    "silo_regress/judging/statsgate.py",
    "silo_regress/system/fsio.py",
)
STATS_TESTS = (
    # fastest first: with -x a mutant dies at its first failing test
    "tests/unit/test_stats_verdicts.py",
    "tests/unit/test_stats_error_rates.py",
    "tests/unit/test_stats_sequential_split.py",
    "tests/unit/test_stats_tally.py",
    "tests/unit/test_stats_config.py",
    "tests/unit/test_stats_exact.py",
)
FSIO_TESTS = (
    "tests/unit/test_fsio.py",
    "tests/unit/test_read_keyed.py",
    "tests/integration/test_unreadable_as_other_user.py",
)
# judging/statsgate.py's decide_rounds and policy_for are reached through the CLI only.
STATSGATE_TESTS = (*STATS_TESTS, "tests/integration/test_stats_gate_cli.py")
PYTEST_ARGS = ("-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header")


def default_tests(module: str) -> tuple[str, ...]:
    if module.endswith("system/fsio.py"):
        return FSIO_TESTS
    if module.endswith("judging/statsgate.py"):
        return STATSGATE_TESTS
    return STATS_TESTS


# --- mutation points ---------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    module: str  # path relative to the repository
    index: int  # the index-th mutation point of the module, in a fixed walk order
    line: int
    column: int
    operator: str
    before: str
    after: str

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line}"

    def describe(self) -> str:
        return f"{self.where}  [{self.operator}]  {self.before}  ->  {self.after}"


_COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.LShift: ast.RShift,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}
_BOOL_SWAPS: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}
# Values of one kind a slip could swap for each other: the raw and the adjusted p.
_TWINS = {"p_adj": "p_down", "p_down": "p_adj"}
_SKIPPED_FIELDS = {"annotation", "returns", "decorator_list", "type_comment"}

# One applier edits a freshly parsed tree in place at the point's node.
Apply = Callable[[ast.AST, ast.AST, str, int | None], None]


@dataclass(frozen=True)
class Point:
    node: ast.AST
    parent: ast.AST
    field: str
    slot: int | None  # index in the parent's list field, or None
    operator: str
    after: str
    apply: Apply


def _replace(parent: ast.AST, field: str, slot: int | None, new: ast.AST) -> None:
    if slot is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[slot] = new


def _walk(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST, str, int | None]]:
    """Every (node, parent, field, slot) below ``node``, in a fixed order, outside type
    annotations, decorators and docstrings."""
    for field, value in ast.iter_fields(node):
        if field in _SKIPPED_FIELDS:
            continue
        children = value if isinstance(value, list) else [value]
        for slot, child in enumerate(children):
            if not isinstance(child, ast.AST):
                continue
            if (
                field == "body"
                and slot == 0
                and isinstance(child, ast.Expr)
                and isinstance(child.value, ast.Constant)
                and isinstance(child.value.value, str)
            ):
                continue  # a docstring
            yield child, node, field, slot if isinstance(value, list) else None
            yield from _walk(child)


def _tweak(value: int | float) -> int | float:
    if isinstance(value, int):
        return value + 1
    return value * 1.25 if value else 1.0


def _points(tree: ast.AST) -> Iterator[Point]:
    for node, parent, field, slot in _walk(tree):
        text = ast.unparse(node)
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                swap = _COMPARE_SWAPS.get(type(op))
                if swap is None:
                    continue
                probe = copy.deepcopy(node)
                probe.ops[i] = swap()

                def flip(n: ast.AST, p: ast.AST, f: str, s: int | None, i: int = i) -> None:
                    assert isinstance(n, ast.Compare)
                    n.ops[i] = _COMPARE_SWAPS[type(n.ops[i])]()

                yield Point(node, parent, field, slot, "compare", ast.unparse(probe), flip)
        elif isinstance(node, ast.BinOp | ast.AugAssign):
            swap_op = _BINOP_SWAPS.get(type(node.op))
            if swap_op is not None:
                probe_op = copy.deepcopy(node)
                probe_op.op = swap_op()

                def swap_binop(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                    assert isinstance(n, ast.BinOp | ast.AugAssign)
                    n.op = _BINOP_SWAPS[type(n.op)]()

                yield Point(node, parent, field, slot, "arith", ast.unparse(probe_op), swap_binop)
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div):
                sides = ("left", "right") if isinstance(node.op, ast.Mult) else ("left",)
                for side in sides:

                    def drop(
                        n: ast.AST, p: ast.AST, f: str, s: int | None, side: str = side
                    ) -> None:
                        _replace(p, f, s, getattr(n, side))

                    kept = ast.unparse(getattr(node, side))
                    yield Point(node, parent, field, slot, "drop-factor", kept, drop)
        elif isinstance(node, ast.BoolOp):
            probe_bool = copy.deepcopy(node)
            probe_bool.op = _BOOL_SWAPS[type(node.op)]()

            def swap_bool(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                assert isinstance(n, ast.BoolOp)
                n.op = _BOOL_SWAPS[type(n.op)]()

            yield Point(node, parent, field, slot, "bool", ast.unparse(probe_bool), swap_bool)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):

            def drop_not(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                assert isinstance(n, ast.UnaryOp)
                _replace(p, f, s, n.operand)

            yield Point(node, parent, field, slot, "not", ast.unparse(node.operand), drop_not)
        elif isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            value = node.value
            new: int | float = (not value) if isinstance(value, bool) else _tweak(value)

            def tweak(
                n: ast.AST, p: ast.AST, f: str, s: int | None, new: int | float = new
            ) -> None:
                assert isinstance(n, ast.Constant)
                n.value = new

            yield Point(node, parent, field, slot, "constant", repr(new), tweak)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("min", "max")
        ):
            other = "max" if node.func.id == "min" else "min"
            probe_call = copy.deepcopy(node)
            assert isinstance(probe_call.func, ast.Name)
            probe_call.func.id = other

            def swap_call(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                assert isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                n.func.id = "max" if n.func.id == "min" else "min"

            yield Point(node, parent, field, slot, "min-max", ast.unparse(probe_call), swap_call)
        elif isinstance(node, ast.Name) and node.id in _TWINS and isinstance(node.ctx, ast.Load):
            twin = _TWINS[node.id]

            def swap_twin(n: ast.AST, p: ast.AST, f: str, s: int | None, twin: str = twin) -> None:
                assert isinstance(n, ast.Name)
                n.id = twin

            yield Point(node, parent, field, slot, "twin", twin, swap_twin)
        elif isinstance(node, ast.Raise):

            def drop_raise(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                _replace(p, f, s, ast.copy_location(ast.Pass(), n))

            yield Point(node, parent, field, slot, "no-raise", "pass", drop_raise)
        elif isinstance(node, ast.If):

            def never(n: ast.AST, p: ast.AST, f: str, s: int | None) -> None:
                assert isinstance(n, ast.If)
                n.test = ast.copy_location(ast.Constant(False), n.test)

            yield Point(node, parent, field, slot, "if-false", f"if False: ({text[:40]}...)", never)


def mutants_of(module: str) -> list[Mutant]:
    source = (ROOT / module).read_text(encoding="utf-8")
    found = []
    for index, point in enumerate(_points(ast.parse(source))):
        node = point.node
        before = ast.unparse(node)
        if isinstance(node, ast.If):
            before = f"if {ast.unparse(node.test)}:"
            after = "if False:"
        elif isinstance(node, ast.Raise):
            before, after = before.splitlines()[0][:70], point.after
        else:
            after = point.after
        line = getattr(node, "lineno", 0)
        column = getattr(node, "col_offset", 0)
        found.append(Mutant(module, index, line, column, point.operator, before[:90], after[:90]))
    return found


def mutated_code(mutant: Mutant) -> CodeType:
    """The module's code object with the one change applied."""
    path = ROOT / mutant.module
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for index, point in enumerate(_points(tree)):
        if index == mutant.index:
            point.apply(point.node, point.parent, point.field, point.slot)
            ast.fix_missing_locations(tree)
            return compile(tree, str(path), "exec")
    raise LookupError(f"no mutation point {mutant.index} in {mutant.module}")


# --- running ----------------------------------------------------------------------


class _MutatedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from a code object; every other import goes the usual way."""

    def __init__(self, name: str, path: Path, code: CodeType) -> None:
        self.name, self.path, self.code = name, path, code

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.path, loader=self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self.code, module.__dict__)  # the point of a mutation runner


def _module_name(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


@dataclass(frozen=True)
class Result:
    mutant: Mutant
    status: str  # killed | survived | timeout | error
    seconds: float
    detail: str = ""  # the test that killed it


def _killer(log: Path) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0]
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


def _child(mutant: Mutant | None, tests: Sequence[str], basetemp: Path, log: Path) -> None:
    """In the forked child: install the mutant, run pytest, exit with its code."""
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.setsid()  # its own process group: a timeout kills whatever it started
        if mutant is not None:
            code = mutated_code(mutant)
            finder = _MutatedFinder(_module_name(mutant.module), ROOT / mutant.module, code)
            sys.meta_path.insert(0, finder)
        import pytest

        os.chdir(ROOT)
        code_ = pytest.main([*PYTEST_ARGS, f"--basetemp={basetemp}", *tests])
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code_))
    except BaseException:  # a child never returns into the parent's loop
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(99)


def _preload() -> None:
    """Import what every child needs once, in the parent (never silo_regress)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import pytest  # noqa: F401

    for name in ("scipy.stats", "numpy", "statsmodels.stats.multitest"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    assert not any(m.startswith("silo_regress") for m in sys.modules), "parent imported it"


@dataclass
class _Running:
    pid: int
    mutant: Mutant | None
    started: float
    log: Path


def run_all(
    jobs: Sequence[tuple[Mutant | None, tuple[str, ...]]],
    *,
    parallel: int,
    timeout: float,
    scratch: Path,
    on_done: Callable[[Result, Path], None],
) -> None:
    scratch.mkdir(parents=True, exist_ok=True)
    pending = list(enumerate(jobs))
    running: dict[int, _Running] = {}
    while pending or running:
        while pending and len(running) < parallel:
            number, (mutant, tests) = pending.pop(0)
            basetemp = scratch / f"t{number}"
            log = scratch / f"log{number}.txt"
            pid = os.fork()
            if pid == 0:
                _child(mutant, tests, basetemp, log)
            running[pid] = _Running(pid, mutant, time.monotonic(), log)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for item in list(running.values()):
                if now - item.started > timeout:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(item.pid, signal.SIGKILL)
                    os.waitpid(item.pid, 0)
                    del running[item.pid]
                    dummy = item.mutant or Mutant("(none)", -1, 0, 0, "baseline", "", "")
                    on_done(Result(dummy, "timeout", now - item.started), item.log)
            time.sleep(0.05)
            continue
        item = running.pop(pid)
        seconds = time.monotonic() - item.started
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # anything the tests left running
        code = os.waitstatus_to_exitcode(status)
        dummy = item.mutant or Mutant("(none)", -1, 0, 0, "baseline", "", "")
        # pytest: 0 all passed, 1 a test failed, 5 none collected; anything else is odd
        verdict = {0: "survived", 1: "killed"}.get(code, "error" if code != 5 else "survived")
        on_done(Result(dummy, verdict, seconds, _killer(item.log)), item.log)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--modules", nargs="+", default=list(DEFAULT_MODULES))
    parser.add_argument(
        "--tests", nargs="+", default=None, help="test files for every module (default: by module)"
    )
    parser.add_argument("--limit", type=int, default=None, help="a random sample of this many")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per mutant")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--json", type=Path, default=None, help="write every result here")
    parser.add_argument("--only", nargs="+", default=None, help="module:index of the mutants")
    parser.add_argument("--verbose", action="store_true", help="name each mutant's killer")
    args = parser.parse_args(argv)

    mutants = [m for module in args.modules for m in mutants_of(module)]
    if args.only:
        wanted = set(args.only)
        mutants = [m for m in mutants if f"{m.module}:{m.index}" in wanted]
    if args.limit is not None and args.limit < len(mutants):
        mutants = sorted(
            random.Random(args.seed).sample(mutants, args.limit),
            key=lambda m: (m.module, m.index),
        )
    if args.list:
        for m in mutants:
            print(f"{m.module}:{m.index}  {m.describe()}")
        print(f"{len(mutants)} mutants")
        return 0

    def tests_for(module: str) -> tuple[str, ...]:
        chosen = tuple(args.tests) if args.tests else default_tests(module)
        return tuple(t for t in chosen if (ROOT / t).exists())

    _preload()
    started = time.monotonic()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="silo-mutate-") as scratch_name:
        scratch = Path(scratch_name)
        os.chmod(scratch, 0o755)  # tests that run as another user need to reach their tmp
        # The unmutated package first: every test set must pass, and its time sets the timeout.
        test_sets = sorted({tests_for(m.module) for m in mutants})
        clean: dict[tuple[str, ...], float] = {}

        def on_clean(result: Result, log: Path) -> None:
            clean[current] = result.seconds
            if result.status != "survived":
                sys.stdout.write(log.read_text(encoding="utf-8", errors="replace")[-4000:])
                raise SystemExit(f"the unmutated tests do not pass: {' '.join(current)}")

        for current in test_sets:
            run_all(
                [(None, current)],
                parallel=1,
                timeout=3600,
                scratch=scratch / "clean",
                on_done=on_clean,
            )
            print(f"clean run {clean[current]:.1f} s: {' '.join(current)}", flush=True)
        timeout = args.timeout or max(30.0, 3 * max(clean.values(), default=10.0))

        def on_done(result: Result, log: Path) -> None:
            results.append(result)
            mark = {"killed": ".", "survived": "S", "timeout": "T", "error": "E"}[result.status]
            print(mark, end="", flush=True)
            if len(results) % 60 == 0:
                print(f" {len(results)}/{len(mutants)}", flush=True)

        run_all(
            [(m, tests_for(m.module)) for m in mutants],
            parallel=args.jobs,
            timeout=timeout,
            scratch=scratch,
            on_done=on_done,
        )
    elapsed = time.monotonic() - started
    results.sort(key=lambda r: (r.mutant.module, r.mutant.index))
    counts = {s: sum(r.status == s for r in results) for s in ("killed", "survived", "timeout")}
    counts["error"] = len(results) - sum(counts.values())
    print()
    if args.verbose:
        for r in results:
            if r.status == "killed":
                print(f"killed    {r.mutant.module}:{r.mutant.index}  {r.mutant.describe()}")
                print(f"          by {r.detail}")
    for status in ("survived", "timeout", "error"):
        for r in results:
            if r.status == status:
                print(
                    f"{status.upper():9} {r.mutant.module}:{r.mutant.index}  {r.mutant.describe()}"
                )
    print(
        f"{len(results)} mutants: {counts['killed']} killed, {counts['survived']} survived, "
        f"{counts['timeout']} timed out, {counts['error']} errors, in {elapsed:.0f} s "
        f"(--jobs {args.jobs}, timeout {timeout:.0f} s)"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "seconds": round(elapsed, 1),
                    "counts": counts,
                    "results": [
                        {
                            **asdict(r.mutant),
                            "status": r.status,
                            "seconds": round(r.seconds, 2),
                            "killed_by": r.detail,
                        }
                        for r in results
                    ],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
