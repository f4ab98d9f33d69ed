"""Tests of the plain-Python reference engine (sim/reference/oracle.py).

Every worked example of docs/rules.md is a test named after its ruling; the random-number
generator is pinned to values computed independently from docs/engine.md's formulas.
"""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest

from sim.reference import oracle as R
from sim.reference.oracle import (
    DEFAULT_RULES,
    RandomPlayer,
    Rng,
    card_from_id,
    card_id,
    card_points,
    group,
    is_trump,
    key,
    legal_givebacks,
    legal_plays,
    legal_shows,
    level,
    parse_card,
    play_deal,
    reference_deck,
    score_tricks,
    settle,
    strength,
    trick_winner,
)
from sim.reference.validator import Violation, validate_record

H = "h"  # the worked examples of docs/rules.md use trump suit hearts
ALL_TYPES = [card_from_id(i) for i in range(54)]


# ---------------------------------------------------------------------------------------
# Shared fixtures: a few played deals (computed once, they take a few ms each)
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def deals() -> list:
    """Random deals, some with eager showers (many overrides, R8)."""
    recs = [play_deal(2024, d) for d in range(12)]
    eager = [RandomPlayer(1.0), RandomPlayer(0.5), RandomPlayer(1.0), RandomPlayer(0.5)]
    recs += [play_deal(99, d, players=eager, seat_names=["random(show_prob=1.0)",
                                                          "random(show_prob=0.5)"] * 2)
             for d in range(6)]
    return recs


def first_with_override(recs: list) -> dict:
    return next(r for r in recs if any(c["took_from"] is not None for c in r["calls"]))


# ---------------------------------------------------------------------------------------
# Notation (R1–R3) and engine.md's card ids and keys
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, card", [
    ("Ah", "Ah"), ("ah", "Ah"), ("AH", "Ah"), ("10h", "Th"), ("th", "Th"), ("Td", "Td"),
    ("5s", "5s"), ("A♥", "Ah"), ("10♣", "Tc"), ("k♦", "Kd"), ("q♠", "Qs"), ("bj", "BJ"),
    ("BJ", "BJ"), ("Sj", "SJ"), (" Kh ", "Kh"),
])
def test_R2_parse_card_canonical(text: str, card: str) -> None:
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["", "X", "1h", "11h", "Ax", "Kh5", "J", "hA", "RJ", 5, None])
def test_R2_parse_card_rejects_with_quote(text: object) -> None:
    with pytest.raises(ValueError) as err:
        parse_card(text)
    assert repr(text) in str(err.value)


def test_card_ids_engine_md() -> None:
    assert [card_from_id(i) for i in range(8)] == ["As", "Ah", "Ad", "Ac", "2s", "2h", "2d", "2c"]
    assert [card_from_id(i) for i in range(48, 54)] == ["Ks", "Kh", "Kd", "Kc", "SJ", "BJ"]
    assert card_id("Th") == 4 * 9 + 1
    assert all(card_id(card_from_id(i)) == i for i in range(54))
    with pytest.raises(ValueError):
        card_from_id(54)


def test_key_table_hearts() -> None:
    # engine.md: side suits s, d, c (hearts left out), trump suit,
    # 付2, 主2, 付3, 主3, 付5, SJ, BJ, 主5
    expected = {
        "4s": 0, "6s": 1, "Ts": 5, "As": 9, "4d": 10, "Ad": 19, "4c": 20, "Ac": 29,
        "4h": 30, "Th": 35, "Ah": 39, "2s": 40, "2d": 41, "2c": 42, "2h": 43,
        "3s": 44, "3d": 45, "3c": 46, "3h": 47, "5s": 48, "5d": 49, "5c": 50,
        "SJ": 51, "BJ": 52, "5h": 53,
    }
    for card, k in expected.items():
        assert key(card, H) == k, card


@pytest.mark.parametrize("trump", list("shdc"))
def test_key_is_a_bijection_in_group_then_strength_order(trump: str) -> None:
    by_key = sorted(ALL_TYPES, key=lambda c: key(c, trump))
    assert [key(c, trump) for c in by_key] == list(range(54))
    # key order is group order (side suits, then trump) and R13 strength inside a group
    for a, b in zip(by_key, by_key[1:]):
        if group(a, trump) == group(b, trump):
            assert strength(a, trump) <= strength(b, trump)
        else:
            assert group(a, trump) != "trump"


@pytest.mark.parametrize("trump", list("shdc"))
def test_R12_forty_eight_trumps(trump: str) -> None:
    deck = ALL_TYPES * 2
    assert sum(is_trump(c, trump) for c in deck) == 48
    for suit in "shdc":
        if suit != trump:
            assert sum(group(c, trump) == suit for c in deck) == 20


def test_R13_strength_order() -> None:
    order = ["5h", "BJ", "SJ", "5s", "3h", "3s", "2h", "2s",
             "Ah", "Kh", "Qh", "Jh", "Th", "9h", "8h", "7h", "6h", "4h"]
    values = [strength(c, H) for c in order]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    # the three 付5 / 付3 / 付2 are equally strong
    for rank in "532":
        assert len({strength(rank + s, H) for s in "sdc"}) == 1
    # any trump beats any side card
    assert min(strength(c, H) for c in ALL_TYPES if is_trump(c, H)) > \
        max(strength(c, H) for c in ALL_TYPES if not is_trump(c, H))
    side = ["As", "Ks", "Qs", "Js", "Ts", "9s", "8s", "7s", "6s", "4s"]
    assert [strength(c, H) for c in side] == sorted((strength(c, H) for c in side), reverse=True)


def test_R3_points() -> None:
    assert card_points(["5s", "Th", "Kd", "Ac", "BJ", "2h"]) == 25
    assert card_points(ALL_TYPES) == 100
    assert card_points(ALL_TYPES * 2) == 200


# ---------------------------------------------------------------------------------------
# Worked examples of docs/rules.md (trump hearts)
# ---------------------------------------------------------------------------------------

def test_R18_follow_single_fu5_is_trump() -> None:
    # R14: 5s is a 付5, a trump, not a spade
    assert group("5s", H) == "trump"
    assert legal_plays(["Ks", "4s", "5s", "BJ"], H, ["7s"]) == [("4s",), ("Ks",)]


def test_R19b_no_club_pair_forces_two_strongest() -> None:
    # 2c is a trump, so the clubs are Ac Kc 6c with no pair
    assert legal_plays(["Ac", "Kc", "6c", "6d", "2c"], H, ["9c", "9c"]) == [("Kc", "Ac")]


def test_R19d_void_may_play_trump_pair_and_R21_it_wins() -> None:
    plays = legal_plays(["Qh", "Qh", "4s", "Ad"], H, ["9c", "9c"])
    assert plays == [("4s", "Ad"), ("4s", "Qh"), ("Ad", "Qh"), ("Qh", "Qh")]
    assert trick_winner([["9c", "9c"], ["Qh", "Qh"], ["Tc", "4c"], ["4s", "Ad"]], H) == 1
    # unless a stronger trump pair comes later
    assert trick_winner([["9c", "9c"], ["Qh", "Qh"], ["Kh", "Kh"], ["4s", "Ad"]], H) == 2


def test_R19b_trump_pair_lead_equal_fu5_forced() -> None:
    assert legal_plays(["5d", "5c", "3s", "Ah"], H, ["4h", "4h"]) == [("5d", "5c")]


def test_R20_equal_fu5_first_wins() -> None:
    assert trick_winner([["5d"], ["5c"], ["Ah"], ["5s"]], H) == 0


def test_R23_last_trick_pair_times_four() -> None:
    plays = [["Kc", "Kc"], ["Tc", "4c"], ["9c", "6c"], ["7c", "7c"]]
    assert trick_winner(plays, H) == 0
    tricks = [{"leader": 0, "plays": plays, "winner": 0}]
    assert score_tricks(tricks, [0, 2]) == (30, 4, 120)


# ---------------------------------------------------------------------------------------
# R16–R19: leads and follows, including ties
# ---------------------------------------------------------------------------------------

def test_R16_leads_singles_then_pairs_by_key() -> None:
    # Readings: both copies of Kh are one single play
    assert legal_plays(["Kh", "Kh", "4s", "BJ", "5h"], H) == [
        ("4s",), ("Kh",), ("BJ",), ("5h",), ("Kh", "Kh")]


def test_R16_lead_must_be_single_or_pair() -> None:
    with pytest.raises(ValueError, match="R16"):
        legal_plays(["4s"], H, ["9c", "8c"])
    with pytest.raises(ValueError, match="R16"):
        legal_plays(["4s"], H, ["9c", "9c", "9c"])


def test_R1_more_than_two_copies_rejected() -> None:
    with pytest.raises(ValueError, match="R1"):
        legal_plays(["9c", "9c"], H, ["9c"])
    with pytest.raises(ValueError, match="R1"):
        legal_plays(["9c", "9c", "9c"], H)


def test_R18_void_any_card() -> None:
    assert legal_plays(["Ah", "4d", "BJ"], H, ["Kc"]) == [("4d",), ("Ah",), ("BJ",)]


def test_R18_trump_lead_follow_with_any_trump() -> None:
    assert legal_plays(["2c", "4h", "As", "SJ"], H, ["5h"]) == [("4h",), ("2c",), ("SJ",)]


def test_R19a_must_play_a_pair_in_group() -> None:
    hand = ["6c", "6c", "4c", "4c", "Ac", "Kh", "Kh"]
    assert legal_plays(hand, H, ["9c", "9c"]) == [("4c", "4c"), ("6c", "6c")]


def test_R19a_trump_pair_lead_any_trump_pair() -> None:
    hand = ["5d", "5d", "SJ", "SJ", "4h", "Ac", "Ac"]
    assert legal_plays(hand, H, ["7h", "7h"]) == [("5d", "5d"), ("SJ", "SJ")]


def test_R19b_choose_two_of_three_fu5() -> None:
    # Readings: with 5s 5d 5c the strongest trumps, any two of the three
    assert legal_plays(["5s", "5d", "5c", "Ah"], H, ["4h", "4h"]) == [
        ("5s", "5d"), ("5s", "5c"), ("5d", "5c")]


def test_R19b_fu3_tie_for_second() -> None:
    # 3s is the strongest, then one of the equal 付2s
    assert legal_plays(["3s", "2d", "2c", "Ah"], H, ["4h", "4h"]) == [
        ("2d", "3s"), ("2c", "3s")]
    assert legal_plays(["3s", "3d", "2h", "4h"], H, ["6h", "6h"]) == [("3s", "3d")]


def test_R19b_zhu5_then_fu5_tie() -> None:
    assert legal_plays(["5h", "5s", "5d", "4h"], H, ["Kh", "Kh"]) == [
        ("5s", "5h"), ("5d", "5h")]
    assert legal_plays(["5h", "5s", "BJ", "2h"], H, ["Kh", "Kh"]) == [("BJ", "5h")]


def test_R19c_exactly_one_card_of_group() -> None:
    assert legal_plays(["Ac", "Kh", "4s", "4s"], H, ["9c", "9c"]) == [
        ("4s", "Ac"), ("Ac", "Kh")]


def test_R19d_any_two_cards_interleaved_by_key() -> None:
    assert legal_plays(["4s", "4s", "Kd", "BJ"], H, ["9c", "9c"]) == [
        ("4s", "4s"), ("4s", "Kd"), ("4s", "BJ"), ("Kd", "BJ")]


def test_R19_short_hand_has_no_pair_play() -> None:
    assert legal_plays(["4s"], H, ["9c", "9c"]) == []


def _brute_force_plays(hand: list, trump: str, lead: list) -> list:
    """R18/R19 restated: filter every sub-multiset of the hand, then order as engine.md.

    R19b is restated as "both cards in G and no G card left in hand is stronger than the
    weaker of the two", which is the same as "the two strongest, ties free".
    """
    held = Counter(hand)
    g = group(lead[0], trump)
    in_g = [c for c in held.elements() if group(c, trump) == g]
    if len(lead) == 1:
        cands = {(c,) for c in held}
        keep = [p for p in cands if not in_g or group(p[0], trump) == g]
    else:
        cands = {tuple(sorted((a, b), key=lambda c: key(c, trump)))
                 for a in held for b in held if a != b or held[a] == 2}
        g_pairs = [c for c in set(in_g) if held[c] == 2]
        if g_pairs:
            keep = [p for p in cands if p[0] == p[1] and group(p[0], trump) == g]
        elif len(in_g) >= 2:
            keep = []
            for p in cands:
                if all(group(c, trump) == g for c in p):
                    rest = (held - Counter(p)).elements()
                    weaker = min(strength(c, trump) for c in p)
                    if all(strength(z, trump) <= weaker for z in rest
                           if group(z, trump) == g):
                        keep.append(p)
        elif len(in_g) == 1:
            keep = [p for p in cands if in_g[0] in p]
        else:
            keep = list(cands)
    return sorted(keep, key=lambda p: [key(c, trump) for c in p])


def test_R18_R19_match_brute_force_on_random_hands() -> None:
    import random
    rnd = random.Random(20240601)
    for i in range(600):
        trump = rnd.choice("shdc")
        deck = ALL_TYPES * 2
        if i % 3 == 0:  # trump-heavy small hands: R19b ties among 付5/付3/付2 are common
            side = [c for c in deck if not is_trump(c, trump)]
            deck = [c for c in deck if is_trump(c, trump)] + rnd.sample(side, 6)
        rnd.shuffle(deck)
        n = rnd.randint(1, 27) if i % 3 else rnd.randint(2, 7)
        hand, rest = deck[:n], deck[n:]
        lead_card = rnd.choice(rest)
        rest.remove(lead_card)
        lead = [lead_card, lead_card] if lead_card in rest and rnd.random() < 0.5 else [lead_card]
        assert legal_plays(hand, trump, lead) == _brute_force_plays(hand, trump, lead), \
            (hand, trump, lead)


# ---------------------------------------------------------------------------------------
# R20–R21: trick winners
# ---------------------------------------------------------------------------------------

def test_R20_trump_beats_led_suit_and_discards_lose() -> None:
    assert trick_winner([["Ac"], ["4c"], ["2d"], ["Kc"]], H) == 2
    assert trick_winner([["Tc"], ["Ac"], ["Ad"], ["Kc"]], H) == 1  # Ad is a discard


def test_R20_trump_lead_strongest_trump() -> None:
    assert trick_winner([["4h"], ["5c"], ["5h"], ["BJ"]], H) == 2


def test_R21_unpaired_trumps_never_win() -> None:
    assert trick_winner([["4c", "4c"], ["5s", "5d"], ["BJ", "5h"], ["Ad", "Ad"]], H) == 0


def test_R21_other_side_pair_never_wins() -> None:
    assert trick_winner([["4c", "4c"], ["Ad", "Ad"], ["6c", "6c"], ["Ks", "Ks"]], H) == 2


def test_R21_equal_trump_pairs_first_wins() -> None:
    assert trick_winner([["4c", "4c"], ["5c", "5c"], ["5d", "5d"], ["Ah", "Ah"]], H) == 1


# ---------------------------------------------------------------------------------------
# R6–R8: shows and give-backs
# ---------------------------------------------------------------------------------------

def test_R6_shows_ascending_by_id_no_jokers() -> None:
    hand = ["Kh", "Kh", "As", "As", "BJ", "BJ", "7d", "Qc"]
    assert legal_shows(hand) == ["As", "Kh"]


def test_R6_show_must_strictly_outrank() -> None:
    hand = ["Kh", "Kh", "Qd", "Qd", "4s", "4s"]
    assert legal_shows(hand, "Qs") == ["Kh"]        # Qd only equals Qs
    assert legal_shows(hand, ("Js", "Js")) == ["Qd", "Kh"]
    assert legal_shows(hand, "Kd") == []            # nothing outranks a pair of K
    assert legal_shows(["As", "As"], None) == ["As"]  # A is the lowest show, still a show


def test_R8_givebacks_exclude_shown_pair_allow_taken() -> None:
    # the overrider showed Kh Kh and just took 4s 4s
    hand = ["Kh", "Kh", "4s", "4s", "7d"]
    assert legal_givebacks(hand, "Kh") == [("4s", "4s"), ("4s", "7d")]


def test_R8_givebacks_canonical_order_by_id() -> None:
    hand = ["Kh", "Kh", "BJ", "Ac", "2s", "2s"]
    assert legal_givebacks(hand, "Kh") == [
        ("Ac", "2s"), ("Ac", "BJ"), ("2s", "2s"), ("2s", "BJ")]


def test_R8_giveback_needs_the_shown_pair() -> None:
    with pytest.raises(ValueError, match="R8"):
        legal_givebacks(["Kh", "4s"], "Kh")


# ---------------------------------------------------------------------------------------
# R24–R25: settlement and skill levels
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("score, change", [
    (120, (2, -2)), (140, (4, -4)), (80, (-2, 2)), (60, (-4, 4)), (0, (-10, 10)),
    (85, (0, 0)), (100, (0, 0)), (119, (0, 0)), (81, (0, 0)), (139, (2, -2)), (79, (-2, 2)),
    (20, (-8, 8)), (200, (10, -10)), (240, (14, -14)), (440, (34, -34)),
])
def test_R24_settlement(score: int, change: tuple) -> None:
    assert settle(score) == change


def test_R24_variants() -> None:
    rules = {"settle_step": 10, "settle_unit": 1, "defender_cap": 3}
    assert settle(130, rules) == (3, -3)
    assert settle(0, rules) == (-3, 3)
    with pytest.raises(ValueError, match="unknown"):
        settle(100, {"kitty": 8})


@pytest.mark.parametrize("skill, title", [
    (-1, "幼儿园"), (0, "小学生"), (199, "小学生"), (200, "初中生"), (499, "初中生"),
    (500, "高中生"), (959, "高中生"), (960, "大专生"), (1599, "大专生"), (1600, "本科生"),
    (2599, "本科生"), (2600, "研究生"), (4200, "博士"), (6399, "博士"), (6400, "博士后"),
    (9800, "讲师"), (15000, "副教授"), (22600, "教授"), (34000, "博士导师"), (51200, "大师"),
    (79999, "大师"), (80000, "宗师"), (10 ** 9, "宗师"),
])
def test_R25_levels(skill: int, title: str) -> None:
    assert level(skill) == title


def test_R25_newcomer_is_benkesheng() -> None:
    assert level(DEFAULT_RULES["start_skill"]) == "本科生"


def test_R23_last_trick_single_times_two_and_defender_win() -> None:
    first = {"plays": [["Kd"], ["4d"], ["6d"], ["7d"]], "winner": 1}
    last = {"plays": [["5h"], ["Ts"], ["4s"], ["6s"]], "winner": 0}
    assert score_tricks([first, last], [0, 2]) == (15, 2, 30)
    assert score_tricks([first, last], [1, 3]) == (10, 1, 10)


# ---------------------------------------------------------------------------------------
# Random numbers (engine.md), pinned to independently computed values
# ---------------------------------------------------------------------------------------

M64 = (1 << 64) - 1


def _mix64_by_hand(z: int) -> int:
    # engine.md's mix64 written with a mask instead of "% M"
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_rng_mix64_is_splitmix64() -> None:
    # the published first output of SplitMix64 seeded with 0 checks the mix constants
    assert _mix64_by_hand(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert R._mix64(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF


def test_rng_first_draws_seed0_deal0_stream0() -> None:
    # key = mix64(mix64(mix64(0 ^ G) ^ 0) ^ 0); draw i = mix64(key + (i+1) * G)
    g = 0x9E3779B97F4A7C15
    k = _mix64_by_hand(_mix64_by_hand(_mix64_by_hand(0 ^ g) ^ 0) ^ 0)
    assert k == 3746585686858627171
    expected = [3235846975224723415, 8729291162158418770, 12064261574156349136,
                2545834451347074147]
    assert [_mix64_by_hand((k + (i + 1) * g) & M64) for i in range(4)] == expected
    rng = Rng(0, 0, 0)
    assert rng.key == k
    assert [rng.next() for _ in range(4)] == expected
    assert rng.draws == 4


def test_rng_other_streams_pinned() -> None:
    assert [Rng(0, 0, 1).next() for _ in range(1)] == [17908105676587931258]
    r = Rng(12345, 7, 0)
    assert r.key == 14091258501736475701
    assert [r.next(), r.next()] == [494338108522718134, 13677927450459170280]


def test_rng_bounded() -> None:
    # bounded(r, n) = ((r >> 32) * n) >> 32, from the pinned draws above
    rng = Rng(0, 0, 0)
    assert [rng.bounded(108) for _ in range(4)] == [18, 51, 70, 14]
    assert [((r >> 32) * 108) >> 32 for r in (3235846975224723415, 8729291162158418770)] == \
        [18, 51]


def test_rng_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        Rng(-1, 0, 0)
    with pytest.raises(ValueError):
        Rng(0, 2 ** 63, 0)
    Rng(2 ** 64 - 1, 2 ** 63 - 1, 4)


def test_shuffle_seed0_deal0() -> None:
    # first shuffle computed independently (Fisher-Yates 107..1 on deck[i] = i // 2)
    ids = [41, 2, 34, 36, 43, 43, 46, 49, 52, 1, 10, 11, 30, 11, 1, 9]
    deck = reference_deck(0, 0)
    assert [card_id(c) for c in deck[:16]] == ids
    assert Counter(deck) == Counter(ALL_TYPES * 2)


def test_redeal_continues_card_stream() -> None:
    rng = Rng(5, 1, 0)
    R._shuffle(rng)
    assert rng.draws == 107
    assert R._shuffle(rng) == reference_deck(5, 1, redeals=1)
    assert reference_deck(5, 1, 1) != reference_deck(5, 1, 0)


# ---------------------------------------------------------------------------------------
# The random strategy (engine.md)
# ---------------------------------------------------------------------------------------

def test_random_player_forced_choice_draws_nothing() -> None:
    rng = Rng(1, 2, 3)
    assert RandomPlayer().choose("play", [("4s",)], rng) == ("4s",)
    assert rng.draws == 0


def test_random_player_play_uses_bounded() -> None:
    choices = [(c,) for c in ["4s", "6s", "7s", "8s", "9s"]]
    r = Rng(1, 2, 3).next()
    assert RandomPlayer().choose("play", choices, Rng(1, 2, 3)) == choices[((r >> 32) * 5) >> 32]


def test_random_player_show_threshold() -> None:
    for seed in range(40):
        rng, probe = Rng(seed, 0, 1), Rng(seed, 0, 1)
        r = probe.next()
        got = RandomPlayer(0.25).choose("show", [None, "As", "Kh"], rng)
        if (r >> 32) < 2 ** 30:
            assert got == ["As", "Kh"][((probe.next() >> 32) * 2) >> 32]
            assert rng.draws == 2
        else:
            assert got is None and rng.draws == 1


# ---------------------------------------------------------------------------------------
# Full deals: invariants, determinism, validation
# ---------------------------------------------------------------------------------------

def test_record_fields(deals: list) -> None:
    for rec in deals:
        assert list(rec) == list(R.FIELDS)
        assert rec["format"] == "shuangkou-record/1"
        assert rec["rules"] == DEFAULT_RULES
        assert json.loads(json.dumps(rec)) == rec


def test_full_deal_invariants(deals: list) -> None:
    for rec in deals:
        assert not rec["void"]
        # R5, R8: 27 cards a hand; the hands are the deck
        assert [len(h) for h in rec["hands"]] == [27] * 4
        assert Counter(c for h in rec["hands"] for c in h) == Counter(rec["deck"])
        assert Counter(rec["deck"]) == Counter(ALL_TYPES * 2)
        # R6/R7: each show strictly outranks the previous; rounds never go back
        ranks = [R.RANKS.index(c["pair"][0]) for c in rec["calls"]]
        assert ranks == sorted(set(ranks))
        for a, b in zip(rec["calls"], rec["calls"][1:]):
            assert a["round"] <= b["round"]
            if a["round"] == b["round"] < 27:
                assert a["seat"] < b["seat"]
        # R10
        last = rec["calls"][-1]
        assert rec["caller"] == last["seat"] and rec["trump"] == last["pair"][1]
        assert rec["attackers"] == sorted([rec["caller"], (rec["caller"] + 2) % 4])
        # R16, R17: every card played exactly once, the right leaders
        played = Counter()
        leader = (rec["caller"] + 1) % 4
        for trick in rec["tricks"]:
            assert trick["leader"] == leader
            sizes = {len(p) for p in trick["plays"]}
            assert len(sizes) == 1 and sizes <= {1, 2}
            for p in trick["plays"]:
                played.update(p)
                assert p == sorted(p, key=lambda c: key(c, rec["trump"]))  # key order
            leader = trick["winner"]
        assert played == Counter(ALL_TYPES * 2)
        assert sum(t["points"] for t in rec["tricks"]) == 200
        # R22-R24
        att = sum(t["points"] for t in rec["tricks"] if t["winner"] in rec["attackers"])
        assert rec["attacker_points"] == att
        assert sum(rec["settlement"]) == 0
        change = settle(rec["attacker_score"])
        assert rec["settlement"] == [change[0] if s in rec["attackers"] else change[1]
                                     for s in range(4)]


def test_overrides_happen_and_replay(deals: list) -> None:
    rec = first_with_override(deals)
    for c in rec["calls"]:
        if c["took_from"] is not None:
            assert c["took_from"] != c["seat"] and len(c["gave"]) == 2
            assert c["pair"] not in c["gave"]
        else:
            assert c["gave"] is None


def test_determinism() -> None:
    a, b = play_deal(7, 3), play_deal(7, 3)
    assert a == b
    assert json.dumps(a) == json.dumps(b)
    assert play_deal(7, 4) != a


def test_validate_played_deals_clean(deals: list) -> None:
    for rec in deals:
        assert validate_record(rec) == []
        assert validate_record(json.loads(json.dumps(rec))) == []


class Shy(RandomPlayer):
    """Passes its first ``n`` show decisions, to force redeals (R11)."""

    def __init__(self, n: int) -> None:
        super().__init__(1.0)
        self.left = n

    def choose(self, kind, choices, rng):  # noqa: ANN001, ANN201
        if kind == "show" and self.left > 0:
            self.left -= 1
            return None
        return super().choose(kind, choices, rng)


def test_R11_redeal_and_void() -> None:
    rec = play_deal(3, 0, players=[Shy(60) for _ in range(4)])
    assert rec["redeals"] >= 1 and not rec["void"]
    assert rec["deck"] == reference_deck(3, 0, rec["redeals"])
    assert validate_record(rec) == []

    void = play_deal(3, 0, players=[RandomPlayer(0.0) for _ in range(4)])
    assert void["void"] and void["redeals"] == 3
    assert void["calls"] == [] and void["tricks"] == []
    assert void["caller"] is None and void["attacker_score"] is None
    assert void["settlement"] == [0, 0, 0, 0]
    assert void["deck"] == reference_deck(3, 0, 3)
    assert validate_record(void) == []
    assert play_deal(3, 0, players=[RandomPlayer(0.0)] * 4, rules={"max_redeals": 0})[
        "redeals"] == 0

    bad = dict(void, settlement=[2, -2, 2, -2])
    assert [v.message for v in validate_record(bad)] == [
        "void deal with settlement [2, -2, 2, -2], expected all zero (R11)"]
    bad = dict(void, void=False)
    assert any("R11" in v.message for v in validate_record(bad))


# --- corrupted records: each reported where it is -------------------------------------

def test_violation_str() -> None:
    v = Violation(3, 12, 2, "illegal play ['Ks']: holds a club pair, must play a pair (R19a)")
    assert str(v) == ("deal 3, trick 13, seat 2: illegal play ['Ks']: holds a club pair, "
                      "must play a pair (R19a)")
    assert str(Violation(3, None, None, "x")) == "deal 3: x"
    assert str(Violation(None, None, 1, "x")) == "record, seat 1: x"


def test_corrupt_winner(deals: list) -> None:
    rec = copy.deepcopy(deals[0])
    t = rec["tricks"][3]
    t["winner"] = (t["winner"] + 1) % 4
    (v,) = validate_record(rec)
    assert (v.deal, v.trick, v.seat) == (rec["deal"], 3, None)
    assert "R20" in v.message


def test_corrupt_points_and_scores(deals: list) -> None:
    rec = copy.deepcopy(deals[1])
    rec["tricks"][5]["points"] += 5
    rec["attacker_score"] += 20
    rec["last_trick_multiplier"] = 7
    rec["settlement"][2] += 2
    found = {(v.trick, v.seat, v.message.split()[0]) for v in validate_record(rec)}
    assert found == {(5, None, "points"), (None, None, "attacker_score"),
                     (None, None, "last_trick_multiplier"), (None, 2, "settlement")}


def _illegal_single_follow(rec: dict) -> tuple:
    """A (trick, k, replacement) where the follower could follow a single lead but didn't."""
    hands = [Counter(h) for h in rec["hands"]]
    t = rec["trump"]
    for ti, trick in enumerate(rec["tricks"]):
        lead = trick["plays"][0]
        for k, play in enumerate(trick["plays"]):
            seat = (trick["leader"] + k) % 4
            if k and len(lead) == 1:
                g = group(lead[0], t)
                off = sorted(c for c in +hands[seat] if group(c, t) != g)
                if group(play[0], t) == g and off:
                    return ti, k, off[0]
            hands[seat] -= Counter(play)
    raise AssertionError("no such trick")


def test_corrupt_illegal_play_R18(deals: list) -> None:
    rec = copy.deepcopy(deals[2])
    ti, k, card = _illegal_single_follow(rec)
    rec["tricks"][ti]["plays"][k] = [card]
    seat = (rec["tricks"][ti]["leader"] + k) % 4
    v = validate_record(rec)[0]
    assert (v.deal, v.trick, v.seat) == (rec["deal"], ti, seat)
    assert v.message.startswith(f"illegal play ['{card}']") and v.message.endswith("(R18)")


def test_corrupt_play_not_held(deals: list) -> None:
    rec = copy.deepcopy(deals[3])
    trick = rec["tricks"][0]
    leader_hand = Counter(rec["hands"][trick["leader"]])
    absent = next(c for c in ALL_TYPES if c not in leader_hand)
    trick["plays"][0] = [absent]
    v = validate_record(rec)[0]
    assert (v.trick, v.seat) == (0, trick["leader"])
    assert "does not hold" in v.message


def _hands_before(rec: dict, ti: int) -> list:
    hands = [Counter(h) for h in rec["hands"]]
    for trick in rec["tricks"][:ti]:
        for k, play in enumerate(trick["plays"]):
            hands[(trick["leader"] + k) % 4] -= Counter(play)
    return hands


def test_corrupt_play_wrong_size_R16(deals: list) -> None:
    rec = copy.deepcopy(deals[4])
    ti = next(i for i, t in enumerate(rec["tricks"]) if len(t["plays"][0]) == 1)
    trick = rec["tricks"][ti]
    seat = (trick["leader"] + 1) % 4
    held = _hands_before(rec, ti)[seat] - Counter(trick["plays"][1])
    extra = next(iter(held))
    trick["plays"][1] = sorted(trick["plays"][1] + [extra], key=lambda c: key(c, rec["trump"]))
    v = validate_record(rec)[0]
    assert (v.trick, v.seat) == (ti, seat) and "(R16)" in v.message


def test_corrupt_first_leader_R17(deals: list) -> None:
    rec = copy.deepcopy(deals[5])
    rec["tricks"][0]["leader"] = rec["caller"]
    v = validate_record(rec)[0]
    assert (v.trick, v.seat) == (0, None) and "R17" in v.message


def test_corrupt_hands(deals: list) -> None:
    rec = copy.deepcopy(deals[6])
    h0, h1 = rec["hands"][0], rec["hands"][1]
    i = next(i for i in range(27) if h0[i] not in h1)
    h0[i], h1[0] = h1[0], h0[i]
    found = [(v.trick, v.seat) for v in validate_record(rec) if "replayed hand" in v.message]
    assert found == [(None, 0), (None, 1)]


def test_corrupt_deck_shuffle(deals: list) -> None:
    rec = copy.deepcopy(deals[7])
    deck = rec["deck"]
    j = next(j for j in range(1, 108) if deck[j] != deck[0])
    deck[0], deck[j] = deck[j], deck[0]
    vs = validate_record(rec)
    assert (vs[0].trick, vs[0].seat) == (None, None)
    assert "reference shuffle" in vs[0].message
    assert not any("reference shuffle" in v.message for v in validate_record(rec, False))


def test_corrupt_deck_not_two_packs(deals: list) -> None:
    rec = copy.deepcopy(deals[7])
    rec["deck"][0] = "BJ" if rec["deck"][0] != "BJ" else "SJ"
    (v,) = validate_record(rec)
    assert "(R1)" in v.message


def test_corrupt_giveback_includes_shown_pair(deals: list) -> None:
    rec = copy.deepcopy(first_with_override(deals))
    n, call = next((n, c) for n, c in enumerate(rec["calls"]) if c["took_from"] is not None)
    call["gave"] = [call["pair"], call["gave"][1]]
    v = validate_record(rec)[0]
    assert (v.trick, v.seat) == (None, call["seat"])
    assert v.message.startswith(f"call {n} (round {call['round']}): gave") and "(R8)" in v.message


def test_corrupt_show_not_higher_R6(deals: list) -> None:
    rec = copy.deepcopy(first_with_override(deals))
    n = next(n for n, c in enumerate(rec["calls"]) if c["took_from"] is not None)
    rec["calls"][n]["pair"] = rec["calls"][n - 1]["pair"]  # an equal rank never overrides
    msgs = [(v.seat, v.message) for v in validate_record(rec)]
    assert any(s == rec["calls"][n]["seat"] and "does not outrank" in m and "(R6)" in m
               for s, m in msgs)


def test_corrupt_call_order_R7(deals: list) -> None:
    rec = copy.deepcopy(deals[8])
    rec["calls"].insert(0, dict(rec["calls"][0]))  # the same seat twice in one round
    assert any("(R7)" in v.message or "(R6)" in v.message for v in validate_record(rec))


def test_corrupt_took_from_R8(deals: list) -> None:
    rec = copy.deepcopy(first_with_override(deals))
    call = next(c for c in rec["calls"] if c["took_from"] is not None)
    call["took_from"] = None
    v = validate_record(rec)[0]
    assert v.seat == call["seat"] and "took_from" in v.message and "(R8)" in v.message


def test_corrupt_trump_and_caller_R10(deals: list) -> None:
    rec = copy.deepcopy(deals[9])
    rec["trump"] = next(s for s in "shdc" if s != rec["trump"])
    rec["caller"] = (rec["caller"] + 1) % 4
    found = sorted(v.message.split()[0] for v in validate_record(rec))
    assert found == ["caller", "trump"]


def test_malformed_records_never_raise(deals: list) -> None:
    assert [str(v) for v in validate_record([1, 2])] == [
        "record: record is not a JSON object: list"]
    rec = copy.deepcopy(deals[0])
    del rec["tricks"]
    assert [str(v) for v in validate_record(rec)] == [
        f"deal {rec['deal']}: missing field 'tricks'"]
    rec = dict(deals[0], format="shuangkou-record/0")
    assert [v.message.split()[0] for v in validate_record(rec)] == ["format"]
    rec = dict(deals[0], rules=dict(deals[0]["rules"], kitty=8))
    assert ["rules"] == [v.message.split()[0] for v in validate_record(rec)]
    junk = [None, 5, -1, "x", "Kh", [], {}, [None] * 4, [["Kh"]] * 4, True, 2 ** 70]
    for field in R.FIELDS:
        for value in junk:
            validate_record(dict(deals[0], **{field: value}))  # must not raise
    for value in junk + [{"leader": "x"}, {"leader": 0, "plays": junk, "winner": 0}]:
        rec = copy.deepcopy(deals[0])
        rec["tricks"][2] = value
        validate_record(rec)
        rec = copy.deepcopy(deals[0])
        rec["calls"][0] = value
        validate_record(rec)
        rec["calls"] = [{"round": 3, "seat": 0, "pair": value, "took_from": value,
                         "gave": value}]
        validate_record(rec)
