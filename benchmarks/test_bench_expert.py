"""Speed target of the ``expert`` player (issue: oracle parity): <= 10 ms mean and <= 100 ms at
most per decision on one core, every decision counted (show chances, give-backs, forced and
searched plays), after compilation.

``expert_decision_times`` is also what docs/expert.md quotes for the decision-time
distribution (``python benchmarks/test_bench_expert.py SPEC DEALS SEED``).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from sim.core import state as S
from sim.deal import Deal
from sim.loops.runner import compiled_tables, make_seats
from strategies.compiled import new_scratch
from strategies.expert import expert_decide
from strategies.greedy import greedy_decide

SPEC = "expert"


def expert_decision_times(spec: str, deals: int, seed: int) -> dict[str, np.ndarray]:
    """Seconds per decision of ``spec`` in seats 0 and 2 (greedy in 1 and 3), by kind of
    decision (phase 0 show, 1 give-back, 2 play), timed one by one around the kernel as the
    CPU time of the deciding thread (one core; other load on a shared machine does not count)."""
    seats = make_seats([spec, "greedy"])
    _, params = compiled_tables(seats)
    scratch = new_scratch()
    out: dict[str, list[float]] = {"show": [], "giveback": [], "play": []}
    names = {0: "show", 1: "giveback", 2: "play"}
    for d in range(deals):
        deal = Deal(seed, d)
        st, u, r = deal.engine
        while not deal.done:
            seat = int(st[S.S_TO_ACT])
            phase = int(st[S.S_PHASE])
            if seat % 2 == 0:
                t = time.thread_time()
                code = expert_decide(st, u, r, seat, params, *scratch)
                out[names[phase]].append(time.thread_time() - t)
            else:
                code = greedy_decide(st, u, r, seat, params, seat, scratch[0])
            deal.apply_code(int(code))
    return {k: np.array(v) for k, v in out.items()}


def test_expert_decision_time(benchmark):
    expert_decision_times(SPEC, 1, 99)  # compile and warm up
    got = {}
    benchmark.pedantic(lambda: got.update(expert_decision_times(SPEC, 4, 1)), rounds=1)
    t = np.concatenate(list(got.values())) * 1e3
    mean, top = float(t.mean()), float(t.max())
    benchmark.extra_info.update(mean_ms=mean, p99_ms=float(np.quantile(t, 0.99)), max_ms=top,
                                decisions=len(t))
    assert mean <= 10.0, f"{SPEC}: mean {mean:.2f} ms per decision, target 10"
    assert top <= 100.0, f"{SPEC}: slowest decision {top:.1f} ms, target 100"


if __name__ == "__main__":  # the distribution quoted in docs/expert.md
    spec = sys.argv[1] if len(sys.argv) > 1 else SPEC
    deals = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    expert_decision_times(spec, 1, 99)
    res = expert_decision_times(spec, deals, seed)
    allt = np.concatenate(list(res.values())) * 1e3
    print(f"{spec}: {len(allt)} decisions over {deals} deals (seed {seed}), seats 0 and 2")
    for k, v in list(res.items()) + [("all", allt / 1e3)]:
        if len(v):
            v = v * 1e3
            print(f"  {k:<9} n={len(v):>5}  mean {v.mean():7.3f} ms  median "
                  f"{np.median(v):7.3f}  p99 {np.quantile(v, 0.99):7.2f}  max {v.max():7.2f}")
