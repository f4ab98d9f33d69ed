"""Worked examples of docs/rules.md through the public API (compiled kernels), by ruling."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import sim
from sim.cards import (
    CARD_NAMES,
    GROUP,
    ID_OF_KEY,
    KEY_OF_ID,
    STRENGTH,
    parse_card,
    parse_cards,
    parse_suit,
)
from sim.core.movegen import MAX_CHOICES, count_plays, gen_plays
from sim.errors import InvalidCardError
from sim.loops.runner import iter_records, make_seats
from sim.reference import oracle as ref


# --- R2 notation ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, name", [("kh", "Kh"), ("10♦", "Td"), ("BJ", "BJ"), ("sj", "SJ"),
                                        ("T♣", "Tc"), ("As", "As")])
def test_R2_parse_lenient_output_canonical(text, name):
    assert CARD_NAMES[parse_card(text)] == name


def test_R2_bad_card_message_quotes_and_lists_allowed():
    with pytest.raises(InvalidCardError) as e:
        parse_card("1x")
    assert str(e.value) == ("'1x' is not a card: ranks A23456789TJQK (or 10), suits shdc "
                            "(or ♠♥♦♣), jokers BJ SJ")
    with pytest.raises(InvalidCardError, match="'x' is not a trump suit"):
        parse_suit("x")


def test_R1_two_copies_only():
    with pytest.raises(InvalidCardError, match=r"'Kh' appears 3 times .* \(R1\)"):
        sim.legal_plays(["Kh", "Kh"], "s", ["Kh"])


# --- R3, R12, R13 tables -------------------------------------------------------------------
def test_R3_two_hundred_points():
    assert sim.card_points([CARD_NAMES[i] for i in range(54)] * 2) == 200
    assert sim.card_points("5h Th Kd 4s BJ") == 25


@pytest.mark.parametrize("trump", range(4))
def test_R12_forty_eight_trumps_and_R13_order(trump):
    trumps = [i for i in range(54) if KEY_OF_ID[trump, i] >= 30]
    assert 2 * len(trumps) == 48
    top = [CARD_NAMES[ID_OF_KEY[trump, k]] for k in range(53, 39, -1)]
    t = "shdc"[trump]
    assert top[:3] == ["5" + t, "BJ", "SJ"]  # R13: 主5 > BJ > SJ
    assert STRENGTH[48] == STRENGTH[49] == STRENGTH[50]  # the 付5s tie
    assert GROUP[KEY_OF_ID[trump, parse_card("5" + "shdc"[(trump + 1) % 4])]] == 3  # R14


# --- R16–R19 (worked examples) ------------------------------------------------------------
def test_R18_follow_single_fu5_is_trump():
    assert sim.legal_plays(["Ks", "4s", "5s", "BJ"], "h", ["7s"]) == [("4s",), ("Ks",)]


def test_R19b_no_club_pair_forces_two_strongest():
    assert sim.legal_plays("Ac Kc 6c 6d 2c", "h", "9c 9c") == [("Kc", "Ac")]


def test_R19d_void_may_play_trump_pair_and_R21_it_wins():
    plays = sim.legal_plays("Qh Qh 4d", "h", "9c 9c")
    assert ("Qh", "Qh") in plays
    assert sim.trick_winner([["9c", "9c"], ["Qh", "Qh"], ["Tc", "4c"], ["Ac", "Kc"]], "h") == 1
    assert sim.trick_winner([["9c", "9c"], ["Qh", "Qh"], ["Kh", "Kh"], ["Ac", "Kc"]], "h") == 2


def test_R19b_trump_pair_lead_equal_fu5_forced():
    assert sim.legal_plays("5d 5c 3s Ah", "h", "4h 4h") == [("5d", "5c")]


def test_R19b_tie_any_two_of_three_fu5():
    assert sim.legal_plays("5d 5c 5s 3s Ah", "h", "4h 4h") == [
        ("5s", "5d"), ("5s", "5c"), ("5d", "5c")]


def test_R19a_must_play_pair_in_group():
    assert sim.legal_plays("9d 9d 8d 8d Kd Qh Qh", "h", "4d 4d") == [("8d", "8d"), ("9d", "9d")]


def test_R19c_one_card_of_group_plus_any():
    assert sim.legal_plays("Kd 4s 9c", "h", "Qd Qd") == [("4s", "Kd"), ("Kd", "9c")]


def test_R16_leads_are_singles_then_pairs():
    assert sim.legal_plays("Kd Kd 4s", "h") == [("4s",), ("Kd",), ("Kd", "Kd")]
    with pytest.raises(InvalidCardError, match="R16"):
        sim.legal_plays("Kd 4s", "h", "9c 8c")
    with pytest.raises(InvalidCardError, match="R16"):
        sim.legal_plays("Kd 4s", "h", "9c 9c 9c")


def test_R20_equal_fu5_first_wins():
    assert sim.trick_winner([["5d"], ["5c"], ["Ah"], ["5s"]], "h") == 0


def test_R20_trump_beats_side_and_discards_lose():
    assert sim.trick_winner([["Kc"], ["Ac"], ["4h"], ["As"]], "h") == 2
    assert sim.trick_winner([["Kc"], ["Ac"], ["Qd"], ["As"]], "h") == 1


def test_R21_unpaired_trumps_never_win():
    assert sim.trick_winner([["9c", "9c"], ["BJ", "5h"], ["Tc", "4c"], ["2s", "2d"]], "h") == 0


# --- R23–R25 --------------------------------------------------------------------------------
@pytest.mark.parametrize("rules", [sim.Rules(), sim.Rules(kou_di_single=3, kou_di_pair=8)],
                         ids=["default", "variant"])
def test_R23_last_trick_multiplier_in_the_compiled_engine(rules):
    # the compiled engine's last-trick multiplier and score (sim/core/engine.py) on seeded deals,
    # against R22-R24 recomputed from each record's tricks: an attacker winning the last trick
    # multiplies its points by kou_di_pair (pair lead) or kou_di_single (single lead), a
    # defender win by 1
    seen = Counter()
    for rec in iter_records(23, 0, 3000, make_seats("random(show_prob=0.5)"), rules):
        if rec["void"]:
            continue
        last, att = rec["tricks"][-1], set(rec["attackers"])
        pair = len(last["plays"][0]) == 2
        if last["winner"] in att:
            case, mult = ("pair", rules.kou_di_pair) if pair else ("single", rules.kou_di_single)
        else:
            case, mult = "defenders", 1
        seen[case] += 1
        points = sum(t["points"] for t in rec["tricks"] if t["winner"] in att)
        assert rec["attacker_points"] == points  # R22
        assert rec["last_trick_multiplier"] == mult, rec["deal"]
        assert rec["attacker_score"] == points + (mult - 1) * last["points"], rec["deal"]
        x = ref.settle(rec["attacker_score"], rules.to_dict())[0]  # R24, plain Python
        assert rec["settlement"] == [x if s in att else -x for s in range(4)], rec["deal"]
    assert min(seen["pair"], seen["single"], seen["defenders"]) > 0, seen


@pytest.mark.parametrize("score, att", [(120, 2), (140, 4), (80, -2), (60, -4), (0, -10),
                                        (85, 0), (100, 0), (119, 0), (81, 0), (300, 20)])
def test_R24_settlement(score, att):
    assert sim.settle(score) == (att, -att)


def test_R24_variants():
    r = sim.Rules(settle_step=10, settle_unit=1, defender_cap=3)
    assert sim.settle(130, r) == (3, -3)
    assert sim.settle(0, r) == (-3, 3)


@pytest.mark.parametrize("skill, title", [(-1, "幼儿园"), (0, "小学生"), (199, "小学生"),
                                          (200, "初中生"), (500, "高中生"), (960, "大专生"),
                                          (1599, "大专生"), (1600, "本科生"), (2600, "研究生"),
                                          (4200, "博士"), (6400, "博士后"), (9800, "讲师"),
                                          (15000, "副教授"), (22600, "教授"), (34000, "博士导师"),
                                          (51200, "大师"), (80000, "宗师"), (10**9, "宗师")])
def test_R25_levels(skill, title):
    assert sim.level(skill) == title


def test_R25_titles_have_one_english_gloss_each():
    from sim.titles import BOTTOM, GLOSS, LEVELS, level_text, ranges, titled

    assert set(GLOSS) == {t for _, t in LEVELS} | {BOTTOM}
    assert len(set(GLOSS.values())) == len(GLOSS)
    assert titled("本科生") == "本科生 (undergraduate)" == level_text(1600)
    assert level_text(1599) == "大专生 (junior-college student)"
    for title, lo, hi in ranges():  # the ranges tile the line, each with its title
        assert lo < hi and (lo == -math.inf or sim.level(lo) == title)
    with pytest.raises(ValueError, match="not an R25 title"):
        titled("教师")


def test_rules_variants_exact_names():
    assert sim.Rules.names() == ("max_redeals", "kou_di_single", "kou_di_pair", "settle_step",
                                 "settle_unit", "defender_cap", "start_skill")
    with pytest.raises(sim.RulesError, match="unknown rules variant 'kitty'.*max_redeals"):
        sim.Rules.from_dict({"kitty": 8})
    with pytest.raises(sim.RulesError, match="settle_step"):
        sim.Rules(settle_step=0)


# --- kernels: the counting cascade equals the listing cascade --------------------------------
def test_count_plays_equals_len_gen_plays():
    rng = np.random.default_rng(5)
    buf = np.empty(MAX_CHOICES, dtype=np.int64)
    for _ in range(5000):
        keys = rng.choice(108, size=rng.integers(1, 28), replace=False) // 2
        once = twice = 0
        for k in keys:
            if once >> int(k) & 1:
                twice |= 1 << int(k)
            once |= 1 << int(k)
        lead = int(rng.integers(0, 54))
        kind = rng.integers(0, 3)
        la, lb = (-1, -1) if kind == 0 else (lead, -1) if kind == 1 else (lead, lead)
        n = gen_plays(np.uint64(once), np.uint64(twice), la, lb, buf)
        assert count_plays(np.uint64(once), np.uint64(twice), la, lb) == n
        assert len(set(buf[:n].tolist())) == n  # distinct plays


def test_parse_cards_accepts_commas_and_spaces():
    assert parse_cards("Kh, 10d  bj") == [parse_card("Kh"), parse_card("Td"), 53]
