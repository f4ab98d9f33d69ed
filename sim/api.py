"""The friendly functions: notation in, notation out, over the tables and kernels of the engine."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import numpy as np

from sim.cards import (
    CARD_NAMES,
    FAST_ID,
    FAST_SUIT,
    GROUP,
    ID_OF_KEY,
    KEY_OF_ID,
    STRENGTH,
    TRUMP_GROUP,
    check_counts,
    parse_cards,
    parse_suit,
)
from sim.core.movegen import MAX_CHOICES, gen_plays
from sim.core.trick import trick_winner as _trick_winner
from sim.errors import InvalidCardError
from sim.observation import play_table
from sim.record import mask_cards

# the tables as Python ints, for the Python side of the helpers: no numpy scalar per card
_KEY = KEY_OF_ID.tolist()  # [trump][card id] -> key
_GROUP = GROUP.tolist()  # [key] -> group (TRUMP_GROUP: a trump)
_STRENGTH = STRENGTH.tolist()  # [key] -> strength within its group
_KEY_OF_SUIT = {text: _KEY[t] for text, t in FAST_SUIT.items()}  # a trump as written -> keys


def _masks(keys: Sequence[int]) -> tuple[np.uint64, np.uint64]:
    once = twice = 0
    for k in keys:
        if once >> k & 1:
            twice |= 1 << k
        else:
            once |= 1 << k
    return np.uint64(once), np.uint64(twice)


def _lead_keys(lead: Sequence[str] | str, trump: int) -> tuple[list[int], list[int]]:
    ids = parse_cards(lead)
    if len(ids) == 2 and ids[0] != ids[1]:
        raise InvalidCardError(
            f"lead {lead!r} is not a single or a pair: two cards must be identical (R15, R16)")
    if len(ids) not in (1, 2):
        raise InvalidCardError(f"lead {lead!r} has {len(ids)} cards: a lead is one card or a "
                               f"pair, no tractors or throws (R16)")
    return ids, [int(KEY_OF_ID[trump, c]) for c in ids]


def legal_plays(hand: Sequence[str] | str, trump: str,
                lead: Sequence[str] | str | None = None) -> list[tuple[str, ...]]:
    """Every distinct legal play for ``hand`` under ``trump`` against ``lead`` (R16–R19).

    Parameters
    ----------
    hand : card strings (duplicates allowed) or one string ``"Kh Kh 5s"``.
    trump : ``'s'``, ``'h'``, ``'d'`` or ``'c'``.
    lead : the lead's one or two cards, or None when this player leads.

    Returns
    -------
    list of tuples of canonical card strings, in the canonical order of docs/engine.md.

    >>> legal_plays(["Ks", "4s", "5s", "BJ"], "h", ["7s"])
    [('4s',), ('Ks',)]
    """
    t = parse_suit(trump)
    ids = parse_cards(hand)
    if not ids:
        raise InvalidCardError(f"hand {hand!r} is empty: a player to act holds cards")
    la = lb = -1
    lead_ids: list[int] = []
    if lead is not None:
        lead_ids, lk = _lead_keys(lead, t)
        la, lb = lk[0], (lk[1] if len(lk) == 2 else -1)
        if len(ids) < len(lead_ids):
            raise InvalidCardError(f"hand {hand!r} holds fewer cards than the lead {lead!r} "
                                   f"asks for (R16)")
    check_counts(ids + lead_ids, "the hand and the lead")
    once, twice = _masks([int(KEY_OF_ID[t, c]) for c in ids])
    buf = np.empty(MAX_CHOICES, dtype=np.int64)
    n = gen_plays(once, twice, np.int64(la), np.int64(lb), buf)
    table = play_table(t)
    return [table[c] for c in buf[:n].tolist()]


_CARD_IDS = functools.partial(map, FAST_ID.__getitem__)  # a play's canonical names -> ids


def trick_winner(plays: Sequence[Sequence[str] | str], trump: str) -> int:
    """Index of the winning play (R20, R21); ``plays[0]`` is the lead, the rest in turn.

    >>> trick_winner([["5d"], ["5c"], ["Ah"], ["5s"]], "h")
    0
    """
    # the case bots meet, in one pass: a list of 1-4 plays of canonical card names (as
    # observations give them) under a trump written s h d c (or ♠♥♦♣). Anything else (another
    # spelling, a mistake) goes through _trick_winner_checked, which says what is wrong.
    try:
        key_of = _KEY_OF_SUIT[trump]
        played = list(map(list, map(_CARD_IDS, plays))) if type(plays) is list else None
    except (KeyError, TypeError):
        played = None
    if played and len(played) <= 4:
        w = _winner(played, key_of)
        if w >= 0:
            return w
    return _trick_winner_checked(plays, trump)


def _winner(played: list[list[int]], key_of: list[int]) -> int:
    """The winning play of a trick given as card ids, or -1 if it is not a valid trick (a lead
    that is not a single or a pair, a play of another size, a card three times).
    ``sim.core.trick.trick_winner``'s comparison over the same tables, in Python: for one
    trick a kernel call (an array to build, a dispatch) costs more than the comparison
    (tests/test_differential.py checks the result against the reference rules)."""
    lead = played[0]
    pair = len(lead) == 2
    if not (pair and lead[0] == lead[1] or len(lead) == 1):
        return -1
    k = key_of[lead[0]]
    lead_group = _GROUP[k]
    best, best_s = 0, _STRENGTH[k]
    cards: list[int] = []
    i = 0
    for ids in played:
        try:  # exactly as many cards as the lead (R16)
            if pair:
                a, b = ids
            else:
                (a,) = ids
                b = a
        except ValueError:
            return -1
        cards += ids
        # a pair lead is won only by a pair (R21); the led group or a trump (R20), stronger
        # than the best so far (R13: equal strength does not win)
        if i and a == b:
            k = key_of[a]
            g = _GROUP[k]
            if (g == TRUMP_GROUP or g == lead_group) and _STRENGTH[k] > best_s:
                best, best_s = i, _STRENGTH[k]
        i += 1
    cards.sort()
    for j in range(len(cards) - 2):
        if cards[j] == cards[j + 2]:  # three times (R1: two decks)
            return -1
    return best


def _trick_winner_checked(plays: Sequence[Sequence[str] | str], trump: str) -> int:
    """``trick_winner`` for any input: every spelling ``parse_cards`` reads, and one line
    saying what is wrong with a trick that is not one."""
    t = parse_suit(trump)
    if isinstance(plays, str) or not isinstance(plays, Iterable):
        raise InvalidCardError(f"plays {plays!r} must be a list of the trick's plays, each "
                               f"card strings, e.g. [['5d'], ['5c'], ['Ah'], ['5s']]")
    plays = list(plays)
    if not plays:
        raise InvalidCardError("plays is empty: a trick starts with a lead")
    _, lk = _lead_keys(plays[0], t)
    n = len(plays)
    if n > 4:
        raise InvalidCardError(f"{n} plays in one trick: four players play one each (R4)")
    arr = np.full(8, -1, dtype=np.int64)
    all_ids: list[int] = []
    for i, p in enumerate(plays):
        ids = parse_cards(p)
        if len(ids) != len(lk):
            raise InvalidCardError(f"play {p!r} has {len(ids)} card(s) but the lead has "
                                   f"{len(lk)}: everybody plays as many cards as led (R16)")
        keys = sorted(int(KEY_OF_ID[t, c]) for c in ids)
        arr[i] = keys[0]
        if len(keys) == 2:
            arr[4 + i] = keys[1]
        all_ids += ids
    check_counts(all_ids, "the trick")
    return int(_trick_winner(arr, 0, 4, n))


def hand_masks(hand: Sequence[str] | str, trump: str | None = None) -> tuple[int, int]:
    """(once, twice) masks of a hand: by card id, or by key under ``trump``."""
    ids = parse_cards(hand)
    check_counts(ids, "the hand")
    if trump is None:
        o, w = _masks(ids)
    else:
        t = parse_suit(trump)
        o, w = _masks([int(KEY_OF_ID[t, c]) for c in ids])
    return int(o), int(w)


def mask_names(once: int, twice: int, trump: str | None = None) -> list[str]:
    """Card names of a (once, twice) mask pair (inverse of ``hand_masks``)."""
    ids = None if trump is None else ID_OF_KEY[parse_suit(trump)]
    return [CARD_NAMES[c] for c in mask_cards(int(once), int(twice), ids)]
