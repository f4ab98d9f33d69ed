"""The parameter table the compiled strategies read: one row per seat, plus greedy's defaults.

A global array would reach the kernels as a read-only array, a second type that makes numba
compile greedy twice; keeping the rollout row inside the table avoids that.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

N_PARAMS = 15  # float64 parameters per row
PARAM_ROWS = 5  # rows 0-3: the seats; row 4: greedy's defaults for rollouts
ROLLOUT_ROW = 4
GREEDY_DEFAULTS = (0.40, 10, 0.10, 0.5, 10, 0)  # GreedyStrategy().compiled_params()


def param_table(rows: Sequence[Sequence[float]] = ()) -> np.ndarray:
    """``float64[PARAM_ROWS, N_PARAMS]`` with the seats' rows and the rollout row."""
    t = np.zeros((PARAM_ROWS, N_PARAMS), dtype=np.float64)
    for i, r in enumerate(rows):
        if len(r) > N_PARAMS:  # never cut off silently
            from sim.errors import ConfigError

            raise ConfigError(f"seat {i}'s strategy passes {len(r)} parameters to its kernel; "
                              f"at most {N_PARAMS} reach it")
        t[i, :len(r)] = r
    t[ROLLOUT_ROW, :len(GREEDY_DEFAULTS)] = GREEDY_DEFAULTS
    return t
