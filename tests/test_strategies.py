"""Built-in strategies: specs, tiers, information hiding (R9), the sampler, failures."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from sim import Deal, StrategyError
from sim.loops.runner import iter_records, make_seats
from sim.reference import oracle as ref
from strategies import make
from strategies.sampler import sample_hands


# --- specs ---------------------------------------------------------------------------------
def test_builtin_specs_and_params():
    assert make("pimc(samples=64, rollout=greedy)").spec() == "pimc"
    assert make("pimc(samples=8, rollout=random)").spec() == "pimc(samples=8, rollout=random)"
    assert make("ismcts(iterations=200, c=1.5)").spec() == "ismcts(iterations=200, c=1.5)"
    assert make("oracle").oracle and not make("greedy").oracle
    with pytest.raises(ValueError, match="rollout='smart'.*one of random, greedy"):
        make("pimc(rollout=smart)")
    with pytest.raises(ValueError, match="samples=0.*int in"):
        make("pimc(samples=0)")


# --- the two tiers agree, which also proves the kernels use only what the seat may know ---
# the seats' sets of kinds are ones other tests compile anyway ({random, greedy}; {greedy, pimc}
# in test_mixed_tiers_in_one_deal_match_python_tier; {random, greedy, pimc, ismcts} in
# tests/test_signature.py's "mixed"): a set of kinds no other test plays compiles a deal loop of
# its own (15-20 s of CPU cold). ismcts plays beside pimc, greedy and random here.
@pytest.mark.parametrize("specs, deals", [
    (["greedy", "random"], 30),
    (["pimc(samples=3)", "greedy"], 3),
    (["ismcts(iterations=25)", "random(show_prob=0.5)", "pimc(samples=3)", "greedy"], 2),
])
def test_python_tier_equals_compiled_tier(specs, deals):
    # the Python tier runs each kernel on the observation's masked state (no other hands,
    # no deck, no private give-backs): identical records mean no hidden information is used
    compiled = list(iter_records(8, 0, deals, make_seats(specs)))
    python = list(iter_records(8, 0, deals, make_seats(specs), python_tier=True))
    assert compiled == python


def test_oracle_marked_and_compiled_only():
    recs = list(iter_records(1, 0, 1, make_seats(["oracle", "greedy"])))
    assert recs[0]["oracle_seats"] == [0, 2]
    with pytest.raises(StrategyError, match="sees every hand"):
        list(iter_records(1, 0, 1, make_seats(["oracle", "greedy"]), python_tier=True))


# --- the sampler ------------------------------------------------------------------------------
def _play_to(seed, deal, stop, specs=("greedy", "random")):
    """A Deal advanced with the given strategies until ``stop(deal)`` holds at a play."""
    d = Deal(seed, deal)
    bots = make_seats(list(specs))
    for s, b in enumerate(bots):
        b.begin_deal(s, seed, deal)
    while not d.done:
        seat, kind = d.to_act
        if kind == "play" and stop(d):
            return d
        d.apply(bots[seat].choose(d.observation(seat), d.legal()))
    return None


def _history_legal(rec_like, hands_now, seat, trump):
    """Replay every trick with the reference engine: were all plays of the others legal?"""
    tricks, current, leader = rec_like
    start = [Counter(h) for h in hands_now]
    for t in tricks + ([{"leader": leader, "plays": current}] if current else []):
        for k, p in enumerate(t["plays"]):
            start[(t["leader"] + k) % 4].update(p)
    for t in tricks + ([{"leader": leader, "plays": current}] if current else []):
        lead = t["plays"][0]
        for k, p in enumerate(t["plays"]):
            s = (t["leader"] + k) % 4
            if s != seat:
                legal = ref.legal_plays(list(start[s].elements()), trump,
                                        None if k == 0 else lead)
                if tuple(ref.key_order(p, trump)) not in [tuple(x) for x in legal] \
                        and tuple(p) not in legal:
                    return False
            start[s].subtract(p)
    return True


def test_sampled_worlds_agree_with_everything_public():
    checked = 0
    for deal in range(12):
        depth = 8 + deal % 10
        d = _play_to(31, deal, lambda d, depth=depth: len(d.observation(0).tricks) >= depth)
        if d is None:
            continue
        seat = d.to_act.seat
        obs = d.observation(seat)
        trump = obs.trump
        played = Counter(c for t in obs.tricks for p in t["plays"] for c in p)
        played.update(c for p in obs.trick for c in p)
        sizes = [d.cards_left(s) for s in range(4)]
        voids = {}
        for t in obs.tricks + [{"leader": obs.leader, "plays": obs.trick}]:
            if not t["plays"]:
                continue
            g = ref.group(t["plays"][0][0], trump)
            for k, p in enumerate(t["plays"][1:], 1):
                s = (t["leader"] + k) % 4
                if sum(ref.group(c, trump) == g for c in p) < len(p):
                    voids.setdefault(s, set()).add(g)
        caller = obs.caller
        final_pair = obs.calls[-1]["pair"]
        caller_played = sum(c == final_pair for t in obs.tricks for k, p in enumerate(t["plays"])
                            if (t["leader"] + k) % 4 == caller for c in p)
        for world in sample_hands(obs, 40, key=deal):
            assert world[seat] == obs.hand or sorted(world[seat]) == sorted(obs.hand)
            assert [len(h) for h in world] == sizes  # hand sizes
            total = Counter(c for h in world for c in h) + played
            assert set(total.values()) == {2} and len(total) == 54  # every card twice (R1)
            for s, gs in voids.items():  # voids shown by not following
                assert not any(ref.group(c, trump) in gs for c in world[s])
            if caller != seat:  # the public final show: the caller holds that pair
                assert world[caller].count(final_pair) == 2 - caller_played
            assert _history_legal((obs.tricks, obs.trick, obs.leader), world, seat, trump)
            checked += 1
    assert checked >= 300


def test_sampler_is_uniform_over_consistent_worlds():
    # late in a deal, few unseen cards: count every consistent world by brute force (copies
    # of a card are different physical cards), then compare sampling frequencies (chi-square)
    d = None
    for deal in range(200):
        d = _play_to(77, deal, lambda d: d.cards_left(d.to_act.seat) == 3 and
                     d.observation(0).trick == [], specs=("random", "random"))
        if d is None:
            continue
        obs = d.observation(d.to_act.seat)
        if any(obs.tricks[i]["plays"][0] for i in range(len(obs.tricks))):
            break
    seat = d.to_act.seat
    obs = d.observation(seat)
    trump = obs.trump
    others = [s for s in range(4) if s != seat]
    sizes = [d.cards_left(s) for s in others]
    played = Counter(c for t in obs.tricks for p in t["plays"] for c in p)
    unseen = list((Counter({c: 2 for c in ref.CARD_TYPES}) - played - Counter(obs.hand))
                  .elements())
    copies = [(c, i) for i, c in enumerate(unseen)]  # physical copies
    counts = Counter()
    # enumerate assignments of the copies to the three other seats with the right sizes
    idx = list(range(len(copies)))
    for a in itertools.combinations(idx, sizes[0]):
        rest = [i for i in idx if i not in a]
        for b in itertools.combinations(rest, sizes[1]):
            c = [i for i in rest if i not in b]
            world = [None] * 4
            world[seat] = list(obs.hand)
            for s, part in zip(others, (a, b, c)):
                world[s] = [copies[i][0] for i in part]
            if _history_legal((obs.tricks, obs.trick, obs.leader), world, seat, trump):
                counts[tuple(tuple(sorted(world[s])) for s in others)] += 1
    assert len(counts) >= 3  # a case with a real choice
    n = 6000
    seen = Counter(tuple(tuple(sorted(w[s])) for s in others)
                   for w in sample_hands(obs, n, key=99))
    assert set(seen) <= set(counts)  # never an inconsistent world
    total = sum(counts.values())
    chi2 = sum((seen[k] - n * v / total) ** 2 / (n * v / total) for k, v in counts.items())
    dof = len(counts) - 1
    # 99.9% quantile of chi-square ~ dof + 3.1*sqrt(2 dof) + 7 (Wilson-Hilferty, generous)
    assert chi2 < dof + 3.1 * math.sqrt(2 * dof) + 7, (chi2, dof, counts, seen)


# --- failures are reported, finished results kept ---------------------------------------------
class _Raises(make("random").__class__):
    name = "raises"

    def choose(self, obs, legal):
        if obs.kind == "play" and len(obs.tricks) == 3:
            raise RuntimeError("boom")
        return super().choose(obs, legal)


class _Illegal(make("random").__class__):
    name = "illegal"

    def choose(self, obs, legal):
        if obs.kind == "play":
            return ("Zs",)
        return super().choose(obs, legal)


def test_strategy_that_raises_names_strategy_seat_seed_deal():
    got = []
    with pytest.raises(StrategyError) as e:
        for rec in iter_records(5, 0, 3, [_Raises(), make("random"), make("random"),
                                          make("random")]):
            got.append(rec)
    msg = str(e.value)
    assert "strategy 'raises' in seat 0 raised RuntimeError: boom" in msg
    assert "seed 5, deal 0" in msg and "--first-deal 0" in msg


def test_illegal_choice_is_reported():
    with pytest.raises(StrategyError, match=r"'illegal' in seat 1 returned an illegal choice "
                                            r"\(seed 2, deal 0\)"):
        list(iter_records(2, 0, 1, [make("random"), _Illegal(), make("random"),
                                    make("random")]))


def test_timeout_is_reported():
    import time

    class Slow(make("random").__class__):
        name = "slow"

        def choose(self, obs, legal):
            if obs.kind == "play":
                time.sleep(0.05)
            return super().choose(obs, legal)

    with pytest.raises(StrategyError, match="'slow' in seat 2 took .* over the 0.01 s limit"):
        list(iter_records(2, 0, 1, [make("random")] * 2 + [Slow(), make("random")],
                          timeout=0.01))


# --- plug-in discovery ---------------------------------------------------------------------
def test_entry_point_strategies_resolve_by_name(monkeypatch):
    from importlib.metadata import EntryPoint

    import strategies.registry as registry

    ep = EntryPoint(name="ep_cautious", value="strategies.example:Cautious",
                    group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points",
                        lambda group=None: [ep] if group == registry.ENTRY_POINT_GROUP else [])
    assert "ep_cautious" in registry.available()
    bot = registry.make("ep_cautious(greed=3)")
    assert type(bot).__name__ == "Cautious" and bot.greed == 3
    broken = EntryPoint(name="broken", value="no_such_module:Bot",
                        group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group=None: [broken])
    with pytest.raises(ValueError, match="strategy 'broken' from entry point "
                                         "'no_such_module:Bot' failed to load"):
        registry.make("broken")


def test_mixed_tiers_in_one_deal_match_python_tier():
    from strategies.example import Cautious

    seats = [Cautious(), make("greedy"), Cautious(), make("pimc(samples=2)")]
    mixed = list(iter_records(12, 0, 2, seats))  # compiled seats via kernels, Python via choose
    python = list(iter_records(12, 0, 2, seats, python_tier=True))
    assert mixed == python
