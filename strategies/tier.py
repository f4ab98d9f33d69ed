"""Compiled strategies used from Python: ``choose`` runs the kernel on the observation.

The kernel sees the observation's masked state (``sim.view.mask_into``): the seat's own
hand and public knowledge only, with the strategy's own random streams restored. So a
compiled strategy behaves the same in both tiers — a test plays deals both ways and compares
the records — and a Python bot can call, say, greedy as a fallback.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.core import state as S
from sim.core.engine import legal
from sim.core.rng import STREAM_SEAT0, STREAM_STRATEGY0, stream_key
from sim.errors import StrategyError
from strategies.base import Strategy
from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, UINT_SCRATCH
from strategies.params import param_table


def new_scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(buf, fws, uws) scratch arrays for a compiled strategy's kernel."""
    return (np.zeros(INT_SCRATCH, dtype=np.int64), np.zeros(FLOAT_SCRATCH, dtype=np.float64),
            np.zeros(UINT_SCRATCH, dtype=np.uint64))


class CompiledStrategy(Strategy):
    """Base of the strategies that have a numba kernel (``compiled_kind``).

    A subclass runs its own kernel in ``kernel_decide`` (only that kernel compiles when a Python bot
    asks it); the compiled deal loops (``sim.loops.loop``) call the same kernel by
    ``compiled_kind``.
    """

    def kernel_decide(self, params: np.ndarray, st: np.ndarray, u: np.ndarray, rules: np.ndarray,
               seat: int, buf: np.ndarray, fws: np.ndarray,
               uws: np.ndarray) -> int:  # pragma: no cover - abstract
        """The choice code of this strategy's kernel for ``seat`` (``strategies.compiled``)."""
        raise NotImplementedError

    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        self.seat = seat
        self._streams = [[int(stream_key(np.uint64(seed), np.uint64(deal), np.uint64(s))), 0]
                         for s in (STREAM_SEAT0 + seat, STREAM_STRATEGY0 + seat)]

    def choose(self, obs: Any, legal_choices: list) -> Any:
        if self.oracle:
            raise StrategyError(f"strategy {self.spec()!r} sees every hand: it runs only in "
                                f"the compiled tier, not from an observation")
        if getattr(self, "_scratch", None) is None:
            self._scratch = new_scratch()
            self._params = param_table([self.compiled_params()] * 4)
        st, u = (a.copy() for a in obs.arrays())
        s = obs.seat
        for slot, (key, ctr) in zip((S.STREAM_SEAT + s, S.STREAM_SAMPLE + s), self._streams):
            u[S.U_KEY + slot] = key
            u[S.U_CTR + slot] = ctr
        code = int(self.kernel_decide(self._params, st, u, obs.rules.array(), s, *self._scratch))
        for i, slot in enumerate((S.STREAM_SEAT + s, S.STREAM_SAMPLE + s)):
            self._streams[i][1] = int(u[S.U_CTR + slot])
        m_st, m_u = obs.arrays()
        n = legal(m_st, m_u, self._scratch[0])
        codes = self._scratch[0][:n].tolist()
        if m_st[S.S_PHASE] == S.CALL:
            return None if code < 0 else legal_choices[1 + codes.index(code)]
        return legal_choices[codes.index(code)]
