"""The compiled core against the plain-Python reference engine (sim/reference/oracle.py).

10,000 seeded deals under four configurations (ordinary, eager shows with many overrides,
shy shows with redeals and void deals, changed rules variants) must give identical records
field by field; random follow situations must give identical legal-play lists (same
canonical order), and random tricks identical winners.

The full 10,000 deals are marked ``slow`` (``--runslow`` or ``SHUANGKOU_FULL=1``; ``.ci/run``
runs them); the quick loop compares the first tenth of every configuration, 1,000 deals.
"""

from __future__ import annotations

import random

import pytest
from joblib import Parallel, delayed

from sim.loops.runner import iter_records, make_seats
from sim.reference import oracle as ref
from sim.rules import Rules

CONFIGS = {
    # name: (seed, first deal, deals, seat show probabilities, rules)
    "ordinary": (11, 0, 5000, (0.25, 0.25, 0.25, 0.25), {}),
    "eager": (12, 1000, 3000, (1.0, 0.6, 1.0, 0.3), {}),
    "shy_redeals": (13, 0, 1500, (0.02, 0.03, 0.02, 0.03), {"max_redeals": 1}),
    "variants": (14, 7, 500, (0.5, 0.25, 0.5, 0.25),
                 {"kou_di_single": 3, "kou_di_pair": 8, "settle_step": 10, "settle_unit": 1,
                  "defender_cap": 6, "max_redeals": 5}),
}


def _compare_chunk(seed, first, n, probs, rules):
    seats = make_seats([f"random(show_prob={p})" for p in probs])
    names = [s.spec() for s in seats]
    players = [ref.RandomPlayer(p) for p in probs]
    mismatches = []
    stats = {"void": 0, "redealt": 0, "overrides": 0, "kou_di_pair": 0}
    for rec in iter_records(seed, first, n, seats, Rules.from_dict(rules)):
        want = ref.play_deal(seed, rec["deal"], players, rules, names)
        if rec != want:
            diff = [k for k in want if rec.get(k) != want[k]]
            mismatches.append((rec["deal"], diff))
        stats["void"] += rec["void"]
        stats["redealt"] += rec["redeals"] > 0
        stats["overrides"] += sum(c["took_from"] is not None for c in rec["calls"])
        stats["kou_di_pair"] += (rec["last_trick_multiplier"] or 1) > 1 and \
            len(rec["tricks"][-1]["plays"][0]) == 2
    return mismatches, stats


QUICK_SHARE = 10  # the quick loop plays n // QUICK_SHARE deals of each configuration


@pytest.mark.parametrize("scale", [
    pytest.param(QUICK_SHARE, marks=pytest.mark.quick, id="quick"),
    pytest.param(1, marks=pytest.mark.slow, id="full"),
])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_records_identical_to_reference(name, scale):
    seed, first, n, probs, rules = CONFIGS[name]
    n //= scale
    chunks = [(first + i, min(250, first + n - (first + i))) for i in range(0, n, 250)]
    results = Parallel(n_jobs=2)(delayed(_compare_chunk)(seed, a, k, probs, rules)
                                 for a, k in chunks)
    mismatches = [m for r in results for m in r[0]]
    stats = {k: sum(r[1][k] for r in results) for k in results[0][1]}
    assert not mismatches, f"{len(mismatches)} deals differ, first: {mismatches[:3]}"
    # the configurations really exercise what they are for
    if name == "eager":
        assert stats["overrides"] > n  # R8 chains
    if name == "shy_redeals":
        assert stats["void"] > 0 and stats["redealt"] > stats["void"]  # R11
    if name == "ordinary":
        assert stats["kou_di_pair"] > 0  # R23 pair multiplier seen


def _random_hand(rng, size):
    deck = [c for c in ref.CARD_TYPES for _ in range(2)]
    rng.shuffle(deck)
    return deck[:size], deck[size:]


def test_legal_plays_identical_on_random_situations():
    import sim

    rng = random.Random(2026)
    checked = 0
    for _ in range(20000):
        trump = rng.choice("shdc")
        hand, rest = _random_hand(rng, rng.randint(1, 27))
        if rng.random() < 0.2:
            lead = None
        elif rng.random() < 0.5 or len(hand) < 2:
            lead = [rest[0]]
        else:
            pairs = [c for c in set(rest) if rest.count(c) == 2]
            if not pairs:
                continue
            c = rng.choice(sorted(pairs))
            lead = [c, c]
        if lead is not None and len(hand) < len(lead):
            continue
        assert sim.legal_plays(hand, trump, lead) == ref.legal_plays(hand, trump, lead), \
            (hand, trump, lead)
        checked += 1
    assert checked > 15000


def test_trick_winner_identical_on_random_tricks():
    import sim

    rng = random.Random(7)
    for _ in range(20000):
        trump = rng.choice("shdc")
        deck = [c for c in ref.CARD_TYPES for _ in range(2)]
        rng.shuffle(deck)
        if rng.random() < 0.5:
            plays = [[deck[i]] for i in range(4)]
        else:
            # pair leads with a mix of pairs and unpaired follows
            pairs = [c for c in ref.CARD_TYPES]
            rng.shuffle(pairs)
            plays = []
            for i in range(4):
                if i == 0 or rng.random() < 0.5:
                    plays.append([pairs[i], pairs[i]])
                else:
                    plays.append([pairs[i], pairs[10 + i]])
        assert sim.trick_winner(plays, trump) == ref.trick_winner(plays, trump), (plays, trump)
