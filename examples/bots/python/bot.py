#!/usr/bin/env python3
"""A heuristic Shuangkou bot speaking the `shuangkou-bot/1` protocol (docs/protocol.md).

Standard library only. Run it as a seat:

    shuangkou play --bot pyheur='python3 examples/bots/python/bot.py' --seats pyheur,greedy

The policy, deterministic given the messages (it uses no randomness at all):

- show: pass unless some suit it could show is long (a quarter of its cards or more, with at
  least 8 cards in hand); then show the pair of its longest such suit;
- give-back: hand back the two weakest cards (R13 strength, no trump suit yet);
- play: lead its weakest choice; when its partner is winning the trick, play its weakest
  choice; otherwise play the weakest choice that takes the trick, or its weakest choice.

"Weakest" is the sum of the cards' R13 strength; ties go to the earlier choice in `legal`.
`choose()` is a pure function of (kind, hand, legal, trick, trump, seat): twin.py runs it
in-process to prove the protocol gives a bot what it needs.
"""

from __future__ import annotations

import json
import sys

PLAIN = "46789TJQKA"  # R13: the order of a group's plain cards, weakest first


def is_trump(card: str, trump: str | None) -> bool:
    """R12: jokers, every 2, 3 and 5, and every card of the trump suit."""
    return card in ("BJ", "SJ") or card[0] in "235" or card[1] == trump


def group(card: str, trump: str | None) -> str:
    """R14: 'T' for a trump, else the card's suit letter."""
    return "T" if is_trump(card, trump) else card[1]


def strength(card: str, trump: str | None) -> int:
    """R13 strength, higher is stronger; equally strong cards get equal numbers."""
    if card == "BJ":
        return 26
    if card == "SJ":
        return 25
    main = card[1] == trump
    if card[0] == "5":
        return 27 if main else 24
    if card[0] == "3":
        return 23 if main else 22
    if card[0] == "2":
        return 21 if main else 20
    return PLAIN.index(card[0]) + (10 if main else 0)


def trick_winner(plays: list[list[str]], trump: str | None) -> int:
    """Index (from the leader) of the play winning `plays` so far (R20, R21)."""
    lead = plays[0]
    best = 0
    if len(lead) == 1:
        for i in range(1, len(plays)):
            c, b = plays[i][0], plays[best][0]
            gc, gb = group(c, trump), group(b, trump)
            if gc == "T" and gb != "T":
                best = i
            elif gc == gb and strength(c, trump) > strength(b, trump):
                best = i
        return best
    for i in range(1, len(plays)):
        p = plays[i]
        if p[0] != p[1]:  # R21: two cards that are not a pair never win
            continue
        b = plays[best][0]
        gc, gb = group(p[0], trump), group(b, trump)
        if gc == "T" and gb != "T":
            best = i
        elif gc == gb and strength(p[0], trump) > strength(b, trump):
            best = i
    return best


def weakest(indices: list[int], legal: list[list[str]], trump: str | None) -> int:
    """The index among `indices` whose cards are weakest in sum; the earliest on ties."""
    return min(indices, key=lambda i: (sum(strength(c, trump) for c in legal[i]), i))


def choose(kind: str, hand: list[str], legal: list[list[str]], trick: list, trump: str | None,
           seat: int) -> int:
    """The index into `legal` this bot picks (see the module's docstring)."""
    everything = list(range(len(legal)))
    if kind == "show":
        best, best_len = 0, 0  # index 0 is the pass whenever passing is allowed
        for i, choice in enumerate(legal):
            if not choice:
                continue
            suit = choice[0][1]
            n = sum(1 for c in hand if c[1] == suit and c[0] not in "235")
            if n >= best_len:  # ties: the later, higher show
                best, best_len = i, n
        if best_len and len(hand) >= 8 and 4 * best_len >= len(hand):
            return best
        passes = [i for i, choice in enumerate(legal) if not choice]
        return passes[0] if passes else best
    if kind == "giveback":
        return weakest(everything, legal, None)
    # a play
    low = weakest(everything, legal, trump)
    if not trick:
        return low
    plays = [list(cards) for _, cards in trick]
    leader = trick[0][0]
    if (leader + trick_winner(plays, trump)) % 4 == (seat + 2) % 4:
        return low  # the partner is winning
    me = len(plays)
    winners = [i for i in everything if trick_winner(plays + [legal[i]], trump) == me]
    return weakest(winners, legal, trump) if winners else low


def main() -> None:
    seat, trump = -1, None
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            out.write(json.dumps({"type": "hello", "name": "pyheur", "version": "1"}) + "\n")
            out.flush()
        elif kind == "match":
            seat = int(msg["seat"])
        elif kind == "deal":
            trump = None
        elif kind == "trump":
            trump = msg["trump"]
        elif kind == "decide":
            i = choose(msg["kind"], msg.get("hand") or [], msg["legal"], msg.get("trick") or [],
                       trump, seat)
            out.write(json.dumps({"type": "action", "id": msg["id"], "choice": i}) + "\n")
            out.flush()
        elif kind == "quit":
            return
    print("pyheur: end of input", file=sys.stderr)


if __name__ == "__main__":
    main()
