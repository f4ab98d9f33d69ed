"""Strategies: the players. ``make("random")`` builds one from a spec string.

Write your own by subclassing :class:`Strategy` (see ``strategies/example.py`` and README).
"""

from strategies.base import Strategy, param
from strategies.registry import available, load_plugin, make, parse_spec, register


def builtin_classes() -> list[type[Strategy]]:
    """The strategies that ship with the package."""
    from strategies.greedy import GreedyStrategy
    from strategies.random import RandomStrategy
    from strategies.search import IsmctsStrategy, OracleStrategy, PimcStrategy

    return [RandomStrategy, GreedyStrategy, PimcStrategy, IsmctsStrategy, OracleStrategy]


__all__ = ["Strategy", "available", "builtin_classes", "load_plugin", "make", "param",
           "parse_spec", "register"]
