"""Accepted variants: TASK~N baselines, matching any, the closest, and every bad layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.gitrepo import commit_all, repo_project
from support.silofixture import SiloProject, make_result
from support.variantkit import A, B, C, of, results, variant_file

from silo_regress.project.taskref import TaskRef
from silo_regress.reports.schema import load_report
from silo_regress.store.baselines import Baseline, baseline_relpath, parse_relpath

ARTIFACTS = ("result.json", "state-diff.json")


def two_variants(project: SiloProject) -> None:
    """TASK-002 with result.json variants A (1) and B (2), one state-diff."""
    project.add_run("TASK-002", result=make_result(agent_output=A))
    assert project.cli("record", "TASK-002").exit_code == 0
    project.add_run("TASK-002", result=make_result(agent_output=B))
    added = project.cli("record", "TASK-002", "--add-variant")
    assert added.exit_code == 0, added.output
    assert "  new       baselines/TASK-002~2.result.json" in added.stdout
    assert "  unchanged baselines/TASK-002.state-diff.json" in added.stdout


# --- naming ---------------------------------------------------------------------------


def test_variant_names() -> None:
    ref = TaskRef("TASK-002", "crm-west")
    assert baseline_relpath(ref, "result.json") == "crm-west/TASK-002.result.json"
    assert baseline_relpath(ref, "result.json", 3) == "crm-west/TASK-002~3.result.json"
    found = parse_relpath("crm-west/TASK-002~3.result.json", ARTIFACTS)
    assert found == Baseline(ref, "result.json", "crm-west/TASK-002~3.result.json", 3)
    for name, problem in (
        ("TASK-002~1.result.json", "'~1' is not a variant name"),
        ("TASK-002~02.result.json", "'~02' is not a variant number"),
        ("TASK-002~x.result.json", "'~x' is not a variant number"),
        ("TASK-002~.result.json", "'~' is not a variant number"),
    ):
        misnamed = parse_relpath(name, ARTIFACTS)
        assert misnamed is not None and misnamed.ref == TaskRef("TASK-002")
        assert misnamed.name_problem is not None and misnamed.name_problem.startswith(problem)
    # A task id never holds a "~": the name is a misnamed variant of TA, never skipped.
    misnamed = parse_relpath("TA~SK~2.result.json", ARTIFACTS)
    assert misnamed is not None and misnamed.ref == TaskRef("TA")
    assert misnamed.name_problem == "'~SK~2' is not a variant number (variants are ~2, ~3, ...)"


def test_a_tilde_is_refused_in_task_ids_and_environments(project: SiloProject) -> None:
    for ref in ("TASK~2", "crm~west/TASK-002"):
        done = project.cli("record", ref)
        assert done.exit_code == 3
        assert "is refused: it contains '~', which names accepted variants" in done.stderr
    project.add_run("TASK~2", name="run_tilde")
    done = project.cli("status")
    assert "run_tilde: skipped, run.json taskId 'TASK~2' is refused: it contains '~'" in (
        done.stderr + done.stdout
    )


# --- judging --------------------------------------------------------------------------


def test_a_run_equal_to_any_variant_matches_and_says_which(project: SiloProject) -> None:
    two_variants(project)
    code, rows = results(project)
    assert code == 0
    assert of(rows)["status"] == "match" and of(rows)["variant"] == 2
    assert of(rows)["baseline"] == "baselines/TASK-002~2.result.json"
    assert of(rows, "state-diff.json")["variant"] == 1  # the other artifact has one variant
    project.add_run("TASK-002", result=make_result(agent_output=A))
    code, rows = results(project)
    assert code == 0 and of(rows)["variant"] == 1


def test_a_new_behaviour_is_changed_against_the_closest_variant(project: SiloProject) -> None:
    two_variants(project)
    project.add_run("TASK-002", result=make_result(agent_output=C, reward=1))
    code, rows = results(project)
    assert code == 1
    row = of(rows)
    assert row["status"] == "changed" and row["variant"] == 2
    assert row["baseline"] == "baselines/TASK-002~2.result.json"
    assert row["changes"] == [{"path": "/agentOutput", "baseline": B, "run": C}]
    assert row["detail"] == "matches none of 2 accepted variants; the closest is variant 2"
    text = project.cli("check").stdout
    assert "closest is variant 2" in text and "baselines/TASK-002~2.result.json" in text
    # Fewest changed paths first: a run that also moved the reward is closer to
    # the variant whose wording it kept.
    project.add_run("TASK-002", result=make_result(agent_output=A, reward=0.5))
    _, rows = results(project)
    assert (of(rows)["variant"], [c["path"] for c in of(rows)["changes"]]) == (1, ["/reward"])


def test_record_resets_to_one_variant_and_add_variant_keeps_them(project: SiloProject) -> None:
    two_variants(project)
    again = project.cli("record", "TASK-002", "--add-variant")  # the newest run is variant 2
    assert again.exit_code == 0
    assert "  unchanged baselines/TASK-002~2.result.json" in again.stdout
    assert sorted(project.baseline_bytes()) == [
        ".silo-regress-format",
        "TASK-002.result.json",
        "TASK-002.state-diff.json",
        "TASK-002~2.result.json",
    ]
    reset = project.cli("record", "TASK-002")
    assert reset.exit_code == 0, reset.output
    assert "  removed   baselines/TASK-002~2.result.json" in reset.stdout
    assert "TASK-002~2.result.json" not in project.baseline_bytes()
    recorded = json.loads(project.baseline_bytes()["TASK-002.result.json"])
    assert recorded["agentOutput"] == B  # the newest run, now the only variant


def test_status_counts_variants(project: SiloProject) -> None:
    two_variants(project)
    lines = project.cli("status").stdout.splitlines()
    (row,) = [line for line in lines if line.startswith("TASK-002")]
    assert " result.json: 2 variants, state-diff.json " in row


def test_an_eleventh_variant_is_refused(project: SiloProject) -> None:
    project.add_run("TASK-002", result=make_result(agent_output="v1"))
    assert project.cli("record", "TASK-002").exit_code == 0
    for n in range(2, 11):
        variant_file(project, f"TASK-002~{n}.result.json", f"v{n}")
    before = project.baseline_bytes()
    project.add_run("TASK-002", result=make_result(agent_output="v11"))
    done = project.cli("record", "TASK-002", "--add-variant")
    assert done.exit_code == 3
    assert "baselines/TASK-002.result.json: already has 10 accepted variants" in done.stderr
    assert project.baseline_bytes() == before
    variant_file(project, "TASK-002~11.result.json", "v11")
    _, rows = results(project)
    assert of(rows)["status"] == "not-canonical"
    assert "11 accepted variants, more than 10" in of(rows)["detail"]


# --- bad layouts: each a named verdict, and fmt repairs what it can ------------------------


@pytest.mark.parametrize(
    ("files", "detail"),
    [
        (
            {"TASK-002~2.result.json": B, "TASK-002~4.result.json": C},
            "baselines/TASK-002.result.json: variants are numbered 1, 2, 4, with no variant 3",
        ),
        (
            {"TASK-002~2.result.json": A},
            "baselines/TASK-002~2.result.json is identical to baselines/TASK-002.result.json",
        ),
        (
            {"TASK-002~02.result.json": B},
            "baselines/TASK-002~02.result.json: '~02' is not a variant number",
        ),
        (
            {"TASK-002~1.result.json": B},
            "baselines/TASK-002~1.result.json: '~1' is not a variant name",
        ),
    ],
    ids=["gap", "copy", "leading-zero", "tilde-one"],
)
def test_bad_layouts_are_not_canonical_and_fmt_repairs_them(
    project: SiloProject, files: dict[str, str], detail: str
) -> None:
    project.add_run("TASK-002", result=make_result(agent_output=A))
    assert project.cli("record", "TASK-002").exit_code == 0
    for name, output in files.items():
        variant_file(project, name, output)
    code, rows = results(project)
    assert code == 1
    assert of(rows)["status"] == "not-canonical"
    assert of(rows)["detail"].startswith(detail)
    distinct = {json.loads(d)["agentOutput"] for d in _variant_bytes(project)}
    checked = project.cli("fmt", "--check")
    assert checked.exit_code == 1 and "variants        " in checked.stdout
    fixed = project.cli("fmt")
    assert fixed.exit_code == 0, fixed.output
    assert "renumbered      " in fixed.stdout
    after = _variant_bytes(project)
    assert {json.loads(d)["agentOutput"] for d in after} == distinct  # nothing lost
    names = sorted(n for n in project.baseline_bytes() if n.endswith(".result.json"))
    assert names == ["TASK-002.result.json"] + [
        f"TASK-002~{n}.result.json" for n in range(2, len(distinct) + 1)
    ]
    assert project.cli("fmt", "--check").exit_code == 0
    assert project.cli("check").exit_code == 0  # the newest run is A, variant 1


def _variant_bytes(project: SiloProject) -> list[bytes]:
    return [d for n, d in project.baseline_bytes().items() if n.endswith(".result.json")]


def test_a_hand_edited_variant_is_named(project: SiloProject) -> None:
    two_variants(project)
    path = project.baselines / "TASK-002~2.result.json"
    path.write_bytes(path.read_bytes().replace(b"\n  ", b"\n    "))
    code, rows = results(project)
    assert code == 1
    assert of(rows)["status"] == "not-canonical"
    assert of(rows)["detail"] == (
        "baselines/TASK-002~2.result.json is not in canonical form; "
        "run `silo-regress fmt` to rewrite it"
    )
    assert project.cli("fmt").exit_code == 0
    assert project.cli("check").exit_code == 0


def test_variants_of_one_artifact_only(project: SiloProject) -> None:
    # result.json has two variants, state-diff.json one: each artifact is judged alone.
    two_variants(project)
    project.add_run(
        "TASK-002",
        result=make_result(agent_output=A),
        state_diff={"scalars": [], "collections": {"contacts": {"added": ["CON-1"]}}},
    )
    code, rows = results(project)
    assert code == 1
    assert (of(rows)["status"], of(rows)["variant"]) == ("match", 1)
    other = of(rows, "state-diff.json")
    assert (other["status"], other["variant"]) == ("changed", 1)


def test_the_json_report_keeps_the_variant_through_merge(project: SiloProject) -> None:
    two_variants(project)
    done = project.cli("check", "--format", "json")
    report = load_report(done.stdout.encode(), source="report.json")
    assert {o.artifact: o.variant for o in report.outcomes} == {
        "result.json": 2,
        "state-diff.json": 1,
    }
    bad = done.stdout.replace('"variant": 2', '"variant": "two"')
    with pytest.raises(Exception, match=r"variant must be a variant number"):
        load_report(bad.encode(), source="report.json")


# --- git: --against, the hook's index, diff --from/--to, log ---------------------------------


def test_variants_in_git(tmp_path: Path) -> None:
    project = repo_project(tmp_path / "repo")
    two_variants(project)
    commit_all(project, "Accept two behaviours")
    (project.baselines / "TASK-002~2.result.json").unlink()
    # The working tree lost variant 2; the commit still has it.
    assert of(results(project)[1])["status"] == "changed"
    code, rows = results(project, "--against", "HEAD")
    assert code == 0 and of(rows)["variant"] == 2
    staged = project.cli("check", "--staged")
    assert staged.exit_code == 0, staged.output  # the index still holds it too
    commit_all(project, "Back to one behaviour")
    shown = project.cli("diff", "--from", "HEAD~1", "--to", "HEAD")
    assert shown.exit_code == 0, shown.output
    assert "TASK-002  result.json (variant 2)  removed" in shown.stdout
    log = project.cli("log", "TASK-002")
    assert log.exit_code == 0, log.output
    assert "Back to one behaviour" in log.stdout and "Accept two behaviours" in log.stdout


def test_shards_keep_a_tasks_variants_together(project: SiloProject) -> None:
    two_variants(project)
    for task in ("TASK-001", "TASK-003", "TASK-004"):
        project.add_run(task)
        assert project.cli("record", task).exit_code == 0
    seen = []
    for k in (1, 2):
        _, rows = results(project, "--shard", f"{k}/2")
        seen += [(r["task"], r["artifact"], r["variant"]) for r in rows]
    assert sorted(seen) == sorted(
        [(t, a, 1) for t in ("TASK-001", "TASK-003", "TASK-004") for a in ARTIFACTS]
        + [("TASK-002", "result.json", 2), ("TASK-002", "state-diff.json", 1)]
    )


def test_fmt_check_on_staged_paths_names_a_gap(project: SiloProject) -> None:
    # The pre-commit fmt hook passes the staged files: a gap among them is found too.
    project.add_run("TASK-002", result=make_result(agent_output=A))
    assert project.cli("record", "TASK-002").exit_code == 0
    variant_file(project, "TASK-002~3.result.json", B)
    done = project.cli("fmt", "--check", str(project.baselines / "TASK-002~3.result.json"))
    assert done.exit_code == 1
    assert (
        "variants        baselines/TASK-002.result.json: variants are numbered 1, 3, "
        "with no variant 2" in done.stdout
    )
    untouched = project.cli("fmt", "--check", str(project.baselines / "TASK-002.state-diff.json"))
    assert untouched.exit_code == 0, untouched.output
