"""Compiled plug-ins (sim.loops.plugins): a user's numba kernel in the compiled deal loop."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from sim.cli import main
from sim.errors import StrategyError
from sim.loops.runner import iter_records, make_seats, summaries
from strategies.example import Cautious
from strategies.example_compiled import CautiousC
from strategies.registry import make

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin_fixtures")
if FIXTURES not in sys.path:
    sys.path.insert(0, FIXTURES)

from probe_bots import Probe  # noqa: E402 (after the fixtures folder is on sys.path)


def _strip(rec):
    rec = dict(rec)
    rec.pop("players", None)
    rec.pop("seats", None)
    return rec


def test_compiled_twin_gives_the_python_bots_records():
    for greed, n in ((10, 200), (0, 60)):
        py = list(iter_records(7, 0, n, [Cautious(greed=greed), make("random")] * 2))
        twin = list(iter_records(7, 0, n, [CautiousC(greed=greed), make("random")] * 2))
        assert CautiousC().runs_compiled()
        assert [_strip(r) for r in twin] == [_strip(r) for r in py]
    # the same deals as summary rows (play_deals), and mixed with Python and built-in seats
    seats = [CautiousC(), make("greedy"), Cautious(), make("random")]
    mixed = list(iter_records(3, 0, 30, seats))
    assert mixed == list(iter_records(3, 0, 30, seats, python_tier=True))
    assert (summaries(7, 0, 200, [CautiousC(), make("random")] * 2)
            == summaries(7, 0, 200, [Cautious(), make("random")] * 2)).all()


def test_twin_names_itself_and_its_params():
    t = CautiousC(greed=5)
    assert t.compiled_params() == [5.0, 0.45]
    assert t.spec() == "strategies.example_compiled:CautiousC(greed=5)" or \
        t.spec() == "cautious_c(greed=5)"


def test_plugin_sees_only_the_masked_state():
    from probe_bots import probe_kernel

    from sim import Deal

    d = Deal(1, 0)  # the probe notices a state that is not masked
    buf = np.zeros(1 << 16, dtype=np.int64)
    with pytest.raises(RuntimeError, match="saw another hand"):
        probe_kernel(d._st, d._u, d._rules, d.seat_to_act, np.zeros(8), buf)
    # the probe raises if it sees another hand, the deck or the fixed cards: through the
    # compiled loops, the step API (mixed with a Python seat) and estimate's fixed deals
    # (beside random seats, as in the tests below: one generated module for Probe and random
    # serves them all; a set of kinds of its own would compile its loops again)
    plain = summaries(1, 0, 50, [Probe(), make("random")] * 2)
    # what a kernel writes into its arrays stays there: the rules and the deal are unchanged
    tampering = summaries(1, 0, 50, [Probe(tamper=True), make("random")] * 2)
    assert (plain == tampering).all()
    list(iter_records(1, 0, 5, [Probe(), Cautious(), make("random"), Probe()]))
    from sim.tools.estimate import estimate

    assert estimate("Kh Kh 5h 5h BJ", seat=0, deals=50, seats=[Probe(), make("random")]).deals \
        == 50


@pytest.mark.parametrize("mode,what", [(1, "returned the illegal code 9999"),
                                       (2, "raised ValueError: boom in its kernel")])
def test_bad_plugin_stops_with_one_line(mode, what):
    with pytest.raises(StrategyError) as e:
        summaries(5, 10, 20, [make("random"), Probe(mode=mode), make("random"),
                              make("random")])
    msg = str(e.value)
    assert f"strategy 'probe_bots:Probe(mode={mode})' in seat 1 {what}" in msg \
        or f"strategy 'probe(mode={mode})' in seat 1 {what}" in msg
    assert "(seed 5, deal 1" in msg and "\n" not in msg
    deal = int(msg.split("deal ")[1].split(";")[0])
    # the deals before it finish: playing only them works
    if deal > 10:
        summaries(5, 10, deal - 10, [make("random"), Probe(mode=mode), make("random"),
                                     make("random")])
    # the step API (a Python seat beside it) names the same deal
    with pytest.raises(StrategyError, match=f"seat 1 .*deal {deal};"):
        list(iter_records(5, deal, 1, [make("random"), Probe(mode=mode), Cautious(),
                                       make("random")]))


def test_bad_plugin_cli_exit_2(capsys):
    code = main(["play", "--plugin", "probe_bots", "--seats", "random,probe(mode=1)",
                 "--seed", "5", "--deals", "3"])
    err = capsys.readouterr().err
    assert code == 2
    assert "returned the illegal code 9999" in err and "seat 1" in err and "seed 5" in err
    assert len(err.strip().splitlines()) == 1


def test_edit_recompiles(tmp_path, monkeypatch):
    mod = tmp_path / "edited_bot.py"
    src = ('import numba\nimport sim.view as view\nfrom strategies.base import Strategy\n\n'
           '@numba.njit(cache=True)\ndef k(st, u, rules, seat, params, buf):\n'
           '    n = view.legal_codes(st, u, buf)\n'
           '    if view.phase(st) == view.CALL:\n        return view.PASS if n == 0 else buf[0]\n'
           '    return buf[PICK]\n\n'
           'class Edited(Strategy):\n    name = "edited"\n    kernel = k\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    # no bytecode cache: Python's own (keyed by size and modification time, which the edit
    # keeps) would import the first version again where writing bytecode is allowed
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def run():
        sys.modules.pop("edited_bot", None)
        import edited_bot

        seats = [edited_bot.Edited(), Cautious(), make("random"), Cautious()]
        return next(iter(iter_records(4, 0, 1, seats)))["tricks"]

    mod.write_text(src.replace("PICK", "n - n"))
    os.utime(mod, (1e9, 1e9))
    first = run()
    mod.write_text(src.replace("PICK", "n - 1"))  # same size and modification time
    os.utime(mod, (1e9, 1e9))
    second = run()
    assert first != second


def _twin_tournament(tmp_path, name, run_table):
    # CautiousC beside random, as in test_compiled_twin_gives_the_python_bots_records: the same
    # generated module (beside greedy it compiled one of its own)
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text('name = "twin"\nformat = "head-to-head"\n'
                   'players = ["strategies.example_compiled:CautiousC", "random"]\n'
                   "deals = 400\nduplicate = true\nseed = 3\n"
                   f"[run]\n{run_table}chunk_size = 100\nprogress = false\n"
                   "[output]\nplots = false\n")
    out = tmp_path / name
    assert main(["tournament", str(cfg), "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())["matchups"][0]["result"]


def test_tournament_with_compiled_plugin_any_backend_and_jobs(tmp_path):
    ref = _twin_tournament(tmp_path, "one", "jobs = 1\n")
    assert ref["n"] == 400
    assert _twin_tournament(tmp_path, "loky", 'jobs = 2\nbackend = "loky"\n') == ref
    assert _twin_tournament(tmp_path, "threads", 'jobs = 2\nbackend = "threading"\n') == ref


@pytest.mark.slow
def test_tournament_with_compiled_plugin_on_a_dask_cluster(tmp_path):
    # slow: a local cluster starts a scheduler and two worker processes (each imports numba and
    # loads the kernels). The quick loop keeps the loky leg above (the plug-in's generated
    # module loaded in other processes) and tests/test_tournament.py's dask test (the backend)
    ref = _twin_tournament(tmp_path, "one", "jobs = 1\n")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert _twin_tournament(tmp_path, "dask", f'backend = "dask"\n'
                                f'scheduler = "{cluster.scheduler_address}"\n') == ref


def test_generated_module_is_reused(tmp_path):
    import sim.loops.plugin_loop as loops
    from sim.loops import plugins

    a = plugins.Loops(make_seats([CautiousC(), make("random")]))
    b = plugins.Loops(make_seats([CautiousC(greed=3), make("random")]))
    assert a.mod is b.mod is loops and list(a.kinds) == [plugins.N_BUILTIN, 0] * 2
    # beside other built-in kinds: the same loops, the same entry (nothing compiles again)
    c = plugins.Loops(make_seats([CautiousC(greed=3), make("greedy")]))
    assert c.mod is loops and c.entries[plugins.N_BUILTIN] == a.entries[plugins.N_BUILTIN]
    assert a.key == c.key
    entry = plugins._entry_module(CautiousC, True, plugins.plugin_digest([CautiousC]))
    assert entry.plugin.py_func is CautiousC.kernel.py_func  # the plug-in's kernel, bound
    assert os.path.dirname(entry.__file__) == os.path.join(os.environ["NUMBA_CACHE_DIR"],
                                                           "bound")
    assert "plugin0" not in loops.finish_deal.py_func.__globals__  # no slots bound per run
    assert plugins.Loops(make_seats("random")).mod is None
    np.testing.assert_equal(a.kinds, [7, 0, 7, 0])  # plug-ins after the 7 built-in kinds


def test_plugin_that_does_not_compile_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "broken_bot.py").write_text(
        'import numba\nfrom strategies.base import Strategy\n\n'
        '@numba.njit(cache=True)\ndef k(st, u, rules, seat, params, buf):\n'
        '    return undefined_name\n\n'
        'class Broken(Strategy):\n    name = "broken"\n    kernel = k\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import broken_bot

    with pytest.raises(ValueError) as e:
        summaries(1, 0, 1, [broken_bot.Broken(), make("random")] * 2)
    msg = str(e.value)
    assert "compiled plug-in broken does not compile: kernel broken_bot:k" in msg
    assert "undefined_name" in msg, msg
    assert "\n" not in msg
    assert e.value.__cause__ is not None  # numba's whole message, for --debug


def test_plugin_kernel_may_allocate_and_pass_at_most_n_params_numbers(capsys):
    """np.zeros in a kernel (numba allows it) works in every tier; a plug-in passing more
    numbers to its kernel than reach it is refused in one line, not cut off."""
    from alloc_bots import Alloc, TooMany

    from sim.errors import ConfigError
    from strategies.params import N_PARAMS

    seats = [Alloc(), make("random"), Alloc(), make("random")]
    rows = summaries(3, 0, 40, seats)
    assert (rows == summaries(3, 0, 40, [Alloc(), make("random")] * 2)).all()
    recs = list(iter_records(3, 0, 5, seats))
    assert [_strip(r) for r in recs] == [_strip(r) for r in iter_records(3, 0, 5, seats,
                                                                         python_tier=True)]
    # beside random, as above: the module (and its "cannot inline" marker) the calls above
    # made serves the command line too (beside greedy it compiled two modules more)
    assert main(["play", "--plugin", "alloc_bots", "--seats", "alloc,random", "--deals",
                 "20"]) == 0
    capsys.readouterr()
    for run in (lambda: summaries(3, 0, 2, [TooMany(), make("random")] * 2),
                lambda: list(iter_records(3, 0, 1, [TooMany(), Cautious()] * 2))):
        with pytest.raises(ConfigError, match=rf"strategy '.*' passes {N_PARAMS + 1} parameters "
                                              rf"to its kernel .*at most {N_PARAMS} reach it"):
            run()
    assert main(["play", "--plugin", "alloc_bots", "--seats", "too_many,random"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"at most {N_PARAMS} reach it" in err


def test_estimate_cli_with_compiled_plugin_any_jobs(capsys):
    # beside random: the module the tests above compiled (only its fixed-deal loop is new)
    outs = []
    for jobs in ("1", "2"):
        assert main(["estimate", "--hand", "Kh Kh 5h 5h BJ",
                     "--plugin", "strategies.example_compiled",
                     "--seats", "cautious_c,random", "--deals", "3000", "--jobs", jobs,
                     "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0]["deals"] == 3000


def test_tournament_stops_on_a_bad_plugin_and_keeps_finished_chunks(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('name = "bad"\nformat = "head-to-head"\n'
                   'players = ["probe_bots:Probe(mode=3)", "random"]\n'
                   "deals = 60\nseed = 5\n[run]\nchunk_size = 2\nprogress = false\n"
                   "[output]\nplots = false\n")
    out = tmp_path / "out"
    assert main(["tournament", str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "returned the illegal code 9999" in err
    deal = int(err.split("deal ")[1].split(";")[0])
    assert deal >= 2  # a later chunk failed: the ones before it are on disk
    assert len(list((out / "chunks").iterdir())) == deal // 2


def test_view_accessors_agree_with_the_observation():
    """Every documented sim.view accessor, on the masked state of real decisions, against the
    Python observation (and is_legal against the full legal list, code by code)."""
    from numba import njit

    import sim
    from sim import Deal, view
    from sim.cards import CARD_NAMES, SUITS
    from sim.loops.runner import Asker
    from sim.rules import DEFAULT_RULES

    @njit
    def legal_table(st, u, out):
        for c in range(-2, 64 * 55 + 2):
            out[c + 2] = view.is_legal(st, u, c)

    def name(st, k):
        return CARD_NAMES[int(view.card_of_key(st, k))]

    def play(st, a, b):
        return [name(st, a)] + ([name(st, b)] if b >= 0 else [])

    seats = make_seats(["greedy", "random"])
    asker = Asker(seats, DEFAULT_RULES, None)
    buf = np.zeros(view.MAX_CHOICES + 8, dtype=np.int64)
    counts = np.zeros(54, dtype=np.int64)
    table = np.zeros(64 * 55 + 4, dtype=np.bool_)
    checked = 0
    for d in range(6):
        deal = Deal(11, d)
        while not deal.done:
            seat = deal.to_act.seat
            obs = deal.observation(seat)
            st, u = obs.arrays()
            assert view.to_act(st) == seat and view.phase(st) == deal.phase
            n = view.legal_codes(st, u, buf)
            codes = sorted(buf[:n].tolist())
            assert codes == sorted(deal.legal_codes()[1 if deal.phase == view.CALL else 0:]) \
                or codes == sorted(c for c in deal.legal_codes() if c >= 0)
            legal_table(st, u, table)
            allowed = {c for c in range(-2, 64 * 55 + 2) if table[c + 2]}
            assert allowed == set(codes) | ({view.PASS} if deal.phase == view.CALL else set())
            total = view.hand_counts(st, u, seat, counts)
            hand = sorted(CARD_NAMES[i] for i in range(54) for _ in range(counts[i]))
            assert hand == sorted(obs.hand) and total == view.hand_size(u, seat) == len(obs.hand)
            assert view.caller(st) == (-1 if obs.caller is None else obs.caller)
            assert view.trump(st) == (-1 if obs.trump is None else SUITS.index(obs.trump))
            assert view.dealing_round(st) == obs.round and view.redeals(st) == obs.redeals
            assert view.n_calls(st) == len(obs.calls)
            for i, c in enumerate(obs.calls):
                assert view.call_seat(st, i) == c["seat"]
                assert CARD_NAMES[view.call_card(st, i)] == c["pair"]
                assert view.call_took_from(st, i) == (-1 if c["took_from"] is None
                                                      else c["took_from"])
                g = view.call_gave(st, i)
                assert (g < 0) == (c["gave"] is None)
                if g >= 0:
                    assert sorted(CARD_NAMES[x] for x in (view.code_first(g),
                                                          view.code_second(g))) \
                        == sorted(c["gave"])
            if deal.phase == view.PLAY:
                assert view.leader(st) == obs.leader and view.trick_pos(st) == len(obs.trick)
                for i, p in enumerate(obs.trick):
                    assert sorted(play(st, view.trick_first(st, i), view.trick_second(st, i))) \
                        == sorted(p)
                if obs.trick:
                    assert view.trick_winner_pos(st) == sim.trick_winner(obs.trick, obs.trump)
                    assert view.trick_points_now(st) == sim.card_points(
                        [c for p in obs.trick for c in p])
                    for code in codes:
                        p = play(st, view.code_first(code), view.code_second(code))
                        assert view.winner_if(st, code, buf[view.MAX_CHOICES:]) \
                            == sim.trick_winner(obs.trick + [p], obs.trump)
                assert view.n_tricks(st) == len(obs.tricks)
                for t, tr in enumerate(obs.tricks):
                    assert view.trick_leader(st, t) == tr["leader"]
                    assert view.trick_winner_seat(st, t) == tr["winner"]
                    assert view.trick_points(st, t) == tr["points"]
                    for i in range(4):
                        assert sorted(play(st, view.trick_card_first(st, t, i),
                                           view.trick_card_second(st, t, i))) \
                            == sorted(tr["plays"][i])
                played = sorted(c for tr in obs.tricks for p in tr["plays"] for c in p) + \
                    sorted(c for p in obs.trick for c in p)
                once, twice = view.played_once(u), view.played_twice(u)
                assert sorted(name(st, k) for k in range(54) for m in (once, twice)
                              if int(m) >> k & 1) == sorted(played)
                assert view.attacker_points(st) == obs.attacker_points
                sides = [x for x in SUITS if x != obs.trump] + ["trump"]
                for s in range(4):
                    assert {sides[g] for g in range(4) if view.voids(st, s) >> g & 1} \
                        == obs.voids[s]
                assert sorted(name(st, k) for k in range(54)
                              for m in (view.first_hand_once(u, seat),
                                        view.first_hand_twice(u, seat))
                              if int(m) >> k & 1) == sorted(obs.first_hand)
                for k in range(54):
                    c = view.card_of_key(st, k)
                    assert view.key_of_card(st, c) == k
                    assert view.points_of_key(st, k) == view.points_of_card(c) \
                        == sim.card_points([CARD_NAMES[c]])
            checked += 1
            code = asker.loops.decide(asker.kinds[seat], asker.params, deal._st, deal._u,
                                      deal._rules, seat, *asker.scratch)
            deal.apply_code(int(code))
    assert checked > 300


def test_plugin_random_stream_is_the_seats_own_in_both_tiers():
    from probe_bots import Dice

    ref = list(iter_records(9, 0, 40, make_seats(["random(show_prob=0.6)", "greedy"])))
    # one instance per seat: a Python-tier strategy keeps its seat's streams
    seats = [Dice(show_prob=0.6), make("greedy"), Dice(show_prob=0.6), make("greedy")]
    assert [_strip(r) for r in iter_records(9, 0, 40, seats)] == [_strip(r) for r in ref]
    assert [_strip(r) for r in iter_records(9, 0, 10, seats, python_tier=True)] \
        == [_strip(r) for r in ref[:10]]


def test_view_bit_helpers():
    from sim import view

    m = np.uint64((1 << 53) | (1 << 7) | (1 << 3))
    assert view.popcount(m) == 3 and view.lowest_bit(m) == 3


def test_truncated_kernel_cache_files_compile_again(tmp_path):
    """A cache file cut short (a full disk, a killed process) is a cache miss, not an
    UnpicklingError: the kernel compiles again and the run goes on."""
    import glob
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "tiny_cached_kernel.py").write_text(
        "import sim.core.jit  # noqa: F401\nfrom numba import njit\n\n\n"
        "@njit(cache=True)\ndef f(x):\n    return x * 2 + 1\n")
    env = {**os.environ, "SHUANGKOU_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([root, str(tmp_path)])}

    def run():
        return subprocess.run([sys.executable, "-c", "import tiny_cached_kernel as m; "
                               "print(m.f(20))"], env=env, capture_output=True, text=True,
                              timeout=300)

    first = run()
    assert first.returncode == 0 and first.stdout.strip() == "41", first.stderr
    files = glob.glob(str(tmp_path / "cache" / "**" / "tiny_cached_kernel*.nb*"),
                      recursive=True)
    assert {os.path.splitext(f)[1] for f in files} == {".nbi", ".nbc"}
    for cut in (0.5, 0.0):  # half a file, then empty files
        for f in files:
            size = os.path.getsize(f)
            with open(f, "r+b") as fh:
                fh.truncate(int(size * cut))
        again = run()
        assert again.returncode == 0 and again.stdout.strip() == "41", again.stderr
        assert "Error" not in again.stderr
        assert all(os.path.getsize(f) > 0 for f in files)  # compiled and saved again
