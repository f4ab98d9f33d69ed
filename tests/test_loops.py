"""The deal loops are compiled once for every set of players (``sim.core.calls``), and the
kernel cache is keyed by every source a kernel can be built from (``sim.core._cache``)."""

from __future__ import annotations

import os

from sim.core import state as S
from sim.core._cache import kernel_sources
from sim.loops import plugins
from sim.loops.runner import make_seats


def _bound(fn, name):
    """What ``name`` is bound to in the module of compiled function ``fn``."""
    return fn.py_func.__globals__[name]


def test_the_loops_are_one_module_for_every_set_of_players():
    """Compiled once (sim.core.calls): every set of built-in players plays in the same loops,
    which name no strategy kernel but greedy's (inlined) and reach every other through its
    address in ``entries``; only the kinds seated get an address (only their kernels load or
    compile), and a hook (``forced_show``) is one more verbatim copy of the same file."""
    import numpy as np

    from sim.loops import loop
    from strategies import compiled, greedy
    from strategies.kinds import KIND_EXPERT, KIND_GREEDY, KIND_PIMC, KIND_RANDOM, N_KINDS

    assert plugins.builtin_loops() is loop  # no argument names the players: one loop for all
    names = loop.play_calling.py_func.__globals__
    assert names["greedy_decide_inline"] is greedy.greedy_decide_inline
    assert names["call_kind"] is compiled.call_kind
    for name in ("decide", "pimc_decide", "ismcts_decide", "oracle_decide", "expert_decide",
                 "learned_decide"):
        assert name not in names
    t = compiled.entries([KIND_RANDOM, KIND_GREEDY])
    assert t.shape == (N_KINDS,) and not t.any()  # written into the loops: no address
    t = compiled.entries([KIND_RANDOM, KIND_PIMC])
    assert t[KIND_PIMC] != 0 and np.count_nonzero(t) == 1
    assert t[KIND_PIMC] == compiled.player_address(KIND_PIMC)  # one compile per process
    assert compiled.player_address(KIND_GREEDY) == 0 and compiled.player_kernel(99) is None
    assert compiled.player_kernel(KIND_EXPERT).py_func.__name__ == "expert_decide"
    forced = plugins.builtin_loops(forced_show=loop.forced_line)
    assert forced is plugins.builtin_loops(forced_show=loop.forced_line)  # one copy
    with open(loop.__file__, encoding="utf-8") as f:
        template = f.read()
    with open(forced.__file__, encoding="utf-8") as f:
        assert f.read() == template  # the loops are sim/loops/loop.py's, verbatim
    assert _bound(forced.play_calling, "forced_show") is loop.forced_line
    assert _bound(loop.play_calling, "forced_show") is loop.forced_show


def test_no_module_writes_python_source():
    """No string templates of Python code: the loops come from ordinary modules by binding
    names (sim.core.bind, which loads verbatim copies of them); nothing else in sim/ or
    strategies/ loads a module from a file it wrote, and no string holds a decorated def."""
    import ast

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for pkg in ("sim", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(root, pkg)):
            for f in files:
                if not f.endswith(".py"):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
                for node in ast.walk(tree):
                    if isinstance(node, ast.Attribute) and node.attr in (
                            "spec_from_file_location", "exec_module"):
                        assert path.endswith(os.path.join("sim", "core", "bind.py")), path
                    if isinstance(node, ast.Name) and node.id in ("exec", "eval"):
                        raise AssertionError(f"{path}: {node.id}")
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        assert "\ndef " not in node.value and "@jit(" not in node.value, path


def test_every_set_of_kinds_shares_the_loops_and_a_kernel_loads_from_the_cache():
    import subprocess
    import sys

    a = plugins.Loops(make_seats("greedy,random"))
    c = plugins.Loops(make_seats("pimc(samples=2),random"))
    assert a.builtin is c.builtin and a.mod is None and a.key == c.key  # compiled once
    assert a.kernel_name() == "loop.run_deals" == c.kernel_name()
    assert not a.entries.any() and c.entries[2] != 0  # pimc's kernel, by its address
    # a fresh process loading the same kernel finds numba's cache of it: nothing compiles
    out = subprocess.run([sys.executable, "-c", "from strategies import compiled; "
                          "from sim.core._cache import compile_watch; w = compile_watch(); "
                          "compiled.player_address(2); print(w.count)"],
                         capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "0"


def test_a_hook_is_bound_not_spliced():
    """estimate's forced calling lines: the loops with ``forced_show`` bound (a copy of their
    own); the plain loops keep the hook that never forces."""
    from sim.loops import loop
    from sim.tools import estimate

    forced = estimate._forced_loops([0, 1])
    plain = plugins.builtin_loops()
    assert forced is not plain and forced.__file__ != plain.__file__
    assert _bound(forced.play_calling, "forced_show") is loop.forced_line
    assert _bound(plain.play_calling, "forced_show") is plain.forced_show  # its own default


def test_cache_key_covers_kernels_in_subfolders_and_what_they_import(tmp_path):
    def write(rel, text):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    write("sim/__init__.py", "")
    write("sim/consts.py", "N = 3\n")  # no kernel, but frozen into one
    write("sim/more.py", "M = 4\n")
    write("sim/cli.py", "import sim.consts\n")  # imports, compiles nothing: not a source
    write("strategies/__init__.py", "")
    write("strategies/deep/k.py", "from sim.core.jit import kernel\nfrom sim import (\n"
          "  consts,\n)\n@kernel\ndef f(x):\n    return x\n")
    write("sim/core/__init__.py", "")
    write("sim/core/k.py", "from sim.core.jit import kernel\nfrom sim.core import low\n")
    write("sim/core/low.py", "L = 5\n")  # imported by a kernel module of a subpackage
    write("sim/core/unused.py", "U = 6\n")
    write("strategies/deep/g.py", "import numba\nimport sim.more\n")
    got = kernel_sources(str(tmp_path))
    assert {"strategies/deep/k.py", "strategies/deep/g.py", "sim/consts.py",
            "sim/more.py", "sim/core/k.py", "sim/core/low.py"} <= set(got)
    assert "sim/core/unused.py" not in got
    assert "sim/cli.py" not in got


def test_batch_steps_in_one_compiled_step_for_every_set_of_seats():
    from sim.loops import batch
    from strategies.kinds import KIND_PIMC

    # the seat sets of tests/test_batch.py ({random, greedy} and {random})
    a = batch.Batch(2, 1, seats=[None, "random", None, "greedy"], deals=2)
    b = batch.Batch(2, 1, seats=[None, "pimc(samples=2)", None, "random"], deals=2)
    assert not a._entries.any() and b._entries[KIND_PIMC] != 0
    assert "pimc_decide" not in batch.batch_step.py_func.__globals__


def test_the_loops_leave_the_state_apply_code_leaves():
    """The deal loop runs calling and trick play with their state in locals: after every
    deal, ``st`` and ``u`` equal those of a plain decide / ``apply_code`` step loop, field for
    field (voids and redeals, overrides and give-backs, random and greedy seats)."""
    import numpy as np
    from numba import njit

    from sim.core.engine import advance, apply_code, init_deal
    from sim.loops.runner import compiled_tables
    from sim.rules import DEFAULT_RULES
    from strategies.compiled import decide, entries
    from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, UINT_SCRATCH

    mod = plugins.builtin_loops()
    table = entries([0, 1])

    @njit
    def stepped(st, u, rules, seed, deal, kinds, params, buf, fws, uws):
        init_deal(st, u, seed, deal)
        advance(st, u, rules)
        while st[S.S_PHASE] != S.DONE:
            seat = st[S.S_TO_ACT]
            apply_code(st, u, rules, decide(kinds[seat], table, params, st, u, rules, seat, buf,
                                            fws, uws))

    rules = DEFAULT_RULES.array()
    buf = np.empty(INT_SCRATCH, np.int64)
    fws = np.empty(FLOAT_SCRATCH, np.float64)
    uws = np.empty(UINT_SCRATCH, np.uint64)
    seen = set()
    for spec in ("random(show_prob=0.0)", "random(show_prob=1.0)", "greedy,random",
                 "random,greedy(show_at=0.2)"):
        kinds, params = compiled_tables(make_seats(spec))
        for d in range(40):
            want = np.zeros(S.ST_SIZE, np.int64), np.zeros(S.U_SIZE, np.uint64)
            got = np.zeros(S.ST_SIZE, np.int64), np.zeros(S.U_SIZE, np.uint64)
            stepped(*want, rules, np.uint64(9), np.uint64(d), kinds, params, buf, fws, uws)
            mod.play_deal(*got, rules, np.uint64(9), np.uint64(d), kinds, params, buf, fws, uws)
            assert (want[0] == got[0]).all() and (want[1] == got[1]).all(), (spec, d)
            seen.add(("void" if got[0][S.S_VOID] else "played",
                      "override" if got[0][S.S_NOVERRIDES] else "-"))
    assert {("void", "-"), ("played", "override"), ("played", "-")} <= seen
