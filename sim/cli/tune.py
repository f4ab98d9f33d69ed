"""``shuangkou tune`` (SPSA, docs/tuning.md) and ``train`` (the learned player,
docs/learning.md)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from sim.cli.options import (
    add_backend,
    add_no_progress,
    add_plugin,
    add_resume,
    bounded_float,
    load_plugins,
    quoted_arg,
    upto,
)

_TUNE, _TRAIN = "sim.tools.tune", "sim.learn.train"


def _train_hours(text: str) -> float:
    """``train --hours``: a number in (0, sim.learn.train.MAX_HOURS]."""
    from sim.learn.train import MAX_HOURS

    v = bounded_float("--hours (hours of wall time)", 0.0, MAX_HOURS)(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{quoted_arg(text)} must be more than 0 hours")
    return v


def cmd_tune(args: argparse.Namespace) -> int:
    from sim.core.rng import check_seed
    from sim.tools import tune

    load_plugins(args.plugin)
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


def add_parser(sub: Any) -> None:
    """The parsers of tune and train."""

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
    tu.add_argument("--pairs", type=upto(_TUNE, "MAX_PAIRS", "pairs per iteration"), default=250,
                    help="duplicate pairs per iteration (default 250)")
    tu.add_argument("--iterations", type=upto(_TUNE, "MAX_ITERATIONS", "iterations"), default=4000,
                    help="SPSA iterations (default 4000)")
    tu.add_argument("--confirm", type=upto(_TUNE, "MAX_CONFIRM", "pairs of the confirmation", 0),
                    default=20000,
                    help="pairs of the confirmation match, tuned vs start, on fresh deals "
                         "(default 20000; 0: none)")
    tu.add_argument("--jobs", type=upto(_TUNE, "MAX_JOBS", "workers"), default=1,
                    help="parallel workers (default 1)")
    add_backend(tu)
    tu.add_argument("--seed", default="0", help="the tuner's seed: deals and signs (default 0)")
    tu.add_argument("--out", default="tune", metavar="DIR",
                    help="checkpoint, trajectory.csv/.png, confirm.json (default ./tune)")
    add_resume(tu)
    add_no_progress(tu)
    add_plugin(tu, "FILE")
    tu.set_defaults(func=cmd_tune)

    tr = sub.add_parser("train", help="distil a teacher into the learned player's network "
                                      "(DAgger; needs the train extra; docs/learning.md)")
    tr.add_argument("--teacher", default="expert",
                    help="a compiled built-in player whose choices are the labels "
                         "(default expert)")
    tr.add_argument("--rounds", type=upto(_TRAIN, "MAX_ROUNDS", "rounds"), default=None,
                    help="DAgger rounds (default: until --hours is spent; 6 without --hours)")
    tr.add_argument("--hours", type=_train_hours, default=None,
                    help="wall-time budget: stop cleanly, weights exported, when it is spent")
    tr.add_argument("--deals", type=upto(_TRAIN, "MAX_DEALS", "deals per round"), default=2000,
                    help="deals whose labels each round collects (default 2000)")
    tr.add_argument("--epochs", type=upto(_TRAIN, "MAX_EPOCHS", "epochs per round"), default=2,
                    help="passes over all labels so far after each round (default 2)")
    tr.add_argument("--holdout", type=upto(_TRAIN, "MAX_HOLDOUT", "held-out deals"), default=200,
                    help="deals of the held-out labels (teacher's play; default 200)")
    tr.add_argument("--eval-pairs", type=upto(_TRAIN, "MAX_EVAL_PAIRS", "pairs per evaluation", 0),
                    default=500,
                    help="duplicate pairs against greedy after each epoch (default 500; 0: none)")
    tr.add_argument("--hidden", default="128,64,64", metavar="H1,H2,G",
                    help="the network's sizes (default 128,64,64)")
    tr.add_argument("--batch", type=upto(_TRAIN, "MAX_BATCH", "examples per minibatch"),
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
    tr.add_argument("--jobs", type=upto(_TRAIN, "MAX_JOBS", "workers"), default=1,
                    help="parallel workers for labels and evaluation (default 1)")
    tr.add_argument("--out", default="train", metavar="DIR",
                    help="checkpoint, labels, weights, curve.csv/.md/.png, train.log "
                         "(default ./train)")
    add_resume(tr)
    tr.add_argument("--retrain", default=None, metavar="RUN",
                    help="instead of collecting labels: train a fresh network (--seed, "
                         "--epochs, sizes, loss) on the labels of the earlier run in folder RUN")
    tr.add_argument("--merge", nargs="+", default=None, metavar="FILE",
                    help="instead of training: write the networks of these weights files "
                         "into --out FILE.npz, an ensemble whose scores learned averages")
    tr.set_defaults(func=cmd_train)

