"""The pairs with the largest swings: ``Swings`` (part of ``sim.analysis.stats``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

# --- swing deals ----------------------------------------------------------------------------
SWINGS_KEPT = 10  # swing deals each matchup keeps (shuangkou replay RESULTS --swings N, N <= it)
SWINGS_SHOWN = 3  # of them, in the summary and report.html, records kept in swings.jsonl


class Swings:
    """The duplicate pairs with the largest swings, in a total order: mergeable and exact.

    A pair (deal ``d``) holds ``a0`` and ``a1``, side A's per-player settlement at the table
    where A sits in seats 0 and 2 (orientation 0) and at the table where it sits in 1 and 3;
    twice the pair's result is ``a0 + a1`` and its *swing* is ``|a0 + a1| / 2`` points per deal
    per player: how far the same cards, teams swapped, ended from a tie. Kept: the ``k`` pairs
    first by (swing descending, deal ascending), so chunks merged in any grouping or order keep
    the same list (``--jobs``, chunk size and ``--resume`` do not change it).
    """

    __slots__ = ("a0", "a1", "deals", "k")

    def __init__(self, k: int = SWINGS_KEPT, deals: ArrayLike = (), a0: ArrayLike = (),
                 a1: ArrayLike = ()) -> None:
        self.k = int(k)
        self.deals = np.asarray(deals, dtype=np.int64).reshape(-1)
        self.a0 = np.asarray(a0, dtype=np.int64).reshape(-1)
        self.a1 = np.asarray(a1, dtype=np.int64).reshape(-1)
        self._keep()

    def _keep(self) -> None:
        size = np.abs(self.a0 + self.a1)
        if size.size > 4 * self.k > 0:  # only pairs at least as large as the k-th can stay
            big = size >= np.partition(size, size.size - self.k)[size.size - self.k]
            self.deals, self.a0, self.a1, size = (self.deals[big], self.a0[big],
                                                  self.a1[big], size[big])
        order = np.lexsort((self.deals, -size))[:self.k]
        self.deals, self.a0, self.a1 = self.deals[order], self.a0[order], self.a1[order]

    def add(self, deals: ArrayLike, a0: ArrayLike, a1: ArrayLike) -> Swings:
        """Add pairs (one entry per deal); keeps the top ``k``."""
        self.deals = np.concatenate([self.deals, np.asarray(deals, dtype=np.int64)])
        self.a0 = np.concatenate([self.a0, np.asarray(a0, dtype=np.int64)])
        self.a1 = np.concatenate([self.a1, np.asarray(a1, dtype=np.int64)])
        self._keep()
        return self

    def __iadd__(self, other: Swings) -> Swings:
        self.k = max(self.k, other.k)
        return self.add(other.deals, other.a0, other.a1)

    def __len__(self) -> int:
        return int(self.deals.size)

    def rows(self) -> list[dict[str, Any]]:
        """The kept pairs, largest swing first: deal, ``a0``, ``a1``, ``x`` (A's result of
        the pair, points per deal per player) and ``swing`` (``|x|``)."""
        return [{"deal": int(d), "a0": int(p), "a1": int(q), "x": (int(p) + int(q)) / 2,
                 "swing": abs(int(p) + int(q)) / 2}
                for d, p, q in zip(self.deals, self.a0, self.a1)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "Swings", "k": self.k, "deals": self.deals.tolist(),
                "a0": self.a0.tolist(), "a1": self.a1.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Swings:
        return cls(d["k"], d["deals"], d["a0"], d["a1"])
