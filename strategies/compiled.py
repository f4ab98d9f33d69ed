"""Dispatch from a seat's strategy kind to its numba kernel, for the compiled deal loop.

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
"""

from __future__ import annotations

from sim.core.bind import bindable
from sim.core.jit import kernel
from strategies.expert import expert_decide
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
    UINT_SCRATCH,
)
from strategies.learned import learned_decide
from strategies.params import N_PARAMS, PARAM_ROWS, ROLLOUT_ROW, param_table  # noqa: F401
from strategies.random import P_SHOW_PROB, random_decide
from strategies.search import ismcts_decide, oracle_decide, pimc_decide
from strategies.tier import new_scratch  # noqa: F401  (re-exported)

# the strategy kernels ``decide`` calls, by kind: a loop made for some kinds binds the others to
# ``absent`` (sim.harness.plugins.builtin_loops), so their kernels never compile there
KERNEL_NAMES = {
    KIND_GREEDY: "greedy_decide",
    KIND_PIMC: "pimc_decide",
    KIND_ISMCTS: "ismcts_decide",
    KIND_ORACLE: "oracle_decide",
    KIND_EXPERT: "expert_decide",
    KIND_LEARNED: "learned_decide",
}


@kernel
def absent(*args):
    """Stands in for the kernel of a strategy kind that a loop never meets."""
    return -1


bindable(globals(), *KERNEL_NAMES.values())


@kernel
def decide(kind, params, st, u, rules, seat, buf, fws, uws):
    """The choice code of the compiled strategy ``kind`` for ``seat``."""
    if kind == KIND_GREEDY:
        return greedy_decide(st, u, rules, seat, params, seat, buf)
    if kind == KIND_PIMC:
        return pimc_decide(st, u, rules, seat, params, buf, fws, uws)
    if kind == KIND_ISMCTS:
        return ismcts_decide(st, u, rules, seat, params, buf, fws, uws)
    if kind == KIND_ORACLE:
        return oracle_decide(st, u, rules, seat, params, buf, fws, uws)
    if kind == KIND_EXPERT:
        return expert_decide(st, u, rules, seat, params, buf, fws, uws)
    if kind == KIND_LEARNED:
        return learned_decide(st, u, rules, seat, params, buf, fws, uws)
    return random_decide(st, u, seat, params[seat, P_SHOW_PROB], buf)  # any other kind plays random
