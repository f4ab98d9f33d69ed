"""One bot process: started under its guard, spoken to in JSON Lines, every wait bounded.

``BotProcess.start`` runs the command (``sim.bots.sandbox.command``), sends ``hello`` and
waits at most ``start_ms`` for the bot's ``hello``; ``post`` queues messages, which are written
together with the next ``ask`` (one write per decision); ``ask`` writes, then reads the
``action`` before its deadline; ``close`` sends ``quit``, waits ``QUIT_MS`` and then has the
guard kill whatever is left (the guard kills everything below it; a guard that does not go is
killed with its process group). Whatever goes wrong is a :class:`BotFault` of one of the kinds
of docs/protocol.md: ``start``, ``crash``, ``timeout``, ``illegal``, ``protocol``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from typing import Any

from sim.bots import sandbox
from sim.bots.spec import MAX_LINE, QUIT_MS, TRANSCRIPT_BYTES, BotSpec

PROTOCOL = "shuangkou-bot/1"


class BotFault(Exception):
    """A bot at fault: ``kind`` (``sim.bots.spec.FAULT_KINDS``) and what happened (one line)."""

    def __init__(self, kind: str, detail: str, again: bool = False) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.again = again  # a bot out of restarts: the deal is scored, the fault not counted


def _dumps(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class BotProcess:
    """A running bot (see the module docstring). ``label`` names its files
    (``NAME-LABEL-PID.log`` in ``--bot-logs``, ``.jsonl`` in ``--transcript``)."""

    def __init__(self, bot: BotSpec, label: str) -> None:
        self.bot = bot
        self.label = label
        self.proc: subprocess.Popen[bytes] | None = None
        self.out: list[bytes] = []  # queued messages
        self.buf = bytearray()  # read but not yet split into lines
        self.hello: dict[str, Any] = {}
        self.transcript: Any = None
        self._t_bytes = 0

    # --- life ---------------------------------------------------------------------------
    def start(self, first: list[dict[str, Any]]) -> None:
        """Start the process, exchange ``hello``, queue ``first`` (the ``match`` message)."""
        bot = self.bot
        log = ""
        stamp = f"{bot.name}-{self.label}-{os.getpid()}-{time.monotonic_ns() % 10**9}"
        if bot.logs:
            os.makedirs(bot.logs, exist_ok=True)
            log = os.path.join(bot.logs, stamp + ".log")
        if bot.transcript:
            os.makedirs(bot.transcript, exist_ok=True)
            self.transcript = open(os.path.join(bot.transcript, stamp + ".jsonl"), "ab")
        argv = sandbox.command(bot, os.getpid(), log)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, close_fds=True,
                                         start_new_session=True, bufsize=0)
        except OSError as e:
            raise BotFault("start", f"cannot start {bot.argv[0]!r}: {e}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.fd_in = self.proc.stdin.fileno()
        self.fd_out = self.proc.stdout.fileno()
        os.set_blocking(self.fd_in, False)
        os.set_blocking(self.fd_out, False)
        deadline = time.monotonic() + bot.start_ms / 1000
        try:
            self.write([_dumps({"type": "hello", "protocol": PROTOCOL})], deadline)
            line = self.read_line(deadline)
            msg = self._parse(line)  # not JSON: a start fault too, as any other bad hello
        except BotFault as e:
            raise BotFault("start", f"no hello within {bot.start_ms} ms ({e.detail})") from None
        if msg.get("type") != "hello" or not isinstance(msg.get("name"), str):
            raise BotFault("start", f"answered hello with {line[:120]!r}, not "
                                    f'{{"type": "hello", "name": ...}}')
        self.hello = msg
        self.out = [_dumps(m) for m in first]

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def close(self, polite: bool = True) -> None:
        """``quit`` (after any queued messages) when ``polite``, then nothing survives."""
        p = self.proc
        if p is None:
            return
        self.proc = None
        try:
            if polite and p.poll() is None:
                try:
                    self.out.append(_dumps({"type": "quit"}))
                    self.write(self.out, time.monotonic() + 0.5, p)
                except BotFault:
                    pass
                self.out = []
                try:
                    p.wait(QUIT_MS / 1000)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            self._end(p)

    @staticmethod
    def _end(p: subprocess.Popen[bytes]) -> None:
        """Have the guard kill everything below it; kill the guard's group if it lingers."""
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)  # the guard kills the bot's whole tree
                p.wait(2.0)
            except (subprocess.TimeoutExpired, OSError):
                pass
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                p.wait(2.0)
            except subprocess.TimeoutExpired:
                pass
        for f in (p.stdin, p.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass

    def kill(self) -> None:
        if self.proc is not None:
            p, self.proc = self.proc, None
            self._end(p)
        if self.transcript is not None:
            self.transcript.close()
            self.transcript = None

    # --- messages -----------------------------------------------------------------------
    def post(self, msg: dict[str, Any]) -> None:
        self.out.append(_dumps(msg))

    def ask(self, decide: dict[str, Any], n_legal: int, timeout_s: float) -> tuple[int, float]:
        """Send the queued messages and ``decide``; the chosen index and the seconds the
        answer took (from the end of the write). Faults: ``timeout`` past ``timeout_s``,
        ``crash``, ``protocol`` (not an action, wrong ``id``), ``illegal`` (not an index of
        ``legal``)."""
        self.out.append(_dumps(decide))
        out, self.out = self.out, []
        self.write(out, time.monotonic() + timeout_s)
        t0 = time.monotonic()
        line = self.read_line(t0 + timeout_s)
        took = time.monotonic() - t0
        msg = self._parse(line)
        if msg.get("type") != "action":
            raise BotFault("protocol", f"expected an action, got {line[:120]!r}")
        if msg.get("id") != decide["id"]:
            raise BotFault("protocol", f"action for id {msg.get('id')!r}, expected "
                                       f"{decide['id']}")
        c = msg.get("choice")
        if isinstance(c, bool) or not isinstance(c, int):
            raise BotFault("protocol", f"choice {c!r} is not an integer index")
        if not 0 <= c < n_legal:
            raise BotFault("illegal", f"choice {c} is not an index of legal (0..{n_legal - 1})")
        return c, took

    def _parse(self, line: bytes) -> dict[str, Any]:
        try:
            msg = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            raise BotFault("protocol", f"not a JSON line: {line[:120]!r}") from None
        if not isinstance(msg, dict):
            raise BotFault("protocol", f"not a JSON object: {line[:120]!r}")
        return msg

    def _log(self, way: bytes, data: bytes) -> None:
        t = self.transcript
        if t is None or self._t_bytes > TRANSCRIPT_BYTES:
            return
        for line in data.splitlines():
            rec = way + line[:4096] + b"\n"
            self._t_bytes += len(rec)
            t.write(rec)

    def write(self, chunks: list[bytes], deadline: float,
               p: subprocess.Popen[bytes] | None = None) -> None:
        data = b"".join(chunks)
        if self.transcript is not None:
            self._log(b"> ", data)
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.fd_in, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, OSError):
                raise BotFault("crash", self._gone_text(p)) from None
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotFault("timeout", "does not read its input")
            select.select([], [self.fd_in], [], left)

    def read_line(self, deadline: float) -> bytes:
        buf = self.buf
        while True:
            i = buf.find(b"\n")
            if i >= 0:
                line = bytes(buf[:i])
                del buf[:i + 1]
                if self.transcript is not None:
                    self._log(b"< ", line)
                return line
            if len(buf) > MAX_LINE:
                raise BotFault("protocol", f"a line longer than {MAX_LINE} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotFault("timeout", "no answer in time")
            r, _, _ = select.select([self.fd_out], [], [], left)
            if not r:
                continue
            try:
                data = os.read(self.fd_out, 1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                raise BotFault("crash", self._gone_text(None))
            buf += data

    def _gone_text(self, p: subprocess.Popen[bytes] | None) -> str:
        p = p or self.proc
        code = None
        if p is not None:
            try:
                code = p.wait(0.2)
            except subprocess.TimeoutExpired:
                pass
        if code is None:
            return "closed its output"
        return f"exited (status {code})"
