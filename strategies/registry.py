"""Strategy specs: ``greedy``, ``pimc(samples=64, rollout=greedy)``, ``mybots:Cautious(risk=0.3)``.

A spec names a strategy and sets some of its parameters. Names resolve, in order, to the
built-in strategies, to strategies registered by plug-in modules (``--plugin module``; a
config file's ``plugins = [...]`` only names them), to the entry-point group
``shuangkou.strategies`` of installed packages, and finally ``module:Class`` imports the class
directly.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any

from sim.errors import ConfigError
from strategies.base import Strategy, format_value

ENTRY_POINT_GROUP = "shuangkou.strategies"
_REGISTRY: dict[str, type[Strategy]] = {}
_BUILTINS_LOADED = False
_BUILTIN_NAMES: set[str] = set()


def _where(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def register(cls: type[Strategy]) -> type[Strategy]:
    """Make ``cls`` available under ``cls.name`` (usable as a class decorator).

    A name already taken by another class (a built-in such as ``greedy``, or another
    plug-in) is refused; registering the same class again (a module loaded twice) is harmless.
    """
    if not (inspect.isclass(cls) and issubclass(cls, Strategy)):
        raise ConfigError(f"{cls!r} is not a Strategy subclass and cannot be registered")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", cls.name or ""):
        raise ConfigError(f"strategy class {cls.__name__} has an invalid name {cls.name!r}")
    load_builtins()
    old = _REGISTRY.get(cls.name)
    if old is not None and old is not cls and _where(old) != _where(cls):
        which = "the built-in strategy" if cls.name in _BUILTIN_NAMES else "strategy"
        raise ConfigError(f"plug-in strategy {_where(cls)} is named {cls.name!r} like "
                          f"{which} {_where(old)}: give it another name")
    _REGISTRY[cls.name] = cls
    return cls


def builtin_classes() -> list[type[Strategy]]:
    """The strategies that ship with the package."""
    # (compiled kernels, numba and the engine: the registry itself stays light, as the config
    # reader and the command line that import it)
    from strategies.expert import ExpertStrategy
    from strategies.greedy import GreedyStrategy
    from strategies.learned import LearnedStrategy
    from strategies.random import RandomStrategy
    from strategies.search import IsmctsStrategy, OracleStrategy, PimcStrategy

    return [RandomStrategy, GreedyStrategy, PimcStrategy, IsmctsStrategy, OracleStrategy,
            ExpertStrategy, LearnedStrategy]


def load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    for cls in builtin_classes():
        _BUILTIN_NAMES.add(cls.name)
        _REGISTRY[cls.name] = cls  # before any plug-in: register() refuses their names


def is_plugin_path(module: str) -> bool:
    """Whether a ``--plugin`` value names a file (``bots/mybot.py``, ``~/x.py``) rather than a
    module (``mybot``, ``mypkg.bots``)."""
    return module.endswith(".py") or "/" in module or os.sep in module \
        or module.startswith("~")


def _import_file(path: str) -> Any:
    """Import the plug-in file ``path`` as the module its name gives (``mybot.py``: ``mybot``),
    its folder appended to ``sys.path``: the user named this file, so it is loaded; parallel
    workers and compiled loops import it by that module name."""
    path = os.path.abspath(os.path.expanduser(path))
    name, ext = os.path.splitext(os.path.basename(path))
    if ext != ".py":
        raise ConfigError(f"plugin {path!r} is not a Python file: give a .py file or a module "
                          f"name")
    if not os.path.isfile(path):
        why = "is a folder" if os.path.isdir(path) else "does not exist"
        raise ConfigError(f"plugin file {path!r} {why}: give the path of a .py file")
    if not name.isidentifier():
        raise ConfigError(f"plugin file {path!r}: {name!r} is not a Python module name: "
                          f"rename the file (letters, digits, _)")
    add_paths([os.path.dirname(path)])
    mod = importlib.import_module(name)
    where = getattr(mod, "__file__", None)
    if not where or os.path.realpath(where) != os.path.realpath(path):
        raise ConfigError(f"plugin file {path!r} is named like the module {name!r} already "
                          f"importable from {where or 'the standard library'!r}: rename the "
                          f"file")
    return mod


def load_plugin(module: str) -> list[str]:
    """Import ``module`` and register every Strategy subclass it defines; returns their names.

    ``module`` is a module name (found in the folders ``load_plugins`` adds and on
    ``sys.path``) or the path of a ``.py`` file, imported by its file name.
    """
    try:
        if is_plugin_path(module):
            mod = _import_file(module)
        else:
            mod = importlib.import_module(module)
    except ConfigError:
        raise
    except ImportError as e:
        hint = ""
        if isinstance(e, ModuleNotFoundError) and e.name == module.split(".")[0]:
            hint = (" (a module is found in the working folder or on PYTHONPATH; for a "
                    "file elsewhere give its path, e.g. --plugin ~/bots/mybot.py)")
        raise ConfigError(f"plugin module {module!r} cannot be imported: {e}{hint}") from None
    except (Exception, SystemExit) as e:  # the module itself fails: say where and how
        raise ConfigError(f"plugin module {module!r} cannot be imported: it raised "
                          f"{_error_text(e)}") from None
    names = []
    for _, obj in vars(mod).items():
        if (inspect.isclass(obj) and issubclass(obj, Strategy) and obj is not Strategy
                and obj.__module__ == mod.__name__ and "name" in vars(obj)):
            register(obj)
            names.append(obj.name)
    return names


def add_paths(dirs: Iterable[str]) -> None:
    """Make modules in ``dirs`` importable: appended to ``sys.path`` (so a module there never
    shadows an installed one), each once."""
    for d in dirs:
        if d and d not in sys.path:
            sys.path.append(d)


def load_plugins(mods: Iterable[str], dirs: Iterable[str] = ()) -> list[str]:
    """The one plug-in loader (the CLI's ``--plugin``, a config's ``plugins``, a tournament
    worker): ``add_paths(dirs)`` if there is a module to load, then ``load_plugin`` each;
    returns the names registered."""
    mods = list(mods)
    if mods:
        add_paths(dirs)
    return [name for m in mods for name in load_plugin(m)]


def _error_text(e: BaseException) -> str:
    """``'ValueError: bad'``; a SyntaxError with its file and line, all on one line."""
    if isinstance(e, SyntaxError):
        where = f" ({e.filename}, line {e.lineno})" if e.filename else ""
        return f"{type(e).__name__}: {e.msg}{where}"
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _entry_point(name: str) -> type[Strategy] | None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                cls = ep.load()
            except Exception as e:  # a broken third-party package: say which
                raise ConfigError(f"strategy {name!r} from entry point {ep.value!r} failed to "
                                  f"load: {e}") from None
            return register(cls)
    return None


def registered(name: str) -> type[Strategy] | None:
    """The class registered under ``name`` (the built-ins, and plug-ins already imported), or
    None; imports nothing but the built-ins."""
    load_builtins()
    return _REGISTRY.get(name)


def available() -> dict[str, type[Strategy]]:
    """Every strategy name that resolves now (built-ins, plug-ins, entry points)."""
    load_builtins()
    out = dict(_REGISTRY)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, None)  # type: ignore[arg-type]
    return out


def resolve(target: str) -> type[Strategy]:
    """The class of a spec's name part."""
    load_builtins()
    if target in _REGISTRY:
        return _REGISTRY[target]
    if ":" in target:
        mod, _, attr = target.partition(":")
        try:
            obj = getattr(importlib.import_module(mod), attr)
        except ImportError as e:
            raise ConfigError(f"strategy {target!r}: module {mod!r} cannot be imported ({e})") \
                from None
        except (Exception, SystemExit) as e:
            raise ConfigError(f"strategy {target!r}: module {mod!r} cannot be imported (it "
                              f"raised {_error_text(e)})") from None
        except AttributeError:
            raise ConfigError(f"strategy {target!r}: module {mod!r} has no {attr!r}") from None
        if not (inspect.isclass(obj) and issubclass(obj, Strategy)):
            raise ConfigError(f"strategy {target!r} is not a strategies.Strategy subclass")
        return obj
    if target == "openspiel":  # OpenSpiel's bots (the optional extra, docs/frameworks.md)
        from sim.openspiel import OpenSpielStrategy  # one line naming the extra if missing

        return OpenSpielStrategy
    cls = _entry_point(target)
    if cls is not None:
        return cls
    names = ", ".join(sorted(available()))
    raise ConfigError(f"unknown strategy {target!r}: available are {names} "
                      f"(or openspiel(...) with the [openspiel] extra, module:Class, or a "
                      f"module loaded with --plugin)")


# --- spec parsing -----------------------------------------------------------------------
_TARGET = re.compile(r"\s*([A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?|[A-Za-z_][\w.-]*)\s*")


def split_args(text: str, spec: str) -> list[str]:
    parts, depth, cur, quote = [], 0, "", None
    for ch in text:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ConfigError(f"strategy spec {spec!r}: unbalanced ')'")
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    if depth or quote:
        raise ConfigError(f"strategy spec {spec!r}: unbalanced parentheses or quotes")
    if cur.strip():
        parts.append(cur)
    return parts


def team_members(spec: str) -> list[str]:
    """The two players of a team ``"a+b"`` (a partners tournament's entrant: ``a`` in the
    team's first seat, ``b`` in its second), or ``[spec]`` for a single player; a ``+`` inside
    a spec's parentheses or quotes is the spec's own."""
    depth, quote, cut = 0, "", -1
    for i, c in enumerate(spec):
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "+" and depth == 0:
            if cut >= 0:
                raise ConfigError(f"team {spec!r}: a team is two players, a+b")
            cut = i
    if cut < 0:
        return [spec]
    a, b = spec[:cut].strip(), spec[cut + 1:].strip()
    if not a or not b:
        raise ConfigError(f"team {spec!r}: a team is two players, a+b")
    return [a, b]


def team_pair(spec: str) -> list[str]:
    """The two players of a team, ``"a+b"``, or a single player's mirror team ``[a, a]``."""
    members = team_members(spec)
    return members * 2 if len(members) == 1 else members


def split_specs(text: str) -> list[str]:
    """Split a list of specs, ``'pimc(samples=8, rollout=greedy),random'``, at the commas
    outside parentheses and quotes (the parser of a spec's own parameters)."""
    return [p.strip() for p in split_args(text, text) if p.strip()]


def _value(text: str) -> Any:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t  # a bare word or a nested spec, e.g. rollout=greedy


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``'pimc(samples=64, rollout=greedy)'`` into ``('pimc', {...})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"strategy spec {spec!r} is empty: write a name such as 'random'")
    m = _TARGET.match(spec)
    if not m:
        raise ConfigError(f"strategy spec {spec!r} does not start with a strategy name")
    target = m.group(1)
    rest = spec[m.end():].strip()
    kwargs: dict[str, Any] = {}
    if rest:
        if not (rest.startswith("(") and rest.endswith(")")):
            raise ConfigError(f"strategy spec {spec!r}: parameters go in parentheses, "
                              f"e.g. {target}(key=value)")
        for part in split_args(rest[1:-1], spec):
            key, eq, val = part.partition("=")
            key = key.strip()
            if not eq or not re.fullmatch(r"[A-Za-z_]\w*", key):
                raise ConfigError(f"strategy spec {spec!r}: {part.strip()!r} is not key=value")
            if key in kwargs:
                raise ConfigError(f"strategy spec {spec!r}: parameter {key!r} given twice")
            kwargs[key] = _value(val)
    return target, kwargs


def make(spec: str | Strategy) -> Strategy:
    """A fresh strategy instance from a spec string (or a copy of an instance's spec)."""
    if isinstance(spec, Strategy):
        spec = spec.spec() if type(spec) in _REGISTRY.values() else spec
        if isinstance(spec, Strategy):
            return spec
    target, kwargs = parse_spec(spec)
    cls = resolve(target)
    try:
        strat = cls(**kwargs)
    except ConfigError:
        raise
    except TypeError as e:
        raise ConfigError(f"strategy spec {spec!r}: {e}") from None
    if ":" in target and _REGISTRY.get(cls.name) is not cls:
        strat.spec_target = target  # not resolvable by name elsewhere: keep module:Class
    return strat


def params_markdown(classes: Iterable[type[Strategy]]) -> str:
    """Markdown tables of the classes' parameters with their defaults, types and ranges, as
    the registry has them (``shuangkou strategies --markdown``; docs/strategies.md carries the
    built-ins' and tests/test_readme.py checks that it matches)."""
    out = []
    for cls in classes:
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()).replace("``", "`")
        out.append(f"#### `{cls.name}`\n\n{doc}\n")
        params = cls.params()
        if not params:
            out.append("No parameters.\n")
            continue
        out.append("| parameter | default | type and range | meaning |\n|---|---|---|---|")
        for k, p in params.items():
            meaning = p.doc.replace("|", "\\|")
            out.append(f"| `{k}` | `{format_value(p.default)}` | {p.describe()} | {meaning} |")
        out.append("")
    return "\n".join(out)
