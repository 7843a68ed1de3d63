"""fmt: baselines rewritten by hand, by another hook or by a Windows checkout come back."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.silofixture import SiloProject, make_result
from support.treestate import snapshot

from silo_regress.canon.canonical import serialize
from silo_regress.project.config import load_config
from silo_regress.recording.formatter import format_baselines

VALUE = make_result(agent_output={"greeting": "Grüße aus Köln", "emoji": "🚀", "n": 0.5})
CANONICAL = serialize(VALUE)

Mangle = Callable[[bytes], bytes]


def _four_spaces(_: bytes) -> bytes:
    return (json.dumps(VALUE, indent=4, ensure_ascii=False) + "\n").encode()


def _ascii_escapes(_: bytes) -> bytes:
    text = json.dumps(VALUE, indent=2, ensure_ascii=True) + "\n"
    assert "\\u00fc" in text
    return text.encode()


MANGLES: dict[str, Mangle] = {
    "4-space-indent": _four_spaces,
    "ascii-escapes": _ascii_escapes,
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "bom": lambda data: b"\xef\xbb\xbf" + data,
    "no-final-newline": lambda data: data.rstrip(b"\n"),
    "two-final-newlines": lambda data: data + b"\n",
    "unsorted-keys": lambda _: (json.dumps(VALUE, indent=2, ensure_ascii=False) + "\n").encode(),
    "one-line": lambda _: json.dumps(VALUE).encode(),
    "all-at-once": lambda _: (
        b"\xef\xbb\xbf"
        + json.dumps(VALUE, indent=4, ensure_ascii=True).replace("\n", "\r\n").encode()
    ),
}


def _project_with(project: SiloProject, data: bytes) -> Path:
    project.baselines.mkdir(parents=True, exist_ok=True)
    (project.baselines / ".silo-regress-format").write_bytes(b"1\n")
    (project.baselines / "TASK-002.state-diff.json").write_bytes(
        serialize({"scalars": [], "collections": {}})
    )
    path = project.baselines / "TASK-002.result.json"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("mangle", MANGLES.values(), ids=list(MANGLES))
def test_fmt_makes_any_rewrite_canonical_without_changing_a_value(
    project: SiloProject, mangle: Mangle
) -> None:
    data = mangle(CANONICAL)
    assert data != CANONICAL
    path = _project_with(project, data)

    before = snapshot(project.root)
    checked = project.cli("fmt", "--check")
    assert checked.exit_code == 1, checked.output
    assert checked.stdout == (
        "not-canonical   baselines/TASK-002.result.json: would be rewritten by `silo-regress fmt`\n"
        "1 of 2 baseline files need attention; run `silo-regress fmt` to rewrite them\n"
    )
    assert snapshot(project.root) == before

    fixed = project.cli("fmt")
    assert fixed.exit_code == 0, fixed.output
    assert fixed.stdout == (
        "reformatted     baselines/TASK-002.result.json\n2 baseline files are canonical now\n"
    )
    assert path.read_bytes() == CANONICAL
    assert json.loads(path.read_bytes()) == VALUE

    again = project.cli("fmt", "--check")
    assert again.exit_code == 0
    assert again.stdout == "2 baseline files are canonical\n"


def test_fmt_then_check_matches_the_run(project: SiloProject) -> None:
    project.add_run("TASK-002", result=VALUE)
    assert project.cli("record", "TASK-002").exit_code == 0
    path = project.baselines / "TASK-002.result.json"
    path.write_bytes(MANGLES["all-at-once"](path.read_bytes()))
    assert "not-canonical" in project.cli("check", "--format", "json").stdout
    assert project.cli("fmt").exit_code == 0
    assert project.cli("check").exit_code == 0


def test_fmt_given_paths_touches_only_those(
    project: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _project_with(project, MANGLES["crlf"](CANONICAL))
    other = project.baselines / "TASK-003.result.json"
    other.write_bytes(MANGLES["bom"](CANONICAL))
    monkeypatch.chdir(project.root)
    result = project.cli("fmt", "baselines/TASK-002.result.json")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "reformatted     baselines/TASK-002.result.json"
    assert path.read_bytes() == CANONICAL
    assert other.read_bytes() == MANGLES["bom"](CANONICAL)
    missing = project.cli("fmt", "baselines/TASK-404.result.json")
    assert missing.exit_code == 3
    assert missing.stderr.startswith("silo-regress: error: ")
    assert missing.stderr.endswith("baselines/TASK-404.result.json: no such file\n")


def test_fmt_reports_what_it_cannot_fix_and_keeps_it(project: SiloProject) -> None:
    broken = b'{\n  "passed": true,\n  "passed": false\n}\n'
    path = _project_with(project, broken)
    volatile = project.baselines / "TASK-003.result.json"
    # No run at hand: today's time is judged, a simulated date far from it is not.
    today = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    volatile.write_bytes(serialize({"finishedAt": today, "meeting": "2026-03-16T10:00:00Z"}))
    for args in (("fmt",), ("fmt", "--check")):
        result = project.cli(*args)
        assert result.exit_code == 1, result.output
        lines = result.stdout.splitlines()
        assert (
            "invalid         baselines/TASK-002.result.json: duplicate key 'passed' at /passed"
            in lines
        )
        assert (
            "volatile        baselines/TASK-003.result.json: /finishedAt (wall-clock date-time "
            f"'{today}', inside the last 30 days of this clock)" in lines
        )
        assert lines[-1] == "2 of 3 baseline files need attention"
    assert path.read_bytes() == broken


def test_fmt_rewrites_the_format_file(project: SiloProject) -> None:
    _project_with(project, CANONICAL)
    fmt_file = project.baselines / ".silo-regress-format"
    fmt_file.write_bytes(b"2\n")
    checked = project.cli("fmt", "--check")
    assert checked.exit_code == 1
    assert "format-version  baselines/.silo-regress-format: holds '2', expected '1'" in (
        checked.stdout
    )
    assert fmt_file.read_bytes() == b"2\n"
    assert project.cli("fmt").exit_code == 0
    assert fmt_file.read_bytes() == b"1\n"
    fmt_file.unlink()
    assert project.cli("fmt", "--check").exit_code == 1
    assert project.cli("fmt").exit_code == 0
    assert fmt_file.read_bytes() == b"1\n"


def test_fmt_with_no_baselines(project: SiloProject) -> None:
    result = project.cli("fmt", "--check")
    assert result.exit_code == 0
    assert result.stdout == "0 baseline files are canonical\n"
    assert not project.baselines.exists()


def test_format_baselines_api_counts(project: SiloProject) -> None:
    _project_with(project, MANGLES["no-final-newline"](CANONICAL))
    config = load_config(project.root)
    dry = format_baselines(config, [], check_only=True)
    assert (dry.total, dry.written, dry.reformattable) == (2, 0, True)
    assert dry.problems == ("baselines/TASK-002.result.json",)
    wet = format_baselines(config, [], check_only=False)
    assert (wet.total, wet.written, wet.problems) == (2, 1, ())
