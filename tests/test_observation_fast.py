"""Observation's fields, read through the deal's shared caches (hands and the current trick
updated by difference, tricks, calls and points kept as they grow), equal the fields computed
the plain way from the masked state (``masked_state``: the one masking kernel,
``sim.view.mask_into``, which tests/test_spaces.py checks against a spec) at every decision
of many deals."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sim.cards import CARD_NAMES, ID_OF_KEY, SUITS
from sim.core import state as S
from sim.deal import Deal
from sim.observation import Observation, play_table
from sim.record import mask_cards
from sim.view import mask_into

FIELDS = ("trump", "hand", "round", "redeals", "calls", "shown", "caller", "attackers",
          "attacking", "tricks", "trick", "leader", "lead", "attacker_points", "points_taken",
          "voids", "first_hand")


def masked_state(st, u, seat):
    m_st, m_u = np.empty_like(st), np.empty_like(u)
    mask_into(st, u, seat, m_st, m_u)
    return m_st, m_u


def _names(once, twice, t):
    return [CARD_NAMES[c] for c in mask_cards(once, twice, None if t < 0 else ID_OF_KEY[t])]


def _play(table, a, b):
    return list(table[a + (64 * (b + 1) if b >= 0 else 0)])


def reference(deal: Deal, seat: int) -> dict:
    """Every field from ``masked_state`` with plain Python, the way the fields were first
    written (no caches)."""
    st, u = masked_state(deal._st, deal._u, seat)
    g = lambda i: int(st[i])  # noqa: E731
    t = g(S.S_TRUMP)
    table = play_table(t) if t >= 0 else None
    calls = []
    for i in range(g(S.S_NCALLS)):
        r, s, card, took, ga, gb = (g(S.S_CALLS + i * S.CALL_W + k) for k in range(S.CALL_W))
        calls.append({"round": r, "seat": s, "pair": CARD_NAMES[card],
                      "took_from": took if took >= 0 else None,
                      "gave": [CARD_NAMES[ga], CARD_NAMES[gb]]
                      if took >= 0 and seat in (s, took) and ga >= 0 else None})
    tricks, pts = [], [0, 0, 0, 0]
    for i in range(g(S.S_NTRICKS) if t >= 0 else 0):
        r = [g(S.S_TRICKS + i * S.TRICK_W + k) for k in range(S.TRICK_W)]
        tricks.append({"leader": r[0], "winner": r[1], "points": r[2],
                       "plays": [_play(table, r[3 + k], r[7 + k]) for k in range(4)]})
        pts[r[1]] += r[2]
    trick = []
    if t >= 0 and g(S.S_PHASE) == S.PLAY:
        trick = [_play(table, g(S.S_TRICK_A + k), g(S.S_TRICK_B + k)) for k in range(g(S.S_POS))]
    caller = g(S.S_CALLER)
    side = [x for x in SUITS if t >= 0 and x != SUITS[t]] + ["trump"]
    return {
        "trump": SUITS[t] if t >= 0 else None,
        "hand": _names(int(u[S.U_ONCE + seat]), int(u[S.U_TWICE + seat]), t),
        "round": g(S.S_ROUND), "redeals": g(S.S_REDEALS), "calls": calls,
        "shown": (g(S.S_CUR_SEAT), CARD_NAMES[g(S.S_CUR_CARD)]) if g(S.S_CUR_SEAT) >= 0 else None,
        "caller": caller if caller >= 0 else None,
        "attackers": (caller % 2, caller % 2 + 2) if caller >= 0 else None,
        "attacking": seat % 2 == caller % 2 if caller >= 0 else None,
        "tricks": tricks, "trick": trick,
        "leader": g(S.S_LEADER) if g(S.S_PHASE) == S.PLAY else None,
        "lead": trick[0] if trick else None,
        "attacker_points": g(S.S_ATT_POINTS), "points_taken": pts,
        "voids": [{n for k, n in enumerate(side) if g(S.S_VOIDS + s) >> k & 1} if t >= 0
                  else set() for s in range(4)],
        "first_hand": _names(int(u[S.U_FIRST_ONCE + seat]), int(u[S.U_FIRST_TWICE + seat]), t)
        if t >= 0 else [],
    }


@pytest.mark.parametrize("part", range(4))
def test_every_field_equals_the_plain_computation_at_every_decision(part):
    """25 deals per part, 100 in all: at each decision the seat to act and a random other
    seat are observed, their fields read in a random order (and some not at all, so that the
    shared caches are updated across gaps), and compared to the reference."""
    rng = random.Random(part)
    checked = 0
    for d in range(25 * part, 25 * part + 25):
        deal = Deal(11, d)
        while not deal.done:
            seat = deal.to_act.seat
            for s in (seat, rng.randrange(4)):
                if rng.random() < 0.3:
                    continue
                obs, ref = Observation(deal, s), reference(deal, s)
                fields = list(FIELDS)
                rng.shuffle(fields)
                for f in fields[:rng.randrange(1, len(fields) + 1)]:
                    assert getattr(obs, f) == ref[f], (d, s, f)
                    checked += 1
            codes = deal.legal_codes()
            deal.apply_code(codes[rng.randrange(len(codes))])
        for s in range(4):  # the final state too
            obs, ref = Observation(deal, s), reference(deal, s)
            assert all(getattr(obs, f) == ref[f] for f in FIELDS), (d, s)
    assert checked > 10_000


def test_fields_are_fresh_copies_and_a_read_observation_outlives_the_move():
    deal = Deal(5, 1)
    while deal.to_act.kind != "play" or not Observation(deal, deal.to_act.seat).trick:
        deal.apply_code(deal.legal_codes()[-1])
    seat = deal.to_act.seat
    obs = Observation(deal, seat)
    hand, trick, pts = obs.hand, obs.trick, obs.points_taken
    ref = reference(deal, seat)
    hand.clear()
    trick[0].append("Kh")
    pts[0] += 99
    again = Observation(deal, seat)  # the deal's caches are untouched by the edits
    assert again.hand == ref["hand"] and again.trick == ref["trick"]
    assert again.points_taken == ref["points_taken"]
    deal.apply_code(deal.legal_codes()[0])
    # the first read took the snapshot: every field still describes the old decision
    assert obs.first_hand == ref["first_hand"] and obs.tricks == ref["tricks"]
    assert obs.calls == ref["calls"] and obs.voids == ref["voids"]
    with pytest.raises(ValueError, match="stale observation"):
        again2 = Observation.__new__(Observation)
        Observation.__init__(again2, deal, seat)
        deal.apply_code(deal.legal_codes()[0])
        again2.hand  # noqa: B018


def test_arrays_are_the_masked_state():
    deal = Deal(3, 4)
    for _ in range(60):
        deal.apply_code(deal.legal_codes()[0])
    for s in range(4):
        st, u = Observation(deal, s).arrays()
        m_st, m_u = masked_state(deal._st, deal._u, s)
        assert (st == m_st).all() and (u == m_u).all()
