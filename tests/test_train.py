"""``shuangkou train`` (sim/learn/train.py, sim/learn/jaxnet.py): the JAX network computes
the numba player's scores, a tiny network trained for seconds on greedy's labels lowers its loss
and beats random, a resumed run ends as an uninterrupted one, and bad input is one line with
exit code 2."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")

from sim.cli import main  # noqa: E402
from sim.errors import ConfigError  # noqa: E402
from sim.learn import jaxnet, train  # noqa: E402

# a small network and small data: the shapes of the spec, sizes of our own
SYN = {"ds": 300, "nd": 12, "dm": 200, "md": 6, "ns_max": 20, "nm_max": 8, "m_max": 12}


def synthetic(n: int, seed: int, s: dict = SYN) -> dict[str, np.ndarray]:
    """Labels of the collector's dtypes and shapes: random active indices padded with -1,
    random dense features (zero past ``nmov``), labels of a fixed linear teacher."""
    rng = np.random.default_rng(seed)
    sidx = np.full((n, s["ns_max"]), -1, np.int16)
    midx = np.full((n, s["m_max"], s["nm_max"]), -1, np.int16)
    nmov = rng.integers(1, s["m_max"] + 1, n).astype(np.int16)
    for i in range(n):
        k = rng.integers(1, s["ns_max"] + 1)
        sidx[i, :k] = rng.choice(s["ds"], k, replace=False)
        for j in range(nmov[i]):
            k = rng.integers(1, s["nm_max"] + 1)
            midx[i, j, :k] = rng.choice(s["dm"], k, replace=False)
    mden = rng.random((n, s["m_max"], s["md"])).astype(np.float32)
    mden[np.arange(s["m_max"])[None, :] >= nmov[:, None]] = 0
    w = np.random.default_rng(99).standard_normal(s["dm"] + 1)
    w[-1] = 0
    score = w[midx].sum(axis=2)
    score[np.arange(s["m_max"])[None, :] >= nmov[:, None]] = -np.inf
    return {"sidx": sidx, "sden": rng.random((n, s["nd"])).astype(np.float32),
            "nmov": nmov, "midx": midx, "mden": mden,
            "label": score.argmax(axis=1).astype(np.int16)}


def _params(seed: int, hidden=(16, 8, 8)) -> dict[str, np.ndarray]:
    p = jaxnet.init_params(SYN["ds"], SYN["nd"], SYN["dm"], SYN["md"], hidden, SYN["ns_max"],
                           SYN["nm_max"], seed)
    rng = np.random.default_rng(seed + 1)
    for k in ("b1", "b2", "b3", "bm", "v"):  # nonzero biases and a v of size 1
        p[k] = rng.standard_normal(p[k].shape)
    return p


def reference_scores(p: dict, d: dict, i: int) -> np.ndarray:
    """The spec's forward pass, written out for one example in numpy (float64)."""
    si = d["sidx"][i][d["sidx"][i] >= 0]
    h1 = np.maximum(p["b1"] + p["W1"][si].sum(0) + d["sden"][i].astype(float) @ p["Wd"], 0)
    h2 = np.maximum(p["b2"] + h1 @ p["W2"], 0)
    g = p["b3"] + h2 @ p["W3"]
    out = []
    for j in range(d["nmov"][i]):
        mi = d["midx"][i, j][d["midx"][i, j] >= 0]
        z = np.maximum(g + p["bm"] + p["M"][mi].sum(0) + d["mden"][i, j].astype(float)
                       @ p["Md"], 0)
        out.append(z @ p["v"])
    return np.array(out)


def test_forward_is_the_spec_in_float64():
    d = synthetic(200, 1)
    p = _params(5)
    s = jaxnet.Model(p, dtype="float64").scores(d)
    for i in range(200):
        n = d["nmov"][i]
        ref = reference_scores(p, d, i)
        assert np.allclose(s[i, :n], ref, rtol=1e-9, atol=1e-12)
        assert np.all(np.isneginf(s[i, n:]))  # plays past nmov are masked out


def test_jax_scores_equal_the_numba_players(tmp_path):
    """The trainer's network (float64) scores real decisions' features as the player's numba
    kernel does, to 1e-9 relative, on random weights with every parameter nonzero."""
    from sim.learn.labels import collect
    from strategies import learned
    from strategies.params import param_table
    from strategies.registry import make
    from strategies.tier import new_scratch

    hidden = (12, 10, 9)
    p = jaxnet.init_params(learned.DS, learned.ND, learned.DM, learned.MD, hidden,
                           learned.NS_MAX, learned.NM_MAX, 4)
    rng = np.random.default_rng(4)
    for k in ("b1", "b2", "b3", "bm"):
        p[k] = rng.normal(0, 0.3, p[k].shape)
    p["v"] = rng.normal(0, 1.0, p["v"].shape)
    path = str(tmp_path / "w.npz")
    learned.save_weights(path, p, {})
    d = collect("greedy", path, 3, 0, 2, beta=0.5)
    assert d["label"].size > 40
    s = jaxnet.Model(p, dtype="float64").scores(d)
    row = param_table([make(f"learned(weights={path})").compiled_params()])[0]
    buf, fws, _ = new_scratch()
    worst = 0.0
    for i in range(d["label"].size):
        sidx, n = d["sidx"][i].astype(np.int64), int(d["nmov"][i])
        ns = int((sidx >= 0).sum())
        buf[learned.B_SIDX:learned.B_SIDX + ns] = sidx[:ns]
        fws[learned.W_SDEN:learned.W_SDEN + learned.ND] = d["sden"][i]
        buf[learned.B_MIDX:learned.B_MIDX + n * learned.NM_MAX] = d["midx"][i, :n].ravel()
        fws[learned.W_MDEN:learned.W_MDEN + n * learned.MD] = d["mden"][i, :n].ravel()
        learned.net_scores(row, learned.TAIL, *hidden, ns, n, buf, fws, learned.W_SCORES)
        want = fws[learned.W_SCORES:learned.W_SCORES + n]
        worst = max(worst, float(np.max(np.abs(s[i, :n] - want) / (np.abs(want) + 1e-9))))
    assert worst < 1e-9, worst


def test_padding_changes_nothing():
    """Index slots at -1 and dense features past ``nmov`` do not reach the scores."""
    d = synthetic(50, 2)
    p = _params(3)
    m = jaxnet.Model(p, dtype="float64")
    before = m.scores(d)
    e = {k: v.copy() for k, v in d.items()}
    past = np.arange(SYN["m_max"])[None, :] >= d["nmov"][:, None]
    e["mden"][past] = 7.0
    e["midx"][past] = 3  # rows past nmov: any indices
    assert np.array_equal(before, m.scores(e))


def test_loss_falls_and_state_round_trips():
    d = synthetic(600, 3)
    m = jaxnet.Model(_params(1), lr=3e-3)
    first = m.evaluate(d)
    for e in range(6):
        m.train_epoch(d, np.random.default_rng(e), 64)
    loss, top1 = m.evaluate(d)
    assert loss < first[0] - 0.1 and top1 > first[1]
    again = jaxnet.Model(_params(1), lr=3e-3)
    assert again.load_state_arrays(m.state_arrays())
    assert again.evaluate(d) == (loss, top1)
    # the next step is the same from the restored state (Adam's moments came back too)
    m.train_epoch(d, np.random.default_rng(9), 64)
    again.train_epoch(d, np.random.default_rng(9), 64)
    assert all(np.array_equal(m.arrays()[k], again.arrays()[k]) for k in jaxnet.NAMES)
    other = jaxnet.Model(_params(1, hidden=(8, 8, 8)))
    assert not other.load_state_arrays(m.state_arrays())  # other sizes: refused


def test_padding_rows_never_poison_a_batch():
    """A batch of narrow examples is padded (weight 0) with an example that fits its width:
    padded with example 0 (12 plays, the teacher's the 12th), a batch cut to 8 plays scored
    its label at -inf, and 0 * inf made the held-out loss NaN (and could the gradients)."""
    d = synthetic(100, 7)
    d["nmov"][0], d["label"][0] = 12, 11
    m = jaxnet.Model(_params(2), dtype="float64")
    s = m.scores(d)
    lse = np.log(np.exp(s - s.max(1, keepdims=True)).sum(1)) + s.max(1)
    want = float(np.mean(lse - s[np.arange(100), d["label"]]))
    loss, _ = m.evaluate(d, batch_size=32)
    assert np.isclose(loss, want, rtol=1e-9)
    m.train_epoch(d, np.random.default_rng(0), 32)
    assert all(np.isfinite(v).all() for v in m.arrays().values())


def test_exported_arrays_are_float64_with_the_spec_names():
    a = jaxnet.Model(_params(2)).arrays()
    assert tuple(a) == jaxnet.NAMES and all(v.dtype == np.float64 for v in a.values())
    sizes = jaxnet.sizes_of(a)
    assert (sizes["ds"], sizes["h1"], sizes["g"]) == (SYN["ds"], 16, 8)


def test_missing_extra_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(jaxnet, "_JAX", [])
    monkeypatch.setitem(sys.modules, "optax", None)  # import optax raises ImportError
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[train\]'"):
        jaxnet.require_jax()
    assert main(["train", "--teacher", "greedy", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs the training extra" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


# --- the recipe with the real collector and player (teacher greedy: cheap) --------------------
TINY = dict(seed=5, deals=30, epochs=2, holdout=10, eval_pairs=16, hidden="16,16,16",
            batch=64, lr=3e-3)


def _curve(out) -> list[list[str]]:
    """curve.csv without its wall-time column."""
    rows = [r.split(",") for r in open(os.path.join(out, "curve.csv")).read().splitlines()]
    return [r[:-1] for r in rows]


@pytest.mark.slow  # about a minute of the quick loop; the kill -9 test covers resuming too
def test_resume_ends_where_an_uninterrupted_run_ends(tmp_path):
    cfg = train.make_config("greedy", **TINY)
    whole = train.run(cfg, str(tmp_path / "a"), rounds=2, say=lambda t: None, plot=False)
    part = train.run(cfg, str(tmp_path / "b"), rounds=2, say=lambda t: None, plot=False,
                     stop_after=1)
    assert part.stopped == "stop_after" and len(part.rows) == 2
    with pytest.raises(ConfigError, match="--resume"):  # not overwritten without --resume
        train.run(cfg, str(tmp_path / "b"), rounds=2, say=lambda t: None)
    rest = train.run(cfg, str(tmp_path / "b"), rounds=2, resume=True, say=lambda t: None,
                     plot=False)
    assert whole.stopped == rest.stopped == "rounds" and rest.labels == whole.labels
    assert _curve(tmp_path / "a") == _curve(tmp_path / "b") and len(whole.rows) == 5
    from strategies.learned import load_weights

    a, meta = load_weights(whole.weights)
    b, _ = load_weights(rest.weights)
    assert all(np.array_equal(a[k], b[k]) for k in jaxnet.NAMES)
    assert meta["teacher"] == "greedy" and meta["rounds"] == 2 and "--rounds 2" in \
        meta["command"]
    # more rounds later: the run goes on from its last round
    more = train.run(cfg, str(tmp_path / "b"), rounds=3, resume=True, say=lambda t: None,
                     plot=False)
    assert more.rounds == 3 and len(more.rows) == 7 and more.labels > rest.labels


@pytest.mark.slow  # the slowest of this file (over a minute): trains, retrains and plays
def test_tiny_network_learns_greedy_and_beats_random(tmp_path):
    from sim.tools.tune import duel

    cfg = train.make_config("greedy", **{**TINY, "deals": 60, "epochs": 3, "eval_pairs": 0})
    out = tmp_path / "t"
    res = train.run(cfg, str(out), rounds=2, say=lambda t: None)
    rows = res.rows
    assert rows[-1]["heldout_loss"] < rows[0]["heldout_loss"] - 0.2
    assert rows[-1]["train_loss"] < rows[1]["train_loss"]
    assert rows[-1]["heldout_top1"] > rows[0]["heldout_top1"] + 0.1
    r = duel(train.weights_spec(res.weights), "random", pairs=40, first=10 ** 6, seed=11)
    assert r["lo"] > 0, r  # greedy beats random by ~4.5 points per deal
    for name in ("curve.csv", "curve.md", "curve.png", "learned.npz", "train.log",
                 "data/round_000.npz", "data/round_001.npz", "data/holdout.npz"):
        assert os.path.getsize(out / name) > 0
    with np.load(out / "data" / "round_001.npz", allow_pickle=False) as z:
        assert z["label"].size == rows[-1]["labels"] - rows[1]["labels"]
    # --retrain: a fresh network on the same labels, none collected; the same command twice
    # gives the same weights
    from strategies.learned import load_weights

    def retrain(name, seed):
        argv = ["train", "--retrain", str(out), "--teacher", "greedy", "--epochs", "3",
                "--seed", str(seed), "--hidden", "16,16,16", "--lr", "0.003", "--batch", "64",
                "--eval-pairs", "0", "--regret", "1", "--out", str(tmp_path / name)]
        assert main(argv) == 0
        return load_weights(str(tmp_path / name / "learned.npz"))

    (a, meta), (b, _) = retrain("r1", 5), retrain("r2", 5)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert meta["labels"] == rows[-1]["labels"] and meta["teacher"] == "greedy"
    assert meta["command"].startswith("shuangkou train --retrain t --epochs 3 --seed 5")
    r = duel(train.weights_spec(str(tmp_path / "r1" / "learned.npz")), "random", pairs=40,
             first=10 ** 6, seed=11)
    assert r["lo"] > 0, r


def test_ctrl_c_writes_the_weights_and_curve_so_far(tmp_path):
    cfg = train.make_config("greedy", **{**TINY, "eval_pairs": 0})
    out = tmp_path / "i"

    def say(text: str) -> None:
        if text.startswith("round 1 epoch 1"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train.run(cfg, str(out), rounds=3, say=say, plot=False)
    rows = (out / "curve.csv").read_text().splitlines()
    assert len(rows) == 1 + 4 and rows[-1].startswith("1,1,")  # header, 0.0, 0.1, 0.2, 1.1
    assert (out / "learned.npz").exists() and "interrupted" in (out / "train.log").read_text()
    res = train.run(cfg, str(out), rounds=3, resume=True, say=lambda t: None, plot=False)
    assert res.stopped == "rounds" and len(res.rows) == 7


@pytest.mark.parametrize("argv, says", [
    (["--teacher", "nosuchbot"], "unknown strategy"),
    (["--teacher", "strategies.example:Cautious"], "cannot label"),  # Python tier
    (["--teacher", "strategies.example_compiled:CautiousC"], "cannot label"),
    (["--deals", "-5"], "--deals"),
    (["--epochs", "0"], "--epochs"),
    (["--hidden", "16,x"], "--hidden"),
    (["--hidden", "16,16"], "--hidden"),
    (["--hours", "-1"], "--hours"),
    (["--seed", "-3"], "--seed"),
    (["--out", "TMP/a,b(c)"], "cannot hold"),
    (["--retrain", "TMP"], "no labels there"),
    (["--merge", "TMP/x.npz"], "two weights files"),
    (["--merge", "TMP/x.npz", "TMP/y.npz", "--out", "TMP/z.npz"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    out = tmp_path / "o"
    argv = [a.replace("TMP", str(tmp_path)) for a in argv]
    try:
        rc = main(["train", "--teacher", "greedy", "--out", str(out), *argv])
    except SystemExit as e:  # argparse's own checks (a count below 1)
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not out.exists() or not os.listdir(out / "data")
    assert not (tmp_path / "a,b(c)").exists()


def test_foreign_or_corrupt_checkpoint_is_one_line(tmp_path, capsys):
    out = tmp_path / "c"
    cfg = train.make_config("greedy", **{**TINY, "eval_pairs": 0})
    train.run(cfg, str(out), rounds=1, say=lambda t: None, plot=False, stop_after=1)
    argv = ["train", "--teacher", "greedy", "--rounds", "1", "--out", str(out), "--resume",
            *[w for k, v in TINY.items() for w in (f"--{k.replace('_', '-')}", str(v))]]
    argv[argv.index("--eval-pairs") + 1] = "0"
    for change, says in ((["--seed", "6"], "another recipe"),
                         (["--teacher", "random"], "another recipe"),
                         (["--hidden", "16,16,8"], "another recipe")):
        a = argv + change
        assert main(a) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and len(err.splitlines()) == 1, err
    good = (out / train.CHECKPOINT).read_bytes()
    with np.load(out / train.CHECKPOINT, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    state = json.loads(str(arrays["state"][()]))
    bad_state = dict(arrays, state=np.array(json.dumps({**state, "epoch": "x"})))
    bad_shape = dict(arrays, **{"p/W1": arrays["p/W1"][:3]})
    for data in (b"not a zip", good[:len(good) // 2], train._npz_bytes(bad_state),
                 train._npz_bytes(bad_shape), train._npz_bytes({"x": np.zeros(2)})):
        (out / train.CHECKPOINT).write_bytes(data)
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "corrupt" in err and len(err.splitlines()) == 1, err
    (out / train.CHECKPOINT).write_bytes(good)
    (out / "data" / "holdout.npz").write_bytes(b"garbage")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "corrupt" in err and len(err.splitlines()) == 1, err


@pytest.mark.slow
def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path):
    import signal
    import subprocess
    import time

    args = ["train", "--teacher", "greedy", "--rounds", "4", "--deals", "30", "--epochs", "2",
            "--holdout", "10", "--eval-pairs", "10", "--hidden", "16,16,16", "--seed", "8"]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    out = str(tmp_path / "k")
    p = subprocess.Popen([sys.executable, "-m", "sim.cli", *args, "--out", out], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ck = os.path.join(out, train.CHECKPOINT)

    def state() -> dict:
        with np.load(ck, allow_pickle=False) as z:
            return json.loads(str(z["state"][()]))

    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and p.poll() is None:
            try:
                if state()["round"] >= 1:
                    break
            except (OSError, ValueError, KeyError):
                pass  # not written yet
            time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    killed_at = state()["round"]
    assert main([*args, "--out", out, "--resume"]) == 0
    assert main([*args, "--out", str(tmp_path / "whole")]) == 0
    assert 1 <= killed_at < 4  # killed mid-run (else the test proves nothing)
    assert _curve(out) == _curve(tmp_path / "whole")
    a = np.load(os.path.join(out, "learned.npz"))
    b = np.load(os.path.join(tmp_path / "whole", "learned.npz"))
    assert all(np.array_equal(a[k], b[k]) for k in jaxnet.NAMES)


def test_hours_stops_inside_a_round_within_its_budget_with_a_checkpoint(tmp_path, monkeypatch):
    """``--hours`` is kept inside a round (issue 32): the labels are collected in batches with
    the clock checked between them, the run stops within 5% of its budget with a checkpoint,
    says so, and ``--resume`` ends the round with the labels an uninterrupted round has."""
    import time

    from sim.learn.labels import collect

    collect("greedy", None, 5, 0, 1, 1.0)  # the collector compiled before the clock runs
    real = train._collect

    def slow_teacher(*args, **kw):  # a teacher that takes 20 ms a deal, as expert's ~100 ms
        time.sleep(0.02 * args[4])
        return real(*args, **kw)

    monkeypatch.setattr(train, "_collect", slow_teacher)
    cfg = train.make_config("greedy", **{**TINY, "deals": 2000, "epochs": 1, "eval_pairs": 0})
    out = tmp_path / "h"
    said = []
    # 30 s: the run's first steps (the held-out set, the untrained network's row, JAX
    # compiling its measure: up to ~13 s on a loaded machine) are not interrupted
    res = train.run(cfg, str(out), hours=30 / 3600, say=said.append, plot=False)
    assert res.stopped == "budget" and res.budget == pytest.approx(30.0)
    assert res.seconds <= res.budget * (1 + train.BUDGET_SLACK) + 1.0, res.seconds
    assert "wall budget reached" in said[-1] and "checkpoint written" in said[-1], said[-1]
    assert any("the wall budget stopped its labels" in t for t in said), said
    state, _ = train.load_checkpoint(str(out), cfg)
    assert state["round"] == 0 and not state["collected"] and 0 < state["partial"] < 2000
    assert state["seconds"] == pytest.approx(res.seconds, abs=1.0)
    assert (out / "data" / "round_000.part.npz").exists() and (out / "learned.npz").exists()
    monkeypatch.setattr(train, "_collect", real)
    more = train.run(cfg, str(out), rounds=1, resume=True, say=lambda t: None, plot=False)
    assert more.stopped == "rounds" and not (out / "data" / "round_000.part.npz").exists()
    whole = collect("greedy", None, cfg.seed, 0, 2000, 1.0)
    with np.load(out / "data" / "round_000.npz", allow_pickle=False) as z:
        for k in ("label", "sidx", "midx", "deal", "seat"):
            assert np.array_equal(z[k], whole[k]), k
