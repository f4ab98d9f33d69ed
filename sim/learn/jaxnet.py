"""The learned player's network in JAX, for training (``shuangkou train``; docs/learning.md).

The forward pass is exactly the one of ``strategies.learned`` (the numba kernel the player runs)::

    h1  = relu(b1 + sum_k W1[sidx_k] + sden @ Wd)
    h2  = relu(b2 + h1 @ W2)
    g   = b3 + h2 @ W3
    z_j = relu(g + bm + sum_k M[midx_jk] + mden_j @ Md)
    s_j = z_j . v

Index padding (-1) counts for nothing (``_counts``); plays past an example's ``nmov`` are
masked out of the softmax. The loss is the softmax cross-entropy of the scores over the kept
legal plays against the teacher's play, minimised by Adam (optax) on minibatches in one jitted
step; a minibatch holds examples of similar numbers of plays (``batches``).

JAX is imported only here and only when training (``require_jax``): the player never needs it.
64-bit mode is switched on, so that the same model runs in float64 (the tests compare its
scores with the numba kernel's to 1e-9) while training runs in float32 by default (about twice
as fast on a CPU; the weights are exported as float64 either way).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from sim.errors import ConfigError
from strategies.learned import side_suit_maps

NAMES = ("W1", "Wd", "b1", "W2", "b2", "W3", "b3", "M", "Md", "bm", "v")
DATA_KEYS = ("sidx", "sden", "nmov", "midx", "mden", "label")
EXTRA = "`shuangkou train` needs the training extra: pip install -e '.[train]'"
WIDTH_STEP = 8  # batches hold 8, 16, 24, … plays (``batches``)
_INIT = 0x4E45_5449  # "NETI": the initial weights' stream tag

_JAX: list[Any] = []


def require_jax() -> tuple[Any, Any, Any]:
    """``(jax, jax.numpy, optax)``, imported once with 64-bit mode on; a one-line ConfigError
    naming the extra where they are not installed."""
    if not _JAX:
        try:
            import jax
            import jax.numpy as jnp
            import optax
        except ImportError:
            raise ConfigError(EXTRA) from None
        jax.config.update("jax_enable_x64", True)
        _JAX.extend((jax, jnp, optax))
    return _JAX[0], _JAX[1], _JAX[2]


def sizes_of(arrays: Mapping[str, np.ndarray]) -> dict[str, int]:
    """``ds, nd, dm, md, h1, h2, g`` read from parameter arrays."""
    return {"ds": arrays["W1"].shape[0], "nd": arrays["Wd"].shape[0],
            "dm": arrays["M"].shape[0], "md": arrays["Md"].shape[0],
            "h1": arrays["W1"].shape[1], "h2": arrays["W2"].shape[1],
            "g": arrays["W3"].shape[1]}


def init_params(ds: int, nd: int, dm: int, md: int, hidden: tuple[int, int, int],
                ns_max: int, nm_max: int, seed: int) -> dict[str, np.ndarray]:
    """Initial float64 parameters from ``seed`` (numpy's generator, so the same on any JAX):
    He-scaled layers into a ReLU (the fan-in of a sparse layer is its most active indices plus
    its dense features), Glorot-scaled ``W3``, zero biases and a small ``v``."""
    h1, h2, g = hidden
    rng = np.random.default_rng([seed, _INIT])

    def normal(shape: tuple[int, ...], std: float) -> np.ndarray:
        return rng.standard_normal(shape) * std

    return {
        "W1": normal((ds, h1), math.sqrt(2.0 / max(1, ns_max + nd))),
        "Wd": normal((nd, h1), math.sqrt(2.0 / max(1, ns_max + nd))),
        "b1": np.zeros(h1),
        "W2": normal((h1, h2), math.sqrt(2.0 / h1)),
        "b2": np.zeros(h2),
        "W3": normal((h2, g), math.sqrt(2.0 / (h2 + g))),
        "b3": np.zeros(g),
        "M": normal((dm, g), math.sqrt(1.0 / max(1, nm_max + md))),
        "Md": normal((md, g), math.sqrt(1.0 / max(1, nm_max + md))),
        "bm": np.zeros(g),
        "v": normal((g,), 0.01),
    }


def to_arrays(params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The parameters as float64 numpy arrays under the weights file's names."""
    return {k: np.asarray(params[k], dtype=np.float64) for k in NAMES}


def from_arrays(arrays: Mapping[str, np.ndarray], dtype: str = "float32") -> dict[str, Any]:
    """JAX parameters (``dtype``) from the weights file's arrays."""
    _, jnp, _ = require_jax()
    return {k: jnp.asarray(np.asarray(arrays[k]), dtype=dtype) for k in NAMES}


def scores(params: Mapping[str, Any], sidx: Any, sden: Any, midx: Any, mden: Any) -> Any:
    """The scores ``s[b, j]`` of a batch: ``sidx [B, NS]``, ``sden [B, ND]``, ``midx
    [B, M, NM]``, ``mden [B, M, MD]`` (indices padded with -1; rows past ``nmov`` are scored
    too and must be masked by the caller).

    The sums of rows ``sum_k W1[sidx_k]`` and ``sum_k M[midx_jk]`` are computed as products
    with count vectors (``_counts``): the same sums, but their gradients are dense products
    too, where the gather's gradient (a scatter-add of rows) took XLA on a CPU ten times as
    long as the whole rest of a training step."""
    _, jnp, _ = require_jax()
    w1, m = params["W1"], params["M"]
    xs = _counts(sidx, w1.shape[0], w1.dtype)
    xm = _counts(midx, m.shape[0], m.dtype)
    h1 = jnp.maximum(params["b1"] + xs @ w1 + sden @ params["Wd"], 0)
    h2 = jnp.maximum(params["b2"] + h1 @ params["W2"], 0)
    g = params["b3"] + h2 @ params["W3"]
    z = jnp.maximum(g[:, None, :] + params["bm"] + xm @ m + mden @ params["Md"], 0)
    return z @ params["v"]


def _counts(idx: Any, n: int, dtype: Any) -> Any:
    """``x[..., f]``: how many times index ``f`` (0 … n-1) is in ``idx[..., :]`` (-1: none),
    built by a scatter-add of ones (no gradient flows through it)."""
    _, jnp, _ = require_jax()
    lead = idx.shape[:-1]
    flat = idx.reshape(-1, idx.shape[-1])
    rows = jnp.arange(flat.shape[0])[:, None]
    x = jnp.zeros((flat.shape[0], n + 1), dtype).at[rows, jnp.where(flat < 0, n, flat)].add(1)
    return x[:, :n].reshape(lead + (n,))


def _masked(s: Any, nmov: Any) -> Any:
    _, jnp, _ = require_jax()
    keep = jnp.arange(s.shape[1])[None, :] < nmov[:, None]
    return jnp.where(keep, s, -jnp.inf)


def example_losses(params: Mapping[str, Any], batch: Mapping[str, Any]) -> tuple[Any, Any]:
    """Per-example cross-entropy and whether the top score is the label (first on ties)."""
    jax, jnp, _ = require_jax()
    s = _masked(scores(params, batch["sidx"], batch["sden"], batch["midx"], batch["mden"]),
                batch["nmov"])
    lse = jax.nn.logsumexp(s, axis=1)
    picked = jnp.take_along_axis(s, batch["label"][:, None], axis=1)[:, 0]
    return lse - picked, jnp.argmax(s, axis=1) == batch["label"]


class Model:
    """Parameters, Adam's state and the jitted steps (``dtype``: float32 or float64)."""

    def __init__(self, arrays: Mapping[str, np.ndarray], lr: float = 1e-3,
                 dtype: str = "float32", soft: float = 0.0, tau: float = 0.3,
                 augment: bool = False, regret: float = 0.0) -> None:
        jax, jnp, optax = require_jax()
        self.dtype = dtype
        self.soft = float(soft)
        self.regret = float(regret)
        self.augment = bool(augment)
        if augment:
            self._maps = side_suit_maps()
        self.params = from_arrays(arrays, dtype)
        self.opt = optax.adam(lr)
        self.opt_state = self.opt.init(self.params)

        def loss(params: Any, batch: Any) -> Any:
            ce, _ = example_losses(params, batch)
            w = batch["w"]
            if self.soft > 0:  # + soft * cross-entropy against softmax(q / tau), where q is
                s = _masked(scores(params, batch["sidx"], batch["sden"], batch["midx"],
                                   batch["mden"]), batch["nmov"])
                q = batch["q"]
                has = jnp.isfinite(q) & jnp.isfinite(s)
                # finite everywhere (a NaN target would leak NaN into the gradient)
                target = jax.nn.softmax(jnp.where(has, q / tau, -1e30), axis=1)
                target = jnp.where(has, target, 0)
                logp = jax.nn.log_softmax(s, axis=1)
                soft_ce = -jnp.where(has, target * logp, 0).sum(axis=1)
                ce = ce + self.soft * jnp.where(has.any(axis=1), soft_ce, 0)
            if self.regret > 0:  # + regret * the expected loss of the network's policy,
                # sum_j p_j (max q - q_j) in points per deal, over the plays with a value:
                # a costly mistake weighs more than a choice between near-equal plays
                s = _masked(scores(params, batch["sidx"], batch["sden"], batch["midx"],
                                   batch["mden"]), batch["nmov"])
                q = batch["q"]
                has = jnp.isfinite(q) & jnp.isfinite(s)
                qmax = jnp.max(jnp.where(has, q, -1e30), axis=1, keepdims=True)
                p = jax.nn.softmax(s, axis=1)
                loss_r = jnp.where(has, p * (qmax - jnp.where(has, q, 0)), 0).sum(axis=1)
                ce = ce + self.regret * loss_r
            return jnp.where(w > 0, ce * w, 0).sum() / jnp.maximum(w.sum(), 1)

        def step(params: Any, opt_state: Any, batch: Any) -> tuple[Any, Any, Any]:
            value, grads = jax.value_and_grad(loss)(params, batch)
            updates, opt_state = self.opt.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, value

        def measure(params: Any, batch: Any) -> tuple[Any, Any]:
            ce, top = example_losses(params, batch)
            w = batch["w"]
            return jnp.where(w > 0, ce * w, 0).sum(), (top * w).sum()

        self._step = jax.jit(step)
        self._measure = jax.jit(measure)
        self._scores = jax.jit(lambda p, b: _masked(
            scores(p, b["sidx"], b["sden"], b["midx"], b["mden"]), b["nmov"]))

    # --- batches ----------------------------------------------------------------------
    def _batch(self, data: Mapping[str, np.ndarray], rows: np.ndarray, size: int,
               width: int, rng: np.random.Generator | None = None) -> dict[str, Any]:
        """The examples ``rows`` as a batch of exactly ``size`` (padded with weight 0) with
        the plays cut to the first ``width`` (every example's ``nmov <= width``): one shape per
        width, so the step compiles once per width. With ``rng`` (training, ``augment``) each
        example's side suits are renamed by a permutation drawn from it
        (``strategies.learned.side_suit_maps``)."""
        _, jnp, _ = require_jax()
        n = rows.size
        if n < size:  # padded with copies of its first example (its plays fit the width)
            rows = np.concatenate([rows, np.full(size - n, rows[0], dtype=rows.dtype)])
        w = np.zeros(size, dtype=self.dtype)
        w[:n] = 1
        sidx = data["sidx"][rows].astype(np.int64)
        sden = data["sden"][rows]
        midx = data["midx"][rows, :width].astype(np.int64)
        if rng is not None and self.augment:
            smap, dmap, mmap = self._maps
            which = rng.integers(0, smap.shape[0], size)
            ds, dm = smap.shape[1] - 1, mmap.shape[1] - 1
            sidx = np.where(sidx < 0, -1, smap[which[:, None], np.where(sidx < 0, ds, sidx)])
            sden = np.take_along_axis(sden, dmap[which], axis=1)
            midx = np.where(midx < 0, -1,
                            mmap[which[:, None, None], np.where(midx < 0, dm, midx)])
        out = {"sidx": jnp.asarray(sidx, dtype=jnp.int32),
               "sden": jnp.asarray(sden, dtype=self.dtype),
               "nmov": jnp.asarray(np.minimum(data["nmov"][rows], width), dtype=jnp.int32),
               "midx": jnp.asarray(midx, dtype=jnp.int32),
               "mden": jnp.asarray(data["mden"][rows, :width], dtype=self.dtype),
               "label": jnp.asarray(data["label"][rows], dtype=jnp.int32),
               "w": jnp.asarray(w)}
        if self.soft > 0 or self.regret > 0:
            q = data["q"][rows, :width] if "q" in data else np.full((size, width), np.nan)
            out["q"] = jnp.asarray(q, dtype=self.dtype)
        return out

    def train_epoch(self, data: Mapping[str, np.ndarray], rng: np.random.Generator,
                    batch_size: int) -> float:
        """One pass of Adam over ``data`` in minibatches of ``batch_size``, drawn by ``rng``
        (``batches``); the mean loss of the examples, as each was when its step ran."""
        total = 0.0
        n = int(data["label"].shape[0])
        for rows, width in batches(data["nmov"], data["midx"].shape[1], batch_size, rng):
            self.params, self.opt_state, value = self._step(
                self.params, self.opt_state, self._batch(data, rows, batch_size, width, rng))
            total += float(value) * rows.size
        return total / max(1, n)

    def evaluate(self, data: Mapping[str, np.ndarray], batch_size: int = 1024
                 ) -> tuple[float, float]:
        """``(mean cross-entropy, top-1 agreement with the labels)`` over ``data``."""
        n = int(data["label"].shape[0])
        ce = top = 0.0
        for rows, width in batches(data["nmov"], data["midx"].shape[1], batch_size):
            a, b = self._measure(self.params, self._batch(data, rows, batch_size, width))
            ce += float(a)
            top += float(b)
        return (ce / n, top / n) if n else (math.nan, math.nan)

    def scores(self, data: Mapping[str, np.ndarray]) -> np.ndarray:
        """The masked scores ``[N, M_MAX]`` of every example (-inf past ``nmov``)."""
        n = int(data["label"].shape[0])
        width = int(data["midx"].shape[1])
        return np.asarray(self._scores(self.params,
                                       self._batch(data, np.arange(n), n, width)))[:n]

    def arrays(self) -> dict[str, np.ndarray]:
        return to_arrays(self.params)

    # --- the checkpoint ---------------------------------------------------------------
    def state_arrays(self) -> dict[str, np.ndarray]:
        """Parameters (``p/NAME``) and Adam's state (``opt/I``, its leaves in order) as numpy
        arrays of their own dtypes, for a checkpoint."""
        jax, _, _ = require_jax()
        out = {f"p/{k}": np.asarray(self.params[k]) for k in NAMES}
        for i, leaf in enumerate(jax.tree_util.tree_leaves(self.opt_state)):
            out[f"opt/{i}"] = np.asarray(leaf)
        return out

    def load_state_arrays(self, arrays: Mapping[str, np.ndarray]) -> bool:
        """Restore ``state_arrays``; False (nothing changed) where they do not fit this
        model's shapes and dtypes."""
        jax, jnp, _ = require_jax()
        leaves, tree = jax.tree_util.tree_flatten(self.opt_state)
        new = []
        for i, leaf in enumerate(leaves):
            a = arrays.get(f"opt/{i}")
            if a is None or a.shape != leaf.shape or a.dtype != leaf.dtype:
                return False
            new.append(jnp.asarray(a))
        if f"opt/{len(leaves)}" in arrays:
            return False
        params = {}
        for k in NAMES:
            a = arrays.get(f"p/{k}")
            if a is None or a.shape != self.params[k].shape or a.dtype != self.params[k].dtype:
                return False
            params[k] = jnp.asarray(a)
        self.params = params
        self.opt_state = jax.tree_util.tree_unflatten(tree, new)
        return True


def widths(m_max: int) -> tuple[int, ...]:
    """The play widths batches are cut to: multiples of ``WIDTH_STEP`` below ``m_max``, and
    ``m_max``."""
    return tuple(range(WIDTH_STEP, m_max, WIDTH_STEP)) + (m_max,)


def batches(nmov: np.ndarray, m_max: int, size: int, rng: np.random.Generator | None = None
            ) -> Iterator[tuple[np.ndarray, int]]:
    """Minibatches ``(rows, width)`` covering every example once: examples grouped by the
    narrowest width that holds their plays (most decisions have a few legal plays, a few
    have up to ``m_max``: a batch padded to ``m_max`` plays spent most of its time on
    padding), cut into batches of ``size``. With ``rng``: the examples shuffled within their
    group and the batches of all groups in a random order; without: in order."""
    ws = np.array(widths(m_max))
    group = np.searchsorted(ws, np.asarray(nmov, dtype=np.int64))
    order = rng.permutation(group.size) if rng is not None else np.arange(group.size)
    out = []
    for k, w in enumerate(ws):
        rows = order[group[order] == k]
        out.extend((rows[i:i + size], int(w)) for i in range(0, rows.size, size))
    if rng is not None:
        out = [out[i] for i in rng.permutation(len(out))]
    yield from out
