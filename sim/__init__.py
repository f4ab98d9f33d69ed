"""shuangkou: a fast, exact simulator for Xinjiang Shuangkou (新疆双扣).

The public API (see README.md and docs/):

- ``Rules``: the rules variant (docs/rules.md "Variants").
- ``legal_plays``, ``trick_winner``, ``card_points``, ``settle``, ``level``: rules as functions.
- ``Deal``: one deal step by step for Python bots, people and RL loops.
- ``play``: many deals through the compiled loop.
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

__version__ = "0.1.0"

__all__ = [
    "ConfigError", "DEFAULT_RULES", "Deal", "IllegalPlayError", "InvalidCardError",
    "Observation", "RecordError", "Rules", "RulesError", "ShuangkouError", "StrategyError",
    "ToAct", "card_points", "legal_plays", "level", "settle", "trick_winner",
]
