"""The layers a bot runs under, probed once per process.

Always: the guard (``sim/bots/guard.py``: rlimits, its own process group, a parent-death
signal, every leftover process killed) and the runner's wall-clock deadlines. Where
unprivileged user namespaces work and bubblewrap (``bwrap``) is installed: the bot also runs
in a bubblewrap sandbox — no network, a read-only view of the system, a private writable
``/var/tmp`` (its ``HOME`` and ``TMPDIR``; everything else, ``/tmp`` included, is
read-only), its own process namespace — probed once by running ``/bin/sh`` in it.
``sandbox = "require"`` refuses to run without bubblewrap; ``"off"`` never uses it.

Under bubblewrap the bot's input and output do not pass through bwrap's own standard streams:
bwrap's two processes (its monitor and the namespace's init) keep their 0, 1 and 2 open as
long as the sandbox lives, so a bot that closed its output without exiting would be found out
only by its clock. The guard gives bwrap ``/dev/null`` as 0 and 1 and the bot's pipes on
``SHIM_FDS``, which bwrap closes in both of its own processes and passes on to the program
alone; inside, ``/bin/sh`` (``SHIM``) moves them to 0 and 1 and execs the bot in its place
(the same process: no copy is left anywhere). Only the start-up changes (one exec of ``sh``).
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys

from sim.bots.spec import FILE_MB, FILES, LOG_BYTES, PROCS, BotSpec
from sim.errors import ConfigError

GUARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard.py")
PRIVATE = "/var/tmp"  # the bot's own writable folder in the sandbox (a tmpfs)
BWRAP_ARGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", PRIVATE,
              "--setenv", "HOME", PRIVATE, "--setenv", "TMPDIR", PRIVATE,
              "--unshare-all", "--die-with-parent", "--new-session")
SHIM_FDS = (3, 4)  # the bot's input and output, on their way through bwrap
SHIM = "exec <&{0} >&{1} {0}<&- {1}>&- && exec \"$@\"".format(*SHIM_FDS)
LAYER_BWRAP = "bubblewrap"
LAYER_RLIMITS = "rlimits"


@functools.lru_cache(maxsize=None)
def bwrap_works() -> str:
    """"" when bubblewrap runs a program here, else why not (one line)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        p = subprocess.run([exe, *BWRAP_ARGS, "--", "/bin/sh", "-c", "exit 0"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap does not start ({e})"
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap cannot make its sandbox here ({err[-1] if err else p.returncode})"
    return ""


def layer(mode: str) -> str:
    """The layer a bot with ``sandbox = mode`` runs under: ``"bubblewrap"`` or ``"rlimits"``;
    ``"require"`` without a working bubblewrap is a ConfigError saying why."""
    if mode == "off":
        return LAYER_RLIMITS
    why = bwrap_works()
    if not why:
        return LAYER_BWRAP
    if mode == "require":
        raise ConfigError(f"--sandbox require: {why}; install bubblewrap where unprivileged "
                          f"user namespaces work, or use --sandbox auto")
    return LAYER_RLIMITS


def describe(mode: str) -> str:
    """The run header's line on the layer in use."""
    got = layer(mode)
    if got == LAYER_BWRAP:
        return "bots run in a bubblewrap sandbox (no network, read-only system) under rlimits"
    why = "--sandbox off" if mode == "off" else bwrap_works()
    return f"bots run under rlimits only ({why})"


def rlimits(bot: BotSpec) -> list[tuple[str, int]]:
    mb = 1 << 20
    out = [("RLIMIT_AS", bot.memory_mb * mb), ("RLIMIT_CPU", bot.cpu_s),
           ("RLIMIT_NOFILE", FILES), ("RLIMIT_FSIZE", FILE_MB * mb), ("RLIMIT_CORE", 0)]
    if os.geteuid() != 0:  # root is not bound by RLIMIT_NPROC anyway
        used = _processes_of_user()
        out.append(("RLIMIT_NPROC", used + PROCS))
    # never above the runner's own hard limits (lowering is all an unprivileged process may)
    return [(name, min(v, _hard(name))) for name, v in out]


def _hard(name: str) -> int:
    hard = resource.getrlimit(getattr(resource, name))[1]
    return hard if hard != resource.RLIM_INFINITY else 1 << 62


def _processes_of_user() -> int:
    uid = os.geteuid()
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def command(bot: BotSpec, parent: int, log: str = "") -> list[str]:
    """The argv that starts ``bot`` under its guard (and bubblewrap where in use)."""
    import json

    cfg = {"parent": parent, "rlimits": rlimits(bot), "log": log, "log_bytes": LOG_BYTES}
    argv = list(bot.argv)
    if layer(bot.sandbox) == LAYER_BWRAP:
        bwrap = shutil.which("bwrap")
        assert bwrap is not None
        net = ["--share-net"] if bot.network else []  # e.g. an LLM seat's endpoint
        argv = [bwrap, *BWRAP_ARGS, *net, "--", "/bin/sh", "-c", SHIM, "shuangkou-shim", *argv]
        cfg["fds"] = list(SHIM_FDS)
    return [sys.executable, "-I", "-S", GUARD, json.dumps(cfg), "--", *argv]
