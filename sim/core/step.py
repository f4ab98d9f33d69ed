"""One deal's transitions on values, each ruling written once (R5–R24).

Every kernel that moves a deal forward is built from these: ``sim.core.engine``'s ``advance``
and ``apply_*`` (the step API, the search players' rollouts) load the state arrays, call them
and store the results; the compiled deal loops (``sim.loops.loop``) keep the per-decision
state in locals across calls. The small ones are inlined at numba's IR level
(``inline="always"``), so the loops pay nothing for the call.

* calling: ``to_decision`` (dealing rounds R5, forced passes R7, redeals R11) up to the next
  seat that can show, ``next_chance``/``pass_chance`` after a decision, ``end_calling``
  (``start_play``: trump, key layout, first leader R10/R17; or a void deal R11);
* trick play: ``take_play`` (the cards leave the hand and become public), ``lay_play`` (the
  play on the table and the void it reveals, R18/R19c/d), ``close_trick`` (winner R20/R21,
  points R22, the trick's record; after the last trick the multiplier R23 and settlement R24).
"""

from __future__ import annotations

import numpy as np

from sim.cards import BIT, GROUP, KEY_OF_ID, KEY_RUN_MASK, KEY_RUN_SHIFT, KEY_RUNS
from sim.core import state as S
from sim.core.bits import USE_PDEP, ZERO, clear_lsb, lsb, pext
from sim.core.jit import kernel
from sim.core.movegen import show_mask
from sim.core.rng import bounded, draw
from sim.core.scoring import settle_kernel
from sim.core.state import add_card, added, next_draw, removed
from sim.core.trick import trick_points, trick_winner_inline
from sim.rules import R_KOU_PAIR, R_KOU_SINGLE, R_MAX_REDEALS

# --- dealing and calling ----------------------------------------------------------------


@kernel
def shuffle(st, u):
    """Sorted deck, then Fisher–Yates with stream 0 (docs/engine.md; R5, R11).

    With fixed cards (``S_FIX_SEAT >= 0``) the deal is uniform among the deals in which that
    seat holds at least those cards (``shuffle_fixed``): an ordinary deal conditioned on it.
    """
    fs = st[S.S_FIX_SEAT]
    if fs < 0:
        for i in range(108):
            st[S.S_DECK + i] = i // 2
        key = u[S.U_KEY + S.STREAM_CARDS]  # in locals: next_draw without a store per draw
        ctr = u[S.U_CTR + S.STREAM_CARDS]
        # draw d (from 0) swaps position 107 - d with one of 0 … 107 - d. The draws depend
        # on the counter alone, so they are all taken first (a loop the compiler vectorises)
        # into the trick log, empty while dealing, and the swaps follow (one chain of loads).
        for d in range(107):
            st[S.S_TRICKS + d] = bounded(draw(key, ctr + np.uint64(d)), 108 - d)
        for d in range(107):
            i = S.S_DECK + 107 - d
            j = S.S_DECK + st[S.S_TRICKS + d]
            st[S.S_TRICKS + d] = 0
            t = st[i]
            st[i] = st[j]
            st[j] = t
        u[S.U_CTR + S.STREAM_CARDS] = ctr + np.uint64(107)
    else:
        shuffle_fixed(st, u, fs)
    for s in range(4):
        u[S.U_ONCE + s] = ZERO
        u[S.U_TWICE + s] = ZERO
    st[S.S_ROUND] = 0
    st[S.S_CHANCE] = 0
    st[S.S_PASSRUN] = 0
    st[S.S_CUR_CARD] = -1
    st[S.S_CUR_SEAT] = -1
    st[S.S_NCALLS] = 0
    st[S.S_NOVERRIDES] = 0


@kernel
def shuffle_fixed(st, u, fs):
    """A shuffle conditioned on seat ``fs`` holding at least the fixed multiset (docs/engine.md).

    An ordinary deal gives the seat a uniform 27-card subset of the 108 cards. Conditioned on
    "at least these copies", a type named twice is held twice; of the ``m1`` types named once
    the seat holds the second copy of ``k`` of them (which ones: uniform), where ``k`` has
    weight ``C(m1, k) 2^(m1-k) C(N, R-k)`` (``N`` copies of unnamed types, ``R`` = 27 minus
    the number of fixed cards: the count of physical hands with those counts); its other
    ``R - k`` cards are a uniform subset of the unnamed copies. The seat's 27 cards then take
    its rounds in uniform order and the other 81 cards the other positions in uniform order.
    All draws come from stream 0, so the deal is a function of (seed, deal) as always.
    """
    nfix = st[S.S_FIX_N]
    sc = st[S.S_TRICKS:S.S_TRICKS + 27 * S.TRICK_W]  # scratch: the trick log is empty while dealing
    need = sc[0:54]  # copies of each type the seat must hold
    hand = sc[54:81]  # the seat's 27 cards
    rest = sc[81:162]  # the other 81 cards
    pool = sc[162:270]  # the copies of the types not named
    singles = sc[270:297]  # the types named once
    for c in range(54):
        need[c] = 0
    for k in range(nfix):
        need[st[S.S_FIX + k]] += 1
    h = 0
    m1 = 0
    npool = 0
    for c in range(54):
        if need[c] == 0:
            pool[npool] = c
            pool[npool + 1] = c
            npool += 2
        else:
            for _ in range(need[c]):
                hand[h] = c
                h += 1
            if need[c] == 1:
                singles[m1] = c
                m1 += 1
    r_free = 27 - nfix
    kmax = min(m1, r_free)
    total = 1.0  # sum of the weights of k = 0 … kmax, relative to k = 0
    w = 1.0
    for k in range(kmax):
        w *= (m1 - k) / (k + 1) * 0.5 * (r_free - k) / (npool - r_free + k + 1)
        total += w
    x = (next_draw(u, S.STREAM_CARDS) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * total
    k = 0
    w = 1.0
    acc = 1.0
    while k < kmax and acc <= x:
        w *= (m1 - k) / (k + 1) * 0.5 * (r_free - k) / (npool - r_free + k + 1)
        k += 1
        acc += w
    for i in range(k):  # which singles the seat holds twice: a partial Fisher-Yates
        j = i + bounded(next_draw(u, S.STREAM_CARDS), m1 - i)
        t = singles[i]
        singles[i] = singles[j]
        singles[j] = t
        hand[h] = singles[i]
        h += 1
    for i in range(r_free - k):  # its other cards: a uniform subset of the unnamed copies
        j = i + bounded(next_draw(u, S.STREAM_CARDS), npool - i)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
        hand[h] = pool[i]
        h += 1
    n = 0
    for i in range(k, m1):
        rest[n] = singles[i]
        n += 1
    for i in range(r_free - k, npool):
        rest[n] = pool[i]
        n += 1
    for i in range(26, 0, -1):
        j = bounded(next_draw(u, S.STREAM_CARDS), i + 1)
        t = hand[i]
        hand[i] = hand[j]
        hand[j] = t
    for i in range(80, 0, -1):
        j = bounded(next_draw(u, S.STREAM_CARDS), i + 1)
        t = rest[i]
        rest[i] = rest[j]
        rest[j] = t
    r = 0
    for i in range(108):
        if i % 4 == fs:
            st[S.S_DECK + i] = hand[i // 4]
        else:
            st[S.S_DECK + i] = rest[r]
            r += 1
    for i in range(27 * S.TRICK_W):
        sc[i] = 0


@kernel
def start_play(st, u):
    """End of calling with a caller: trump, roles, key layout, first leader (R10, R17)."""
    caller = st[S.S_CUR_SEAT]
    t = st[S.S_CUR_CARD] % 4
    st[S.S_CALLER] = caller
    st[S.S_TRUMP] = t
    for s in range(4):
        o = ZERO
        w = ZERO
        if USE_PDEP:  # a few bit-gathers (sim.cards.KEY_RUN_MASK)
            x = u[S.U_ONCE + s]
            y = u[S.U_TWICE + s]
            for r in range(KEY_RUNS[t]):
                o |= pext(x, KEY_RUN_MASK[t, r]) << KEY_RUN_SHIFT[t, r]
                w |= pext(y, KEY_RUN_MASK[t, r]) << KEY_RUN_SHIFT[t, r]
        else:
            m = u[S.U_ONCE + s]
            while m:
                c = lsb(m)
                m = clear_lsb(m)
                k = KEY_OF_ID[t, c]
                o |= BIT[k]
                if u[S.U_TWICE + s] & BIT[c]:
                    w |= BIT[k]
        u[S.U_ONCE + s] = o
        u[S.U_TWICE + s] = w
        u[S.U_FIRST_ONCE + s] = o
        u[S.U_FIRST_TWICE + s] = w
    first_lead(st, caller)


@kernel(inline="always")
def first_lead(st, caller):
    """Trick play from its first lead, ``caller`` having called (the hands as they are)."""
    st[S.S_LEADER] = (caller + 1) % 4  # R17: the defender after the caller leads
    st[S.S_TO_ACT] = st[S.S_LEADER]
    st[S.S_POS] = 0
    st[S.S_NTRICKS] = 0
    st[S.S_LEFT] = 27
    st[S.S_ATT_POINTS] = 0
    st[S.S_PHASE] = S.PLAY

@kernel(inline="always")
def deal_round(st, u, r):
    """Dealing round ``r + 1``: one card to each seat (R5); returns the round reached."""
    for s in range(4):
        add_card(u, s, st[S.S_DECK + 4 * r + s])
    return r + 1


@kernel(inline="always")
def next_chance(r, chance):
    """The calling chance after ``chance`` in round ``r`` (4: the round is over)."""
    if r == 27:
        return (chance + 1) & 3  # R7: round the table after round 27
    return chance + 1


@kernel(inline="always")
def pass_chance(r, chance, passrun):
    """(next chance, passes in a row) after a pass (R7: only passes after round 27 count)."""
    if r == 27:
        return next_chance(r, chance), passrun + 1
    return next_chance(r, chance), passrun


@kernel(inline="always")
def to_decision(st, u, rules, r, chance, passrun, cur):
    """Calling from round ``r``, seat ``chance``'s chance, ``passrun`` passes in a row and the
    pair ``cur`` on the table (id, -1 if none) to the next seat that can show: dealing rounds,
    forced passes (nobody is asked) and redeals on the way. Returns ``(r, chance, passrun,
    cur, m)``, ``m`` the show mask of seat ``chance``, or zero when calling is over
    (``end_calling``)."""
    while True:
        if r == 0 or (r < 27 and chance == 4):
            r = deal_round(st, u, r)
            chance = 0
            passrun = 0
            continue
        if r == 27 and passrun >= 4:  # R7: four passes in a row end calling
            if st[S.S_CUR_SEAT] < 0 and st[S.S_REDEALS] < rules[R_MAX_REDEALS]:
                st[S.S_REDEALS] += 1  # R11: nobody showed, deal again
                shuffle(st, u)  # resets the calling state in st
                r = 0
                chance = 0
                passrun = 0
                cur = -1
                continue
            return r, chance, passrun, cur, ZERO  # a caller, or R11: void
        if r < 27 and chance == 0:
            pairs = u[S.U_TWICE] | u[S.U_TWICE + 1] | u[S.U_TWICE + 2] | u[S.U_TWICE + 3]
            if show_mask(pairs, pairs, cur) == ZERO:
                chance = 4  # R7: nobody can show this round; four forced passes
                continue
        m = show_mask(u[S.U_ONCE + chance], u[S.U_TWICE + chance], cur)
        if m != ZERO:
            return r, chance, passrun, cur, m  # seat chance's decision
        chance, passrun = pass_chance(r, chance, passrun)  # no legal show: a forced pass


@kernel(inline="always")
def end_calling(st, u):
    """Four passes in a row after round 27: play starts under the last show, or, nobody having
    shown after the last redeal, the deal is void (R11)."""
    if st[S.S_CUR_SEAT] >= 0:
        start_play(st, u)
    else:
        st[S.S_VOID] = 1
        st[S.S_PHASE] = S.DONE


# --- trick play ---------------------------------------------------------------------------


@kernel(inline="always")
def take_play(o, w, po, pt, a, b):
    """A seat's (once, twice) masks ``o``, ``w`` and the played masks ``po``, ``pt`` after it
    plays key ``a`` (and ``b``, or -1): the cards leave its hand and become public."""
    x = BIT[a]
    o, w = removed(o, w, x)
    po, pt = added(po, pt, x)
    if b >= 0:
        y = BIT[b]
        o, w = removed(o, w, y)
        po, pt = added(po, pt, y)
    return o, w, po, pt


@kernel(inline="always")
def lay_play(st, seat, pos, lead_a, lead_b, a, b):
    """``seat``'s play (``a``, ``b``) at position ``pos`` of the current trick, whose lead is
    (``lead_a``, ``lead_b``); what not following reveals (public): no card of the led group
    left. Returns the lead, this play if it leads."""
    if pos > 0:  # (the void's bit without a branch: whether it shows is unpredictable)
        g = GROUP[lead_a]
        if b < 0:
            void = GROUP[a] != g  # R18
        else:
            void = (GROUP[a] == g) + (GROUP[b] == g) < 2  # R19c/d: held at most one card of G
        st[S.S_VOIDS + seat] |= np.int64(void) << g
    else:
        lead_a = a
        lead_b = b
    st[S.S_TRICK_A + pos] = a
    st[S.S_TRICK_B + pos] = b
    return lead_a, lead_b


@kernel(inline="always")
def close_trick(st, rules, trump, side, leader, ntricks, att, left, lead_b):
    """The trick on the table complete (four plays, led by ``leader``; ``lead_b`` the lead's
    second card): its winner, points and record; after the last trick the multiplier, score
    and settlement. ``side``: the caller's side (seat & 1); ``ntricks``, ``att``, ``left``:
    tricks done, the attackers' points and cards left in each hand before it. Returns
    ``(winner, ntricks, att, left)`` after it (``left == 0``: the deal is over)."""
    winner = (leader + trick_winner_inline(st, S.S_TRICK_A, S.S_TRICK_B, 4)) & 3  # R20, R21
    pts = trick_points(st, S.S_TRICK_A, S.S_TRICK_B, 4, trump)
    j = S.S_TRICKS + ntricks * S.TRICK_W
    st[j + S.TRICK_LEADER] = leader
    st[j + S.TRICK_WINNER] = winner
    st[j + S.TRICK_POINTS] = pts
    for k in range(4):
        st[j + S.TRICK_A + k] = st[S.S_TRICK_A + k]
        st[j + S.TRICK_B + k] = st[S.S_TRICK_B + k]
    attacker = (winner & 1) == side
    if attacker:
        att += pts  # R22
    lead_pair = lead_b >= 0
    left -= 2 if lead_pair else 1
    if left == 0:  # the last trick (R23)
        mult = 1
        if attacker:
            mult = rules[R_KOU_PAIR] if lead_pair else rules[R_KOU_SINGLE]
        st[S.S_MULT] = mult
        score = att + (mult - 1) * pts
        st[S.S_SCORE] = score
        x = settle_kernel(score, rules)  # R24
        for s in range(4):
            st[S.S_SETTLE + s] = x if (s & 1) == side else -x
    return winner, ntricks + 1, att, left
