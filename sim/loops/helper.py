"""A call run on a helper thread while the calling thread waits, bounded.

One piece for the two places that need it: the step loop of ``sim.loops.runner`` off the
main thread (no ``SIGALRM`` there: the caller times each call into a Python bot) and the
compiled plug-in loops of ``sim.loops.plugins`` (compiled code releases the GIL: the caller
stays free to watch the time and to take Ctrl-C and SIGTERM).

``HelperThread`` is a daemon thread that runs one call at a time for the thread that made it
(its owner): ``submit`` hands it a call, ``wait(timeout)`` waits at most ``timeout`` seconds
for the call to end, ``result`` returns its value or raises its exception. A caller that
stops waiting ``abandon``\\ s the helper: it ends once its call returns (or at once, when
``abandon`` is given an exception to raise in it, for a call running Python code). Every wait
of the helper itself is bounded: it checks every ``OWNER_POLL`` seconds that its owner is alive
and ends when it is not.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

OWNER_POLL = 5.0  # seconds between the idle helper's checks that its owner still lives


class HelperThread(threading.Thread):
    """Runs calls for the thread that created it, one at a time (see the module docstring)."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.owner = threading.current_thread()
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job: Any = None
        self.out: Any = None
        self.abandoned = False
        self._stop_with: type[BaseException] | None = None
        self.start()

    def run(self) -> None:
        try:
            while True:
                while not self.go.acquire(timeout=OWNER_POLL):
                    if not self.owner.is_alive():  # an owner that never closed us
                        return
                if self.job is None or self.abandoned:
                    return
                fn, args = self.job
                try:
                    self.out = (True, fn(*args))
                except BaseException as e:  # noqa: BLE001 - handed to the caller
                    self.out = (False, e)
                self.job = None
                if self.abandoned:
                    return
                self.done.release()
        except BaseException:
            if self._stop_with is None:  # not the exception abandon() raised here
                raise

    def submit(self, fn: Any, args: tuple) -> None:
        """Start ``fn(*args)`` on the helper (the previous call has ended)."""
        self.job = (fn, args)
        self.go.release()

    def wait(self, timeout: float) -> bool:
        """Whether the call has ended, waiting at most ``timeout`` seconds."""
        return self.done.acquire(timeout=timeout)

    def result(self) -> Any:
        """The value of the call that ended, or its exception raised here."""
        ok, value = self.out
        self.out = None
        if ok:
            return value
        raise value

    def abandon(self, stop_with: type[BaseException] | None = None) -> None:
        """Stop waiting for the call: the helper ends when it returns. With ``stop_with``, that
        exception is raised in the helper too, which ends a call running Python code (a busy
        loop); a call blocked in C (a sleep, a compiled kernel) runs on in this daemon
        thread."""
        self.abandoned = True
        if stop_with is not None and self.ident is not None:
            self._stop_with = stop_with
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident),
                                                       ctypes.py_object(stop_with))

    def close(self) -> None:
        """Let an idle helper end (an abandoned one ends by itself)."""
        if not self.abandoned:
            self.job = None
            self.go.release()
