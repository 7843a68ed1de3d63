"""The sticky pull-request comment: rendered from the typed report (size, order), and
posted through the `comment` command against a stand-in for GitHub's API on 127.0.0.1
(tests/support/fakegithub.py): created, updated in place, paged, on GitHub Enterprise,
and on a fork's read-only token put in the job summary instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from support.fakegithub import FakeGitHub, serving
from support.reportfixture import failing_project
from support.silofixture import SiloProject

from silo_regress.behaviour.notes import PassedChanged, RewardMoved
from silo_regress.judging.direction import Direction
from silo_regress.judging.outcome import Outcome, Report, Verdict
from silo_regress.project.taskref import parse_ref
from silo_regress.render.prcomment import LIMIT, marker, render_pr_comment


def _big_report(tasks: int = 1000, regressions: int = 30) -> Report:
    outcomes: list[Outcome] = []
    for n in range(tasks):
        ref = parse_ref(f"TASK-{n:04d}")
        for artifact in ("result.json", "state-diff.json"):
            if n % (tasks // regressions) == 0 and n // (tasks // regressions) < regressions:
                if artifact == "result.json":
                    outcomes.append(
                        Outcome(
                            ref,
                            "crm-west",
                            artifact,
                            Verdict.CHANGED,
                            baseline_path=f"baselines/crm-west/TASK-{n:04d}.result.json",
                            direction=Direction.REGRESSION,
                            behaviour=(PassedChanged(True, False), RewardMoved(1, 0.25)),
                        )
                    )
                    continue
            elif n % 7 == 3 and artifact == "state-diff.json":
                outcomes.append(
                    Outcome(ref, "crm-west", artifact, Verdict.CHANGED, direction=Direction.DRIFT)
                )
                continue
            outcomes.append(Outcome(ref, "crm-west", artifact, Verdict.MATCH))
    return Report(outcomes=tuple(outcomes))


def test_1000_tasks_with_30_regressions_fit_60_kb_with_every_regression_unfolded() -> None:
    body = render_pr_comment(_big_report(), project="agents/crm")
    size = len(body.encode("utf-8"))
    print(f"comment size at 1,000 tasks with 30 regressions: {size} bytes")
    assert size <= LIMIT
    assert body.startswith(marker("agents/crm") + "\n")
    folded_from = body.index("<details>")
    shown = body[:folded_from]
    for n in range(0, 1000, 33):
        if n // 33 < 30:
            assert f"`TASK-{n:04d} (crm-west)`" in shown, n
    assert shown.count("| `TASK-") == 30
    assert "### Regressions (30)" in shown
    html = MarkdownIt("commonmark").enable("table").render(body)
    assert html.count("<details>") == html.count("</details>") >= 2


def test_a_huge_report_is_cut_inside_its_folded_sections_never_mid_table() -> None:
    body = render_pr_comment(_big_report(tasks=5000, regressions=30), project=".", limit=20_000)
    assert len(body.encode("utf-8")) <= 20_000
    assert body.count("<details>") == body.count("</details>")
    assert "not shown here (size limit)" in body


def test_a_project_name_cannot_close_the_marker_or_forge_another() -> None:
    assert marker("a --> <b>") == "<!-- silo-regress:a%20--%3E%20%3Cb%3E -->"
    assert marker("agents/crm") != marker("agents/crm2")


# --- posting ----------------------------------------------------------------------------


@pytest.fixture
def report_file(tmp_path: Path) -> Path:
    project: SiloProject = failing_project(tmp_path / "project")
    path = tmp_path / "report.json"
    done = project.cli("check", "--format", "json", "--output", str(path))
    assert done.exit_code == 1
    return path


def _environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, api: FakeGitHub, *, token: str = "t0ken"
) -> Path:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    summary = tmp_path / "summary.md"
    summary.touch()
    monkeypatch.setenv("GITHUB_API_URL", api.base)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/agents")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    return summary


def _comment(report: Path, name: str = ".") -> tuple[int, str]:
    from typer.testing import CliRunner

    from silo_regress.cli import load_app

    done = CliRunner().invoke(load_app(), ["comment", "--report", str(report), "--name", name])
    return done.exit_code, done.stdout


def test_the_comment_is_created_then_updated_in_place(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeGitHub()
    api.add("an unrelated comment")
    api.add(marker("other/project") + "\nanother project's comment")
    with serving(api):
        _environment(monkeypatch, tmp_path, api)
        code, out = _comment(report_file)
        assert code == 0, out
        assert "pull-request comment created" in out
        assert len(api.comments) == 3
        mine = api.comments[-1]
        assert mine["body"].startswith(marker(".") + "\n## silo-regress: ❌ failed")
        monkeypatch.setenv("GITHUB_SHA", "abcdef1234567890")
        code, out = _comment(report_file)
        assert "pull-request comment updated" in out
    assert len(api.comments) == 3  # the same comment, edited
    assert mine["body"].rstrip().endswith("Updated for commit abcdef123456.")
    assert api.comments[1]["body"].endswith("another project's comment")  # not touched
    methods = [method for method, _, _ in api.requests]
    assert methods.count("POST") == 1 and methods.count("PATCH") == 1
    assert {auth for _, _, auth in api.requests} == {"Bearer t0ken"}


def test_the_marker_is_found_on_a_later_page(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeGitHub(per_page=2)
    for n in range(5):
        api.add(f"chatter {n}")
    target = api.add(marker("agents/crm") + "\nold body")
    with serving(api):
        _environment(monkeypatch, tmp_path, api)
        code, out = _comment(report_file, name="agents/crm")
    assert code == 0 and "updated" in out
    gets = [path for method, path, _ in api.requests if method == "GET"]
    assert len(gets) == 3  # pages 1, 2, 3
    assert [c["id"] for c in api.comments if c["body"].startswith(marker("agents/crm"))] == [target]
    assert "old body" not in api.comments[-1]["body"]


def test_github_enterprise_is_reached_at_its_api_url(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeGitHub(prefix="/api/v3")
    with serving(api):
        _environment(monkeypatch, tmp_path, api)
        code, out = _comment(report_file)
    assert code == 0 and "created" in out
    assert all(path.startswith("/api/v3/repos/acme/agents/") for _, path, _ in api.requests)


def test_a_fork_token_puts_the_comment_in_the_job_summary_and_passes(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeGitHub(read_only=True)
    with serving(api):
        summary = _environment(monkeypatch, tmp_path, api)
        code, out = _comment(report_file)
    assert code == 0
    assert "HTTP 403" in out and "fork" in out
    text = summary.read_text()
    assert text.startswith("> silo-regress did not comment on the pull request: the token may")
    assert "The comment is here instead." in text
    assert marker(".") in text and "TASK-001 (crm-west)" in text
    assert api.comments == []


def test_no_token_and_no_pull_request_are_not_errors(
    report_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeGitHub()
    with serving(api):
        summary = _environment(monkeypatch, tmp_path, api, token="")
        code, out = _comment(report_file)
        assert code == 0 and "no token" in out
        assert "The comment is here instead." in summary.read_text()
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "nothing.json"))
        code, out = _comment(report_file)
    assert code == 0 and "does not run for a pull request" in out
    assert summary.read_text().count("The comment is here instead.") == 1  # a push adds none
    assert api.requests == []  # nothing asked of GitHub without a token or a pull request
