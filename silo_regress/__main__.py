"""``python -m silo_regress``: the same entry point as the console script."""

import sys

from silo_regress.cli import main

sys.exit(main())
