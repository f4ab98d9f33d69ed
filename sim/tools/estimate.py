"""How good is this hand? Fix some cards in one seat, deal the rest at random, compare.

``shuangkou estimate --hand "Kh Kh 5h 5h BJ" --seat 0`` plays many deals in which seat 0 is
dealt those cards (an ordinary uniform deal conditioned on the seat holding at least those
cards: ``Kh`` is at least one Kh; the named cards reach it in uniformly random dealing rounds,
R5; ``sim.core.step.shuffle_fixed``) and, on the **same deal numbers**, the ordinary deals
with nothing fixed: the average hand for that seat under the same players and rules. Each deal
number gives one paired difference of the seat's settlement (hand minus average hand), so the
answer is relative, with the interval of the mean difference: "this hand is worth +1.47
[+1.44, +1.51] points per deal over an average hand for seat 0". The absolute figures of both
(how often the seat becomes the caller, how its team does when it attacks, its mean
settlement) are kept, labelled, each with a 95% confidence interval.

``compare_calls`` plays the hand's deals once more for each calling line open to it (R6-R8):
show one pair of the hand's named pairs at the first chance it is legal and nothing else, or
never show; every other decision of the seat (give-backs, plays) and every other seat follows
its player. The lines are paired on the same deals, so their differences have tight intervals.

Deals are ``sim.loops.loop`` deals of the given seed, so an estimate is reproducible and the
same for any ``jobs`` (every figure is an exact sum).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.analysis.stats.histogram import Histogram
from sim.analysis.stats.moments import Moments
from sim.analysis.stats.quantiles import norm_ppf
from sim.analysis.stats.win_draw_loss import WDL
from sim.cards import CARD_NAMES, parse_cards
from sim.core.rng import check_seed
from sim.core.tables import C_CALLER, C_SCORE, C_SETTLE0, C_VOID, N_COLS
from sim.errors import ConfigError, InvalidCardError
from sim.loops import runner
from sim.loops.loop import forced_line
from sim.loops.plugins import builtin_loops
from sim.rules import DEFAULT_RULES, N_RULES
from strategies.kinds import N_BUILTIN

CHUNK = 20_000  # deals per compiled call: small enough to stream, big enough to be free
# deals 0 … 10**11-1: days of computing, and every sum (of squared scores too) stays exact in
# float64 (below 2**53; sim.analysis.stats.Moments)
MAX_DEALS = 10**11
_BATCH = 64  # chunks handed to the threads at a time: memory stays flat for any ``deals``
# The default players: greedy in every seat. Measured on the 2-core machine of
# docs/tournaments.md ("Estimate"): 100,000 paired deals of greedy take about 3 s once
# compiled, 95% half-width of the difference about 0.04 points; pimc(samples=8), the cheapest
# search player, plays about 40 deals/s, so a one-minute paired run is ~1,000 deals with a
# half-width near 0.5 points: too wide to tell hands apart.
DEFAULT_SEATS = "greedy"
DEFAULT_DEALS = 100_000
NEVER = -2  # the calling line that never shows; -1: the seat's player decides
_R_FORCE = N_RULES  # index past the rules (sim.rules.RULES_FIELDS) where the forced line travels


def check_deals(deals: Any) -> int:
    """``deals`` for an estimate: an integer in 1 … 10**11 (deals 0 … deals-1 are played)."""
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) \
            or not 1 <= deals <= MAX_DEALS:
        raise ConfigError(f"deals {deals!r} must be an integer in 1 … 10**11 (an estimate "
                          f"plays deals 0 … deals-1)")
    return int(deals)


@dataclasses.dataclass
class Side:
    """The seat's absolute figures in one set of deals (the hand's, or the average hand's)."""

    void: int = 0
    caller: int = 0  # deals in which the seat was the caller
    attacks: int = 0  # deals in which its team attacked
    settle: Moments = dataclasses.field(default_factory=Moments)  # void deals count 0
    wdl: WDL = dataclasses.field(default_factory=WDL)  # the seat's settlement > 0, == 0, < 0
    score_attacking: Histogram = dataclasses.field(  # attacker score when its team attacked
        default_factory=lambda: Histogram(0, 600, 5))
    score_calling: Moments = dataclasses.field(default_factory=Moments)  # when it called
    settle_calling: Moments = dataclasses.field(default_factory=Moments)

    def __iadd__(self, o: Side) -> Side:
        self.void += o.void
        self.caller += o.caller
        self.attacks += o.attacks
        self.settle += o.settle
        self.wdl += o.wdl
        self.score_attacking += o.score_attacking
        self.score_calling += o.score_calling
        self.settle_calling += o.settle_calling
        return self


@dataclasses.dataclass
class CallLine:
    """One calling line of ``--compare-calls`` on the hand's deals."""

    label: str
    card: int  # id of the pair shown, -1 the player's own calling, NEVER no show
    settle: Moments
    caller: int  # deals in which the seat became the caller
    wdl: WDL


@dataclasses.dataclass
class Estimate:
    """What ``estimate`` measured; proportions carry Wilson 95% intervals, means t-free
    normal 95% intervals (``Moments.ci``)."""

    hand: list[str]
    seat: int
    seats: list[str]
    seed: int
    deals: int
    rules: str  # the rules variant in words ("default" or Rules(...))
    fixed: Side  # the hand's deals
    base: Side  # the same deal numbers with nothing fixed: the average hand
    diff: Moments  # per deal: the hand's settlement minus the average hand's
    win_diff: Moments  # per deal: (hand wins) - (average hand wins), wins = settlement > 0
    lines: list[CallLine] | None = None  # --compare-calls, the player's own line first
    line_diff: list[list[Moments]] | None = None  # [i][j]: line i minus line j, per deal

    # the absolute figures of the hand, under their old names
    @property
    def void(self) -> int:
        return self.fixed.void

    @property
    def caller(self) -> int:
        return self.fixed.caller

    @property
    def attacks(self) -> int:
        return self.fixed.attacks

    @property
    def settle(self) -> Moments:
        return self.fixed.settle

    @property
    def wdl(self) -> WDL:
        return self.fixed.wdl

    @property
    def score_calling(self) -> Moments:
        return self.fixed.score_calling

    def proportions(self, side: Side | None = None) -> dict[str, tuple[float, float, float]]:
        s, n = side or self.fixed, self.deals
        return {"caller": wilson(s.caller, n), "attacks": wilson(s.attacks, n),
                "void": wilson(s.void, n)}

    def worth(self) -> tuple[float, float, float]:
        """The hand's mean settlement per deal over the average hand's, and its 95% interval."""
        lo, hi = self.diff.ci()
        return self.diff.mean, lo, hi

    def best_line(self) -> int:
        """Index in ``lines`` of the line with the highest mean settlement (first if tied)."""
        assert self.lines
        means = [ln.settle.mean for ln in self.lines]
        return int(np.argmax(means))

    def player(self) -> str:
        return self.seats[self.seat]

    # --- output ---------------------------------------------------------------------------
    def _side_dict(self, s: Side) -> dict[str, Any]:
        s_lo, s_hi = s.settle.ci()
        a = s.score_attacking
        c_lo, c_hi = s.score_calling.ci()
        return {
            **{f"p_{k}": {"p": p, "lo": lo, "hi": hi}
               for k, (p, lo, hi) in self.proportions(s).items()},
            "settlement": {"mean": s.settle.mean, "lo": s_lo, "hi": s_hi},
            "win_draw_loss": list(s.wdl.fractions()),
            "score_when_attacking": {"n": a.n, "mean": a.mean(), "lo": a.moments.ci()[0],
                                     "hi": a.moments.ci()[1], "p_ge_120": a.prob_ge(120),
                                     "p_le_80": a.prob_le(80)},
            "score_when_calling": {"n": s.score_calling.n, "mean": s.score_calling.mean,
                                   "lo": c_lo, "hi": c_hi},
            "settlement_when_calling": {"n": s.settle_calling.n,
                                        "mean": s.settle_calling.mean},
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain figures (for ``--json``): the hand's absolute figures at the top level (as
        before), ``average_hand`` the baseline's, ``vs_average`` the paired differences."""
        m, lo, hi = self.worth()
        w_lo, w_hi = self.win_diff.ci()
        d: dict[str, Any] = {
            "hand": self.hand, "seat": self.seat, "seats": self.seats, "seed": self.seed,
            "deals": self.deals, "rules": self.rules,
            **self._side_dict(self.fixed),
            "average_hand": self._side_dict(self.base),
            "vs_average": {"settlement": {"mean": m, "lo": lo, "hi": hi},
                           "p_win": {"mean": self.win_diff.mean, "lo": w_lo, "hi": w_hi}},
        }
        if self.lines is not None:
            b = self.best_line()
            rows = []
            for i, ln in enumerate(self.lines):
                s_lo, s_hi = ln.settle.ci()
                v = self.line_diff[i][b]  # type: ignore[index]
                v_lo, v_hi = v.ci()
                rows.append({"line": ln.label, "settlement": {"mean": ln.settle.mean,
                                                              "lo": s_lo, "hi": s_hi},
                             "p_caller": ln.caller / self.deals,
                             "vs_best": {"mean": v.mean, "lo": v_lo, "hi": v_hi}})
            d["calling_lines"] = rows
            d["best_line"] = self.lines[b].label
        return d

    def headline(self) -> str:
        """The answer in one line."""
        m, lo, hi = self.worth()
        return (f"this hand is worth {m:+.2f} [{lo:+.2f}, {hi:+.2f}] points per deal over an "
                f"average hand for seat {self.seat}")

    def never_calls(self) -> str | None:
        """A line saying that the seat's player never called with the hand, or None."""
        if self.fixed.caller:
            return None
        return (f"{self.player()} in seat {self.seat} never became the caller with this hand "
                f"(0 of {self.deals:,} deals): its figures are those of a hand that does not "
                f"call; --compare-calls shows what showing its pairs would be worth")

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

        def rows(s: Side) -> list[tuple[str, str]]:
            p = self.proportions(s)
            w, d, l_ = s.wdl.fractions()
            a = s.score_attacking
            att = "–" if not a.n else (f"{mean(a.moments, '{:.1f}')}  (P ≥ 120: "
                                       f"{100 * a.prob_ge(120):.1f}%, P ≤ 80: "
                                       f"{100 * a.prob_le(80):.1f}%)")
            return [
                (f"P(seat {self.seat} becomes the caller)", pct(p["caller"])),
                ("P(its team attacks)", pct(p["attacks"])),
                ("P(void deal)", pct(p["void"])),
                ("attacker score when its team attacks", att),
                ("attacker score when it calls", mean(s.score_calling, "{:.1f}")),
                (f"settlement per deal (seat {self.seat})", mean(s.settle, "{:+.3f}")),
                ("settlement when it calls", mean(s.settle_calling, "{:+.3f}")),
                ("settlement > 0 / = 0 / < 0", (f"{100 * w:.1f}% / {100 * d:.1f}% / "
                                               f"{100 * l_:.1f}%")),
            ]

        hand_rows, base_rows = rows(self.fixed), rows(self.base)
        width = max(len(k) for k, _ in hand_rows)
        wf, wb = self.fixed.wdl.fractions()[0], self.base.wdl.fractions()[0]
        w_lo, w_hi = self.win_diff.ci()
        default = " (the default)" if self.seats == [DEFAULT_SEATS] * 4 else ""
        free = 27 - len(self.hand)
        out = [
            (f"seat {self.seat} holds at least {' '.join(self.hand)} ({len(self.hand)} fixed "
             f"card(s), dealt to it in random rounds, R5" + (f"; its other {free} cards and "
                                                            f"the other hands at random)"
                                                            if free else
                                                            "; the other hands at random)")),
            f"players: {', '.join(f'{i}={s}' for i, s in enumerate(self.seats))}{default}; "
            f"rules: {self.rules}",
            (f"{self.deals:,} deals of seed {self.seed}, each played twice: with this hand "
             f"and with seat {self.seat}'s ordinary deal (the average hand); 95% intervals"),
            "",
            self.headline(),
            (f"  it wins (settlement > 0) {100 * wf:.1f}% of deals, an average hand "
             f"{100 * wb:.1f}%: {100 * self.win_diff.mean:+.1f} [{100 * w_lo:+.1f}, "
             f"{100 * w_hi:+.1f}] percentage points"),
        ]
        nc = self.never_calls()
        if nc:
            out.append(f"  {nc}")
        out += ["", "with this hand:",
                *[f"  {k.ljust(width)}  {v}" for k, v in hand_rows],
                "an average hand (the same deal numbers, no card fixed):",
                *[f"  {k.ljust(width)}  {v}" for k, v in base_rows]]
        if self.lines is not None:
            out += ["", self.lines_text()]
        return "\n".join(out)

    def lines_text(self) -> str:
        """The table of ``--compare-calls``."""
        assert self.lines is not None and self.line_diff is not None
        b = self.best_line()
        n = self.deals

        def ci(m: Moments) -> str:
            lo, hi = m.ci()
            return f"{m.mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"

        rows = [("line", "settlement per deal", f"seat {self.seat} calls", "vs the best line")]
        for i, ln in enumerate(self.lines):
            rows.append((ln.label, ci(ln.settle), f"{100 * ln.caller / n:.1f}%",
                         "best" if i == b else ci(self.line_diff[i][b])))
        w = [max(len(r[k]) for r in rows) for k in range(4)]
        body = [f"  {r[0].ljust(w[0])}  {r[1].rjust(w[1])}  {r[2].rjust(w[2])}  {r[3]}"
                for r in rows]
        own = self.line_diff[b][0]
        lo, hi = own.ci()
        if b == 0:
            verdict = (f"best: {self.lines[0].label}; no forced line beats the player's own "
                       f"calling")
        else:
            verdict = (f"best: {self.lines[b].label}, {own.mean:+.2f} [{lo:+.2f}, {hi:+.2f}] "
                       f"points per deal over {self.lines[0].label}")
        return "\n".join([
            (f"calling lines, on the same {n:,} deals of this hand (seat {self.seat} plays its "
             f"give-backs and tricks as {self.player()}; a forced line shows that pair at its "
             f"first legal chance and shows nothing else, R6-R8):"),
            *body, verdict])


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


def showable_pairs(ids: Sequence[int]) -> list[int]:
    """Ids of the pairs the fixed cards hold that can be shown (R6: two identical suited
    cards, never jokers), highest rank first (K … A, R6's order)."""
    pairs = [c for c, k in Counter(ids).items() if k == 2 and c < 52]
    order = "A23456789TJQK"
    return sorted(pairs, key=lambda c: (-order.index(CARD_NAMES[c][0]), c))


def estimate(hand: str | Sequence[str], seat: int = 0, deals: int = DEFAULT_DEALS,
             seats: str | Sequence[Any] = DEFAULT_SEATS, seed: int = 0, rules: Any = None,
             jobs: int = 1, compare_calls: bool = False) -> Estimate:
    """Play ``deals`` deals with ``hand`` fixed in ``seat``'s cards and the same deal numbers
    with nothing fixed, and measure that seat in both and the paired difference.

    Parameters
    ----------
    hand : card notation, e.g. ``"Kh Kh 5h 5h BJ"`` (R2), at most 27 cards; an empty list
        fixes nothing (its deals are still drawn by the conditioned shuffle, so they differ
        from the baseline's: worth 0 within the interval).
    seat : 0–3.
    deals : number of deals (1 … 10**11).
    seats : strategy specs, 1, 2 (teams) or 4 as for ``shuangkou play`` (default greedy in
        every seat); they must all have a compiled kernel (the deals run in the compiled loop).
    seed : master seed.
    rules : a ``sim.Rules`` (default rules if None).
    jobs : threads; the compiled loop releases the GIL and the result is the same for any.
    compare_calls : also play the hand's deals once per calling line (each pair of the hand
        shown at its first legal chance, or never show); built-in players only.
    """
    from joblib import Parallel, delayed

    # an empty sequence fixes nothing: the average hand against itself (a check of the pairing)
    ids = [] if not isinstance(hand, str) and len(hand) == 0 else parse_hand(hand)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ConfigError(f"seat {seat!r} must be 0, 1, 2 or 3")
    seat = int(seat)
    deals = check_deals(deals)
    seed = check_seed(seed)
    rules = rules or DEFAULT_RULES
    strategies = runner.make_seats(seats)
    tables = runner.compiled_tables(strategies)
    if tables is None:
        slow = [s.spec() for s in strategies if not s.runs_compiled()]
        raise ConfigError(f"estimate needs compiled strategies in every seat; {slow[0]!r} is "
                          f"Python-only (use e.g. greedy or another compiled strategy)")
    specs = [s.spec() for s in strategies]
    fixed = np.array(ids, dtype=np.int64)
    forced = None
    line_cards: list[int] = []
    if compare_calls:
        if tables.loops.mod is not None:
            plug = next(s for s, k in zip(specs, tables.loops.kinds, strict=True)
                        if not 0 <= k < N_BUILTIN)
            raise ConfigError(f"--compare-calls needs built-in players in every seat; "
                              f"{plug!r} is a plug-in (estimate without --compare-calls "
                              f"takes it)")
        forced = _forced_loops(tables.loops.kinds)
        line_cards = [-1, *showable_pairs(ids), NEVER]
    ra = rules.array()
    est = Estimate(hand=[CARD_NAMES[c] for c in ids], seat=seat, seats=specs, seed=seed,
                   deals=deals, rules="default" if rules == DEFAULT_RULES else str(rules),
                   fixed=Side(), base=Side(), diff=Moments(), win_diff=Moments())
    nl = len(line_cards)
    if compare_calls:
        est.lines = [CallLine(_line_label(c, specs[seat]), c, Moments(), 0, WDL())
                     for c in line_cards]
        est.line_diff = [[Moments() for _ in range(nl)] for _ in range(nl)]
    step = CHUNK * _BATCH
    with Parallel(n_jobs=jobs, backend="threading") as parallel:
        for first in range(0, deals, step):  # batches of chunks: memory flat in ``deals``
            parts = parallel(
                delayed(_chunk)(seed, s, min(CHUNK, deals - s), ra, tables, seat, fixed,
                                forced, line_cards)
                for s in range(first, min(first + step, deals), CHUNK))
            for p in parts:  # in deal order; every figure is an exact sum or count anyway
                est.fixed += p["fixed"]
                est.base += p["base"]
                est.diff += p["diff"]
                est.win_diff += p["win_diff"]
                for i in range(nl):
                    ln = est.lines[i]  # type: ignore[index]
                    ln.settle += p["lines"][i]["settle"]
                    ln.caller += p["lines"][i]["caller"]
                    ln.wdl += p["lines"][i]["wdl"]
                    for j in range(nl):
                        est.line_diff[i][j] += p["line_diff"][i][j]  # type: ignore[index]
    return est


def _line_label(card: int, player: str) -> str:
    if card == -1:
        return f"{player}'s own calling"
    if card == NEVER:
        return "never show"
    return f"show {CARD_NAMES[card]} {CARD_NAMES[card]} at the first chance"


def _side(out: np.ndarray, seat: int) -> tuple[Side, np.ndarray, np.ndarray]:
    void = out[:, C_VOID] != 0
    caller = out[:, C_CALLER]
    calls = ~void & (caller == seat)
    attacks = ~void & (caller % 2 == seat % 2)
    own = out[:, C_SETTLE0 + seat]
    s = Side(void=int(void.sum()), caller=int(calls.sum()), attacks=int(attacks.sum()),
             settle=Moments().add(own), wdl=WDL().add(own),
             score_attacking=Histogram(0, 600, 5).add(out[attacks, C_SCORE]),
             score_calling=Moments().add(out[calls, C_SCORE]),
             settle_calling=Moments().add(own[calls]))
    return s, own, calls


def _chunk(seed: int, first: int, n: int, rules: np.ndarray, tables: Any, seat: int,
           fixed: np.ndarray, forced: Any, line_cards: Sequence[int]) -> dict[str, Any]:
    out = np.zeros((n, N_COLS), dtype=np.int64)
    tables.loops.play_deals_fixed(np.uint64(seed), np.uint64(first), n, rules, *tables, seat,
                                  fixed, out)
    fx, own, _ = _side(out, seat)
    base = np.zeros((n, N_COLS), dtype=np.int64)  # the same deal numbers, nothing fixed
    tables.loops.play_deals(np.uint64(seed), np.uint64(first), n, rules, *tables, base)
    bs, own_b, _ = _side(base, seat)
    part: dict[str, Any] = {
        "fixed": fx, "base": bs, "diff": Moments().add(own - own_b),
        "win_diff": Moments().add((own > 0).astype(np.int64) - (own_b > 0).astype(np.int64)),
        "lines": [], "line_diff": []}
    settles = []
    for c in line_cards:
        if c == -1:  # the player's own calling: the hand's deals above
            s, calls = own, fx.caller
        else:
            ext = np.append(rules, np.int64(c))  # rules[_R_FORCE]: the forced line
            o = np.zeros((n, N_COLS), dtype=np.int64)
            forced.play_deals_fixed(np.uint64(seed), np.uint64(first), n, ext, *tables, seat,
                                    fixed, o)
            side, s, _ = _side(o, seat)
            calls = side.caller
        settles.append(s)
        part["lines"].append({"settle": Moments().add(s), "caller": int(calls),
                              "wdl": WDL().add(s)})
    part["line_diff"] = [[Moments().add(a - b) for b in settles] for a in settles]
    return part


# --- the forced calling lines ----------------------------------------------------------------
# sim.loops.loop's loops with its hook ``forced_show`` bound to ``forced_line`` (one copy,
# compiled once for every set of players): at a show decision of the fixed seat,
# rules[_R_FORCE] (one entry past the rules) decides instead of its player. Give-backs and
# plays still go to the player.
def _forced_loops(kinds: np.ndarray) -> Any:
    """The loops with forced calling lines (``kinds``: the run's, whose kernels the loops
    call through their addresses)."""
    return builtin_loops(forced_show=forced_line)
