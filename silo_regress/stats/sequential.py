"""A task's decision as 0.3's sequential mode recorded it, read back from reports.

0.3's per-task Wald test (``--repeat-until-decided``) is replaced in 0.4 by the
sequential check of :mod:`silo_regress.stats.groupsequential`, which decides the suite
at each look. Reports written by 0.3 still carry its per-task decisions as reasons
(``decided-sequentially``, ``undecided``), so ``merge`` reads them back as these values.
"""

from __future__ import annotations

import enum


class Decision(enum.StrEnum):
    REGRESSION = "regression"
    STABLE = "stable"
    CONTINUE = "continue"
