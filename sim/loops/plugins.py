"""Compiled plug-ins: a user's numba kernel inside the compiled deal loop (docs/strategies.md).

A strategy class with a ``kernel`` attribute (a numba-compiled function
``kernel(st, u, rules, seat, params, buf) -> code``) runs compiled. Its kernel is compiled
once, alone (``plugin_address``): a copy of the template ``strategies.plugin_entry`` with the
kernel bound (``sim.core.bind``), named by a hash of its source files (the kernel's module and
the modules of the numba functions it calls) and its name, inside a folder keyed by the
engine's sources, compiled for one signature and cached by numba. Workers that load the same
kernel find numba's cache; an edited plug-in gets a new copy, compiled afresh (never stale
code). The loops (``sim.loops.plugin_loop``), compiled once, call it through its address
(``sim.core.calls``), so any set of plug-ins and built-ins plays without compiling again.

The loops hand a plug-in a masked copy of the state (``sim.view.mask_into``: what its seat may
know, R9), check the code it returns with ``sim.view.is_legal`` and stop at the first illegal
one; the Python wrappers here (``Loops``) turn that, or an exception raised inside a kernel,
into one ``StrategyError`` naming the strategy, seat, seed and deal.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba.core.errors import NumbaError

from sim.core import state as S
from sim.core._cache import CACHE_DIR, compiles_running
from sim.core.bind import bound_module
from sim.core.calls import native_address
from sim.errors import ConfigError, StrategyError
from sim.loops import loop, plugin_loop
from sim.loops.helper import HelperThread
from sim.loops.plugin_loop import (  # the status array of the plug-in loops
    N_STATUS,
    ST_CALLS,
    ST_CODE,
    ST_DEAL,
    ST_ERROR,
    ST_SEAT,
)
from strategies.compiled import decide, entries, player_address
from strategies.kinds import (  # noqa: F401
    KIND_GREEDY,
    KIND_RANDOM,
    MAX_PLUGINS,
    N_BUILTIN,
    PLUGIN_SCRATCH,
)
from strategies.plugin import (  # noqa: F401  (re-exported)
    choose_with_kernel,
    compile_error,
    compiled_params,
    fresh_kernel,
    kernel_error,
    plugin_kernel,
)
from strategies.plugin_entry import PLUGIN_SIG

CHECK_POLL = 0.05  # seconds between looks at a child playing the check deal
WATCH_POLL = 0.1  # seconds between looks at the progress of a watched call


def kernel_of(cls: type, inline: bool = True) -> Any:
    """The kernel of plug-in class ``cls``, compiled anew for the loops: numba's own cache of
    the kernel knows its file only by modification time and size, the loops' cache by a hash
    of the source (``plugin_digest``). ``inline``: inlined into the loops (as the built-ins'
    hot paths are into sim.loops.loop's), else a function of its own that may allocate,
    with bounds checks (``strategies.plugin.fresh_kernel``)."""
    return fresh_kernel(plugin_kernel(cls), inline=inline)


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


def plugin_digest(classes: Sequence[type]) -> str:
    """A hash of the plug-in classes' names and of the source files of their kernels and of
    the numba functions those call: what the bound loops depend on beyond their bindings."""
    h = hashlib.sha256()
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


_MODULES: dict[Any, Any] = {}


def builtin_loops(**hooks: Any) -> Any:
    """``sim.loops.loop``'s deal loops, compiled once for every set of players (their kernels
    are called through ``strategies.compiled.entries``); ``hooks``: its bindable names
    (``forced_show``), one bound copy per set of hooks, cached apart (``sim.core.bind``)."""
    if not hooks:
        return loop
    key = tuple(sorted(hooks.items()))
    if key not in _MODULES:
        _MODULES[key] = bound_module("sim.loops.loop", hooks)
    return _MODULES[key]


ALLOCATES = ".standalone"  # marker beside a plug-in entry whose kernel must not inline


def _entry_module(cls: type, inline: bool, digest: str) -> Any:
    """The copy of ``strategies.plugin_entry`` with ``cls``'s kernel bound: inlined into the
    entry (no runtime, as the built-ins), or a function of its own that may allocate;
    ``digest``: ``plugin_digest([cls])``."""
    key = (cls, digest, inline)
    if key not in _MODULES:
        _MODULES[key] = bound_module("strategies.plugin_entry",
                                     {"plugin": kernel_of(cls, inline)},
                                     salt=f"{digest}:{inline}")
    return _MODULES[key]


def plugin_address(cls: type, digest: str | None = None) -> int:
    """The address of plug-in class ``cls``'s entry (``strategies.plugin_entry``), compiled
    once per edit of its sources and then loaded from the kernel cache: its kernel inlined,
    unless it does not compile so (it allocates: numba's runtime is off in the loops), then
    as a function of its own with bounds checks (a marker file remembers which). A kernel
    that does not compile either way is one ``ConfigError``. ``digest``:
    ``plugin_digest([cls])``, when the caller has it."""
    digest = digest or plugin_digest([cls])
    marker = os.path.join(CACHE_DIR, "plugins", f"{digest}{ALLOCATES}")
    if not os.path.exists(marker):
        try:
            return native_address(_entry_module(cls, True, digest).entry, PLUGIN_SIG)
        except NumbaError:  # it allocates (or fails anyway: the standalone one says why)
            try:
                os.makedirs(os.path.dirname(marker), exist_ok=True)
                with open(marker, "w") as f:
                    f.write("this plug-in's kernel compiles only as a function of its own\n")
            except OSError:
                pass
    try:
        return native_address(_entry_module(cls, False, digest).entry, PLUGIN_SIG)
    except NumbaError as e:
        raise compile_error(getattr(cls, "name", cls.__name__), e, [plugin_kernel(cls)]) from e


_CHECKED: set[Any] = set()  # sets of plug-ins (digests) whose first deal a child has played


def _interruptible() -> bool:
    """Whether Ctrl-C can reach this thread: the main thread, with SIGINT not ignored (a
    tournament's forked workers ignore it: their run handles it)."""
    import signal
    import threading

    return (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)


def _new_helper() -> HelperThread:
    """A helper thread for compiled calls (they release the GIL: the caller stays free to
    watch the time and take signals)."""
    return HelperThread("shuangkou-kernel")


_HELPERS: Any = None


def _helper() -> HelperThread:
    """The calling thread's helper (one per thread, kept between calls)."""
    global _HELPERS
    import threading

    if _HELPERS is None:
        _HELPERS = threading.local()
    h = getattr(_HELPERS, "helper", None)
    if h is None:
        h = _HELPERS.helper = _new_helper()
    return h


def _abandon(h: HelperThread) -> None:
    """Leave ``h`` to its call (it never returns, or nobody waits for it any more): it ends
    when the call returns."""
    h.abandon()
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
        if len(classes) > MAX_PLUGINS:  # pragma: no cover - a deal has four seats
            raise ConfigError(f"at most {MAX_PLUGINS} plug-in kernels in one run")
        self.classes = classes
        kind = {c: N_BUILTIN + i for i, c in enumerate(classes)}
        self.kinds = np.array([kind[type(s)] if type(s) in kind
                               else (s.compiled_kind if s.runs_compiled() else -1)
                               for s in seats], dtype=np.int64)
        # the players' kernels: each compiled once on this machine, then loaded from the cache
        self.check_key = tuple(plugin_digest([c]) for c in classes)  # their sources, hashed once
        self.entries = entries(self.kinds, {N_BUILTIN + i: plugin_address(c, d) for i, (c, d)
                                            in enumerate(zip(classes, self.check_key))})
        self.builtin = builtin_loops()
        self.mod: Any = None
        if classes:
            self.mod = plugin_loop
        # what a first call compiles (the tournament's warm-up): the loops, never the players
        self.key = (self.builtin, self.mod)
        self.status = np.zeros(N_STATUS, dtype=np.int64)
        self.timeout: float | None = None  # seconds a plug-in kernel may take per decision
        if self.mod is not None:
            self.m_st = np.zeros((4, S.ST_SIZE), dtype=np.int64)
            self.m_st[:, S.S_DECK:] = -1  # the deck and fixed cards: never shown
            self.m_u = np.zeros((4, S.U_SIZE), dtype=np.uint64)
            # the plug-in's copies of the rules and of its parameter row: ``_copies`` widens
            # them to the arrays of each call (a learned seat's row holds its weights: far
            # more than 64 values, and the kernel copies the whole row)
            self.m_r = np.zeros((4, 64), dtype=np.int64)
            self.m_p = np.zeros((4, 64), dtype=np.float64)
            self.pbuf = np.zeros((4, PLUGIN_SCRATCH), dtype=np.int64)
            self.synced = np.zeros(4, dtype=np.int64)

    def table(self, kinds: np.ndarray) -> np.ndarray:
        """``entries`` with an address for every built-in kind of ``kinds`` (a caller may
        seat kinds beyond the run's own: a scripted seat, a swing deal's players)."""
        for k in kinds:
            k = int(k)
            if 1 < k < N_BUILTIN and self.entries[k] == 0:
                self.entries[k] = player_address(k)
        return self.entries

    def kernel_name(self) -> str:
        """The name numba's cache knows these loops' deal loop by (``run_deals`` of the
        built-in loops, ``play_deals`` of the plug-in loops; ``sim._cache.kernels_cached``):
        whether they are compiled yet."""
        mod, fn = (self.mod, "play_deals") if self.mod is not None else (self.builtin,
                                                                        "run_deals")
        return os.path.splitext(os.path.basename(mod.__file__))[0] + "." + fn

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
            if self.mod is not None and self.check_key not in _CHECKED:
                self._check(fn, args, status, seed, first)
            if self.mod is not None and (self.timeout is not None or _interruptible()):
                self._watched(fn, args, status, seed, first)
            else:
                fn(*args)
        except NumbaError as e:  # pragma: no cover - the loops compile; a kernel did not
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
            _CHECKED.add(self.check_key)
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
        _CHECKED.add(self.check_key)

    def _watched(self, fn: Any, args: tuple, status: np.ndarray, seed: Any,
                 first: Any) -> None:
        """``fn(*args)`` on a helper thread while this one waits: interruptible (Ctrl-C,
        SIGTERM through a handler), and, under ``timeout``, stopped waiting for once no
        decision has started for ``timeout`` seconds while a plug-in seat decides."""
        helper = _helper()
        helper.submit(fn, args)
        limit = self.timeout
        last, since = -1, time.perf_counter()
        plugin_seats = {i for i, s in enumerate(self.seats) if type(s) in self.classes}
        try:
            while not helper.wait(WATCH_POLL if limit else 0.5):
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
        helper.result()

    # --- the loops (same arguments as sim.loops.loop's) ----------------------------------------
    def play_deals(self, seed: Any, first: Any, n: int, rules: np.ndarray, kinds: np.ndarray,
                   params: np.ndarray, out: np.ndarray) -> None:
        """Rows ``0 … k-1`` of ``out`` are final even when deal ``first + k`` fails."""
        entries = self.table(kinds)
        if self.mod is None:
            self.builtin.play_deals(seed, first, n, rules, kinds, params, out, entries)
            return
        status = np.zeros(N_STATUS, dtype=np.int64)  # one per call: estimate runs threads
        self._run(self.mod.play_deals, (seed, first, n, rules, kinds, entries, params, status,
                                        out), status, seed, first)

    def play_deals_fixed(self, seed: Any, first: Any, n: int, rules: np.ndarray,
                         kinds: np.ndarray, params: np.ndarray, fix_seat: int,
                         fix_cards: np.ndarray, out: np.ndarray) -> None:
        entries = self.table(kinds)
        if self.mod is None:
            self.builtin.play_deals_fixed(seed, first, n, rules, kinds, params, fix_seat,
                                          fix_cards, out, entries)
            return
        status = np.zeros(N_STATUS, dtype=np.int64)
        self._run(self.mod.play_deals_fixed, (seed, first, n, rules, kinds, entries, params,
                                              fix_seat, fix_cards, status, out),
                  status, seed, first)

    def _copies(self, rules: np.ndarray, params: np.ndarray) -> None:
        """Rows of ``m_r``/``m_p`` at least as wide as ``rules`` and ``params``' rows: the
        compiled ``_plugin`` copies every value of both into its seat's row without a bounds
        check, so a narrower row is a write past the end of the buffer (the heap corruption
        of a compiled plug-in beside ``learned``, whose row carries its network's weights)."""
        if self.m_r.shape[1] < rules.shape[0]:
            self.m_r = np.zeros((4, rules.shape[0]), dtype=np.int64)
        if self.m_p.shape[1] < params.shape[1]:
            self.m_p = np.zeros((4, params.shape[1]), dtype=np.float64)

    def play_deal(self, st: np.ndarray, u: np.ndarray, rules: np.ndarray, seed: Any, deal: Any,
                  kinds: np.ndarray, params: np.ndarray, buf: np.ndarray, fws: np.ndarray,
                  uws: np.ndarray) -> None:
        entries = self.table(kinds)
        if self.mod is None:  # the tournament's own compiled loop, for one deal
            self.builtin.play_deal(st, u, rules, seed, deal, kinds, params, buf, fws, uws,
                                   entries)
            return
        self._copies(rules, params)
        self._run(self.mod.play_deal, (st, u, rules, seed, deal, kinds, entries, params, buf,
                                       fws, uws, self.m_st, self.m_u, self.m_r, self.m_p,
                                       self.pbuf, self.synced, self.status),
                  self.status, seed, deal)

    def decide(self, kind: int, params: np.ndarray, st: np.ndarray, u: np.ndarray,
               rules: np.ndarray, seat: int, buf: np.ndarray, fws: np.ndarray, uws: np.ndarray,
               seed: int = 0, deal: int = 0) -> int:
        """One decision of the seat to act (the step API); ``seed``/``deal`` name it in an
        error."""
        entries = self.table([kind])
        if self.mod is None or kind < N_BUILTIN:
            return int(decide(kind, entries, params, st, u, rules, seat, buf, fws, uws))
        out = [0]
        self._copies(rules, params)

        def call() -> None:
            out[0] = int(self.mod.decide(kind, entries, params, st, u, rules, seat, buf, fws,
                                         uws, self.m_st, self.m_u, self.m_r, self.m_p,
                                         self.pbuf, self.synced, self.status))

        self._run(call, (), self.status, seed, deal)
        return out[0]
