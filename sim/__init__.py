"""shuangkou: a fast, exact simulator for Xinjiang Shuangkou (新疆双扣).

The public API (see README.md and docs/):

- ``Rules``: the rules variant (docs/rules.md "Variants").
- ``legal_plays``, ``trick_winner``, ``card_points``, ``settle``, ``level``: rules as functions.
- ``Deal``: one deal step by step for Python bots, people and RL loops.
- many deals through the compiled loop: ``sim.loops.runner.iter_records`` (records) and
  the ``shuangkou play`` and ``shuangkou tournament`` commands.
- ``obs_spec``, ``action_of``, ``choice_of_action``: the fixed observation vector and action
  space of the fast tier (``sim.spaces``); ``Batch``: many deals stepped at once
  (``sim.loops.batch``).

Every name is loaded on first use (PEP 562): ``import sim`` or ``import sim.analysis.stats`` loads
neither numba nor the engine; ``sim.Deal`` does. The layers are described in
docs/architecture.md (and enforced by tests/test_layers.py). Every module that imports numba
imports ``sim.core._cache`` first (through ``sim.core.jit``), so numba's cache folder is set
before anything compiles.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    "CACHE_DIR": "sim.core._cache",
    "legal_plays": "sim.api", "trick_winner": "sim.api",
    "Batch": "sim.loops.batch",
    "card_points": "sim.cards",
    "Deal": "sim.deal", "ToAct": "sim.deal",
    "Observation": "sim.observation",
    "ConfigError": "sim.errors", "IllegalPlayError": "sim.errors",
    "InvalidCardError": "sim.errors", "RecordError": "sim.errors", "RulesError": "sim.errors",
    "ShuangkouError": "sim.errors", "StrategyError": "sim.errors",
    "DEFAULT_RULES": "sim.rules", "Rules": "sim.rules",
    "settle": "sim.core.scoring",
    "level": "sim.titles",
    "N_ACTIONS": "sim.spaces", "OBS_SIZE": "sim.spaces", "action_of": "sim.spaces",
    "choice_of_action": "sim.spaces", "obs_spec": "sim.spaces",
}

__all__ = [
    "ConfigError", "DEFAULT_RULES", "Deal", "IllegalPlayError", "InvalidCardError",
    "Observation", "RecordError", "Rules", "RulesError", "ShuangkouError", "StrategyError",
    "ToAct", "card_points", "legal_plays", "level", "settle", "trick_winner",
    "Batch", "N_ACTIONS", "OBS_SIZE", "action_of", "choice_of_action", "obs_spec", "solve",
]


def __getattr__(name: str) -> Any:
    if name == "solve":  # a callable subpackage: sim.solve(deal), sim.solve.Solver
        return importlib.import_module("sim.solve")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "solve"})
