"""The screen of ``shuangkou human``: the table and the person's hand drawn on the terminal.

Cards and hands as text (``Painter``, with or without colour), lines fitted to the terminal's
width (``fit``, ``wrap_items``), and ``Screen``, the part of ``sim.human.Session`` that writes
and redraws: the full screen that redraws in place with plain ANSI codes, the status lines the
plain line mode shows, the numbered choices. What is drawn is only what the person's seat may
know (R9): it comes from that seat's Observation.

``Screen`` is a mixin of ``Session``: it reads the session's ``out``, ``p`` (its Painter),
``deal``, ``seat``, ``index``, ``deals``, ``seed``, ``specs``, ``skill``, ``log``,
``last_trick`` and ``full``, sets its ``choices_cut`` and ``_gone``, and calls its ``cols()``,
``rows()`` (the terminal's size, read in ``sim.human``), ``who()`` and ``trick_line()``
(``sim.human.narration``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import IO, Any

from sim.api import trick_winner
from sim.cards import GROUP, KEY_OF_ID, SUITS, TRUMP_GROUP, parse_card
from sim.core.console import width as text_width
from sim.titles import level_text

_SYM = dict(zip(SUITS, "♠♥♦♣"))
RED = "\x1b[31m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
YELLOW = "\x1b[33m"
RESET = "\x1b[0m"
CLEAR = "\x1b[H\x1b[2J"
MAX_LISTED = 40  # give-backs beyond this many are typed, not listed
_CHOICE_NO = re.compile(r"(?:^|  )\d+\) ")  # a numbered choice on a row of wrap_items


def use_color(stream: IO[str]) -> bool:
    """Colours on a terminal unless ``NO_COLOR`` is set (https://no-color.org)."""
    return not os.environ.get("NO_COLOR") and isatty(stream)


def isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Painter:
    """Cards and hands as text, with or without colour."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def c(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def card(self, name: str, rank_only: bool = False) -> str:
        if name in ("BJ", "SJ"):
            return self.c(name, RED) if name == "BJ" else name
        r = "10" if name[0] == "T" else name[0]
        text = r if rank_only else r + _SYM[name[1]]
        return self.c(text, RED) if name[1] in "hd" else text

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
                    groups.append(self.sym(s) + " "
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
        parts = [self.sym(s) + " " + " ".join(side[s]) for s in SUITS if s in side]
        if trumps:
            parts.append(self.c(f"trump {_SYM[trump]}:", BOLD + YELLOW) + " "
                         + " ".join(trumps))
        return "   ".join(parts)

    def sym(self, s: str) -> str:
        return self.c(_SYM[s], RED) if s in "hd" else _SYM[s]


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



class Screen:
    """Writing to the terminal and drawing the table (a mixin of ``sim.human.Session``)."""

    def write(self, text: str) -> None:
        if self._gone:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except OSError:  # the terminal is gone (SIGHUP, a closed pipe): the records still are
            self._gone = True

    def redraw(self, question: Sequence[str] = (), choices: Sequence[str] = (),
               notice: Sequence[str] = (), write: bool = True) -> tuple[bool, bool]:
        """The whole screen, every line fitted to the terminal's width (a line wider than the
        terminal would wrap there and push the top off), and as much of the log as the rows
        allow. On a small terminal the less needed lines go first (the log, the last trick,
        the seats, the second row of the header …) and then the numbered choices are cut
        short; never the hand or the question. Returns (everything fits, the choices were cut
        short); ``write=False`` only measures."""
        width = self.cols()
        rows = self.rows()
        items = self.status_items()
        rule = self.p.c("─" * min(width, 78), DIM)

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
                              BOLD))]
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
            out.append(("state", f"Trump {p.sym(trump)} ({trump}) · caller "
                                 f"{self.who(obs.caller)} · attackers {att[0]}&{att[1]} "
                                 f"({side}) · points: attackers {a_pts}, defenders {d_pts}"))
            n = len(obs.tricks)
            trick = obs.trick
            if trick:
                leader = obs.leader
                w = (leader + trick_winner(trick, trump)) % 4  # R20, R21
                plays = "  ".join(f"{self.who((leader + k) % 4)}: {p.cards(c)}"
                                  + (p.c(" ◀", BOLD) if (leader + k) % 4 == w else "")
                                  for k, c in enumerate(trick))
                out.append(("trick", f"Trick {n + 1}: led by {self.who(leader)} — {plays}"))
                out.append(("winning", f"  winning: {self.who(w)}"))
            elif obs.hand:
                leader = obs.leader if obs.leader is not None else (obs.caller + 1) % 4
                out.append(("trick", f"Trick {n + 1}: {self.who(leader)} to lead"))
                if self.last_trick is not None:
                    out.append(("last", "  last: " + self.trick_line(self.last_trick, n)))
        hand = obs.hand
        out.append(("hand", p.c(f"Your hand ({len(hand)}):", BOLD) + " "
                    + p.hand(hand, trump)))
        return out

    def choices_lines(self, kind: str, legal: list[Any]) -> list[str]:
        if kind == "giveback" and len(legal) > MAX_LISTED:
            return [f"  {len(legal)} possible: type two cards, e.g. "
                    f"{' '.join(legal[0])} (or hint)"]
        items = [f"{i}) {choice_text(c, kind, self.p)}" for i, c in enumerate(legal, 1)]
        return wrap_items(items, min(self.cols(), 100))
