"""A bot seated as a player: the messages of its seat, its clock, its faults.

``bot_class(spec)`` makes a :class:`BotSeat` subclass named like the bot, registered as a
strategy, so a bot is usable wherever a player is (``players = ["mybot", "greedy"]``). A
``BotSeat`` plays through ``begin_deal``/``choose``/``end_deal`` (the Python tier of
``sim.loops.runner``): at each decision it sends the events its seat has seen since its last
message (R9: its own cards, every show, play and trick, a give-back's cards only to its giver
and receiver) and the ``decide``, and maps the answer back to ``legal``.

Processes: one per bot, seat and table (``table``: a tournament's matchup and orientation),
kept for many deals in this process's pool and closed at exit (``close_all``); a process that
faulted by crash, timeout or protocol is ended and started again at the next deal, up to
``max_restarts`` times, after which the bot's deals are forfeits at once.
"""

from __future__ import annotations

import atexit
import hashlib
import os
from collections import Counter
from typing import Any, ClassVar

from sim.bots.process import BotFault, BotProcess
from sim.bots.spec import BotSpec
from strategies.base import Strategy
from strategies.registry import register, registered

_POOL: dict[tuple[Any, ...], _Slot] = {}
_POOL_PID = [os.getpid()]


class _Slot:
    """A pooled process and how often it was restarted."""

    __slots__ = ("proc", "restarts", "dead")

    def __init__(self) -> None:
        self.proc: BotProcess | None = None
        self.restarts = -1  # the first start is not a restart
        self.dead = ""  # why no process will be started again


def _pool() -> dict[tuple[Any, ...], _Slot]:
    if _POOL_PID[0] != os.getpid():  # a forked worker: the parent's processes are not ours
        _POOL.clear()
        _POOL_PID[0] = os.getpid()
    return _POOL


def close_all() -> None:
    """Quit every bot process of this process (``quit``, then nothing survives)."""
    pool = _pool()
    slots = list(pool.values())
    pool.clear()
    for s in slots:
        if s.proc is not None:
            s.proc.close()
            s.proc.kill()
            s.proc = None


atexit.register(close_all)


def _digest(seed: int, text: str) -> bytes:
    key = (seed & (2**64 - 1)).to_bytes(8, "little")
    return hashlib.blake2b(text.encode(), key=key, digest_size=8).digest()


def deal_id(seed: int, deal: int, table: str) -> str:
    """The opaque id of a deal at a table: keyed by the master seed, so neither the seed nor
    the deal number can be read back from it."""
    return _digest(seed, f"deal {deal} {table}").hex()


def bot_seed(seed: int, deal: int, table: str, seat: int) -> int:
    """The ``bot_seed`` of a seat: replays exactly, reveals nothing (keyed like ``deal_id``)."""
    return int.from_bytes(_digest(seed, f"seed {deal} {table} {seat}"), "little") >> 1


def _choice(kind: str, c: Any) -> list[str]:
    """A choice of ``Deal.legal()`` in the protocol's form (a list of cards)."""
    if c is None:
        return []
    if kind == "show":
        return [c, c]
    return list(c)


class BotSeat(Strategy):
    """A seat played by a bot process (see the module docstring)."""

    name = "bot"
    bot: ClassVar[BotSpec]
    external: ClassVar[bool] = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.table = ""  # set by the runner: which table (matchup, orientation) this seat is at
        self.rules: dict[str, int] = {}
        self.seat = -1
        self.proc: BotProcess | None = None
        self.in_deal = False
        self._slot: _Slot | None = None
        self._new_deal()

    def runs_compiled(self) -> bool:
        return False

    def _new_deal(self) -> None:
        self.redeals = 0
        self.calls = 0
        self.gave = 0  # give-backs sent (by call index)
        self.hand: Counter[str] = Counter()
        self.trump = False
        self.tricks = 0
        self.plays = 0
        self.ids = 0
        self.bank_ms = self.bot.bank_ms

    # --- the process ----------------------------------------------------------------------
    def _process(self) -> BotProcess:
        key = (self.bot.name, self.bot.argv, self.table, self.seat)
        slot = self._slot = _pool().setdefault(key, _Slot())
        if slot.proc is not None and slot.proc.alive:
            return slot.proc
        if slot.proc is not None:  # it died since its last deal: a crash, charged to this deal
            slot.proc.kill()
            slot.proc = None
            raise BotFault("crash", "exited between deals")
        if slot.dead:
            raise BotFault("crash", slot.dead, again=True)
        slot.restarts += 1
        if slot.restarts > self.bot.max_restarts:
            slot.dead = (f"not restarted: {self.bot.max_restarts} restart(s) used, its "
                         f"remaining deals are forfeits")
            raise BotFault("crash", slot.dead, again=True)
        proc = BotProcess(self.bot, f"{self.table or 'table'}-seat{self.seat}")
        match = {"type": "match", "seat": self.seat, "partner": (self.seat + 2) % 4,
                 "rules": self.rules,
                 "clock": {"decision_ms": self.bot.decision_ms, "bank_ms": self.bot.bank_ms}}
        try:
            proc.start([match])
        except BotFault:
            proc.kill()
            raise
        slot.proc = proc
        return proc

    def fault(self) -> None:
        """After a fault that leaves the process unusable: end it (restarted at the next
        deal)."""
        if self._slot is not None and self._slot.proc is not None:
            self._slot.proc.kill()
            self._slot.proc = None
        self.proc = None

    # --- the strategy interface -----------------------------------------------------------
    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        super().begin_deal(seat, seed, deal)
        self.seat = seat
        self._new_deal()
        self.in_deal = False
        self.proc = self._process()
        self.in_deal = True
        self.proc.post({"type": "deal", "id": deal_id(seed, deal, self.table),
                        "bot_seed": bot_seed(seed, deal, self.table, seat)})

    def choose(self, obs: Any, legal: list) -> Any:
        if len(legal) == 1:  # made by the runner, not charged (shuangkou-bot/1)
            return legal[0]
        proc = self.proc
        if proc is None:
            raise BotFault("crash", "no process")
        self._sync(obs, proc)
        kind = obs.kind
        self.ids += 1
        clock = self.bot.decision_ms + self.bank_ms
        msg: dict[str, Any] = {"type": "decide", "id": self.ids, "kind": kind,
                               "hand": obs.hand, "legal": [_choice(kind, c) for c in legal]}
        if kind == "play":
            lead = obs.leader
            msg["trick"] = [[(lead + k) % 4, p] for k, p in enumerate(obs.trick)]
        msg["clock_ms"] = clock
        i, took = proc.ask(msg, len(legal), (clock + self.bot.margin_ms) / 1000)
        over = took * 1000 - self.bot.decision_ms
        if over > 0:
            self.bank_ms = max(0, self.bank_ms - int(over + 0.5))
        return legal[i]

    def end_deal(self, obs: Any, settlement: list[int], attacker_score: int | None,
                 void: bool) -> None:
        """The deal is over (or forfeited): the events left and ``deal_end``."""
        proc = self.proc
        if proc is None or not self.in_deal:
            return
        self.in_deal = False
        if obs is not None:
            self._sync(obs, proc)
        proc.post({"type": "deal_end", "settlement": settlement,
                   "attacker_score": attacker_score, "void": void})

    # --- the seat's events ----------------------------------------------------------------
    def _sync(self, obs: Any, proc: BotProcess) -> None:
        """Post what this seat has seen since its last message (R9)."""
        post = proc.post
        me = self.seat
        if obs.redeals > self.redeals:
            for _ in range(obs.redeals - self.redeals):
                post({"type": "redeal"})
            self.redeals = obs.redeals
            self.calls = self.gave = 0
            self.hand = Counter()
        moved_in: Counter[str] = Counter()
        moved_out: Counter[str] = Counter()
        if not self.trump:
            calls = obs.calls
            n = len(calls)
            for k in range(self.calls, n):
                c = calls[k]
                post({"type": "show", "seat": c["seat"], "pair": c["pair"], "round": c["round"],
                      "took_from": c["took_from"]})
                took = c["took_from"]
                if took is not None:  # the overridden seat's pair moves to the shower (R8)
                    prev = next(p["pair"] for p in reversed(calls[:k]) if p["seat"] == took)
                    if c["seat"] == me:
                        moved_in[prev] += 2
                    elif took == me:
                        moved_out[prev] += 2
            self.calls = n
            # a give-back is done unless it is the decision being asked now
            done = n if obs.kind != "giveback" else n - 1
            for k in range(self.gave, done):
                c = calls[k]
                if c["took_from"] is None:
                    continue
                gave = c["gave"]
                cards = gave if gave is not None else ["?", "?"]
                post({"type": "giveback", "from": c["seat"], "to": c["took_from"],
                      "cards": cards})
                if c["seat"] == me:
                    moved_out.update(cards)
                elif c["took_from"] == me:
                    moved_in.update(cards)
            self.gave = max(self.gave, done)
            hand = Counter(obs.hand)
            dealt = hand - (self.hand + moved_in - moved_out)
            if dealt:
                post({"type": "dealt", "cards": sorted(dealt.elements())})
            self.hand = hand
            if obs.trump is not None:
                self.trump = True
                post({"type": "trump", "trump": obs.trump, "caller": obs.caller,
                      "attackers": list(obs.attackers)})
        if not self.trump:
            return
        tricks = obs.tricks
        for t in range(self.tricks, len(tricks)):
            tr = tricks[t]
            lead = tr["leader"]
            for k in range(self.plays, 4):
                post({"type": "play", "seat": (lead + k) % 4, "cards": tr["plays"][k]})
            post({"type": "trick", "leader": lead, "plays": tr["plays"], "winner": tr["winner"],
                  "points": tr["points"]})
            self.plays = 0
        self.tricks = len(tricks)
        cur = obs.trick
        if len(cur) > self.plays:
            lead = obs.leader
            for k in range(self.plays, len(cur)):
                post({"type": "play", "seat": (lead + k) % 4, "cards": cur[k]})
            self.plays = len(cur)


def bot_class(bot: BotSpec) -> type[BotSeat]:
    """The registered strategy class of ``bot`` (made once per name and command)."""
    old = registered(bot.name)
    if old is not None and issubclass(old, BotSeat) and old.bot == bot:
        return old
    cls = type(f"Bot_{bot.name}", (BotSeat,), {"name": bot.name, "bot": bot,
                                                  "__module__": __name__})
    register(cls)  # replaces an earlier class of the same name made here (same module, name)
    return cls


def register_bots(bots: list[BotSpec] | tuple[BotSpec, ...]) -> None:
    for b in bots:
        bot_class(b)


# --- faults scored (docs/bots.md, "Faults") ------------------------------------------------
ALL_POINTS = 200  # R3: the face points of the two decks


def forfeit_result(caller: int, seat: int, rules: Any) -> tuple[int, int, list[int]]:
    """``(caller, attacker_score, settlement)`` of a deal forfeited by ``seat``'s side: it is
    settled under R24 as if the other side had taken every point — attacker score 0 when the
    faulting side attacks, 200 when it defends; before calling has ended (``caller`` < 0) the
    faulting side counts as attacking, with ``seat`` as its caller."""
    # (a compiled kernel's module, numba: sim.bots.check imports this module before it knows a
    # deal will be played, as the command line's bot options do)
    from sim.core.scoring import settle

    if caller < 0:
        caller = seat
    attacking = caller % 2 == seat % 2
    score = 0 if attacking else ALL_POINTS
    att, dfd = settle(score, rules)
    return caller, score, [att if s % 2 == caller % 2 else dfd for s in range(4)]
