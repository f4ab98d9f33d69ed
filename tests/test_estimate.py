"""``shuangkou estimate``: fixed cards in one seat, the rest at random."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from sim.cli import main
from sim.errors import ConfigError, InvalidCardError
from sim.harness.estimate import estimate, parse_hand, wilson

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
    from sim.core.engine import S_DECK, init_deal_fixed, new_state

    st, u = new_state()
    fixed = np.array(parse_hand("BJ BJ 5h"), dtype=np.int64)
    for d in range(20):
        init_deal_fixed(st, u, np.uint64(4), np.uint64(d), 2, fixed)
        hand = sorted(int(c) for c in st[S_DECK:S_DECK + 108][2::4])
        assert hand.count(53) == 2 and 17 in hand


def test_estimate_intervals_cover_the_truth():
    # the 95% intervals estimate reports (Wilson, near p = 0.92 here, where k/n ± 1.96·se
    # undercovers) contain the true proportion in about 95% of independent runs; the truth
    # from 30,000 deals of another seed (its own error is a tenth of one run's)
    big = estimate(KINGS, seat=1, deals=30_000, seed=100)
    truth = big.caller / big.deals
    assert 0.85 < truth < 0.97
    covered, widths = 0, []
    for seed in range(1, 61):
        p, lo, hi = estimate(KINGS, seat=1, deals=400, seed=seed).proportions()["caller"]
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
    assert "seat 3 is dealt Kh Kh Ks Ks Kd Kd" in out and "P(seat 3 becomes the caller)" in out
    assert "settlement per deal" in out and "[" in out
    assert main(["estimate", "--hand", KINGS, "--deals", "2000", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["deals"] == 2000 and 0 <= d["p_caller"]["lo"] <= d["p_caller"]["p"] <= 1
    assert main(["estimate", "--hand", "Kh Kh Kh", "--deals", "10"]) == 2
    assert "Kh 3 times" in capsys.readouterr().err


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

        from sim.core.engine import S_DECK, ST_SIZE, U_SIZE, init_deal_fixed

        @njit
        def run(seed, n, fix_seat, fix_cards):
            st = np.zeros(ST_SIZE, dtype=np.int64)
            u = np.zeros(U_SIZE, dtype=np.uint64)
            out = np.zeros((n, 108), dtype=np.int8)
            for d in range(n):
                init_deal_fixed(st, u, seed, np.uint64(d), fix_seat, fix_cards)
                for i in range(108):
                    out[d, i] = st[S_DECK + i]
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
    from sim.harness import runner
    from sim.harness.loop import C_CALLER, C_VOID, N_COLS, play_deals
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
    est = estimate("Kh", seat=0, deals=len(out), seed=22, rules=rules)
    for key, k in (("caller", est.caller), ("attacks", est.attacks)):
        p1, p2 = ref[key] / len(out), k / est.deals
        pool = (ref[key] + k) / (len(out) + est.deals)
        z = (p1 - p2) / math.sqrt(pool * (1 - pool) * (1 / len(out) + 1 / est.deals))
        assert abs(z) < 4, (key, p1, p2, z)
