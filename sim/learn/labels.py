"""Labels for distilling a teacher into the learned player (``shuangkou train``): the
teacher's choices at the play decisions of the learner's seats, with the learned player's
features of each (``sim.learn.learn_loop`` plays the deals, compiled).

``collect`` is the one entry: which deals, which teacher, which learner weights (none: the
teacher's own trajectories, DAgger's round 0), how often the learner follows the teacher
(``beta``), and the opponents. Each row is one decision; see ``FIELDS``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.core.rng import check_deal, check_seed
from sim.core.state import new_state
from sim.errors import ConfigError, ShuangkouError, WorkerError
from sim.learn.learn_loop import LS_DEALS, N_LABEL_STATUS, collect_deals
from sim.rules import as_rules
from strategies.compiled import entries
from strategies.kinds import BUILTIN_NAMES, KIND_LEARNED, N_BUILTIN
from strategies.learned import M_MAX, MD, ND, NM_MAX, NS_MAX
from strategies.params import param_table
from strategies.plugin import checked_params
from strategies.registry import make
from strategies.tier import new_scratch


# the arrays ``collect`` returns: name -> (dtype, shape after the row axis)
def _fields() -> dict[str, tuple[Any, tuple[int, ...]]]:
    return {"sidx": (np.int16, (NS_MAX,)), "sden": (np.float32, (ND,)),
            "nmov": (np.int16, ()), "midx": (np.int16, (M_MAX, NM_MAX)),
            "mden": (np.float32, (M_MAX, MD)), "label": (np.int16, ()),
            "q": (np.float32, (M_MAX,)),
            "deal": (np.int64, ()), "seat": (np.int8, ()), "agree": (np.int8, ())}


FIELDS = ("sidx", "sden", "nmov", "midx", "mden", "label", "q", "deal", "seat", "agree")
ROWS_PER_DEAL = 54  # a seat makes 27 plays: two learner seats label at most 54 a deal


def compiled_seat(spec: str, what: str) -> Any:
    """The built-in compiled strategy of ``spec``, or a ConfigError naming what can serve as
    ``what`` (a teacher or the opponents)."""
    allowed = ", ".join(n for n in BUILTIN_NAMES if n != "oracle")
    try:
        s = make(spec)
    except ShuangkouError as e:
        raise ConfigError(f"{what} {spec!r}: {e}") from None
    kind = getattr(s, "compiled_kind", None)
    if not isinstance(kind, int) or not s.runs_compiled() or not 0 <= kind < N_BUILTIN \
            or getattr(s, "oracle", False):
        raise ConfigError(f"{what} {spec!r} cannot label in the compiled collector: it must be "
                          f"a fair built-in compiled strategy: {allowed} (oracle sees every "
                          f"hand)")
    return s


def _tables(learner: Any, opponents: Any) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    lrow = checked_params(learner)
    orow = checked_params(opponents)
    kinds = np.zeros((2, 4), dtype=np.int64)
    learners = np.zeros((2, 4), dtype=np.int64)
    tables = []
    for par in range(2):
        rows = []
        for seat in range(4):
            mine = (seat & 1) == par
            kinds[par, seat] = learner.compiled_kind if mine else opponents.compiled_kind
            learners[par, seat] = 1 if mine else 0
            rows.append(lrow if mine else orow)
        tables.append(param_table(rows))
    return kinds, learners, tables


def _chunk(args: tuple) -> dict[str, np.ndarray]:
    (teacher, learner, opponents, seed, first, n) = args[:6]
    beta, rules_spec = args[6:]
    t, lr, op = make(teacher), make(learner), make(opponents)
    kinds, learners, (pe, po) = _tables(lr, op)
    tparams = param_table([checked_params(t)] * 4)
    table = entries({int(k) for k in kinds.ravel()} | {t.compiled_kind})
    cap = ROWS_PER_DEAL * n + 64
    out = {k: np.zeros((cap,) + shape, dtype=dt) for k, (dt, shape) in _fields().items()}
    st, u = new_state()
    buf, fws, uws = new_scratch()
    status = np.zeros(N_LABEL_STATUS, dtype=np.int64)
    rows = collect_deals(np.uint64(seed), np.int64(first), np.int64(n), kinds, table, learners,
                         pe, po, np.int64(t.compiled_kind), tparams, float(beta),
                         as_rules(rules_spec).array(), *(out[k] for k in FIELDS),
                         st, u, buf, fws, uws, status)
    if status[LS_DEALS] != n:  # pragma: no cover - the outputs hold 54 rows a deal
        raise WorkerError(f"label collector stopped after {status[LS_DEALS]} of {n} deals")
    return {k: v[:rows].copy() for k, v in out.items()}


def collect(teacher: str, weights: str | None, seed: int, first: int, n: int,
            beta: float = 0.0, opponents: str = "greedy", jobs: int = 1,
            chunk: int = 0, rules: Any = None, timeout: float = 24 * 3600.0
            ) -> dict[str, np.ndarray]:
    """Labels of ``teacher`` on deals ``first .. first + n - 1`` of ``seed`` (module
    docstring): the learner's team plays ``learned(weights=weights)`` (``None``: greedy with
    expert's calling rule), following the teacher's choice with probability ``beta``; the
    other team plays ``opponents``. ``jobs`` processes share the deals in chunks; every
    chunk must finish within ``timeout`` seconds. Returns the arrays of ``FIELDS``, rows in
    deal order."""
    check_seed(seed)
    check_deal(first)
    if n < 0:
        raise ConfigError(f"deals to label: {n}; expected 0 or more")
    if not 0.0 <= beta <= 1.0:
        raise ConfigError(f"beta {beta!r}: the share of the teacher's choices played must be "
                          f"in 0 … 1")
    t = compiled_seat(teacher, "teacher")
    if t.compiled_kind == KIND_LEARNED and t.weights_path() == weights:
        raise ConfigError("the teacher is the learner itself: nothing to learn")
    compiled_seat(opponents, "opponents")
    learner = (f"learned(weights={weights})" if weights is not None
               else "greedy(min_cards=18)")
    compiled_seat(learner, "learner")
    t_spec = t.spec()
    jobs = max(1, int(jobs))
    if chunk <= 0:
        chunk = max(1, min(200, -(-n // (4 * jobs)) if n else 1))
    tasks = [(t_spec, learner, opponents, seed, a, min(chunk, first + n - a), beta, rules)
             for a in range(first, first + n, chunk)]
    if jobs == 1 or len(tasks) <= 1:
        parts = [_chunk(x) for x in tasks]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=jobs, backend="loky", timeout=timeout)(
            delayed(_chunk)(x) for x in tasks)
    if not parts:
        return {k: np.zeros((0,) + shape, dtype=dt) for k, (dt, shape) in _fields().items()}
    return {k: np.concatenate([p[k] for p in parts]) for k in FIELDS}
