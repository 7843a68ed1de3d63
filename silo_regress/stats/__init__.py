"""Statistics on pass counts of repeated rollouts: the math of the ``stats`` gate.

Pure functions on integer counts, written on :mod:`math` alone: ``scipy.stats`` takes
over a second to import and is a test-only oracle here. Nothing of this package is
imported on the path of an ``exact`` check (tests/integration/test_repository.py).

:mod:`.changepoint` is ``bisect``'s engine: the commit where a pass rate changed.
"""
