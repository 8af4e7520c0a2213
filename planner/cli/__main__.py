"""``python -m planner.cli``: the ``kvplan`` command, for environments without the console script."""

import sys

from planner.cli import main

sys.exit(main())
