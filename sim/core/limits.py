"""The ranges of the numbers that name a deal (docs/engine.md "Random numbers"): defined once.

This module imports nothing, so the command line and the config reader check seeds and deal
numbers without loading numpy or the engine; ``sim.core.rng`` (which draws the streams they
key), ``sim.harness.batch`` and the rest import them from here.
"""

from __future__ import annotations

MAX_SEED = 2**64 - 1  # a master seed is any unsigned 64-bit integer
MAX_DEAL = 2**63 - 1  # deal numbers are 0 … 2**63-1
