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

import csv
import dataclasses
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from sim.core.limits import MAX_HIDDEN, MAX_JOBS
from sim.errors import ConfigError

FORMAT = "shuangkou-train/1"
CHECKPOINT = "checkpoint.npz"
DEFAULT_ROUNDS = 6  # without --rounds or --hours
BETA = 0.5  # beta_r = BETA ** r: the share of a round's decisions that follow the teacher
HOLDOUT_FIRST = 2 ** 50  # the held-out deals of the training seed: no round reaches them
EVAL_FIRST = 2 ** 50  # the evaluation's deals, of the evaluation seed
OPPONENTS = "greedy"  # the other team while labels are collected
BASELINE = "greedy"  # the evaluation's opponent
DATA_DTYPES = {"sidx": np.int16, "sden": np.float32, "nmov": np.int16, "midx": np.int16,
               "mden": np.float32, "label": np.int16, "deal": np.int64, "seat": np.int8,
               "agree": np.int8, "q": np.float32}
OPTIONAL = ("q",)  # the teacher's value of each kept play (NaN: none), kept when collected
_SHUFFLE = 0x5348_5546  # "SHUF": the minibatch order's stream tag
COLUMNS = ("round", "epoch", "labels", "train_loss", "heldout_loss", "heldout_top1",
           "onpolicy_agree", "margin", "lo", "hi", "pairs", "seconds")
# upper bounds of the numeric options (docs/cli.md): a request past one is refused up front
MAX_ROUNDS = 10_000  # --rounds
MAX_HOURS = 10_000.0  # --hours (over a year)
MAX_DEALS = 1_000_000  # --deals per round (round r labels deals r*D …: far below 2**50)
MAX_EPOCHS = 1_000  # --epochs per round
MAX_HOLDOUT = 1_000_000  # --holdout deals
MAX_EVAL_PAIRS = 1_000_000  # --eval-pairs per epoch
MAX_BATCH = 65_536  # --batch
BUDGET_SLACK = 0.05  # --hours: the run stops within this share of its budget


def _learned() -> Any:
    import strategies.learned as learned

    return learned


def _collect(*args: Any, **kw: Any) -> dict[str, np.ndarray]:
    from sim.learn.labels import collect

    return collect(*args, **kw)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything that decides a training run's result (its checkpoint key)."""

    teacher: str = "expert"
    seed: int = 0
    deals: int = 2000  # deals per round
    epochs: int = 2  # passes over the aggregate per round
    holdout: int = 200  # held-out deals
    eval_pairs: int = 500
    eval_seed: int = 1
    hidden: tuple[int, int, int] = (128, 64, 64)
    batch: int = 256
    lr: float = 1e-3
    dtype: str = "float32"
    dims: tuple[int, ...] = ()  # FEATURE_VERSION, DS, ND, DM, MD, NS_MAX, NM_MAX, M_MAX
    soft: float = 1.0  # weight of the soft targets softmax(q / tau) (the teacher's values)
    tau: float = 0.3  # their temperature, in points per deal
    augment: bool = True  # rename the side suits at random in every minibatch
    regret: float = 0.0  # weight of the policy's expected loss in points, max q - q (0: none)

    def key(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        d["dims"] = list(self.dims)
        d["beta"] = BETA
        d["opponents"] = OPPONENTS
        d["baseline"] = BASELINE
        if not self.regret:  # a recipe without it keeps the key (and checkpoints) it had
            del d["regret"]
        return d

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.key(), sort_keys=True).encode()).hexdigest()[:16]

    def command(self, rounds: int) -> str:
        """The command line that runs this recipe for ``rounds`` rounds."""
        import shlex

        return " ".join(["shuangkou", "train", "--teacher", shlex.quote(self.teacher),
                         "--rounds", str(rounds), "--deals", str(self.deals), "--epochs",
                         str(self.epochs), "--holdout", str(self.holdout), "--eval-pairs",
                         str(self.eval_pairs), "--seed", str(self.seed), "--eval-seed",
                         str(self.eval_seed)] + self.network_flags())

    def network_flags(self) -> list[str]:
        """The flags of the network and its loss (``--hidden`` on): what a ``--retrain``
        command needs besides its labels, seed and epochs."""
        return (["--hidden", ",".join(map(str, self.hidden)), "--batch", str(self.batch),
                 "--lr", repr(self.lr)]
                + (["--dtype", self.dtype] if self.dtype != "float32" else [])
                + ["--soft", repr(self.soft), "--tau", repr(self.tau)]
                + ([] if self.augment else ["--no-augment"])
                + (["--regret", repr(self.regret)] if self.regret else []))

    def beta(self, r: int) -> float:
        return BETA ** r

    @property
    def sizes(self) -> dict[str, int]:
        _, ds, nd, dm, md, ns, nm, m = self.dims
        return {"ds": ds, "nd": nd, "dm": dm, "md": md, "ns_max": ns, "nm_max": nm,
                "m_max": m}


def check_teacher(spec: str) -> str:
    """The teacher's canonical spec, or a ConfigError: it must build and be a fair compiled
    built-in (the collector asks its kernel inside the compiled deal loop)."""
    from sim.errors import ShuangkouError
    from sim.learn.labels import compiled_seat
    from strategies.kinds import BUILTIN_NAMES
    from strategies.registry import make

    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError("--teacher is empty: give a compiled built-in player such as expert")
    try:
        s = make(spec)
    except ShuangkouError as e:
        raise ConfigError(f"--teacher {spec!r}: {e}") from None
    if getattr(s, "compiled_kind", None) is None:  # a Python-tier bot or a plug-in
        raise ConfigError(f"--teacher {spec!r} cannot label: it must be a fair built-in "
                          f"compiled strategy ({', '.join(BUILTIN_NAMES)}; not oracle)")
    return compiled_seat(spec, "--teacher").spec()


def check_int(what: str, v: Any, least: int, most: int) -> int:
    """``v`` if it is an integer in ``least … most``, else a one-line ConfigError naming the
    bound (a 31-digit request is refused up front, not started)."""
    if isinstance(v, bool) or not isinstance(v, int) or not least <= v <= most:
        shown = v if not isinstance(v, int) or abs(v) < 10 ** 12 else f"{v:.3g}"
        raise ConfigError(f"{what} {shown!r} must be an integer in {least} … {most:,}")
    return v


def make_config(teacher: str = "expert", seed: int = 0, deals: int = 2000, epochs: int = 2,
                holdout: int = 200, eval_pairs: int = 500, eval_seed: int | None = None,
                hidden: Sequence[int] | str = (128, 64, 64), batch: int = 256,
                lr: float = 1e-3, dtype: str = "float32", soft: float = 1.0, tau: float = 0.3,
                augment: bool = True, regret: float = 0.0) -> TrainConfig:
    """A ``TrainConfig`` checked, or a one-line ConfigError naming what is wrong."""
    from sim.core.limits import EVAL_SEED, refuse_eval_seed
    from sim.core.rng import MAX_SEED, check_seed

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
    lm = _learned()
    dims = (int(lm.FEATURE_VERSION), int(lm.DS), int(lm.ND), int(lm.DM), int(lm.MD),
            int(lm.NS_MAX), int(lm.NM_MAX), int(lm.M_MAX))
    return TrainConfig(teacher, seed, deals, epochs, holdout, eval_pairs, eval_seed,
                       hidden, batch, float(lr), dtype, dims, float(soft), float(tau),
                       bool(augment), float(regret))


# --- files -------------------------------------------------------------------------------
def _npz_bytes(arrays: Mapping[str, np.ndarray], compress: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def _write(path: str, data: bytes) -> None:
    from sim.tournament.results import atomic_write

    atomic_write(path, lambda f: f.write(data))


def save_data(path: str, data: Mapping[str, np.ndarray], compress: bool = True) -> None:
    _write(path, _npz_bytes({k: np.asarray(data[k]) for k in DATA_DTYPES if k in data},
                            compress=compress))


def load_data(path: str, cfg: TrainConfig, deals: int | None = None) -> dict[str, np.ndarray]:
    """A round's labels as saved, checked against the spec's dtypes and the config's sizes,
    or a ConfigError (one line) for a file that is missing, corrupt or of other sizes. Read as
    data (``strategies.learned.read_npz``): a regular file, only the arrays a labels file
    holds, each unpacking to at most the rows ``deals`` deals can give (default: a round's)."""
    from sim.learn.labels import ROWS_PER_DEAL

    s = cfg.sizes
    want = {"sidx": (s["ns_max"],), "sden": (s["nd"],), "nmov": (), "label": (),
            "midx": (s["m_max"], s["nm_max"]), "mden": (s["m_max"], s["md"]), "deal": (),
            "seat": (), "agree": (), "q": (s["m_max"],)}
    rows = ROWS_PER_DEAL * (cfg.deals if deals is None else deals) + 64
    caps = {k: rows * np.dtype(DATA_DTYPES[k]).itemsize * math.prod(want[k]) + (1 << 16)
            for k in DATA_DTYPES}
    try:
        got = _learned().read_npz(path, caps, "labels file", 1 << 40, error=ConfigError)
    except ConfigError as e:
        raise ConfigError(f"{e}: the labels are missing or corrupt; remove the run's folder or "
                          f"choose another --out") from None
    try:
        out = {k: got[k] for k in DATA_DTYPES if k not in OPTIONAL or k in got}
        n = out["label"].shape[0]
        ok = all(out[k].dtype == DATA_DTYPES[k] and out[k].shape == (n, *want[k])
                 for k in out)
        ok = ok and bool(np.all((out["nmov"] >= 1) & (out["nmov"] <= s["m_max"])
                                & (out["label"] >= 0) & (out["label"] < out["nmov"])))
        ok = ok and bool(np.all(out["sidx"] < s["ds"]) and np.all(out["midx"] < s["dm"]))
        ok = ok and bool(np.isfinite(out["sden"]).all() and np.isfinite(out["mden"]).all())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise ConfigError(f"labels file {path!r} is missing or corrupt ({type(e).__name__}):"
                          f" remove the run's folder or choose another --out") from None
    if not ok:
        raise ConfigError(f"labels file {path!r} is corrupt (dtypes, shapes or values not "
                          f"those of this recipe): remove it or choose another --out")
    return out


def _concat(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The rounds' labels as one data set, the index slots cut to the most any row uses (the
    rest are -1: the same examples, less memory and work)."""
    ns = max(int((p["sidx"] >= 0).sum(axis=1).max(initial=1)) for p in parts)
    nm = max(int((p["midx"] >= 0).sum(axis=2).max(initial=1)) for p in parts)

    def fit(a: np.ndarray, width: int) -> np.ndarray:  # the last axis to width, -1 padded
        if a.shape[-1] >= width:
            return a[..., :width]
        pad = np.full(a.shape[:-1] + (width - a.shape[-1],), -1, dtype=a.dtype)
        return np.concatenate([a, pad], axis=-1)

    out = {k: np.concatenate([p[k] for p in parts]) for k in DATA_DTYPES
           if k not in ("sidx", "midx") and all(k in p for p in parts)}
    out["sidx"] = np.concatenate([fit(p["sidx"], ns) for p in parts])
    out["midx"] = np.concatenate([fit(p["midx"], nm) for p in parts])
    return out


def git_revision() -> str | None:
    """This checkout's commit, or None (not a git checkout, no git)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, cwd=os.path.dirname(os.path.abspath(__file__)))
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def weights_spec(path: str) -> str:
    """``learned(weights=PATH)`` for a weights file in the run's folder, or a ConfigError for
    a folder name that a spec cannot hold."""
    path = os.path.abspath(path)
    bad = sorted(set(path) & set(",()'\"") | ({"space"} if path != path.strip() else set()))
    if bad:
        raise ConfigError(f"--out {path!r} holds {' '.join(bad)}, which a player spec cannot "
                          f"hold: choose another folder")
    return f"learned(weights={path})"


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

    from sim.learn.jaxnet import Model, init_params, require_jax

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
    data = _concat([load_data(f, cfg, MAX_DEALS) for f in files])  # another run's rounds
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
        teacher = str(_read_state(os.path.join(src, CHECKPOINT), None)[0]["key"]["teacher"])
    except (ConfigError, KeyError, TypeError):
        pass
    command = " ".join(["shuangkou", "train", "--retrain",
                        shlex.quote(os.path.basename(os.path.normpath(src)))]
                       + (["--rounds", str(rounds)] if rounds is not None else [])
                       + ["--epochs", str(cfg.epochs), "--seed", str(cfg.seed)]
                       + cfg.network_flags())
    path = os.path.join(out, "learned.npz")
    _learned().save_weights(path, model.arrays(), {
        "recipe": "shuangkou train --retrain", "config": cfg.key(), "teacher": teacher,
        "labels": n, "rounds": len(files), "command": command, "git": git_revision(),
        "seconds": round(time.perf_counter() - t0, 3)})
    if cfg.eval_pairs:
        from sim.tools.tune import confirmation
        from sim.tournament.run import pair_player

        spec = weights_spec(path)  # in this process: JAX's threads are running (no fork)
        with pair_player(cfg.eval_seed, 1, warm_up=[(spec, BASELINE)]) as play:
            (x2,) = play([(spec, BASELINE, EVAL_FIRST, cfg.eval_pairs)])
        res = confirmation(x2, first=EVAL_FIRST)
        log(f"vs {BASELINE} {_signed(res['margin'])} [{_signed(res['lo'])}, "
            f"{_signed(res['hi'])}] ({res['pairs']} pairs of seed {cfg.eval_seed})")
    return path


def merge(paths: Sequence[str], out: str) -> str:
    """Write the networks of the weights files ``paths`` (each one network or an ensemble)
    into one weights file ``out``: an ensemble, whose scores the learned player averages
    (``strategies.learned``). Every network must have the same hidden sizes; the metadata
    keeps each file's own as ``members``. Returns ``out``."""
    import shlex

    from sim.errors import WeightsError

    lm = _learned()
    if len(paths) < 2:
        raise ConfigError("--merge needs two weights files or more (an ensemble of one is the "
                          "file itself)")
    if not out.endswith(".npz"):
        raise ConfigError(f"--out {out!r}: with --merge, name the weights file to write "
                          f"(ending in .npz)")
    nets: list[dict[str, np.ndarray]] = []
    members = []
    for path in paths:
        got, meta = lm.load_networks(path)
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
        lm.save_weights(out, nets, meta)
    except WeightsError as e:
        raise ConfigError(f"--merge: {e}") from None
    except OSError as e:
        raise ConfigError(f"--out {out!r} cannot be written ({e.strerror})") from None
    return out


# --- the checkpoint ----------------------------------------------------------------------
MAX_STATE_BYTES = 256 << 20  # the checkpoint's JSON state, unpacked (a row is ~1.5 KB)
MAX_OPT_LEAVES = 64  # Adam's state: a step count and two moments per weight array


_Count = Annotated[int, msgspec.Meta(ge=0, le=2 ** 62)]
_Seconds = Annotated[float, msgspec.Meta(ge=0, le=1e12)]


class _Row(msgspec.Struct):
    """One row of the learning curve in the checkpoint's state (``add_row``)."""

    round: Annotated[int, msgspec.Meta(ge=0, le=MAX_ROUNDS)]
    epoch: Annotated[int, msgspec.Meta(ge=0, le=MAX_EPOCHS)]
    labels: _Count
    train_loss: float | None  # NaN where there is none (a JSON state may hold NaN)
    heldout_loss: float | None
    heldout_top1: float | None
    onpolicy_agree: float | None
    margin: float | None
    lo: float | None
    hi: float | None
    pairs: Annotated[int, msgspec.Meta(ge=0, le=MAX_EVAL_PAIRS)]
    seconds: _Seconds
    weights: str = ""


class _State(msgspec.Struct, forbid_unknown_fields=True):
    """The checkpoint's JSON state as ``_save_checkpoint`` writes it: every field's type and
    range declared."""

    format: Literal["shuangkou-train/1"]
    key: dict[str, Any]
    digest: str
    round: Annotated[int, msgspec.Meta(ge=0, le=MAX_ROUNDS)]
    epoch: Annotated[int, msgspec.Meta(ge=0, le=MAX_EPOCHS)]
    collected: bool
    rows: list[_Row]
    seconds: _Seconds
    labels: _Count
    rates: dict[str, _Seconds]
    best: tuple[str, float] | None
    last: str | None
    agree: float | None = None
    partial: Annotated[int, msgspec.Meta(ge=0, le=MAX_DEALS)] = 0  # a round's deals so far


def _read_state(file: str, cfg: TrainConfig | None
                ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The checkpoint ``file`` read as data: a regular file, only the arrays a checkpoint
    holds (``state``, ``p/NAME``, ``opt/I``), each within the size ``cfg``'s network gives
    (None: the largest network), the state's JSON nesting capped and every field checked
    against ``_state_schema``; else a ConfigError naming the file and the field."""
    from sim.core.files import MAX_JSON_DEPTH, json_depth

    lm = _learned()
    hidden = (MAX_HIDDEN,) * 3 if cfg is None else cfg.hidden
    big = max(8 * math.prod(shape) for shape in lm.weight_shapes(*hidden).values()) + (1 << 16)
    names = {f"p/{k}" for k in lm.WEIGHT_NAMES} | {f"opt/{i}" for i in range(MAX_OPT_LEAVES)}

    def cap(name: str) -> int | None:
        return MAX_STATE_BYTES if name == "state" else big if name in names else None

    def corrupt(why: str) -> ConfigError:
        return ConfigError(f"checkpoint {file!r} is corrupt ({why}): remove it or choose "
                           f"another --out")

    try:
        arrays = lm.read_npz(file, cap, "checkpoint", MAX_STATE_BYTES + 2 * len(names) * big,
                             error=ConfigError)
    except ConfigError as e:
        raise corrupt(str(e).replace(f"checkpoint {file!r}", "").strip(" :")) from None
    a = arrays.pop("state", None)
    if a is None or a.shape != () or a.dtype.kind not in "US":
        raise corrupt("no JSON state")
    text = str(a.item())
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise corrupt(f"its state is JSON nested {depth} deep, more than {MAX_JSON_DEPTH}")
    try:
        raw = json.loads(text)  # the state's numbers may be NaN (a curve's empty cells)
    except (ValueError, RecursionError) as e:
        raise corrupt(f"its state is not JSON: {e}") from None
    try:
        state = msgspec.to_builtins(msgspec.convert(raw, _State))
    except msgspec.ValidationError as e:
        raise corrupt(f"state: {e}") from None
    return state, arrays


def load_checkpoint(out: str, cfg: TrainConfig) -> tuple[dict[str, Any], dict[str, np.ndarray]
                                                         ] | None:
    """``(state, arrays)`` of the checkpoint in ``out`` (None: none there), or a ConfigError
    for a corrupt one or one of another recipe (``_read_state``). The weights files the state
    names are looked for in ``out/weights`` whatever path it holds."""
    file = os.path.join(out, CHECKPOINT)
    if not os.path.lexists(file):
        return None
    state, arrays = _read_state(file, cfg)
    for name in ("last", "best"):
        v = state[name]
        path = v if name == "last" else (v[0] if v else None)
        if path is None:
            continue
        base = os.path.basename(path)
        if not re.fullmatch(r"r\d{3,}_e\d{2,}\.npz", base):
            raise ConfigError(f"checkpoint {file!r} is corrupt (state.{name} names {base!r}, "
                              f"not an epoch's weights file rRRR_eEE.npz): remove it or choose "
                              f"another --out")
        here = os.path.abspath(os.path.join(out, "weights", base))
        state[name] = here if name == "last" else [here, v[1]]
    key = json.loads(json.dumps(cfg.key()))
    if state["key"] != key:
        diff = sorted(k for k in key if state["key"].get(k) != key[k])
        raise ConfigError(f"checkpoint {file!r} is from another recipe (its "
                          f"{', '.join(diff) or 'settings'} differ): use another --out, or the "
                          f"same --teacher, --seed, --deals, --epochs, --hidden and sizes")
    if state["epoch"] > cfg.epochs or state["partial"] > cfg.deals \
            or (state["partial"] and state["collected"]):
        raise ConfigError(f"checkpoint {file!r} is corrupt (inconsistent round, epoch or "
                          f"labels so far): remove it or choose another --out")
    return state, arrays


def _save_checkpoint(out: str, state: Mapping[str, Any], model: Any) -> None:
    arrays = dict(model.state_arrays())
    arrays["state"] = np.array(json.dumps(state))
    _write(os.path.join(out, CHECKPOINT), _npz_bytes(arrays))


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


def labels_key(cfg: TrainConfig, weights: str | None, first: int, n: int, beta: float) -> str:
    """What decides a round's labels, hashed: the teacher, the learner's weights (their
    bytes), the deals, beta, the opponents and the feature sizes (``labels`` caches by it)."""
    wh = None
    if weights is not None:
        from sim.core.files import read_received

        try:
            wh = hashlib.sha256(read_received(weights, _learned().MAX_WEIGHTS_BYTES,
                                              "weights file")).hexdigest()
        except OSError as e:
            raise ConfigError(f"weights file {weights!r} cannot be read "
                              f"({e.strerror or type(e).__name__})") from None
    key = {"teacher": cfg.teacher, "weights": wh, "seed": cfg.seed, "first": first, "n": n,
           "beta": beta, "opponents": OPPONENTS, "dims": list(cfg.dims), "version": 1}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


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
    from sim.learn.jaxnet import require_jax

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
    from sim.learn.jaxnet import init_params

    s = cfg.sizes
    init = init_params(s["ds"], s["nd"], s["dm"], s["md"], cfg.hidden, s["ns_max"],
                       s["nm_max"], cfg.seed)
    first = os.path.abspath(os.path.join(out, "weights", "r000_e00.npz"))  # untrained
    _learned().save_weights(first, init, {"recipe": "shuangkou train", "config": cfg.key(),
                                          "round": 0, "epoch": 0, "labels": 0})
    if play is None and cfg.eval_pairs:
        from sim.tournament.run import pair_player

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
    from sim.learn.jaxnet import Model

    log = _Log(out, say)
    model = Model(init, lr=cfg.lr, dtype=cfg.dtype, soft=cfg.soft, tau=cfg.tau,
                  augment=cfg.augment, regret=cfg.regret)
    revision = git_revision()
    data_dir = os.path.join(out, "data")
    hold_file = os.path.join(data_dir, "holdout.npz")
    t0 = time.perf_counter()
    if found is None:
        state: dict[str, Any] = {"format": FORMAT, "key": cfg.key(), "digest": cfg.digest(),
                                 "round": 0, "epoch": 0, "collected": False, "rows": [],
                                 "seconds": 0.0, "labels": 0, "rates": {}, "best": None,
                                 "last": None, "partial": 0}
        log(f"training {cfg.teacher}'s play into a {'x'.join(map(str, cfg.hidden))} network "
            f"in {out!r} (recipe {cfg.digest()})")
    else:
        state, arrays = found
        if not model.load_state_arrays(arrays):
            raise ConfigError(f"checkpoint {os.path.join(out, CHECKPOINT)!r} is corrupt "
                              f"(its parameters do not fit the recipe's sizes): remove it or "
                              f"choose another --out")
    # the labels so far (a resumed run's files are checked before anything is said or done)
    hold = load_data(hold_file, cfg) if found else None  # a fresh run collects its own
    parts = [load_data(os.path.join(data_dir, f"round_{r:03d}.npz"), cfg)
             for r in range(state["round"] + (1 if state["collected"] else 0))]
    if found is not None:
        log(f"resuming {out!r} at round {state['round']}, epoch {state['epoch']} "
            f"({state['labels']:,} labels, {state['seconds']:.0f} s so far)")
    base_seconds = float(state["seconds"])

    def elapsed() -> float:
        return base_seconds + time.perf_counter() - t0

    def meta(r: int, e: int) -> dict[str, Any]:
        return {"recipe": "shuangkou train", "config": cfg.key(), "digest": cfg.digest(),
                "teacher": cfg.teacher, "seed": cfg.seed, "round": r, "epoch": e,
                "rounds": r + 1, "labels": state["labels"], "command": cfg.command(r + 1),
                "git": revision}

    def export(r: int, e: int) -> str:
        path = os.path.abspath(os.path.join(out, "weights", f"r{r:03d}_e{e:02d}.npz"))
        _learned().save_weights(path, model.arrays(), meta(r, e))
        return path

    budget = None if hours is None else hours * 3600.0
    rates = state["rates"]

    def over(need: float) -> bool:
        return budget is not None and elapsed() + need > budget

    def batches(weights: str | None, first: int, n: int, beta: float, done: int = 0,
                pieces: list[dict[str, np.ndarray]] | None = None
                ) -> tuple[list[dict[str, np.ndarray]], int]:
        """Labels of deals ``first + done … first + n - 1``, collected in batches with the
        clock checked between them (``--hours``: each batch a small share of the budget,
        none started that would end past it): ``(pieces, deals done)``, short of ``n`` when
        the budget stopped it. Each deal's labels do not depend on the batches: collected
        at once or in pieces, a round's labels are the same."""
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
                if over(rate * k + save * (held + per_deal * k)):
                    break
            t = time.perf_counter()
            pieces.append(_collect(cfg.teacher, weights, cfg.seed, first + done, k, beta,
                                   opponents=OPPONENTS, jobs=jobs))
            rates["collect_per_deal"] = (time.perf_counter() - t) / k
            held += int(pieces[-1]["label"].size)
            rates["labels_per_deal"] = held / (done + k)
            done += k
        return pieces, done

    def keep(path: str, data: Mapping[str, np.ndarray], compress: bool = True) -> None:
        """``save_data``, its time per label measured (what keeping labels costs at a stop)."""
        t = time.perf_counter()
        save_data(path, data, compress)
        rates["save_per_label"] = (time.perf_counter() - t) / max(1, int(data["label"].size))

    def joined(pieces: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return pieces[0] if len(pieces) == 1 else {
            k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]}

    if hold is None:  # the held-out set: once, on the teacher's own trajectories
        t = time.perf_counter()
        pieces, done = batches(None, HOLDOUT_FIRST, cfg.holdout, 1.0)
        if done < cfg.holdout:  # nothing to checkpoint yet: a run needs its held-out set
            log(f"stopped (wall budget reached): {elapsed():.0f} s of the {budget:.0f} s "
                f"budget spent collecting the held-out set ({done:,} of {cfg.holdout:,} "
                f"deals); nothing trained: give more --hours")
            return TrainResult("", [], 0, 0, elapsed(), "budget", budget)
        keep(hold_file, joined(pieces))  # and measures what keeping labels costs at a stop
        hold = load_data(hold_file, cfg, cfg.holdout)
        log(f"held-out set: {cfg.holdout:,} deals, {hold['label'].size:,} labels in "
            f"{time.perf_counter() - t:.1f} s")

    def evaluate(path: str) -> dict[str, Any]:
        from sim.tools.tune import confirmation

        if not cfg.eval_pairs or play is None:
            return {"margin": math.nan, "lo": math.nan, "hi": math.nan, "pairs": 0}
        (x2,) = play([(weights_spec(path), BASELINE, EVAL_FIRST, cfg.eval_pairs)])
        return confirmation(x2, first=EVAL_FIRST)

    def add_row(r: int, e: int, train_loss: float, path: str, agree: float) -> None:
        ho_loss, ho_top = model.evaluate(hold)
        res = evaluate(path)
        row = {"round": r, "epoch": e, "labels": state["labels"], "train_loss": train_loss,
               "heldout_loss": ho_loss, "heldout_top1": ho_top, "onpolicy_agree": agree,
               "margin": res["margin"], "lo": res["lo"], "hi": res["hi"],
               "pairs": res["pairs"], "seconds": round(elapsed(), 3), "weights": path}
        state["rows"].append(row)
        state["last"] = path
        best = state["best"]
        if cfg.eval_pairs and (best is None or row["margin"] > best[1]):
            state["best"] = [path, row["margin"]]
        log(f"round {r} epoch {e}: loss {train_loss:.4f}, held-out {ho_loss:.4f}, top-1 "
            f"{ho_top:.3f}; vs {BASELINE} {_signed(res['margin'])} "
            f"[{_signed(res['lo'])}, {_signed(res['hi'])}] ({res['pairs']} pairs); "
            f"{elapsed():.0f} s")

    if not state["rows"]:  # the untrained network: the curve's first point
        add_row(0, 0, math.nan, first, math.nan)
        _save_checkpoint(out, {**state, "seconds": elapsed()}, model)
    stopped = "rounds"
    epochs_here = 0

    def collect_round(r: int) -> dict[str, np.ndarray] | None:
        """Round ``r``'s labels (from the ``labels`` cache where it holds them), or None when
        the budget stopped their collection: the deals so far are kept in
        ``data/round_RRR.part.npz`` (``state["partial"]``) and a resumed run goes on from
        there."""
        first, beta = r * cfg.deals, cfg.beta(r)
        weights = None if r == 0 else state["last"]
        cache = None
        if labels is not None:
            key = labels_key(cfg, weights, first, cfg.deals, beta)
            cache = os.path.join(labels, f"labels-{key}.npz")
            if os.path.lexists(cache):
                return load_data(cache, cfg)
        part = os.path.join(data_dir, f"round_{r:03d}.part.npz")
        done = state["partial"]
        pieces = [load_data(part, cfg)] if done else []
        pieces, done = batches(weights, first, cfg.deals, beta, done, pieces)
        if done < cfg.deals:
            if done > state["partial"]:
                keep(part, joined(pieces), compress=False)  # quick: read back at --resume
                state["partial"] = done
            _save_checkpoint(out, {**state, "seconds": elapsed()}, model)
            log(f"round {r}: the wall budget stopped its labels after {done:,} of "
                f"{cfg.deals:,} deals (kept in {os.path.basename(part)}; --resume with more "
                f"--hours goes on from there)")
            return None
        data = joined(pieces)
        if cache is not None:
            os.makedirs(labels, exist_ok=True)
            save_data(cache, data)
        return data

    try:
        while rounds is None or state["round"] < rounds:
            r = state["round"]
            if not state["collected"]:
                labels_next = state["labels"] + rates.get("labels_per_deal", 0.0) * cfg.deals
                need = (rates.get("collect_per_deal", 0.0) * cfg.deals
                        + cfg.epochs * (rates.get("epoch_per_label", 0.0) * labels_next
                                        + rates.get("eval", 0.0)))
                if parts and over(need):
                    stopped = "budget"
                    break
                t = time.perf_counter()
                data = collect_round(r)
                if data is None:
                    stopped = "budget"
                    break
                file = os.path.join(data_dir, f"round_{r:03d}.npz")
                save_data(file, data)
                parts.append(load_data(file, cfg))
                dt = time.perf_counter() - t
                n = int(parts[-1]["label"].size)
                rates["labels_per_deal"] = n / cfg.deals
                state["labels"] += n
                state["collected"] = True
                state["partial"] = 0
                state["epoch"] = 0
                agree = float(parts[-1]["agree"].mean()) if n else math.nan
                state["agree"] = agree
                log(f"round {r}: {cfg.deals:,} deals (beta {cfg.beta(r):g}), {n:,} labels "
                    f"(learner agreed with {cfg.teacher} on {agree:.3f}) in {dt:.1f} s; "
                    f"{state['labels']:,} labels in all")
                _save_checkpoint(out, {**state, "seconds": elapsed()}, model)
                part = os.path.join(data_dir, f"round_{r:03d}.part.npz")
                if os.path.lexists(part):  # after the checkpoint that no longer names it
                    os.remove(part)
            data = _concat(parts)
            parts = [data]  # one copy of the labels in memory
            n = int(data["label"].size)
            while state["epoch"] < cfg.epochs:
                if stop_after is not None and epochs_here >= stop_after:
                    stopped = "stop_after"
                    break
                if over(rates.get("epoch_per_label", 0.0) * n + rates.get("eval", 0.0)):
                    stopped = "budget"
                    break
                e = state["epoch"] + 1
                t = time.perf_counter()
                rng = np.random.default_rng([cfg.seed, r, e, _SHUFFLE])
                loss = model.train_epoch(data, rng, cfg.batch)
                rates["epoch_per_label"] = (time.perf_counter() - t) / max(1, n)
                t = time.perf_counter()
                add_row(r, e, loss, export(r, e), state.get("agree", math.nan))
                rates["eval"] = time.perf_counter() - t
                state["epoch"] = e
                epochs_here += 1
                _save_checkpoint(out, {**state, "seconds": elapsed()}, model)
                _prune(out, state)  # after the checkpoint: the files it names stay
            if state["epoch"] < cfg.epochs:
                break
            state["round"] = r + 1
            state["collected"] = False
            state["epoch"] = 0
            _save_checkpoint(out, {**state, "seconds": elapsed()}, model)
    except KeyboardInterrupt:  # Ctrl-C: the weights and the curve so far, then stop
        finish(cfg, out, state, plot)
        log("interrupted: the last finished epoch's weights and the curve so far are written; "
            "--resume continues from the last checkpoint")
        raise
    state["seconds"] = elapsed()
    if stopped == "budget":  # the checkpoint holds the time spent: a resume counts it
        _save_checkpoint(out, state, model)
    finish(cfg, out, state, plot)
    rounds_done = state["round"] + (1 if state["collected"] else 0)
    why = {"rounds": "all rounds done",
           "budget": f"wall budget reached: {state['seconds']:.0f} s of the "
                     f"{budget or 0:.0f} s budget, checkpoint written"}.get(stopped, stopped)
    log(f"stopped ({why}): {rounds_done} round(s), {state['labels']:,} labels, "
        f"{state['seconds']:.0f} s; weights in {os.path.join(out, 'learned.npz')}")
    return TrainResult(os.path.join(out, "learned.npz"), state["rows"], state["labels"],
                       rounds_done, state["seconds"], stopped, budget)


def _signed(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:+.3f}"


def _prune(out: str, state: Mapping[str, Any]) -> None:
    """Removes the epochs' weights files other than the last and the best."""
    keep = {os.path.abspath(state["last"])}
    if state["best"]:
        keep.add(os.path.abspath(state["best"][0]))
    folder = os.path.join(out, "weights")
    for name in os.listdir(folder):
        path = os.path.abspath(os.path.join(folder, name))
        if name.endswith(".npz") and path not in keep:
            os.remove(path)


def finish(cfg: TrainConfig, out: str, state: Mapping[str, Any], plot: bool = True) -> None:
    """``learned.npz`` (the last epoch's weights), ``best.npz`` (the best margin against the
    baseline) and the learning curve (csv, md, png)."""
    if state["last"]:
        shutil.copyfile(state["last"], os.path.join(out, ".learned.tmp"))
        os.replace(os.path.join(out, ".learned.tmp"), os.path.join(out, "learned.npz"))
    if state["best"]:
        shutil.copyfile(state["best"][0], os.path.join(out, ".best.tmp"))
        os.replace(os.path.join(out, ".best.tmp"), os.path.join(out, "best.npz"))
    write_curve(cfg, state["rows"], out, plot)


# --- the learning curve --------------------------------------------------------------------
def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "" if not math.isfinite(v) else f"{v:.4f}"
    return str(v)


def curve_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(r[c]) for c in COLUMNS])
    return buf.getvalue()


def curve_md(cfg: TrainConfig, rows: Sequence[Mapping[str, Any]]) -> str:
    head = ["round", "epoch", "labels", "train loss", "held-out loss", "held-out top-1",
            "on-policy agreement", f"vs {BASELINE} (95% CI)", "wall s"]
    lines = [f"Learning curve: {cfg.teacher} distilled, recipe {cfg.digest()}, seed "
             f"{cfg.seed}; margin: points per deal per player on {cfg.eval_pairs} duplicate "
             f"pairs of seed {cfg.eval_seed}", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        m = ("" if not math.isfinite(r["margin"]) else
             f"{r['margin']:+.3f} [{_signed(r['lo'])}, {_signed(r['hi'])}]")
        lines.append("| " + " | ".join([
            str(r["round"]), str(r["epoch"]), f"{r['labels']:,}", _cell(r["train_loss"]),
            _cell(r["heldout_loss"]), _cell(r["heldout_top1"]), _cell(r["onpolicy_agree"]),
            m, f"{r['seconds']:.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def write_curve(cfg: TrainConfig, rows: Sequence[Mapping[str, Any]], out: str,
                plot: bool = True) -> None:
    from sim.tournament.results import atomic_write

    for name, text in (("curve.csv", curve_csv(rows)), ("curve.md", curve_md(cfg, rows))):
        atomic_write(os.path.join(out, name), lambda f, t=text: f.write(t), mode="w")
    if plot and rows:
        png = curve_png(cfg, rows)
        atomic_write(os.path.join(out, "curve.png"), lambda f: f.write(png))


def curve_png(cfg: TrainConfig, rows: Sequence[Mapping[str, Any]]) -> bytes:
    """Losses, top-1 agreement and the margin against the baseline (95% error bars) by
    epoch, rounds marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(len(rows))
    col = {c: np.array([np.nan if r[c] is None else r[c] for r in rows], dtype=np.float64)
           for c in ("train_loss", "heldout_loss", "heldout_top1", "onpolicy_agree",
                     "margin", "lo", "hi")}
    fig, (ax, bx, cx) = plt.subplots(3, 1, figsize=(8, 8.5), sharex=True,
                                     layout="constrained")
    ax.plot(x, col["train_loss"], "o-", ms=3, label="train (aggregate)")
    ax.plot(x, col["heldout_loss"], "s-", ms=3, label="held out (teacher's deals)")
    ax.set_ylabel("cross-entropy")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(f"{cfg.teacher} distilled (DAgger), {cfg.deals} deals per round, "
                 f"{cfg.epochs} epoch(s) per round")
    bx.plot(x, col["heldout_top1"], "s-", ms=3, label="held-out top-1 agreement")
    bx.plot(x, col["onpolicy_agree"], "^-", ms=3, label="learner's own play (round's labels)")
    bx.set_ylabel("agreement with the teacher")
    bx.legend(fontsize=8, loc="best")
    m = col["margin"]
    err = np.vstack([m - col["lo"], col["hi"] - m])
    cx.errorbar(x, m, yerr=np.nan_to_num(err), fmt="o-", ms=3, capsize=3)
    cx.axhline(0, color="grey", lw=0.5)
    cx.set_ylabel(f"vs {BASELINE} (points per deal, 95% CI)")
    cx.set_xlabel("epoch (round.epoch)")
    labels = [f"{r['round']}.{r['epoch']}" for r in rows]
    step = max(1, len(rows) // 16)
    cx.set_xticks(x[::step], labels[::step], fontsize=7)
    for i in range(1, len(rows)):
        if rows[i]["round"] != rows[i - 1]["round"]:
            for a in (ax, bx, cx):
                a.axvline(i - 0.5, color="grey", lw=0.4, ls=":")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
