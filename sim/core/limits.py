"""The ranges of the numbers that name a deal (docs/engine.md "Random numbers") and the evaluation
seed: defined once.

This module imports nothing, so the command line and the config reader check seeds and deal
numbers without loading numpy or the engine; ``sim.core.rng`` (which draws the streams they
key), ``sim.loops.batch`` and the rest import them from here.
"""

from __future__ import annotations

MAX_SEED = 2**64 - 1  # a master seed is any unsigned 64-bit integer
MAX_DEAL = 2**63 - 1  # deal numbers are 0 … 2**63-1
MAX_JOBS = 1024  # workers of one tune, train or ladder run (docs/cli.md "Numeric bounds")
MAX_HIDDEN = 1024  # units of a learned network's layer: what the player plays and train makes

# The evaluation seed (docs/learning.md "The numbers", docs/tuning.md): the seed every strength
# figure in the README and the docs is measured on (configs/strength/learned_*.toml). No
# training, tuning, weight selection or tie-break reads it: `shuangkou train` refuses it as
# --seed or --eval-seed (the per-epoch evaluation chooses best.npz, a selection), and
# `shuangkou tune` as --seed (its deals choose the tuned values). 577215: the first digits of
# the Euler-Mascheroni constant, a number no run of the project had used.
EVAL_SEED = 577215


def refuse_eval_seed(seed: int, what: str) -> str | None:
    """The one-line reason ``seed`` may not be a training or selection seed (``what``: the
    option, e.g. ``--seed``), or None when it may."""
    if seed == EVAL_SEED:
        return (f"{what} {seed} is the evaluation seed (sim.core.limits.EVAL_SEED), kept for "
                f"strength figures only: no training, tuning or selection reads it; choose "
                f"another seed")
    return None
