"""``shuangkou train``: a teacher distilled into the learned player's network (DAgger).

The recipe (docs/learning.md):

- a fixed held-out set: the teacher's labels on its own trajectories (``beta = 1``) on
  ``holdout`` deals from ``HOLDOUT_FIRST`` of the training seed (never played by a round);
- round 0: labels on the teacher's own trajectories, deals ``0 … deals-1`` (``beta = 1``);
- round r >= 1: labels on the learner's own trajectories with the weights of the end of round
  r-1, each decision following the teacher with probability ``beta_r = BETA ** r`` (0.5, 0.25,
  …: DAgger's decaying mixture), deals ``r*deals … (r+1)*deals-1``;
- after each round's labels: ``epochs`` passes of Adam over every round's labels so far (the
  DAgger aggregate), minibatches shuffled by a generator seeded by ``(seed, round, epoch)``;
- after each epoch: the weights exported (``strategies.learned.save_weights``), the held-out
  loss and top-1 agreement with the teacher, and ``learned(weights=THAT_FILE)`` against
  ``greedy`` on ``eval_pairs`` duplicate pairs of the evaluation seed (deals from
  ``EVAL_FIRST``), with the paired 95% interval; one row of the learning curve.

Everything a result depends on is in ``TrainConfig`` (the checkpoint's key); the number of
rounds and the wall budget only decide where a run stops, so a run resumed with more rounds
goes on as a longer run would have. The checkpoint (``checkpoint.npz``, written atomically
after each round's labels and after each epoch) holds the parameters, Adam's state and the
recipe's JSON state; a run killed at any moment and resumed ends as an uninterrupted one does
(the labels of a round are a function of the seed and the weights; JAX on a CPU computes the
same steps from the same inputs).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sim.core.limits import EVAL_SEED, MAX_HIDDEN, MAX_JOBS, refuse_eval_seed
from sim.core.rng import MAX_SEED, check_seed
from sim.errors import ConfigError, WeightsError
from sim.learn.jaxnet import Model, init_params, require_jax
from sim.learn.labels import collect
from sim.learn.recipe import (  # noqa: F401  (re-exported: the command line and tests)
    BASELINE,
    BUDGET_SLACK,
    CHECKPOINT,
    DEFAULT_ROUNDS,
    EVAL_FIRST,
    FORMAT,
    HOLDOUT_FIRST,
    MAX_BATCH,
    MAX_DEALS,
    MAX_EPOCHS,
    MAX_EVAL_PAIRS,
    MAX_HOLDOUT,
    MAX_HOURS,
    MAX_ROUNDS,
    OPPONENTS,
    TrainConfig,
    check_int,
    check_teacher,
    git_revision,
    weights_spec,
)
from sim.learn.store import (
    concat,
    finish,
    labels_key,
    load_checkpoint,
    load_data,
    prune,
    read_state,
    save_checkpoint,
    save_data,
    signed,
)
from sim.learn.store import npz_bytes as _npz_bytes  # noqa: F401  (tests write checkpoints)
from sim.tools.tune import confirmation
from sim.tournament.run import pair_player
from strategies import learned

_SHUFFLE = 0x5348_5546  # "SHUF": the minibatch order's stream tag


def _collect(*args: Any, **kw: Any) -> dict[str, np.ndarray]:
    return collect(*args, **kw)


def make_config(teacher: str = "expert", seed: int = 0, deals: int = 2000, epochs: int = 2,
                holdout: int = 200, eval_pairs: int = 500, eval_seed: int | None = None,
                hidden: Sequence[int] | str = (128, 64, 64), batch: int = 256,
                lr: float = 1e-3, dtype: str = "float32", soft: float = 1.0, tau: float = 0.3,
                augment: bool = True, regret: float = 0.0) -> TrainConfig:
    """A ``TrainConfig`` checked, or a one-line ConfigError naming what is wrong."""
    seed = check_seed(seed, "--seed")
    if eval_seed is None:  # seed + 1, stepping over the evaluation seed
        eval_seed = seed + 1 if seed < MAX_SEED else seed - 1
        if eval_seed == EVAL_SEED:
            eval_seed = seed + 2
    eval_seed = check_seed(eval_seed, "--eval-seed")
    for what, v in (("--seed", seed), ("--eval-seed", eval_seed)):
        why = refuse_eval_seed(v, what)
        if why:  # the per-epoch evaluation chooses best.npz: a selection seed
            raise ConfigError(why)
    for what, v, least, most in (("--deals", deals, 1, MAX_DEALS),
                                 ("--epochs", epochs, 1, MAX_EPOCHS),
                                 ("--holdout", holdout, 1, MAX_HOLDOUT),
                                 ("--eval-pairs", eval_pairs, 0, MAX_EVAL_PAIRS),
                                 ("--batch", batch, 1, MAX_BATCH)):
        check_int(what, v, least, most)
    if isinstance(hidden, str):
        try:
            hidden = [int(x) for x in hidden.split(",")]
        except ValueError:
            raise ConfigError(f"--hidden {hidden!r} is not three sizes H1,H2,G such as "
                              f"128,64,64") from None
    hidden = tuple(hidden)
    if len(hidden) != 3 or any(isinstance(h, bool) or not isinstance(h, int) or not
                               1 <= h <= MAX_HIDDEN for h in hidden):
        raise ConfigError(f"--hidden {','.join(map(str, hidden))!r} is not three sizes "
                          f"H1,H2,G in 1 … {MAX_HIDDEN}, such as 128,64,64")
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and 0 < lr < 1):
        raise ConfigError(f"--lr {lr!r} must be a number in (0, 1)")
    if dtype not in ("float32", "float64"):
        raise ConfigError(f"--dtype {dtype!r}: use float32 or float64")
    if not (isinstance(soft, (int, float)) and math.isfinite(soft) and 0 <= soft <= 100):
        raise ConfigError(f"--soft {soft!r} must be a number in 0 … 100")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and 0 < tau <= 100):
        raise ConfigError(f"--tau {tau!r} must be a number in (0, 100]")
    if not (isinstance(regret, (int, float)) and math.isfinite(regret) and 0 <= regret <= 100):
        raise ConfigError(f"--regret {regret!r} must be a number in 0 … 100")
    teacher = check_teacher(teacher)
    dims = (int(learned.FEATURE_VERSION), int(learned.DS), int(learned.ND), int(learned.DM),
            int(learned.MD), int(learned.NS_MAX), int(learned.NM_MAX), int(learned.M_MAX))
    return TrainConfig(teacher, seed, deals, epochs, holdout, eval_pairs, eval_seed,
                       hidden, batch, float(lr), dtype, dims, float(soft), float(tau),
                       bool(augment), float(regret))


def retrain(cfg: TrainConfig, src: str, out: str, say: Callable[[str], None] | None = None,
            rounds: int | None = None) -> str:
    """Train a fresh network (``cfg``: its sizes, seed, epochs, step size and loss) on the
    labels an earlier run left in ``src`` (``src/data/round_*.npz``, its DAgger aggregate)
    without collecting any: ``cfg.epochs`` passes of Adam, the minibatch order and renamings
    drawn from ``(seed, epoch)``; the held-out loss after each epoch where ``src`` holds its
    held-out set, and ``learned(weights=OUT/learned.npz)`` against greedy on
    ``cfg.eval_pairs`` pairs at the end. A way to try other loss settings or seeds on labels
    already paid for, and to make the networks of an ensemble (``merge``). Returns the
    weights file. ``rounds``: the labels of the first ``rounds`` rounds only."""
    import glob
    import shlex

    files = sorted(glob.glob(os.path.join(glob.escape(src), "data", "round_[0-9]*.npz")))
    files = [f for f in files if not f.endswith(".part.npz")]
    if rounds is not None:
        check_int("--rounds", rounds, 1, MAX_ROUNDS)
        if len(files) < rounds:
            raise ConfigError(f"--retrain {src!r} holds the labels of {len(files)} round(s), "
                              f"not --rounds {rounds}")
        files = files[:rounds]
    if not files:
        raise ConfigError(f"--retrain {src!r}: no labels there (a `shuangkou train` run's "
                          f"folder holds data/round_000.npz, …)")
    require_jax()
    log = say or (lambda text: None)
    weights_spec(out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out!r} cannot be made a folder ({e.strerror})") from None
    data = concat([load_data(f, cfg, MAX_DEALS) for f in files])  # another run's rounds
    hold_file = os.path.join(src, "data", "holdout.npz")
    hold = load_data(hold_file, cfg, MAX_HOLDOUT) if os.path.lexists(hold_file) else None
    n = int(data["label"].size)
    s = cfg.sizes
    model = Model(init_params(s["ds"], s["nd"], s["dm"], s["md"], cfg.hidden, s["ns_max"],
                              s["nm_max"], cfg.seed),
                  lr=cfg.lr, dtype=cfg.dtype, soft=cfg.soft, tau=cfg.tau, augment=cfg.augment,
                  regret=cfg.regret)
    log(f"retraining a {'x'.join(map(str, cfg.hidden))} network on {n:,} labels of "
        f"{len(files)} round(s) in {src!r}")
    t0 = time.perf_counter()
    for e in range(cfg.epochs):
        loss = model.train_epoch(data, np.random.default_rng([cfg.seed, e]), cfg.batch)
        ho = model.evaluate(hold) if hold is not None else (math.nan, math.nan)
        log(f"epoch {e + 1}: loss {loss:.4f}, held-out {ho[0]:.4f}, top-1 {ho[1]:.3f}; "
            f"{time.perf_counter() - t0:.0f} s")
    teacher = None
    try:
        teacher = str(read_state(os.path.join(src, CHECKPOINT), None)[0]["key"]["teacher"])
    except (ConfigError, KeyError, TypeError):
        pass
    command = " ".join(["shuangkou", "train", "--retrain",
                        shlex.quote(os.path.basename(os.path.normpath(src)))]
                       + (["--rounds", str(rounds)] if rounds is not None else [])
                       + ["--epochs", str(cfg.epochs), "--seed", str(cfg.seed)]
                       + cfg.network_flags())
    path = os.path.join(out, "learned.npz")
    learned.save_weights(path, model.arrays(), {
        "recipe": "shuangkou train --retrain", "config": cfg.key(), "teacher": teacher,
        "labels": n, "rounds": len(files), "command": command, "git": git_revision(),
        "seconds": round(time.perf_counter() - t0, 3)})
    if cfg.eval_pairs:
        spec = weights_spec(path)  # in this process: JAX's threads are running (no fork)
        with pair_player(cfg.eval_seed, 1, warm_up=[(spec, BASELINE)]) as play:
            (x2,) = play([(spec, BASELINE, EVAL_FIRST, cfg.eval_pairs)])
        res = confirmation(x2, first=EVAL_FIRST)
        log(f"vs {BASELINE} {signed(res['margin'])} [{signed(res['lo'])}, "
            f"{signed(res['hi'])}] ({res['pairs']} pairs of seed {cfg.eval_seed})")
    return path


def merge(paths: Sequence[str], out: str) -> str:
    """Write the networks of the weights files ``paths`` (each one network or an ensemble)
    into one weights file ``out``: an ensemble, whose scores the learned player averages
    (``strategies.learned``). Every network must have the same hidden sizes; the metadata
    keeps each file's own as ``members``. Returns ``out``."""
    import shlex

    if len(paths) < 2:
        raise ConfigError("--merge needs two weights files or more (an ensemble of one is the "
                          "file itself)")
    if not out.endswith(".npz"):
        raise ConfigError(f"--out {out!r}: with --merge, name the weights file to write "
                          f"(ending in .npz)")
    nets: list[dict[str, np.ndarray]] = []
    members = []
    for path in paths:
        got, meta = learned.load_networks(path)
        nets += got
        members.append({"file": os.path.basename(path), "networks": len(got), **meta})
    teachers = {m.get("teacher") for m in members}
    meta = {"recipe": "shuangkou train --merge", "networks": len(nets), "members": members,
            "command": " ".join(["shuangkou", "train", "--merge",
                                 *(shlex.quote(os.path.basename(p)) for p in paths),
                                 "--out", shlex.quote(os.path.basename(out))]),
            "teacher": teachers.pop() if len(teachers) == 1 else None,
            "labels": sum(int(m.get("labels") or 0) for m in members),
            "config": members[0].get("config")}
    try:
        learned.save_weights(out, nets, meta)
    except WeightsError as e:
        raise ConfigError(f"--merge: {e}") from None
    except OSError as e:
        raise ConfigError(f"--out {out!r} cannot be written ({e.strerror})") from None
    return out




# --- the run -----------------------------------------------------------------------------
@dataclasses.dataclass
class TrainResult:
    weights: str  # OUT/learned.npz
    rows: list[dict[str, Any]]
    labels: int
    rounds: int  # rounds whose labels were collected and trained on
    seconds: float  # wall time of the run, across resumes (what --hours counts)
    stopped: str  # "rounds" (all done), "budget" (--hours) or "stop_after" (testing)
    budget: float | None = None  # --hours in seconds


class _Log:
    def __init__(self, out: str, say: Callable[[str], None] | None) -> None:
        self.file = os.path.join(out, "train.log")
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))

    def __call__(self, text: str) -> None:
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {text}"
        with open(self.file, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        self.say(text)


def run(cfg: TrainConfig, out: str, rounds: int | None = None, hours: float | None = None,
        jobs: int = 1, resume: bool = False, say: Callable[[str], None] | None = None,
        plot: bool = True, stop_after: int | None = None,
        play: Callable[..., Any] | None = None, labels: str | None = None) -> TrainResult:
    """Train ``cfg`` into folder ``out`` for ``rounds`` rounds (None: until ``hours`` of wall
    time are spent) and return the result; ``stop_after``: testing hook, stop after this many
    epochs of this call (the checkpoint stays, as after a kill); ``play``: a
    ``tournament.pair_player`` function to evaluate with (default: one started here);
    ``labels``: a folder that caches every round's labels by what decides them
    (``labels_key``): a rerun of the same rounds with other training settings reuses them."""
    if rounds is None and hours is None:
        raise ConfigError("give --rounds, --hours or both: a run needs somewhere to stop")
    if rounds is not None:
        check_int("--rounds", rounds, 1, MAX_ROUNDS)
    if hours is not None and not (isinstance(hours, (int, float)) and not isinstance(hours, bool)
                                  and math.isfinite(hours) and 0 < hours <= MAX_HOURS):
        raise ConfigError(f"--hours {hours!r} must be a number in (0, {MAX_HOURS:g}]")
    check_int("--jobs", jobs, 1, MAX_JOBS)
    weights_spec(out)  # a folder name a spec can hold
    try:
        os.makedirs(os.path.join(out, "data"), exist_ok=True)
        os.makedirs(os.path.join(out, "weights"), exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out!r} cannot be made a folder ({e.strerror})") from None
    found = load_checkpoint(out, cfg)
    if found is not None and not resume:
        raise ConfigError(f"{out!r} already holds a training checkpoint: pass --resume to "
                          f"continue it, or choose another --out")
    require_jax()  # before any work: a missing extra is one line
    s = cfg.sizes
    init = init_params(s["ds"], s["nd"], s["dm"], s["md"], cfg.hidden, s["ns_max"],
                       s["nm_max"], cfg.seed)
    first = os.path.abspath(os.path.join(out, "weights", "r000_e00.npz"))  # untrained
    learned.save_weights(first, init, {"recipe": "shuangkou train", "config": cfg.key(),
                                       "round": 0, "epoch": 0, "labels": 0})
    if play is None and cfg.eval_pairs:
        # the evaluation's workers start (fork) here, before JAX starts its threads, with
        # the learned player's loop loaded
        warm = [(BASELINE, BASELINE), (weights_spec(first), BASELINE)]
        with pair_player(cfg.eval_seed, jobs, warm_up=warm) as play:
            return _run(cfg, out, rounds, hours, jobs, found, say, plot, stop_after, play,
                        init, first, labels)
    return _run(cfg, out, rounds, hours, jobs, found, say, plot, stop_after, play, init,
                first, labels)


def _run(cfg: TrainConfig, out: str, rounds: int | None, hours: float | None, jobs: int,
         found: tuple[dict[str, Any], dict[str, np.ndarray]] | None,
         say: Callable[[str], None] | None, plot: bool, stop_after: int | None,
         play: Callable[..., Any] | None,
         init: Mapping[str, np.ndarray], first: str, labels: str | None = None
         ) -> TrainResult:
    """The run's steps (``_Run``): the held-out set, the untrained network's row, the rounds
    (labels, then epochs), the files at the end."""
    run = _Run(cfg, out, hours, jobs, found, say, play, init, first, labels)
    if run.hold is None and not run.collect_holdout():
        return TrainResult("", [], 0, 0, run.elapsed(), "budget", run.budget)
    if not run.state["rows"]:  # the untrained network: the curve's first point
        run.add_row(0, 0, math.nan, first, math.nan)
        run.checkpoint()
    stopped = run.rounds(rounds, stop_after, plot)
    return run.result(stopped, plot)


class _Run:
    """A training run's state between its steps: the model, the checkpoint's JSON state, the
    labels so far, the clock and the rates it measures (what the budget's checks need)."""

    def __init__(self, cfg: TrainConfig, out: str, hours: float | None, jobs: int,
                 found: tuple[dict[str, Any], dict[str, np.ndarray]] | None,
                 say: Callable[[str], None] | None, play: Callable[..., Any] | None,
                 init: Mapping[str, np.ndarray], first: str, labels: str | None) -> None:
        self.cfg, self.out, self.jobs, self.play, self.labels = cfg, out, jobs, play, labels
        self.log = log = _Log(out, say)
        self.model = model = Model(init, lr=cfg.lr, dtype=cfg.dtype, soft=cfg.soft,
                                   tau=cfg.tau, augment=cfg.augment, regret=cfg.regret)
        self.revision = git_revision()
        self.data_dir = data_dir = os.path.join(out, "data")
        self.hold_file = hold_file = os.path.join(data_dir, "holdout.npz")
        self.t0 = time.perf_counter()
        if found is None:
            state: dict[str, Any] = {"format": FORMAT, "key": cfg.key(),
                                     "digest": cfg.digest(), "round": 0, "epoch": 0,
                                     "collected": False, "rows": [], "seconds": 0.0,
                                     "labels": 0, "rates": {}, "best": None, "last": None,
                                     "partial": 0}
            log(f"training {cfg.teacher}'s play into a {'x'.join(map(str, cfg.hidden))} "
                f"network in {out!r} (recipe {cfg.digest()})")
        else:
            state, arrays = found
            if not model.load_state_arrays(arrays):
                raise ConfigError(f"checkpoint {os.path.join(out, CHECKPOINT)!r} is corrupt "
                                  f"(its parameters do not fit the recipe's sizes): remove it "
                                  f"or choose another --out")
        self.state = state
        # the labels so far (a resumed run's files are checked before anything is said or done)
        self.hold = load_data(hold_file, cfg) if found else None  # a fresh run collects its own
        self.parts = [load_data(os.path.join(data_dir, f"round_{r:03d}.npz"), cfg)
                      for r in range(state["round"] + (1 if state["collected"] else 0))]
        if found is not None:
            log(f"resuming {out!r} at round {state['round']}, epoch {state['epoch']} "
                f"({state['labels']:,} labels, {state['seconds']:.0f} s so far)")
        self.base_seconds = float(state["seconds"])
        self.budget = None if hours is None else hours * 3600.0
        self.rates = state["rates"]
        self.epochs_here = 0

    def elapsed(self) -> float:
        return self.base_seconds + time.perf_counter() - self.t0

    def checkpoint(self) -> None:
        save_checkpoint(self.out, {**self.state, "seconds": self.elapsed()}, self.model)

    def meta(self, r: int, e: int) -> dict[str, Any]:
        cfg = self.cfg
        return {"recipe": "shuangkou train", "config": cfg.key(), "digest": cfg.digest(),
                "teacher": cfg.teacher, "seed": cfg.seed, "round": r, "epoch": e,
                "rounds": r + 1, "labels": self.state["labels"], "command": cfg.command(r + 1),
                "git": self.revision}

    def export(self, r: int, e: int) -> str:
        path = os.path.abspath(os.path.join(self.out, "weights", f"r{r:03d}_e{e:02d}.npz"))
        learned.save_weights(path, self.model.arrays(), self.meta(r, e))
        return path

    def over(self, need: float) -> bool:
        return self.budget is not None and self.elapsed() + need > self.budget

    def batches(self, weights: str | None, first: int, n: int, beta: float, done: int = 0,
                pieces: list[dict[str, np.ndarray]] | None = None
                ) -> tuple[list[dict[str, np.ndarray]], int]:
        """Labels of deals ``first + done … first + n - 1``, collected in batches with the
        clock checked between them (``--hours``: each batch a small share of the budget,
        none started that would end past it): ``(pieces, deals done)``, short of ``n`` when
        the budget stopped it. Each deal's labels do not depend on the batches: collected
        at once or in pieces, a round's labels are the same."""
        cfg, rates, budget, jobs = self.cfg, self.rates, self.budget, self.jobs
        pieces = [] if pieces is None else pieces
        held = sum(int(p["label"].size) for p in pieces)
        while done < n:
            k = n - done
            if budget is not None:
                rate = rates.get("collect_per_deal", 0.0)
                per_deal = rates.get("labels_per_deal", 50.0)
                save = rates.get("save_per_label", 0.0)  # keeping what was collected
                if rate <= 0:  # a first measure, small
                    k = min(k, max(8, 4 * jobs))
                else:
                    k = min(k, max(1, int(BUDGET_SLACK / 4 * budget / rate)))
                if self.over(rate * k + save * (held + per_deal * k)):
                    break
            t = time.perf_counter()
            pieces.append(_collect(cfg.teacher, weights, cfg.seed, first + done, k, beta,
                                   opponents=OPPONENTS, jobs=jobs))
            rates["collect_per_deal"] = (time.perf_counter() - t) / k
            held += int(pieces[-1]["label"].size)
            rates["labels_per_deal"] = held / (done + k)
            done += k
        return pieces, done

    def keep(self, path: str, data: Mapping[str, np.ndarray], compress: bool = True) -> None:
        """``save_data``, its time per label measured (what keeping labels costs at a stop)."""
        t = time.perf_counter()
        save_data(path, data, compress)
        self.rates["save_per_label"] = ((time.perf_counter() - t)
                                        / max(1, int(data["label"].size)))

    @staticmethod
    def joined(pieces: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return pieces[0] if len(pieces) == 1 else {
            k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]}

    def collect_holdout(self) -> bool:
        """The held-out set: once, on the teacher's own trajectories; False when the budget
        stopped it (nothing to checkpoint yet: a run needs its held-out set)."""
        cfg, budget = self.cfg, self.budget
        t = time.perf_counter()
        pieces, done = self.batches(None, HOLDOUT_FIRST, cfg.holdout, 1.0)
        if done < cfg.holdout:
            self.log(f"stopped (wall budget reached): {self.elapsed():.0f} s of the "
                     f"{budget:.0f} s budget spent collecting the held-out set ({done:,} of "
                     f"{cfg.holdout:,} deals); nothing trained: give more --hours")
            return False
        self.keep(self.hold_file, self.joined(pieces))  # and measures what keeping costs
        self.hold = load_data(self.hold_file, cfg, cfg.holdout)
        self.log(f"held-out set: {cfg.holdout:,} deals, {self.hold['label'].size:,} labels "
                 f"in {time.perf_counter() - t:.1f} s")
        return True

    def evaluate(self, path: str) -> dict[str, Any]:
        cfg = self.cfg
        if not cfg.eval_pairs or self.play is None:
            return {"margin": math.nan, "lo": math.nan, "hi": math.nan, "pairs": 0}
        (x2,) = self.play([(weights_spec(path), BASELINE, EVAL_FIRST, cfg.eval_pairs)])
        return confirmation(x2, first=EVAL_FIRST)

    def add_row(self, r: int, e: int, train_loss: float, path: str, agree: float) -> None:
        cfg, state = self.cfg, self.state
        ho_loss, ho_top = self.model.evaluate(self.hold)
        res = self.evaluate(path)
        row = {"round": r, "epoch": e, "labels": state["labels"], "train_loss": train_loss,
               "heldout_loss": ho_loss, "heldout_top1": ho_top, "onpolicy_agree": agree,
               "margin": res["margin"], "lo": res["lo"], "hi": res["hi"],
               "pairs": res["pairs"], "seconds": round(self.elapsed(), 3), "weights": path}
        state["rows"].append(row)
        state["last"] = path
        best = state["best"]
        if cfg.eval_pairs and (best is None or row["margin"] > best[1]):
            state["best"] = [path, row["margin"]]
        self.log(f"round {r} epoch {e}: loss {train_loss:.4f}, held-out {ho_loss:.4f}, top-1 "
                 f"{ho_top:.3f}; vs {BASELINE} {signed(res['margin'])} "
                 f"[{signed(res['lo'])}, {signed(res['hi'])}] ({res['pairs']} pairs); "
                 f"{self.elapsed():.0f} s")

    def collect_round(self, r: int) -> dict[str, np.ndarray] | None:
        """Round ``r``'s labels (from the ``labels`` cache where it holds them), or None when
        the budget stopped their collection: the deals so far are kept in
        ``data/round_RRR.part.npz`` (``state["partial"]``) and a resumed run goes on from
        there."""
        cfg, state, labels = self.cfg, self.state, self.labels
        first, beta = r * cfg.deals, cfg.beta(r)
        weights = None if r == 0 else state["last"]
        cache = None
        if labels is not None:
            key = labels_key(cfg, weights, first, cfg.deals, beta)
            cache = os.path.join(labels, f"labels-{key}.npz")
            if os.path.lexists(cache):
                return load_data(cache, cfg)
        part = os.path.join(self.data_dir, f"round_{r:03d}.part.npz")
        done = state["partial"]
        pieces = [load_data(part, cfg)] if done else []
        pieces, done = self.batches(weights, first, cfg.deals, beta, done, pieces)
        if done < cfg.deals:
            if done > state["partial"]:
                self.keep(part, self.joined(pieces), compress=False)  # read back at --resume
                state["partial"] = done
            self.checkpoint()
            self.log(f"round {r}: the wall budget stopped its labels after {done:,} of "
                     f"{cfg.deals:,} deals (kept in {os.path.basename(part)}; --resume with "
                     f"more --hours goes on from there)")
            return None
        data = self.joined(pieces)
        if cache is not None:
            os.makedirs(labels, exist_ok=True)
            save_data(cache, data)
        return data

    def take_round(self, r: int) -> bool:
        """Round ``r``'s labels collected, saved and added to the aggregate; False when the
        budget stopped it (or would have: not started)."""
        cfg, state, rates = self.cfg, self.state, self.rates
        labels_next = state["labels"] + rates.get("labels_per_deal", 0.0) * cfg.deals
        need = (rates.get("collect_per_deal", 0.0) * cfg.deals
                + cfg.epochs * (rates.get("epoch_per_label", 0.0) * labels_next
                                + rates.get("eval", 0.0)))
        if self.parts and self.over(need):
            return False
        t = time.perf_counter()
        data = self.collect_round(r)
        if data is None:
            return False
        file = os.path.join(self.data_dir, f"round_{r:03d}.npz")
        save_data(file, data)
        self.parts.append(load_data(file, cfg))
        dt = time.perf_counter() - t
        n = int(self.parts[-1]["label"].size)
        rates["labels_per_deal"] = n / cfg.deals
        state["labels"] += n
        state["collected"] = True
        state["partial"] = 0
        state["epoch"] = 0
        agree = float(self.parts[-1]["agree"].mean()) if n else math.nan
        state["agree"] = agree
        self.log(f"round {r}: {cfg.deals:,} deals (beta {cfg.beta(r):g}), {n:,} labels "
                 f"(learner agreed with {cfg.teacher} on {agree:.3f}) in {dt:.1f} s; "
                 f"{state['labels']:,} labels in all")
        self.checkpoint()
        part = os.path.join(self.data_dir, f"round_{r:03d}.part.npz")
        if os.path.lexists(part):  # after the checkpoint that no longer names it
            os.remove(part)
        return True

    def train_round(self, r: int, stop_after: int | None) -> str | None:
        """Round ``r``'s epochs over the aggregate, each one's row and checkpoint; the reason
        they stopped short (``"stop_after"``, ``"budget"``), or None when all are done."""
        cfg, state, rates = self.cfg, self.state, self.rates
        data = concat(self.parts)
        self.parts = [data]  # one copy of the labels in memory
        n = int(data["label"].size)
        while state["epoch"] < cfg.epochs:
            if stop_after is not None and self.epochs_here >= stop_after:
                return "stop_after"
            if self.over(rates.get("epoch_per_label", 0.0) * n + rates.get("eval", 0.0)):
                return "budget"
            e = state["epoch"] + 1
            t = time.perf_counter()
            rng = np.random.default_rng([cfg.seed, r, e, _SHUFFLE])
            loss = self.model.train_epoch(data, rng, cfg.batch)
            rates["epoch_per_label"] = (time.perf_counter() - t) / max(1, n)
            t = time.perf_counter()
            self.add_row(r, e, loss, self.export(r, e), state.get("agree", math.nan))
            rates["eval"] = time.perf_counter() - t
            state["epoch"] = e
            self.epochs_here += 1
            self.checkpoint()
            prune(self.out, state)  # after the checkpoint: the files it names stay
        return None

    def rounds(self, rounds: int | None, stop_after: int | None, plot: bool) -> str:
        """The rounds up to ``rounds`` (None: until the budget); why they stopped."""
        state = self.state
        stopped = "rounds"
        try:
            while rounds is None or state["round"] < rounds:
                r = state["round"]
                if not state["collected"] and not self.take_round(r):
                    stopped = "budget"
                    break
                why = self.train_round(r, stop_after)
                if why is not None:
                    stopped = why
                    break
                state["round"] = r + 1
                state["collected"] = False
                state["epoch"] = 0
                self.checkpoint()
        except KeyboardInterrupt:  # Ctrl-C: the weights and the curve so far, then stop
            finish(self.cfg, self.out, state, plot)
            self.log("interrupted: the last finished epoch's weights and the curve so far are "
                     "written; --resume continues from the last checkpoint")
            raise
        return stopped

    def result(self, stopped: str, plot: bool) -> TrainResult:
        """The files at the end (``finish``) and the run's result."""
        state, out, budget = self.state, self.out, self.budget
        state["seconds"] = self.elapsed()
        if stopped == "budget":  # the checkpoint holds the time spent: a resume counts it
            save_checkpoint(out, state, self.model)
        finish(self.cfg, out, state, plot)
        rounds_done = state["round"] + (1 if state["collected"] else 0)
        why = {"rounds": "all rounds done",
               "budget": f"wall budget reached: {state['seconds']:.0f} s of the "
                         f"{budget or 0:.0f} s budget, checkpoint written"}.get(stopped, stopped)
        self.log(f"stopped ({why}): {rounds_done} round(s), {state['labels']:,} labels, "
                 f"{state['seconds']:.0f} s; weights in {os.path.join(out, 'learned.npz')}")
        return TrainResult(os.path.join(out, "learned.npz"), state["rows"], state["labels"],
                           rounds_done, state["seconds"], stopped, budget)
