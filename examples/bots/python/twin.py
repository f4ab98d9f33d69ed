"""The in-process twin of examples/bots/python/bot.py: the same decisions as a Strategy.

It calls bot.py's own `choose` with the observation turned into the protocol's shapes, so
the two pick the same index for every decision; a test plays both and compares the tallies.

    shuangkou play --plugin examples/bots/python/twin.py --seats pytwin,greedy
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from strategies import Strategy

_spec = importlib.util.spec_from_file_location(
    "shuangkou_example_pybot", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bot.py"))
assert _spec is not None and _spec.loader is not None
_bot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bot)


def protocol_legal(kind: str, legal: list) -> list[list[str]]:
    """`legal` as the protocol writes it: a show of Kh is ["Kh", "Kh"], a pass is []."""
    if kind == "show":
        return [[] if c is None else [c, c] for c in legal]
    return [list(choice) for choice in legal]


class Twin(Strategy):
    """bot.py's heuristic, in-process."""

    name = "pytwin"

    def choose(self, obs: Any, legal: list) -> Any:
        kind = obs.kind
        trick: list = []
        if kind == "play":
            plays = obs.trick
            if plays:
                leader = obs.leader
                trick = [[(leader + k) % 4, list(p)] for k, p in enumerate(plays)]
        i = _bot.choose(kind, list(obs.hand), protocol_legal(kind, legal), trick,
                        obs.trump if kind == "play" else None, self.seat)
        return legal[i]
