"""The compiled label collector of ``shuangkou train`` (``sim.learn.labels``): it plays deals
and, at every play decision of a learner seat with two or more legal plays, writes the
learned player's features (``strategies.learned.features``) and the teacher's choice.

Compiled once for every teacher, learner and opponents: their kernels are called through the
table ``entries`` (``strategies.compiled.entries``, ``sim.core.calls``), so only kernels never
compiled before compile.

Which seat plays what: deal ``d`` uses row ``d % 2`` of ``kinds`` / ``learners`` and the
parameter table ``params_even`` or ``params_odd`` (the learner's team sits at seats {0, 2} on
even deals and {1, 3} on odd ones). At a labelled decision the teacher decides first (its
kernel reads the table ``tparams``; it draws from the seat's own streams, as it would
seated); the seat then plays the teacher's choice with probability ``beta`` (DAgger's
mixture), else its own. Everything else, the calling phase included, is the seats' own.
"""

from __future__ import annotations

import numpy as np

from sim.core import state as S
from sim.core.engine import advance, apply_code, init_deal, legal
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import MAX_CHOICES
from sim.core.rng import mix64
from strategies.compiled import decide
from strategies.expert import F_SUM, MAX_POOL, MAX_ROLLOUTS, P_ITERATIONS, P_SAMPLES
from strategies.kinds import KIND_EXPERT
from strategies.learned import B_MIDX, B_SIDX, M_MAX, MD, ND, NM_MAX, W_MDEN, W_SDEN, play_features

# the collector's scratch, past the teacher's and the learner's (tests/test_state_layout.py):
# in buf the legal plays, then the ones kept when a decision has more than M_MAX; in fws the
# teacher's values of the plays, before the features
COLLECT_BUF_FIELDS = (("B_SEL", MAX_CHOICES),)
_CB, COLLECT_BUF_END = layout(COLLECT_BUF_FIELDS, 1 << 19)
B_SEL = _CB["B_SEL"]
COLLECT_FWS_FIELDS = (("Q_TMP", MAX_CHOICES),)
_CF, COLLECT_FWS_END = layout(COLLECT_FWS_FIELDS, 1 << 17)
Q_TMP = _CF["Q_TMP"]
# ``collect_deals``'s status (int64[N_LABEL_STATUS]): deals finished, rows written
LABEL_STATUS_FIELDS = (("LS_DEALS", 1), ("LS_ROWS", 1))
_LS, N_LABEL_STATUS = layout(LABEL_STATUS_FIELDS)
LS_DEALS = _LS["LS_DEALS"]
LS_ROWS = _LS["LS_ROWS"]
_MIX = np.uint64(0x9E3779B97F4A7C15)


@kernel
def _uniform(seed, deal, i):
    """A uniform number in [0, 1) for decision ``i`` of ``deal`` (the collector's own draws:
    they never touch a seat's streams)."""
    x = mix64(seed * _MIX + np.uint64(deal) * np.uint64(0xD1B54A32D192ED03) + np.uint64(i))
    return (x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def collect_deals(seed, first, n, kinds, entries, learners, params_even, params_odd, tkind, tparams,
                  beta, rules, o_sidx, o_sden, o_nmov, o_midx, o_mden, o_label, o_q, o_deal,
                  o_seat, o_agree, st, u, buf, fws, uws, status):
    """Play deals ``first .. first + n - 1`` of ``seed`` (uint64) and write one row per label
    (module docstring); stops early when the outputs are full. ``status``:
    ``LABEL_STATUS_FIELDS`` (the rows are also returned). ``o_q``: the teacher's value of each kept
    play where it has one (expert: the mean of its first-stage rollouts, in points per deal,
    as ``strategies.search.deal_value``), else NaN."""
    cap = o_label.shape[0]
    rows = 0
    status[LS_DEALS] = 0
    for i in range(n):
        if rows + 64 > cap:  # a deal writes at most 54 rows
            break
        deal = first + i
        par = deal % 2
        params = params_even if par == 0 else params_odd
        init_deal(st, u, seed, np.uint64(deal))
        advance(st, u, rules)
        step = 0
        while st[S.S_PHASE] != S.DONE:
            seat = st[S.S_TO_ACT]
            kind = kinds[par, seat]
            if st[S.S_PHASE] == S.PLAY and learners[par, seat] != 0:
                tc = decide(tkind, entries, tparams, st, u, rules, seat, buf, fws, uws)
                samples = min(np.int64(tparams[seat, P_SAMPLES]), np.int64(MAX_POOL // 2))
                has_q = tkind == KIND_EXPERT and samples > 0 and \
                    tparams[seat, P_ITERATIONS] == 0
                if has_q:  # F_SUM holds the sums of the first stage, in legal order
                    nq = legal(st, u, buf[B_SEL:])
                    worlds = max(min(samples, MAX_ROLLOUTS // max(nq, 1)), 2)
                    for j in range(nq):
                        fws[Q_TMP + j] = fws[F_SUM + j] / worlds
                nl, ns = play_features(st, u, rules, seat, params, buf, fws)
                if nl > 1:
                    lab = 0
                    for j in range(nl):
                        if buf[j] == tc:
                            lab = j
                    for t in range(ns):
                        o_sidx[rows, t] = buf[B_SIDX + t]
                    for t in range(ns, o_sidx.shape[1]):
                        o_sidx[rows, t] = -1
                    for d in range(ND):
                        o_sden[rows, d] = fws[W_SDEN + d]
                    kept = min(nl, M_MAX)
                    if nl <= M_MAX:
                        for j in range(nl):
                            buf[B_SEL + j] = j
                        o_label[rows] = lab
                    else:  # the teacher's play first, then M_MAX - 1 others drawn uniformly
                        m = 0
                        for j in range(nl):
                            if j != lab:
                                buf[B_SEL + 1 + m] = j
                                m += 1
                        for j in range(kept - 1):
                            r = j + int(_uniform(seed, deal, 1000 * step + j) * (m - j))
                            t = buf[B_SEL + 1 + j]
                            buf[B_SEL + 1 + j] = buf[B_SEL + 1 + r]
                            buf[B_SEL + 1 + r] = t
                        buf[B_SEL] = lab
                        o_label[rows] = 0
                    for q in range(M_MAX):
                        if q < kept:
                            j = buf[B_SEL + q]
                            for t in range(NM_MAX):
                                o_midx[rows, q, t] = buf[B_MIDX + j * NM_MAX + t]
                            for d in range(MD):
                                o_mden[rows, q, d] = fws[W_MDEN + j * MD + d]
                            o_q[rows, q] = fws[Q_TMP + j] if has_q else np.nan
                        else:
                            o_q[rows, q] = np.nan
                            for t in range(NM_MAX):
                                o_midx[rows, q, t] = -1
                            for d in range(MD):
                                o_mden[rows, q, d] = 0.0
                    o_nmov[rows] = kept
                    o_deal[rows] = deal
                    o_seat[rows] = seat
                    own = decide(kind, entries, params, st, u, rules, seat, buf, fws, uws)
                    o_agree[rows] = 1 if own == tc else 0
                    rows += 1
                    code = tc if _uniform(seed, deal, 1000 * step + 999) < beta else own
                else:
                    code = buf[0]
            else:
                code = decide(kind, entries, params, st, u, rules, seat, buf, fws, uws)
            apply_code(st, u, rules, code)
            step += 1
        status[LS_DEALS] = i + 1
    status[LS_ROWS] = rows
    return rows
