"""Speed target of the Gymnasium vector environment (``sim.gym``, docs/frameworks.md): at
n = 256 sub-envs against three ``greedy`` seats, its env steps/s are at least 50% of
``sim.Batch``'s own policy decisions/s, measured in the same run with the same policy (the
lowest legal action), both reading observations and masks at every step.

Run: ``python -m pytest benchmarks/test_bench_gym.py -q`` or ``python
benchmarks/test_bench_gym.py [ROUNDS]`` (prints the figures). The two alternate round by
round so that both see the same machine; the best round of each is compared.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

N = 256
STEPS = 200
TARGET = 0.5


def batch_rate(steps: int, n: int = N) -> float:
    """``sim.Batch``'s policy decisions/s: observe (observations and masks), act, step."""
    import sim

    b = sim.Batch(n, seed=1, seats=[None, "greedy", "greedy", "greedy"])
    o = b.observe()
    decisions = 0
    t = time.perf_counter()
    for _ in range(steps):
        decisions += int((o.seat >= 0).sum())
        b.step(o.legal_mask.argmax(axis=1))
        o = b.observe()
    return decisions / (time.perf_counter() - t)


def gym_rate(steps: int, n: int = N) -> float:
    """``sim.gym.ShuangkouVectorEnv``'s env steps/s (sub-env steps: n per call)."""
    import sim.gym

    env = sim.gym.ShuangkouVectorEnv(n, opponents="greedy", seed=1)
    _, infos = env.reset(seed=1)
    t = time.perf_counter()
    for _ in range(steps):
        _, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
    return steps * n / (time.perf_counter() - t)


def measure(rounds: int = 5) -> dict[str, float]:
    batch_rate(10)
    gym_rate(10)  # compiled and warm
    b, g = [], []
    for _ in range(rounds):
        b.append(batch_rate(STEPS))
        g.append(gym_rate(STEPS))
    return {"batch_decisions_per_s": max(b), "gym_steps_per_s": max(g),
            "ratio": max(g) / max(b)}


def test_gym_steps_vs_batch_decisions(benchmark):
    pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    out = {}
    benchmark.pedantic(lambda: out.update(measure(3)), rounds=1, iterations=1)
    benchmark.extra_info.update(out)
    assert out["ratio"] >= TARGET, (f"sim.gym makes {out['gym_steps_per_s']:,.0f} steps/s, "
                                    f"{out['ratio']:.0%} of sim.Batch's "
                                    f"{out['batch_decisions_per_s']:,.0f} (target 50%)")


if __name__ == "__main__":
    r = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    print(f"n={N}, greedy opponents: sim.Batch {r['batch_decisions_per_s']:,.0f} decisions/s, "
          f"sim.gym {r['gym_steps_per_s']:,.0f} steps/s: {r['ratio']:.0%}")
