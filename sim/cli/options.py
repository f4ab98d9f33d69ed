"""The command line's options: argparse types with the documented bounds (docs/cli.md
"Numeric bounds"), the defaults it repeats so that ``shuangkou --help`` loads no engine, and
the values of ``--rule`` and ``--plugin``."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

from sim.core.limits import MAX_DEAL
from sim.errors import ConfigError

PLUGIN_HELP = ("import MODULE (in the working folder or on PYTHONPATH) or a file such as "
               "~/bots/mybot.py, and register its strategies (repeatable)")


def rules_from_args(pairs: Sequence[str] | None) -> Any:
    from sim.rules import Rules

    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for p in pairs or []:
        key, eq, val = p.partition("=")
        if not eq:
            raise ConfigError(f"--rule {p!r} must be name=value, e.g. max_redeals=5; names: "
                              f"{', '.join(Rules.names())}")
        key = key.strip()
        if key in given:  # a repeat would silently win: refuse it (distinct rules may repeat)
            raise ConfigError(f"--rule {key} is given twice ({given[key]!r} and {p!r}): give "
                              f"each rule once")
        given[key] = p
        try:
            values[key] = int(val)
        except ValueError:
            raise ConfigError(f"--rule {p!r}: {val!r} is not an integer") from None
    return Rules.from_dict(values)


def load_plugins(mods: Sequence[str] | None) -> None:
    from strategies.registry import load_plugins

    load_plugins(mods or [], [os.getcwd()])


def _int_at_least(text: str, lo: int) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < lo:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= {lo}")
    return v


def bounded_int(what: str, lo: int, hi: int) -> Any:
    """An argparse ``type``: an integer ``lo`` … ``hi`` (the bound documented in docs/cli.md).

    Shared by every command's numeric options: a request past ``hi`` is refused before any work
    starts, with the bound in the one-line message (exit code 2), e.g. ``argument --pairs:
    '2000000000' is more than 1,000,000,000, the most pairs a run plays (1 … 1,000,000,000)``.
    ``what`` completes "the most …". A 10,000-digit number is refused the same way, never parsed
    into a traceback.
    """
    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-").replace("_", "")
        if len(digits) > 40 and digits.isdigit():  # past every bound; int() would refuse > 4300
            if text.strip().startswith("-"):
                raise argparse.ArgumentTypeError(f"{quoted_arg(text)} must be >= {lo:,} "
                                                  f"({lo:,} … {hi:,})")
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is more than {hi:,}, the "
                                              f"most {what} ({lo:,} … {hi:,})")
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} must be >= {lo:,} "
                                              f"({lo:,} … {hi:,})")
        if v > hi:
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is more than {hi:,}, the "
                                              f"most {what} ({lo:,} … {hi:,})")
        return v
    parse.__name__ = "int"  # argparse names the type in "invalid int value" messages
    return parse


def bounded_float(what: str, lo: float, hi: float) -> Any:
    """An argparse ``type``: a finite number ``lo`` … ``hi`` (``bounded_int`` for seconds)."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is not a number") from None
        if not lo <= v <= hi:  # NaN too
            raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is not {lo:g} … {hi:,g}, "
                                              f"the range of {what}")
        return v
    parse.__name__ = "float"
    return parse


# The upper bounds of the numeric options (docs/cli.md "Numeric bounds"): far past any real
# request, and each finishes; a request past one is refused before any work starts.
MAX_CLI_DEALS = 10**12  # play, tournament --deals (a million deals a second: 12 days)
MAX_HUMAN_DEALS = 10_000  # human --deals
MAX_CLI_JOBS = 1024  # --jobs of analyze, estimate
MAX_TOURNAMENT_JOBS = 4096  # tournament --jobs, as run.jobs in a config
MAX_CHUNK_SIZE = 10_000_000  # tournament --chunk-size, as run.chunk_size in a config
MAX_SAMPLES = 4096  # analyze, human --samples: worlds per decision (sim.human.check_samples)
MAX_ESTIMATE_DEALS = 10**11  # sim.tools.estimate.MAX_DEALS (no engine import here)
MAX_SECONDS = 86_400.0  # --timeout of play and human: a day per decision
# human --delay (0 … 60) and --samples (2 … 4,096): sim.human.check_delay, check_samples


def nonneg_int(text: str) -> int:
    return _int_at_least(text, 0)


def pos_int(text: str) -> int:
    return _int_at_least(text, 1)




def upto(module: str, bound: str, what: str, lo: int = 1) -> Callable[[str], int]:
    """``bounded_int`` with the bound ``module.bound``, its one definition (bench, tune and
    train check their counts from the Python API too), imported only when the option is
    given: building the parser loads no engine."""
    def parse(text: str) -> int:
        import importlib

        return bounded_int(what, lo, getattr(importlib.import_module(module), bound))(text)
    parse.__name__ = "int"
    return parse


DEFAULT_ANALYZE_SAMPLES = 128  # sim.tools.analyze.DEFAULT_SAMPLES (no engine import here)
DEFAULT_ESTIMATE_SEATS = "greedy"  # sim.tools.estimate.DEFAULT_SEATS (tests check they agree)
DEFAULT_ESTIMATE_DEALS = 100_000  # sim.tools.estimate.DEFAULT_DEALS
SWINGS_MAX = 10  # sim.analysis.stats.SWINGS_KEPT: swing deals a run keeps per matchup


def swings_n(text: str) -> int:
    v = _int_at_least(text, 1)
    if v > SWINGS_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is more than the {SWINGS_MAX} swing deals "
                                          f"a run keeps per matchup (1 … {SWINGS_MAX})")
    return v


def check_deal_range(first: int, deals: int) -> None:
    """Deals ``first … first+deals-1`` must all be deal indices (0 … 2**63-1)."""
    if first + deals - 1 > MAX_DEAL:
        raise ConfigError(f"--first-deal {first} with --deals {deals} goes past the last deal "
                          f"index 2**63-1: first deal + deals must be <= 2**63")


class Once(argparse.Action):
    """An option that may be given once: a second ``--hand`` would silently replace the first,
    so it is refused (one line, exit code 2)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                  values: Any, option_string: str | None = None) -> None:
        seen = getattr(namespace, "_given_once", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest} is given twice (the second: "
                         f"{values!r}): give it once")
        seen.add(self.dest)
        namespace._given_once = seen
        setattr(namespace, self.dest, values)


def plugin_args(mods: Sequence[str] | None) -> list[str]:
    """``--plugin`` values: a module name as given; a file path (``~/bots/mybot.py``) made
    absolute, so parallel workers load the same file."""
    from strategies.registry import is_plugin_path

    return [os.path.abspath(os.path.expanduser(m)) if is_plugin_path(m) else m
            for m in mods or []]


# --- options several commands share, each declared once ------------------------------------
# Functions, not argparse ``parents=``: a parent's options come first in the command's list,
# which would reorder its ``-h``; these add the option where each command lists it.
SWINGS_PLUGIN_HELP = ("import MODULE and register its strategies (repeatable): --swings "
                      "replays plug-in players")
RULE_HELP = "a rules variant, e.g. max_redeals=5 (repeatable)"


def add_plugin(p: argparse.ArgumentParser, metavar: str = "MODULE",
               text: str = PLUGIN_HELP) -> None:
    """``--plugin``: modules or files of strategies to register (``plugin_args``)."""
    p.add_argument("--plugin", action="append", metavar=metavar, help=text)


def add_rule(p: argparse.ArgumentParser, text: str = RULE_HELP) -> None:
    """``--rule NAME=VALUE`` (repeatable; ``rules_from_args``)."""
    p.add_argument("--rule", action="append", metavar="NAME=VALUE", help=text)


def add_no_progress(p: argparse.ArgumentParser, text: str = "no progress bar") -> None:
    p.add_argument("--no-progress", action="store_true", help=text)


def add_no_plots(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-plots", action="store_true", help="no PNG plots")


def add_force_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force-jobs", action="store_true",
                   help="run --jobs workers even when there are more than CPUs")


def add_backend(p: argparse.ArgumentParser,
                text: str = "what runs the chunks (as tournament)") -> None:
    """``--backend``: what runs the chunks (sim.tournament.config.BACKENDS)."""
    from sim.tournament.config import BACKENDS

    p.add_argument("--backend", choices=BACKENDS, help=text)


def add_resume(p: argparse.ArgumentParser,
               text: str = "continue the checkpoint in --out") -> None:
    p.add_argument("--resume", action="store_true", help=text)


def quoted_arg(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text):,} characters)"
