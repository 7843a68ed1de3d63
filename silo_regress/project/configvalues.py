"""Checking one config value: each reader names the file and key it refuses.

Config files are written by whoever controls the repository (a cloned one too),
so every value is checked once, here, and turned into a typed value or a
``ConfigError`` sentence; ``config`` only decides which keys exist where.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath
from typing import Any

from silo_regress.canon.pointer import PathPattern
from silo_regress.errors import ConfigError
from silo_regress.project.taskref import unsafe_reason

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_POINTER_ESCAPE = re.compile(r"~(?![01])")


def require_known_keys(table: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {show_value(unknown[0])} (known: {', '.join(sorted(known))})"
        )


def quote_key(text: str) -> str:
    """A table key as TOML would need it written: bare when it can be, else quoted."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return text
    if text.isprintable():
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return show_value(text)


def show_value(value: str) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:60] + "…" + shown[-10:]


def describe_kind(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    names.update({list: "an array", dict: "a table"})
    return names.get(type(value), "a date or time")


def check_name(text: str, what: str, where: str) -> None:
    reason = unsafe_reason(text)
    if reason is None and "~" in text:
        reason = "it contains '~' (variants use it)"
    if reason is not None:
        raise ConfigError(f"{where}: {what} {show_value(text)} is refused: {reason}")


def read_string(table: dict[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"{where}: {key!r} must be a non-empty string, not {describe_kind(value)}"
        )
    if _CONTROL.search(value):
        raise ConfigError(f"{where}: {key!r} must not contain control characters or NUL")
    return value


def read_path_string(table: dict[str, Any], key: str, where: str) -> str | None:
    value = read_string(table, key, where)
    if value is not None and len(value.encode("utf-8", "surrogatepass")) > 4096:
        raise ConfigError(f"{where}: {key!r} is longer than 4096 bytes")
    return value


def check_inside(text: str, key: str, where: str) -> None:
    """A directory the tool writes to must lie inside the project (a clone controls it)."""
    path = PurePosixPath(text.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", text):
        raise ConfigError(
            f"{where}: {key!r} = {show_value(text)} lies outside the project; baselines are "
            "only ever written inside it, so give a relative path without '..'"
        )


def read_strings(table: dict[str, Any], key: str, where: str) -> list[str] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of non-empty strings")
    if not value:
        raise ConfigError(f"{where}: {key!r} must not be empty")
    for item in value:
        if _CONTROL.search(item):
            raise ConfigError(
                f"{where}: {key!r}: {show_value(item)} must not contain control characters or NUL"
            )
    return value


def read_artifacts(table: dict[str, Any], where: str) -> tuple[str, ...] | None:
    names = read_strings(table, "artifacts", where)
    if names is None:
        return None
    for name in names:
        unsafe = any(c in name for c in "/\\~") or name.startswith(".")
        too_long = len(name.encode("utf-8", "surrogatepass")) > 200
        # TASK.tally.json is the stats gate's tally: no artifact may be named like it.
        tally = name == "tally.json" or name.endswith(".tally.json")
        if unsafe or too_long or tally or name in {"run.json", "trace.jsonl"}:
            raise ConfigError(f"{where}: artifact {show_value(name)} cannot be baselined")
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: 'artifacts' names one artifact twice")
    return tuple(names)


def read_number(table: dict[str, Any], key: str, where: str, *, maximum: float) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: {key!r} must be a positive number, not {describe_kind(value)}")
    if not math.isfinite(value) or not 0 < value <= maximum:
        raise ConfigError(
            f"{where}: {key!r} must be a positive number up to {maximum:g}, not {value!r}"
        )
    return float(value)


def read_choice(table: dict[str, Any], key: str, where: str, choices: list[str]) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if value not in choices or not isinstance(value, str):
        shown = show_value(value) if isinstance(value, str) else describe_kind(value)
        raise ConfigError(
            f"{where}: {key!r} must be one of {', '.join(repr(c) for c in choices)}, not {shown}"
        )
    return value


def read_pass_floor(table: dict[str, Any], key: str, where: str) -> tuple[int, float] | None:
    """``{k = 3, value = 0.8}``: a whole k of at least 1 and a value in [0, 1]."""
    value = table.get(key)
    if value is None:
        return None
    example = "{k = 3, value = 0.8}"
    if not isinstance(value, dict) or set(value) != {"k", "value"}:
        raise ConfigError(f"{where}: {key!r} must be a table like {example}")
    k, floor = value["k"], value["value"]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        raise ConfigError(f"{where}: {key!r}: k must be a whole number from 1 to 1000, not {k!r}")
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not 0 <= floor <= 1:
        raise ConfigError(f"{where}: {key!r}: value must be a number from 0 to 1, not {floor!r}")
    return k, float(floor)


MAX_LOOKS = 10  # each look is a round, a wait in CI
MAX_LOOK_ROLLOUTS = 1000


def read_looks(table: dict[str, Any], key: str, where: str) -> tuple[int, ...] | None:
    """``{looks = [2, 4, 6, 8]}``: the candidate rollouts a task at each look of a
    sequential check, increasing whole numbers from 1; the last is the cap."""
    value = table.get(key)
    if value is None:
        return None
    example = "{looks = [2, 4, 6, 8]}"
    if not isinstance(value, dict) or set(value) != {"looks"}:
        raise ConfigError(f"{where}: {key!r} must be a table like {example}")
    looks = value["looks"]
    if not isinstance(looks, list) or not 1 <= len(looks) <= MAX_LOOKS:
        raise ConfigError(
            f"{where}: {key}.looks must be a list of 1 to {MAX_LOOKS} rollout counts, "
            f"not {describe_kind(looks)}"
        )
    for number in looks:
        if isinstance(number, bool) or not isinstance(number, int):
            raise ConfigError(
                f"{where}: {key}.looks must hold whole numbers, not {describe_kind(number)}"
            )
    if looks[0] < 1 or looks[-1] > MAX_LOOK_ROLLOUTS or looks != sorted(set(looks)):
        raise ConfigError(
            f"{where}: {key}.looks must increase from 1 to at most {MAX_LOOK_ROLLOUTS}, "
            f"not {looks!r}"
        )
    return tuple(looks)


def read_table(table: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {key!r} must be a table, not {describe_kind(value)}")
    return value


def read_patterns(table: dict[str, Any], key: str, where: str) -> tuple[PathPattern, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key!r} must be a list of JSON Pointer patterns")
    patterns = []
    for text in value:
        problem = _pattern_problem(text)
        if problem is not None:
            raise ConfigError(f"{where}: {key!r}: {show_value(text)} {problem}")
        try:
            patterns.append(PathPattern.parse(text))
        except ValueError as exc:
            raise ConfigError(f"{where}: {key!r}: {exc}") from None
    return tuple(patterns)


def _pattern_problem(text: str) -> str | None:
    """Why a pattern is refused: one that names the whole document would ignore everything."""
    if _CONTROL.search(text):
        return "must not contain control characters or NUL"
    pointer = text
    if not text.startswith("/") and ":" in text:
        artifact, _, pointer = text.partition(":")
        if not artifact:
            return "names no artifact before ':'"
    if pointer == "":
        return "names the whole document; name the JSON Pointer of a value (e.g. /agentOutput)"
    if not pointer.startswith("/"):
        return "must be a JSON Pointer starting with '/' (e.g. /checks/*/detail)"
    if _POINTER_ESCAPE.search(pointer):
        return "has '~' not followed by 0 or 1 (a JSON Pointer writes '~' as ~0 and '/' as ~1)"
    return None


def read_inputs(table: dict[str, Any], where: str) -> tuple[str, ...]:
    globs = read_strings(table, "inputs", where)
    if globs is None:
        return ()
    for text in globs:
        path = PurePosixPath(text)
        if path.is_absolute() or ".." in path.parts or "\\" in text:
            raise ConfigError(
                f"{where}: 'inputs': {show_value(text)} must be a glob relative to the project "
                "root, without '..'"
            )
    return tuple(globs)


def check_required_version(table: dict[str, Any], where: str, *, running: str) -> str | None:
    """``required-version``: a PEP 440 specifier the running silo-regress must satisfy,
    as ruff's is; a bare version means exactly that one. The specifier, or None."""
    text = read_string(table, "required-version", where)
    if text is None:
        return None
    wanted = text.strip()
    if re.fullmatch(r"\d[\w.+!-]*", wanted):
        wanted = f"=={wanted}"
    if wanted == f"=={running}":  # the usual pin: no need to load packaging
        return wanted
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(wanted)
    except InvalidSpecifier:
        raise ConfigError(
            f"{where}: 'required-version' = {show_value(text)} is not a version specifier "
            '(write e.g. ">=0.3,<0.4" or "==0.3.0")'
        ) from None
    if not specifier.contains(running, prereleases=True):
        requirement = f"silo-regress{specifier}"
        raise ConfigError(
            f"{where}: required-version {show_value(text)} does not admit this silo-regress, "
            f"{running}; install the required one, e.g. pip install '{requirement}' in the "
            f"project's virtualenv, or pipx install --force '{requirement}'"
        )
    return wanted
