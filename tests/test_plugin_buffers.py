"""A compiled plug-in beside a built-in whose parameter row is long (``learned``: its row holds
its network's weights) never writes past the plug-in's buffers (issue 33, item 5).

The compiled ``_plugin`` of ``sim.loops.plugin_loop`` copies the whole parameter row of the
seat and the whole rules array into its seat's rows of ``m_p``/``m_r`` without a bounds check.
``sim.loops.plugins.Loops`` used to allocate those rows 64 values wide once, for every call:
with ``learned`` at the table the row is thousands of values, and the copy ran thousands of
float64 past the end of the buffer — the double frees, ``realloc(): invalid pointer`` and
segmentation faults of ``cautious_c`` against ``learned`` in a tournament, whose records and
swing deals go through ``Loops.play_deal`` (``play_deals`` allocates its own, right-sized,
copies, which is why ``shuangkou play`` did not crash).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from sim.core.state import new_state
from sim.loops.runner import make_seats
from sim.rules import DEFAULT_RULES
from strategies.compiled import new_scratch
from strategies.example_compiled import CautiousC
from strategies.params import param_table
from strategies.plugin import checked_params
from strategies.registry import make

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tables(seats):
    from sim.loops.plugins import Loops

    loops = Loops(seats)
    params = param_table([checked_params(s) for s in seats])
    return loops, params


@pytest.mark.parametrize("order", ["plugin_first", "learned_first"])
def test_plugin_copies_are_as_wide_as_the_rows_they_copy(order, monkeypatch):
    pair = [CautiousC(), make("learned")]
    if order == "learned_first":
        pair.reverse()
    loops, params = _tables(make_seats(pair * 2))
    assert params.shape[1] > 64  # learned's row carries its weights: the case that overflowed
    seen = []
    monkeypatch.setattr(loops, "_run", lambda fn, args, *rest: seen.append(args))
    st, u = new_state()
    rules = DEFAULT_RULES.array()
    buf, fws, uws = new_scratch()
    loops.play_deal(st, u, rules, 7, 0, loops.kinds, params, buf, fws, uws)
    seat = int(np.argmax(loops.kinds))  # a plug-in seat: its decision goes through _run
    loops.decide(int(loops.kinds[seat]), params, st, u, rules, seat, buf, fws, uws)
    assert len(seen) == 2
    # play_deal's arguments: ..., kinds, entries, params, buf, fws, uws, m_st, m_u, m_r, m_p, ...
    m_r, m_p = seen[0][13], seen[0][14]
    assert m_p.shape[1] >= params.shape[1]
    assert m_r.shape[1] >= rules.shape[0]
    assert loops.m_p.shape[1] >= params.shape[1]


@pytest.mark.slow
def test_compiled_plugin_beside_learned_plays_a_tournament(tmp_path):
    """The crash itself, in a child process (a segfault fails this test instead of killing
    pytest): ``cautious_c`` against ``learned``, both seat orders, with records and swing
    deals (``Loops.play_deal``), three times."""
    cfg = tmp_path / "h2h.toml"
    cfg.write_text('name = "h2h"\nplayers = ["cautious_c", "learned"]\ndeals = 12\n'
                   "[output]\nrecords = 12\nplots = false\n")
    for i in range(3):
        r = subprocess.run([sys.executable, "-m", "sim.cli", "tournament", "--plugin",
                            "strategies.example_compiled", str(cfg), "--out",
                            str(tmp_path / f"r{i}"), "--no-progress", "--quiet", "--jobs", "1"],
                           cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-2000:]
        summary = json.loads((tmp_path / f"r{i}" / "summary.json").read_text())
        assert summary["complete"] and summary["matchups"][0]["games"] == 24, summary
        assert len((tmp_path / f"r{i}" / "swings.jsonl").read_text().splitlines()) > 0
