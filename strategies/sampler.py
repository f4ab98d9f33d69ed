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

1. ``prepare`` (once per decision) lists the unseen card types and, for each copy, the seats
   allowed to hold it: the seats a tracked copy may have reached through the public calls
   (propagated through every override and give-back), minus seats void in its group, minus
   seats whose R19b answers cap the group below its strength. It then counts, by dynamic
   programming over the card types, the worlds reachable from every (cards given to the first
   two other seats) state, never putting both copies of a type with a seat that showed it
   holds no pair of the group (R19a).
2. ``draw`` walks the card types once, placing each type's copies with probability
   proportional to the number of worlds that placement leaves: an exact uniform draw.
3. Every draw is replayed against every play so far and rejected if some play would have
   been illegal — a safety net that rarely fires (after ``MAX_TRIES`` the last draw is used).

If no world fits (imperfect tracking of private give-backs can in principle cause it), the
R19 inferences and then the holder sets are relaxed.

Randomness comes from the observer's sampling stream (16 + seat, docs/engine.md).
"""

from __future__ import annotations

import numpy as np

import sim.view as view
from sim.cards import BIT, CARD_NAMES, GROUP, ID_OF_KEY, KEY_OF_ID, STRENGTH
from sim.core import state as S
from sim.core.bits import ZERO
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import M_ANY2, M_CHOOSE2, M_LEAD, M_PAIRS, M_SINGLES, M_WITH, legal_set
from sim.core.state import add_card, next_draw

MAX_TRIES = 50
MAX_ENTRIES = 64
MAX_TYPES = 54
# int scratch used by the sampler: offsets inside the region it is given (REGION words)
REGION_FIELDS = (
    ("E_CARD", MAX_ENTRIES),  # tracked copies: card (id, later key)
    ("E_MASK", MAX_ENTRIES),  # ... and the seats that may hold it (bit per seat)
    ("T_KEY", MAX_TYPES),  # unseen card types: key,
    ("T_N", MAX_TYPES),  # unseen copies (1 or 2),
    ("T_NP", MAX_TYPES),  # other seats (3 bits) that may not hold both copies (R19a),
    ("T_A1", 2 * MAX_TYPES),  # allowed other seats of the first copy, then of the second copy
    ("CAP", 16),  # 4 seats x 4 groups: strongest card a seat may still hold
    ("NOPAIR", 4),  # 4 seats: groups in which a seat holds no pair
    ("FIRST", 16),  # 4 seats x 4 groups: trick of the first R19b answer
    ("BAN", 4),  # 4 seats: keys whose other copy the seat cannot hold (R19a)
    ("SIZES", 3),  # cards of the three other seats
    ("NTYPES", 1),
    ("HANDS", 8),  # replay scratch (8)
)
_E, REGION = layout(REGION_FIELDS)
E_CARD = _E["E_CARD"]
E_MASK = _E["E_MASK"]
T_KEY = _E["T_KEY"]
T_N = _E["T_N"]
T_NP = _E["T_NP"]
T_A1 = _E["T_A1"]
CAP = _E["CAP"]
NOPAIR = _E["NOPAIR"]
FIRST = _E["FIRST"]
BAN = _E["BAN"]
SIZES = _E["SIZES"]
NTYPES = _E["NTYPES"]
HANDS = _E["HANDS"]
FLOAT_REGION = (MAX_TYPES + 1) * 28 * 28  # the world-count table

@kernel
def hand_size(st, s):
    """Cards in seat ``s``'s hand now (during trick play)."""
    n = view.cards_left(st)
    pos = view.trick_pos(st)
    played = 2 if (pos > 0 and view.trick_second(st, 0) >= 0) else 1
    for p in range(pos):
        if (view.leader(st) + p) % 4 == s:
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
    for i in range(view.n_calls(st)):
        j = S.S_CALLS + i * S.CALL_W
        x = st[j + S.CALL_SEAT]
        pair = st[j + S.CALL_CARD]
        y = st[j + S.CALL_TOOK]
        bx = 1 << x
        if y >= 0:  # the previous pair moves from y to x (R8)
            prev = st[j - S.CALL_W + S.CALL_CARD]
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
                for g in (st[j + S.CALL_GAVE_A], st[j + S.CALL_GAVE_B]):
                    k = _find(w, base, n, g, bx, 0)
                    if k >= 0:
                        w[base + E_MASK + k] = by
                    elif n < MAX_ENTRIES:
                        w[base + E_CARD + n] = g
                        w[base + E_MASK + n] = by
                        n += 1
            else:  # two unknown cards moved from x to y: anything x might hold, y might
                for k in range(n):  # now, except the pair x has just shown (R8)
                    if (w[base + E_MASK + k] & bx) and w[base + E_CARD + k] != pair:
                        w[base + E_MASK + k] |= by
    return n


@kernel
def _in_set(mode, m1, m2, a, b):
    """Whether play ``(a, b)`` (``b = -1`` single) belongs to a legal set (sim.core.movegen)."""
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
def play_at(st, t, p):
    """(first, second) card of the play at position ``p`` of trick ``t`` (the current one if
    ``t == S_NTRICKS``)."""
    if t == view.n_tricks(st):
        return view.trick_first(st, p), view.trick_second(st, p)
    j = S.S_TRICKS + t * S.TRICK_W
    return st[j + S.TRICK_A + p], st[j + S.TRICK_B + p]


@kernel
def leader_of(st, t):
    return view.leader(st) if t == view.n_tricks(st) else view.trick_leader(st, t)


@kernel
def plays_in(st, t):
    return view.trick_pos(st) if t == view.n_tricks(st) else 4


@kernel
def _consistent(st, wu, seat, w, base):
    """Replay every play of the other seats against the sampled world: all legal?"""
    # hands at the first lead = the sampled hands plus everything each seat played
    h = w[base + HANDS:base + HANDS + 8]  # once/twice per seat, stored as int64 bits
    for s in range(4):
        h[s] = np.int64(view.hand_once(wu, s))
        h[4 + s] = np.int64(view.hand_twice(wu, s))
    nt = view.n_tricks(st)
    for t in range(nt + 1):
        leader = leader_of(st, t)
        for p in range(plays_in(st, t)):
            s = (leader + p) % 4
            a, b = play_at(st, t, p)
            for c in (a, b):
                if c >= 0:
                    bb = np.int64(1) << c
                    if h[s] & bb:
                        h[4 + s] |= bb
                    else:
                        h[s] |= bb
    for t in range(nt + 1):
        leader = leader_of(st, t)
        la, lb = play_at(st, t, 0)
        for p in range(plays_in(st, t)):
            s = (leader + p) % 4
            a, b = play_at(st, t, p)
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
def _inferences(st, w, base):
    """Caps, no-pair flags and banned keys per seat from the answers to pair leads (R19).

    An answer with two different cards of the led group G is R19b: the seat then held no pair
    of G, and every G card it kept was at most as strong as the weaker card played. Cards only
    leave hands during play, so now it holds no G card above that cap, at most one unseen
    copy of each G card, and no copy of a G card it played in that answer or later (it would
    have held a pair).
    """
    for i in range(16):
        w[base + CAP + i] = 1 << 20
        w[base + FIRST + i] = 1 << 20
    for s in range(4):
        w[base + NOPAIR + s] = 0
        w[base + BAN + s] = 0
    nt = view.n_tricks(st)
    for t in range(nt + 1):
        la, lb = play_at(st, t, 0)
        if lb < 0 or plays_in(st, t) == 0:
            continue
        g = GROUP[la]
        leader = leader_of(st, t)
        for p in range(1, plays_in(st, t)):
            a, b = play_at(st, t, p)
            if a != b and GROUP[a] == g and GROUP[b] == g:
                s = (leader + p) % 4
                w[base + NOPAIR + s] |= 1 << g
                if t < w[base + FIRST + 4 * s + g]:
                    w[base + FIRST + 4 * s + g] = t
                weak = min(STRENGTH[a], STRENGTH[b])
                if weak < w[base + CAP + 4 * s + g]:
                    w[base + CAP + 4 * s + g] = weak
    for t in range(nt + 1):
        leader = leader_of(st, t)
        for p in range(plays_in(st, t)):
            s = (leader + p) % 4
            a, b = play_at(st, t, p)
            for c in (a, b):
                if c >= 0 and t >= w[base + FIRST + 4 * s + GROUP[c]]:
                    w[base + BAN + s] |= np.int64(1) << c


@kernel
def _tracked(st, seat, w, base):
    """Tracked copies still unseen by ``seat``: keys and holder sets; returns how many."""
    trump = view.trump(st)
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
    for t in range(view.n_tricks(st) + 1):  # copies seen played leave the tracked set
        leader = leader_of(st, t)
        for p in range(plays_in(st, t)):
            s = (leader + p) % 4
            a, b = play_at(st, t, p)
            for c in (a, b):
                if c >= 0:
                    i = _find(w, base, n, c, 1 << s, 0)
                    if i >= 0:
                        n = _remove(w, base, n, i)
    return n


@kernel
def prepare(st, u, seat, w, base, fw, fbase, relax):
    """Everything the draws need, computed once per decision: the unseen card types with
    the seats allowed for each copy, and the table of world counts (module docstring).

    ``relax`` = 1 ignores the R19 inferences, 2 also the tracked holder sets (used only if
    no world fits). Returns the number of worlds (a float; 0 if none fits).
    """
    n_tracked = _tracked(st, seat, w, base)
    _inferences(st, w, base)
    others0 = (seat + 1) % 4
    for j in range(3):
        w[base + SIZES + j] = hand_size(st, (others0 + j) % 4)
    mo = view.hand_once(u, seat)
    mt = view.hand_twice(u, seat)
    po = view.played_once(u)
    pt = view.played_twice(u)
    nt = 0
    for key in range(54):
        b = BIT[key]
        unseen = 2 - np.int64((mo & b) != ZERO) - np.int64((mt & b) != ZERO) \
            - np.int64((po & b) != ZERO) - np.int64((pt & b) != ZERO)
        if unseen <= 0:
            continue
        g = GROUP[key]
        allowed = 0
        nopair = 0
        for j in range(3):
            s = (others0 + j) % 4
            ok = not (view.voids(st, s) >> g) & 1
            if relax == 0:
                ok = ok and STRENGTH[key] <= w[base + CAP + 4 * s + g] \
                    and not (w[base + BAN + s] >> key) & 1
                if (w[base + NOPAIR + s] >> g) & 1:
                    nopair |= 1 << j
            if ok:
                allowed |= 1 << j
        if allowed == 0:
            allowed = 7  # nothing fits: let anybody hold it (the replay check rejects)
        w[base + T_KEY + nt] = key
        w[base + T_N + nt] = unseen
        w[base + T_NP + nt] = nopair
        for c in range(2):
            w[base + T_A1 + c * MAX_TYPES + nt] = allowed
        if relax < 2:
            tracked = 0
            for i in range(n_tracked):
                if w[base + E_CARD + i] == key and tracked < unseen:
                    m = w[base + E_MASK + i]
                    rel = 0
                    for j in range(3):
                        if (m >> ((others0 + j) % 4)) & 1:
                            rel |= 1 << j
                    if rel & allowed:
                        w[base + T_A1 + tracked * MAX_TYPES + nt] = rel & allowed
                    tracked += 1
        nt += 1
    w[base + NTYPES] = nt
    n0 = w[base + SIZES]
    n1 = w[base + SIZES + 1]
    sx = n1 + 1
    layer = (n0 + 1) * sx
    bt = fw[fbase:fbase + (nt + 1) * layer]
    for i in range(layer):
        bt[nt * layer + i] = 0.0
    bt[nt * layer + n0 * sx + n1] = 1.0
    for t in range(nt - 1, -1, -1):
        cur = t * layer
        nxt = (t + 1) * layer
        for x in range(n0 + 1):
            for y in range(n1 + 1):
                bt[cur + x * sx + y] = _options(w, base, t, x, y, n0, n1, bt, nxt, sx, -1.0)
    return bt[0]


@kernel
def _options(w, base, t, x, y, n0, n1, bt, nxt, sx, pick):
    """Sum over the placements of type ``t``'s copies of (ways x worlds left), from state
    (x, y). With ``pick >= 0``, return instead the placement where the running sum passes
    ``pick``, as ``j1 * 4 + j2`` (``j2 = 3``: a single copy), or -1."""
    a1 = w[base + T_A1 + t]
    total = 0.0
    if w[base + T_N + t] == 1:
        for j in range(3):
            if (a1 >> j) & 1:
                nx = x + (j == 0)
                ny = y + (j == 1)
                if nx <= n0 and ny <= n1:
                    total += bt[nxt + nx * sx + ny]
                    if pick >= 0.0 and total > pick:
                        return float(j * 4 + 3)
        return total if pick < 0.0 else -1.0
    a2 = w[base + T_A1 + MAX_TYPES + t]
    np_ = w[base + T_NP + t]
    for j1 in range(3):
        if not (a1 >> j1) & 1:
            continue
        for j2 in range(3):
            if not (a2 >> j2) & 1:
                continue
            if j1 == j2 and (np_ >> j1) & 1:
                continue  # R19a: this seat holds no pair of the group
            nx = x + (j1 == 0) + (j2 == 0)
            ny = y + (j1 == 1) + (j2 == 1)
            if nx <= n0 and ny <= n1:
                total += bt[nxt + nx * sx + ny]
                if pick >= 0.0 and total > pick:
                    return float(j1 * 4 + j2)
    return total if pick < 0.0 else -1.0


@kernel
def draw(st, u, seat, wu, w, base, fw, fbase):
    """One world from a ``prepare``d table, written into ``wu`` (a copy of ``u``)."""
    others0 = (seat + 1) % 4
    for s in range(4):
        if s != seat:
            wu[S.U_ONCE + s] = ZERO
            wu[S.U_TWICE + s] = ZERO
    nt = w[base + NTYPES]
    n0 = w[base + SIZES]
    n1 = w[base + SIZES + 1]
    sx = n1 + 1
    layer = (n0 + 1) * sx
    bt = fw[fbase:fbase + (nt + 1) * layer]
    x = 0
    y = 0
    for t in range(nt):
        here = bt[t * layer + x * sx + y]
        r = ((next_draw(u, S.STREAM_SAMPLE + seat) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
             * here)
        c = np.int64(_options(w, base, t, x, y, n0, n1, bt, (t + 1) * layer, sx, r))
        if c < 0:  # rounding at the top of the range: take the last placement
            c = np.int64(_options(w, base, t, x, y, n0, n1, bt, (t + 1) * layer, sx,
                                  here * (1.0 - 1e-12)))
        key = w[base + T_KEY + t]
        for j in (c // 4, c % 4):
            if j < 3:
                s = (others0 + j) % 4
                add_card(wu, s, key)
                x += j == 0
                y += j == 1


@kernel
def prepare_any(st, u, seat, w, base, fw, fbase):
    """``prepare``, relaxing the inferences and then the holder sets if no world fits."""
    for relax in range(3):
        if prepare(st, u, seat, w, base, fw, fbase, relax) > 0.0:
            return relax
    return 3


@kernel
def draw_consistent(st, u, seat, wu, w, base, fw, fbase):
    """``draw`` until the world passes the replay of every play (rarely more than once);
    returns the number of rejected draws (at most ``MAX_TRIES``)."""
    tries = 0
    while True:
        draw(st, u, seat, wu, w, base, fw, fbase)
        if _consistent(st, wu, seat, w, base) or tries >= MAX_TRIES:
            return tries
        tries += 1


@kernel
def sample_world(st, u, seat, wu, w, base, fw, fbase):
    """Prepare and draw one world (for a single sample; searches prepare once)."""
    prepare_any(st, u, seat, w, base, fw, fbase)
    return draw_consistent(st, u, seat, wu, w, base, fw, fbase)


def sample_hands(obs, n: int, key: int = 12345) -> list[list[list[str]]]:
    """``n`` worlds for an observation (trick play only): each is the four hands, by seat.

    For tests and analysis; the search players call ``sample_world`` directly. ``key`` seeds
    the sampling stream.
    """
    st, u = (a.copy() for a in obs.arrays())
    seat = obs.seat
    u[S.U_KEY + S.STREAM_SAMPLE + seat] = np.uint64(key)
    u[S.U_CTR + S.STREAM_SAMPLE + seat] = np.uint64(0)
    ids = ID_OF_KEY[int(st[S.S_TRUMP])]  # plain Python here: raw reads, no kernel calls
    w = np.zeros(REGION, dtype=np.int64)
    fw = np.zeros(FLOAT_REGION, dtype=np.float64)
    prepare_any(st, u, seat, w, 0, fw, 0)
    out = []
    for _ in range(n):
        wu = u.copy()
        draw_consistent(st, u, seat, wu, w, 0, fw, 0)
        hands = []
        for s in range(4):
            once, twice = int(wu[S.U_ONCE + s]), int(wu[S.U_TWICE + s])
            h = []
            for b in range(54):
                if once >> b & 1:
                    h.append(CARD_NAMES[ids[b]])
                    if twice >> b & 1:
                        h.append(CARD_NAMES[ids[b]])
            hands.append(h)
        out.append(hands)
    return out
