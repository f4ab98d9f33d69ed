"""The deal state: the layout of its two flat arrays, declared once, and the card primitives.

``st`` (``int64[ST_SIZE]``) and ``u`` (``uint64[U_SIZE]``) are described in
``sim.core.engine``; the transitions on them are ``sim.core.step``'s, the kernels that drive
them ``sim.core.engine``'s. Kernels elsewhere name the layout through the module,
``from sim.core import state as S`` and ``S.S_PHASE`` (docs/engine.md).
"""

from __future__ import annotations

import numpy as np

from sim.cards import BIT
from sim.core.bits import ONE
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.rng import draw

# phases; while not DONE the phase is also the kind of decision awaited from S_TO_ACT
CALL, GIVEBACK, PLAY, DONE = 0, 1, 2, 3
KIND_NAMES = ("show", "giveback", "play", "done")

# --- state layout: declared once --------------------------------------------------------
# Each layout is a tuple of (name, size) fields, laid out back to back in order;
# ``sim.core.layout.layout`` turns it into offsets, bound below to module-level ints (numba
# freezes them as constants).
# tests/test_state_layout.py checks that no two fields overlap and pins every offset (records
# and the compiled caches depend on them).

# a call record: one show, and what the override it made took and gave back (R8)
CALL_FIELDS = (
    ("CALL_ROUND", 1),  # dealing round of the show
    ("CALL_SEAT", 1),
    ("CALL_CARD", 1),  # id of the pair shown
    ("CALL_TOOK", 1),  # seat whose pair it took, -1 if none
    ("CALL_GAVE_A", 1),  # the two ids given back, -1 if none
    ("CALL_GAVE_B", 1),
)
_CALL, CALL_W = layout(CALL_FIELDS)
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
_TRICK, TRICK_W = layout(TRICK_FIELDS)
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
_ST, ST_SIZE = layout(ST_FIELDS)
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
_U, U_SIZE = layout(U_FIELDS)
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


@kernel(inline="always")
def added(o, w, x):
    """A (once, twice) pair of masks with one more copy of each card in ``x`` (branch-free:
    the second copy sets ``twice``)."""
    return o | x, w | (o & x)


@kernel(inline="always")
def removed(o, w, x):
    """A (once, twice) pair of masks with one copy fewer of each card in ``x`` (branch-free:
    ``twice`` empties first)."""
    return o & ~(x & ~w), w & ~x


@kernel
def next_draw(u, stream):
    """Next number of stream slot ``stream`` (advances its counter)."""
    c = u[U_CTR + stream]
    u[U_CTR + stream] = c + ONE
    return draw(u[U_KEY + stream], c)


@kernel
def add_copy(u, i_once, i_twice, c):
    """One more copy of ``c`` in the (once, twice) pair of masks at ``u[i_once]``,
    ``u[i_twice]``."""
    u[i_once], u[i_twice] = added(u[i_once], u[i_twice], BIT[c])


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
    """One copy of ``c`` fewer for ``seat``."""
    u[U_ONCE + seat], u[U_TWICE + seat] = removed(u[U_ONCE + seat], u[U_TWICE + seat], BIT[c])
