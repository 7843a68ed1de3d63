"""Verdicts: which tasks to compare, each baseline against its run, and the typed result.

- :mod:`.targets`: baselines grouped by task, each mapped to its runs;
- :mod:`.direction`: which way a changed task moved, from the scores of its result.json;
- :mod:`.remedies`: what a failing verdict's next step needs (config lines, stale inputs);
- :mod:`.outcome`: the typed result model (verdicts, outcomes, reports) every renderer reads;
- :mod:`.context`: one target's run, settings and paths, and the one outcome factory;
- :mod:`.comparison`: one baseline against one artifact: the verdict and its outcome;
- :mod:`.plainmatch`: the fast lane, targets whose every artifact plainly matches
  (``check(..., fast_lane=False)`` or ``SILO_REGRESS_FAST_LANE=0`` turns it off);
- :mod:`.refusals`: the verdict of a file named like a baseline that names no task;
- :mod:`.judge`: the newest run of each target against its baselines;
- :mod:`.repeats`: one report from N judged rollouts of each task;
- :mod:`.coverage`: what a check did not judge (runs, artifacts, environments);
- :mod:`.sharding`: the checked tasks split into N shards for a CI matrix;
- :mod:`.units`: the plan of units (one rollout each) split over N workers.
"""
