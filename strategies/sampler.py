"""Determinization: deal the cards a seat cannot see, consistently with what it knows (compiled).

What the observer knows during trick play (R9):

* its own hand and every card played so far;
* the public calls: each shown pair was in its shower's hand, an override moved the shown
  pair to the overrider, who then gave two cards back — which two only the two players
  involved know (the observer uses its own give-backs, given or received, exactly);
* how many cards each seat holds;
* every play so far and the rules it obeyed: a seat that did not follow has no card of the
  led group (voids, R18/R19), a non-pair answer to a pair lead shows it held no pair of the
  group (R19a), and an R19b answer caps the group's remaining cards.

A *world* is a deal of the unseen physical cards (two copies of a card are different
objects, as in a real shuffle) to the other three seats. The sampler draws worlds uniformly
among those consistent with all of the above:

1. Each unseen copy gets the set of seats that may hold it: the seats a tracked copy may have
   reached through the public calls (propagated through every override and give-back), minus
   seats void in its group. Copies are grouped by that set (at most 7 classes over 3 seats).
2. The numbers of copies each seat takes from each class are drawn exactly in proportion to
   the number of worlds with those numbers (binomials for two-seat classes, a multinomial for
   the free class; one-seat classes are fixed), then each class is shuffled and split.
3. The world is replayed against every play so far; a world in which some play would have
   been illegal (the soft constraints of R19a/R19b) is rejected and drawn again. Rejection
   from a uniform proposal keeps the result uniform; after ``MAX_TRIES`` rejections the last
   draw is used (counted in ``SAMPLER_GIVE_UPS`` of the state, never seen in tests).

Randomness comes from the observer's sampling stream (16 + seat, docs/engine.md).
"""

from __future__ import annotations

import math

import numpy as np

from sim.bits import ZERO
from sim.cards import BIT, GROUP, KEY_OF_ID
from sim.engine import (
    CALL_W,
    S_CALLS,
    S_LEADER,
    S_LEFT,
    S_NCALLS,
    S_NTRICKS,
    S_POS,
    S_TRICK_A,
    S_TRICK_B,
    S_TRICKS,
    S_TRUMP,
    S_VOIDS,
    TRICK_W,
    U_ONCE,
    U_PLAYED_ONCE,
    U_PLAYED_TWICE,
    U_TWICE,
    next_draw,
)
from sim.jit import kernel
from sim.movegen import M_ANY2, M_CHOOSE2, M_LEAD, M_PAIRS, M_SINGLES, M_WITH, legal_set
from sim.rng import bounded

MAX_TRIES = 200
MAX_ENTRIES = 64
# int scratch layout used by the sampler (offsets inside the region it is given)
E_CARD = 0  # tracked copies: card (id, later key)
E_MASK = MAX_ENTRIES  # ... and the seats that may hold it (bit per seat)
CLS = 2 * MAX_ENTRIES  # 8 class lists of up to 108 keys, by allowed-seat mask over others
CLS_W = 112
CLS_N = CLS + 8 * CLS_W  # 8 class sizes
HANDS = CLS_N + 8  # replay scratch
REGION = HANDS + 16

LOG_FACT = np.array([math.lgamma(n + 1.0) for n in range(130)], dtype=np.float64)


@kernel
def _log_choose(n, k):
    return LOG_FACT[n] - LOG_FACT[k] - LOG_FACT[n - k]


@kernel
def hand_size(st, s):
    """Cards in seat ``s``'s hand now (during trick play)."""
    n = st[S_LEFT]
    pos = st[S_POS]
    played = 2 if (pos > 0 and st[S_TRICK_B] >= 0) else 1
    for p in range(pos):
        if (st[S_LEADER] + p) % 4 == s:
            return n - played
    return n


@kernel
def _find(w, base, n, card, bit, exact):
    """Index of a tracked copy of ``card`` whose holder set has ``bit`` (the smallest set if
    ``exact`` is 0, only the set ``{bit}`` if 1), or -1."""
    best = -1
    best_size = 5
    for i in range(n):
        if w[base + E_CARD + i] == card and (w[base + E_MASK + i] & bit):
            m = w[base + E_MASK + i]
            size = (m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)
            if exact and m != bit:
                continue
            if size < best_size:
                best_size = size
                best = i
    return best


@kernel
def _remove(w, base, n, i):
    w[base + E_CARD + i] = w[base + E_CARD + n - 1]
    w[base + E_MASK + i] = w[base + E_MASK + n - 1]
    return n - 1


@kernel
def track_calls(st, seat, w, base):
    """Tracked copies after the calls (card ids, holder sets); returns how many.

    Every shown pair is at its shower; an override moves the previous pair to the overrider;
    a give-back moves two of the overrider's cards to the overridden seat — known exactly if
    ``seat`` gave or received them, otherwise any copy the overrider might hold may have moved.
    """
    n = 0
    me = 1 << seat
    for i in range(st[S_NCALLS]):
        j = S_CALLS + i * CALL_W
        x = st[j + 1]
        pair = st[j + 2]
        y = st[j + 3]
        bx = 1 << x
        if y >= 0:  # the previous pair moves from y to x (R8)
            prev = st[j - CALL_W + 2]
            for k in range(n):
                if w[base + E_CARD + k] == prev:
                    w[base + E_MASK + k] = bx
        have = 0
        for k in range(n):  # the shown pair is in x's hand now (R6)
            if w[base + E_CARD + k] == pair:
                w[base + E_MASK + k] = bx
                have += 1
        while have < 2 and n < MAX_ENTRIES:
            w[base + E_CARD + n] = pair
            w[base + E_MASK + n] = bx
            n += 1
            have += 1
        if y >= 0:
            by = 1 << y
            if (me & (bx | by)) != 0:  # this seat gave or received: it knows the cards (R9)
                for g in (st[j + 4], st[j + 5]):
                    k = _find(w, base, n, g, bx, 0)
                    if k >= 0:
                        w[base + E_MASK + k] = by
                    elif n < MAX_ENTRIES:
                        w[base + E_CARD + n] = g
                        w[base + E_MASK + n] = by
                        n += 1
            else:  # two unknown cards moved from x to y: anything x might hold, y might now
                for k in range(n):
                    if w[base + E_MASK + k] & bx:
                        w[base + E_MASK + k] |= by
    return n


@kernel
def _in_set(mode, m1, m2, a, b):
    """Whether play ``(a, b)`` (``b = -1`` single) belongs to a legal set (sim.movegen)."""
    if b < 0:
        return (mode == M_LEAD or mode == M_SINGLES) and (m1 & BIT[a]) != ZERO
    if a == b:
        if mode == M_LEAD or mode == M_ANY2:
            return (m2 & BIT[a]) != ZERO
        return mode == M_PAIRS and (m1 & BIT[a]) != ZERO
    if mode == M_CHOOSE2 or mode == M_ANY2:
        return (m1 & BIT[a]) != ZERO and (m1 & BIT[b]) != ZERO
    if mode == M_WITH:
        f = np.int64(m2)
        return (a == f and (m1 & BIT[b]) != ZERO) or (b == f and (m1 & BIT[a]) != ZERO)
    return False


@kernel
def _consistent(st, wu, seat, w, base):
    """Replay every play of the other seats against the sampled world: all legal?"""
    # hands at the first lead = the sampled hands plus everything each seat played
    h = w[base + HANDS:base + HANDS + 8]  # once/twice per seat, stored as int64 bits
    for s in range(4):
        h[s] = np.int64(wu[U_ONCE + s])
        h[4 + s] = np.int64(wu[U_TWICE + s])
    nt = st[S_NTRICKS]
    for t in range(nt + 1):
        j = S_TRICKS + t * TRICK_W
        npl = 4 if t < nt else st[S_POS]
        lead = S_TRICK_A if t == nt else j + 3
        lead_b = S_TRICK_B if t == nt else j + 7
        leader = st[S_LEADER] if t == nt else st[j]
        for p in range(npl):
            s = (leader + p) % 4
            for c in (st[lead + p], st[lead_b + p]):
                if c >= 0:
                    bb = np.int64(1) << c
                    if h[s] & bb:
                        h[4 + s] |= bb
                    else:
                        h[s] |= bb
    for t in range(nt + 1):
        j = S_TRICKS + t * TRICK_W
        npl = 4 if t < nt else st[S_POS]
        lead = S_TRICK_A if t == nt else j + 3
        lead_b = S_TRICK_B if t == nt else j + 7
        leader = st[S_LEADER] if t == nt else st[j]
        la = st[lead]
        lb = st[lead_b]
        for p in range(npl):
            s = (leader + p) % 4
            a = st[lead + p]
            b = st[lead_b + p]
            if s != seat:
                if p == 0:
                    mode, m1, m2 = legal_set(np.uint64(h[s]), np.uint64(h[4 + s]),
                                             np.int64(-1), np.int64(-1))
                else:
                    mode, m1, m2 = legal_set(np.uint64(h[s]), np.uint64(h[4 + s]), la, lb)
                if not _in_set(mode, m1, m2, a, b):
                    return False
            for c in (a, b):
                if c >= 0:
                    bb = np.int64(1) << c
                    if h[4 + s] & bb:
                        h[4 + s] &= ~bb
                    else:
                        h[s] &= ~bb
    return True


@kernel
def _play_at(st, t, p):
    """(first, second) card of the play at position ``p`` of trick ``t`` (the current one if
    ``t == S_NTRICKS``)."""
    if t == st[S_NTRICKS]:
        return st[S_TRICK_A + p], st[S_TRICK_B + p]
    j = S_TRICKS + t * TRICK_W
    return st[j + 3 + p], st[j + 7 + p]


@kernel
def _split_logw(a, b, c, n0, n1, n2, m01, m02, m12, f):
    """Log of the number of worlds in which the two-seat classes split as (a, b, c)."""
    f0 = n0 - a - b
    f1 = n1 - (m01 - a) - c
    f2 = n2 - (m02 - b) - (m12 - c)
    if f0 < 0 or f1 < 0 or f2 < 0:
        return -math.inf
    return (_log_choose(m01, a) + _log_choose(m02, b) + _log_choose(m12, c)
            + LOG_FACT[f] - LOG_FACT[f0] - LOG_FACT[f1] - LOG_FACT[f2])


@kernel
def _classes(st, u, seat, w, base, n, ignore_holders):
    """Sort every unseen copy into a class by the other seats allowed to hold it."""
    others0 = (seat + 1) % 4
    cls_n = w[base + CLS_N:base + CLS_N + 8]
    cls_n[:] = 0
    mo = u[U_ONCE + seat]
    mt = u[U_TWICE + seat]
    po = u[U_PLAYED_ONCE]
    pt = u[U_PLAYED_TWICE]
    for key in range(54):
        b = BIT[key]
        unseen = 2 - np.int64((mo & b) != ZERO) - np.int64((mt & b) != ZERO) \
            - np.int64((po & b) != ZERO) - np.int64((pt & b) != ZERO)
        if unseen <= 0:
            continue
        g = GROUP[key]
        allowed_all = 0
        for j in range(3):
            if not (st[S_VOIDS + (others0 + j) % 4] >> g) & 1:
                allowed_all |= 1 << j
        tracked = 0
        if not ignore_holders:
            for i in range(n):
                if w[base + E_CARD + i] == key and tracked < unseen:
                    tracked += 1
                    m = w[base + E_MASK + i]
                    rel = 0
                    for j in range(3):
                        if (m >> ((others0 + j) % 4)) & 1:
                            rel |= 1 << j
                    c = rel & allowed_all
                    if c == 0:
                        c = allowed_all if allowed_all else 7
                    w[base + CLS + c * CLS_W + cls_n[c]] = key
                    cls_n[c] += 1
        c = allowed_all if allowed_all else 7
        for _ in range(unseen - tracked):
            w[base + CLS + c * CLS_W + cls_n[c]] = key
            cls_n[c] += 1


@kernel
def sample_world(st, u, seat, wu, w, base):
    """Write into ``wu`` (a copy of ``u``) a world for ``seat``: the other hands drawn
    uniformly among those consistent with its knowledge (module docstring).

    ``w[base:base + REGION]`` is int64 scratch. Draws from ``seat``'s sampling stream in
    ``u``. Returns the number of draws rejected before the accepted one.
    """
    trump = st[S_TRUMP]
    me = 1 << seat
    n = track_calls(st, seat, w, base)
    for k in range(n):  # ids -> keys now that trump is known
        w[base + E_CARD + k] = KEY_OF_ID[trump, w[base + E_CARD + k]]
    k = 0
    while k < n:  # copies known to be mine are in my hand (or were played by me)
        m = w[base + E_MASK + k] & ~me
        if m == 0:
            n = _remove(w, base, n, k)
        else:
            w[base + E_MASK + k] = m
            k += 1
    nt = st[S_NTRICKS]
    for t in range(nt + 1):  # copies seen played leave the tracked set
        npl = 4 if t < nt else st[S_POS]
        leader = st[S_LEADER] if t == nt else st[S_TRICKS + t * TRICK_W]
        for p in range(npl):
            s = (leader + p) % 4
            a, b = _play_at(st, t, p)
            for c in (a, b):
                if c >= 0:
                    i = _find(w, base, n, c, 1 << s, 0)
                    if i >= 0:
                        n = _remove(w, base, n, i)
    others0 = (seat + 1) % 4
    size = w[base + HANDS + 8:base + HANDS + 11]
    for j in range(3):
        size[j] = hand_size(st, (others0 + j) % 4)
    cls_n = w[base + CLS_N:base + CLS_N + 8]
    for attempt in range(2):  # the second pass drops holder sets if they cannot be met
        _classes(st, u, seat, w, base, n, attempt == 1)
        n0 = size[0] - cls_n[1]
        n1 = size[1] - cls_n[2]
        n2 = size[2] - cls_n[4]
        m01 = cls_n[3]
        m02 = cls_n[5]
        m12 = cls_n[6]
        f = cls_n[7]
        best = -math.inf
        for a in range(m01 + 1):
            for b in range(m02 + 1):
                for c in range(m12 + 1):
                    lw = _split_logw(a, b, c, n0, n1, n2, m01, m02, m12, f)
                    if lw > best:
                        best = lw
        if best > -math.inf:
            break
    total = 0.0
    for a in range(m01 + 1):
        for b in range(m02 + 1):
            for c in range(m12 + 1):
                lw = _split_logw(a, b, c, n0, n1, n2, m01, m02, m12, f)
                if lw > -math.inf:
                    total += math.exp(lw - best)
    tries = 0
    while True:
        # the split of the two-seat classes, in proportion to its number of worlds
        target = (next_draw(u, 5 + seat) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * total
        acc = 0.0
        sa = sb = sc = -1
        for a in range(m01 + 1):
            for b in range(m02 + 1):
                for c in range(m12 + 1):
                    lw = _split_logw(a, b, c, n0, n1, n2, m01, m02, m12, f)
                    if lw > -math.inf:
                        acc += math.exp(lw - best)
                        if sa < 0 and acc > target:
                            sa, sb, sc = a, b, c
                        if sa < 0:
                            la, lb_, lc = a, b, c
        if sa < 0:  # rounding at the very end of the range
            sa, sb, sc = la, lb_, lc
        # deal: shuffle each class and split it among its seats
        for s in range(4):
            if s != seat:
                wu[U_ONCE + s] = ZERO
                wu[U_TWICE + s] = ZERO
        for c in range(1, 8):
            base_c = base + CLS + c * CLS_W
            cnt = cls_n[c]
            for i in range(cnt - 1, 0, -1):
                r = bounded(next_draw(u, 5 + seat), i + 1)
                t = w[base_c + i]
                w[base_c + i] = w[base_c + r]
                w[base_c + r] = t
            if c == 1:
                q0, q1 = cnt, 0
            elif c == 2:
                q0, q1 = 0, cnt
            elif c == 3:
                q0, q1 = sa, m01 - sa
            elif c == 5:
                q0, q1 = sb, 0
            elif c == 6:
                q0, q1 = 0, sc
            elif c == 7:
                q0, q1 = n0 - sa - sb, n1 - (m01 - sa) - sc
            else:  # c == 4: all to the third seat
                q0, q1 = 0, 0
            for i in range(cnt):
                j = 0 if i < q0 else (1 if i < q0 + q1 else 2)
                s = (others0 + j) % 4
                bb = BIT[w[base_c + i]]
                if wu[U_ONCE + s] & bb:
                    wu[U_TWICE + s] |= bb
                else:
                    wu[U_ONCE + s] |= bb
        if _consistent(st, wu, seat, w, base) or tries >= MAX_TRIES:
            return tries
        tries += 1
