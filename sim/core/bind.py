"""Templates: compiled loops made by binding names, never by editing text.

numba resolves a kernel's global names when it compiles it, and caches the machine code by
the kernel's file. So one ordinary module (a *template*: ``sim.loops.loop``,
``strategies.compiled``, ``sim.loops.plugin_loop``, ``sim.loops.batch``) can be compiled
with other functions in some of its names — a dispatch over only a run's strategies, a
plug-in's kernel, a hook — by loading a verbatim copy of its file under a new name with those
names bound (``bound_module``). The template declares the names it lets a loader bind with
``bindable(globals(), "name", ...)``, after it has defined or imported their defaults; the
module imported normally keeps the defaults. The copy is written once into the kernel cache
folder (``sim.core._cache``), named by a hash of the template's text and the bindings, so
numba caches each binding apart and every process that binds the same names (tournament
workers) finds the same file and the same cached code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping
from typing import Any

from sim.core._cache import CACHE_DIR

_PENDING: dict[str, dict[str, Any]] = {}  # module name -> its bindings, while it loads
_LOADED: dict[str, Any] = {}


def bindable(namespace: dict[str, Any], *names: str) -> None:
    """Declare ``names`` of the template module whose globals are ``namespace`` as bindable,
    and bind them when a loader (``bound_module``) is loading it: call it at module level,
    after the defaults of ``names`` are defined or imported."""
    for name in names:
        if name not in namespace:
            raise RuntimeError(f"{namespace['__name__']}: bindable name {name!r} has no "
                               f"default defined before bindable()")
    namespace["BINDABLE"] = names
    bindings = _PENDING.pop(namespace["__name__"], None)
    if bindings is not None:
        namespace.update(bindings)


def _label(value: Any) -> str:
    """What a bound value is, for the copy's name: a compiled function by its module and
    name (its code is hashed into the kernel cache folder's name, or by the caller's
    ``salt``), a number by its value."""
    fn = getattr(value, "py_func", value)
    if callable(fn) and hasattr(fn, "__qualname__"):
        return f"{fn.__module__}:{fn.__qualname__}"
    if isinstance(value, (bool, int, float, str)):
        return repr(value)
    raise TypeError(f"cannot bind {value!r}: a compiled function or a number")


def bound_module(template: str, bindings: Mapping[str, Any], salt: str = "") -> Any:
    """The module ``template`` (a dotted name) with ``bindings`` in its bindable names: a
    verbatim copy of its file in the kernel cache folder, loaded once per process. ``salt``:
    anything else the bound code depends on that its labels do not name (a plug-in's source
    hash)."""
    base = importlib.import_module(template)
    declared = getattr(base, "BINDABLE", ())
    unknown = sorted(set(bindings) - set(declared))
    if unknown:
        raise RuntimeError(f"{template} cannot bind {unknown}: its bindable names are "
                           f"{list(declared)}")
    path = base.__file__ or ""
    with open(path, "rb") as f:
        text = f.read()
    h = hashlib.sha256(text)
    for name in sorted(bindings):
        h.update(f"\0{name}={_label(bindings[name])}".encode())
    h.update(b"\0" + salt.encode())
    stem = f"{template.rsplit('.', 1)[1]}_{h.hexdigest()[:16]}"
    name = f"_shuangkou_{stem}"
    if name in _LOADED:
        return _LOADED[name]
    copy = os.path.join(CACHE_DIR, "bound", f"{stem}.py")
    if not os.path.exists(copy):  # written once: numba's cache is keyed by the file's stamp
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        tmp = f"{copy}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(text)
        os.replace(tmp, copy)
    spec = importlib.util.spec_from_file_location(name, copy)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    _PENDING[name] = dict(bindings)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        left = _PENDING.pop(name, None)
    if left is not None:  # pragma: no cover - guards a template without bindable()
        raise RuntimeError(f"{template} never called bindable(): nothing was bound")
    _LOADED[name] = mod
    return mod
