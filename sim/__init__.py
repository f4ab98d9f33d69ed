"""shuangkou: a fast, exact simulator for Xinjiang Shuangkou (新疆双扣).

The public API (see README.md and docs/):

- ``Rules``: the rules variant (docs/rules.md "Variants").
- ``legal_plays``, ``trick_winner``, ``card_points``, ``settle``, ``level``: rules as functions.
- ``Deal``: one deal step by step for Python bots, people and RL loops.
- ``play``: many deals through the compiled loop.
- ``obs_spec``, ``action_of``, ``choice_of_action``: the fixed observation vector and action
  space of the fast tier (``sim.spaces``); ``Batch``: many deals stepped at once (``sim.batch``).
"""

from sim._cache import CACHE_DIR  # noqa: F401  (must run before numba compiles anything)
from sim.api import legal_plays, trick_winner
from sim.cards import card_points
from sim.deal import Deal, Observation, ToAct
from sim.errors import (
                        ConfigError,
                        IllegalPlayError,
                        InvalidCardError,
                        RecordError,
                        RulesError,
                        ShuangkouError,
                        StrategyError,
)
from sim.rules import DEFAULT_RULES, Rules
from sim.scoring import level, settle
from sim.spaces import N_ACTIONS, OBS_SIZE, action_of, choice_of_action, obs_spec

__version__ = "0.1.0"

__all__ = [
    "ConfigError", "DEFAULT_RULES", "Deal", "IllegalPlayError", "InvalidCardError",
    "Observation", "RecordError", "Rules", "RulesError", "ShuangkouError", "StrategyError",
    "ToAct", "card_points", "legal_plays", "level", "settle", "trick_winner",
    "Batch", "N_ACTIONS", "OBS_SIZE", "action_of", "choice_of_action", "obs_spec",
]


def __getattr__(name: str):
    # sim.Batch loads the compiled strategies (greedy, the search players): only on use,
    # so that ``import sim`` stays light
    if name == "Batch":
        from sim.batch import Batch
        return Batch
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
