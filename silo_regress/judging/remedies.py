"""What the judge knew that a failing verdict's next step needs, typed so no renderer parses
prose: the config lines that would settle a volatile value, the inputs a stale run missed, a
baseline-named file to rename or remove.

A room of its own, loaded only when a check fails: a matching check (the hook, most days)
builds none of these types.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigLine:
    """One config key a fix sets, in the table where it belongs (the task's own)."""

    file: str  # the config file, as the user sees it
    header: str | None  # the table's TOML header; None: the top level of the file
    key: str  # "ignore" or "volatile-exempt"
    values: tuple[str, ...]  # the whole list: a table's key replaces the inherited one


@dataclass(frozen=True)
class StaleInputs:
    """The inputs whose content differs from what the run was made from."""

    changed: tuple[str, ...]


@dataclass(frozen=True)
class RefusedName:
    """A file named like a baseline whose name maps to no task (judging/refusals.py):
    ``fmt`` cannot tell which task was meant, so the step is to rename or remove it."""

    path: str  # relative to the project, as baseline_path (control characters escaped)
    exact: bool = True  # False: the real name has control characters ``path`` escapes


# What the judge knew that a verdict's next step needs, typed so no renderer parses prose.
Remedy = tuple[ConfigLine, ...] | StaleInputs | RefusedName
