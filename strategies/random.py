"""The random strategy: uniform legal plays, random shows and give-backs (docs/engine.md).

It exists twice with the same draws: ``random_decide`` for the compiled deal loop and
``RandomStrategy`` for the Python step API; a test plays deals both ways and compares records.
"""

from __future__ import annotations

import numpy as np

import sim.view as view
from sim.core import state as S
from sim.core.bits import popcount, select
from sim.core.engine import giveback_set, legal, play_set
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import set_count, show_mask
from sim.core.movegen import set_kth_inline as set_kth
from sim.core.rng import STREAM_SEAT0, Stream, bounded
from sim.core.state import next_draw
from strategies.base import Strategy, param
from strategies.kinds import KIND_RANDOM
from strategies.params import param_row

_S32 = np.uint64(32)
# the params row (strategies.params); the compiled loops pass ``params[seat, P_SHOW_PROB]`` as
# ``show_prob``
RANDOM_PARAM_FIELDS = (("P_SHOW_PROB", 1),)
_P, N_RANDOM_PARAMS = layout(RANDOM_PARAM_FIELDS)
P_SHOW_PROB = _P["P_SHOW_PROB"]


@kernel(inline="always")
def random_giveback(st, u, seat):
    """``random_decide`` at a give-back: uniform over the C(27, 2)-odd give-backs (R8),
    counted and indexed like the plays (no list). The compiled deal loops call it alone for
    a random seat's give-back, so a loop of greedy and random seats needs no dispatch."""
    mode, m1, m2 = giveback_set(st, u, seat)
    return set_kth(mode, m1, m2, bounded(next_draw(u, S.STREAM_SEAT + seat),
                                         set_count(mode, m1, m2)))


@kernel
def random_decide(st, u, seat, show_prob, buf):
    """Choice code for ``seat``: at a show decision pass (-1) or a random show, else uniform."""
    stream = S.STREAM_SEAT + seat
    if view.phase(st) == S.PLAY:  # count and index the legal set, no list needed
        mode, m1, m2 = play_set(st, u, seat)
        n = set_count(mode, m1, m2)
        if n == 1:
            return set_kth(mode, m1, m2, 0)
        return set_kth(mode, m1, m2, bounded(next_draw(u, stream), n))
    if view.phase(st) == S.GIVEBACK:
        return random_giveback(st, u, seat)
    if view.phase(st) == S.CALL:  # the showable ids, lowest first as legal() lists them (R6)
        m = show_mask(view.hand_once(u, seat), view.hand_twice(u, seat), view.shown_card(st))
        r = next_draw(u, stream)
        if (r >> _S32) < np.uint64(show_prob * 4294967296.0):
            return select(m, bounded(next_draw(u, stream), popcount(m)))
        return np.int64(-1)
    n = legal(st, u, buf)
    if n == 1:
        return buf[0]
    return buf[bounded(next_draw(u, stream), n)]


# ``random_decide`` inlined into the compiled deal loop (``sim.loops.loop.finish_deal``), its
# hot path
random_decide_inline = kernel(inline="always")(getattr(random_decide, "py_func", random_decide))

class RandomStrategy(Strategy):
    """Uniformly random legal plays; at a calling chance shows a random legal pair with
    probability ``show_prob``; gives back two random cards after an override."""

    name = "random"
    show_prob = param(0.25, float, lo=0.0, hi=1.0, doc="chance of showing when a show is legal")
    compiled_kind = KIND_RANDOM

    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        self.seat = seat
        self._rng = Stream(seed, deal, STREAM_SEAT0 + seat)

    def choose(self, obs, legal):
        rng = self._rng
        if obs.kind == "show":  # legal[0] is None (pass), the shows follow
            if (rng.next() >> 32) < int(self.show_prob * 4294967296.0):
                return legal[1 + rng.bounded(len(legal) - 1)]
            return None
        if len(legal) == 1:
            return legal[0]
        return legal[rng.bounded(len(legal))]

    def compiled_params(self) -> list[float]:
        return param_row(RANDOM_PARAM_FIELDS, {"P_SHOW_PROB": self.show_prob})
