"""``shuangkou play``, ``replay``, ``validate`` and ``human``: deals played, shown and checked."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from sim.cli.bots import add_bots, close_bots, fault_counts, fault_lines, use_bots
from sim.cli.common import check_output_file, compiling_for, write_records, write_text_atomic
from sim.cli.options import (
    DEFAULT_ANALYZE_SAMPLES,
    MAX_CLI_DEALS,
    MAX_HUMAN_DEALS,
    MAX_SECONDS,
    SWINGS_MAX,
    SWINGS_PLUGIN_HELP,
    Once,
    add_plugin,
    add_rule,
    bounded_float,
    bounded_int,
    check_deal_range,
    load_plugins,
    nonneg_int,
    rules_from_args,
    swings_n,
)
from sim.core.console import clean
from sim.core.limits import MAX_DEAL
from sim.errors import ConfigError, OutputError, RecordError, ShuangkouError

# --- play ---------------------------------------------------------------------------------
_PLAY_BLOCK = 1 << 14  # deals per block of summary rows (152 bytes each) in `play`


def cmd_play(args: argparse.Namespace) -> int:

    from sim.core.rng import check_seed
    from sim.loops import runner

    load_plugins(args.plugin)
    seed = check_seed(args.seed)
    check_deal_range(args.first_deal, args.deals)
    rules = rules_from_args(args.rule)
    use_bots(args)
    seats = runner.make_seats(args.seats)
    try:
        return _play(args, seed, rules, seats)
    finally:
        close_bots()


def _play(args: argparse.Namespace, seed: int, rules: Any, seats: list[Any]) -> int:
    import numpy as np

    from sim.core.tables import C_SCORE, C_SETTLE0, C_VOID
    from sim.loops import runner

    faults: list[dict[str, Any]] = []
    if args.record:
        with compiling_for(args):
            n = write_records(args.record, runner.iter_records(
                seed, args.first_deal, args.deals, seats, rules, args.timeout))
        if args.record != "-":
            print(f"wrote {n} record(s) to {args.record}")
        return 0
    # in blocks, keeping only sums: memory does not grow with --deals
    n_void = n_played = score_sum = 0
    tot = np.zeros(4, dtype=np.int64)
    with compiling_for(args):  # a cold cache: one notice, and the time it took before the results
        for first in range(args.first_deal, args.first_deal + args.deals, _PLAY_BLOCK):
            n = min(_PLAY_BLOCK, args.first_deal + args.deals - first)
            rows = runner.summaries(seed, first, n, seats, rules, args.timeout, faults)
            void = rows[:, C_VOID] != 0
            n_void += int(void.sum())
            n_played += int((~void).sum())
            score_sum += int(rows[~void, C_SCORE].sum())
            tot += rows[:, C_SETTLE0:C_SETTLE0 + 4].sum(axis=0)
            del rows
    if not args.quiet:
        print(f"seats: {', '.join(f'{i}={s.spec()}' for i, s in enumerate(seats))}")
        print(f"deals: {args.deals} (seed {seed}, first deal {args.first_deal}), void: "
              f"{n_void}")
        if n_played:
            print(f"mean attacker score: {score_sum / n_played:.2f}")
    mean = tot / args.deals
    print("settlement per seat (total / mean per deal): "
          + ", ".join(f"{i}: {int(t):+d} / {m:+.3f}" for i, (t, m) in enumerate(zip(tot, mean))))
    for line in fault_lines(fault_counts(faults)):
        print(line)
    return 0


# --- replay / validate --------------------------------------------------------------------
def write_viewer(path: str, source: str, records: list[dict[str, Any]],
                  rows: Any = None, title: str = "", note: str | None = None,
                  quiet: bool = False) -> None:
    """The deal viewer page (docs/viewer.md) of ``records`` (and analysis ``rows``) to
    ``path``, through ``path.partial``; never over the input file ``source``."""
    from sim.analysis import viewer

    if os.path.exists(path) and os.path.samefile(path, source):
        raise OutputError(f"--html {path!r} is the input file: name another file")
    check_output_file(path, "viewer page")
    text = viewer.page(records, rows, title=title, note=note)
    write_text_atomic(path, text, "viewer page")
    size = len(text.encode("utf-8"))
    print(f"wrote the deal viewer of {len(records)} deal(s) to {path} ({size / 1024:.0f} KB)",
          file=sys.stderr if quiet else sys.stdout)


def cmd_replay(args: argparse.Namespace) -> int:
    from sim.record import read_records

    if args.swings is not None:
        return _replay_swings(args)
    found = []
    for rec in read_records(args.file):
        if args.deal is None or rec.get("deal") == args.deal:
            found.append(rec)
            if args.deal is not None and not args.html:  # the page shows both tables of a
                break  # duplicate pair (a tournament's records hold the deal twice)
    if not found:
        raise RecordError(f"no deal {args.deal} in {args.file!r}"
                          if args.deal is not None else f"no records in {args.file!r}")
    if args.html:
        from sim.reference import validator

        for rec in found:  # a malformed or impossible record: one line, as replay says it
            problems = validator.check_structure(rec) or validator.validate_record(
                rec, check_shuffle=False)
            if problems:
                raise RecordError(f"{args.file!r}: {problems[0]} (shuangkou validate lists "
                                  f"every problem)")
        write_viewer(args.html, args.file, found,
                      title=f"Deals of {os.path.basename(args.file)}")
        return 0
    print("\n\n".join(_render_checked(r, args.file) for r in found))
    return 0


def swing_pairs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The swing deals of the results folder ``args.file``/``args.records`` (``--swings``)."""
    from sim.tournament import swings

    if args.deal is not None:
        raise ConfigError("--swings chooses the deals itself: drop --deal")
    load_plugins(args.plugin)  # a plug-in player is replayed only when named here
    return swings.pairs(args.file if hasattr(args, "file") else args.records, args.swings)


def _replay_swings(args: argparse.Namespace) -> int:
    """``replay RESULTS --swings N``: both tables of each swing deal, side by side."""
    from sim.tournament import swings

    found = swing_pairs(args)
    if args.html:  # the deal viewer: the two tables of each pair side by side
        write_viewer(args.html, args.file, [r for p in found for r in p["records"]],
                      title=f"Swing deals of {os.path.basename(os.path.abspath(args.file))}")
        return 0
    blocks = []
    for p in found:
        div = p["divergence"]
        when = "" if div is None else \
            ("  (the deals part already in the calling)" if div["phase"] == "calling" else "")
        left, right = (_render_checked(r, args.file) for r in p["records"])
        blocks.append("\n".join([
            swings.heading(p),
            f"First divergence: {swings.divergence_text(div)}{when}", "",
            swings.side_by_side(f"TABLE 1: {p['a']} in seats 0 & 2\n{left}",
                                f"TABLE 2: {p['b']} in seats 0 & 2\n{right}")]))
    print("\n\n".join(blocks))
    return 0


def _render_checked(rec: dict[str, Any], path: str) -> str:
    """``render(rec)``, or one line naming what is wrong with a malformed record: the checks
    of ``shuangkou validate`` (structure first; the full replay if rendering still fails)."""
    from sim.reference import validator
    from sim.replay import render

    # an impossible record (a deck that is not two packs, a hand, a play or a score that the
    # deck and the calls do not give) is refused, never shown: the reference engine replays it
    # (milliseconds; the shuffle itself is not checked: a record may hold a deck of its own)
    problems = validator.check_structure(rec) or validator.validate_record(rec,
                                                                           check_shuffle=False)
    if not problems:
        try:
            return render(rec)
        except ShuangkouError:
            raise
        except Exception:
            problems = []
    what = str(problems[0]) if problems else "malformed record"
    raise RecordError(f"{path!r}: {what} (shuangkou validate lists every problem)")


def cmd_validate(args: argparse.Namespace) -> int:
    from sim.record import read_records
    from sim.reference import validator

    n = bad = unfinished = 0
    for rec in read_records(args.file):
        n += 1
        problems = validator.validate_record(rec, check_shuffle=not args.no_shuffle_check)
        for p in problems:
            print(clean(p))  # values from a received record: no raw control characters
        bad += bool(problems)
        if isinstance(rec, dict) and rec.get("unfinished") is True:  # docs/record.md
            unfinished += 1
            print(clean(f"deal {rec.get('deal')}: unfinished, checked as far as it was "
                        f"played"))
    if n == 0:
        print(f"no records in {args.file!r}: nothing to check")
        return 1
    print(f"{n} record(s) checked with the reference engine: "
          + ("all valid" if not bad else f"{bad} with violations")
          + (f" ({unfinished} unfinished)" if unfinished else ""))
    return 1 if bad else 0



# --- human --------------------------------------------------------------------------------
def cmd_human(args: argparse.Namespace) -> int:
    from sim import human

    load_plugins(args.plugin)
    use_bots(args)
    try:
        return human.run(seat=args.seat, partner=args.partner, opponents=args.opponents,
                         seed=args.seed, deals=args.deals, rules=rules_from_args(args.rule),
                         delay=args.delay, timeout=args.timeout, out=args.out,
                         plain=args.plain, review=not args.no_review, samples=args.samples)
    finally:
        close_bots()


def add_parser(sub: Any) -> None:
    """The parsers of play, replay, validate and human."""
    pl = sub.add_parser("play", help="play seeded deals; print a summary or write records")
    pl.add_argument("--seed", default="0", help="master seed, 0 … 2**64-1 (default 0)")
    pl.add_argument("--deals", type=bounded_int("deals of a run", 1, MAX_CLI_DEALS), default=10,
                    help=f"number of deals (default 10; at most {MAX_CLI_DEALS:,})")
    pl.add_argument("--first-deal", type=nonneg_int, default=0,
                    help="index of the first deal (default 0): seed + deal fix a deal")
    pl.add_argument("--seats", default="random",
                    help="1, 2 (team A,team B) or 4 comma-separated strategy specs")
    pl.add_argument("--record", metavar="FILE",
                    help="write records instead of a summary (JSONL, .gz compresses, - for "
                         "stdout); FILE is replaced only when every deal is written")
    add_rule(pl)
    add_plugin(pl)
    pl.add_argument("--timeout", type=bounded_float("seconds per decision", 0, MAX_SECONDS),
                    default=None,
                    help="seconds a Python strategy or a compiled plug-in may take per "
                         "decision, enforced while it runs (0: no limit, the default)")
    pl.add_argument("--quiet", action="store_true",
                    help="print only errors and the final line")
    add_bots(pl)
    pl.set_defaults(func=cmd_play)

    rp = sub.add_parser("replay", help="show recorded deals as a person wants to read them")
    rp.add_argument("file", help="record file (JSONL, .gz), or with --swings a tournament's "
                                 "results folder")
    rp.add_argument("--deal", type=bounded_int("a deal index may be", 0, MAX_DEAL), default=None,
                    help="only this deal index (0 … 2**63-1)")
    rp.add_argument("--html", metavar="OUT.html",
                    help="write the deals as the deal viewer page (docs/viewer.md) instead of "
                         "printing them")
    rp.add_argument("--swings", type=swings_n, metavar="N",
                    help=f"FILE is a duplicate run's results folder: show the N (1 … "
                         f"{SWINGS_MAX}) deals of each matchup whose two tables differ most, "
                         f"side by side, with the first decision where they part")
    add_plugin(rp, text=SWINGS_PLUGIN_HELP)
    rp.set_defaults(func=cmd_replay)

    va = sub.add_parser("validate", help="re-check records with the reference engine")
    va.add_argument("file", help="record file (JSONL, .gz)")
    va.add_argument("--no-shuffle-check", action="store_true",
                    help="do not require the deck to be this engine's shuffle of seed+deal")
    va.set_defaults(func=cmd_validate)

    hu = sub.add_parser("human", help="play in the terminal with three bots (one deal or a "
                                      "match)")
    hu.add_argument("--seat", type=int, choices=range(4), default=0, action=Once,
                    help="your seat 0-3 (default 0); the partner sits opposite (R4)")
    hu.add_argument("--partner", default="greedy", help="your partner's strategy spec "
                    "(default greedy)")
    hu.add_argument("--opponents", default="ismcts",
                    help="the opponents' spec, or two comma-separated: the seat after you, "
                         "then the seat before you (default ismcts)")
    hu.add_argument("--seed", default=None, help="master seed (default: a random one, printed)")
    hu.add_argument("--deals", type=bounded_int("deals of a match", 1, MAX_HUMAN_DEALS),
                    default=1, help=f"deals in the match; skill values carry over (R25; "
                                    f"default 1; at most {MAX_HUMAN_DEALS:,})")
    add_rule(hu)
    add_plugin(hu)
    hu.add_argument("--delay", type=float, default=0.4,  # 0 … 60: sim.human.check_delay
                    help="seconds of pause after each bot move (default 0.4; 0 for none)")
    hu.add_argument("--timeout", type=bounded_float("seconds per decision", 0, MAX_SECONDS),
                    default=60.0,
                    help="seconds a bot may take per decision (default 60; 0: no limit)")
    hu.add_argument("--out", metavar="DIR",
                    help="folder for the records (default results/human/TIMESTAMP)")
    hu.add_argument("--plain", action="store_true",
                    help="plain lines instead of the full-screen view (the default when "
                         "output is not a terminal)")
    hu.add_argument("--no-review", action="store_true",
                    help="no review of your decisions after each deal")
    hu.add_argument("--samples", type=int, default=DEFAULT_ANALYZE_SAMPLES, metavar="N",
                    help="worlds per decision for hint and the review (default "
                         f"{DEFAULT_ANALYZE_SAMPLES}, as analyze; fewer is faster and rougher)")
    add_bots(hu)
    hu.set_defaults(func=cmd_human)

