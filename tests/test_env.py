"""The PettingZoo AEC environment (sim.env): PettingZoo's own API and seed tests, and
masked-random episodes whose rewards are the engine's settlements."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from sim.deal import Deal  # noqa: E402
from sim.env import env  # noqa: E402
from sim.errors import ConfigError, IllegalPlayError, NotResetError  # noqa: E402


def test_import_sim_does_not_import_pettingzoo():
    import subprocess

    code = "import sim, sys; print('pettingzoo' in sys.modules, 'sim.env' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_pettingzoo_api_test():
    api_test(env(seed=1), num_cycles=1000)


def test_pettingzoo_seed_test():
    seed_test(lambda: env(), num_cycles=500)


def test_masked_random_episodes_settle_as_the_engine():
    e = env(seed=5)
    rng = np.random.default_rng(0)
    e.reset()
    for episode in range(1000):
        if episode:
            e.reset()
        actions = []
        rewards = {}
        for agent in e.agent_iter():
            obs, reward, termination, truncation, info = e.last()
            if termination or truncation:
                rewards[agent] = reward
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            assert obs["observation"][0:54].sum() > 0  # it sees its own hand
            a = int(legal[rng.integers(len(legal))])
            actions.append(a)
            e.step(a)
        deal = Deal(5, episode)
        for a in actions:
            deal.apply_action(a)
        settle = deal.record()["settlement"]
        assert [rewards[f"seat_{s}"] for s in range(4)] == settle
        assert info["deal"] == episode


def test_reset_seed_is_reproducible_and_deals_advance():
    a, b = env(), env()
    a.reset(seed=3)
    b.reset(seed=3)
    assert (a.observe("seat_0")["observation"] == b.observe("seat_0")["observation"]).all()
    assert a.deal.deal == 0
    a.reset()
    assert a.deal.deal == 1 and a.deal.seed == 3
    a.seed(3)
    a.reset()
    assert a.deal.deal == 0


_W = (np.arange(162, dtype=np.int64) * 2654435761) % 1000003 + 1


def _policy(obs, mask):
    """A deterministic policy of the observation alone (as tests/test_batch.py's)."""
    legal = np.flatnonzero(mask)
    return int(legal[int((obs.astype(np.int64) * _W).sum()) % len(legal)])


def test_greedy_opponents_play_between_the_agents_turns_as_in_batch():
    """Seats 1 and 3 greedy: the agents seat_0 and seat_2 get every turn of the episode (and
    only those), and each episode's rewards and record are sim.Batch's for the same deal."""
    from sim.loops.batch import Batch

    n = 12
    e = env(seed=9, opponents={1: "greedy", 3: "greedy"})
    assert e.possible_agents == ["seat_0", "seat_2"]
    got = []
    for episode in range(n):
        e.reset()
        rewards = {}
        for agent in e.agent_iter():
            assert agent in ("seat_0", "seat_2")
            obs, reward, termination, truncation, info = e.last()
            if termination or truncation:
                rewards[agent] = reward
                e.step(None)
                continue
            assert e.deal.to_act.seat == int(agent[-1])
            e.step(_policy(obs["observation"], obs["action_mask"]))
        got.append((rewards, e.deal.record()))
    b = Batch(3, 9, seats=[None, "greedy", None, "greedy"], deals=n, records=True)
    recs = {}
    while not b.done:
        o = b.observe()
        acts = np.zeros(3, dtype=np.int64)
        for i in np.flatnonzero(o.seat >= 0):
            acts[i] = _policy(o.obs[i], o.legal_mask[i])
        fin = b.step(acts)
        recs.update(zip(fin.deal.tolist(), fin.records))
    for d, (rewards, record) in enumerate(got):
        assert record == recs[d]
        assert rewards == {"seat_0": recs[d]["settlement"][0],
                           "seat_2": recs[d]["settlement"][2]}


def test_python_and_plugin_opponents_and_api_test():
    from strategies.random import RandomStrategy

    e = env(seed=2, opponents=[None, RandomStrategy(show_prob=0.5), None,
                               "strategies.example_compiled:CautiousC"])
    assert e.possible_agents == ["seat_0", "seat_2"]
    api_test(e, num_cycles=300)
    e = env(seed=2, opponents={"seat_0": "random"})
    e.reset()
    assert e.agent_selection != "seat_0" and "seat_0" not in e.agents


def test_bad_opponents_are_one_line_errors():
    with pytest.raises(ConfigError, match="seat 4 must be 0, 1, 2 or 3"):
        env(opponents={4: "greedy"})
    with pytest.raises(ConfigError, match="at least one seat"):
        env(opponents=["random"] * 4)
    with pytest.raises(ConfigError, match="dict"):
        env(opponents="greedy")
    with pytest.raises(ConfigError, match="nosuchbot"):
        env(opponents={1: "nosuchbot"})


def test_use_before_reset_says_call_reset_first():
    """Before reset() the per-episode attributes raised AttributeError and observe() an
    AttributeError on None: now one line saying to call reset() first."""
    e = env(seed=1)
    for use in (lambda: e.step(0), e.last, lambda: e.observe("seat_0"),
                lambda: list(e.agent_iter()), lambda: e.agents, lambda: e.rewards,
                lambda: e.num_agents):
        with pytest.raises(NotResetError, match=r"call reset\(\) first"):
            use()
    assert not hasattr(e, "agent_selection")  # still an AttributeError for hasattr
    with pytest.raises(ConfigError, match="agent 'seat_9': one of seat_0"):
        e.observation_space("seat_9")
    e.reset()
    with pytest.raises(ConfigError, match="agent 'bogus'"):
        e.observe("bogus")
    with pytest.raises(IllegalPlayError, match="integer action"):
        e.step("3")
