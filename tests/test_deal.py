"""The step API: same records as the compiled loop, clear errors, observations that hide (R9)."""

from __future__ import annotations

import pytest

import sim
from sim import Deal, IllegalPlayError, Rules
from sim.deal import play_python
from sim.loops.runner import iter_records, make_seats
from strategies.random import RandomStrategy


@pytest.mark.parametrize("probs", [(0.25,) * 4, (1.0, 0.5, 1.0, 0.5)])
def test_step_api_random_equals_compiled_loop(probs):
    seats = make_seats([f"random(show_prob={p})" for p in probs])
    names = [s.spec() for s in seats]
    compiled = list(iter_records(21, 0, 300, seats))
    for rec in compiled:
        bots = [RandomStrategy(show_prob=p) for p in probs]
        assert play_python(Deal(21, rec["deal"], seats=names), bots) == rec


def _advance_to(deal, kind):
    bots = [RandomStrategy(show_prob=1.0) for _ in range(4)]
    for s, b in enumerate(bots):
        b.begin_deal(s, deal.seed, deal.deal)
    while not deal.done and deal.to_act.kind != kind:
        seat = deal.to_act.seat
        deal.apply(bots[seat].choose(deal.observation(seat), deal.legal()))


def _find(kind, pred=lambda d: True):
    for i in range(200):
        d = Deal(3, i)
        _advance_to(d, kind)
        if not d.done and pred(d):
            return d
    raise AssertionError(f"no deal reaches a {kind} decision")


def test_illegal_follow_names_seat_and_ruling():
    # find a follower who holds the led group but tries to play something else
    def holds_led_single(d):
        obs = d.observation(d.to_act.seat)
        lead = obs.lead
        if not lead or len(lead) != 1:
            return False
        legal = d.legal()
        return any(p not in legal for p in [(c,) for c in obs.hand])
    d = None
    for i in range(200):
        d = Deal(5, i)
        bots = [RandomStrategy() for _ in range(4)]
        for s, b in enumerate(bots):
            b.begin_deal(s, 5, i)
        while not d.done and not (d.to_act.kind == "play" and holds_led_single(d)):
            seat = d.to_act.seat
            d.apply(bots[seat].choose(d.observation(seat), d.legal()))
        if not d.done:
            break
    seat = d.to_act.seat
    bad = next((c,) for c in d.observation(seat).hand if (c,) not in d.legal())
    with pytest.raises(IllegalPlayError) as e:
        d.apply(bad)
    msg = str(e.value)
    assert msg.startswith(f"illegal play [{bad[0]!r}] by seat {seat}: holds a ")
    assert msg.endswith("must follow with one (R18)")


def test_illegal_show_and_giveback_messages():
    # the messages name the seat to act and the ruling, and a refused choice changes nothing
    d = _find("show")
    seat = d.to_act.seat
    before = (d.to_act, d.legal(), d.hand(seat))
    with pytest.raises(IllegalPlayError,
                       match=rf"^illegal show 'BJ' by seat {seat}: jokers are never shown \(R6\)$"):
        d.apply("BJ")
    with pytest.raises(IllegalPlayError, match=rf"^illegal show 'Zz' by seat {seat}: .*not a card"):
        d.apply("Zz")
    assert (d.to_act, d.legal(), d.hand(seat)) == before
    g = _find("giveback")
    gseat = g.to_act.seat
    shown = g.observation(gseat).calls[-1]["pair"]
    with pytest.raises(IllegalPlayError, match=rf"^illegal give-back \[{shown!r}, {shown!r}\] "
                       rf"by seat {gseat}: {shown!r} is of the pair just shown and stays \(R8\)$"):
        g.apply([shown, shown])
    assert g.to_act == (gseat, "giveback") and (shown, shown) not in g.legal()


def test_illegal_lead_R16():
    d = _find("play")
    obs = d.observation(d.to_act.seat)
    singles = sorted(set(obs.hand))
    with pytest.raises(IllegalPlayError, match="R16"):
        d.apply(tuple(singles[:2]))


def test_observation_hides_other_hands_and_private_givebacks():
    d = _find("play", lambda d: any(c["took_from"] is not None
                                    for c in d.observation(0).calls))
    calls = [d.observation(s).calls for s in range(4)]
    i = next(i for i, c in enumerate(calls[0]) if c["took_from"] is not None)
    giver, receiver = calls[0][i]["seat"], calls[0][i]["took_from"]
    for s in range(4):
        assert calls[s][i]["pair"] == calls[0][i]["pair"]  # shows are public (R9)
        assert calls[s][i]["took_from"] == receiver  # so are transfers
        assert (calls[s][i]["gave"] is not None) == (s in (giver, receiver))  # give-backs not
    for s in range(4):
        obs = d.observation(s)
        assert sorted(obs.hand) == sorted(d.hand(s))
        public = [a for a in dir(obs) if not a.startswith("_")]
        assert not {"hands", "deck"} & set(public)


def test_deal_validates_seed_and_rules():
    with pytest.raises(ValueError, match="seed -1 is out of range"):
        Deal(-1, 0)
    with pytest.raises(ValueError, match="deal"):
        Deal(0, -5)
    with pytest.raises(TypeError):
        Deal(0, 0, rules={"max_redeals": 1})
    assert Deal(0, 0, Rules(max_redeals=0)).rules.max_redeals == 0


def test_record_before_end_is_an_error():
    with pytest.raises(ValueError, match="not finished"):
        Deal(1, 1).record()


def test_observation_voids_match_the_tricks():
    from sim.reference import oracle as ref

    d = Deal(9, 4)
    bots = [RandomStrategy() for _ in range(4)]
    for s, b in enumerate(bots):
        b.begin_deal(s, 9, 4)
    while not d.done and len(d.observation(0).tricks) < 20:
        seat = d.to_act.seat
        d.apply(bots[seat].choose(d.observation(seat), d.legal()))
    obs = d.observation(0)
    expect = [set(), set(), set(), set()]
    for t in obs.tricks:
        g = ref.group(t["plays"][0][0], obs.trump)
        for k, p in enumerate(t["plays"][1:], 1):
            if sum(ref.group(c, obs.trump) == g for c in p) < len(p):
                expect[(t["leader"] + k) % 4].add(g)
    assert obs.voids == expect and any(expect)


def test_apply_takes_the_choice_not_its_position_in_legal():
    # Deal.apply maps a choice that came from legal() straight to its code (the Python
    # tier's fast path); a bot that reorders the list it was given must still get the play
    # it picked, the same as a choice spelled differently (parsed the slow way)
    fast, slow = Deal(5, 2), Deal(5, 2)
    while not fast.done:
        legal = fast.legal()
        legal.reverse()
        pick = legal[0]
        fast.apply(pick)
        slow.apply(list(pick) if isinstance(pick, tuple) else pick)
        assert fast.hand(0) == slow.hand(0) and fast.to_act == slow.to_act
    assert fast.record() == slow.record()


def test_bad_arguments_are_one_line_errors_not_out_of_bounds_writes():
    """An ``out`` buffer too small was written past its end by the kernel (heap corruption,
    'free(): invalid next size'); a seat outside 0-3 read another part of the state
    (``hand(7)`` gave [], ``cards_left(9)`` 61); five seat names were kept; the errors were
    bare ValueErrors. Now each is one ShuangkouError line naming the allowed values."""
    import numpy as np

    from sim.errors import ConfigError, RulesError, ShuangkouError, UsageError
    from sim.spaces import N_ACTIONS, OBS_SIZE

    d = Deal(1, 2)
    for out in (np.zeros(3, np.int16), np.zeros(OBS_SIZE, np.float64),
                np.zeros((OBS_SIZE, 2), np.int16), [0] * OBS_SIZE):
        with pytest.raises(UsageError, match=r"obs_array\(out=…\) must be .*int16.*162"):
            d.obs_array(out=out)
    ro = np.zeros(OBS_SIZE, np.int16)
    ro.flags.writeable = False
    with pytest.raises(UsageError, match="writeable"):
        d.obs_array(out=ro)
    with pytest.raises(UsageError, match="legal_mask"):
        d.legal_mask(out=np.zeros(3, np.bool_))
    assert d.legal_mask(out=np.zeros(N_ACTIONS, np.bool_)).sum() >= 1
    for seat in (7, -1, "0", 1.0, True):
        for call in (d.hand, d.cards_left, d.observation, d.obs_array):
            with pytest.raises(UsageError, match="must be 0, 1, 2 or 3"):
                call(seat)
    for seats in (["a"] * 5, "abcd", [None] * 4):
        with pytest.raises(ConfigError, match="four strategy spec strings"):
            Deal(1, 2, seats=seats)
    with pytest.raises(UsageError, match="not finished"):
        d.record()
    for bad in ("x", 1.0, -1, 801, 10**30):
        with pytest.raises(RulesError, match=r"attacker score .* 0 … 800"):
            sim.settle(bad)
    with pytest.raises(RulesError, match="0 … 6200"):
        sim.settle(7000, Rules(kou_di_pair=31))
    assert sim.settle(6200, Rules(kou_di_pair=31))[0] > 0
    with pytest.raises(RulesError, match="sim.Rules"):
        sim.settle(100, "x")
    for bad in ("x", float("nan"), None):
        with pytest.raises(RulesError, match="skill value"):
            sim.level(bad)
    obs = d.observation(d.to_act.seat)
    d.apply(d.legal()[0])
    with pytest.raises(UsageError, match="stale observation"):
        obs.hand
    assert issubclass(UsageError, ShuangkouError) and issubclass(UsageError, ValueError)
