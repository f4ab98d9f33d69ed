"""Every built-in player beside every example plug-in, Python and compiled, in both seat orders,
plays a few deals without crashing (issue 33, item 5).

A compiled plug-in shares the deal loops with the built-ins (``sim.loops.plugin_loop``), and
its copies of the rules and parameter rows are sized by the other seats': a buffer too narrow
for one of them corrupts memory only beside that player (``learned``: the crash that
tests/test_plugin_buffers.py pins down). The matrix runs in one child process: a segfault, a
double free or an abort fails this test with the signal and the pair that was playing, instead
of killing pytest; and the kernels compile (or load) once for the whole matrix.

For each pair the child plays the deals through both compiled paths of ``sim.loops.runner``:
``summaries`` (``Loops.play_deals``: ``shuangkou play`` and a tournament's games) and
``iter_records`` (``Loops.play_deal``: records and swing deals, where the old crash was; with a
Python seat, the step API ``Loops.decide``), and checks that every deal finished, that each
record is a legal game (``sim.reference.validator``) and that both paths played the same games.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "plugin_fixtures")

# every built-in, with parameters that keep the searches cheap (a few worlds per decision)
BUILTINS = ["random", "greedy", "pimc(samples=2)", "ismcts(iterations=8)", "oracle(samples=2)",
            "expert(samples=2, call_samples=2, giveback_k=2, recheck=1)", "learned"]

# every example plug-in the repository ships, by the module that registers it: the Python
# bots (``cautious``, ``linear``) and the compiled ones (``cautious_c``; the test fixtures'
# kernels in their well-behaved modes: ``alloc`` allocates, so it runs as a function of its own)
PLUGINS = {
    "cautious": "strategies.example",
    "linear": "examples.numpy_policy",
    "cautious_c": "strategies.example_compiled",
    "alloc(mode=0)": os.path.join(FIXTURES, "alloc_bots.py"),
    "wild(mode=0)": os.path.join(FIXTURES, "alloc_bots.py"),
    "probe(mode=0)": os.path.join(FIXTURES, "probe_bots.py"),
    "dice": os.path.join(FIXTURES, "probe_bots.py"),
}
COMPILED = ["cautious_c", "alloc(mode=0)", "wild(mode=0)", "probe(mode=0)", "dice"]

DEALS = 3
SEED = 11

# the child: plays ``pairs`` (team A, team B: seats A,B,A,B), one JSON line per step, flushed,
# so that a crash leaves the pair and the path it was playing in the output
CHILD = r'''
import json
import sys

from sim.core.tables import COLUMN_NAMES
from sim.loops import runner
from sim.reference import validator
from strategies.registry import load_plugins

job = json.loads(sys.argv[1])
load_plugins(job["plugins"], [job["root"]])
seed, deals = job["seed"], job["deals"]
col = {name: i for i, name in enumerate(COLUMN_NAMES)}


def say(**kw):
    print(json.dumps(kw), flush=True)


for a, b in job["pairs"]:
    seats = runner.make_seats([a, b])
    say(begin=[a, b], path="summaries")
    rows = runner.summaries(seed, 0, deals, seats)
    recs = []
    for d, rec in enumerate(runner.iter_records(seed, 0, deals, seats)):
        say(begin=[a, b], path="records", deal=d)
        recs.append(rec)
    problems = []
    for d, rec in enumerate(recs):
        found = validator.check_structure(rec) or validator.validate_record(rec)
        problems += [f"deal {d}: {p}" for p in found]
        row = rows[d]
        same = (rec["void"] == bool(row[col["void"]])
                and rec["redeals"] == int(row[col["redeals"]])
                and rec["settlement"] == [int(row[col[f"settle{s}"]]) for s in range(4)])
        if not same:
            problems.append(f"deal {d}: its record ({rec['settlement']}) is not the game "
                            f"summaries played ({row.tolist()})")
    say(pair=[a, b], games=int(rows.shape[0]),
        finished=sum(1 for r in recs if r["void"] or len(r["tricks"]) > 0),
        records=len(recs), problems=problems)
say(done=True)
'''


def matrix(builtins, plugins):
    """Every (built-in, plug-in) pair of the two lists, in both seat orders."""
    return [p for b in builtins for g in plugins for p in ((b, g), (g, b))]


def play_matrix(pairs, tmp_path, timeout=1200):
    """Play ``pairs`` in one child process; fail on a crash or a pair that did not finish."""
    script = tmp_path / "matrix.py"
    script.write_text(CHILD)
    plugins = list(dict.fromkeys(PLUGINS[name] for pair in pairs for name in pair
                                 if name in PLUGINS))
    job = {"root": ROOT, "seed": SEED, "deals": DEALS, "plugins": plugins,
           "pairs": [list(p) for p in pairs]}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    r = subprocess.run([sys.executable, "-X", "faulthandler", str(script), json.dumps(job)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0:
        how = (f"signal {signal.Signals(-r.returncode).name}" if r.returncode < 0
               else f"exit status {r.returncode}")
        last = next((x for x in reversed(lines) if "begin" in x), None)
        pytest.fail(f"the matrix child ended with {how} while playing {last}\n"
                    f"stderr:\n{r.stderr[-4000:]}")
    results = {tuple(x["pair"]): x for x in lines if "pair" in x}
    assert lines and lines[-1] == {"done": True}, r.stdout[-2000:]
    assert sorted(results) == sorted(tuple(p) for p in pairs)
    for pair, x in results.items():
        assert (x["games"], x["records"], x["finished"]) == (DEALS, DEALS, DEALS), (pair, x)
        assert x["problems"] == [], (pair, x["problems"])
    return results


def test_the_matrix_covers_every_builtin_and_every_shipped_plugin():
    """The lists above are the whole set: a new built-in or a new example plug-in joins them."""
    import glob
    import re

    from strategies.registry import builtin_classes

    assert sorted(re.match(r"\w+", b).group() for b in BUILTINS) == \
        sorted(c.name for c in builtin_classes())
    shipped = set()
    for path in (glob.glob(os.path.join(ROOT, "strategies", "example*.py"))
                 + glob.glob(os.path.join(ROOT, "examples", "*.py"))
                 + glob.glob(os.path.join(FIXTURES, "*.py"))):
        text = open(path, encoding="utf-8").read()
        shipped |= set(re.findall(r'^    name = "(\w+)"', text, re.M))
    shipped.discard("too_many")  # passes its kernel more numbers than reach it: an error case
    assert {re.match(r"\w+", p).group() for p in PLUGINS} == shipped
    assert {re.match(r"\w+", p).group() for p in COMPILED} == shipped - {"cautious", "linear"}


def test_every_builtin_beside_a_compiled_and_a_python_plugin(tmp_path):
    """The quick slice: every built-in beside ``cautious_c`` (the compiled loops, records
    included) and ``cautious`` (the step API), and every plug-in beside ``learned`` (the
    longest parameter row), both seat orders, in one child process."""
    pairs = matrix(BUILTINS, ["cautious_c", "cautious"])
    pairs += matrix(["learned"], [p for p in PLUGINS if p not in ("cautious_c", "cautious")])
    play_matrix(pairs, tmp_path)


@pytest.mark.slow
def test_every_builtin_beside_every_example_plugin(tmp_path):
    """The whole matrix: every built-in beside every example plug-in, both seat orders; and
    each compiled plug-in beside a Python one (a compiled plug-in through the step API)."""
    pairs = matrix(BUILTINS, list(PLUGINS)) + matrix(COMPILED, ["cautious"])
    play_matrix(pairs, tmp_path)
