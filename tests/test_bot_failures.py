"""Misbehaving Python-tier bots and plug-ins: time limits enforced while a bot runs (in
``play``, in-process, on a helper thread, in tournaments with loky and threading workers),
``sys.exit`` and Ctrl-C in a bot, plug-ins that fail at import or take a built-in's name,
NaN strategy parameters."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest

from sim.cli import main
from sim.config import from_dict
from sim.errors import ConfigError, StrategyError
from sim.runner import iter_records, make_seats, summaries
from sim.tournament import run_tournament
from strategies.registry import load_plugin, make, resolve

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HANG = '''
import sys
import time

from strategies.base import param
from strategies.random import RandomStrategy


class Hang(RandomStrategy):
    """random through the Python tier that misbehaves in choose on deal ``at``."""
    name = "hang"
    compiled_kind = None
    how = param("none", str, choices=("none", "spin", "sleep", "catch", "exit", "interrupt"))
    at = param(0, int, lo=0)

    def begin_deal(self, seat, seed, deal):
        super().begin_deal(seat, seed, deal)
        self.deal = deal

    def choose(self, obs, legal):
        if self.deal == self.at:
            if self.how == "spin":
                while True:
                    pass
            if self.how == "sleep":
                time.sleep(1e9)
            if self.how == "catch":  # swallows every Exception, not the time limit
                while True:
                    try:
                        time.sleep(1e9)
                    except Exception:
                        pass
            if self.how == "exit":
                sys.exit(3)
            if self.how == "interrupt":
                raise KeyboardInterrupt
        return super().choose(obs, legal)


class ExitAtStart(RandomStrategy):
    name = "exit_at_start"
    compiled_kind = None

    def begin_deal(self, seat, seed, deal):
        sys.exit()
'''


@pytest.fixture
def hang(tmp_path, monkeypatch):
    (tmp_path / "hangplug.py").write_text(HANG)
    monkeypatch.syspath_prepend(str(tmp_path))
    load_plugin("hangplug")
    return "hangplug"


def in_thread(fn, bound=60.0):
    """``fn()`` on a thread that is not the main thread: (result, exception); fails rather
    than hangs when ``fn`` does not return within ``bound`` seconds."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(bound)
    assert not t.is_alive(), f"still running after {bound} s"
    return box.get("value"), box.get("error")


def stopped(spec, seat, seed, deal):
    return (rf"strategy '{spec}' in seat {seat} took [0-9.]+ s in choose, over the 0.2 s limit "
            rf"and was stopped \(seed {seed}, deal {deal}; replay with shuangkou play")


# --- plug-ins -------------------------------------------------------------------------------
@pytest.mark.parametrize("source,error", [
    ("raise ValueError('no config for\\n this bot')", "ValueError: no config for this bot"),
    ("def broken(:\n    pass\n", "SyntaxError: "),
    ("import sys\nsys.exit('bye')\n", "SystemExit: bye"),
])
def test_plugin_failing_at_import_is_one_line(tmp_path, monkeypatch, capsys, source, error):
    name = f"badplug_{abs(hash(source)) % 10**6}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=rf"plugin module '{name}' cannot be imported: it "
                                          rf"raised {error}"):
        load_plugin(name)
    with pytest.raises(ConfigError, match=rf"module '{name}' cannot be imported \(it raised "
                                          rf"{error}"):
        make(f"{name}:Bot")
    assert main(["play", "--plugin", name]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"plugin module '{name}' cannot be imported" in err[0]
    if error.startswith("SyntaxError"):
        assert f"{name}.py, line 1)" in err[0]


def test_plugin_named_like_a_builtin_is_refused(tmp_path, monkeypatch):
    (tmp_path / "clashplug.py").write_text(textwrap.dedent('''
        from strategies.random import RandomStrategy

        class MyGreedy(RandomStrategy):
            name = "greedy"
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"plug-in strategy clashplug:MyGreedy is named "
                                          r"'greedy' like the built-in strategy "
                                          r"strategies.greedy:GreedyStrategy"):
        load_plugin("clashplug")
    assert type(make("greedy")).__name__ == "GreedyStrategy"
    # by module:Class it is still usable, under its own spec
    assert make("clashplug:MyGreedy").spec() == "clashplug:MyGreedy"


def test_registering_the_same_class_twice_is_harmless(hang):
    cls = resolve("hang")
    assert load_plugin(hang) == ["hang", "exit_at_start"]  # loaded again: no error
    assert resolve("hang") is cls
    mod = importlib.reload(sys.modules[hang])  # a module loaded twice: a new class object
    assert load_plugin(hang) == ["hang", "exit_at_start"]
    assert resolve("hang") is mod.Hang


# --- NaN parameters -----------------------------------------------------------------------
@pytest.mark.parametrize("spec,message", [
    ("random(show_prob=nan)", r"show_prob=nan of strategy 'random' must be float in \[0.0, "
                              r"1.0\]"),
    ("greedy(show_at=NaN)", r"show_at=nan of strategy 'greedy' must be float in \[0.0, 1.0\]"),
    ("ismcts(c=inf)", r"c=inf of strategy 'ismcts' must be float in \[0.0, 100.0\]"),
    ("random(show_prob=-inf)", r"show_prob=-inf of strategy 'random' must be float in"),
])
def test_nan_and_inf_parameters_are_refused(spec, message):
    with pytest.raises(ConfigError, match=message):
        make(spec)


def test_unbounded_float_parameter_refuses_nan_and_allows_declared_infinity():
    import math

    from strategies.base import Strategy, param

    class Free(Strategy):
        name = "free"
        x = param(1.0, float)
        cap = param(1.0, float, lo=0.0, hi=math.inf)

    for bad in (float("nan"), float("inf"), "nan"):
        with pytest.raises(ConfigError, match="x=.* of strategy 'free' must be a finite float"):
            Free(x=bad)
    with pytest.raises(ConfigError, match="cap=nan of strategy 'free' must be float"):
        Free(cap=float("nan"))
    assert Free(cap=math.inf).cap == math.inf and Free(x=-2.5).x == -2.5
