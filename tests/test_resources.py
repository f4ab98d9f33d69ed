"""Resources and start-up: the kernel cache folder seen by workers, bounded waits on a dask
scheduler, the --jobs cap, workers that outlive a killed parent, lazy chunk plans, streamed
``play`` summaries and the first-compile notice."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(**kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SHUANGKOU_CACHE_DIR", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: v for k, v in kw.items() if v is not None})
    return env


def _py(code, env, timeout=60):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return r.stdout


# --- item 14: one cache folder for the parent and its workers -------------------------------
def test_cache_folder_is_stable_under_inherited_numba_cache_dir(tmp_path):
    """configure() sets NUMBA_CACHE_DIR; a process that inherits it (a loky worker) must get
    the same folder, not kernels-H/kernels-H (which compiled everything again)."""
    code = "import sim._cache as c; print(c.CACHE_DIR); print(c.configure())"
    first = _py(code, _env(NUMBA_CACHE_DIR=str(tmp_path))).split()
    assert first[0] == first[1]  # configure() again in the same process: same folder
    assert os.path.dirname(first[0]) == str(tmp_path)
    inherited = _py(code, _env(NUMBA_CACHE_DIR=first[0])).split()
    assert inherited == first
    # an explicit SHUANGKOU_CACHE_DIR still wins over an inherited NUMBA_CACHE_DIR
    own = _py(code, _env(NUMBA_CACHE_DIR=first[0], SHUANGKOU_CACHE_DIR=str(tmp_path / "x")))
    assert os.path.dirname(own.split()[0]) == str(tmp_path / "x")


def test_loky_workers_use_the_parents_cache_folder(tmp_path):
    code = """
        import sim._cache as c
        from joblib import Parallel, delayed

        def where(_):
            import sim._cache
            return sim._cache.CACHE_DIR

        print(c.CACHE_DIR)
        print(*set(Parallel(n_jobs=2, backend="loky")(delayed(where)(i) for i in range(4))))
        """
    parent, *workers = _py(code, _env(NUMBA_CACHE_DIR=str(tmp_path))).split()
    assert workers == [parent]
