"""Reading a file someone else made (a results folder, a record, a config): bounded.

A name in a received folder may be a FIFO (``open`` waits for a writer for ever), a link to
``/dev/urandom`` or ``/dev/zero`` (a read that never ends) or a file far larger than its kind
ever is. ``open_received`` opens without blocking, refuses anything but a regular file and
anything larger than the limit given, all before a byte is read; ``read_received`` reads the
whole file that way. Both raise ``OSError`` (with ``strerror`` and ``filename``) for the callers
to turn into their own one-line errors. Plain Python: no numpy, no numba.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import IO

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _size(n: int) -> str:
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << k:
            return f"{n / (1 << k):g} {unit}"
    return f"{n} bytes"


def open_received(path: str | os.PathLike, limit: int, what: str = "file") -> IO[bytes]:
    """``path`` opened for binary reading if it is a regular file of at most ``limit`` bytes.

    Never waits: the file is opened with ``O_NONBLOCK`` (a FIFO opens at once) and checked
    with ``fstat`` on the open descriptor (no race with a swapped name) before anything is
    read. Raises ``FileNotFoundError`` and other ``OSError``; ``strerror`` says e.g. "not a
    regular file: a FIFO (named pipe)" or "larger than 1 MiB, the most a config file may be".
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
        | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a plain file")
            raise OSError(errno.EINVAL, f"not a regular file: {kind}", os.fspath(path))
        if st.st_size > limit:
            raise OSError(errno.EFBIG, f"{_size(st.st_size)}, larger than {_size(limit)}, the "
                          f"most a {what} may be", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_received(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` (``open_received``), at most ``limit`` even if it grows."""
    with open_received(path, limit, what) as f:
        parts, n = [], 0
        want = os.fstat(f.fileno()).st_size + 1  # one read, unless it grows meanwhile
        while n <= limit:
            b = f.read(min(want, limit + 1 - n))
            if not b:
                return b"".join(parts)
            parts.append(b)
            n += len(b)
            want = 1 << 20
    raise OSError(errno.EFBIG, f"larger than {_size(limit)}, the most a {what} may be",
                  os.fspath(path))
