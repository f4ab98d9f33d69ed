"""What a strategy is: a class with a name, typed parameters and one ``choose`` method.

A strategy decides everything for its seat: at a calling chance show a pair or pass (R6–R7),
after an override which two cards to give back (R8), and every play of every trick
(R16–R19). It sees an :class:`sim.observation.Observation` — what its seat may know (R9) — and
the list of legal choices in canonical order, and returns one element of that list.

Strategies that also have a numba kernel (``compiled_kind`` set for the built-ins, a
``kernel`` attribute for a user's compiled plug-in, ``sim.loops.plugins``) can run inside the
compiled deal loop; the rest run through the Python step API, and one deal may mix both tiers.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

from sim.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class param:
    """A typed strategy parameter with a default, an optional range or set, and a doc line."""

    default: Any
    type: type = float
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    doc: str = ""

    def describe(self) -> str:
        t = self.type.__name__
        if self.choices:
            return f"{t}, one of {', '.join(self.choices)}"
        if self.lo is not None and self.hi is not None:
            return f"{t} in [{self.lo}, {self.hi}]"
        if self.lo is not None:
            return f"{t} >= {self.lo}"
        return t

    def coerce(self, owner: str, name: str, value: Any) -> Any:
        """``value`` converted to this parameter's type, or a ConfigError saying what is allowed."""
        where = f"parameter {name}={value!r} of strategy {owner!r}"
        t = self.type
        try:
            if t is bool:
                if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                    value = value.lower() in ("true", "1")
                elif not isinstance(value, bool):
                    raise TypeError
            elif t is int:
                if isinstance(value, bool):
                    raise TypeError
                if isinstance(value, float):
                    if not value.is_integer():
                        raise TypeError
                value = int(value)
            elif t is float:
                if isinstance(value, bool):
                    raise TypeError
                value = float(value)
            elif t is str:
                value = str(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where} must be {self.describe()}") from None
        if t is float and not math.isfinite(value) and not (
                value == math.inf and self.hi == math.inf
                or value == -math.inf and self.lo == -math.inf):
            # NaN passes every range check; infinity only where the range names it
            what = self.describe() if self.lo is not None or self.hi is not None \
                else "a finite float"
            raise ConfigError(f"{where} must be {what}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"{where} must be one of {', '.join(self.choices)}")
        if self.lo is not None and value < self.lo or self.hi is not None and value > self.hi:
            raise ConfigError(f"{where} must be {self.describe()}")
        return value


class Strategy:
    """Base class of every strategy. Subclasses set ``name`` and declare ``param`` attributes.

    Override :meth:`choose` (and :meth:`begin_deal` to reset per-deal state). The constructor
    takes the parameters by keyword and validates them.
    """

    name: ClassVar[str] = "strategy"
    #: index of the numba kernel in ``strategies.compiled`` or None (Python tier only)
    compiled_kind: ClassVar[int | None] = None
    #: a compiled plug-in's numba kernel ``(st, u, rules, seat, params, buf) -> code``
    #: (docs/strategies.md, "Compiled bots"), or None
    kernel: ClassVar[Any] = None
    #: True for analysis players that see every hand (records and tables mark them)
    oracle: ClassVar[bool] = False
    #: the ``module:Class`` this strategy was made from, kept by ``spec()`` when its name does
    #: not resolve in another process (set by ``strategies.registry.make``), else None
    spec_target: str | None = None

    def __init__(self, **kwargs: Any) -> None:
        params = self.params()
        for key in kwargs:
            if key not in params:
                allowed = ", ".join(params) or "none"
                raise ConfigError(
                    f"unknown parameter {key!r} for strategy {self.name!r}: allowed are {allowed}"
                )
        for key, p in params.items():
            value = kwargs.get(key, p.default)
            setattr(self, key, p.coerce(self.name, key, value) if key in kwargs else value)
        self.seat = -1

    @classmethod
    def params(cls) -> dict[str, param]:
        out: dict[str, param] = {}
        for klass in reversed(cls.__mro__):
            for key, value in vars(klass).items():
                if isinstance(value, param):
                    out[key] = value
        return out

    def param_values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.params()}

    def spec(self) -> str:
        """Canonical spec string: the name, then the parameters that differ from defaults.

        A strategy made from ``module:Class`` keeps that form, so that any process (a worker,
        a later ``report``) can make it again without a plug-in being registered.
        """
        changed = [f"{k}={format_value(v)}" for k, v in self.param_values().items()
                   if v != self.params()[k].default]
        target = self.spec_target or self.name
        return target + (f"({', '.join(changed)})" if changed else "")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"

    # --- the decisions ----------------------------------------------------------------
    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        """Called before each deal with this strategy's seat and the deal's identity."""
        self.seat = seat
        if self._plugin():  # a compiled plug-in asked from Python keeps its own streams
            # (the engine, numba: a Python strategy and the registry import this module light)
            from strategies.plugin import begin_kernel_deal

            begin_kernel_deal(self, seat, seed, deal)

    def choose(self, obs: Any, legal: list) -> Any:  # pragma: no cover - abstract
        """Return one element of ``legal`` (canonical order, docs/engine.md).

        A compiled plug-in (``kernel`` set) runs its kernel on the observation's masked state.
        """
        if self._plugin():
            from strategies.plugin import choose_with_kernel  # (the engine: see begin_deal)

            return choose_with_kernel(self, obs, legal)
        raise NotImplementedError

    def compiled_params(self) -> list[float]:
        """Parameters for the compiled kernel, as floats (compiled strategies only).

        For a compiled plug-in: its ``param`` values in declaration order (bools 0/1, a
        string with ``choices`` its index); each reaches the kernel as ``params[i]``.
        """
        if self._plugin():
            from strategies.plugin import compiled_params  # (the engine: see begin_deal)

            return compiled_params(self)
        return []

    @classmethod
    def _plugin(cls) -> bool:
        """Whether this class is a compiled plug-in (has a ``kernel``)."""
        for klass in cls.__mro__:
            if "kernel" in vars(klass):
                return vars(klass)["kernel"] is not None
        return False

    def runs_compiled(self) -> bool:
        """Whether the deal loop may call this strategy's kernel instead of ``choose``.

        True when the class has a kernel (``compiled_kind`` or a plug-in's ``kernel``) and
        ``choose`` is still the one of the class that declared it: a subclass that overrides
        ``choose`` runs in Python.
        """
        if self.compiled_kind is None and not self._plugin():
            return False
        for klass in type(self).__mro__:
            if "compiled_kind" in vars(klass) or vars(klass).get("kernel") is not None:
                return type(self).choose is klass.choose
        return False


def format_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)
