"""Where numba caches compiled kernels: a folder named after a hash of the kernel sources.

numba's on-disk cache checks only the file that defines a function, not the files of the
functions it calls: after editing ``strategies/greedy.py`` the cached deal loop would still
run the old greedy. Keying the cache folder by a hash of every source file of ``sim`` and
``strategies`` that defines kernels makes any change compile afresh (about 50 s) instead
of running stale code.
The folder is ``$SHUANGKOU_CACHE_DIR`` if set, else ``$NUMBA_CACHE_DIR``, else
``~/.cache/shuangkou``, plus ``/kernels-<hash>``.
"""

from __future__ import annotations

import hashlib
import os


def configure() -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for pkg in ("sim", "strategies"):
        folder = os.path.join(root, pkg)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    text = f.read()
                if b"@kernel" in text or b"njit" in text:  # only modules that compile code
                    h.update(name.encode() + b"\0" + text)
    h.update(b"pdep" if __import__("sim._cpu", fromlist=["USE_PDEP"]).USE_PDEP else b"")
    base = (os.environ.get("SHUANGKOU_CACHE_DIR") or os.environ.get("NUMBA_CACHE_DIR")
            or os.path.join(os.path.expanduser("~"), ".cache", "shuangkou"))
    path = os.path.join(base, "kernels-" + h.hexdigest()[:16])
    os.environ["NUMBA_CACHE_DIR"] = path
    try:  # numba may already be imported (e.g. by the user); point its config there too
        import sys

        if "numba" in sys.modules:
            sys.modules["numba"].config.CACHE_DIR = path
    except Exception:  # pragma: no cover - best effort
        pass
    return path


CACHE_DIR = configure()
