"""Dispatch from a seat's strategy kind to its numba kernel, for the compiled deal loop.

Every compiled strategy kernel has the shape ``(st, u, rules, seat, params, buf) -> code``
(``params`` is the ``float64[4, N_PARAMS]`` table of all seats: a row view per call would cost
as much as the decision)
(codes of ``sim.engine.legal``; -1 passes at a show decision) and draws only from its seat's
streams, so a seat's choices never depend on which strategies sit elsewhere.
"""

from __future__ import annotations

from sim.jit import kernel
from strategies.random import random_decide

KIND_RANDOM = 0
N_PARAMS = 8  # float64 parameters per seat


@kernel
def decide(kind, params, st, u, rules, seat, buf):
    """The choice code of the compiled strategy ``kind`` for ``seat``."""
    if kind == KIND_RANDOM:
        return random_decide(st, u, seat, params[seat, 0], buf)
    return random_decide(st, u, seat, params[seat, 0], buf)
