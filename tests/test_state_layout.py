"""The deal state layout is declared once (sim.core.engine *_FIELDS): fields never overlap, stay
inside the arrays, and keep today's offsets (records and observations are read by offset)."""

from __future__ import annotations

import pytest

from sim.core import engine, movegen

# today's offsets, pinned: a change here changes every record
PINNED_ST = {
    "S_PHASE": 0, "S_TO_ACT": 1, "S_ROUND": 2, "S_CHANCE": 3, "S_PASSRUN": 4,
    "S_CUR_CARD": 5, "S_CUR_SEAT": 6, "S_GIVE_TO": 7, "S_REDEALS": 8, "S_VOID": 9,
    "S_TRUMP": 10, "S_CALLER": 11, "S_NCALLS": 12, "S_LEADER": 13, "S_POS": 14,
    "S_NTRICKS": 15, "S_LEFT": 16, "S_ATT_POINTS": 17, "S_MULT": 18, "S_SCORE": 19,
    "S_SETTLE": 20, "S_DECISIONS": 24, "S_NOVERRIDES": 25, "S_TRICK_A": 26, "S_TRICK_B": 30,
    "S_FIX_SEAT": 34, "S_FIX_N": 35, "S_VOIDS": 36, "S_CALLS": 40, "S_DECK": 136,
    "S_TRICKS": 244, "S_FIX": 541,
}
PINNED_U = {
    "U_ONCE": 0, "U_TWICE": 4, "U_KEY": 8, "U_CTR": 17, "U_FIRST_ONCE": 26,
    "U_FIRST_TWICE": 30, "U_PLAYED_ONCE": 34, "U_PLAYED_TWICE": 35,
}
PINNED_CALL = {"CALL_ROUND": 0, "CALL_SEAT": 1, "CALL_CARD": 2, "CALL_TOOK": 3,
               "CALL_GAVE_A": 4, "CALL_GAVE_B": 5}
PINNED_TRICK = {"TRICK_LEADER": 0, "TRICK_WINNER": 1, "TRICK_POINTS": 2, "TRICK_A": 3,
                "TRICK_B": 7}

LAYOUTS = [
    (engine.ST_FIELDS, engine.ST_SIZE, PINNED_ST, 568),
    (engine.U_FIELDS, engine.U_SIZE, PINNED_U, 36),
    (engine.CALL_FIELDS, engine.CALL_W, PINNED_CALL, 6),
    (engine.TRICK_FIELDS, engine.TRICK_W, PINNED_TRICK, 11),
]


@pytest.mark.parametrize("fields, size, pinned, pinned_size", LAYOUTS)
def test_fields_disjoint_inside_and_pinned(fields, size, pinned, pinned_size):
    assert size == pinned_size
    names = [name for name, _ in fields]
    assert len(set(names)) == len(names)
    used = [None] * size
    for name, width in fields:
        off = getattr(engine, name)  # a module-level int, frozen by numba as a constant
        assert isinstance(off, int) and width >= 1
        assert 0 <= off and off + width <= size, name
        for i in range(off, off + width):
            assert used[i] is None, f"{name} overlaps {used[i]} at {i}"
            used[i] = name
    assert None not in used  # no gaps either: the arrays hold nothing undeclared
    assert {name: getattr(engine, name) for name in names} == pinned


def test_layout_rejects_duplicates_and_empty_fields():
    with pytest.raises(ValueError):
        engine._layout((("A", 1), ("A", 2)))
    with pytest.raises(ValueError):
        engine._layout((("A", 0),))


def test_record_areas_hold_their_records():
    assert engine.S_DECK - engine.S_CALLS == engine.MAX_CALLS * engine.CALL_W
    assert engine.S_FIX - engine.S_TRICKS == 27 * engine.TRICK_W
    assert engine.TRICK_B - engine.TRICK_A == 4


def test_stream_slots_inside_u():
    slots = [engine.STREAM_CARDS] + [engine.STREAM_SEAT + s for s in range(4)] \
        + [engine.STREAM_SAMPLE + s for s in range(4)]
    assert sorted(slots) == list(range(engine.N_STREAMS))
    assert engine.U_CTR - engine.U_KEY == engine.N_STREAMS


@pytest.mark.parametrize("a, b", [(0, -1), (53, -1), (0, 0), (3, 17), (52, 53), (53, 53)])
def test_codes_round_trip(a, b):
    c = movegen.make_code.py_func(a, b) if hasattr(movegen.make_code, "py_func") \
        else movegen.make_code(a, b)
    assert c == a + 64 * (b + 1) < movegen.N_CODES
    first = getattr(movegen.code_first, "py_func", movegen.code_first)
    second = getattr(movegen.code_second, "py_func", movegen.code_second)
    assert (first(c), second(c)) == (a, b)


def test_one_beats_for_tricks_and_greedy():
    from sim.core import trick
    from strategies import greedy

    assert greedy.beats is trick.beats  # R20/R21 written once


def test_observations_and_records_share_one_decoder():
    from sim import Deal
    from strategies.random import RandomStrategy

    for deal in range(3):
        d = Deal(11, deal)
        bots = [RandomStrategy() for _ in range(4)]
        for s, b in enumerate(bots):
            b.begin_deal(s, 11, deal)
        while not d.done:
            seat = d.to_act.seat
            d.apply(bots[seat].choose(d.observation(seat), d.legal()))
        rec = d.record()
        for s in range(4):
            obs = d.observation(s)
            assert obs.tricks == rec["tricks"]
            for mine, full in zip(obs.calls, rec["calls"], strict=True):
                knows = s in (full["seat"], full["took_from"])
                assert mine == (full if knows else {**full, "gave": None})


def test_one_plugin_loader_appends_its_folders_only_for_a_plugin(tmp_path, monkeypatch):
    import sys

    from strategies import registry

    (tmp_path / "sk_layout_probe_mod.py").write_text(
        "from strategies import Strategy\n\n\n"
        "class LayoutProbe(Strategy):\n"
        "    name = 'layout-probe'\n\n"
        "    def choose(self, obs, legal):\n"
        "        return legal[0]\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    assert registry.load_plugins([], [str(tmp_path)]) == []
    assert str(tmp_path) not in sys.path
    assert registry.load_plugins(["sk_layout_probe_mod"], [str(tmp_path)]) == ["layout-probe"]
    assert sys.path[-1] == str(tmp_path)  # appended: never shadows an installed module
    registry.add_paths([str(tmp_path)])
    assert sys.path.count(str(tmp_path)) == 1


def test_hand_mask_pairs_sit_the_same_distance_apart():
    # sim.spaces.hand_ids reads a hand's twice mask at i_once + U_TWICE - U_ONCE
    assert engine.U_FIRST_TWICE - engine.U_FIRST_ONCE == engine.U_TWICE - engine.U_ONCE
