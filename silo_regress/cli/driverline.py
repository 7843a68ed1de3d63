"""What ``merge-driver`` says and exits with, without typer: git starts one driver
process per conflicted baseline, so the command's start-up is paid per file and its
lean path (cli/__init__.py) runs this same body."""

from __future__ import annotations

from silo_regress.cli.common import error


def drive(base: str, ours: str, theirs: str, name: str) -> int:
    """Run the merge driver on git's %O %A %B %P: 0 merged, 1 left conflicted."""
    from pathlib import Path

    from silo_regress.commands.mergedriver import DriverFiles, DriverVerdict, run_merge_driver

    files = DriverFiles(base=Path(base), ours=Path(ours), theirs=Path(theirs), name=name)
    result = run_merge_driver(files)
    if result.verdict is DriverVerdict.MERGED:
        return 0
    if result.verdict is DriverVerdict.CONFLICTED:
        error(
            f"{name}: both sides changed {', '.join(result.pointers)} differently: edit "
            "the marked lines, then `silo-regress check --run` verifies the merge"
        )
    else:
        error(result.reason)
    return 1


def driver_arguments(argv: list[str]) -> tuple[str, str, str, str] | None:
    """``merge-driver O A B P`` exactly as git's configured line passes it, or None:
    anything else (an option, ``--help``, a missing argument) is typer's to parse."""
    if len(argv) != 5 or argv[0] != "merge-driver":
        return None
    if any(not arg or arg.startswith("-") for arg in argv[1:]):
        return None
    return argv[1], argv[2], argv[3], argv[4]
