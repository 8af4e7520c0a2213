"""``python -m planner.cli``: the ``kvplan`` command, for environments without the console script."""

import sys

from planner.cli import main

if __name__ == "__main__":  # a spawned worker re-imports this module as __mp_main__: it must not run kvplan
    sys.exit(main())
