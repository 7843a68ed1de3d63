"""The command line's contract: exit codes, where messages go, and colour."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support.silofixture import SiloProject, make_result

from silo_regress import __version__
from silo_regress.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _changed(project: SiloProject) -> None:
    project.add_run("TASK-002", started="2026-03-16T09:00:00.000Z")
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run(
        "TASK-002", started="2026-03-16T10:00:00.000Z", result=make_result(passed=False, reward=0)
    )


# --- exit codes ---------------------------------------------------------------


def test_exit_0_everything_matched(project: SiloProject) -> None:
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-002").exit_code == 0
    for args in (
        ("check",),
        ("check", "TASK-002"),
        ("status",),
        ("diff", "TASK-002"),
        ("fmt", "--check"),
    ):
        result = project.cli(*args)
        assert result.exit_code == 0, (args, result.output)
        # status says once that a project without inputs or agent has no stale detection.
        note = "silo-regress: warning: no stale-run detection:" if args == ("status",) else ""
        assert result.stderr.startswith(note) and result.stderr.count("\n") == bool(note), args


def test_exit_0_version_and_help(project: SiloProject) -> None:
    version = project.runner.invoke(app, ["--version"])
    assert version.exit_code == 0
    assert version.stdout == f"silo-regress {__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", __version__)  # PEP 440, as pip shows it
    helped = project.runner.invoke(app, ["--help"])
    assert helped.exit_code == 0
    assert "record" in helped.stdout and "check" in helped.stdout


def test_exit_1_check_failed(project: SiloProject) -> None:
    _changed(project)
    result = project.cli("check")
    assert result.exit_code == 1
    assert result.stderr == ""
    # Summary first: the counts, the scores, one line per task; then the details.
    lines = result.stdout.splitlines()
    assert lines[0] == "1 changed, 1 match (2 artifacts of 1 task)"
    assert lines[1] == "by task: 1 regression (1 task)"
    assert lines[2].startswith("pass rate 1/1 -> 0/1, total reward 1 -> 0 over 1 task")
    assert lines[3].startswith("  regression  TASK-002 (crm-west): now FAILS")
    assert "CHANGED  TASK-002 (crm-west)  result.json" in lines[5]


def test_diff_shows_a_change_and_exits_0(project: SiloProject) -> None:
    _changed(project)
    result = project.cli("diff", "TASK-002")
    assert result.exit_code == 0, result.output
    assert "now FAILS (passed: true -> false)" in result.stdout
    assert '+  "passed": false,' in result.stdout
    as_json = project.cli("diff", "TASK-002", "--format", "json")
    assert as_json.exit_code == 0 and '"status": "changed"' in as_json.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--bogus"),
        ("check", "--format", "yaml"),
        ("nonsense",),
        ("diff",),
        ("record",),
        ("record", "--all", "TASK-002"),
        ("--color", "sometimes", "check"),
    ],
)
def test_exit_2_usage(project: SiloProject, args: tuple[str, ...]) -> None:
    project.add_run("TASK-002")
    result = project.runner.invoke(app, ["--project", str(project.root), *args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.strip()
    assert not project.baselines.exists()


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("record", "../../etc/x"), "task ref '../../etc/x'"),
        (("check", "TASK-404"), "task TASK-404"),
        (("record", "TASK-002"), ".silo/runs/run_bad: task TASK-002 has no complete run"),
        (("record", "TASK-003"), ".silo/runs/run_vol/result.json at /agentOutput/durationMs"),
    ],
)
def test_exit_3_bad_input_names_the_file(
    project: SiloProject, args: tuple[str, ...], names: str
) -> None:
    project.add_run("TASK-002", name="run_bad", files={"state-diff.json": b"{}\n"})
    (project.runs_dir / "run_bad" / "result.json").write_bytes(b'{"passed": "\xc3\x28"}\n')
    project.add_run(
        "TASK-002", name="run_0", started="2026-03-16T00:00:00.000Z", files={"result.json": None}
    )
    project.add_run("TASK-003", name="run_vol", result=make_result(agent_output={"durationMs": 1}))
    result = project.cli(*args)
    assert result.exit_code == 3, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("silo-regress: error: ")
    assert names in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_bad_utf8_in_the_newest_run_is_refused_by_record(project: SiloProject) -> None:
    project.add_run("TASK-002", name="run_bad", files={"result.json": b'{"a": "\xff"}\n'})
    result = project.cli("record", "--run-id", "run_bad")
    assert result.exit_code == 3
    assert result.stderr.startswith("silo-regress: error: .silo/runs/run_bad/result.json: ")


def test_exit_4_internal_error_shows_a_traceback(
    project: SiloProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    import silo_regress.judging.judge

    project.add_run("TASK-002")
    assert project.cli("record", "TASK-002").exit_code == 0

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in judge")

    monkeypatch.setattr(silo_regress.judging.judge, "check", broken)
    result = project.cli("check")
    assert result.exit_code == 4
    assert "Traceback (most recent call last):" in result.stderr
    assert "RuntimeError: a bug in judge" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1] == (
        "silo-regress: error: internal error (a bug in silo-regress); "
        "please report it with the traceback above"
    )
    assert result.stdout == ""


def test_main_returns_the_exit_code(
    project: SiloProject, capsys: pytest.CaptureFixture[str]
) -> None:
    from silo_regress.cli import main

    _changed(project)
    assert main(["--project", str(project.root), "--color", "never", "check"]) == 1
    assert main(["--project", str(project.root), "record", "x/y/z"]) == 3
    assert main(["--project", str(project.root), "--bogus"]) == 2
    assert main(["--project", str(project.root), "status"]) == 0
    captured = capsys.readouterr()
    assert "silo-regress: error: task ref 'x/y/z'" in captured.err


# --- output streams -----------------------------------------------------------


def test_reports_on_stdout_warnings_and_errors_on_stderr(project: SiloProject) -> None:
    _changed(project)
    (project.runs_dir / "run_junk").mkdir()
    result = project.cli("check")
    assert result.exit_code == 1
    assert "CHANGED" in result.stdout and "run_junk" not in result.stdout
    assert result.stderr == (
        "silo-regress: warning: .silo/runs/run_junk: skipped, "
        "no run.json (crashed before writing it, or still running)\n"
    )


def test_output_file_gets_the_format_and_stdout_the_text(project: SiloProject) -> None:
    _changed(project)
    target = project.root / "out" / "report.json"
    target.parent.mkdir()  # --output creates no directories
    result = project.cli("check", "--format", "json", "--output", str(target))
    assert result.exit_code == 1
    assert "CHANGED  TASK-002" in result.stdout
    assert target.read_text().startswith('{\n  "version": 1,')


def test_allow_no_runs(project: SiloProject) -> None:
    _changed(project)
    for run in list(project.runs_dir.iterdir()):
        for path in run.iterdir():
            path.unlink()
        run.rmdir()
    assert project.cli("check").exit_code == 1
    allowed = project.cli("check", "--allow-no-runs")
    assert allowed.exit_code == 0
    assert "no runs under .silo/runs/, nothing to compare" in allowed.stdout


# --- colour -------------------------------------------------------------------


def test_color_always_highlights_the_diff(project: SiloProject) -> None:
    _changed(project)
    result = project.cli("check", color="always")
    assert result.exit_code == 1
    assert ANSI.search(result.stdout)
    assert "\x1b[1m\x1b[31mCHANGED  TASK-002 (crm-west)  result.json\x1b[0m" in result.stdout
    # Removed and added lines are coloured differently, with escapes inside the
    # line around the changed word (render/text.py highlight_diff).
    lines = result.stdout.splitlines()
    removed = [line for line in lines if '-  "passed": true,' in ANSI.sub("", line)]
    added = [line for line in lines if '+  "passed": false,' in ANSI.sub("", line)]
    assert removed and added
    assert ANSI.search(removed[0]) and ANSI.search(added[0])
    assert ANSI.findall(removed[0])[0] != ANSI.findall(added[0])[0]
    assert ANSI.sub("", result.stdout) == project.cli("check", color="never").stdout


def test_color_always_colours_the_word_diff_of_agent_output(project: SiloProject) -> None:
    long = "The agent moved OPP-005 to Negotiation/Review and logged a call with the buyer."
    project.add_run("TASK-002", result=make_result(agent_output=long))
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-002", result=make_result(agent_output=long.replace("a call", "no call")))
    out = project.cli("check", color="always").stdout
    assert "\x1b[31m[-a-]\x1b[0m" in out and "\x1b[32m{+no+}\x1b[0m" in out
    assert "[-a-]{+no+}" in project.cli("check", color="never").stdout


def test_color_auto_under_a_runner_is_plain(project: SiloProject) -> None:
    _changed(project)
    for args in (("check",), ("status",), ("diff", "TASK-002")):
        result = project.cli(*args, color="auto")
        assert "\x1b" not in result.output, args


def _in_a_terminal(project: SiloProject, *args: str, no_color: bool) -> tuple[int, str]:
    """Run the real program with stdout on a pseudo-terminal, as a developer would."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = "1"
    main_fd, child_fd = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "silo_regress", "--project", str(project.root), *args],
        stdin=subprocess.DEVNULL,
        stdout=child_fd,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    os.close(child_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main_fd)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_no_color_is_respected_on_a_terminal(project: SiloProject) -> None:
    _changed(project)
    code, coloured = _in_a_terminal(project, "check", no_color=False)
    assert code == 1
    assert ANSI.search(coloured)
    code, plain = _in_a_terminal(project, "check", no_color=True)
    assert code == 1
    assert "CHANGED  TASK-002" in plain and "\x1b" not in plain
    code, forced = _in_a_terminal(project, "--color", "always", "check", no_color=True)
    assert ANSI.search(forced)  # an explicit flag beats the environment
    code, never = _in_a_terminal(project, "--color", "never", "check", no_color=False)
    assert "\x1b" not in never


def test_no_color_under_the_runner(project: SiloProject, monkeypatch: pytest.MonkeyPatch) -> None:
    _changed(project)
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in project.cli("check", color="auto").output
    assert ANSI.search(project.cli("check", color="always").output)


def test_color_never_has_no_escapes_anywhere(project: SiloProject) -> None:
    _changed(project)
    for args in (("check",), ("record", "TASK-002"), ("status",)):
        assert "\x1b" not in project.cli(*args, color="never").output, args


# --- global options after the command, -h, readable help -----------------------


def test_global_options_are_accepted_after_the_command(project: SiloProject) -> None:
    _changed(project)
    runner = project.runner
    after = runner.invoke(app, ["check", "--color", "always", "--project", str(project.root)])
    assert after.exit_code == 1, after.output
    assert "\x1b[" in after.stdout
    equals = runner.invoke(app, ["check", f"--project={project.root}", "--color=never"])
    assert equals.exit_code == 1 and "\x1b[" not in equals.stdout
    assert "now FAILS" in equals.stdout


def test_hoisting_stops_at_the_separator() -> None:
    from silo_regress.cli.app import hoist_global_options

    commands = ("check", "record")
    assert hoist_global_options(["check", "T", "--color", "never"], commands) == [
        "--color",
        "never",
        "check",
        "T",
    ]
    assert hoist_global_options(["-C", "x", "record", "--", "--color"], commands) == [
        "-C",
        "x",
        "record",
        "--",
        "--color",
    ]


def test_short_help_and_readable_metavars(project: SiloProject) -> None:
    for command in ("record", "check", "run", "review", "merge"):
        result = project.runner.invoke(app, [command, "-h"])
        assert result.exit_code == 0, command
        assert "Usage: " in result.stdout
        assert "<str>" not in result.stdout and "<int" not in result.stdout, command
        assert "<float" not in result.stdout, command
    record = project.runner.invoke(app, ["record", "-h"]).stdout
    assert "--run-id RUN_ID" in record and "--repeat N" in record and "--path POINTER" in record


# click's own placeholders and range hints: "<int range>", "<str>", "<path>", "[x>=1]"
RAW_HINT = re.compile(
    r"<(?:int|float|str|text|integer|path|file|bool)\b[^>]*>|\bx[<>]=?-?\d|\d<=?x\b"
)


def test_every_help_page_has_readable_placeholders(project: SiloProject) -> None:
    import typer

    commands = sorted(getattr(typer.main.get_command(app), "commands", {}))
    assert {"check", "record", "run", "diff", "merge", "log", "review"} <= set(commands)
    pages = {name: project.runner.invoke(app, [name, "-h"]) for name in commands}
    pages[""] = project.runner.invoke(app, ["-h"])
    for name, result in pages.items():
        assert result.exit_code == 0, (name, result.output)
        found = RAW_HINT.findall(result.stdout)
        assert not found, (name, found)
    check = " ".join(pages["check"].stdout.split())
    assert "--format [text|json|junit|github|markdown|html]" in check
    assert "-o, --output FILE" in check and "--fail-on [regression|change|uncovered]" in check
    assert "-j, --jobs N Rollouts at a time, at least 1" in check
    assert "--timeout SECONDS Seconds per rollout (at least 0.001)" in check
    assert "--project DIR" in pages[""].stdout and "--color WHEN" in pages[""].stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--jobs", "0"), "Invalid value for '--jobs' / '-j': must be at least 1, not 0"),
        (("check", "--run", "--timeout", "0"), "'--timeout': must be at least 0.001, not 0.0"),
        (("record", "--repeat", "0", "TASK-002"), "'--repeat': must be at least 1, not 0"),
        (("run", "-n", "-3"), "'--repeat' / '-n': must be at least 1, not -3"),
    ],
)
def test_numbers_below_the_minimum_are_usage_errors(
    project: SiloProject, args: tuple[str, ...], message: str
) -> None:
    result = project.cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not project.baselines.exists()


def test_check_names_tasks_with_runs_but_no_baseline_in_one_line(project: SiloProject) -> None:
    project.add_run("TASK-002")
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-007")
    project.add_run("TASK-008", env="crm-east")
    result = project.cli("check")
    assert result.exit_code == 0  # they are not failures: nothing was promised for them
    assert result.stdout.endswith(
        "not covered: 1 task with runs but no baseline: crm-west/TASK-007 "
        "(record it with `silo-regress record TASK`)\n"
        "not covered: 1 environment with runs that no baseline names: crm-east "
        "(record ENV/TASK, or set 'environment')\n"
    )
    assert "not covered" not in project.cli("check", "TASK-002").stdout  # named tasks only
