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


# --- JSON someone else wrote: nesting and size capped before the parser sees it ---------------

MAX_JSON_DEPTH = 64  # the product writes no file nested deeper than 8; a received one stops at 64

_STRING = None  # compiled on first use (re is cheap, but this module stays import-light)


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of ``[``/``{`` in a JSON text, strings skipped, in one linear pass
    (no recursion, so a text nested 100,000 deep is measured, not a ``RecursionError``)."""
    global _STRING
    import re
    if _STRING is None:
        _STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    brackets = re.sub(rb"[^\[\]{}]", b"", _STRING.sub(b"", data))
    depth = best = 0
    for ch in brackets.translate(bytes.maketrans(b"[{]}", b"(())")).decode("ascii"):
        if ch == "(":
            depth += 1
            if depth > best:
                best = depth
        else:
            depth -= 1
    return best


def decode_json(data: bytes | str, type=None, *, where: str,
                max_depth: int = MAX_JSON_DEPTH):
    """``data`` decoded as JSON (into the declared msgspec ``type`` where given: every field's
    type and range checked, unknown fields refused where the type says so).

    Raises ``ValueError`` with one line naming ``where`` (the file, and the part of it), the
    field (``$.pairs``) and what was expected: never ``RecursionError``, never a traceback from
    the parser. Nesting deeper than ``max_depth`` is refused before parsing.
    """
    import msgspec
    depth = json_depth(data)
    if depth > max_depth:
        raise ValueError(f"{where}: JSON nested {depth} deep, more than the {max_depth} "
                         "any file of this kind may be")
    try:
        if type is None:
            return msgspec.json.decode(data)
        return msgspec.json.decode(data, type=type)
    except msgspec.ValidationError as e:
        raise ValueError(f"{where}: {e}") from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"{where}: not valid JSON ({e})") from None


def check_regular(path: str | os.PathLike, what: str = "file") -> None:
    """Refuse (``OSError``) a ``path`` that exists and is not a regular file — a FIFO, a device,
    a socket, a folder — without opening it for reading (a FIFO never blocks this check).
    A missing path passes: the caller reports that in its own words."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a plain file")
        raise OSError(errno.EINVAL, f"not a regular file: {kind} (a {what} must be one)",
                      os.fspath(path))
