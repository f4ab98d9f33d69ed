"""Each constant is defined once (issue 21): a module-level ALL_CAPS name assigned the same
literal value in two modules of ``sim`` or ``strategies`` is a second definition that can
drift from the first; the one definition lives in the lowest layer that needs it and the rest
import it. Strategy specs are split by one parser (``strategies.registry``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> why the same value under the same name is defined in more than one module
ALLOWED_TWICE = {
    "STREAM_CARDS": "two meanings that coincide: sim.core.rng's stream number of the deck, "
                    "sim.core.state's slot of its key in the state (the seats' differ: 1 + s "
                    "and 16 + s are streams, 1 + s and 5 + s slots)",
    "_PLAIN": "strategies/example.py and example_compiled.py are standalone examples a "
              "plug-in author copies; each reads alone",
}
# whole folders, and why
SKIPPED = {"sim/reference/": "the independent reference engine: shares no code with the "
                             "product, its tables included"}
# the constants issue 21 found defined more than once: now in exactly one module each
ONCE = {"MAX_SEED": "sim/core/limits.py", "MAX_DEAL": "sim/core/limits.py",
        "SPRT_SAFE_MIN_PAIRS": "sim/analysis/stats/sprt.py",
        "DEFAULT_SAMPLES": "sim/tools/analyze.py",
        "RANKS": "sim/cards.py", "SUITS": "sim/cards.py", "U_WORLD": "strategies/search.py",
        "U_ROLL": "strategies/search.py"}


def _value(node: ast.AST):
    """The value of a literal or of arithmetic on literals (``2**63 - 1``); else a sentinel."""
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        pass
    if all(isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop))
           for n in ast.walk(node)):
        try:
            return eval(compile(ast.Expression(node), "<constant>", "eval"), {"__builtins__": {}})
        except (ArithmeticError, TypeError, ValueError):
            pass
    return _value


def definitions() -> dict[str, list[tuple[str, str]]]:
    """ALL_CAPS name -> [(module file, repr of its value)] of every module-level assignment."""
    out: dict[str, list[tuple[str, str]]] = {}
    for pkg in ("sim", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                if not f.endswith(".py") or any(rel.startswith(s) for s in SKIPPED):
                    continue
                for node in ast.parse(open(path, encoding="utf-8").read()).body:
                    if isinstance(node, ast.Assign):
                        targets, value = node.targets, node.value
                    elif isinstance(node, ast.AnnAssign) and node.value is not None:
                        targets, value = [node.target], node.value
                    else:
                        continue
                    for t in targets:
                        if isinstance(t, ast.Name) and t.id.lstrip("_").isupper():
                            v = _value(value)
                            out.setdefault(t.id, []).append(
                                (rel, "<computed>" if v is _value else repr(v)))
    return out


DEFS = definitions()


def test_no_constant_is_defined_twice():
    twice = []
    for name, where in sorted(DEFS.items()):
        by_value: dict[str, set[str]] = {}
        for rel, v in where:
            if v != "<computed>":
                by_value.setdefault(v, set()).add(rel)
        for v, files in by_value.items():
            if len(files) > 1 and name not in ALLOWED_TWICE:
                twice.append(f"{name} = {v[:40]} in {', '.join(sorted(files))}")
    assert not twice, ("define each constant once and import it (or list it in ALLOWED_TWICE "
                       "with the reason):\n" + "\n".join(twice))


@pytest.mark.parametrize("name", sorted(ONCE))
def test_the_constants_found_twice_live_in_one_module(name):
    assert [rel for rel, _ in DEFS[name]] == [ONCE[name]]


def test_the_allow_list_is_still_needed():
    for name in ALLOWED_TWICE:
        assert len({rel for rel, _ in DEFS.get(name, [])}) > 1, f"{name} is defined once now"


def test_the_scan_sees_a_second_definition():
    node = ast.parse("MAX_DEAL = 2**63 - 1").body[0]
    assert _value(node.value) == 2**63 - 1
    assert _value(ast.parse("X = f(1)").body[0].value) is _value


def test_the_shared_ranges_are_the_engine_s():
    from sim.core import limits, rng
    from sim.loops import batch
    from sim.tournament import config

    assert rng.MAX_DEAL is limits.MAX_DEAL and config.MAX_DEAL is limits.MAX_DEAL
    assert batch.MAX_DEAL == 2**63 - 1 and config.MAX_SEED == rng.MAX_SEED == 2**64 - 1


def test_the_command_line_and_config_reader_stay_light():
    """The one home of the ranges imports nothing: the CLI and config reader load no numpy."""
    code = ("import sys, sim.cli, sim.tournament.config, sim.core.limits\n"
            "print('numpy' in sys.modules, 'numba' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, check=True)
    assert r.stdout.split() == ["False", "False"]


def test_the_cli_mirrors_of_defaults_agree():
    """sim.cli repeats a few defaults so that ``shuangkou --help`` loads no engine; they
    must agree with the modules that own them (estimate's: tests/test_estimate.py)."""
    from sim.analysis.stats import SWINGS_KEPT
    from sim.cli import options as cli
    from sim.tools.analyze import DEFAULT_SAMPLES

    assert cli.DEFAULT_ANALYZE_SAMPLES == DEFAULT_SAMPLES
    assert cli.SWINGS_MAX == SWINGS_KEPT


# --- one spec parser ----------------------------------------------------------------------
def test_one_parser_splits_spec_lists():
    from sim import human
    from sim.loops import runner
    from strategies import registry

    assert runner.split_specs is registry.split_specs is human.split_specs
    split = registry.split_specs
    assert split("pimc(samples=8, rollout=greedy),random") == \
        ["pimc(samples=8, rollout=greedy)", "random"]
    # a quoted comma or parenthesis stays inside its spec (the old splitter cut it)
    assert split("mod:Bot(name='a,b'), greedy ,") == ["mod:Bot(name='a,b')", "greedy"]
    assert split('mod:Bot(tag=")"),random') == ['mod:Bot(tag=")")', "random"]


@pytest.mark.parametrize("text", ["greedy(,random", "greedy),random", "a(name='x),b"])
def test_an_unbalanced_spec_list_is_one_config_error(text):
    from sim.errors import ConfigError
    from strategies.registry import split_specs

    with pytest.raises(ConfigError, match="unbalanced"):
        split_specs(text)
