"""The double-dummy solver: exact values of the last tricks with all four hands known
(docs/solve.md; the kernels are ``sim.solve.kernels``).

>>> import sim
>>> d = sim.Deal(seed=1, deal=0)           # ... played on until a few cards are left
>>> sim.solve(d).choices                    # doctest: +SKIP
[Choice(cards=['Ks'], score=105, settlement=0), ...]

``sim.solve(deal)`` (this module is callable: ``sim.solve.solve`` is the same function) values
every legal play of the seat to act; ``Solver`` keeps its transposition table between calls
(positions of the same deal share most of their subtrees); ``solve_batch`` solves many.
A position's value is exact: the attackers (the caller's side) maximise their final score
(R22 points, R23 last-trick multiplier), the defenders minimise it, both seeing every card.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sim.cards import ID_OF_KEY, card_name
from sim.core import state as S
from sim.core.movegen import MAX_CHOICES, code_first, code_second
from sim.core.scoring import settle_kernel
from sim.errors import SolveError, UsageError
from sim.solve import kernels as K

DEFAULT_NODES = 20_000_000  # the node cap of one solve (about 10-20 s on one core)
DEFAULT_TABLE_BITS = 18  # 2^18 table entries of 96 bytes: 24 MiB
MAX_TABLE_BITS = 26


@dataclass(frozen=True)
class Choice:
    """One legal play with its exact values: the attackers' final ``score`` (R22, R23) and
    the ``settlement`` of the seat to act (R24, points per player, signed for its side)."""

    cards: list[str]
    code: int
    score: int
    settlement: int


@dataclass
class Solution:
    """Every legal play of the seat to act (canonical order) with its exact value."""

    seat: int
    attackers: tuple[int, int]
    points: int  # the attackers' points taken before this position
    cards_left: list[int]  # cards in each hand now
    choices: list[Choice]
    nodes: int
    seconds: float
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def best(self) -> Choice:
        """A play of the best settlement, then the best score for the seat's side."""
        attacker = self.seat in self.attackers
        return max(self.choices,
                   key=lambda c: (c.settlement, c.score if attacker else -c.score))

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "attackers": list(self.attackers), "points": self.points,
                "cards_left": self.cards_left,
                "choices": [{"cards": c.cards, "score": c.score, "settlement": c.settlement}
                            for c in self.choices],
                "best": self.best.cards, "nodes": self.nodes,
                "seconds": round(self.seconds, 6), **self.stats}


def _engine(position: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(st, u, rules) of a ``sim.Deal`` or such a tuple."""
    eng = getattr(position, "engine", position)
    if not (isinstance(eng, tuple) and len(eng) == 3):
        raise UsageError(f"cannot solve {type(position).__name__}: pass a sim.Deal or its "
                         f"engine arrays (st, u, rules)")
    st, u, rules = eng
    if int(st[S.S_PHASE]) != S.PLAY:
        what = S.KIND_NAMES[int(st[S.S_PHASE])]
        raise SolveError(f"the solver needs a position in trick play, not one at a {what} "
                         f"decision (the deal's phase)")
    return st, u, rules


def cards_left(u: np.ndarray) -> list[int]:
    """Cards in each hand of the engine arrays ``u``."""
    return [int(np.uint64(u[S.U_ONCE + s])).bit_count()
            + int(np.uint64(u[S.U_TWICE + s])).bit_count() for s in range(4)]


def play_cards(code: int, trump: int) -> list[str]:
    """Card names of a play code (key layout)."""
    a, b = int(code_first(code)), int(code_second(code))
    out = [card_name(int(ID_OF_KEY[trump, a]))]
    if b >= 0:
        out.append(card_name(int(ID_OF_KEY[trump, b])))
    return out


class Solver:
    """A solver with its buffers and transposition table, reused between calls.

    The table is valid for one trump, one attacking side and one rules variant; it is cleared
    when a position of another comes. ``max_nodes`` caps the nodes of one call: past it the
    call raises ``SolveError`` (``solve``) or returns None (``try_solve``).
    """

    def __init__(self, max_nodes: int = DEFAULT_NODES, table_bits: int = DEFAULT_TABLE_BITS,
                 options: int = K.OPT_ALL) -> None:
        if not isinstance(max_nodes, int) or max_nodes < 1:
            raise UsageError(f"max_nodes must be a positive integer, not {max_nodes!r}")
        if not isinstance(table_bits, int) or not 4 <= table_bits <= MAX_TABLE_BITS:
            raise UsageError(f"table_bits must be an integer in 4 … {MAX_TABLE_BITS}, "
                             f"not {table_bits!r}")
        self.max_nodes = max_nodes
        self.options = int(options)
        self.tst = np.full((K.MAX_TRICKS, S.ST_SIZE), -1, dtype=np.int64)
        self.hands = np.zeros(16, dtype=np.uint64)  # the hands, then a table key
        self.mv = np.zeros((K.MAX_PLY, MAX_CHOICES), dtype=np.int64)
        self.keys = np.zeros((K.MAX_PLY, MAX_CHOICES), dtype=np.int64)
        self.tt_k = np.zeros((1 << table_bits, 8), dtype=np.uint64)
        self.tt_v = np.zeros((1 << table_bits, K.TT_WORDS), dtype=np.int64)
        self.stats = np.zeros(K.N_STATS, dtype=np.int64)
        self.codes = np.zeros(MAX_CHOICES, dtype=np.int64)
        self.values = np.zeros(MAX_CHOICES, dtype=np.int64)
        self._context: tuple[int, ...] | None = None

    def clear(self) -> None:
        """Empty the transposition table."""
        self.tt_v[:, K.TT_LEAD] = 0

    def _prepare(self, st: np.ndarray, rules: np.ndarray) -> None:
        ctx = (int(st[S.S_TRUMP]), int(st[S.S_CALLER]) & 1, *map(int, rules))
        if ctx != self._context:
            self.clear()
            self._context = ctx
        self.stats[:] = 0
        self.stats[K.ST_CAP] = self.max_nodes
        self.stats[K.ST_OPTIONS] = self.options

    def try_solve(self, position: Any) -> Solution | None:
        """Like ``solve``; None when the node cap is hit."""
        st, u, rules = _engine(position)
        if not _LOADED:  # compile or load the kernel outside the timing: a one-node search
            self._prepare(st, rules)
            self.stats[K.ST_CAP] = 1
            K.choices(st, u, rules, self.tst, self.hands, self.mv, self.keys, self.tt_k,
                      self.tt_v, self.stats, self.codes, self.values)
            _LOADED.append(True)
        self._prepare(st, rules)
        t0 = time.perf_counter()
        n = int(K.choices(st, u, rules, self.tst, self.hands, self.mv, self.keys, self.tt_k,
                          self.tt_v, self.stats, self.codes, self.values))
        seconds = time.perf_counter() - t0
        if self.stats[K.ST_ABORT]:
            return None
        trump = int(st[S.S_TRUMP])
        side = int(st[S.S_CALLER]) & 1
        seat = int(st[S.S_TO_ACT])
        points = int(st[S.S_ATT_POINTS])
        sign = 1 if (seat & 1) == side else -1
        out = []
        for i in range(n):
            score = points + int(self.values[i])
            out.append(Choice(play_cards(int(self.codes[i]), trump), int(self.codes[i]), score,
                              sign * int(settle_kernel(score, rules))))
        return Solution(seat=seat, attackers=(side, side + 2), points=points,
                        cards_left=cards_left(u),
                        choices=out, nodes=int(self.stats[K.ST_NODES]), seconds=seconds,
                        stats={"table_hits": int(self.stats[K.ST_HITS]),
                               "table_stores": int(self.stats[K.ST_STORES])})

    def solve(self, position: Any) -> Solution:
        """Every legal play of the seat to act in ``position`` (a ``sim.Deal`` in trick play,
        or its engine arrays) with its exact score and settlement."""
        sol = self.try_solve(position)
        if sol is None:
            _, u, _ = _engine(position)
            raise SolveError(
                f"position too large: {max(cards_left(u))} cards in the largest hand, not "
                f"settled within {self.max_nodes:,} nodes; the solver settles positions of up "
                f"to about {REACH} cards per hand within the default cap (raise max_nodes to "
                f"try)")
        return sol


REACH = 9  # cards per hand the default cap settles (docs/solve.md "Speed")
_LOADED: list[bool] = []  # the kernel has run once in this process
_DEFAULT: dict[str, Solver] = {}


def solve(position: Any, *, max_nodes: int = DEFAULT_NODES) -> Solution:
    """Every legal play of the seat to act with its exact score and settlement (a shared
    ``Solver``: its table is kept between calls)."""
    solver = _DEFAULT.get("solver")
    if solver is None or solver.max_nodes != max_nodes:
        solver = _DEFAULT["solver"] = Solver(max_nodes=max_nodes)
    return solver.solve(position)


def solve_batch(positions: Iterable[Any], *, max_nodes: int = DEFAULT_NODES,
                solver: Solver | None = None) -> list[Solution | None]:
    """``solve`` of each position in turn (None for one past the node cap), one solver and
    one table for all of them."""
    solver = solver or Solver(max_nodes=max_nodes)
    return [solver.try_solve(p) for p in positions]


class _CallableModule(types.ModuleType):
    """``sim.solve(deal)`` calls ``solve``; ``sim.solve.Solver`` and friends stay attributes."""

    def __call__(self, position: Any, **kw: Any) -> Solution:
        return solve(position, **kw)


sys.modules[__name__].__class__ = _CallableModule

__all__: Sequence[str] = ("Choice", "Solution", "Solver", "solve", "solve_batch", "play_cards")
