"""Win-rate questions about a hand: fix some cards in one seat, deal the rest at random.

``shuangkou estimate --hand "Kh Kh 5h 5h BJ" --seat 0`` plays many deals in which seat 0 is
dealt those cards (an ordinary uniform deal conditioned on the seat holding at least those
cards: ``Kh`` is at least one Kh; ``sim.core.engine._shuffle_fixed``) and reports how often that
seat becomes the caller, how its team does when it attacks, and its mean settlement, each
with a 95% confidence interval. The deals are ``sim.harness.loop.play_deals_fixed`` deals of
the given seed, so an estimate is reproducible and the same for any ``jobs``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.analysis.stats import WDL, Histogram, Moments, norm_ppf
from sim.errors import ConfigError, InvalidCardError

CHUNK = 20_000  # deals per compiled call: small enough to stream, big enough to be free
# deals 0 … 10**11-1: days of computing, and every sum (of squared scores too) stays exact in
# float64 (below 2**53; sim.analysis.stats.Moments)
MAX_DEALS = 10**11
_BATCH = 64  # chunks handed to the threads at a time: memory stays flat for any ``deals``


def check_deals(deals: Any) -> int:
    """``deals`` for an estimate: an integer in 1 … 10**11 (deals 0 … deals-1 are played)."""
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) \
            or not 1 <= deals <= MAX_DEALS:
        raise ConfigError(f"deals {deals!r} must be an integer in 1 … 10**11 (an estimate "
                          f"plays deals 0 … deals-1)")
    return int(deals)


@dataclasses.dataclass
class Estimate:
    """What ``estimate`` measured; proportions carry Wilson 95% intervals."""

    hand: list[str]
    seat: int
    seats: list[str]
    seed: int
    deals: int
    void: int
    caller: int  # deals in which the seat was the caller
    attacks: int  # deals in which its team attacked
    settle: Moments  # the seat's settlement per deal (void deals count 0)
    wdl: WDL  # the seat's settlement > 0, == 0, < 0
    score_attacking: Histogram  # attacker score when its team attacked
    score_calling: Moments  # attacker score when the seat itself called
    settle_calling: Moments  # its settlement when it called

    def proportions(self) -> dict[str, tuple[float, float, float]]:
        n = self.deals
        return {"caller": wilson(self.caller, n), "attacks": wilson(self.attacks, n),
                "void": wilson(self.void, n)}

    def to_dict(self) -> dict[str, Any]:
        """Plain figures (for ``--json``)."""
        s_lo, s_hi = self.settle.ci()
        a = self.score_attacking
        c_lo, c_hi = self.score_calling.ci()
        return {
            "hand": self.hand, "seat": self.seat, "seats": self.seats, "seed": self.seed,
            "deals": self.deals,
            **{f"p_{k}": {"p": p, "lo": lo, "hi": hi}
               for k, (p, lo, hi) in self.proportions().items()},
            "settlement": {"mean": self.settle.mean, "lo": s_lo, "hi": s_hi},
            "win_draw_loss": list(self.wdl.fractions()),
            "score_when_attacking": {"n": a.n, "mean": a.mean(), "lo": a.moments.ci()[0],
                                     "hi": a.moments.ci()[1], "p_ge_120": a.prob_ge(120),
                                     "p_le_80": a.prob_le(80)},
            "score_when_calling": {"n": self.score_calling.n, "mean": self.score_calling.mean,
                                   "lo": c_lo, "hi": c_hi},
            "settlement_when_calling": {"n": self.settle_calling.n,
                                        "mean": self.settle_calling.mean},
        }

    def text(self) -> str:
        """The report a person reads."""
        def pct(t: tuple[float, float, float]) -> str:
            return f"{100 * t[0]:.1f}%  [{100 * t[1]:.1f}%, {100 * t[2]:.1f}%]"

        def mean(m: Moments, fmt: str) -> str:
            lo, hi = m.ci()
            if m.n == 0:
                return "–"
            if m.n < 2:
                return fmt.format(m.mean)
            return f"{fmt.format(m.mean)}  [{fmt.format(lo)}, {fmt.format(hi)}]"

        p = self.proportions()
        w, d, l_ = self.wdl.fractions()
        a = self.score_attacking
        att = "–" if not a.n else (f"{mean(a.moments, '{:.1f}')}  (P ≥ 120: "
                                   f"{100 * a.prob_ge(120):.1f}%, P ≤ 80: "
                                   f"{100 * a.prob_le(80):.1f}%)")
        rows = [
            (f"P(seat {self.seat} becomes the caller)", pct(p["caller"])),
            ("P(its team attacks)", pct(p["attacks"])),
            ("P(void deal)", pct(p["void"])),
            ("attacker score when its team attacks", att),
            ("attacker score when it calls", mean(self.score_calling, "{:.1f}")),
            (f"settlement per deal (seat {self.seat})", mean(self.settle, "{:+.3f}")),
            ("settlement when it calls", mean(self.settle_calling, "{:+.3f}")),
            ("settlement > 0 / = 0 / < 0", (f"{100 * w:.1f}% / {100 * d:.1f}% / "
                                           f"{100 * l_:.1f}%")),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join([
            (f"seat {self.seat} is dealt {' '.join(self.hand)} ({len(self.hand)} fixed card(s); "
            f"its other {27 - len(self.hand)} cards and the other hands at random)"),
            f"seats: {', '.join(f'{i}={s}' for i, s in enumerate(self.seats))}",
            f"{self.deals:,} deals of seed {self.seed}; 95% confidence intervals in brackets",
            *[f"  {k.ljust(width)}  {v}" for k, v in rows],
        ])


def wilson(k: int, n: int, conf: float = 0.95) -> tuple[float, float, float]:
    """``(k/n, lo, hi)`` with the Wilson score interval (good near 0 and 1, unlike k/n ± z·se).
    """
    if n == 0:
        return (math.nan, math.nan, math.nan)
    z = -norm_ppf((1.0 - conf) / 2.0)
    p = k / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    # k = 0 (k = n) gives 0 (1) exactly, not the rounding residue of mid - half (4e-22)
    return (p, 0.0 if k == 0 else max(0.0, mid - half), 1.0 if k == n else min(1.0, mid + half))


def parse_hand(hand: str | Sequence[str]) -> list[int]:
    """Card ids of the fixed cards: at most 27, no card type more than twice (R1, R5)."""
    from sim.cards import CARD_NAMES, parse_cards

    ids = parse_cards(hand)
    if not ids:
        raise InvalidCardError(f"hand {hand!r} is empty: give the cards to fix, e.g. "
                               f"'Kh Kh 5h 5h BJ'")
    if len(ids) > 27:
        raise InvalidCardError(f"hand {hand!r} has {len(ids)} cards: a seat holds 27 (R5)")
    for c, k in Counter(ids).items():
        if k > 2:
            raise InvalidCardError(f"hand {hand!r} holds {CARD_NAMES[c]} {k} times: the deck "
                                   f"has two of each card (R1)")
    return ids


def estimate(hand: str | Sequence[str], seat: int = 0, deals: int = 100_000,
             seats: str | Sequence[str] = "random", seed: int = 0, rules: Any = None,
             jobs: int = 1) -> Estimate:
    """Play ``deals`` deals with ``hand`` fixed in ``seat``'s cards and measure that seat.

    Parameters
    ----------
    hand : card notation, e.g. ``"Kh Kh 5h 5h BJ"`` (R2), at most 27 cards.
    seat : 0–3.
    deals : number of deals.
    seats : strategy specs, 1, 2 (teams) or 4 as for ``shuangkou play``; they must all have a
        compiled kernel (the fixed-card deals run in the compiled loop).
    seed : master seed.
    rules : a ``sim.Rules`` (default rules if None).
    jobs : threads; the compiled loop releases the GIL and the result is the same for any.
    """
    from joblib import Parallel, delayed

    from sim.cards import CARD_NAMES
    from sim.core.rng import check_seed
    from sim.harness import runner
    from sim.rules import DEFAULT_RULES

    ids = parse_hand(hand)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ConfigError(f"seat {seat!r} must be 0, 1, 2 or 3")
    deals = check_deals(deals)
    seed = check_seed(seed)
    rules = rules or DEFAULT_RULES
    strategies = runner.make_seats(seats)
    tables = runner.compiled_tables(strategies)
    if tables is None:
        slow = [s.spec() for s in strategies if not s.runs_compiled()]
        raise ConfigError(f"estimate needs compiled strategies in every seat; {slow[0]!r} is "
                          f"Python-only (use e.g. random or another compiled strategy)")
    fixed = np.array(ids, dtype=np.int64)
    est = Estimate(hand=[CARD_NAMES[c] for c in ids], seat=seat,
                   seats=[s.spec() for s in strategies], seed=seed, deals=deals, void=0,
                   caller=0, attacks=0, settle=Moments(), wdl=WDL(),
                   score_attacking=Histogram(0, 600, 5), score_calling=Moments(),
                   settle_calling=Moments())
    step = CHUNK * _BATCH
    with Parallel(n_jobs=jobs, backend="threading") as parallel:
        for first in range(0, deals, step):  # batches of chunks: memory flat in ``deals``
            parts = parallel(
                delayed(_chunk)(seed, s, min(CHUNK, deals - s), rules.array(), tables, seat,
                                fixed)
                for s in range(first, min(first + step, deals), CHUNK))
            for p in parts:  # in deal order; every figure is an exact sum or count anyway
                est.void += p["void"]
                est.caller += p["caller"]
                est.attacks += p["attacks"]
                est.settle += p["settle"]
                est.wdl += p["wdl"]
                est.score_attacking += p["score_attacking"]
                est.score_calling += p["score_calling"]
                est.settle_calling += p["settle_calling"]
    return est


def _chunk(seed: int, first: int, n: int, rules: np.ndarray, tables: tuple, seat: int,
           fixed: np.ndarray) -> dict[str, Any]:
    from sim.core.tables import C_CALLER, C_SCORE, C_SETTLE0, C_VOID, N_COLS

    out = np.zeros((n, N_COLS), dtype=np.int64)
    tables.loops.play_deals_fixed(np.uint64(seed), np.uint64(first), n, rules, *tables, seat,
                                  fixed, out)
    void = out[:, C_VOID] != 0
    caller = out[:, C_CALLER]
    calls = ~void & (caller == seat)
    attacks = ~void & (caller % 2 == seat % 2)
    own = out[:, C_SETTLE0 + seat]
    return {"void": int(void.sum()), "caller": int(calls.sum()), "attacks": int(attacks.sum()),
            "settle": Moments().add(own), "wdl": WDL().add(own),
            "score_attacking": Histogram(0, 600, 5).add(out[attacks, C_SCORE]),
            "score_calling": Moments().add(out[calls, C_SCORE]),
            "settle_calling": Moments().add(own[calls])}
