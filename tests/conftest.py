"""Shared fixtures. The numba kernels compile on first use (then load from the cache).

Tests marked ``slow`` (the full 10,000-deal differential) run only with ``--runslow`` or with
``SHUANGKOU_FULL=1`` in the environment (``.ci/run`` sets it, so CI runs everything); the quick
loop runs a ~1,000-deal slice of the same comparison instead.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

TEST_CACHE_ENV = "SHUANGKOU_TEST_CACHE_DIR"


def pick_test_cache() -> str:
    """The kernel cache the tests use, never the user's (``~/.cache/shuangkou``): the folder
    named by ``$SHUANGKOU_TEST_CACHE_DIR`` (CI points it wherever it keeps caches), else
    ``shuangkou-test-cache-<uid>`` in the system's temporary folder, which outlives the run so
    that the next run loads the kernels instead of compiling them. numba loads pickled code
    from there: a shared folder that is not ours alone (another user made it, or others may
    write into it) is not used, and the run gets a fresh private folder instead (cold)."""
    chosen = os.environ.get(TEST_CACHE_ENV)
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        return os.path.abspath(chosen)
    path = os.path.join(tempfile.gettempdir(), f"shuangkou-test-cache-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022:
            return path
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="shuangkou-test-cache-")


# before anything imports sim (sim.core._cache picks the folder at import) or numba: the tests,
# and every process they start (which inherits the environment), compile into the test cache.
# An inherited NUMBA_CACHE_DIR (the user's) goes too: configure() would fall back to it.
TEST_CACHE = pick_test_cache()
os.environ["SHUANGKOU_CACHE_DIR"] = TEST_CACHE
os.environ.pop("NUMBA_CACHE_DIR", None)
if "sim.core._cache" in sys.modules:  # pragma: no cover - imported by a plug-in of pytest
    sys.modules["sim.core._cache"].CACHE_DIR = sys.modules["sim.core._cache"].configure()

FULL_ENV = "SHUANGKOU_FULL"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help=f"run the tests marked slow too (or set {FULL_ENV}=1)")


def full_run(config: pytest.Config) -> bool:
    """True when the slow tests run: ``--runslow`` or ``SHUANGKOU_FULL`` set to 1/true/yes."""
    env = os.environ.get(FULL_ENV, "").strip().lower()
    return bool(config.getoption("--runslow")) or env in ("1", "true", "yes")


def pytest_configure(config: pytest.Config) -> None:
    config.shuangkou_full = full_run(config)  # type: ignore[attr-defined]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # what this session collected, for tests/test_readme.py's check of the README's test count
    config.shuangkou_collected = (  # type: ignore[attr-defined]
        len(items), {os.path.basename(str(item.path)) for item in items})
    full = full_run(config)
    skip_slow = pytest.mark.skip(reason=f"slow: run with --runslow or {FULL_ENV}=1")
    skip_quick = pytest.mark.skip(reason="quick slice: the full run (slow) covers it")
    for item in items:
        if "slow" in item.keywords and not full:
            item.add_marker(skip_slow)
        if "quick" in item.keywords and full:
            item.add_marker(skip_quick)


# no compile notice in the tests' commands (and their child processes): a test's stderr does
# not depend on which of its paths the kernel cache held (tests/test_resources.py sets it back)
os.environ["SHUANGKOU_COMPILE_NOTICE"] = "0"


@pytest.fixture(scope="session", autouse=True)
def _engine_compiled() -> None:
    """Compile (or load) the deal loops before any test, so that no test's stderr depends on
    whether the kernel cache was cold: ``sim.core._cache.compile_first`` prints its first-run notice
    only then, and tests that expect a one-line error would see it in front."""
    from sim.loops import runner
    from sim.tools.estimate import estimate

    runner.summaries(0, 0, 1, runner.make_seats("random"))
    estimate("Kh", seat=0, deals=1)


def sigint_default() -> None:
    """``preexec_fn`` of a child that a test stops with Ctrl-C: SIGINT at its default in the
    child, so that Python installs its handler there. A test run started in the background
    (``nohup pytest &``) ignores SIGINT, and the child would inherit that and never stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
