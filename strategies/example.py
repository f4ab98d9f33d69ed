"""An example bot written in plain Python, to copy when you write your own.

``cautious`` never gives points away cheaply: it wins a trick only when the trick already
holds ``greed`` points or more (or it plays last and can win), feeds points to a partner who
is winning the trick when it plays last, and otherwise throws its cheapest card. It shows a
pair only when at least ``show_share`` of its cards would be trumps, and gives back its two
weakest cards. It uses nothing but its observation and the public functions of ``sim``.

Use it from the command line or a config without touching this package::

    shuangkou play --plugin strategies.example --seats "cautious(greed=10),random"
    players = ["strategies.example:Cautious(greed=10)", "greedy"]     # in a config
"""

from __future__ import annotations

import functools
from typing import Any

import sim
from strategies.base import Strategy, param

# strength order of the cards of a group, as docs/rules.md R13 gives it
_PLAIN = "46789TJQKA"


def _trumps_if(cards: list[str], suit: str) -> int:
    """How many of ``cards`` would be trumps with ``suit`` as trump (R12)."""
    return sum(c in ("BJ", "SJ") or c[0] in "235" or c[1] == suit for c in cards)


@functools.lru_cache(maxsize=None)  # 54 cards under 5 trumps (None: none yet): compute once
def _value(card: str, trump: str | None) -> int:
    """A rough value of a card to keep: trumps high, then rank; point cards cost extra."""
    if card in ("BJ", "SJ") or card[0] in "235" or (trump and card[1] == trump):
        base = 20 + ("235".index(card[0]) * 2 if card[0] in "235" else 0)
    else:
        base = _PLAIN.index(card[0])
    return base + 2 * sim.card_points([card])


class Cautious(Strategy):
    """Example Python bot: wins only points-rich tricks, feeds partner, dumps low."""

    name = "cautious"
    greed = param(10, int, lo=0, hi=400, doc="trick points from which it tries to win")
    show_share = param(0.45, float, lo=0.0, hi=1.0, doc="share of trumps needed to show")

    def choose(self, obs: Any, legal: list) -> Any:
        if obs.kind == "show":  # legal = [None (pass), 'Ks', ...]: shows ascending
            hand = obs.hand
            best = max(legal[1:], key=lambda c: _trumps_if(hand, c[1]))
            share = _trumps_if(hand, best[1]) / len(hand)
            return best if len(hand) >= 10 and share >= self.show_share else None
        if obs.kind == "giveback":  # legal = every allowed pair of cards to hand back
            suit = obs.calls[-1]["pair"][1]  # the suit just shown would be trump
            return min(legal, key=lambda p: sum(_value(c, suit) for c in p))
        return self._play(obs, legal)

    def _play(self, obs: Any, legal: list) -> Any:
        trump = obs.trump
        cheapest = min(legal, key=lambda p: sum(_value(c, trump) for c in p))
        trick = obs.trick  # plays so far in this trick, from its leader
        if not trick:
            return cheapest  # lead low
        me = len(trick)  # my position in the trick
        winner = sim.trick_winner(trick, trump)
        partner_winning = me - winner == 2
        points = sim.card_points([c for p in trick for c in p])
        last = me == 3
        if partner_winning:
            if last:  # safe: feed the partner the richest play
                return max(legal, key=lambda p: (sim.card_points(list(p)),
                                                 -sum(_value(c, trump) for c in p)))
            return cheapest
        if points >= self.greed or last:
            winners = [p for p in legal if sim.trick_winner(trick + [list(p)], trump) == me]
            if winners:
                return min(winners, key=lambda p: sum(_value(c, trump) for c in p))
        return cheapest
