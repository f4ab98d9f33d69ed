"""``shuangkou tournament`` and ``report``: a run from a TOML config and its results folder."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from sim.cli.bots import add_bots, close_bots, fault_lines, register, use_bots
from sim.cli.common import output_error, raise_interrupt
from sim.cli.options import (
    MAX_CHUNK_SIZE,
    MAX_CLI_DEALS,
    MAX_TOURNAMENT_JOBS,
    add_backend,
    add_force_jobs,
    add_no_plots,
    add_no_progress,
    add_plugin,
    add_resume,
    bounded_int,
    load_plugins,
)
from sim.core.console import clean
from sim.errors import ConfigError, OutputError
from sim.tournament.config import FORMATS


def cmd_tournament(args: argparse.Namespace) -> int:
    from sim.tournament.config import load_config
    from sim.tournament.run import run_tournament

    load_plugins(args.plugin)
    overrides: dict[str, Any] = {}
    if args.format is not None:
        overrides["format"] = args.format
    if args.deals is not None:
        overrides["deals"] = args.deals
    if args.seed is not None:
        from sim.core.rng import check_seed

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
    # bots are players before the config names them; then the config's [bots] settings
    register(args.bot)
    cfg = load_config(args.config, overrides)
    bots = [b for b in use_bots(args, cfg.bots_dict) if b.name in cfg.players]
    from sim.tournament.run import cap_jobs

    cfg, capped = cap_jobs(cfg, force=args.force_jobs)
    if capped:
        print(f"shuangkou tournament: {capped}", file=sys.stderr)
    resume = _prepare_results_folder(cfg, args)
    quiet = getattr(args, "quiet", False)
    if resume is None:  # this very run is already finished there: only re-render it
        from sim.analysis import report
        from sim.tournament.swings import load_state

        report.write_all(load_state(cfg.out, cfg), cfg.out, plots=cfg.plots,
                         echo=None if quiet else _echo)
        print(f"results in {cfg.out}/ (already complete; summary.md, summary.json, "
              f"report.html and plots/ written again)")
        return 0
    # `kill PID` stops like Ctrl-C: workers are ended, finished chunks stay for --resume
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_interrupt) if main_thread else None
    try:
        summary = run_tournament(cfg, resume=resume,
                                 progress=False if args.no_progress or quiet else None,
                                 echo=None if quiet else _echo,
                                 plugins=tuple(args.plugin or ()), bots=bots)
    finally:
        close_bots()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    for line in fault_lines((summary or {}).get("faults") or {}):
        print(line)
    if summary is not None:
        from sim.analysis.summary import verdict

        if not quiet:  # again at the end: the tables above push the headline off the screen
            print(verdict(summary))
        print(f"results in {cfg.out}/ (summary.md, summary.json, report.html, plots/"
              f"{', deals/: per-deal table' if cfg.deal_table else ''})")
    return 0


def _prepare_results_folder(cfg: Any, args: argparse.Namespace) -> bool | None:
    """Check the results folder before a run; returns whether to run as a resume, or None
    when the same run is already finished there (then only its report is written again).

    - ``--force``: the previous run's files are removed and the run starts again;
    - the same config (up to jobs, backend, output folder and plots) already finished there:
      nothing is replayed, the tables and report are written again from the saved chunks;
    - otherwise an existing run needs ``--resume`` (same config) or ``--force``.
    """
    from sim.tournament.results import locked, read_config, remove_run_files

    out = cfg.out
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputError(f"cannot write results folder {out!r}: it is a file; choose another "
                          f"--out")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise output_error("results folder", out, e) from None
    if not os.access(out, os.W_OK):
        raise OutputError(f"cannot write results folder {out!r}: Permission denied")
    if not os.path.exists(os.path.join(out, "config.json")):
        return args.resume
    if args.force:
        if args.resume:
            raise ConfigError("--force and --resume exclude each other: --force starts the run "
                              "again, --resume finishes the one in the results folder")
        with locked(out):  # never under the feet of a run still writing there
            # every file the previous run wrote (one list: sim.tournament.results.RUN_FILES),
            # swing deals and plots included; never a file of the user's
            remove_run_files(out)
        return False
    if args.resume:
        return True
    diffs = read_config(out).differences(cfg)
    if diffs:
        raise ConfigError(f"results folder {out!r} already holds a different run "
                          f"({'; '.join(diffs)}, stored -> now): add --force to replace it, "
                          f"or choose another --out")
    if not os.path.exists(os.path.join(out, "run.json")):
        raise ConfigError(f"results folder {out!r} already holds this run, unfinished: add "
                          f"--resume to finish it, or --force to start it again")
    if not getattr(args, "quiet", False):
        print(f"{out!r} already holds this finished run: writing its tables and report again "
              f"from the saved chunks (add --force to play it again)")
    return None


def _echo(*parts: Any, **kw: Any) -> None:
    """``print`` for tables of a results folder (names from a config that may come from
    elsewhere): control characters shown as escapes, never sent to the terminal raw."""
    print(*(clean(p) for p in parts), **kw)


def cmd_report(args: argparse.Namespace) -> int:
    from sim.analysis import report
    from sim.tournament.swings import load_state

    load_plugins(args.plugin)
    state = load_state(args.run_dir)
    report.write_all(state, args.run_dir, plots=not args.no_plots, echo=_echo)
    print(f"rewrote summary.md, summary.json{'' if args.no_plots else ', plots/'} and "
          f"report.html in {args.run_dir}/")
    return 0


def add_parser(sub: Any) -> None:
    """The parsers of tournament and report."""
    to = sub.add_parser("tournament", help="run a tournament from a TOML config")
    to.add_argument("config", help="config file, e.g. configs/quick.toml")
    to.add_argument("--format", choices=FORMATS, default=None,
                    help="override the config's format (partners: every team of two players "
                         "against every other, docs/tournaments.md)")
    to.add_argument("--deals", type=bounded_int("deals per matchup", 1, MAX_CLI_DEALS),
                    help=f"deals per matchup (overrides the config; at most {MAX_CLI_DEALS:,})")
    to.add_argument("--jobs", type=bounded_int("parallel workers", 1, MAX_TOURNAMENT_JOBS),
                    help=f"parallel workers (at most the CPU count unless --force-jobs; at most "
                         f"{MAX_TOURNAMENT_JOBS:,})")
    add_force_jobs(to)
    add_backend(to, "what runs the chunks: auto (default: processes forked from the run on "
                    "Linux, else loky), fork, or a joblib backend (loky, threading, dask)")
    to.add_argument("--scheduler", metavar="ADDRESS",
                    help="dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --backend dask)")
    to.add_argument("--chunk-size", type=bounded_int("deals per chunk", 1, MAX_CHUNK_SIZE),
                    help=f"deals per chunk (at most {MAX_CHUNK_SIZE:,})")
    to.add_argument("--out", metavar="DIR", help="results folder (default results/NAME)")
    add_resume(to, "finish the run in the results folder (same config)")
    to.add_argument("--force", action="store_true",
                    help="replace a run already in the results folder: play it again")
    to.add_argument("--seed", default=None, help="master seed (overrides the config)")
    add_no_progress(to)
    add_no_plots(to)
    to.add_argument("--quiet", action="store_true",
                    help="no progress bar or tables: print only errors and the final line")
    add_plugin(to)
    add_bots(to)
    to.set_defaults(func=cmd_tournament)

    rr = sub.add_parser("report", help="re-render tables, plots and report.html of a run")
    rr.add_argument("run_dir", help="results folder, e.g. results/quick")
    add_no_plots(rr)
    add_plugin(rr)
    rr.set_defaults(func=cmd_report)

