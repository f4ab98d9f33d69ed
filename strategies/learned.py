"""``learned``: a policy network distilled from ``expert`` (docs/learning.md), played by a
numba forward pass inside the compiled deal loops, ``sim.Batch`` and the Python tier.

What it decides
    Trick play (R16–R21) by the network: every legal play is scored from an embedding of the
    seat's own view and the play's own features; the best score is played (the first in
    ``legal``'s canonical order on a tie). A forced play is played at once. Calling (R6–R8)
    and give-backs are not learned: they use expert's default calling rule (greedy's show rule
    with ``show_at``, ``min_cards``, ``partner_margin``) and greedy's give-back.

The network (the trainer, ``sim.learn.jaxnet``, computes exactly this)::

    h1  = relu(b1 + sum_k W1[sidx_k] + sden @ Wd)        state: active binary features sidx,
    h2  = relu(b2 + h1 @ W2)                            dense features sden
    g   = b3 + h2 @ W3
    z_j = relu(g + bm + sum_k M[midx_jk] + mden_j @ Md) play j: active features midx_j, mden_j
    s_j = z_j . v

Fairness: ``features`` reads only the seat's own hand, the public record (played cards,
voids shown, the current trick, the caller and the pair shown) and greedy's move (itself a
fair kernel); ``tests/test_learned.py`` plays deals through both tiers (the Python tier runs
the kernel on the masked state) and requires identical records.

The weights travel in the seat's row of the parameter table (``strategies.params``): the
first ``N_PARAMS`` slots hold the header (``LEARNED_PARAM_FIELDS``), the flat weights follow,
so every loop that passes a parameter table passes them with no new argument. The file is a
plain ``.npz`` read with ``allow_pickle=False``: loading weights never runs code.
"""

from __future__ import annotations

import os

import numpy as np

import sim.view as view
from sim.cards import (
    ABOVE_STRENGTH,
    GROUP,
    GROUP_MASK,
    KEY_OF_ID,
    POINTS_KEY,
    STRENGTH,
    TRUMP_GROUP,
)
from sim.core import state as S
from sim.core.bits import popcount
from sim.core.engine import legal
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import code_first, code_second
from sim.core.trick import beats
from strategies import learned_weights as LW
from strategies.base import param
from strategies.greedy import (
    FIVE_POINTS_MASK,
    GREEDY_CALL_FIELDS,
    TEN_POINTS_MASK,
    greedy_decide,
    greedy_giveback,
    greedy_show,
    is_master,
    outside_masks,
    voids_after,
)
from strategies.kinds import KIND_LEARNED
from strategies.learned_weights import (  # noqa: F401  (the weights file: public here too)
    DM,
    DS,
    FEATURE_VERSION,
    MAX_WEIGHTS_BYTES,
    MD,
    MV_GREEDY,
    ND,
    NM_MAX,
    NS_MAX,
    WEIGHT_NAMES,
    WEIGHTS_FORMAT,
    WEIGHTS_VERSION,
    flat_row,
    load_networks,
    load_weights,
    n_weights,
    read_npz,
    save_weights,
    shipped_weights,
    weight_shapes,
    weights_row,
)
from strategies.params import N_PARAMS, ROLLOUT_ROW, param_row
from strategies.tier import CompiledStrategy

M_MAX = 40  # plays kept per training example (the teacher's and up to M_MAX - 1 others)

# --- the parameter row: header, then the flat weights -----------------------------------
LEARNED_PARAM_FIELDS = GREEDY_CALL_FIELDS + (("P_H1", 1), ("P_H2", 1), ("P_G", 1),
                                            ("P_GREEDY_BIAS", 1), ("P_NETS", 1))
_P, N_LEARNED_PARAMS = layout(LEARNED_PARAM_FIELDS)
P_H1 = _P["P_H1"]
P_H2 = _P["P_H2"]
P_G = _P["P_G"]
P_GREEDY_BIAS = _P["P_GREEDY_BIAS"]
P_NETS = _P["P_NETS"]  # networks in the tail, one after another: their scores are averaged
TAIL = N_PARAMS  # the weights start here in the row

# scratch: where the kernel keeps its lists (``buf``: the legal codes use the first
# MAX_CHOICES slots) and its vectors (``fws``)
SCRATCH_FIELDS = (("B_SIDX", LW.NS_MAX), ("B_MIDX", 1536 * LW.NM_MAX))
_B, _ = layout(SCRATCH_FIELDS, start=2048)
B_SIDX = _B["B_SIDX"]
B_MIDX = _B["B_MIDX"]
FLOAT_FIELDS = (("W_SDEN", LW.ND), ("W_H1", 1024), ("W_H2", 1024), ("W_G", 1024),
                ("W_MDEN", 1536 * LW.MD), ("W_SCORES", 1536), ("W_SCORES2", 1536))
_W, _ = layout(FLOAT_FIELDS)
W_SDEN = _W["W_SDEN"]
W_H1 = _W["W_H1"]
W_H2 = _W["W_H2"]
W_G = _W["W_G"]
W_MDEN = _W["W_MDEN"]
W_SCORES = _W["W_SCORES"]
W_SCORES2 = _W["W_SCORES2"]  # a further network's scores, before they are added


@kernel
def _points_of(o, w):
    """Face points (R3) of the keys in the (once, twice) masks ``o``, ``w`` (a key's points
    do not depend on the trump suit: greedy's masks)."""
    return 5 * (popcount(o & FIVE_POINTS_MASK) + popcount(w & FIVE_POINTS_MASK)) + \
        10 * (popcount(o & TEN_POINTS_MASK) + popcount(w & TEN_POINTS_MASK))


@kernel
def _seen_features(st, seat, mo, mw, po, pw, pos, leader, buf):
    """``features``' first active features of the state, at ``buf[B_SIDX:]`` (returns how
    many): the cards in ``seat``'s hand (``mo`` once, ``mw`` twice) and played (``po``,
    ``pw``), the suits each other seat showed void in, the cards of the current trick by seat
    (``pos`` played from ``leader``) and the position in the trick."""
    one = np.uint64(1)
    ns = 0
    for k in range(54):
        kk = np.uint64(k)
        if (mo >> kk) & one:
            buf[B_SIDX + ns] = LW.F_HAND1 + k
            ns += 1
        if (mw >> kk) & one:
            buf[B_SIDX + ns] = LW.F_HAND2 + k
            ns += 1
        if (po >> kk) & one:
            buf[B_SIDX + ns] = LW.F_PLAYED1 + k
            ns += 1
        if (pw >> kk) & one:
            buf[B_SIDX + ns] = LW.F_PLAYED2 + k
            ns += 1
    for r in range(1, 4):
        s = (seat + r) % 4
        v = view.voids(st, s)
        for g in range(4):
            if (v >> g) & 1:
                buf[B_SIDX + ns] = LW.F_VOID + 4 * (r - 1) + g
                ns += 1
    for p in range(pos):
        r = (leader + p - seat) % 4
        buf[B_SIDX + ns] = LW.F_TRICK_A + 54 * (r - 1) + view.trick_first(st, p)
        ns += 1
        if view.trick_second(st, p) >= 0:
            buf[B_SIDX + ns] = LW.F_TRICK_B + 54 * (r - 1) + view.trick_second(st, p)
            ns += 1
    buf[B_SIDX + ns] = LW.F_POS + pos
    ns += 1
    return ns


@kernel
def _dense_features(mo, mw, po, pw, out1, out2, trick_pts, att, left, n, fws):
    """``features``' dense features of the state, at ``fws[W_SDEN:]``: points (the
    attackers', the defenders', the trick's, those still out, the seat's own), cards left,
    trumps held, the number ``n`` of legal plays, and cards out and held per group (``out1``,
    ``out2``: the cards outside the seat's hand once and twice)."""
    played_pts = _points_of(po, pw)
    mine = _points_of(mo, mw)
    done_pts = played_pts - trick_pts  # points in completed tricks
    fws[W_SDEN + LW.D_ATT] = att / 100.0
    fws[W_SDEN + LW.D_DEF] = (done_pts - att) / 100.0
    fws[W_SDEN + LW.D_TRICK] = trick_pts / 50.0
    fws[W_SDEN + LW.D_OUT] = (200 - played_pts - mine) / 100.0
    fws[W_SDEN + LW.D_MINE] = mine / 50.0
    fws[W_SDEN + LW.D_LEFT] = left / 27.0
    tm = GROUP_MASK[TRUMP_GROUP]
    fws[W_SDEN + LW.D_TRUMPS] = (popcount(mo & tm) + popcount(mw & tm)) / 27.0
    fws[W_SDEN + LW.D_CHOICES] = n / 32.0
    for g in range(4):
        gm = GROUP_MASK[g]
        fws[W_SDEN + LW.D_OUT_G + g] = (popcount(out1 & gm) + popcount(out2 & gm)) / 20.0
        fws[W_SDEN + LW.D_MINE_G + g] = (popcount(mo & gm) + popcount(mw & gm)) / 20.0


@kernel
def features(st, u, rules, seat, params, n, buf, fws):
    """Write the features of ``seat``'s play decision: the state's active features at
    ``buf[B_SIDX:]`` (returns how many), its dense ones at ``fws[W_SDEN:]``, and for each of
    the ``n`` legal plays in ``buf[:n]`` its active features at ``buf[B_MIDX + j * NM_MAX:]``
    (padded with -1) and its dense ones at ``fws[W_MDEN + j * MD:]``. Reads only the seat's
    own view (module docstring); ``buf[n]`` holds greedy's move on entry."""
    trump = view.trump(st)
    mo = view.hand_once(u, seat)
    mw = view.hand_twice(u, seat)
    po = view.played_once(u)
    pw = view.played_twice(u)
    pos = view.trick_pos(st)
    leader = view.leader(st)
    ns = _seen_features(st, seat, mo, mw, po, pw, pos, leader, buf)
    pair = False
    lead_group = -1
    w = 0
    partner_winning = False
    best_s = -1
    best_trump = False
    trick_pts = 0
    if pos > 0:
        lead_group = GROUP[view.trick_first(st, 0)]
        pair = view.trick_second(st, 0) >= 0
        buf[B_SIDX + ns] = LW.F_LEAD_GROUP + lead_group
        ns += 1
        if pair:
            buf[B_SIDX + ns] = LW.F_LEAD_PAIR
            ns += 1
        w = view.trick_winner_pos(st)
        partner_winning = (((leader + w) % 4) & 1) == (seat & 1)
        buf[B_SIDX + ns] = LW.F_WIN_PARTNER if partner_winning else LW.F_WIN_OPP
        ns += 1
        kw = view.trick_first(st, w)
        best_s = STRENGTH[kw]
        best_trump = GROUP[kw] == TRUMP_GROUP
        trick_pts = view.trick_points_now(st)
    caller = view.caller(st)
    attacker = (caller & 1) == (seat & 1)
    if attacker:
        buf[B_SIDX + ns] = LW.F_ATTACKER
        ns += 1
    buf[B_SIDX + ns] = LW.F_CALLER + (caller - seat) % 4
    ns += 1
    if view.shown_card(st) >= 0:
        buf[B_SIDX + ns] = LW.F_CALL_KEY + KEY_OF_ID[trump, view.shown_card(st)]
        ns += 1
    buf[B_SIDX + ns] = LW.F_NTRICKS + min(view.n_tricks(st), 26)
    ns += 1
    att = view.attacker_points(st)
    buf[B_SIDX + ns] = LW.F_ATT_PTS + min(att // 10, 20)
    ns += 1
    left = view.cards_left(st)
    out1, out2 = outside_masks(u, seat)
    _dense_features(mo, mw, po, pw, out1, out2, trick_pts, att, left, n, fws)
    # the plays
    greedy_code = buf[n]
    voids = voids_after(st, seat)
    last_trick = left == 1
    for j in range(n):
        c = buf[j]
        a = code_first(c)
        b = code_second(c)
        at = B_MIDX + j * LW.NM_MAX
        m = 0
        buf[at + m] = LW.MV_A + a
        m += 1
        if b >= 0:
            buf[at + m] = LW.MV_B + b
            m += 1
            buf[at + m] = LW.MV_PAIR if b == a else LW.MV_TWO
        else:
            buf[at + m] = LW.MV_SINGLE
        m += 1
        is_pair = b == a
        beat = pos > 0 and beats(a, b, pair, lead_group, best_s, best_trump)
        if beat:
            buf[at + m] = LW.MV_BEATS
            m += 1
            if pos == 3:
                buf[at + m] = LW.MV_WINS
                m += 1
        if is_master(voids, a, is_pair, out1, out2):
            buf[at + m] = LW.MV_MASTER
            m += 1
        if c == greedy_code:
            buf[at + m] = LW.MV_GREEDY
            m += 1
        if pos > 0 and partner_winning:
            buf[at + m] = LW.MV_PARTNER_WIN
            m += 1
        ga = GROUP[a]
        if pos > 0 and ga == lead_group:
            buf[at + m] = LW.MV_FOLLOWS
            m += 1
        if ga == TRUMP_GROUP:
            buf[at + m] = LW.MV_TRUMP
            m += 1
        pts = POINTS_KEY[trump, a] + (POINTS_KEY[trump, b] if b >= 0 else 0)
        buf[at + m] = LW.MV_PTS + min(pts // 5, 4)
        m += 1
        if last_trick:
            buf[at + m] = LW.MV_LAST
            m += 1
        # cards of a's group left in my hand after the play
        gm = GROUP_MASK[ga]
        cnt = popcount(mo & gm) + popcount(mw & gm) - 1
        if b >= 0 and GROUP[b] == ga:
            cnt -= 1
        if cnt == 0:
            buf[at + m] = LW.MV_VOIDS
            m += 1
        above = popcount((out2 if is_pair else out1) & ABOVE_STRENGTH[a])
        buf[at + m] = LW.MV_ABOVE + min(above, 3)
        m += 1
        if pos <= 1:
            buf[at + m] = LW.MV_PARTNER_AFTER
            m += 1
        if pos < 3 and (voids >> (lead_group if pos > 0 else ga)) & 1:
            buf[at + m] = LW.MV_OPP_VOID
            m += 1
        while m < LW.NM_MAX:
            buf[at + m] = -1
            m += 1
        dt = W_MDEN + j * LW.MD
        fws[dt + LW.MD_PTS] = pts / 20.0
        fws[dt + LW.MD_STRENGTH] = STRENGTH[a] / 20.0
        fws[dt + LW.MD_TAKE] = (trick_pts + pts) / 50.0
        fws[dt + LW.MD_LEFT_G] = cnt / 10.0
        fws[dt + LW.MD_OUT_G] = (popcount(out1 & gm) + popcount(out2 & gm)) / 20.0
    return ns


@kernel
def net_scores(w, base, h1n, h2n, gn, ns, n, buf, fws, out):
    """The network's score of each of the ``n`` plays whose features ``features`` wrote, into
    ``fws[out + j]``; ``w``: the seat's parameter row, the network's weights from ``base``
    on. Returns where its weights end (an ensemble's next network starts there)."""
    o_w1 = base
    o_wd = o_w1 + LW.DS * h1n
    o_b1 = o_wd + LW.ND * h1n
    o_w2 = o_b1 + h1n
    o_b2 = o_w2 + h1n * h2n
    o_w3 = o_b2 + h2n
    o_b3 = o_w3 + h2n * gn
    o_m = o_b3 + gn
    o_md = o_m + LW.DM * gn
    o_bm = o_md + LW.MD * gn
    o_v = o_bm + gn
    for i in range(h1n):
        fws[W_H1 + i] = w[o_b1 + i]
    for t in range(ns):
        r = o_w1 + buf[B_SIDX + t] * h1n
        for i in range(h1n):
            fws[W_H1 + i] += w[r + i]
    for d in range(LW.ND):
        x = fws[W_SDEN + d]
        if x != 0.0:
            r = o_wd + d * h1n
            for i in range(h1n):
                fws[W_H1 + i] += x * w[r + i]
    for i in range(h2n):
        fws[W_H2 + i] = w[o_b2 + i]
    for i in range(h1n):
        x = fws[W_H1 + i]
        if x > 0.0:  # relu
            r = o_w2 + i * h2n
            for j in range(h2n):
                fws[W_H2 + j] += x * w[r + j]
    for i in range(gn):
        fws[W_G + i] = w[o_b3 + i] + w[o_bm + i]
    for i in range(h2n):
        x = fws[W_H2 + i]
        if x > 0.0:
            r = o_w3 + i * gn
            for j in range(gn):
                fws[W_G + j] += x * w[r + j]
    z = W_H1  # h1 is no longer needed: the play's hidden vector goes there
    for p in range(n):
        for i in range(gn):
            fws[z + i] = fws[W_G + i]
        at = B_MIDX + p * LW.NM_MAX
        for t in range(LW.NM_MAX):
            f = buf[at + t]
            if f < 0:
                break
            r = o_m + f * gn
            for i in range(gn):
                fws[z + i] += w[r + i]
        dt = W_MDEN + p * LW.MD
        for d in range(LW.MD):
            x = fws[dt + d]
            if x != 0.0:
                r = o_md + d * gn
                for i in range(gn):
                    fws[z + i] += x * w[r + i]
        s = 0.0
        for i in range(gn):
            x = fws[z + i]
            if x > 0.0:
                s += x * w[o_v + i]
        fws[out + p] = s
    return o_v + gn


@kernel
def play_features(st, u, rules, seat, params, buf, fws):
    """The legal plays of ``seat`` at ``buf[:n]`` and, when there are two or more, their
    features (``features``); returns ``(n, ns)`` (``ns`` = 0 for a forced play)."""
    g = greedy_decide(st, u, rules, seat, params, np.int64(ROLLOUT_ROW), buf)
    n = legal(st, u, buf)
    if n == 1:
        return n, 0
    buf[n] = g
    return n, features(st, u, rules, seat, params, n, buf, fws)


@kernel
def learned_play(st, u, rules, seat, params, buf, fws):
    """The network's play for ``seat`` (``buf[:n]``: the legal codes)."""
    n, ns = play_features(st, u, rules, seat, params, buf, fws)
    if n == 1:
        return buf[0]
    w = params[seat]
    out = W_SCORES
    h1n, h2n, gn = np.int64(w[P_H1]), np.int64(w[P_H2]), np.int64(w[P_G])
    base = net_scores(w, np.int64(TAIL), h1n, h2n, gn, ns, n, buf, fws, out)
    nets = np.int64(w[P_NETS])
    if nets > 1:  # an ensemble: the mean of its networks' scores
        for k in range(1, nets):
            base = net_scores(w, base, h1n, h2n, gn, ns, n, buf, fws, W_SCORES2)
            for j in range(n):
                fws[out + j] += fws[W_SCORES2 + j]
        for j in range(n):
            fws[out + j] /= nets
    g = buf[n]  # greedy's move (play_features)
    for j in range(n):
        if buf[j] == g:
            fws[out + j] += w[P_GREEDY_BIAS]
    best = 0
    for j in range(1, n):
        if fws[out + j] > fws[out + best]:
            best = j
    return buf[best]


@kernel
def learned_decide(st, u, rules, seat, params, buf, fws, uws):
    """The learned player's choice code (module docstring)."""
    ph = view.phase(st)
    if ph == S.CALL:
        return greedy_show(st, u, seat, params, seat)
    if ph == S.GIVEBACK:
        return greedy_giveback(st, u, seat)
    return learned_play(st, u, rules, seat, params, buf, fws)



class LearnedStrategy(CompiledStrategy):
    """Policy network distilled from expert: the network plays the tricks; calling and
    give-backs by expert's default rule (docs/learning.md)."""

    name = "learned"
    compiled_kind = KIND_LEARNED
    params_tail = True  # its parameter row carries the weights after the N_PARAMS header
    weights = param("", str, doc="weights file (.npz, `shuangkou train`); empty: the shipped "
                                 "weights")
    show_at = param(0.40, float, lo=0.0, hi=1.0, doc="calling: greedy's show_at (expert's)")
    min_cards = param(18, int, lo=1, hi=27, doc="calling: greedy's min_cards (expert's)")
    partner_margin = param(0.10, float, lo=0.0, hi=1.0,
                           doc="calling: greedy's partner_margin (expert's)")
    greedy_bias = param(-1.0, float, lo=-100.0, hi=100.0,
                        doc="added to the network's score of greedy's move before the best is "
                            "played (< 0: deviate from greedy more often than imitation alone "
                            "does; docs/learning.md)")

    def weights_path(self) -> str:
        return os.path.expanduser(self.weights) if self.weights else shipped_weights()

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return learned_decide(st, u, rules, seat, params, buf, fws, uws)

    def compiled_params(self) -> np.ndarray:
        """The header, then the weights (``params_tail``: longer than ``N_PARAMS``)."""
        flat, (h1, h2, g), nets = weights_row(self.weights_path())
        head = param_row(LEARNED_PARAM_FIELDS, {
            "P_SHOW_AT": self.show_at, "P_MIN_CARDS": self.min_cards,
            "P_PARTNER_MARGIN": self.partner_margin, "P_H1": h1, "P_H2": h2, "P_G": g,
            "P_GREEDY_BIAS": self.greedy_bias, "P_NETS": nets})
        row = np.zeros(TAIL + flat.size, dtype=np.float64)
        row[:len(head)] = head
        row[TAIL:] = flat
        return row


# --- the side suits are interchangeable: index maps for training ---------------------------
SIDE_PERMUTATIONS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def side_suit_maps() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each permutation ``p`` of the three side groups (``SIDE_PERMUTATIONS``; the side
    suits are interchangeable, R12–R14: only the trump suit is special), where the features
    of a decision go when side group ``g`` is renamed ``p[g]``: ``state[i, f]`` (``DS + 1``
    columns: the last maps padding to itself), ``dense[i, d]`` (a gather: position ``d`` of
    the renamed state's dense features takes ``sden[dense[i, d]]``) and ``move[i, f]``
    (``DM + 1`` columns). Side keys ``10 g + r`` and the 付2/付3/付5 of side suit ``g`` (keys
    40 + g, 44 + g, 48 + g) follow their group. A two-card play keeps its cards' slots (its
    first card stays in ``MV_A``) even where the renaming reverses their key order: the
    trainer's data augmentation (``sim.learn.jaxnet``) accepts that approximation."""
    n = len(SIDE_PERMUTATIONS)
    state = np.tile(np.arange(LW.DS + 1), (n, 1))
    dense = np.tile(np.arange(LW.ND), (n, 1))
    move = np.tile(np.arange(LW.DM + 1), (n, 1))
    key_blocks = (LW.F_HAND1, LW.F_HAND2, LW.F_PLAYED1, LW.F_PLAYED2, LW.F_CALL_KEY) + tuple(
        base + 54 * r for base in (LW.F_TRICK_A, LW.F_TRICK_B) for r in range(3))
    for i, p in enumerate(SIDE_PERMUTATIONS):
        km = np.arange(54)
        for k in range(30):
            km[k] = 10 * p[k // 10] + k % 10
        for base in (40, 44, 48):
            for g in range(3):
                km[base + g] = base + p[g]
        for base in key_blocks:
            state[i, base:base + 54] = base + km
        for r in range(3):
            for g in range(3):
                state[i, LW.F_VOID + 4 * r + g] = LW.F_VOID + 4 * r + p[g]
        for g in range(3):
            state[i, LW.F_LEAD_GROUP + g] = LW.F_LEAD_GROUP + p[g]
            for base in (LW.D_OUT_G, LW.D_MINE_G):
                dense[i, base + p[g]] = base + g
        move[i, LW.MV_A:LW.MV_A + 54] = LW.MV_A + km
        move[i, LW.MV_B:LW.MV_B + 54] = LW.MV_B + km
    return state, dense, move
