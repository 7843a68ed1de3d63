"""Silo's runs: found, read, cached, dated, and judged fresh or stale.

- :mod:`.derived`: which artifacts are derived rather than read, and from which run file;
- :mod:`.toolpath`: the derived ``tool-events.json``, read from ``trace.jsonl``;
- :mod:`.index`: run directories found, each assigned to its task, the newest picked;
- :mod:`.cache`: the run-index cache, an accelerator only;
- :mod:`.clock`: one run's wall-clock window, for the volatile scan;
- :mod:`.provenance`: what a run was made from, written beside it and read back;
- :mod:`.freshness`: whether a run was made from the inputs being checked.
"""
