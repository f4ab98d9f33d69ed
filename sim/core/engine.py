"""The deal as a compiled state machine: dealing, calling, tricks, scoring (R5–R24).

A deal lives in two flat arrays that the kernels update in place:

* ``st`` (``int64[ST_SIZE]``): phase, whose turn, calling and trick state, and the logs a
  record is built from (deck, calls, tricks); offsets are the ``S_*`` constants of
  ``sim.core.state`` (read as ``S.S_PHASE`` …);
* ``u`` (``uint64[U_SIZE]``): the four hands as (once, twice) masks — card-id layout while
  calling, key layout (``sim.cards``) once trump is known — and the random streams.

``advance`` runs everything that needs nobody's decision (dealing rounds, forced passes,
redeals, the switch to trick play) and stops at the next decision; ``apply_*`` carry one
decision out. Kernels never raise: callers validate choices against ``legal``. Both are loads
and stores around ``sim.core.step``'s transitions, where each ruling is written once; the
whole-deal loops in ``sim.loops.loop`` are built from the same transitions, and the Python
step API ``sim.Deal`` from these kernels.
"""

from __future__ import annotations

import numpy as np

from sim.cards import BIT, GROUP_MASK, ID_OF_KEY, TRUMP_GROUP
from sim.core import state as S
from sim.core.bits import ZERO, clear_lsb, lsb, popcount
from sim.core.jit import kernel
from sim.core.movegen import code_first, code_second, legal_givebacks, legal_set, set_all, show_mask
from sim.core.rng import STREAM_CARDS as RNG_CARDS
from sim.core.rng import STREAM_SEAT0 as RNG_SEAT0
from sim.core.rng import STREAM_STRATEGY0 as RNG_STRATEGY0
from sim.core.rng import deal_key, key_of_stream
from sim.core.state import add_card, remove_card
from sim.core.step import (
    close_trick,
    end_calling,
    lay_play,
    next_chance,
    pass_chance,
    shuffle,
    take_play,
    to_decision,
)


@kernel(inline="always")  # one line: inlined, it is one compiled function fewer (cold compile)
def init_deal(st, u, seed, deal):
    """Start deal ``deal`` of master seed ``seed`` (both uint64): streams, first shuffle."""
    init_deal_fixed(st, u, seed, deal, -1, st[:0])


@kernel
def init_deal_fixed(st, u, seed, deal, fix_seat, fix_cards):
    """``init_deal``, but every shuffle gives the card ids ``fix_cards`` to ``fix_seat``
    (-1: no constraint). Used by ``shuangkou estimate``."""
    st[:] = 0
    st[S.S_FIX_SEAT] = fix_seat
    st[S.S_FIX_N] = fix_cards.shape[0]
    for k in range(fix_cards.shape[0]):
        st[S.S_FIX + k] = fix_cards[k]
    dk = deal_key(seed, deal)  # (``stream_key`` of each stream, the common part once)
    u[S.U_KEY + S.STREAM_CARDS] = key_of_stream(dk, np.uint64(RNG_CARDS))
    for s in range(4):  # the seats' strategy and sampling streams
        u[S.U_KEY + S.STREAM_SEAT + s] = key_of_stream(dk, np.uint64(RNG_SEAT0 + s))
    for s in range(4):
        u[S.U_KEY + S.STREAM_SAMPLE + s] = key_of_stream(dk, np.uint64(RNG_STRATEGY0 + s))
    for s in range(S.N_STREAMS):
        u[S.U_CTR + s] = ZERO
    u[S.U_PLAYED_ONCE] = ZERO
    u[S.U_PLAYED_TWICE] = ZERO
    st[S.S_TRUMP] = -1
    st[S.S_CALLER] = -1
    st[S.S_MULT] = 1
    shuffle(st, u)
    st[S.S_PHASE] = S.CALL


@kernel
def advance(st, u, rules):
    """Run the deal forward to the next decision (or to the end); see module docstring.

    The calling counters live in locals while it runs (``sim.core.step.to_decision``; written
    back wherever it stops): the loop visits some 130 dealing rounds and calling chances per deal.
    """
    if st[S.S_PHASE] != S.CALL:
        return  # GIVEBACK and PLAY already name S_TO_ACT; DONE has nothing to do
    r, chance, passrun, _, m = to_decision(st, u, rules, st[S.S_ROUND], st[S.S_CHANCE],
                                           st[S.S_PASSRUN], st[S.S_CUR_CARD])
    st[S.S_ROUND] = r
    st[S.S_CHANCE] = chance
    st[S.S_PASSRUN] = passrun
    if m == ZERO:
        end_calling(st, u)
    else:
        st[S.S_TO_ACT] = chance


@kernel
def apply_pass(st):
    c, p = pass_chance(st[S.S_ROUND], st[S.S_CHANCE], st[S.S_PASSRUN])
    st[S.S_CHANCE] = c
    st[S.S_PASSRUN] = p


@kernel
def apply_show(st, u, card):
    """Seat ``S_TO_ACT`` shows its pair of ``card`` (id); an override takes the pair before (R8)."""
    seat = st[S.S_TO_ACT]
    prev = st[S.S_CUR_SEAT]
    prev_card = st[S.S_CUR_CARD]
    i = S.S_CALLS + st[S.S_NCALLS] * S.CALL_W
    st[i + S.CALL_ROUND] = st[S.S_ROUND]
    st[i + S.CALL_SEAT] = seat
    st[i + S.CALL_CARD] = card
    st[i + S.CALL_TOOK] = -1
    st[i + S.CALL_GAVE_A] = -1
    st[i + S.CALL_GAVE_B] = -1
    st[S.S_NCALLS] += 1
    st[S.S_CUR_CARD] = card
    st[S.S_CUR_SEAT] = seat
    st[S.S_PASSRUN] = 0
    st[S.S_DECISIONS] += 1
    st[S.S_CHANCE] = next_chance(st[S.S_ROUND], st[S.S_CHANCE])
    if prev >= 0 and prev != seat:  # R8: the earlier shower's pair moves to the overrider
        b = BIT[prev_card]
        u[S.U_ONCE + prev] &= ~b
        u[S.U_TWICE + prev] &= ~b
        u[S.U_ONCE + seat] |= b
        u[S.U_TWICE + seat] |= b
        st[i + S.CALL_TOOK] = prev
        st[S.S_GIVE_TO] = prev
        st[S.S_NOVERRIDES] += 1
        st[S.S_PHASE] = S.GIVEBACK  # ... and the overrider gives two cards back


@kernel
def apply_call_pass(st):
    """Seat ``S_TO_ACT`` passes a chance at which it could have shown."""
    st[S.S_DECISIONS] += 1
    apply_pass(st)


@kernel
def apply_giveback(st, u, a, b):
    """The overrider gives cards ``a`` and ``b`` (ids) back to the overridden seat (R8)."""
    seat = st[S.S_TO_ACT]
    to = st[S.S_GIVE_TO]
    remove_card(u, seat, a)
    remove_card(u, seat, b)
    add_card(u, to, a)
    add_card(u, to, b)
    i = S.S_CALLS + (st[S.S_NCALLS] - 1) * S.CALL_W
    st[i + S.CALL_GAVE_A] = a
    st[i + S.CALL_GAVE_B] = b
    st[S.S_DECISIONS] += 1
    st[S.S_PHASE] = S.CALL


@kernel
def apply_play(st, u, rules, a, b):
    """Seat ``S_TO_ACT`` plays key ``a`` (and ``b``, or -1); completes and scores tricks."""
    seat = st[S.S_TO_ACT]
    pos = st[S.S_POS]
    o, w, po, pt = take_play(u[S.U_ONCE + seat], u[S.U_TWICE + seat], u[S.U_PLAYED_ONCE],
                             u[S.U_PLAYED_TWICE], a, b)
    u[S.U_ONCE + seat] = o
    u[S.U_TWICE + seat] = w
    u[S.U_PLAYED_ONCE] = po
    u[S.U_PLAYED_TWICE] = pt
    lay_play(st, seat, pos, st[S.S_TRICK_A], st[S.S_TRICK_B], a, b)
    st[S.S_DECISIONS] += 1
    pos += 1
    if pos < 4:
        st[S.S_POS] = pos
        st[S.S_TO_ACT] = (seat + 1) % 4
        return
    winner, ntricks, att, left = close_trick(st, rules, st[S.S_TRUMP], st[S.S_CALLER] & 1,
                                             st[S.S_LEADER], st[S.S_NTRICKS], st[S.S_ATT_POINTS],
                                             st[S.S_LEFT], st[S.S_TRICK_B])
    st[S.S_NTRICKS] = ntricks
    st[S.S_ATT_POINTS] = att
    st[S.S_LEFT] = left
    if left == 0:
        st[S.S_PHASE] = S.DONE
        return
    st[S.S_LEADER] = winner
    st[S.S_TO_ACT] = winner
    st[S.S_POS] = 0


# ``apply_play`` inlined (numba IR inlining) where a deal's plays run back to back: the
# compiled deal loop (``sim.loops.loop``). Other callers keep the call, so the cold
# compile does not grow with every strategy that plays moves.
apply_play_inline = kernel(inline="always")(getattr(apply_play, "py_func", apply_play))

@kernel
def play_set(st, u, seat):
    """The legal-set description (``sim.core.movegen.legal_set``) of ``seat``'s next play."""
    if st[S.S_POS] == 0:
        return legal_set(u[S.U_ONCE + seat], u[S.U_TWICE + seat], np.int64(-1), np.int64(-1))
    return legal_set(u[S.U_ONCE + seat], u[S.U_TWICE + seat], st[S.S_TRICK_A], st[S.S_TRICK_B])


@kernel
def giveback_set(st, u, seat):
    """The legal-set description (``sim.core.movegen.legal_givebacks``) of ``seat``'s give-back."""
    return legal_givebacks(u[S.U_ONCE + seat], u[S.U_TWICE + seat], st[S.S_CUR_CARD])


@kernel
def legal(st, u, out):
    """The choices of the seat to act, as codes in canonical order; returns their count.

    show: card ids of showable pairs (pass is always also allowed and not listed);
    giveback: two-card codes over ids; play: play codes over keys (``sim.core.movegen``).
    """
    ph = st[S.S_PHASE]
    seat = st[S.S_TO_ACT]
    o = u[S.U_ONCE + seat]
    w = u[S.U_TWICE + seat]
    if ph == S.CALL:
        m = show_mask(o, w, st[S.S_CUR_CARD])
        n = 0
        while m:
            out[n] = lsb(m)
            n += 1
            m = clear_lsb(m)
        return n
    if ph == S.GIVEBACK:
        mode, m1, m2 = giveback_set(st, u, seat)
        return set_all(mode, m1, m2, out)
    if ph == S.PLAY:
        mode, m1, m2 = play_set(st, u, seat)
        return set_all(mode, m1, m2, out)
    return 0


@kernel
def apply_code(st, u, rules, code):
    """Carry out a choice given as a code of ``legal`` (-1 = pass at a show decision)."""
    ph = st[S.S_PHASE]
    if ph == S.PLAY:  # trick play never needs advance(): the next seat is always asked
        apply_play(st, u, rules, code_first(code), code_second(code))
        return
    if ph == S.CALL:
        if code < 0:
            apply_call_pass(st)
        else:
            apply_show(st, u, code)
    elif ph == S.GIVEBACK:
        apply_giveback(st, u, code_first(code), code_second(code))
    advance(st, u, rules)


# ``apply_code`` inlined into the compiled deal loop for the calling decisions
apply_code_inline = kernel(inline="always")(getattr(apply_code, "py_func", apply_code))

@kernel
def apply_then_legal(st, u, rules, code, out):
    """``apply_code`` then ``legal`` of the decision that follows, in one call (the step API
    crosses from Python once per decision); returns the count written to ``out``, the phase
    and the seat to act."""
    apply_code(st, u, rules, code)
    n = legal(st, u, out)
    return n, st[S.S_PHASE], st[S.S_TO_ACT]


@kernel
def trumps_held(st, u, seat):
    """Trumps in ``seat``'s hand at the first lead (R12), counting both copies."""
    g = GROUP_MASK[TRUMP_GROUP]
    return popcount(u[S.U_FIRST_ONCE + seat] & g) + popcount(u[S.U_FIRST_TWICE + seat] & g)


@kernel
def id_of_key(st, k):
    return ID_OF_KEY[st[S.S_TRUMP], k]
