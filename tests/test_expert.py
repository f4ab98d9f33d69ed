"""The ``expert`` player: fair (decides from the masked state), greedy by default, its
calling-phase sampler deals consistent worlds from what the seat may know only."""

from __future__ import annotations

import numpy as np
import pytest

from sim import Deal
from sim.core import state as S
from sim.loops.runner import iter_records, make_seats
from sim.view import mask_into
from strategies import make
from strategies.expert import R_SAMPLER, R_WST, play_loglik, sample_calling_world
from strategies.params import param_table
from strategies.sampler import FLOAT_REGION, sample_world
from strategies.tier import new_scratch


def test_expert_spec_and_params():
    assert make("expert").spec() == "expert"
    s = make("expert(samples=8, call_samples=16, giveback_k=6, min_cards=12, infer=control)")
    assert s.spec() == "expert(samples=8, call_samples=16, giveback_k=6, min_cards=12, " \
                       "infer=control)"
    assert not s.oracle
    with pytest.raises(ValueError, match="giveback_k=20.*int in"):
        make("expert(giveback_k=20)")


def test_python_tier_equals_compiled_tier():
    # the Python tier runs the kernel on the observation's masked state (no other hands, no
    # deck, no private give-backs): identical records mean no hidden information is used,
    # in trick play, at show chances and at give-backs alike
    seats = make_seats(["expert(samples=3, call_samples=3, giveback_k=4, infer=weighted)",
                        "greedy"])
    compiled = list(iter_records(8, 0, 2, seats))
    python = list(iter_records(8, 0, 2, seats, python_tier=True))
    assert compiled == python
    assert any(c["took_from"] is not None for r in compiled for c in r["calls"])  # an override


@pytest.mark.parametrize("spec", [
    "expert(samples=0, call_samples=0, min_cards=10)",
    "expert(samples=6, call_samples=6, giveback_k=4, margin=100.0, min_cards=10)"])
def test_default_is_greedy(spec):
    # no search, or a margin no challenger can beat: every decision is greedy's
    drop = ("seats",)
    ours = [{k: v for k, v in r.items() if k not in drop}
            for r in iter_records(3, 0, 4, make_seats([spec, "greedy"]))]
    theirs = [{k: v for k, v in r.items() if k not in drop}
              for r in iter_records(3, 0, 4, make_seats(["greedy"]))]
    assert ours == theirs


def test_recheck_batches_only_extend_a_close_call():
    """``recheck`` > 1 draws further batches only while the challenger's paired interval
    straddles the margin: with ``margin=-100`` (every first batch switches) it changes
    nothing; at the default margin it plays other moves somewhere, from the masked state too
    (the Python tier runs the kernel on the observation)."""
    def records(spec, python_tier=False):
        return list(iter_records(5, 0, 3, make_seats([spec, "greedy"]),
                                 python_tier=python_tier))

    def plays(recs):
        return [r["tricks"] for r in recs]

    loose = "expert(samples=4, call_samples=0, margin=-100.0)"
    assert plays(records(loose)) == plays(records(loose[:-1] + ", recheck=4)"))
    one = "expert(samples=4, call_samples=0, recheck=1)"
    four = "expert(samples=4, call_samples=0, recheck=4)"
    assert plays(records(one)) != plays(records(four))
    assert records(four) == records(four, python_tier=True)


def test_egreedy_rollouts_change_plays_and_see_only_the_observation():
    """``rollout=egreedy`` plays the rollouts with a random play one time in ten: other
    decisions than greedy rollouts somewhere, drawn from the seat's own sampling stream, so the
    masked state (Python tier) gives the same records and a second run repeats them."""
    def records(spec, python_tier=False):
        return list(iter_records(5, 0, 3, make_seats([spec, "greedy"]),
                                 python_tier=python_tier))

    greedy = "expert(samples=8, call_samples=4, recheck=1, rollout=greedy)"
    egreedy = "expert(samples=8, call_samples=4, recheck=1, rollout=egreedy)"
    assert [r["tricks"] for r in records(greedy)] != [r["tricks"] for r in records(egreedy)]
    assert records(egreedy) == records(egreedy, python_tier=True) == records(egreedy)


def _calling_decisions(seed, deals):
    """(state, u, seat) copies at the calling decisions of greedy deals (shows, give-backs)."""
    bots = make_seats(["greedy"])
    for deal in range(deals):
        d = Deal(seed, deal)
        for s, b in enumerate(bots):
            b.begin_deal(s, seed, deal)
        while not d.done:
            seat, kind = d.to_act
            if kind != "play":
                yield d._st.copy(), d._u.copy(), seat
            d.apply(bots[seat].choose(d.observation(seat), d.legal()))


def _counts(bits_once, bits_twice):
    return np.array([((bits_once >> c) & 1) + ((bits_twice >> c) & 1) for c in range(54)])


def masked_state(st, u, seat):
    """What ``seat`` may know of the deal (R9): a masked copy through ``sim.view.mask_into``."""
    m_st, m_u = np.zeros_like(st), np.zeros_like(u)
    mask_into(st, u, seat, m_st, m_u)
    return m_st, m_u


def test_calling_world_is_consistent_and_uses_only_the_seat_view():
    buf, fws, uws = new_scratch()
    n = 0
    for st, u, seat in _calling_decisions(11, 6):
        assert st[S.S_PHASE] in (S.CALL, S.GIVEBACK) and st[S.S_TO_ACT] == seat
        worlds = []
        for full in (True, False):  # the full state and the seat's masked one
            s_, u_ = (st.copy(), u.copy()) if full else masked_state(st, u, seat)
            u_[S.U_KEY + S.STREAM_SAMPLE + seat] = np.uint64(99)
            u_[S.U_CTR + S.STREAM_SAMPLE + seat] = np.uint64(0)
            wu = np.zeros(S.U_SIZE, dtype=np.uint64)
            sample_calling_world(s_, u_, seat, buf[R_WST:R_WST + S.ST_SIZE], wu, buf)
            worlds.append((buf[R_WST:R_WST + S.ST_SIZE].copy(), wu.copy()))
        (w1, wu1), (w2, wu2) = worlds
        r = int(st[S.S_ROUND])
        # same world whether or not the hidden cards were there to read
        rest = slice(S.S_DECK + 4 * r, S.S_DECK + 108)
        assert np.array_equal(wu1[:8], wu2[:8]) and np.array_equal(w1[rest], w2[rest])
        # every card exactly twice across the hands and the cards not dealt yet
        total = sum(_counts(int(wu1[S.U_ONCE + s]), int(wu1[S.U_TWICE + s])) for s in range(4))
        total += np.bincount(w1[S.S_DECK + 4 * r:S.S_DECK + 108], minlength=54)
        assert (total == 2).all()
        # own hand unchanged, the others' hands of the right size, the shown pair at its shower
        assert wu1[S.U_ONCE + seat] == u[S.U_ONCE + seat]
        assert wu1[S.U_TWICE + seat] == u[S.U_TWICE + seat]
        for s in range(4):
            size = _counts(int(wu1[S.U_ONCE + s]), int(wu1[S.U_TWICE + s])).sum()
            want = _counts(int(u[S.U_ONCE + s]), int(u[S.U_TWICE + s])).sum()
            assert size == want
        h, cur = int(st[S.S_CUR_SEAT]), int(st[S.S_CUR_CARD])
        if h >= 0 and h != seat:
            assert (int(wu1[S.U_TWICE + h]) >> cur) & 1
        if st[S.S_PHASE] == S.GIVEBACK:
            assert int(st[S.S_GIVE_TO]) != seat
        n += 1
    assert n > 20


def test_inference_prefers_the_true_world_of_greedy_players():
    # three greedy seats play greedy's move every time: in the true deal every one of their
    # plays is the modelled one, so no consistent world explains their plays better, and
    # some sampled worlds explain them worse
    seed, deal, seat = 5, 2, 0
    d = Deal(seed, deal)
    bots = make_seats(["greedy"])
    for s, b in enumerate(bots):
        b.begin_deal(s, seed, deal)
    while not d.done:
        if d.to_act[1] == "play" and int(d._st[S.S_NTRICKS]) >= 8 and d.to_act[0] == seat:
            break
        s = d.to_act[0]
        d.apply(bots[s].choose(d.observation(s), d.legal()))
    st, u = d._st.copy(), d._u.copy()
    params = param_table([make("expert").compiled_params()] * 4)
    buf, fws, uws = new_scratch()
    best = play_loglik(st, u, d._rules, seat, params, buf, uws, u.copy())
    m_st, m_u = masked_state(st, u, seat)
    lls = []
    for k in range(40):
        m_u[S.U_KEY + S.STREAM_SAMPLE + seat] = np.uint64(1000 + k)
        wu = m_u.copy()
        sample_world(m_st, m_u, seat, wu, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
        lls.append(play_loglik(m_st, m_u, d._rules, seat, params, buf, uws, wu))
    assert max(lls) <= best + 1e-9 and min(lls) < best - 1.0
