"""sim.openspiel: Shuangkou as the OpenSpiel game ``python_shuangkou`` and OpenSpiel's bots as
players (docs/frameworks.md, "OpenSpiel").

Needs the extra ``openspiel`` (``pip install -e '.[openspiel]'``); without it every test here
but the missing-extra ones is skipped. The resampled worlds are checked by the plain-Python
reference engine (``sim.reference.oracle``), not by the compiled code that made them.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from sim.reference import oracle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cli(*args, code_prefix="", timeout=600):
    code = (f"import sys, runpy\n{code_prefix}"
            f"sys.argv = ['shuangkou', *{[str(a) for a in args]!r}]\n"
            "runpy.run_module('sim.cli', run_name='__main__', alter_sys=True)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})


# --- without the extra ---------------------------------------------------------------------
def test_without_openspiel_the_import_is_one_line_naming_the_extra():
    code = ("import sys\nsys.modules['pyspiel'] = None\n"
            "from sim.errors import ShuangkouError\n"
            "try:\n    import sim.openspiel\nexcept ShuangkouError as e:\n"
            "    print('ERR', e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT})
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr
    assert out.startswith("ERR ") and len(out.strip().splitlines()) == 1
    assert "pip install -e '.[openspiel]'" in out


def test_without_openspiel_the_player_spec_exits_2_with_one_line():
    p = _cli("play", "--seats", "openspiel(bot=uniform_random),random", "--deals", 1,
             code_prefix="sys.modules['pyspiel'] = None\n", timeout=300)
    err = p.stderr.decode().strip()
    assert p.returncode == 2, err
    assert len(err.splitlines()) == 1 and ".[openspiel]" in err and "Traceback" not in err


# --- with the extra ------------------------------------------------------------------------
HAVE_OPENSPIEL = importlib.util.find_spec("pyspiel") is not None
needs_openspiel = pytest.mark.skipif(
    not HAVE_OPENSPIEL, reason="needs the extra: pip install -e '.[openspiel]'")
if HAVE_OPENSPIEL:
    import pyspiel

    import sim.openspiel as so

from sim.cards import CARD_NAMES, ID_OF_KEY  # noqa: E402
from sim.core import state as S  # noqa: E402
from sim.spaces import OBS_SIZE, obs_spec  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game("python_shuangkou")


def _chance(state, rng):
    outs = state.chance_outcomes()
    p = np.array([q for _, q in outs])
    state.apply_action(outs[int(rng.choice(len(outs), p=p / p.sum()))][0])


def _random_deal(game, rng, visit=None):
    """Play a deal with uniform random choices; ``visit(state)`` at every decision."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            _chance(state, rng)
            continue
        if visit is not None:
            visit(state)
        acts = state.legal_actions()
        state.apply_action(acts[int(rng.integers(len(acts)))])
    return state


@needs_openspiel
def test_the_game_is_registered_with_the_rule_variants(game):
    t = game.get_type()
    assert t.short_name == "python_shuangkou"
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game.num_players() == 4 and game.num_distinct_actions() == so.N_ACTIONS
    assert game.max_chance_outcomes() == 54
    assert set(game.get_parameters()) == set(so.Rules.names())
    g = pyspiel.load_game("python_shuangkou(max_redeals=0,settle_unit=3)")
    assert g.rules.max_redeals == 0 and g.rules.settle_unit == 3
    with pytest.raises(Exception, match="settle_unit"):
        pyspiel.load_game("python_shuangkou(settle_unit=11)")


@needs_openspiel
def test_random_sim_test_passes(game):
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)
    g = pyspiel.load_game("python_shuangkou(max_redeals=0,kou_di_pair=6)")
    pyspiel.random_sim_test(g, num_sims=2, serialize=False, verbose=False)


@needs_openspiel
def test_the_python_game_api_checks(game):
    """The checks OpenSpiel's own Python games run (open_spiel/python/games/*_test.py):
    a fresh state is a chance node, chance outcomes are distributions, legal actions are
    sorted and in range, a clone plays on alone, strings and tensors for every player,
    zero-sum returns at the end."""
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE
    clone_at = 150
    steps = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outs = state.chance_outcomes()
            assert abs(sum(p for _, p in outs) - 1) < 1e-9
            assert all(0 <= a < 54 and p > 0 for a, p in outs)
            _chance(state, rng)
        else:
            p = state.current_player()
            acts = state.legal_actions()
            assert acts == sorted(acts) and all(0 <= a < game.num_distinct_actions()
                                                for a in acts)
            assert state.legal_actions(p) == acts
            for q in range(4):
                assert isinstance(state.information_state_string(q), str)
                assert len(state.observation_tensor(q)) == OBS_SIZE
            state.apply_action(acts[int(rng.integers(len(acts)))])
        steps += 1
        if steps == clone_at:
            clone = state.clone()
            assert str(clone) == str(state) and clone.history() == state.history()
            snapshot = str(state)
    assert clone.history() != state.history() and str(clone) == snapshot  # untouched
    r = state.returns()
    assert sum(r) == 0 and r[0] == r[2] and r[1] == r[3]
    assert state.rewards() is not None and len(state.history()) == steps


@needs_openspiel
def test_returns_are_the_settlement_and_zero_sum(game):
    rng = np.random.default_rng(9)
    for _ in range(5):
        state = _random_deal(game, rng)
        r = state.returns()
        st = state.core.st
        assert r == [float(x) for x in st[S.S_SETTLE:S.S_SETTLE + 4]] and sum(r) == 0
        if not st[S.S_VOID]:  # R24 from the attacker score, by the reference
            att, dfd = oracle.settle(int(st[S.S_SCORE]))
            caller = int(st[S.S_CALLER])
            assert r[caller] == r[(caller + 2) % 4] == att and r[(caller + 1) % 4] == dfd


@needs_openspiel
def test_a_deal_is_dealt_card_by_card_interleaved_with_calling(game):
    """108 chance nodes per attempt, each uniform over the cards not dealt; the cards of
    round r + 1 come only after every calling decision of round r."""
    rng = np.random.default_rng(2)
    state = game.new_initial_state()
    chances = 0
    while state.core.phase in (S.CALL, S.GIVEBACK) and not state.is_terminal():
        c = state.core
        if state.is_chance_node():
            outs = dict(state.chance_outcomes())
            left = Counter({x: 2 for x in range(54)})
            left.subtract(c.st[S.S_DECK:S.S_DECK + c.dealt].tolist())
            n = sum(left.values())
            assert outs == {x: k / n for x, k in left.items() if k}
            chances += 1
            _chance(state, rng)
        else:
            assert c.dealt == 4 * int(c.st[S.S_ROUND])  # nothing dealt ahead of the engine
            acts = state.legal_actions()
            state.apply_action(acts[int(rng.integers(len(acts)))])
    assert chances % 108 == 0 and chances >= 108


@needs_openspiel
def test_a_void_attempt_is_dealt_again_then_the_deal_is_void():
    g = pyspiel.load_game("python_shuangkou(max_redeals=1)")
    state = g.new_initial_state()
    rng = np.random.default_rng(0)
    chances = 0
    while not state.is_terminal():
        if state.is_chance_node():
            chances += 1
            _chance(state, rng)
        else:
            state.apply_action(0)  # everybody passes every chance
    assert chances == 216 and state.returns() == [0.0] * 4
    assert state.core.st[S.S_VOID] == 1 and state.core.attempt == 1


@needs_openspiel
def test_observer_tensor_is_the_documented_layout_and_shapes_are_made_once(game):
    obs = game.make_py_observer()
    spec = obs_spec()
    assert list(obs.dict) == [f["name"] for f in spec]
    assert all(obs.dict[f["name"]].shape == (f["size"],) for f in spec)
    tensor = obs.tensor
    rng = np.random.default_rng(4)
    seen = []

    def visit(state):
        for q in range(4):
            obs.set_from(state, q)
            assert obs.tensor is tensor  # filled in place, never made again
            hand = Counter(_hand_ids(state.core, q))
            assert [int(x) for x in obs.dict["hand"]] == [hand[i] for i in range(54)]
            assert int(obs.dict["seat"][0]) == q
        seen.append(1)

    _random_deal(game, rng, visit)
    assert len(seen) > 100
    recall = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
    assert recall.tensor.size == 0


def _hand_ids(core, seat):
    t = int(core.st[S.S_TRUMP])
    once, twice = int(core.u[S.U_ONCE + seat]), int(core.u[S.U_TWICE + seat])
    out = []
    for b in range(54):
        c = int(ID_OF_KEY[t, b]) if t >= 0 else b
        out += [c] * ((once >> b & 1) + (twice >> b & 1))
    return out


PRIVATE_FIELDS = {"hand", "seat", "gave"}  # R9: what a seat knows and its partner does not


@needs_openspiel
def test_partners_observations_differ_exactly_where_r9_says(game):
    """A seat's tensor and its partner's differ only in the private fields (own hand, seat,
    the give-back it took part in); and a seat's tensor does not move when its partner's
    cards are redrawn (it never sees them)."""
    obs = game.make_py_observer()
    spec = {f["name"]: (f["offset"], f["size"]) for f in obs_spec()}
    rng = np.random.default_rng(8)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    differ = Counter()
    checked = [0]

    def visit(state):
        p = state.current_player()
        q = (p + 2) % 4
        obs.set_from(state, p)
        mine = obs.tensor.copy()
        obs.set_from(state, q)
        theirs = obs.tensor.copy()
        for name, (off, n) in spec.items():
            if not np.array_equal(mine[off:off + n], theirs[off:off + n]):
                assert name in PRIVATE_FIELDS, name
                differ[name] += 1
        if rng.random() < 0.2:
            world = state.resample_from_infostate(p, sampler)
            obs.set_from(world, p)
            assert np.array_equal(obs.tensor, mine)
            checked[0] += 1

    for _ in range(2):
        _random_deal(game, rng, visit)
    assert differ["hand"] > 0 and differ["seat"] > 0 and checked[0] > 10


# --- resampling, checked by the reference engine ----------------------------------------------
def _name(core, k):
    return CARD_NAMES[int(ID_OF_KEY[int(core.st[S.S_TRUMP]), k])]


def _tricks(core):
    """Every play so far: (seat, cards) in order, from the public trick log."""
    st = core.st
    out = []
    for n in range(int(st[S.S_NTRICKS])):
        j = S.S_TRICKS + n * S.TRICK_W
        leader = int(st[j + S.TRICK_LEADER])
        plays = []
        for p in range(4):
            a, b = int(st[j + S.TRICK_A + p]), int(st[j + S.TRICK_B + p])
            plays.append(((leader + p) % 4, [_name(core, a)] + ([_name(core, b)] if b >= 0
                                                                  else [])))
        out.append(plays)
    pos = int(st[S.S_POS])
    if pos:
        leader = int(st[S.S_LEADER])
        plays = []
        for p in range(pos):
            a, b = int(st[S.S_TRICK_A + p]), int(st[S.S_TRICK_B + p])
            plays.append(((leader + p) % 4, [_name(core, a)] + ([_name(core, b)] if b >= 0
                                                                  else [])))
        out.append(plays)
    return out


def _names_of(core, seat):
    return sorted(CARD_NAMES[c] for c in _hand_ids(core, seat))


def _calls(core, seat):
    st = core.st
    out = []
    for i in range(int(st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        r, s, c, took, a, b = (int(x) for x in st[j:j + S.CALL_W])
        gave = (a, b) if seat in (s, took) else None
        out.append((r, s, c, took, gave))
    return out


def check_play_world(real, world, p):
    """The world continues the public history legally (reference engine): same plays,
    own hand, hand sizes; each seat's hand at the first lead is its hand now plus what it
    played, and every play was legal from it (so every void shown is respected)."""
    rc, wc = real.core, world.core
    assert _names_of(wc, p) == _names_of(rc, p)
    assert _tricks(wc) == _tricks(rc) and _calls(wc, p) == _calls(rc, p)
    trump = "shdc"[int(rc.st[S.S_TRUMP])]
    hands = [Counter(_names_of(wc, s)) for s in range(4)]
    for s in range(4):
        assert sum(hands[s].values()) == sum(Counter(_names_of(rc, s)).values())
    tricks = _tricks(wc)
    for plays in tricks:
        for s, cards in plays:
            hands[s].update(cards)
    assert all(sum(h.values()) == 27 for h in hands)
    for plays in tricks:
        lead = None
        for s, cards in plays:
            legal = [tuple(x) for x in oracle.legal_plays(list(hands[s].elements()), trump,
                                                          lead)]
            assert tuple(cards) in legal, (s, cards, lead)
            hands[s].subtract(cards)
            if lead is None:
                lead = cards
        if len(plays) == 4:  # the winner leads next (public, same in both)
            w = oracle.trick_winner([c for _, c in plays], trump)
            nxt = tricks.index(plays) + 1
            if nxt < len(tricks):
                assert tricks[nxt][0][0] == plays[w][0]


def check_calling_world(real, world, p, same_order=True):
    """The world's cards dealt so far replay every public call legally (reference engine):
    each show is a legal show of its shower's hand then, each give-back a legal give-back;
    the seat's own dealt cards (in their order, if it was given), its hand and the public
    calls are the real ones."""
    rc, wc = real.core, world.core
    assert wc.dealt == rc.dealt
    if same_order:
        assert wc.own_deck(p) == rc.own_deck(p)
    assert sorted(wc.own_deck(p)) == sorted(rc.own_deck(p))
    assert _names_of(wc, p) == _names_of(rc, p)
    assert [c[:4] for c in _calls(wc, p)] == [c[:4] for c in _calls(rc, p)]
    assert [c[4] for c in _calls(wc, p)] == [c[4] for c in _calls(rc, p)]
    deck = [CARD_NAMES[c] for c in wc.st[S.S_DECK:S.S_DECK + wc.dealt].tolist()]
    calls = _calls(wc, -1)
    st = wc.st
    gaves = [(int(st[S.S_CALLS + i * S.CALL_W + S.CALL_GAVE_A]),
              int(st[S.S_CALLS + i * S.CALL_W + S.CALL_GAVE_B])) for i in range(len(calls))]
    hands = [Counter() for _ in range(4)]
    dealt_rounds = 0
    shown = None
    for (r, s, c, took, _), gave in zip(calls, gaves):
        while dealt_rounds < r:
            for q in range(4):
                hands[q][deck[4 * dealt_rounds + q]] += 1
            dealt_rounds += 1
        assert CARD_NAMES[c] in oracle.legal_shows(list(hands[s].elements()), shown)
        if took >= 0 and took != s:
            hands[took][shown] -= 2
            hands[s][shown] += 2
            if gave[0] < 0:  # the give-back this decision is about (the last call)
                assert wc.phase == S.GIVEBACK and (r, s, c) == calls[-1][:3]
                continue
            g = tuple(sorted((CARD_NAMES[gave[0]], CARD_NAMES[gave[1]]), key=oracle.card_id))
            assert g in oracle.legal_givebacks(list(hands[s].elements()), CARD_NAMES[c])
            for x in g:
                hands[s][x] -= 1
                hands[took][x] += 1
        shown = CARD_NAMES[c]
    while dealt_rounds < wc.dealt // 4:
        for q in range(4):
            hands[q][deck[4 * dealt_rounds + q]] += 1
        dealt_rounds += 1
    for q in range(4):  # the world's hands are what the reference's replay gives
        assert sorted(hands[q].elements()) == _names_of(wc, q)


@needs_openspiel
def test_every_resampled_world_is_consistent_with_the_seat_information(game):
    """About 1,000 decisions, one world each (trick play: the exact sampler; calling: the
    replayed draw), each checked by the reference engine; the world is at the same decision
    (same infostate, observation and legal actions) and the other hands do vary."""
    rng = np.random.default_rng(11)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    counts = Counter()

    def visit(state):
        p = state.current_player()
        world = state.resample_from_infostate(p, sampler)
        assert world.current_player() == p
        assert world.information_state_string(p) == state.information_state_string(p)
        assert world.observation_string(p) == state.observation_string(p)
        assert world.legal_actions() == state.legal_actions()
        if state.core.phase == S.PLAY:
            check_play_world(state, world, p)
            counts["play"] += 1
            if any(_names_of(world.core, q) != _names_of(state.core, q) for q in range(4)):
                counts["differs"] += 1
        else:
            check_calling_world(state, world, p)
            counts["calling"] += 1
            counts["shows"] += int(state.core.st[S.S_NCALLS] > 0)

    while counts["play"] + counts["calling"] < 1000:
        _random_deal(game, rng, visit)
    assert counts["calling"] > 20 and counts["shows"] > 10
    assert counts["differs"] > 0.9 * counts["play"] - 40  # late tricks can be forced


@needs_openspiel
def test_worlds_from_an_observation_alone_are_consistent(game):
    """A player gets only its observation (``Observation.arrays``: no dealing order): the
    worlds it is given while calling place its own cards in a drawn order; they are checked
    the same way."""
    from sim.spaces import mask_into

    rng = np.random.default_rng(12)
    m_st = np.empty(S.ST_SIZE, dtype=np.int64)
    m_u = np.empty(S.U_SIZE, dtype=np.uint64)
    done = Counter()

    def visit(state):
        c = state.core
        if c.phase == S.PLAY:
            return
        p = c.seat
        mask_into(c.st, c.u, p, m_st, m_u)
        assert (m_st[S.S_DECK:S.S_DECK + 108] == -1).all()  # the order is not in it
        world = so.world(game, m_st, m_u, p, int(rng.integers(2**31)))
        assert world.legal_actions() == state.legal_actions()
        assert world.observation_string(p) == state.observation_string(p)
        check_calling_world(state, world, p, same_order=False)
        for k in range(3):  # what ISMCTS asserts of the worlds it draws from such a root
            again = world.resample_from_infostate(p, np.random.RandomState(k).uniform)
            assert again.information_state_string(p) == world.information_state_string(p)
            check_calling_world(world, again, p)
        done["calls" if c.st[S.S_NCALLS] else "none"] += 1

    while done["calls"] < 300:
        _random_deal(game, rng, visit)


def test_ismcts_plays_whole_deals_against_random_bots(game):
    from open_spiel.python.algorithms import ismcts, mcts

    rs = np.random.RandomState(3)
    ev = mcts.RandomRolloutEvaluator(1, rs)
    bot = ismcts.ISMCTSBot(game, ev, 2.0, 8, random_state=rs)
    rnd = [pyspiel.make_uniform_random_bot(q, 10 + q) for q in range(4)]
    rng = np.random.default_rng(6)
    for _ in range(2):
        state = game.new_initial_state()
        moves = 0
        while not state.is_terminal():
            if state.is_chance_node():
                _chance(state, rng)
                continue
            p = state.current_player()
            a = bot.step(state) if p == 0 else rnd[p].step(state)
            assert a in state.legal_actions()
            moves += p == 0
            state.apply_action(a)
        assert sum(state.returns()) == 0 and moves > 0


# --- OpenSpiel bots as contestants ------------------------------------------------------------
@needs_openspiel
def test_openspiel_players_play_python_deals():
    from sim.deal import Deal, play_python
    from strategies.registry import make

    for spec in ("openspiel(bot=uniform_random)", "openspiel(bot=mcts, simulations=4)",
                 "openspiel(bot=ismcts, simulations=4)"):
        a, b = make(spec), make(spec)
        assert make(a.spec()).param_values() == a.param_values()  # the spec round-trips
        rec = play_python(Deal(seed=3, deal=1), [a, make("random"), b, make("random")])
        assert sum(rec["settlement"]) == 0
        again = play_python(Deal(seed=3, deal=1), [make(spec), make("random"), make(spec),
                                                   make("random")])
        assert again["tricks"] == rec["tricks"]  # reproducible from the deal and the seat


@needs_openspiel
def test_openspiel_spec_is_checked():
    from sim.errors import ConfigError
    from strategies.registry import make

    with pytest.raises(ConfigError, match="bot"):
        make("openspiel(bot=alphazero)")
    with pytest.raises(ConfigError, match="simulations"):
        make("openspiel(simulations=0)")


@needs_openspiel
def test_an_openspiel_player_in_a_play_run():
    p = _cli("play", "--seats", "openspiel(bot=uniform_random),random", "--deals", 2)
    assert p.returncode == 0, p.stderr.decode()[-2000:]


@needs_openspiel
@pytest.mark.slow
def test_an_openspiel_player_in_a_duplicate_tournament(tmp_path):
    cfg = tmp_path / "os.toml"
    cfg.write_text('name = "os"\nformat = "head-to-head"\n'
                   'players = ["openspiel(bot=uniform_random)", "random"]\n'
                   'deals = 4\nduplicate = true\nseed = 7\n[run]\njobs = 1\n')
    p = _cli("tournament", cfg, "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert (tmp_path / "out").exists()


def _policy_file(tmp_path, favour: int | None = None, hidden: int = 8):
    """A small random MLP as a policy file; with ``favour``, that action's bias dominates."""
    from sim.spaces import N_ACTIONS

    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(OBS_SIZE, hidden)).astype(np.float32) * 0.01,
               np.zeros(hidden, np.float32)),
              (rng.normal(size=(hidden, N_ACTIONS)).astype(np.float32) * 0.01,
               np.zeros(N_ACTIONS, np.float32))]
    if favour is not None:
        layers[1][1][favour] = 1e6
    path = tmp_path / "policy.npz"
    so.save_policy(str(path), layers)
    return path


@needs_openspiel
def test_a_policy_from_a_weights_file_plays(tmp_path):
    from sim.deal import Deal, play_python
    from strategies.registry import make

    path = _policy_file(tmp_path)
    spec = f"openspiel(bot=policy, policy={path})"
    rec = play_python(Deal(seed=3, deal=1), [make(spec), make("random"), make(spec),
                                              make("random")])
    assert sum(rec["settlement"]) == 0
    again = play_python(Deal(seed=3, deal=1), [make(spec), make("random"), make(spec),
                                                make("random")])
    assert again["tricks"] == rec["tricks"]  # a deterministic policy


@needs_openspiel
def test_a_policy_plays_the_legal_action_of_its_highest_logit(tmp_path):
    from sim.deal import Deal
    from sim.spaces import action_of_code
    from strategies.registry import make

    rng = np.random.default_rng(1)
    for deal in range(20):
        d = Deal(seed=5, deal=deal)
        while not d.done and d.to_act.kind != "play":
            codes = d.legal_codes()
            d.apply_code(codes[int(rng.integers(len(codes)))])
        if not d.done:
            break
    st = d.engine[0]
    codes = d.legal_codes()
    want = codes[-1]
    favour = int(action_of_code(int(st[S.S_PHASE]), int(st[S.S_TRUMP]), want))
    player = make(f"openspiel(bot=policy, policy={_policy_file(tmp_path, favour)})")
    obs = d.observation(d.to_act.seat)
    assert player.choose(obs, d.legal()) == d.legal()[-1]


@needs_openspiel
def test_a_bad_policy_file_is_one_line(tmp_path):
    from sim.deal import Deal, play_python
    from sim.errors import ShuangkouError
    from strategies.registry import make

    bad = tmp_path / "bad.npz"
    np.savez(bad, w0=np.zeros((3, 3), np.float32), b0=np.zeros(3, np.float32))
    obj = tmp_path / "obj.npz"
    np.savez(obj, w0=np.array([{"a": 1}], dtype=object), b0=np.zeros(1))
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    for path, what in ((bad, "layer 0"), (obj, "holds Python objects"),
                       (tmp_path / "none.npz", "does not exist"),
                       (junk, "not a readable .npz")):
        player = make(f"openspiel(bot=policy, policy={path})")
        with pytest.raises(ShuangkouError, match=what) as e:
            play_python(Deal(seed=3, deal=1), [player, make("random"), make("random"),
                                                make("random")])
        assert "\n" not in str(e.value)
