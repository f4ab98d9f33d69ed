"""The ``shuangkou`` command.

Bad input (a card, a seed, a strategy, a config key, a corrupt file) ends with one line naming
the problem and what is allowed, and exit code 2; results already written stay written.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from sim.errors import ConfigError, RecordError, ShuangkouError


def _rules_from_args(pairs: Sequence[str] | None) -> Any:
    from sim.rules import Rules

    values: dict[str, Any] = {}
    for p in pairs or []:
        key, eq, val = p.partition("=")
        if not eq:
            raise ConfigError(f"--rule {p!r} must be name=value, e.g. max_redeals=5; names: "
                              f"{', '.join(Rules.names())}")
        try:
            values[key.strip()] = int(val)
        except ValueError:
            raise ConfigError(f"--rule {p!r}: {val!r} is not an integer") from None
    return Rules.from_dict(values)


def _load_plugins(mods: Sequence[str] | None) -> None:
    from strategies.registry import load_plugin

    for m in mods or []:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        load_plugin(m)


def _nonneg_int(text: str) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 0")
    return v


def _pos_int(text: str) -> int:
    v = _nonneg_int(text)
    if v == 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return v


# --- play ---------------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    import numpy as np

    from sim import runner
    from sim.loop import C_SCORE, C_SETTLE0, C_VOID
    from sim.record import dumps, open_text
    from sim.rng import check_seed

    _load_plugins(args.plugin)
    seed = check_seed(args.seed)
    rules = _rules_from_args(args.rule)
    seats = runner.make_seats(args.seats)
    if args.record:
        n = 0
        d = os.path.dirname(os.path.abspath(args.record))
        os.makedirs(d, exist_ok=True)
        with open_text(args.record, "w") as f:
            for rec in runner.iter_records(seed, args.first_deal, args.deals, seats, rules,
                                           args.timeout):
                f.write(dumps(rec) + "\n")
                f.flush()
                n += 1
        print(f"wrote {n} record(s) to {args.record}")
        return 0
    rows = runner.summaries(seed, args.first_deal, args.deals, seats, rules, args.timeout)
    played = rows[rows[:, C_VOID] == 0]
    print(f"seats: {', '.join(f'{i}={s.spec()}' for i, s in enumerate(seats))}")
    print(f"deals: {len(rows)} (seed {seed}, first deal {args.first_deal}), void: "
          f"{int(rows[:, C_VOID].sum())}")
    if len(played):
        print(f"mean attacker score: {played[:, C_SCORE].mean():.2f}")
    tot = rows[:, C_SETTLE0:C_SETTLE0 + 4].sum(axis=0)
    mean = rows[:, C_SETTLE0:C_SETTLE0 + 4].mean(axis=0) if len(rows) else np.zeros(4)
    print("settlement per seat (total / mean per deal): "
          + ", ".join(f"{i}: {int(t):+d} / {m:+.3f}" for i, (t, m) in enumerate(zip(tot, mean))))
    return 0


# --- replay / validate --------------------------------------------------------------------
def cmd_replay(args: argparse.Namespace) -> int:
    from sim.record import read_records
    from sim.replay import render

    found = []
    for rec in read_records(args.file):
        if args.deal is None or rec.get("deal") == args.deal:
            found.append(rec)
            if args.deal is not None:
                break
    if not found:
        raise RecordError(f"no deal {args.deal} in {args.file!r}")
    print("\n\n".join(render(r) for r in found))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from sim import reference
    from sim.record import read_records

    n = bad = 0
    for rec in read_records(args.file):
        n += 1
        problems = reference.validate_record(rec, check_shuffle=not args.no_shuffle_check)
        for p in problems:
            print(str(p))
        bad += bool(problems)
    print(f"{n} record(s) checked with the reference engine: "
          + ("all valid" if not bad else f"{bad} with violations"))
    return 1 if bad else 0


# --- bench --------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    from sim import bench

    res = bench.run(deals=args.deals, repeats=args.repeats,
                    reference_deals=args.reference_deals, python_deals=args.python_deals,
                    openspiel_games=0 if args.no_openspiel else args.openspiel_games,
                    strategies=not args.no_strategies)
    if args.json:
        with open(args.json, "w") as f:
            f.write(bench.to_json(res))
        print(f"figures written to {args.json}")
    return 0


def cmd_strategies(args: argparse.Namespace) -> int:
    from strategies.registry import available, resolve

    _load_plugins(args.plugin)
    for name in sorted(available()):
        cls = resolve(name)
        tier = "compiled+python" if cls.compiled_kind is not None else "python"
        doc = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        print(f"{name:<10} [{tier}]{' (oracle: sees all hands)' if cls.oracle else ''} {doc}")
        for k, p in cls.params().items():
            print(f"    {k}={p.default!r:<8} {p.describe()}  {p.doc}")
    return 0


# --- tournament / report / estimate ---------------------------------------------------------
def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def cmd_tournament(args: argparse.Namespace) -> int:
    from sim.config import load_config
    from sim.tournament import run_tournament

    _load_plugins(args.plugin)
    overrides: dict[str, Any] = {}
    if args.deals is not None:
        overrides["deals"] = args.deals
    if args.seed is not None:
        from sim.rng import check_seed

        overrides["seed"] = check_seed(args.seed)
    if args.jobs is not None:
        overrides["run.jobs"] = args.jobs
    if args.backend is not None:
        overrides["run.backend"] = args.backend
    if args.scheduler is not None:
        overrides["run.scheduler"] = args.scheduler
        overrides.setdefault("run.backend", "dask")
    if args.chunk_size is not None:
        overrides["run.chunk_size"] = args.chunk_size
    if args.out is not None:
        overrides["output.dir"] = args.out
    if args.no_plots:
        overrides["output.plots"] = False
    cfg = load_config(args.config, overrides)
    # `kill PID` stops like Ctrl-C: workers are ended, finished chunks stay for --resume
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if main_thread else None
    try:
        summary = run_tournament(cfg, resume=args.resume,
                                 progress=False if args.no_progress else None, echo=print)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    if summary is not None:
        print(f"results in {cfg.out}/ (summary.md, summary.json, report.html, plots/, "
              f"chunks/: per-deal table)")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from sim import report
    from sim.tournament import load_state

    _load_plugins(args.plugin)
    state = load_state(args.run_dir)
    report.write_all(state, args.run_dir, plots=not args.no_plots, echo=print)
    print(f"rewrote summary.md, summary.json{'' if args.no_plots else ', plots/'} and "
          f"report.html in {args.run_dir}/")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    import json

    from sim.estimate import estimate
    from sim.rng import check_seed

    _load_plugins(args.plugin)
    est = estimate(args.hand, seat=args.seat, deals=args.deals, seats=args.seats,
                   seed=check_seed(args.seed), rules=_rules_from_args(args.rule),
                   jobs=args.jobs)
    if args.json:
        print(json.dumps(est.to_dict(), indent=1, ensure_ascii=False))
    else:
        print(est.text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shuangkou",
        description="Monte Carlo simulator and strategy tournaments for Xinjiang Shuangkou.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    pl = sub.add_parser("play", help="play seeded deals; print a summary or write records")
    pl.add_argument("--seed", default="0", help="master seed, 0 … 2**64-1 (default 0)")
    pl.add_argument("--deals", type=_pos_int, default=10, help="number of deals (default 10)")
    pl.add_argument("--first-deal", type=_nonneg_int, default=0,
                    help="index of the first deal (default 0): seed + deal fix a deal")
    pl.add_argument("--seats", default="random",
                    help="1, 2 (team A,team B) or 4 comma-separated strategy specs")
    pl.add_argument("--record", metavar="FILE", help="write records (JSONL, .gz compresses)")
    pl.add_argument("--rule", action="append", metavar="NAME=VALUE",
                    help="a rules variant, e.g. max_redeals=5 (repeatable)")
    pl.add_argument("--plugin", action="append", metavar="MODULE",
                    help="import MODULE and register its strategies (repeatable)")
    pl.add_argument("--timeout", type=float, default=None,
                    help="seconds a Python strategy may take per decision")
    pl.set_defaults(func=cmd_play)

    rp = sub.add_parser("replay", help="show recorded deals as a person wants to read them")
    rp.add_argument("file")
    rp.add_argument("--deal", type=_nonneg_int, default=None, help="only this deal index")
    rp.set_defaults(func=cmd_replay)

    va = sub.add_parser("validate", help="re-check records with the reference engine")
    va.add_argument("file")
    va.add_argument("--no-shuffle-check", action="store_true",
                    help="do not require the deck to be this engine's shuffle of seed+deal")
    va.set_defaults(func=cmd_validate)

    be = sub.add_parser("bench", help="measure the compiled core's throughput")
    be.add_argument("--deals", type=_pos_int, default=200_000)
    be.add_argument("--repeats", type=_pos_int, default=3)
    be.add_argument("--reference-deals", type=_nonneg_int, default=200)
    be.add_argument("--python-deals", type=_nonneg_int, default=300)
    be.add_argument("--openspiel-games", type=_nonneg_int, default=2000)
    be.add_argument("--no-openspiel", action="store_true")
    be.add_argument("--no-strategies", action="store_true",
                    help="skip greedy deals/s and the search players' decision times")
    be.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    be.set_defaults(func=cmd_bench)

    sl = sub.add_parser("strategies", help="list the available strategies and parameters")
    sl.add_argument("--plugin", action="append", metavar="MODULE")
    sl.set_defaults(func=cmd_strategies)

    to = sub.add_parser("tournament", help="run a tournament from a TOML config")
    to.add_argument("config", help="config file, e.g. configs/quick.toml")
    to.add_argument("--deals", type=_pos_int, help="deals per matchup (overrides the config)")
    to.add_argument("--jobs", type=_pos_int, help="parallel workers")
    to.add_argument("--backend", choices=("loky", "threading", "dask"),
                    help="joblib backend (default loky)")
    to.add_argument("--scheduler", metavar="ADDRESS",
                    help="dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --backend dask)")
    to.add_argument("--chunk-size", type=_pos_int, help="deals per chunk")
    to.add_argument("--out", metavar="DIR", help="results folder (default results/NAME)")
    to.add_argument("--resume", action="store_true",
                    help="finish the run in the results folder (same config)")
    to.add_argument("--seed", default=None, help="master seed (overrides the config)")
    to.add_argument("--no-progress", action="store_true", help="no progress bar")
    to.add_argument("--no-plots", action="store_true", help="no PNG plots")
    to.add_argument("--plugin", action="append", metavar="MODULE")
    to.set_defaults(func=cmd_tournament)

    rr = sub.add_parser("report", help="re-render tables, plots and report.html of a run")
    rr.add_argument("run_dir", help="results folder, e.g. results/quick")
    rr.add_argument("--no-plots", action="store_true")
    rr.add_argument("--plugin", action="append", metavar="MODULE")
    rr.set_defaults(func=cmd_report)

    es = sub.add_parser("estimate", help="fix cards in one seat's hand, estimate how it does")
    es.add_argument("--hand", required=True, help='fixed cards, e.g. "Kh Kh 5h 5h BJ"')
    es.add_argument("--seat", type=int, choices=range(4), default=0, help="seat 0-3 (default 0)")
    es.add_argument("--deals", type=_pos_int, default=100_000,
                    help="number of deals (default 100000)")
    es.add_argument("--seats", default="random",
                    help="1, 2 (team A,team B) or 4 comma-separated strategy specs")
    es.add_argument("--seed", default="0", help="master seed (default 0)")
    es.add_argument("--rule", action="append", metavar="NAME=VALUE")
    es.add_argument("--jobs", type=_pos_int, default=1, help="threads (default 1)")
    es.add_argument("--json", action="store_true", help="print the figures as JSON")
    es.add_argument("--plugin", action="append", metavar="MODULE")
    es.set_defaults(func=cmd_estimate)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ShuangkouError as e:
        print(f"shuangkou {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"shuangkou {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
