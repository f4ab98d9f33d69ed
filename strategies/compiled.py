"""Dispatch from a seat's strategy kind to its numba kernel, for the compiled deal loops.

Every compiled strategy kernel has the shape
``(st, u, rules, seat, params, buf, fws, uws) -> code``:

* ``st``, ``u``: the deal state (``sim.core.engine``). A kernel reads only its own seat's hand and
  public knowledge (the call log's public fields and its own give-backs, the tricks, the
  current trick, voids, played cards) — never the deck, other hands or others' give-backs.
  ``tests/test_strategies.py`` proves it: every kernel decides the same on a masked state.
* ``params``: the ``float64[PARAM_ROWS, N_PARAMS]`` table: one row per seat (a row view per
  call would cost as much as a random decision), and row ``ROLLOUT_ROW`` with greedy's
  defaults for the search players' rollouts;
* ``buf`` (``int64[INT_SCRATCH]``), ``fws`` (``float64[FLOAT_SCRATCH]``), ``uws``
  (``uint64[UINT_SCRATCH]``): scratch space; the first ``MAX_CHOICES`` slots of ``buf`` hold
  choice lists.

It returns a choice code of ``sim.core.engine.legal`` (-1 passes at a show decision) and draws only
from its seat's streams, so a seat's choices never depend on which strategies sit elsewhere.

Each player is compiled once (``sim.core.calls``): random and greedy are written into the
loops, every other kind's kernel is compiled alone for ``PLAYER_SIG`` and called through its
address, taken from the table ``entries`` (``int64[N_KINDS]``, by kind; ``entries(kinds)``
fills it for the kinds a run uses, compiling or loading only their kernels). So the loops
compile once, whatever players sit in them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

import numpy as np
from numba import types

from sim.core.calls import native_address, native_call
from sim.core.jit import kernel
from strategies.greedy import greedy_decide
from strategies.kinds import (  # noqa: F401  (re-exported)
    FLOAT_SCRATCH,
    INT_SCRATCH,
    KIND_EXPERT,
    KIND_GREEDY,
    KIND_ISMCTS,
    KIND_LEARNED,
    KIND_ORACLE,
    KIND_PIMC,
    KIND_RANDOM,
    N_BUILTIN,
    N_KINDS,
    UINT_SCRATCH,
)
from strategies.params import N_PARAMS, PARAM_ROWS, ROLLOUT_ROW, param_table  # noqa: F401
from strategies.random import P_SHOW_PROB, random_decide
from strategies.tier import new_scratch  # noqa: F401  (re-exported)

_I = types.Array(types.int64, 1, "C")
_F = types.Array(types.float64, 1, "C")
_U = types.Array(types.uint64, 1, "C")
# the one signature every built-in kernel called through ``entries`` is compiled for
PLAYER_SIG = types.int64(_I, _U, _I, types.int64, types.Array(types.float64, 2, "C"), _I, _F,
                         _U)
call_player = native_call(PLAYER_SIG, "call_player")

# the kernels called through ``entries``, by kind: (module, function), imported on first use
KERNEL_NAMES = {
    KIND_PIMC: ("strategies.search", "pimc_decide"),
    KIND_ISMCTS: ("strategies.search", "ismcts_decide"),
    KIND_ORACLE: ("strategies.search", "oracle_decide"),
    KIND_EXPERT: ("strategies.expert", "expert_decide"),
    KIND_LEARNED: ("strategies.learned", "learned_decide"),
}


def player_kernel(kind: int):
    """The numba kernel of built-in ``kind`` that ``entries`` calls (None: written into the
    loops, or no such kind)."""
    name = KERNEL_NAMES.get(int(kind))
    if name is None:
        return None
    return getattr(importlib.import_module(name[0]), name[1])


def player_address(kind: int) -> int:
    """The address of built-in ``kind``'s kernel compiled for ``PLAYER_SIG``: compiled on
    the first use on this machine, then loaded from the kernel cache (0: the loops write
    this kind out themselves)."""
    k = player_kernel(kind)
    return 0 if k is None else native_address(k, PLAYER_SIG)


def entries(kinds: Iterable[int] = (), extra: dict[int, int] | None = None) -> np.ndarray:
    """The table of addresses (``int64[N_KINDS]``, by kind) for a run of the built-in
    ``kinds`` (others are skipped) and the plug-in addresses ``extra`` (kind -> address,
    ``sim.loops.plugins``); a kind left at 0 plays as random would."""
    t = np.zeros(N_KINDS, dtype=np.int64)
    for k in sorted({int(k) for k in kinds}):
        if 0 <= k < N_BUILTIN:
            t[k] = player_address(k)
    for k, a in (extra or {}).items():
        t[int(k)] = a
    return t


@kernel(inline="always")
def call_kind(kind, entries, params, st, u, rules, seat, buf, fws, uws):
    """The choice code of ``kind`` through its address in ``entries``: what the loops call for
    every kind they do not write out themselves. Every caller fills the address of each kind
    it seats (``entries``; ``sim.loops.loop.play_deals``, ``sim.loops.plugins.Loops``):
    a kind without one passes (-1), which no seat ever meets (a random fallback here would
    compile random's kernel once more into every loop: 1.8 s of every cold start)."""
    if 0 <= kind < entries.shape[0]:
        a = entries[kind]
        if a != 0:
            return call_player(a, (st, u, rules, seat, params, buf, fws, uws))
    return np.int64(-1)


@kernel
def decide(kind, entries, params, st, u, rules, seat, buf, fws, uws):
    """The choice code of the built-in strategy ``kind`` for ``seat``: greedy and random here,
    every other kind through its address in ``entries`` (random when it has none)."""
    if kind == KIND_GREEDY:
        return greedy_decide(st, u, rules, seat, params, seat, buf)
    if KIND_GREEDY < kind < N_BUILTIN and entries[kind] != 0:
        return call_kind(kind, entries, params, st, u, rules, seat, buf, fws, uws)
    return random_decide(st, u, seat, params[seat, P_SHOW_PROB], buf)  # any other kind plays random
