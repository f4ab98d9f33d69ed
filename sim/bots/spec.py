"""What ``--bot NAME=COMMAND`` names: a bot's name, its command and how it is run.

A command is split like a shell line (``shlex.split``; no shell is run). Configs, ladders and
results folders name bots, never their commands (received files are data): the command comes
from the command line of the run that seats the bot, each time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim.errors import ConfigError

ON_FAULT = ("forfeit", "fallback", "stop")
FAULT_KINDS = ("start", "crash", "timeout", "illegal", "protocol")  # docs/protocol.md, Faults
SANDBOX = ("auto", "require", "off")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")

# time control and bounds (docs/bots.md, "Time control" and "Bounds")
DECISION_MS = 1000  # per decision
BANK_MS = 10_000  # per deal, drawn on when a decision takes longer than DECISION_MS
START_MS = 10_000  # from the start of the process to its hello
MARGIN_MS = 50  # added to every deadline for the runner's own latency (not told to the bot)
QUIT_MS = 2000  # a bot must exit this long after quit (shuangkou-bot/1)
MAX_RESTARTS = 3
MEMORY_MB = 4096  # address space (RLIMIT_AS)
CPU_S = 3600  # CPU seconds of one process (RLIMIT_CPU)
FILES = 256  # open files (RLIMIT_NOFILE)
PROCS = 256  # processes of the bot's user (RLIMIT_NPROC; not enforced for root)
FILE_MB = 64  # largest file it may write (RLIMIT_FSIZE)
LOG_BYTES = 1 << 20  # standard error kept per process (--bot-logs)
TRANSCRIPT_BYTES = 16 << 20  # messages kept per process (--transcript)
MAX_LINE = 1 << 20  # longest line read from a bot
_LIMITS = {  # key: (default, lowest, highest)
    "decision_ms": (DECISION_MS, 1, 3_600_000),
    "bank_ms": (BANK_MS, 0, 86_400_000),
    "start_ms": (START_MS, 100, 600_000),
    "margin_ms": (MARGIN_MS, 0, 60_000),
    "max_restarts": (MAX_RESTARTS, 0, 1000),
    "memory_mb": (MEMORY_MB, 64, 1 << 20),
    "cpu_s": (CPU_S, 1, 1 << 30),
}


@dataclasses.dataclass(frozen=True)
class BotSpec:
    """One bot: its name, its command (argv), time control, bounds and fault rule.

    Plain data (it pickles to every worker). ``program`` is a hash of what it runs (the
    command and the files it names, ``program_hash``), for the ladder.
    """

    name: str
    argv: tuple[str, ...]
    decision_ms: int = DECISION_MS
    bank_ms: int = BANK_MS
    start_ms: int = START_MS
    margin_ms: int = MARGIN_MS
    on_fault: str = "forfeit"
    fallback: str = "greedy"
    max_restarts: int = MAX_RESTARTS
    memory_mb: int = MEMORY_MB
    cpu_s: int = CPU_S
    sandbox: str = "auto"
    network: bool = False  # in the sandbox: reach the network (an LLM seat's endpoint)
    logs: str = ""  # folder for standard error, per process ("" = discarded)
    transcript: str = ""  # folder for the messages exchanged, per process ("" = none)
    program: str = ""

    def replace(self, **kw: Any) -> BotSpec:
        return dataclasses.replace(self, **kw)


def program_path(argv0: str) -> str | None:
    """The file ``argv0`` runs (looked up on PATH when it has no slash), or None."""
    if "/" in argv0:
        return os.path.abspath(argv0) if os.path.isfile(argv0) else None
    return shutil.which(argv0)


def program_hash(argv: Sequence[str]) -> str:
    """sha256 (16 hex digits) of the command and of the bytes of every file it names (the
    program and, e.g., the script an interpreter runs): a bot that comes back under the same
    name with another program has another hash."""
    h = hashlib.sha256()
    for i, a in enumerate(argv):
        h.update(a.encode("utf-8", "surrogateescape") + b"\0")
        path = program_path(a) if i == 0 else (a if os.path.isfile(a) else None)
        if path:
            try:
                with open(path, "rb") as f:
                    h.update(f.read(256 << 20))
            except OSError:
                pass
    return h.hexdigest()[:16]


def parse_bot(text: str, builtins: Iterable[str] = ()) -> BotSpec:
    """``NAME=COMMAND`` (the value of ``--bot``) as a checked :class:`BotSpec`."""
    if not isinstance(text, str) or "=" not in text:
        raise ConfigError(f"--bot {text!r}: write NAME=COMMAND, e.g. --bot mybot='./mybot -v'")
    name, _, command = text.partition("=")
    name = name.strip()
    if not NAME_RE.fullmatch(name):
        raise ConfigError(f"--bot {text!r}: the name {name!r} must start with a letter or _ "
                          f"and hold only letters, digits, _ . -")
    if name in set(builtins):
        raise ConfigError(f"--bot {name}=...: {name!r} is the name of a built-in player; "
                          f"give the bot another name")
    try:
        argv = tuple(shlex.split(command))
    except ValueError as e:
        raise ConfigError(f"--bot {name}=...: the command cannot be split like a shell "
                          f"line ({e})") from None
    if not argv:
        raise ConfigError(f"--bot {name}=: the command is empty; write the program to run, "
                          f"e.g. --bot {name}='python3 mybot.py'")
    why = not_runnable(argv[0])
    if why:
        raise ConfigError(f"--bot {name}: {why}")
    return BotSpec(name=name, argv=argv, program=program_hash(argv))


def not_runnable(argv0: str) -> str:
    """Why the program ``argv0`` cannot be run here (one phrase), or "" when it can."""
    path = program_path(argv0)
    if path is None:
        return f"program {argv0!r}: " + ("no such file" if "/" in argv0 else "not found on PATH")
    if not os.access(path, os.X_OK):
        return (f"program {argv0!r} ({path}) is not executable (chmod +x it, or run it "
                f"through its interpreter)")
    return ""


def parse_bots(texts: Sequence[str] | None, builtins: Iterable[str] = ()) -> list[BotSpec]:
    """Every ``--bot`` value, checked; a name given twice is refused."""
    out: list[BotSpec] = []
    seen: set[str] = set()
    builtins = set(builtins)
    for t in texts or ():
        b = parse_bot(t, builtins)
        if b.name in seen:
            raise ConfigError(f"--bot {b.name}: the name {b.name!r} is given twice")
        seen.add(b.name)
        out.append(b)
    return out


def _int_setting(where: str, key: str, value: Any) -> int:
    _, lo, hi = _LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(f"{where}: {key} = {value!r} must be an integer from {lo} to {hi}")
    return value


SETTINGS = tuple(_LIMITS) + ("on_fault", "fallback", "sandbox", "network")


def apply_settings(bot: BotSpec, settings: Mapping[str, Any], where: str) -> BotSpec:
    """``bot`` with ``settings`` (keys of ``SETTINGS``: a config's ``[bots]`` or
    ``[bots.NAME]`` table, or the command line's options) checked and applied."""
    kw: dict[str, Any] = {}
    for key, value in settings.items():
        if key in _LIMITS:
            kw[key] = _int_setting(where, key, value)
        elif key == "on_fault":
            if value not in ON_FAULT:
                raise ConfigError(f"{where}: on_fault = {value!r} must be one of "
                                  f"{', '.join(ON_FAULT)}")
            kw[key] = value
        elif key == "sandbox":
            if value not in SANDBOX:
                raise ConfigError(f"{where}: sandbox = {value!r} must be one of "
                                  f"{', '.join(SANDBOX)}")
            kw[key] = value
        elif key == "fallback":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{where}: fallback = {value!r} must be a built-in player's "
                                  f"spec, e.g. 'greedy'")
            kw[key] = value.strip()
        elif key == "network":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: network = {value!r} must be true or false")
            kw[key] = value
        elif key in ("logs", "transcript"):
            kw[key] = str(value)
        else:
            raise ConfigError(f"{where}: unknown key {key!r}; allowed: "
                              f"{', '.join(SETTINGS)}")
    return bot.replace(**kw)


def parse_clock(text: str) -> tuple[str, dict[str, int]]:
    """``NAME=DECISION_MS[,BANK_MS]`` (the value of ``--bot-clock``)."""
    name, eq, rest = text.partition("=")
    parts = rest.split(",")
    if not eq or not 1 <= len(parts) <= 2 or not all(p.strip().isdigit() for p in parts):
        raise ConfigError(f"--bot-clock {text!r}: write NAME=DECISION_MS or "
                          f"NAME=DECISION_MS,BANK_MS, e.g. mybot=200,5000")
    values = [int(p) for p in parts]
    out = {"decision_ms": values[0]}
    if len(values) == 2:
        out["bank_ms"] = values[1]
    return name.strip(), out
