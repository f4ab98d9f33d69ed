"""``shuangkou analyze`` (recorded decisions valued), ``solve`` (a recorded position solved
exactly) and ``estimate`` (what a hand is worth)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from sim.cli.common import check_output_file, compiling_for, write_records
from sim.cli.options import (
    DEFAULT_ANALYZE_SAMPLES,
    DEFAULT_ESTIMATE_DEALS,
    DEFAULT_ESTIMATE_SEATS,
    MAX_CLI_JOBS,
    MAX_SAMPLES,
    SWINGS_MAX,
    SWINGS_PLUGIN_HELP,
    Once,
    add_plugin,
    add_rule,
    bounded_int,
    load_plugins,
    pos_int,
    rules_from_args,
    swings_n,
)
from sim.cli.play import swing_pairs, write_viewer
from sim.core.console import clean
from sim.core.limits import MAX_DEAL
from sim.errors import ConfigError, OutputError, RecordError


# --- analyze ------------------------------------------------------------------------------
def cmd_analyze(args: argparse.Namespace) -> int:
    from sim.core.rng import check_seed
    from sim.reference import validator
    from sim.tools import analyze

    settings = analyze.Settings(samples=args.samples, seed=check_seed(args.seed),
                                policy=args.policy,
                                exact_nodes=analyze.EXACT_NODES if args.exact_nodes is None
                                else args.exact_nodes)
    analyze.continuation(settings.policy)  # a bad --policy fails before any work
    if args.json and args.json != "-" and os.path.exists(args.json) and \
            os.path.samefile(args.json, args.records):
        raise OutputError(f"--json {args.json!r} is the input file: analyze never changes its "
                          f"input; name another file")
    if args.swings is not None:  # both tables of each swing deal of a results folder
        records = [r for p in swing_pairs(args) for r in p["records"]]
        for r in records:
            analyze.check_record(r, repr(args.records),
                                 lambda r: validator.validate_record(r, check_shuffle=True))
    else:
        records = analyze.select_records(
            args.records, args.deal, lambda r: validator.validate_record(r, check_shuffle=True))
    tasks = analyze.tasks_of(records, args.seat)
    if not tasks:  # every chosen deal void (R11) or stopped before any decision of the seats
        raise RecordError(f"no decision to analyze in the chosen deal(s) of {args.records!r}: "
                          f"void deals (R11) have none")
    if args.html:  # refuse the input file and an unwritable path before the analysis
        if os.path.exists(args.html) and os.path.samefile(args.html, args.records):
            raise OutputError(f"--html {args.html!r} is the input file: analyze never changes "
                              f"its input; name another file")
        check_output_file(args.html, "viewer page")
    progress = None
    if sys.stderr.isatty():  # a person waiting: say how far it is (at most 4 times a second)
        import time

        last = [0.0]

        def progress(done: int, total: int) -> None:
            if done == total or time.monotonic() - last[0] > 0.25:
                last[0] = time.monotonic()
                end = "\n" if done == total else ""
                print(f"\ranalyzing: {done}/{total} decisions", end=end, file=sys.stderr,
                      flush=True)
    rows = analyze.analyze_tasks(tasks, settings, args.jobs, progress)
    if args.html:
        write_viewer(args.html, args.records, records, rows,
                      title=f"Analysis of {os.path.basename(args.records)}",
                      note=f"continuation {settings.policy}, {settings.samples} worlds per "
                           f"decision, analysis seed {settings.seed}; values and losses in "
                           f"settlement points per player (docs/analysis.md)",
                      quiet=args.json == "-")
    if args.json:
        n = write_records(args.json, rows)
        if args.json != "-":
            print(f"wrote {n} decision row(s) to {args.json}")
        if args.json == "-":
            return 0
    by_rec: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_rec.setdefault(r["record"], []).append(r)
    for i, rec in enumerate(records):
        if i in by_rec:
            # a received record's seat names: escaped, as replay shows them
            print(clean(analyze.render(rec, by_rec[i], settings)))
            print()
    if len(by_rec) > 1:
        per_deal = analyze.summarize(rows, "record")
        for s in per_deal:  # the table's line-up, seats 0 & 2 first (duplicate tables differ)
            s["players"] = [analyze.lineup(records[s["record"]]["seats"])]
        print("Per deal (each table of a duplicate pair on its own line; players of seats "
              "0 & 2 vs 1 & 3):")
        print(clean(analyze.summary_table(per_deal, "record")))
        per_seat = analyze.summarize(rows, "seat")
        print("Per seat, all deals:")
        print(clean(analyze.summary_table(per_seat, "seat")))
        if any(len(s["players"]) > 1 for s in per_seat):  # a seat held different players
            print("Per player, all deals:")
            print(clean(analyze.summary_table(analyze.summarize(rows, "player"), "player")))
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    import json

    from sim.reference import validator
    from sim.solve import DEFAULT_NODES
    from sim.tools import solve

    res = solve.solve_record(args.records, args.deal, args.trick, args.play,
                             args.max_nodes or DEFAULT_NODES,
                             lambda r: validator.validate_record(r, check_shuffle=True))
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
    else:
        print(clean(solve.render(res)))
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    import json

    from sim.core.rng import check_seed
    from sim.tools.estimate import check_deals, estimate, parse_hand

    if args.json and args.quiet:
        raise ConfigError("--json and --quiet contradict each other: give one (--json prints "
                          "every figure, --quiet the headline line only)")
    load_plugins(args.plugin)
    try:
        check_deals(args.deals)
    except ConfigError as e:  # named as the option is
        raise ConfigError(f"--{e}") from None
    seed, rules = check_seed(args.seed), rules_from_args(args.rule)
    parse_hand(args.hand)  # bad input: its one line, before any compile notice
    with compiling_for(args):  # a cold cache: one notice, and the time it took before the results
        est = estimate(args.hand, seat=args.seat, deals=args.deals, seats=args.seats,
                       seed=seed, rules=rules, jobs=args.jobs, compare_calls=args.compare_calls)
    if args.json:
        print(json.dumps(est.to_dict(), indent=1, ensure_ascii=False))
    elif args.quiet:  # the headline figure only
        print(est.headline())
    else:
        print(est.text())
    return 0


def add_parser(sub: Any) -> None:
    """The parsers of analyze, solve and estimate."""
    an = sub.add_parser("analyze", help="value every legal choice of recorded decisions: "
                                         "losses, marks, summaries (docs/analysis.md)")
    an.add_argument("records", help="record file (JSONL, .gz): play --record, a tournament's "
                                    "records.jsonl; with --swings its results folder")
    an.add_argument("--swings", type=swings_n, metavar="N",
                    help=f"RECORDS is a duplicate run's results folder: analyze both tables "
                         f"of the N (1 … {SWINGS_MAX}) largest swing deals of each matchup, "
                         f"replayed exactly")
    add_plugin(an, text=SWINGS_PLUGIN_HELP)
    an.add_argument("--deal", type=bounded_int("a deal index may be", 0, MAX_DEAL), action="append",
                    help="only this deal index (repeatable; default all)")
    an.add_argument("--seat", type=int, choices=range(4), action="append",
                    help="only this seat's decisions (repeatable; default all four)")
    an.add_argument("--json", metavar="OUT.jsonl",
                    help="also write one JSON row per decision (- : only the rows, to stdout)")
    an.add_argument("--html", metavar="OUT.html",
                    help="also write the deal viewer page with the analysis beside each "
                         "decision (docs/viewer.md)")
    an.add_argument("--samples", type=bounded_int("worlds per decision", 2, MAX_SAMPLES),
                    default=DEFAULT_ANALYZE_SAMPLES,
                    help=f"worlds per decision (default {DEFAULT_ANALYZE_SAMPLES}; the loss "
                         f"re-check uses 4x as many)")
    an.add_argument("--jobs", type=bounded_int("worker processes", 1, MAX_CLI_JOBS), default=1,
                    help=f"worker processes (default 1; at most {MAX_CLI_JOBS:,})")
    an.add_argument("--seed", default="0", help="analysis seed (default 0)")
    an.add_argument("--policy", default="expert",
                    help="continuation policy: expert (its egreedy rollouts, the default), "
                         "greedy or random")
    an.add_argument("--exact-nodes", type=bounded_int("nodes", 0, 10**12), metavar="N",
                    help="node cap of the double-dummy solver per play decision: the true "
                         "loss of the last tricks' decisions is exact where it settles them "
                         "(default 2,000,000; 0: rollouts only)")
    an.set_defaults(func=cmd_analyze)

    so = sub.add_parser(
        "solve", help="every legal play at a position of a recorded deal with its exact "
                      "value (all hands known, perfect play by all four)",
        description="Solves the position at the start of trick T (numbered from 1, as replay "
                    "numbers them) of deal D of a record file, or after the first N plays of "
                    "that trick, with the double-dummy solver: every legal play of the seat to "
                    "act with the attackers' final score (R22-R23) and the seat's settlement "
                    "(R24) when all four play perfectly, seeing every card. A file with two "
                    "records of the deal (a duplicate run) solves the first.")
    so.add_argument("records", help="record file (JSONL, .gz): play --record, a tournament's "
                                    "records.jsonl")
    so.add_argument("--deal", type=bounded_int("a deal index may be", 0, MAX_DEAL),
                    required=True, action=Once, help="the deal index")
    so.add_argument("--trick", type=bounded_int("tricks", 1, 99), required=True,
                    action=Once, help="the trick, from 1 (as replay numbers them)")
    so.add_argument("--play", type=bounded_int("plays before the position", 0, 3), default=0,
                    action=Once, help="solve after the first N plays of the trick (0-3; "
                                      "default 0: its lead)")
    so.add_argument("--max-nodes", type=bounded_int("nodes", 1, 10**12), action=Once,
                    help="give up past this many nodes (default: the solver's own cap, "
                         "sim.solve.DEFAULT_NODES)")
    so.add_argument("--json", action="store_true", help="print the solution as JSON")
    so.set_defaults(func=cmd_solve)

    es = sub.add_parser(
        "estimate", help="how good is this hand: fix cards in one seat, compare with an "
                         "average hand on the same deals",
        description="Plays DEALS deals with the given cards in the seat's hand (at least those "
                    "cards, dealt in random rounds) and the same deal numbers with nothing "
                    "fixed (the average hand for that seat), and says what the hand is worth "
                    "per deal over the average hand, with a paired 95% interval, and the "
                    "absolute figures of both. Players: greedy in every seat unless --seats "
                    "says otherwise (100,000 paired deals in seconds; random seats: "
                    "--seats random).")
    es.add_argument("--hand", required=True, action=Once,
                    help='fixed cards, e.g. "Kh Kh 5h 5h BJ" (once)')
    es.add_argument("--seat", type=int, choices=range(4), default=0, action=Once,
                    help="seat 0-3 (default 0)")
    es.add_argument("--deals", type=pos_int, default=DEFAULT_ESTIMATE_DEALS,
                    help=f"number of deals, each played with the hand and without "
                         f"(default {DEFAULT_ESTIMATE_DEALS})")
    es.add_argument("--seats", default=DEFAULT_ESTIMATE_SEATS,
                    help=f"the players: 1, 2 (team A,team B) or 4 comma-separated strategy "
                         f"specs (default {DEFAULT_ESTIMATE_SEATS} in every seat; "
                         f"--seats random for random seats)")
    es.add_argument("--compare-calls", action="store_true",
                    help="also play the hand's deals once per calling line: each pair of "
                         "the hand shown at its first legal chance, or never show (paired; "
                         "built-in players)")
    es.add_argument("--seed", default="0", help="master seed (default 0)")
    add_rule(es, "a rules variant, e.g. kou_di_pair=6 (repeatable)")
    es.add_argument("--jobs", type=bounded_int("threads", 1, MAX_CLI_JOBS), default=1,
                    help=f"threads (default 1; at most {MAX_CLI_JOBS:,})")
    es.add_argument("--json", action="store_true", help="print the figures as JSON")
    es.add_argument("--quiet", action="store_true",
                    help="print only errors and the headline line (what the hand is worth "
                         "over an average hand)")
    add_plugin(es)
    es.set_defaults(func=cmd_estimate)

