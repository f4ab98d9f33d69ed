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
from collections.abc import Callable, Sequence
from typing import Any

from sim.core.console import clean, graceful_streams
from sim.core.limits import MAX_DEAL
from sim.errors import ConfigError, OutputError, RecordError, ShuangkouError

PLUGIN_HELP = ("import MODULE (in the working folder or on PYTHONPATH) or a file such as "
               "~/bots/mybot.py, and register its strategies (repeatable)")


def _rules_from_args(pairs: Sequence[str] | None) -> Any:
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


def _load_plugins(mods: Sequence[str] | None) -> None:
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
                raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} must be >= {lo:,} "
                                                  f"({lo:,} … {hi:,})")
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} is more than {hi:,}, the "
                                              f"most {what} ({lo:,} … {hi:,})")
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} must be >= {lo:,} "
                                              f"({lo:,} … {hi:,})")
        if v > hi:
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} is more than {hi:,}, the "
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
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} is not a number") from None
        if not lo <= v <= hi:  # NaN too
            raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} is not {lo:g} … {hi:,g}, "
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


def _nonneg_int(text: str) -> int:
    return _int_at_least(text, 0)


def _pos_int(text: str) -> int:
    return _int_at_least(text, 1)


def _int_at_least_2(text: str) -> int:
    return _int_at_least(text, 2)


_BENCH, _TUNE, _TRAIN = "sim.tools.bench", "sim.tools.tune", "sim.learn.train"


def _upto(module: str, bound: str, what: str, lo: int = 1) -> Callable[[str], int]:
    """``bounded_int`` with the bound ``module.bound``, its one definition (bench, tune and
    train check their counts from the Python API too), imported only when the option is
    given: building the parser loads no engine."""
    def parse(text: str) -> int:
        import importlib

        return bounded_int(what, lo, getattr(importlib.import_module(module), bound))(text)
    parse.__name__ = "int"
    return parse


def _train_hours(text: str) -> float:
    """``train --hours``: a number in (0, sim.learn.train.MAX_HOURS]."""
    from sim.learn.train import MAX_HOURS

    v = bounded_float("--hours (hours of wall time)", 0.0, MAX_HOURS)(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{_quoted_arg(text)} must be more than 0 hours")
    return v


DEFAULT_ANALYZE_SAMPLES = 128  # sim.tools.analyze.DEFAULT_SAMPLES (no engine import here)
DEFAULT_ESTIMATE_SEATS = "greedy"  # sim.tools.estimate.DEFAULT_SEATS (tests check they agree)
DEFAULT_ESTIMATE_DEALS = 100_000  # sim.tools.estimate.DEFAULT_DEALS
SWINGS_MAX = 10  # sim.analysis.stats.SWINGS_KEPT: swing deals a run keeps per matchup


def _swings_n(text: str) -> int:
    v = _int_at_least(text, 1)
    if v > SWINGS_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is more than the {SWINGS_MAX} swing deals "
                                          f"a run keeps per matchup (1 … {SWINGS_MAX})")
    return v


def _check_deal_range(first: int, deals: int) -> None:
    """Deals ``first … first+deals-1`` must all be deal indices (0 … 2**63-1)."""
    if first + deals - 1 > MAX_DEAL:
        raise ConfigError(f"--first-deal {first} with --deals {deals} goes past the last deal "
                          f"index 2**63-1: first deal + deals must be <= 2**63")


class _Once(argparse.Action):
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


def _plugin_args(mods: Sequence[str] | None) -> list[str]:
    """``--plugin`` values: a module name as given; a file path (``~/bots/mybot.py``) made
    absolute, so parallel workers load the same file."""
    from strategies.registry import is_plugin_path

    return [os.path.abspath(os.path.expanduser(m)) if is_plugin_path(m) else m
            for m in mods or []]


def _output_error(what: str, path: str, e: OSError) -> OutputError:
    """One line for a file that cannot be written: what, where and the system's reason."""
    where = f" ({e.filename!r})" if e.filename and os.fspath(e.filename) != path else ""
    return OutputError(f"cannot write {what} {path!r}{where}: {e.strerror or e}")


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _write_records(path: str, records: Any) -> int:
    """Write records to ``path`` (JSON Lines, ``.gz`` compresses; ``-`` is stdout).

    The records go to ``path.partial`` first, which replaces ``path`` only once every deal is
    written: a run that fails or is interrupted leaves an existing ``path`` untouched and keeps
    the complete records written so far in ``path.partial``; a write error (disk full, …)
    removes ``path.partial``.
    """
    from sim.record import dumps, open_text

    if path == "-":
        n = 0
        for rec in records:
            sys.stdout.write(dumps(rec) + "\n")
            n += 1
        sys.stdout.flush()
        return n
    partial = path + ".partial"
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory", path)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        f = open_text(partial, "w", gz=path.endswith(".gz"))
    except OSError as e:
        raise _output_error("record file", path, e) from None
    n = 0
    try:
        with f:
            for rec in records:
                f.write(dumps(rec) + "\n")
                n += 1
        os.replace(partial, path)
    except OSError as e:
        _remove_quietly(partial)
        raise _output_error("record file", path, e) from None
    except BaseException:  # a bot's error, Ctrl-C: keep what was written, leave path alone
        if n:
            print(f"{n} complete record(s) written before the failure are in {partial}; "
                  f"{path} is unchanged")
        else:
            _remove_quietly(partial)
        raise
    return n


# --- play ---------------------------------------------------------------------------------
_PLAY_BLOCK = 1 << 14  # deals per block of summary rows (152 bytes each) in `play`


def cmd_play(args: argparse.Namespace) -> int:
    import numpy as np

    from sim.core.rng import check_seed
    from sim.core.tables import C_SCORE, C_SETTLE0, C_VOID
    from sim.loops import runner

    _load_plugins(args.plugin)
    seed = check_seed(args.seed)
    _check_deal_range(args.first_deal, args.deals)
    rules = _rules_from_args(args.rule)
    seats = runner.make_seats(args.seats)
    if args.record:
        with _compiling(args):
            n = _write_records(args.record, runner.iter_records(
                seed, args.first_deal, args.deals, seats, rules, args.timeout))
        if args.record != "-":
            print(f"wrote {n} record(s) to {args.record}")
        return 0
    # in blocks, keeping only sums: memory does not grow with --deals
    n_void = n_played = score_sum = 0
    tot = np.zeros(4, dtype=np.int64)
    with _compiling(args):  # a cold cache: one notice, and the time it took before the results
        for first in range(args.first_deal, args.first_deal + args.deals, _PLAY_BLOCK):
            n = min(_PLAY_BLOCK, args.first_deal + args.deals - first)
            rows = runner.summaries(seed, first, n, seats, rules, args.timeout)
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
    return 0


# --- replay / validate --------------------------------------------------------------------
def _write_viewer(path: str, source: str, records: list[dict[str, Any]],
                  rows: Any = None, title: str = "", note: str | None = None,
                  quiet: bool = False) -> None:
    """The deal viewer page (docs/viewer.md) of ``records`` (and analysis ``rows``) to
    ``path``, through ``path.partial``; never over the input file ``source``."""
    from sim.analysis import viewer

    if os.path.exists(path) and os.path.samefile(path, source):
        raise OutputError(f"--html {path!r} is the input file: name another file")
    _check_output_file(path, "viewer page")
    text = viewer.page(records, rows, title=title, note=note)
    _write_text_atomic(path, text, "viewer page")
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
        _write_viewer(args.html, args.file, found,
                      title=f"Deals of {os.path.basename(args.file)}")
        return 0
    print("\n\n".join(_render_checked(r, args.file) for r in found))
    return 0


def _swing_pairs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The swing deals of the results folder ``args.file``/``args.records`` (``--swings``)."""
    from sim.tournament import swings

    if args.deal is not None:
        raise ConfigError("--swings chooses the deals itself: drop --deal")
    _load_plugins(args.plugin)  # a plug-in player is replayed only when named here
    return swings.pairs(args.file if hasattr(args, "file") else args.records, args.swings)


def _replay_swings(args: argparse.Namespace) -> int:
    """``replay RESULTS --swings N``: both tables of each swing deal, side by side."""
    from sim.tournament import swings

    found = _swing_pairs(args)
    if args.html:  # the deal viewer: the two tables of each pair side by side
        _write_viewer(args.html, args.file, [r for p in found for r in p["records"]],
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


# --- analyze ------------------------------------------------------------------------------
def cmd_analyze(args: argparse.Namespace) -> int:
    from sim.core.rng import check_seed
    from sim.reference import validator
    from sim.tools import analyze

    settings = analyze.Settings(samples=args.samples, seed=check_seed(args.seed),
                                policy=args.policy)
    analyze.continuation(settings.policy)  # a bad --policy fails before any work
    if args.json and args.json != "-" and os.path.exists(args.json) and \
            os.path.samefile(args.json, args.records):
        raise OutputError(f"--json {args.json!r} is the input file: analyze never changes its "
                          f"input; name another file")
    if args.swings is not None:  # both tables of each swing deal of a results folder
        records = [r for p in _swing_pairs(args) for r in p["records"]]
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
        _check_output_file(args.html, "viewer page")
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
        _write_viewer(args.html, args.records, records, rows,
                      title=f"Analysis of {os.path.basename(args.records)}",
                      note=f"continuation {settings.policy}, {settings.samples} worlds per "
                           f"decision, analysis seed {settings.seed}; values and losses in "
                           f"settlement points per player (docs/analysis.md)",
                      quiet=args.json == "-")
    if args.json:
        n = _write_records(args.json, rows)
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


# --- human --------------------------------------------------------------------------------
def cmd_human(args: argparse.Namespace) -> int:
    from sim import human

    _load_plugins(args.plugin)
    return human.run(seat=args.seat, partner=args.partner, opponents=args.opponents,
                     seed=args.seed, deals=args.deals, rules=_rules_from_args(args.rule),
                     delay=args.delay, timeout=args.timeout, out=args.out, plain=args.plain,
                     review=not args.no_review, samples=args.samples)


# --- bench --------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    from sim.tools import bench

    if args.json:  # refuse a path that cannot be written before measuring for minutes
        _check_output_file(args.json, "JSON file")
    if args.limit:
        bench.check_limit(args.limit)
    res = bench.run(deals=args.deals, repeats=args.repeats,
                    reference_deals=args.reference_deals, python_deals=args.python_deals,
                    openspiel_games=0 if args.no_openspiel else args.openspiel_games,
                    strategies=not args.no_strategies, limit=args.limit)
    if args.json:
        _write_text_atomic(args.json, bench.to_json(res), "JSON file")
        print(f"figures written to {args.json}")
    return 0


def _check_output_file(path: str, what: str) -> None:
    """A file that could be created: not a folder, in an existing, writable folder."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise _output_error(what, path, IsADirectoryError(21, "Is a directory", path))
    if not os.path.isdir(folder):
        why = "Not a directory" if os.path.exists(folder) else "No such directory"
        raise OutputError(f"cannot write {what} {path!r}: {folder!r}: {why}")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"cannot write {what} {path!r}: {folder!r}: Permission denied")


def _write_text_atomic(path: str, text: str, what: str) -> None:
    """Write ``text`` through ``path.partial`` in the same folder and rename it: ``path`` is
    whole or untouched; a partial file is removed on error (disk full, …)."""
    partial = path + ".partial"
    try:
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError as e:
        _remove_quietly(partial)
        raise _output_error(what, path, e) from None


def cmd_compile(args: argparse.Namespace) -> int:
    from sim.loops import precompile

    _load_plugins(args.plugin)
    precompile.run(args.players, progress=False if args.no_progress else None)
    return 0


def cmd_strategies(args: argparse.Namespace) -> int:
    from strategies.registry import available, resolve

    _load_plugins(args.plugin)
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


# --- tournament / report / estimate ---------------------------------------------------------
def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def cmd_tournament(args: argparse.Namespace) -> int:
    from sim.tournament.config import load_config
    from sim.tournament.run import run_tournament

    _load_plugins(args.plugin)
    overrides: dict[str, Any] = {}
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
    cfg = load_config(args.config, overrides)
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
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if main_thread else None
    try:
        summary = run_tournament(cfg, resume=resume,
                                 progress=False if args.no_progress or quiet else None,
                                 echo=None if quiet else _echo,
                                 plugins=tuple(args.plugin or ()))
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
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
        raise _output_error("results folder", out, e) from None
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

    _load_plugins(args.plugin)
    state = load_state(args.run_dir)
    report.write_all(state, args.run_dir, plots=not args.no_plots, echo=_echo)
    print(f"rewrote summary.md, summary.json{'' if args.no_plots else ', plots/'} and "
          f"report.html in {args.run_dir}/")
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    import json

    from sim.core.rng import check_seed
    from sim.tools.estimate import check_deals, estimate, parse_hand

    if args.json and args.quiet:
        raise ConfigError("--json and --quiet contradict each other: give one (--json prints "
                          "every figure, --quiet the headline line only)")
    _load_plugins(args.plugin)
    try:
        check_deals(args.deals)
    except ConfigError as e:  # named as the option is
        raise ConfigError(f"--{e}") from None
    seed, rules = check_seed(args.seed), _rules_from_args(args.rule)
    parse_hand(args.hand)  # bad input: its one line, before any compile notice
    with _compiling(args):  # a cold cache: one notice, and the time it took before the results
        est = estimate(args.hand, seat=args.seat, deals=args.deals, seats=args.seats,
                       seed=seed, rules=rules, jobs=args.jobs, compare_calls=args.compare_calls)
    if args.json:
        print(json.dumps(est.to_dict(), indent=1, ensure_ascii=False))
    elif args.quiet:  # the headline figure only
        print(est.headline())
    else:
        print(est.text())
    return 0


# --- ladder -------------------------------------------------------------------------------
def _ladder_open(args: argparse.Namespace, create: bool = False, write: bool = True,
                 seed: int | None = None, rules: dict[str, int] | None = None) -> Any:
    from sim.tools.ladder import Ladder

    return Ladder.open(args.db, create=create, seed=seed, rules=rules, write=write)


def _quoted_arg(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text):,} characters)"


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
            raise ConfigError(f"--anchor {_quoted_arg(text)}: {_quoted_arg(tail)} is not a "
                              f"number: give PLAYER or PLAYER=ELO, e.g. random=0") from None
        if not abs(elo) <= MAX_ANCHOR_ELO:
            raise ConfigError(f"--anchor {_quoted_arg(text)}: the Elo must be within "
                              f"-{MAX_ANCHOR_ELO:,} … {MAX_ANCHOR_ELO:,}")
        spec = head.strip()
    if spec == "mean":
        return None, elo
    try:
        return lad.player(spec).spec, elo
    except ConfigError as e:
        raise ConfigError(f"--anchor {_quoted_arg(text)}: {e} (or mean)") from None


def _ladder_creation(args: argparse.Namespace) -> tuple[int | None, dict[str, int] | None]:
    """``--seed`` and ``--rule`` of a command that may create the ladder: checked against an
    existing ladder's (they are fixed when it is made)."""
    from sim.core.rng import check_seed
    from sim.tools.ladder import Ladder

    seed = check_seed(args.seed) if args.seed is not None else None
    rules = _rules_from_args(args.rule).to_dict() if args.rule else None
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
    _load_plugins(args.plugin)
    seed, rules = _ladder_creation(args)
    plugin = args.plugin[-1] if args.plugin and len(args.plugin) == 1 else None
    if args.plugin and len(args.plugin) > 1:
        plugin = os.pathsep.join(args.plugin)
    with _ladder_open(args, create=True, seed=seed, rules=rules) as lad:
        for spec, what in lad.add(args.specs, plugin):
            print(f"{clean(spec)}: {what}")
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
    _load_plugins(args.plugin)
    matchup = _ladder_matchup(args.matchup)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if main_thread else None
    try:
        with _ladder_open(args) as lad:
            got = ladder.run(lad, args.pairs, chunk=args.chunk, jobs=args.jobs,
                             backend=backend, scheduler=args.scheduler or "", matchup=matchup,
                             timeout=timeout,
                             progress=False if args.no_progress or args.quiet else None,
                             plugins=tuple(args.plugin or ()), force_jobs=args.force_jobs)
            if not args.quiet:
                _ladder_show_text(lad)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    print(f"played {got['pairs']:,} pairs in {got['chunks']} chunks ({got['seconds']:.1f} s, "
          f"{got['backend']}); committed to {args.db}")
    return 0


def _ladder_show_text(lad: Any) -> None:
    from sim.analysis import ladder as model

    anchor, elo = _ladder_anchor(lad, None)
    data = lad.data()
    print(clean(model.show_text(data, model.fit(data, anchor=anchor, anchor_elo=elo))))


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
    _check_output_file(path, what)
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
    fit = model.fit(data, anchor=anchor, anchor_elo=elo)
    if args.html:
        html = model.show_html(data, fit)
        _ladder_output(args, args.html, "ladder page")
        _write_text_atomic(args.html, html, "ladder page")
    if args.json:
        print(json.dumps(model.show_json(data, fit), indent=1, ensure_ascii=False))
    elif not args.html:
        print(clean(model.show_text(data, fit)))
    else:
        print(f"wrote {clean(args.html)}")
    return 0


def cmd_ladder_history(args: argparse.Namespace) -> int:
    from sim.analysis import ladder as model

    with _ladder_open(args, write=False) as lad:
        spec = lad.player(args.spec).spec
        anchor, elo = _ladder_anchor(lad, args.anchor)
        data = lad.data()
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


def _compile_label(args: argparse.Namespace) -> str:
    """What a command compiles for, as the compile notice names it (and the measured compile
    times are keyed by, sim.core._cache)."""
    if args.command == "human":
        return f"human (partner {args.partner}, opponents {args.opponents})"
    seats = getattr(args, "seats", None)
    return f"{args.command} --seats {seats}" if seats else args.command


def _compiling(args: argparse.Namespace, done: bool = True) -> Any:
    """``sim.core._cache.compiling`` for this command: on a cold cache, one notice (once per
    run) with the compile time measured here before, then the time it took."""
    from sim.core._cache import compiling

    return compiling(_compile_label(args), done=done)


def cmd_tune(args: argparse.Namespace) -> int:
    from sim.core.rng import check_seed
    from sim.tools import tune

    _load_plugins(args.plugin)
    cfg = tune.make_config(args.spec, args.param or [], against=args.against,
                           pairs=args.pairs, iterations=args.iterations,
                           seed=check_seed(args.seed), plugins=tuple(args.plugin or ()))
    res = tune.run(cfg, args.out, jobs=args.jobs, backend=args.backend or "auto",
                   resume=args.resume, confirm=args.confirm,
                   progress=False if args.no_progress else None)
    print(f"tuned {len(cfg.params)} parameter(s) of {res.start} over {cfg.iterations} "
          f"iterations: {res.pairs_played:,} duplicate pairs, {res.seconds:.1f} s; trajectory "
          f"in {os.path.join(args.out, 'trajectory.csv')} and trajectory.png")
    c = res.confirm
    if c:
        print(f"confirmation on {c['pairs']:,} fresh pairs: tuned vs start "
              f"{c['margin']:+.3f} points per deal per player, 95% interval "
              f"[{c['lo']:+.3f}, {c['hi']:+.3f}]")
    print(res.spec)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from sim.learn import jaxnet, train

    if args.merge:  # an ensemble of trained networks: no training, no JAX
        print(train.merge(args.merge, args.out))
        return 0
    jaxnet.require_jax()  # first: without the extra, one line and nothing written
    cfg = train.make_config(args.teacher, seed=args.seed, deals=args.deals, epochs=args.epochs,
                            holdout=args.holdout, eval_pairs=args.eval_pairs,
                            eval_seed=args.eval_seed, hidden=args.hidden, batch=args.batch,
                            lr=args.lr, dtype=args.dtype, soft=args.soft, tau=args.tau,
                            augment=not args.no_augment, regret=args.regret)
    if args.retrain:  # a fresh network on the labels of an earlier run
        print(train.retrain(cfg, args.retrain, args.out, say=print, rounds=args.rounds))
        return 0
    rounds = args.rounds if args.rounds is not None or args.hours is not None else \
        train.DEFAULT_ROUNDS
    res = train.run(cfg, args.out, rounds=rounds, hours=args.hours, jobs=args.jobs,
                    resume=args.resume, labels=args.labels)
    last = res.rows[-1] if res.rows else None
    if last is not None and last["pairs"]:
        print(f"trained {res.rounds} round(s), {res.labels:,} labels, {res.seconds:.0f} s; last "
              f"epoch vs {train.BASELINE} {last['margin']:+.3f} points per deal per player, 95% "
              f"interval [{last['lo']:+.3f}, {last['hi']:+.3f}] ({last['pairs']} pairs); "
              f"curve in {os.path.join(args.out, 'curve.csv')} and curve.png")
    if res.stopped == "budget":
        print(f"stopped by --hours: {res.seconds:.0f} s of the {res.budget:.0f} s budget, "
              f"checkpoint written (--resume with more --hours goes on)")
    if res.weights:
        print(res.weights)
    return 0


_COMPILING_COMMANDS = ("play", "estimate", "bench", "human", "tournament", "replay",
                       "validate")


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

    pl = sub.add_parser("play", help="play seeded deals; print a summary or write records")
    pl.add_argument("--seed", default="0", help="master seed, 0 … 2**64-1 (default 0)")
    pl.add_argument("--deals", type=bounded_int("deals of a run", 1, MAX_CLI_DEALS), default=10,
                    help=f"number of deals (default 10; at most {MAX_CLI_DEALS:,})")
    pl.add_argument("--first-deal", type=_nonneg_int, default=0,
                    help="index of the first deal (default 0): seed + deal fix a deal")
    pl.add_argument("--seats", default="random",
                    help="1, 2 (team A,team B) or 4 comma-separated strategy specs")
    pl.add_argument("--record", metavar="FILE",
                    help="write records instead of a summary (JSONL, .gz compresses, - for "
                         "stdout); FILE is replaced only when every deal is written")
    pl.add_argument("--rule", action="append", metavar="NAME=VALUE",
                    help="a rules variant, e.g. max_redeals=5 (repeatable)")
    pl.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
    pl.add_argument("--timeout", type=bounded_float("seconds per decision", 0, MAX_SECONDS),
                    default=None,
                    help="seconds a Python strategy or a compiled plug-in may take per "
                         "decision, enforced while it runs (0: no limit, the default)")
    pl.add_argument("--quiet", action="store_true",
                    help="print only errors and the final line")
    pl.set_defaults(func=cmd_play)

    rp = sub.add_parser("replay", help="show recorded deals as a person wants to read them")
    rp.add_argument("file", help="record file (JSONL, .gz), or with --swings a tournament's "
                                 "results folder")
    rp.add_argument("--deal", type=bounded_int("a deal index may be", 0, MAX_DEAL), default=None,
                    help="only this deal index (0 … 2**63-1)")
    rp.add_argument("--html", metavar="OUT.html",
                    help="write the deals as the deal viewer page (docs/viewer.md) instead of "
                         "printing them")
    rp.add_argument("--swings", type=_swings_n, metavar="N",
                    help=f"FILE is a duplicate run's results folder: show the N (1 … "
                         f"{SWINGS_MAX}) deals of each matchup whose two tables differ most, "
                         f"side by side, with the first decision where they part")
    rp.add_argument("--plugin", action="append", metavar="MODULE",
                    help="import MODULE and register its strategies (repeatable): --swings "
                         "replays plug-in players")
    rp.set_defaults(func=cmd_replay)

    va = sub.add_parser("validate", help="re-check records with the reference engine")
    va.add_argument("file", help="record file (JSONL, .gz)")
    va.add_argument("--no-shuffle-check", action="store_true",
                    help="do not require the deck to be this engine's shuffle of seed+deal")
    va.set_defaults(func=cmd_validate)

    hu = sub.add_parser("human", help="play in the terminal with three bots (one deal or a "
                                      "match)")
    hu.add_argument("--seat", type=int, choices=range(4), default=0, action=_Once,
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
    hu.add_argument("--rule", action="append", metavar="NAME=VALUE",
                    help="a rules variant, e.g. max_redeals=5 (repeatable)")
    hu.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
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
    hu.set_defaults(func=cmd_human)

    be = sub.add_parser("bench", help="measure the compiled core's throughput")
    be.add_argument("--deals", type=_upto(_BENCH, "MAX_DEALS", "deals per repeat"), default=200_000,
                    help="compiled random deals per repeat (default 200000)")
    be.add_argument("--repeats", type=_upto(_BENCH, "MAX_REPEATS", "repeats"), default=3,
                    help="repeats; the best is reported (default 3)")
    be.add_argument("--reference-deals", type=_upto(_BENCH,
                    "MAX_SIDE_DEALS", "deals or games of a side measure", 0),
                    default=200,
                    help="deals through the reference engine (default 200)")
    be.add_argument("--python-deals", type=_upto(_BENCH,
                    "MAX_SIDE_DEALS", "deals or games of a side measure", 0),
                    default=300,
                    help="deals through the Python step API (default 300)")
    be.add_argument("--openspiel-games", type=_upto(_BENCH,
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
    co.add_argument("--plugin", action="append", metavar="MODULE", help=PLUGIN_HELP)
    co.add_argument("--no-progress", action="store_true",
                    help="no progress bars (they are shown on a terminal only)")
    co.set_defaults(func=cmd_compile)

    sl = sub.add_parser("strategies", help="list the available strategies and parameters")
    sl.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
    sl.add_argument("--markdown", action="store_true",
                    help="print a Markdown table of each strategy's parameters (defaults, "
                         "types, ranges), as docs/strategies.md carries them")
    sl.set_defaults(func=cmd_strategies)

    to = sub.add_parser("tournament", help="run a tournament from a TOML config")
    to.add_argument("config", help="config file, e.g. configs/quick.toml")
    to.add_argument("--deals", type=bounded_int("deals per matchup", 1, MAX_CLI_DEALS),
                    help=f"deals per matchup (overrides the config; at most {MAX_CLI_DEALS:,})")
    to.add_argument("--jobs", type=bounded_int("parallel workers", 1, MAX_TOURNAMENT_JOBS),
                    help=f"parallel workers (at most the CPU count unless --force-jobs; at most "
                         f"{MAX_TOURNAMENT_JOBS:,})")
    to.add_argument("--force-jobs", action="store_true",
                    help="run --jobs workers even when there are more than CPUs")
    from sim.tournament.config import BACKENDS

    to.add_argument("--backend", choices=BACKENDS,
                    help="what runs the chunks: auto (default: processes forked from the run "
                         "on Linux, else loky), fork, or a joblib backend (loky, threading, "
                         "dask)")
    to.add_argument("--scheduler", metavar="ADDRESS",
                    help="dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --backend dask)")
    to.add_argument("--chunk-size", type=bounded_int("deals per chunk", 1, MAX_CHUNK_SIZE),
                    help=f"deals per chunk (at most {MAX_CHUNK_SIZE:,})")
    to.add_argument("--out", metavar="DIR", help="results folder (default results/NAME)")
    to.add_argument("--resume", action="store_true",
                    help="finish the run in the results folder (same config)")
    to.add_argument("--force", action="store_true",
                    help="replace a run already in the results folder: play it again")
    to.add_argument("--seed", default=None, help="master seed (overrides the config)")
    to.add_argument("--no-progress", action="store_true", help="no progress bar")
    to.add_argument("--no-plots", action="store_true", help="no PNG plots")
    to.add_argument("--quiet", action="store_true",
                    help="no progress bar or tables: print only errors and the final line")
    to.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
    to.set_defaults(func=cmd_tournament)

    rr = sub.add_parser("report", help="re-render tables, plots and report.html of a run")
    rr.add_argument("run_dir", help="results folder, e.g. results/quick")
    rr.add_argument("--no-plots", action="store_true", help="no PNG plots")
    rr.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
    rr.set_defaults(func=cmd_report)

    an = sub.add_parser("analyze", help="value every legal choice of recorded decisions: "
                                         "losses, marks, summaries (docs/analysis.md)")
    an.add_argument("records", help="record file (JSONL, .gz): play --record, a tournament's "
                                    "records.jsonl; with --swings its results folder")
    an.add_argument("--swings", type=_swings_n, metavar="N",
                    help=f"RECORDS is a duplicate run's results folder: analyze both tables "
                         f"of the N (1 … {SWINGS_MAX}) largest swing deals of each matchup, "
                         f"replayed exactly")
    an.add_argument("--plugin", action="append", metavar="MODULE",
                    help="import MODULE and register its strategies (repeatable): --swings "
                         "replays plug-in players")
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
    an.set_defaults(func=cmd_analyze)

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
    es.add_argument("--hand", required=True, action=_Once,
                    help='fixed cards, e.g. "Kh Kh 5h 5h BJ" (once)')
    es.add_argument("--seat", type=int, choices=range(4), default=0, action=_Once,
                    help="seat 0-3 (default 0)")
    es.add_argument("--deals", type=_pos_int, default=DEFAULT_ESTIMATE_DEALS,
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
    es.add_argument("--rule", action="append", metavar="NAME=VALUE",
                    help="a rules variant, e.g. kou_di_pair=6 (repeatable)")
    es.add_argument("--jobs", type=bounded_int("threads", 1, MAX_CLI_JOBS), default=1,
                    help=f"threads (default 1; at most {MAX_CLI_JOBS:,})")
    es.add_argument("--json", action="store_true", help="print the figures as JSON")
    es.add_argument("--quiet", action="store_true",
                    help="print only errors and the headline line (what the hand is worth "
                         "over an average hand)")
    es.add_argument("--plugin", action="append", metavar="MODULE",
                    help=PLUGIN_HELP)
    es.set_defaults(func=cmd_estimate)

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
    ad.add_argument("--plugin", action="append", metavar="FILE", help=PLUGIN_HELP)
    ad.add_argument("--seed", default=None,
                    help="the ladder's master seed, fixed at creation (default 0)")
    ad.add_argument("--rule", action="append", metavar="NAME=VALUE",
                    help="a rules variant of the ladder, fixed at creation (repeatable)")
    ad.set_defaults(func=cmd_ladder_add)
    ru = lsub.add_parser("run", help="play more pairs where the ranking is least certain")
    ru.add_argument("--pairs", type=bounded_int("pairs a run plays", 1, MAX_RUN_PAIRS),
                    required=True, help=f"pairs to play (1 … {MAX_RUN_PAIRS:,})")
    ru.add_argument("--jobs", type=bounded_int("workers of a run", 1, MAX_JOBS), default=1,
                    help=f"parallel workers (default 1; at most {MAX_JOBS:,})")
    ru.add_argument("--force-jobs", action="store_true",
                    help="run --jobs workers even when there are more than CPUs")
    ru.add_argument("--backend", choices=BACKENDS, help="what runs the chunks (as tournament)")
    ru.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address")
    ru.add_argument("--matchup", metavar="A,B", help="play only this matchup")
    ru.add_argument("--chunk", type=bounded_int("pairs of a chunk", 1, CHUNK_MAX), default=None,
                    help=f"pairs per chunk: the unit of scheduling and of commits (default: "
                         f"sized to about {CHUNK_SECONDS:g} s of play per chunk, the first "
                         f"{CHUNK_FIRST}; at most {CHUNK_MAX:,})")
    ru.add_argument("--timeout", type=float, default=0.0,
                    help=f"seconds per Python-strategy decision (0: no limit; at most "
                         f"{MAX_TIMEOUT:,.0f})")
    ru.add_argument("--no-progress", action="store_true", help="no progress bar")
    ru.add_argument("--quiet", action="store_true",
                    help="no progress bar or ranking: print only errors and the final line")
    ru.add_argument("--plugin", action="append", metavar="FILE", help=PLUGIN_HELP)
    ru.set_defaults(func=cmd_ladder_run)
    im = lsub.add_parser("import", help="add finished tournament results folders (data only)")
    im.add_argument("results", nargs="+", metavar="RESULTS", help="results folders")
    im.set_defaults(func=cmd_ladder_import)
    sh = lsub.add_parser("show", help="the ranking with intervals, crosstable and fit")
    sh.add_argument("--json", action="store_true", help="print it as JSON")
    sh.add_argument("--html", metavar="OUT.html", help="write a self-contained page")
    sh.add_argument("--anchor", metavar="PLAYER[=ELO]", help=anchor_help)
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

    tu = sub.add_parser("tune", help="tune a strategy's numeric parameters by SPSA on "
                                     "duplicate deals (docs/tuning.md)")
    tu.add_argument("spec", metavar="SPEC", help="the start, e.g. greedy or greedy(show_at=0.5)")
    tu.add_argument("--param", action="append", metavar="NAME=LO..HI[:C_END[:R_END]]",
                    help="a parameter to tune and its range (repeatable); C_END, R_END: "
                         "SPSA step sizes (default a tenth of the range, at least 0.6 for an "
                         "integer; 0.05)")
    tu.add_argument("--against", metavar="SPEC|field",
                    help="score theta+ and theta- each against this opponent (specs separated "
                         "by commas, or field: random,greedy,expert) instead of head to head")
    tu.add_argument("--pairs", type=_upto(_TUNE, "MAX_PAIRS", "pairs per iteration"), default=250,
                    help="duplicate pairs per iteration (default 250)")
    tu.add_argument("--iterations", type=_upto(_TUNE, "MAX_ITERATIONS", "iterations"), default=4000,
                    help="SPSA iterations (default 4000)")
    tu.add_argument("--confirm", type=_upto(_TUNE, "MAX_CONFIRM", "pairs of the confirmation", 0),
                    default=20000,
                    help="pairs of the confirmation match, tuned vs start, on fresh deals "
                         "(default 20000; 0: none)")
    tu.add_argument("--jobs", type=_upto(_TUNE, "MAX_JOBS", "workers"), default=1,
                    help="parallel workers (default 1)")
    tu.add_argument("--backend", choices=BACKENDS, help="what runs the chunks (as tournament)")
    tu.add_argument("--seed", default="0", help="the tuner's seed: deals and signs (default 0)")
    tu.add_argument("--out", default="tune", metavar="DIR",
                    help="checkpoint, trajectory.csv/.png, confirm.json (default ./tune)")
    tu.add_argument("--resume", action="store_true", help="continue the checkpoint in --out")
    tu.add_argument("--no-progress", action="store_true", help="no progress bar")
    tu.add_argument("--plugin", action="append", metavar="FILE", help=PLUGIN_HELP)
    tu.set_defaults(func=cmd_tune)

    tr = sub.add_parser("train", help="distil a teacher into the learned player's network "
                                      "(DAgger; needs the train extra; docs/learning.md)")
    tr.add_argument("--teacher", default="expert",
                    help="a compiled built-in player whose choices are the labels "
                         "(default expert)")
    tr.add_argument("--rounds", type=_upto(_TRAIN, "MAX_ROUNDS", "rounds"), default=None,
                    help="DAgger rounds (default: until --hours is spent; 6 without --hours)")
    tr.add_argument("--hours", type=_train_hours, default=None,
                    help="wall-time budget: stop cleanly, weights exported, when it is spent")
    tr.add_argument("--deals", type=_upto(_TRAIN, "MAX_DEALS", "deals per round"), default=2000,
                    help="deals whose labels each round collects (default 2000)")
    tr.add_argument("--epochs", type=_upto(_TRAIN, "MAX_EPOCHS", "epochs per round"), default=2,
                    help="passes over all labels so far after each round (default 2)")
    tr.add_argument("--holdout", type=_upto(_TRAIN, "MAX_HOLDOUT", "held-out deals"), default=200,
                    help="deals of the held-out labels (teacher's play; default 200)")
    tr.add_argument("--eval-pairs", type=_upto(_TRAIN, "MAX_EVAL_PAIRS", "pairs per evaluation", 0),
                    default=500,
                    help="duplicate pairs against greedy after each epoch (default 500; 0: none)")
    tr.add_argument("--hidden", default="128,64,64", metavar="H1,H2,G",
                    help="the network's sizes (default 128,64,64)")
    tr.add_argument("--batch", type=_upto(_TRAIN, "MAX_BATCH", "examples per minibatch"),
                    default=256,
                    help="minibatch (default 256)")
    tr.add_argument("--lr", type=float, default=1e-3, help="Adam's step size (default 0.001)")
    tr.add_argument("--soft", type=float, default=1.0,
                    help="weight of the soft targets, the teacher's play values q as "
                         "softmax(q / tau) (expert has them; default 1; 0: the label alone)")
    tr.add_argument("--tau", type=float, default=0.3,
                    help="the soft targets' temperature, points per deal (default 0.3)")
    tr.add_argument("--regret", type=float, default=0.0,
                    help="weight of the policy's expected loss against the teacher's best "
                         "value, sum p (max q - q) in points (default 0: none)")
    tr.add_argument("--labels", default=None, metavar="DIR",
                    help="a folder that caches every round's labels by what decides them "
                         "(teacher, learner weights, deals, beta, features): another run of "
                         "the same rounds reuses them instead of asking the teacher again")
    tr.add_argument("--no-augment", action="store_true",
                    help="no side-suit renaming of the minibatches (default: each example's "
                         "three side suits renamed at random)")
    tr.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                    help="training arithmetic (default float32; weights are saved as float64)")
    tr.add_argument("--seed", default="0", help="the recipe's seed: deals, init, order "
                                                "(default 0)")
    tr.add_argument("--eval-seed", default=None,
                    help="the evaluation's seed (default: --seed + 1)")
    tr.add_argument("--jobs", type=_upto(_TRAIN, "MAX_JOBS", "workers"), default=1,
                    help="parallel workers for labels and evaluation (default 1)")
    tr.add_argument("--out", default="train", metavar="DIR",
                    help="checkpoint, labels, weights, curve.csv/.md/.png, train.log "
                         "(default ./train)")
    tr.add_argument("--resume", action="store_true", help="continue the checkpoint in --out")
    tr.add_argument("--retrain", default=None, metavar="RUN",
                    help="instead of collecting labels: train a fresh network (--seed, "
                         "--epochs, sizes, loss) on the labels of the earlier run in folder RUN")
    tr.add_argument("--merge", nargs="+", default=None, metavar="FILE",
                    help="instead of training: write the networks of these weights files "
                         "into --out FILE.npz, an ensemble whose scores learned averages")
    tr.set_defaults(func=cmd_train)
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
            args.plugin = _plugin_args(args.plugin)
        if args.command not in _COMPILING_COMMANDS:
            return int(args.func(args) or 0)
        # `kill PID` stops like Ctrl-C (one line, exit 130), also inside compiled code
        # (sim.loops.plugins runs it on a helper thread while this one waits)
        main_thread = threading.current_thread() is threading.main_thread()
        term = args.command in ("play", "estimate", "bench") and main_thread
        previous = signal.signal(signal.SIGTERM, _raise_interrupt) if term else None
        try:
            # every command that may compile says so (once) when it does; ``done``: the
            # time it took, at the end, for those that print it nowhere earlier
            with _compiling(args, done=args.command in ("bench", "replay", "validate")):
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
