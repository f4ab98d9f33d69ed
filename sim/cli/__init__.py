"""The ``shuangkou`` command.

Bad input (a card, a seed, a strategy, a config key, a corrupt file) ends with one line naming
the problem and what is allowed, and exit code 2; results already written stay written.

One module per group of commands, each with its ``add_parser`` beside its ``cmd_*``
functions: ``play`` (play, replay, validate, human), ``tools`` (bench, compile, strategies),
``tournament`` (tournament, report), ``analyze`` (analyze, estimate), ``ladder``, ``tune``
(tune, train), ``bots`` (``--bot`` and its options, ``bot check``); ``options`` holds the
option types, bounds and shared options, ``common`` the output files, compile notice and
signal handling every group uses.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from sim.cli import analyze, bots, ladder, play, tools, tournament, tune
from sim.cli.common import compiling_for, raise_interrupt
from sim.cli.options import plugin_args
from sim.core.console import clean, graceful_streams
from sim.errors import ShuangkouError

_COMPILING_COMMANDS = ("play", "estimate", "bench", "human", "tournament", "replay",
                       "validate", "bot", "solve")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``shuangkou play: error: …`` and exit code 2, like every
    other bad input; the usage block only with ``-h``."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


def build_parser() -> argparse.ArgumentParser:
    from sim import __version__

    p = _Parser(
        prog="shuangkou",
        description="Monte Carlo simulator and strategy tournaments for Xinjiang Shuangkou.")
    p.add_argument("--version", action="version", version=f"shuangkou {__version__}",
                   help="print the version and exit")
    p.add_argument("--debug", action="store_true",
                   help="on an error, also print the full traceback (a bot's included)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (play, tools, tournament, analyze, ladder, tune, bots):  # the order of -h
        group.add_parser(sub)
    return p


# Python's cyclic garbage collector, tuned for a command: a command creates a few hundred
# thousand long-lived objects (numba, matplotlib, pyarrow modules) and few cycles, so the
# default thresholds (700, 10, 10) ran ~430 collections that walked them all (0.3 s of CPU
# of the quick tournament's ~3 s), and the collections at interpreter exit walked them again
# (0.5 s). During a command the young generation is collected every 50,000 allocations
# (cycles are still freed), and at exit every object is frozen (``gc.freeze``) so that the
# exit collections skip it; memory is returned to the OS at exit either way.
GC_THRESHOLDS = (50_000, 20, 10)
_FREEZE_AT_EXIT: list[bool] = []


def main(argv: Sequence[str] | None = None) -> int:
    import gc

    if not _FREEZE_AT_EXIT:
        import atexit

        atexit.register(gc.freeze)  # run after the other exit handlers (registered later)
        _FREEZE_AT_EXIT.append(True)
    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        with graceful_streams():  # PYTHONIOENCODING=ascii and the like: symbols in ASCII
            return _main(argv)
    finally:
        gc.set_threshold(*thresholds)  # (main called from Python: as it was)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named after the command, like the command's other argument errors
        parser.exit(2, f"shuangkou {args.command}: error: unrecognized arguments: "
                       f"{clean(' '.join(extra))} (see shuangkou {args.command} -h)\n")
    try:
        if getattr(args, "plugin", None):
            args.plugin = plugin_args(args.plugin)
        if args.command not in _COMPILING_COMMANDS:
            return int(args.func(args) or 0)
        # `kill PID` stops like Ctrl-C (one line, exit 130), also inside compiled code
        # (sim.loops.plugins runs it on a helper thread while this one waits)
        main_thread = threading.current_thread() is threading.main_thread()
        term = args.command in ("play", "estimate", "bench") and main_thread
        previous = signal.signal(signal.SIGTERM, raise_interrupt) if term else None
        try:
            # every command that may compile says so (once) when it does; ``done``: the
            # time it took, at the end, for those that print it nowhere earlier
            with compiling_for(args, done=args.command in ("bench", "replay", "validate")):
                return int(args.func(args) or 0)
        finally:
            if term:
                signal.signal(signal.SIGTERM, previous)
    except ShuangkouError as e:
        if args.debug:
            import traceback

            traceback.print_exc()
        print(f"shuangkou {args.command}: error: {clean(e, newlines=False)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"shuangkou {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file system error not caught where it happened (disk full, …)
        if args.debug:
            import traceback

            traceback.print_exc()
        where = f" {os.fspath(e.filename)!r}" if e.filename else ""
        print(f"shuangkou {args.command}: error: cannot access{clean(where)}: "
              f"{clean(e.strerror or e)}", file=sys.stderr)
        return 2

