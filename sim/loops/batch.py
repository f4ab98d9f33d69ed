"""Many deals stepped at once, for numpy and neural policies: ``sim.Batch``.

A batch holds ``n`` deals in 2-D state arrays (``n × ST_SIZE``, ``n × U_SIZE``). One compiled
call per step applies one action per deal for the policy's seats, then runs every deal
through its compiled seats (built-in strategies) until the policy must act again; a deal that
ends reports its settlement and its slot starts the next deal number. Observations and legal
masks use the fixed spaces of ``sim.spaces`` (the same kernels as ``Deal.obs_array`` and
``Deal.legal_mask``), so a batch run plays exactly the deals ``sim.Deal`` plays with the same
policy, whatever ``n`` (``tests/test_batch.py``)::

    b = sim.Batch(256, seed=1, seats=[None, "greedy", None, "greedy"], deals=10_000)
    while not b.done:
        o = b.observe()                      # o.obs, o.legal_mask, o.seat, o.kind, ...
        fin = b.step(policy(o.obs, o.legal_mask))
        ...                                  # fin.deal, fin.settlement of finished deals
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from sim.core import state as S
from sim.core.bits import popcount, select
from sim.core.engine import advance, apply_code, giveback_set, init_deal, legal, play_set
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.limits import MAX_DEAL
from sim.core.movegen import MAX_CHOICES, set_count, set_kth, show_mask
from sim.core.rng import check_deal, check_seed
from sim.errors import ConfigError, IllegalPlayError, UsageError
from sim.record import build_record
from sim.rules import N_RULES, Rules, as_rules
from sim.spaces import N_ACTIONS, OBS_SIZE, code_of_action, fill_mask, fill_obs
from strategies.base import Strategy
from strategies.compiled import decide
from strategies.compiled import entries as entry_table
from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, UINT_SCRATCH
from strategies.params import param_table
from strategies.registry import builtin_classes, make

# The kernels take few arguments (every array argument costs time on each call from Python):
# ``su`` holds each slot's u (as int64 bits) and st side by side, u first so that the words
# touched at every decision (u, the head of st) are contiguous; ``ctl`` holds the control
# words, the seats' strategy kinds and the rules; ``fin`` the finished deals (and their final
# states when records are kept).
SU_W = S.ST_SIZE + S.U_SIZE
# columns of the per-slot table ``meta`` (declared once: sim.core.layout)
META_FIELDS = (
    ("M_DEAL", 1),  # deal number played in the slot, -1 when idle
    ("M_SEAT", 1),  # seat to act, -1 when idle
    ("M_KIND", 1),  # 0 show, 1 giveback, 2 play, IDLE
    ("M_NLEGAL", 1),  # number of legal choices
    ("M_PENDING", 1),  # the slot's finished deal waits for room in ``fin``
    ("M_CODE", 1),  # the validated code of the policy's action
    ("M_SMODE", 1),  # M_SMODE, M_M1, M_M2: the legal-set description of the decision awaited
    ("M_M1", 1),
    ("M_M2", 1),
    ("M_FREE", 1),  # deals the slot finished since the policy last acted in it
)
_META, N_META = layout(META_FIELDS)
M_DEAL = _META["M_DEAL"]
M_SEAT = _META["M_SEAT"]
M_KIND = _META["M_KIND"]
M_NLEGAL = _META["M_NLEGAL"]
M_PENDING = _META["M_PENDING"]
M_CODE = _META["M_CODE"]
M_SMODE = _META["M_SMODE"]
M_M1 = _META["M_M1"]
M_M2 = _META["M_M2"]
M_FREE = _META["M_FREE"]
# the control words at the head of ``ctl``
CTL_FIELDS = (
    ("C_NEXT", 1),  # next deal number (-1 once deal 2**63-1 has started)
    ("C_END", 1),  # end of the deal range (-1: none)
    ("C_NFIN", 1),  # finished entries written
    ("C_SEED", 1),  # the seed (int64 bits)
    ("C_KEEP", 1),  # whether to keep final states
    ("C_KINDS", 4),  # the seats' strategy kinds (-1: the policy)
    ("C_RULES", N_RULES),  # Rules.array()
    ("C_NUWS", 1),  # sizes of the scratch arrays below
    ("C_NFWS", 1),
)
_CTL, N_CTL = layout(CTL_FIELDS)
C_NEXT = _CTL["C_NEXT"]
C_END = _CTL["C_END"]
C_NFIN = _CTL["C_NFIN"]
C_SEED = _CTL["C_SEED"]
C_KEEP = _CTL["C_KEEP"]
C_KINDS = _CTL["C_KINDS"]
C_RULES = _CTL["C_RULES"]
C_NUWS = _CTL["C_NUWS"]
C_NFWS = _CTL["C_NFWS"]
# after the control words, ``ctl`` holds the compiled seats' scratch arrays: uws (uint64
# bits), fws (float64 bits), then buf
C_UWS = N_CTL
# columns of a finished-deal row (then, with records, the final su: SU_W words)
FIN_FIELDS = (
    ("F_SLOT", 1),
    ("F_DEAL", 1),
    ("F_SETTLE", 4),  # R24, per seat
    ("F_SCORE", 1),  # attacker score
    ("F_CALLER", 1),
    ("F_VOID", 1),
)
_FIN, N_FIN = layout(FIN_FIELDS)
F_SLOT = _FIN["F_SLOT"]
F_DEAL = _FIN["F_DEAL"]
F_SETTLE = _FIN["F_SETTLE"]
F_SCORE = _FIN["F_SCORE"]
F_CALLER = _FIN["F_CALLER"]
F_VOID = _FIN["F_VOID"]
MODE_ACTIONS, MODE_INDEX, MODE_NONE = 0, 1, 2
IDLE = 3  # kind of a slot with nothing to do (deal range exhausted)
MAX_SLOTS = 2**20  # the most slots a batch may hold (≈ 7 KiB each, 17 KiB with records)
# Bounds that honest play never reaches, so a step whose private arrays were written to (a
# state the engine never makes) ends with an error instead of looping: compiled decisions in
# one deal between two of the policy's (a deal has at most 27 rounds × 4 show chances per
# deal dealt, times 1 + max_redeals <= 1001, plus 108 plays and the give-backs: < 2**17), and
# deals a slot finishes in a row without a policy decision (a void deal in which no policy
# seat had a pair to show; 64 in a row has no measurable chance).
MAX_RUN = 2**18
MAX_FREE = 64


SHOWS = -1  # M_SMODE of a show decision: M_M1 holds the showable pairs


@kernel(inline="always")
def _describe(st, u, meta, i):
    """Store the legal-set description of the decision awaited in slot ``i`` (so that
    ``_kth_code`` needs no rules cascade) and return the number of legal choices (pass
    included at a show decision)."""
    ph = st[S.S_PHASE]
    seat = st[S.S_TO_ACT]
    if ph == S.CALL:
        m = show_mask(u[S.U_ONCE + seat], u[S.U_TWICE + seat], st[S.S_CUR_CARD])
        meta[i, M_SMODE] = SHOWS
        meta[i, M_M1] = np.int64(m)
        return 1 + popcount(m)
    if ph == S.PLAY:
        mode, m1, m2 = play_set(st, u, seat)
    else:
        mode, m1, m2 = giveback_set(st, u, seat)
    meta[i, M_SMODE] = mode
    meta[i, M_M1] = np.int64(m1)
    meta[i, M_M2] = np.int64(m2)
    return set_count(mode, m1, m2)


@kernel(inline="always")
def _kth_code(meta, i, k):
    """The code of legal choice ``k`` of slot ``i`` (canonical order; 0 = pass at a show
    decision), from the description ``_describe`` stored."""
    mode = meta[i, M_SMODE]
    if mode == SHOWS:
        if k == 0:
            return np.int64(-1)
        return select(np.uint64(meta[i, M_M1]), k - 1)
    return set_kth(mode, np.uint64(meta[i, M_M1]), np.uint64(meta[i, M_M2]), k)


@kernel(inline="always")
def _settle_slot(i, su, meta, ctl, entries, params, buf, fws, uws, fin):
    """Run slot ``i`` through compiled seats, finished deals and restarts until the policy
    must act (or the deal range is exhausted, or the finished queue is full). Returns 0, or
    1 when the slot's state is not one the engine makes (see MAX_RUN, MAX_FREE)."""
    s = su[i, S.U_SIZE:]
    v = su[i, :S.U_SIZE].view(np.uint64)
    kinds = ctl[C_KINDS:C_KINDS + 4]
    rules = ctl[C_RULES:C_RULES + N_RULES]
    run = 0
    while True:
        if s[S.S_PHASE] == S.DONE:
            if meta[i, M_DEAL] >= 0:
                j = ctl[C_NFIN]
                if j >= fin.shape[0]:  # queue full: finish on the next call
                    meta[i, M_PENDING] = 1
                    meta[i, M_SEAT] = -1
                    meta[i, M_KIND] = IDLE
                    meta[i, M_NLEGAL] = 0
                    return 0
                if meta[i, M_FREE] >= MAX_FREE:
                    return 1
                meta[i, M_FREE] += 1
                fin[j, F_SLOT] = i
                fin[j, F_DEAL] = meta[i, M_DEAL]
                for k in range(4):
                    fin[j, F_SETTLE + k] = s[S.S_SETTLE + k]
                fin[j, F_SCORE] = s[S.S_SCORE]
                fin[j, F_CALLER] = s[S.S_CALLER]
                fin[j, F_VOID] = s[S.S_VOID]
                if ctl[C_KEEP]:
                    for k in range(SU_W):
                        fin[j, N_FIN + k] = su[i, k]
                ctl[C_NFIN] = j + 1
            meta[i, M_PENDING] = 0
            nxt = ctl[C_NEXT]
            if nxt < 0 or ctl[C_END] >= 0 and nxt >= ctl[C_END]:
                meta[i, M_DEAL] = -1
                meta[i, M_SEAT] = -1
                meta[i, M_KIND] = IDLE
                meta[i, M_NLEGAL] = 0
                return 0
            ctl[C_NEXT] = nxt + 1 if nxt < MAX_DEAL else -1  # no deal number past 2**63-1
            meta[i, M_DEAL] = nxt
            init_deal(s, v, np.uint64(ctl[C_SEED]), np.uint64(nxt))
            advance(s, v, rules)
            run = 0
            continue
        seat = s[S.S_TO_ACT]
        if seat < 0 or seat > 3 or run >= MAX_RUN:
            return 1
        kind = kinds[seat]
        if kind < 0:
            meta[i, M_SEAT] = seat
            meta[i, M_KIND] = s[S.S_PHASE]
            meta[i, M_NLEGAL] = _describe(s, v, meta, i)
            meta[i, M_FREE] = 0
            return 0
        run += 1
        apply_code(s, v, rules, decide(kind, entries, params, s, v, rules, seat, buf, fws, uws))


@kernel
def batch_step(su, meta, ctl, actions, mode, entries, params, fin):
    """One step of every slot (see the module docstring). ``mode``: ``actions`` are actions
    of ``sim.spaces`` (0), indices into the canonical legal list (1), or ignored (2: only
    start or finish pending slots). Returns ``(k, pending)``: ``k`` = -1 - i if slot i's
    action is not legal (nothing is changed then), -1 - n - i if slot i's state is not one the
    engine makes (its private arrays were written to), else the number of finished deals
    written to ``fin``; ``pending``: slots left to finish because ``fin`` filled up."""
    n = su.shape[0]
    n_uws = ctl[C_NUWS]
    n_fws = ctl[C_NFWS]
    uws = ctl[C_UWS:C_UWS + n_uws].view(np.uint64)
    fws = ctl[C_UWS + n_uws:C_UWS + n_uws + n_fws].view(np.float64)
    buf = ctl[C_UWS + n_uws + n_fws:]
    for i in range(n):  # validate every action before changing anything
        if meta[i, M_SEAT] < 0 or mode == MODE_NONE:
            continue
        a = actions[i]
        if mode == MODE_INDEX:
            if a < 0 or a >= meta[i, M_NLEGAL]:
                return -1 - i, 0
            continue
        s = su[i, S.U_SIZE:]
        v = su[i, :S.U_SIZE].view(np.uint64)
        if a < 0 or a >= N_ACTIONS:
            return -1 - i, 0
        c = code_of_action(s[S.S_PHASE], s[S.S_TRUMP], a)
        if c == -2:
            return -1 - i, 0
        if c >= 0 or s[S.S_PHASE] != S.CALL:
            m = legal(s, v, buf)
            ok = False
            for k in range(m):
                if buf[k] == c:
                    ok = True
                    break
            if not ok:
                return -1 - i, 0
        meta[i, M_CODE] = c
    ctl[C_NFIN] = 0
    for i in range(n):
        if meta[i, M_PENDING]:
            if _settle_slot(i, su, meta, ctl, entries, params, buf, fws, uws, fin):
                return -1 - n - i, 0
        elif meta[i, M_SEAT] >= 0 and mode != MODE_NONE:
            code = _kth_code(meta, i, actions[i]) if mode == MODE_INDEX else meta[i, M_CODE]
            apply_code(su[i, S.U_SIZE:], su[i, :S.U_SIZE].view(np.uint64),
                       ctl[C_RULES:C_RULES + N_RULES], code)
            if _settle_slot(i, su, meta, ctl, entries, params, buf, fws, uws, fin):
                return -1 - n - i, 0
    pending = 0
    for i in range(n):
        pending += meta[i, M_PENDING]
    return ctl[C_NFIN], pending


@kernel
def batch_observe(su, meta, obs, mask, buf, want_obs, want_mask):
    """Observation vectors and legal masks of the seats to act (zeros for idle slots)."""
    for i in range(su.shape[0]):
        seat = meta[i, M_SEAT]
        if seat < 0:
            if want_obs:
                obs[i, :] = 0
            if want_mask:
                mask[i, :] = False
            continue
        s = su[i, S.U_SIZE:]
        v = su[i, :S.U_SIZE].view(np.uint64)
        if want_obs:
            fill_obs(s, v, seat, obs[i])
        if want_mask:
            fill_mask(s, v, buf, mask[i])


class BatchObs(NamedTuple):
    """What ``Batch.observe()`` returns; arrays are overwritten by the next call."""

    obs: np.ndarray  # int16[n, OBS_SIZE]: the observation vectors (sim.obs_spec())
    legal_mask: np.ndarray  # bool[n, N_ACTIONS]
    seat: np.ndarray  # int64[n]: seat to act, -1 for an idle slot
    kind: np.ndarray  # int64[n]: 0 show, 1 giveback, 2 play, 3 idle
    n_legal: np.ndarray  # int64[n]: number of legal choices
    deal: np.ndarray  # int64[n]: deal number in each slot (-1 idle)


class Finished:
    """The deals that ended during a step (possibly none). The fields are numpy views made on
    first access (a policy that ignores them pays nothing):

    ``slot``, ``deal`` (int64[k]), ``settlement`` (int64[k, 4], R24 per seat),
    ``attacker_score`` (int64[k]), ``void`` (bool[k]), ``records`` (the records of
    docs/record.md with ``records=True``, else None).
    """

    __slots__ = ("_f", "records")

    def __init__(self, f: np.ndarray, records: list[dict[str, Any]] | None) -> None:
        self._f = f
        self.records = records

    def __len__(self) -> int:
        return self._f.shape[0]

    @property
    def slot(self) -> np.ndarray:
        return self._f[:, F_SLOT]

    @property
    def deal(self) -> np.ndarray:
        return self._f[:, F_DEAL]

    @property
    def settlement(self) -> np.ndarray:
        return self._f[:, F_SETTLE:F_SETTLE + 4]

    @property
    def attacker_score(self) -> np.ndarray:
        return self._f[:, F_SCORE]

    @property
    def void(self) -> np.ndarray:
        return self._f[:, F_VOID] != 0

    def __repr__(self) -> str:
        return f"Finished(deal={self.deal.tolist()})"


def _seat_tables(seats: Sequence[Any] | None) -> tuple[np.ndarray, np.ndarray, list[str], bool]:
    seats = [None] * 4 if seats is None else \
        list(seats) if isinstance(seats, (list, tuple)) else seats
    if not isinstance(seats, list) or len(seats) != 4:
        raise ConfigError(f"seats {seats!r}: give four entries, None for the policy's seats "
                          f"or a compiled strategy spec such as 'greedy'")
    kinds = np.full(4, -1, dtype=np.int64)
    rows: list[list[float]] = []
    names = []
    for s, spec in enumerate(seats):
        if spec is None:
            rows.append([])
            names.append("python")
            continue
        strat = spec if isinstance(spec, Strategy) else make(spec)
        if not strat.runs_compiled() or strat.compiled_kind is None:
            what = ("is a compiled plug-in, which sim.Batch does not seat (sim.env's opponents "
                    "and tournaments do)" if strat.runs_compiled() else
                    "has no compiled kernel")
            raise ConfigError(f"seat {s}: strategy {strat.spec()!r} {what}; Batch seats are "
                              f"None (the policy) or built-in compiled strategies ("
                              f"{', '.join(c.name for c in builtin_classes())})")
        kinds[s] = strat.compiled_kind
        rows.append(strat.compiled_params())
        names.append(strat.spec())
    if (kinds >= 0).all():
        raise ConfigError("Batch seats: at least one seat must be None (the policy's); "
                          "four compiled seats play faster through `shuangkou play`, "
                          "sim.loops.runner.iter_records or a tournament")
    return kinds, param_table(rows), names, bool((kinds >= 0).any())


class Batch:
    """``n`` deals stepped at once (see the module docstring).

    Parameters
    ----------
    n : int
        Number of deals in play at a time (slots).
    seed : int
        Master seed; deal numbers ``first_deal, first_deal + 1, …`` are handed to slots in
        order as they start.
    first_deal : int
    rules : Rules, optional
    seats : four entries, optional
        ``None`` for a seat the policy plays, or a compiled strategy (spec string such as
        ``"greedy"`` or a Strategy object) that plays inside the compiled step. Default: the
        policy plays all four seats.
    deals : int, optional
        Play this many deals in all, then let slots go idle (``done`` becomes True); default
        endless.
    records : bool
        Also build the record (docs/record.md) of every finished deal (slower).
    """

    def __init__(self, n: int, seed: int, first_deal: int = 0, rules: Rules | None = None,
                 seats: Sequence[Any] | None = None, deals: int | None = None,
                 records: bool = False) -> None:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) \
                or not 1 <= n <= MAX_SLOTS:
            raise ConfigError(f"Batch size n={n!r} must be an integer in 1 … {MAX_SLOTS:,} "
                              f"(2**20)")
        self.n = int(n)
        self.seed = check_seed(seed)
        self.first_deal = check_deal(first_deal, "first_deal")
        self.rules = as_rules(rules)
        last = MAX_DEAL - self.first_deal + 1  # deals numbered first_deal … 2**63-1
        if deals is not None and (isinstance(deals, bool)
                                  or not isinstance(deals, (int, np.integer))
                                  or not 0 <= deals <= last):
            raise ConfigError(f"deals={deals!r} must be None (endless: up to deal 2**63-1) or "
                              f"an integer in 0 … {last} (first_deal + deals <= 2**63, "
                              f"first_deal={self.first_deal})")
        self.kinds, self.params, self.seat_names, _ = _seat_tables(seats)
        # the compiled seats' kernels (each compiled once on this machine); the step is
        # compiled once for every set of seats
        self._entries = entry_table(k for k in self.kinds if k >= 0)
        self.records = bool(records)
        try:
            self._alloc(n, records)
        except MemoryError:
            per = (SU_W + N_META + 2 * (N_FIN + (SU_W if records else 0))) * 8 \
                + OBS_SIZE * 2 + N_ACTIONS
            raise ConfigError(f"Batch size n={n}: not enough memory for {n:,} slots "
                              f"(≈ {n * per / 2**30:.1f} GiB); use a smaller n") from None
        self._ctl[C_NEXT] = self.first_deal
        # C_END: one past the last deal, or -1: up to deal 2**63-1 (C_NEXT becomes -1 there)
        end = -1 if deals is None else self.first_deal + int(deals)
        self._ctl[C_END] = end if end <= MAX_DEAL else -1
        self._ctl[C_SEED] = np.uint64(self.seed).view(np.int64)
        self._ctl[C_KEEP] = self.records
        self._ctl[C_KINDS:C_KINDS + 4] = self.kinds
        self._ctl[C_RULES:C_RULES + N_RULES] = self.rules.array()
        self._none = np.zeros(n, dtype=np.int64)
        self._shape = (self.n,)
        # the documented outputs are read-only views of the private arrays: a view made from
        # a read-only buffer cannot be made writeable again (writing n_legal would let an
        # illegal index through)
        meta = _readonly(self._meta)
        self.seat = meta[:, M_SEAT]
        self.kind = meta[:, M_KIND]
        self.n_legal = meta[:, M_NLEGAL]
        self.deal = meta[:, M_DEAL]
        self._out = BatchObs(_readonly(self._obs), _readonly(self._mask), self.seat,
                             self.kind, self.n_legal, self.deal)
        self.deals_finished = 0
        self._pending = self._call(self._none, MODE_NONE)  # start the first deals

    def _alloc(self, n: int, records: bool) -> None:
        self._su = np.zeros((n, SU_W), dtype=np.int64)
        self._st = self._su[:, S.U_SIZE:]  # views, for Python code and tests
        self._u = self._su[:, :S.U_SIZE].view(np.uint64)
        self._st[:, S.S_PHASE] = S.DONE
        self._meta = np.zeros((n, N_META), dtype=np.int64)
        self._meta[:, M_DEAL] = -1
        self._meta[:, M_SEAT] = -1
        self._meta[:, M_KIND] = IDLE
        self._meta[:, M_PENDING] = 1
        if (self.kinds >= 0).any():
            n_uws, n_fws, n_buf = UINT_SCRATCH, FLOAT_SCRATCH, INT_SCRATCH
        else:
            n_uws, n_fws, n_buf = 1, 1, MAX_CHOICES
        self._ctl = np.zeros(C_UWS + n_uws + n_fws + n_buf, dtype=np.int64)
        self._ctl[C_NUWS] = n_uws
        self._ctl[C_NFWS] = n_fws
        cap = 2 * n + 16
        self._fin = np.zeros((cap, N_FIN + (SU_W if records else 0)), dtype=np.int64)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.int16)
        self._mask = np.zeros((n, N_ACTIONS), dtype=np.bool_)
        self._mbuf = np.zeros(MAX_CHOICES, dtype=np.int64)

    # --- state ----------------------------------------------------------------------------
    # ``seat``, ``kind``, ``n_legal`` and ``deal`` are read-only int64[n] views that every
    # step updates in place: seat to act (-1 idle); 0 show, 1 giveback, 2 play, 3 idle;
    # number of legal choices (0 when idle); deal number played in each slot (-1 when idle).

    @property
    def done(self) -> bool:
        """True once every slot is idle (only with a ``deals`` limit)."""
        return bool((self._meta[:, M_SEAT] < 0).all()) and not self._meta[:, M_PENDING].any()

    def observe(self, obs: bool = True, mask: bool = True) -> BatchObs:
        """Observation vectors and legal masks of the seats to act (one compiled call).
        The arrays are read-only views of the batch's own buffers, overwritten by the next
        ``observe`` (copy them to keep them)."""
        batch_observe(self._su, self._meta, self._obs, self._mask, self._mbuf, obs, mask)
        return self._out

    # --- stepping -------------------------------------------------------------------------
    def step(self, actions: Any) -> Finished:
        """Apply one action (``sim.spaces``) per slot (ignored for idle slots); returns the
        deals that ended. An illegal action raises IllegalPlayError and changes nothing."""
        return self._step(actions, MODE_ACTIONS)

    def step_index(self, index: Any) -> Finished:
        """Like ``step``, with choices given by position in the canonical legal list
        (``0 … n_legal - 1``; at a show decision 0 is the pass): the fastest path for
        policies that need no mask, e.g. uniform random."""
        return self._step(index, MODE_INDEX)

    def _step(self, actions: Any, mode: int) -> Finished:
        if type(actions) is np.ndarray and actions.dtype == np.int64 and \
                actions.shape == self._shape:  # the fast path
            return self._call(actions, mode)
        a = np.asarray(actions)
        if a.shape != self._shape:
            raise ConfigError(f"actions must have shape ({self.n},), got {a.shape}")
        if a.dtype != np.int64:
            if a.dtype.kind not in "iu":
                raise ConfigError(f"actions must be integers, got dtype {a.dtype}")
            a = a.astype(np.int64)
        return self._call(a, mode)

    def _call(self, a: np.ndarray, mode: int) -> Finished:
        k, pending = batch_step(self._su, self._meta, self._ctl, a, mode, self._entries,
                                self.params, self._fin)
        if k == 0 and not pending:
            return Finished(_NO_ROWS, [] if self.records else None)
        if k > 0 and not pending:
            return self._finished(k)
        parts = []
        for _ in range(_MAX_ROUNDS):
            if k < 0:
                self._refuse(k, a, mode)
            if k:
                parts.append(self._finished(k))
            if not pending:
                break
            mode = MODE_NONE  # the queue filled up: finish and restart the pending slots
            k, pending = batch_step(self._su, self._meta, self._ctl, a, mode, self._entries,
                                    self.params, self._fin)
        else:  # each round finishes 2n + 16 deals: honest play needs a few rounds at most
            self._corrupt(int(np.flatnonzero(self._meta[:, M_PENDING])[0]))
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return Finished(_NO_ROWS, [] if self.records else None)
        return Finished(_frozen(np.concatenate([p._f for p in parts])),
                        [r for p in parts for r in p.records] if self.records else None)

    def _refuse(self, k: int, a: np.ndarray, mode: int) -> None:
        i = -1 - k
        if i >= self.n:
            self._corrupt(i - self.n)
        self._illegal(i, int(a[i]), mode)

    def _corrupt(self, i: int) -> None:
        raise UsageError(f"sim.Batch slot {i} (deal {int(self._meta[i, M_DEAL])}) holds a state "
                         f"that play never reaches (its private arrays were written to): the "
                         f"step stopped; make a new Batch")

    def _finished(self, k: int) -> Finished:
        f = _frozen(self._fin[:k].copy())
        self.deals_finished += k
        records = None
        if self.records:
            records = [build_record(f[j, N_FIN + S.U_SIZE:],
                                    f[j, N_FIN:N_FIN + S.U_SIZE].view(np.uint64), self.seed,
                                    int(f[j, F_DEAL]), self.rules, self.seat_names)
                       for j in range(k)]
            f = f[:, :N_FIN]
        return Finished(f, records)

    def _illegal(self, i: int, a: int, mode: int) -> None:
        what = "index" if mode == MODE_INDEX else "action"
        kind = ("show", "giveback", "play", "idle")[int(self._meta[i, M_KIND])]
        raise IllegalPlayError(
            f"slot {i} (deal {int(self._meta[i, M_DEAL])}, seat {int(self._meta[i, M_SEAT])}): "
            f"{what} {a} is not legal at this {kind} decision"
            + (f": use 0 … {int(self._meta[i, M_NLEGAL]) - 1}" if mode == MODE_INDEX else
               " (see observe().legal_mask)"))

    def __repr__(self) -> str:
        return (f"Batch(n={self.n}, seed={self.seed}, first_deal={self.first_deal}, "
                f"finished={self.deals_finished})")


def _readonly(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written, nor made writeable (its buffer is read-only)."""
    return np.asarray(memoryview(a).toreadonly())


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


_NO_ROWS = _frozen(np.zeros((0, N_FIN), dtype=np.int64))
_MAX_ROUNDS = 1000
