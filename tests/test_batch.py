"""sim.Batch: many deals stepped at once give exactly the records of sim.Deal."""

from __future__ import annotations

import numpy as np
import pytest

import sim
from sim.deal import Deal
from sim.errors import ConfigError, IllegalPlayError
from sim.loops.batch import Batch
from sim.loops.runner import make_seats
from sim.spaces import OBS_SIZE
from strategies.compiled import decide, entries, new_scratch
from strategies.params import param_table

_W = (np.arange(OBS_SIZE, dtype=np.int64) * 2654435761) % 1000003 + 1


def policy(obs: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic policy of the observation alone: a hash picks a legal action."""
    legal = np.flatnonzero(mask)
    return int(legal[int((obs.astype(np.int64) * _W).sum()) % len(legal)])


def deal_records(seed, first, n, seats, rules=None):
    """The same policy through sim.Deal, compiled seats asked through their kernel."""
    strats = [None if s is None else make_seats([s])[0] for s in seats]
    kinds = np.array([-1 if s is None else s.compiled_kind for s in strats], dtype=np.int64)
    params = param_table([[] if s is None else s.compiled_params() for s in strats])
    names = ["python" if s is None else s.spec() for s in strats]
    scratch = new_scratch()
    table = entries(kinds)
    out = []
    for d in range(first, first + n):
        deal = Deal(seed, d, rules, names)
        while not deal.done:
            seat = deal.to_act.seat
            if kinds[seat] < 0:
                deal.apply_action(policy(deal.obs_array(), deal.legal_mask()))
            else:
                deal.apply_code(int(decide(kinds[seat], table, params, deal._st, deal._u,
                                           deal._rules, seat, *scratch)))
        out.append(deal.record())
    return out


def batch_records(seed, first, n, seats, size, rules=None):
    b = Batch(size, seed, first_deal=first, rules=rules, seats=seats, deals=n, records=True)
    recs = {}
    while not b.done:
        o = b.observe()
        acts = np.zeros(size, dtype=np.int64)
        for i in np.flatnonzero(o.seat >= 0):
            acts[i] = policy(o.obs[i], o.legal_mask[i])
        fin = b.step(acts)
        for rec, d, s in zip(fin.records, fin.deal, fin.settlement):
            assert rec["deal"] == d and rec["settlement"] == s.tolist()
            recs[int(d)] = rec
    assert b.deals_finished == n
    return [recs[d] for d in range(first, first + n)]


@pytest.mark.parametrize("seats", [[None] * 4, [None, "greedy", None, "random"]])
def test_batch_gives_the_records_of_deal_whatever_n(seats):
    expect = deal_records(9, 40, 12, seats)
    for size in (1, 5, 16):
        assert batch_records(9, 40, 12, seats, size) == expect


def test_batch_with_rules_variant_and_three_compiled_seats():
    rules = sim.Rules(kou_di_single=3, settle_unit=1)
    seats = ["greedy", None, "random(show_prob=0.9)", "greedy"]
    assert batch_records(4, 0, 8, seats, 3, rules) == deal_records(4, 0, 8, seats, rules)


def test_step_index_matches_actions_and_random_policy_finishes():
    a = Batch(7, 3, deals=20)
    b = Batch(7, 3, deals=20)
    rng = np.random.default_rng(0)
    total = []
    while not a.done:
        k = (rng.random(7) * a.n_legal).astype(np.int64)
        o = b.observe()
        acts = np.array([0 if o.seat[i] < 0 else
                         _kth_action(b, i, k[i]) for i in range(7)])
        fa, fb = a.step_index(k), b.step(acts)
        assert (fa.deal == fb.deal).all() and (fa.settlement == fb.settlement).all()
        total += fa.deal.tolist()
        assert (fa.settlement.sum(axis=1) == 0).all()
    assert sorted(total) == list(range(20)) and b.done


def _kth_action(b, i, k):
    """Action of the k-th legal choice of slot i, through a Deal replayed to the same state."""
    st, u = b._st[i], b._u[i]
    d = Deal(0, 0)
    d._st[:], d._u[:] = st, u
    d.phase, d.seat_to_act = int(st[0]), int(st[1])
    d._nbuf, d._codes = -1, None
    return d.legal_actions()[k]


def test_illegal_actions_change_nothing():
    b = Batch(4, 1)
    before = b._st.copy()
    o = b.observe()
    acts = np.array([np.flatnonzero(o.legal_mask[i])[0] for i in range(4)])
    acts[2] = np.flatnonzero(~o.legal_mask[2])[0]
    with pytest.raises(IllegalPlayError, match="slot 2"):
        b.step(acts)
    with pytest.raises(IllegalPlayError, match="index"):
        b.step_index(b.n_legal.copy())
    assert (b._st == before).all()
    with pytest.raises(ConfigError, match="shape"):
        b.step(acts[:3])


def test_seat_specs_are_checked():
    with pytest.raises(ConfigError, match="at least one seat"):
        Batch(2, 1, seats=["greedy"] * 4)
    with pytest.raises(ConfigError, match="four entries"):
        Batch(2, 1, seats=[None])
    with pytest.raises(ConfigError, match="n="):
        Batch(0, 1)
    # a compiled plug-in was a TypeError (its compiled_kind is None), a string four letters
    with pytest.raises(ConfigError, match="compiled plug-in, which sim.Batch does not seat"):
        Batch(2, 1, seats=[None, "strategies.example_compiled:CautiousC", None, None])
    with pytest.raises(ConfigError, match="has no compiled kernel.*expert"):
        Batch(2, 1, seats=[None, "strategies.example:Cautious", None, None])
    with pytest.raises(ConfigError, match="four entries"):
        Batch(2, 1, seats="abcd")


def test_observe_matches_deal_obs_array():
    b = Batch(3, 5, first_deal=2)
    o = b.observe()
    for i in range(3):
        d = Deal(5, 2 + i)
        assert o.deal[i] == 2 + i and o.seat[i] == d.to_act.seat
        assert (o.obs[i] == d.obs_array()).all()
        assert (o.legal_mask[i] == d.legal_mask()).all()


def test_a_full_finished_queue_loses_no_deal():
    """Deals that end when the step's queue of finished deals is full finish on a further
    call within the same step: none is lost or reported twice."""
    from sim.loops.batch import N_FIN

    def run(tiny):
        b = Batch(6, 8, seats=[None, "random", "random", "random"], deals=30)
        if tiny:
            b._fin = np.zeros((1, N_FIN), dtype=np.int64)
        rng = np.random.default_rng(1)
        got = {}
        while not b.done:
            fin = b.step_index((rng.random(6) * b.n_legal).astype(np.int64))
            for d, s in zip(fin.deal.tolist(), fin.settlement.tolist()):
                assert d not in got
                got[d] = s
        return got

    assert run(True) == run(False) and len(run(False)) == 30


def test_sizes_out_of_range_are_one_line_errors():
    # a huge n was a NumPy MemoryError ("Unable to allocate 4.72 PiB ..."), not a size check
    for n in (2**40, 2**20 + 1, -3, 0):
        with pytest.raises(ConfigError, match=r"n=.*1 … 1,048,576"):
            Batch(n, 1)
    for deals in (-1, 2**63 + 1, 2**64):
        with pytest.raises(ConfigError, match=r"deals=.*0 … 9223372036854775808"):
            Batch(2, 1, deals=deals)
    with pytest.raises(ConfigError, match="first_deal"):
        Batch(2, 1, first_deal=2**63)


def test_deal_numbers_stop_at_the_last_deal_number():
    """From first_deal = 2**63-2 the slots play deals 2**63-2 and 2**63-1, then go idle (the
    deal numbers wrapped negative and the finished deals stopped being reported)."""
    b = Batch(3, 1, seats=[None, "random", "random", "random"], first_deal=2**63 - 2)
    assert b.deal.tolist() == [2**63 - 2, 2**63 - 1, -1]
    rng = np.random.default_rng(0)
    got = []
    for _ in range(1000):
        if b.done:
            break
        got += b.step_index((rng.random(3) * b.n_legal).astype(np.int64)).deal.tolist()
    assert b.done and sorted(got) == [2**63 - 2, 2**63 - 1]
    with pytest.raises(ConfigError, match=r"first_deal \+ deals <= 2\*\*63"):
        Batch(3, 1, first_deal=2**63 - 2, deals=3)
    assert Batch(3, 1, first_deal=2**63 - 2, deals=2).deal.tolist() == [2**63 - 2, 2**63 - 1,
                                                                        -1]


def test_documented_outputs_are_read_only():
    """Writing b.n_legal let an out-of-range index through step_index: every documented
    output is a read-only view that cannot be made writeable again."""
    b = Batch(4, 1, seats=[None, "random", "random", "random"])
    o = b.observe()
    arrays = [b.seat, b.kind, b.n_legal, b.deal, *o]
    rng = np.random.default_rng(2)
    fin = b.step_index((rng.random(4) * b.n_legal).astype(np.int64))
    while not len(fin):
        fin = b.step_index((rng.random(4) * b.n_legal).astype(np.int64))
    arrays += [fin.slot, fin.deal, fin.settlement, fin.attacker_score]
    for a in arrays:
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 1000
        if a.base is not None and a.base.__class__ is memoryview:
            with pytest.raises(ValueError):
                a.flags.writeable = True
    for a in (b.seat, b.kind, b.n_legal, b.deal, o.obs, o.legal_mask):
        with pytest.raises(ValueError):  # a view of the batch's own state: never writeable
            a.flags.writeable = True
    assert (o.seat == b.seat).all() and b.n_legal.max() < 1000


def test_a_tampered_step_ends_with_an_error():
    """Private arrays written so that no seat is the policy's (every deal then plays to the
    end inside the step, forever): the step stops with one line instead of never returning."""
    from sim.errors import UsageError
    from sim.loops.batch import C_KINDS

    b = Batch(4, 1, seats=[None, "random", "random", "random"])
    b._ctl[C_KINDS:C_KINDS + 4] = b.kinds[1]
    with pytest.raises(UsageError, match="slot 0 .* state that play never reaches"):
        b.step_index(np.zeros(4, dtype=np.int64))
