"""Invariants of every deal (hypothesis), checked decision by decision through the step API."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from sim import Deal, Rules, card_points
from sim.cards import RANKS
from strategies.random import RandomStrategy

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
DEALS = st.integers(min_value=0, max_value=2**63 - 1)
PROBS = st.floats(min_value=0.0, max_value=1.0)


def _play_checked(seed, deal, probs, rules=None):
    d = Deal(seed, deal, rules)
    bots = [RandomStrategy(show_prob=p) for p in probs]
    for s, b in enumerate(bots):
        b.begin_deal(s, seed, deal)
    last_rank = -1
    started = False
    while not d.done:
        seat, kind = d.to_act
        legal = d.legal()
        assert legal, "a decision always has a legal choice"
        if kind == "show":
            assert legal[0] is None and len(legal) >= 2  # pass, and at least one show (R6)
        choice = bots[seat].choose(d.observation(seat), legal)
        assert choice in legal
        d.apply(choice)
        if kind == "show" and choice is not None:
            rank = RANKS.index(choice[0])
            assert rank > last_rank  # R6: calls strictly increasing (a redeal has no calls)
            last_rank = rank
        if d.done or d.to_act.kind == "show" or (d.to_act.kind == "play"
                                                  and not d.observation(0).trick):
            sizes = {d.cards_left(s) for s in range(4)}
            assert len(sizes) == 1  # R8: after every override all hands are equal again
        if not started and not d.done and d.to_act.kind == "play":
            started = True
            assert [d.cards_left(s) for s in range(4)] == [27] * 4  # 27 cards at the lead
    return d.record()


@settings(max_examples=150, deadline=None)
@given(SEEDS, DEALS, st.tuples(PROBS, PROBS, PROBS, PROBS))
def test_deal_invariants(seed, deal, probs):
    rec = _play_checked(seed, deal, probs)
    assert sum(rec["settlement"]) == 0  # R24 zero-sum
    assert rec["settlement"][0] == rec["settlement"][2] and \
        rec["settlement"][1] == rec["settlement"][3]
    if rec["void"]:
        assert rec["tricks"] == [] and rec["settlement"] == [0, 0, 0, 0]
        return
    played = Counter(c for t in rec["tricks"] for p in t["plays"] for c in p)
    assert sum(played.values()) == 108 and set(played.values()) == {2}  # R1: every card once
    assert sum(t["points"] for t in rec["tricks"]) == 200  # R3
    assert all(len(h) == 27 for h in rec["hands"])
    hand_cards = Counter(c for h in rec["hands"] for c in h)
    assert hand_cards == played
    for t in rec["tricks"]:
        assert t["points"] == card_points([c for p in t["plays"] for c in p])
    att = set(rec["attackers"])
    won = sum(t["points"] for t in rec["tricks"] if t["winner"] in att)
    assert rec["attacker_points"] == won  # R22
    assert rec["attackers"] == sorted([rec["caller"] % 2, rec["caller"] % 2 + 2])  # R10
    assert rec["trump"] == rec["calls"][-1]["pair"][1]  # R10


@settings(max_examples=40, deadline=None)
@given(SEEDS, DEALS, st.integers(min_value=0, max_value=3))
def test_redeals_bounded_and_void_only_after_max(seed, deal, max_redeals):
    rec = _play_checked(seed, deal, (0.01, 0.01, 0.01, 0.01), Rules(max_redeals=max_redeals))
    assert 0 <= rec["redeals"] <= max_redeals  # R11
    if rec["void"]:
        assert rec["redeals"] == max_redeals
