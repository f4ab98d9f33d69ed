"""``shuangkou bench``, ``compile`` and ``strategies``."""

from __future__ import annotations

import argparse
from typing import Any

from sim.cli.common import check_output_file, write_text_atomic
from sim.cli.options import add_no_progress, add_plugin, load_plugins, upto

_BENCH = "sim.tools.bench"


# --- bench --------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    from sim.tools import bench

    if args.json:  # refuse a path that cannot be written before measuring for minutes
        check_output_file(args.json, "JSON file")
    if args.limit:
        bench.check_limit(args.limit)
    res = bench.run(deals=args.deals, repeats=args.repeats,
                    reference_deals=args.reference_deals, python_deals=args.python_deals,
                    openspiel_games=0 if args.no_openspiel else args.openspiel_games,
                    strategies=not args.no_strategies, limit=args.limit)
    if args.json:
        write_text_atomic(args.json, bench.to_json(res), "JSON file")
        print(f"figures written to {args.json}")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from sim.loops import precompile

    load_plugins(args.plugin)
    precompile.run(args.players, progress=False if args.no_progress else None)
    return 0


def cmd_strategies(args: argparse.Namespace) -> int:
    from strategies.registry import available, resolve

    load_plugins(args.plugin)
    if args.markdown:  # the built-ins in their order (as docs/strategies.md), then the rest
        from strategies.registry import builtin_classes, params_markdown

        first = [c.name for c in builtin_classes()]
        names = first + sorted(n for n in available() if n not in first)
        print(params_markdown(resolve(name) for name in names), end="")
        return 0
    for name in sorted(available()):
        cls = resolve(name)
        tier = ("compiled+python" if cls.compiled_kind is not None or cls._plugin()
                else "python")
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name:<10} [{tier}]{' (oracle: sees all hands)' if cls.oracle else ''} {doc}")
        for k, p in cls.params().items():
            print(f"    {k}={p.default!r:<8} {p.describe()}  {p.doc}")
    return 0



def add_parser(sub: Any) -> None:
    """The parsers of bench, compile and strategies."""
    be = sub.add_parser("bench", help="measure the compiled core's throughput")
    be.add_argument("--deals", type=upto(_BENCH, "MAX_DEALS", "deals per repeat"), default=200_000,
                    help="compiled random deals per repeat (default 200000)")
    be.add_argument("--repeats", type=upto(_BENCH, "MAX_REPEATS", "repeats"), default=3,
                    help="repeats; the best is reported (default 3)")
    be.add_argument("--reference-deals", type=upto(_BENCH,
                    "MAX_SIDE_DEALS", "deals or games of a side measure", 0),
                    default=200,
                    help="deals through the reference engine (default 200)")
    be.add_argument("--python-deals", type=upto(_BENCH,
                    "MAX_SIDE_DEALS", "deals or games of a side measure", 0),
                    default=300,
                    help="deals through the Python step API (default 300)")
    be.add_argument("--openspiel-games", type=upto(_BENCH,
                    "MAX_SIDE_DEALS", "deals or games of a side measure", 0),
                    default=2000,
                    help="OpenSpiel hearts games for the baseline, if installed (default 2000)")
    be.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel baseline")
    be.add_argument("--no-strategies", action="store_true",
                    help="skip the search players' decision times")
    be.add_argument("--limit", metavar="BINARY",
                    help="a native yardstick of the same random deals (e.g. a built "
                         "shuangkou_limit), run interleaved; reports the ratios to it")
    be.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    be.set_defaults(func=cmd_bench)

    co = sub.add_parser("compile", help="compile the players' kernels now (all built-ins by "
                        "default): later runs of any set of them start at once")
    co.add_argument("players", nargs="*", metavar="PLAYER",
                    help="strategy specs, e.g. expert cautious_c (default: every built-in)")
    add_plugin(co)
    add_no_progress(co, "no progress bars (they are shown on a terminal only)")
    co.set_defaults(func=cmd_compile)

    sl = sub.add_parser("strategies", help="list the available strategies and parameters")
    add_plugin(sl)
    sl.add_argument("--markdown", action="store_true",
                    help="print a Markdown table of each strategy's parameters (defaults, "
                         "types, ranges), as docs/strategies.md carries them")
    sl.set_defaults(func=cmd_strategies)

