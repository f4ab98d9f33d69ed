"""The fixed action space and observation vector (sim.spaces) and the fast Python tier."""

from __future__ import annotations

import random

import numpy as np
import pytest

import sim
from sim.cards import CARD_NAMES, parse_card
from sim.core import state as S
from sim.deal import Deal
from sim.errors import IllegalPlayError
from sim.observation import Observation
from sim.spaces import (
    A_SINGLE,
    A_TWO,
    N_ACTIONS,
    OBS_OFFSETS,
    OBS_SIZE,
    PAIR_A,
    PAIR_B,
    PAIR_INDEX,
    fill_obs,
    mask_into,
    obs_spec,
)


def _walk(deals=6, seed=11):
    """Every decision of a few random deals: yields the deal before each decision."""
    rng = random.Random(seed)
    for d in range(deals):
        deal = Deal(seed, d)
        while not deal.done:
            yield deal
            codes = deal.legal_codes()
            deal.apply_code(codes[rng.randrange(len(codes))])
        yield deal


def test_action_space_layout():
    assert N_ACTIONS == 1 + 54 + 54 + 54 * 55 // 2 == 1594
    idx = [int(PAIR_INDEX[a, b]) for a in range(54) for b in range(a, 54)]
    assert idx == list(range(1485))  # (0,0), (0,1), … (1,1), … in order
    assert all(PAIR_INDEX[a, b] == PAIR_INDEX[b, a] for a in range(54) for b in range(54))
    assert all(PAIR_A[i] <= PAIR_B[i] for i in range(1485))
    spec = obs_spec()
    assert sum(f["size"] for f in spec) == OBS_SIZE
    assert [f["offset"] for f in spec] == sorted(f["offset"] for f in spec)


def test_actions_round_trip_with_codes_and_notation():
    kinds = set()
    for deal in _walk():
        if deal.done:
            assert not deal.legal_mask().any()
            continue
        kind = deal.to_act.kind
        kinds.add(kind)
        acts = deal.legal_actions()
        assert len(set(acts)) == len(acts) == len(deal.legal_codes())
        assert sorted(acts) == np.flatnonzero(deal.legal_mask()).tolist()
        for a, code, choice in zip(acts, deal.legal_codes(), deal.legal()):
            assert deal.code_of_action(a) == code
            assert sim.choice_of_action(a, kind, deal.trump) == choice
            assert sim.action_of(choice, kind) == a
            if kind == "play":
                assert (a < A_TWO) == (len(choice) == 1)
    assert kinds == {"show", "giveback", "play"}


def test_illegal_action_is_an_error():
    deal = Deal(3, 0)
    legal = set(deal.legal_actions())
    bad = next(a for a in range(N_ACTIONS) if a not in legal)
    with pytest.raises(IllegalPlayError, match="not legal"):
        deal.apply_action(bad)
    with pytest.raises(IllegalPlayError):
        deal.apply_action(N_ACTIONS)
    with pytest.raises(IllegalPlayError, match="not a play action"):
        sim.choice_of_action(3, "play")


def test_apply_action_plays_like_apply_code():
    a, b = Deal(5, 2), Deal(5, 2)
    rng = random.Random(1)
    while not a.done:
        i = rng.randrange(len(a.legal_codes()))
        a.apply_code(a.legal_codes()[i])
        b.apply_action(b.legal_actions()[i])
    assert a.record() == b.record()


def test_obs_reads_only_what_the_seat_may_know():
    """The vector of every seat at every decision equals the vector of its masked state
    (R9): hidden cards, others' give-backs and streams change nothing."""
    out1 = np.empty(OBS_SIZE, np.int16)
    out2 = np.empty(OBS_SIZE, np.int16)
    m_st = np.empty(0)
    for deal in _walk(deals=4):
        for s in range(4):
            fill_obs(deal._st, deal._u, s, out1)
            m_st, m_u = masked_state(deal._st, deal._u, s)
            fill_obs(m_st, m_u, s, out2)
            assert (out1 == out2).all()


def masked_state(st: np.ndarray, u: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The spec of what ``seat`` may know (R9), in plain Python, independent of the one
    implementation (the kernel ``sim.view.mask_into``, used by ``Observation.arrays`` and the
    plug-in loops): copies of a deal's state.

    Blanked: the deck, the other hands (now and at the first lead), the give-backs between
    other players, the fixed-card constraint of ``estimate``, and every random stream but
    the seat's own two. Public calls, tricks, voids and played cards stay.
    """
    m_st = st.copy()
    m_u = u.copy()
    m_st[S.S_DECK:S.S_DECK + 108] = -1
    m_st[S.S_FIX_SEAT] = -1
    m_st[S.S_FIX_N] = 0
    m_st[S.S_FIX:S.S_FIX + 27] = -1
    for i in range(int(st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        if seat not in (int(st[j + S.CALL_SEAT]), int(st[j + S.CALL_TOOK])):
            m_st[j + S.CALL_GAVE_A] = -1
            m_st[j + S.CALL_GAVE_B] = -1
    for s in range(4):
        if s != seat:
            for off in (S.U_ONCE, S.U_TWICE, S.U_FIRST_ONCE, S.U_FIRST_TWICE):
                m_u[off + s] = 0
    for slot in range(S.N_STREAMS):
        if slot not in (S.STREAM_SEAT + seat, S.STREAM_SAMPLE + seat):
            m_u[S.U_KEY + slot] = 0
            m_u[S.U_CTR + slot] = 0
    return m_st, m_u


def test_compiled_mask_equals_masked_state():
    """The one masking kernel against the plain-Python spec above, at every decision."""
    for deal in _walk(deals=3):
        for s in range(4):
            m_st, m_u = masked_state(deal._st, deal._u, s)
            c_st, c_u = np.empty_like(m_st), np.empty_like(m_u)
            mask_into(deal._st, deal._u, s, c_st, c_u)
            assert (m_st == c_st).all() and (m_u == c_u).all()


def _field(v, name):
    o = OBS_OFFSETS[name]
    size = next(f["size"] for f in obs_spec() if f["name"] == name)
    return v[o:o + size].tolist()


def test_obs_fields_agree_with_the_observation():
    seen_trick = seen_void = False
    for deal in _walk(deals=5, seed=3):
        if deal.done:
            continue
        seat = deal.to_act.seat
        v = deal.obs_array()
        obs = Observation(deal, seat)
        counts = [0] * 54
        for c in obs.hand:
            counts[parse_card(c)] += 1
        assert _field(v, "hand") == counts
        trick = [[parse_card(c) for c in p] for p in obs.trick]
        assert _field(v, "trick")[:len(trick)] == [p[0] for p in trick]
        assert _field(v, "trick")[4:4 + len(trick)] == [p[1] if len(p) > 1 else -1
                                                       for p in trick]
        seen_trick |= bool(trick)
        assert _field(v, "points") == obs.points_taken
        assert _field(v, "attacker_points") == [obs.attacker_points]
        assert _field(v, "cards_left") == [deal.cards_left(s) for s in range(4)]
        assert _field(v, "seat") == [seat] and _field(v, "to_act") == [seat]
        assert _field(v, "caller") == [obs.caller if obs.caller is not None else -1]
        if obs.trump is not None:
            assert _field(v, "trump") == [int(x == obs.trump) for x in "shdc"]
            sides = [x for x in "shdc" if x != obs.trump] + ["trump"]
            voids = _field(v, "voids")
            assert [{sides[g] for g in range(4) if voids[4 * s + g]} for s in range(4)] \
                == obs.voids
            seen_void |= any(voids)
            played = [0] * 54
            for t in obs.tricks:
                for p in t["plays"]:
                    for c in p:
                        played[parse_card(c)] += 1
            for p in obs.trick:
                for c in p:
                    played[parse_card(c)] += 1
            assert _field(v, "played") == played
    assert seen_trick and seen_void


def test_observation_array_and_fields_are_cached():
    deal = Deal(2, 1)
    while deal.to_act.kind != "play":
        deal.apply_code(deal.legal_codes()[-1])
    obs = deal.observation(deal.to_act.seat)
    assert obs.hand is obs.hand and obs.trick is obs.trick
    assert (obs.array() == deal.obs_array()).all()
    deal.apply_code(deal.legal_codes()[0])
    assert obs.hand  # read before the deal moved: still readable
    stale = Observation(deal, 0)
    deal.apply_code(deal.legal_codes()[0])
    with pytest.raises(ValueError, match="stale"):
        _ = stale.hand


def test_action_of_notation():
    assert sim.action_of(None) == 0 and sim.action_of("Kh", "show") == 1 + parse_card("Kh")
    assert sim.action_of("Kh", "play") == A_SINGLE + parse_card("Kh")
    assert sim.action_of(("9s", "4d")) == sim.action_of(("4d", "9s"))
    a = sim.action_of(("5d", "5c"))
    assert sim.choice_of_action(a, "giveback") == ("5d", "5c")  # by id
    # under trump hearts 付5 of diamonds has the smaller key: play notation is key order
    assert sim.choice_of_action(a, "play", "h") == ("5d", "5c")
    assert sim.choice_of_action(a, "play", "c") == ("5d", "5c")
    assert sim.choice_of_action(sim.action_of(("BJ", "3s")), "play", "s") == ("3s", "BJ")
    with pytest.raises(IllegalPlayError, match="jokers"):
        sim.action_of("BJ", "show")
    assert len(set(CARD_NAMES)) == 54
