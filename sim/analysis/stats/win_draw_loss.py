"""Win / draw / loss shares of pairs: ``WDL`` and ``wdl`` (part of ``sim.analysis.stats``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from sim.analysis.stats.moments import as_values, check_type
from sim.analysis.stats.ratings import elo_from_wdl
from sim.errors import StatsError

# --------------------------------------------------------------------------------------------
# Win / draw / loss
# --------------------------------------------------------------------------------------------

class WDL:
    """Counts of values ``> 0`` (win), ``== 0`` (draw) and ``< 0`` (loss); mergeable.

    Parameters
    ----------
    wins, draws, losses : optional starting counts.
    """

    __slots__ = ("draws", "losses", "wins")

    def __init__(self, wins: int = 0, draws: int = 0, losses: int = 0) -> None:
        for name, val in (("wins", wins), ("draws", draws), ("losses", losses)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 0:
                raise StatsError(f"{name} {val!r} must be an integer >= 0")
        self.wins, self.draws, self.losses = int(wins), int(draws), int(losses)

    def add(self, values: ArrayLike) -> WDL:
        """Count values by sign; returns ``self``."""
        v = as_values(values)
        w, l_ = int((v > 0).sum()), int((v < 0).sum())
        self.wins += w
        self.losses += l_
        self.draws += int(v.size) - w - l_
        return self

    def __iadd__(self, other: WDL) -> WDL:
        if not isinstance(other, WDL):
            return NotImplemented
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        return self

    def merge(self, other: WDL) -> WDL:
        """A new counter holding both."""
        return WDL(self.wins, self.draws, self.losses).__iadd__(other)

    @property
    def n(self) -> int:
        """Number of results."""
        return self.wins + self.draws + self.losses

    def fractions(self) -> tuple[float, float, float]:
        """``(win, draw, loss)`` shares (NaN if empty)."""
        n = self.n
        if not n:
            return (math.nan, math.nan, math.nan)
        return (self.wins / n, self.draws / n, self.losses / n)

    @property
    def score(self) -> float:
        """Mean score per result, win 1, draw 1/2, loss 0."""
        return (self.wins + 0.5 * self.draws) / self.n if self.n else math.nan

    @property
    def score_var(self) -> float:
        """Variance of one result's score (ddof=0): ``w + d/4 - score^2`` in shares."""
        if not self.n:
            return math.nan
        w, d, _ = self.fractions()
        return max(0.0, w + 0.25 * d - self.score ** 2)

    def elo(self, conf: float = 0.95) -> tuple[float, float, float]:
        """``elo_from_wdl`` of these counts: Elo with the score (Wilson-type) interval of
        ``score_interval`` (one-sided when every result is a win or every one a loss)."""
        return elo_from_wdl(self.wins, self.draws, self.losses, conf)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable state."""
        return {"type": "WDL", "wins": self.wins, "draws": self.draws, "losses": self.losses}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WDL:
        """Inverse of ``to_dict``."""
        check_type(d, "WDL")
        return cls(d["wins"], d["draws"], d["losses"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WDL):
            return NotImplemented
        return (self.wins, self.draws, self.losses) == (other.wins, other.draws, other.losses)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"WDL(wins={self.wins}, draws={self.draws}, losses={self.losses})"


def wdl(values: ArrayLike) -> tuple[float, float, float]:
    """``(win, draw, loss)`` shares of ``values`` (``> 0``, ``== 0``, ``< 0``)."""
    return WDL().add(values).fractions()
