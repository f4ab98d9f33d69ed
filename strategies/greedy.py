"""``greedy``: a rule-based player a good human would recognise (compiled).

Calling (R6–R8)
    Shows when a pair's suit would give it many trumps: the share of its cards that would be
    trumps (both jokers, every 2, 3 and 5, the suit) must reach ``show_at`` (and the hand must
    hold ``min_cards`` cards). Of the suits it could call it picks the one with most trumps and
    shows its lowest legal pair there, keeping higher pairs to answer an override. It does not
    override its partner unless that share is ``partner_margin`` higher. After an override it
    gives back its two weakest cards, non-point side cards first (valued as if its suit were
    trump).
Leading (R16)
    The last two cards as a pair if it can (a pair on the last trick counts x4, R23); as an
    attacker it keeps its strongest trump pair from ``keep_pair_from`` cards left. Otherwise,
    in order: a side pair nobody can beat (no stronger pair can be outside its hand, no
    opponent known void in the suit); a side card that is the strongest left in its suit;
    its top trump when it is the strongest left and it holds at least ``draw_share`` of the
    trumps still out (drawing trumps); else its cheapest card, side suits first.
Following (R18, R19)
    If its partner is winning and the trick is safe (it plays last, or the partner's card is
    the strongest left of its group), it feeds points. If an opponent is winning, it wins
    cheaply when it can: playing last it takes the trick with the best points-for-strength
    card; earlier, only with a card that can no longer be beaten, or when the trick already
    holds 10 points or more. Otherwise it dumps its cheapest card (low strength, no points).

It uses only its own hand and public knowledge (played cards, voids revealed by not following,
the current trick) and is deterministic.
"""

from __future__ import annotations

import numpy as np

import sim.view as view
from sim.cards import (
    ABOVE_STRENGTH,
    BIT,
    CLASS_MASK,
    GROUP,
    GROUP_MASK,
    KEY_OF_ID,
    POINTS_ID,
    POINTS_KEY,
    STRENGTH,
    TRUMP_GROUP,
    TRUMP_IDS,
)
from sim.core import state as S
from sim.core.bits import ZERO, clear_lsb, lsb, msb, popcount
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import (
    M_ANY2,
    M_CHOOSE2,
    M_PAIRS,
    M_SINGLES,
    M_WITH,
    legal_set,
    make_code,
    set_count,
    set_kth,
    show_mask,
)
from sim.core.trick import BEATING
from strategies.base import param
from strategies.kinds import KIND_GREEDY
from strategies.params import param_row
from strategies.tier import CompiledStrategy

TRUMP_MASK = GROUP_MASK[TRUMP_GROUP]


def _key_mask(keys) -> np.uint64:
    return np.uint64(sum(1 << int(k) for k in keys))


# what the follow decides on masks with (``cheapest_key``): a key's points are the same under
# every trump (R3), within a group strength never falls as the key rises (R12, R13), and the
# keys of one strength class (R13 ties) carry the same points
POINTS = POINTS_KEY[0].copy()  # [key] -> points
if not (POINTS_KEY == POINTS).all() or set(POINTS.tolist()) != {0, 5, 10} or \
        any(STRENGTH[k + 1] < STRENGTH[k] for k in range(len(STRENGTH) - 1)
            if GROUP[k + 1] == GROUP[k]) or \
        any(POINTS[j] != POINTS[k] for k in range(len(POINTS)) for j in range(len(POINTS))
            if (int(CLASS_MASK[k]) >> j) & 1):
    raise AssertionError("greedy's follow: points or strengths not laid out as it assumes")
NO_POINTS_MASK = _key_mask(np.flatnonzero(POINTS == 0))
TEN_POINTS_MASK = _key_mask(np.flatnonzero(POINTS == 10))
FIVE_POINTS_MASK = _key_mask(np.flatnonzero(POINTS == 5))
# keys of the groups after key k's (groups are runs of keys: 0-9, 10-19, 20-29, 30-53)
LATER_GROUPS = np.array([_key_mask(np.flatnonzero(GROUP > GROUP[k])) for k in range(len(GROUP))],
                        dtype=np.uint64)

# the params row (strategies.params): the calling slots first (the expert's row starts with
# them too: greedy_show reads them)
GREEDY_CALL_FIELDS = (("P_SHOW_AT", 1), ("P_MIN_CARDS", 1), ("P_PARTNER_MARGIN", 1))
GREEDY_PARAM_FIELDS = GREEDY_CALL_FIELDS + (
    ("P_DRAW_SHARE", 1), ("P_KEEP_PAIR_FROM", 1), ("P_CONTEST_AT", 1))
_P, N_GREEDY_PARAMS = layout(GREEDY_PARAM_FIELDS)
P_SHOW_AT = _P["P_SHOW_AT"]
P_MIN_CARDS = _P["P_MIN_CARDS"]
P_PARTNER_MARGIN = _P["P_PARTNER_MARGIN"]
P_DRAW_SHARE = _P["P_DRAW_SHARE"]
P_KEEP_PAIR_FROM = _P["P_KEEP_PAIR_FROM"]
P_CONTEST_AT = _P["P_CONTEST_AT"]


@kernel
def card_cost(k, trump):
    """What losing key ``k`` costs: its strength, and three per point it would give away."""
    return STRENGTH[k] + 3 * POINTS_KEY[trump, k]


@kernel
def outside_masks(u, seat):
    """Keys with at least one / two copies neither in ``seat``'s hand nor played."""
    mo = view.hand_once(u, seat)
    mt = view.hand_twice(u, seat)
    po = view.played_once(u)
    pt = view.played_twice(u)
    full = GROUP_MASK[0] | GROUP_MASK[1] | GROUP_MASK[2] | GROUP_MASK[3]
    out1 = full & ~(mt | pt | (mo & po))  # fewer than two copies accounted for
    out2 = full & ~(mo | po)  # no copy accounted for
    return out1, out2


@kernel
def voids_after(st, seat):
    """Groups (bit g) in which an opponent of ``seat`` still to play this trick is known void."""
    pos = view.trick_pos(st)
    if pos == 0:  # all but the leader play after it (the loop below, unrolled)
        ld = view.leader(st)
        if ((seat ^ ld) & 1) == 0:
            return view.voids(st, (ld + 1) % 4) | view.voids(st, (ld + 3) % 4)
        return view.voids(st, (ld + 2) % 4)
    v = 0
    for p in range(pos + 1, 4):
        s = (view.leader(st) + p) % 4
        if (s & 1) != (seat & 1):
            v |= view.voids(st, s)
    return v


@kernel
def is_master(voids, k, pair, out1, out2):
    """Whether play ``k`` (a pair if ``pair``) cannot be beaten by cards still outside (masks
    of ``outside_masks``), in its group, and (for side cards) no opponent still to play is
    known void in the group (``voids``: ``voids_after``)."""
    g = GROUP[k]
    if (out2 if pair else out1) & ABOVE_STRENGTH[k]:
        return False
    if g != TRUMP_GROUP and (voids >> g) & 1:
        return False
    return True


@kernel
def strongest_side_master(voids, m, pair, out1, out2):
    """The strongest of the side-group tops of ``m`` that ``is_master`` (as a pair if
    ``pair``), or -1."""
    best = np.int64(-1)
    x = m & ~TRUMP_MASK
    while x:  # the side groups m holds, in ascending order
        gm = GROUP_MASK[GROUP[lsb(x)]]
        k = msb(x & gm)
        x &= ~gm
        if is_master(voids, k, pair, out1, out2) and (
                best < 0 or STRENGTH[k] > STRENGTH[best]):
            best = k
    return best


@kernel
def greedy_show(st, u, seat, params, prow):
    """Show decision: a card id to show, or -1 to pass (module docstring)."""
    o = view.hand_once(u, seat)
    w = view.hand_twice(u, seat)
    n = popcount(o) + popcount(w)
    if n < params[prow, P_MIN_CARDS]:
        return np.int64(-1)
    m = show_mask(o, w, view.shown_card(st))
    best = np.int64(-1)
    best_share = -1.0
    while m:
        c = lsb(m)
        m = clear_lsb(m)
        t = TRUMP_IDS[c % 4]
        share = (popcount(o & t) + popcount(w & t)) / n
        if share > best_share:  # ascending ids: the lowest pair of the best suit
            best_share = share
            best = c
    need = params[prow, P_SHOW_AT]
    cur = view.shown_by(st)
    if cur >= 0 and cur != seat and (cur & 1) == (seat & 1):
        need += params[prow, P_PARTNER_MARGIN]
    return best if best_share >= need else np.int64(-1)


@kernel
def greedy_giveback(st, u, seat):
    """The two cheapest cards (id layout), valued as if the pair just shown set trump (R8)."""
    shown = view.shown_card(st)
    t = shown % 4
    o = view.hand_once(u, seat) & ~BIT[shown]
    w = view.hand_twice(u, seat) & ~BIT[shown]
    c1 = np.int64(-1)
    v1 = 1 << 30
    c2 = np.int64(-1)
    v2 = 1 << 30
    m = o
    while m:
        c = lsb(m)
        m = clear_lsb(m)
        k = KEY_OF_ID[t, c]
        v = STRENGTH[k] + (10 if k >= 30 else 0) + 3 * POINTS_ID[c]
        for _ in range(2 if w & BIT[c] else 1):
            if v < v1:
                c2, v2 = c1, v1
                c1, v1 = c, v
            elif v < v2:
                c2, v2 = c, v
    a, b = (c1, c2) if c1 <= c2 else (c2, c1)
    return make_code(a, b)


@kernel
def _scan_class(x, pts, c, best, bv):
    """``cheapest_key``'s step over ``x``, keys of one points class (``pts`` each): the lowest
    key of each group of ``x`` against the best so far (``best``, of value ``bv``)."""
    while x:
        k = lsb(x)
        v = STRENGTH[k] + c * pts
        if v < bv or (v == bv and k < best):
            best = k
            bv = v
        x &= LATER_GROUPS[k]  # the rest of k's group is no cheaper
    return best, bv


@kernel
def cheapest_key(m, c):
    """The key of ``m`` with the least ``STRENGTH + c * points``, the lowest such key on ties
    (-1 when ``m`` is empty): the first best of a list of ``m``'s keys in ascending order.
    Within a group and a points class strength never falls as the key rises, so only the lowest
    key of each (group, class) can be it: at most nine candidates, whatever the size of ``m``."""
    # constants as np.int64, not literals: numba compiles a callee once per literal value
    # it is called with (cold compile), and LLVM folds them after inlining all the same
    best, bv = _scan_class(m & NO_POINTS_MASK, np.int64(0), c, np.int64(-1), np.int64(1 << 30))
    best, bv = _scan_class(m & TEN_POINTS_MASK, np.int64(10), c, best, bv)
    best, bv = _scan_class(m & FIVE_POINTS_MASK, np.int64(5), c, best, bv)
    return best


@kernel
def cheapest_two(m1, m2, c):
    """Of the plays of ``M_ANY2`` (pairs of ``m2``, two different cards of ``m1``), the code
    with the least sum over its two cards of ``STRENGTH + c * points``, the first such code in
    canonical order (``set_all``) on ties; ``m1`` holds two cards at least."""
    k1 = np.int64(-1)  # the two least (value, key) of m1, each the lowest key of its value
    v1 = np.int64(1 << 30)
    k2 = np.int64(-1)
    v2 = np.int64(1 << 30)
    m = m1
    while m:
        k = lsb(m)
        m = clear_lsb(m)
        v = STRENGTH[k] + c * POINTS[k]
        if v < v1:
            k2, v2 = k1, v1
            k1, v1 = k, v
        elif v < v2:
            k2, v2 = k, v
    a, b = (k1, k2) if k1 < k2 else (k2, k1)  # the first two different cards of least sum
    p = cheapest_key(m2, c)
    if p >= 0:  # a pair (p, p) comes before every (p, x) in canonical order
        vp = 2 * (STRENGTH[p] + c * POINTS[p])
        if vp < v1 + v2 or (vp == v1 + v2 and p <= a):
            return make_code(p, p)
    return make_code(a, b)


@kernel
def master_keys(w, voids, out):
    """The keys of ``w`` that ``is_master`` (``out``: ``out1`` for singles, ``out2`` for pairs):
    per group, those as strong as the strongest card outside, none in a side group where an
    opponent still to play is known void."""
    r = ZERO
    x = w
    while x:
        g = GROUP[lsb(x)]
        gm = GROUP_MASK[g]
        x &= ~gm
        if g != TRUMP_GROUP and (voids >> g) & 1:
            continue
        o = out & gm
        if o == ZERO:
            r |= w & gm
        else:
            t = msb(o)
            r |= w & (CLASS_MASK[t] | ABOVE_STRENGTH[t])
    return r


@kernel
def greedy_lead(st, u, seat, params, prow):
    """Lead code (module docstring)."""
    o = view.hand_once(u, seat)
    w = view.hand_twice(u, seat)
    left = view.cards_left(st)
    if left == 2 and w:  # R23: a pair on the last trick counts four times
        x = lsb(w)
        return make_code(x, x)
    attacker = (seat & 1) == (view.caller(st) & 1)
    reserve = ZERO
    if attacker and left <= params[prow, P_KEEP_PAIR_FROM] and (w & TRUMP_MASK):
        reserve = BIT[msb(w & TRUMP_MASK)]  # keep the top trump pair for the last trick
    out1, out2 = outside_masks(u, seat)
    if o & ~TRUMP_MASK:  # side cards (a pair's key is held once too)
        voids = voids_after(st, seat)
        # a side pair nobody can beat
        best = strongest_side_master(voids, w, np.bool_(True), out1, out2)
        if best >= 0:
            return make_code(best, best)
        # a side card that is the strongest left in its suit
        best = strongest_side_master(voids, o, np.bool_(False), out1, out2)
        if best >= 0:
            return best
    # draw trumps with the master trump when holding a good share of them
    tm = o & TRUMP_MASK & ~reserve
    if tm:
        k = msb(tm)
        mine = popcount(o & TRUMP_MASK) + popcount(w & TRUMP_MASK)
        outside = popcount(out1 & TRUMP_MASK) + popcount(out2 & TRUMP_MASK)
        if (out1 & ABOVE_STRENGTH[k]) == ZERO and outside > 0 and \
                mine >= params[prow, P_DRAW_SHARE] * (mine + outside):
            return k
    # the cheapest card, side suits first
    cand = o & ~TRUMP_MASK
    if cand == ZERO:
        cand = o & ~reserve
        if cand == ZERO:
            cand = o
    return cheapest_key(cand, np.int64(3))  # least card_cost, the lowest key on ties


@kernel
def greedy_follow(st, u, rules, seat, params, prow, buf):
    """Follow code (module docstring).

    Decided on the legal set's masks (``legal_set``), never a list of its codes: every value
    greedy weighs is a sum over the play's cards of ``STRENGTH + c * points``, so the best
    single or pair is ``cheapest_key`` of a mask, the best of any two ``cheapest_two``; each
    gives the first best play of the canonical list, as a loop over ``set_all``'s list with a
    strict comparison would."""
    me = view.to_act(st)  # ``legal``'s play branch, inlined: following, so against the lead
    mode, m1, m2 = legal_set(view.hand_once(u, me), view.hand_twice(u, me),
                             view.trick_first(st, 0), view.trick_second(st, 0))
    if set_count(mode, m1, m2) == 1:
        return set_kth(mode, m1, m2, 0)  # forced
    if mode == M_CHOOSE2:  # two of one strength class: every such play is worth the same
        a = lsb(m1)
        return make_code(a, lsb(clear_lsb(m1)))
    pos = view.trick_pos(st)
    leader = view.leader(st)
    w = view.trick_winner_pos(st)
    win_seat = (leader + w) % 4
    last = pos == 3
    pair = view.trick_second(st, 0) >= 0
    kw = view.trick_first(st, w)
    if (win_seat & 1) == (seat & 1):  # the partner is winning
        safe = last
        if not last:
            out1, out2 = outside_masks(u, seat)
            safe = is_master(voids_after(st, seat), kw, pair, out1, out2)
        c = -100 if safe else 3  # safe: most points, then weakest; else cheapest
        if mode == M_ANY2:
            return cheapest_two(m1, m2, c)
        k = cheapest_key(m1, c)
        if mode == M_WITH:
            return make_code(k, np.int64(m2)) if k < np.int64(m2) else make_code(np.int64(m2), k)
        return make_code(k, k) if mode == M_PAIRS else k
    # an opponent is winning: the plays that beat it (R20, R21; of two different cards none
    # beats a pair lead, so only singles and pairs)
    if mode == M_SINGLES or mode == M_PAIRS or mode == M_ANY2:
        cand = (m1 if mode != M_ANY2 else m2) & BEATING[kw]
        if cand:
            contest_at = params[prow, P_CONTEST_AT]  # no trick holds fewer than 0 points
            contest = last or contest_at <= 0 or \
                view.trick_points_now(st) >= contest_at
            if not contest:
                out1, out2 = outside_masks(u, seat)
                cand = master_keys(cand, voids_after(st, seat), out2 if pair else out1)
            if cand:
                k = cheapest_key(cand, np.int64(-3))  # most points for the strength spent
                return make_code(k, k) if pair else k
    # dump the cheapest
    if mode == M_ANY2:
        return cheapest_two(m1, m2, np.int64(3))
    k = cheapest_key(m1, np.int64(3))
    if mode == M_WITH:
        return make_code(k, np.int64(m2)) if k < np.int64(m2) else make_code(np.int64(m2), k)
    return make_code(k, k) if mode == M_PAIRS else k


@kernel
def greedy_decide(st, u, rules, seat, params, prow, buf):
    """The greedy choice code for ``seat`` (module docstring), with the parameters in row
    ``prow`` of ``params``."""
    ph = view.phase(st)
    if ph == S.CALL:
        return greedy_show(st, u, seat, params, prow)
    if ph == S.GIVEBACK:
        return greedy_giveback(st, u, seat)
    if view.trick_pos(st) == 0:
        return greedy_lead(st, u, seat, params, prow)
    return greedy_follow(st, u, rules, seat, params, prow, buf)


# ``greedy_decide`` inlined into the compiled deal loop (``sim.loops.loop.finish_deal``): the two
# dispatch calls (``decide``, ``greedy_decide``) cost greedy deals almost a fifth of their time
greedy_decide_inline = kernel(inline="always")(getattr(greedy_decide, "py_func", greedy_decide))

class GreedyStrategy(CompiledStrategy):
    """Rule-based: shows long suits, wins cheaply, feeds partner, dumps low, draws trumps."""

    name = "greedy"
    compiled_kind = KIND_GREEDY
    show_at = param(0.40, float, lo=0.0, hi=1.0, doc="share of would-be trumps needed to show")
    min_cards = param(10, int, lo=1, hi=27, doc="cards in hand before it shows")
    partner_margin = param(0.10, float, lo=0.0, hi=1.0, doc="extra share to override partner")
    draw_share = param(0.5, float, lo=0.0, hi=1.0,
                       doc="share of outstanding trumps held to lead trumps")
    keep_pair_from = param(10, int, lo=0, hi=27,
                           doc="attacker keeps its top trump pair from this many cards left")
    contest_at = param(0, int, lo=0, hi=400,
                       doc="trick points from which it tries to win before playing last")

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return greedy_decide(st, u, rules, seat, params, seat, buf)

    def compiled_params(self) -> list[float]:
        return param_row(GREEDY_PARAM_FIELDS, {
            "P_SHOW_AT": self.show_at, "P_MIN_CARDS": self.min_cards,
            "P_PARTNER_MARGIN": self.partner_margin, "P_DRAW_SHARE": self.draw_share,
            "P_KEEP_PAIR_FROM": self.keep_pair_from, "P_CONTEST_AT": self.contest_at})
