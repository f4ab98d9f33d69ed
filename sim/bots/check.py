"""``shuangkou bot check -- COMMAND``: does a program speak ``shuangkou-bot/1`` correctly?

Items, each one line: it starts and answers ``hello`` in time; it plays deals against greedy
(in all four seats' turns of a duplicate pair) with every answer in time, a legal index and the
right ``id``, and no other output; it exits on ``quit`` within 2 s, writing nothing more; it
gives the same answers when the same deals are played again (same ``bot_seed``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

from sim.bots.process import BotFault, BotProcess
from sim.bots.seat import close_all, register_bots
from sim.bots.spec import QUIT_MS, BotSpec, parse_bot
from sim.errors import ConfigError

CHECK_SEED = 20261203
NAME = "checked_bot"


def _answers(folder: str) -> list[str]:
    """The bot's lines of every transcript in ``folder``, by process (sorted by seat)."""
    out = []
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out.append(b"".join(ln for ln in f if ln.startswith(b"< ")).decode("utf-8", "replace"))
    return out


def _play(bot: BotSpec, deals: int, folder: str) -> tuple[list[dict], list[str]]:
    from sim.loops import runner  # (the loops: only once the command is known to start)

    bot = bot.replace(transcript=folder)
    register_bots([bot])
    faults: list[dict] = []
    try:
        for specs in ([NAME, "greedy"], ["greedy", NAME]):
            seats = runner.make_seats(specs)
            for s in seats:
                if getattr(s, "external", False):
                    s.table = f"check{specs.index(NAME)}"
            runner.summaries(CHECK_SEED, 0, deals, seats, faults=faults)
    finally:
        close_all()
    return faults, _answers(folder)


def check(command: Sequence[str], decision_ms: int = 1000, deals: int = 3,
          sandbox_mode: str = "auto") -> Iterator[tuple[str, bool]]:
    if not command:
        raise ConfigError("bot check: give the bot's command after --, e.g. shuangkou bot "
                          "check -- python3 mybot.py")
    bot = parse_bot(f"{NAME}={shlex.join(command)}").replace(
        decision_ms=decision_ms, bank_ms=0, max_restarts=0, sandbox=sandbox_mode)
    # 1. hello, then quit: exits in time and writes nothing else
    proc = BotProcess(bot, "check")
    try:
        t0 = time.monotonic()
        proc.start([{"type": "match", "seat": 0, "partner": 2, "rules": {},
                     "clock": {"decision_ms": decision_ms, "bank_ms": 0}}])
        name = proc.hello.get("name")
        yield (f"answers hello in {1000 * (time.monotonic() - t0):.0f} ms "
               f"(name {name!r}, version {proc.hello.get('version')!r})", True)
    except BotFault as e:
        proc.kill()
        yield f"answers hello within {bot.start_ms} ms: {e.detail}", False
        return
    p = proc.proc
    assert p is not None
    proc.post({"type": "quit"})
    try:
        proc.write(proc.out, time.monotonic() + 1.0)
        stray = b""
        try:
            end = time.monotonic() + QUIT_MS / 1000
            while time.monotonic() < end:
                stray += proc.read_line(end) + b"\n"
        except BotFault as e:
            exited = e.kind == "crash"
        else:
            exited = False
        if not exited:
            try:
                p.wait(max(0.0, end - time.monotonic()))
                exited = True
            except subprocess.TimeoutExpired:
                exited = False
        yield ("exits on quit within 2 s" if exited else
               "exits on quit within 2 s: still running (killed)", exited)
        yield ("writes nothing but protocol messages" if not stray else
               f"writes nothing after quit: wrote {stray[:120]!r}", not stray)
    finally:
        proc.kill()
    # 2. deals against greedy, both orientations; 3. the same again: the same answers
    with tempfile.TemporaryDirectory(prefix="shuangkou-check-") as tmp:
        first, second = os.path.join(tmp, "1"), os.path.join(tmp, "2")
        faults, answers = _play(bot, deals, first)
        kinds = sorted({f["kind"] for f in faults})
        if faults:
            f = faults[0]
            yield (f"plays {deals} duplicate deal(s) against greedy: {len(faults)} fault(s) "
                   f"({', '.join(kinds)}); first: seat {f['seat']}, {f['kind']}: "
                   f"{f['detail']}", False)
        else:
            yield (f"plays {deals} duplicate deal(s) against greedy: answers in time, legal "
                   f"indices, right ids, no stray output", True)
        faults2, answers2 = _play(bot, deals, second)
        same = answers == answers2 and not faults2
        yield ("gives the same answers for the same bot_seed" if same else
               "gives the same answers for the same bot_seed: they differ (does it seed its "
               "randomness from bot_seed?)", same)
