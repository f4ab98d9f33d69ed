"""Where numba caches compiled kernels: a folder named after a hash of the kernel sources.

numba's on-disk cache checks only the file that defines a function, not the files of the
functions it calls: after editing ``strategies/greedy.py`` the cached deal loop would still
run the old greedy. Keying the cache folder by a hash of every source a kernel can be built
from (``kernel_sources``: each module of ``sim`` and ``strategies``, subfolders included, that
compiles code, and every project module those import, whose constants numba freezes in) makes
any change compile afresh instead of running stale code. The deal loops generated per set of
strategy kinds (``sim.loops.plugins``) live inside that folder, named by a hash of their own text.
The folder is ``$SHUANGKOU_CACHE_DIR`` if set, else ``$NUMBA_CACHE_DIR``, else
``~/.cache/shuangkou``, plus ``/kernels-<hash>``. ``configure`` sets ``NUMBA_CACHE_DIR`` to
that folder, and worker processes inherit it: a ``NUMBA_CACHE_DIR`` that already ends in
``kernels-<hash>`` stands for its parent folder, so a worker finds the parent's kernels
instead of nesting ``kernels-<hash>/kernels-<hash>`` and compiling them all again.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

_KERNELS = re.compile(r"kernels-[0-9a-f]{16}")


_COMPILES = re.compile(rb"numba|njit|@kernel|sim\.core\.jit")  # a module that compiles code
_FROM = re.compile(rb"^[ \t]*from[ \t]+((?:sim|strategies)(?:\.\w+)*)[ \t]+import[ \t]+"
                   rb"(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(rb"^[ \t]*import[ \t]+((?:sim|strategies)(?:\.\w+)*)", re.M)


def kernel_sources(root: str) -> dict[str, bytes]:
    """Every source a cached kernel can be built from: each module of ``sim`` and
    ``strategies`` (subfolders too) that compiles code, and every project module it imports,
    at any depth (numba freezes their constants into the kernels). Paths relative to
    ``root``."""
    texts: dict[str, bytes] = {}
    for pkg in ("sim", "strategies"):
        for dirpath, dirnames, files in os.walk(os.path.join(root, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, "rb") as f:
                        texts[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()

    def files_of(module: str) -> list[str]:
        base = module.replace(".", "/")
        return [p for p in (base + ".py", base + "/__init__.py") if p in texts]

    todo = [p for p, t in texts.items() if _COMPILES.search(t)]
    used = set(todo)
    while todo:
        text = texts[todo.pop()]
        names = [m.group(1).decode() for m in _IMPORT.finditer(text)]
        for m in _FROM.finditer(text):
            module = m.group(1).decode()
            names.append(module)
            names += [f"{module}.{w}" for w in re.findall(r"\w+", m.group(2).decode())]
        for name in names:
            for p in files_of(name):
                if p not in used:
                    used.add(p)
                    todo.append(p)
    return {p: texts[p] for p in sorted(used)}


_CODEGEN_ENV = ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_ENABLE_AVX", "NUMBA_OPT",
                "NUMBA_BOUNDSCHECK", "NUMBA_DEBUGINFO")  # change the code numba emits
_VERSION = re.compile(rb'"version":\s*"([^"]+)"')
_USED_EVERY = 3600.0  # seconds: a folder's "last used" stamp (its mtime) is renewed this often


def _numba_version() -> str:
    """numba's version without importing numba (0.3 s): read from its ``_version.py``."""
    mod = sys.modules.get("numba")
    if mod is not None and isinstance(getattr(mod, "__version__", None), str):
        return str(mod.__version__)
    import importlib.util

    try:
        spec = importlib.util.find_spec("numba")
        origin = spec.origin if spec is not None else None
        if not origin:
            return "?"
        with open(os.path.join(os.path.dirname(origin), "_version.py"), "rb") as f:
            text = f.read()
    except (OSError, ImportError, ValueError):
        return "?"
    m = _VERSION.search(text)
    return m.group(1).decode("ascii", "replace") if m else hashlib.sha256(text).hexdigest()


def toolchain() -> list[str]:
    """What compiled code depends on besides the kernel sources: the numba, llvmlite and
    Python versions, the host CPU and its features as LLVM reports them (numba compiles for
    them), and the environment variables that change numba's code. Costs about 1 ms:
    llvmlite is imported already (``sim.core._cpu``) and numba is not imported."""
    import llvmlite
    import llvmlite.binding as llvm

    try:
        cpu = str(llvm.get_host_cpu_name())
        features = llvm.get_host_cpu_features().flatten()
    except Exception:  # noqa: BLE001 - llvmlite: "failed to get host cpu features"
        cpu, features = "?", "?"
    impl = sys.implementation
    return [f"numba={_numba_version()}", f"llvmlite={llvmlite.__version__}",
            f"python={impl.name}-{sys.version_info[0]}.{sys.version_info[1]}",
            f"cpu={cpu}", f"features={features}"] + [
        f"{k}={os.environ[k]}" for k in _CODEGEN_ENV if k in os.environ]


def cache_folder() -> str:
    """The kernel cache folder ``configure`` picks, with nothing set or touched: its base
    folder plus ``kernels-<hash>``, the hash of the kernel sources (``kernel_sources``),
    whether ``pdep`` is used (``sim.core._cpu``) and ``toolchain()``."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # sim/core/
    h = hashlib.sha256()
    for name, text in kernel_sources(root).items():
        h.update(name.encode() + b"\0" + text)
    h.update(b"pdep" if __import__("sim.core._cpu", fromlist=["USE_PDEP"]).USE_PDEP else b"")
    for item in toolchain():
        h.update(b"\0" + item.encode())
    numba_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if _KERNELS.fullmatch(os.path.basename(os.path.normpath(numba_dir or "."))):
        numba_dir = os.path.dirname(os.path.normpath(numba_dir))  # set by configure(): inherited
    base = (os.environ.get("SHUANGKOU_CACHE_DIR") or numba_dir
            or os.path.join(os.path.expanduser("~"), ".cache", "shuangkou"))
    return os.path.join(base, "kernels-" + h.hexdigest()[:16])


def configure() -> str:
    """Point numba's cache at ``cache_folder()`` (``NUMBA_CACHE_DIR``, inherited by worker
    processes) and renew the folder's "last used" stamp (its modification time, at most once
    an hour: one ``stat`` otherwise), which ``prune`` reads."""
    path = cache_folder()
    os.environ["NUMBA_CACHE_DIR"] = path
    try:  # numba may already be imported (e.g. by the user); point its config there too
        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = path
    except Exception:  # pragma: no cover - best effort
        pass
    try:
        if time.time() - os.stat(path).st_mtime > _USED_EVERY:
            os.utime(path)
    except OSError:  # not made yet (nothing compiled), or read-only: nothing to renew
        pass
    return path


CACHE_DIR = configure()

def tolerate_broken_cache_files() -> None:
    """Make numba treat a cache file it cannot write (a full disk, ``ulimit -f``) as one
    line on stderr, the kernel still running, and a cache file it cannot read (truncated by
    a full disk or a killed process, or otherwise garbled: ``UnpicklingError``,
    ``EOFError``...) as a cache miss: the
    file is removed and the kernel compiled again (and saved), instead of the error reaching
    the user. Called once numba is imported (``sim.core.jit``)."""
    from numba.core import caching

    cls: Any = caching.IndexDataCacheFile
    if getattr(cls, "_shuangkou_tolerant", False):
        return
    load_index, load_data = cls._load_index, cls._load_data

    def _load_index(self: Any) -> Any:
        try:
            return load_index(self)
        except OSError:
            raise
        except Exception:  # noqa: BLE001 - any garbled index: start it afresh
            _remove_quietly(self._index_path)
            return {}

    def _load_data(self: Any, name: str) -> Any:
        try:
            return load_data(self, name)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001 - numba's load() takes OSError for a miss
            _remove_quietly(self._data_path(name))
            raise OSError(f"unreadable kernel cache file {name}: compiling again") from e

    save = cls.save
    warned: list[bool] = []

    def _save(self: Any, key: Any, data: Any) -> None:
        # a full disk or `ulimit -f` while saving: the kernel is compiled and runs; only the
        # cache misses it (compiled again next time). One line, never the run's end.
        try:
            save(self, key, data)
        except OSError as e:
            if not warned:
                warned.append(True)
                where = os.path.dirname(self._index_path)
                print(f"shuangkou: could not save a compiled kernel to the kernel cache "
                      f"{where!r} ({e.strerror or e}): going on; the next run compiles it "
                      f"again", file=sys.stderr, flush=True)

    cls._load_index, cls._load_data, cls.save = _load_index, _load_data, _save
    cls._shuangkou_tolerant = True


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


TIMES_FILE = "compile-seconds.json"  # measured compile times, beside the kernels-<hash> folders
_TIMES_MAX = 1 << 20  # bytes read of it at most


def _times_path(path: str | None = None) -> str:
    return os.path.join(os.path.dirname(os.path.normpath(path or CACHE_DIR)), TIMES_FILE)


def measured_seconds(label: str, path: str | None = None) -> float | None:
    """The compile time last measured on this machine for ``label`` (a command and its
    players), or None. Read from a regular file only, of bounded size."""
    import json
    import stat

    p = _times_path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = os.read(fd, _TIMES_MAX)
        finally:
            os.close(fd)
        v = json.loads(data).get(label)
    except (OSError, ValueError, AttributeError):
        return None
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e6
    return float(v) if ok else None


def record_seconds(label: str, seconds: float, path: str | None = None) -> None:
    """Remember ``seconds`` as the compile time of ``label`` on this machine (best effort)."""
    import json

    p = _times_path(path)
    try:
        try:
            with open(p, encoding="utf-8") as f:
                times = json.loads(f.read(_TIMES_MAX))
            if not isinstance(times, dict):
                times = {}
        except (OSError, ValueError):
            times = {}
        times[label] = round(float(seconds), 1)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        tmp = f"{p}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(times, f, indent=1, sort_keys=True)
        os.replace(tmp, p)
    except OSError:
        pass


# what compiling each kernel took on the quiet 2-core AMD EPYC of docs/speed.md (shuangkou
# compile, empty cache, 2026-12-03; ismcts and oracle after pimc, whose sampler they share):
# said until this machine has measured its own
KERNEL_SECONDS = {
    "sim.loops.loop.run_deals": 12.0,
    "sim.loops.plugin_loop.play_deals": 14.0,
    "strategies.search.pimc_decide": 13.0,
    "strategies.search.ismcts_decide": 4.0,
    "strategies.search.oracle_decide": 1.0,
    "strategies.expert.expert_decide": 10.0,
    "strategies.learned.learned_decide": 9.0,
}


def kernel_of(data: Any) -> tuple[str, str]:
    """(what, key) of the kernel a ``numba:compile`` event compiles: a phrase naming the
    player or loop for the terminal, and the dotted name its measured time is kept by."""
    disp = data.get("dispatcher") if isinstance(data, dict) else None
    fn = getattr(disp, "py_func", None)
    if fn is None:
        return "kernels", "kernels"
    mod, name = fn.__module__, fn.__qualname__
    if mod.startswith("_shuangkou_plugin_entry"):  # a compiled plug-in's entry (bound copy)
        k = fn.__globals__.get("plugin")
        k = getattr(k, "py_func", k)
        who = f"{getattr(k, '__module__', '?')}.{getattr(k, '__qualname__', '?')}"
        return f"the compiled plug-in {who}", f"plugin {who}"
    if mod.startswith("_shuangkou_"):  # another bound template copy: by its template
        mod = mod[len("_shuangkou_"):].rsplit("_", 1)[0] + " (bound)"
    key = f"{mod}.{name}"
    from strategies.kinds import BUILTIN_NAMES

    for player in BUILTIN_NAMES:
        if name == f"{player}_decide" and mod.startswith("strategies."):
            return f"the {player} player's kernel {key}", key
    if name in ("run_deals", "play_deals", "play_deal", "run_deals_fixed", "play_deals_fixed"):
        return f"the deal loop {key}", key
    return key, key


def kernel_estimate(key: str, path: str | None = None) -> str:
    """How long compiling the kernel ``key`` should take (``kernel_of``)."""
    t = measured_seconds(f"kernel {key}", path)
    if t is not None:
        return f"measured {t:.0f} s last time on this machine"
    if key in KERNEL_SECONDS:
        return f"about {KERNEL_SECONDS[key]:.0f} s on 2 cores; not measured on this machine yet"
    return "not measured on this machine yet"


class _Ticker:
    """The line of a kernel compiling, kept up to date on a terminal (seconds so far)."""

    def __init__(self, stream: TextIO, text: str) -> None:
        import threading

        self.stream, self.text = stream, text
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="shuangkou-compile-ticker",
                                       daemon=True)
        self.t0 = time.perf_counter()
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            try:
                self.stream.write(f"\r{self.text} {time.perf_counter() - self.t0:.0f} s")
                self.stream.flush()
            except (OSError, ValueError):  # pragma: no cover - a closed terminal
                return

    def end(self, line: str) -> None:
        self.stop.set()
        self.thread.join(2.0)
        try:
            self.stream.write(f"\r\033[K{line}\n")
            self.stream.flush()
        except (OSError, ValueError):  # pragma: no cover
            pass


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Compiles:
    """Counts the seconds numba spends compiling (its ``numba:compile`` events, outermost
    only: a kernel's callees compile inside it) and says, for every kernel it compiles, which
    (the player or loop), for what (the innermost ``compiling`` block's label) and how long
    it should take (measured here before, else docs/speed.md's figure); on a terminal the line
    counts the seconds while it works and ends with the time it took. Every kernel's time is
    recorded for the next estimate. Nothing is printed with ``SHUANGKOU_COMPILE_NOTICE=0``."""

    def __init__(self) -> None:
        import threading

        self.local = threading.local()
        self.lock = threading.Lock()
        self.seconds = 0.0
        self.count = 0  # outermost compiles so far
        self.running = 0  # outermost compiles in progress (any thread)
        self.active: list[tuple[str, TextIO | None]] = []  # the open ``compiling`` blocks
        self.noticed = False  # a kernel compiled in this process (a line was printed)

    def on_start(self, data: Any = None) -> None:
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth != 0:
            return
        self.local.t0 = time.perf_counter()
        self.local.ticker = None
        with self.lock:
            self.count += 1
            self.running += 1
            label, stream = self.active[-1] if self.active else ("", None)
            self.noticed = True
        what, key = kernel_of(data)
        self.local.what = (what, key, stream)
        if _quiet():
            return
        out = stream or sys.stderr
        text = (f"compiling {what}" + (f" for {label}" if label else "")
                + f" ({kernel_estimate(key)})…")
        if is_tty(out):
            self.local.ticker = _Ticker(out, text)
            out.write(text)
            out.flush()
        else:
            print(text, file=out, flush=True)

    def on_end(self) -> None:
        depth = getattr(self.local, "depth", 1) - 1
        self.local.depth = depth
        if depth != 0:
            return
        took = time.perf_counter() - getattr(self.local, "t0", 0.0)
        with self.lock:
            self.seconds += took
            self.running -= 1
        what, key, stream = getattr(self.local, "what", ("kernels", "kernels", None))
        if key != "kernels":
            record_seconds(f"kernel {key}", took)
        ticker = getattr(self.local, "ticker", None)
        if ticker is not None:
            self.local.ticker = None
            ticker.end(f"compiled {what} in {took:.1f} s")


_WATCH: _Compiles | None = None


def compile_watch() -> _Compiles:
    global _WATCH
    if _WATCH is None:
        from numba.core import event

        w = _Compiles()

        class _Listener(event.Listener):
            def on_start(self, ev: Any) -> None:
                w.on_start(getattr(ev, "data", None))

            def on_end(self, ev: Any) -> None:
                w.on_end()

        event.register("numba:compile", _Listener())
        _WATCH = w
    return _WATCH


def compiles_running() -> bool:
    """Whether numba is compiling now, in any thread (time limits leave compiling out)."""
    return compile_watch().running > 0


NOTICE_ENV = "SHUANGKOU_COMPILE_NOTICE"  # "0": no compile notice nor time line (scripts)


def _quiet() -> bool:
    return os.environ.get(NOTICE_ENV, "").strip() == "0"


class compiling:  # noqa: N801 - used as a context manager
    """``with compiling(label):`` around code that may compile kernels (a cold cache): every
    kernel compiled inside is announced with ``label`` (a command and its players) and its
    estimate (``_Compiles``); at the end of the block, if anything compiled, one line says how
    long it all took (``done``) and the time is recorded for next time. Nothing is printed on
    a warm cache, nor with ``SHUANGKOU_COMPILE_NOTICE=0`` in the environment."""

    def __init__(self, label: str, stream: TextIO | None = None, done: bool = True,
                 path: str | None = None) -> None:
        self.label, self.stream, self.done, self.path = label, stream, done, path

    def __enter__(self) -> compiling:
        self.w = compile_watch()
        with self.w.lock:
            self.s0, self.n0 = self.w.seconds, self.w.count
            self.w.active.append((self.label, self.stream))
        return self

    def __exit__(self, et: Any, e: Any, tb: Any) -> None:
        with self.w.lock:
            self.w.active.remove((self.label, self.stream))
            took = self.w.seconds - self.s0
            compiled = self.w.count > self.n0
        self.seconds = took if compiled else 0.0
        if compiled and et is None:
            record_seconds(self.label, took, self.path)
            prune_after_compile()  # new kernels written: stale folders go (a size cap)
            if self.done and not _quiet():
                print(f"compiled in {took:.0f} s; later runs load it from "
                      f"{self.path or CACHE_DIR}", file=self.stream or sys.stderr, flush=True)


def kernels_cached(kernel: str = "loop.run_deals", path: str | None = None) -> bool:
    """Whether numba's cache holds ``kernel`` (``module.function``): one look for its index
    file (``<path>/<source folder>/<kernel>-<line>.pyXY.nbi``), no import, no compiling."""
    pattern = os.path.join(glob.escape(path or CACHE_DIR), "*", glob.escape(kernel) + "-*.nbi")
    return bool(glob.glob(pattern))


def compile_first(run: Callable[[], Any], kernel: str = "loop.run_deals",
                  label: str = "the engine", path: str | None = None,
                  stream: TextIO | None = None) -> bool:
    """On a cold cache (``kernel`` not compiled yet): call ``run`` (which compiles) inside
    ``compiling(label)``: one notice (once per process) and the measured time. Returns
    whether it did; on a warm cache ``run`` is not called and nothing is printed."""
    if kernels_cached(kernel, path):
        return False
    with compiling(label, stream, path=path):
        run()
    return True


# ---- pruning: stale kernels-<hash> folders (every edit, update or CPU makes a new one) ----

MAX_MB_ENV = "SHUANGKOU_CACHE_MAX_MB"  # the size cap of the kernels-<hash> folders, in MiB
MAX_MB = 1024  # default cap: the largest folder measured is ~90 MB (every player and the whole
# test suite; one tournament's ~2-20 MB), so a 1 GiB cap keeps at least ten of those
UNUSED_DAYS = 30  # a folder not used for this long is removed, whatever the size
KEEP_HOURS = 24  # a folder used this recently is kept even over the cap (another checkout or
# a running process may be using it); "used": its modification time, renewed by configure()


def _max_bytes() -> int:
    """The cap in bytes: ``$SHUANGKOU_CACHE_MAX_MB`` (a whole number of MiB; 0 keeps only the
    folders in use) or ``MAX_MB``."""
    try:
        mb = int(os.environ.get(MAX_MB_ENV, "").strip() or MAX_MB)
    except ValueError:  # not a whole number: the default
        mb = MAX_MB
    return max(mb, 0) << 20


def _folder_bytes(path: str) -> int:
    """The bytes of the files under ``path`` (links not followed; unreadable parts skipped)."""
    total, todo = 0, [path]
    while todo:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            todo.append(e.path)
                        else:
                            total += e.stat(follow_symlinks=False).st_size
                    except OSError:
                        pass
        except OSError:
            pass
    return total


def _remove_folder(path: str) -> bool:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    return not os.path.lexists(path)


def prune(current: str | None = None, max_bytes: int | None = None,
          now: float | None = None) -> list[str]:
    """Remove stale kernel cache folders beside ``current`` (default ``CACHE_DIR``): every
    ``kernels-<16 hex>`` folder not used for ``UNUSED_DAYS``, then, while those folders
    together hold more than ``max_bytes`` (default ``$SHUANGKOU_CACHE_MAX_MB`` MiB, else
    ``MAX_MB``), the least recently used first, never ``current`` nor one used in the last
    ``KEEP_HOURS``. Nothing else is touched (links, files, other names). Best effort: never
    raises. Returns the folders removed. Cheap when ``current`` is alone (one directory
    listing); else it sums the folders' file sizes (~60 ms for 560 MB in 13,700 files)."""
    try:
        current = os.path.normpath(current or CACHE_DIR)
        base, mine = os.path.split(current)
        now = time.time() if now is None else now
        cap = _max_bytes() if max_bytes is None else max_bytes
        others: list[tuple[float, str]] = []
        with os.scandir(base or ".") as it:
            for e in it:
                if e.name != mine and _KERNELS.fullmatch(e.name):
                    try:
                        if e.is_dir(follow_symlinks=False):
                            others.append((e.stat(follow_symlinks=False).st_mtime, e.path))
                    except OSError:
                        pass
        removed: list[str] = []
        kept: list[tuple[float, str]] = []
        for mtime, path in sorted(others):  # least recently used first
            if now - mtime > UNUSED_DAYS * 86400.0:
                if _remove_folder(path):
                    removed.append(path)
            else:
                kept.append((mtime, path))
        if not kept:
            return removed
        sizes = {path: _folder_bytes(path) for _, path in kept}
        total = _folder_bytes(current) + sum(sizes.values())
        for mtime, path in kept:
            if total <= cap or now - mtime < KEEP_HOURS * 3600.0:
                break
            if _remove_folder(path):
                removed.append(path)
                total -= sizes[path]
        return removed
    except Exception:  # noqa: BLE001 - best effort: a cache's upkeep never ends a run
        return []


def prune_after_compile() -> list[str]:
    """``prune()`` for the current kernel cache folder: call it after something compiled (a
    new folder grows, and a compile takes seconds, so the sizes' sum costs little)."""
    return prune()
