"""The lock of a results folder: one process writes it at a time (``locked``); the pid it
holds says who (``lock_holder``, ``pid_alive``)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator

from sim.core.files import read_received
from sim.errors import ConfigError

LOCK_FILE = ".lock"  # held (flock) by the one process writing a results folder; holds its pid


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        return True
    return True


def lock_holder(path: str) -> str:
    try:
        return read_received(path, 64, "lock file").decode("ascii").strip() or "unknown"
    except (OSError, ValueError):
        return "unknown"


@contextlib.contextmanager
def locked(out: str) -> Iterator[None]:
    """Hold ``out/.lock`` while writing ``out``: one writer per results folder. The lock is
    an flock, so the kernel drops it when its holder dies (a stale file is simply taken);
    where there is no fcntl, an O_EXCL file whose pid is checked for life."""
    path = os.path.join(out, LOCK_FILE)

    def busy(pid: str) -> ConfigError:
        return ConfigError(f"results folder {out!r} is being written by another shuangkou "
                           f"process (pid {pid}): wait for it to finish, or stop it and run "
                           f"again with --resume")

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        fcntl = None
    while True:
        if fcntl is None:  # pragma: no cover - not POSIX
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                pid = lock_holder(path)
                if pid.isdigit() and pid_alive(int(pid)):
                    raise busy(pid) from None
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)  # stale: its process is gone
                continue
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW, 0o644)
        except OSError as e:  # a link, a folder, no permission
            raise ConfigError(f"lock file {path!r} cannot be opened ({e.strerror}): remove "
                              f"it, then run again") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ConfigError(f"{path!r} is not a regular file (the lock of a results folder "
                              f"is): remove it, then run again")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise busy(lock_holder(path)) from None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # the holder removed the file between our open and flock: again
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
        os.close(fd)
