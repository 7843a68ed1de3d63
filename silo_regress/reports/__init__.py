"""Reports beyond one check: status rows, shard reports merged, and behaviour across git history.

- :mod:`.overview`: one row per task for ``status``;
- :mod:`.schema`: the JSON report, written and read back: keys, version, notes;
- :mod:`.merger`: the reports of shard jobs merged into one;
- :mod:`.statsmerge`: each shard's stats read back, its policy validated, judged again;
- :mod:`.unitreport`: a ``check --run --unit`` worker's report, written and read back;
- :mod:`.unitmerge`: unit reports pooled into tallies and judged as one suite;
- :mod:`.reconstruction`: a merged report's line diffs, rebuilt from its baselines;
- :mod:`.history`: baselines across commits, and a task's log;
- :mod:`.bisection`: what ``bisect`` found, and ``blame`` read from git history.
"""
