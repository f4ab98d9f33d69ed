"""Shared fixtures. The numba kernels compile on first use (then load from the cache).

Tests marked ``slow`` (the full 10,000-deal differential) run only with ``--runslow`` or with
``SHUANGKOU_FULL=1`` in the environment (``.ci/run`` sets it, so CI runs everything); the quick
loop runs a ~1,000-deal slice of the same comparison instead.
"""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

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
    from sim.harness import runner
    from sim.harness.estimate import estimate

    runner.summaries(0, 0, 1, runner.make_seats("random"))
    estimate("Kh", seat=0, deals=1)


def sigint_default() -> None:
    """``preexec_fn`` of a child that a test stops with Ctrl-C: SIGINT at its default in the
    child, so that Python installs its handler there. A test run started in the background
    (``nohup pytest &``) ignores SIGINT, and the child would inherit that and never stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
