"""Strategies: the players. ``make("random")`` builds one from a spec string.

Write your own by subclassing :class:`Strategy` (see ``strategies/example.py`` and
docs/strategies.md).
"""

from strategies.base import Strategy, param
from strategies.registry import (
    available,
    builtin_classes,
    load_plugin,
    make,
    parse_spec,
    register,
)

__all__ = ["Strategy", "available", "builtin_classes", "load_plugin", "make", "param",
           "parse_spec", "register"]
