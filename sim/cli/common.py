"""What the commands share at run time: record and text files written whole or not at all, the
one-line output errors, the compile notice, and ``kill PID`` as Ctrl-C."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from sim.errors import OutputError


def output_error(what: str, path: str, e: OSError) -> OutputError:
    """One line for a file that cannot be written: what, where and the system's reason."""
    where = f" ({e.filename!r})" if e.filename and os.fspath(e.filename) != path else ""
    return OutputError(f"cannot write {what} {path!r}{where}: {e.strerror or e}")


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def write_records(path: str, records: Any) -> int:
    """Write records to ``path`` (JSON Lines, ``.gz`` compresses; ``-`` is stdout).

    The records go to ``path.partial`` first, which replaces ``path`` only once every deal is
    written: a run that fails or is interrupted leaves an existing ``path`` untouched and keeps
    the complete records written so far in ``path.partial``; a write error (disk full, …)
    removes ``path.partial``.
    """
    from sim.record import dumps, open_text

    if path == "-":
        n = 0
        for rec in records:
            sys.stdout.write(dumps(rec) + "\n")
            n += 1
        sys.stdout.flush()
        return n
    partial = path + ".partial"
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory", path)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        f = open_text(partial, "w", gz=path.endswith(".gz"))
    except OSError as e:
        raise output_error("record file", path, e) from None
    n = 0
    try:
        with f:
            for rec in records:
                f.write(dumps(rec) + "\n")
                n += 1
        os.replace(partial, path)
    except OSError as e:
        _remove_quietly(partial)
        raise output_error("record file", path, e) from None
    except BaseException:  # a bot's error, Ctrl-C: keep what was written, leave path alone
        if n:
            print(f"{n} complete record(s) written before the failure are in {partial}; "
                  f"{path} is unchanged")
        else:
            _remove_quietly(partial)
        raise
    return n



def check_output_file(path: str, what: str) -> None:
    """A file that could be created: not a folder, in an existing, writable folder."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise output_error(what, path, IsADirectoryError(21, "Is a directory", path))
    if not os.path.isdir(folder):
        why = "Not a directory" if os.path.exists(folder) else "No such directory"
        raise OutputError(f"cannot write {what} {path!r}: {folder!r}: {why}")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"cannot write {what} {path!r}: {folder!r}: Permission denied")


def write_text_atomic(path: str, text: str, what: str) -> None:
    """Write ``text`` through ``path.partial`` in the same folder and rename it: ``path`` is
    whole or untouched; a partial file is removed on error (disk full, …)."""
    partial = path + ".partial"
    try:
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError as e:
        _remove_quietly(partial)
        raise output_error(what, path, e) from None


def raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt



def _compile_label(args: argparse.Namespace) -> str:
    """What a command compiles for, as the compile notice names it (and the measured compile
    times are keyed by, sim.core._cache)."""
    if args.command == "human":
        return f"human (partner {args.partner}, opponents {args.opponents})"
    seats = getattr(args, "seats", None)
    return f"{args.command} --seats {seats}" if seats else args.command


def compiling_for(args: argparse.Namespace, done: bool = True) -> Any:
    """``sim.core._cache.compiling`` for this command: on a cold cache, one notice (once per
    run) with the compile time measured here before, then the time it took."""
    from sim.core._cache import compiling

    return compiling(_compile_label(args), done=done)
