"""``shuangkou estimate``: fixed cards in one seat, the rest at random."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sim.cli import main
from sim.errors import ConfigError, InvalidCardError
from sim.estimate import estimate, parse_hand, wilson

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
    assert lo <= p <= hi and hib < lo  # clearly more often the caller than with a 4
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
    from sim.engine import S_DECK, init_deal_fixed, new_state

    st, u = new_state()
    fixed = np.array(parse_hand("BJ BJ 5h"), dtype=np.int64)
    for d in range(20):
        init_deal_fixed(st, u, np.uint64(4), np.uint64(d), 2, fixed)
        hand = sorted(int(c) for c in st[S_DECK:S_DECK + 108][2::4])
        assert hand.count(53) == 2 and 17 in hand


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
