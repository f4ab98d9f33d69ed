"""examples/numpy_policy.py: the batched tournament runs, and the policy wrapped as a
strategy plays exactly the deals the batch plays (same decisions in both tiers)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import sim
from sim.loops.runner import iter_records, make_seats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, ROOT)
    try:
        import examples.numpy_policy as mod
        yield mod
    finally:
        sys.path.remove(ROOT)


def test_duplicate_match_through_batch(example):
    r = example.duplicate_match(example.LinearPolicy(), "random", deals=40, n=8)
    assert r["deals"] == 40 and np.isfinite(r["mean"]) and r["stderr"] > 0


def test_wrapped_policy_plays_the_batch_deals(example):
    policy = example.LinearPolicy()
    b = sim.Batch(5, 7, seats=[None, "greedy", None, "greedy"], deals=10, records=True)
    batch = {}
    while not b.done:
        o = b.observe()
        for rec in b.step(policy.act(o.obs, o.legal_mask)).records:
            batch[rec["deal"]] = rec
    seats = [example.LinearBot(), *make_seats(["greedy"])[:1], example.LinearBot(),
             *make_seats(["greedy"])[:1]]
    for rec in iter_records(7, 0, 10, seats):
        other = batch[rec["deal"]]
        assert {k: v for k, v in rec.items() if k != "seats"} == \
            {k: v for k, v in other.items() if k != "seats"}
