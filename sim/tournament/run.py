"""Tournaments: matchups of strategies over seeded (duplicate) deals, run in parallel chunks.

How a run is organised
----------------------
- **Matchups.** A head-to-head is one matchup; a round robin every pair of players; a gauntlet
  the first player against each of the others. In matchup ``(A, B)`` *orientation* 0 seats A in
  0 and 2 and B in 1 and 3; orientation 1 swaps the teams.
- **Deals.** Every matchup plays deals ``first_deal … first_deal+deals-1`` of the config's seed:
  the same cards in every matchup and every run (counter-based RNG, docs/engine.md).
  *Duplicate* plays each deal in both orientations; the unit of statistics is the pair and its
  result ``x`` is A's mean settlement per deal per player over the two deals. Without
  duplicate, deal ``d`` is played once, in orientation ``d % 2``, and ``x`` is A's settlement.
- **Chunks.** The deals of a matchup are cut into chunks of ``chunk_size`` deals. Chunk ``k``
  of every matchup comes before chunk ``k+1`` of any (so a round robin progresses evenly).
  A chunk is the unit of work (worker processes forked from the run, joblib's loky or
  threading, or dask futures; ``sim.tournament.forkpool``) and of storage
  (``chunks/c000123.npz`` and its table ``deals/c000123.parquet``, written atomically as soon
  as it finishes).
- **Determinism.** Per-deal results depend only on seed, deal and seats; chunk statistics are
  exact sums and counts (``sim.analysis.stats``) merged in chunk order; so every table is
  identical for any ``--jobs``, backend and chunk size. An SPRT (head-to-head: chunk order is
  deal order) looks after every pair of the contiguous prefix of finished chunks, from each
  chunk's per-pair results (kept with it), so it stops at the same pair for any chunk size
  and ``--jobs``; the chunk it stops in is cut to the pairs up to the deciding one
  (``results.cut_chunk``) and later chunks are dropped, so nothing past that pair counts.
- **Resume.** The finished chunk files are the run's state. ``--resume`` reads them, checks the
  stored config's hash and plays only the missing chunks; a killed run loses at most the chunks
  that were in flight.

The chunk plan and tallies are ``sim.tournament.chunks``, the results folder (chunk files,
the per-deal table, reading a run back) ``sim.tournament.results`` (its lock
``sim.tournament.lock``), a worker's play of one chunk ``sim.tournament.worker``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from sim.analysis import report
from sim.bots import sandbox
from sim.core._cache import compiling, kernels_cached
from sim.errors import ConfigError, OutputError, WorkerError
from sim.loops import runner
from sim.rules import Rules
from sim.tournament import swings
from sim.tournament.chunks import (
    DEAL_VALUES,
    Aggregate,
    Chunk,
    ChunkResult,
    DealValues,
    games_per_deal,
    plan_chunks,
    tally_from_json,
)
from sim.tournament.forkpool import ForkPool, can_fork
from sim.tournament.results import (
    CHUNK_DIR,
    atomic_write,
    chunk_files,
    cut_chunk,
    drop_after,
    load_done,
    locked,
    read_config,
    save_chunk,
    write_config,
    write_faults,
    write_records,
)
from sim.tournament.standings import Progress, Standings
from sim.tournament.worker import Task, play_chunk, prepare
from strategies.registry import load_plugins

# --- the run ------------------------------------------------------------------------------


def _tasks(cfg: Any, chunks: Sequence[Chunk], plugins: Sequence[str] = (),
           bots: Sequence[Any] = ()) -> Iterator[Task]:
    ms = cfg.matchups()
    # the workers look for plug-ins where this process found them
    path = tuple(dict.fromkeys([os.getcwd(), cfg.base_dir, *sys.path]))
    # and import the config's plug-ins and those named with --plugin before resolving specs
    mods = tuple(dict.fromkeys([*cfg.plugins, *plugins]))
    for c in chunks:
        a, b = ms[c.matchup]
        yield Task(c, cfg.seed, a, b, cfg.players[a], cfg.players[b], cfg.duplicate,
                   cfg.rules, cfg.timeout, mods, path, cfg.deal_table, cfg.first_deal,
                   cfg.records, cfg.record_filter, cfg.record_limit, cfg.sprt is not None,
                   len(ms) > 1, tuple(bots))


WATCHDOG_POLL = 1.0  # seconds between a worker's checks that the run's process is alive
_WATCHDOG: list[Any] = []


def _play_in_worker(task: Task, parent: int) -> ChunkResult:
    """``play_chunk`` in a worker process that ends itself when ``parent`` (the process of
    the run) dies: a ``kill -9`` of the run must not leave loky workers running for ever.
    Such a worker ignores Ctrl-C from its first chunk on: the run's process handles it and
    stops the workers; a KeyboardInterrupt landing in loky's own code between two chunks
    printed a worker's traceback (seen under load in the Ctrl-C test)."""
    if os.getpid() != parent and not _WATCHDOG:
        _ignore_sigint()
        _watch_parent(parent)
    return play_chunk(task)


def _ignore_sigint() -> None:
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread (a threading backend): Ctrl-C is not ours
        pass


def _watch_parent(parent: int) -> None:
    """Start a daemon thread that exits this process once ``parent`` is gone."""
    import threading

    direct = os.getppid() == parent  # then a dead parent shows as a new parent pid

    def gone() -> bool:
        if direct:
            return os.getppid() != parent
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return True
        except OSError:  # exists, owned by someone else
            pass
        return False

    def watch() -> None:
        while not gone():
            time.sleep(WATCHDOG_POLL)
        os._exit(1)

    t = threading.Thread(target=watch, name="shuangkou-parent-watchdog", daemon=True)
    t.start()
    _WATCHDOG.append(t)


def loops_cached(cfg: Any) -> bool:
    """Whether the loops of every matchup (one per set of strategy kinds) are compiled."""
    for a, b in cfg.matchups():
        tables = runner.compiled_tables(runner.make_seats([cfg.players[a], cfg.players[b]]))
        if tables is not None and not kernels_cached(tables.loops.kernel_name()):
            return False
    return True


def warm_up(cfg: Any) -> None:
    """Compile the kernels once here, before the workers start, so that each worker loads
    them from the on-disk cache instead of compiling its own copy (about 50 s each); on a warm
    cache, load them into this process (one deal of each set of strategy kinds). A cold cache
    prints one notice for the whole run, and one line with the time it took."""
    rules = Rules.from_dict(dict(cfg.rules))
    warm = set()
    label = f"tournament {', '.join(cfg.players)}"
    with compiling(label if len(label) <= 100 else f"tournament of {len(cfg.players)} players"):
        for a, b in cfg.matchups():
            seats = runner.make_seats([cfg.players[a], cfg.players[b]])
            tables = runner.compiled_tables(seats)
            if tables is not None and tables.loops.key not in warm:
                warm.add(tables.loops.key)  # one loop per set of strategy kinds
                runner.summaries(cfg.seed, cfg.first_deal, 1, seats, rules,
                                 cfg.timeout or None)


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cap_jobs(cfg: Any, force: bool = False) -> tuple[Any, str | None]:
    """``cfg`` with ``jobs`` cut to this machine's CPU count, and a line saying so.

    More workers than CPUs only add memory (each loky worker holds its own engine) and time;
    ``force`` keeps the number. A remote dask scheduler's workers are not on this machine:
    left alone."""
    cpus = cpu_count()
    if force or cfg.jobs <= cpus or (cfg.backend == "dask" and cfg.scheduler):
        return cfg, None
    return dataclasses.replace(cfg, jobs=cpus), (
        f"jobs {cfg.jobs} is more than the {cpus} CPUs of this machine: running {cpus} "
        f"(--force-jobs runs {cfg.jobs})")


SCHEDULER_TIMEOUT = 30.0  # seconds to wait for a dask scheduler's answer


def _connect(client_class: Any, address: str) -> Any:
    """A dask ``Client`` of ``address``, or a ``ConfigError`` within ``SCHEDULER_TIMEOUT``.

    ``Client(address, timeout=…)`` waits forever on a server that accepts the connection but
    never speaks (not a dask scheduler), so the connection is made in a daemon thread and
    abandoned when it takes too long."""
    import threading

    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = client_class(address, timeout=SCHEDULER_TIMEOUT)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=connect, name="dask-connect", daemon=True)
    t.start()
    t.join(SCHEDULER_TIMEOUT * 1.2 + 1)  # room for the Client's own timeout error
    if "client" in box:
        return box["client"]
    e = box.get("error")
    why = f"{type(e).__name__}: {' '.join(str(e).split())}" if e is not None else \
        f"no answer within {SCHEDULER_TIMEOUT:g} s (is it a dask scheduler?)"
    raise ConfigError(f"dask scheduler {address!r} cannot be reached: {why}; the address is "
                      f"tcp://HOST:PORT of a running dask-scheduler")


def resolve_backend(cfg: Any) -> str:
    """What runs the chunks of ``cfg``: ``"in-process"`` for one job (dask excepted), else
    the backend, with ``auto`` made ``fork`` where that is safe (``forkpool.can_fork``: Linux,
    no other Python thread running in this process) and ``loky`` elsewhere."""
    if cfg.backend == "dask":
        return "dask"
    if cfg.jobs == 1:
        return "in-process"
    if cfg.backend == "auto":
        return "fork" if can_fork() else "loky"
    return cfg.backend


@contextlib.contextmanager
def executor(cfg: Any, backend: str) -> Iterator[Callable[[Iterator[Task]],
                                                            Iterator[ChunkResult]]]:
    """A function running tasks on ``backend`` (``resolve_backend``) and yielding results as
    they complete. Forked workers are started on entry, from this process as it is: the caller
    has loaded the kernels (``warm_up``) so that they start with them. With the dask backend,
    connected to ``cfg.scheduler`` (or a cluster on this machine) meanwhile."""
    if backend == "in-process":  # no worker start-up, easy to debug
        yield lambda tasks: (play_chunk(t) for t in tasks)
        return
    if backend == "fork":
        with ForkPool(cfg.jobs, _watch_parent) as pool:
            yield lambda tasks: pool.map_unordered(play_chunk, tasks)
        return
    if backend != "dask":
        # joblib is imported only here, where it runs the chunks (0.1 s of the run's clock)
        from joblib import Parallel, delayed

        yield lambda tasks: Parallel(
            n_jobs=cfg.jobs, backend=backend, batch_size=1, return_as="generator_unordered",
            pre_dispatch="2*n_jobs")(delayed(_play_in_worker)(t, os.getpid()) for t in tasks)
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ConfigError("backend 'dask' needs the dask extra: "
                          "pip install 'shuangkou[dask]'") from None
    import logging
    import signal

    cluster = None
    if cfg.scheduler:
        client = _connect(Client, cfg.scheduler)
    else:  # no address: a cluster on this machine, one process per job
        # its workers ignore Ctrl-C (the run's process stops them): spawned while SIGINT is
        # ignored here, they keep ignoring it, and a restarted one is told by the plug-in
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            cluster = LocalCluster(n_workers=cfg.jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.CRITICAL)
        finally:
            if main:
                signal.signal(signal.SIGINT, old)
        client = Client(cluster)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.register_plugin(_ignore_sigint_plugin())
    try:
        yield lambda tasks: _dask_results(client, tasks, cfg.jobs)
    finally:
        with warnings.catch_warnings(), _quiet_logs("distributed"):
            warnings.simplefilter("ignore")
            client.close()
            if cluster is not None:
                cluster.close()


def _ignore_sigint_plugin() -> Any:
    """A dask worker plug-in: the workers of a cluster on this machine ignore Ctrl-C (the
    run's process stops them; each printed a traceback). Sent by value (cloudpickle)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class IgnoreSigint(WorkerPlugin):
        name = "shuangkou-ignore-sigint"

        def setup(self, worker: Any) -> None:
            import signal

            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            except ValueError:  # not the main thread: nothing to do
                pass

    return IgnoreSigint()


@contextlib.contextmanager
def _quiet_logs(name: str) -> Iterator[None]:
    import logging

    log = logging.getLogger(name)
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


DASK_NO_WORKERS_TIMEOUT = 60.0  # seconds a dask cluster may have no worker while tasks wait


def _dask_results(client: Any, tasks: Iterator[Task], jobs: int) -> Iterator[ChunkResult]:
    """Results of ``tasks`` on a dask cluster, as they complete, with at most twice its
    threads of chunks in flight. A task that failed (a worker that died while playing it
    ``distributed.scheduler.allowed-failures`` + 1 times: ``KilledWorker``; an error of a bot)
    is raised as soon as it fails; a cluster without a worker for
    ``DASK_NO_WORKERS_TIMEOUT`` seconds ends the run (tasks would wait for ever)."""
    from dask.distributed import as_completed

    with _quiet_logs("distributed"):
        try:
            threads = sum(client.nthreads().values())
        except Exception:  # noqa: BLE001 - an old scheduler: the configured jobs
            threads = jobs
        window = max(2, 2 * (threads or jobs))
        todo = iter(tasks)
        done = as_completed()
        inflight = 0

        def submit() -> bool:
            t = next(todo, None)
            if t is None:
                return False
            done.add(client.submit(play_chunk, t, pure=False,
                                   key=f"shuangkou-chunk-{t.chunk.index}-{os.getpid()}-"
                                       f"{time.monotonic_ns()}"))
            return True

        while inflight < window and submit():
            inflight += 1
        lonely_since = None
        try:
            while inflight:
                batch = done.next_batch(block=False) if done.has_ready() else []
                if not batch:
                    if client.scheduler_info().get("workers"):
                        lonely_since = None
                    elif lonely_since is None:
                        lonely_since = time.monotonic()
                    elif time.monotonic() - lonely_since > DASK_NO_WORKERS_TIMEOUT:
                        raise WorkerError(f"the dask cluster has had no worker for "
                                          f"{DASK_NO_WORKERS_TIMEOUT:g} s while chunks wait")
                    time.sleep(0.05)
                    continue
                for fut in batch:
                    inflight -= 1
                    if fut.status == "error":
                        raise fut.exception()
                    if fut.status != "finished":  # cancelled or lost by the cluster
                        raise WorkerError(f"the dask cluster gave up a chunk ({fut.status})")
                    res = fut.result()
                    fut.release()
                    yield res
                    if submit():
                        inflight += 1
        finally:
            for fut in list(done.futures):
                fut.cancel()


def run_tournament(cfg: Any, resume: bool = False, progress: bool | None = None,
                   stop_after: int | None = None, echo: Any = None,
                   plugins: Sequence[str] = (), bots: Sequence[Any] = ()
                   ) -> dict[str, Any] | None:
    """Run (or finish, with ``resume``) a tournament and write its results folder.

    Parameters
    ----------
    cfg : a ``sim.tournament.config.TournamentConfig``; results go to ``cfg.out``.
    resume : finish the run in ``cfg.out``: play only chunks without a file there. Refused if
        the stored config differs from ``cfg`` in anything that changes results.
    progress : show the tqdm bar (default ``cfg.progress``).
    stop_after : testing hook: stop, as if killed, once this many chunks were written in
        this call (no summary is written); returns None.
    echo : called with the summary tables as markdown at the end (e.g. ``print``).
    plugins : modules the user named with ``--plugin`` (already imported here): the workers
        import them too. Nothing is imported from the results folder.
    bots : the ``sim.bots.spec.BotSpec`` of the players that are bots in other processes
        (``--bot``, registered here): each worker starts its own (docs/bots.md).

    Returns
    -------
    dict
        The ``summary.json`` contents (see ``sim.analysis.report``).
    """
    out = cfg.out
    chunks = plan_chunks(cfg)
    config_path = os.path.join(out, "config.json")
    if os.path.exists(config_path):
        if not resume:
            raise ConfigError(f"results folder {out!r} already holds a run: add --resume to "
                              f"finish it, or choose another --out")
        stored = read_config(out)
        diffs = stored.differences(cfg)
        if diffs:
            raise ConfigError(f"cannot resume {out!r}: its config differs from this one in "
                              f"{'; '.join(diffs)} (stored -> now); run without --resume "
                              f"into another --out")
    os.makedirs(os.path.join(out, CHUNK_DIR), exist_ok=True)
    with locked(out):  # one writer: a second run here would delete and redo this one's work
        try:
            return _run_locked(cfg, chunks, progress, stop_after, echo, plugins, bots)
        except OSError as e:  # disk full, file too large, …: one line, what is kept
            raise _write_failed(e, out, len(chunks)) from None


def _write_failed(e: OSError, out: str, total: int) -> OutputError:
    """The line for a file of the run that could not be written ("No space left on device",
    "File too large"): which file, why, and that the finished chunks are saved."""
    where = f" {os.fspath(e.filename)!r}" if e.filename else ""
    try:
        saved = len(chunk_files(out))
    except OSError:
        saved = 0
    then = ("run the same command with --resume to finish" if saved < total else
            "every chunk is finished: run the same command with --resume (or shuangkou report) "
            "to write the tables and report")
    return OutputError(f"cannot write{where}: {e.strerror or e}; {saved} of {total} chunks are "
                       f"saved in {out!r}: make room, then {then}")


def _run_locked(cfg: Any, chunks: list[Chunk], progress: bool | None, stop_after: int | None,
                echo: Any, plugins: Sequence[str], bots: Sequence[Any] = ()
                ) -> dict[str, Any] | None:
    """``run_tournament`` once it holds the results folder's lock."""
    out = cfg.out
    run_id = write_config(out, cfg)
    agg = Aggregate(cfg, chunks)
    done_before = load_done(out, cfg, chunks, agg, clean=True)
    done = {int(os.path.basename(p)[1:7]) for p in chunk_files(out)}
    per_deal = games_per_deal(cfg)
    # progress counts deals (a duplicate deal is two games), as the config does
    total_deals = cfg.deals * len(cfg.matchups())  # arithmetic: the plan stays lazy
    backend = resolve_backend(cfg)
    if not agg.finished and (backend in ("in-process", "fork", "dask")
                             or not loops_cached(cfg)):
        # before the clock and the bar: compiling or loading the kernels is start-up, not
        # deals/s. This process plays (in-process) or forks its workers with the kernels in
        # memory (fork); loky's workers load them from the cache themselves, inside the clock.
        warm_up(cfg)
    if backend == "in-process" and cfg.plots and not agg.finished:
        report.preload_plotting()  # meanwhile, on the other core (no fork follows: in-process)
    t0 = time.perf_counter()
    deals_now = written = 0

    live = Standings(cfg.players, cfg.matchups())
    live.sprt = agg.sprt
    for m, t in enumerate(agg.tallies):  # the chunks of an earlier session
        if t["pairs"].n:
            live.add(m, t)

    def new_bar() -> Any:
        return Progress(cfg.name, total_deals, sum(chunks[i].n for i in done),
                        cfg.progress if progress is None else progress, live)

    bar = None
    interrupted = False
    sent: set[int] = set()  # chunks handed to the workers and not saved yet
    try:
        if not agg.finished:
            # (set.add returns None: each chunk is noted in ``sent`` as it is handed out)
            todo = (t for t in _tasks(cfg, (c for c in chunks if c.index not in done), plugins,
                                       bots)
                    if agg.stop_at is None and not sent.add(t.chunk.index))
            with executor(cfg, backend) as execute:
                bar = new_bar()  # after forked workers start: the bar starts a thread
                results = execute(todo)
                for res in results:
                    if agg.stop_at is not None and res.chunk.index > agg.stop_at:
                        continue
                    save_chunk(out, res, cfg.hash(), run_id)
                    sent.discard(res.chunk.index)
                    written += 1
                    deals_now += res.chunk.n
                    tally = tally_from_json(res.tally)
                    agg.add(res.chunk, tally, res.tally_cols)
                    live.add(res.chunk.matchup, tally)  # live standings: once per chunk
                    bar.update(res.chunk.n)
                    if stop_after is not None and written >= stop_after:
                        interrupted = True
                        break
                    if agg.stop_at is not None:
                        break
                close = getattr(results, "close", None)
                if close:
                    with warnings.catch_warnings():  # joblib warns about the unused results
                        warnings.filterwarnings(  # (its "... not used" and "... cancelled")
                            "ignore", message=".*(executed +but not used|have been cancelled)")
                        close()  # stop the workers early when the SPRT decided
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"interrupted: {len(chunk_files(out))} of {len(chunks)} chunks are saved in "
              f"{out!r}; run the same command with --resume to finish", file=sys.stderr)
        raise
    except Exception as e:
        if not _worker_died(e):
            raise
        lost = ", ".join(f"{i} (matchup {chunks[i].matchup}, deals {chunks[i].first}-"
                         f"{chunks[i].first + chunks[i].n - 1})" for i in sorted(sent)) or "?"
        raise WorkerError(f"a worker process died ({_death(e)}) while playing one of chunks "
                          f"{lost}: {len(chunk_files(out))} of {len(chunks)} chunks are saved "
                          f"in {out!r}; run the same command with --resume to finish") from None
    finally:
        if bar is None and agg.finished:
            bar = new_bar()  # nothing to play: the bar is drawn full, once
        if bar is not None:
            bar.close()
    if interrupted:
        return None
    if agg.stop_at is not None:
        drop_after(out, agg.stop_at)
        if agg.cut is not None:  # the SPRT decided inside this chunk: keep only its pairs
            cut_chunk(out, cfg, chunks[agg.cut[0]], agg.cut[1])
    wall = time.perf_counter() - t0
    run_info = {"wall_seconds": wall, "deals_this_session": deals_now,
                "games_this_session": deals_now * per_deal,
                "deals_per_second": deals_now / wall if wall > 0 else None,
                "games_per_second": deals_now * per_deal / wall if wall > 0 else None,
                "chunks_this_session": written, "chunks_before": done_before,
                "jobs": cfg.jobs, "backend": backend,
                "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    if bots:  # what ran as each bot, and the sandbox layer it ran under (docs/bots.md)
        run_info["bots"] = [{"name": b.name, "program": b.program,
                             "sandbox": sandbox.layer(b.sandbox)} for b in bots]
    atomic_write(os.path.join(out, "run.json"),
                  lambda f: f.write(json.dumps(run_info, indent=2) + "\n"), "w")
    write_records(out, cfg, agg)
    write_faults(out, agg)
    state = agg.state()
    state["run"] = run_info
    _keep_swings(cfg, chunks, plugins, state, bots)
    return report.write_all(state, out, plots=cfg.plots, echo=echo)


def _keep_swings(cfg: Any, chunks: Sequence[Chunk], plugins: Sequence[str],
                 state: dict[str, Any], bots: Sequence[Any] = ()) -> None:
    """Replay the largest swings into ``swings.jsonl`` (``sim.tournament.swings``); a player that
    cannot be replayed here costs the divergences, never the run's results."""
    try:
        prepare(next(_tasks(cfg, chunks[:1], plugins, bots)))  # the plug-ins, as a worker does
        swings.keep(cfg.out, cfg, state)
    except Exception as e:  # noqa: BLE001 - reported in one line; the tables still follow
        for name in (swings.SWINGS_FILE, swings.SWINGS_PAGE):  # an earlier run's: not this one's
            with contextlib.suppress(OSError):
                os.remove(os.path.join(cfg.out, name))
        print(f"swing deals not kept: {type(e).__name__}: {' '.join(str(e).split())[:200]}",
              file=sys.stderr)


def _worker_died(e: BaseException) -> bool:
    """Whether ``e`` says a worker process ended abruptly (loky, a process pool, dask)."""
    from concurrent.futures import BrokenExecutor

    return isinstance(e, (BrokenExecutor, WorkerError)) or type(e).__name__ in (
        "TerminatedWorkerError", "KilledWorker")


def _death(e: BaseException) -> str:
    """The cause of a worker's death in a few words, e.g. ``exit codes {SIGSEGV(-11)}``."""
    import re

    if isinstance(e, WorkerError):  # the dask cluster's own account (_dask_results)
        return str(e)
    if type(e).__name__ == "KilledWorker":  # dask: its message runs to five sentences
        n = re.search(r"on (\d+) different workers", str(e))
        return f"KilledWorker: the {n.group(1) + ' ' if n else ''}dask workers that ran it died"
    m = re.search(r"exit codes? of the workers (?:are|is) (\{[^}]*\})", str(e))
    if m:
        return f"{type(e).__name__}, exit codes {m.group(1)}"
    first = str(e).strip().splitlines()
    return f"{type(e).__name__}: {first[0]}" if first else type(e).__name__




# --- duplicate pairs of given matchups, for callers that are not tournaments ----------------
@dataclasses.dataclass(frozen=True)
class _PairRun:
    jobs: int
    backend: str = "auto"
    scheduler: str = ""


PlayPairs = Callable[[Sequence[tuple[str, str, int, int]]], list[np.ndarray]]


@contextlib.contextmanager
def pair_player(seed: int, jobs: int = 1, backend: str = "auto", rules: Any = (),
                timeout: float = 0.0, plugins: Sequence[str] = (),
                warm_up: Sequence[tuple[str, str]] = ()) -> Iterator[PlayPairs]:
    """A function ``play(matchups)`` that plays each ``(a_spec, b_spec, first, n)`` as duplicate
    pairs on deals ``first … first+n-1`` of ``seed`` and returns, per matchup, twice each pair's
    result (``chunks.pair_results``: A's mean settlement per deal per player, as integers) in
    deal order. The chunks run on ``jobs`` workers of ``backend`` (started once, on entry, and
    reused by every call); results depend only on seed, deals and specs, never on ``jobs``.
    ``warm_up``: ``(a_spec, b_spec)`` pairs whose compiled loops are loaded (compiled once,
    with a notice, on a cold cache) before the workers start, so that no worker compiles."""
    jobs = max(1, min(int(jobs), cpu_count()))
    run = _PairRun(jobs, backend)
    backend_now = resolve_backend(run)
    mods = tuple(plugins)
    path = tuple(dict.fromkeys([os.getcwd(), *sys.path]))
    rules_t = tuple(sorted(dict(rules).items()))
    warmed: set[Any] = set()

    def warm(matchups: Sequence[tuple[str, str, int, int]]) -> None:
        for a, b in matchups:
            seats = runner.make_seats([a, b])
            tables = runner.compiled_tables(seats)
            key = tables.loops.key if tables is not None else None
            if key is not None and key not in warmed:
                warmed.add(key)
                with compiling(f"{a} vs {b}"):
                    runner.summaries(seed, 0, 1, seats, Rules.from_dict(dict(rules_t)),
                                     timeout or None)

    def tasks(matchups: Sequence[tuple[str, str, int, int]]) -> Iterator[Task]:
        k = 0
        for m, (a, b, first, n) in enumerate(matchups):
            size = max(1, -(-n // jobs))
            for start in range(first, first + n, size):
                yield Task(Chunk(k, m, start, min(size, first + n - start)), seed, 0, 1, a, b,
                           True, rules_t, timeout, mods, path, False, first, 0, "", 1, False,
                           True)
                k += 1

    if mods:
        load_plugins(mods, [os.getcwd()])
    warm(warm_up)
    with executor(run, backend_now) as execute:
        def play(matchups: Sequence[tuple[str, str, int, int]]) -> list[np.ndarray]:
            if backend_now == "in-process":
                warm([(a, b) for a, b, _, _ in matchups])
            parts: dict[int, list[tuple[int, np.ndarray]]] = {m: [] for m in
                                                             range(len(matchups))}
            for res in execute(tasks(matchups)):
                x2 = DealValues.from_dict(res.tally[DEAL_VALUES]).values
                parts[res.chunk.matchup].append((res.chunk.first, x2))
            return [np.concatenate([x for _, x in sorted(parts[m], key=lambda p: p[0])]
                                   or [np.zeros(0, dtype=np.int64)])
                    for m in range(len(matchups))]

        yield play
