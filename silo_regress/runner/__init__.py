"""Start Silo's command line for tasks, in parallel, and collect the runs it makes.

The parts, each with one job:

- :mod:`.plan`: which tasks to run and each rollout's command line;
- :mod:`.process`: one command in its own process group, with a deadline;
- :mod:`.attribution`: which new run directory belongs to which rollout (pure);
- :mod:`.classification`: what a rollout came to, from its exit and its run;
- :mod:`.batch`: a batch of rollouts under a thread pool, with typed events;
- :mod:`.stability`: whether a task's repeated rollouts agree.
"""

from __future__ import annotations

from silo_regress.runner.batch import Batch, Event, Exited, Started, execute
from silo_regress.runner.classification import SETUP_PROBLEMS, RolloutOutcome, RolloutState
from silo_regress.runner.plan import Rollout, Task, default_jobs, plan_tasks, prepare_rollouts
from silo_regress.runner.process import DEFAULT_KILL_GRACE, GroupExit, run_group
from silo_regress.runner.stability import Stability, Variation, assess

__all__ = [
    "DEFAULT_KILL_GRACE",
    "SETUP_PROBLEMS",
    "Batch",
    "Event",
    "Exited",
    "GroupExit",
    "Rollout",
    "RolloutOutcome",
    "RolloutState",
    "Stability",
    "Started",
    "Task",
    "Variation",
    "assess",
    "default_jobs",
    "execute",
    "plan_tasks",
    "prepare_rollouts",
    "run_group",
]
