"""The double-dummy solver's kernels (compiled): alpha-beta over every play of the last tricks
with all four hands known (docs/solve.md).

A position is the deal during trick play: four hands (key layout, ``once``/``twice`` masks),
the leader, the plays already on the table, the cards each hand held at the trick's start.
Its value is the **future attacker score**: the points the attackers (the caller's side, R9)
take from the current trick on, the last trick's counted with its multiplier when they win it
(R22, R23). The attackers maximise it, the defenders minimise it; the deal's score is the
points taken so far plus that value, and each attacker's settlement is R24's step function of
the score (monotone, so the settlement's minimax value is the settlement of the score's).

Every transition is the engine's (``sim.core.step``: ``take_play``, ``lay_play``,
``close_trick``) and every legal set is ``sim.core.movegen``'s, so the solver has no copy of
the rules. Each trick of the search writes its plays in a row of its own of ``tst`` (an engine
state per trick depth: ``close_trick`` reads the plays there and writes the trick's record,
score and settlement there).

The toolkit (each piece's effect is measured in docs/solve.md):

* a transposition table at trick starts, keyed on the four hands and the leader (the value
  of the rest of the deal depends on nothing else), storing a lower and an upper bound and
  the best play (always-replace, one slot per hash);
* move ordering: the table's best play first, then plays that win the trick now (cheapest
  first, points on them), points on a partner's winning trick, low discards;
* equivalent cards: of single cards a hand alone holds, with the same group and points and no
  other live card (another hand's or one on the table) between them in strength, one is
  searched (playing either leaves positions that differ by a renaming);
* a quick bound: the points still out, times the largest multiplier, bound the value;
* null-window tests (``window`` below): a test "is the value at least x?" visits far fewer
  nodes than an exact value, and R24's settlement needs only the tests at its band edges;
* a node cap: past it every kernel returns at once with ``stats[ST_ABORT]`` set, and the
  caller reports the position unsolved instead of hanging.
"""

from __future__ import annotations

import numpy as np

from sim.cards import BIT, GROUP, GROUP_MASK, POINTS_KEY, STRENGTH
from sim.core import state as S
from sim.core.bits import ZERO, clear_lsb, lsb, msb, popcount
from sim.core.jit import kernel
from sim.core.movegen import code_first, code_second, legal_set, set_all
from sim.core.step import close_trick, lay_play, take_play
from sim.core.trick import trick_winner
from sim.rules import R_KOU_PAIR, R_KOU_SINGLE

MAX_PLY = 4 * 27 + 1  # plays of a whole deal, plus one
MAX_TRICKS = 28
INF = 1 << 30
# stats: nodes visited, the node cap, whether the cap was hit, table hits, table stores
ST_NODES, ST_CAP, ST_ABORT, ST_HITS, ST_STORES, ST_OPTIONS = 0, 1, 2, 3, 4, 5
ST_HISTORY = 8  # the history heuristic: stats[ST_HISTORY + 64 * seat + key], cut-offs made
N_STATS = ST_HISTORY + 4 * 64
# option bits in stats[ST_OPTIONS] (all on by default; docs/solve.md measures each)
OPT_TT, OPT_ORDER, OPT_EQUIV, OPT_BOUND, OPT_RELATIVE, OPT_HISTORY, OPT_ETC = \
    1, 2, 4, 8, 16, 32, 64
OPT_ALL = OPT_TT | OPT_ORDER | OPT_EQUIV | OPT_BOUND | OPT_RELATIVE | OPT_HISTORY | OPT_ETC
# a table entry: tt_k[slot] the four hands (once 0-3, twice 0-3); tt_v[slot] the leader + 1
# (0: empty), lower bound, upper bound, best play code
TT_LEAD, TT_LO, TT_HI, TT_BEST = 0, 1, 2, 3
TT_WORDS = 4

# the point masks of each trump's key layout: keys worth 5 and worth 10 (R3)
POINT5 = np.array([sum(1 << k for k in range(54) if POINTS_KEY[t, k] == 5) for t in range(4)],
                  dtype=np.uint64)
POINT10 = np.array([sum(1 << k for k in range(54) if POINTS_KEY[t, k] == 10) for t in range(4)],
                   dtype=np.uint64)
# keys of the same group as key k with strength strictly between k's and each other key's:
# BETWEEN[k, j] (k, j of one group; zero otherwise)
BETWEEN = np.zeros((54, 54), dtype=np.uint64)
for _k in range(54):
    for _j in range(54):
        if GROUP[_k] == GROUP[_j] and _k != _j:
            _lo, _hi = min(STRENGTH[_k], STRENGTH[_j]), max(STRENGTH[_k], STRENGTH[_j])
            BETWEEN[_k, _j] = np.uint64(sum(
                1 << m for m in range(54)
                if GROUP[m] == GROUP[_k] and m != _k and m != _j and _lo <= STRENGTH[m] <= _hi))
del _k, _j, _lo, _hi


@kernel
def mask_points(m, trump):
    """Face points (R3) of the keys in mask ``m`` (each once)."""
    return 5 * popcount(m & POINT5[trump]) + 10 * popcount(m & POINT10[trump])


@kernel
def points_out(hands, trump):
    """Points still in the four hands (``hands``: once 0-3, twice 0-3)."""
    p = 0
    for s in range(4):
        p += mask_points(hands[s], trump) + mask_points(hands[4 + s], trump)
    return p


# the relative key (OPT_RELATIVE): a copy distribution over the seats -> 0..13 (DIST), by
# c0 + 3 c1 + 9 c2 + 27 c3 for the copies c_s each seat holds (one or two copies in all)
DIST = np.full(81, -1, dtype=np.int64)
_n = 0
for _i in range(81):
    _c = [(_i // 3 ** _s) % 3 for _s in range(4)]
    if 1 <= sum(_c) <= 2:
        DIST[_i] = _n
        _n += 1
del _i, _c, _n
SEPARATOR = 15  # the token between two groups
TOKENS_PER_WORD = 9  # 7-bit tokens


@kernel
def table_key(hands, trump, relative, out):
    """The table's key of the four hands into ``out[0:8]``: the hands themselves, or (with
    ``relative``) their shape up to renaming, DDS's "relative ranks": for each group in turn,
    each live key from the weakest up as a token of which seats hold its copies, its points
    and whether it ties the previous one in strength. Two positions with the same relative key
    differ by an order-preserving renaming of the live cards of each group that keeps points,
    ties and copies, under which every rule reads the same (R13-R23): their futures are
    equal."""
    if not relative:
        for i in range(8):
            out[i] = hands[i]
        return
    for i in range(8):
        out[i] = ZERO
    w = 0
    j = 0
    live = hands[0] | hands[1] | hands[2] | hands[3]
    for g in range(4):
        m = live & GROUP_MASK[g]
        prev = -1
        while m:
            k = lsb(m)
            m = clear_lsb(m)
            b = BIT[k]
            d = 0
            mul = 1
            for s in range(4):
                d += mul * (((hands[s] & b) != ZERO) + ((hands[4 + s] & b) != ZERO))
                mul *= 3
            p = POINTS_KEY[trump, k]
            tok = DIST[d] | ((1 if p == 5 else 2 if p == 10 else 0) << 4) \
                | ((prev >= 0 and STRENGTH[prev] == STRENGTH[k]) << 6)
            out[w] |= np.uint64(tok) << np.uint64(7 * j)
            j += 1
            if j == TOKENS_PER_WORD:
                j = 0
                w += 1
            prev = k
        out[w] |= np.uint64(SEPARATOR) << np.uint64(7 * j)
        j += 1
        if j == TOKENS_PER_WORD:
            j = 0
            w += 1


@kernel
def _hash(key, tag):
    h = np.uint64(tag) * np.uint64(0x9E3779B97F4A7C15)
    for i in range(8):
        h = (h ^ key[i]) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
    return h


@kernel
def _tt_find(tt_k, tt_v, key, tag):
    """(slot, whether it holds this position). ``tag`` = leader + 1 + 8 x cards per hand.
    Two slots per hash (a bucket): a position is looked for in both; a new one takes the
    empty slot, else the one of the smaller subtree (fewer cards left), so the entries that
    save the most work stay."""
    base = np.int64(_hash(key, tag) & np.uint64(tt_k.shape[0] - 2))
    for slot in range(base, base + 2):
        if tt_v[slot, TT_LEAD] == tag:
            same = True
            for i in range(8):
                if tt_k[slot, i] != key[i]:
                    same = False
                    break
            if same:
                return slot, True
    if tt_v[base, TT_LEAD] == 0:
        return base, False
    if tt_v[base + 1, TT_LEAD] == 0:
        return base + 1, False
    if tt_v[base, TT_LEAD] >> 3 <= tt_v[base + 1, TT_LEAD] >> 3:
        return base, False
    return base + 1, False


@kernel
def _tt_store(tt_k, tt_v, slot, hit, key, tag, lo, hi, best):
    if not hit:
        for i in range(8):
            tt_k[slot, i] = key[i]
        tt_v[slot, TT_LEAD] = tag
        tt_v[slot, TT_LO] = lo
        tt_v[slot, TT_HI] = hi
    else:
        tt_v[slot, TT_LO] = max(lo, tt_v[slot, TT_LO])
        tt_v[slot, TT_HI] = min(hi, tt_v[slot, TT_HI])
    tt_v[slot, TT_BEST] = best


@kernel
def _live(hands, seat, trick, pos):
    """Keys held by the hands other than ``seat``'s, and on the table (the current trick's
    first ``pos`` plays in ``trick``, an engine state row)."""
    m = ZERO
    for s in range(4):
        if s != seat:
            m |= hands[s]
    for i in range(pos):
        m |= BIT[trick[S.S_TRICK_A + i]]
        if trick[S.S_TRICK_B + i] >= 0:
            m |= BIT[trick[S.S_TRICK_B + i]]
    return m


@kernel
def _equivalent(a, b, alone, own, others, trump):
    """Whether single keys ``a`` < ``b`` (both in ``alone``: held once by the hand, their
    other copy played) are interchangeable: same group and points, no key of ``others``
    (live elsewhere) between them in strength, and every key of the hand between them itself
    in ``alone`` with the same points."""
    if GROUP[a] != GROUP[b] or POINTS_KEY[trump, a] != POINTS_KEY[trump, b]:
        return False
    between = BETWEEN[a, b]
    if between & others:
        return False
    m = between & own
    while m:
        k = lsb(m)
        m = clear_lsb(m)
        if (alone & BIT[k]) == ZERO or POINTS_KEY[trump, k] != POINTS_KEY[trump, a]:
            return False
    return True


@kernel
def run_starts(o, w, others, trump):
    """The runs of a hand (module docstring, equivalent cards): ``(alone, starts)``, where
    ``alone`` holds the keys the hand holds once whose other copy is played, and ``starts``
    the lowest key of each run of interchangeable ones. Which run cards are played does not
    change the value, only how many: a play is known by its cards' runs."""
    alone = o & ~w & ~others
    starts = ZERO
    m = alone
    r = -1
    while m:
        k = lsb(m)
        m = clear_lsb(m)
        if r < 0 or not _equivalent(r, k, alone, o, others, trump):
            starts |= BIT[k]
            r = k
    return alone, starts


@kernel
def _rep(k, alone, starts):
    """The first key of ``k``'s run (``k`` itself when it is in none)."""
    if (alone & BIT[k]) == ZERO:
        return k
    below = starts & (BIT[k] | (BIT[k] - np.uint64(1)))
    return msb(below)


@kernel
def _order(tst, hands, mv, keys, ply, n, seat, leader, pos, trump, best_first, opts, stats):
    """Sort the ``n`` plays in ``mv[ply]`` best-first for the seat to act (module docstring):
    ``keys[ply]`` receives their ordering keys."""
    row = mv[ply]
    key = keys[ply]
    if opts & OPT_ORDER:
        trick = tst
        partner_winning = False
        if pos > 0:
            wi = trick_winner(trick, S.S_TRICK_A, S.S_TRICK_B, pos)
            partner_winning = ((leader + wi) & 1) == (seat & 1)
        for i in range(n):
            c = row[i]
            a = code_first(c)
            b = code_second(c)
            pts = POINTS_KEY[trump, a] + (POINTS_KEY[trump, b] if b >= 0 else 0)
            s = STRENGTH[a] + (STRENGTH[b] if b >= 0 else 0)
            h = stats[ST_HISTORY + 64 * seat + a] if opts & OPT_HISTORY else 0
            if pos == 0:  # leading: trumps and strong cards, pairs before singles
                k = ((64 * (b >= 0) + 32 * (GROUP[a] == 3) + s) << 24) + min(h, (1 << 24) - 1)
            else:
                trick[S.S_TRICK_A + pos] = a
                trick[S.S_TRICK_B + pos] = b
                wins = trick_winner(trick, S.S_TRICK_A, S.S_TRICK_B, pos + 1) == pos
                if wins and not (partner_winning and pos == 3):
                    k = 4000 + 20 * pts - s  # win it, cheaply, with points on it
                elif partner_winning:
                    k = 2000 + 20 * pts - s  # points to the partner's trick
                else:
                    k = -20 * pts - s  # the cheapest discard
                k = (k << 24) + min(h, (1 << 24) - 1)  # ties: what cut off before
            key[i] = k
    else:
        for i in range(n):
            key[i] = 0
    for i in range(n):
        if row[i] == best_first:
            key[i] = 1 << 40
    for i in range(1, n):  # insertion sort, descending, stable
        c = row[i]
        k = key[i]
        j = i - 1
        while j >= 0 and key[j] < k:
            row[j + 1] = row[j]
            key[j + 1] = key[j]
            j -= 1
        row[j + 1] = c
        key[j + 1] = k


@kernel
def _skip_equivalent(hands, mv, keys, ply, n, seat, tst, pos, trump):
    """Keep one play of each class of equivalent plays in ``mv[ply]`` (the same runs, as
    many cards of each: ``run_starts``); returns the count kept. ``keys[ply]`` is scratch."""
    o = hands[seat]
    alone, starts = run_starts(o, hands[4 + seat], _live(hands, seat, tst, pos), trump)
    if starts == alone:  # every run has one card: nothing to merge
        return n
    row = mv[ply]
    sig = keys[ply]
    kept = 0
    for i in range(n):
        c = row[i]
        a = code_first(c)
        b = code_second(c)
        ra = _rep(a, alone, starts)
        x = ra
        if b >= 0:
            rb = _rep(b, alone, starts)
            x = min(ra, rb) + 64 * (max(ra, rb) + 1) + 8192 * (a == b)
        dup = False
        for j in range(kept):
            if sig[j] == x:
                dup = True
                break
        if not dup:
            row[kept] = c
            sig[kept] = x
            kept += 1
    return kept


@kernel(inline="always")
def _play(tst_row, hands, rules, trump, side, seat, t, leader, pos, lead_a, lead_b, left, o, w,
          c):
    """Seat ``seat`` (hand ``o``, ``w`` before it) plays ``c`` at position ``pos`` of trick
    ``t``, held in ``tst_row``: the engine's transitions. Returns the position after it,
    ``(t, leader, pos, lead_a, lead_b, left)`` as ``search`` takes them, with ``got``, the
    attackers' points from a trick it closes, and ``end``, the future value when the deal is
    over (-1 otherwise)."""
    a = code_first(c)
    b = code_second(c)
    o2, w2, _, _ = take_play(o, w, ZERO, ZERO, a, b)
    hands[seat] = o2
    hands[4 + seat] = w2
    la, lb = lay_play(tst_row, seat, pos, lead_a, lead_b, a, b)
    if pos < 3:
        return t, leader, pos + 1, la, lb, left, 0, -1
    winner, _, got, left2 = close_trick(tst_row, rules, trump, side, leader, 0, 0, left, lb)
    return (t + 1, winner, 0, -1, -1, left2, got,
            tst_row[S.S_SCORE] if left2 == 0 else -1)


@kernel
def search(tst, hands, mv, keys, tt_k, tt_v, stats, rules, trump, side, t, leader, pos,
           lead_a, lead_b, left, ply, alpha, beta):
    """The future attacker score (module docstring) of the position, fail-soft alpha-beta
    in the window (``alpha``, ``beta``): exact inside it, else a bound on the side it fails.

    ``tst[t]`` holds trick ``t``'s plays so far (``pos`` of them, led by ``leader``; its lead
    ``lead_a``, ``lead_b``); ``hands`` the four hands now; ``left`` the cards each hand held
    at the trick's start; ``ply`` indexes the move buffers ``mv``/``keys``.
    """
    stats[ST_NODES] += 1
    if stats[ST_NODES] > stats[ST_CAP]:
        stats[ST_ABORT] = 1
        return 0
    opts = stats[ST_OPTIONS]
    slot = -1
    hit = False
    best_first = -1
    if pos == 0:
        if opts & OPT_BOUND:
            mult = max(1, max(rules[R_KOU_SINGLE], rules[R_KOU_PAIR]))
            po = points_out(hands, trump)
            # every point out, the last trick's (8 cards at most: 80 points) counted mult times
            ub = po + (mult - 1) * min(po, 80)
            if ub <= alpha:
                return ub
            if beta <= 0:
                return 0
        if opts & OPT_TT:
            table_key(hands, trump, opts & OPT_RELATIVE, hands[8:16])
            slot, hit = _tt_find(tt_k, tt_v, hands[8:16], leader + 1 + 8 * left)
            if hit:
                stats[ST_HITS] += 1
                lo = tt_v[slot, TT_LO]
                hi = tt_v[slot, TT_HI]
                if lo >= beta or lo == hi:
                    return lo
                if hi <= alpha:
                    return hi
                alpha = max(alpha, lo)
                beta = min(beta, hi)
                best_first = tt_v[slot, TT_BEST]
    seat = (leader + pos) & 3
    o = hands[seat]
    w = hands[4 + seat]
    trick = tst[t]
    if pos == 0:
        mode, m1, m2 = legal_set(o, w, -1, -1)
    else:
        mode, m1, m2 = legal_set(o, w, lead_a, lead_b)
    n = set_all(mode, m1, m2, mv[ply])
    if n > 1:
        if opts & OPT_EQUIV:
            n = _skip_equivalent(hands, mv, keys, ply, n, seat, trick, pos, trump)
        _order(trick, hands, mv, keys, ply, n, seat, leader, pos, trump, best_first, opts,
               stats)
    maximizing = (seat & 1) == side
    if pos == 3 and n > 1 and opts & OPT_ETC and opts & OPT_TT:
        # enhanced transposition cut-off: a play whose next trick start the table already
        # bounds past the window ends the search before any subtree is searched
        for i in range(n):
            c = mv[ply, i]
            _, winner, _, _, _, left2, got, end = _play(trick, hands, rules, trump, side,
                                                        seat, t, leader, pos, lead_a, lead_b,
                                                        left, o, w, c)
            cut = -1
            if end < 0:
                table_key(hands, trump, opts & OPT_RELATIVE, hands[8:16])
                cslot, chit = _tt_find(tt_k, tt_v, hands[8:16], winner + 1 + 8 * left2)
                if chit:
                    if maximizing and tt_v[cslot, TT_LO] + got >= beta:
                        cut = tt_v[cslot, TT_LO] + got
                    elif not maximizing and tt_v[cslot, TT_HI] + got <= alpha:
                        cut = tt_v[cslot, TT_HI] + got
            hands[seat] = o
            hands[4 + seat] = w
            if cut >= 0:
                return cut
    best = -INF if maximizing else INF
    best_code = -1
    a_in = alpha
    b_in = beta
    for i in range(n):
        c = mv[ply, i]
        nt, nl, npos, na, nb, nleft, got, end = _play(trick, hands, rules, trump, side, seat,
                                                      t, leader, pos, lead_a, lead_b, left, o,
                                                      w, c)
        if end >= 0:
            v = end
        else:
            v = got + search(tst, hands, mv, keys, tt_k, tt_v, stats, rules, trump, side,
                             np.int64(nt), np.int64(nl), np.int64(npos), np.int64(na),
                             np.int64(nb), np.int64(nleft), np.int64(ply + 1),
                             np.int64(alpha - got), np.int64(beta - got))
        hands[seat] = o
        hands[4 + seat] = w
        if stats[ST_ABORT]:
            return 0
        if maximizing:
            if v > best:
                best = v
                best_code = c
                if best > alpha:
                    alpha = best
        else:
            if v < best:
                best = v
                best_code = c
                if best < beta:
                    beta = best
        if alpha >= beta:
            if opts & OPT_HISTORY and i > 0:
                stats[ST_HISTORY + 64 * seat + code_first(c)] += left * left
            break
    if slot >= 0:
        stats[ST_STORES] += 1
        key = hands[8:16]
        table_key(hands, trump, opts & OPT_RELATIVE, key)  # (the children wrote there)
        tag = leader + 1 + 8 * left
        if best <= a_in:
            _tt_store(tt_k, tt_v, slot, hit, key, tag, 0, best, best_code)
        elif best >= b_in:
            _tt_store(tt_k, tt_v, slot, hit, key, tag, best, INF, best_code)
        else:
            _tt_store(tt_k, tt_v, slot, hit, key, tag, best, best, best_code)
    return best


@kernel
def mtdf(tst, hands, mv, keys, tt_k, tt_v, stats, rules, trump, side, t, leader, pos, lead_a,
         lead_b, left, ply, guess):
    """The exact value of a position (as ``search``) by null-window tests only (MTD(f),
    Plaat et al. 1996): each test "is it at least x?" answers with a bound, the table keeps
    the bounds, and the tests close in on the value from ``guess``."""
    lo = -INF
    hi = INF
    g = guess
    while lo < hi:
        beta = g + 1 if g == lo else g
        g = search(tst, hands, mv, keys, tt_k, tt_v, stats, rules, trump, side, t, leader, pos,
                   lead_a, lead_b, left, ply, np.int64(beta - 1), np.int64(beta))
        if stats[ST_ABORT]:
            return 0
        if g < beta:
            hi = g
        else:
            lo = g
    return g


@kernel
def load(st, u, tst, hands):
    """Copy the position of an engine state in trick play into the solver's arrays: the hands
    into ``hands``, the current trick into ``tst[0]``. Returns ``(leader, pos, lead_a,
    lead_b, left)``."""
    for s in range(4):
        hands[s] = u[S.U_ONCE + s]
        hands[4 + s] = u[S.U_TWICE + s]
    pos = st[S.S_POS]
    for i in range(4):
        tst[0, S.S_TRICK_A + i] = st[S.S_TRICK_A + i] if i < pos else -1
        tst[0, S.S_TRICK_B + i] = st[S.S_TRICK_B + i] if i < pos else -1
    lead_a = st[S.S_TRICK_A] if pos > 0 else -1
    lead_b = st[S.S_TRICK_B] if pos > 0 else -1
    return st[S.S_LEADER], pos, lead_a, lead_b, st[S.S_LEFT]


@kernel
def value(st, u, rules, tst, hands, mv, keys, tt_k, tt_v, stats, alpha, beta):
    """The future attacker score of the engine position ``(st, u)`` in the window
    (``alpha``, ``beta``), as ``search``."""
    leader, pos, lead_a, lead_b, left = load(st, u, tst, hands)
    if alpha < 0 and beta >= INF:
        return mtdf(tst, hands, mv, keys, tt_k, tt_v, stats, rules, np.int64(st[S.S_TRUMP]),
                    np.int64(st[S.S_CALLER] & 1), np.int64(0), np.int64(leader),
                    np.int64(pos), np.int64(lead_a), np.int64(lead_b), np.int64(left),
                    np.int64(0), np.int64(0))
    return search(tst, hands, mv, keys, tt_k, tt_v, stats, rules, np.int64(st[S.S_TRUMP]),
                  np.int64(st[S.S_CALLER] & 1), np.int64(0), np.int64(leader), np.int64(pos),
                  np.int64(lead_a), np.int64(lead_b), np.int64(left), np.int64(0),
                  np.int64(alpha), np.int64(beta))


@kernel
def choices(st, u, rules, tst, hands, mv, keys, tt_k, tt_v, stats, codes, values):
    """Every legal play of the seat to act in ``(st, u)`` (canonical order, into ``codes``)
    with the exact future attacker score after it (``values``); returns their count (0 with
    ``stats[ST_ABORT]`` set when the node cap was hit)."""
    leader, pos, lead_a, lead_b, left = load(st, u, tst, hands)
    trump = st[S.S_TRUMP]
    side = st[S.S_CALLER] & 1
    seat = (leader + pos) & 3
    o = hands[seat]
    w = hands[4 + seat]
    if pos == 0:
        mode, m1, m2 = legal_set(o, w, -1, -1)
    else:
        mode, m1, m2 = legal_set(o, w, lead_a, lead_b)
    n = set_all(mode, m1, m2, codes)
    trick = tst[0]
    guess = 0
    for i in range(n):
        c = codes[i]
        nt, nl, npos, na, nb, nleft, got, end = _play(trick, hands, rules, trump, side, seat,
                                                      0, leader, pos, lead_a, lead_b, left, o,
                                                      w, c)
        if end >= 0:
            v = end
        else:
            v = got + mtdf(tst, hands, mv, keys, tt_k, tt_v, stats, rules, trump, side,
                           np.int64(nt), np.int64(nl), np.int64(npos), np.int64(na),
                           np.int64(nb), np.int64(nleft), np.int64(1), np.int64(guess - got))
        hands[seat] = o
        hands[4 + seat] = w
        trick[S.S_TRICK_A + pos] = -1
        trick[S.S_TRICK_B + pos] = -1
        if stats[ST_ABORT]:
            return 0
        values[i] = v
        guess = v
    return n
