"""The parameter table the compiled strategies read: one row per seat, plus greedy's defaults.

A global array would reach the kernels as a read-only array, a second type that makes numba
compile greedy twice; keeping the rollout row inside the table avoids that.

Each built-in strategy declares the layout of its row once (``*_PARAM_FIELDS``, one float64
per field, ``sim.core.layout``); its kernel reads ``params[row, P_NAME]`` at the bound offsets
and its ``compiled_params`` builds the row with ``param_row`` from the same declaration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from sim.core.layout import layout
from sim.errors import ConfigError

N_PARAMS = 17  # float64 parameters per row
PARAM_ROWS = 5  # rows 0-3: the seats; row 4: greedy's defaults for rollouts
ROLLOUT_ROW = 4
GREEDY_DEFAULTS = (0.40, 10, 0.10, 0.5, 10, 0)  # GreedyStrategy().compiled_params()


def param_table(rows: Sequence[Sequence[float]] = ()) -> np.ndarray:
    """``float64[PARAM_ROWS, N_PARAMS]`` with the seats' rows and the rollout row; wider when
    a row carries a tail after its ``N_PARAMS`` header (``learned``'s weights: a numpy row
    from a strategy with ``params_tail``; ``plugin.checked_params`` refuses longer rows from
    any other)."""
    width = max([N_PARAMS] + [len(r) for r in rows if isinstance(r, np.ndarray)])
    t = np.zeros((PARAM_ROWS, width), dtype=np.float64)
    for i, r in enumerate(rows):
        if len(r) > N_PARAMS and not isinstance(r, np.ndarray):  # never cut off silently
            raise ConfigError(f"seat {i}'s strategy passes {len(r)} parameters to its kernel; "
                              f"at most {N_PARAMS} reach it")
        t[i, :len(r)] = r
    t[ROLLOUT_ROW, :len(GREEDY_DEFAULTS)] = GREEDY_DEFAULTS
    return t


def param_row(fields: tuple[tuple[str, int], ...], values: Mapping[str, float]) -> list[float]:
    """A strategy's parameter row: ``values`` (one per field of the declared layout
    ``fields``, by field name) placed at their offsets."""
    off, n = layout(fields)
    if set(values) != set(off) or any(w != 1 for _, w in fields) or n > N_PARAMS:
        raise ValueError(f"parameter row {sorted(values)} does not match its layout "
                         f"{[f for f, _ in fields]} (one float64 each, {N_PARAMS} at most)")
    row: list[float] = [0.0] * n
    for name, v in values.items():
        row[off[name]] = v
    return row
