"""Play against the bots in the terminal: ``shuangkou human`` (docs/human.md).

One person sits in one seat, three bots (any specs, plug-ins included) in the others. The deal
runs through the step API (``sim.deal.Deal``): the person answers at their own decisions, each
bot is asked through ``choose`` on its observation, with the per-decision time limit of
``sim.loops.runner`` (the same ``Asker`` machinery ``shuangkou play --timeout`` uses). The screen
shows only what the person's seat may know (R9): it is drawn from that seat's Observation.

Two screens: a full-screen one that redraws in place with plain ANSI codes when standard
output is a terminal, and a plain line mode otherwise (or with ``--plain``). ``NO_COLOR``
turns colours off.

Every finished deal is appended to ``deals.jsonl`` in the output folder as soon as it ends;
a deal left unfinished (end of input, Ctrl-C, ``quit``) is saved as an *unfinished* record
(docs/record.md) that ``shuangkou replay`` shows and ``shuangkou validate`` checks as far as
it goes.

The package: ``sim.human`` (this module) is the session, the loop of a match: whose turn it
is, asking the person (``parse_answer``), the bots' moves, hints and the review, the records;
``sim.human.screen`` draws the table and the hand on the terminal; ``sim.human.narration``
turns events and decisions into the lines a person reads.
"""

from __future__ import annotations

import math
import os
import re
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from typing import IO, Any, NamedTuple

import numpy as np

from sim.analysis import viewer
from sim.cards import CARD_NAMES, SUITS, parse_card
from sim.core import state as S
from sim.core.rng import check_seed
from sim.deal import Deal
from sim.errors import (
    ConfigError,
    IllegalPlayError,
    InvalidCardError,
    OutputError,
    ShuangkouError,
    StrategyError,
)
from sim.human.narration import HINT_ALL, HINT_TOP, Narrator, Snap
from sim.human.screen import (
    BOLD,
    CLEAR,
    MAX_LISTED,
    RED,
    Painter,
    Screen,
    choice_text,
    fit,
    isatty,
    use_color,
    wrap_items,
)
from sim.loops.runner import Asker, check_timeout, use_alarm
from sim.record import FORMAT, call_dicts, dumps, hands_of, trick_dicts
from sim.rules import Rules
from sim.tools.analyze import (
    DEFAULT_SAMPLES,  # worlds per decision for hint and review
    Decision,
    Settings,
    choice_values,
    run_task,
    tasks_of,
)
from sim.view import mask_into
from strategies.base import Strategy
from strategies.registry import make, split_specs

__all__ = [
    "CLEAR", "HELP", "HINT_ALL", "HINT_TOP", "HUMAN", "REVIEW_SECONDS", "Answer", "Painter",
    "Session", "check_delay", "check_samples", "choice_text", "default_out", "fit",
    "make_bots", "parse_answer", "run", "split_specs", "unfinished_record", "use_color",
    "wrap_items",
]

HUMAN = "human"  # the person's seat in a record's ``seats``
REVIEW_SECONDS = 60.0  # a review stops after this much analysis (between decisions)

HELP = """\
Answer with the number of a choice, or in card notation (R2): Kh, Th or 10h, 5s 5s, BJ.
  pass          pass at a calling chance (R7)
  ? / help      this summary          hint    every choice's value, and greedy's pick
  t / tricks    the tricks so far     q / quit  stop (the deal so far is saved)
Calling: after each dealing round you may show a pair of identical suited cards (R6); a show
  must outrank the pair on the table (A lowest ... K highest). Showing over another seat's
  pair takes that pair into your hand and you hand back any two cards except the pair you
  just showed (R8). The last to show is the caller: their suit is trump, their team attacks
  (R10).
Trumps (R12-R13), strongest first: 主5, BJ, SJ, 付5, 主3, 付3, 主2, 付2, then the trump
  suit A K Q J 10 9 8 7 6 4. Side suits: A K Q J 10 9 8 7 6 4.
Play: lead one card or one pair (R16); follow the led group (R18); to a pair lead play a
  pair of the group (R19a), else your two strongest of it (R19b), else your one card of it
  and any other (R19c), else any two (R19d). Trump beats side; only pairs win a pair lead
  (R20-R21). Attackers score the points (5s, 10s, Ks) of their tricks; the last trick counts
  double, or x4 when won with a pair (R22-R23); 100 is even, every 20 more or less moves the
  skill value by 2 (R24-R25)."""


# --- answers ---------------------------------------------------------------------------
class Answer(NamedTuple):
    """A parsed answer: ``action`` is ``'choice'`` (``choice`` in Deal notation), ``'help'``,
    ``'hint'``, ``'tricks'``, ``'quit'``, ``'again'`` (an empty line) or ``'error'``
    (``message`` says why, citing the ruling)."""

    action: str
    choice: Any = None
    message: str = ""


_NUMBER = re.compile(r"[+-]?[0-9]+")
_WORDS = {"?": "help", "help": "help", "h": "help", "hint": "hint", "t": "tricks",
          "tricks": "tricks", "q": "quit", "quit": "quit", "exit": "quit"}


def parse_answer(text: str, kind: str, legal: Sequence[Any]) -> Answer:
    """Read one answer to a ``kind`` decision (``'show'``, ``'giveback'``, ``'play'``).

    A number picks from ``legal`` (1-based); cards are checked against the rules later by
    ``Deal.apply``, which names the ruling an illegal choice breaks.
    """
    t = text.strip()
    low = t.lower()
    if not t:
        return Answer("again")
    if low in _WORDS:
        return Answer(_WORDS[low])
    n = len(legal)
    if _NUMBER.fullmatch(low):  # ASCII digits only: str.isdigit() also takes '²' and '①'
        digits = low.lstrip("+-")
        i = int(digits) if len(digits) <= 6 and not low.startswith("-") else 0
        if 1 <= i <= n:
            return Answer("choice", legal[i - 1])
        shown = t if len(t) <= 12 else t[:8] + "…"
        return Answer("error", message=f"{shown} is not a choice: answer 1-{n}, or cards")
    if len(t) > 200:  # no card answer is this long; keep the refusal one short line
        return Answer("error", message=f"an answer of {len(t)} characters is not a choice: "
                                       f"answer 1-{n}, or cards (R2), ? for help")
    if low in ("pass", "p"):
        if kind == "show":
            return Answer("choice", None)
        if kind == "giveback":
            return Answer("error", message="no passing here: after an override two cards are "
                                           "handed back (R8)")
        return Answer("error", message="no passing in trick play: everybody plays as many "
                                       "cards as were led (R16)")
    tokens = t.replace(",", " ").split()
    try:
        names = [CARD_NAMES[parse_card(x)] for x in tokens]
    except InvalidCardError as e:
        return Answer("error", message=f"{e} (R2); or a number 1-{n}, pass, ? for help")
    if kind == "show":
        if len(names) > 2 or len(set(names)) != 1:
            return Answer("error", message=f"{t!r}: a show is one pair, name its card once or "
                                           f"twice, e.g. Kh or Kh Kh (R6)")
        return Answer("choice", names[0])
    return Answer("choice", tuple(names))


# --- partial deals -----------------------------------------------------------------------
def unfinished_record(deal: Deal) -> dict[str, Any]:
    """The record of a deal stopped part way (docs/record.md, "Unfinished deals")."""
    st, u, _ = deal.engine
    names = CARD_NAMES
    trump = int(st[S.S_TRUMP])
    playing = trump >= 0
    rec: dict[str, Any] = {
        "format": FORMAT, "seed": deal.seed, "deal": deal.deal,
        "rules": deal.rules.to_dict(), "seats": list(deal.seats),
        "redeals": int(st[S.S_REDEALS]), "void": False,
        "deck": [names[c] for c in st[S.S_DECK:S.S_DECK + 108]],
        "calls": call_dicts(st),
        "caller": None, "trump": None, "attackers": None,
        "hands": ([[names[c] for c in h] for h in hands_of(st, u)] if playing
                  else [deal.hand(s) for s in range(4)]),
        "tricks": trick_dicts(st, trump, 0, int(st[S.S_NTRICKS])) if playing else [],
        "attacker_points": None, "last_trick_multiplier": None, "attacker_score": None,
        "settlement": [0, 0, 0, 0],
        "unfinished": True, "dealt_rounds": int(st[S.S_ROUND]), "current_trick": None,
    }
    if playing:
        obs = deal.observation(0)
        caller = obs.caller
        rec.update(caller=caller, trump=SUITS[trump], attackers=[caller % 2, caller % 2 + 2])
        if obs.trick:
            rec["current_trick"] = {"leader": obs.leader, "plays": obs.trick}
    return rec


# --- the session ---------------------------------------------------------------------------
class _Stop(Exception):
    """The person ended the session (end of input or ``quit``)."""


class _Signalled(BaseException):
    """SIGTERM or SIGHUP arrived: stop as Ctrl-C does (a BaseException, so that a bot's
    ``except Exception`` cannot swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name


def _raise_signalled(signum: int, frame: Any) -> None:
    raise _Signalled(signum)


_STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


def _catch_stop_signals() -> list[tuple[int, Any]]:
    """SIGTERM and SIGHUP raise ``_Signalled`` (main thread only); returns the old handlers."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return []
    # a signal ignored when the program started (``nohup``) stays ignored
    return [(s, signal.signal(s, _raise_signalled)) for s in _STOP_SIGNALS
            if signal.getsignal(s) is not signal.SIG_IGN]


def _ignore_stop_signals() -> None:
    import threading

    if threading.current_thread() is threading.main_thread():
        for s in _STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)


def _restore_signals(saved: list[tuple[int, Any]]) -> None:
    for s, handler in saved:
        signal.signal(s, handler)

class Session(Screen, Narrator):
    """One person and three bots over ``deals`` deals (a match keeps skill values, R25)."""

    def __init__(self, seat: int, bots: Sequence[Strategy], seed: int, deals: int,
                 rules: Rules, out_dir: str, delay: float = 0.4, timeout: float | None = 60,
                 full: bool | None = None, color: bool | None = None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 width: int | None = None, review: bool = True,
                 samples: int = DEFAULT_SAMPLES,
                 review_seconds: float = REVIEW_SECONDS) -> None:
        self.seat = seat
        self.review_on = review
        self.samples = check_samples(samples)
        self.review_seconds = review_seconds
        self.step = 0  # index of the decision awaited in the deal (as ``analyze`` counts)
        self._hold = False  # a review is on screen: the next prompt does not redraw over it
        self.bots = list(bots)  # four entries; bots[seat] is never asked
        self.seed, self.deals, self.rules = seed, deals, rules
        self.out_dir = out_dir
        self.path = os.path.join(out_dir, "deals.jsonl")
        self.delay = delay
        self.stdin = stdin or sys.stdin
        self.out = stdout or sys.stdout
        tty = isatty(self.out)
        self.full = tty if full is None else full
        self.p = Painter(use_color(self.out) if color is None else color)
        self.fixed_width = width  # None: the terminal's width at each redraw
        self.specs = [HUMAN if s == seat else b.spec() for s, b in enumerate(self.bots)]
        self.asker = Asker(self.bots, rules, check_timeout(timeout), python_tier=True)
        self.hinter = make("greedy")
        self.skill = [rules.start_skill] * 4
        self.log: deque[str] = deque(maxlen=60)  # redraw shows what the rows allow
        self.deal: Deal | None = None
        self.index = 0  # deal number in the match, from 0
        self.last_trick: dict[str, Any] | None = None
        self.notice = ""  # one line under the prompt: the ruling of a refused answer
        self.played = self.void = 0
        self.saved = 0
        self._quit = False  # the person asked to stop (``quit``), as against end of input
        self.forced = False  # the person's last decision had one legal choice: played for them
        self.choices_cut = False  # the last screen cut the numbered choices short
        self._gone = False  # output failed (terminal closed): nothing more is written to it
        self._saved_deal: Deal | None = None  # the last deal whose record was written

    def cols(self) -> int:
        """The terminal's width now (or the width given)."""
        return max(8, self.fixed_width or _term_width(self.out))
    def rows(self) -> int:
        """The terminal's height now."""
        return _term_rows(self.out)

    # the match -------------------------------------------------------------------------
    def run(self) -> int:
        """Play the match; returns the exit code (0; 130 after Ctrl-C; 128 + the signal after
        SIGTERM or SIGHUP). However it stops, the deal in progress is saved as unfinished."""
        code = 0
        failed: BaseException | None = None
        try:
            os.makedirs(self.out_dir, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write records to {self.path!r}: {e.strerror or e}") \
                from None
        old = None
        if self.asker.timeout is not None and use_alarm():
            old = signal.signal(signal.SIGALRM, self.asker.on_alarm)
            self.asker.alarm = True
        stops = _catch_stop_signals()  # `kill`, a closed terminal: saved as Ctrl-C is
        try:
            for i in range(self.deals):
                self.index = i
                self.play_deal(i)
                if i + 1 < self.deals:
                    self.ask_line("Enter: next deal, q: stop> ", lambda t: t.strip().lower()
                                  not in ("q", "quit"))
        except _Stop:
            self.save_unfinished("end of input" if not self._quit else "quit")
        except KeyboardInterrupt:
            self.save_unfinished("Ctrl-C")
            code = 130
        except _Signalled as e:
            _ignore_stop_signals()  # a second one must not cut the saving short
            self.save_unfinished(e.name)
            code = 128 + e.signum
        except StrategyError as e:  # a bot raised, overran its time or played illegally
            self.save_unfinished("a bot failed")
            failed = e
        except BaseException as e:  # anything else: the deal so far is still saved
            self.save_unfinished(f"{type(e).__name__}")
            failed = e
        finally:
            if old is not None:
                signal.signal(signal.SIGALRM, old)
                self.asker.alarm = False
            self.asker.close()
            self.file.close()
            _restore_signals(stops)
        self.summary()
        if failed is not None:
            raise failed  # the CLI's one line and exit code 2, after the records are saved
        return code

    def save_unfinished(self, why: str) -> None:
        deal = self.deal
        if deal is not None and deal.done and self._saved_deal is not deal:
            self.save(deal.record())  # stopped between its last move and its saving
            self.write(f"\nstopped ({why}): deal {deal.deal} is saved\n")
            return
        if deal is None or deal.done:
            self.write(f"\nstopped ({why})\n")
            return
        self.file.write(dumps(unfinished_record(deal)) + "\n")
        self.file.flush()
        self._saved_deal = deal
        self.saved += 1
        self.write(f"\nstopped ({why}): the unfinished deal {deal.deal} is saved\n")

    def save(self, rec: dict[str, Any]) -> None:
        """Append a finished deal's record (flushed at once)."""
        self.file.write(dumps(rec) + "\n")
        self.file.flush()
        self._saved_deal = self.deal
        self.saved += 1

    def play_deal(self, d: int) -> None:
        self.deal = deal = Deal(self.seed, d, self.rules, self.specs)
        self.last_trick = None
        self.log.clear()
        for s, b in enumerate(self.bots):
            if s != self.seat:
                self.asker.guard(b, s, deal, "begin_deal", b.begin_deal, s, deal.seed, d)
        self.hinter.begin_deal(self.seat, deal.seed, d)
        self.step = 0
        if not self.full:
            self.write(f"\n=== Deal {d + 1} of {self.deals} (seed {self.seed}) — you are seat "
                       f"{self.seat}; partner seat {(self.seat + 2) % 4} "
                       f"({self.specs[(self.seat + 2) % 4]}), opponents "
                       f"{self.specs[(self.seat + 1) % 4]}, {self.specs[(self.seat + 3) % 4]}\n")
        self.narrate_rounds(0, 0, deal.observation(self.seat))
        while not deal.done:
            seat, kind = deal.to_act
            before = deal.observation(self.seat)
            b = Snap(before)
            if seat == self.seat:
                choice = self.ask_person(kind)
            else:
                bot = self.bots[seat]
                legal = deal.legal()
                choice = self.asker.guard(bot, seat, deal, "choose", bot.choose,
                                           deal.observation(seat), legal)
                try:
                    deal.apply(choice)
                except IllegalPlayError as e:
                    raise StrategyError(f"strategy {bot.spec()!r} in seat {seat} returned an "
                                        f"illegal choice: {e}") from None
            self.narrate(b, deal.observation(self.seat), seat, kind, choice)
            self.step += 1
        rec = deal.record()
        for s, b in enumerate(self.bots):  # a bot in another process hears the deal's end
            if s != self.seat and getattr(b, "external", False):
                b.end_deal(deal.observation(s), rec["settlement"], rec["attacker_score"],
                           rec["void"])
        self.save(rec)
        self.played += 1
        self.void += rec["void"]
        for s in range(4):
            self.skill[s] += rec["settlement"][s]
        self.deal_over(rec)
        if self.review_on:
            self.review(rec)

    # asking the person -----------------------------------------------------------------
    def read_line(self, prompt: str) -> str:
        self.write(prompt)
        line = self.stdin.readline()
        if not line:
            raise _Stop
        return line

    def ask_line(self, prompt: str, go_on: Any) -> None:
        if self.full and not self._hold:
            self.redraw()
        self._hold = False
        if not go_on(self.read_line(prompt)):
            self._quit = True
            self.deal = None
            raise _Stop

    def ask_person(self, kind: str) -> Any:
        deal = self.deal
        legal = deal.legal()
        self.forced = len(legal) == 1
        if self.forced:  # nothing to decide: played for the person, and narrated so
            deal.apply(legal[0])
            return legal[0]
        q = self.question(kind)
        choices = self.choices_lines(kind, legal)
        listed = kind != "giveback" or len(legal) <= MAX_LISTED
        while True:
            if self.full:
                self.redraw([self.p.c(q, BOLD)], choices, [self.notice] if self.notice else [])
            else:
                self.write("\n".join(self.status_lines()[2:] + [self.p.c(q, BOLD), *choices]
                                     + ([self.notice] if self.notice else [])) + "\n")
            self.notice = ""
            text = self.read_line("> ")
            ans = parse_answer(text, kind, legal)
            if ans.action == "choice":
                try:
                    deal.apply(ans.choice)
                except IllegalPlayError as e:
                    msg = str(e).replace(f" by seat {self.seat}", "")
                    self.notice = self.p.c(f"✗ {msg}", RED)
                    continue
                return ans.choice
            if ans.action == "error":
                self.notice = self.p.c(f"✗ {ans.message}", RED)
            elif ans.action == "help":
                self.notice = HELP
            elif ans.action == "hint":
                self.notice = self.fitted_hint(kind, legal, listed and not self.choices_cut,
                                               q, choices)
            elif ans.action == "tricks":
                tricks = deal.observation(self.seat).tricks
                self.notice = "\n".join(self.trick_line(t, n) for n, t in
                                        enumerate(tricks, 1)) or "no trick finished yet"
            elif ans.action == "quit":
                self._quit = True
                raise _Stop
            if not self.full and self.notice:
                self.write(self.notice + "\n")
                self.notice = ""

    def analyse_now(self, kind: str) -> dict[str, Any]:
        """``analyze.choice_values`` of the decision awaited, computed from the person's
        seat's masked state (R9: the others' hands are removed before anything is read)."""
        deal = self.deal
        mst = np.empty(S.ST_SIZE, dtype=np.int64)
        mu = np.empty(S.U_SIZE, dtype=np.uint64)
        mask_into(*deal.engine[:2], self.seat, mst, mu)
        codes = list(deal.legal_codes())
        dec = Decision(deal.deal, self.step, self.seat, kind, mst, mu, codes, codes[0], 0, 0, 0)
        return choice_values(dec, self.rules.array(), Settings(samples=self.samples))

    def fitted_hint(self, kind: str, legal: list[Any], listed: bool, q: str,
                    choices: list[str]) -> str:
        """The hint, with as many analysed choices as the screen holds (full screen) without
        cutting the numbered choices it cites off the screen."""
        try:
            analysis = self.analyse_now(kind)
        except ShuangkouError as e:  # pragma: no cover - a state the analysis cannot take
            return self.hint(kind, legal, listed) + f"\n(no analysis: {e})"
        if not self.full:
            return self.hint(kind, legal, listed, analysis)
        n = len(analysis["choices"])
        top = min(n, HINT_ALL if n <= HINT_ALL else HINT_TOP)
        for numbered in ((True, False) if listed else (False,)):
            for limit in range(top, -1, -1):
                text = self.hint(kind, legal, numbered, analysis, limit)
                fits, cut = self.redraw([self.p.c(q, BOLD)], choices, [text], write=False)
                if fits and (not numbered or not cut):
                    return text
        return self.hint(kind, legal, False)

    # the review after a deal -------------------------------------------------------------
    def viewer_path(self, rec: dict[str, Any]) -> str:
        stem = os.path.splitext(os.path.basename(self.path))[0]
        return os.path.join(self.out_dir, f"{stem}-deal{rec['deal']}.html")

    def review(self, rec: dict[str, Any]) -> None:
        """The person's decisions of the finished deal ``rec`` analysed (``shuangkou
        analyze``'s rows for the person's seat), the total, and the deal viewer page with that
        analysis. Ctrl-C skips it (the deal is already saved); it stops after
        ``review_seconds`` of analysis, between decisions."""
        if rec["void"]:
            return
        self._hold = self.full
        path = self.viewer_path(rec)
        try:
            self._review(rec, path)
        except KeyboardInterrupt:
            try:
                os.remove(path + ".partial")
            except OSError:
                pass
            self.write(f"\nreview skipped (Ctrl-C); deal {rec['deal']} is saved\n")

    def _review(self, rec: dict[str, Any], path: str) -> None:
        settings = Settings(samples=self.samples)
        rows: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.review_seconds
        tasks = tasks_of([rec], [self.seat])
        self.write(("\n" if self.full else "") + f"Reviewing your {len(tasks)} decisions "
                   f"({self.samples} worlds each; Ctrl-C skips) …\n")
        for t in tasks:
            if time.monotonic() >= deadline:
                break
            rows.append(run_task((t, settings)))
        lines = self.review_lines(rec, rows, settings)
        if len(rows) < len(tasks):
            lines.append(f"(review cut short at {self.review_seconds:g} s: {len(rows)} of "
                         f"{len(tasks)} decisions analysed)")
        try:
            text = viewer.page([rec], rows, title=f"Deal {rec['deal']} (seed {rec['seed']}): "
                               f"your review, seat {self.seat}",
                               note=f"continuation {settings.policy}, {settings.samples} "
                                    f"worlds per decision, analysis seed {settings.seed}; "
                                    f"values and losses in settlement points per player "
                                    f"(docs/analysis.md)")
            partial = path + ".partial"
            with open(partial, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(partial, path)
            lines.append(f"deal viewer with this review: {path}")
        except (OSError, ShuangkouError) as e:
            lines.append(f"(the deal viewer could not be written to {path}: {e})")
        if self.full:  # broken at the terminal's width between items, as the screen is
            lines = [r for x in lines for r in fit(x, self.cols())]
        self.write("\n".join(lines) + "\n")


def _term_rows(stream: IO[str]) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).lines
    except (OSError, AttributeError, ValueError):
        return 40


def _term_width(stream: IO[str]) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, AttributeError, ValueError):
        return 100


# --- the command -----------------------------------------------------------------------
def check_delay(delay: Any) -> float:
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or \
            not math.isfinite(delay) or not 0 <= delay <= 60:
        raise ConfigError(f"--delay {delay!r} must be seconds in 0 … 60 (0: no pause)")
    return float(delay)


def check_samples(samples: Any) -> int:
    if isinstance(samples, bool) or not isinstance(samples, int) or not 2 <= samples <= 4096:
        raise ConfigError(f"--samples {samples!r} must be a whole number of worlds in 2 … 4096")
    return samples


def make_bots(seat: int, partner: str, opponents: str) -> list[Strategy]:
    """The four seats' strategies: ``partner`` opposite ``seat``; ``opponents`` is one spec
    for both, or two (comma-separated: the seat after the person's, then the one before)."""
    if seat not in (0, 1, 2, 3):
        raise ConfigError(f"--seat {seat!r} must be 0, 1, 2 or 3")
    opp = split_specs(opponents)
    if len(opp) == 1:
        opp = opp * 2
    if len(opp) != 2:
        raise ConfigError(f"--opponents {opponents!r}: give one strategy spec or two, "
                          f"comma-separated")
    part = split_specs(partner)
    if len(part) != 1:
        raise ConfigError(f"--partner {partner!r}: give one strategy spec")
    bots: list[Strategy | None] = [None] * 4
    bots[(seat + 2) % 4] = make(part[0])
    bots[(seat + 1) % 4] = make(opp[0])
    bots[(seat + 3) % 4] = make(opp[1])
    for s, b in enumerate(bots):
        if b is not None and b.oracle:
            raise ConfigError(f"strategy {b.spec()!r} sees every hand (an analysis oracle): "
                              f"it cannot sit at a table with a person")
    bots[seat] = bots[(seat + 2) % 4]  # a placeholder: the person's seat is never asked
    return bots  # type: ignore[return-value]


def default_out() -> str:
    return os.path.join("results", "human", time.strftime("%Y%m%d-%H%M%S"))


def run(seat: int = 0, partner: str = "greedy", opponents: str = "ismcts",
        seed: int | None = None, deals: int = 1, rules: Rules | None = None,
        delay: float = 0.4, timeout: float | None = 60, out: str | None = None,
        plain: bool = False, review: bool = True, samples: int = DEFAULT_SAMPLES) -> int:
    """``shuangkou human``: returns the exit code."""
    delay = check_delay(delay)
    samples = check_samples(samples)
    bots = make_bots(seat, partner, opponents)
    if seed is None:
        seed = int.from_bytes(os.urandom(3), "big")
    seed = check_seed(seed)
    session = Session(seat, bots, seed, deals, rules or Rules(), out or default_out(),
                      delay=delay, timeout=timeout, full=False if plain else None,
                      review=review, samples=samples)
    if getattr(sys.stdin, "errors", None) == "strict" and hasattr(sys.stdin, "reconfigure"):
        try:  # an answer the terminal's encoding cannot decode is refused, not a crash
            sys.stdin.reconfigure(errors="replace")
        except (ValueError, OSError):  # pragma: no cover - a stream that cannot change
            pass
    return session.run()
