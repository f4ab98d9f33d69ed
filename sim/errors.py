"""Every error the package raises on bad input: one module, all ``ValueError`` subclasses.

Messages quote the offending input with ``!r`` and name the ruling or the allowed values, so a
user can fix the input from the message alone. ``tests/test_errors.py`` scans the source: a
bare builtin exception raised anywhere else has a stated reason there (an internal guard,
control flow caught nearby, a Python protocol).
"""

from __future__ import annotations


class ShuangkouError(ValueError):
    """Base class of every input error of this package."""


class InvalidCardError(ShuangkouError):
    """A card, hand, suit or play that is not valid notation (R2) or breaks R1."""


class IllegalPlayError(ShuangkouError):
    """A choice that the rules do not allow at this moment (R6–R8, R16–R19)."""


class RulesError(ShuangkouError):
    """An unknown rules variant or a value out of range."""


class NotRulesError(RulesError, TypeError):
    """A ``rules`` argument that is not a ``sim.Rules`` (a dict, a name; also a TypeError, as
    it always was): ``sim.Rules.from_dict`` reads a mapping."""


class ConfigError(ShuangkouError):
    """A bad configuration key, value, strategy spec or command-line argument."""


class RecordError(ShuangkouError):
    """A game record that cannot be read (corrupt JSON, wrong format, missing field)."""


class OutputError(ShuangkouError):
    """A file or folder that cannot be written (a results folder, a record or JSON file)."""


class UsageError(ShuangkouError):
    """A call that cannot work in the object's present state: a deal's record before it ends,
    a seat that is not 0–3, an output buffer of the wrong shape, an environment used before
    ``reset()``, a ``sim.Batch`` whose private arrays were written to."""


class NotResetError(UsageError, AttributeError):
    """A PettingZoo environment used before its first ``reset()`` (also an AttributeError,
    so ``hasattr`` keeps working on its per-episode attributes)."""


class StrategyError(ShuangkouError):
    """A strategy raised, timed out or returned an illegal choice.

    The message names the strategy, the seat, the seed and the deal, so the failure can be
    replayed alone with ``shuangkou play --seed S --first-deal D --deals 1``.
    """


class StatsError(ShuangkouError):
    """Figures that cannot be computed from the numbers given to ``sim.analysis.stats``: a
    probability outside (0, 1), a win matrix that is not square, accumulators that do not
    merge, a serialised accumulator that does not read back."""


class WorkerError(ShuangkouError):
    """A worker process of a parallel run died (a crash, a segfault, ``os._exit``, the OOM
    killer); the chunks finished before it stay saved for ``--resume``."""


class LadderError(ShuangkouError):
    """A ladder database that cannot be used: not one of ours, a newer schema version,
    corrupt, read-only or locked, or held by another ``ladder run`` (``sim.tools.ladder``)."""


class WeightsError(ShuangkouError):
    """A learned player's weights file or a trainer's checkpoint that cannot be used: missing,
    corrupt or truncated, of another format or version, or with arrays of the wrong shape
    (``strategies.learned``, ``sim.learn.train``)."""


class SolveError(ShuangkouError):
    """A position the double-dummy solver cannot settle: not in trick play, or past its node
    cap (``sim.solve``)."""
