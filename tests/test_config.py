"""Tournament configs: everything is validated before anything runs, one clear message each."""

from __future__ import annotations

import glob
import os

import pytest

from sim.cli import main
from sim.errors import ConfigError
from sim.tournament.config import BACKENDS, FORMATS, from_dict, load_config, parse_filter, tomllib
from strategies.registry import available, parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(glob.glob(os.path.join(ROOT, "configs", "*.toml")))
BASE = {"players": ["random(show_prob=0.9)", "random"]}


def err(raw, **kw):
    with pytest.raises(ConfigError) as e:
        from_dict({**BASE, **raw}, source="c.toml", **kw)
    return str(e.value)


def test_shipped_configs_are_valid():
    names = {os.path.basename(p) for p in CONFIGS}
    assert {"quick.toml", "h2h_1m.toml", "round_robin.toml", "sprt.toml"} <= names
    for path in CONFIGS:
        with open(path, "rb") as f:
            specs = tomllib.load(f)["players"]
        missing = [s for s in specs if parse_spec(s)[0] not in available()]
        if missing:  # the round robin names players that land with the strategies issue
            with pytest.raises(ConfigError, match="unknown strategy"):
                load_config(path)
            continue
        cfg = load_config(path)
        assert cfg.name == os.path.splitext(os.path.basename(path))[0]


def test_quick_config_is_fast_and_round_robin_has_every_builtin():
    quick = load_config(os.path.join(ROOT, "configs", "quick.toml"))
    assert quick.deals * 2 <= 100_000 and quick.format == "head-to-head"
    with open(os.path.join(ROOT, "configs", "round_robin.toml"), "rb") as f:
        rr = tomllib.load(f)
    assert rr["format"] == "round-robin"
    assert {parse_spec(s)[0] for s in rr["players"]} == \
        {"random", "greedy", "pimc", "ismcts", "oracle"}
    with open(os.path.join(ROOT, "configs", "h2h_1m.toml"), "rb") as f:
        assert tomllib.load(f)["deals"] == 1_000_000
    with open(os.path.join(ROOT, "configs", "sprt.toml"), "rb") as f:
        assert "sprt" in tomllib.load(f)


def test_defaults_and_canonical_specs():
    cfg = from_dict({"players": ["random( show_prob = 0.90 )", "random(show_prob=0.25)"]})
    assert cfg.players == ("random(show_prob=0.9)", "random")
    assert cfg.format == "head-to-head" and cfg.duplicate and cfg.deals == 10000
    assert cfg.jobs == 1 and cfg.backend == "auto" and cfg.sprt is None
    assert cfg.rules_dict["kou_di_pair"] == 4 and cfg.out == os.path.join("results", "tournament")
    assert cfg.matchups() == [(0, 1)]


@pytest.mark.parametrize("raw, parts", [
    ({"deal": 5}, ["unknown key 'deal'", "5", "allowed keys at the top level", "deals"]),
    ({"run": {"job": 2}}, ["unknown key 'run.job'", "allowed keys in [run]", "jobs"]),
    ({"output": {"plot": False}}, ["unknown key 'output.plot'", "plots"]),
    ({"sprt": {"m0": 0}}, ["unknown key 'sprt.m0'", "mu0"]),
    ({"rules": {"kou_di": 3}}, ["unknown key 'rules.kou_di'", "kou_di_pair"]),
    ({"rules": {"kou_di_pair": 0}}, ["'rules.kou_di_pair' = 0", ">= 1"]),
    ({"rules": {"settle_step": "20"}}, ["'rules.settle_step' = '20'", "integer"]),
    ({"deals": 0}, ["'deals' = 0", "integer in 1 … 1000000000000"]),
    ({"deals": 10**12 + 1}, ["'deals' = 1000000000001", "integer in 1 … 1000000000000"]),
    ({"deals": "many"}, ["'deals' = 'many'", "integer"]),
    ({"deals": 1.5}, ["'deals' = 1.5", "integer"]),
    ({"duplicate": "yes"}, ["'duplicate' = 'yes'", "true or false"]),
    ({"seed": -1}, ["'seed' = -1", "integer"]),
    ({"format": "swiss"}, ["'format' = 'swiss'", "head-to-head, round-robin, gauntlet"]),
    ({"run": {"jobs": 0}}, ["'run.jobs' = 0", "1 … 4096"]),
    ({"run": {"backend": "mpi"}}, ["'run.backend' = 'mpi'", "auto, fork, loky, threading, dask"]),
    ({"run": {"scheduler": "tcp://x:1"}}, ["'run.scheduler'", "backend = \"dask\""]),
    ({"run": {"chunk_size": 0}}, ["'run.chunk_size' = 0"]),
    ({"run": 3}, ["'run' = 3", "must be a table"]),
    ({"timeout": -1}, ["'timeout' = -1", "number >= 0"]),
    ({"output": {"records": -2}}, ["'output.records' = -2"]),
    ({"output": {"record_filter": "score > 3"}},
     ["'output.record_filter' = 'score > 3'", "column 'score'", "attacker_score"]),
    ({"output": {"record_filter": "attacker_score >> 3"}}, ["'column op integer'"]),
    ({"sprt": {"mu0": 1, "mu1": 1}}, ["'sprt.mu1' = 1", "differ"]),
    ({"sprt": {"alpha": 0.7}}, ["'sprt.alpha' = 0.7", "(0.0, 0.5]"]),
    ({"sprt": {"min_pairs": 1}}, ["'sprt.min_pairs' = 1", "integer in 30 … 1000000000"]),
    # below 30 pairs the per-pair looks' error rates exceed alpha, beta (stats/sprt.py's table)
    ({"sprt": {"min_pairs": 2}}, ["'sprt.min_pairs' = 2", "integer in 30 …", "error rates"]),
    ({"sprt": {"min_pairs": 29}}, ["'sprt.min_pairs' = 29", "integer in 30 …"]),
    ({"sprt": {"min_pairs": 2.5}}, ["'sprt.min_pairs' = 2.5", "integer"]),
    ({"players": ["random"]}, ["'players'", "exactly 2 players"]),
    ({"players": ["random", "random(show_prob=0.25)"]},
     ["'players[1]'", "same player as players[0]"]),
    ({"players": ["random", "nosuch(x=1)"]},
     ["'players[1]' = 'nosuch(x=1)'", "unknown strategy 'nosuch'", "available are", "random"]),
    ({"players": ["random", "random(speed=3)"]},
     ["'players[1]'", "unknown parameter 'speed'", "show_prob"]),
    ({"players": ["random", "random(show_prob=2)"]}, ["'players[1]'", "show_prob=2", "[0.0, 1.0]"]),
    ({"players": "random"}, ["'players' = 'random'", "list of non-empty strings"]),
    ({"plugins": ["no_such_module_xyz"]}, ["'plugins[0]'", "cannot be imported"]),
])
def test_one_clear_message(raw, parts):
    msg = err(raw)
    assert msg.startswith("c.toml: ")
    for p in parts:
        assert p in msg, (p, msg)


def test_sprt_only_for_head_to_head():
    msg = err({"format": "round-robin", "players": ["random", "random(show_prob=0.5)",
                                                    "random(show_prob=0.9)"], "sprt": {}})
    assert "'sprt'" in msg and "head-to-head" in msg


def test_missing_players_and_formats():
    with pytest.raises(ConfigError, match="missing key 'players'"):
        from_dict({})
    three = ["random", "random(show_prob=0.5)", "random(show_prob=0.9)"]
    assert from_dict({"format": "round_robin", "players": three}).matchups() == \
        [(0, 1), (0, 2), (1, 2)]
    assert from_dict({"format": "Gauntlet", "players": three}).matchups() == [(0, 1), (0, 2)]
    assert set(FORMATS) == {"head-to-head", "round-robin", "gauntlet", "partners"}
    assert BACKENDS == ("auto", "fork", "loky", "threading", "dask")


def test_files(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("players = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    ok = tmp_path / "my-run.toml"
    ok.write_text('players = ["random", "random(show_prob=0.5)"]\n')
    assert load_config(ok).name == "my-run"
    assert load_config(ok, {"deals": 7, "run.jobs": 2}).deals == 7


def test_resolved_toml_round_trip_and_hash(tmp_path):
    cfg = from_dict({**BASE, "deals": 123, "rules": {"kou_di_pair": 6}, "seed": 5,
                     "output": {"record_filter": "multiplier == 6", "records": 2},
                     "sprt": {"mu1": 0.3, "min_pairs": 50}})
    assert cfg.sprt.min_pairs == 50 and from_dict({**BASE, "sprt": {}}).sprt.min_pairs == 200
    path = tmp_path / "r.toml"
    path.write_text(cfg.to_toml())
    again = load_config(path)
    assert again.to_dict() == {**cfg.to_dict(), "name": cfg.name}
    assert again.hash() == cfg.hash()
    # jobs, backend and the output folder do not change results; deals, seed, rules do
    assert from_dict({**BASE, "run": {"jobs": 2, "backend": "threading"},
                      "output": {"dir": "x"}}).hash() == from_dict(BASE).hash()
    for other in ({"deals": 9}, {"seed": 1}, {"rules": {"max_redeals": 2}},
                  {"run": {"chunk_size": 7}}, {"duplicate": False}):
        assert from_dict({**BASE, **other}).hash() != from_dict(BASE).hash()
    diffs = from_dict(BASE).differences(from_dict({**BASE, "deals": 9}))
    assert diffs == ["deals: 10000 -> 9"]


def test_filter_grammar():
    assert parse_filter("attacker_score >= 200 and multiplier == 4") == [
        ("attacker_score", ">=", 200), ("multiplier", "==", 4)]
    with pytest.raises(ConfigError, match="not a per-deal column"):
        parse_filter("bogus == 1")


EVIL = """
import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "imported.mark"), "w").close()
from strategies.random import RandomStrategy
class Calm(RandomStrategy):
    name = 'calm'
"""


def test_plugin_strategy_in_config(tmp_path, monkeypatch):
    """A config names plug-ins but does not load them: --plugin (or Python) does."""
    from strategies.registry import load_plugins

    (tmp_path / "cfgplug.py").write_text(EVIL)
    (tmp_path / "p.toml").write_text('plugins = ["cfgplug"]\nplayers = ["calm", "random"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"plug-in 'cfgplug' \(strategy 'calm'\).*"
                                          r"load it with --plugin cfgplug"):
        load_config(tmp_path / "p.toml")
    assert not (tmp_path / "imported.mark").exists()
    load_plugins(["cfgplug"])  # what --plugin does
    assert load_config(tmp_path / "p.toml").players == ("calm", "random")


@pytest.mark.parametrize("toml", ['plugins = ["evilcfg"]\nplayers = ["evilbot", "random"]\n',
                                  'players = ["evilcfg:Bot", "random"]\n',
                                  'players = ["pimc(rollout=evilcfg:Bot)", "random"]\n'])
def test_received_config_runs_no_code(tmp_path, toml):
    """``plugins = ["evil"]`` (or an ``evil:Bot`` player) in a config from elsewhere must not
    import the ``evil.py`` lying next to it, from any working folder: one line, exit 2, and
    the flag to add."""
    import subprocess
    import sys

    got = tmp_path / "received"
    got.mkdir()
    (got / "evilcfg.py").write_text(EVIL)
    (got / "c.toml").write_text(toml)
    for cwd in (got, tmp_path):
        p = subprocess.run([sys.executable, "-m", "sim.cli", "tournament", str(got / "c.toml"),
                            "--no-progress", "--deals", "2"], cwd=cwd, capture_output=True,
                           text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=ROOT))
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "--plugin evilcfg" in lines[0], p.stderr
        assert not (got / "imported.mark").exists()
        assert not (cwd / "results").exists()


def test_cli_bad_config_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('players = ["random", "random(show_prob=0.5)"]\n[run]\nbackend = "mpi"\n')
    assert main(["tournament", str(path), "--no-progress"]) == 2
    e = capsys.readouterr().err
    assert "shuangkou tournament: error:" in e and "'run.backend' = 'mpi'" in e
    assert "loky, threading, dask" in e
    assert len(e.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()  # nothing ran


def test_config_may_name_this_packages_own_classes(tmp_path):
    import subprocess
    import sys

    (tmp_path / "c.toml").write_text(
        'players = ["strategies.example:Cautious", "random"]\ndeals = 2\n'
        '[output]\nplots = false\n')
    p = subprocess.run([sys.executable, "-m", "sim.cli", "tournament", str(tmp_path / "c.toml"),
                        "--no-progress", "--quiet", "--out", str(tmp_path / "o")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr


def test_a_long_value_is_cut_short_in_the_one_line():
    """The value a message quotes is cut to a few hundred characters (a results folder's
    config.json listing 1,000 players printed a 25 KB 'line'); a stored list with a player
    twice names the repeat, as a config does."""
    many = [f"greedy(contest_at={i % 400})" for i in range(1000)]
    msg = err({"players": many})  # head-to-head: exactly 2
    assert len(msg) < 400 and "'players' = ['greedy(contest_at=0)'" in msg, msg
    assert "(1,000 items)" in msg and "exactly 2 players" in msg
    msg = err({"format": "round-robin", "players": many}, imports=False)
    assert len(msg) < 400 and "'players[400]' = 'greedy(contest_at=0)'" in msg, msg
    assert "the same player as players[0]" in msg
    msg = err({"name": "x" * 100_000 + "/"})
    assert len(msg) < 400 and "(100,001 characters)" in msg, msg
