"""Hostile input, one case per item of issue 25: what an attacker who writes run files,
shard reports or parent directories can make silo-regress print, read or write.

A shared payload corpus goes through every renderer (text, review, JSON, Markdown,
GitHub, JUnit, HTML) and stderr: no raw control, bidi or zero-width character may
reach the output, no line may become a live GitHub workflow command, Markdown must
not render agent text as a link, image, mention or extra table row, JUnit stays
XML and JSON gives back exactly the strings the run files held.
"""

from __future__ import annotations

import io
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from support.silofixture import SiloProject, make_project, make_result

from silo_regress.canon.visible import one_line, shielded, visible

# Every kind of hostile text the issue names, as an agent could write it.
PAYLOADS = {
    "csi": "red \x1b[31mALERT\x1b[0m \x1b[2J\x1b[1;1H",
    "osc52": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "osc8": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "c1": "\x9b31m\x9d0;title\x9c",
    "bidi": "admin\u202e\u2066txt.exe\u2069\u202a\u202b\u202c\u202d\u2067\u2068",
    "zero-width": "pa\u200bss\u200c\u200d\ufeffed",
    "workflow": "x\n::error::forged\n::add-mask::secret\n::set-output name=a::b\r\n::warning::w",
    "markdown": "![img](https://evil.example/a.png) [link](https://evil.example) @admin "
    "<img src=x onerror=alert(1)> | forged | row | ``` </details>",
    "nul": "a\x00b\x07c\x7f",
}
# Characters that must never reach the output raw (newline and tab are layout).
_RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200d\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]"
)
_ALL = " ".join(PAYLOADS.values())
# The colour sequences our palette and pygments write, and nothing else.
_OWN_COLOUR = re.compile(
    r"\x1b\[(?:(?:0|00|01|1|2|4|7|22|24|27|3[0-7]|39|49|9[0-7])(?:;(?:00|39|49))*)?m"
)


def _no_raw(text: str, *, where: str) -> None:
    found = _RAW.search(text)
    assert found is None, f"{where}: raw {found.group()!r} at {found.start()}"


# --- the escaping function ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_visible_escapes_every_payload_and_is_reversible(name: str) -> None:
    text = PAYLOADS[name]
    shown = visible(text)
    _no_raw(shown, where=name)
    assert "\n" not in shown
    # Reversible: Python's own escape reading gives the original back.
    assert shown.encode("ascii", "backslashreplace").decode("unicode_escape") == text


def test_visible_tells_an_escape_from_text_that_looks_like_one() -> None:
    assert visible("\x1b") == "\\x1b"
    assert visible("\\x1b") == "\\\\x1b"
    assert visible("\x1b") != visible("\\x1b")


def test_shielded_keeps_lines_and_our_colours_only() -> None:
    ours = "\x1b[31mred\x1b[0m \x1b[39;49;00m"
    assert shielded(ours, colour=True) == ours
    assert "\x1b" not in shielded(ours)
    hostile = "\x1b[8mhidden\x1b]52;c;x\x07\x1b[2J"
    _no_raw(shielded(hostile, colour=True), where="colour")
    assert shielded("a\nb\tc é") == "a\nb\tc é"
    assert "\n" not in one_line("a\nb\rc")


def test_shielded_json_parses_to_the_same_value() -> None:
    value = {"k": _ALL + "\U000e0001 \ud7ff é"}
    text = json.dumps(value, ensure_ascii=False)
    shown = shielded(text)
    _no_raw(shown, where="json")
    assert json.loads(shown) == value


# --- every renderer -----------------------------------------------------------


@pytest.fixture
def hostile(tmp_path: Path) -> SiloProject:
    """A recorded task whose newest run carries every payload: in its directory name,
    agentOutput, a check's label and detail, and the run's error."""
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    checks = [
        {"label": PAYLOADS[n], "passed": False, "detail": PAYLOADS[n], "required": True}
        for n in sorted(PAYLOADS)
    ]
    project.add_run(
        "TASK-001",
        name="run_20260316T110000_" + PAYLOADS["csi"] + PAYLOADS["bidi"],
        result=make_result(passed=False, reward=0.5, checks=checks, agent_output=_ALL),
    )
    return project


_FORMATS = ["text", "json", "junit", "github", "markdown", "html"]


@pytest.mark.parametrize("report_format", _FORMATS)
def test_every_format_shows_no_raw_control(hostile: SiloProject, report_format: str) -> None:
    for color in ("never", "always"):
        result = hostile.cli("check", "--format", report_format, color=color)
        assert result.exit_code == 1, result.output
        shown = _OWN_COLOUR.sub("", result.stdout) if color == "always" else result.stdout
        _no_raw(shown, where=f"{report_format} colour={color}")
        _no_raw(result.stderr, where=f"{report_format} stderr")


def test_text_report_shows_the_escapes(hostile: SiloProject) -> None:
    text = hostile.cli("check").stdout
    assert "\\x1b[31mALERT" in text or "\\u001b[31mALERT" in text
    assert "\\u202e" in text
    # No field's newline starts a line of its own.
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())


def test_json_report_gives_back_the_exact_strings(hostile: SiloProject) -> None:
    report = json.loads(hostile.cli("check", "--format", "json").stdout)
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for key, member in value.items():
                walk(key)
                walk(member)
        elif isinstance(value, list):
            for member in value:
                walk(member)

    walk(report)
    run_name = "run_20260316T110000_" + PAYLOADS["csi"] + PAYLOADS["bidi"]
    assert run_name in strings
    assert any(PAYLOADS["workflow"] in s for s in strings)


_OUR_COMMANDS = re.compile(
    r"::(error (file|title)=|group::|endgroup::|stop-commands::[0-9a-f]{32})"
)


def _live_commands(text: str) -> list[str]:
    """The lines a GitHub runner would read as workflow commands, outside
    ``::stop-commands::`` blocks (the runner reads ``::`` after leading spaces)."""
    live: list[str] = []
    stop: str | None = None
    for line in text.splitlines():
        bare = line.lstrip()
        if stop is not None:
            if bare == f"::{stop}::":
                stop = None
            continue
        if bare.startswith("::stop-commands::"):
            stop = bare.removeprefix("::stop-commands::")
        if bare.startswith("::"):
            live.append(bare)
    return live


def test_github_format_emits_only_its_own_commands(hostile: SiloProject) -> None:
    text = hostile.cli("check", "--format", "github").stdout
    live = _live_commands(text)
    assert live, "the failing artifact still gets its annotation"
    assert all(_OUR_COMMANDS.match(line) for line in live), live
    assert not any("forged" in line or "add-mask" in line for line in live if line[:7] != "::error")


def test_markdown_renders_no_link_image_mention_or_extra_row(hostile: SiloProject) -> None:
    text = hostile.cli("check", "--format", "markdown").stdout
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    kinds = set()
    html = []
    mentions = []
    for token in tokens:
        for node in [token, *(token.children or ())]:
            kinds.add(node.type)
            if node.type.startswith("html"):
                html.append(node.content)
            if node.type == "text" and "@admin" in node.content:
                mentions.append(node.content)  # outside code: GitHub would notify
    assert "image" not in kinds and "link_open" not in kinds
    assert not any("img" in h or "onerror" in h for h in html), html
    assert not mentions
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    header = rows[0]
    cells = len(re.findall(r"(?<!\\)\|", header))
    assert all(len(re.findall(r"(?<!\\)\|", row)) == cells for row in rows), rows
    # The comment's fences close where ours do: the diff block ends before </details>.
    rendered = "".join(html)
    assert rendered.count("</details>") == rendered.count("<details>") >= 1


def test_junit_is_xml_whatever_the_input(hostile: SiloProject) -> None:
    ET.fromstring(hostile.cli("check", "--format", "junit").stdout.encode())


def test_stderr_warnings_show_run_names_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from silo_regress.cli.common import error, warn

    warn("run_x" + PAYLOADS["workflow"] + PAYLOADS["osc52"])
    error("first line\n::error::second" + PAYLOADS["bidi"])
    err = capsys.readouterr().err
    _no_raw(err, where="stderr")
    assert not any(line.lstrip().startswith("::") for line in err.splitlines()), err


def test_review_shows_the_outcome_escaped(hostile: SiloProject) -> None:
    import os
    import sys

    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(hostile.root), "--color", "always", "review"],
        env={**os.environ, "TERM": "xterm", "COLUMNS": "200"},
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 200),
    )
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect(re.escape("[q]uit > "))
    child.send("q")
    child.expect(pexpect.EOF)
    shown = _OWN_COLOUR.sub("", seen.getvalue().replace("\r\n", "\n"))
    assert "ALERT" in shown
    _no_raw(shown, where="review")


def test_out_keeps_our_colour_and_escapes_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    from silo_regress.cli.common import out

    buffer = io.StringIO()
    monkeypatch.setattr("sys.stdout", buffer)
    out("\x1b[31mours\x1b[0m " + PAYLOADS["osc52"], colour=True)
    assert buffer.getvalue().startswith("\x1b[31mours\x1b[0m ")
    _no_raw(buffer.getvalue().removeprefix("\x1b[31mours\x1b[0m "), where="out")


# --- merge: shard reports are not trusted ---------------------------------------


@pytest.fixture
def shard_report(hostile: SiloProject, tmp_path: Path) -> dict[str, Any]:
    """A real JSON report of the hostile project (one changed result)."""
    out = tmp_path / "whole.json"
    assert hostile.cli("check", "--format", "json", "--output", str(out)).exit_code == 1
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def _merge(project: SiloProject, tmp_path: Path, report: Any, *args: str) -> Any:
    path = tmp_path / "forged.json"
    path.write_text(report if isinstance(report, str) else json.dumps(report), encoding="utf-8")
    return project.cli("merge", str(path), *args)


def _changed(report: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in report["results"] if r["status"] == "changed")
    return found


@pytest.mark.parametrize("where", ["../secret.json", "/SECRET", "linked/secret.json"])
def test_merge_reads_no_file_outside_the_project(
    hostile: SiloProject, shard_report: dict[str, Any], tmp_path: Path, where: str
) -> None:
    secret = tmp_path / "SECRET"
    secret.write_bytes(json.dumps({"passed": "TOP-SECRET-VALUE"}).encode())
    (hostile.root / "secret.json").parent.mkdir(exist_ok=True)
    (tmp_path / "secret.json").write_bytes(secret.read_bytes())
    (hostile.root / "linked").symlink_to(tmp_path)
    result_item = _changed(shard_report)
    result_item["baseline"] = str(secret) if where == "/SECRET" else where
    result_item["changes"] = [{"path": "/passed", "baseline": "TOP-SECRET-VALUE", "run": 1}]
    result = _merge(hostile, tmp_path, shard_report)
    assert result.exit_code == 1, result.output
    assert "TOP-SECRET-VALUE" not in result.stdout.replace('"TOP-SECRET-VALUE" -> 1', "")
    assert "merge reads only baselines inside the project" in result.stderr
    assert "--- " not in result.stdout  # no line diff was built from the file


@pytest.mark.parametrize("key", ["ref", "label"])
def test_merge_refuses_a_ref_with_a_newline(
    hostile: SiloProject, shard_report: dict[str, Any], tmp_path: Path, key: str
) -> None:
    item = _changed(shard_report)
    source = {"kind": "commit", "ref": "main", "commit": None, "label": "main:x"}
    source[key] = "main\n::add-mask::x"
    item["baselineSource"] = source
    result = _merge(hostile, tmp_path, shard_report, "--format", "github")
    assert result.exit_code == 3, result.output
    assert f"baselineSource.{key} main\\n::add-mask::x holds a character" in result.stderr
    assert not _live_commands(result.stdout + result.stderr)


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ('{"version": 1, "results": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
        ('{"version": true, "results": []}', "report version True is not 1"),
        ('{"version": 1, "results": []}', "compared nothing"),
    ],
    ids=["nested", "version-true", "nothing"],
)
def test_merge_refuses_reports_that_say_nothing_true(
    hostile: SiloProject, tmp_path: Path, document: str, said: str
) -> None:
    result = _merge(hostile, tmp_path, document)
    assert result.exit_code == 3, result.output
    assert said in result.stderr
    assert "Traceback" not in result.output


def test_merge_refuses_a_change_with_neither_side(
    hostile: SiloProject, shard_report: dict[str, Any], tmp_path: Path
) -> None:
    _changed(shard_report)["changes"] = [{"path": "/passed"}]
    result = _merge(hostile, tmp_path, shard_report)
    assert result.exit_code == 3, result.output
    assert "changes[0] has neither a 'baseline' nor a 'run' side" in result.stderr


# --- a forged journal -------------------------------------------------------------


def _forge_journal(project: SiloProject, document: Any) -> Path:
    from silo_regress.store.transaction import JOURNAL_FILE, WORK_DIR

    work = project.baselines / WORK_DIR
    work.mkdir(exist_ok=True)
    journal = work / JOURNAL_FILE
    journal.write_text(json.dumps(document), encoding="utf-8")
    return journal


def _entry_for(project: SiloProject, name: str, **extra: Any) -> dict[str, Any]:
    import hashlib

    data = (project.baselines / name).read_bytes()
    return {"target": name, "backup": None, "sha256": hashlib.sha256(data).hexdigest(), **extra}


@pytest.mark.parametrize(
    "shape",
    ["0.2-list", "other-host", "other-boot", "backup-outside", "target-outside", "same-machine"],
)
def test_a_forged_journal_is_refused_and_left_alone(tmp_path: Path, shape: str) -> None:
    import socket

    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    before = project.baseline_bytes()
    entry = _entry_for(project, "TASK-001.result.json")
    boot_id = Path("/proc/sys/kernel/random/boot_id")
    host, boot = socket.gethostname(), boot_id.read_text().strip() if boot_id.exists() else ""
    own = {"batch": "0" * 32, "host": host, "boot": boot, "pid": 1}
    document: Any = {
        "0.2-list": [entry],
        "other-host": {**own, "host": "ci-runner-7", "entries": [entry]},
        "other-boot": {**own, "boot": "00000000-0000-0000-0000-000000000000", "entries": [entry]},
        "backup-outside": {**own, "entries": [{**entry, "backup": "../../../evil.old"}]},
        "target-outside": {**own, "entries": [{**entry, "target": "../pyproject.toml"}]},
        # Host and boot id copied, the file's identity guessed: no staging file is ours.
        "same-machine": {**own, "entries": [{**entry, "staged": [1, 2]}]},
    }[shape]
    if shape == "other-boot" and not boot:
        pytest.skip("this kernel names no boot id")
    journal = _forge_journal(project, document)
    project.add_run("TASK-002", result=make_result(reward=0.5))
    result = project.cli("record", "TASK-002")
    assert result.exit_code == 3, result.output
    assert "journal.json: refused:" in result.stderr
    assert "not this machine's own interrupted batch" in result.stderr
    assert journal.exists(), "left alone for the user to look at"
    after = {k: v for k, v in project.baseline_bytes().items() if ".silo-regress-tmp" not in k}
    assert after == before, "no baseline deleted, replaced or written"


def test_a_journal_forged_on_this_machine_does_not_make_fmt_delete_a_baseline(
    tmp_path: Path,
) -> None:
    """Hostname and boot id copied, a token and staging files named with it carried too:
    still not the files this writer made, so fmt refuses and says how to go on."""
    import socket

    from silo_regress.store.transaction import machine_identity

    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    project.add_run("TASK-002")
    assert project.cli("record", "--all").exit_code == 0
    before = project.baseline_bytes()
    host, boot = machine_identity()
    assert host == socket.gethostname()
    token = "ab" * 16
    backup = f".TASK-002.result.json.silo-regress-{token}-00000000.old"
    journal = _forge_journal(
        project,
        {
            "batch": token,
            "host": host,
            "boot": boot,
            "pid": 1,
            "entries": [
                _entry_for(project, "TASK-001.result.json"),
                {**_entry_for(project, "TASK-002.result.json"), "backup": backup},
            ],
        },
    )
    (journal.parent / backup).write_text('{"forged": true}\n')
    result = project.cli("fmt")
    assert result.exit_code == 3, result.output
    assert "journal.json: refused: none of the staging files it names" in result.stderr
    assert "remove the directory" in result.stderr
    assert "canonical" not in result.stdout
    assert journal.exists()
    after = {k: v for k, v in project.baseline_bytes().items() if ".silo-regress-tmp" not in k}
    assert after == before


# --- discovery outside git --------------------------------------------------------


def test_discovery_stops_at_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from silo_regress.cli import app

    above = tmp_path / "shared"
    home = above / "home" / "me"
    work = home / "work"
    work.mkdir(parents=True)
    (above / ".silo-regress.toml").write_text('silo-command = ["touch", "/tmp/pwned"]\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 3, result.output
    assert "no silo-regress project found" in result.stderr
    assert "your home directory: the walk stops there" in result.stderr


def _other_device_dir() -> Path | None:
    shm = Path("/dev/shm")
    try:
        if (
            shm.is_dir()
            and os.access(shm, os.W_OK)
            and shm.stat().st_dev != shm.parent.stat().st_dev
        ):
            return shm
    except OSError:
        pass
    return None


@pytest.mark.skipif(_other_device_dir() is None, reason="needs a tmpfs below another mount")
def test_discovery_stops_at_a_file_system_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from typer.testing import CliRunner

    from silo_regress.cli import app

    top = _other_device_dir()
    assert top is not None
    monkeypatch.setenv("HOME", "/nonexistent-home")
    with tempfile.TemporaryDirectory(dir=top) as made:
        work = Path(made) / "sub"
        work.mkdir()
        monkeypatch.chdir(work)
        result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 3, result.output
    assert f"{top} (the walk stops at a file-system boundary)" in result.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_discovery_refuses_a_config_owned_by_another_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from silo_regress.cli import app

    monkeypatch.setenv("HOME", "/nonexistent-home")
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    config = project.root / ".silo-regress.toml"
    config.write_text('silo-command = ["touch", "pwned"]\n')
    (project.root / "pyproject.toml").unlink()
    os.chown(config, 12345, 12345)
    inside = project.root / "sub"
    inside.mkdir()
    monkeypatch.chdir(inside)
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 3, result.output
    assert f"{config}: refused: it belongs to another user (uid 12345)" in result.stderr
    assert "SILO_REGRESS_SAFE_DIRECTORIES" in result.stderr
    # Named with --project, or listed as safe, it is the user's choice.
    assert CliRunner().invoke(app, ["--project", str(project.root), "status"]).exit_code == 0
    monkeypatch.setenv("SILO_REGRESS_SAFE_DIRECTORIES", str(project.root))
    assert CliRunner().invoke(app, ["status"]).exit_code == 0


# --- runs dated in the future -------------------------------------------------------


def test_a_run_dated_in_the_future_hides_no_later_run(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    # A passing run that claims to start in 2099, then a real, later, failing one.
    project.add_run("TASK-001", started="2099-01-01T00:00:00.000Z", name="run_future")
    project.add_run(
        "TASK-001", started="2026-03-16T11:00:00.000Z", result=make_result(passed=False)
    )
    result = project.cli("check")
    assert result.exit_code == 1, result.output
    assert "now FAILS" in result.stdout
    assert (
        ".silo/runs/run_future: skipped, its startedAt 2099-01-01T00:00:00.000Z is more than "
        "5 minutes past this machine's clock"
    ) in result.stderr
    # record takes the real newest run too, not the one from the future.
    assert project.cli("record", "TASK-001").exit_code == 0
    assert b'"passed": false' in (project.baselines / "TASK-001.result.json").read_bytes()
    # The run cache gives the same answer the second time.
    assert project.cli("check").exit_code == 0


# --- lost updates -------------------------------------------------------------------

# Runs `silo-regress` with the read of the old baselines slowed down, so two writers
# started together both read before either writes (the race, made certain).
_SLOW_READER = r"""
import sys, time
from silo_regress.store import baselines
for name in ("variants_of", "read_existing"):
    real = getattr(baselines.BaselineStore, name)
    def slow(self, *args, _real=real, **kwargs):
        found = _real(self, *args, **kwargs)
        time.sleep(0.4)
        return found
    setattr(baselines.BaselineStore, name, slow)
from silo_regress.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _together(project: SiloProject, *commands: tuple[str, ...]) -> list[tuple[int, str]]:
    import subprocess
    import sys

    base = [sys.executable, "-c", _SLOW_READER, "--project", str(project.root)]
    procs = [
        subprocess.Popen([*base, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for args in commands
    ]
    results = []
    for proc in procs:
        with proc:  # closes its pipes; a leaked one is a ResourceWarning, an error here
            _, err = proc.communicate(timeout=120)
        results.append((proc.returncode, err))
    return results


def test_concurrent_add_variant_loses_no_variant(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    first = project.add_run("TASK-001", result=make_result(reward=0.5)).name
    second = project.add_run("TASK-001", result=make_result(reward=0.7)).name
    results = _together(
        project,
        ("record", "TASK-001", "--add-variant", "--run-id", first),
        ("record", "TASK-001", "--add-variant", "--run-id", second),
    )
    assert all(code == 0 for code, _ in results), results
    rewards = sorted(
        json.loads(path.read_bytes())["reward"]
        for path in project.baselines.glob("TASK-001*.result.json")
    )
    assert rewards == [0.5, 0.7, 1], "every writer's variant is kept"


def test_concurrent_record_path_keeps_both_paths(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(reward=0.5, tool_calls=9))
    target = "baselines/TASK-001.result.json"
    results = _together(
        project,
        ("record", target, "--path", "/reward"),
        ("record", target, "--path", "/toolCalls"),
    )
    assert all(code == 0 for code, _ in results), results
    value = json.loads((project.root / target).read_bytes())
    assert (value["reward"], value["toolCalls"]) == (0.5, 9), "neither path undone"


def test_review_accepts_only_the_run_it_showed(hostile: SiloProject) -> None:
    import sys

    pexpect = pytest.importorskip("pexpect")
    before = hostile.baseline_bytes()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(hostile.root), "review"],
        env={**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"},
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 200),
    )
    child.expect(re.escape("[q]uit > "))
    # The run is rewritten while the reviewer looks at it.
    (run,) = [p for p in hostile.runs_dir.iterdir() if "ALERT" in p.name]
    (run / "result.json").write_text(json.dumps(make_result(reward=0.25), indent=2) + "\n")
    child.send("a")
    child.expect("changed since it was shown, so it was not accepted")
    # The refused item stays open (issue 24): the reviewer may look again or quit.
    child.expect(re.escape("[q]uit > "))
    child.send("q")
    child.expect(pexpect.EOF)
    assert hostile.baseline_bytes() == before


# --- bounded reads and the tracebacks that were -------------------------------------


def test_a_huge_trace_line_is_an_incomplete_run_not_gigabytes(tmp_path: Path) -> None:
    import tracemalloc

    from silo_regress.runs.toolpath import MAX_LINE_BYTES, Gap, Incomplete, derive_tool_path

    run = tmp_path / "run"
    run.mkdir()
    with open(run / "trace.jsonl", "wb") as trace:
        trace.write(b'{"type":"run_start","seq":1}\n{"type":"tool_call","args":"')
        chunk = b"x" * (1 << 20)
        for _ in range((MAX_LINE_BYTES >> 20) * 3):
            trace.write(chunk)
        trace.write(b'"}\n')
    tracemalloc.start()
    try:
        found = derive_tool_path(run, tool_calls=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(found, Incomplete)
    assert found.gap is Gap.LINE_TOO_LONG and found.line == 2
    assert "line 2 is longer than 32 MiB" in found.describe()
    # readline copies once (2x the bound); reading the whole line would hold 96 MiB+.
    assert peak < MAX_LINE_BYTES * 2.2, f"held {peak >> 20} MiB for a 96 MiB line"


def test_a_400_digit_reward_is_left_out_of_the_scores(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    run = project.add_run("TASK-001")
    text = (run / "result.json").read_text().replace('"reward": 1', '"reward": ' + "9" * 400)
    (run / "result.json").write_text(text)
    result = project.runner.invoke(
        __import__("silo_regress.cli", fromlist=["app"]).app,
        ["--project", str(project.root), "check"],
    )
    assert result.exit_code == 1, result.output
    assert "CHANGED" in result.stdout and "internal error" not in result.output


def test_a_superscript_digit_in_a_pointer_is_a_named_error(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(reward=0.5))
    result = project.runner.invoke(
        __import__("silo_regress.cli", fromlist=["app"]).app,
        [
            *("--project", str(project.root), "record", "baselines/TASK-001.result.json"),
            *("--path", "/checks/²"),
        ],
    )
    assert result.exit_code == 3, result.output
    assert "--path /checks/²: in no artifact of TASK-001" in result.stderr


def test_a_superscript_digit_typed_in_review_is_ignored_by_name(tmp_path: Path) -> None:
    import sys

    pexpect = pytest.importorskip("pexpect")
    project = make_project(tmp_path / "project")
    project.add_run("TASK-001")
    assert project.cli("record", "--all").exit_code == 0
    project.add_run("TASK-001", result=make_result(reward=0.5))
    child = pexpect.spawn(
        sys.executable,
        ["-m", "silo_regress", "--project", str(project.root), "review"],
        env={**os.environ, "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200"},
        encoding="utf-8",
        timeout=30,
        dimensions=(50, 200),
    )
    child.expect(re.escape("[q]uit > "))
    child.send("p")
    child.expect("paths to accept")
    child.sendline("²")
    # Named and asked again (issue 24's re-prompt), never read as the digit 2.
    child.expect("'²': not a number from the list; nothing accepted yet, try again")
    child.expect("paths to accept")
    child.sendline("")
    child.expect(re.escape("[q]uit > "))
    child.send("q")
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")


# --- run attribution ----------------------------------------------------------------


def test_run_does_not_claim_a_concurrent_plain_silo_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain `silo run` started a minute earlier finishes while `run` waits for its
    own rollout: the rollout keeps its own run; the other is named, never claimed."""
    import sys
    import threading
    from datetime import UTC, datetime, timedelta

    fake = Path(__file__).parents[1] / "support" / "fake_silo.py"
    command = json.dumps([sys.executable, str(fake)])
    project = make_project(
        tmp_path / "project", config=f'silo-command = {command}\nenvironment = "crm-west"\n'
    )
    monkeypatch.setenv("FAKE_SILO_MODE", "ok")
    monkeypatch.setenv("FAKE_SILO_SLEEP", "1.5")
    earlier = (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="milliseconds")

    def plain_silo_run() -> None:
        import time

        time.sleep(0.5)  # after `run` listed the runs directory, before its rollout ends
        project.add_run(
            "TASK-001",
            started=earlier.replace("+00:00", "Z"),
            name="run_plain_silo",
            result=make_result(passed=False, reward=0),
        )

    other = threading.Thread(target=plain_silo_run)
    other.start()
    result = project.cli("run", "TASK-001")
    other.join()
    assert (
        ".silo/runs/run_plain_silo: a new run of crm-west/TASK-001, which this command "
        "did not start" in result.stderr
    ), result.output
    assert "run_plain_silo" not in result.stdout


def test_a_task_with_more_new_runs_than_rollouts_claims_none() -> None:
    from datetime import UTC, datetime

    from silo_regress.runner.attribution import Ended, Ledger
    from silo_regress.runs.index import Run

    key = ("crm-west", "TASK-001")
    now = datetime.now(UTC)
    runs = {
        name: Run(name, Path("/runs") / name, *key, started_at=now.isoformat(), started=now)
        for name in ("run_a", "run_b")
    }
    ledger = Ledger(before=frozenset())
    ledger.start(key, at=now)
    assert ledger.exit(Ended(0, key, 0))
    (claim,) = ledger.settle(key, runs, complete=lambda r: True)
    assert claim.run is None, "which of two runs is ours is unknowable: neither is claimed"
    assert ledger.strays(runs) == ["run_a", "run_b"]
