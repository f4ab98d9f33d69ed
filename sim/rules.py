"""The rules variant: exactly the names and defaults of the Variants list in docs/rules.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from sim.core.layout import layout
from sim.errors import NotRulesError, RulesError

# The allowed range of every variant (docs/rules.md, Variants). The bounds keep every per-deal
# number exact in int64 kernels and in the per-deal table (sim.core.tables.DEAL_COLUMNS):
# - the last-trick multiplier is at most 31, inside the multiplier histogram (0 … 31) and int16;
# - the attacker score is then at most 200 + 30 * 80 = 2,600 (the last trick, a pair trick of
#   at most 80 points, counts 31 times; R22-R23), well inside int32;
# - a settlement is at most settle_unit * (2,600 - 100) = 25,000 points for an attacker and
#   defender_cap for a defender, so it fits int16 (the column is int32), its square fits in
#   2**30 and int64 sums of squares stay exact for more than 2**32 deals;
# - skill values (start_skill plus the settlements of a run) stay far inside float64's exact
#   integers.
RANGES: dict[str, tuple[int, int]] = {
    "max_redeals": (0, 1000),
    "kou_di_single": (1, 31),
    "kou_di_pair": (1, 31),
    "settle_step": (1, 1000),
    "settle_unit": (0, 10),
    "defender_cap": (0, 1000),
    "start_skill": (-1_000_000_000, 1_000_000_000),
}


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
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise RulesError(f"rules variant {f.name}={v!r} must be an integer")
            lo, hi = RANGES[f.name]
            if not lo <= v <= hi:
                raise RulesError(f"rules variant {f.name}={v!r} is out of range: must be "
                                 f">= {lo} and <= {hi} (docs/rules.md, Variants)")
            object.__setattr__(self, f.name, int(v))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> "Rules":
        """Rules from a mapping; an unknown name is an error that lists the allowed ones."""
        if values is not None and not isinstance(values, Mapping):
            raise RulesError(f"rules variants {values!r} must be a mapping of names to "
                             f"integers: allowed names are {', '.join(cls.names())}")
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
        """The variants as ``int64[N_RULES]`` in declaration order (``RULES_FIELDS``), for the
        kernels."""
        return np.array([getattr(self, n) for n, _ in RULES_FIELDS], dtype=np.int64)

    def __str__(self) -> str:
        changed = [f"{n}={getattr(self, n)}" for n in self.names()
                   if getattr(self, n) != getattr(DEFAULT_RULES, n)]
        return "Rules(" + ", ".join(changed) + ")"


DEFAULT_RULES = Rules()


def as_rules(rules: Any) -> Rules:
    """``rules`` as given to ``sim.Deal``, ``sim.Batch``, ``sim.env`` and ``sim.settle``: a
    ``Rules`` (``None`` and other false values: the defaults); anything else is one line."""
    rules = rules or DEFAULT_RULES
    if not isinstance(rules, Rules):
        hint = (": sim.Rules.from_dict(...) reads a mapping" if isinstance(rules, Mapping)
                else "")
        raise NotRulesError(f"rules must be a sim.Rules or None, not "
                            f"{type(rules).__name__}{hint}")
    return rules


# the layout of Rules.array(): one int64 per variant, in declaration order
RULES_FIELDS = tuple((name, 1) for name in Rules.names())
_R, N_RULES = layout(RULES_FIELDS)
R_MAX_REDEALS = _R["max_redeals"]
R_KOU_SINGLE = _R["kou_di_single"]
R_KOU_PAIR = _R["kou_di_pair"]
R_STEP = _R["settle_step"]
R_UNIT = _R["settle_unit"]
R_CAP = _R["defender_cap"]
R_START = _R["start_skill"]
