"""What ``shuangkou train`` learns from beyond the teacher's play: the side-suit renaming of
its minibatches is exact (a renamed deal has the renamed features), the soft targets from the
teacher's play values are NaN-safe, so is the expected-loss (regret) term, and the label
cache reuses a round's labels."""

from __future__ import annotations

import numpy as np
import pytest

from sim.core import state as S
from sim.core.movegen import code_first, code_second
from sim.deal import Deal
from strategies import learned as L
from strategies import learned_weights as LW
from strategies.params import param_table
from strategies.registry import make
from strategies.tier import new_scratch


def _key_map(p):
    km = np.arange(54)
    for k in range(30):
        km[k] = 10 * p[k // 10] + k % 10
    for base in (40, 44, 48):
        for g in range(3):
            km[base + g] = base + p[g]
    return km


def _renamed(st, u, km, p):
    """The deal state with side group g renamed p[g] (hands, played cards, the trick, voids)."""
    st2, u2 = st.copy(), u.copy()

    def mask(m):
        out = 0
        for k in range(54):
            if (int(m) >> k) & 1:
                out |= 1 << int(km[k])
        return np.uint64(out)

    for i in list(range(S.U_ONCE, S.U_ONCE + 4)) + list(range(S.U_TWICE, S.U_TWICE + 4)) + [
            S.U_PLAYED_ONCE, S.U_PLAYED_TWICE]:
        u2[i] = mask(u[i])
    for i in range(4):
        for base in (S.S_TRICK_A, S.S_TRICK_B):
            if st[base + i] >= 0:
                st2[base + i] = km[st[base + i]]
        v = int(st[S.S_VOIDS + i])
        st2[S.S_VOIDS + i] = sum(1 << (p[g] if g < 3 else 3) for g in range(4) if (v >> g) & 1)
    return st2, u2


def _features(st, u, rules, params, seat):
    buf, fws, _ = new_scratch()
    n, ns = L.play_features(st, u, rules, seat, params, buf, fws)
    codes = [int(c) for c in buf[:n]]
    moves = {}
    for j, c in enumerate(codes):
        at = L.B_MIDX + j * L.NM_MAX
        moves[c] = [int(x) for x in buf[at:at + L.NM_MAX] if x >= 0]
    return (set(int(x) for x in buf[L.B_SIDX:L.B_SIDX + ns]),
            fws[L.W_SDEN:L.W_SDEN + L.ND].copy(), moves)


@pytest.mark.parametrize("seed", [3])
def test_side_suit_renaming_maps_the_features_of_the_renamed_deal(seed):
    """strategies.learned.side_suit_maps: at real decisions, the features of the deal with its
    side suits renamed are the mapped features of the deal (R12-R14: only the trump suit is
    special). Greedy's move is left out (greedy breaks ties by key order), and so are the
    two-card plays whose two cards change order."""
    smap, dmap, mmap = L.side_suit_maps()
    greedy = make("greedy")
    params = param_table([greedy.compiled_params()] * 4)
    checked = 0
    deal = Deal(seed, 0)
    st, u, rules = deal.engine
    while not deal.done:
        seat = int(st[S.S_TO_ACT])
        if st[S.S_PHASE] == S.PLAY and len(deal.legal_codes()) > 1:
            s0, d0, m0 = _features(st, u, rules, params, seat)
            for i, p in enumerate(L.SIDE_PERMUTATIONS):
                km = _key_map(p)
                st2, u2 = _renamed(st, u, km, p)
                s1, d1, m1 = _features(st2, u2, rules, params, seat)
                assert {int(smap[i, f]) for f in s0} == s1
                assert np.allclose(d0[dmap[i]], d1)
                for c, feats in m0.items():
                    a, b = code_first(c), code_second(c)
                    a2, b2 = km[a], (km[b] if b >= 0 else -1)
                    if b >= 0 and a2 > b2:
                        continue
                    c2 = a2 + ((b2 + 1) << 6)
                    drop = {L.MV_GREEDY}
                    assert {int(mmap[i, f]) for f in feats} - drop == set(m1[c2]) - drop
                checked += 1
        deal.apply_code(int(greedy_choice(deal, params)))
    assert checked > 100


def greedy_choice(deal, params):
    from strategies.compiled import decide, entries

    st, u, rules = deal.engine
    buf, fws, uws = new_scratch()
    return decide(1, entries(), params, st, u, rules, int(st[S.S_TO_ACT]), buf, fws, uws)


def test_side_suit_maps_are_permutations_with_identity_first():
    smap, dmap, mmap = L.side_suit_maps()
    assert L.SIDE_PERMUTATIONS[0] == (0, 1, 2)
    for a, n in ((smap, L.DS + 1), (dmap, L.ND), (mmap, L.DM + 1)):
        assert a.shape == (6, n)
        assert (a[0] == np.arange(n)).all()
        assert all(sorted(r) == list(range(n)) for r in a)
    i = L.SIDE_PERMUTATIONS.index((1, 0, 2))
    assert smap[i, LW.F_HAND1 + 5] == LW.F_HAND1 + 15  # a side card of group 0 goes to group 1
    assert smap[i, LW.F_HAND1 + 40] == LW.F_HAND1 + 41  # so does its suit's 2 (付2)
    assert smap[i, LW.F_HAND1 + 35] == LW.F_HAND1 + 35  # a trump-suit card stays
    assert mmap[i, LW.MV_B + 48] == LW.MV_B + 49 and smap[i, L.DS] == L.DS


def test_soft_targets_are_nan_safe_and_pull_towards_the_best_value():
    pytest.importorskip("jax")  # the [train] extra (.ci/run installs it)
    from sim.learn import jaxnet

    rng = np.random.default_rng(0)
    n, m = 64, 6
    d = {"sidx": np.full((n, 8), -1, np.int16), "sden": rng.random((n, 4)).astype(np.float32),
         "nmov": np.full(n, m, np.int16), "midx": np.full((n, m, 4), -1, np.int16),
         "mden": rng.random((n, m, 3)).astype(np.float32),
         "label": np.zeros(n, np.int16)}
    for i in range(n):
        d["sidx"][i, :3] = rng.choice(20, 3, replace=False)
        for j in range(m):
            d["midx"][i, j, 0] = j  # play j has feature j
    q = np.full((n, m), np.nan, np.float32)
    q[: n // 2] = 0.0
    q[: n // 2, 3] = 2.0  # the teacher values play 3 best where it has values
    d["q"] = q
    p = jaxnet.init_params(20, 4, 10, 3, (8, 8, 8), 8, 4, 0)
    model = jaxnet.Model(p, lr=0.02, soft=5.0, tau=0.3)
    for e in range(30):
        model.train_epoch(d, np.random.default_rng(e), 16)
    arrays = model.arrays()
    assert all(np.isfinite(v).all() for v in arrays.values())  # the NaN rows leaked nothing
    s = model.scores(d)
    # the label (play 0) and the values (play 3) both pull: play 3 outranks the others
    assert (s[:, 3] > s[:, [1, 2, 4, 5]].max(axis=1)).all()


def test_regret_term_weighs_costly_mistakes_and_keeps_old_recipes_keys():
    pytest.importorskip("jax")
    from sim.learn import jaxnet, train

    rng = np.random.default_rng(1)
    n, m = 64, 6
    d = {"sidx": np.full((n, 8), -1, np.int16), "sden": rng.random((n, 4)).astype(np.float32),
         "nmov": np.full(n, m, np.int16), "midx": np.full((n, m, 4), -1, np.int16),
         "mden": np.zeros((n, m, 3), np.float32), "label": np.zeros(n, np.int16)}
    for i in range(n):
        d["sidx"][i, :3] = rng.choice(20, 3, replace=False)
        for j in range(m):
            d["midx"][i, j, 0] = j
    q = np.full((n, m), np.nan, np.float32)
    q[: n // 2] = 0.0
    q[: n // 2, 0] = -0.01  # the label (play 0) is worth a hair less than the rest ...
    q[: n // 2, 4] = -3.0  # ... and play 4 is a costly mistake
    d["q"] = q
    p = jaxnet.init_params(20, 4, 10, 3, (8, 8, 8), 8, 4, 0)
    plain = jaxnet.Model(p, lr=0.02)
    costly = jaxnet.Model(p, lr=0.02, regret=20.0)
    for e in range(20):
        plain.train_epoch(d, np.random.default_rng(e), 16)
        costly.train_epoch(d, np.random.default_rng(e), 16)
    assert all(np.isfinite(v).all() for v in costly.arrays().values())  # NaN rows: no leak

    def prob(model, j):
        s = model.scores(d)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        return (p / p.sum(axis=1, keepdims=True))[:, j].mean()

    # the label alone says nothing of play 4 against 1, 2, 3 and 5; the expected loss does
    assert prob(costly, 4) < 0.5 * prob(costly, 1)
    assert prob(costly, 4) < 0.5 * prob(plain, 4)
    # a recipe without the term keeps its old key (its checkpoints resume); one with it differs
    base = dict(seed=5, deals=20, epochs=1, holdout=5, eval_pairs=0, hidden="8,8,8")
    old = train.make_config("greedy", **base)
    new = train.make_config("greedy", regret=1.0, **base)
    assert "regret" not in old.key() and new.key()["regret"] == 1.0
    assert old.digest() != new.digest() and "--regret 1.0" in new.command(2)
    with pytest.raises(train.ConfigError, match="--regret"):
        train.make_config("greedy", regret=-1.0, **base)


def test_label_cache_reuses_a_rounds_labels(tmp_path, monkeypatch):
    pytest.importorskip("jax")
    from sim.learn import train

    cfg = train.make_config("greedy", seed=5, deals=20, epochs=1, holdout=5, eval_pairs=0,
                            hidden="8,8,8", batch=32)
    cache = str(tmp_path / "labels")
    a = train.run(cfg, str(tmp_path / "a"), rounds=1, say=lambda t: None, plot=False,
                  labels=cache)

    calls = []
    real = train._collect

    def counted(*args, **kw):
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(train, "_collect", counted)
    b = train.run(cfg, str(tmp_path / "b"), rounds=1, say=lambda t: None, plot=False,
                  labels=cache)
    assert len(calls) == 1  # the held-out set (the run's own); round 0 came from the cache
    assert a.labels == b.labels
    with np.load(tmp_path / "a" / "data" / "round_000.npz") as x, \
            np.load(tmp_path / "b" / "data" / "round_000.npz") as y:
        assert np.array_equal(x["label"], y["label"]) and np.array_equal(x["sidx"], y["sidx"])
