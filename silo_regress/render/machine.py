"""The JSON report of DESIGN.md: one document, exact enough for scripts to act on.

Its schema (keys, version, notes) is :mod:`silo_regress.reports.schema`, which ``merge``
reads back; this module words the ``behaviour`` lines and prints the document.
"""

from __future__ import annotations

import json
from typing import Any

from silo_regress.judging.outcome import Report
from silo_regress.render.wording import words
from silo_regress.reports.schema import report_json


def render_json(report: Report) -> str:
    return dumps(report_json(report, word=words))


def dumps(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
