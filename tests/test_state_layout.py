"""Every shared flat array is declared once (``*_FIELDS`` tuples, ``sim.core.layout``): the deal
state (sim.core.state), batch control words, slot table and finished rows (sim.loops.batch),
the rules positions (sim.rules), the summary-row columns (sim.core.tables), the step API's
packed state (sim.spaces), the built-in strategies' parameter rows and scratch regions
(strategies/*). Fields never overlap, stay inside their arrays, every bound name is its computed
offset, and the deal state keeps today's offsets (records and observations are read by offset)."""

from __future__ import annotations

import pytest

from sim.core import movegen
from sim.core import state as S
from sim.core.layout import layout

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
    (S.ST_FIELDS, S.ST_SIZE, PINNED_ST, 568),
    (S.U_FIELDS, S.U_SIZE, PINNED_U, 36),
    (S.CALL_FIELDS, S.CALL_W, PINNED_CALL, 6),
    (S.TRICK_FIELDS, S.TRICK_W, PINNED_TRICK, 11),
]


@pytest.mark.parametrize("fields, size, pinned, pinned_size", LAYOUTS)
def test_fields_disjoint_inside_and_pinned(fields, size, pinned, pinned_size):
    assert size == pinned_size
    names = [name for name, _ in fields]
    assert len(set(names)) == len(names)
    used = [None] * size
    for name, width in fields:
        off = getattr(S, name)  # a module-level int, frozen by numba as a constant
        assert isinstance(off, int) and width >= 1
        assert 0 <= off and off + width <= size, name
        for i in range(off, off + width):
            assert used[i] is None, f"{name} overlaps {used[i]} at {i}"
            used[i] = name
    assert None not in used  # no gaps either: the arrays hold nothing undeclared
    assert {name: getattr(S, name) for name in names} == pinned


def test_layout_rejects_duplicates_and_empty_fields():
    with pytest.raises(ValueError):
        layout((("A", 1), ("A", 2)))
    with pytest.raises(ValueError):
        layout((("A", 0),))
    assert layout((("A", 2), ("B", 1)), start=5) == ({"A": 5, "B": 7}, 8)


def test_record_areas_hold_their_records():
    assert S.S_DECK - S.S_CALLS == S.MAX_CALLS * S.CALL_W
    assert S.S_FIX - S.S_TRICKS == 27 * S.TRICK_W
    assert S.TRICK_B - S.TRICK_A == 4


def test_stream_slots_inside_u():
    slots = [S.STREAM_CARDS] + [S.STREAM_SEAT + s for s in range(4)] \
        + [S.STREAM_SAMPLE + s for s in range(4)]
    assert sorted(slots) == list(range(S.N_STREAMS))
    assert S.U_CTR - S.U_KEY == S.N_STREAMS


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

    assert greedy.BEATING is trick.BEATING  # R20/R21 written once: the mask form of beats
    beats = getattr(trick.beats, "py_func", trick.beats)
    for k in range(54):
        g = int(trick.GROUP[k])
        for j in range(54):
            for pair in (False, True):
                assert bool((int(trick.BEATING[k]) >> j) & 1) == bool(beats(
                    j, j if pair else -1, pair, g, int(trick.STRENGTH[k]), g == trick.TRUMP_GROUP))


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
    assert S.U_FIRST_TWICE - S.U_FIRST_ONCE == S.U_TWICE - S.U_ONCE


# --- every other declared layout ----------------------------------------------------------------
# (module, its *_FIELDS name, where the fields start, the end they must reach exactly (None: any),
# the size of the array they lie in)


def _declared():
    from sim import rules, spaces
    from sim.core import tables
    from sim.learn import learn_loop
    from sim.loops import batch, plugin_loop
    from strategies import (
        expert,
        greedy,
        kinds,
        learned,
        learned_weights,
        params,
        random,
        sampler,
        script,
        search,
    )

    np_ = params.N_PARAMS
    return [
        (batch, "META_FIELDS", 0, batch.N_META, batch.N_META),
        (batch, "CTL_FIELDS", 0, batch.N_CTL, batch.C_UWS),
        (batch, "FIN_FIELDS", 0, batch.N_FIN, batch.N_FIN),
        (rules, "RULES_FIELDS", 0, rules.N_RULES, len(rules.Rules().array())),
        (tables, "SUMMARY_FIELDS", 0, tables.N_COLS, len(tables.COLUMN_NAMES)),
        (spaces, "PACKED_FIELDS", 0, spaces.P_SIZE, spaces.P_SIZE),
        (random, "RANDOM_PARAM_FIELDS", 0, random.N_RANDOM_PARAMS, np_),
        (greedy, "GREEDY_CALL_FIELDS", 0, None, np_),
        (greedy, "GREEDY_PARAM_FIELDS", 0, greedy.N_GREEDY_PARAMS, np_),
        (expert, "EXPERT_PARAM_FIELDS", 0, expert.N_EXPERT_PARAMS, np_),
        (search, "PIMC_PARAM_FIELDS", 0, search.N_PIMC_PARAMS, np_),
        (search, "TREE_PARAM_FIELDS", 0, search.N_TREE_PARAMS, np_),
        (search, "ORACLE_PARAM_FIELDS", 0, search.N_ORACLE_PARAMS, np_),
        (expert, "BUF_FIELDS", 0, expert.BUF_END, kinds.INT_SCRATCH),
        (expert, "FWS_FIELDS", 0, expert.FWS_END, kinds.FLOAT_SCRATCH - sampler.FLOAT_REGION),
        (expert, "UWS_FIELDS", 0, expert.UWS_END, kinds.UINT_SCRATCH),
        (search, "BUF_FIELDS", 0, search.R_TREE, kinds.INT_SCRATCH),
        (search, "FWS_FIELDS", 0, search.F_TREE, kinds.FLOAT_SCRATCH - sampler.FLOAT_REGION),
        (search, "UWS_FIELDS", 0, search.UWS_END, kinds.UINT_SCRATCH),
        (sampler, "REGION_FIELDS", 0, sampler.REGION, sampler.REGION),
        (learned_weights, "STATE_FIELDS", 0, learned_weights.DS, learned_weights.DS),
        (learned_weights, "DENSE_FIELDS", 0, learned_weights.ND, learned_weights.ND),
        (learned_weights, "MOVE_FIELDS", 0, learned_weights.DM, learned_weights.DM),
        (learned_weights, "MOVE_DENSE_FIELDS", 0, learned_weights.MD, learned_weights.MD),
        (learned, "LEARNED_PARAM_FIELDS", 0, learned.N_LEARNED_PARAMS, np_),
        # after the legal codes (MAX_CHOICES slots), before the collector's B_SEL
        (learned, "SCRATCH_FIELDS", 2048, None, 1 << 19),
        (learned, "FLOAT_FIELDS", 0, None, kinds.FLOAT_SCRATCH),
        # the label collector's scratch: past the learned player's and expert's
        (learn_loop, "COLLECT_BUF_FIELDS", 1 << 19, learn_loop.COLLECT_BUF_END,
         kinds.INT_SCRATCH),
        (learn_loop, "COLLECT_FWS_FIELDS", 1 << 17, learn_loop.COLLECT_FWS_END,
         kinds.FLOAT_SCRATCH - sampler.FLOAT_REGION),
        (learn_loop, "LABEL_STATUS_FIELDS", 0, learn_loop.N_LABEL_STATUS,
         learn_loop.N_LABEL_STATUS),
        (plugin_loop, "STATUS_FIELDS", 0, plugin_loop.N_STATUS, plugin_loop.N_STATUS),
        # the scripted seat's script and log, alone in buf (no other kernel runs beside it)
        (script, "SCRIPT_FIELDS", 0, script.SCRIPT_SIZE, kinds.INT_SCRATCH),
        (script, "SCRIPT_CALL_FIELDS", 0, script.SCRIPT_CALL_W, script.SCRIPT_CALL_W),
        (script, "LOG_FIELDS", 0, script.LOG_W, script.LOG_W),
    ]


def test_every_declared_layout_is_disjoint_inside_and_bound():
    for mod, attr, start, end, bound in _declared():
        fields = getattr(mod, attr)
        names = [name for name, _ in fields]
        assert len(set(names)) == len(names), (mod.__name__, attr)
        at = start
        for name, width in fields:
            assert isinstance(width, int) and width >= 1, (attr, name)
            if hasattr(mod, name):  # a bound offset: a module-level int numba freezes
                off = getattr(mod, name)
                assert type(off) is int and off == at, (mod.__name__, name, off, at)
            at += width
        assert end is None or at == end, (mod.__name__, attr, at, end)
        assert at <= bound, f"{mod.__name__}.{attr} ends at {at}, past its array ({bound})"


def test_every_layout_in_the_code_is_checked_here():
    """A new ``*_FIELDS`` layout at module level must be added to ``_declared`` (or to the
    deal state's LAYOUTS above)."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    seen = {(m.__name__, a) for m, a, *_ in _declared()}
    seen |= {("sim.core.state", a) for a in ("ST_FIELDS", "U_FIELDS", "CALL_FIELDS",
                                            "TRICK_FIELDS")}
    missing = []
    for pkg in ("sim", "strategies"):
        for path in sorted((root / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "layout(" not in text:
                continue
            mod = ".".join(path.relative_to(root).with_suffix("").parts)
            for node in ast.parse(text).body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                        and not isinstance(node.value, ast.Constant):  # not a plain count
                    name = node.targets[0].id
                    if name.endswith("_FIELDS") and (mod, name) not in seen:
                        missing.append((mod, name))
    assert not missing, f"declared layouts no test checks: {missing}"


def test_declared_sizes_as_documented():
    from sim import rules, spaces
    from sim.core import tables
    from sim.loops import batch
    from strategies import expert, greedy, params, sampler, search

    # batch: 10 slot columns; control words, then kinds[4] and the rules
    assert (batch.N_META, batch.N_CTL, batch.N_FIN) == (10, 18, 9)
    assert dict(batch.CTL_FIELDS)["C_KINDS"] == 4
    assert dict(batch.CTL_FIELDS)["C_RULES"] == rules.N_RULES == 7
    assert batch.SU_W == S.ST_SIZE + S.U_SIZE
    # the rules: one int64 per variant, in Rules' declaration order
    r = rules.Rules(max_redeals=5, kou_di_single=3, kou_di_pair=6, settle_step=21,
                    settle_unit=4, defender_cap=11, start_skill=1700).array()
    assert [r[rules.R_MAX_REDEALS], r[rules.R_KOU_SINGLE], r[rules.R_KOU_PAIR],
            r[rules.R_STEP], r[rules.R_UNIT], r[rules.R_CAP], r[rules.R_START]] == \
        [5, 3, 6, 21, 4, 11, 1700]
    assert tables.N_COLS == 19 and tables.C_FIRST_SHOW_ROUND == 18
    assert spaces.P_SIZE == S.ST_SIZE + S.U_SIZE + rules.N_RULES + movegen.MAX_CHOICES
    # parameter rows: the expert's starts with greedy's calling slots (greedy_show reads them)
    assert expert.N_EXPERT_PARAMS == params.N_PARAMS == 17
    for name in ("P_SHOW_AT", "P_MIN_CARDS", "P_PARTNER_MARGIN"):
        assert getattr(expert, name) == getattr(greedy, name)
    assert search.ORACLE_MCTS == max(search.N_PIMC_PARAMS, search.N_TREE_PARAMS) == 4
    # scratch: the sampler's region where both search players put it; a u fits each world slot
    assert dict(expert.BUF_FIELDS)["R_SAMPLER"] == dict(search.BUF_FIELDS)["R_SAMPLER"] \
        == sampler.REGION == 450
    for mod in (expert, search):
        assert min(dict(mod.UWS_FIELDS)[k] for k in ("U_WORLD", "U_ROLL")) >= S.U_SIZE
        assert dict(mod.BUF_FIELDS)["R_ST"] >= S.ST_SIZE
    assert expert.MAX_POOL == 496 and expert.UWS_END == 4096


@pytest.mark.parametrize("spec", ["random", "greedy", "expert", "expert(infer=weighted)",
                                  "pimc", "ismcts", "oracle", "oracle(search=mcts)"])
def test_parameter_rows_follow_their_layouts(spec):
    """Each built-in strategy's compiled_params() puts every parameter at its declared slot
    (the values the signature hashes were pinned with)."""
    from strategies.registry import make

    rows = {
        "random": [0.25],
        "greedy": [0.40, 10, 0.10, 0.5, 10, 0],
        # (endgame = 0, endgame_worlds = 24 at the end: issue 37's exact endgames, off)
        "expert": [0.40, 18, 0.10, 192, 0.0, 32, 1.0, 4, 0, 4.0, 0.3, 0, 4, 2, 0.3, 0, 24],
        "expert(infer=weighted)": [0.40, 18, 0.10, 192, 0.0, 32, 1.0, 4, 1, 4.0, 0.3, 0, 4,
                                   2, 0.3, 0, 24],
        "pimc": [64, 1, 0, 24],
        "ismcts": [1000, 0.3, 1],
        "oracle": [64, 2, 0, 0, 0.0],
        "oracle(search=mcts)": [1000, 0.3, 2, 0.0, 1.0],
    }
    assert make(spec).compiled_params() == rows[spec]


def test_no_literal_offsets_into_declared_arrays():
    """Kernels index the declared arrays by name: no ``params[row, 3]``, ``ctl[5]``,
    ``meta[i, 2]``, ``fin[j, 6]``, ``rules[4]`` with a literal position."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    arrays = {"params", "ctl", "meta", "fin", "rules"}
    skip = {  # a plug-in's row is its own params in declaration order (the documented plug-in
            # API: params[0], params[1], ...)
            "strategies/example_compiled.py"}
    bad = []
    for pkg in ("sim", "strategies"):
        for path in sorted((root / pkg).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in skip or rel.startswith("sim/reference/"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                        and node.value.id in arrays:
                    idx = node.slice
                    last = idx.elts[-1] if isinstance(idx, ast.Tuple) else idx
                    if isinstance(last, ast.Constant) and isinstance(last.value, int):
                        bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"literal offsets: {bad}"


def test_the_label_collectors_scratch_is_past_its_players():
    # the collector's regions are used while the teacher (expert) and the learned player
    # decide: they must lie past every region of theirs
    from sim.core.layout import layout
    from sim.learn import learn_loop
    from strategies import expert, learned

    assert expert.BUF_END <= learn_loop.B_SEL
    assert layout(learned.SCRATCH_FIELDS, 2048)[1] <= learn_loop.B_SEL
    assert max(expert.FWS_END, layout(learned.FLOAT_FIELDS)[1]) <= learn_loop.Q_TMP
