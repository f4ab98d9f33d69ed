"""The code's layers run one way (docs/architecture.md "Layers", the one description of them;
``LAYERS`` below is its table, and tests/test_docs.py checks that the two agree): every import
of ``sim`` and ``strategies`` (module-level and inside functions, and
``importlib.import_module("...")`` with a literal name) goes from a layer to the same or a
lower one, and no two modules import each other, directly or round a loop. ``import sim`` and
the analysis modules load no numba. The folders show the layers
(``test_the_folders_show_the_layers``).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAYERS = {
    0: ("sim.errors", "sim.cards", "sim.rules", "sim.titles", "strategies.kinds",
        "strategies.params", "sim.core", "sim.core._cache", "sim.core._cpu", "sim.core.jit",
        "sim.core.rng", "sim.core.limits", "sim.core.bits", "sim.core.tables", "sim.core.files",
        "sim.core.layout", "sim.core.console", "sim.core.bind",
        "sim.core.calls"),
    1: ("sim.core.state", "sim.core.step", "sim.core.engine", "sim.core.movegen",
        "sim.core.trick", "sim.core.scoring", "sim.view", "sim.spaces", "sim.solve.kernels"),
    2: ("sim.api", "sim.observation", "sim.deal", "sim.record", "sim.replay", "sim.solve"),
    3: ("strategies", "strategies.base", "strategies.registry", "strategies.tier",
        "strategies.plugin", "strategies.random", "strategies.greedy", "strategies.sampler",
        "strategies.search", "strategies.endgame", "strategies.expert", "strategies.compiled",
        "strategies.example",
        "strategies.example_compiled", "strategies.evaluate", "strategies.learned",
        "strategies.learned_weights", "strategies.script", "strategies.plugin_entry",
        "sim.openspiel"),
    4: ("sim.env", "sim.loops", "sim.loops.batch", "sim.loops.loop", "sim.loops.plugin_loop",
        "sim.loops.plugins", "sim.loops.runner", "sim.loops.helper", "sim.loops.precompile",
        "sim.loops.steps", "sim.bots", "sim.bots.spec", "sim.bots.guard", "sim.bots.sandbox",
        "sim.bots.process", "sim.bots.seat", "sim.bots.check", "sim.gym"),
    5: ("sim.tournament", "sim.tournament.config", "sim.tournament.chunks",
        "sim.tournament.results", "sim.tournament.lock", "sim.tournament.forkpool",
        "sim.tournament.worker", "sim.tournament.run", "sim.tournament.standings",
        "sim.tournament.swings"),
    6: ("sim.tools", "sim.tools.estimate", "sim.tools.bench", "sim.tools.analyze",
        "sim.tools.ladder", "sim.tools.ladder.schema", "sim.tools.ladder.checks",
        "sim.tools.ladder.database", "sim.tools.ladder.runs", "sim.tools.ladder.folders",
        "sim.tools.ladder.export", "sim.tools.tune", "sim.tools.solve"),
    7: ("sim.learn", "sim.learn.labels", "sim.learn.learn_loop", "sim.learn.jaxnet",
        "sim.learn.recipe", "sim.learn.store", "sim.learn.train"),
    8: ("sim.cli", "sim.cli.__main__", "sim.cli.options", "sim.cli.common", "sim.cli.play",
        "sim.cli.analyze", "sim.cli.tools", "sim.cli.tournament", "sim.cli.ladder",
        "sim.cli.tune", "sim.cli.bots", "sim.human", "sim.human.screen", "sim.human.narration"),
}
# side modules: exactly what they may import
PURE_TABLES = ("sim.errors", "sim.cards", "sim.rules", "sim.titles", "sim.core.tables")
# sim/analysis/stats: the package (it re-exports the public names) and its modules, which may
# import each other
STATS = ("sim.analysis.stats", "sim.analysis.stats.quantiles", "sim.analysis.stats.moments",
         "sim.analysis.stats.histogram", "sim.analysis.stats.ratings",
         "sim.analysis.stats.win_draw_loss", "sim.analysis.stats.sprt", "sim.analysis.stats.swings",
         "sim.analysis.stats.partners")
SIDE = {"sim.analysis": (), **{m: PURE_TABLES + STATS for m in STATS},
        "sim.analysis.summary": PURE_TABLES + STATS,
        "sim.analysis.tables": PURE_TABLES + STATS + ("sim.analysis.summary",),
        "sim.analysis.report": PURE_TABLES + STATS + ("sim.analysis.summary",
                                                      "sim.analysis.tables"),
        "sim.analysis.viewer": PURE_TABLES,
        "sim.analysis.ladder": PURE_TABLES + STATS + ("sim.analysis.ladder.model",
                                                       "sim.analysis.ladder.show",
                                                       "sim.analysis.ladder.partners"),
        "sim.analysis.ladder.model": PURE_TABLES + STATS,
        "sim.analysis.ladder.show": PURE_TABLES + STATS + ("sim.analysis.ladder.model",),
        "sim.analysis.ladder.partners": PURE_TABLES + STATS + ("sim.analysis.ladder.model",),
        "sim.reference": (), "sim.reference.cards": PURE_TABLES,
        "sim.reference.oracle": PURE_TABLES + ("sim.reference.cards",),
        "sim.reference.validator": PURE_TABLES + ("sim.reference.cards", "sim.reference.oracle"),
        "sim.reference.minimax": PURE_TABLES + ("sim.reference.cards", "sim.reference.oracle")}
# the modules at the top of sim/: the public API only, each for a stated reason; everything
# internal lives in a subpackage by layer (sim.Batch is sim.loops.batch through the facade)
PUBLIC = {
    "sim": "the lazy facade: sim.Deal, sim.Rules, sim.Batch, ...",
    "sim.cards": "card notation (sim.card_points; plug-ins import it by path)",
    "sim.rules": "sim.Rules, sim.DEFAULT_RULES",
    "sim.errors": "sim.ShuangkouError and its subclasses",
    "sim.titles": "sim.level (R25)",
    "sim.api": "sim.legal_plays, sim.trick_winner",
    "sim.deal": "sim.Deal, sim.ToAct",
    "sim.observation": "sim.Observation",
    "sim.record": "reading and writing records (docs/record.md, docs/viewer.md)",
    "sim.replay": "a record as a person reads it (shuangkou replay)",
    "sim.env": "the PettingZoo environment (docs/strategies.md)",
    "sim.openspiel": "the OpenSpiel game python_shuangkou, the openspiel(...) player "
                     "(docs/frameworks.md)",
    "sim.gym": "the Gymnasium vector environment (docs/frameworks.md)",
    "sim.spaces": "sim.obs_spec, sim.action_of: the fast tier's spaces",
    "sim.view": "what a compiled plug-in's kernel may read (docs/strategies.md)",
    "sim.human": "shuangkou human: play in the terminal",
    "sim.solve": "sim.solve(deal): the double-dummy solver (docs/solve.md)",
}
# each subpackage of sim and the layers its modules may be in
FOLDERS = {"sim.core": (0, 1), "sim.solve": (1, 2), "sim.loops": (4,), "sim.bots": (4,),
           "sim.tournament": (5,),
           "sim.tools": (6,), "sim.learn": (7,), "sim.cli": (8,), "sim.human": (8,),
           "sim.analysis": ("side",),
           "sim.reference": ("side",)}
FACADE = "sim"  # sim/__init__.py: lazy, above everything


def _modules() -> dict[str, str]:
    out = {}
    for pkg in ("sim", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    out[name.removesuffix(".__init__")] = path
    return out


MODULES = _modules()


def _lazy_table() -> dict[str, str]:
    tree = ast.parse(open(MODULES[FACADE], encoding="utf-8").read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_LAZY":
            return ast.literal_eval(node.value)
    raise AssertionError("sim/__init__.py has no _LAZY table")


LAZY = _lazy_table()


def _resolve(module: str, name: str | None = None) -> str | None:
    """The project module an ``import module`` / ``from module import name`` loads."""
    if name and f"{module}.{name}" in MODULES:
        return f"{module}.{name}"
    if module == FACADE and name in LAZY:
        return LAZY[name]
    return module if module in MODULES else None


def imports(mod: str) -> dict[str, tuple[bool, int]]:
    """Project modules ``mod`` imports -> (at module level?, line)."""
    tree = ast.parse(open(MODULES[mod], encoding="utf-8").read())
    out: dict[str, tuple[bool, int]] = {}
    sim_aliases: set[str] = set()

    def add(target: str | None, top: bool, line: int) -> None:
        if target and target != mod:
            old = out.get(target)
            out[target] = (top or (old is not None and old[0]), line)

    def visit(node: ast.AST, top: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            inner = top and not isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(ch, ast.Import):
                for a in ch.names:
                    if a.name == FACADE and a.asname in (None, FACADE):
                        sim_aliases.add(a.asname or FACADE)
                    elif a.name.split(".")[0] in ("sim", "strategies"):
                        add(_resolve(a.name), top, ch.lineno)
            elif isinstance(ch, ast.ImportFrom) and ch.module and ch.level == 0:
                for a in ch.names:
                    add(_resolve(ch.module, a.name), top, ch.lineno)
            elif (isinstance(ch, ast.Call) and isinstance(ch.func, ast.Attribute)
                  and ch.func.attr == "import_module" and ch.args
                  and isinstance(ch.args[0], ast.Constant) and isinstance(ch.args[0].value, str)):
                add(_resolve(ch.args[0].value), top, ch.lineno)
            elif (isinstance(ch, ast.Attribute) and isinstance(ch.value, ast.Name)
                  and ch.value.id in sim_aliases):
                add(_resolve(FACADE, ch.attr), top, ch.lineno)
            visit(ch, inner)

    visit(tree, True)
    return out


def layer_of(mod: str) -> int | str:
    for n, mods in LAYERS.items():
        if mod in mods:
            return n
    if mod in SIDE or mod == FACADE:
        return mod
    raise AssertionError(f"module {mod} has no layer: add it to LAYERS in tests/test_layers.py")


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_has_a_layer():
    for m in MODULES:
        layer_of(m)
    assert not set().union(*LAYERS.values()) - set(MODULES), "LAYERS names a missing module"


def test_imports_run_one_way():
    wrong = []
    for m, deps in sorted(GRAPH.items()):
        lm = layer_of(m)
        for d, (_, line) in sorted(deps.items()):
            ld = layer_of(d)
            if m == FACADE:
                ok = d not in SIDE and ld != 8  # the facade re-exports the library layers
            elif m in SIDE:
                ok = d in SIDE[m]
            elif d in SIDE:
                ok = (not d.startswith("sim.reference") or lm == 8
                      or m == "sim.tools.bench")
            elif d == FACADE:
                ok = True  # resolved through sim.NAME above
            else:
                ok = ld <= lm
            if not ok:
                wrong.append(f"{m} (L{lm}) imports {d} (L{ld}) at line {line}")
    assert not wrong, "imports that run the wrong way:\n" + "\n".join(wrong)


def test_no_import_cycles():
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def walk(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in GRAPH[m]:
            if state.get(d) == 1:
                cycles.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                walk(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            walk(m)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _top_closure(m: str) -> set[str]:
    seen, todo = set(), [m]
    while todo:
        x = todo.pop()
        for d, (top, _) in GRAPH[x].items():
            if top and d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_numba_users_set_the_cache_folder_first():
    """A module that imports numba also loads ``sim.core._cache`` at import (kernels are cached in
    the folder keyed by the sources)."""
    bad = []
    for m, path in MODULES.items():
        text = open(path, encoding="utf-8").read()
        if m != "sim.core._cache" and ("from numba" in text or "import numba" in text):
            top_numba = any(isinstance(n, (ast.Import, ast.ImportFrom))
                            and "numba" in ((n.module or "") if isinstance(n, ast.ImportFrom)
                                            else n.names[0].name)
                            for n in ast.parse(text).body)
            if top_numba and "sim.core._cache" not in _top_closure(m):
                bad.append(m)
    assert not bad, f"import numba without sim.core._cache: {bad}"


def test_the_checker_sees_function_level_and_facade_imports(tmp_path):
    """The walk is not blind: it finds imports inside functions and through ``sim.NAME``."""
    deps = GRAPH["strategies.base"]
    assert "strategies.plugin" in deps and not deps["strategies.plugin"][0]
    assert GRAPH["strategies.example"].get("sim.api") is not None  # sim.trick_winner
    assert "sim.analysis.stats.sprt" in GRAPH["sim.tournament.chunks"]
    assert "sim.loops.loop" in GRAPH["sim.loops.runner"]


def _loaded(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                          "print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout.split()
    return out


@pytest.mark.parametrize("code", ["import sim", "import sim.analysis.stats",
                                  "import sim.analysis.report", "import sim.analysis.viewer",
                                  "import sim; sim.level(1600); sim.Rules; sim.ShuangkouError",
                                  "import sim.core.tables, sim.titles, strategies.kinds"])
def test_light_imports_load_no_numba(code):
    mods = _loaded(code)
    assert "numba" not in mods and "sim.core.engine" not in mods, code


def test_sim_loads_the_engine_on_first_use():
    mods = _loaded("import sim\nsim.Deal")
    assert "numba" in mods and "sim.deal" in mods
    mods = _loaded("import sim\nassert 'Deal' in dir(sim) and 'obs_spec' in sim.__all__")
    assert "numba" not in mods


def misplaced(modules, layer=layer_of) -> list[str]:
    """The modules of ``modules`` in the wrong folder for their layer (``layer``: module ->
    its layer, as ``layer_of``)."""
    wrong = []
    for m in modules:
        parts = m.split(".")
        if m in (FACADE, "strategies"):
            continue
        if parts[0] == "strategies":
            ok = layer(m) == 3 or m in ("strategies.kinds", "strategies.params")
        elif len(parts) == 2 and m not in FOLDERS:
            ok = m in PUBLIC
        else:
            folder = ".".join(parts[:2])
            allowed = FOLDERS.get(folder, ())
            lm = layer(m)
            ok = (lm in allowed) or ("side" in allowed and m in SIDE)
        if not ok:
            wrong.append(f"{m} (layer {layer(m)})")
    return wrong


def test_the_tools_never_import_each_other():
    """sim/tools holds commands (ladder, tune, estimate, bench, analyze): each builds on the
    floors below and none imports another, so a new command never reaches into one (the
    modules of one tool's package, sim/tools/ladder/, import each other)."""
    tools = {m for m in MODULES if m.startswith("sim.tools.")}
    assert len(tools) >= 5
    wrong = [f"{m} imports {d} at line {line}" for m in sorted(tools)
             for d, (_, line) in sorted(GRAPH.get(m, {}).items())
             if d in tools and d.split(".")[:3] != m.split(".")[:3]]
    assert not wrong, "a tool imports another:\n" + "\n".join(wrong)


def test_the_folders_show_the_layers():
    """sim/core holds only tables and kernels (L0-L1), sim/loops, sim/tournament, sim/tools and
    sim/learn only their floors (L4-L7),
    sim/analysis and sim/reference only side modules; the top of sim/ only the public modules;
    strategies/ only strategies (and their L0 tables)."""
    wrong = misplaced(MODULES)
    assert not wrong, "modules in the wrong folder for their layer:\n" + "\n".join(wrong)
    assert set(PUBLIC) <= set(MODULES), "PUBLIC names a missing module"
    assert set(FOLDERS) <= set(MODULES), "FOLDERS names a missing package"
    # a public package (sim.human) is both a folder and a public module
    top = {m for m in MODULES if m.startswith("sim.") and m.count(".") == 1} \
        - (set(FOLDERS) - set(PUBLIC))
    assert top | {FACADE} == set(PUBLIC), "the top of sim/ is not exactly the public modules"


def test_the_folder_check_rejects_an_internal_module_at_the_top():
    """The check is not blind: harness code (the old sim/batch.py) or a new helper module at
    the top of sim/ fails it, while the same module inside sim/loops/ passes."""
    layers = {"sim.batch": 4, "sim.helpers": 2, "sim.loops.batch": 4, "sim.core.util": 0}
    assert misplaced(layers, layers.get) == ["sim.batch (layer 4)", "sim.helpers (layer 2)"]
    assert misplaced(["sim.core.engine", "sim.loops.loop", "sim.deal"]) == []
    assert misplaced(["sim.core.x"], {"sim.core.x": 4}.get) == ["sim.core.x (layer 4)"]


def test_the_facade_reaches_internal_modules_by_name_only():
    """``sim.Batch`` stays public though its module moved into the harness; the facade's table
    names only existing modules, each public or in a subpackage."""
    for name, mod in LAZY.items():
        assert mod in MODULES, f"sim.{name} -> {mod}: no such module"
        assert mod in PUBLIC or mod.split(".")[1] in {f.split(".")[1] for f in FOLDERS}, mod
    assert LAZY["Batch"] == "sim.loops.batch"


def test_the_public_modules_stay_importable_by_path():
    """The plug-in API of docs/strategies.md and the examples: imported by these paths."""
    code = ("from sim import view, cards, spaces, env, observation, deal, record\n"
            "import strategies.base\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, check=False)
    assert r.returncode == 0, r.stderr


# --- no module reads another's private names ------------------------------------------------
# Names some module may use although another defines them, each with why.
# sim.gym holds a slot of its sim.Batch for one step (Gymnasium's NEXT_STEP autoreset): it
# copies the slot's state rows before the step and puts them back after (sim.Batch has no
# public per-slot hold; adding one edits a kernel source, which recompiles every kernel)
PRIVATE_ALLOWED: set[tuple[str, str]] = {("sim.gym", "_su"), ("sim.gym", "_meta")}
# private attributes of the standard library: os._exit (leave a forked child at once); a
# ProcessPoolExecutor's processes and result pipe (sim.tournament.forkpool watches its workers)
STDLIB_PRIVATE = {"_exit", "_processes", "_result_queue", "_writer"}


def _private_uses(tree: ast.AST) -> tuple[set[str], list[tuple[int, str, str]]]:
    """The private names a module owns (defines: functions, classes, module names, attributes
    it assigns, ``__slots__`` entries) and the private names it uses on other objects or
    imports from other modules: (line, name, what)."""
    owned: set[str] = set()
    used: list[tuple[int, str, str]] = []

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            owned.add(n.name)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            owned.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            owned.add(n.attr)
        elif isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__slots__"
                                               for t in n.targets):
            owned |= {e.value for e in ast.walk(n.value) if isinstance(e, ast.Constant)
                      and isinstance(e.value, str)}
        elif isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setattr" \
                and len(n.args) > 1 and isinstance(n.args[1], ast.Constant):
            owned.add(str(n.args[1].value))
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and not n.level and n.module \
                and n.module.split(".")[0] in ("sim", "strategies"):
            for a in n.names:
                if private(a.name):
                    used.append((n.lineno, a.name, f"from {n.module} import {a.name}"))
        elif isinstance(n, ast.Import):
            for a in n.names:
                for part in a.name.split(".")[1:]:
                    if private(part):
                        used.append((n.lineno, part, f"import {a.name}"))
        elif isinstance(n, ast.Attribute) and private(n.attr) \
                and isinstance(n.ctx, ast.Load) and n.attr not in owned \
                and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
            used.append((n.lineno, n.attr, ast.unparse(n)))
        elif isinstance(n, ast.Call) and getattr(n.func, "id", "") in ("getattr", "hasattr") \
                and len(n.args) > 1 and isinstance(n.args[1], ast.Constant) \
                and isinstance(n.args[1].value, str) and private(n.args[1].value) \
                and n.args[1].value not in owned:
            used.append((n.lineno, n.args[1].value, ast.unparse(n)))
    return owned, used


def _private_module_of_own_package(mod: str, what: str, name: str) -> bool:
    """``sim.core._cache`` used by a module of ``sim.core``: a package's private module."""
    for full in MODULES:
        if full.rsplit(".", 1)[-1] == name and full.rsplit(".", 1)[0] == mod.rsplit(".", 1)[0] \
                and full in what.replace("from ", "").replace(" import ", "."):
            return True
    return False


def test_no_module_reads_another_modules_private_names():
    """A module of sim/ or strategies/ imports no private name (``_x``) of another module and
    reads no private attribute it does not own (define or assign) itself: what crosses a module
    has a public name. Heuristic by name (an ast scan): ``obj._x`` is allowed where the module
    itself defines or assigns some ``_x``."""
    bad = []
    for mod, path in sorted(MODULES.items()):
        _, used = _private_uses(ast.parse(open(path, encoding="utf-8").read()))
        for line, name, what in used:
            if (mod, name) in PRIVATE_ALLOWED or name in STDLIB_PRIVATE \
                    or _private_module_of_own_package(mod, what, name):
                continue
            bad.append(f"{mod}:{line}: {what}")
    assert not bad, "private names read across modules:\n" + "\n".join(bad)


def test_the_private_name_scan_sees_imports_attributes_and_getattr():
    src = ("from sim.record import _mask\nimport x\n"
           "def f(deal, s):\n    self = s\n    deal._st\n    getattr(deal, '_u', None)\n"
           "    s._mine = 1\n    return s._mine, self._ok, os._exit\n")
    owned, used = _private_uses(ast.parse(src))
    assert "_mine" in owned
    assert sorted(n for _, n, _ in used) == ["_exit", "_mask", "_st", "_u"]


def graph_summary() -> dict[str, int]:
    """The import graph in numbers (``python tests/test_layers.py``): modules, imports between
    them (module level and inside functions), those that run up a layer or sideways into
    another side module's, and imports of the harness (L4+) by modules at the top of sim/
    other than the command line (``sim.cli``, ``sim.human``)."""
    edges = [(m, d) for m, deps in GRAPH.items() for d in deps]

    def rank(m: str) -> int:
        lm = layer_of(m)
        return lm if isinstance(lm, int) else -1  # side modules and the facade: apart

    up = sum(1 for m, d in edges if m != FACADE and rank(m) >= 0 and rank(d) > rank(m))
    top = [m for m in MODULES if m.count(".") == 1 and m.startswith("sim.")
           and m not in FOLDERS and m not in ("sim.cli", "sim.human")]
    top_up = sum(1 for m, d in edges if m in top and rank(d) >= 4)
    return {"modules": len(MODULES), "imports": len(edges), "upward": up,
            "top_of_sim_into_harness": top_up}


if __name__ == "__main__":
    for k, v in graph_summary().items():
        print(f"{k:>24} {v}")
