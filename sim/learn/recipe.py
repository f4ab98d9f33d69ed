"""The recipe of ``shuangkou train`` (``sim.learn.train``): its constants and bounds, the
``TrainConfig`` that decides a run's result (its checkpoint's key), checked from the command
line's options (``make_config``), and the names a run's files are given by."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
from typing import Any

import numpy as np

from sim.errors import ConfigError, ShuangkouError
from sim.learn.labels import compiled_seat
from strategies.kinds import BUILTIN_NAMES
from strategies.registry import make

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
