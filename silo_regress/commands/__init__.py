"""Use cases: each command's flow and policy, below the CLI, driven by tests without typer.

A module here runs one command from typed options to a typed result: what it plans,
starts, judges and decides, and when it stops. It may call every layer below it (the
runner, the judges, the recorders, the reports), never prints and never picks an exit
code: ``cli/`` parses the command line, calls one use case, renders its result and maps
it to an exit code (DESIGN.md, "Refinement in 0.4"). Progress that a person watches
live reaches the CLI through a callback, as typed events.

- :mod:`.bisecting`: ``bisect``: which commit made a task worse, a round at a time.
- :mod:`.sources`, :mod:`.rollouts`, :mod:`.rounds`, :mod:`.checking`: ``check``, the
  rollouts it starts and its rounds.
- :mod:`.initialising`: ``init``: the files it sets up, and what its snippets need.
- :mod:`.recording`: ``record --repeat``: rollouts, agreement, and what the gate records.
- :mod:`.running`: ``run``: rollouts started, and whether each task's repeats agree.
- :mod:`.reviewing`: ``review``: the queue, and what accepting, rejecting and undoing an
  item settle.
- :mod:`.pullcomment`: ``comment``: the project's sticky pull-request comment, found and
  edited in place.
- :mod:`.unitwork`: ``check --run --unit I/N``, a worker's units run and reported.
- :mod:`.mergedriver`: git's merge driver: a baseline merged by JSON key, a tally never.
- :mod:`.resolution`: ``fmt --resolve``: conflicted baselines merged from their markers.
"""
