"""The JSON report's one schema: what check writes, load_report reads back to the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import recorded, rerun

from silo_regress.render.machine import render_json
from silo_regress.reports.schema import REPORT_VERSION, load_report


def test_a_report_read_back_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = recorded(tmp_path / "p", tasks=("TASK-001", "TASK-002", "TASK-003"))
    # From inside the project: a report keeps no record of where check was run, so the
    # next steps it derives name no -C either way.
    monkeypatch.chdir(project.root)
    rerun(project, "TASK-002", reward=0)  # a regression, with notes and changes

    for source in ((), ("--against", "HEAD"), ("--staged",)):
        written = project.cli("check", "--format", "json", *source)
        assert written.exit_code == 1, written.output
        report = load_report(written.stdout.encode(), source="report.json")
        assert render_json(report) == written.stdout
        assert f'"version": {REPORT_VERSION},' in written.stdout
        assert any(o.behaviour for o in report.outcomes)
