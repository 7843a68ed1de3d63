"""Accepted-variant fixtures: three agent outputs, and reading a check's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from silo_regress.canon.canonical import serialize
from support.silofixture import SiloProject, make_result

A = "I qualified the lead and logged a note."
B = "Lead qualified; note logged for the owner."
C = "Lead qualified; note logged for the owner!"  # one word away from B


def results(project: SiloProject, *args: str) -> tuple[int, list[dict[str, Any]]]:
    done = project.cli("check", "--format", "json", *args)
    return done.exit_code, json.loads(done.stdout)["results"]


def of(rows: list[dict[str, Any]], artifact: str = "result.json") -> dict[str, Any]:
    (row,) = [r for r in rows if r["artifact"] == artifact]
    return row


def variant_file(project: SiloProject, name: str, output: str) -> Path:
    path = project.baselines / name
    path.write_bytes(serialize(make_result(agent_output=output)))
    return path
