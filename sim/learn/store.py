"""The files of a ``shuangkou train`` run (``sim.learn.train``): its rounds' labels, its
checkpoint (read as received data: every field checked) and its learning curve."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import shutil
import zipfile
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from sim.core.files import MAX_JSON_DEPTH, json_depth, read_received
from sim.core.limits import MAX_HIDDEN
from sim.errors import ConfigError
from sim.learn.labels import ROWS_PER_DEAL
from sim.learn.recipe import (
    BASELINE,
    CHECKPOINT,
    COLUMNS,
    DATA_DTYPES,
    MAX_DEALS,
    MAX_EPOCHS,
    MAX_EVAL_PAIRS,
    MAX_ROUNDS,
    OPPONENTS,
    OPTIONAL,
    TrainConfig,
)
from sim.tournament.results import atomic_write
from strategies import learned


# --- files -------------------------------------------------------------------------------
def npz_bytes(arrays: Mapping[str, np.ndarray], compress: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def write_bytes(path: str, data: bytes) -> None:
    atomic_write(path, lambda f: f.write(data))


def save_data(path: str, data: Mapping[str, np.ndarray], compress: bool = True) -> None:
    write_bytes(path, npz_bytes({k: np.asarray(data[k]) for k in DATA_DTYPES if k in data},
                            compress=compress))


def load_data(path: str, cfg: TrainConfig, deals: int | None = None) -> dict[str, np.ndarray]:
    """A round's labels as saved, checked against the spec's dtypes and the config's sizes,
    or a ConfigError (one line) for a file that is missing, corrupt or of other sizes. Read as
    data (``strategies.learned.read_npz``): a regular file, only the arrays a labels file
    holds, each unpacking to at most the rows ``deals`` deals can give (default: a round's)."""
    s = cfg.sizes
    want = {"sidx": (s["ns_max"],), "sden": (s["nd"],), "nmov": (), "label": (),
            "midx": (s["m_max"], s["nm_max"]), "mden": (s["m_max"], s["md"]), "deal": (),
            "seat": (), "agree": (), "q": (s["m_max"],)}
    rows = ROWS_PER_DEAL * (cfg.deals if deals is None else deals) + 64
    caps = {k: rows * np.dtype(DATA_DTYPES[k]).itemsize * math.prod(want[k]) + (1 << 16)
            for k in DATA_DTYPES}
    try:
        got = learned.read_npz(path, caps, "labels file", 1 << 40, error=ConfigError)
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


def concat(parts: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
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
    """The checkpoint's JSON state as ``save_checkpoint`` writes it: every field's type and
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


def read_state(file: str, cfg: TrainConfig | None
                ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The checkpoint ``file`` read as data: a regular file, only the arrays a checkpoint
    holds (``state``, ``p/NAME``, ``opt/I``), each within the size ``cfg``'s network gives
    (None: the largest network), the state's JSON nesting capped and every field checked
    against ``_state_schema``; else a ConfigError naming the file and the field."""
    hidden = (MAX_HIDDEN,) * 3 if cfg is None else cfg.hidden
    shapes = learned.weight_shapes(*hidden)
    big = max(8 * math.prod(shape) for shape in shapes.values()) + (1 << 16)
    names = {f"p/{k}" for k in learned.WEIGHT_NAMES} | {f"opt/{i}" for i in range(MAX_OPT_LEAVES)}

    def cap(name: str) -> int | None:
        return MAX_STATE_BYTES if name == "state" else big if name in names else None

    def corrupt(why: str) -> ConfigError:
        return ConfigError(f"checkpoint {file!r} is corrupt ({why}): remove it or choose "
                           f"another --out")

    try:
        arrays = learned.read_npz(file, cap, "checkpoint", MAX_STATE_BYTES + 2 * len(names) * big,
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
    for a corrupt one or one of another recipe (``read_state``). The weights files the state
    names are looked for in ``out/weights`` whatever path it holds."""
    file = os.path.join(out, CHECKPOINT)
    if not os.path.lexists(file):
        return None
    state, arrays = read_state(file, cfg)
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


def save_checkpoint(out: str, state: Mapping[str, Any], model: Any) -> None:
    arrays = dict(model.state_arrays())
    arrays["state"] = np.array(json.dumps(state))
    write_bytes(os.path.join(out, CHECKPOINT), npz_bytes(arrays))


def labels_key(cfg: TrainConfig, weights: str | None, first: int, n: int, beta: float) -> str:
    """What decides a round's labels, hashed: the teacher, the learner's weights (their
    bytes), the deals, beta, the opponents and the feature sizes (``labels`` caches by it)."""
    wh = None
    if weights is not None:
        try:
            wh = hashlib.sha256(read_received(weights, learned.MAX_WEIGHTS_BYTES,
                                              "weights file")).hexdigest()
        except OSError as e:
            raise ConfigError(f"weights file {weights!r} cannot be read "
                              f"({e.strerror or type(e).__name__})") from None
    key = {"teacher": cfg.teacher, "weights": wh, "seed": cfg.seed, "first": first, "n": n,
           "beta": beta, "opponents": OPPONENTS, "dims": list(cfg.dims), "version": 1}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]


def signed(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:+.3f}"


def prune(out: str, state: Mapping[str, Any]) -> None:
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
             f"{r['margin']:+.3f} [{signed(r['lo'])}, {signed(r['hi'])}]")
        lines.append("| " + " | ".join([
            str(r["round"]), str(r["epoch"]), f"{r['labels']:,}", _cell(r["train_loss"]),
            _cell(r["heldout_loss"]), _cell(r["heldout_top1"]), _cell(r["onpolicy_agree"]),
            m, f"{r['seconds']:.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def write_curve(cfg: TrainConfig, rows: Sequence[Mapping[str, Any]], out: str,
                plot: bool = True) -> None:
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
