"""Worker processes forked from the run once it has loaded its kernels (backend ``fork``).

A loky worker is a new Python process: it imports numpy, numba and the engine (about 0.5 s)
and loads its cached kernels (0.3–0.5 s) before playing its first chunk, while the run's
clock runs; a forked worker starts with all of that already in memory, shared copy-on-write
with the run's process. The run's process loads the kernels once before its clock starts (as
a 1-job run does), then forks: the workers' first chunks start about 0.03 s into the run,
against 0.5 s plus a first chunk slowed by 0.6-1.3 s of loading with loky
(``benchmarks/test_bench_scaling.py``).

Fork copies only the calling thread, and a lock that another thread held at that moment
stays locked in the child for ever; so ``auto`` forks only a process that runs no other Python
thread (``can_fork``; the native thread pools of OpenBLAS and Arrow handle a fork themselves),
on Linux (macOS system libraries are not fork-safe), and falls back to loky elsewhere. The
workers are forked before the progress bar starts its monitor thread.

Like loky's, these workers end themselves when the run's process dies (``kill -9``), ignore
Ctrl-C (the run's process handles it and stops them), and a worker that dies is reported with
its exit code (``exit codes {EXIT(3)}``, ``{SIGKILL(-9)}``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any


def fork_available() -> bool:
    """Whether this system can start processes by fork (the ``fork`` backend)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def can_fork() -> bool:
    """Whether ``auto`` forks: Linux, and no other Python thread running in this process."""
    if sys.platform != "linux" or not fork_available():
        return False
    import threading

    # Python threads only: the native thread pools of the libraries loaded here (OpenBLAS
    # under numpy, Arrow) stop and restart themselves around a fork (pthread_atfork)
    return threading.active_count() == 1


def _exit_codes(procs: Iterable[Any]) -> str:
    """``{EXIT(3), SIGKILL(-9)}``: how the workers that died ended, as loky names them."""
    names = []
    for p in procs:
        code = p.exitcode
        if code is None or code == 0:
            continue
        if code < 0:
            try:
                names.append(f"{signal.Signals(-code).name}({code})")
            except ValueError:
                names.append(f"SIGNAL({code})")
        else:
            names.append(f"EXIT({code})")
    return "{" + ", ".join(names) + "}"


def _worker_start(parent: int, setup: Callable[[int], None]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    setup(parent)


class ForkPool:
    """``jobs`` worker processes forked now; ``map_unordered`` runs tasks on them.

    ``setup(parent_pid)`` runs first in each worker (the run's watchdog). Use as a context
    manager: leaving it early (an exception, an SPRT decision) kills the workers instead of
    waiting for the chunks they are playing."""

    def __init__(self, jobs: int, setup: Callable[[int], None]) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.jobs = jobs
        self._ex = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                                       initializer=_worker_start,
                                       initargs=(os.getpid(), setup))
        # with fork, the first task forks every worker (before the executor starts its
        # manager thread): do it now, while this process has one thread
        self._ex.submit(os.getpid).result(timeout=60)
        self._procs = list(getattr(self._ex, "_processes", {}).values())
        self._abandoned = False

    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any],
                      ahead: int | None = None) -> Iterator[Any]:
        """``fn(t)`` for each task, in the order they finish, with at most ``ahead`` (default
        twice the jobs) handed out and not yet returned."""
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        ahead = ahead or 2 * self.jobs
        it = iter(tasks)
        pending = set()

        def hand_out() -> None:
            while len(pending) < ahead:
                t = next(it, None)
                if t is None:
                    return
                pending.add(self._ex.submit(fn, t))

        hand_out()
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    try:
                        res = f.result()
                    except BrokenProcessPool:
                        for p in self._procs:  # the exit codes are known once reaped
                            p.join(5)
                        raise BrokenProcessPool(
                            f"a worker process ended abruptly; the exit codes of the workers "
                            f"are {_exit_codes(self._procs)}") from None
                    yield res
                hand_out()
        except GeneratorExit:  # the run stopped taking results (an SPRT decided)
            self._abandoned = True
            raise

    def close(self, kill: bool) -> None:
        """Stop the workers: at once with ``kill`` (their chunks are lost), else once idle."""
        if kill:  # bounded: the killed workers are reaped here, and the executor's own
            # thread is not waited for (it winds down on its own once it sees them gone)
            for p in self._procs:
                if p.is_alive():
                    p.kill()
            for p in self._procs:
                p.join(5)
            # a worker killed while sending its result leaves half a message in the result
            # pipe, and the executor's thread would wait in recv() for the rest for ever: this
            # process holds the pipe's last write end, and closing it turns the wait into EOF
            writer = getattr(getattr(self._ex, "_result_queue", None), "_writer", None)
            if writer is not None:
                writer.close()
            self._ex.shutdown(wait=False, cancel_futures=True)
            return
        self._ex.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ForkPool:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.close(kill=kind is not None or self._abandoned)
