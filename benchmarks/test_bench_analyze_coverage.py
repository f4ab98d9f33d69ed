"""Coverage of ``shuangkou analyze``'s loss interval against the best choice (issue 32, 2.1;
docs/analysis.md, "Does the interval hold?").

The calibration set is seeded: the non-forced decisions of every seat in the deals of
``--seats`` dealt from ``--seed``, drawn (``--seed`` again) up to ``--plays``, ``--shows`` and
``--givebacks`` of each kind. For each decision a **reference** settles the loss against the
best choice with many more worlds than ``analyze`` uses, on a stream of its own
(``REF_SEED``): every choice on a screening sample, successive halving down to ``REF_TOP``
candidates, the best of them picked on ``REF_WORLDS`` fresh worlds, and its paired difference
with the choice played measured on ``REF_WORLDS`` more fresh worlds (picked on some worlds,
measured on others: no winner's curse in the reference). Then ``analyze`` (its default
settings) analyses the decision with each of the analysis seeds 1..``--analysis-seeds``;
coverage is the share of (decision, analysis seed) whose ``[lo, hi]`` holds the reference
loss, per kind (plays, give-backs, shows). ``analyze``'s CPU seconds per deal are measured by
``shuangkou analyze`` itself (in this process, one job) on a record of ``--speed-deals``
deals of greedy against the expert (seed 2026, as benchmarks/test_bench_analyze.py).

    nice python benchmarks/test_bench_analyze_coverage.py      # the figures of docs/analysis.md
    python -m pytest benchmarks/test_bench_analyze_coverage.py -q -s   # a small set, asserted

``--old PATH`` also measures another analyze module (an older sim/tools/analyze.py from
``git show``) on the same set and references.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import math
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sim.core import state as S  # noqa: E402
from sim.tools import analyze as A  # noqa: E402
from sim.tools.bench import cpu_model  # noqa: E402 (the one reader of the CPU model)

REF_SEED = 0x5EEDC0DE  # the reference's stream (analysis seeds are 1..K)
REF_TOP = 6  # candidates the reference's halving ends with
REF_SCREEN = 16384  # rollouts of the reference's screening (every choice)
REF_ROUND = 12288  # rollouts per halving round of the reference
REF_WORLDS = {"play": 8192, "show": 4096, "giveback": 4096}  # pick, then measure, each
KINDS = ("play", "giveback", "show")



def calibration_set(seats: str, seed: int, deals: int, want: dict[str, int]) -> list[tuple]:
    """``(decision, rules)`` pairs: up to ``want[kind]`` non-forced decisions of each kind,
    drawn uniformly (seeded) from every seat's decisions of ``deals`` deals."""
    from sim.loops.runner import iter_records, make_seats
    from sim.rules import Rules

    pools: dict[str, list[tuple]] = {k: [] for k in KINDS}
    for rec in iter_records(seed, 0, deals, make_seats(seats)):
        if rec["void"]:
            continue
        rules = Rules.from_dict(rec["rules"]).array()
        for dec in A.decisions(rec):
            if len(dec.codes) > 1:
                pools[dec.kind].append((dec, rules))
    rng = np.random.default_rng(seed)
    out = []
    for k in KINDS:
        pool = pools[k]
        take = min(want.get(k, 0), len(pool))
        for i in sorted(rng.choice(len(pool), size=take, replace=False).tolist()):
            out.append(pool[i])
    return out


def reference(dec: A.Decision, rules: np.ndarray, policy: str = "expert") -> dict:
    """The loss against the best choice, settled with many worlds (module docstring):
    ``loss`` (>= 0), ``diff`` (the best other choice minus the one played, unclipped), its
    standard error ``se`` and ``best`` (index into ``dec.codes``)."""
    from sim.core.rng import stream_key
    from sim.view import mask_into
    from strategies.params import ROLLOUT_ROW, param_table

    pol, eps, grow = A.continuation(policy)
    params = param_table()
    params[ROLLOUT_ROW, :len(grow)] = grow
    seat, codes = dec.seat, dec.codes
    n = len(codes)
    p = codes.index(dec.played)
    mst = np.empty(S.ST_SIZE, dtype=np.int64)
    mu = np.empty(S.U_SIZE, dtype=np.uint64)
    mask_into(dec.st, dec.u, seat, mst, mu)
    mu[S.U_KEY + S.STREAM_SAMPLE + seat] = stream_key(np.uint64(REF_SEED), np.uint64(dec.deal),
                                                      np.uint64(A.STREAM_ANALYSIS + dec.step))
    mu[S.U_CTR + S.STREAM_SAMPLE + seat] = 0

    def values(idx, w):
        return A.outcomes(idx, w, codes, mst, mu, rules, seat, params, pol, eps)

    others = [i for i in range(n) if i != p]
    if len(others) > REF_TOP:
        w = max(16, min(1024, REF_SCREEN // n))
        o = values(list(range(n)), w)
        sums, cnt = o.sum(axis=0), np.full(n, float(w))
        pool = sorted(others, key=lambda i: (-sums[i] / cnt[i], i))
        while len(pool) > REF_TOP:
            pool = pool[:max(REF_TOP, len(pool) // 4)]
            w = REF_ROUND // len(pool)
            o = values(pool, w)
            sums[pool] += o.sum(axis=0)
            cnt[pool] += w
            pool = sorted(pool, key=lambda i: (-sums[i] / cnt[i], i))
    else:
        pool = others
    wf = REF_WORLDS[dec.kind]
    o = values(pool + [p], wf)
    b = pool[int(np.argmax((o[:, :-1] - o[:, -1:]).mean(axis=0)))]
    o = values([b, p], wf)
    d = o[:, 0] - o[:, 1]
    m = float(d.mean())
    return {"loss": max(m, 0.0), "diff": m, "se": float(d.std(ddof=1)) / math.sqrt(wf),
            "best": b}


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    z = A.Z95
    c = (k + z * z / 2) / (n + z * z)
    h = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return c - h, c + h


def coverage(cases: list[tuple], refs: list[dict], seeds: int, analyze_decision,
             settings_cls) -> dict[str, dict]:
    """Per kind: coverage of the reference loss by ``[lo, hi]`` over (decision, seed), its
    Wilson 95% interval, mean reference loss, mean reported loss, median half-width, how
    often the reported best is the reference's, and mean CPU seconds per decision."""
    rows: dict[str, list] = {k: [] for k in KINDS}
    for (dec, rules), ref in zip(cases, refs):
        for s in range(1, seeds + 1):
            t = time.process_time()
            r = analyze_decision(dec, rules, settings_cls(seed=s), truth=False)
            dt = time.process_time() - t
            hit = r["lo"] <= ref["loss"] + 1e-9 and ref["loss"] <= r["hi"] + 1e-9
            best_ok = r["best"] == A.notation(dec.kind, dec.codes[ref["best"]],
                                              _trump(dec)) or ref["loss"] == 0.0
            rows[dec.kind].append((hit, ref["loss"], r["loss"], r["half_width"], best_ok, dt,
                                   r["hi"] < ref["loss"]))
    out = {}
    for k, g in rows.items():
        if not g:
            continue
        hits = sum(x[0] for x in g)
        lo, hi = wilson(hits, len(g))
        out[k] = {"n": len(g), "coverage": hits / len(g), "wilson": (lo, hi),
                  "below": sum(x[6] for x in g) / len(g),
                  "ref_loss": float(np.mean([x[1] for x in g])),
                  "loss": float(np.mean([x[2] for x in g])),
                  "half_width": float(np.median([x[3] for x in g])),
                  "best_agrees": sum(x[4] for x in g) / len(g),
                  "cpu": float(np.mean([x[5] for x in g]))}
    return out


def _trump(dec: A.Decision) -> int:
    return int(dec.st[S.S_TRUMP])


def cpu_per_deal(deals: int, seed: int = 2026) -> float:
    """CPU seconds per deal of ``shuangkou analyze RECORD`` (defaults, one job, all four
    seats) on ``deals`` deals of greedy against the expert, kernels compiled first."""
    from sim.cli import main
    from sim.loops.runner import iter_records, make_seats
    from sim.record import write_records

    recs = [r for r in iter_records(seed, 0, deals, make_seats("greedy,expert"))
            if not r["void"]]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.jsonl")
        write_records(path, recs)
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            main(["analyze", path, "--deal", str(recs[0]["deal"]), "--seat", "0"])  # warm up
            t = time.process_time()
            rc = main(["analyze", path])
            cpu = time.process_time() - t
        assert rc == 0, sink.getvalue()[-500:]
    return cpu / len(recs)


def load_module(path: str):
    spec = importlib.util.spec_from_file_location("analyze_other", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def run(seats: str, seed: int, deals: int, want: dict[str, int], seeds: int,
        modules=(A,), log=print) -> list[dict[str, dict]]:
    """``coverage`` of each analyze module in ``modules`` on one calibration set."""
    t = time.process_time()
    cases = calibration_set(seats, seed, deals, want)
    refs = []
    for i, (dec, rules) in enumerate(cases):
        refs.append(reference(dec, rules))
        if log and (i + 1) % 25 == 0:
            log(f"  references: {i + 1}/{len(cases)} ({time.process_time() - t:.0f} s CPU)")
    ref_cpu = time.process_time() - t
    out = []
    for mod in modules:
        got = coverage(cases, refs, seeds, mod.analyze_decision, mod.Settings)
        got["_"] = {"ref_cpu": ref_cpu, "ref_se": float(np.median([r["se"] for r in refs]))}
        out.append(got)
    return out


def report(got: dict[str, dict]) -> str:
    lines = [f"{'kind':<9} {'cases':>5} {'coverage':>8} {'[95% Wilson]':>15} {'below':>6} "
             f"{'ref loss':>8} {'loss':>7} {'med. half':>9} {'best ok':>7} {'CPU s':>6}"]
    for k in KINDS:
        if k not in got:
            continue
        g = got[k]
        lines.append(f"{k:<9} {g['n']:>5} {g['coverage']:>8.3f} "
                     f"[{g['wilson'][0]:.3f}, {g['wilson'][1]:.3f}] {g['below']:>6.3f} "
                     f"{g['ref_loss']:>8.3f} {g['loss']:>7.3f} {g['half_width']:>9.3f} "
                     f"{g['best_agrees']:>7.3f} {g['cpu']:>6.3f}")
    lines.append(f"(references: {got['_']['ref_cpu']:.0f} s CPU, median standard error "
                 f"{got['_']['ref_se']:.4f}; 'below': the interval lies below the reference "
                 f"loss; CPU s per analysed decision)")
    return "\n".join(lines)


def test_analyze_coverage_small(benchmark):
    """A small seeded set (the full one: ``nice python`` this file): every kind's coverage
    at least 0.85 here (0.93 is the target on the full set), and <= 10 CPU s per deal."""
    got = {}
    benchmark.pedantic(lambda: got.update(run("greedy,random", 32, 12,
                                              {"play": 40, "show": 10, "giveback": 4}, 2,
                                              log=None)[0]), rounds=1)
    print("\n" + report(got))
    per_deal = cpu_per_deal(2)
    print(f"{per_deal:.2f} CPU s per deal ({cpu_model()})")
    benchmark.extra_info.update(coverage={k: got[k]["coverage"] for k in KINDS if k in got},
                                seconds_per_deal=per_deal)
    for k in KINDS:
        if k in got:
            assert got[k]["coverage"] >= 0.85, (k, got[k])
    assert per_deal <= 10.0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seats", default="greedy,random")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--plays", type=int, default=600)
    ap.add_argument("--shows", type=int, default=300)
    ap.add_argument("--givebacks", type=int, default=200)
    ap.add_argument("--analysis-seeds", type=int, default=3)
    ap.add_argument("--speed-deals", type=int, default=4)
    ap.add_argument("--old", default=None,
                    help="also measure this analyze module (e.g. an older analyze.py)")
    a = ap.parse_args()
    mods = (A,) + ((load_module(a.old),) if a.old else ())
    t0 = time.process_time()
    got = run(a.seats, a.seed, a.deals,
              {"play": a.plays, "show": a.shows, "giveback": a.givebacks}, a.analysis_seeds,
              mods)
    print(f"calibration set: seats {a.seats}, seed {a.seed}, {a.deals} deals, "
          f"{a.analysis_seeds} analysis seeds per decision; {cpu_model()}")
    print(report(got[0]))
    if a.old:
        print(f"{a.old}:")
        print(report(got[1]))
    if a.speed_deals:
        print(f"shuangkou analyze: {cpu_per_deal(a.speed_deals):.2f} CPU s per deal "
              f"({a.speed_deals} deals of greedy vs expert, seed 2026, defaults, one job)")
    print(f"total {time.process_time() - t0:.0f} CPU s")
