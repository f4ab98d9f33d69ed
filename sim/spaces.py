"""Fixed-size spaces for fast bots and learning: the action space and the observation vector.

Both are trump-independent (card ids of docs/engine.md) and fixed in size, so a numpy or
neural policy can work on a whole batch of deals at once (``sim.Batch``), and the same
kernels serve the Python step API (``Deal.obs_array``, ``Deal.legal_mask``) so that every
tier sees exactly the same numbers.

Action space (``N_ACTIONS`` = 1594 actions)
------------------------------------------
=========== ======= =========================================================================
actions     count   meaning
=========== ======= =========================================================================
0           1       pass at a show decision (R7)
1 + c       54      show the pair of card id ``c`` (R6; 53 and 54 never legal: jokers)
55 + c      54      play the single card id ``c`` (R16, R18)
109 + i     1485    the unordered two cards ``{a, b}`` (ids, ``a <= b``, ``a == b`` a pair),
                    ``i = PAIR_INDEX[a, b]`` in the order (0,0), (0,1), …, (0,53), (1,1), …:
                    a two-card play (a pair lead, or any two-card answer to a pair, R16, R19)
                    at a play decision, the two cards given back at a give-back (R8)
=========== ======= =========================================================================

The decision kind (show / giveback / play) tells how an action is read; the legal mask of a
decision only ever marks actions of its own kind. ``action_of`` / ``choice_of_action``
convert between actions and the notation of ``Deal.legal()``.

Observation vector (``OBS_SIZE`` int16 values, ``obs_spec()``)
--------------------------------------------------------------
One kernel, ``fill_obs(st, u, seat, out)``, writes what ``seat`` may know (R9): its own hand
and public knowledge only (``tests/test_spaces.py`` checks it against a plain-Python spec).
Layout: see ``OBS_FIELDS`` below (name, size, meaning); card-indexed fields are indexed by
card id; seat-indexed fields by absolute seat (``seat`` says which one is the observer).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.cards import (
    BIT,
    CARD_NAMES,
    ID_OF_KEY,
    KEY_OF_ID,
    N_TYPES,
    parse_card,
    parse_cards,
    parse_suit,
)
from sim.core import state as S
from sim.core.bits import clear_lsb, lsb
from sim.core.engine import apply_then_legal, legal
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import MAX_CHOICES, code_first, code_second, make_code
from sim.errors import IllegalPlayError
from sim.rules import N_RULES
from sim.view import mask_into as _view_mask_into

# --- the action space --------------------------------------------------------------------
A_PASS = 0
A_SHOW = 1
A_SINGLE = 1 + N_TYPES  # 55
A_TWO = A_SINGLE + N_TYPES  # 109
N_PAIRS = N_TYPES * (N_TYPES + 1) // 2  # 1485
N_ACTIONS = A_TWO + N_PAIRS  # 1594

PAIR_INDEX = np.full((N_TYPES, N_TYPES), -1, dtype=np.int64)  # symmetric: {a, b} -> index
PAIR_A = np.zeros(N_PAIRS, dtype=np.int64)  # index -> lower id
PAIR_B = np.zeros(N_PAIRS, dtype=np.int64)  # index -> higher id
_i = 0
for _a in range(N_TYPES):
    for _b in range(_a, N_TYPES):
        PAIR_INDEX[_a, _b] = PAIR_INDEX[_b, _a] = _i
        PAIR_A[_i], PAIR_B[_i] = _a, _b
        _i += 1
del _i, _a, _b


@kernel
def action_of_code(ph, trump, code):
    """The action of an engine code (``sim.core.engine.legal``; -1 = pass) in phase ``ph``."""
    if ph == S.CALL:
        return np.int64(A_PASS) if code < 0 else A_SHOW + code
    a = code_first(code)
    b = code_second(code)
    if ph == S.GIVEBACK:
        return A_TWO + PAIR_INDEX[a, b]
    ia = ID_OF_KEY[trump, a]
    if b < 0:
        return A_SINGLE + ia
    return A_TWO + PAIR_INDEX[ia, ID_OF_KEY[trump, b]]


@kernel
def code_of_action(ph, trump, action):
    """The engine code of an action in phase ``ph`` (-2: the action has another kind)."""
    if ph == S.CALL:
        if action == A_PASS:
            return np.int64(-1)
        if A_SHOW <= action < A_SINGLE:
            return action - A_SHOW
        return np.int64(-2)
    if ph == S.GIVEBACK:
        if A_TWO <= action < N_ACTIONS:
            return make_code(PAIR_A[action - A_TWO], PAIR_B[action - A_TWO])
        return np.int64(-2)
    if ph != S.PLAY:
        return np.int64(-2)
    if A_SINGLE <= action < A_TWO:
        return KEY_OF_ID[trump, action - A_SINGLE]
    if A_TWO <= action < N_ACTIONS:
        ka = KEY_OF_ID[trump, PAIR_A[action - A_TWO]]
        kb = KEY_OF_ID[trump, PAIR_B[action - A_TWO]]
        if ka > kb:
            ka, kb = kb, ka
        return make_code(ka, kb)
    return np.int64(-2)


@kernel
def fill_mask(st, u, buf, mask):
    """Legal mask over the action space for the seat to act; returns the number of legal
    choices (``legal``'s codes are written to ``buf``; at a show decision the pass comes
    first, as in ``Deal.legal_codes``)."""
    mask[:] = False
    ph = st[S.S_PHASE]
    if ph == S.DONE:
        return 0
    n = legal(st, u, buf)
    trump = st[S.S_TRUMP]
    for i in range(n):
        mask[action_of_code(ph, trump, buf[i])] = True
    if ph == S.CALL:
        mask[A_PASS] = True
        return n + 1
    return n


@kernel
def actions_of_codes(ph, trump, codes, n, out):
    """The actions of ``codes[:n]`` into ``out``."""
    for i in range(n):
        out[i] = action_of_code(ph, trump, codes[i])


# --- the observation vector --------------------------------------------------------------
OBS_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("hand", 54, "copies of each card id in the observer's hand (0-2)"),
    ("played", 54, "copies of each card id played so far in tricks (0-2; public)"),
    ("trick", 8, "current trick by position from its leader: first card ids of the 4 plays, "
                 "then their second card ids (pairs, two-card answers); -1 = none"),
    ("seat", 1, "the observing seat (0-3)"),
    ("phase", 1, "0 calling (show decisions), 1 give-back, 2 trick play, 3 deal over"),
    ("to_act", 1, "seat whose decision it is (-1 when the deal is over)"),
    ("trump", 4, "one-hot trump suit s, h, d, c (all 0 before trump is known, R10)"),
    ("caller", 1, "the caller's seat (-1 before trick play, R10)"),
    ("leader", 1, "leader of the current trick (-1 outside trick play)"),
    ("position", 1, "plays made in the current trick (0-3)"),
    ("round", 1, "dealing round reached (0-27, R5)"),
    ("redeals", 1, "redeals so far (R11)"),
    ("shown", 2, "card id of the pair on the table and the seat that showed it (-1, -1: none)"),
    ("last_show", 4, "per seat, card id of the last pair it showed this attempt (-1: none)"),
    ("gave", 2, "the two card ids of the last give-back the observer gave or received (-1)"),
    ("voids", 16, "seat-major, 4 groups per seat (the 3 side suits in suit order without "
                  "trump, then trumps): 1 once the seat showed it has none (R18, R19)"),
    ("points", 4, "face points won by each seat in completed tricks (R3)"),
    ("attacker_points", 1, "face points the attackers have taken (R22)"),
    ("tricks", 1, "tricks completed (0-27)"),
    ("cards_left", 4, "cards in each seat's hand (public)"),
)
OBS_DTYPE = np.int16
# the offsets by sim.core.layout, as every declared layout (the fields' third entry documents)
OBS_OFFSETS, OBS_SIZE = layout(tuple((name, size) for name, size, _ in OBS_FIELDS))

O_HAND = OBS_OFFSETS["hand"]
O_PLAYED = OBS_OFFSETS["played"]
O_TRICK = OBS_OFFSETS["trick"]
O_SEAT = OBS_OFFSETS["seat"]
O_PHASE = OBS_OFFSETS["phase"]
O_TO_ACT = OBS_OFFSETS["to_act"]
O_TRUMP = OBS_OFFSETS["trump"]
O_CALLER = OBS_OFFSETS["caller"]
O_LEADER = OBS_OFFSETS["leader"]
O_POSITION = OBS_OFFSETS["position"]
O_ROUND = OBS_OFFSETS["round"]
O_REDEALS = OBS_OFFSETS["redeals"]
O_SHOWN = OBS_OFFSETS["shown"]
O_LAST_SHOW = OBS_OFFSETS["last_show"]
O_GAVE = OBS_OFFSETS["gave"]
O_VOIDS = OBS_OFFSETS["voids"]
O_POINTS = OBS_OFFSETS["points"]
O_ATT_POINTS = OBS_OFFSETS["attacker_points"]
O_TRICKS = OBS_OFFSETS["tricks"]
O_LEFT = OBS_OFFSETS["cards_left"]


def obs_spec() -> list[dict[str, Any]]:
    """The observation layout: one dict per field with ``name``, ``offset``, ``size``,
    ``dtype`` and ``doc``; ``OBS_SIZE`` values of ``OBS_DTYPE`` (int16) in all."""
    return [{"name": n, "offset": OBS_OFFSETS[n], "size": s, "dtype": "int16", "doc": d}
            for n, s, d in OBS_FIELDS]


@kernel
def _counts(out, off, once, twice, trump):
    """Copies per card id of a (once, twice) mask pair into ``out[off:off + 54]``."""
    m = once
    while m:
        b = lsb(m)
        m = clear_lsb(m)
        c = ID_OF_KEY[trump, b] if trump >= 0 else b
        out[off + c] = 2 if twice & BIT[b] else 1


@kernel
def fill_obs(st, u, seat, out):
    """Write ``seat``'s observation vector (``OBS_FIELDS``) into ``out`` (int16[OBS_SIZE])."""
    out[:] = 0
    ph = st[S.S_PHASE]
    trump = st[S.S_TRUMP]
    _counts(out, O_HAND, u[S.U_ONCE + seat], u[S.U_TWICE + seat], trump)
    if trump >= 0:
        _counts(out, O_PLAYED, u[S.U_PLAYED_ONCE], u[S.U_PLAYED_TWICE], trump)
        out[O_TRUMP + trump] = 1
    pos = st[S.S_POS] if ph == S.PLAY else 0
    for k in range(4):
        a = st[S.S_TRICK_A + k] if k < pos else -1
        b = st[S.S_TRICK_B + k] if k < pos else -1
        out[O_TRICK + k] = ID_OF_KEY[trump, a] if a >= 0 else -1
        out[O_TRICK + 4 + k] = ID_OF_KEY[trump, b] if b >= 0 else -1
    out[O_SEAT] = seat
    out[O_PHASE] = ph
    out[O_TO_ACT] = st[S.S_TO_ACT] if ph != S.DONE else -1
    out[O_CALLER] = st[S.S_CALLER]
    out[O_LEADER] = st[S.S_LEADER] if ph == S.PLAY else -1
    out[O_POSITION] = pos
    rnd = st[S.S_ROUND]
    out[O_ROUND] = rnd
    out[O_REDEALS] = st[S.S_REDEALS]
    out[O_SHOWN] = st[S.S_CUR_CARD]
    out[O_SHOWN + 1] = st[S.S_CUR_SEAT]
    for s in range(4):
        out[O_LAST_SHOW + s] = -1
    out[O_GAVE] = -1
    out[O_GAVE + 1] = -1
    for i in range(st[S.S_NCALLS]):
        j = S.S_CALLS + i * S.CALL_W
        shower = st[j + S.CALL_SEAT]
        out[O_LAST_SHOW + shower] = st[j + S.CALL_CARD]
        took = st[j + S.CALL_TOOK]
        if took >= 0 and st[j + S.CALL_GAVE_A] >= 0 and (seat == shower or seat == took):
            out[O_GAVE] = st[j + S.CALL_GAVE_A]
            out[O_GAVE + 1] = st[j + S.CALL_GAVE_B]
    for s in range(4):
        v = st[S.S_VOIDS + s]
        for g in range(4):
            out[O_VOIDS + 4 * s + g] = (v >> g) & 1
    for t in range(st[S.S_NTRICKS]):
        j = S.S_TRICKS + t * S.TRICK_W
        out[O_POINTS + st[j + S.TRICK_WINNER]] += st[j + S.TRICK_POINTS]
    out[O_ATT_POINTS] = st[S.S_ATT_POINTS]
    out[O_TRICKS] = st[S.S_NTRICKS]
    if ph == S.PLAY:
        leader = st[S.S_LEADER]
        for s in range(4):
            out[O_LEFT + s] = st[S.S_LEFT]
        for k in range(pos):
            s = (leader + k) % 4
            out[O_LEFT + s] -= 2 if st[S.S_TRICK_B + k] >= 0 else 1
    elif ph == S.DONE and trump >= 0:
        pass  # every card has been played
    else:
        for s in range(4):
            out[O_LEFT + s] = rnd
        if ph == S.GIVEBACK:  # the overrider holds the pair it took until it gives two back (R8)
            out[O_LEFT + st[S.S_TO_ACT]] += 2
            out[O_LEFT + st[S.S_GIVE_TO]] -= 2


@kernel
def hand_ids(u, i_once, trump, out):
    """The card ids of the (once, twice) masks at ``u[i_once]``, ``u[i_once + 4]`` (a hand:
    ``U_ONCE + seat``, or ``U_FIRST_ONCE + seat``), in play (key) order once trump is known,
    else by id, with both copies of a pair; returns the count written to ``out``."""
    once = u[i_once]
    twice = u[i_once + S.U_TWICE - S.U_ONCE]  # U_FIRST_TWICE - U_FIRST_ONCE alike
    n = 0
    m = once
    while m:
        b = lsb(m)
        m = clear_lsb(m)
        c = ID_OF_KEY[trump, b] if trump >= 0 else b
        out[n] = c
        n += 1
        if twice & BIT[b]:
            out[n] = c
            n += 1
    return n


# what a seat may know (R9): one kernel, ``sim.view.mask_into`` (the plug-in loops and
# ``Observation.arrays`` use it too), re-exported here; tests/test_spaces.py checks it
# against a plain-Python spec
mask_into = _view_mask_into


# --- the step API's packed state (sim.Deal) ------------------------------------------------
# A Deal keeps st, u, the rules and its choice buffer in one int64 array, so that a decision
# crosses from Python with two arguments (each array argument costs time on every call).
PACKED_FIELDS = (("P_ST", S.ST_SIZE), ("P_U", S.U_SIZE), ("P_RULES", N_RULES),
                 ("P_BUF", MAX_CHOICES))
_PK, P_SIZE = layout(PACKED_FIELDS)
P_ST = _PK["P_ST"]
P_U = _PK["P_U"]
P_RULES = _PK["P_RULES"]
P_BUF = _PK["P_BUF"]


@kernel
def packed_step(mem, code):
    """``apply_then_legal`` on a Deal's packed state: returns (count of codes written at
    ``P_BUF``, phase, seat to act)."""
    return apply_then_legal(mem[P_ST:P_U], mem[P_U:P_RULES].view(np.uint64),
                            mem[P_RULES:P_BUF], code, mem[P_BUF:])


# --- notation helpers ----------------------------------------------------------------------
_KINDS = ("show", "giveback", "play")


def action_of(choice: Any, kind: str | None = None) -> int:
    """The action of a choice in notation (``None``/``'pass'``, ``'Kh'``, ``('9s', '4d')``,
    ``('Kh',)``). A single card string is a show when ``kind`` is ``'show'`` (or omitted) and
    a single play when ``kind`` is ``'play'``; a two-card choice is the two-card action of
    either a play or a give-back (they share actions)."""
    if choice is None or choice == "pass":
        return A_PASS
    if isinstance(choice, str):
        if kind == "play":
            return A_SINGLE + parse_card(choice)
        if kind not in (None, "show"):
            raise IllegalPlayError(f"choice {choice!r} is a show; a {kind} takes a tuple of cards")
        c = parse_card(choice)
        if c >= 52:
            raise IllegalPlayError(f"{choice!r}: jokers are never shown (R6)")
        return A_SHOW + c
    cards = parse_cards(choice)
    if len(cards) == 1:
        return A_SINGLE + cards[0]
    if len(cards) == 2:
        return A_TWO + int(PAIR_INDEX[cards[0], cards[1]])
    raise IllegalPlayError(f"choice {choice!r} has {len(cards)} cards: one or two are allowed")


def choice_of_action(action: int, kind: str, trump: str | int | None = None) -> Any:
    """The notation of ``action`` at a decision of ``kind`` (``'show'``, ``'giveback'``,
    ``'play'``): ``None`` or a card for shows, a tuple of cards otherwise. Two-card plays are
    written in key order (docs/engine.md), which needs ``trump`` (a suit letter or index);
    without it they are written by id."""
    try:
        a = int(action)
    except (TypeError, ValueError):
        a = -1
    if isinstance(action, bool) or not 0 <= a < N_ACTIONS:
        raise IllegalPlayError(f"action {action!r} is out of range: 0 … {N_ACTIONS - 1}")
    if kind == "show":
        if a == A_PASS:
            return None
        if a < A_SINGLE:
            return CARD_NAMES[a - A_SHOW]
    elif kind == "play" and A_SINGLE <= a < A_TWO:
        return (CARD_NAMES[a - A_SINGLE],)
    elif kind in ("play", "giveback") and a >= A_TWO:
        x, y = int(PAIR_A[a - A_TWO]), int(PAIR_B[a - A_TWO])
        if kind == "play" and trump is not None:
            t = parse_suit(trump) if isinstance(trump, str) else int(trump)
            if not 0 <= t < 4:
                raise IllegalPlayError(f"trump {trump!r}: a suit s h d c, or its index 0 … 3")
            if KEY_OF_ID[t, x] > KEY_OF_ID[t, y]:
                x, y = y, x
        return (CARD_NAMES[x], CARD_NAMES[y])
    elif kind not in _KINDS:
        raise IllegalPlayError(f"decision kind {kind!r}: one of show, giveback, play")
    raise IllegalPlayError(f"action {a} is not a {kind} action (docs/strategies.md, "
                           f"Batched environment: the action space)")


def action_names() -> list[str]:
    """A short label per action (for tables and plots): ``pass``, ``show Kh``, ``Kh``,
    ``5d+5d``."""
    out = ["pass"] + [f"show {c}" for c in CARD_NAMES] + list(CARD_NAMES)
    out += [f"{CARD_NAMES[a]}+{CARD_NAMES[b]}" for a, b in zip(PAIR_A, PAIR_B)]
    return out
