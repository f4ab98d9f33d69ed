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

from sim.api import trick_winner
from sim.cards import CARD_NAMES, GROUP, KEY_OF_ID, SUITS, TRUMP_GROUP, parse_card
from sim.core.console import width as text_width
from sim.core.engine import S_DECK, S_NTRICKS, S_REDEALS, S_ROUND, S_TRUMP
from sim.deal import Deal
from sim.errors import (
    ConfigError,
    IllegalPlayError,
    InvalidCardError,
    OutputError,
    ShuangkouError,
    StrategyError,
)
from sim.loops.runner import Asker, check_timeout, use_alarm
from sim.observation import Observation
from sim.record import FORMAT, call_dicts, dumps, hands_of, trick_dicts
from sim.rules import Rules
from sim.titles import level_text
from sim.tools.analyze import DEFAULT_SAMPLES  # worlds per decision for hint and review
from strategies.base import Strategy
from strategies.registry import make, split_specs

HUMAN = "human"  # the person's seat in a record's ``seats``
REVIEW_SECONDS = 60.0  # a review stops after this much analysis (between decisions)
HINT_ALL = 12  # a hint lists every choice up to this many, else the best HINT_TOP
HINT_TOP = 8

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


# --- drawing ---------------------------------------------------------------------------
_SYM = dict(zip(SUITS, "♠♥♦♣"))
_RED = "\x1b[31m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_YELLOW = "\x1b[33m"
_RESET = "\x1b[0m"
CLEAR = "\x1b[H\x1b[2J"
_MAX_LISTED = 40  # give-backs beyond this many are typed, not listed
_CHOICE_NO = re.compile(r"(?:^|  )\d+\) ")  # a numbered choice on a row of wrap_items


def use_color(stream: IO[str]) -> bool:
    """Colours on a terminal unless ``NO_COLOR`` is set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR") and _isatty(stream)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Painter:
    """Cards and hands as text, with or without colour."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def c(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def card(self, name: str, rank_only: bool = False) -> str:
        if name in ("BJ", "SJ"):
            return self.c(name, _RED) if name == "BJ" else name
        r = "10" if name[0] == "T" else name[0]
        text = r if rank_only else r + _SYM[name[1]]
        return self.c(text, _RED) if name[1] in "hd" else text

    def cards(self, names: Sequence[str]) -> str:
        return " ".join(self.card(n) for n in names)

    def hand(self, names: Sequence[str], trump: str | None) -> str:
        """Grouped by suit, strongest first; trumps last under a marked label once known."""
        if trump is None:  # calling: by suit, A high (no trump yet), jokers last
            order = "AKQJT98765432"
            groups = []
            for s in SUITS:
                cs = sorted((n for n in names if n not in ("BJ", "SJ") and n[1] == s),
                            key=lambda n: order.index(n[0]))
                if cs:
                    groups.append(self._sym(s) + " "
                                  + " ".join(self.card(n, True) for n in cs))
            jokers = sorted((n for n in names if n in ("BJ", "SJ")), reverse=False)
            if jokers:
                groups.append(" ".join(self.card(n) for n in jokers))
            return "   ".join(groups)
        t = SUITS.index(trump)
        keyed = sorted(((int(KEY_OF_ID[t, parse_card(n)]), n) for n in names), reverse=True)
        side: dict[str, list[str]] = {}
        trumps: list[str] = []
        for k, n in keyed:
            if GROUP[k] == TRUMP_GROUP:
                trumps.append(self.card(n))
            else:
                side.setdefault(n[1], []).append(self.card(n, True))
        parts = [self._sym(s) + " " + " ".join(side[s]) for s in SUITS if s in side]
        if trumps:
            parts.append(self.c(f"trump {_SYM[trump]}:", _BOLD + _YELLOW) + " "
                         + " ".join(trumps))
        return "   ".join(parts)

    def _sym(self, s: str) -> str:
        return self.c(_SYM[s], _RED) if s in "hd" else _SYM[s]


def choice_text(choice: Any, kind: str, p: Painter) -> str:
    if kind == "show":
        return "pass" if choice is None else f"show {p.card(choice)} {p.card(choice)}"
    return p.cards(choice)


def wrap_items(items: Sequence[str], width: int, indent: str = "  ") -> list[str]:
    """Items joined by two spaces, wrapped at ``width`` visible characters."""
    lines: list[str] = []
    cur, n = indent, len(indent)
    for it in items:
        w = text_width(it)
        if n > len(indent) and n + 2 + w > width:
            lines.append(cur)
            cur, n = indent, len(indent)
        if n > len(indent):
            cur += "  "
            n += 2
        cur += it
        n += w
    if n > len(indent):
        lines.append(cur)
    return lines


_ANSI = re.compile(r"(\x1b\[[0-9;]*m)")


def _cut(word: str, room: int) -> tuple[str, str]:
    """The longest head of ``word`` of at most ``room`` columns (at least one character; colour
    codes kept whole), and the rest."""
    head, n = "", 0
    for k, part in enumerate(_ANSI.split(word)):
        if k % 2:  # a colour code
            head += part
            continue
        for j, ch in enumerate(part):
            w = text_width(ch)
            if n and n + w > room:
                rest = part[j:] + "".join(_ANSI.split(word)[k + 1:])
                return head, rest
            head += ch
            n += w
    return head, ""


def fit(line: str, width: int) -> list[str]:
    """``line`` as terminal rows of at most ``width`` columns: broken between items (two or
    more spaces apart: seats, suit groups, choices) where that is enough, else between words,
    else inside a word; continuation rows indented by two spaces when the width allows."""
    width = max(1, width)
    if text_width(line) <= width:
        return [line]
    indent = "  " if width >= 12 else ""
    out: list[str] = []
    cur, n, fresh = "", 0, True  # fresh: nothing on this row yet but its indent

    def newline() -> None:
        nonlocal cur, n, fresh
        out.append(cur)
        cur, n, fresh = indent, len(indent), True

    def put(token: str, sep: str) -> None:
        nonlocal cur, n, fresh
        if not token:
            return
        w = text_width(token)
        if not fresh and n + len(sep) + w > width:
            newline()
        if fresh:
            sep = ""
        if n + len(sep) + w <= width:
            cur += sep + token
            n += len(sep) + w
            fresh = False
            return
        words = re.split(r"( +)", token)
        if len(words) > 1:  # an item wider than a row: by words
            put(words[0], sep)
            for i in range(1, len(words), 2):
                put(words[i + 1], words[i])
            return
        rest = token
        while rest:  # one word wider than a row: cut it
            room = width - n - len(sep)
            if not fresh and room < 1:
                newline()
                sep, room = "", width - n
            piece, rest2 = _cut(rest, room)
            if text_width(piece) > room:  # not even its first character fits
                if fresh:  # only an indent on this row: give it up
                    cur, n = "", 0
                else:
                    newline()
                    sep = ""
                piece, rest2 = _cut(rest, width - n)
            rest = rest2
            cur += sep + piece
            n += len(sep) + text_width(piece)
            sep, fresh = "", False

    body = line.lstrip(" ")
    cur = n = len(line) - len(body)  # the line's own indent stays
    cur, n = line[:n] if n < width else "", n if n < width else 0
    parts = re.split(r"( {2,})", body.rstrip(" "))
    put(parts[0], "")
    for i in range(1, len(parts), 2):
        put(parts[i + 1], parts[i])
    if not fresh:
        out.append(cur)
    return out


# --- partial deals -----------------------------------------------------------------------
def unfinished_record(deal: Deal) -> dict[str, Any]:
    """The record of a deal stopped part way (docs/record.md, "Unfinished deals")."""
    st, u, _ = deal.engine
    names = CARD_NAMES
    trump = int(st[S_TRUMP])
    playing = trump >= 0
    rec: dict[str, Any] = {
        "format": FORMAT, "seed": deal.seed, "deal": deal.deal,
        "rules": deal.rules.to_dict(), "seats": list(deal.seats),
        "redeals": int(st[S_REDEALS]), "void": False,
        "deck": [names[c] for c in st[S_DECK:S_DECK + 108]],
        "calls": call_dicts(st),
        "caller": None, "trump": None, "attackers": None,
        "hands": ([[names[c] for c in h] for h in hands_of(st, u)] if playing
                  else [deal.hand(s) for s in range(4)]),
        "tricks": trick_dicts(st, trump, 0, int(st[S_NTRICKS])) if playing else [],
        "attacker_points": None, "last_trick_multiplier": None, "attacker_score": None,
        "settlement": [0, 0, 0, 0],
        "unfinished": True, "dealt_rounds": int(st[S_ROUND]), "current_trick": None,
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


class Session:
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
        tty = _isatty(self.out)
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

    # names -----------------------------------------------------------------------------
    def who(self, s: int) -> str:
        if s == self.seat:
            return "you"
        rel = {2: "partner", 1: "opp", 3: "opp"}[(s - self.seat) % 4]
        return f"seat {s} ({rel})"

    def leads(self, s: int) -> str:
        """``you lead`` or ``seat 1 (opp) leads``."""
        return f"{self.who(s)} lead{'' if s == self.seat else 's'}"

    def Who(self, s: int) -> str:  # noqa: N802 - sentence start
        w = self.who(s)
        return w[0].upper() + w[1:]

    # output ----------------------------------------------------------------------------
    def write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:  # the terminal is gone (SIGHUP, a closed pipe): the records still are
            self._gone = True

    def event(self, line: str, pause: float = 1.0) -> None:
        """Something happened: logged and shown; then a pause of ``pause`` x ``--delay``."""
        self.log.append(line)
        if self.full:
            self.redraw()
        else:
            self.write(line + "\n")
        if self.delay and pause:
            time.sleep(self.delay * pause)

    def cols(self) -> int:
        """The terminal's width now (or the width given)."""
        return max(8, self.fixed_width or _term_width(self.out))

    def redraw(self, question: Sequence[str] = (), choices: Sequence[str] = (),
               notice: Sequence[str] = (), write: bool = True) -> tuple[bool, bool]:
        """The whole screen, every line fitted to the terminal's width (a line wider than the
        terminal would wrap there and push the top off), and as much of the log as the rows
        allow. On a small terminal the less needed lines go first (the log, the last trick,
        the seats, the second row of the header …) and then the numbered choices are cut
        short; never the hand or the question. Returns (everything fits, the choices were cut
        short); ``write=False`` only measures."""
        width = self.cols()
        rows = _term_rows(self.out)
        items = self.status_items()
        rule = self.p.c("─" * min(width, 78), _DIM)

        def rows_of(lines: Sequence[str]) -> list[str]:
            return [r for x in lines for block in x.split("\n") for r in fit(block, width)]

        q_rows, c_rows, n_rows = rows_of(question), rows_of(choices), rows_of(notice)
        choices_cut = False  # set when not every numbered choice is on screen
        # the screen ends in a newline, then the prompt's row: the rest gets rows - 1
        avail = rows - 1
        for drop in ((), ("last",), ("last", "seats"), ("last", "seats", "winning"),
                     ("last", "seats", "winning", "header1"),
                     ("last", "seats", "winning", "header1", "trick"),
                     ("last", "seats", "winning", "header1", "trick", "state")):
            top = [r for t, x in items if t not in drop
                   for r in (fit(x, width)[:1] if t == "header" and "header1" in drop
                             else fit(x, width))] + [rule]
            if len(top) + len(q_rows) + len(c_rows) + len(n_rows) <= avail:
                break
            room = avail - len(top) - len(q_rows) - len(n_rows)
            if room >= 2 and c_rows:  # the choices cut short before more of the table goes
                cut = self._cut_choices(c_rows, room, width)
                choices_cut = cut != c_rows
                c_rows = cut
                break
        log_room = max(0, avail - len(top) - len(q_rows) - len(c_rows) - len(n_rows))
        log_rows = rows_of(self.log)
        lines = top + (log_rows[-log_room:] if log_room else []) + q_rows + c_rows + n_rows
        fits = len(top) + len(q_rows) + len(c_rows) + len(n_rows) <= avail
        if write:
            self.choices_cut = choices_cut
            self.write(CLEAR + "\n".join(lines) + "\n")
        return fits, choices_cut

    @staticmethod
    def _cut_choices(c_rows: list[str], room: int, width: int) -> list[str]:
        """The numbered choices' rows cut to ``room`` rows, the last saying how many more
        there are (cards can always be typed)."""
        n_all = sum(len(_CHOICE_NO.findall(r)) for r in c_rows)
        shown = c_rows[:room - 1]
        n_shown = sum(len(_CHOICE_NO.findall(r)) for r in shown)
        if n_shown == n_all:
            return c_rows[:room]
        return shown + fit(f"  … {n_all - n_shown} more: type the cards (or hint)", width)[:1]

    def status_lines(self) -> list[str]:
        """The table as the person's seat sees it (R9)."""
        return [x for _, x in self.status_items()]

    def status_items(self) -> list[tuple[str, str]]:
        """``status_lines`` tagged by what each line is (redraw drops the less needed first on
        a small terminal): header, seats, state, trick, winning, last, hand."""
        deal = self.deal
        p = self.p
        out = [("header", p.c(f"Shuangkou — deal {self.index + 1} of {self.deals} "
                              f"(seed {self.seed}, deal {deal.deal if deal else self.index})",
                              _BOLD))]
        out.append(("seats", "  ".join(f"{s}:{'YOU' if s == self.seat else self.specs[s]} "
                                       f"{self.skill[s]} {level_text(self.skill[s])}"
                                       for s in range(4))))
        if deal is None:
            return out
        obs = deal.observation(self.seat)
        trump = obs.trump
        if trump is None:
            shown = obs.shown
            table = "no pair shown yet" if shown is None else \
                f"on the table: {p.card(shown[1])} {p.card(shown[1])} by {self.who(shown[0])}"
            redeal = f", redeal {obs.redeals}" if obs.redeals else ""
            out.append(("state", f"Calling — dealing round {obs.round} of 27{redeal}; {table}"))
        else:
            att = obs.attackers
            side = "you attack" if self.seat in att else "you defend"
            a_pts = sum(t["points"] for t in obs.tricks if t["winner"] in att)
            d_pts = sum(t["points"] for t in obs.tricks if t["winner"] not in att)
            out.append(("state", f"Trump {p._sym(trump)} ({trump}) · caller "
                                 f"{self.who(obs.caller)} · attackers {att[0]}&{att[1]} "
                                 f"({side}) · points: attackers {a_pts}, defenders {d_pts}"))
            n = len(obs.tricks)
            trick = obs.trick
            if trick:
                leader = obs.leader
                w = (leader + trick_winner(trick, trump)) % 4  # R20, R21
                plays = "  ".join(f"{self.who((leader + k) % 4)}: {p.cards(c)}"
                                  + (p.c(" ◀", _BOLD) if (leader + k) % 4 == w else "")
                                  for k, c in enumerate(trick))
                out.append(("trick", f"Trick {n + 1}: led by {self.who(leader)} — {plays}"))
                out.append(("winning", f"  winning: {self.who(w)}"))
            elif obs.hand:
                leader = obs.leader if obs.leader is not None else (obs.caller + 1) % 4
                out.append(("trick", f"Trick {n + 1}: {self.who(leader)} to lead"))
                if self.last_trick is not None:
                    out.append(("last", "  last: " + self.trick_line(self.last_trick, n)))
        hand = obs.hand
        out.append(("hand", p.c(f"Your hand ({len(hand)}):", _BOLD) + " "
                    + p.hand(hand, trump)))
        return out

    def trick_line(self, t: dict[str, Any], n: int) -> str:
        plays = "  ".join(f"{(t['leader'] + k) % 4}:{self.p.cards(c)}"
                          for k, c in enumerate(t["plays"]))
        return f"trick {n}: {plays} → {self.who(t['winner'])} +{t['points']}"

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

    def summary(self) -> None:
        lines = [f"Match: {self.played} deal(s) played"
                 + (f", {self.void} void" if self.void else "")
                 + f" (seed {self.seed})"]
        for s in range(4):
            change = self.skill[s] - self.rules.start_skill
            lines.append(f"  seat {s} {'YOU' if s == self.seat else self.specs[s]:<12} "
                         f"{change:+d}  skill {self.skill[s]} {level_text(self.skill[s])}")
        if self.saved:
            lines.append(f"records: {self.path} ({self.saved} deal(s); shuangkou replay "
                         f"{self.path})")
        else:
            lines.append("no deal to save")
        self.write("\n".join(lines) + "\n")

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
            b = _Snap(before)
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
        self.save(rec)
        self.played += 1
        self.void += rec["void"]
        for s in range(4):
            self.skill[s] += rec["settlement"][s]
        self.deal_over(rec)
        if self.review_on:
            self.review(rec)

    # narration -------------------------------------------------------------------------
    def narrate_rounds(self, r0: int, redeals0: int, obs: Observation) -> None:
        deal = self.deal
        r1 = obs.round
        if obs.redeals > redeals0:
            self.event(f"Nobody showed: the cards are shuffled and dealt again (R11), "
                       f"redeal {obs.redeals}")
            r0 = 0
        for r in range(r0 + 1, r1 + 1):
            card = CARD_NAMES[int(deal.engine[0][S_DECK + 4 * (r - 1) + self.seat])]
            self.event(f"round {r}: you get {self.p.card(card)}", 0.15)

    def narrate(self, b: "_Snap", obs: Observation, seat: int, kind: str, choice: Any) -> None:
        p = self.p
        if kind == "show":
            calls = obs.calls
            if len(calls) > b.ncalls and obs.redeals == b.redeals:
                c = calls[-1]
                line = f"{self.Who(seat)} {'show' if seat == self.seat else 'shows'} " \
                       f"{p.card(c['pair'])} {p.card(c['pair'])} (R6)"
                took = c["took_from"]
                if took is not None:
                    whose = "your pair" if took == self.seat else f"the pair of {self.who(took)}"
                    line += f", taking {whose} (R8)"
                elif b.shown is not None and b.shown[0] == seat:
                    line += " over its own pair: nothing moves (R8)"
                self.event(line)
            else:
                forced = " (no pair you could show: passed for you)" \
                    if seat == self.seat and self.forced else ""
                self.event(f"{self.Who(seat)} {'pass' if seat == self.seat else 'passes'}"
                           f"{forced}", 0.3)
        elif kind == "giveback":
            c = obs.calls[-1]
            to = c["took_from"]
            if seat == self.seat:
                forced = " (your only choice)" if self.forced else ""
                self.event(f"You give back {p.cards(c['gave'])} to {self.who(to)} (R8)"
                           f"{forced}")
            elif to == self.seat:
                self.event(f"{self.Who(seat)} gives you back {p.cards(c['gave'])} (R8)")
            else:
                self.event(f"{self.Who(seat)} gives two cards back to {self.who(to)} "
                           f"(unseen, R9)")
        elif kind == "play":
            verb = ("lead" if b.trick_len == 0 else "play") + ("" if seat == self.seat else "s")
            forced = " — your only legal play, played for you" \
                if seat == self.seat and self.forced else ""
            self.event(f"{self.Who(seat)} {verb} {p.cards(choice)}{forced}",
                       1.0 if not forced else 1.5)
            tricks = obs.tricks
            if len(tricks) > b.ntricks:
                t = tricks[-1]
                self.last_trick = t
                side = "attackers" if t["winner"] in obs.attackers else "defenders"
                self.event(f"  trick {len(tricks)}: {self.who(t['winner'])} win"
                           f"{'' if t['winner'] == self.seat else 's'} "
                           f"+{t['points']} for the {side} (R20-R22)", 1.5)
        if obs.trump is not None and b.trump is None:
            att = obs.attackers
            self.event(f"Calling over: caller {self.who(obs.caller)}, trump "
                       f"{p._sym(obs.trump)} ({obs.trump}); attackers seats {att[0]} & {att[1]}"
                       f" ({'you attack' if self.seat in att else 'you defend'}) (R10); "
                       f"{self.leads((obs.caller + 1) % 4)} (R17)", 1.5)
        elif obs.trump is None:
            self.narrate_rounds(b.round, b.redeals, obs)

    def deal_over(self, rec: dict[str, Any]) -> None:
        if rec["void"]:
            self.event("Nobody showed after the last redeal: the deal is void (R11)", 0)
        else:
            att = rec["attackers"]
            mult = rec["last_trick_multiplier"]
            last = f", last trick x{mult} (R23)" if mult > 1 else ""
            self.event(f"Deal over: attackers {att[0]}&{att[1]} took {rec['attacker_points']} "
                       f"points{last}: score {rec['attacker_score']} (R22-R23)", 0)
            self.event("Settlement (R24): " + ", ".join(
                f"{self.who(s)} {v:+d}" for s, v in enumerate(rec["settlement"]))
                + f" — your skill {self.skill[self.seat]} "
                + level_text(self.skill[self.seat]), 0)

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

    def question(self, kind: str) -> str:
        deal = self.deal
        if kind == "show":
            shown = deal.observation(self.seat).shown
            over = "" if shown is None else f" over {self.p.cards([shown[1]] * 2)}"
            return f"Show a pair{over} or pass?"
        if kind == "giveback":
            to = deal.giving_to
            return f"Hand back two cards to {self.who(to)} (not the pair you just showed, R8)"
        trick = deal.observation(self.seat).trick
        if not trick:
            return "Your lead: one card or one pair (R16)"
        lead = self.p.cards(trick[0])
        if len(trick[0]) == 1:
            return f"Your play to {lead}: one card, of the led group if you hold one (R18)"
        return f"Your play to {lead}: two cards, a pair of the led group if you can (R19)"

    def choices_lines(self, kind: str, legal: list[Any]) -> list[str]:
        if kind == "giveback" and len(legal) > _MAX_LISTED:
            return [f"  {len(legal)} possible: type two cards, e.g. "
                    f"{' '.join(legal[0])} (or hint)"]
        items = [f"{i}) {choice_text(c, kind, self.p)}" for i, c in enumerate(legal, 1)]
        return wrap_items(items, min(self.cols(), 100))

    def typed(self, choice: Any, kind: str) -> str:
        """How to type ``choice`` (card notation, R2)."""
        if kind == "show":
            return "pass" if choice is None else f"{choice} {choice}"
        return " ".join("10" + c[1] if c[0] == "T" else c for c in choice)

    def ask_person(self, kind: str) -> Any:
        deal = self.deal
        legal = deal.legal()
        self.forced = len(legal) == 1
        if self.forced:  # nothing to decide: played for the person, and narrated so
            deal.apply(legal[0])
            return legal[0]
        q = self.question(kind)
        choices = self.choices_lines(kind, legal)
        listed = kind != "giveback" or len(legal) <= _MAX_LISTED
        while True:
            if self.full:
                self.redraw([self.p.c(q, _BOLD)], choices, [self.notice] if self.notice else [])
            else:
                self.write("\n".join(self.status_lines()[2:] + [self.p.c(q, _BOLD), *choices]
                                     + ([self.notice] if self.notice else [])) + "\n")
            self.notice = ""
            text = self.read_line("> ")
            ans = parse_answer(text, kind, legal)
            if ans.action == "choice":
                try:
                    deal.apply(ans.choice)
                except IllegalPlayError as e:
                    msg = str(e).replace(f" by seat {self.seat}", "")
                    self.notice = self.p.c(f"✗ {msg}", _RED)
                    continue
                return ans.choice
            if ans.action == "error":
                self.notice = self.p.c(f"✗ {ans.message}", _RED)
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

    def hint(self, kind: str, legal: list[Any], listed: bool,
             analysis: dict[str, Any] | None = None, limit: int | None = None) -> str:
        """What ``greedy`` would answer, then the analysis of the decision (``analysis``, from
        ``analyse_now``): every legal choice's value with its interval, best first, at most
        ``limit`` of them. A choice's number is cited only where ``listed`` (the choices are
        numbered on screen), and how to type it always."""
        deal = self.deal
        hint = self.hinter.choose(deal.observation(self.seat), deal.legal())
        text = choice_text(hint, kind, self.p)
        typed = self.typed(hint, kind)
        if listed and hint in legal:
            n = legal.index(hint) + 1
            first = f"hint: greedy would answer {n}) {text} (type {n} or {typed})"
        else:
            verb = "hand back" if kind == "giveback" else "answer"
            first = f"hint: greedy would {verb} {text} (type {typed})"
        if analysis is None:
            return first
        return "\n".join([first] + self.value_lines(kind, legal, listed, analysis, limit))

    def analyse_now(self, kind: str) -> dict[str, Any]:
        """``analyze.choice_values`` of the decision awaited, computed from the person's
        seat's masked state (R9: the others' hands are removed before anything is read)."""
        from sim.core.engine import ST_SIZE, U_SIZE
        from sim.tools.analyze import Decision, Settings, choice_values
        from sim.view import mask_into

        deal = self.deal
        mst = np.empty(ST_SIZE, dtype=np.int64)
        mu = np.empty(U_SIZE, dtype=np.uint64)
        mask_into(*deal.engine[:2], self.seat, mst, mu)
        codes = list(deal.legal_codes())
        dec = Decision(deal.deal, self.step, self.seat, kind, mst, mu, codes, codes[0], 0, 0, 0)
        return choice_values(dec, self.rules.array(), Settings(samples=self.samples))

    def value_lines(self, kind: str, legal: list[Any], listed: bool,
                    analysis: dict[str, Any], limit: int | None) -> list[str]:
        rows = analysis["choices"]
        n = len(rows)
        if analysis["worlds"] == 0:
            return []
        if limit is None:
            limit = n if n <= HINT_ALL else HINT_TOP
        order = sorted(range(n), key=lambda i: (-rows[i]["value"], i))
        head = (f"values: your team's settlement, points per player ± 95%, and the difference "
                f"from the best [95%, paired]; {analysis['worlds']} worlds drawn from what you "
                f"know, expert rollouts (docs/analysis.md)")
        labels = []
        for i in order[:limit]:
            text = choice_text(legal[i], kind, self.p)
            labels.append(f"{i + 1}) {text}" if listed else
                          f"{text} (type {self.typed(legal[i], kind)})")
        wide = max((text_width(x) for x in labels), default=0)
        out = [head]
        for i, lab in zip(order, labels):
            r = rows[i]
            pad = " " * (wide - text_width(lab))
            cmp = "best" if i == analysis["best"] else \
                f"{r['diff']:+.2f} [{r['dlo']:+.2f}, {r['dhi']:+.2f}]"
            out.append(f"  {lab}{pad}  {r['value']:+.2f} ±{r['half']:.2f}  {cmp}")
        if n > limit:
            low = rows[order[-1]]["value"]
            out.append(f"  … {n - limit} more (the lowest {low:+.2f})")
        return out

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
                fits, cut = self.redraw([self.p.c(q, _BOLD)], choices, [text], write=False)
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
        from sim.tools import analyze as A

        settings = A.Settings(samples=self.samples)
        rows: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.review_seconds
        tasks = A.tasks_of([rec], [self.seat])
        self.write(("\n" if self.full else "") + f"Reviewing your {len(tasks)} decisions "
                   f"({self.samples} worlds each; Ctrl-C skips) …\n")
        for t in tasks:
            if time.monotonic() >= deadline:
                break
            rows.append(A.run_task((t, settings)))
        lines = self.review_lines(rec, rows, settings)
        if len(rows) < len(tasks):
            lines.append(f"(review cut short at {self.review_seconds:g} s: {len(rows)} of "
                         f"{len(tasks)} decisions analysed)")
        try:
            from sim.analysis import viewer

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

    def review_lines(self, rec: dict[str, Any], rows: list[dict[str, Any]],
                     settings: Any) -> list[str]:
        from sim.tools.analyze import summarize

        p = self.p
        out = [p.c(f"Review of your decisions, deal {rec['deal']}", _BOLD)
               + f" (from what your seat knew; continuation {settings.policy}, "
               f"{settings.samples} worlds; loss [95% interval] in settlement points per "
               f"player; ? ≥ 0.25, ?? ≥ 1.0, docs/analysis.md):"]
        passes = forced = 0
        for r in rows:
            k = r["kind"]
            if r["forced"]:
                forced += 1
                continue
            if k == "show" and r["played"] is None and not r["mark"] and r["loss"] == 0:
                passes += 1
                continue
            where = f"trick {r['trick']:>2}" if k == "play" else f"round {r['round']:>2}"
            what = self._review_choice(k, r["played"])
            what += " " * max(0, 16 - text_width(what))
            line = f"  {where}: {what}  loss {r['loss']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]"
            if r["mark"]:
                line += " " + p.c(r["mark"], _RED)
            if r["loss"] > 0:
                line += f"  best {self._review_choice(k, r['best'])}"
            out.append(line)
        notes = []
        if passes:
            notes.append(f"{passes} pass(es) with no loss")
        if forced:
            notes.append(f"{forced} forced")
        if notes:
            out.append(f"  (not listed: {', '.join(notes)})")
        if rows:
            s = summarize(rows, "seat")[0]
            out.append(f"Total: loss {s['loss']:.2f} points per player over {s['decisions']} "
                       f"decisions ({s['choices']} with a choice); {s['marked_q']} ?, "
                       f"{s['marked_qq']} ??; accuracy {s['accuracy']:.0%}; true loss "
                       f"{s['true_loss']:.2f} (all hands known: what would have worked)")
        return out

    def _review_choice(self, kind: str, choice: Any) -> str:
        if kind == "show":
            return "pass" if choice is None else f"show {self.p.cards([choice] * 2)}"
        cards = self.p.cards(choice)
        return f"give back {cards}" if kind == "giveback" else cards


class _Snap:
    """What the person's seat knew before a decision (for narrating what it changed)."""

    __slots__ = ("round", "redeals", "ncalls", "shown", "trump", "ntricks", "trick_len")

    def __init__(self, obs: Observation) -> None:
        self.round = obs.round
        self.redeals = obs.redeals
        self.ncalls = len(obs.calls)
        self.shown = obs.shown
        self.trump = obs.trump
        self.ntricks = len(obs.tricks)
        self.trick_len = len(obs.trick)


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
    from sim.core.rng import check_seed

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
