"""Plain-Python reference engine for Xinjiang Shuangkou (新疆双扣).

This module is the oracle the compiled engine is checked against. It is written from
``docs/rules.md`` (rulings R1–R25, cited in comments as ``# R19b``) and ``docs/engine.md``
(card ids, the play-order key, canonical choice orders, the random-number generator), and
returns records in the format of ``docs/record.md``. It is meant to be read, not to be
fast: hands are ``Counter`` objects of canonical card strings and every legality check is
a literal transcription of the rule text.

The cards and their notation (R1–R3: parsing, card ids, groups, strengths, the play-order
key, face points) are ``sim.reference.cards``, whose public names this module re-exports;
validating a record against these rules is ``sim.reference.validator``.

It deliberately imports nothing but the standard library and ``sim.reference.cards``: an
oracle that shares code with what it checks checks nothing.

Conventions
-----------
- A card is a canonical string (R2): ``'Ah'``, ``'Td'``, ``'5s'``, ``'BJ'``, ``'SJ'``.
- A hand is a list of card strings with duplicates (a ``Counter``/mapping of counts is
  accepted too).
- A play is a tuple of card strings written in key order (engine.md).
- Trick numbers in :class:`Violation` are indexes into ``record["tricks"]`` (from 0, like
  ``deal`` and the seats).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from sim.reference.cards import (
    CARD_TYPES as CARD_TYPES,  # re-exported: the tests read oracle.CARD_TYPES
)
from sim.reference.cards import (
    JOKERS,
    RANKS,
    card_from_id,
    card_id,
    card_points,
    group,
    hand_counts,
    is_trump,
    key,
    key_order,
    parse_card,
    strength,
    trump_suit,
)

__all__ = [
    "DEFAULT_RULES",
    "FORMAT",
    "Rng",
    "RandomPlayer",
    "card_from_id",
    "card_id",
    "card_points",
    "group",
    "is_trump",
    "key",
    "legal_givebacks",
    "legal_plays",
    "legal_shows",
    "level",
    "parse_card",
    "play_deal",
    "reference_deck",
    "score_tricks",
    "settle",
    "strength",
    "trick_winner",
]

FORMAT = "shuangkou-record/1"

#: The record fields of docs/record.md, in its order.
FIELDS = ("format", "seed", "deal", "rules", "seats", "redeals", "void", "deck", "calls",
          "caller", "trump", "attackers", "hands", "tricks", "attacker_points",
          "last_trick_multiplier", "attacker_score", "settlement")

#: The variants of docs/rules.md "Variants", with their defaults; nothing else is a variant.
DEFAULT_RULES: dict[str, int] = {
    "max_redeals": 3,
    "kou_di_single": 2,
    "kou_di_pair": 4,
    "settle_step": 20,
    "settle_unit": 2,
    "defender_cap": 10,
    "start_skill": 1600,
}


# ---------------------------------------------------------------------------------------
# Legal plays (R16–R19)
# ---------------------------------------------------------------------------------------


def _lead_cards(lead: Any) -> tuple:
    """The lead as a tuple of canonical cards; one card or one pair (R15, R16)."""
    cards = (parse_card(lead),) if isinstance(lead, str) else tuple(parse_card(c) for c in lead)
    if len(cards) == 1 or (len(cards) == 2 and cards[0] == cards[1]):
        return cards
    raise ValueError(f"invalid lead {list(cards)!r}: a lead is one card or one pair (R16)")


def _two_card_plays(held: Counter) -> list:
    """Every distinct unordered two-card choice from ``held`` (a pair only if held twice)."""
    types = sorted(held)
    plays = []
    for i, a in enumerate(types):
        if held[a] >= 2:
            plays.append((a, a))
        for b in types[i + 1:]:
            plays.append((a, b))
    return plays


def legal_plays(hand: Sequence[str], trump: str, lead: Optional[Sequence[str]] = None
                ) -> list[tuple[str, ...]]:
    """Every distinct legal play, in the canonical order of engine.md.

    Parameters
    ----------
    hand : list of str
        The player's remaining cards, duplicates included.
    trump : str
        The trump suit letter.
    lead : sequence of str or None
        The lead of the trick (one card or one pair), or None when this player leads.

    Returns
    -------
    list of tuple of str
        Each play's cards in key order. Leads: singles by key then pairs by key;
        follows: sorted by ``(key(a), key(b))``.

    Raises
    ------
    ValueError
        If the lead is neither one card nor a pair (R16), or a card would exist more than
        twice counting hand and lead (R1).
    """
    t = trump_suit(trump)
    held = hand_counts(hand)
    lead_cards = None if lead is None else _lead_cards(lead)
    over = sorted(c for c, n in (held + Counter(lead_cards or ())).items() if n > 2)
    if over:
        raise ValueError(f"more than two of {over} in hand and lead (R1)")

    def k(c: str) -> int:
        return key(c, t)

    if lead_cards is None:
        # R16: one card or one pair; a pair held counts once (Readings: distinct plays).
        singles = sorted(held, key=k)
        return [(c,) for c in singles] + [(c, c) for c in singles if held[c] == 2]

    g = group(lead_cards[0], t)
    in_g = Counter({c: n for c, n in held.items() if group(c, t) == g})

    if len(lead_cards) == 1:
        # R18: a card of G if any, otherwise any card.
        pool = in_g if in_g else held
        return [(c,) for c in sorted(pool, key=k)]

    n_in_g = sum(in_g.values())
    if any(n == 2 for n in in_g.values()):
        # R19a: holding a pair in G, play a pair in G (any).
        plays = [(c, c) for c, n in in_g.items() if n == 2]
    elif n_in_g >= 2:
        # R19b: the two strongest cards held in G; ties in strength are the player's choice.
        # (No pair in G here, so every G card is held once.)
        top = sorted((strength(c, t) for c in in_g.elements()), reverse=True)[:2]
        plays = [p for p in _two_card_plays(in_g)
                 if sorted((strength(c, t) for c in p), reverse=True) == top]
    elif n_in_g == 1:
        # R19c: that card and any other card.
        (only,) = in_g
        plays = [(only, c) for c in held if c != only]
    else:
        # R19d: any two cards (a trump pair may win, R21).
        plays = _two_card_plays(held)
    plays = {key_order(p, t) for p in plays}
    return sorted(plays, key=lambda p: (k(p[0]), k(p[1])))


def pair_card(pair: Any) -> str:
    """The card type of a shown pair given as ``'Kh'`` or ``('Kh', 'Kh')``; never a joker."""
    if isinstance(pair, str):
        c = parse_card(pair)
    else:
        cards = [parse_card(x) for x in pair]
        if len(cards) != 2 or cards[0] != cards[1]:
            raise ValueError(f"invalid pair {pair!r}: two identical cards (R15)")
        c = cards[0]
    if c in JOKERS:
        raise ValueError(f"invalid pair {pair!r}: jokers are never shown (R6)")
    return c


def legal_shows(hand: Sequence[str], current_pair: Optional[Any] = None) -> list[str]:
    """The pairs this hand may show (R6), one card each, ascending by card id.

    Parameters
    ----------
    hand : list of str
        The player's cards at this calling chance.
    current_pair : str or pair of str or None
        The pair on the table (``'Qs'`` or ``('Qs', 'Qs')``), None before the first show.

    Returns
    -------
    list of str
        Suited cards held twice whose rank is strictly above the current pair's rank
        (ranks A < 2 < ... < K, suits equal; jokers never).
    """
    held = hand_counts(hand)
    floor = -1 if current_pair is None else RANKS.index(pair_card(current_pair)[0])
    shows = [c for c, n in held.items()
             if n == 2 and c not in JOKERS and RANKS.index(c[0]) > floor]
    return sorted(shows, key=card_id)


def legal_givebacks(hand: Sequence[str], shown: Any) -> list[tuple[str, str]]:
    """The two-card give-backs of an overrider (R8), in engine.md's canonical order.

    Parameters
    ----------
    hand : list of str
        The overrider's hand after taking the overridden pair.
    shown : str or pair of str
        The pair the overrider has just shown.

    Returns
    -------
    list of tuple of str
        Distinct unordered ``(a, b)`` with ``id(a) <= id(b)``, ``a == b`` only if both
        copies are held, never the card type just shown; sorted by ``(id(a), id(b))``.
    """
    held = hand_counts(hand)
    s = pair_card(shown)
    if held[s] != 2:
        raise ValueError(f"the overrider must hold the pair {s!r} it has just shown (R8)")
    # R8: the cards just taken may go back, the two of the pair just shown may not.
    rest = Counter({c: n for c, n in held.items() if c != s})
    plays = [tuple(sorted(p, key=card_id)) for p in _two_card_plays(rest)]
    return sorted(plays, key=lambda p: (card_id(p[0]), card_id(p[1])))


# ---------------------------------------------------------------------------------------
# Tricks (R20, R21)
# ---------------------------------------------------------------------------------------


def trick_winner(plays: Sequence[Sequence[str]], trump: str) -> int:
    """Index in ``plays`` of the winning play (R20, R21); ``plays[0]`` is the lead.

    A single lead is won by the strongest trump if any trump was played, otherwise by the
    strongest card of the lead's group; a pair lead only by a pair of that group or a trump
    pair, trump pairs above side pairs. Among equally strong winners the earliest wins.
    """
    t = trump_suit(trump)
    cards = [(parse_card(p),) if isinstance(p, str) else tuple(parse_card(c) for c in p)
             for p in plays]
    if not cards:
        raise ValueError("a trick needs at least the lead")
    lead = _lead_cards(cards[0])
    for p in cards:
        if len(p) != len(lead):
            raise ValueError(f"play {list(p)!r} does not have as many cards as the lead (R16)")
    g = group(lead[0], t)
    best, best_rank = 0, (-1, -1)
    for i, p in enumerate(cards):
        if len(lead) == 2 and p[0] != p[1]:
            continue  # R21: two unpaired cards never win
        gp = group(p[0], t)
        if gp != g and gp != "trump":
            continue  # R20/R21: neither the lead's group nor trump
        rank = (1 if gp == "trump" else 0, strength(p[0], t))
        if rank > best_rank:  # strictly stronger only: of equals the earlier wins
            best, best_rank = i, rank
    return best


# ---------------------------------------------------------------------------------------
# Score (R22–R25)
# ---------------------------------------------------------------------------------------


def _rules(rules: Any = None) -> dict:
    """The seven variants: defaults overridden by a mapping or an object's attributes."""
    out = dict(DEFAULT_RULES)
    if rules is None:
        return out
    if isinstance(rules, Mapping):
        given = dict(rules)
    else:
        given = {name: getattr(rules, name) for name in DEFAULT_RULES if hasattr(rules, name)}
    unknown = sorted(set(given) - set(DEFAULT_RULES))
    if unknown:
        raise ValueError(f"unknown rules variant(s) {unknown!r}; variants are "
                         f"{sorted(DEFAULT_RULES)}")
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"rules variant {name!r} must be an integer, got {value!r}")
        out[name] = value
    if out["max_redeals"] < 0:
        raise ValueError(f"max_redeals must be >= 0, got {out['max_redeals']!r}")
    if out["settle_step"] < 1:
        raise ValueError(f"settle_step must be >= 1, got {out['settle_step']!r}")
    return out


def settle(attacker_score: int, rules: Any = None) -> tuple[int, int]:
    """Each attacker's and each defender's skill change for a deal (R24).

    Returns
    -------
    (int, int)
        ``(attacker_change, defender_change)``; they sum to zero.
    """
    r = _rules(rules)
    step, unit, cap = r["settle_step"], r["settle_unit"], r["defender_cap"]
    d = attacker_score - 100
    if d >= step:
        gain = unit * (d // step)  # R24: no cap for attackers
        return gain, -gain
    if d <= -step:
        gain = min(cap, unit * ((-d) // step))
        return -gain, gain
    return 0, 0


_LEVELS = (
    (80000, "宗师"), (51200, "大师"), (34000, "博士导师"), (22600, "教授"),
    (15000, "副教授"), (9800, "讲师"), (6400, "博士后"), (4200, "博士"),
    (2600, "研究生"), (1600, "本科生"), (960, "大专生"), (500, "高中生"),
    (200, "初中生"), (0, "小学生"),
)


def level(skill: int) -> str:
    """The title for a skill value (R25), e.g. ``level(1600) == '本科生'``."""
    for floor, title in _LEVELS:
        if skill >= floor:
            return title
    return "幼儿园"  # below 0


def score_tricks(tricks: Sequence[Mapping], attackers: Sequence[int], rules: Any = None
                 ) -> tuple[int, int, int]:
    """Score a deal's tricks (R22, R23).

    Parameters
    ----------
    tricks : list of dict
        Record-style tricks with at least ``"plays"`` (lists of cards) and ``"winner"``.
    attackers : two ints
        The attacking seats.
    rules : mapping, optional
        Variants (``kou_di_single``, ``kou_di_pair``).

    Returns
    -------
    (int, int, int)
        ``(attacker_points, last_trick_multiplier, attacker_score)``.
    """
    r = _rules(rules)
    attackers = set(attackers)
    points = 0
    for trick in tricks:
        if trick["winner"] in attackers:
            points += card_points(c for p in trick["plays"] for c in p)
    multiplier = 1
    score = points
    if tricks and tricks[-1]["winner"] in attackers:
        last = tricks[-1]
        last_points = card_points(c for p in last["plays"] for c in p)
        # R23 + Readings: won with a pair exactly when the last trick was led as a pair.
        multiplier = r["kou_di_pair"] if len(last["plays"][0]) == 2 else r["kou_di_single"]
        score = points - last_points + multiplier * last_points
    return points, multiplier, score


# ---------------------------------------------------------------------------------------
# Random numbers (engine.md)
# ---------------------------------------------------------------------------------------

TWO_64 = 2 ** 64
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 % TWO_64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB % TWO_64
    return z ^ (z >> 31)


def _bounded(r: int, n: int) -> int:
    return ((r >> 32) * n) >> 32


class Rng:
    """The counter-based generator of engine.md for one ``(seed, deal, stream)``.

    Draw number i (from 0) is ``mix64((key + (i + 1) * 0x9E3779B97F4A7C15) mod 2**64)``.
    Streams: 0 the cards, 1 + s the strategy in seat s.
    """

    def __init__(self, seed: int, deal: int, stream: int) -> None:
        for name, value, limit in (("seed", seed, TWO_64), ("deal", deal, 2 ** 63),
                                   ("stream", stream, TWO_64)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < limit:
                raise ValueError(f"invalid {name} {value!r}: expected an integer 0 <= {name} "
                                 f"< {limit}")
        self.seed, self.deal, self.stream = seed, deal, stream
        self.key = _mix64(_mix64(_mix64(seed ^ _GOLDEN) ^ (deal * 0xD1B54A32D192ED03 % TWO_64))
                          ^ (stream * 0xABC98388FB8FAC03 % TWO_64))
        #: How many numbers have been drawn: the index of the next draw.
        self.draws = 0

    def next(self) -> int:
        """The next 64-bit number of the stream."""
        r = _mix64((self.key + (self.draws + 1) * _GOLDEN) % TWO_64)
        self.draws += 1
        return r

    def bounded(self, n: int) -> int:
        """An index in ``0 .. n-1`` from the next draw: ``((r >> 32) * n) >> 32``."""
        if isinstance(n, bool) or not isinstance(n, int) or not 0 < n < 2 ** 32:
            raise ValueError(f"bounded() needs 0 < n < 2**32, got {n!r}")
        return _bounded(self.next(), n)

    def __repr__(self) -> str:
        return f"Rng(seed={self.seed}, deal={self.deal}, stream={self.stream}) @ {self.draws}"


def _shuffle(rng: Rng) -> list[str]:
    """One attempt's deck (engine.md): Fisher–Yates from the sorted deck, 107 down to 1."""
    deck = [i // 2 for i in range(108)]  # R1: each of the 54 card ids twice
    for i in range(107, 0, -1):
        j = rng.bounded(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return [card_from_id(i) for i in deck]


def reference_deck(seed: int, deal: int, redeals: int = 0) -> list[str]:
    """The deck in dealing order after ``redeals`` redeals (R11: stream 0 continues)."""
    rng = Rng(seed, deal, 0)
    for _ in range(redeals):
        _shuffle(rng)
    return _shuffle(rng)


# ---------------------------------------------------------------------------------------
# The random strategy (engine.md)
# ---------------------------------------------------------------------------------------


class RandomPlayer:
    """engine.md's ``random(show_prob=0.25)`` strategy.

    Parameters
    ----------
    show_prob : float
        Chance of showing at a show decision.
    """

    def __init__(self, show_prob: float = 0.25) -> None:
        if not 0.0 <= show_prob <= 1.0:
            raise ValueError(f"show_prob must be in [0, 1], got {show_prob!r}")
        self.show_prob = show_prob
        self._threshold = math.floor(show_prob * 2 ** 32)

    def choose(self, kind: str, choices: Sequence[Any], rng: Rng) -> Any:
        """Pick one of ``choices`` for a ``'show'``, ``'giveback'`` or ``'play'`` decision.

        For ``'show'``, ``choices[0]`` is None (pass) and the rest are the shows ascending
        by card id; the strategy indexes into the shows only.
        """
        if kind == "show":
            shows = list(choices[1:])
            if not shows:
                return None  # not a decision (engine.md); draw nothing
            r = rng.next()
            if (r >> 32) < self._threshold:
                return shows[rng.bounded(len(shows))]
            return None
        if kind in ("giveback", "play"):
            if len(choices) == 1:
                return choices[0]  # no draw for a forced choice
            return choices[rng.bounded(len(choices))]
        raise ValueError(f"unknown decision kind {kind!r}")

    def __repr__(self) -> str:
        return f"random(show_prob={self.show_prob})"


# ---------------------------------------------------------------------------------------
# Playing a deal
# ---------------------------------------------------------------------------------------


def dealt_hands(deck: Sequence[str], rounds: int = 27) -> list:
    """The hands after ``rounds`` dealing rounds: card i goes to seat i mod 4 (R5)."""
    hands = [Counter() for _ in range(4)]
    for i in range(4 * rounds):
        hands[i % 4][deck[i]] += 1
    return hands


def _sorted_hand(held: Counter) -> list:
    return sorted(held.elements(), key=card_id)


def _ask(player: Any, kind: str, choices: list, rng: Rng, seat: int) -> Any:
    choice = player.choose(kind, choices, rng)
    if kind == "show" and choice is None:
        return None
    normalised = choice if kind == "show" else tuple(choice)
    if normalised not in choices:
        raise ValueError(f"seat {seat}: {kind} choice {choice!r} is not one of the legal "
                         f"choices {choices!r}")
    return normalised


def _calling(deck: list, players: Sequence[Any], rngs: Sequence[Rng]) -> tuple:
    """Deal round by round and run the calling (R5–R8). Returns (calls, hands, shower)."""
    hands = [Counter() for _ in range(4)]
    calls: list = []
    shown: Optional[tuple] = None  # (seat, card) of the pair on the table

    def chance(seat: int, rnd: int) -> bool:
        nonlocal shown
        shows = legal_shows(hands[seat], None if shown is None else shown[1])
        if not shows:
            return False  # Readings: a forced pass, no decision and no draw
        pair = _ask(players[seat], "show", [None] + shows, rngs[seat], seat)
        if pair is None:
            return False
        took_from = gave = None
        if shown is not None and shown[0] != seat:
            # R8: the overridden pair moves to the shower, who hands two cards back.
            took_from, old = shown
            hands[took_from][old] -= 2
            hands[seat][old] += 2
            choices = legal_givebacks(hands[seat], pair)
            give = _ask(players[seat], "giveback", choices, rngs[seat], seat)
            for c in give:
                hands[seat][c] -= 1
                hands[took_from][c] += 1
            gave = list(give)
        # R8: showing over one's own pair takes and gives nothing.
        for s in range(4):
            hands[s] = +hands[s]  # drop zero counts
        calls.append({"round": rnd, "seat": seat, "pair": pair, "took_from": took_from,
                      "gave": gave})
        shown = (seat, pair)
        return True

    for rnd in range(1, 28):
        for seat in range(4):  # R5: dealing round rnd, one card to each seat
            hands[seat][deck[4 * (rnd - 1) + seat]] += 1
        if rnd < 27:
            for seat in range(4):  # R7: one chance each after rounds 1-26
                chance(seat, rnd)
        else:
            # R7: after round 27, round the table from seat 0 until four passes in a row.
            seat, passes = 0, 0
            while passes < 4:
                passes = 0 if chance(seat, 27) else passes + 1
                seat = (seat + 1) % 4
    return calls, hands, shown


def play_deal(seed: int, deal: int, players: Optional[Sequence[Any]] = None,
              rules: Any = None, seat_names: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """Play one complete deal and return its record (docs/record.md).

    Parameters
    ----------
    seed, deal : int
        The run's master seed and the deal index; together they fix every random draw.
    players : four objects with ``choose(kind, choices, rng)``, optional
        The strategies in seats 0–3; four :class:`RandomPlayer` by default. Seat s draws
        from ``Rng(seed, deal, 1 + s)``, continuing across redeals.
    rules : mapping, optional
        Variants overriding :data:`DEFAULT_RULES`.
    seat_names : four str, optional
        The ``seats`` field; ``"random"`` four times by default.

    Returns
    -------
    dict
        The record, with exactly the fields of docs/record.md.
    """
    r = _rules(rules)
    if players is None:
        players = [RandomPlayer() for _ in range(4)]
    if len(players) != 4:
        raise ValueError(f"need four players, got {len(players)}")
    names = ["random"] * 4 if seat_names is None else [str(n) for n in seat_names]
    if len(names) != 4:
        raise ValueError(f"need four seat names, got {seat_names!r}")
    card_rng = Rng(seed, deal, 0)
    seat_rngs = [Rng(seed, deal, 1 + s) for s in range(4)]

    record: dict = {
        "format": FORMAT, "seed": seed, "deal": deal, "rules": dict(r), "seats": names,
    }
    # R11: at most max_redeals + 1 attempts, stream 0 continuing across them.
    for attempt in range(r["max_redeals"] + 1):
        deck = _shuffle(card_rng)
        calls, hands, shown = _calling(deck, players, seat_rngs)
        if calls:
            break
    record["redeals"] = attempt
    record["deck"] = deck
    if not calls:
        # R11: nobody showed after max_redeals redeals, the deal is void.
        record.update({
            "void": True, "calls": [], "caller": None, "trump": None, "attackers": None,
            "hands": [_sorted_hand(h) for h in hands], "tricks": [],
            "attacker_points": None, "last_trick_multiplier": None,
            "attacker_score": None, "settlement": [0, 0, 0, 0],
        })
        return _in_field_order(record)

    # R10: the last shower calls; the suit of the pair is trump; the caller's team attacks.
    caller, pair = shown
    trump = pair[1]
    attackers = sorted([caller, (caller + 2) % 4])
    record.update({"void": False, "calls": calls, "caller": caller, "trump": trump,
                   "attackers": attackers, "hands": [_sorted_hand(h) for h in hands]})

    tricks = []
    leader = (caller + 1) % 4  # R17: the defender after the caller leads first
    while any(hands):
        plays = []
        for k in range(4):
            seat = (leader + k) % 4
            choices = legal_plays(hands[seat], trump, plays[0] if plays else None)
            play = _ask(players[seat], "play", choices, seat_rngs[seat], seat)
            hands[seat] -= Counter(play)
            plays.append(list(play))
        winner = (leader + trick_winner(plays, trump)) % 4
        tricks.append({"leader": leader, "plays": plays, "winner": winner,
                       "points": card_points(c for p in plays for c in p)})
        leader = winner  # R17: the winner leads next

    points, multiplier, score = score_tricks(tricks, attackers, r)
    att, dfn = settle(score, r)
    record.update({
        "tricks": tricks, "attacker_points": points, "last_trick_multiplier": multiplier,
        "attacker_score": score,
        "settlement": [att if s in attackers else dfn for s in range(4)],
    })
    return _in_field_order(record)


def _in_field_order(record: dict) -> dict:
    return {f: record[f] for f in FIELDS}
