"""sim.loops.helper: the one helper thread behind runner's timed Python bots and the
compiled plug-in loops' watched calls (tests/test_bot_failures.py covers both uses end to end)."""

from __future__ import annotations

import threading
import time

import pytest

from sim.loops import helper as helper_mod
from sim.loops import plugins, runner
from sim.loops.helper import HelperThread


class _Stop(BaseException):
    pass


def test_a_call_returns_its_value_or_raises_its_exception():
    h = HelperThread("t-helper")
    h.submit(lambda a, b: a + b, (2, 3))
    assert h.wait(10) and h.result() == 5
    h.submit(lambda: 1 / 0, ())
    assert h.wait(10)
    with pytest.raises(ZeroDivisionError):
        h.result()
    h.close()
    h.join(10)
    assert not h.is_alive()


def test_the_wait_is_bounded():
    h = HelperThread("t-helper")
    gate = threading.Event()
    h.submit(gate.wait, (10,))
    t0 = time.perf_counter()
    assert not h.wait(0.05)
    assert time.perf_counter() - t0 < 5
    gate.set()
    assert h.wait(10)
    h.close()


def test_an_abandoned_busy_loop_ends():
    h = HelperThread("t-helper")
    h.submit(lambda: [None for _ in iter(int, 1)], ())  # never returns: Python code
    assert not h.wait(0.05)
    h.abandon(_Stop)
    h.join(30)
    assert not h.is_alive() and h.abandoned


def test_an_abandoned_blocked_call_ends_when_it_returns():
    h = HelperThread("t-helper")
    gate = threading.Event()
    h.submit(gate.wait, (10,))
    h.abandon()  # nothing raised in it: it runs on until the call returns
    assert h.is_alive()
    gate.set()
    h.join(10)
    assert not h.is_alive()


def test_an_idle_helper_ends_with_its_owner(monkeypatch):
    monkeypatch.setattr(helper_mod, "OWNER_POLL", 0.02)
    made = []
    owner = threading.Thread(target=lambda: made.append(HelperThread("t-helper")))
    owner.start()
    owner.join(10)
    made[0].join(10)
    assert not made[0].is_alive()


def test_runner_and_plugins_share_it():
    assert issubclass(runner._BotThread, HelperThread)
    h = plugins._helper()
    assert isinstance(h, HelperThread) and h.name == "shuangkou-kernel"
    assert plugins._helper() is h  # one per calling thread, kept between calls
    plugins._abandon(h)
    assert h.abandoned and plugins._helper() is not h
