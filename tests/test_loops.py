"""The deal loops are generated per set of strategy kinds a run uses (``sim.harness.plugins``),
and the kernel cache is keyed by every source a kernel can be built from (``sim.core._cache``)."""

from __future__ import annotations

import hashlib
import os

from sim.core._cache import CACHE_DIR, kernel_sources
from sim.harness import plugins
from sim.harness.runner import make_seats


def test_a_run_compiles_only_its_kinds():
    src = plugins.builtin_source([0, 1])  # greedy vs random
    assert "greedy_decide(" in src and "random_decide(" in src
    for other in ("pimc_decide", "ismcts_decide", "oracle_decide", "strategies.search",
                  "strategies.compiled import decide"):
        assert other not in src
    every = plugins.builtin_source([0, 1, 2, 3, 4])
    assert all(f"{k}_decide(" in every for k in ("pimc", "ismcts", "oracle", "greedy"))
    # the loop kernels are sim/harness/loop.py's, unchanged
    with open(plugins.__file__.replace("plugins.py", "loop.py"), encoding="utf-8") as f:
        body = f.read().split("def finish_deal(")[1].split("@kernel")[0]
    assert body in src and body in every


def test_each_set_of_kinds_is_its_own_cached_module():
    a = plugins.Loops(make_seats("greedy,random"))
    b = plugins.Loops(make_seats("random,greedy"))  # the same set of kinds
    c = plugins.Loops(make_seats("pimc(samples=2),random"))
    assert a.builtin is b.builtin and a.builtin is not c.builtin and a.mod is None
    text = plugins.builtin_source([0, 1])
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(CACHE_DIR, "loops", f"loop_{digest}.py")
    assert a.builtin.__file__ == path  # named by a hash of its source
    assert a.kernel_name() == f"loop_{digest}.play_deals" != c.kernel_name()
    with open(path, encoding="utf-8") as f:
        assert f.read() == text


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


def test_batch_compiles_only_its_seats_kinds():
    from sim.harness.batch import Batch

    src = plugins.builtin_source([], "sim.harness.batch")  # the policy in every seat
    assert "def batch_step(" in src and "greedy_decide" not in src and "pimc_decide" not in src
    a = Batch(2, 1, seats=[None, "greedy", None, "greedy"], deals=2)
    b = Batch(2, 1, seats=[None, "random", None, "greedy"], deals=2)
    assert a._batch_step is not b._batch_step  # {greedy} and {random, greedy}
    assert "pimc_decide" not in open(a._batch_step.py_func.__code__.co_filename).read()


def test_the_loops_leave_the_state_apply_code_leaves():
    """The deal loop runs calling and trick play with their state in locals: after every
    deal, ``st`` and ``u`` equal those of a plain decide / ``apply_code`` step loop, field for
    field (voids and redeals, overrides and give-backs, random and greedy seats)."""
    import numpy as np
    from numba import njit

    from sim.core.engine import (
        DONE,
        S_NOVERRIDES,
        S_PHASE,
        S_TO_ACT,
        S_VOID,
        ST_SIZE,
        U_SIZE,
        advance,
        apply_code,
        init_deal,
    )
    from sim.harness.runner import compiled_tables
    from sim.rules import DEFAULT_RULES
    from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, UINT_SCRATCH

    mod = plugins.builtin_loops([0, 1])
    decide = mod.decide

    @njit
    def stepped(st, u, rules, seed, deal, kinds, params, buf, fws, uws):
        init_deal(st, u, seed, deal)
        advance(st, u, rules)
        while st[S_PHASE] != DONE:
            seat = st[S_TO_ACT]
            apply_code(st, u, rules, decide(kinds[seat], params, st, u, rules, seat, buf, fws,
                                            uws))

    rules = DEFAULT_RULES.array()
    buf = np.empty(INT_SCRATCH, np.int64)
    fws = np.empty(FLOAT_SCRATCH, np.float64)
    uws = np.empty(UINT_SCRATCH, np.uint64)
    seen = set()
    for spec in ("random(show_prob=0.0)", "random(show_prob=1.0)", "greedy,random",
                 "random,greedy(show_at=0.2)"):
        kinds, params = compiled_tables(make_seats(spec))
        for d in range(40):
            want = np.zeros(ST_SIZE, np.int64), np.zeros(U_SIZE, np.uint64)
            got = np.zeros(ST_SIZE, np.int64), np.zeros(U_SIZE, np.uint64)
            stepped(*want, rules, np.uint64(9), np.uint64(d), kinds, params, buf, fws, uws)
            mod.play_deal(*got, rules, np.uint64(9), np.uint64(d), kinds, params, buf, fws, uws)
            assert (want[0] == got[0]).all() and (want[1] == got[1]).all(), (spec, d)
            seen.add(("void" if got[0][S_VOID] else "played",
                      "override" if got[0][S_NOVERRIDES] else "-"))
    assert {("void", "-"), ("played", "override"), ("played", "-")} <= seen
