"""The ladder at scale (issue 22): a synthetic database of N pairs, the time of
``shuangkou ladder show`` on it, its file size, and the time to import a synthetic
tournament results folder of M pairs; and the harness throughput of ``ladder run`` against a
plain tournament of the same pairs (CPU time, interleaved).

    python benchmarks/ladder_scale.py scale --pairs 10000000 --import-pairs 1000000
    python benchmarks/ladder_scale.py throughput --pairs 100000 --rounds 3

The synthetic pairs: 8 players of spread strengths, every matchup on the same deal numbers
(a deal effect shared by all matchups, as real deals are), per-pair results ``x2`` drawn as
integers (about 15% draws), chunks of 1,000 pairs committed as a run commits them. The
imported folder is a round robin of 3 players written chunk file by chunk file as a
tournament writes it (statistics with their per-pair results), without playing: the import
reads what a real folder holds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

PLAYERS = ["random", "random(show_prob=0.1)", "random(show_prob=0.3)",
           "random(show_prob=0.5)", "random(show_prob=0.7)", "random(show_prob=0.9)",
           "greedy", "random(show_prob=0.2)"]


def make_db(path: str, pairs: int, chunk: int = 1000, seed: int = 1) -> float:
    """A ladder of ``pairs`` synthetic pairs at ``path``; returns the seconds it took."""
    from sim.tools.ladder import Ladder

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1.5, 1.5, len(PLAYERS))
    with Ladder.open(path, create=True) as lad:
        lad.add(PLAYERS)
        lad.con.execute("PRAGMA cache_size = -262144")  # 256 MiB while building
        ids = [p.id for p in lad.players()]
        ms = [(i, j) for i in range(len(ids)) for j in range(i + 1, len(ids))]
        with lad.transaction() as con:
            mids = [lad.matchup(ids[i], ids[j], con) for i, j in ms]
        per = -(-pairs // len(ms))
        deal_effect = rng.normal(0, 1.0, per + chunk)
        left = pairs
        k = 0
        while left > 0:
            with lad.transaction() as con:  # 28 chunks a transaction (one per matchup)
                for m, (i, j) in enumerate(ms):
                    n = min(chunk, left)
                    if n <= 0:
                        break
                    first = k * chunk
                    deals = np.arange(first, first + n, dtype=np.int64)
                    mu = strength[i] - strength[j]
                    x2 = np.rint(2 * (mu + deal_effect[deals] * 0.5
                                      + rng.normal(0, 2.0, n))).astype(np.int32)
                    lad.insert_chunk(con, mids[m], deals, x2)
                    left -= n
            k += 1
    return time.perf_counter() - t0


def make_folder(out: str, pairs: int, chunk: int = 10_000, seed: int = 2,
                first_deal: int = 0) -> float:
    """A round-robin results folder of about ``pairs`` pairs (3 players), written as a
    tournament writes it, with synthetic games; returns the seconds it took."""
    from sim.core.tables import DEAL_COLUMNS
    from sim.tournament.chunks import (
        DEAL_VALUES,
        ChunkResult,
        DealValues,
        pair_results,
        plan_chunks,
        tally_games,
        tally_to_json,
    )
    from sim.tournament.config import from_dict
    from sim.tournament.results import CHUNK_DIR, save_chunk, write_config

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    cfg = from_dict({"name": "synthetic", "format": "round-robin",
                     "players": ["random", "greedy", "random(show_prob=0.9)"],
                     "deals": -(-pairs // 3), "seed": 0, "first_deal": first_deal,
                     "run": {"chunk_size": chunk, "progress": False},
                     "output": {"dir": out, "plots": False, "deal_table": False}})
    os.makedirs(os.path.join(out, CHUNK_DIR), exist_ok=True)
    rid = write_config(out, cfg)
    for c in plan_chunks(cfg):
        g = 2 * c.n
        cols = {k: np.zeros(g, dtype=dt) for k, dt in DEAL_COLUMNS.items()}
        cols["deal"] = np.repeat(np.arange(c.first, c.first + c.n), 2)
        cols["orientation"] = np.tile(np.array([0, 1], np.int8), c.n)
        s = rng.integers(-12, 13, g)
        cols["settle0"], cols["settle1"] = s, -s
        cols["settle2"], cols["settle3"] = s, -s
        cols["caller"] = np.zeros(g, np.int8)
        tally = tally_to_json(tally_games(cols, True))
        tally[DEAL_VALUES] = DealValues(pair_results(cols, True)).to_dict()
        save_chunk(out, ChunkResult(c, tally, b"", b"", 0.0), cfg.hash(), rid)
    return time.perf_counter() - t0


def _cli(*args: str) -> tuple[float, str]:
    """Run ``shuangkou ladder ARGS``; (its wall time, stdout); ``_cli.cpu``: its CPU time
    (on a shared, loaded machine the honest figure: wall time there includes waiting)."""
    import resource

    env = dict(os.environ, PYTHONPATH=ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sim.cli", "ladder", *args], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    _cli.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode:
        raise SystemExit(f"ladder {' '.join(args)} failed: {p.stderr.strip()}")
    return wall, p.stdout


def scale(args: argparse.Namespace) -> None:
    from sim.analysis import ladder as model
    from sim.tools.ladder import Ladder

    folder = args.dir or tempfile.mkdtemp(prefix="ladder-scale-")
    db = os.path.join(folder, "big.sqlite")
    if not os.path.exists(db):
        print(f"building {args.pairs:,} pairs in {db} ...", flush=True)
        print(f"  built in {make_db(db, args.pairs):.1f} s", flush=True)
    size = os.path.getsize(db) + sum(os.path.getsize(db + s) for s in ("-wal", "-shm")
                                     if os.path.exists(db + s))
    print(f"file size: {size / 2**20:,.0f} MiB ({size / args.pairs:.1f} bytes per pair)")
    for _ in range(args.rounds):
        t0 = time.process_time()
        with Ladder.open(db, write=False) as lad:
            data = lad.data()
        t1 = time.process_time()
        fit = model.fit(data)
        t2 = time.process_time()
        model.show_text(data, fit)
        t3 = time.process_time()
        wall, _ = _cli("--db", db, "show")
        print(f"show: the command {_cli.cpu:.2f} s CPU, {wall:.2f} s wall (in process, CPU: "
              f"read {t1 - t0:.2f} s, fit {t2 - t1:.2f} s, text {t3 - t2:.2f} s; "
              f"{data.a.size:,} pairs)", flush=True)
    if args.import_pairs:
        src = os.path.join(folder, "import-folder")
        if not os.path.exists(src):
            print(f"writing a results folder of {args.import_pairs:,} pairs ...", flush=True)
            # deals past the big ladder's: every pair is new there too
            secs = make_folder(src, args.import_pairs, first_deal=args.pairs)
            print(f"  written in {secs:.1f} s", flush=True)
        target = os.path.join(folder, "import.sqlite")
        for f in (target, target + "-wal", target + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        wall, out = _cli("--db", target, "import", src)
        print(f"import into a new ladder: {_cli.cpu:.1f} s CPU, {wall:.1f} s wall "
              f"({out.strip()})")
        if args.import_into_big:
            wall, out = _cli("--db", db, "import", src)
            print(f"import into the {args.pairs:,}-pair ladder: {_cli.cpu:.1f} s CPU, "
                  f"{wall:.1f} s wall "
                  f"({out.strip()}; seed 0 of the big ladder: same seed)")


def throughput(args: argparse.Namespace) -> None:
    """CPU time of ``ladder run --pairs N`` (greedy and random: one matchup, scheduled)
    against ``tournament`` of the same pairs (the same deals, one job; each with its default
    chunk size unless given), interleaved rounds."""
    import resource

    folder = args.dir or tempfile.mkdtemp(prefix="ladder-tp-")
    cfgfile = os.path.join(folder, "t.toml")
    with open(cfgfile, "w") as f:
        f.write(f'name = "tp"\nplayers = ["greedy", "random"]\ndeals = {args.pairs}\n'
                f'seed = 0\n[run]\nchunk_size = {args.chunk}\nprogress = false\n'
                f'[output]\nplots = false\n')
    env = dict(os.environ, PYTHONPATH=ROOT)
    lad_t, tour_t = [], []

    def child_cpu(cmd: list[str]) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    py = sys.executable
    base_l = child_cpu([py, "-m", "sim.cli", "ladder", "--db", os.path.join(folder, "w.sqlite"),
                        "add", "greedy", "random"])  # start-up: subtracted from neither
    for r in range(args.rounds):
        db = os.path.join(folder, f"r{r}.sqlite")
        child_cpu([py, "-m", "sim.cli", "ladder", "--db", db, "add", "greedy", "random"])
        lad_t.append(child_cpu([py, "-m", "sim.cli", "ladder", "--db", db, "run", "--pairs",
                                str(args.pairs), "--no-progress", "--quiet",
                                *(["--chunk", str(args.ladder_chunk)] if args.ladder_chunk
                                  else [])]))
        tour_t.append(child_cpu([py, "-m", "sim.cli", "tournament", cfgfile, "--out",
                                 os.path.join(folder, f"t{r}"), "--quiet", "--no-plots"]))
        print(f"round {r + 1}: ladder run {lad_t[-1]:.2f} s CPU, tournament {tour_t[-1]:.2f} s "
              f"CPU", flush=True)
    lm, tmed = float(np.median(lad_t)), float(np.median(tour_t))
    lc = args.ladder_chunk or "its default (by time)"
    print(f"{args.pairs:,} pairs greedy vs random, 1 job, chunks of {lc} (ladder, scheduled: "
          f"a fit per chunk) and {args.chunk} (tournament), CPU time of the "
          f"whole command (median of {args.rounds}): ladder run {lm:.2f} s, tournament "
          f"{tmed:.2f} s, ratio {lm / tmed:.3f} (a start-up alone: {base_l:.2f} s)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("scale")
    s.add_argument("--pairs", type=int, default=10_000_000)
    s.add_argument("--import-pairs", type=int, default=1_000_000)
    s.add_argument("--import-into-big", action="store_true")
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--dir", default="")
    t = sub.add_parser("throughput")
    t.add_argument("--pairs", type=int, default=100_000)
    t.add_argument("--chunk", type=int, default=10_000, help="the tournament's chunk size")
    t.add_argument("--ladder-chunk", type=int, default=0,
                   help="the ladder run's (default: its own, sized by time)")
    t.add_argument("--rounds", type=int, default=3)
    t.add_argument("--dir", default="")
    args = p.parse_args()
    (scale if args.what == "scale" else throughput)(args)


if __name__ == "__main__":
    main()
