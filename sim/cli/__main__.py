"""``python -m sim.cli``: the ``shuangkou`` command."""

import sys

from sim.cli import main

sys.exit(main())
