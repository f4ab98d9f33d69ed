"""``--bot NAME=COMMAND`` and its options (``play``, ``tournament``, ``ladder run``, ``human``),
and ``shuangkou bot check -- COMMAND`` (docs/bots.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from sim.bots.spec import (
    FAULT_KINDS,
    ON_FAULT,
    SANDBOX,
    BotSpec,
    apply_settings,
    parse_bots,
    parse_clock,
)
from sim.cli.options import bounded_int
from sim.core.console import clean
from sim.errors import ConfigError

# the runner's modules (sim.bots.seat: the strategies, numpy) load when a command seats a bot,
# not for `shuangkou --help` (tests/test_resources.py keeps the light commands light)


def add_bots(p: argparse.ArgumentParser) -> None:
    """The options that seat bots in other processes (docs/bots.md)."""
    g = p.add_argument_group("bots in other processes (docs/bots.md)")
    g.add_argument("--bot", action="append", default=[], metavar="NAME=COMMAND",
                   help="a bot usable as player NAME, run as COMMAND (split like a shell "
                        "line, no shell); repeatable")
    g.add_argument("--bot-clock", action="append", default=[],
                   metavar="NAME=DECISION_MS[,BANK_MS]", help="one bot's time control")
    g.add_argument("--decision-ms", type=bounded_int("decision_ms", 1, 3_600_000),
                   metavar="MS", help="every bot's time per decision (default 1000)")
    g.add_argument("--bank-ms", type=bounded_int("bank_ms", 0, 86_400_000), metavar="MS",
                   help="every bot's extra time per deal (default 10000)")
    g.add_argument("--on-fault", choices=ON_FAULT,
                   help="a faulting bot's deal: forfeit (default), fallback or stop")
    g.add_argument("--fallback", metavar="SPEC",
                   help="the built-in that plays on for a faulting bot (default greedy)")
    g.add_argument("--max-restarts", type=bounded_int("max_restarts", 0, 1000), metavar="N",
                   help="restarts of a crashed bot before its deals are forfeits (default 3)")
    g.add_argument("--sandbox", choices=SANDBOX,
                   help="bubblewrap: auto (where it works, default), require, off")
    g.add_argument("--bot-network", action="store_const", const=True, dest="bot_network",
                   help="let bots reach the network from the sandbox (an LLM seat)")
    g.add_argument("--bot-logs", metavar="DIR", help="keep each bot process's standard error "
                                                     "here (1 MiB each at most)")
    g.add_argument("--transcript", metavar="DIR", help="write the messages exchanged with "
                                                       "each bot process here")


def builtin_names() -> list[str]:
    from strategies.registry import builtin_classes

    return [c.name for c in builtin_classes()]


def bot_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The command line's settings for every bot (those given)."""
    out: dict[str, Any] = {}
    for key, attr in (("decision_ms", "decision_ms"), ("bank_ms", "bank_ms"),
                      ("on_fault", "on_fault"), ("fallback", "fallback"),
                      ("max_restarts", "max_restarts"), ("sandbox", "sandbox"),
                      ("network", "bot_network"),
                      ("logs", "bot_logs"), ("transcript", "transcript")):
        v = getattr(args, attr, None)
        if v is not None:
            out[key] = v
    return out


def use_bots(args: argparse.Namespace, config: Mapping[str, Any] | None = None
             ) -> list[BotSpec]:
    """The bots of ``--bot``, with the settings of ``config`` (a tournament's ``[bots]``:
    common keys, and ``NAME`` tables per bot), then of the command line (``--bot-clock`` per
    bot last), checked and registered as players. Prints the sandbox layer in use."""
    bots = parse_bots(getattr(args, "bot", None), builtin_names())
    if not bots:
        if getattr(args, "bot_clock", None):
            raise ConfigError("--bot-clock names a bot, but no --bot NAME=COMMAND is given")
        return []
    config = dict(config or {})
    common = {k: v for k, v in config.items() if not isinstance(v, dict)}
    per = {k: v for k, v in config.items() if isinstance(v, dict)}
    names = {b.name for b in bots}
    clocks: dict[str, dict[str, int]] = {}
    for text in getattr(args, "bot_clock", None) or ():
        name, values = parse_clock(text)
        if name not in names:
            raise ConfigError(f"--bot-clock {text!r}: no --bot named {name!r} (bots: "
                              f"{', '.join(sorted(names))})")
        clocks[name] = values
    flags = bot_settings(args)
    out = []
    for b in bots:
        b = apply_settings(b, common, "[bots]")
        b = apply_settings(b, per.get(b.name, {}), f"[bots.{b.name}]")
        b = apply_settings(b, flags, "the command line")
        b = apply_settings(b, clocks.get(b.name, {}), f"--bot-clock {b.name}")
        out.append(b)
    from sim.bots import sandbox
    from sim.bots.seat import register_bots

    modes = {b.sandbox for b in out}
    for m in sorted(modes):
        sandbox.layer(m)  # --sandbox require without bubblewrap: the error, before anything
    register_bots(out)
    print(f"bots: {', '.join(b.name for b in out)}; "
          f"{sandbox.describe(out[0].sandbox)}", file=sys.stderr)
    return out


def close_bots() -> None:
    """Quit every bot process this command started (none if it seated no bot)."""
    seat = sys.modules.get("sim.bots.seat")
    if seat is not None:
        seat.close_all()


def register(texts: list[str] | None) -> None:
    """Make the ``--bot`` names players with default settings (a config that names them is
    checked before its ``[bots]`` settings apply; ``use_bots`` registers them again)."""
    bots = parse_bots(texts, builtin_names())
    if bots:
        from sim.bots.seat import register_bots

        register_bots(bots)


def fault_counts(faults: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """A run's fault records (``sim.loops.runner.Asker.faults``) as counts per bot: by kind
    (a bot out of restarts is not counted again) and the deals they cost (``forfeits``,
    ``fallbacks``), as summary.json's ``"faults"`` and the ladder keep them."""
    out: dict[str, dict[str, int]] = {}
    for f in faults:
        c = out.setdefault(f["bot"], {})
        for key in ([f["kind"]] if not f.get("again") else []) + [f["scored"] + "s"]:
            c[key] = c.get(key, 0) + 1
    return out


def fault_lines(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Per bot (``fault_counts``, summary.json's ``"faults"``): its faults by kind and the
    deals they cost, one line each for the terminal."""
    lines = []
    for name, c in sorted(counts.items()):
        kinds = ", ".join(f"{c[k]} {k}" for k in FAULT_KINDS if c.get(k))
        scored = ", ".join(f"{c[k]} deal(s) {w}" for k, w in (("forfeits", "forfeited"),
                                                              ("fallbacks", "played on by "
                                                               "the fallback")) if c.get(k))
        lines.append(clean(f"faults of bot {name}: {kinds or 'none counted'}"
                           + (f"; {scored}" if scored else "")))
    return lines


# --- shuangkou bot check ---------------------------------------------------------------------
def cmd_bot_check(args: argparse.Namespace) -> int:
    from sim.bots.check import check

    command = list(args.command_line)
    if command and command[0] == "--":
        command = command[1:]
    ok = True
    for line, passed in check(command, decision_ms=args.decision_ms or 1000,
                              deals=args.deals, sandbox_mode=args.sandbox or "auto"):
        print(("ok   " if passed else "FAIL ") + line, flush=True)
        ok = ok and passed
    return 0 if ok else 1


def add_parser(sub: Any) -> None:
    bp = sub.add_parser("bot", help="bots in other processes: check one (docs/bots.md)")
    bsub = bp.add_subparsers(dest="bot_command", required=True, metavar="SUBCOMMAND")
    ck = bsub.add_parser("check", help="check that a bot speaks shuangkou-bot/1 correctly: "
                                       "one line per item, exit 0 only when all pass")
    ck.add_argument("--deals", type=bounded_int("deals of a check", 1, 1000), default=3,
                    help="deals it plays (default 3)")
    ck.add_argument("--decision-ms", type=bounded_int("decision_ms", 1, 3_600_000),
                    metavar="MS", help="its time per decision (default 1000)")
    ck.add_argument("--sandbox", choices=SANDBOX, help="as for --bot (default auto)")
    ck.add_argument("command_line", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                    help="the bot's command, after --")
    ck.set_defaults(func=cmd_bot_check)
