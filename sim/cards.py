"""Card notation (R2) and the rules tables every kernel reads.

Two numberings are used (see ``docs/engine.md``):

* the **card id** 0–53, trump-independent: ``4 * rank_index + suit_index`` for suited cards
  (rank order A 2 … K of R6, suits s h d c), 52 = SJ, 53 = BJ. Calling (R6–R8) and records use it.
* the **key** 0–53 under a trump suit: side suits (s, h, d, c without trump) 4 … A, then the
  trump suit 4 … A, then 付2 ×3, 主2, 付3 ×3, 主3, 付5 ×3, SJ, BJ, 主5 (R12, R13). Kernels in the
  play phase number hand bits by key, so within a group a higher bit is a stronger card and the
  strongest card is the highest set bit. Strength and group of a key do not depend on trump.

The tables are plain numpy arrays built once at import; numba freezes them into the kernels.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from sim.errors import InvalidCardError

RANKS = "A23456789TJQK"  # show order of R6: A lowest, K highest
SUITS = "shdc"
SUIT_SYMBOLS = "♠♥♦♣"
SJ = 52
BJ = 53
N_TYPES = 54
N_CARDS = 108
TRUMP_GROUP = 3  # group index of trumps in key layout; side groups are 0, 1, 2

_CARD_HELP = "ranks A23456789TJQK (or 10), suits shdc (or ♠♥♦♣), jokers BJ SJ"


def card_name(card_id: int) -> str:
    """Canonical text of a card id (R2): ``'Ah'``, ``'Td'``, ``'BJ'``."""
    if isinstance(card_id, bool) or not isinstance(card_id, (int, np.integer)) \
            or not 0 <= card_id < N_TYPES:
        raise InvalidCardError(f"card id {card_id!r} must be an integer in 0 … {N_TYPES - 1} "
                               f"(R2: 52 suited cards by rank then suit, then SJ, BJ)")
    if card_id == SJ:
        return "SJ"
    if card_id == BJ:
        return "BJ"
    return RANKS[card_id // 4] + SUITS[card_id % 4]


CARD_NAMES: tuple[str, ...] = tuple(card_name(i) for i in range(N_TYPES))
_NAME_TO_ID = {name.lower(): i for i, name in enumerate(CARD_NAMES)}


# the spellings programs pass (canonical names, as observations and legal plays give them, and
# their lower case) in one dict lookup: a bot's helpers parse cards in its inner loop
FAST_ID = {**_NAME_TO_ID, **{name: i for i, name in enumerate(CARD_NAMES)}}


def parse_card(text: str) -> int:
    """Card id of ``text``; lenient in (case, ``10``, suit symbols), strict about meaning (R2).

    >>> parse_card("kh"), parse_card("10♦"), parse_card("bj")
    (49, 38, 53)
    """
    try:
        return FAST_ID[text]
    except (KeyError, TypeError):  # another spelling (or not a string: the message below)
        pass
    if not isinstance(text, str):
        raise InvalidCardError(f"{text!r} is not a card: expected a string like 'Kh'; {_CARD_HELP}")
    t = text.strip()
    for sym, letter in zip(SUIT_SYMBOLS, SUITS):
        t = t.replace(sym, letter)
    t = t.lower()
    if t.startswith("10"):
        t = "t" + t[2:]
    try:
        return _NAME_TO_ID[t]
    except KeyError:
        raise InvalidCardError(f"{text!r} is not a card: {_CARD_HELP}") from None


def parse_cards(cards: str | Iterable[str]) -> list[int]:
    """Card ids of a space/comma separated string or an iterable of card strings."""
    if type(cards) is list or type(cards) is tuple:
        try:
            return list(map(FAST_ID.__getitem__, cards))
        except (KeyError, TypeError):  # another spelling, or not a card: parse_card says which
            return [parse_card(c) for c in cards]
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    elif not isinstance(cards, Iterable):
        raise InvalidCardError(f"{cards!r} is not cards: give a string such as 'Kh 5s' or a "
                               f"list of card strings; {_CARD_HELP}")
    return [parse_card(c) for c in cards]


FAST_SUIT = {**{c: i for i, c in enumerate(SUITS)}, **{c: i for i, c in enumerate(SUITS.upper())},
              **{c: i for i, c in enumerate(SUIT_SYMBOLS)}}


def parse_suit(text: str) -> int:
    """Suit index 0–3 of a trump suit written ``s h d c`` (or a symbol), case-insensitive."""
    try:
        return FAST_SUIT[text]
    except (KeyError, TypeError):
        pass
    if isinstance(text, str):
        t = text.strip().lower()
        if t in SUITS and len(t) == 1:
            return SUITS.index(t)
        if t in SUIT_SYMBOLS and len(t) == 1:
            return SUIT_SYMBOLS.index(t)
    raise InvalidCardError(f"{text!r} is not a trump suit: one of s h d c (or ♠ ♥ ♦ ♣)")


def check_counts(ids: Iterable[int], what: str = "cards") -> None:
    """Raise unless no card type occurs more than twice (R1: two decks)."""
    if type(ids) is list and len(set(ids)) == len(ids):  # no card twice: none three times
        return
    counts = np.bincount(np.asarray(list(ids), dtype=np.int64), minlength=N_TYPES)
    over = np.flatnonzero(counts > 2)
    if over.size:
        c = CARD_NAMES[int(over[0])]
        raise InvalidCardError(
            f"{c!r} appears {int(counts[over[0]])} times in {what}: each card exists twice (R1)"
        )


# --- points (R3) ------------------------------------------------------------------------
def _points_of_id(i: int) -> int:
    if i >= 52:
        return 0
    r = RANKS[i // 4]
    return 5 if r == "5" else 10 if r in "TK" else 0


POINTS_ID = np.array([_points_of_id(i) for i in range(N_TYPES)], dtype=np.int64)


_FAST_POINTS = {name: _points_of_id(i) for name, i in FAST_ID.items()}


def card_points(cards: str | Iterable[str]) -> int:
    """Face points of some cards (R3): every 5 is 5, every 10 and K is 10."""
    if type(cards) is list or type(cards) is tuple:
        total = 0
        try:
            for c in cards:
                total += _FAST_POINTS[c]
            return total
        except (KeyError, TypeError):  # another spelling, or not a card: parse_cards says
            pass
    return int(sum(POINTS_ID[i] for i in parse_cards(cards)))


# --- the key layout under each trump (R12, R13) ------------------------------------------
_SIDE_ORDER = "46789TJQKA"  # weakest to strongest among plain cards (R13)


def _key_order(trump: int) -> list[int]:
    """Card ids in key order 0–53 for trump suit ``trump`` (docs/engine.md)."""
    rid = {r: i for i, r in enumerate(RANKS)}
    order: list[int] = []
    others = [s for s in range(4) if s != trump]
    for s in others:  # three side suits, each 4 … A
        order += [4 * rid[r] + s for r in _SIDE_ORDER]
    order += [4 * rid[r] + trump for r in _SIDE_ORDER]  # trump suit 4 … A
    for r in "235":  # 付x by suit, then 主x
        order += [4 * rid[r] + s for s in others]
        order.append(4 * rid[r] + trump)
    # 付5 ×3, 主5 were appended last; R13 puts SJ and BJ between 付5 and 主5.
    zhu5 = order.pop()
    order += [SJ, BJ, zhu5]
    assert sorted(order) == list(range(N_TYPES))
    return order


ID_OF_KEY = np.array([_key_order(t) for t in range(4)], dtype=np.int64)  # [trump, key] -> id
KEY_OF_ID = np.argsort(ID_OF_KEY, axis=1).astype(np.int64)  # [trump, id] -> key
POINTS_KEY = POINTS_ID[ID_OF_KEY]  # [trump, key] -> points



def _key_runs(trump: int) -> list[tuple[int, int]]:
    """(first key, length) of the runs of keys whose ids rise with the key."""
    runs, start = [], 0
    for k in range(1, N_TYPES + 1):
        if k == N_TYPES or ID_OF_KEY[trump, k] < ID_OF_KEY[trump, k - 1]:
            runs.append((start, k - start))
            start = k
    return runs


# id layout -> key layout in a few bit-gathers (``pext``): for trump t, run r gathers the ids of
# KEY_RUN_MASK[t, r] (ascending) into keys KEY_RUN_SHIFT[t, r] onward; KEY_RUNS[t] runs (<= 8)
_RUNS = [_key_runs(t) for t in range(4)]
KEY_RUNS = np.array([len(r) for r in _RUNS], dtype=np.int64)
KEY_RUN_MASK = np.zeros((4, 8), dtype=np.uint64)
KEY_RUN_SHIFT = np.zeros((4, 8), dtype=np.uint64)
for _t, _runs in enumerate(_RUNS):
    for _r, (_k, _n) in enumerate(_runs):
        KEY_RUN_MASK[_t, _r] = np.uint64(sum(1 << int(ID_OF_KEY[_t, _k + i]) for i in range(_n)))
        KEY_RUN_SHIFT[_t, _r] = _k

def _strength_of_key(k: int) -> int:
    if k < 30:
        return k % 10  # side suit 4 … A
    if k < 40:
        return 10 + (k - 30)  # trump suit 4 … A
    # 付2 (×3), 主2, 付3 (×3), 主3, 付5 (×3), SJ, BJ, 主5 — equal within each 付 class
    classes = [20, 20, 20, 21, 22, 22, 22, 23, 24, 24, 24, 25, 26, 27]
    return classes[k - 40]


STRENGTH = np.array([_strength_of_key(k) for k in range(N_TYPES)], dtype=np.int64)
GROUP = np.array([min(k // 10, TRUMP_GROUP) for k in range(N_TYPES)], dtype=np.int64)

BIT = np.array([1 << i for i in range(64)], dtype=np.uint64)
GROUP_MASK = np.array(
    [sum(1 << k for k in range(N_TYPES) if GROUP[k] == g) for g in range(4)], dtype=np.uint64
)
# keys of the same group and strength as key k (R13 ties: the 付2s, 付3s, 付5s)
CLASS_MASK = np.array(
    [
        sum(1 << j for j in range(N_TYPES) if GROUP[j] == GROUP[k] and STRENGTH[j] == STRENGTH[k])
        for k in range(N_TYPES)
    ],
    dtype=np.uint64,
)
# keys of the same group and strictly greater strength than key k (R13)
ABOVE_STRENGTH = np.array(
    [
        sum(1 << j for j in range(N_TYPES) if GROUP[j] == GROUP[k] and STRENGTH[j] > STRENGTH[k])
        for k in range(N_TYPES)
    ],
    dtype=np.uint64,
)
ALL_MASK = np.uint64((1 << N_TYPES) - 1)
SUITED_MASK = np.uint64((1 << 52) - 1)  # ids of cards that can be shown (R6)
# ABOVE_RANK[r + 1]: suited ids of show rank strictly above r (r = -1 when nothing is shown)
ABOVE_RANK = np.array(
    [((1 << 52) - 1) & ~((1 << (4 * i)) - 1) for i in range(14)], dtype=np.uint64
)


# TRUMP_IDS[s]: card ids that are trumps if suit s is trump (R12), for calling decisions
TRUMP_IDS = np.array(
    [sum(1 << i for i in range(N_TYPES) if KEY_OF_ID[s, i] >= 30) for s in range(4)],
    dtype=np.uint64,
)


def key_of(card_id: int, trump: int) -> int:
    return int(KEY_OF_ID[trump, card_id])


def sort_ids(ids: Iterable[int], trump: int | None = None) -> list[int]:
    """Card ids sorted by play order under ``trump`` (by id when trump is None)."""
    if trump is None:
        return sorted(ids)
    return sorted(ids, key=lambda i: KEY_OF_ID[trump, i])


def is_trump(card_id: int, trump: int) -> bool:
    return bool(KEY_OF_ID[trump, card_id] >= 30)  # R12
