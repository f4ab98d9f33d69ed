"""sim.gym: the Gymnasium vector environment over sim.Batch (docs/frameworks.md)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

import sim.gym as G  # noqa: E402
from sim.deal import Deal  # noqa: E402
from sim.errors import ConfigError, IllegalPlayError, ShuangkouError  # noqa: E402
from sim.spaces import N_ACTIONS, OBS_SIZE  # noqa: E402

ROOT = __import__("os").path.dirname(__import__("os").path.dirname(__file__))


def _random_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row (rows of a mask)."""
    r = rng.random(mask.shape)
    r[~mask] = -1.0
    return r.argmax(axis=1)


def _run(env: G.ShuangkouVectorEnv, steps: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=7)
    out = [(obs.copy(), infos["action_mask"].copy())]
    for _ in range(steps):
        obs, r, term, trunc, infos = env.step(_random_actions(rng, infos["action_mask"]))
        out.append((obs.copy(), infos["action_mask"].copy(), r.copy(), term.copy(),
                    trunc.copy()))
    return out


def _deal_backed(*args, **kwargs) -> G.ShuangkouVectorEnv:
    """The same environment stepping sim.Deal objects in Python (the plug-in path)."""
    e = G.ShuangkouVectorEnv(*args, **kwargs)
    e.in_batch = False
    return e


def test_env_checker_passes_per_sub_env():
    from gymnasium.utils.env_checker import check_env

    check_env(G.ShuangkouEnv())
    check_env(G.ShuangkouEnv(seat=1, opponents={0: "random", 2: "greedy", 3: "random"}))
    check_env(gymnasium.make("sim.gym:Shuangkou-v0").unwrapped)


def test_vector_api_shapes_dtypes_and_spaces():
    e = G.ShuangkouVectorEnv(5, seed=3)
    assert e.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    assert e.single_observation_space.shape == (OBS_SIZE,)
    assert e.single_observation_space.dtype == np.int16
    assert e.single_action_space.n == N_ACTIONS
    assert e.observation_space.shape == (5, OBS_SIZE)
    assert e.action_space.shape == (5,)
    obs, infos = e.reset(seed=3)
    assert obs.dtype == np.int16 and obs.shape == (5, OBS_SIZE)
    assert infos["action_mask"].dtype == np.bool_ and infos["action_mask"].shape == (5, N_ACTIONS)
    assert e.observation_space.contains(obs)
    rng = np.random.default_rng(1)
    for _ in range(60):
        obs, r, term, trunc, infos = e.step(_random_actions(rng, infos["action_mask"]))
        assert e.observation_space.contains(obs)
        assert r.dtype == np.float64 and r.shape == (5,)
        assert term.dtype == np.bool_ and trunc.dtype == np.bool_ and not trunc.any()
        assert infos["action_mask"].any(axis=1).all()
    v = gymnasium.make_vec("sim.gym:Shuangkou-v0", num_envs=3,
                           vectorization_mode="vector_entry_point")
    assert v.unwrapped.num_envs == 3 and v.reset(seed=1)[0].shape == (3, OBS_SIZE)


def test_masks_and_observations_are_the_deals():
    """The Batch-backed env and the same env over sim.Deal objects (whose masks are
    Deal.legal_mask and whose observations are Deal.obs_array) agree step by step: same
    observations, masks, rewards and ends, NEXT_STEP holds included."""
    a = _run(G.ShuangkouVectorEnv(6, opponents="greedy"), 150)
    e = _deal_backed(6, opponents="greedy")
    b = _run(e, 150)
    assert not e.in_batch and isinstance(e._slots, G._DealSlots)
    assert sum(int(x[3].sum()) for x in a[1:]) >= 6  # deals ended
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    # and the masks are the legal actions of the deals the slots hold
    for i, d in enumerate(e._slots.deals):
        assert sorted(np.flatnonzero(e._mask[i]).tolist()) == sorted(d.legal_actions())
        assert d.seat_to_act == 0
        np.testing.assert_array_equal(b[-1][0][i], d.obs_array(0))


def test_next_step_autoreset():
    e = G.ShuangkouVectorEnv(4, seed=11, illegal="raise")
    obs, infos = e.reset(seed=11)
    rng = np.random.default_rng(2)
    seen = 0
    for _ in range(400):
        obs, r, term, _, infos = e.step(_random_actions(rng, infos["action_mask"]))
        if not term.any():
            assert (r == 0).all()
            continue
        seen += 1
        held = term.copy()
        obs0, mask0 = obs.copy(), infos["action_mask"].copy()
        a = _random_actions(rng, infos["action_mask"])
        a[held] = N_ACTIONS + 5  # ignored: not even checked
        obs, r, term, _, infos = e.step(a)
        assert (r[held] == 0).all() and not term[held].any()
        np.testing.assert_array_equal(obs[held], obs0[held])  # the next deal's first decision
        np.testing.assert_array_equal(infos["action_mask"][held], mask0[held])
        if seen >= 3:
            break
    assert seen >= 3


def test_gymnasiums_episode_statistics_read_the_autoreset_as_next_step():
    """Gymnasium's own RecordEpisodeStatistics (it reads metadata["autoreset_mode"]) counts
    the episodes as we do: one deal each, its length the learning seat's decisions (the
    autoreset steps left out), its return the deal's reward."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    e = RecordEpisodeStatistics(G.ShuangkouVectorEnv(4, seed=3))
    obs, infos = e.reset(seed=3)
    ours, theirs = [], []
    total, length, held = np.zeros(4), np.zeros(4, dtype=int), np.zeros(4, dtype=bool)
    for _ in range(200):
        obs, r, term, _, infos = e.step(infos["action_mask"].argmax(axis=1))
        total += r
        length += ~held
        for i in np.flatnonzero(term):
            ours.append((total[i], length[i]))
            total[i], length[i] = 0, 0
        if "episode" in infos:
            theirs += [(infos["episode"]["r"][i], infos["episode"]["l"][i])
                       for i in np.flatnonzero(infos["_episode"])]
        held = term
    assert len(ours) >= 10 and ours == theirs
    assert all(10 <= x[1] <= 80 for x in ours)  # 14-27 plays (27 cards), shows, give-backs


def test_rewards_are_the_settlement_of_the_deal():
    """The rewards of sub-env 0 over a deal are one settlement: that of the deal replayed
    with sim.Deal, greedy in seats 1-3 and the same actions in seat 0."""
    from strategies.registry import make

    e = G.ShuangkouVectorEnv(1, seed=5)
    obs, infos = e.reset(seed=5)
    rng = np.random.default_rng(3)
    d = Deal(5, 0)
    greedy = [make("greedy") for _ in range(4)]
    for s in range(1, 4):
        greedy[s].begin_deal(s, 5, 0)
    total = 0.0
    while True:
        while not d.done and d.seat_to_act != 0:
            d.apply(greedy[d.seat_to_act].choose(d.observation(d.seat_to_act), d.legal()))
        assert sorted(np.flatnonzero(infos["action_mask"][0])) == sorted(d.legal_actions())
        a = _random_actions(rng, infos["action_mask"])
        d.apply_action(int(a[0]))
        obs, r, term, _, infos = e.step(a)
        total += r[0]
        if term[0]:
            break
    while not d.done:
        d.apply(greedy[d.seat_to_act].choose(d.observation(d.seat_to_act), d.legal()))
    assert total == d.record()["settlement"][0]


def test_opponents_built_in_and_plug_in():
    """A compiled plug-in (CautiousC) seated in the env decides as the Python bot it copies
    (Cautious, asked through choose): the same game; a built-in mix runs inside the Batch."""
    from strategies.example import Cautious

    plug = G.ShuangkouVectorEnv(3, opponents="strategies.example_compiled:CautiousC")
    assert not plug.in_batch
    py = G.ShuangkouVectorEnv(3, opponents=Cautious())
    a, b = _run(plug, 120), _run(py, 120)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    g = G.ShuangkouVectorEnv(3, seat=2, opponents=["random", "greedy", None, "greedy"])
    assert g.in_batch and g.seat == 2
    g.reset(seed=1)
    assert g._slots.batch.seat_names == ["random", "greedy", "python", "greedy"]
    assert (g._slots.batch.seat == 2).all()
    # greedy everywhere is not random everywhere: the games differ
    r = _run(G.ShuangkouVectorEnv(3, opponents="random"), 60)
    s = _run(G.ShuangkouVectorEnv(3, opponents="greedy"), 60)
    assert any((x[0] != y[0]).any() for x, y in zip(r, s))


def test_reproducible_with_a_seed_and_seeds_differ():
    a = _run(G.ShuangkouVectorEnv(4), 80)
    b = _run(G.ShuangkouVectorEnv(4), 80)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    e = G.ShuangkouVectorEnv(4)
    o1, _ = e.reset(seed=1)
    o2, _ = e.reset(seed=2)
    assert (o1 != o2).any()
    o3, _ = e.reset()  # the next unused deals of seed 2
    e2 = G.ShuangkouVectorEnv(4)
    e2._restart(2, 4)
    np.testing.assert_array_equal(o3, e2._slots.observe()[0])


def test_illegal_actions_replaced_or_refused():
    e = G.ShuangkouVectorEnv(2, seed=1)
    obs, infos = e.reset(seed=1)
    bad = np.flatnonzero(~infos["action_mask"][0])[0]
    a = _random_actions(np.random.default_rng(0), infos["action_mask"])
    a[0] = bad
    obs, r, term, _, infos = e.step(a)
    assert infos["illegal"].tolist() == [True, False]
    e = G.ShuangkouVectorEnv(2, seed=1, illegal="raise")
    obs, infos = e.reset(seed=1)
    with pytest.raises(IllegalPlayError, match="sub-env 0: action"):
        e.step(np.array([bad, 0]))
    with pytest.raises(IllegalPlayError, match="shape"):
        e.step(np.array([0, 0, 0]))


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ConfigError, match="learning seat is 0, 1, 2 or 3"):
        G.ShuangkouVectorEnv(2, seat=4)
    with pytest.raises(ConfigError, match="each of seats 1, 2, 3"):
        G.ShuangkouVectorEnv(2, opponents={1: "greedy"})
    with pytest.raises(ConfigError, match="entry 0 must be None"):
        G.ShuangkouVectorEnv(2, opponents=["greedy"] * 4)
    with pytest.raises(ConfigError, match="nosuchbot"):
        G.ShuangkouVectorEnv(2, opponents="nosuchbot")
    with pytest.raises(ConfigError, match="illegal="):
        G.ShuangkouVectorEnv(2, illegal="ignore")
    with pytest.raises(IllegalPlayError, match="reset"):
        G.ShuangkouVectorEnv(2).step(np.zeros(2, dtype=np.int64))


def test_missing_extra_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # "not installed"
    monkeypatch.delitem(sys.modules, "sim.gym")
    with pytest.raises(ImportError) as info:
        import sim.gym  # noqa: F401
    e = info.value
    assert type(e).__name__ == "MissingExtraError"  # (the class of the module's new copy)
    assert isinstance(e, ShuangkouError) and isinstance(e, ImportError)
    assert str(e) == G.EXTRA_LINE and "\n" not in str(e) and "shuangkou[rl]" in str(e)
    code = ("import sys, runpy; sys.modules['gymnasium'] = None; "
            "runpy.run_module('sim.gym', run_name='__main__')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 2 and p.stderr == G.EXTRA_LINE + "\n" and not p.stdout


@pytest.mark.slow
def test_the_training_example_runs():
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    p = subprocess.run([sys.executable, "examples/gym_train.py", "--updates", "6"],
                       capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [x for x in p.stdout.splitlines() if x.startswith("update")]
    assert len(lines) == 6
    assert all(np.isfinite(float(x.split()[-1])) for x in lines)
