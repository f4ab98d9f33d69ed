"""``shuangkou compile`` and the promise behind it (issue 33): each player is compiled once
(``sim.core.calls``), so once its players are compiled a new set of them compiles nothing."""

from __future__ import annotations

import os
import subprocess
import sys

from sim import cli
from sim.loops import precompile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_compile_names_every_kernel_and_skips_python_bots(capsys):
    assert cli.main(["compile", "random", "greedy", "cautious", "--plugin", "strategies.example",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("the deal loop (random and greedy inside)")
    assert out[1].startswith("cautious ") and "(a Python bot: nothing to compile)" in out[1]
    assert out[2].endswith(f"the kernel cache is {os.environ['NUMBA_CACHE_DIR']}")
    assert out[2].split(" of ")[1].startswith("1 kernels compiled in ")


def test_compile_a_search_player_and_a_plugin_then_everything_loads(capsys):
    argv = ["compile", "pimc(samples=2)", "cautious_c", "--plugin",
            "strategies.example_compiled", "--no-progress"]
    assert cli.main(argv) == 0
    first = capsys.readouterr().out.splitlines()
    whats = [line[:42].rstrip() for line in first[:-1]]
    assert whats == ["the deal loop (random and greedy inside)", "the pimc player",
                     "the plug-in cautious_c", "the deal loop with compiled plug-ins"]
    assert cli.main(argv) == 0  # a second time: every kernel loads from the cache
    again = capsys.readouterr().out.splitlines()
    assert all(line.endswith("(already compiled: loaded from the cache)")
               for line in again[:-1]), again
    assert again[-1].startswith("0 of 4 kernels compiled in ")


def test_every_builtin_by_default():
    steps, python = precompile.plan([])
    assert [s.what for s in steps] == ["the deal loop (random and greedy inside)"] + [
        f"the {p} player" for p in ("pimc", "ismcts", "oracle", "expert", "learned")]
    assert python == []
    assert steps[4].key == "strategies.expert.expert_decide"


def test_compile_refuses_an_unknown_player(capsys):
    assert cli.main(["compile", "nosuchbot"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shuangkou compile: error: ") \
        and "nosuchbot" in err[0]


def test_a_new_set_of_compiled_players_compiles_nothing():
    """Players compiled before, seated together for the first time: nothing compiles (the
    deal loops and each player's kernel load from the cache), and nothing is announced."""
    env = {**os.environ, "SHUANGKOU_COMPILE_NOTICE": "1"}
    argv = [sys.executable, "-m", "sim.cli", "compile", "--no-progress", "oracle(samples=2)",
            "ismcts(iterations=20)", "cautious_c", "--plugin", "strategies.example_compiled"]
    subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    for seats in ("oracle(samples=2),cautious_c", "cautious_c,ismcts(iterations=20)",
                  "ismcts(iterations=20),oracle(samples=2),cautious_c,random"):
        r = subprocess.run([sys.executable, "-m", "sim.cli", "play", "--deals", "2",
                            "--seats", seats, "--plugin", "strategies.example_compiled"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "compiling" not in r.stderr and "compiled in" not in r.stderr, (seats, r.stderr)
        assert "settlement per seat" in r.stdout
