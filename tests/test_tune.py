"""``shuangkou tune`` (sim/tools/tune.py): SPSA gains, reproducibility for any --jobs, exact
resume, bad input (one line, exit 2) and the last line of standard output."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from sim.cli import main
from sim.errors import ConfigError
from sim.tools import tune
from strategies.registry import make

GREEDY = ["show_at=0.2..0.8", "min_cards=1..27"]


def _cfg(**kw):
    args = dict(pairs=60, iterations=4, seed=3)
    args.update(kw)
    return tune.make_config("greedy", GREEDY, **args)


def test_gains_follow_fishtest_schedule():
    cfg = _cfg(iterations=100)
    c_n, a_n = cfg.gains(100)
    c_end = np.array([0.06, 2.6])
    assert np.allclose(c_n, c_end)  # at the last iteration c_k = c_end
    assert np.allclose(a_n / c_n, tune.R_END * c_end)  # one point moves r_end * c_end
    c_1, a_1 = cfg.gains(1)
    assert np.allclose(c_1, c_end * 100 ** tune.GAMMA)
    assert np.allclose(a_1, tune.R_END * c_end ** 2 * (110 / 11) ** tune.ALPHA)


def test_integers_rounded_and_values_clipped():
    cfg = _cfg()
    mc = cfg.params[1]
    assert mc.integer and mc.value(10.49) == 10 and mc.value(10.5) == 11
    assert mc.value(40.0) == 27 and cfg.params[0].value(-1.0) == 0.2
    assert cfg.spec(cfg.played([0.5, 3.7])) == "greedy(show_at=0.5,min_cards=4)"


def test_same_trajectory_for_any_jobs(tmp_path):
    cfg = _cfg()
    one = tune.run(cfg, str(tmp_path / "j1"), jobs=1, confirm=50, progress=False, plot=False)
    two = tune.run(cfg, str(tmp_path / "j2"), jobs=2, confirm=50, progress=False, plot=False)
    assert one.rows == two.rows and one.spec == two.spec and one.confirm == two.confirm
    assert len(one.rows) == 5 and one.pairs_played == 4 * 60
    assert (tmp_path / "j1" / "trajectory.csv").read_text() == \
        (tmp_path / "j2" / "trajectory.csv").read_text()
    # the perturbations moved something: the run is not trivially constant
    assert any(r["theta"] != one.rows[0]["theta"] for r in one.rows[1:])


def test_resume_ends_where_an_uninterrupted_run_ends(tmp_path):
    cfg = _cfg()
    whole = tune.run(cfg, str(tmp_path / "a"), confirm=40, progress=False, plot=False)
    part = tune.run(cfg, str(tmp_path / "b"), confirm=40, progress=False, plot=False,
                    stop_after=2)
    assert part.confirm is None and len(part.rows) == 3
    state = json.loads((tmp_path / "b" / tune.CHECKPOINT).read_text())
    assert state["iteration"] == 2
    # killed after appending a row (a whole one and a torn one) but before its checkpoint
    with open(tmp_path / "b" / tune.ROWS, "a") as f:
        f.write(json.dumps({"iteration": 3, "theta": [0.5, 3.0], "margin": 9, "pairs": 1})
                + '\n{"iteration": 4, "th')
    with pytest.raises(ConfigError, match="--resume"):  # not overwritten without --resume
        tune.run(cfg, str(tmp_path / "b"), progress=False, plot=False)
    rest = tune.run(cfg, str(tmp_path / "b"), resume=True, confirm=40, progress=False,
                    plot=False)
    assert rest.rows == whole.rows and rest.spec == whole.spec
    assert rest.confirm == whole.confirm and rest.pairs_played == whole.pairs_played


def test_resume_refuses_another_runs_checkpoint(tmp_path, capsys):
    out = str(tmp_path / "r")
    tune.run(_cfg(), out, progress=False, plot=False, stop_after=1)
    for other in (_cfg(seed=4), tune.make_config("greedy", ["show_at=0.1..0.8",
                                                            "min_cards=1..27"],
                                                 pairs=60, iterations=4, seed=3)):
        with pytest.raises(ConfigError, match="another tuning run") as e:
            tune.run(other, out, resume=True, progress=False, plot=False)
        assert "\n" not in str(e.value)
    rc = main(["tune", "greedy(min_cards=9)", "--param", "show_at=0.2..0.8", "--resume",
               "--out", out, "--pairs", "60", "--iterations", "4", "--seed", "3"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "another tuning run" in err and len(err.splitlines()) == 1


def _theta(checkpoint: str, first: str) -> str:
    """``checkpoint`` with its theta's first value written as ``first``."""
    state = json.loads(checkpoint)
    state["theta"][0] = "@"
    return json.dumps(state).replace('"@"', first)


def test_corrupt_checkpoint_is_one_line(tmp_path, capsys):
    out = tmp_path / "c"
    out.mkdir()
    tune.run(_cfg(), str(out), progress=False, plot=False, stop_after=1)
    good = (out / tune.CHECKPOINT).read_text()
    rows = (out / tune.ROWS).read_text()
    for text, row_text in (("{not json", rows), (json.dumps({"format": "x"}), rows),
                           (json.dumps([1]), rows), (good, rows.splitlines()[0]),
                           (good, rows.replace('"iteration": 1', '"iteration": 7')),
                           (_theta(good, "NaN"), rows), (_theta(good, "true"), rows)):
        (out / tune.CHECKPOINT).write_text(text)
        (out / tune.ROWS).write_text(row_text)
        rc = main(["tune", "greedy", "--param", "show_at=0.2..0.8", "--param",
                   "min_cards=1..27", "--resume", "--out", str(out), "--no-progress",
                   "--pairs", "60", "--iterations", "4", "--seed", "3"])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "corrupt" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("spec, words, says", [
    ("greedy", ["bogus=0..1"], "tunable are show_at (float in [0.0, 1.0]), min_cards"),
    ("greedy", ["show_at=0.8..0.2"], "empty or reversed"),
    ("greedy", ["show_at=0.5..0.5"], "empty or reversed"),
    ("greedy", ["show_at=0..2"], "outside the parameter's range"),
    ("greedy", ["show_at=0.5..0.9"], "start value show_at=0.4 is outside"),
    ("greedy", ["show_at=a..0.9"], "not a number"),
    ("greedy", ["show_at"], "NAME=LO..HI"),
    ("greedy", [], "give at least one --param"),
    ("pimc", ["rollout=0..1"], "only numeric"),
    ("greedy(nope=1)", ["show_at=0..1"], "unknown parameter 'nope'"),
    ("nosuchbot", ["show_at=0..1"], "unknown strategy"),
    ("greedy", ["min_cards=1..26.5"], "give integer bounds"),  # else 27 is played
    ("greedy", ["min_cards=1..27:0.5"], "must be > 0.5"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, spec, words, says):
    argv = ["tune", spec, "--out", str(tmp_path / "o"), "--no-progress"]
    for w in words:
        argv += ["--param", w]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o").exists()  # nothing written for a refused run


def test_last_line_is_the_tuned_spec(tmp_path, capsys):
    out = str(tmp_path / "t")
    rc = main(["tune", "greedy(partner_margin=0.2)", "--param", "show_at=0.2..0.8",
               "--param", "min_cards=1..27", "--pairs", "50", "--iterations", "3",
               "--confirm", "30", "--out", out, "--no-progress"])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    spec = lines[-1]
    s = make(spec)  # usable as is
    assert s.name == "greedy" and s.partner_margin == 0.2 and "confirmation" in lines[-2]
    assert 0.2 <= s.show_at <= 0.8 and isinstance(s.min_cards, int)
    for name in ("trajectory.csv", "trajectory.png", "confirm.json", tune.CHECKPOINT):
        assert os.path.getsize(os.path.join(out, name)) > 0
    rows = open(os.path.join(out, "trajectory.csv")).read().splitlines()
    assert rows[0] == "iteration,show_at,min_cards,margin,pairs" and len(rows) == 5
    confirm = json.load(open(os.path.join(out, "confirm.json")))
    assert confirm["tuned"] == spec and confirm["lo"] <= confirm["margin"] <= confirm["hi"]


def test_against_scores_both_sides_on_the_same_deals(tmp_path):
    cfg = _cfg(against="random", iterations=2)
    assert cfg.against == ("random",)
    res = tune.run(cfg, str(tmp_path / "a"), confirm=0, progress=False, plot=False)
    assert res.pairs_played == 2 * 2 * 60 and res.confirm is None
    assert tune.make_config("greedy", GREEDY, against="field").against == tune.FIELD


@pytest.mark.slow
def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    args = ["tune", "greedy", "--param", "show_at=0.2..0.8", "--param", "min_cards=1..27",
            "--pairs", "100", "--iterations", "150", "--confirm", "0", "--no-progress"]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    out = str(tmp_path / "k")
    p = subprocess.Popen([sys.executable, "-m", "sim.cli", *args, "--out", out], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ck = os.path.join(out, tune.CHECKPOINT)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and p.poll() is None:
            if os.path.exists(ck) and json.load(open(ck))["iteration"] >= 3:
                break
            time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    killed_at = json.load(open(ck))["iteration"]
    assert main([*args, "--out", out, "--resume"]) == 0
    assert main([*args, "--out", str(tmp_path / "whole")]) == 0
    assert 3 <= killed_at < 150  # killed mid-run (else the test proves nothing)
    for name in ("trajectory.csv", "trajectory.jsonl"):
        assert open(os.path.join(out, name)).read() == \
            open(os.path.join(tmp_path / "whole", name)).read()


def test_docs_quote_the_defaults_the_code_has():
    """docs/tuning.md's options table and settings quote the defaults of ``shuangkou tune`` and
    of sim/tools/tune.py."""
    import re

    from sim.cli import build_parser

    text = open(os.path.join(os.path.dirname(__file__), "..", "docs", "tuning.md"),
                encoding="utf-8").read()
    args = build_parser().parse_args(["tune", "greedy"])
    table = {m.group(1): m.group(2) for m in re.finditer(
        r"^\| `(--[a-z]+)[^|]*\|[^\n]*\(([^()]*)\) \|$", text, re.M)}
    assert table["--pairs"] == f"{args.pairs}"
    assert table["--iterations"] == f"{args.iterations}"
    assert table["--confirm"].startswith(f"{args.confirm:,};")
    assert table["--seed"] == f"{args.seed}"
    assert table["--out"] == f"`./{args.out}`"
    assert table["--param"] == f"a tenth of the range; {tune.R_END}"
    assert tune.C_END_SHARE == 0.1
    assert f"integer parameter at least {tune.INT_C_END}" in text
    assert f"`r_end` = {tune.R_END}" in text and "`c_end` = a tenth of the range" in text
    assert f"γ = {tune.GAMMA}" in text and f"α = {tune.ALPHA}" in text
    assert tune.A_SHARE == 0.1 and "A = K / 10" in text
    assert tune.CONFIRM_FIRST == 2 ** 62 and "(deals\n  from 2^62 of the seed" in text
    assert f"`field`: {', '.join(tune.FIELD)}" in text
    k = args.iterations
    assert f"{k ** tune.GAMMA:.1f} × at\nK = {k}" in text


def test_integer_perturbations_never_round_to_the_same_value():
    """An integer's default c_end is over 0.5, so theta+ and theta- always play different
    values (a tenth of a range under 5 would leave them equal and the parameter unmoved)."""
    cfg = tune.make_config("greedy", ["min_cards=9..12"], iterations=100)
    assert cfg.params[0].c_end == tune.INT_C_END
    for k in (1, 50, 100):
        c_k, _ = cfg.gains(k)
        for x in np.linspace(9, 12, 31):
            plus = cfg.played([min(x + c_k[0], 12)])[0]
            minus = cfg.played([max(x - c_k[0], 9)])[0]
            assert plus > minus, (k, x)


def test_duel_reports_the_deals_it_played():
    """``duel`` (the benchmark's extra matches) names its own first deal, not the
    confirmation's."""
    d = tune.duel("random", "random", 3, first=11)
    assert d["first_deal"] == 11 and d["pairs"] == 3
    assert tune.duel("random", "random", 3)["first_deal"] == tune.CONFIRM_FIRST


def test_a_run_stopped_early_leaves_its_trajectory_so_far(tmp_path):
    """Interrupted (Ctrl-C, or the testing hook), a run writes trajectory.csv and .png of the
    iterations done, as fishtest shows a run's graph while it runs."""
    out = str(tmp_path / "t")
    tune.run(_cfg(), out, progress=False, stop_after=2)
    lines = open(os.path.join(out, "trajectory.csv"), encoding="utf-8").read().splitlines()
    assert lines[0].startswith("iteration,show_at,min_cards") and len(lines) == 1 + 3
    assert [ln.split(",")[0] for ln in lines[1:]] == ["0", "1", "2"]
    assert os.path.getsize(os.path.join(out, "trajectory.png")) > 1000


def test_seconds_count_tuning_not_the_workers_start(tmp_path, monkeypatch):
    """The seconds reported (and checkpointed) are the iterations', not the kernel compile or
    worker start that entering ``pair_player`` costs (a 100 s start on a fake clock)."""
    import contextlib

    from sim.tournament import run as tournament

    clock = [0.0]
    monkeypatch.setattr(tune.time, "perf_counter", lambda: clock[0])
    real = tournament.pair_player

    @contextlib.contextmanager
    def slow_start(*a, **kw):
        with real(*a, **kw) as play:
            clock[0] += 100.0
            yield play

    monkeypatch.setattr(tournament, "pair_player", slow_start)
    res = tune.run(_cfg(), str(tmp_path / "t"), progress=False, plot=False, confirm=0)
    assert res.pairs_played == 4 * 60 and res.seconds < 100
