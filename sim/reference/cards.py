"""Cards and notation of the plain-Python reference engine (R1, R2, R3): canonical card
strings, card ids, trump groups, strengths, the play-order key and face points, written from
``docs/rules.md`` and ``docs/engine.md``. ``sim.reference.oracle`` (the rules, deals and
records) builds on it and re-exports its public names.

Like the oracle it imports nothing but the standard library: an oracle that shares code with
what it checks checks nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

# ---------------------------------------------------------------------------------------
# Cards and notation (R1, R2, R3)
# ---------------------------------------------------------------------------------------

#: Ranks in show order (R6) = card-id rank index (engine.md): A=0, 2=1, ..., K=12.
RANKS = "A23456789TJQK"
#: Suits in suit-index order (engine.md): s=0, h=1, d=2, c=3.
SUITS = "shdc"
JOKERS = ("SJ", "BJ")
_SUIT_SYMBOLS = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}
GROUP_NAMES = {"s": "spade", "h": "heart", "d": "diamond", "c": "club", "trump": "trump"}
#: Plain (non 2/3/5) ranks from weakest to strongest, R13: 4 6 7 8 9 T J Q K A.
_PLAIN_ORDER = "46789TJQKA"

#: All 54 card types, ascending by card id.
CARD_TYPES: tuple = tuple(r + s for r in RANKS for s in SUITS) + JOKERS


@lru_cache(maxsize=1024)
def _parse(text: str) -> str:
    s = text.strip().replace("\ufe0f", "")  # '♥️' may carry an emoji variation selector
    if s.upper() in JOKERS:
        return s.upper()
    if len(s) < 2:
        raise ValueError(f"invalid card {text!r} (R2): expected rank then suit, or BJ / SJ")
    rank, suit = s[:-1].upper(), s[-1]
    suit = _SUIT_SYMBOLS.get(suit, suit.lower())
    if rank == "10":  # R2: '10' is accepted for T
        rank = "T"
    if len(rank) != 1 or rank not in RANKS or suit not in SUITS:
        raise ValueError(
            f"invalid card {text!r} (R2): ranks A 2-9 T/10 J Q K, suits s h d c or ♠ ♥ ♦ ♣, "
            "jokers BJ SJ"
        )
    return rank + suit


def parse_card(text: str) -> str:
    """Return the canonical form of a card (R2).

    Parameters
    ----------
    text : str
        A card such as ``'Ah'``, ``'10h'``, ``'th'``, ``'A♥'``, ``'bj'``. Case is ignored,
        surrounding whitespace too.

    Returns
    -------
    str
        The canonical card: ``'Ah'``, ``'Th'``, ``'BJ'``.

    Raises
    ------
    ValueError
        If ``text`` is not a card; the message quotes the input.
    """
    if not isinstance(text, str):
        raise ValueError(f"invalid card {text!r} (R2): not a string")
    return _parse(text)


def card_id(card: str) -> int:
    """Return the trump-independent id 0–53 of a card (engine.md).

    ``4 * rank_index + suit_index`` with ranks A..K = 0..12 and suits s h d c = 0..3;
    ``SJ`` = 52, ``BJ`` = 53.
    """
    c = parse_card(card)
    if c == "SJ":
        return 52
    if c == "BJ":
        return 53
    return 4 * RANKS.index(c[0]) + SUITS.index(c[1])


def card_from_id(i: int) -> str:
    """Return the canonical card with id ``i`` (0–53); inverse of :func:`card_id`."""
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 54:
        raise ValueError(f"invalid card id {i!r}: expected an integer 0-53")
    return CARD_TYPES[i]


def trump_suit(trump: str) -> str:
    """Canonical trump suit letter (R2), accepting case and the suit symbols."""
    if isinstance(trump, str):
        t = _SUIT_SYMBOLS.get(trump.strip(), trump.strip().lower())
        if t in SUITS and len(t) == 1:
            return t
    raise ValueError(f"invalid trump suit {trump!r}: expected s, h, d or c (R2)")


def is_trump(card: str, trump: str) -> bool:
    """True if the card is a trump under ``trump`` (R12): jokers, every 2/3/5, the trump suit."""
    c, t = parse_card(card), trump_suit(trump)
    return c in JOKERS or c[0] in "235" or c[1] == t


def group(card: str, trump: str) -> str:
    """The card's group (R14): ``'trump'`` for a trump, otherwise its suit letter."""
    c = parse_card(card)
    return "trump" if is_trump(c, trump) else c[1]


def strength(card: str, trump: str) -> int:
    """Strength of a card under ``trump`` (R13); larger is stronger.

    Equally strong cards get equal values (the three 付5, the three 付3, the three 付2).
    Every trump is above every side card. Side cards of different suits are never
    compared by the rules; they share the values 0–9 by rank.
    """
    c, t = parse_card(card), trump_suit(trump)
    # R13 trumps, strongest first: 主5 > BJ > SJ > 付5 > 主3 > 付3 > 主2 > 付2 > trump suit A..4
    if c == "5" + t:
        return 27  # 主5 (天5)
    if c == "BJ":
        return 26
    if c == "SJ":
        return 25
    rank, suit = c[0], c[1]
    if rank == "5":
        return 24  # 付5, all three equal
    if rank == "3":
        return 23 if suit == t else 22  # 主3 / 付3
    if rank == "2":
        return 21 if suit == t else 20  # 主2 / 付2
    if suit == t:
        return 10 + _PLAIN_ORDER.index(rank)  # trump suit A K Q J T 9 8 7 6 4
    return _PLAIN_ORDER.index(rank)  # side suit A K Q J T 9 8 7 6 4


def key(card: str, trump: str) -> int:
    """The play-order key 0–53 of a card under ``trump`` (engine.md).

    Side suits in suit order (trump left out) each as 4 6 7 8 9 T J Q K A (0–29), the
    trump suit's 4..A (30–39), 付2s (40–42), 主2 (43), 付3s (44–46), 主3 (47),
    付5s (48–50), SJ (51), BJ (52), 主5 (53).
    """
    c, t = parse_card(card), trump_suit(trump)
    if c == "SJ":
        return 51
    if c == "BJ":
        return 52
    rank, suit = c[0], c[1]
    others = [s for s in SUITS if s != t]  # the three side suits in suit order
    if rank in "235":
        if rank == "5" and suit == t:
            return 53  # 主5 tops everything
        base = {"2": 40, "3": 44, "5": 48}[rank]
        return base + 3 if suit == t else base + others.index(suit)
    if suit == t:
        return 30 + _PLAIN_ORDER.index(rank)
    return 10 * others.index(suit) + _PLAIN_ORDER.index(rank)


def card_points(cards: Iterable[str]) -> int:
    """Face points of some cards (R3): each 5 scores 5, each 10 and K score 10."""
    total = 0
    for card in cards:
        c = parse_card(card)
        if c[0] == "5":
            total += 5
        elif c[0] in "TK":
            total += 10
    return total


def hand_counts(hand: Any) -> Counter:
    """A hand as a Counter of canonical cards; at most two of each card (R1)."""
    if isinstance(hand, str):
        raise ValueError(f"invalid hand {hand!r}: expected a list of cards")
    if isinstance(hand, Mapping):
        held: Counter = Counter()
        for card, n in hand.items():
            if n > 0:
                held[parse_card(card)] += n
    else:
        held = Counter(parse_card(c) for c in hand)
    over = sorted(c for c, n in held.items() if n > 2)
    if over:
        raise ValueError(f"hand holds more than two of {over} (R1: each card exists twice)")
    return held


def key_order(cards: Iterable[str], t: str) -> tuple:
    return tuple(sorted(cards, key=lambda c: key(c, t)))
