"""Play against the bots in the terminal: ``shuangkou human`` (docs/human.md).

One person sits in one seat, three bots (any specs, plug-ins included) in the others. The deal
runs through the step API (``sim.deal.Deal``): the person answers at their own decisions, each
bot is asked through ``choose`` on its observation, with the per-decision time limit of
``sim.harness.runner`` (the same ``_Asker`` machinery ``shuangkou play --timeout`` uses). The screen
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
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from typing import IO, Any, NamedTuple

from sim.api import trick_winner
from sim.cards import CARD_NAMES, GROUP, KEY_OF_ID, SUITS, TRUMP_GROUP, parse_card
from sim.core.engine import S_DECK, S_NTRICKS, S_REDEALS, S_ROUND, S_TRUMP
from sim.deal import Deal
from sim.errors import (
    ConfigError,
    IllegalPlayError,
    InvalidCardError,
    OutputError,
    StrategyError,
)
from sim.harness.runner import _Asker, _use_alarm, check_timeout, split_specs
from sim.observation import Observation
from sim.record import FORMAT, call_dicts, dumps, hands_of, trick_dicts
from sim.rules import Rules
from sim.titles import level_text
from strategies.base import Strategy
from strategies.registry import make

HUMAN = "human"  # the person's seat in a record's ``seats``

HELP = """\
Answer with the number of a choice, or in card notation (R2): Kh, Th or 10h, 5s 5s, BJ.
  pass          pass at a calling chance (R7)
  ? / help      this summary          hint    what `greedy` would do here
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
    if low.lstrip("+-").isdigit():
        i = int(low)
        if 1 <= i <= n:
            return Answer("choice", legal[i - 1])
        return Answer("error", message=f"{t} is not a choice: answer 1-{n}, or cards")
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
    import re

    ansi = re.compile(r"\x1b\[[0-9;]*m")
    lines: list[str] = []
    cur, n = indent, len(indent)
    for it in items:
        w = len(ansi.sub("", it))
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


# --- partial deals -----------------------------------------------------------------------
def unfinished_record(deal: Deal) -> dict[str, Any]:
    """The record of a deal stopped part way (docs/record.md, "Unfinished deals")."""
    st, u = deal._st, deal._u
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


class Session:
    """One person and three bots over ``deals`` deals (a match keeps skill values, R25)."""

    def __init__(self, seat: int, bots: Sequence[Strategy], seed: int, deals: int,
                 rules: Rules, out_dir: str, delay: float = 0.4, timeout: float | None = 60,
                 full: bool | None = None, color: bool | None = None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 width: int | None = None) -> None:
        self.seat = seat
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
        self.width = width or _term_width(self.out)
        self.specs = [HUMAN if s == seat else b.spec() for s, b in enumerate(self.bots)]
        self.asker = _Asker(self.bots, rules, check_timeout(timeout), python_tier=True)
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

    # names -----------------------------------------------------------------------------
    def who(self, s: int) -> str:
        if s == self.seat:
            return "you"
        rel = {2: "partner", 1: "opp", 3: "opp"}[(s - self.seat) % 4]
        return f"seat {s} ({rel})"

    def Who(self, s: int) -> str:  # noqa: N802 - sentence start
        w = self.who(s)
        return w[0].upper() + w[1:]

    # output ----------------------------------------------------------------------------
    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def event(self, line: str, pause: float = 1.0) -> None:
        """Something happened: logged and shown; then a pause of ``pause`` x ``--delay``."""
        self.log.append(line)
        if self.full:
            self.redraw()
        else:
            self.write(line + "\n")
        if self.delay and pause:
            time.sleep(self.delay * pause)

    def redraw(self, prompt_lines: Sequence[str] = ()) -> None:
        lines = self.status_lines()
        lines.append(self.p.c("─" * min(self.width, 78), _DIM))
        extra = [x for block in prompt_lines for x in block.split("\n")]
        # as much of the log as the terminal has rows for (at least the last 3 events)
        room = max(3, _term_rows(self.out) - len(lines) - len(extra) - 2)
        lines.extend(list(self.log)[-room:])
        lines.extend(extra)
        self.write(CLEAR + "\n".join(lines) + "\n")

    def status_lines(self) -> list[str]:
        """The table as the person's seat sees it (R9)."""
        deal = self.deal
        p = self.p
        out = [p.c(f"Shuangkou — deal {self.index + 1} of {self.deals} (seed {self.seed}, "
                   f"deal {deal.deal if deal else self.index})", _BOLD)]
        out.append("  ".join(f"{s}:{'YOU' if s == self.seat else self.specs[s]} "
                             f"{self.skill[s]} {level_text(self.skill[s])}" for s in range(4)))
        if deal is None:
            return out
        obs = deal.observation(self.seat)
        trump = obs.trump
        if trump is None:
            shown = obs.shown
            table = "no pair shown yet" if shown is None else \
                f"on the table: {p.card(shown[1])} {p.card(shown[1])} by {self.who(shown[0])}"
            redeal = f", redeal {obs.redeals}" if obs.redeals else ""
            out.append(f"Calling — dealing round {obs.round} of 27{redeal}; {table}")
        else:
            att = obs.attackers
            side = "you attack" if self.seat in att else "you defend"
            a_pts = sum(t["points"] for t in obs.tricks if t["winner"] in att)
            d_pts = sum(t["points"] for t in obs.tricks if t["winner"] not in att)
            out.append(f"Trump {p._sym(trump)} ({trump}) · caller {self.who(obs.caller)} · "
                       f"attackers {att[0]}&{att[1]} ({side}) · points: attackers {a_pts}, "
                       f"defenders {d_pts}")
            n = len(obs.tricks)
            trick = obs.trick
            if trick:
                leader = obs.leader
                w = (leader + trick_winner(trick, trump)) % 4  # R20, R21
                plays = "  ".join(f"{self.who((leader + k) % 4)}: {p.cards(c)}"
                                  + (p.c(" ◀", _BOLD) if (leader + k) % 4 == w else "")
                                  for k, c in enumerate(trick))
                out.append(f"Trick {n + 1}: led by {self.who(leader)} — {plays}")
                out.append(f"  winning: {self.who(w)}")
            elif obs.hand:
                leader = obs.leader if obs.leader is not None else (obs.caller + 1) % 4
                out.append(f"Trick {n + 1}: {self.who(leader)} to lead")
                if self.last_trick is not None:
                    out.append("  last: " + self.trick_line(self.last_trick, n))
        hand = obs.hand
        out.append(p.c(f"Your hand ({len(hand)}):", _BOLD) + " " + p.hand(hand, trump))
        return out

    def trick_line(self, t: dict[str, Any], n: int) -> str:
        plays = "  ".join(f"{(t['leader'] + k) % 4}:{self.p.cards(c)}"
                          for k, c in enumerate(t["plays"]))
        return f"trick {n}: {plays} → {self.who(t['winner'])} +{t['points']}"

    # the match -------------------------------------------------------------------------
    def run(self) -> int:
        """Play the match; returns the exit code (0, or 130 after Ctrl-C)."""
        code = 0
        failed: StrategyError | None = None
        try:
            os.makedirs(self.out_dir, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write records to {self.path!r}: {e.strerror or e}") \
                from None
        old = None
        if self.asker.timeout is not None and _use_alarm():
            old = signal.signal(signal.SIGALRM, self.asker._on_alarm)
            self.asker._alarm = True
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
        except StrategyError as e:  # a bot raised, overran its time or played illegally
            self.save_unfinished("a bot failed")
            failed = e
        finally:
            if old is not None:
                signal.signal(signal.SIGALRM, old)
                self.asker._alarm = False
            self.asker.close()
            self.file.close()
        self.summary()
        if failed is not None:
            raise failed  # the CLI's one line and exit code 2, after the records are saved
        return code

    def save_unfinished(self, why: str) -> None:
        deal = self.deal
        if deal is None or deal.done:
            self.write(f"\nstopped ({why})\n")
            return
        self.file.write(dumps(unfinished_record(deal)) + "\n")
        self.file.flush()
        self.saved += 1
        self.write(f"\nstopped ({why}): the unfinished deal {deal.deal} is saved\n")

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
                self.asker._guard(b, s, deal, "begin_deal", b.begin_deal, s, deal.seed, d)
        self.hinter.begin_deal(self.seat, deal.seed, d)
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
                choice = self.asker._guard(bot, seat, deal, "choose", bot.choose,
                                           deal.observation(seat), legal)
                try:
                    deal.apply(choice)
                except IllegalPlayError as e:
                    raise StrategyError(f"strategy {bot.spec()!r} in seat {seat} returned an "
                                        f"illegal choice: {e}") from None
            self.narrate(b, deal.observation(self.seat), seat, kind, choice)
        rec = deal.record()
        self.file.write(dumps(rec) + "\n")
        self.file.flush()
        self.saved += 1
        self.played += 1
        self.void += rec["void"]
        for s in range(4):
            self.skill[s] += rec["settlement"][s]
        self.deal_over(rec)

    # narration -------------------------------------------------------------------------
    def narrate_rounds(self, r0: int, redeals0: int, obs: Observation) -> None:
        deal = self.deal
        r1 = obs.round
        if obs.redeals > redeals0:
            self.event(f"Nobody showed: the cards are shuffled and dealt again (R11), "
                       f"redeal {obs.redeals}")
            r0 = 0
        for r in range(r0 + 1, r1 + 1):
            card = CARD_NAMES[int(deal._st[S_DECK + 4 * (r - 1) + self.seat])]
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
                self.event(f"{self.Who(seat)} {'pass' if seat == self.seat else 'passes'}", 0.3)
        elif kind == "giveback":
            c = obs.calls[-1]
            to = c["took_from"]
            if seat == self.seat:
                self.event(f"You give back {p.cards(c['gave'])} to {self.who(to)} (R8)")
            elif to == self.seat:
                self.event(f"{self.Who(seat)} gives you back {p.cards(c['gave'])} (R8)")
            else:
                self.event(f"{self.Who(seat)} gives two cards back to {self.who(to)} "
                           f"(unseen, R9)")
        elif kind == "play":
            verb = ("lead" if b.trick_len == 0 else "play") + ("" if seat == self.seat else "s")
            self.event(f"{self.Who(seat)} {verb} {p.cards(choice)}")
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
                       f"{self.who((obs.caller + 1) % 4)} leads (R17)", 1.5)
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
        if self.full:
            self.redraw()
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
        if kind == "giveback" and len(legal) > 40:
            return [f"  {len(legal)} possible: type two cards, e.g. "
                    f"{' '.join(legal[0])} (or hint)"]
        items = [f"{i}) {choice_text(c, kind, self.p)}" for i, c in enumerate(legal, 1)]
        return wrap_items(items, min(self.width, 100))

    def ask_person(self, kind: str) -> Any:
        deal = self.deal
        legal = deal.legal()
        q = self.question(kind)
        while True:
            lines = [self.p.c(q, _BOLD), *self.choices_lines(kind, legal)]
            if self.notice:
                lines.append(self.notice)
            if self.full:
                self.redraw(lines)
            else:
                self.write("\n".join(self.status_lines()[2:] + lines) + "\n")
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
                hint = self.hinter.choose(deal.observation(self.seat), deal.legal())
                n = legal.index(hint) + 1 if hint in legal else "?"
                self.notice = f"hint: greedy would answer {n}) {choice_text(hint, kind, self.p)}"
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
        plain: bool = False) -> int:
    """``shuangkou human``: returns the exit code."""
    from sim.core.rng import check_seed

    delay = check_delay(delay)
    bots = make_bots(seat, partner, opponents)
    if seed is None:
        seed = int.from_bytes(os.urandom(3), "big")
    seed = check_seed(seed)
    session = Session(seat, bots, seed, deals, rules or Rules(), out or default_out(),
                      delay=delay, timeout=timeout, full=False if plain else None)
    return session.run()
