"""The deal as a compiled state machine: dealing, calling, tricks, scoring (R5–R24).

A deal lives in two flat arrays that the kernels update in place:

* ``st`` (``int64[ST_SIZE]``): phase, whose turn, calling and trick state, and the logs a
  record is built from (deck, calls, tricks); offsets are the ``S_*`` constants below;
* ``u`` (``uint64[U_SIZE]``): the four hands as (once, twice) masks — card-id layout while
  calling, key layout (``sim.cards``) once trump is known — and the random streams.

``advance`` runs everything that needs nobody's decision (dealing rounds, forced passes,
redeals, the switch to trick play) and stops at the next decision; ``apply_*`` carry one
decision out. Kernels never raise: callers validate choices against ``legal``. The whole-deal
loop in ``sim.harness.loop`` and the Python step API ``sim.Deal`` are both built from these kernels.
"""

from __future__ import annotations

import numpy as np

from sim.cards import (
    BIT,
    GROUP,
    GROUP_MASK,
    ID_OF_KEY,
    KEY_OF_ID,
    KEY_RUN_MASK,
    KEY_RUN_SHIFT,
    KEY_RUNS,
    TRUMP_GROUP,
)
from sim.core.bits import ONE, USE_PDEP, ZERO, clear_lsb, lsb, pext, popcount
from sim.core.jit import kernel
from sim.core.movegen import code_first, code_second, legal_givebacks, legal_set, set_all, show_mask
from sim.core.rng import STREAM_CARDS as RNG_CARDS
from sim.core.rng import STREAM_SEAT0 as RNG_SEAT0
from sim.core.rng import STREAM_STRATEGY0 as RNG_STRATEGY0
from sim.core.rng import bounded, draw, stream_key
from sim.core.scoring import settle_kernel
from sim.core.trick import trick_points, trick_winner_inline
from sim.rules import R_KOU_PAIR, R_KOU_SINGLE, R_MAX_REDEALS

# phases; while not DONE the phase is also the kind of decision awaited from S_TO_ACT
CALL, GIVEBACK, PLAY, DONE = 0, 1, 2, 3
KIND_NAMES = ("show", "giveback", "play", "done")

# --- state layout: declared once --------------------------------------------------------
# Each layout is a tuple of (name, size) fields, laid out back to back in order; ``_layout``
# turns it into offsets, bound below to module-level ints (numba freezes them as constants).
# tests/test_state_layout.py checks that no two fields overlap and pins every offset (records
# and the compiled caches depend on them).


def _layout(fields: tuple[tuple[str, int], ...]) -> tuple[dict[str, int], int]:
    """Offsets of ``fields`` laid out back to back, and the total size."""
    off: dict[str, int] = {}
    at = 0
    for name, size in fields:
        if name in off or size < 1:
            raise ValueError(f"bad layout field {name!r} (size {size})")
        off[name] = at
        at += size
    return off, at


# a call record: one show, and what the override it made took and gave back (R8)
CALL_FIELDS = (
    ("CALL_ROUND", 1),  # dealing round of the show
    ("CALL_SEAT", 1),
    ("CALL_CARD", 1),  # id of the pair shown
    ("CALL_TOOK", 1),  # seat whose pair it took, -1 if none
    ("CALL_GAVE_A", 1),  # the two ids given back, -1 if none
    ("CALL_GAVE_B", 1),
)
_CALL, CALL_W = _layout(CALL_FIELDS)
CALL_ROUND = _CALL["CALL_ROUND"]
CALL_SEAT = _CALL["CALL_SEAT"]
CALL_CARD = _CALL["CALL_CARD"]
CALL_TOOK = _CALL["CALL_TOOK"]
CALL_GAVE_A = _CALL["CALL_GAVE_A"]
CALL_GAVE_B = _CALL["CALL_GAVE_B"]
MAX_CALLS = 16  # shows strictly rise through 13 ranks (R6), so 13 at most

# a trick record (key layout)
TRICK_FIELDS = (
    ("TRICK_LEADER", 1),
    ("TRICK_WINNER", 1),
    ("TRICK_POINTS", 1),
    ("TRICK_A", 4),  # first card of each play, from the leader on
    ("TRICK_B", 4),  # second card or -1
)
_TRICK, TRICK_W = _layout(TRICK_FIELDS)
TRICK_LEADER = _TRICK["TRICK_LEADER"]
TRICK_WINNER = _TRICK["TRICK_WINNER"]
TRICK_POINTS = _TRICK["TRICK_POINTS"]
TRICK_A = _TRICK["TRICK_A"]
TRICK_B = _TRICK["TRICK_B"]

ST_FIELDS = (
    ("S_PHASE", 1),
    ("S_TO_ACT", 1),
    ("S_ROUND", 1),  # dealing round 1–27 reached (R5)
    ("S_CHANCE", 1),  # seat whose calling chance is next (R7)
    ("S_PASSRUN", 1),  # passes in a row after round 27 (R7)
    ("S_CUR_CARD", 1),  # id of the pair on the table, -1 if none (R6)
    ("S_CUR_SEAT", 1),  # who showed it, -1 if none
    ("S_GIVE_TO", 1),  # who receives the give-back (R8)
    ("S_REDEALS", 1),
    ("S_VOID", 1),
    ("S_TRUMP", 1),
    ("S_CALLER", 1),
    ("S_NCALLS", 1),
    ("S_LEADER", 1),
    ("S_POS", 1),  # plays made in the current trick
    ("S_NTRICKS", 1),  # tricks completed
    ("S_LEFT", 1),  # cards left in each hand during play
    ("S_ATT_POINTS", 1),
    ("S_MULT", 1),
    ("S_SCORE", 1),
    ("S_SETTLE", 4),  # 4 seats
    ("S_DECISIONS", 1),
    ("S_NOVERRIDES", 1),
    ("S_TRICK_A", 4),  # current trick, by position: first card
    ("S_TRICK_B", 4),  # second card or -1
    ("S_FIX_SEAT", 1),  # seat whose hand must contain the fixed cards (-1: none; estimate)
    ("S_FIX_N", 1),  # how many fixed cards
    ("S_VOIDS", 4),  # 4 seats: bit g set once the seat has shown it holds no card of group g
    ("S_CALLS", MAX_CALLS * CALL_W),  # MAX_CALLS call records (CALL_FIELDS)
    ("S_DECK", 108),
    ("S_TRICKS", 27 * TRICK_W),  # 27 trick records (TRICK_FIELDS)
    ("S_FIX", 27),  # the fixed card ids
)
_ST, ST_SIZE = _layout(ST_FIELDS)
S_PHASE = _ST["S_PHASE"]
S_TO_ACT = _ST["S_TO_ACT"]
S_ROUND = _ST["S_ROUND"]
S_CHANCE = _ST["S_CHANCE"]
S_PASSRUN = _ST["S_PASSRUN"]
S_CUR_CARD = _ST["S_CUR_CARD"]
S_CUR_SEAT = _ST["S_CUR_SEAT"]
S_GIVE_TO = _ST["S_GIVE_TO"]
S_REDEALS = _ST["S_REDEALS"]
S_VOID = _ST["S_VOID"]
S_TRUMP = _ST["S_TRUMP"]
S_CALLER = _ST["S_CALLER"]
S_NCALLS = _ST["S_NCALLS"]
S_LEADER = _ST["S_LEADER"]
S_POS = _ST["S_POS"]
S_NTRICKS = _ST["S_NTRICKS"]
S_LEFT = _ST["S_LEFT"]
S_ATT_POINTS = _ST["S_ATT_POINTS"]
S_MULT = _ST["S_MULT"]
S_SCORE = _ST["S_SCORE"]
S_SETTLE = _ST["S_SETTLE"]
S_DECISIONS = _ST["S_DECISIONS"]
S_NOVERRIDES = _ST["S_NOVERRIDES"]
S_TRICK_A = _ST["S_TRICK_A"]
S_TRICK_B = _ST["S_TRICK_B"]
S_FIX_SEAT = _ST["S_FIX_SEAT"]
S_FIX_N = _ST["S_FIX_N"]
S_VOIDS = _ST["S_VOIDS"]
S_CALLS = _ST["S_CALLS"]
S_DECK = _ST["S_DECK"]
S_TRICKS = _ST["S_TRICKS"]
S_FIX = _ST["S_FIX"]

# random-stream slots in u (key at U_KEY + slot, counter at U_CTR + slot); the stream ids they
# are keyed with are sim.core.rng's STREAM_* (a seat's sampling slot 5 + s holds stream 16 + s)
STREAM_CARDS = 0  # the deck (stream 0)
STREAM_SEAT = 1  # slot STREAM_SEAT + seat: the seat's strategy stream (stream 1 + seat)
STREAM_SAMPLE = 5  # slot STREAM_SAMPLE + seat: the seat's sampling stream (stream 16 + seat)
N_STREAMS = 9

U_FIELDS = (
    ("U_ONCE", 4),  # 4 seats
    ("U_TWICE", 4),
    ("U_KEY", N_STREAMS),  # stream keys, by slot (STREAM_*)
    ("U_CTR", N_STREAMS),  # counters of the same streams
    ("U_FIRST_ONCE", 4),  # hands at the first lead (key layout), for records and observations
    ("U_FIRST_TWICE", 4),
    ("U_PLAYED_ONCE", 1),  # keys played so far at least once / twice (public)
    ("U_PLAYED_TWICE", 1),
)
_U, U_SIZE = _layout(U_FIELDS)
U_ONCE = _U["U_ONCE"]
U_TWICE = _U["U_TWICE"]
U_KEY = _U["U_KEY"]
U_CTR = _U["U_CTR"]
U_FIRST_ONCE = _U["U_FIRST_ONCE"]
U_FIRST_TWICE = _U["U_FIRST_TWICE"]
U_PLAYED_ONCE = _U["U_PLAYED_ONCE"]
U_PLAYED_TWICE = _U["U_PLAYED_TWICE"]


def new_state() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(ST_SIZE, dtype=np.int64), np.zeros(U_SIZE, dtype=np.uint64)


@kernel
def next_draw(u, stream):
    """Next number of stream slot ``stream`` (advances its counter)."""
    c = u[U_CTR + stream]
    u[U_CTR + stream] = c + ONE
    return draw(u[U_KEY + stream], c)


@kernel
def add_copy(u, i_once, i_twice, c):
    """One more copy of ``c`` in the (once, twice) pair of masks at ``u[i_once]``,
    ``u[i_twice]`` (branch-free: the second copy sets ``twice``)."""
    b = BIT[c]
    o = u[i_once]
    u[i_twice] |= o & b
    u[i_once] = o | b


@kernel
def add_card(u, seat, c):
    """One more copy of ``c`` for ``seat``."""
    add_copy(u, U_ONCE + seat, U_TWICE + seat, c)


@kernel
def played(u, k):
    """Record key ``k`` as played (public knowledge)."""
    add_copy(u, U_PLAYED_ONCE, U_PLAYED_TWICE, k)


@kernel
def remove_card(u, seat, c):
    """One copy of ``c`` fewer for ``seat`` (branch-free: ``twice`` empties first)."""
    b = BIT[c]
    t = u[U_TWICE + seat]
    u[U_ONCE + seat] &= ~(b & ~t)
    u[U_TWICE + seat] = t & ~b


@kernel
def _shuffle(st, u):
    """Sorted deck, then Fisher–Yates with stream 0 (docs/engine.md; R5, R11).

    With fixed cards (``S_FIX_SEAT >= 0``) the deal is uniform among the deals in which that
    seat holds at least those cards (``_shuffle_fixed``): an ordinary deal conditioned on it.
    """
    fs = st[S_FIX_SEAT]
    if fs < 0:
        for i in range(108):
            st[S_DECK + i] = i // 2
        key = u[U_KEY + STREAM_CARDS]  # in locals: next_draw without a store per draw
        ctr = u[U_CTR + STREAM_CARDS]
        for i in range(107, 0, -1):
            j = bounded(draw(key, ctr), i + 1)
            ctr += ONE
            t = st[S_DECK + i]
            st[S_DECK + i] = st[S_DECK + j]
            st[S_DECK + j] = t
        u[U_CTR + STREAM_CARDS] = ctr
    else:
        _shuffle_fixed(st, u, fs)
    for s in range(4):
        u[U_ONCE + s] = ZERO
        u[U_TWICE + s] = ZERO
    st[S_ROUND] = 0
    st[S_CHANCE] = 0
    st[S_PASSRUN] = 0
    st[S_CUR_CARD] = -1
    st[S_CUR_SEAT] = -1
    st[S_NCALLS] = 0
    st[S_NOVERRIDES] = 0


@kernel
def _shuffle_fixed(st, u, fs):
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
    nfix = st[S_FIX_N]
    sc = st[S_TRICKS:S_TRICKS + 27 * TRICK_W]  # scratch: the trick log is empty while dealing
    need = sc[0:54]  # copies of each type the seat must hold
    hand = sc[54:81]  # the seat's 27 cards
    rest = sc[81:162]  # the other 81 cards
    pool = sc[162:270]  # the copies of the types not named
    singles = sc[270:297]  # the types named once
    for c in range(54):
        need[c] = 0
    for k in range(nfix):
        need[st[S_FIX + k]] += 1
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
    x = (next_draw(u, STREAM_CARDS) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * total
    k = 0
    w = 1.0
    acc = 1.0
    while k < kmax and acc <= x:
        w *= (m1 - k) / (k + 1) * 0.5 * (r_free - k) / (npool - r_free + k + 1)
        k += 1
        acc += w
    for i in range(k):  # which singles the seat holds twice: a partial Fisher-Yates
        j = i + bounded(next_draw(u, STREAM_CARDS), m1 - i)
        t = singles[i]
        singles[i] = singles[j]
        singles[j] = t
        hand[h] = singles[i]
        h += 1
    for i in range(r_free - k):  # its other cards: a uniform subset of the unnamed copies
        j = i + bounded(next_draw(u, STREAM_CARDS), npool - i)
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
        j = bounded(next_draw(u, STREAM_CARDS), i + 1)
        t = hand[i]
        hand[i] = hand[j]
        hand[j] = t
    for i in range(80, 0, -1):
        j = bounded(next_draw(u, STREAM_CARDS), i + 1)
        t = rest[i]
        rest[i] = rest[j]
        rest[j] = t
    r = 0
    for i in range(108):
        if i % 4 == fs:
            st[S_DECK + i] = hand[i // 4]
        else:
            st[S_DECK + i] = rest[r]
            r += 1
    for i in range(27 * TRICK_W):
        sc[i] = 0


@kernel(inline="always")  # one line: inlined, it is one compiled function fewer (cold compile)
def init_deal(st, u, seed, deal):
    """Start deal ``deal`` of master seed ``seed`` (both uint64): streams, first shuffle."""
    init_deal_fixed(st, u, seed, deal, -1, st[:0])


@kernel
def init_deal_fixed(st, u, seed, deal, fix_seat, fix_cards):
    """``init_deal``, but every shuffle gives the card ids ``fix_cards`` to ``fix_seat``
    (-1: no constraint). Used by ``shuangkou estimate``."""
    st[:] = 0
    st[S_FIX_SEAT] = fix_seat
    st[S_FIX_N] = fix_cards.shape[0]
    for k in range(fix_cards.shape[0]):
        st[S_FIX + k] = fix_cards[k]
    u[U_KEY + STREAM_CARDS] = stream_key(seed, deal, np.uint64(RNG_CARDS))
    for s in range(4):  # the seats' strategy and sampling streams
        u[U_KEY + STREAM_SEAT + s] = stream_key(seed, deal, np.uint64(RNG_SEAT0 + s))
    for s in range(4):
        u[U_KEY + STREAM_SAMPLE + s] = stream_key(seed, deal, np.uint64(RNG_STRATEGY0 + s))
    for s in range(N_STREAMS):
        u[U_CTR + s] = ZERO
    u[U_PLAYED_ONCE] = ZERO
    u[U_PLAYED_TWICE] = ZERO
    st[S_TRUMP] = -1
    st[S_CALLER] = -1
    st[S_MULT] = 1
    _shuffle(st, u)
    st[S_PHASE] = CALL


@kernel
def _start_play(st, u):
    """End of calling with a caller: trump, roles, key layout, first leader (R10, R17)."""
    caller = st[S_CUR_SEAT]
    t = st[S_CUR_CARD] % 4
    st[S_CALLER] = caller
    st[S_TRUMP] = t
    for s in range(4):
        o = ZERO
        w = ZERO
        if USE_PDEP:  # a few bit-gathers (sim.cards.KEY_RUN_MASK)
            x = u[U_ONCE + s]
            y = u[U_TWICE + s]
            for r in range(KEY_RUNS[t]):
                o |= pext(x, KEY_RUN_MASK[t, r]) << KEY_RUN_SHIFT[t, r]
                w |= pext(y, KEY_RUN_MASK[t, r]) << KEY_RUN_SHIFT[t, r]
        else:
            m = u[U_ONCE + s]
            while m:
                c = lsb(m)
                m = clear_lsb(m)
                k = KEY_OF_ID[t, c]
                o |= BIT[k]
                if u[U_TWICE + s] & BIT[c]:
                    w |= BIT[k]
        u[U_ONCE + s] = o
        u[U_TWICE + s] = w
        u[U_FIRST_ONCE + s] = o
        u[U_FIRST_TWICE + s] = w
    st[S_LEADER] = (caller + 1) % 4  # R17: the defender after the caller leads
    st[S_TO_ACT] = st[S_LEADER]
    st[S_POS] = 0
    st[S_NTRICKS] = 0
    st[S_LEFT] = 27
    st[S_ATT_POINTS] = 0
    st[S_PHASE] = PLAY


@kernel
def _next_chance(st):
    if st[S_ROUND] == 27:
        st[S_CHANCE] = (st[S_CHANCE] + 1) % 4  # R7: round the table after round 27
    else:
        st[S_CHANCE] += 1


@kernel
def advance(st, u, rules):
    """Run the deal forward to the next decision (or to the end); see module docstring.

    The calling counters live in locals while it runs (written back wherever it stops): the
    loop visits some 130 dealing rounds and calling chances per deal.
    """
    if st[S_PHASE] != CALL:
        return  # GIVEBACK and PLAY already name S_TO_ACT; DONE has nothing to do
    r = st[S_ROUND]
    chance = st[S_CHANCE]
    passrun = st[S_PASSRUN]
    cur = st[S_CUR_CARD]
    while True:
        if r == 0 or (r < 27 and chance == 4):
            for s in range(4):  # R5: dealing round r + 1, one card each
                add_card(u, s, st[S_DECK + 4 * r + s])
            r += 1
            chance = 0
            passrun = 0
            continue
        if r == 27 and passrun >= 4:  # R7: four passes in a row end calling
            if st[S_CUR_SEAT] >= 0:
                break
            if st[S_REDEALS] < rules[R_MAX_REDEALS]:  # R11: nobody showed, deal again
                st[S_REDEALS] += 1
                _shuffle(st, u)  # resets the calling state, as below
                r = 0
                chance = 0
                passrun = 0
                cur = -1
                continue
            break  # R11: void
        seat = chance
        if r < 27 and seat == 0:
            pairs = u[U_TWICE] | u[U_TWICE + 1] | u[U_TWICE + 2] | u[U_TWICE + 3]
            if show_mask(pairs, pairs, cur) == ZERO:
                chance = 4  # R7: nobody can show this round; four forced passes
                continue
        if show_mask(u[U_ONCE + seat], u[U_TWICE + seat], cur):
            break  # seat's decision
        if r == 27:  # no legal show: a forced pass, nobody is asked (apply_pass)
            passrun += 1  # R7: only passes after round 27 count
            chance = (chance + 1) % 4
        else:
            chance += 1
    st[S_ROUND] = r
    st[S_CHANCE] = chance
    st[S_PASSRUN] = passrun
    if r == 27 and passrun >= 4:
        if st[S_CUR_SEAT] >= 0:
            _start_play(st, u)
        else:
            st[S_VOID] = 1
            st[S_PHASE] = DONE
    else:
        st[S_TO_ACT] = chance


@kernel
def apply_pass(st):
    if st[S_ROUND] == 27:
        st[S_PASSRUN] += 1  # R7: only passes after round 27 count
    _next_chance(st)


@kernel
def apply_show(st, u, card):
    """Seat ``S_TO_ACT`` shows its pair of ``card`` (id); an override takes the pair before (R8)."""
    seat = st[S_TO_ACT]
    prev = st[S_CUR_SEAT]
    prev_card = st[S_CUR_CARD]
    i = S_CALLS + st[S_NCALLS] * CALL_W
    st[i + CALL_ROUND] = st[S_ROUND]
    st[i + CALL_SEAT] = seat
    st[i + CALL_CARD] = card
    st[i + CALL_TOOK] = -1
    st[i + CALL_GAVE_A] = -1
    st[i + CALL_GAVE_B] = -1
    st[S_NCALLS] += 1
    st[S_CUR_CARD] = card
    st[S_CUR_SEAT] = seat
    st[S_PASSRUN] = 0
    st[S_DECISIONS] += 1
    _next_chance(st)
    if prev >= 0 and prev != seat:  # R8: the earlier shower's pair moves to the overrider
        b = BIT[prev_card]
        u[U_ONCE + prev] &= ~b
        u[U_TWICE + prev] &= ~b
        u[U_ONCE + seat] |= b
        u[U_TWICE + seat] |= b
        st[i + CALL_TOOK] = prev
        st[S_GIVE_TO] = prev
        st[S_NOVERRIDES] += 1
        st[S_PHASE] = GIVEBACK  # ... and the overrider gives two cards back


@kernel
def apply_call_pass(st):
    """Seat ``S_TO_ACT`` passes a chance at which it could have shown."""
    st[S_DECISIONS] += 1
    apply_pass(st)


@kernel
def apply_giveback(st, u, a, b):
    """The overrider gives cards ``a`` and ``b`` (ids) back to the overridden seat (R8)."""
    seat = st[S_TO_ACT]
    to = st[S_GIVE_TO]
    remove_card(u, seat, a)
    remove_card(u, seat, b)
    add_card(u, to, a)
    add_card(u, to, b)
    i = S_CALLS + (st[S_NCALLS] - 1) * CALL_W
    st[i + CALL_GAVE_A] = a
    st[i + CALL_GAVE_B] = b
    st[S_DECISIONS] += 1
    st[S_PHASE] = CALL


@kernel
def apply_play(st, u, rules, a, b):
    """Seat ``S_TO_ACT`` plays key ``a`` (and ``b``, or -1); completes and scores tricks."""
    seat = st[S_TO_ACT]
    pos = st[S_POS]
    remove_card(u, seat, a)
    played(u, a)
    if b >= 0:
        remove_card(u, seat, b)
        played(u, b)
    if pos > 0:  # what not following reveals (public): no card of the led group left
        g = GROUP[st[S_TRICK_A]]
        if b < 0:
            if GROUP[a] != g:  # R18
                st[S_VOIDS + seat] |= 1 << g
        elif (GROUP[a] == g) + (GROUP[b] == g) < 2:  # R19c/d: held at most one card of G
            st[S_VOIDS + seat] |= 1 << g
    st[S_TRICK_A + pos] = a
    st[S_TRICK_B + pos] = b
    st[S_DECISIONS] += 1
    pos += 1
    if pos < 4:
        st[S_POS] = pos
        st[S_TO_ACT] = (seat + 1) % 4
        return
    trump = st[S_TRUMP]
    leader = st[S_LEADER]
    w = trick_winner_inline(st, S_TRICK_A, S_TRICK_B, 4)
    winner = (leader + w) % 4
    pts = trick_points(st, S_TRICK_A, S_TRICK_B, 4, trump)
    t = st[S_NTRICKS]
    j = S_TRICKS + t * TRICK_W
    st[j + TRICK_LEADER] = leader
    st[j + TRICK_WINNER] = winner
    st[j + TRICK_POINTS] = pts
    for k in range(4):
        st[j + TRICK_A + k] = st[S_TRICK_A + k]
        st[j + TRICK_B + k] = st[S_TRICK_B + k]
    st[S_NTRICKS] = t + 1
    attacker = (winner & 1) == (st[S_CALLER] & 1)
    if attacker:
        st[S_ATT_POINTS] += pts  # R22
    lead_pair = st[S_TRICK_B] >= 0
    st[S_LEFT] -= 2 if lead_pair else 1
    if st[S_LEFT] == 0:  # the last trick (R23)
        mult = 1
        if attacker:
            mult = rules[R_KOU_PAIR] if lead_pair else rules[R_KOU_SINGLE]
        st[S_MULT] = mult
        score = st[S_ATT_POINTS] + (mult - 1) * pts
        st[S_SCORE] = score
        x = settle_kernel(score, rules)  # R24
        c = st[S_CALLER] & 1
        for s in range(4):
            st[S_SETTLE + s] = x if (s & 1) == c else -x
        st[S_PHASE] = DONE
        return
    st[S_LEADER] = winner
    st[S_TO_ACT] = winner
    st[S_POS] = 0


# ``apply_play`` inlined (numba IR inlining) where a deal's plays run back to back: the
# compiled deal loop (``sim.harness.loop``). Other callers keep the call, so the cold
# compile does not grow with every strategy that plays moves.
apply_play_inline = kernel(inline="always")(getattr(apply_play, "py_func", apply_play))

@kernel
def play_set(st, u, seat):
    """The legal-set description (``sim.core.movegen.legal_set``) of ``seat``'s next play."""
    if st[S_POS] == 0:
        return legal_set(u[U_ONCE + seat], u[U_TWICE + seat], np.int64(-1), np.int64(-1))
    return legal_set(u[U_ONCE + seat], u[U_TWICE + seat], st[S_TRICK_A], st[S_TRICK_B])


@kernel
def giveback_set(st, u, seat):
    """The legal-set description (``sim.core.movegen.legal_givebacks``) of ``seat``'s give-back."""
    return legal_givebacks(u[U_ONCE + seat], u[U_TWICE + seat], st[S_CUR_CARD])


@kernel
def legal(st, u, out):
    """The choices of the seat to act, as codes in canonical order; returns their count.

    show: card ids of showable pairs (pass is always also allowed and not listed);
    giveback: two-card codes over ids; play: play codes over keys (``sim.core.movegen``).
    """
    ph = st[S_PHASE]
    seat = st[S_TO_ACT]
    o = u[U_ONCE + seat]
    w = u[U_TWICE + seat]
    if ph == CALL:
        m = show_mask(o, w, st[S_CUR_CARD])
        n = 0
        while m:
            out[n] = lsb(m)
            n += 1
            m = clear_lsb(m)
        return n
    if ph == GIVEBACK:
        mode, m1, m2 = giveback_set(st, u, seat)
        return set_all(mode, m1, m2, out)
    if ph == PLAY:
        mode, m1, m2 = play_set(st, u, seat)
        return set_all(mode, m1, m2, out)
    return 0


@kernel
def apply_code(st, u, rules, code):
    """Carry out a choice given as a code of ``legal`` (-1 = pass at a show decision)."""
    ph = st[S_PHASE]
    if ph == PLAY:  # trick play never needs advance(): the next seat is always asked
        apply_play(st, u, rules, code_first(code), code_second(code))
        return
    if ph == CALL:
        if code < 0:
            apply_call_pass(st)
        else:
            apply_show(st, u, code)
    elif ph == GIVEBACK:
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
    return n, st[S_PHASE], st[S_TO_ACT]


@kernel
def trumps_held(st, u, seat):
    """Trumps in ``seat``'s hand at the first lead (R12), counting both copies."""
    g = GROUP_MASK[TRUMP_GROUP]
    return popcount(u[U_FIRST_ONCE + seat] & g) + popcount(u[U_FIRST_TWICE + seat] & g)


@kernel
def id_of_key(st, k):
    return ID_OF_KEY[st[S_TRUMP], k]
