"""The learned player (strategies/learned.py): its forward pass is the documented network, it
is fair (both tiers give the same records), it runs in every tier (compiled loops,
sim.Batch, the Python tier), and a bad weights file is refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_batch import batch_records, deal_records

from sim.errors import WeightsError
from sim.loops.runner import iter_records, make_seats
from strategies import learned
from strategies.learned import load_weights, save_weights, weight_shapes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _random_arrays(h1=8, h2=6, g=5, seed=0):
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0.0, 0.3, s) for k, s in weight_shapes(h1, h2, g).items()}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A small network with random weights (the greedy-move feature weighted up, so that it
    plays sensibly): enough to exercise every path of the kernel."""
    arrays = _random_arrays()
    arrays["M"][learned.MV_GREEDY] += 1.0
    arrays["v"] = np.abs(arrays["v"])
    path = str(tmp_path_factory.mktemp("w") / "tiny.npz")
    save_weights(path, arrays, {"made_by": "tests/test_learned.py"})
    return path


def test_weights_file_round_trip(tiny):
    arrays, meta = load_weights(tiny)
    assert meta == {"made_by": "tests/test_learned.py"}
    again = _random_arrays()
    assert set(arrays) == set(learned.WEIGHT_NAMES)
    assert np.array_equal(arrays["W2"], again["W2"]) and arrays["W1"].dtype == np.float64
    assert learned.n_weights(8, 6, 5) == learned.flat_row(arrays).size


def _numpy_scores(a, sidx, sden, midx, mden, n):
    """The documented network (docs/learning.md) in numpy."""
    h1 = np.maximum(a["b1"] + a["W1"][sidx[sidx >= 0]].sum(0) + sden @ a["Wd"], 0)
    h2 = np.maximum(a["b2"] + h1 @ a["W2"], 0)
    g = a["b3"] + h2 @ a["W3"]
    out = []
    for j in range(n):
        m = midx[j][midx[j] >= 0]
        z = np.maximum(g + a["bm"] + a["M"][m].sum(0) + mden[j] @ a["Md"], 0)
        out.append(z @ a["v"])
    return np.array(out)


def test_forward_pass_is_the_documented_network(tiny):
    """net_scores (numba) equals the formula in numpy on real decisions' features."""
    from sim.learn.labels import collect
    from strategies.params import param_table
    from strategies.registry import make
    from strategies.tier import new_scratch

    d = collect("greedy", tiny, 3, 0, 2)
    assert len(d["label"]) > 40
    arrays, _ = load_weights(tiny)
    row = param_table([make(f"learned(weights={tiny})").compiled_params()])[0]
    buf, fws, _ = new_scratch()
    for i in range(0, len(d["label"]), 7):
        sidx, n = d["sidx"][i].astype(np.int64), int(d["nmov"][i])
        ns = int((sidx >= 0).sum())
        buf[learned.B_SIDX:learned.B_SIDX + ns] = sidx[:ns]
        fws[learned.W_SDEN:learned.W_SDEN + learned.ND] = d["sden"][i]
        midx = d["midx"][i].astype(np.int64)
        mden = d["mden"][i].astype(np.float64)
        buf[learned.B_MIDX:learned.B_MIDX + n * learned.NM_MAX] = midx[:n].ravel()
        fws[learned.W_MDEN:learned.W_MDEN + n * learned.MD] = mden[:n].ravel()
        learned.net_scores(row, learned.TAIL, 8, 6, 5, ns, n, buf, fws, learned.W_SCORES)
        got = fws[learned.W_SCORES:learned.W_SCORES + n]
        want = _numpy_scores(arrays, sidx, d["sden"][i].astype(np.float64), midx, mden, n)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12)


def test_features_are_in_range_and_greedy_marked(tiny):
    from sim.learn.labels import collect

    d = collect("greedy", None, 11, 0, 3, beta=1.0)
    assert d["sidx"].max() < learned.DS and d["midx"].max() < learned.DM
    assert (d["nmov"] >= 2).all() and (d["nmov"] <= learned.M_MAX).all()
    # the teacher is greedy and the seats play greedy: the label is greedy's move, which
    # the MV_GREEDY feature marks
    for i in range(len(d["label"])):
        assert learned.MV_GREEDY in d["midx"][i, d["label"][i]]
    assert d["agree"].all()


def test_python_tier_equals_compiled_tier(tiny):
    """Fair: the kernel run on the masked observation decides as in the compiled loop (R9)."""
    specs = [f"learned(weights={tiny})", "greedy"]
    compiled = list(iter_records(8, 0, 12, make_seats(specs)))
    python = list(iter_records(8, 0, 12, make_seats(specs), python_tier=True))
    assert compiled == python


def test_batch_seats_learned(tiny):
    seats = [None, f"learned(weights={tiny})", None, "greedy"]
    assert batch_records(5, 0, 6, seats, 4) == deal_records(5, 0, 6, seats)


def _block_diagonal(a, b):
    """One network whose score is the mean of the scores of ``a`` and ``b``: their hidden
    layers side by side, no weight between them, the output halved."""
    def diag(x, y):
        out = np.zeros((x.shape[0] + y.shape[0], x.shape[1] + y.shape[1]))
        out[:x.shape[0], :x.shape[1]] = x
        out[x.shape[0]:, x.shape[1]:] = y
        return out

    side = {k: np.concatenate([a[k], b[k]], axis=-1) for k in ("W1", "Wd", "b1", "b2", "b3",
                                                               "M", "Md", "bm")}
    return {**side, "W2": diag(a["W2"], b["W2"]), "W3": diag(a["W3"], b["W3"]),
            "v": np.concatenate([a["v"], b["v"]]) / 2}


def test_an_ensemble_plays_the_mean_of_its_networks_scores(tmp_path, tiny):
    """``shuangkou train --merge``: the player averages the networks' scores, exactly as one
    network twice as wide that holds both side by side."""
    from sim.errors import ConfigError
    from sim.learn import train

    a, _ = load_weights(tiny)
    b = _random_arrays(seed=7)
    b["M"][learned.MV_GREEDY] += 1.0
    save_weights(str(tmp_path / "b.npz"), b, {"made_by": "b"})
    both = train.merge([tiny, str(tmp_path / "b.npz")], str(tmp_path / "ab.npz"))
    nets, meta = learned.load_networks(both)
    assert len(nets) == 2 and np.array_equal(nets[1]["W2"], b["W2"])
    assert meta["members"][1]["made_by"] == "b" and "--merge" in meta["command"]
    save_weights(str(tmp_path / "wide.npz"), _block_diagonal(a, b), {})
    got = list(iter_records(3, 0, 8, make_seats([f"learned(weights={both})", "greedy"])))
    want = list(iter_records(3, 0, 8, make_seats(
        [f"learned(weights={tmp_path / 'wide.npz'})", "greedy"])))
    for g, w in zip(got, want):  # the same play; only the seats' names differ
        assert {**g, "seats": None} == {**w, "seats": None}
    alone = list(iter_records(3, 0, 8, make_seats([f"learned(weights={tiny})", "greedy"])))
    assert any(g["tricks"] != x["tricks"] for g, x in zip(got, alone))  # b counts
    # networks of other sizes cannot be averaged: one line
    save_weights(str(tmp_path / "c.npz"), _random_arrays(h1=4), {})
    with pytest.raises(ConfigError, match="same hidden sizes") as e:
        train.merge([tiny, str(tmp_path / "c.npz")], str(tmp_path / "ac.npz"))
    assert "\n" not in str(e.value)
    # a damaged second network is refused by name
    data = dict(np.load(both, allow_pickle=False))
    data["m1/W2"] = np.zeros((3, 3))
    np.savez(tmp_path / "bad.npz", **data)
    with pytest.raises(WeightsError, match="network 1.*W2.*shape"):
        load_weights(str(tmp_path / "bad.npz"))


def _bad_files(tmp_path, tiny):
    good = dict(np.load(tiny, allow_pickle=False))
    out = {}

    def put(name, **changes):
        d = dict(good, **changes)
        p = str(tmp_path / f"{name}.npz")
        np.savez(p, **{k: v for k, v in d.items() if v is not None})
        out[name] = p

    put("shape", W2=np.zeros((3, 3)))
    put("version", version=np.array(99))
    put("features", feature_version=np.array(0))
    put("format", format=np.array("something-else"))
    put("missing", M=None)
    put("nan", v=np.full(5, np.nan))
    p = str(tmp_path / "pickled.npz")
    np.savez(p, **dict(good, meta=np.array([{"x": 1}], dtype=object)))
    out["pickled"] = p
    raw = open(tiny, "rb").read()
    p = str(tmp_path / "truncated.npz")
    open(p, "wb").write(raw[: len(raw) // 2])
    out["truncated"] = p
    p = str(tmp_path / "text.npz")
    open(p, "w").write("not weights\n")
    out["text"] = p
    out["absent"] = str(tmp_path / "absent.npz")
    return out


WHY = {"shape": "shape", "version": "version 99", "features": "feature_version 0",
       "format": "format", "missing": "missing weight arrays M", "nan": "not finite",
       "pickled": "not a readable", "truncated": "not a readable", "text": "not a readable",
       "absent": "does not exist"}


def test_bad_weights_files_are_refused_in_one_line(tmp_path, tiny):
    for name, path in _bad_files(tmp_path, tiny).items():
        with pytest.raises(WeightsError, match=WHY[name]) as e:
            load_weights(path)
        assert "\n" not in str(e.value), name


def test_bad_weights_on_the_command_line_exit_2(tmp_path, tiny):
    path = _bad_files(tmp_path, tiny)["shape"]
    r = subprocess.run([sys.executable, "-m", "sim.cli", "play", "--seats",
                        f"learned(weights={path}),greedy", "--deals", "1"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "W2" in lines[0] and "shape" in lines[0], r.stderr


def test_weights_meta_is_json(tiny):
    with np.load(tiny, allow_pickle=False) as z:
        assert json.loads(str(z["meta"]))["made_by"] == "tests/test_learned.py"
        assert str(z["format"]) == learned.WEIGHTS_FORMAT


@pytest.mark.parametrize("spec", ["strategies.example_compiled:CautiousC",
                                  "strategies.example:Cautious", "oracle", "nosuch"])
def test_a_teacher_that_cannot_label_is_one_line(spec):
    from sim.errors import ConfigError
    from sim.learn.labels import collect

    with pytest.raises(ConfigError) as e:
        collect(spec, None, 1, 0, 1)
    assert "\n" not in str(e.value) and spec in str(e.value)


def test_pettingzoo_opponents_learned_play_as_in_batch(tiny):
    """The PettingZoo environment seats learned opponents: episodes give sim.Batch's records."""
    pytest.importorskip("pettingzoo")
    from test_batch import policy

    from sim.env import env

    spec = f"learned(weights={tiny})"
    e = env(seed=9, opponents={1: spec, 3: spec})
    got = []
    for _ in range(3):
        e.reset()
        for agent in e.agent_iter():
            obs, reward, termination, truncation, info = e.last()
            e.step(None if termination or truncation
                   else policy(obs["observation"], obs["action_mask"]))
        got.append(e.deal.record())
    assert got == batch_records(9, 0, 3, [None, spec, None, spec], 2)


# --- the shipped weights ------------------------------------------------------------------
def test_shipped_weights_are_small_and_say_how_they_were_made():
    path = learned.shipped_weights()
    assert os.path.getsize(path) <= 5 * 2 ** 20  # the 5 MB
    nets, meta = learned.load_networks(path)
    # an ensemble (shuangkou train --merge) of networks that each say their command
    assert meta["command"].startswith("shuangkou train --merge")
    assert len(nets) == meta["networks"] == len(meta["members"]) >= 1
    for m in meta["members"]:
        assert m["command"].startswith(("shuangkou train --teacher expert",
                                        "shuangkou train --retrain"))
        assert m["teacher"] == "expert" and m["labels"] > 100_000
        assert m["config"]["dims"][0] == learned.FEATURE_VERSION


def test_shipped_weights_beat_greedy():
    """The strength check of the shipped weights: 300 duplicate pairs against greedy on deals
    the trainer never saw (its labels: seed 1001; its evaluations: seed 1002)."""
    from sim.tools.tune import duel

    r = duel("learned", "greedy", pairs=300, first=0, seed=77)
    assert r["lo"] > 1.5, r  # measured +2 or more on 2,000 fresh pairs (docs/learning.md)
