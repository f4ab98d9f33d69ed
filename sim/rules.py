"""The rules variant: exactly the names and defaults of the Variants list in docs/rules.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from sim.errors import RulesError


@dataclasses.dataclass(frozen=True)
class Rules:
    """A rules configuration. The defaults are the rules; anything else is not a variant.

    Attributes
    ----------
    max_redeals : redeals allowed when nobody shows before the deal is void (R11).
    kou_di_single, kou_di_pair : last-trick multipliers when an attacker wins it with a single
        or a pair (R23).
    settle_step, settle_unit, defender_cap : settlement step, unit and defenders' cap (R24).
    start_skill : everybody's skill value before the first deal (R25).
    """

    max_redeals: int = 3
    kou_di_single: int = 2
    kou_di_pair: int = 4
    settle_step: int = 20
    settle_unit: int = 2
    defender_cap: int = 10
    start_skill: int = 1600

    def __post_init__(self) -> None:
        lows = {"max_redeals": 0, "kou_di_single": 1, "kou_di_pair": 1, "settle_step": 1,
                "settle_unit": 0, "defender_cap": 0}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise RulesError(f"rules variant {f.name}={v!r} must be an integer")
            lo = lows.get(f.name)
            if lo is not None and v < lo:
                raise RulesError(f"rules variant {f.name}={v!r} must be >= {lo}")
            if f.name == "max_redeals" and v > 1000:
                raise RulesError(f"rules variant max_redeals={v!r} must be <= 1000")
            object.__setattr__(self, f.name, int(v))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> "Rules":
        """Rules from a mapping; an unknown name is an error that lists the allowed ones."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            raise RulesError(
                f"unknown rules variant {unknown[0]!r}: allowed are {', '.join(cls.names())}"
            )
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)

    def array(self) -> np.ndarray:
        """The variants as ``int64[7]`` in declaration order, for the kernels."""
        return np.array([getattr(self, n) for n in self.names()], dtype=np.int64)

    def __str__(self) -> str:
        changed = [f"{n}={getattr(self, n)}" for n in self.names()
                   if getattr(self, n) != getattr(DEFAULT_RULES, n)]
        return "Rules(" + ", ".join(changed) + ")"


DEFAULT_RULES = Rules()

# positions in Rules.array()
R_MAX_REDEALS, R_KOU_SINGLE, R_KOU_PAIR, R_STEP, R_UNIT, R_CAP, R_START = range(7)
