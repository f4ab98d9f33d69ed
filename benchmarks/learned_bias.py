"""The learned player's greedy_bias against an opponent on duplicate pairs (docs/learning.md,
"Greedy bias"): one line per bias, the mean points per deal per player with its paired 95%
interval.

    python benchmarks/learned_bias.py --opponent greedy --pairs 1500 --seed 515151 \\
        --bias 0,-0.5,-0.75 [--weights PATH] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opponent", default="greedy")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=515151)
    ap.add_argument("--bias", default="0,-0.5,-0.75")
    ap.add_argument("--weights", default="", help="weights file (default: the shipped ones)")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    from sim.tools.tune import duel

    for b in a.bias.split(","):
        w = f"weights={a.weights}, " if a.weights else ""
        spec = f"learned({w}greedy_bias={float(b)})"
        r = duel(spec, a.opponent, pairs=a.pairs, first=0, seed=a.seed, jobs=a.jobs)
        print(f"{spec} vs {a.opponent}: {r['margin']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] "
              f"over {a.pairs} pairs of seed {a.seed}")


if __name__ == "__main__":
    main()
