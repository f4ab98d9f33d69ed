"""``shuangkou estimate``: fixed cards in one seat, the rest at random."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from sim.cli import main
from sim.core import state as S
from sim.errors import ConfigError, InvalidCardError
from sim.tools.estimate import estimate, parse_hand, wilson

KINGS = "Kh Kh Ks Ks Kd Kd"  # three pairs of the highest show rank: nobody can override


def test_parse_hand():
    assert parse_hand("Kh kh 5h 10h bj") == [49, 49, 17, 37, 53]
    with pytest.raises(InvalidCardError, match="Kh 3 times"):
        parse_hand("Kh Kh Kh")
    with pytest.raises(InvalidCardError, match="28 cards"):
        parse_hand(["2s"] * 2 + ["3s"] * 2 + ["4s"] * 2 + ["6s"] * 2 + ["7s"] * 2 + ["8s"] * 2
                   + ["9s"] * 2 + ["Ts"] * 2 + ["Js"] * 2 + ["Qs"] * 2 + ["Ks"] * 2 + ["As"] * 2
                   + ["2h"] * 2 + ["3h"] * 2)
    with pytest.raises(InvalidCardError, match="'Zz' is not a card"):
        parse_hand("Kh Zz")
    with pytest.raises(InvalidCardError, match="empty"):
        parse_hand("  ")


def test_kings_make_the_caller():
    base = estimate("4c", seat=1, deals=4000, seed=2)
    kings = estimate(KINGS, seat=1, deals=4000, seed=2)
    assert kings.deals == 4000 and kings.seat == 1
    p, lo, hi = kings.proportions()["caller"]
    _pb, _, hib = base.proportions()["caller"]
    assert p == kings.caller / 4000 and hib < lo  # clearly more often the caller than with a 4
    assert kings.caller <= kings.attacks <= kings.deals - kings.void
    assert kings.settle.n == 4000
    assert kings.score_calling.n == kings.caller


def test_same_for_any_jobs_and_reproducible():
    a = estimate(KINGS, deals=45_000, seed=9, seats="random(show_prob=0.5)", jobs=1)
    b = estimate(KINGS, deals=45_000, seed=9, seats="random(show_prob=0.5)", jobs=2)
    assert a.to_dict() == b.to_dict()


def test_fixed_cards_reach_the_seat():
    # the deals estimate plays: seat 2 is dealt both BJ and the 5h every time (card i of the
    # deck goes to seat i % 4, R5)
    from sim.core.engine import init_deal_fixed
    from sim.core.state import new_state

    st, u = new_state()
    fixed = np.array(parse_hand("BJ BJ 5h"), dtype=np.int64)
    for d in range(20):
        init_deal_fixed(st, u, np.uint64(4), np.uint64(d), 2, fixed)
        hand = sorted(int(c) for c in st[S.S_DECK:S.S_DECK + 108][2::4])
        assert hand.count(53) == 2 and 17 in hand


def test_estimate_intervals_cover_the_truth():
    # the 95% intervals estimate reports (Wilson, near p = 0.92 here, where k/n ± 1.96·se
    # undercovers) contain the true proportion in about 95% of independent runs; the truth
    # from 30,000 deals of another seed (its own error is a tenth of one run's)
    big = estimate(KINGS, seat=1, deals=30_000, seed=100, seats="random")
    truth = big.caller / big.deals
    assert 0.85 < truth < 0.97
    covered, widths = 0, []
    for seed in range(1, 61):
        p, lo, hi = estimate(KINGS, seat=1, deals=400, seed=seed,
                             seats="random").proportions()["caller"]
        covered += lo <= truth <= hi
        widths.append(hi - lo)
    # 95% of 60 is 57; a 68% interval (z = 1) would cover ~41, a 99.9% one all 60 and be
    # 1.7 times as wide
    assert 54 <= covered <= 60, covered
    z_width = 2 * 1.96 * math.sqrt(truth * (1 - truth) / 400)
    assert 0.85 * z_width < sum(widths) / len(widths) < 1.15 * z_width


def test_wilson_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    for k, n in ((0, 10), (3, 10), (50, 100), (999, 1000)):
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        p, lo, hi = wilson(k, n)
        assert p == k / n and (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_bad_arguments():
    with pytest.raises(ConfigError, match="seat 4"):
        estimate(KINGS, seat=4)
    with pytest.raises(ConfigError, match="deals 0"):
        estimate(KINGS, deals=0)


def test_python_only_seats_are_refused(tmp_path, monkeypatch):
    (tmp_path / "esplug.py").write_text(
        "from strategies.random import RandomStrategy\n"
        "class Slow(RandomStrategy):\n    name = 'slow'\n    compiled_kind = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from strategies.registry import load_plugin

    load_plugin("esplug")
    with pytest.raises(ConfigError, match="'slow' is Python-only"):
        estimate(KINGS, seats="slow,random", deals=10)


def test_cli(capsys):
    assert main(["estimate", "--hand", KINGS, "--seat", "3", "--deals", "3000",
                 "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert "seat 3 holds at least Kh Kh Ks Ks Kd Kd" in out
    assert "P(seat 3 becomes the caller)" in out
    assert "settlement per deal" in out and "[" in out
    assert "this hand is worth +" in out and "over an average hand for seat 3" in out
    assert main(["estimate", "--hand", KINGS, "--deals", "2000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["deals"] == 2000 and 0 <= d["p_caller"]["lo"] <= d["p_caller"]["p"] <= 1
    assert main(["estimate", "--hand", "Kh Kh Kh", "--deals", "10"]) == 2
    assert "Kh 3 times" in capsys.readouterr().err


# --- the answer is relative: a paired baseline on the same deal numbers ----------------------
def test_average_hand_is_worth_zero():
    # nothing fixed: the hand's deals (drawn by the conditioned shuffle, so other deals than
    # the baseline's of the same number) are average hands too, and the paired difference is
    # 0 within its 95% interval in about 95% of seeds (a seat's own settlement is not 0 on
    # average: greedy's seat 0 gets -0.06)
    covered = 0
    for seed in range(20):
        e = estimate([], seat=0, deals=3000, seed=seed)
        m, lo, hi = e.worth()
        assert e.diff.n == 3000 and m == pytest.approx(e.settle.mean - e.base.settle.mean)
        covered += lo <= 0 <= hi
    assert covered >= 16, covered


def test_strong_hand_is_positive_and_paired():
    e = estimate(KINGS, seat=1, deals=20_000, seed=3)
    m, lo, hi = e.worth()
    assert 0 < lo < m < hi  # three top pairs: clearly worth more than an average hand
    assert m == pytest.approx(e.settle.mean - e.base.settle.mean)
    # paired: the interval of the difference, not the two means' intervals side by side
    assert hi - lo == pytest.approx(2 * 1.959964 * e.diff.sem, rel=1e-3)
    assert e.win_diff.ci()[0] > 0 and e.base.caller < e.fixed.caller
    assert e.headline() == (f"this hand is worth {m:+.2f} [{lo:+.2f}, {hi:+.2f}] points per "
                            f"deal over an average hand for seat 1")
    # the baseline is the ordinary deals of the same numbers: what play_deals plays
    from sim.loops import runner

    rows = runner.summaries(3, 0, 20_000, runner.make_seats("greedy"))
    from sim.core.tables import C_SETTLE0

    assert e.base.settle.mean == pytest.approx(rows[:, C_SETTLE0 + 1].mean(), abs=1e-12)


def test_default_players_are_documented_and_shown(capsys):
    import pathlib

    from sim.cli import options as cli
    from sim.tools import estimate as est_mod

    assert est_mod.DEFAULT_SEATS == cli.DEFAULT_ESTIMATE_SEATS == "greedy"
    assert est_mod.DEFAULT_DEALS == cli.DEFAULT_ESTIMATE_DEALS
    e = estimate("Kh Kh", deals=100)
    assert e.seats == ["greedy"] * 4
    assert "players: 0=greedy, 1=greedy, 2=greedy, 3=greedy (the default)" in e.text()
    assert "players: 0=random" in estimate("Kh Kh", deals=100, seats="random").text()
    with pytest.raises(SystemExit):
        main(["estimate", "-h"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default greedy in every seat" in help_text and "--seats random" in help_text
    root = pathlib.Path(__file__).resolve().parents[1]
    doc = " ".join((root / "docs" / "tournaments.md").read_text().split())
    assert "greedy in every seat" in doc and "--compare-calls" in doc


def test_compare_calls_lists_each_line_and_is_reproducible():
    hand = "Kh Kh 5h 5h BJ"  # two showable pairs (R6); jokers are never shown
    a = estimate(hand, seat=0, deals=6000, seed=4, compare_calls=True)
    labels = [ln.label for ln in a.lines]
    assert labels == ["greedy's own calling", "show Kh Kh at the first chance",
                      "show 5h 5h at the first chance", "never show"]
    b = estimate(hand, seat=0, deals=6000, seed=4, compare_calls=True, jobs=2)
    assert a.to_dict() == b.to_dict() and a.lines_text() == b.lines_text()
    own, kh, h5, never = a.lines
    assert own.settle.mean == a.settle.mean and own.caller == a.caller  # the hand's deals
    assert never.caller == 0  # a seat that never shows is never the caller (R10)
    assert kh.caller > h5.caller  # the 5s are overridden far more often than the Ks (R6)
    assert len({ln.settle.mean for ln in a.lines}) == 4
    best = a.best_line()
    assert a.lines[best].settle.mean == max(ln.settle.mean for ln in a.lines)
    text = a.text()
    for label in labels:
        assert label in text
    assert f"best: {a.lines[best].label}" in text
    d = a.to_dict()
    assert [r["line"] for r in d["calling_lines"]] == labels
    assert d["calling_lines"][best]["vs_best"]["mean"] == 0


def test_forced_loops_leave_play_alone_when_not_forced():
    # the generated loops of --compare-calls with the line off (-1) play exactly what the
    # ordinary loops play: only the fixed seat's show decisions are ever forced
    from sim.core.tables import N_COLS
    from sim.loops import runner
    from sim.rules import DEFAULT_RULES
    from sim.tools.estimate import _forced_loops

    # greedy in every seat (estimate's default, as in test_compare_calls_lists_each_line_...):
    # its forced loops compile once for both tests (the three other seats show unforced here
    # too); greedy beside random compiled a set of forced loops of its own
    t = runner.compiled_tables(runner.make_seats("greedy"))
    fixed = np.array(parse_hand("Kh Kh 5h 5h"), dtype=np.int64)
    a = np.zeros((500, N_COLS), dtype=np.int64)
    b = np.zeros((500, N_COLS), dtype=np.int64)
    r = DEFAULT_RULES.array()
    t.loops.play_deals_fixed(np.uint64(7), np.uint64(0), 500, r, *t, 2, fixed, a)
    _forced_loops(t.loops.kinds).play_deals_fixed(np.uint64(7), np.uint64(0), 500,
                                                  np.append(r, -1), *t, 2, fixed, b)
    assert (a == b).all()


def test_never_calls_says_so(capsys):
    # 27 single cards, no pair: the seat can never show (R6), so never becomes the caller
    singles = " ".join([f"{r}s" for r in "A23456789TJQK"] + [f"{r}h" for r in "A23456789TJQK"]
                       + ["BJ"])
    e = estimate(singles, seat=2, deals=500, compare_calls=True)
    assert e.caller == 0
    assert "greedy in seat 2 never became the caller with this hand (0 of 500 deals)" \
        in e.text()
    assert [ln.label for ln in e.lines] == ["greedy's own calling", "never show"]
    assert estimate(KINGS, deals=500).never_calls() is None
    assert main(["estimate", "--hand", singles, "--seat", "2", "--deals", "300"]) == 0
    assert "never became the caller" in capsys.readouterr().out


def test_contradictory_options_one_line(capsys):
    assert main(["estimate", "--hand", KINGS, "--json", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--json and --quiet contradict" in err


def test_compare_calls_refuses_plugins():
    # the forced lines run in generated built-in loops only: a plug-in seat is one line (not
    # registered with --plugin here: a registered name changes how later tests' specs read)
    from strategies.example_compiled import CautiousC
    from strategies.registry import make

    with pytest.raises(ConfigError, match="--compare-calls needs built-in players in every "
                                          "seat; 'cautious_c' is a plug-in"):
        estimate(KINGS, seats=[CautiousC(), make("greedy")], deals=10, compare_calls=True)


# --- the fixed-card deals are ordinary deals conditioned on the seat's hand -----------------
# "Uniform among the deals that give those cards to the seat" = an ordinary deal (the
# engine's own init_deal) conditioned on the seat holding at least the named multiset. The
# tests below compare estimate's deals with rejection sampling of ordinary deals: chi-square
# two-sample tests (fixed seeds, so deterministic) at a strict level, on the seat's counts of
# the named types, the other seats' counts, where the first named card arrives and the suit
# make-up of the rest of the hand, and a z-test on the calling rate and attack rate.
P_MIN = 1e-4  # each test rejects "same distribution" below this p-value

_decks_fn = None


def _decks(seed: int, n: int, seat: int, fixed: list[int]) -> np.ndarray:
    """``(n, 108)`` int8 decks of deals ``0 … n-1`` of ``seed``: ``init_deal_fixed`` with
    ``fixed`` in ``seat`` or, for ``fixed == []``, the ordinary ``init_deal`` path."""
    global _decks_fn
    if _decks_fn is None:
        from numba import njit

        from sim.core.engine import init_deal_fixed

        @njit
        def run(seed, n, fix_seat, fix_cards):
            st = np.zeros(S.ST_SIZE, dtype=np.int64)
            u = np.zeros(S.U_SIZE, dtype=np.uint64)
            out = np.zeros((n, 108), dtype=np.int8)
            for d in range(n):
                init_deal_fixed(st, u, seed, np.uint64(d), fix_seat, fix_cards)
                for i in range(108):
                    out[d, i] = st[S.S_DECK + i]
            return out

        _decks_fn = run
    cards = np.array(fixed, dtype=np.int64)
    return _decks_fn(np.uint64(seed), n, seat if len(fixed) else -1, cards)


def _holds(decks: np.ndarray, seat: int, fixed: list[int]) -> np.ndarray:
    hand = decks[:, seat::4]
    ok = np.ones(len(decks), dtype=bool)
    for c, k in Counter(fixed).items():
        ok &= (hand == c).sum(axis=1) >= k
    return ok


def _two_sample_p(a: list, b: list) -> float:
    """Chi-square test that the categorical samples ``a`` and ``b`` share a distribution
    (categories with fewer than 20 observations in all pooled into one)."""
    chi2_contingency = pytest.importorskip("scipy.stats").chi2_contingency
    ca, cb = Counter(a), Counter(b)
    cats = sorted(set(ca) | set(cb), key=str)
    big = [c for c in cats if ca[c] + cb[c] >= 20]
    rest = [c for c in cats if c not in big]
    table = [[ca[c] for c in big] + [sum(ca[c] for c in rest)],
             [cb[c] for c in big] + [sum(cb[c] for c in rest)]]
    table = np.array(table)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return float(chi2_contingency(table)[1])


def _features(decks: np.ndarray, seat: int, fixed: list[int]) -> dict[str, list]:
    from sim.cards import SUITS

    types = sorted(set(fixed))
    hand = decks[:, seat::4]
    first = types[0]
    rounds = np.argmax(hand == first, axis=1)  # round of the first copy (it holds one)
    hearts = np.isin(hand, [i for i in range(52) if SUITS[i % 4] == "h"]).sum(axis=1)
    return {
        "named counts": [tuple(r) for r in np.stack([(hand == t).sum(axis=1) for t in types],
                                                    axis=1)],
        "other seats' copies": [tuple(r) for r in np.stack(
            [(decks[:, (seat + o) % 4::4] == first).sum(axis=1) for o in (1, 2, 3)], axis=1)],
        "round of the first": list(rounds // 3),
        "hearts held": list(np.minimum(hearts, 14)),
    }


@pytest.mark.parametrize("hand, seat, n_plain", [
    ("Kh", 0, 60_000), ("Kh Kh", 1, 200_000), ("BJ", 2, 60_000), ("SJ SJ BJ", 3, 400_000),
    ("Kh 5s Ad BJ", 0, 400_000), ("Kh Kh 5h Qd", 1, 400_000)])
def test_fixed_deals_match_rejection_sampling(hand, seat, n_plain):
    fixed = parse_hand(hand)
    plain = _decks(11, n_plain, seat, [])
    plain = plain[_holds(plain, seat, fixed)]
    assert len(plain) >= 1000  # enough accepted deals for the tests to have power
    mine = _decks(12, 20_000, seat, fixed)
    assert _holds(mine, seat, fixed).all()
    assert (np.sort(mine, axis=1) == np.arange(108) // 2).all()  # every deal is a full deck
    fa, fb = _features(plain, seat, fixed), _features(mine, seat, fixed)
    for name in fa:
        p = _two_sample_p(fa[name], fb[name])
        assert p > P_MIN, f"{hand}: {name} differ from rejection sampling (p = {p:.2g})"


def test_second_copy_has_its_exact_probability():
    # holding at least one Kh, the seat holds the other with probability
    # C(106, 25) / (2 C(106, 26) + C(106, 25)) = 26 / 188 = 0.1383 (it was 0.243 when one copy
    # was fixed and the rest dealt uniformly)
    mine = _decks(5, 40_000, 0, [49])
    two = int(((mine[:, 0::4] == 49).sum(axis=1) == 2).sum())
    p = 26 / 188
    z = (two - 40_000 * p) / math.sqrt(40_000 * p * (1 - p))
    assert abs(z) < 4, (two / 40_000, p)


def test_calling_rate_matches_rejection_sampling():
    # with max_redeals = 0 an ordinary deal is played from its first shuffle, so keeping the
    # ordinary deals in which seat 0 holds a Kh is exactly estimate's distribution
    from sim.loops import runner
    from sim.loops.loop import C_CALLER, C_VOID, N_COLS, play_deals
    from sim.rules import Rules

    rules = Rules(max_redeals=0)
    n = 100_000
    keep = _holds(_decks(21, n, 0, []), 0, [49])
    out = np.zeros((n, N_COLS), dtype=np.int64)
    play_deals(np.uint64(21), np.uint64(0), n, rules.array(),
               *runner.compiled_tables(runner.make_seats("random")), out)
    out = out[keep]
    played = out[:, C_VOID] == 0
    ref = {"caller": int((played & (out[:, C_CALLER] == 0)).sum()),
           "attacks": int((played & (out[:, C_CALLER] % 2 == 0)).sum())}
    est = estimate("Kh", seat=0, deals=len(out), seed=22, rules=rules, seats="random")
    for key, k in (("caller", est.caller), ("attacks", est.attacks)):
        p1, p2 = ref[key] / len(out), k / est.deals
        pool = (ref[key] + k) / (len(out) + est.deals)
        z = (p1 - p2) / math.sqrt(pool * (1 - pool) * (1 / len(out) + 1 / est.deals))
        assert abs(z) < 4, (key, p1, p2, z)
