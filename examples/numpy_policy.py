"""A vectorised numpy policy: a tournament through ``sim.Batch``, and the same policy wrapped
as a strategy for ``shuangkou tournament``.

The policy is linear: ``scores = obs @ W + b`` over the fixed action space, the best legal
action wins. Nothing is trained here; a trained network would replace ``LinearPolicy.act``
(any function from a batch of observation vectors and legal masks to actions) and load its
weights instead of drawing them. Run from the repository root::

    python examples/numpy_policy.py --deals 20000          # policy vs greedy, duplicate deals
    PYTHONPATH=. shuangkou tournament configs/quick.toml \\
        --plugin examples.numpy_policy                      # then use the name "linear"

or name the class directly as a player: ``examples.numpy_policy:LinearBot(seed=1)``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import sim
from sim.spaces import A_SINGLE, A_TWO, N_ACTIONS, O_HAND, OBS_SIZE
from strategies import Strategy, param


class LinearPolicy:
    """``scores = obs @ W + b``; the legal action with the highest score (batched)."""

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.W = rng.normal(0.0, 0.01, (OBS_SIZE, N_ACTIONS)).astype(np.float32)
        # a hand-made prior in place of training: shed low single cards, keep pairs
        self.b = np.zeros(N_ACTIONS, dtype=np.float32)
        self.b[A_SINGLE:A_TWO] = -0.02 * (np.arange(54) // 4)
        self.b[A_TWO:] = 0.5
        self.W[O_HAND:O_HAND + 54, A_SINGLE:A_TWO] += 0.05 * np.eye(54, dtype=np.float32)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Actions (int64[n]) for observation vectors int16[n, OBS_SIZE] and masks
        bool[n, N_ACTIONS]; rows without a legal action get 0 (ignored by Batch.step)."""
        scores = obs.astype(np.float32) @ self.W + self.b
        scores[~mask] = -np.inf
        return scores.argmax(axis=1)


def duplicate_match(policy: LinearPolicy, opponent: str = "greedy", deals: int = 2000,
                    seed: int = 1, n: int = 256) -> dict[str, float]:
    """The policy's team against ``opponent`` on ``deals`` duplicate deals: every deal is
    played twice, the policy in seats 0 and 2, then in seats 1 and 3. Returns the mean
    settlement per deal of the policy's seats and its standard error."""
    per_deal = np.zeros((2, deals))
    for side, seats in enumerate(([None, opponent, None, opponent],
                                  [opponent, None, opponent, None])):
        b = sim.Batch(n, seed, seats=seats, deals=deals)
        while not b.done:
            o = b.observe()
            fin = b.step(policy.act(o.obs, o.legal_mask))
            per_deal[side, fin.deal] = fin.settlement[:, side]  # seat 0 or seat 1
    pair = per_deal.mean(axis=0)  # the two orientations of a deal together
    return {"mean": float(pair.mean()), "stderr": float(pair.std(ddof=1) / np.sqrt(deals)),
            "deals": deals}


class LinearBot(Strategy):
    """``LinearPolicy`` as a strategy: for ``shuangkou play``/``tournament`` (Python tier)."""

    name = "linear"
    seed = param(0, int, lo=0, doc="seed of the policy's weights")

    def choose(self, obs, legal):
        if getattr(self, "_policy", None) is None:
            self._policy = LinearPolicy(self.seed)
        actions = [sim.action_of(c, obs.kind) for c in legal]
        mask = np.zeros((1, N_ACTIONS), dtype=bool)
        mask[0, actions] = True
        a = int(self._policy.act(obs.array()[None, :], mask)[0])
        return legal[actions.index(a)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=256, help="deals stepped at once")
    args = ap.parse_args()
    t = time.perf_counter()
    r = duplicate_match(LinearPolicy(), args.opponent, args.deals, args.seed, args.n)
    dt = time.perf_counter() - t
    print(f"linear policy vs {args.opponent}: {r['mean']:+.3f} ± {1.96 * r['stderr']:.3f} "
          f"points per deal (95%), {args.deals} duplicate deals in {dt:.1f} s")


if __name__ == "__main__":
    main()
