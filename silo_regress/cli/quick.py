"""The lean start-up path: ``check`` as CI and the pre-commit hook call it, without typer.

Importing typer and its bundled click costs more than the rest of a small check
(about 50 ms of every call; the hook pays it on every commit). A command line made
only of the options below is read here and runs the same body as the typer command
(:func:`silo_regress.cli.checking.run_check`). Anything else goes to typer, which
owns the CLI, its help and its error messages: ``--help``, ``--version``, ``--run``,
``--jobs``, an unknown or repeated option, a glued short option (``-Cdir``), a value
that is empty or starts with ``-``, a value typer would refuse. So this never has to
reproduce an error message, only the meaning of a valid command line; a test compares
that meaning with typer's own parse over many command lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from silo_regress.cli.checking import CheckOptions, run_check
from silo_regress.cli.common import ColorWhen, Globals, run_guarded
from silo_regress.cli.output import ReportFormat

COMMAND = "check"
# Options that take a value, by the field they set.
_GLOBAL_VALUES = {"--project": "project", "-C": "project", "--color": "color"}
_CHECK_VALUES = {
    "--format": "report_format",
    "--output": "output",
    "-o": "output",
    "--shard": "shard",
    "--against": "against",
}
_CHECK_FLAGS = {
    "--staged": "staged",
    "--allow-no-runs": "allow_no_runs",
    "--verbose": "verbose",
    "-v": "verbose",
}


def parse_check(argv: Sequence[str]) -> tuple[Globals, CheckOptions] | None:
    """The global options and check options ``argv`` means, or None: leave it to typer."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    refs: list[str] = []
    at, count = 0, len(argv)
    while at < count and argv[at] != COMMAND:
        at = _take_value(argv, at, _GLOBAL_VALUES, values)
        if at < 0:
            return None
    if at == count:
        return None
    at += 1
    while at < count:
        arg = argv[at]
        if not arg.startswith("-"):
            refs.append(arg)
            at += 1
        elif arg in _CHECK_FLAGS:
            if _CHECK_FLAGS[arg] in flags:
                return None
            flags.add(_CHECK_FLAGS[arg])
            at += 1
        else:
            at = _take_value(argv, at, _CHECK_VALUES, values)
            if at < 0:
                return None
    try:
        color = ColorWhen(values.get("color", ColorWhen.AUTO.value))
        report_format = ReportFormat(values.get("report_format", ReportFormat.TEXT.value))
    except ValueError:
        return None
    project = values.get("project")
    g = Globals(
        project=Path(project) if project is not None else Path(),
        color=color,
        explicit=project is not None,
    )
    output = values.get("output")
    options = CheckOptions(
        refs=tuple(refs),
        report_format=report_format,
        output=Path(output) if output is not None else None,
        shard=values.get("shard"),
        against=values.get("against"),
        staged="staged" in flags,
        allow_no_runs="allow_no_runs" in flags,
        verbose="verbose" in flags,
    )
    return g, options


def _take_value(argv: Sequence[str], at: int, known: dict[str, str], into: dict[str, str]) -> int:
    """Read ``--name value`` or ``--name=value`` at ``at``: the next position, or -1."""
    arg = argv[at]
    name, equals, value = arg.partition("=")
    if equals and not name.startswith("--"):
        return -1  # -o=x means "=x" to click
    field = known.get(name)
    if field is None or field in into:
        return -1
    if not equals:
        if at + 1 >= len(argv):
            return -1
        value = argv[at + 1]
        at += 1
    if not value or value.startswith("-"):
        return -1
    into[field] = value
    return at + 1


def run_quick(argv: Sequence[str]) -> int | None:
    """The exit code of ``check`` run without typer, or None when typer must run it."""
    parsed = parse_check(argv)
    if parsed is None:
        return None
    g, options = parsed
    return run_guarded(lambda: run_check(g, options))
