"""The kernel cache's upkeep (sim.core._cache): what its folder's name covers, pruning stale
folders, and processes compiling or binding into one cache at the same time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import llvmlite
import llvmlite.binding as llvm
import pytest

import sim.core._cache as c

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAY = 86400.0


# ---- the key: everything compiled code depends on is in the folder's name ----

def test_folder_is_the_configured_ones_kind():
    # (not compared whole: the sources of a shared tree may be edited while the tests run)
    path = c.cache_folder()
    assert os.path.dirname(path) == os.path.dirname(c.CACHE_DIR)
    assert c._KERNELS.fullmatch(os.path.basename(path))


def test_toolchain_names_versions_python_and_cpu():
    import numba

    items = c.toolchain()
    assert f"numba={numba.__version__}" in items
    assert f"llvmlite={llvmlite.__version__}" in items
    impl = f"python={sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
    assert impl in items
    assert f"cpu={llvm.get_host_cpu_name()}" in items
    assert f"features={llvm.get_host_cpu_features().flatten()}" in items


@pytest.mark.parametrize("change", ["numba", "llvmlite", "cpu", "features", "env"])
def test_folder_changes_with_the_toolchain(monkeypatch, change):
    monkeypatch.setattr(c, "kernel_sources", lambda root: {"sim/x.py": b"numba"})
    before = c.cache_folder()
    assert c.cache_folder() == before  # nothing changed: the same folder

    class Features:
        def flatten(self):
            return "+nothing"

    if change == "numba":
        monkeypatch.setattr(c, "_numba_version", lambda: "0.0.0-other")
    elif change == "llvmlite":
        monkeypatch.setattr(llvmlite, "__version__", "0.0.0-other")
    elif change == "cpu":
        monkeypatch.setattr(llvm, "get_host_cpu_name", lambda: "other-cpu")
    elif change == "features":
        monkeypatch.setattr(llvm, "get_host_cpu_features", Features)
    else:
        monkeypatch.setenv("NUMBA_OPT", "0")
    after = c.cache_folder()
    assert after != before
    assert os.path.dirname(after) == os.path.dirname(before)
    assert c._KERNELS.fullmatch(os.path.basename(after))


def test_numba_version_without_importing_numba():
    code = ("import sys, sim.core._cache as c; v = c._numba_version(); "
            "print('numba' in sys.modules); import numba; print(v == numba.__version__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["False", "True"]


def test_plugin_edit_names_another_entry_copy(tmp_path, monkeypatch):
    """A compiled plug-in's entry copy (sim.core.bind) is named by a hash of the plug-in's
    source files: an edit that keeps the file's size and modification time (numba's own
    check) still gives another copy, compiled afresh."""
    from sim.loops import plugins

    mod = tmp_path / "hygiene_bot.py"
    src = ("import numba\nfrom strategies.base import Strategy\n\n"
           "@numba.njit(cache=True)\ndef k(st, u, rules, seat, params, buf):\n"
           "    return VALUE\n\n"
           "class Bot(Strategy):\n    name = 'hygiene'\n    kernel = k\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)

    def load(value):
        mod.write_text(src.replace("VALUE", value))
        os.utime(mod, (1e9, 1e9))
        sys.modules.pop("hygiene_bot", None)
        import hygiene_bot

        digest = plugins.plugin_digest([hygiene_bot.Bot])
        entry = plugins._entry_module(hygiene_bot.Bot, True, digest)  # (issue 33's entries)
        return digest, entry.__file__

    try:
        d1, f1 = load("-1")
        d2, f2 = load("-2")  # same size, same modification time
    finally:
        sys.modules.pop("hygiene_bot", None)
    assert d1 != d2
    assert f1 != f2
    assert os.path.dirname(f1) == os.path.join(c.CACHE_DIR, "bound")


def test_configure_renews_the_used_stamp(tmp_path, monkeypatch):
    folder = tmp_path / "kernels-0123456789abcdef"
    folder.mkdir()
    os.utime(folder, (time.time() - 10 * DAY,) * 2)
    monkeypatch.setattr(c, "cache_folder", lambda: str(folder))
    monkeypatch.setenv("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", c.CACHE_DIR))
    numba = sys.modules.get("numba")
    if numba is not None:
        monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    assert c.configure() == str(folder)
    assert time.time() - folder.stat().st_mtime < 60


# ---- pruning ----

def _folder(base, name, mb, age_days, now):
    p = base / name
    p.mkdir()
    (p / "sub").mkdir()
    (p / "sub" / "f.nbc").write_bytes(b"x" * int(mb * (1 << 20)))
    os.utime(p, (now - age_days * DAY,) * 2)
    return p


def _hex(i):
    return f"{i:016x}"


def test_prune_removes_unused_folders_whatever_the_size(tmp_path):
    now = time.time()
    cur = _folder(tmp_path, "kernels-" + _hex(1), 0.01, 90, now)  # current: never removed
    old = _folder(tmp_path, "kernels-" + _hex(2), 0.01, c.UNUSED_DAYS + 1, now)
    recent = _folder(tmp_path, "kernels-" + _hex(3), 0.01, c.UNUSED_DAYS - 1, now)
    removed = c.prune(str(cur), max_bytes=1 << 30, now=now)
    assert removed == [str(old)]
    assert cur.exists() and recent.exists() and not old.exists()


def test_prune_to_the_cap_least_recently_used_first(tmp_path):
    now = time.time()
    cur = _folder(tmp_path, "kernels-" + _hex(10), 1, 20, now)
    a = _folder(tmp_path, "kernels-" + _hex(11), 1, 5, now)
    b = _folder(tmp_path, "kernels-" + _hex(12), 1, 4, now)
    d = _folder(tmp_path, "kernels-" + _hex(13), 1, 3, now)
    fresh = _folder(tmp_path, "kernels-" + _hex(14), 1, 0.1, now)  # in use: kept over the cap
    removed = c.prune(str(cur), max_bytes=int(2.5 * (1 << 20)), now=now)
    assert removed == [str(a), str(b), str(d)]
    assert cur.exists() and fresh.exists()
    # under the cap: nothing more
    assert c.prune(str(cur), max_bytes=int(2.5 * (1 << 20)), now=now) == []


def test_prune_touches_nothing_else(tmp_path):
    now = time.time()
    cur = _folder(tmp_path, "kernels-" + _hex(20), 0.01, 0, now)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    others = [_folder(tmp_path, name, 0.5, 400, now) for name in
              ("kernels-0123", "kernels-" + _hex(21) + "0", "Kernels-" + _hex(22),
               "kernels-ABCDEF0123456789", "other", "kernels-" + _hex(24) + ".tmp")]
    link = tmp_path / ("kernels-" + _hex(25))
    link.symlink_to(outside, target_is_directory=True)
    as_file = tmp_path / ("kernels-" + _hex(26))
    as_file.write_bytes(b"y" * 1000)
    os.utime(as_file, (now - 400 * DAY,) * 2)
    (tmp_path / c.TIMES_FILE).write_text("{}")
    assert c.prune(str(cur), max_bytes=0, now=now) == []
    assert all(p.exists() for p in others)
    assert link.is_symlink() and (outside / "keep.txt").read_text() == "mine"
    assert as_file.exists() and (tmp_path / c.TIMES_FILE).exists() and cur.exists()


def test_prune_alone_lists_one_folder_and_sizes_nothing(tmp_path, monkeypatch):
    now = time.time()
    cur = _folder(tmp_path, "kernels-" + _hex(30), 3, 0, now)

    def no_sizes(path):
        raise AssertionError("sized a folder with nothing to prune")

    monkeypatch.setattr(c, "_folder_bytes", no_sizes)
    assert c.prune(str(cur), max_bytes=0, now=now) == []


def test_prune_never_raises(tmp_path, monkeypatch):
    assert c.prune(str(tmp_path / "missing" / ("kernels-" + _hex(40)))) == []

    def broken(path):
        raise OSError("denied")

    now = time.time()
    cur = _folder(tmp_path, "kernels-" + _hex(41), 0.01, 0, now)
    _folder(tmp_path, "kernels-" + _hex(42), 0.01, 5, now)
    monkeypatch.setattr(os, "scandir", broken)
    assert c.prune(str(cur), max_bytes=0, now=now) == []


def test_prune_cap_from_the_environment(monkeypatch):
    monkeypatch.setenv(c.MAX_MB_ENV, "5")
    assert c._max_bytes() == 5 << 20
    monkeypatch.setenv(c.MAX_MB_ENV, "0")
    assert c._max_bytes() == 0
    for bad in ("lots", "", "1.5", "nan"):
        monkeypatch.setenv(c.MAX_MB_ENV, bad)
        assert c._max_bytes() == c.MAX_MB << 20
    monkeypatch.delenv(c.MAX_MB_ENV)
    assert c._max_bytes() == c.MAX_MB << 20


# ---- two processes at once ----

_KERNELS_MODULE = """
from sim.core.jit import kernel

{kernels}

FUNCS = [{names}]
"""

_KERNEL = """
@kernel
def k{i}(n):
    s = 0
    for j in range(n):
        s += j * {i} + (j ^ {i})
    return s
"""

_TEMPLATE = '''"""{padding}"""
from sim.core.bind import bindable

VALUE = 0
bindable(globals(), "VALUE")


def get():
    return VALUE


TAIL = "end"  # the file's last line: a module read half-written lacks it
'''

_WORKER = """
import json, os, sys, time
import sim.core._cache as c
import sim.core.jit  # noqa: F401
from sim.core.bind import bound_module
import racekernels

from numba.core import event


class Count(event.Listener):  # every compile numba starts in this process
    n = 0

    def on_start(self, ev):
        Count.n += 1

    def on_end(self, ev):
        pass


event.register("numba:compile", Count())
ready, go, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.002)
bound = []
for i in range(copies):
    m = bound_module("racepkg.tpl", {"VALUE": i})
    bound.append([m.get(), m.TAIL])
results = [f(1000) for f in racekernels.FUNCS]
print(json.dumps({"compiles": Count.n, "results": results, "bound": bound,
                  "cache": c.CACHE_DIR}))
"""

N_KERNELS, N_COPIES, ROUNDS = 4, 12, 3


def _expected(i, n=1000):
    return sum(j * i + (j ^ i) for j in range(n))


def _start(tmp_path, cache, tag, copies):
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    env["SHUANGKOU_CACHE_DIR"] = str(cache)
    env["SHUANGKOU_COMPILE_NOTICE"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), ROOT])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    ready = tmp_path / f"ready-{tag}"
    p = subprocess.Popen([sys.executable, str(tmp_path / "worker.py"), str(ready),
                          str(cache / "go"), str(copies)], cwd=str(tmp_path), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, ready


def _result(p):
    out, err = p.communicate(timeout=240)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def test_two_processes_compile_and_bind_into_one_empty_cache(tmp_path):
    """Both processes of a pair start compiling the same kernels and binding the same
    template copies (1 MB each, its last line checked) into an empty cache at the same
    instant; each gets right answers, and a third process afterwards loads every kernel
    without compiling. Three rounds, each on a fresh cache."""
    names = [f"k{i}" for i in range(1, N_KERNELS + 1)]
    (tmp_path / "racekernels.py").write_text(_KERNELS_MODULE.format(
        kernels="\n".join(_KERNEL.format(i=i) for i in range(1, N_KERNELS + 1)),
        names=", ".join(names)))
    (tmp_path / "racepkg").mkdir()
    (tmp_path / "racepkg" / "__init__.py").write_text("")
    padding = "\n".join("padding " * 12 for _ in range(11000))  # ~1 MB
    (tmp_path / "racepkg" / "tpl.py").write_text(_TEMPLATE.format(padding=padding))
    (tmp_path / "worker.py").write_text(textwrap.dedent(_WORKER))
    want = [_expected(i) for i in range(1, N_KERNELS + 1)]
    for r in range(ROUNDS):
        cache = tmp_path / f"cache{r}"
        cache.mkdir()
        pair = [_start(tmp_path, cache, f"{r}-{k}", N_COPIES) for k in range(2)]
        deadline = time.time() + 200
        while not all(ready.exists() for _, ready in pair):  # both imported: start together
            for p, _ in pair:
                if p.poll() is not None:
                    _result(p)  # it ended before starting: says why
            assert time.time() < deadline
            time.sleep(0.01)
        (cache / "go").write_text("")
        first = [_result(p) for p, _ in pair]
        folders = {f["cache"] for f in first}
        assert len(folders) == 1 and os.path.dirname(folders.pop()) == str(cache)
        for f in first:
            assert f["results"] == want
            assert f["bound"] == [[i, "end"] for i in range(N_COPIES)]
        # each kernel compiled by one of them at least (the other may load what it saved)
        assert sum(f["compiles"] for f in first) >= N_KERNELS
        third, _ = _start(tmp_path, cache, f"{r}-third", N_COPIES)
        again = _result(third)
        assert again["results"] == want
        assert again["bound"] == [[i, "end"] for i in range(N_COPIES)]
        assert again["compiles"] == 0
        bound = os.path.join(first[0]["cache"], "bound")
        assert sorted(os.listdir(bound)) == sorted(
            f for f in os.listdir(bound) if f.endswith(".py"))  # no temporary files left
        assert len(os.listdir(bound)) == N_COPIES
