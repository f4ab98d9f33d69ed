"""The narration of ``shuangkou human``: events and decisions as the lines a person reads.

``Narrator`` is the part of ``sim.human.Session`` that names the seats from the person's side
(``you``, ``seat 1 (opp)``), tells what each move changed (a show, a give-back, a play, a
trick won, the end of calling and of the deal), asks the question of a decision, and writes a
hint's and a review's lines and the match's summary. ``Snap`` is what the person's seat knew
before a decision, to narrate what it changed.

``Narrator`` is a mixin of ``Session``: it reads the session's ``seat``, ``p`` (its Painter),
``deal``, ``log``, ``full``, ``delay``, ``hinter``, ``forced``, ``skill``, ``specs``,
``played``, ``void``, ``saved``, ``seed``, ``rules`` and ``path``, sets ``last_trick``, and
calls its ``write()`` and ``redraw()`` (``sim.human.screen``).
"""

from __future__ import annotations

import time
from typing import Any

from sim.cards import CARD_NAMES
from sim.core import state as S
from sim.core.console import width as text_width
from sim.human.screen import BOLD, RED, choice_text
from sim.observation import Observation
from sim.titles import level_text
from sim.tools.analyze import summarize

HINT_ALL = 12  # a hint lists every choice up to this many, else the best HINT_TOP
HINT_TOP = 8


class Narrator:
    """The text of the session (a mixin of ``sim.human.Session``)."""

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

    def event(self, line: str, pause: float = 1.0) -> None:
        """Something happened: logged and shown; then a pause of ``pause`` x ``--delay``."""
        self.log.append(line)
        if self.full:
            self.redraw()
        else:
            self.write(line + "\n")
        if self.delay and pause:
            time.sleep(self.delay * pause)

    def trick_line(self, t: dict[str, Any], n: int) -> str:
        plays = "  ".join(f"{(t['leader'] + k) % 4}:{self.p.cards(c)}"
                          for k, c in enumerate(t["plays"]))
        return f"trick {n}: {plays} → {self.who(t['winner'])} +{t['points']}"

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

    # narration -------------------------------------------------------------------------
    def narrate_rounds(self, r0: int, redeals0: int, obs: Observation) -> None:
        deal = self.deal
        r1 = obs.round
        if obs.redeals > redeals0:
            self.event(f"Nobody showed: the cards are shuffled and dealt again (R11), "
                       f"redeal {obs.redeals}")
            r0 = 0
        for r in range(r0 + 1, r1 + 1):
            card = CARD_NAMES[int(deal.engine[0][S.S_DECK + 4 * (r - 1) + self.seat])]
            self.event(f"round {r}: you get {self.p.card(card)}", 0.15)

    def narrate(self, b: "Snap", obs: Observation, seat: int, kind: str, choice: Any) -> None:
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
                       f"{p.sym(obs.trump)} ({obs.trump}); attackers seats {att[0]} & {att[1]}"
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

    def typed(self, choice: Any, kind: str) -> str:
        """How to type ``choice`` (card notation, R2)."""
        if kind == "show":
            return "pass" if choice is None else f"{choice} {choice}"
        return " ".join("10" + c[1] if c[0] == "T" else c for c in choice)

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

    def review_lines(self, rec: dict[str, Any], rows: list[dict[str, Any]],
                     settings: Any) -> list[str]:
        p = self.p
        out = [p.c(f"Review of your decisions, deal {rec['deal']}", BOLD)
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
                line += " " + p.c(r["mark"], RED)
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



class Snap:
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
