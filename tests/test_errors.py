"""Every user-facing error is a ``ShuangkouError`` subclass (sim/errors.py).

``test_no_bare_builtin_raises`` scans the source of ``sim`` and ``strategies``: a builtin
exception (``ValueError``, ``TypeError``, ``KeyError``, ``RuntimeError``, …) raised anywhere is
either listed in ``ALLOWED`` with the reason it is not a user's input error, or a failure. The
behaviour tests below pin the entry points that used to leak a builtin error on bad input: one
line that names the problem and the allowed values.
"""

from __future__ import annotations

import ast
import builtins
import os

import numpy as np
import pytest

import sim
from sim import cards, titles
from sim.errors import (
    InvalidCardError,
    NotRulesError,
    RulesError,
    ShuangkouError,
    StatsError,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILTIN_ERRORS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                  and issubclass(getattr(builtins, n), BaseException)}

# (file, enclosing function, exception) -> why it is not an input error of the user
ALLOWED = {
    ("sim/tools/bench.py", "play_process", "RuntimeError"):
        "a bench child process of the project's own play command failed: a bug, not input",
    ("strategies/greedy.py", "<module>", "AssertionError"):
        "an import-time check of the card tables greedy's mask follow relies on: a bug, not input",
    ("sim/__init__.py", "__getattr__", "AttributeError"): "PEP 562: the protocol's own error",
    ("sim/env.py", "ShuangkouEnv.__getattr__", "AttributeError"): "the attribute protocol",
    ("sim/env.py", "<module>", "ImportError"):
        "an optional dependency missing (pip install 'shuangkou[rl]'): the import system's",
    ("sim/core/jit.py", "_NoBlasProbe.find_spec", "ImportError"):
        "an import finder refusing a module: the import system's protocol",
    ("sim/core/_cache.py", "tolerate_broken_cache_files._load_data", "OSError"):
        "numba's cache loader takes OSError as a miss and compiles again",
    ("sim/core/files.py", "open_received", "OSError"):
        "a received file that is not a regular file: callers report it as their file's error",
    ("sim/core/files.py", "read_received", "OSError"):
        "a received file over its size limit: callers report it as their file's error",
    ("sim/core/files.py", "decode_json", "ValueError"):
        "a received file's JSON against its schema: callers report it as their file's error",
    ("sim/core/files.py", "check_regular", "OSError"):
        "a received path that is not a regular file: callers report it as their file's error",
    ("sim/core/layout.py", "layout", "ValueError"): "a programmer's layout table, at import",
    ("strategies/params.py", "param_row", "ValueError"):
        "a built-in strategy's row against its declared layout: a programmer's error",
    ("sim/cli/common.py", "raise_interrupt", "KeyboardInterrupt"): "a signal handler's Ctrl-C",
    ("sim/cli/common.py", "write_records", "IsADirectoryError"):
        "caught three lines below and reported as an OutputError",
    ("sim/tools/bench.py", "limit_rate", "ValueError"):
        "caught in the same function and reported as a ConfigError",
    ("sim/tournament/results.py", "atomic_write", "OSError"):
        "names the file a failed write lost; callers report an OutputError",
    ("sim/tournament/config.py", "_toml_value", "TypeError"):
        "writes values load_config already checked: a programmer's error",
    ("sim/tournament/chunks.py", "ChunkPlan.__getitem__", "IndexError"):
        "the sequence protocol (a plan indexed past its end)",
    ("sim/tournament/chunks.py", "DealValues.from_dict", "ValueError"):
        "reading a chunk file: results.py reports it as a ConfigError naming the file",
    ("sim/tournament/chunks.py", "Aggregate.add", "ValueError"): "an internal invariant",
    ("sim/tournament/chunks.py", "Aggregate._look", "ValueError"): "an internal invariant",
    ("sim/core/bind.py", "bindable", "RuntimeError"):
        "a template module's bindable names: a programmer's error, at import",
    ("sim/core/bind.py", "_label", "TypeError"): "a binding the harness made: a programmer's",
    ("sim/core/bind.py", "bound_module", "RuntimeError"):
        "a binding the template does not declare: a programmer's error",
    ("strategies/base.py", "param.coerce", "TypeError"):
        "caught in the same function and reported as a ConfigError",
}
# exceptions that are never about the user's input, wherever raised
ALLOWED_EXCEPTIONS = {
    "ArithmeticError": "a numerical iteration that did not converge on checked input: a defect",
    "NotImplementedError": "an abstract method",
}
# whole folders, and why
ALLOWED_FOLDERS = {
    "sim/reference/": "the independent reference engine shares nothing with the product, "
                      "errors included; the validator turns its ValueErrors into findings",
}


def _bare_raises() -> list[tuple[str, str, str, int]]:
    out = []
    for pkg in ("sim", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                tree = ast.parse(open(path, encoding="utf-8").read())
                out += _raises_in(tree, rel)
    return out


def _raises_in(tree: ast.AST, rel: str) -> list[tuple[str, str, str, int]]:
    out = []

    def visit(node: ast.AST, scope: list[str]) -> None:
        for ch in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = scope + [ch.name]
            if isinstance(ch, ast.Raise) and ch.exc is not None:
                exc = ch.exc.func if isinstance(ch.exc, ast.Call) else ch.exc
                if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS:
                    out.append((rel, ".".join(scope) or "<module>", exc.id, ch.lineno))
            visit(ch, inner)

    visit(tree, [])
    return out


def _allowed(rel: str, where: str, exc: str) -> bool:
    if any(rel.startswith(folder) for folder in ALLOWED_FOLDERS) or exc in ALLOWED_EXCEPTIONS:
        return True
    return (rel, where, exc) in ALLOWED


def test_no_bare_builtin_raises():
    bare = [f"{rel}:{line} raises {exc} in {where}" for rel, where, exc, line in _bare_raises()
            if not _allowed(rel, where, exc)]
    assert not bare, ("raise a ShuangkouError subclass (sim/errors.py) on bad input, or list "
                      "the raise in ALLOWED with its reason:\n" + "\n".join(bare))


def test_the_allow_list_names_only_raises_that_exist():
    found = {(rel, where, exc) for rel, where, exc, _ in _bare_raises()}
    stale = [k for k in ALLOWED if k not in found]
    assert not stale, f"ALLOWED lists raises that are gone: {stale}"


def test_the_scan_sees_a_bare_raise():
    tree = ast.parse("class A:\n    def f(self):\n        raise ValueError('x')\n"
                     "def g():\n    raise RulesError('y')\n")
    assert _raises_in(tree, "sim/x.py") == [("sim/x.py", "A.f", "ValueError", 3)]


def test_every_error_class_is_a_shuangkou_error():
    import sim.errors as errors

    classes = [v for v in vars(errors).values() if isinstance(v, type)
               and issubclass(v, BaseException) and v.__module__ == "sim.errors"]
    assert len(classes) >= 12
    assert all(issubclass(c, ShuangkouError) and issubclass(c, ValueError) for c in classes)


# --- the entry points that leaked a builtin error --------------------------------------------
@pytest.mark.parametrize("call", [lambda r: sim.Deal(0, 0, r), lambda r: sim.settle(100, r),
                                  lambda r: sim.Batch(4, 1, rules=r)])
@pytest.mark.parametrize("rules", [{"max_redeals": 1}, "default", 3])
def test_rules_that_are_not_a_rules_object(call, rules):
    with pytest.raises(NotRulesError, match=r"rules must be a sim\.Rules or None, not") as e:
        call(rules)
    assert isinstance(e.value, RulesError) and isinstance(e.value, TypeError)  # as before
    if isinstance(rules, dict):
        assert "sim.Rules.from_dict" in str(e.value)


def test_env_rules_check_is_the_same():
    pytest.importorskip("pettingzoo")
    from sim.env import env

    with pytest.raises(NotRulesError, match="rules must be a sim.Rules"):
        env(rules={"max_redeals": 1})


def test_rules_from_a_mapping_only():
    with pytest.raises(RulesError, match="must be a mapping.*allowed names are max_redeals"):
        sim.Rules.from_dict(5)
    assert sim.Rules.from_dict(None) == sim.DEFAULT_RULES


@pytest.mark.parametrize("call, match", [
    (lambda: sim.legal_plays(123, "s"), "123 is not cards: give a string such as 'Kh 5s'"),
    (lambda: sim.legal_plays(["3s"], "s", lead=5), "5 is not cards"),
    (lambda: sim.card_points(5), "5 is not cards"),
    (lambda: sim.trick_winner(5, "s"), "plays 5 must be a list of the trick's plays"),
    (lambda: sim.action_of(5), "5 is not cards"),
    (lambda: cards.card_name(99), r"card id 99 must be an integer in 0 … 53"),
    (lambda: cards.card_name("x"), r"card id 'x' must be an integer in 0 … 53"),
])
def test_card_input_errors(call, match):
    with pytest.raises(InvalidCardError, match=match):
        call()


def test_actions_and_titles():
    with pytest.raises(sim.IllegalPlayError, match=r"action 'a' is out of range: 0 … 1593"):
        sim.choice_of_action("a", "play")
    with pytest.raises(sim.IllegalPlayError, match="out of range"):
        sim.choice_of_action(True, "play")
    with pytest.raises(InvalidCardError, match="not a trump suit"):
        sim.choice_of_action(sim.action_of(("Kh", "4s")), "play", trump="x")
    with pytest.raises(sim.IllegalPlayError, match="index 0 … 3"):
        sim.choice_of_action(sim.action_of(("Kh", "4s")), "play", trump=7)
    assert sim.choice_of_action(sim.action_of(("Kh", "4s")), "play", trump="H") == ("4s", "Kh")
    with pytest.raises(RulesError, match="'x' is not an R25 title"):
        titles.gloss("x")


def test_stats_errors_are_shuangkou_errors():
    from sim.analysis import stats

    with pytest.raises(StatsError, match=r"1\.5 must be in the open interval \(0, 1\)"):
        stats.Moments().add(np.array([1.0, 2.0])).ci(1.5)
    with pytest.raises(StatsError, match="must be finite"):
        stats.mean_ci([1.0, float("nan")])
