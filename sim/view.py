"""The kernel-side view of a deal for compiled plug-in strategies (docs/strategies.md).

A compiled plug-in's kernel is called as ``kernel(st, u, rules, seat, params, buf)`` on a
*masked* copy of the deal (``mask_into``: what ``seat`` may know, R9) and reads it only
through the functions below, never through raw ``st``/``u`` offsets, which may change between
versions. The built-in players read the state through them too; what they write (the search
players build and play out whole worlds: hands, streams, copies of the state) and the few
fields no plug-in may see (a finished world's score and settlement, whom a give-back goes to)
use the engine's declared layout.
Every function is a small ``@kernel`` (a cached numba function); those that read one field
are inlined where they are called (numba IR inlining: no call, and no compiled function of
their own to optimise and link into every caller, so reading through them costs nothing,
at run time or on a cold compile). Cards are ids (``sim.cards``:
``4 * rank + suit``, SJ = 52, BJ = 53) while
calling and keys (play order under the trump, docs/engine.md) once trump is known; the
``*_mask`` functions say which layout they use, and ``card_of_key``/``key_of_card`` convert.

Choices are codes as ``legal_codes`` lists them (docs/engine.md): a show is the pair's card
id (pass is ``PASS`` = -1, always allowed at a show decision and not listed); a give-back or
a two-card play packs ``a`` and ``b`` (``a <= b``) as ``a + 64 * (b + 1)``, a single play is
its key. ``code_first``/``code_second``/``code2`` take codes apart and make them.
"""

from __future__ import annotations

import numpy as np

from sim.cards import BIT, GROUP, ID_OF_KEY, KEY_OF_ID, POINTS_ID, POINTS_KEY, STRENGTH
from sim.core import state as S
from sim.core.bits import ZERO, lsb, popcount
from sim.core.engine import giveback_set, legal, play_set
from sim.core.jit import kernel
from sim.core.movegen import (
    M_ANY2,
    M_CHOOSE2,
    M_LEAD,
    M_PAIRS,
    M_SINGLES,
    M_WITH,
    MAX_CHOICES,
    N_CODES,
    code2,
    code_first,
    code_second,
    show_mask,
)
from sim.core.rng import bounded
from sim.core.state import CALL, DONE, GIVEBACK, PLAY, next_draw  # the phases: public here
from sim.core.trick import trick_points as trick_points_of
from sim.core.trick import trick_winner

__all__ = [
    "CALL",
    "DONE",
    "GIVEBACK",
    "MAX_CHOICES",
    "PASS",
    "PLAY",
    "attacker_points",
    "attacking",
    "call_card",
    "call_gave",
    "call_seat",
    "call_took_from",
    "caller",
    "card_of_key",
    "code2",
    "code_first",
    "code_second",
    "dealing_round",
    "first_hand_once",
    "first_hand_twice",
    "group_of_key",
    "hand_counts",
    "hand_once",
    "hand_size",
    "hand_twice",
    "is_legal",
    "key_of_card",
    "leader",
    "legal_codes",
    "lowest_bit",
    "mask_into",
    "n_calls",
    "n_tricks",
    "phase",
    "played_once",
    "played_twice",
    "points_of_card",
    "points_of_key",
    "popcount",
    "random_below",
    "random_u64",
    "rank_of_card",
    "redeals",
    "shown_by",
    "shown_card",
    "strength_of_key",
    "suit_of_card",
    "to_act",
    "trick_card_first",
    "trick_card_second",
    "trick_first",
    "trick_leader",
    "trick_points",
    "trick_points_now",
    "trick_pos",
    "trick_second",
    "trick_winner_pos",
    "trick_winner_seat",
    "trump",
    "voids",
    "winner_if",
]

PASS = -1  # the show decision's "pass" code

# the decorator of the functions that read one field (or call one kernel): inlined where they
# are called (numba IR), so reading through them costs a caller nothing, at run time or on a
# cold compile (no compiled function of their own to optimise and link into every caller)
_reader = kernel(inline="always")


# --- whose turn, what decision ----------------------------------------------------------
@_reader
def phase(st):
    """The decision asked for: ``CALL`` (show or pass), ``GIVEBACK``, ``PLAY`` (or ``DONE``)."""
    return st[S.S_PHASE]


@_reader
def to_act(st):
    """The seat whose decision it is (the kernel's own ``seat`` when it is called)."""
    return st[S.S_TO_ACT]


# --- my hand ------------------------------------------------------------------------------
@_reader
def hand_once(u, seat):
    """Mask of the card types ``seat`` holds at least once (ids while calling, keys after)."""
    return u[S.U_ONCE + seat]


@_reader
def hand_twice(u, seat):
    """Mask of the card types ``seat`` holds twice (same layout as ``hand_once``)."""
    return u[S.U_TWICE + seat]


@kernel
def hand_size(u, seat):
    """How many cards ``seat`` holds."""
    return popcount(u[S.U_ONCE + seat]) + popcount(u[S.U_TWICE + seat])


@kernel
def hand_counts(st, u, seat, out):
    """``out[id]`` = copies (0–2) of card id ``id`` in ``seat``'s hand, for ids 0–53, in either
    layout; returns the number of cards."""
    t = st[S.S_TRUMP]
    o = u[S.U_ONCE + seat]
    w = u[S.U_TWICE + seat]
    n = 0
    for i in range(54):
        c = i if t < 0 else ID_OF_KEY[t, i]
        k = (1 if o & BIT[i] else 0) + (1 if w & BIT[i] else 0)
        out[c] = k
        n += k
    return n


@_reader
def first_hand_once(u, seat):
    """``hand_once`` at the first lead (keys; zero before trick play)."""
    return u[S.U_FIRST_ONCE + seat]


@_reader
def first_hand_twice(u, seat):
    """``hand_twice`` at the first lead (keys; zero before trick play)."""
    return u[S.U_FIRST_TWICE + seat]


# --- the choices ----------------------------------------------------------------------------
@kernel
def legal_codes(st, u, out):
    """Write the legal choices of the seat to act into ``out`` (``int64``, at least
    ``MAX_CHOICES`` long) in canonical order; returns their count. At a show decision the
    shows are listed and ``PASS`` is always allowed besides."""
    return legal(st, u, out)


@kernel
def _in_set(mode, m1, m2, a, b):
    if b < 0:  # a single
        return (mode == M_SINGLES or mode == M_LEAD) and (m1 & BIT[a]) != ZERO
    if a == b:  # a pair
        if mode == M_PAIRS:
            return (m1 & BIT[a]) != ZERO
        return (mode == M_LEAD or mode == M_ANY2) and (m2 & BIT[a]) != ZERO
    if a > b:  # two different cards are written low card first
        return False
    if mode == M_CHOOSE2 or mode == M_ANY2:
        return (m1 & BIT[a]) != ZERO and (m1 & BIT[b]) != ZERO
    if mode == M_WITH:
        f = np.int64(m2)
        if a == f:
            return (m1 & BIT[b]) != ZERO
        if b == f:
            return (m1 & BIT[a]) != ZERO
    return False


@kernel
def is_legal(st, u, code):
    """Whether ``code`` is a legal choice of the seat to act (``PASS`` at a show decision)."""
    ph = st[S.S_PHASE]
    seat = st[S.S_TO_ACT]
    if ph == S.CALL:
        if code == PASS:
            return True
        if code < 0 or code > 53:
            return False
        return (show_mask(u[S.U_ONCE + seat], u[S.U_TWICE + seat], st[S.S_CUR_CARD])
                & BIT[code]) != ZERO
    if code < 0 or code >= N_CODES:
        return False
    a = code_first(code)
    b = code_second(code)
    if a > 53 or b > 53:
        return False
    if ph == S.GIVEBACK:
        if b < 0:
            return False
        mode, m1, m2 = giveback_set(st, u, seat)
        return _in_set(mode, m1, m2, a, b)
    if ph == S.PLAY:
        mode, m1, m2 = play_set(st, u, seat)
        return _in_set(mode, m1, m2, a, b)
    return False


# --- calling (public, R9) -------------------------------------------------------------------
@_reader
def trump(st):
    """Trump suit index (0–3 for s h d c) once calling is over, else -1."""
    return st[S.S_TRUMP]


@_reader
def caller(st):
    """The caller's seat once calling is over, else -1; attackers are ``caller`` and
    ``(caller + 2) % 4``."""
    return st[S.S_CALLER]


@kernel
def attacking(st, seat):
    """Whether ``seat`` is on the caller's team (False before calling is over)."""
    return st[S.S_CALLER] >= 0 and (seat & 1) == (st[S.S_CALLER] & 1)


@_reader
def shown_card(st):
    """Card id of the pair on the table (the last show), -1 if none yet."""
    return st[S.S_CUR_CARD]


@_reader
def shown_by(st):
    """Seat that showed the pair on the table, -1 if none yet."""
    return st[S.S_CUR_SEAT]


@_reader
def dealing_round(st):
    """Dealing round reached (R5), 1–27."""
    return st[S.S_ROUND]


@_reader
def redeals(st):
    """Redeals so far in this deal (R11)."""
    return st[S.S_REDEALS]


@_reader
def n_calls(st):
    """Number of shows so far."""
    return st[S.S_NCALLS]


@_reader
def call_seat(st, i):
    """Seat of show ``i`` (0 = first)."""
    return st[S.S_CALLS + i * S.CALL_W + S.CALL_SEAT]


@_reader
def call_card(st, i):
    """Card id of the pair of show ``i``."""
    return st[S.S_CALLS + i * S.CALL_W + S.CALL_CARD]


@_reader
def call_took_from(st, i):
    """Seat whose pair show ``i`` overrode (R8), -1 if none."""
    return st[S.S_CALLS + i * S.CALL_W + S.CALL_TOOK]


@kernel
def call_gave(st, i):
    """Give-back of show ``i`` as a code over ids, or -1 if none or not known to this seat
    (only the giver and the receiver see it, R9)."""
    a = st[S.S_CALLS + i * S.CALL_W + S.CALL_GAVE_A]
    b = st[S.S_CALLS + i * S.CALL_W + S.CALL_GAVE_B]
    if a < 0 or b < 0:
        return np.int64(-1)
    return code2(a, b) if a <= b else code2(b, a)


# --- the current trick --------------------------------------------------------------------------
@_reader
def leader(st):
    """Seat that leads (led) the current trick."""
    return st[S.S_LEADER]


@_reader
def trick_pos(st):
    """Plays made so far in the current trick (0: the seat to act leads); the seat to act
    plays in position ``trick_pos``."""
    return st[S.S_POS]


@_reader
def trick_first(st, i):
    """First card (key) of play ``i`` (0 = the lead) of the current trick."""
    return st[S.S_TRICK_A + i]


@_reader
def trick_second(st, i):
    """Second card (key) of play ``i`` of the current trick, -1 for a single."""
    return st[S.S_TRICK_B + i]


@_reader
def trick_winner_pos(st):
    """Position of the play winning the current trick so far (R20, R21); needs a play."""
    return trick_winner(st, S.S_TRICK_A, S.S_TRICK_B, st[S.S_POS])


@_reader
def trick_points_now(st):
    """Points (R3) on the table in the current trick."""
    return trick_points_of(st, S.S_TRICK_A, S.S_TRICK_B, st[S.S_POS], st[S.S_TRUMP])


@_reader
def cards_left(st):
    """Cards in each hand when the current trick was led (every play of a trick has as many
    cards as its lead, so the hands hold the same number between tricks; 27 at the first
    lead)."""
    return st[S.S_LEFT]


@kernel
def winner_if(st, code, buf):
    """Position that would win the current trick so far if the seat to act played ``code``;
    uses ``buf[0:8]`` as scratch."""
    n = st[S.S_POS]
    for i in range(n):
        buf[i] = st[S.S_TRICK_A + i]
        buf[4 + i] = st[S.S_TRICK_B + i]
    buf[n] = code_first(code)
    buf[4 + n] = code_second(code)
    return trick_winner(buf, 0, 4, n + 1)


# --- finished tricks, played cards, voids, points ------------------------------------------------
@_reader
def n_tricks(st):
    """Tricks completed so far."""
    return st[S.S_NTRICKS]


@_reader
def trick_leader(st, t):
    """Leader of completed trick ``t`` (0 = first)."""
    return st[S.S_TRICKS + t * S.TRICK_W + S.TRICK_LEADER]


@_reader
def trick_winner_seat(st, t):
    """Seat that won completed trick ``t``."""
    return st[S.S_TRICKS + t * S.TRICK_W + S.TRICK_WINNER]


@_reader
def trick_points(st, t):
    """Points (R3) in completed trick ``t``."""
    return st[S.S_TRICKS + t * S.TRICK_W + S.TRICK_POINTS]


@_reader
def trick_card_first(st, t, i):
    """First card (key) of play ``i`` (from the leader) of completed trick ``t``."""
    return st[S.S_TRICKS + t * S.TRICK_W + S.TRICK_A + i]


@_reader
def trick_card_second(st, t, i):
    """Second card (key) of play ``i`` of completed trick ``t``, -1 for a single."""
    return st[S.S_TRICKS + t * S.TRICK_W + S.TRICK_B + i]


@_reader
def played_once(u):
    """Mask of the keys played so far at least once (public)."""
    return u[S.U_PLAYED_ONCE]


@_reader
def played_twice(u):
    """Mask of the keys of which both copies have been played."""
    return u[S.U_PLAYED_TWICE]


@_reader
def voids(st, seat):
    """Bit ``g`` set once ``seat`` has shown it holds no card of group ``g`` (0–2 side suits,
    3 trumps; R18, R19)."""
    return st[S.S_VOIDS + seat]


@_reader
def attacker_points(st):
    """Points (R22) the attackers have won so far."""
    return st[S.S_ATT_POINTS]


# --- cards ------------------------------------------------------------------------------------
@kernel
def card_of_key(st, k):
    """Card id of key ``k`` under this deal's trump (trick play only)."""
    return ID_OF_KEY[st[S.S_TRUMP], k]


@kernel
def key_of_card(st, c):
    """Key of card id ``c`` under this deal's trump (trick play only)."""
    return KEY_OF_ID[st[S.S_TRUMP], c]


@kernel
def group_of_key(k):
    """Group of key ``k``: 0–2 the side suits in suit order without trump, 3 trumps (R12)."""
    return GROUP[k]


@kernel
def strength_of_key(k):
    """Strength of key ``k`` inside its group (R13): higher beats lower, equal ties."""
    return STRENGTH[k]


@kernel
def points_of_key(st, k):
    """Points (R3) of key ``k``: 5 for a five, 10 for a ten or a king, else 0."""
    return POINTS_KEY[st[S.S_TRUMP], k]


@kernel
def points_of_card(c):
    """Points (R3) of card id ``c``."""
    return POINTS_ID[c]


@kernel
def rank_of_card(c):
    """Rank index of card id ``c``: A=0, 2=1, …, K=12; 13 for SJ and BJ."""
    return c // 4 if c < 52 else np.int64(13)


@kernel
def suit_of_card(c):
    """Suit index of card id ``c`` (s h d c = 0–3), -1 for a joker."""
    return c % 4 if c < 52 else np.int64(-1)


@kernel
def lowest_bit(m):
    """Index of the lowest set bit of a non-zero mask (walk a mask: ``m &= m - 1``)."""
    return lsb(m)


# --- randomness ---------------------------------------------------------------------------------
@kernel
def random_u64(u, seat):
    """The next number of ``seat``'s own strategy stream (docs/engine.md), as uint64."""
    return next_draw(u, S.STREAM_SEAT + seat)


@kernel
def random_below(u, seat, n):
    """A uniform index in 0 … n-1 from ``seat``'s own stream."""
    return bounded(next_draw(u, S.STREAM_SEAT + seat), n)


# --- what a plug-in is shown ------------------------------------------------------------------
@kernel
def mask_into(st, u, seat, m_st, m_u):
    """Copy into ``m_st``, ``m_u`` what ``seat`` may know (R9) (``Observation.arrays``):
    the deck, the other hands (now and at the first lead), give-backs between others, the
    fixed cards of ``estimate`` and every random stream but the seat's own two are blanked."""
    for i in range(S.S_DECK):
        m_st[i] = st[i]
    for i in range(S.S_DECK, S.S_TRICKS):
        m_st[i] = -1
    for i in range(S.S_TRICKS, S.S_FIX):
        m_st[i] = st[i]
    for i in range(S.S_FIX, m_st.shape[0]):
        m_st[i] = -1
    m_st[S.S_FIX_SEAT] = -1
    m_st[S.S_FIX_N] = 0
    for i in range(st[S.S_NCALLS]):
        j = S.S_CALLS + i * S.CALL_W
        if seat != st[j + S.CALL_SEAT] and seat != st[j + S.CALL_TOOK]:
            m_st[j + S.CALL_GAVE_A] = -1
            m_st[j + S.CALL_GAVE_B] = -1
    for i in range(u.shape[0]):
        m_u[i] = u[i]
    for s in range(4):
        if s != seat:
            m_u[S.U_ONCE + s] = ZERO
            m_u[S.U_TWICE + s] = ZERO
            m_u[S.U_FIRST_ONCE + s] = ZERO
            m_u[S.U_FIRST_TWICE + s] = ZERO
    for slot in range(S.N_STREAMS):
        if slot != S.STREAM_SEAT + seat and slot != S.STREAM_SAMPLE + seat:
            m_u[S.U_KEY + slot] = ZERO
            m_u[S.U_CTR + slot] = ZERO


@kernel
def mask_update(st, u, seat, m_st, m_u, synced):
    """``mask_into`` for ``seat``'s own copy made by ``mask_into`` at the start of the same deal,
    of which ``synced[seat]`` tricks are up to date: copies only what may have changed since
    (the deal loop's fast path). The call log cannot change once trick play has begun; what
    the kernel wrote into its own copy stays there until it is copied over (per seat, so no
    seat sees what another wrote)."""
    for i in range(S.S_CALLS):
        m_st[i] = st[i]
    m_st[S.S_FIX_SEAT] = -1
    m_st[S.S_FIX_N] = 0
    t = st[S.S_NTRICKS]
    if t == 0:
        for i in range(st[S.S_NCALLS]):
            j = S.S_CALLS + i * S.CALL_W
            for k in range(S.CALL_W):
                m_st[j + k] = st[j + k]
            if seat != st[j + S.CALL_SEAT] and seat != st[j + S.CALL_TOOK]:
                m_st[j + S.CALL_GAVE_A] = -1
                m_st[j + S.CALL_GAVE_B] = -1
    for i in range(S.S_TRICKS + synced[seat] * S.TRICK_W, S.S_TRICKS + t * S.TRICK_W):
        m_st[i] = st[i]
    synced[seat] = t
    m_u[S.U_ONCE + seat] = u[S.U_ONCE + seat]
    m_u[S.U_TWICE + seat] = u[S.U_TWICE + seat]
    m_u[S.U_KEY + S.STREAM_SEAT + seat] = u[S.U_KEY + S.STREAM_SEAT + seat]
    m_u[S.U_KEY + S.STREAM_SAMPLE + seat] = u[S.U_KEY + S.STREAM_SAMPLE + seat]
    m_u[S.U_CTR + S.STREAM_SEAT + seat] = u[S.U_CTR + S.STREAM_SEAT + seat]
    m_u[S.U_CTR + S.STREAM_SAMPLE + seat] = u[S.U_CTR + S.STREAM_SAMPLE + seat]
    m_u[S.U_FIRST_ONCE + seat] = u[S.U_FIRST_ONCE + seat]
    m_u[S.U_FIRST_TWICE + seat] = u[S.U_FIRST_TWICE + seat]
    m_u[S.U_PLAYED_ONCE] = u[S.U_PLAYED_ONCE]
    m_u[S.U_PLAYED_TWICE] = u[S.U_PLAYED_TWICE]


@kernel
def unmask_streams(u, m_u, seat):
    """Carry the seat's own stream counters back from the masked copy (its draws count)."""
    u[S.U_CTR + S.STREAM_SEAT + seat] = m_u[S.U_CTR + S.STREAM_SEAT + seat]
    u[S.U_CTR + S.STREAM_SAMPLE + seat] = m_u[S.U_CTR + S.STREAM_SAMPLE + seat]
