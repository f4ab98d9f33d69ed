"""A brute-force double-dummy minimax on the plain-Python reference engine (R9, R17–R24).

It values every legal play of the seat to act in a trick-play position with all four hands
known, as the attackers' final score (R22 points + R23 last-trick multiplier) after optimal
play by both sides: the attackers maximise it, the defenders minimise it. It exists to check
the compiled solver (``sim.solve``) against something written separately: it uses only
``sim.reference.oracle`` (``legal_plays``, ``trick_winner``, ``score_tricks``, ``settle``) and
``sim.reference.cards`` (``card_points``), and imports nothing of the compiled core.

Search: the full game tree, every legal play of every seat, with **no pruning** (no
alpha-beta, no bounds, no move ordering, no equivalent-card merging). Memos save repetition
without cutting anything: the value of the rest of the deal from a whole position at a trick
start (all four hands + the leader; it does not depend on the points taken before, which add
to it); the reference's ``legal_plays`` of a hand against a lead; and its ``trick_winner`` and
``card_points`` of a trick's four plays. A memo returns exactly the value a fresh search of
the same position (or call) would return, so it is not pruning. Small positions only: the tree
grows fast (≤ 4 cards per hand takes well under a second, 6 is slow).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sim.reference.cards import card_points, parse_card, trump_suit
from sim.reference.oracle import legal_plays, score_tricks, settle, trick_winner

__all__ = ["choice_scores", "choice_values", "position_value"]

Hand = tuple  # a hand: the cards' canonical strings, sorted (a multiset)


def _take(hand: Hand, play: Sequence[str]) -> Hand:
    """``hand`` without the cards of ``play`` (one copy each)."""
    rest = list(hand)
    for c in play:
        rest.remove(c)
    return tuple(rest)


class _Search:
    """One position's search: the trump, the attackers, the rules and the memos."""

    def __init__(self, trump: str, attackers: Sequence[int], rules: Any) -> None:
        self.trump = trump_suit(trump)
        self.attackers = frozenset(int(s) for s in attackers)
        self.rules = rules
        self.starts: dict[tuple, int] = {}  # (hands, leader) at a trick start -> future score
        self.plays: dict[tuple, list] = {}  # (hand, lead) -> legal_plays
        self.tricks: dict[tuple, tuple] = {}  # a trick's four plays -> (winner index, points)

    def legal(self, hand: Hand, lead: tuple | None) -> list[tuple[str, ...]]:
        k = (hand, lead)
        out = self.plays.get(k)
        if out is None:
            # R16 leads, R18 single follows, R19a-d pair follows: the reference's own rules
            out = self.plays[k] = legal_plays(list(hand), self.trump, lead)
        return out

    def trick_end(self, hands: tuple, leader: int, plays: list) -> int:
        """The attackers' score from the trick just completed (``plays``) to the end."""
        k = tuple(plays)
        done = self.tricks.get(k)
        if done is None:  # R20, R21: the reference's winner; R3: face points
            done = self.tricks[k] = (trick_winner(plays, self.trump),
                                     card_points(c for p in plays for c in p))
        winner = (leader + done[0]) % 4
        if not any(hands):
            # R23: the last trick, scored by the reference's score_tricks (multiplier
            # kou_di_single / kou_di_pair when an attacker wins it, led as a single / a pair)
            last = {"plays": [list(p) for p in plays], "winner": winner}
            return score_tricks([last], sorted(self.attackers), self.rules)[2]
        # R22: the face points of a trick an attacker wins; R17: the winner leads next
        won = done[1] if winner in self.attackers else 0
        return won + self.start(hands, winner)

    def start(self, hands: tuple, leader: int) -> int:
        """The attackers' score from a trick start to the end (memo on the whole position)."""
        k = (hands, leader)
        v = self.starts.get(k)
        if v is None:
            v = self.starts[k] = self.within(hands, leader, [])
        return v

    def within(self, hands: tuple, leader: int, plays: list) -> int:
        """The value of a position inside a trick (``plays`` made so far): plain minimax."""
        values = [v for _, v in self.choices(hands, leader, plays)]
        seat = (leader + len(plays)) % 4
        # R9: the attackers maximise their score, the defenders minimise it
        return max(values) if seat in self.attackers else min(values)

    def choices(self, hands: tuple, leader: int, plays: list) -> list[tuple[tuple, int]]:
        """Every legal play of the seat to act with the attackers' score after it."""
        seat = (leader + len(plays)) % 4
        lead = tuple(plays[0]) if plays else None
        out = []
        for play in self.legal(hands[seat], lead):
            nxt = list(hands)
            nxt[seat] = _take(hands[seat], play)
            nxt_hands = tuple(nxt)
            now = plays + [play]
            if len(now) == 4:
                v = self.trick_end(nxt_hands, leader, now)
            else:
                v = self.within(nxt_hands, leader, now)
            out.append((play, v))
        return out


def _position(hands: Sequence[Sequence[str]], leader: int, trick: Sequence[Sequence[str]]
              ) -> tuple[tuple, int, list]:
    """Canonical hands, the leader and the trick's plays, with basic checks."""
    if len(hands) != 4:
        raise ValueError(f"need four hands, got {len(hands)}")
    if not 0 <= int(leader) < 4:
        raise ValueError(f"leader must be a seat 0-3, got {leader!r}")
    if len(trick) > 3:
        raise ValueError(f"a trick in progress has 0-3 plays, got {len(trick)}")
    hs = tuple(tuple(sorted(parse_card(c) for c in h)) for h in hands)
    plays = [tuple(parse_card(c) for c in p) for p in trick]
    seen = Counter(c for h in hs for c in h) + Counter(c for p in plays for c in p)
    over = sorted(c for c, n in seen.items() if n > 2)
    if over:
        raise ValueError(f"more than two of {over} in the hands and the trick (R1)")
    if plays and any(len(p) != len(plays[0]) for p in plays):
        raise ValueError("every play of a trick has as many cards as the lead (R16)")
    width = len(plays[0]) if plays else 0
    seat = (int(leader) + len(plays)) % 4
    if not hs[seat]:
        raise ValueError(f"seat {seat} is to act but holds no cards")
    n = len(hs[seat])
    for i in range(4):  # seats that played this trick hold `width` fewer cards (R5, R16)
        played = (i - int(leader)) % 4 < len(plays)
        if len(hs[i]) != n - (width if played else 0):
            raise ValueError(f"hand sizes {[len(h) for h in hs]} do not fit a trick with "
                             f"{len(plays)} plays led by seat {leader}")
    return hs, int(leader), plays


def choice_scores(hands: Sequence[Sequence[str]], trump: str, leader: int,
                  trick: Sequence[Sequence[str]], attackers: Sequence[int], points: int = 0,
                  rules: Any = None) -> list[tuple[tuple[str, ...], int]]:
    """Every legal play of the seat to act with the attackers' final score after it.

    Parameters
    ----------
    hands : four lists of str
        Each seat's remaining cards (canonical or parseable strings).
    trump : str
        The trump suit letter.
    leader : int
        The seat that led (or leads) the current trick.
    trick : list of lists of str
        The plays made so far in the current trick, the lead first (empty at a trick start).
    attackers : two ints
        The attacking seats (the caller's side, R10).
    points : int
        The attackers' points from the tricks already finished (R22); added to every score.
    rules : mapping or object with kou_di_single / kou_di_pair, optional
        Variants (as ``score_tricks`` reads them).

    Returns
    -------
    list of (tuple of str, int)
        For the seat to act (``leader + len(trick)``), each legal play in the reference's
        canonical order with the attackers' final score when both sides then play perfectly.
    """
    hs, lead_seat, plays = _position(hands, leader, trick)
    search = _Search(trump, attackers, rules)
    return [(play, int(points) + v) for play, v in search.choices(hs, lead_seat, plays)]


def choice_values(hands: Sequence[Sequence[str]], trump: str, leader: int,
                  trick: Sequence[Sequence[str]], attackers: Sequence[int], points: int = 0,
                  rules: Any = None) -> list[tuple[tuple[str, ...], int, int]]:
    """``choice_scores`` with each play's settlement for the seat to act (R24: the attackers'
    change if it attacks, the defenders' if it defends)."""
    seat = (int(leader) + len(trick)) % 4
    side = 0 if seat in {int(a) for a in attackers} else 1
    return [(play, score, settle(score, rules)[side])
            for play, score in choice_scores(hands, trump, leader, trick, attackers, points,
                                             rules)]


def position_value(hands: Sequence[Sequence[str]], trump: str, leader: int,
                   trick: Sequence[Sequence[str]], attackers: Sequence[int], points: int = 0,
                   rules: Any = None) -> int:
    """The attackers' final score of the position under perfect play by both sides."""
    seat = (int(leader) + len(trick)) % 4
    scores = [s for _, s in choice_scores(hands, trump, leader, trick, attackers, points,
                                          rules)]
    return max(scores) if seat in {int(a) for a in attackers} else min(scores)
