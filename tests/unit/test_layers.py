"""The layers of DESIGN.md hold, inside every package too, and no imports form a cycle.

Each package may import only from lower ranks. Inside a package the same rule
holds among its own modules, by the package's own
ranks below. A new module must be given a place here. Imports inside functions
(lazy) and under TYPE_CHECKING count: a lazy import upwards is still an upward
dependency, and an import cycle, at any time, fails :func:`test_no_import_cycles`.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "silo_regress"

# DESIGN.md's layers as packages, lowest first. A package may import only from lower
# ranks; packages that share a rank are siblings and import nothing of each other.
LAYERS: list[tuple[str, ...]] = [
    ("silo_regress", "silo_regress.errors"),
    ("silo_regress.system",),  # files read and written safely; processors and forks
    ("silo_regress.canon",),  # canonical JSON, pointers, diffs, the volatile scan
    # git, read-only / pass-count statistics of the stats gate (math on counts, and the tally)
    ("silo_regress.vcs", "silo_regress.stats"),
    ("silo_regress.project",),  # task refs, config, the inputs' fingerprint
    ("silo_regress.store", "silo_regress.runs"),  # baselines on disk or in git / Silo's runs
    ("silo_regress.behaviour",),  # diffs in agent terms, and their direction
    ("silo_regress.judging",),  # verdicts and the typed result model
    ("silo_regress.recording",),  # record, accept, fmt, review queue, init
    ("silo_regress.reports",),  # status rows, merged shard reports, git history
    ("silo_regress.render", "silo_regress.runner"),  # words and pictures / starting Silo
    ("silo_regress.commands",),  # use cases: each command's flow and policy, without typer
    ("silo_regress.cli",),
    ("silo_regress.__main__",),
]
# The ranks inside each package, lowest first; the package's __init__ is on top.
PACKAGE_LAYERS: dict[str, list[tuple[str, ...]]] = {
    "silo_regress.system": [("fsio", "cpus")],
    "silo_regress.canon": [
        ("pointer", "prefilter", "visible", "markers"),
        ("canonical", "volatile"),
        ("jsondiff", "jsonmerge"),
    ],
    "silo_regress.vcs": [("worktreeblobs", "mergestages"), ("gitio",), ("worktrees",)],
    "silo_regress.stats": [
        (
            "exact",
            "intervals",
            "passk",
            "multiplicity",
            "sequential",
            "tally",
            "spending",
            "changepoint",
        ),
        ("planning",),  # rollouts a check needs: the hints of verdicts come from here
        ("verdicts",),
        ("groupsequential",),  # the sequential check's looks, on the verdicts' evidence
    ],
    "silo_regress.project": [
        ("taskref",),
        ("configvalues",),
        ("config",),
        ("fingerprint", "survey"),
    ],
    "silo_regress.store": [("baselinenames", "transaction"), ("baselines",), ("gitsource",)],
    "silo_regress.runs": [
        ("derived",),
        ("toolpath",),
        ("index", "provenance"),
        # the cache is an accelerator over the index: builds on it, never the reverse
        ("cache", "clock", "freshness", "discards"),
    ],
    "silo_regress.behaviour": [
        ("notes",),
        ("generic", "codec"),
        ("result", "state", "toolevents"),
    ],
    "silo_regress.judging": [
        ("targets", "sharding", "direction", "remedies", "units"),
        ("outcome",),
        ("context",),  # one target's run, settings and paths, for the lane and the comparison
        ("comparison",),  # one baseline against one artifact: the hot path
        ("plainmatch", "refusals", "repeats", "coverage", "tallying"),
        ("judge", "statsgate"),
    ],
    "silo_regress.recording": [
        ("acceptance", "scaffold"),
        ("recorder",),
        ("formatter", "reviewing", "discarding", "pruning", "candidates"),
        ("undoing", "consistency"),
    ],
    "silo_regress.reports": [
        ("statsmerge",),  # the stats gate's results read back and judged again
        ("schema", "unitreport"),
        ("overview", "merger", "reconstruction", "unitmerge"),
        ("history", "bisection"),
    ],
    "silo_regress.render": [
        ("wording", "hunks", "advice", "chart", "statslines", "statsjson", "looks", "plan"),
        ("excerpt", "statshtml"),
        ("summary", "tallies"),
        ("text", "machine"),
        ("markdown", "junit", "recording", "stability"),
        ("github", "html", "prcomment"),
        ("history", "bisection"),
    ],
    "silo_regress.runner": [
        ("plan", "process", "attribution"),
        ("classification",),
        ("batch",),
        ("stability",),
    ],
    "silo_regress.commands": [
        ("mergedriver", "resolution"),  # git's merge driver; fmt --resolve
        ("sources", "rollouts", "pullcomment"),
        ("planning",),
        ("rounds", "unitwork", "recording", "initialising", "reviewing"),
        ("running",),  # run: its repeats counted as record --repeat counts them
        ("checking", "bisecting"),
    ],
    "silo_regress.cli": [
        ("common", "failon", "rolloutoptions"),
        ("output", "driverline"),  # driverline: merge-driver without typer (per file)
        ("options", "app"),
        # unitcheck: check --run --unit I/N's worker; mergedriver: merge-driver, fmt --resolve
        ("gitcmds", "runner", "unitcheck", "mergedriver"),
        ("checking",),
        ("quick", "core", "reports", "review", "discard", "prune", "bisect", "comment", "plan"),
    ],
}
# Third-party modules and the only places that may import them.
ONLY_IN = {
    "typer": ("silo_regress.cli",),
    "click": ("silo_regress.cli",),
    "git": ("silo_regress.vcs.gitio",),
    "pygments": ("silo_regress.render",),
    "rich": ("silo_regress.cli",),
}
# Slow to import: never at module level, so `check` on the hook path does not pay.
LAZY_ONLY = ("git", "pygments", "rich", "pydantic")


class When(enum.Enum):
    IMPORT = "at import"
    CALL = "inside a function"
    TYPES = "under TYPE_CHECKING"


@dataclass(frozen=True)
class Import:
    module: str  # importing module
    target: str  # imported module (best resolution)
    line: int
    when: When

    @property
    def at_import_time(self) -> bool:
        return self.when is When.IMPORT


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.module, self.is_package, self.known = module, is_package, known
        self.found: list[Import] = []
        self.depth = 0  # inside functions: runs on call, not on import
        self.type_checking = 0

    def _add(self, target: str, node: ast.stmt) -> None:
        when = When.TYPES if self.type_checking else When.CALL if self.depth else When.IMPORT
        self.found.append(Import(self.module, target, node.lineno, when))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            self.type_checking += 1
            for child in node.body:
                self.visit(child)
            self.type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.module if self.is_package else self.module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            self._add(candidate if candidate in self.known else base, node)


def _imports() -> list[Import]:
    modules = _modules()
    found: list[Import] = []
    for name, path in modules.items():
        collector = _Collector(name, path.name == "__init__.py", set(modules))
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        found.extend(collector.found)
    return found


def _package(module: str) -> str | None:
    return next((p for p in PACKAGE_LAYERS if module == p or module.startswith(p + ".")), None)


def _rank(module: str) -> tuple[int, int] | None:
    """(layer, rank inside its package); the package's __init__ ranks above its modules."""
    package = _package(module)
    top = package or module
    layer = next((n for n, names in enumerate(LAYERS) if top in names), None)
    if layer is None:
        return None
    if package is None or module == package:
        return (layer, len(PACKAGE_LAYERS.get(top, [])))
    name = module.removeprefix(package + ".")
    inner = next((n for n, names in enumerate(PACKAGE_LAYERS[package]) if name in names), None)
    return None if inner is None else (layer, inner)


def _within(module: str, owners: tuple[str, ...]) -> bool:
    return any(module == o or module.startswith(o + ".") for o in owners)


def _cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _graph(imports: Iterable[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for item in imports:
        if item.target.startswith("silo_regress") and item.target != item.module:
            edges.setdefault(item.module, set()).add(item.target)
    return edges


# --- the tests ---------------------------------------------------------------------


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in _modules() if _rank(m) is None]
    assert not unplaced, f"give these modules a layer in LAYERS/PACKAGE_LAYERS: {unplaced}"


def test_modules_import_only_from_lower_layers() -> None:
    problems = []
    for item in _imports():
        if not item.target.startswith("silo_regress") or item.target == item.module:
            continue
        own, other = _rank(item.module), _rank(item.target)
        if own is None or other is None:
            continue  # reported by test_every_module_has_a_layer
        same_package = _package(item.module) is not None and (
            _package(item.module) == _package(item.target)
        )
        lower = other[1] < own[1] if same_package else other[0] < own[0]
        if not lower:
            problems.append(
                f"{item.module}:{item.line} imports {item.target} {item.when.value} "
                f"(rank {other} >= {own})"
            )
    assert not problems, "\n".join(problems)


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph(_imports()))
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_third_party_modules_stay_where_they_belong() -> None:
    problems = []
    for item in _imports():
        top = item.target.split(".")[0]
        owners = ONLY_IN.get(top)
        if owners is not None and not _within(item.module, owners):
            problems.append(f"{item.module}:{item.line} imports {item.target}")
        if top in LAZY_ONLY and item.at_import_time:
            problems.append(f"{item.module}:{item.line} imports {item.target} at module level")
    assert not problems, "\n".join(problems)


def test_only_the_command_line_prints_or_exits() -> None:
    problems = []
    for name, path in _modules().items():
        if _within(name, ("silo_regress.cli", "silo_regress.__main__")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(node) if isinstance(node, ast.Call) else ""
            callee = text.split("(")[0]
            if callee in ("print", "sys.exit", "exit", "sys.stdout.write", "sys.stderr.write"):
                problems.append(f"{name}:{node.lineno}: {callee}")  # type: ignore[attr-defined]
    assert not problems, "\n".join(problems)


def test_no_module_imports_another_ones_private_names() -> None:
    problems = [
        f"{node.module}: {alias.name}"
        for name, path in _modules().items()
        if _within(name, ("silo_regress",))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("silo_regress")
        for alias in node.names
        if alias.name.startswith("_") and alias.name != "__version__"
    ]
    assert not problems, "private names imported from another module:\n" + "\n".join(problems)


# --- the checker itself -------------------------------------------------------------


def test_the_layering_checker_sees_violations() -> None:
    """A lazy import inside a function is found and marked; so is a type-only one."""
    tree = ast.parse(
        "import typer\nfrom . import index\n"
        "def f():\n    import git\n"
        "if TYPE_CHECKING:\n    import pygments\n"
    )
    collector = _Collector("silo_regress.runs.cache", False, {"silo_regress.runs.index"})
    collector.visit(tree)
    assert [(i.target, i.when) for i in collector.found] == [
        ("typer", When.IMPORT),
        ("silo_regress.runs.index", When.IMPORT),
        ("git", When.CALL),
        ("pygments", When.TYPES),
    ]


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_ranks_inside_a_package() -> None:
    assert _rank("silo_regress.cli.common") < _rank("silo_regress.cli.core")  # type: ignore[operator]
    assert _rank("silo_regress.cli") == (LAYERS.index(("silo_regress.cli",)), 6)
    assert _rank("silo_regress.render.nonesuch") is None
