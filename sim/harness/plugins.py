"""Compiled plug-ins: a user's numba kernel inside the compiled deal loop (docs/strategies.md).

A strategy class with a ``kernel`` attribute (a numba-compiled function
``kernel(st, u, rules, seat, params, buf) -> code``) runs compiled. numba cannot dispatch over
an open set of functions from a cached loop, so for each *set* of plug-in kernels a run uses,
this module writes a small Python module into the kernel cache folder (``sim._cache``) that
imports those kernels and defines the deal loops with one extra branch per kernel (kinds
numbered after the built-ins), each cached by numba. The file is named by a hash of the
plug-ins' source files (the kernel's module and the modules of the numba functions it calls),
their names and this template, inside a folder keyed by the engine's sources: workers that
rebuild it from the same inputs find numba's cache, and an edited plug-in gets a new module,
compiled afresh (never stale code).

The loops hand a plug-in a masked copy of the state (``sim.view.mask_into``: what its seat may
know, R9), check the code it returns with ``sim.view.is_legal`` and stop at the first illegal
one; the Python wrappers here (``Loops``) turn that, or an exception raised inside a kernel,
into one ``StrategyError`` naming the strategy, seat, seed and deal.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from sim.core._cache import CACHE_DIR
from sim.errors import ConfigError, StrategyError
from strategies.kinds import KIND_GREEDY, KIND_RANDOM, N_BUILTIN, PLUGIN_SCRATCH  # noqa: F401
from strategies.plugin import (  # noqa: F401  (re-exported)
    choose_with_kernel,
    compile_error,
    compiled_params,
    fresh_kernel,
    kernel_error,
    plugin_kernel,
)

# status array of the generated loops: deal offset being played, seat deciding, error, code,
# decisions started (the watch of a time limit sees progress by it)
ST_DEAL, ST_SEAT, ST_ERROR, ST_CODE, ST_CALLS = range(5)
N_STATUS = 6
CHECK_POLL = 0.05  # seconds between looks at a child playing the check deal
WATCH_POLL = 0.1  # seconds between looks at the progress of a watched call


def _kernel_of(module: str, qualname: str, inline: bool = True) -> Any:
    """The kernel of class ``module:qualname`` (used by the generated modules), compiled anew
    inside them: numba's own cache of the kernel knows its file only by modification time and
    size, the generated module's cache by a hash of the source. ``inline``: inlined into the
    loops (as the built-ins' hot paths are into sim.harness.loop's), else a function of its
    own that may allocate, with bounds checks (``strategies.plugin.fresh_kernel``)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return fresh_kernel(plugin_kernel(obj), inline=inline)


def _check_kernel(cls: type) -> Any:
    k = plugin_kernel(cls)
    if not hasattr(k, "py_func"):
        raise ConfigError(f"strategy {getattr(cls, 'name', cls.__name__)!r}: kernel must be a "
                          f"numba-compiled function kernel(st, u, rules, seat, params, buf), "
                          f"not {k!r}")
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        raise ConfigError(f"strategy {cls.name!r}: a compiled plug-in must be a top-level "
                          f"class of an importable module, not of {cls.__module__}")
    return k


def _source_files(dispatcher: Any, seen: set[str]) -> None:
    """The files of ``dispatcher`` and of every numba function it calls (by global name)."""
    fn = dispatcher.py_func
    path = inspect.getsourcefile(fn) or ""
    key = f"{path}:{fn.__qualname__}"
    if key in seen:
        return
    seen.add(key)
    g = fn.__globals__
    names = fn.__code__.co_names
    for name in names:
        obj = g.get(name)
        if inspect.ismodule(obj):  # helpers.f(...): follow the attributes the kernel names
            for attr in names:
                f = getattr(obj, attr, None)
                if hasattr(f, "py_func") and hasattr(f, "targetoptions"):
                    _source_files(f, seen)
        elif hasattr(obj, "py_func") and hasattr(obj, "targetoptions"):
            _source_files(obj, seen)


def _digest(classes: Sequence[type], builtin: str, inline: bool = True) -> str:
    h = hashlib.sha256()
    h.update(_source(classes, builtin, inline).encode())  # the module it makes (the template)
    seen: set[str] = set()
    for cls in classes:
        h.update(f"{cls.__module__}:{cls.__qualname__}\0".encode())
        _source_files(_check_kernel(cls), seen)
    for path in sorted({k.rsplit(":", 1)[0] for k in seen}):
        h.update(path.encode() + b"\0")
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            pass
    return h.hexdigest()[:16]


_HEAD = '''\
"""Generated by sim.harness.plugins for {names}: do not edit (rebuilt when a plug-in changes)."""
import numpy as np
from numba import jit

from sim.core.engine import (DONE, PLAY, S_DECK, S_PHASE, S_TO_ACT, ST_SIZE, U_SIZE, advance,
                        apply_code_inline, apply_play_inline, init_deal, init_deal_fixed)
from sim.core.movegen import code_first, code_second
from sim.harness.plugins import PLUGIN_SCRATCH, _kernel_of
from sim.view import is_legal, mask_into, unmask_streams
from sim.view import mask_update as _mask_update
from strategies.kinds import FLOAT_SCRATCH, INT_SCRATCH, KIND_GREEDY, KIND_RANDOM, UINT_SCRATCH
from {builtin} import decide as builtin_decide, summarize
from {builtin} import greedy_decide_inline, random_decide_inline

mask_update = jit(nopython=True, nogil=True, _nrt=False, inline="always")(_mask_update.py_func)

'''

_BODY = '''

@jit(nopython=True, cache=True, nogil=True, _nrt=False, inline="always")
def _plugin(kind, st, u, rules, seat, params, m_st, m_u, m_r, m_p, pbuf, status):
    status[1] = seat
    for i in range(rules.shape[0]):  # its own copies: a kernel cannot change the rules
        m_r[i] = rules[i]                # nor its parameters for later decisions
    r = m_r[:rules.shape[0]]
    p = m_p[:params.shape[1]]
    for i in range(params.shape[1]):
        p[i] = params[seat, i]
    code = np.int64(-1)
{branches}
    unmask_streams(u, m_u, seat)
    if not is_legal(st, u, code):
        status[2] = 1
        status[3] = code
    return code


@jit(nopython=True, cache=True, nogil=True, _nrt=False)
def decide(kind, params, st, u, rules, seat, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
           synced, status):
    if kind < {n_builtin}:
        return builtin_decide(kind, params, st, u, rules, seat, buf, fws, uws)
    mask_into(st, u, seat, m_st[seat], m_u[seat])
    return _plugin(kind, st, u, rules, seat, params, m_st[seat], m_u[seat], m_r[seat],
                   m_p[seat], pbuf[seat], status)


@jit(nopython=True, cache=True, nogil=True, _nrt=False)
def finish_deal(st, u, rules, kinds, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                synced, status):
    for s in range(4):  # each plug-in seat's own masked copy, synced trick by trick
        synced[s] = 0
    advance(st, u, rules)
    while st[S_PHASE] != DONE:
        seat = st[S_TO_ACT]
        status[1] = seat
        status[4] += 1
        kind = kinds[seat]
        if kind == KIND_RANDOM:  # the built-ins' hot paths as in sim.harness.loop.finish_deal
            code = random_decide_inline(st, u, seat, params[seat, 0], buf)
        elif kind == KIND_GREEDY:
            code = greedy_decide_inline(st, u, rules, seat, params, seat, buf)
        elif kind < {n_builtin}:
            code = builtin_decide(kind, params, st, u, rules, seat, buf, fws, uws)
        else:
            mask_update(st, u, seat, m_st[seat], m_u[seat], synced)
            code = _plugin(kind, st, u, rules, seat, params, m_st[seat], m_u[seat], m_r[seat],
                           m_p[seat], pbuf[seat], status)
            if status[2] != 0:
                return
        if st[S_PHASE] == PLAY:
            apply_play_inline(st, u, rules, code_first(code), code_second(code))
        else:
            apply_code_inline(st, u, rules, code)


@jit(nopython=True, cache=True, nogil=True, _nrt=False)
def play_deal(st, u, rules, seed, deal, kinds, params, buf, fws, uws, m_st, m_u, m_r, m_p,
              pbuf, synced, status):
    init_deal(st, u, seed, deal)
    finish_deal(st, u, rules, kinds, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                synced, status)


'''

# the two batch drivers differ only in their name, extra arguments and how a deal starts
_DRIVER = '''

@jit(nopython=True, cache=True, nogil=True)
def {name}(seed, first, n, rules, kinds, params, {extra}status, out):
    st = np.zeros(ST_SIZE, dtype=np.int64)
    u = np.zeros(U_SIZE, dtype=np.uint64)
    m_st = np.zeros((4, ST_SIZE), dtype=np.int64)
    for s in range(4):
        for i in range(S_DECK, ST_SIZE):  # the deck and fixed cards: never shown
            m_st[s, i] = -1
    m_u = np.zeros((4, U_SIZE), dtype=np.uint64)
    m_r = np.zeros((4, rules.shape[0]), dtype=np.int64)
    m_p = np.zeros((4, params.shape[1]), dtype=np.float64)
    pbuf = np.zeros((4, PLUGIN_SCRATCH), dtype=np.int64)
    synced = np.zeros(4, dtype=np.int64)
    buf = np.zeros(INT_SCRATCH, dtype=np.int64)
    fws = np.zeros(FLOAT_SCRATCH, dtype=np.float64)
    uws = np.zeros(UINT_SCRATCH, dtype=np.uint64)
    for i in range(n):
        status[0] = i
        {init}
        finish_deal(st, u, rules, kinds, params, buf, fws, uws, m_st, m_u, m_r, m_p, pbuf,
                    synced, status)
        if status[2] != 0:
            return
        summarize(st, u, out[i])
    status[0] = n
'''
_DRIVERS = (
    ("play_deals", "", "init_deal(st, u, seed, first + np.uint64(i))"),
    ("play_deals_fixed", "fix_seat, fix_cards, ",
     "init_deal_fixed(st, u, seed, first + np.uint64(i), fix_seat, fix_cards)"),
)


def _source(classes: Sequence[type], builtin: str = "sim.harness.loop",
            inline: bool = True) -> str:
    names = ", ".join(f"{c.__module__}:{c.__qualname__}" for c in classes)
    lines = [_HEAD.format(names=names, builtin=builtin)]
    branches = []
    for i, c in enumerate(classes):
        lines.append(f"_K{i} = _kernel_of({c.__module__!r}, {c.__qualname__!r}, {inline})\n")
        word = "if" if i == 0 else "elif"
        branches.append(f"    {word} kind == {N_BUILTIN + i}:\n"
                        f"        code = np.int64(_K{i}(m_st, m_u, r, seat, p, "
                        f"pbuf))")
    drivers = "".join(_DRIVER.format(name=name, extra=extra, init=init)
                      for name, extra, init in _DRIVERS)
    body = _BODY.format(n_builtin=N_BUILTIN, branches="\n".join(branches)).rstrip("\n") + "\n"
    return "".join(lines) + body + drivers


_MODULES: dict[Any, Any] = {}


def _load(name: str, path: str, source: str) -> Any:
    """Write ``source`` to ``path`` once (numba's cache is keyed by the file's mtime) and
    import it as module ``name``."""
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_DECIDE_LINE = "from strategies.compiled import decide  # generated loops bind their own\n"
_GREEDY_LINE = ("from strategies.greedy import greedy_decide_inline  # generated loops without "
                "greedy: a stub\n")
_GREEDY_STUB = ("@kernel\ndef greedy_decide_inline(st, u, rules, seat, params, pseat, buf):\n"
                "    return -1  # no seat plays greedy in these loops: never called\n\n\n")


def builtin_source(kinds: Sequence[int], template: str = "sim.harness.loop") -> str:
    """The source of ``template`` (``sim.harness.loop``, or ``sim.batch``) with ``decide``
    dispatching to the built-in ``kinds`` only (any other kind plays as random, as in
    ``strategies.compiled.decide``)."""
    from strategies.compiled import KERNEL_CALLS

    with open(importlib.import_module(template).__file__ or "", encoding="utf-8") as f:
        text = f.read()
    if _DECIDE_LINE not in text:  # pragma: no cover - guards an edit of the template
        raise RuntimeError(f"{template} lost the line that imports decide: the generated "
                           f"loops cannot bind their own")
    lines = [f"# decide over the built-in kinds {tuple(kinds)} only (sim.harness.plugins)"]
    body = []
    for k in sorted(set(kinds) | {KIND_RANDOM}):
        module, fn, call = KERNEL_CALLS[k]
        lines.append(f"from {module} import {fn}")
        if k != KIND_RANDOM:
            body.append(f"    if kind == {k}:\n        return {call}")
    body.append(f"    return {KERNEL_CALLS[KIND_RANDOM][2]}")
    dispatch = "\n".join(lines) + (
        "\n\n\n@kernel\ndef decide(kind, params, st, u, rules, seat, buf, fws, uws):\n"
        "    \"\"\"The choice code of the compiled strategy ``kind`` for ``seat``.\"\"\"\n"
        + "\n".join(body) + "\n")
    if KIND_GREEDY not in kinds:  # its inlined hot path would compile greedy all the same
        if template == "sim.harness.loop" and _GREEDY_LINE not in text:  # pragma: no cover
            raise RuntimeError(f"{template} lost the line that imports greedy_decide_inline")
        text = text.replace(_GREEDY_LINE, _GREEDY_STUB)
    head, tail = text.split(_DECIDE_LINE, 1)
    return head + tail + "\n\n" + dispatch


def builtin_loops(kinds: Sequence[int], template: str = "sim.harness.loop") -> Any:
    """The compiled loops of ``template`` (``sim.harness.loop``'s deal loops, or ``sim.batch``'s
    step) specialised for the built-in ``kinds`` a run uses: a module generated into the
    kernel cache folder, named by a hash of its source (the template, the kinds), so each set
    of kinds is compiled once and cached apart, and no other player's kernel compiles."""
    key = (template, tuple(sorted({int(k) for k in kinds})))
    if key in _MODULES:
        return _MODULES[key]
    source = builtin_source(key[1], template)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    # numba names its cache files after the file: loop_<digest>.play_deals-… (Loops.kernel_name)
    stem = f"{template.rsplit('.', 1)[1]}_{digest}"
    mod = _load(f"_shuangkou_{stem}", os.path.join(CACHE_DIR, "loops", f"{stem}.py"), source)
    _MODULES[key] = mod
    return mod


ALLOCATES = ".standalone"  # marker beside a generated module whose kernels must not inline


def _module(classes: Sequence[type], kinds: Sequence[int] = (), inline: bool | None = None
            ) -> Any:
    """The generated loops module for this set of plug-in classes and the built-in ``kinds``
    beside them (written once, cached). ``inline`` None: the kernels inlined, unless an
    earlier run found that they do not compile so (a marker file beside the module says so)."""
    builtin = builtin_loops(kinds).__name__
    if inline is None:
        inline = not os.path.exists(_path(_digest(classes, builtin)) + ALLOCATES)
    key = (tuple(classes), builtin, inline)
    if key in _MODULES:  # the same class objects: their source was hashed already
        return _MODULES[key]
    digest = _digest(classes, builtin, inline)
    if digest in _MODULES:
        _MODULES[key] = _MODULES[digest]
        return _MODULES[digest]
    mod = _load(f"_shuangkou_plugins_{digest}", _path(digest),
                _source(classes, builtin, inline))
    mod.inline = inline
    _MODULES[digest] = _MODULES[key] = mod
    return mod


def _path(digest: str) -> str:
    return os.path.join(CACHE_DIR, "plugins", f"loops_{digest}.py")


_CHECKED: set[str] = set()  # generated modules whose first deal a child has played


def _interruptible() -> bool:
    """Whether Ctrl-C can reach this thread: the main thread, with SIGINT not ignored (a
    tournament's forked workers ignore it: their run handles it)."""
    import signal
    import threading

    return (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)


class _Helper:
    """A daemon thread that runs compiled calls for one calling thread (compiled code
    releases the GIL: the caller stays free to watch the time and take signals)."""

    def __init__(self) -> None:
        import threading

        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job: Any = None
        self.out: Any = None
        self.owner = threading.current_thread()
        self.thread = threading.Thread(target=self._loop, name="shuangkou-kernel",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            if not self.go.acquire(timeout=5.0):
                if not self.owner.is_alive():
                    return
                continue
            if self.job is None:
                return
            fn, args = self.job
            try:
                self.out = (True, fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                self.out = (False, e)
            self.job = None
            self.done.release()

    def submit(self, fn: Any, args: tuple) -> None:
        self.job = (fn, args)
        self.go.release()

    def result(self) -> Any:
        out, self.out = self.out, None
        return out


_HELPERS: Any = None


def _helper() -> _Helper:
    global _HELPERS
    import threading

    if _HELPERS is None:
        _HELPERS = threading.local()
    h = getattr(_HELPERS, "helper", None)
    if h is None:
        h = _HELPERS.helper = _Helper()
    return h


def _abandon(h: _Helper) -> None:
    """Leave ``h`` to its call (it never returns, or nobody waits for it any more)."""
    if _HELPERS is not None and getattr(_HELPERS, "helper", None) is h:
        _HELPERS.helper = None


def _die_with(parent: int) -> None:
    """In a forked check child: be killed when the run that forked it dies, even by SIGKILL
    or the OOM killer (Linux ``PR_SET_PDEATHSIG``), so a kernel that never returns cannot
    spin on orphaned. The forking thread waits for the child until it ends, so the signal
    never comes early. Elsewhere nothing is done."""
    import signal

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if os.getppid() != parent:  # it died before the line above: go now
        os._exit(4)


class Loops:
    """The compiled deal loops for one set of seats: the built-in loops specialised for the
    seats' built-in kinds (``builtin_loops``) when no seat is a plug-in, else the generated
    plug-in module's, with errors named per seat. Only the kernels of these seats compile."""

    def __init__(self, seats: Sequence[Any]) -> None:
        self.seats = list(seats)
        classes = sorted({type(s) for s in seats if plugin_kernel(type(s)) is not None
                          and s.runs_compiled()},
                         key=lambda c: (c.__module__, c.__qualname__))
        self.classes = classes
        kind = {c: N_BUILTIN + i for i, c in enumerate(classes)}
        self.kinds = np.array([kind[type(s)] if type(s) in kind
                               else (s.compiled_kind if s.runs_compiled() else -1)
                               for s in seats], dtype=np.int64)
        builtin = sorted({int(k) for k in self.kinds if 0 <= k < N_BUILTIN})
        self.builtin = builtin_loops(builtin)
        self.mod = _module(classes, builtin) if classes else None
        self.key = (self.builtin, self.mod)  # one compiled loop per key (tournament warm-up)
        self.status = np.zeros(N_STATUS, dtype=np.int64)
        self.timeout: float | None = None  # seconds a plug-in kernel may take per decision
        if self.mod is not None:
            from sim.core.engine import S_DECK, ST_SIZE, U_SIZE

            self.m_st = np.zeros((4, ST_SIZE), dtype=np.int64)
            self.m_st[:, S_DECK:] = -1  # the deck and fixed cards: never shown
            self.m_u = np.zeros((4, U_SIZE), dtype=np.uint64)
            self.m_r = np.zeros((4, 64), dtype=np.int64)  # rows longer than any rules array
            self.m_p = np.zeros((4, 64), dtype=np.float64)
            self.pbuf = np.zeros((4, PLUGIN_SCRATCH), dtype=np.int64)
            self.synced = np.zeros(4, dtype=np.int64)

    def kernel_name(self, fn: str = "play_deals") -> str:
        """The name numba's cache knows these loops' kernel ``fn`` by
        (``sim._cache.kernels_cached``): whether this set of kinds is compiled yet."""
        mod = self.mod if self.mod is not None else self.builtin
        return os.path.splitext(os.path.basename(mod.__file__))[0] + "." + fn

    def _standalone(self) -> None:
        builtin = self.builtin.__name__
        inlined = _path(_digest(self.classes, builtin))
        self.mod = _module(self.classes, sorted({int(k) for k in self.kinds
                                                  if 0 <= k < N_BUILTIN}), inline=False)
        self.key = (self.builtin, self.mod)
        try:
            with open(inlined + ALLOCATES, "w") as f:
                f.write("the kernels of this module compile only as functions of their own\n")
        except OSError:
            pass

    # --- errors --------------------------------------------------------------------------
    def _fail(self, status: np.ndarray, seed: int, deal: int,
              e: BaseException | None = None) -> StrategyError:
        seat = int(status[ST_SEAT])
        return kernel_error(self.seats[seat].spec(), seat, seed, deal, int(status[ST_CODE]), e)

    def _run(self, fn: Any, args: tuple, status: np.ndarray, seed: Any, first: Any) -> None:
        """``fn(*args)``; an error names deal ``first + status[ST_DEAL]``. The first call of
        a process into a set of plug-in kernels plays its first deal in a child process
        (``_check``): a kernel that crashes (writes out of bounds) or never returns is
        reported in one line. Calls from the main thread, or under a time limit, run on a
        helper thread the caller watches (``_watched``): Ctrl-C stops them, and a kernel
        over ``timeout`` is reported (and abandoned: compiled code cannot be stopped)."""
        status[:] = 0
        try:
            if self.mod is not None and self.mod.__name__ not in _CHECKED:
                self._check(fn, args, status, seed, first)
            if self.mod is not None and (self.timeout is not None or _interruptible()):
                self._watched(fn, args, status, seed, first)
            else:
                fn(*args)
        except NumbaError as e:  # a kernel that does not compile: its first cause says why
            if self.mod is not None and self.mod.inline:
                # inlined into the loops, without numba's runtime: a kernel that allocates
                # fails there; compile it as a function of its own (and remember that)
                self._standalone()
                self._run(getattr(self.mod, fn.py_func.__name__) if hasattr(fn, "py_func")
                          else fn, args, status, seed, first)
                return
            raise compile_error(", ".join(c.name for c in self.classes), e,
                                [plugin_kernel(c) for c in self.classes]) from e
        except StrategyError:
            raise
        except Exception as e:  # noqa: BLE001 - anything a kernel raises is reported
            raise self._fail(status, int(seed), int(first) + int(status[ST_DEAL]), e) from None
        if status[ST_ERROR]:
            raise self._fail(status, int(seed), int(first) + int(status[ST_DEAL]))

    def _names(self) -> str:
        return ", ".join(dict.fromkeys(repr(s.spec()) for s in self.seats
                                       if type(s) in self.classes)) or "?"

    def _check(self, fn: Any, args: tuple, status: np.ndarray, seed: Any, first: Any) -> None:
        """Compile ``fn`` here, then play its first deal (or decision) in a forked child:
        a crash there (a kernel writing out of bounds) or a kernel that outlasts ``timeout``
        stops the run with one line instead of killing or hanging this process. Ctrl-C
        while waiting ends the child too. Where there is no fork: nothing is checked."""
        if hasattr(fn, "py_func"):  # a dispatcher: compile it here, outside any clock
            from numba import typeof

            fn.compile(tuple(typeof(a) for a in args))
            if fn.py_func.__name__ in ("play_deals", "play_deals_fixed"):
                args = args[:2] + (min(int(args[2]), 1),) + args[3:]  # one deal
        else:  # the step API's one decision (it advances the seat's random stream: never
            return  # played twice); checked by the first deal played whole
        if not hasattr(os, "fork") or sys.platform == "emscripten":  # pragma: no cover
            _CHECKED.add(self.mod.__name__)
            return
        import signal
        import time

        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: play, and say nothing
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                _die_with(parent)
                fn(*args)
            except BaseException:  # noqa: BLE001 - the caller replays it and reports it
                code = 3
            os._exit(code)
        t0 = time.perf_counter()
        try:
            while True:
                done, how = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if self.timeout is not None and time.perf_counter() - t0 > self.timeout:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    raise StrategyError(
                        f"strategy {self._names()} did not finish deal {int(first)} (seed "
                        f"{int(seed)}) within the {self.timeout:g} s limit in its compiled "
                        f"kernel and was stopped (replay with shuangkou play --seed "
                        f"{int(seed)} --first-deal {int(first)} --deals 1)")
                time.sleep(CHECK_POLL)
        except BaseException:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            raise
        if os.WIFSIGNALED(how):
            sig = os.WTERMSIG(how)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            raise StrategyError(
                f"strategy {self._names()} crashed ({name}) in its compiled kernel playing "
                f"deal {int(first)} (seed {int(seed)}): a write out of bounds, or another "
                f"memory error (replay with shuangkou play --seed {int(seed)} --first-deal "
                f"{int(first)} --deals 1)")
        _CHECKED.add(self.mod.__name__)

    def _watched(self, fn: Any, args: tuple, status: np.ndarray, seed: Any,
                 first: Any) -> None:
        """``fn(*args)`` on a helper thread while this one waits: interruptible (Ctrl-C,
        SIGTERM through a handler), and, under ``timeout``, stopped waiting for once no
        decision has started for ``timeout`` seconds while a plug-in seat decides."""
        import time

        from sim.core._cache import compiles_running

        helper = _helper()
        helper.submit(fn, args)
        limit = self.timeout
        last, since = -1, time.perf_counter()
        plugin_seats = {i for i, s in enumerate(self.seats) if type(s) in self.classes}
        try:
            while not helper.done.acquire(timeout=WATCH_POLL if limit else 0.5):
                if limit is None:
                    continue
                now = time.perf_counter()
                calls = int(status[ST_CALLS])
                if calls != last or compiles_running():
                    last, since = calls, now
                    continue
                seat = int(status[ST_SEAT])
                if seat in plugin_seats and now - since >= limit:
                    raise StrategyError(
                        f"strategy {self.seats[seat].spec()!r} in seat {seat} took more than "
                        f"{limit:g} s in its compiled kernel and was abandoned (seed "
                        f"{int(seed)}, deal {int(first) + int(status[ST_DEAL])}; replay with "
                        f"shuangkou play --seed {int(seed)} --first-deal "
                        f"{int(first) + int(status[ST_DEAL])} --deals 1)")
        except BaseException:
            _abandon(helper)
            raise
        ok, value = helper.result()
        if not ok:
            raise value

    # --- the loops (same arguments as sim.harness.loop's) ----------------------------------------
    def play_deals(self, seed: Any, first: Any, n: int, rules: np.ndarray, kinds: np.ndarray,
                   params: np.ndarray, out: np.ndarray) -> None:
        """Rows ``0 … k-1`` of ``out`` are final even when deal ``first + k`` fails."""
        if self.mod is None:
            self.builtin.play_deals(seed, first, n, rules, kinds, params, out)
            return
        status = np.zeros(N_STATUS, dtype=np.int64)  # one per call: estimate runs threads
        self._run(self.mod.play_deals, (seed, first, n, rules, kinds, params, status, out),
                  status, seed, first)

    def play_deals_fixed(self, seed: Any, first: Any, n: int, rules: np.ndarray,
                         kinds: np.ndarray, params: np.ndarray, fix_seat: int,
                         fix_cards: np.ndarray, out: np.ndarray) -> None:
        if self.mod is None:
            self.builtin.play_deals_fixed(seed, first, n, rules, kinds, params, fix_seat,
                                          fix_cards, out)
            return
        status = np.zeros(N_STATUS, dtype=np.int64)
        self._run(self.mod.play_deals_fixed, (seed, first, n, rules, kinds, params, fix_seat,
                                              fix_cards, status, out), status, seed, first)

    def play_deal(self, st: np.ndarray, u: np.ndarray, rules: np.ndarray, seed: Any, deal: Any,
                  kinds: np.ndarray, params: np.ndarray, buf: np.ndarray, fws: np.ndarray,
                  uws: np.ndarray) -> None:
        if self.mod is None:
            self.builtin.play_deal(st, u, rules, seed, deal, kinds, params, buf, fws, uws)
            return
        self._run(self.mod.play_deal, (st, u, rules, seed, deal, kinds, params, buf, fws, uws,
                                       self.m_st, self.m_u, self.m_r, self.m_p, self.pbuf,
                                       self.synced, self.status),
                  self.status, seed, deal)

    def decide(self, kind: int, params: np.ndarray, st: np.ndarray, u: np.ndarray,
               rules: np.ndarray, seat: int, buf: np.ndarray, fws: np.ndarray, uws: np.ndarray,
               seed: int = 0, deal: int = 0) -> int:
        """One decision of the seat to act (the step API); ``seed``/``deal`` name it in an
        error."""
        if self.mod is None or kind < N_BUILTIN:
            return int(self.builtin.decide(kind, params, st, u, rules, seat, buf, fws, uws))
        out = [0]

        def call() -> None:
            out[0] = int(self.mod.decide(kind, params, st, u, rules, seat, buf, fws, uws,
                                         self.m_st, self.m_u, self.m_r, self.m_p, self.pbuf,
                                         self.synced, self.status))

        self._run(call, (), self.status, seed, deal)
        return out[0]
