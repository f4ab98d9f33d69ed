"""The double-dummy solver (``sim.solve``) is exact: on seeded positions with ≤ 4 cards per hand
every legal play's score (R22 + R23) and settlement (R24) equal those of a brute-force minimax
written separately on the plain-Python reference engine (``sim.reference.minimax``: no
pruning). The positions come from random play of seeded deals, stopped at a trick start or a
few plays into a trick, under the default rules and under last-trick/settlement variants; the
sample is checked to include pair leads, each R19 follow case and last tricks won with a single
and with a pair. A few hand-built positions pin the reference's own answers.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

import sim
from sim.core import state as S
from sim.reference import minimax as M
from sim.reference.cards import card_points, group
from sim.reference.oracle import settle, trick_winner
from sim.solve import Solver

# a variant where a pair's last trick counts less than a single's, and other settlement bands
VARIANT = sim.Rules(kou_di_single=3, kou_di_pair=1, settle_step=10, settle_unit=3,
                    defender_cap=4)
VARIANT2 = sim.Rules(kou_di_single=1, kou_di_pair=7)


@dataclasses.dataclass
class Position:
    """A seeded position: the deal, every code applied to reach it, and the reference's view."""

    seed: int
    deal: int
    rules: sim.Rules
    codes: list[int]  # every choice applied from the deal's start (calls included)
    d: sim.Deal
    leader: int
    trick: list[tuple[str, ...]]  # plays of the current trick so far
    points: int  # attackers' points so far, from the tricks played (reference-scored)

    def where(self) -> str:
        return (f"seed={self.seed} deal={self.deal} rules={self.rules} after codes "
                f"{self.codes} (trick so far {self.trick}, leader {self.leader}, "
                f"hands {[self.d.hand(s) for s in range(4)]}, trump {self.d.trump})")


def follow_case(hand: list[str], trump: str, lead: tuple[str, ...]) -> str:
    """The R19 case of a follower facing a pair lead: a pair / two / one / no card in G."""
    g = group(lead[0], trump)
    in_g = Counter(c for c in hand if group(c, trump) == g)
    if any(n >= 2 for n in in_g.values()):
        return "R19a"
    n = sum(in_g.values())
    return "R19b" if n >= 2 else "R19c" if n == 1 else "R19d"


def make_position(seed: int, deal: int, rules: sim.Rules, rng: random.Random, kmax: int = 4
                  ) -> Position | None:
    """Random play (pairs mostly kept, and led often near the end) until the seat to lead holds
    ≤ k cards (k drawn 1..kmax), then 0-3 more plays; None for a void deal."""
    d = sim.Deal(seed=seed, deal=deal, rules=rules)
    k = rng.randint(1, kmax)
    extra = rng.choice((0, 0, 0, 1, 2, 3))
    codes: list[int] = []
    trick: list[tuple[str, ...]] = []
    leader = -1
    points = 0
    att: set[int] = set()
    left = None  # plays still to make once the stopping trick starts
    while not d.done:
        seat, kind = d.to_act
        if kind == "play" and not trick and left is None and d.cards_left(seat) <= k:
            left = extra
        if left == 0:
            break
        options = d.legal_codes()
        i = rng.randrange(len(options))
        if kind == "play":
            plays = d.legal()
            held = Counter(d.hand(seat))
            # keep pairs to the end mostly (plays that split no pair held), so that the
            # last tricks see pair leads and the R19 cases
            whole = [j for j, p in enumerate(plays)
                     if all(held[c] == 1 or p.count(c) == 2 for c in p)]
            if whole and rng.random() < 0.85:
                i = rng.choice(whole)
            if not trick:
                st = d.engine[0]
                leader = int(st[S.S_LEADER])
                caller = int(st[S.S_CALLER])
                att = {caller % 2, caller % 2 + 2}
                pairs = [j for j, p in enumerate(plays) if len(p) == 2]
                if pairs and rng.random() < (0.6 if d.cards_left(seat) <= k + 1 else 0.1):
                    i = rng.choice(pairs)
            trick.append(tuple(plays[i]))
            if left is not None:
                left -= 1
        codes.append(options[i])
        d.apply_code(options[i])
        if len(trick) == 4:
            winner = (leader + trick_winner(trick, d.trump)) % 4  # the reference's winner
            if winner in att:
                points += card_points(c for p in trick for c in p)
            trick = []
    if d.done:
        return None
    st = d.engine[0]
    assert int(st[S.S_POS]) == len(trick)
    if not trick:
        leader = d.to_act.seat
    assert int(st[S.S_LEADER]) == leader
    assert int(st[S.S_ATT_POINTS]) == points, "engine and reference disagree on the points"
    return Position(seed, deal, rules, codes, d, leader, trick, points)


def attackers(p: Position) -> tuple[int, int]:
    side = int(p.d.engine[0][S.S_CALLER]) % 2
    return side, side + 2


def positions(seed: int, n: int, rules: sim.Rules, kmax: int = 4) -> list[Position]:
    rng = random.Random(seed)
    out: list[Position] = []
    deal = 0
    while len(out) < n:
        p = make_position(seed, deal, rules, rng, kmax)
        deal += 1
        if p is not None:
            out.append(p)
    return out


def compare(p: Position, solver: Solver) -> list[str]:
    """Differences between the solver and the reference minimax on one position."""
    d = p.d
    hands = [d.hand(s) for s in range(4)]
    ref = M.choice_values(hands, d.trump, p.leader, p.trick, attackers(p), p.points,
                          dataclasses.asdict(p.rules))
    sol = solver.solve(d)
    assert sol.seat == d.to_act.seat
    want = {tuple(sorted(play)): (score, st) for play, score, st in ref}
    got = {tuple(sorted(c.cards)): (c.score, c.settlement) for c in sol.choices}
    errors = []
    if len(got) != len(sol.choices) or set(want) != set(got):
        errors.append(f"legal plays differ: reference {sorted(want)}, solver {sorted(got)}")
    for play in sorted(set(want) & set(got)):
        if want[play] != got[play]:
            errors.append(f"play {list(play)}: reference (score, settlement) {want[play]}, "
                          f"solver {got[play]}")
    return [f"{e} at {p.where()}" for e in errors]


@pytest.fixture(scope="module")
def solver() -> Solver:
    return Solver()


def coverage(sample: list[Position]) -> Counter:
    """What the sample exercises: pair leads, R19 cases, last tricks, mid-trick positions."""
    seen: Counter = Counter()
    for p in sample:
        d = p.d
        seat = d.to_act.seat
        hand = d.hand(seat)
        seen["mid-trick" if p.trick else "trick start"] += 1
        if p.trick and len(p.trick[0]) == 2:
            seen["pair lead"] += 1
            seen[follow_case(hand, d.trump, p.trick[0])] += 1
        if not p.trick and any(n == 2 for n in Counter(hand).values()):
            seen["pair lead choice"] += 1
        seen[f"{d.cards_left(seat)} cards"] += 1
    return seen


def run_sample(sample: list[Position], solver: Solver) -> None:
    errors = [e for p in sample for e in compare(p, solver)]
    assert not errors, f"{len(errors)} disagreements, first: " + "\n".join(errors[:5])


def test_solver_equals_reference_minimax_default_rules(solver: Solver) -> None:
    sample = positions(37, 800, sim.Rules())
    run_sample(sample, solver)
    seen = coverage(sample)
    assert seen["mid-trick"] >= 200 and seen["trick start"] >= 300, seen
    assert seen["pair lead"] >= 40 and seen["pair lead choice"] >= 40, seen
    for case in ("R19a", "R19b", "R19c", "R19d"):
        assert seen[case] >= 3, (case, seen)
    for n in (1, 2, 3, 4):
        assert seen[f"{n} cards"] >= 30, seen


@pytest.mark.parametrize("rules", [VARIANT, VARIANT2], ids=["single3-pair1", "single1-pair7"])
def test_solver_equals_reference_minimax_variants(solver: Solver, rules: sim.Rules) -> None:
    run_sample(positions(1037, 150, rules), solver)


@pytest.mark.slow
def test_solver_equals_reference_minimax_large() -> None:
    solver = Solver()
    for seed, rules in ((7, sim.Rules()), (8, VARIANT), (9, VARIANT2)):
        run_sample(positions(seed, 2000, rules), solver)
    run_sample(positions(10, 150, sim.Rules(), kmax=5), solver)  # some with 5 cards a hand


def test_last_trick_multipliers_are_exercised(solver: Solver) -> None:
    """Positions at the start of the last trick (one card per hand, or two led as a pair)
    where the attackers can win it, with a single and with a pair, under the default and a
    variant multiplier; each is compared with the solver too."""
    seen: Counter = Counter()
    for rules in (sim.Rules(), VARIANT):
        for p in positions(2037, 200, rules):
            d = p.d
            width = d.cards_left(d.to_act.seat)
            if p.trick or width > 2:
                continue
            run_sample([p], solver)
            hands = [d.hand(s) for s in range(4)]
            ref = M.choice_scores(hands, d.trump, p.leader, [], attackers(p), p.points,
                                  dataclasses.asdict(rules))
            for play, score in ref:
                if len(play) == width and score > p.points:  # the last trick, won (R23)
                    seen[("pair" if width == 2 else "single", rules.kou_di_pair)] += 1
    assert min(seen[(w, m)] for w in ("pair", "single") for m in (4, 1)) >= 2, seen


# hand-built positions with known answers (trump hearts; attackers 0 and 2) ----------------

HANDS = [["Ks", "Ks"], ["4d", "6d"], ["Tc", "Tc"], ["7s", "9s"]]


def test_reference_pair_lead_last_trick_counts_four_times() -> None:
    # R16 leads: Ks, or the pair; R19d: seat 1 (no spade) any two; R19a: seat 2 none; R19b:
    # seat 3 its two spades. The pair wins the last trick: 40 points, ×4 (R23) = 160. Led
    # singly, Ks wins both tricks: 20 points, then the last trick 20 × 2 = 40, in all 60.
    ref = M.choice_scores(HANDS, "h", 0, [], (0, 2))
    assert ref == [(("Ks",), 60), (("Ks", "Ks"), 160)]
    low = {"kou_di_single": 3, "kou_di_pair": 1}
    assert M.choice_scores(HANDS, "h", 0, [], (0, 2), 5, low) == [(("Ks",), 85),
                                                                   (("Ks", "Ks"), 45)]
    assert M.position_value(HANDS, "h", 0, [], (0, 2)) == 160
    values = M.choice_values(HANDS, "h", 0, [], (0, 2))
    assert values == [(("Ks",), 60, settle(60)[0]), (("Ks", "Ks"), 160, settle(160)[0])]
    assert settle(160)[0] == 6


def test_reference_trump_pair_beats_a_pair_lead() -> None:
    hands = [["Ks", "Ks"], ["2d", "2d"], ["Tc", "Tc"], ["7s", "9s"]]
    # R19d: seat 1 may play its trump pair 2d 2d, which wins a pair lead (R21): 0 for the
    # attackers; led singly, seat 1 trumps with a 2d (R18) and wins both tricks.
    assert M.choice_scores(hands, "h", 0, [], (0, 2)) == [(("Ks",), 0), (("Ks", "Ks"), 0)]
    # mid-trick: seat 1 to act over the pair lead, defending: the pair wins, anything else
    # gives the attackers 40 × 4
    ref = M.choice_scores([[], ["2d", "2d"], ["Tc", "Tc"], ["7s", "9s"]], "h", 0,
                          [["Ks", "Ks"]], (0, 2), 30)
    assert ref == [(("2d", "2d"), 30)]
    # attackers 1 and 3 instead: seat 1 takes the pair lead: 40 points × 4
    assert M.choice_scores([[], ["2d", "2d"], ["Tc", "Tc"], ["7s", "9s"]], "h", 0,
                           [["Ks", "Ks"]], (1, 3)) == [(("2d", "2d"), 160)]


def test_reference_rejects_impossible_positions() -> None:
    with pytest.raises(ValueError):
        M.choice_scores([["Ks"], ["Ks"], ["Ks"], ["4d"]], "h", 0, [], (0, 2))  # R1
    with pytest.raises(ValueError):
        M.choice_scores([["Ks"], ["4d", "6d"], ["Tc"], ["7s"]], "h", 0, [], (0, 2))
