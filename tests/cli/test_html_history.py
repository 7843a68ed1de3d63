"""The review page's history chart: pass rate and mean reward per commit, from git."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from support.gitrepo import commit_all, repo_project
from support.reportfixture import history_project
from support.silofixture import SiloProject, git, make_result


def _page(project: SiloProject, out: Path, *args: str) -> str:
    result = project.cli("check", "--format", "html", "--output", str(out), *args)
    assert result.exit_code == 1, result.output
    assert "error" not in result.stderr
    return out.read_text(encoding="utf-8")


class _Text(HTMLParser):
    """Text of the elements with an id, and every tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        if tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_the_chart_shows_pass_rate_and_reward_per_commit(tmp_path: Path) -> None:
    project = history_project(tmp_path / "repo")
    html = _page(project, tmp_path / "report.html")
    figure = html.split('<figure class="history"')[1].split("</figure>")[0]
    assert "over the last 3 commits that changed baselines" in figure  # not the unrelated one
    parser = _Text()
    parser.feed(html.split("<figure")[1])
    table = parser.rows[
        parser.rows.index(["Commit", "Date", "Subject", "Tasks", "Pass rate", "Mean reward"]) + 1 :
    ][:3]
    assert [row[1:] for row in table] == [  # newest first, as git log reads
        ["2026-03-04", "Lower reward for TASK-002", "3", "67% (2 of 3)", "0.75"],
        ["2026-03-02", "Stricter <stage> check", "3", "67% (2 of 3)", "0.833"],
        ["2026-03-01", "Record the tasks", "3", "100% (3 of 3)", "1"],
    ]
    assert "Stricter &lt;stage&gt; check" in figure  # a subject is text, never markup
    # accessible: a labelled image with a description of the trend, and the table
    svg = next(a for t, a in parser.tags if t == "svg")
    assert svg["role"] == "img" and svg["aria-labelledby"] == "history-title history-desc"
    desc = re.search(r'<desc id="history-desc">(.*?)</desc>', figure)
    assert desc and "pass rate 100% (3 of 3) to 67% (2 of 3), mean reward 1 to 0.75" in desc[1]
    assert '<title id="history-title">' in figure
    # two lines of three points each, the reward line told apart by its dashes
    lines = re.findall(r'<path class="line (\w+)" d="([^"]+)"', figure)
    assert [(kind, d.count("L")) for kind, d in lines] == [("pass", 2), ("reward", 2)]
    assert figure.count('class="dot pass"') == figure.count('class="dot reward"') == 3
    assert "stroke-dasharray" in html and "--chart-pass:" in html
    # nothing is loaded from anywhere
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_the_chart_follows_the_checked_tasks(tmp_path: Path) -> None:
    project = history_project(tmp_path / "repo")
    html = _page(project, tmp_path / "one.html", "TASK-001", "TASK-003")
    parser = _Text()
    parser.feed(html.split("<figure")[1])
    rates = [row[4] for row in parser.rows if len(row) == 6 and row[0] != "Commit"]
    assert rates == ["50% (1 of 2)", "50% (1 of 2)", "100% (2 of 2)"]


def _assert_no_chart(project: SiloProject, out: Path, *, env: dict[str, str] | None = None) -> None:
    command = [str(Path(sys.executable).with_name("silo-regress")), "check", "--format", "html"]
    done = subprocess.run(
        [*command, "--output", str(out)],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""  # no chart is not worth a word
    html = out.read_text(encoding="utf-8")
    assert 'id="regressions"' in html and "<figure" not in html and "<svg" not in html


def test_no_chart_outside_git_with_one_commit_or_a_shallow_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    project = history_project(tmp_path / "repo")
    # a shallow clone, as CI checks out by default: one commit, so no history to draw
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", (tmp_path / "repo").as_uri(), str(clone))
    shutil.copytree(project.runs_dir, clone / ".silo" / "runs")
    shallow = SiloProject(root=clone, runs_dir=clone / ".silo" / "runs")
    _assert_no_chart(shallow, tmp_path / "shallow.html")
    # no repository at all
    shutil.rmtree(project.root / ".git")
    _assert_no_chart(project, tmp_path / "plain.html")
    # a repository without commits, then one whose baselines were committed once
    git(project.root, "init", "-q", "-b", "main")
    _assert_no_chart(project, tmp_path / "empty.html")
    commit_all(project, "Everything at once")
    _assert_no_chart(project, tmp_path / "once.html")


def test_no_git_on_path_means_no_chart_and_no_error(tmp_path: Path) -> None:
    project = history_project(tmp_path / "repo")
    bin_dir = tmp_path / "bin"  # python only: the check runs, git is not there
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    _assert_no_chart(project, tmp_path / "nogit.html", env={"PATH": str(bin_dir)})


def test_only_the_html_page_reads_history_and_never_imports_gitpython(tmp_path: Path) -> None:
    project = history_project(tmp_path / "repo")
    args = [sys.executable, "-X", "importtime", "-m", "silo_regress", "check", "--format"]
    for fmt in ("html", "json"):
        done = subprocess.run(
            [*args, fmt], cwd=project.root, capture_output=True, text=True, check=False
        )
        assert done.returncode == 1
        imported = {
            line.rsplit("|", 1)[1].strip().split(".")[0]
            for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line
        }
        assert "silo_regress" in imported and "git" not in imported, fmt
        assert ("<svg" in done.stdout) is (fmt == "html")


def test_the_chart_reads_baselines_of_qualified_refs(tmp_path: Path) -> None:
    """TASK-009 in two environments: its baselines are crm-east/ and crm-west/ files."""
    project = repo_project(tmp_path / "repo")
    project.add_run("TASK-009", env="crm-west")
    project.add_run("TASK-009", env="crm-east")
    assert project.cli("record", "--all").exit_code == 0
    assert (project.baselines / "crm-east" / "TASK-009.result.json").is_file()
    commit_all(project, "Record both environments", date="2026-03-01T10:00:00Z")
    project.add_run("TASK-009", env="crm-east", result=make_result(passed=False, reward=0.25))
    assert project.cli("record", "crm-east/TASK-009").exit_code == 0
    commit_all(project, "crm-east fails now", date="2026-03-02T10:00:00Z")
    project.add_run("TASK-009", env="crm-west", result=make_result(passed=False, reward=0))
    html = _page(project, tmp_path / "report.html")
    parser = _Text()
    parser.feed(html.split("<figure")[1])
    rows = [row[3:] for row in parser.rows if len(row) == 6 and row[0] != "Commit"]
    assert rows == [["2", "50% (1 of 2)", "0.625"], ["2", "100% (2 of 2)", "1"]]


def test_a_malformed_tree_object_is_a_git_error_not_a_wrong_chart() -> None:
    from silo_regress.errors import GitError
    from silo_regress.vcs.gitio import _tree_entries

    sha = bytes(range(20))
    good = b"100644 a.json\0" + sha + b"40000 env\0" + sha + b"120000 link\0" + sha
    assert _tree_entries(good, hash_size=20) == {b"a.json": sha, b"env/": sha}
    between = good[:34] + b"xx" + good[34:]  # bytes no entry accounts for
    for bad in (good[:-3], between, b"junk" + good):
        with pytest.raises(GitError, match="malformed tree object"):
            _tree_entries(bad, hash_size=20)


def test_merged_shards_draw_the_same_chart_as_one_check(tmp_path: Path) -> None:
    project = history_project(tmp_path / "repo")
    reports = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        done = project.cli("check", "--shard", f"{k}/2", "--format", "json", "-o", str(path))
        assert done.exit_code in (0, 1), done.output
        reports.append(str(path))
    whole = project.cli("check", "--format", "html").stdout
    merged = project.cli("merge", *reports, "--format", "html")
    assert merged.exit_code == 1 and merged.stderr == ""
    assert '<figure class="history"' in whole
    # The next steps differ by design: check knows its -C DIR, merge (run anywhere) not.
    assert _without_next_steps(merged.stdout) == _without_next_steps(whole)
    assert 'id="next-steps"' in merged.stdout


def _without_next_steps(page: str) -> str:
    start = page.index('<section id="next-steps"')
    return page[:start] + page[page.index("</section>", start) :]


def test_rewards_above_one_set_the_scale_and_unknown_values_leave_gaps() -> None:
    from datetime import date

    from silo_regress.render.chart import HEIGHT, PAD, chart_html
    from silo_regress.reports.history import ScoreHistory, ScorePoint
    from silo_regress.vcs.gitio import CommitInfo

    def point(n: int, *, passed: int, judged: int, reward: float | None) -> ScorePoint:
        commit = CommitInfo(f"{n:040x}", f"{n:07x}", date(2026, 3, n), "A", f"c{n}", None, False)
        return ScorePoint(commit, tasks=2, passed=passed, judged=judged, mean_reward=reward)

    history = ScoreHistory(
        (
            point(1, passed=2, judged=2, reward=2.0),
            point(2, passed=0, judged=0, reward=None),  # no task says whether it passes
            point(3, passed=1, judged=2, reward=1.0),
        )
    )
    html = "\n".join(chart_html(history))
    assert '<div class="axis-y" aria-hidden="true"><span>2</span><span>1</span>' in html
    lines = dict(re.findall(r'<path class="line (\w+)" d="([^"]+)"', html))
    middle = PAD + (HEIGHT - 2 * PAD) / 2  # a pass rate of 100% sits at 1, half way up
    assert (
        lines["pass"]
        == f"M{PAD:.1f} {middle:.1f} L{600 - PAD:.1f} {PAD + (HEIGHT - 2 * PAD) * 0.75:.1f}"
    )
    assert lines["reward"].startswith(f"M{PAD:.1f} {PAD:.1f} L")  # reward 2 at the top
    assert html.count('class="dot pass"') == 2
    assert "<td>unknown</td><td>unknown</td>" in html
