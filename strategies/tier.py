"""Compiled strategies used from Python: ``choose`` runs the kernel on the observation.

The kernel sees the observation's masked state (``sim.deal.masked_state``): the seat's own
hand and public knowledge only, with the strategy's own random streams restored. So a
compiled strategy behaves the same in both tiers — a test plays deals both ways and compares
the records — and a Python bot can call, say, greedy as a fallback.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.engine import CALL, S_PHASE, U_CTR, U_KEY, legal
from sim.errors import StrategyError
from sim.rng import stream_key
from strategies.base import Strategy


class CompiledStrategy(Strategy):
    """Base of the strategies that have a numba kernel (``compiled_kind``)."""

    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        self.seat = seat
        self._streams = [[int(stream_key(np.uint64(seed), np.uint64(deal), np.uint64(s))), 0]
                         for s in (1 + seat, 16 + seat)]

    def choose(self, obs: Any, legal_choices: list) -> Any:
        if self.oracle:
            raise StrategyError(f"strategy {self.spec()!r} sees every hand: it runs only in "
                                f"the compiled tier, not from an observation")
        from strategies.compiled import decide, new_scratch
        from strategies.params import param_table

        if getattr(self, "_scratch", None) is None:
            self._scratch = new_scratch()
            self._params = param_table([self.compiled_params()] * 4)
        st, u = (a.copy() for a in obs.arrays())
        s = obs.seat
        for slot, (key, ctr) in zip((1 + s, 5 + s), self._streams):
            u[U_KEY + slot] = key
            u[U_CTR + slot] = ctr
        code = int(decide(self.compiled_kind, self._params, st, u, obs.rules.array(), s,
                          *self._scratch))
        for i, slot in enumerate((1 + s, 5 + s)):
            self._streams[i][1] = int(u[U_CTR + slot])
        m_st, m_u = obs.arrays()
        n = legal(m_st, m_u, self._scratch[0])
        codes = self._scratch[0][:n].tolist()
        if m_st[S_PHASE] == CALL:
            return None if code < 0 else legal_choices[1 + codes.index(code)]
        return legal_choices[codes.index(code)]
