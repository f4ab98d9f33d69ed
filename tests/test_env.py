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
