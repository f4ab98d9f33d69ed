"""``shuangkou ladder``: a rating list kept in one database (docs/ladder.md)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from sim.cli.bots import add_bots, close_bots, fault_lines, use_bots
from sim.cli.common import check_output_file, raise_interrupt, write_text_atomic
from sim.cli.options import (
    add_backend,
    add_force_jobs,
    add_no_progress,
    add_plugin,
    add_rule,
    bounded_int,
    load_plugins,
    quoted_arg,
    rules_from_args,
)
from sim.core.console import clean
from sim.errors import ConfigError, OutputError


def _ladder_open(args: argparse.Namespace, create: bool = False, write: bool = True,
                 seed: int | None = None, rules: dict[str, int] | None = None) -> Any:
    from sim.tools.ladder import Ladder

    return Ladder.open(args.db, create=create, seed=seed, rules=rules, write=write)




def _ladder_anchor(lad: Any, text: str | None) -> tuple[str | None, float]:
    """``--anchor PLAYER[=ELO]`` (``mean[=ELO]``: the mean of the rated players): the player's
    spec as stored and its Elo; without the option ``random`` at 0 when it is on the ladder,
    else the mean at 0."""
    from sim.tools.ladder import DEFAULT_ANCHOR, MAX_ANCHOR_ELO

    if text is None:
        names = [p.spec for p in lad.players()]
        return (DEFAULT_ANCHOR if DEFAULT_ANCHOR in names else None), 0.0
    spec, elo = text.strip(), 0.0
    head, eq, tail = spec.rpartition("=")
    if eq and head.count("(") == head.count(")"):  # PLAYER=ELO (a spec's own = is inside ())
        try:
            elo = float(tail)
        except ValueError:
            raise ConfigError(f"--anchor {quoted_arg(text)}: {quoted_arg(tail)} is not a "
                              f"number: give PLAYER or PLAYER=ELO, e.g. random=0") from None
        if not abs(elo) <= MAX_ANCHOR_ELO:
            raise ConfigError(f"--anchor {quoted_arg(text)}: the Elo must be within "
                              f"-{MAX_ANCHOR_ELO:,} … {MAX_ANCHOR_ELO:,}")
        spec = head.strip()
    if spec == "mean":
        return None, elo
    try:
        held = lad.player(spec)
    except ConfigError as e:
        raise ConfigError(f"--anchor {quoted_arg(text)}: {e} (or mean)") from None
    if held.team:
        raise ConfigError(f"--anchor {quoted_arg(text)}: {held.spec!r} is a team; the anchor "
                          f"is a player (or mean)")
    return held.spec, elo


def _ladder_creation(args: argparse.Namespace) -> tuple[int | None, dict[str, int] | None]:
    """``--seed`` and ``--rule`` of a command that may create the ladder: checked against an
    existing ladder's (they are fixed when it is made)."""
    from sim.core.rng import check_seed
    from sim.tools.ladder import Ladder

    seed = check_seed(args.seed) if args.seed is not None else None
    rules = rules_from_args(args.rule).to_dict() if args.rule else None
    if os.path.lexists(args.db) and (seed is not None or rules is not None):
        with Ladder.open(args.db, write=False) as lad:
            if seed is not None and seed != lad.seed:
                raise ConfigError(f"--seed {seed}: ladder {args.db!r} was made with seed "
                                  f"{lad.seed}, fixed at its creation (use another --db)")
            if rules is not None and rules != lad.rules:
                raise ConfigError(f"--rule: ladder {args.db!r} was made with other rules "
                                  f"({lad.rules}), fixed at its creation (use another --db)")
    return seed, rules


def cmd_ladder_add(args: argparse.Namespace) -> int:
    load_plugins(args.plugin)
    bots = use_bots(args)  # a bot is added by its name; its command is never stored
    seed, rules = _ladder_creation(args)
    plugin = args.plugin[-1] if args.plugin and len(args.plugin) == 1 else None
    if args.plugin and len(args.plugin) > 1:
        plugin = os.pathsep.join(args.plugin)
    with _ladder_open(args, create=True, seed=seed, rules=rules) as lad:
        for spec, what in lad.add(args.specs, plugin):
            print(f"{clean(spec)}: {what}")
        for w in lad.note_bots({b.name: b.program for b in bots if b.name in args.specs}):
            print(f"shuangkou ladder add: warning: {clean(w)}", file=sys.stderr)
    return 0


def cmd_ladder_remove(args: argparse.Namespace) -> int:
    with _ladder_open(args) as lad:
        spec = lad.remove(args.spec)
    print(f"{clean(spec)}: removed (not scheduled or rated; its pairs stay in the database, "
          f"`ladder add` brings it back)")
    return 0


def _ladder_matchup(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    from strategies.registry import split_args

    parts = [p.strip() for p in split_args(text, text)]
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"--matchup {text!r} must be two players, A,B (e.g. greedy,random)")
    return parts[0], parts[1]


def cmd_ladder_run(args: argparse.Namespace) -> int:
    from sim.tools import ladder

    if args.scheduler and args.backend not in (None, "dask"):
        raise ConfigError("--scheduler needs --backend dask")
    backend = args.backend or ("dask" if args.scheduler else "auto")
    from sim.loops.runner import check_timeout

    timeout = check_timeout(args.timeout) or 0.0  # a negative or NaN limit: one line
    load_plugins(args.plugin)
    bots = use_bots(args)
    matchup = _ladder_matchup(args.matchup)
    teams = _ladder_teams(args.teams)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_interrupt) if main_thread else None
    try:
        with _ladder_open(args) as lad:
            got = ladder.run(lad, args.pairs, chunk=args.chunk, jobs=args.jobs,
                             backend=backend, scheduler=args.scheduler or "", matchup=matchup,
                             timeout=timeout,
                             progress=False if args.no_progress or args.quiet else None,
                             plugins=tuple(args.plugin or ()), force_jobs=args.force_jobs,
                             bots=bots, partners=args.partners, teams=teams)
            if not args.quiet:
                _ladder_show_text(lad, partners=args.partners)
    finally:
        close_bots()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    for line in fault_lines(got["faults"]):
        print(line)
    print(f"played {got['pairs']:,} pairs in {got['chunks']} chunks ({got['seconds']:.1f} s, "
          f"{got['backend']}); committed to {args.db}")
    return 0


def _ladder_teams(text: str | None) -> list[str] | None:
    """``--teams A+B,C+D``: the teams as given (checked against the ladder by the run)."""
    if text is None:
        return None
    from strategies.registry import split_specs

    got = split_specs(text)
    if not got:
        raise ConfigError(f"--teams {quoted_arg(text)} names no team: give A+B,C+D")
    return got


def _ladder_show_text(lad: Any, partners: bool = False) -> None:
    from sim.analysis import ladder as model

    anchor, elo = _ladder_anchor(lad, None)
    data = lad.data()
    fit = model.fit(data, anchor=anchor, anchor_elo=elo)
    print(clean(_plain_text(model, data, fit)))
    if partners:
        print(clean(model.partners_text(model.partners(data, fit))))


def _plain_text(model: Any, data: Any, fit: Any) -> str:
    """The ranking of the plain players (a ladder's teams: one line naming ``--partners``)."""
    shown, sfit = model.plain(data, fit)
    text = model.show_text(shown, sfit)
    if data.teams:
        text += (f"(and {len(data.teams)} team entrant(s) with {model.team_pairs(data):,} "
                 f"pairs, in the joint fit: `ladder show --partners`)\n")
    return text


def cmd_ladder_import(args: argparse.Namespace) -> int:
    from sim.tools.ladder import Ladder, import_folder
    from sim.tournament.results import read_config

    if not os.path.lexists(args.db):  # a new ladder takes the first folder's seed and rules
        cfg = read_config(args.results[0])
        Ladder.open(args.db, create=True, seed=cfg.seed, rules=dict(cfg.rules)).close()
    with _ladder_open(args) as lad:
        for folder in args.results:
            got = import_folder(lad, folder)
            skipped = f", {got['skipped']:,} pairs already there skipped" \
                if got["skipped"] else ""
            print(f"{clean(folder)}: {got['pairs']:,} pairs in {got['chunks']} new chunks "
                  f"imported{skipped}")
    return 0


def _ladder_output(args: argparse.Namespace, path: str, what: str) -> None:
    """An output file of ``show --html`` or ``export``: writable, and not the ladder's own
    database or one of its side files (writing there would destroy every pair)."""
    check_output_file(path, what)
    from sim.tools.ladder import LOCK_SUFFIX

    out = os.path.realpath(path)
    for suffix in ("", "-wal", "-shm", "-journal", LOCK_SUFFIX):
        own = args.db + suffix
        same = os.path.realpath(own) == out
        if not same and os.path.exists(own) and os.path.exists(path):
            try:
                same = os.path.samefile(own, path)
            except OSError:
                pass
        if same:
            raise OutputError(f"cannot write {what} {path!r}: it is the ladder database "
                              f"{own!r}; give another file")


def cmd_ladder_show(args: argparse.Namespace) -> int:
    import json

    from sim.analysis import ladder as model

    with _ladder_open(args, write=False) as lad:
        anchor, elo = _ladder_anchor(lad, args.anchor)
        data = lad.data(times=False)
        bots = lad.bots()  # bots in other processes: program hash and faults (docs/bots.md)
    fit = model.fit(data, anchor=anchor, anchor_elo=elo)
    if args.partners:
        if args.html:
            raise ConfigError("--partners is shown as text or --json, not --html")
        table = model.partners(data, fit)
        if args.json:
            print(json.dumps(model.partners_json(table), indent=1, ensure_ascii=False))
        else:
            print(clean(model.partners_text(table)))
        return 0
    full, full_fit = data, fit
    data, fit = model.plain(data, fit)  # the plain players' ranking (teams: --partners)
    if args.html:
        html = model.show_html(data, fit)
        _ladder_output(args, args.html, "ladder page")
        write_text_atomic(args.html, html, "ladder page")
    if args.json:
        shown = model.show_json(data, fit)
        if bots:
            shown["bots"] = bots
        print(json.dumps(shown, indent=1, ensure_ascii=False))
    elif not args.html:
        print(clean(_plain_text(model, full, full_fit)))
        for name, b in sorted(bots.items()):
            faults = ", ".join(f"{n} {k}" for k, n in b.get("faults", {}).items() if n)
            print(clean(f"bot {name}: program {b['program']}; faults: {faults or 'none'}"))
    else:
        print(f"wrote {clean(args.html)}")
    return 0


def cmd_ladder_history(args: argparse.Namespace) -> int:
    from sim.analysis import ladder as model

    with _ladder_open(args, write=False) as lad:
        spec = lad.player(args.spec).spec
        anchor, elo = _ladder_anchor(lad, args.anchor)
        data = lad.data()
    if spec not in data.names:
        raise ConfigError(f"team {spec!r} is not rated while one of its players is removed")
    rows = model.history(data, data.names.index(spec), points=args.points, anchor=anchor,
                         anchor_elo=elo)
    if not rows:
        print(f"{clean(spec)}: no pairs yet")
        return 0
    from sim.tools.ladder import iso_time

    keys = list(rows[0])

    def cell(k: str, v: Any) -> str:
        if k == "time" and isinstance(v, (int, float)) and v == v:
            return iso_time(float(v))
        if isinstance(v, float):
            return f"{v:+.1f}" if k in ("rating", "lo", "hi") and v == v else f"{v:.1f}"
        return clean(str(v))

    table = [keys] + [[cell(k, r.get(k)) for k in keys] for r in rows]
    widths = [max(len(row[c]) for row in table) for c in range(len(keys))]
    print(f"{clean(spec)}: rating over time (refits on the pairs up to each time)")
    for row in table:
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)).rstrip())
    return 0


def cmd_ladder_export(args: argparse.Namespace) -> int:
    from sim.tools.ladder import export_parquet

    _ladder_output(args, args.out, "Parquet file")
    with _ladder_open(args, write=False) as lad:
        anchor, elo = _ladder_anchor(lad, args.anchor)
        n = export_parquet(lad, args.out, anchor=anchor, anchor_elo=elo)
    print(f"wrote {n:,} pairs to {clean(args.out)}")
    return 0


def add_parser(sub: Any) -> None:
    """The parser of ladder and its actions."""
    from sim.tools.ladder import (
        CHUNK_FIRST,
        CHUNK_MAX,
        CHUNK_SECONDS,
        DEFAULT_ANCHOR,
        DEFAULT_DB,
        MAX_ANCHOR_ELO,
        MAX_JOBS,
        MAX_POINTS,
        MAX_RUN_PAIRS,
        MAX_TIMEOUT,
    )

    anchor_help = (f"the player held at ELO (default 0), or mean[=ELO] for the mean of the "
                   f"rated players (default: {DEFAULT_ANCHOR} at 0 when it is on the ladder, "
                   f"else the mean; |ELO| <= {MAX_ANCHOR_ELO:,})")

    la = sub.add_parser("ladder", help="a rating list kept in one database: add players, "
                                        "play pairs where the ranking is least certain, show "
                                        "it (docs/ladder.md)")
    la.add_argument("--db", default=DEFAULT_DB, metavar="PATH",
                    help=f"the ladder's SQLite file (default {DEFAULT_DB})")
    lsub = la.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    ad = lsub.add_parser("add", help="register players (creates the ladder if needed)")
    ad.add_argument("specs", nargs="+", metavar="SPEC", help="strategy specs, e.g. greedy")
    add_plugin(ad, "FILE")
    ad.add_argument("--seed", default=None,
                    help="the ladder's master seed, fixed at creation (default 0)")
    add_rule(ad, "a rules variant of the ladder, fixed at creation (repeatable)")
    add_bots(ad)
    ad.set_defaults(func=cmd_ladder_add)
    ru = lsub.add_parser("run", help="play more pairs where the ranking is least certain")
    ru.add_argument("--pairs", type=bounded_int("pairs a run plays", 1, MAX_RUN_PAIRS),
                    required=True, help=f"pairs to play (1 … {MAX_RUN_PAIRS:,})")
    ru.add_argument("--jobs", type=bounded_int("workers of a run", 1, MAX_JOBS), default=1,
                    help=f"parallel workers (default 1; at most {MAX_JOBS:,})")
    add_force_jobs(ru)
    add_backend(ru)
    ru.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address")
    ru.add_argument("--matchup", metavar="A,B", help="play only this matchup")
    ru.add_argument("--partners", action="store_true",
                    help="add mixed teams A+B of the ladder's players and play the pairings "
                         "of a partners design: every two of the players and the teams, "
                         "evened out (docs/ladder.md Partners)")
    ru.add_argument("--teams", metavar="A+B,...",
                    help="with --partners: only these mixed teams (default: every pair of "
                         "players)")
    ru.add_argument("--chunk", type=bounded_int("pairs of a chunk", 1, CHUNK_MAX), default=None,
                    help=f"pairs per chunk: the unit of scheduling and of commits (default: "
                         f"sized to about {CHUNK_SECONDS:g} s of play per chunk, the first "
                         f"{CHUNK_FIRST}; at most {CHUNK_MAX:,})")
    ru.add_argument("--timeout", type=float, default=0.0,
                    help=f"seconds per Python-strategy decision (0: no limit; at most "
                         f"{MAX_TIMEOUT:,.0f})")
    add_no_progress(ru)
    ru.add_argument("--quiet", action="store_true",
                    help="no progress bar or ranking: print only errors and the final line")
    add_plugin(ru, "FILE")
    add_bots(ru)
    ru.set_defaults(func=cmd_ladder_run)
    im = lsub.add_parser("import", help="add finished tournament results folders (data only)")
    im.add_argument("results", nargs="+", metavar="RESULTS", help="results folders")
    im.set_defaults(func=cmd_ladder_import)
    sh = lsub.add_parser("show", help="the ranking with intervals, crosstable and fit")
    sh.add_argument("--json", action="store_true", help="print it as JSON")
    sh.add_argument("--html", metavar="OUT.html", help="write a self-contained page")
    sh.add_argument("--anchor", metavar="PLAYER[=ELO]", help=anchor_help)
    sh.add_argument("--partners", action="store_true",
                    help="the partner table: each team's Elo, the mean of its players', their "
                         "difference (compatibility) and the additivity test")
    sh.set_defaults(func=cmd_ladder_show)
    rm = lsub.add_parser("remove", help="stop scheduling and rating a player (pairs kept)")
    rm.add_argument("spec", metavar="SPEC")
    rm.set_defaults(func=cmd_ladder_remove)
    hi = lsub.add_parser("history", help="a player's rating over time")
    hi.add_argument("spec", metavar="SPEC")
    hi.add_argument("--points", type=bounded_int("points of a history", 1, MAX_POINTS),
                    default=20, help=f"points in time (default 20; at most {MAX_POINTS:,})")
    hi.add_argument("--anchor", metavar="PLAYER[=ELO]", help=anchor_help)
    hi.set_defaults(func=cmd_ladder_history)
    ex = lsub.add_parser("export", help="every pair as a Parquet file (pandas, polars, duckdb)")
    ex.add_argument("out", metavar="OUT.parquet")
    ex.add_argument("--anchor", metavar="PLAYER[=ELO]",
                    help="the anchor of the rating list kept in the file's metadata "
                         "(as show's: " + anchor_help + ")")
    ex.set_defaults(func=cmd_ladder_export)

