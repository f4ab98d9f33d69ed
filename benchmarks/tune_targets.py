"""The tuning targets of docs/tuning.md ("Figures"): ``shuangkou tune`` of greedy's six
parameters, with its default settings, from greedy's defaults and from a deliberately bad
start, each confirmed on 20,000 fresh duplicate pairs.

    python benchmarks/tune_targets.py defaults OUT_DIR [--jobs 2] [--seed 1]
    python benchmarks/tune_targets.py bad OUT_DIR [--jobs 2] [--seed 1]

``defaults``: the gain of the tuned spec over greedy's defaults (the run's own confirmation
match, tuned vs start). ``bad``: from ``greedy(show_at=0.9,min_cards=3)``; the recovery is
``1 - m(tuned vs defaults) / m(bad vs defaults)``, both matches on the same 20,000 fresh pairs
(deals from ``sim.tools.tune.CONFIRM_FIRST``, never used by tuning). Each prints one JSON
line with the figures, the duplicate pairs the tuning played and its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

PARAMS = ["show_at=0..1", "min_cards=1..27", "partner_margin=0..1", "draw_share=0..1",
          "keep_pair_from=0..27", "contest_at=0..400"]
STARTS = {"defaults": "greedy", "bad": "greedy(show_at=0.9,min_cards=3)"}
DEFAULTS = "greedy"
CONFIRM = 20_000


def main(argv: list[str] | None = None) -> int:
    from sim.tools import tune

    ap = argparse.ArgumentParser()
    ap.add_argument("start", choices=sorted(STARTS))
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=None, help="default: the CLI's")
    ap.add_argument("--iterations", type=int, default=None, help="default: the CLI's")
    ap.add_argument("--against", default=None, help="as the CLI's --against (default: none)")
    a = ap.parse_args(argv)
    kw = {k: v for k, v in (("pairs", a.pairs), ("iterations", a.iterations)) if v}
    cfg = tune.make_config(STARTS[a.start], PARAMS, seed=a.seed, against=a.against, **kw)
    t0 = time.perf_counter()
    res = tune.run(cfg, a.out, jobs=a.jobs, confirm=CONFIRM, progress=False)
    wall = time.perf_counter() - t0
    out = {"start": res.start, "tuned": res.spec, "pairs_per_iteration": cfg.pairs,
           "iterations": cfg.iterations, "against": list(cfg.against),
           "tuning_pairs": res.pairs_played,
           "tuning_games": 2 * res.pairs_played, "wall_s": round(wall, 1), "jobs": a.jobs,
           "confirm_tuned_vs_start": res.confirm}
    if a.start == "bad":
        bad = tune.duel(res.start, DEFAULTS, CONFIRM, jobs=a.jobs)
        tuned = tune.duel(res.spec, DEFAULTS, CONFIRM, jobs=a.jobs)
        out["bad_vs_defaults"] = bad
        out["tuned_vs_defaults"] = tuned
        out["recovered"] = 1 - tuned["margin"] / bad["margin"]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
