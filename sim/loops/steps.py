"""A record's decisions, stepped: through the run's compiled loop when it can, else ``sim.Deal``.

``decision_steps`` gives what each decision of a recorded deal was (seat, kind, code, trick),
playing a finished record back in a run's compiled loops by the scripted seat
(``strategies.script``: nothing more compiles) or replaying it through ``sim.Deal``
(``decisions``, which also yields each decision's state for ``shuangkou analyze``). Swing deals
(``sim.tournament.swings``) and the analysis (``sim.tools.analyze``) share it. ``notation`` and
``choice_label`` write a choice as records and the terminal write it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim.cards import CARD_NAMES
from sim.core import state as S
from sim.core.state import new_state
from sim.core.tables import N_COLS
from sim.deal import Deal
from sim.errors import RecordError
from sim.observation import giveback_table, play_table
from sim.replay import pretty
from sim.rules import Rules
from strategies.kinds import KIND_SCRIPT, N_KINDS
from strategies.params import N_PARAMS, PARAM_ROWS
from strategies.script import (
    LG_CODE,
    LG_PHASE,
    LG_REDEALS,
    LG_ROUND,
    LG_SEAT,
    LG_STEP,
    read_log,
    script_done,
    script_into,
)
from strategies.tier import new_scratch

_SCRIPT_SCRATCH: dict[str, Any] = {}  # the scripted seat's scratch, kept between records


# --- replaying a record ----------------------------------------------------------------------
@dataclass
class Decision:
    """One decision of a recorded deal: the true state before it, and what was chosen."""

    deal: int
    step: int
    seat: int
    kind: str
    st: np.ndarray
    u: np.ndarray
    codes: list[int]  # legal choices (-1: pass)
    played: int  # the code chosen
    trick: int  # trick number from 1 (0 during the calling)
    round: int  # dealing round (calling) or 27
    redeal: int


def check_record(rec: dict[str, Any], where: str, validate: Any) -> None:
    """RecordError (one line) if ``validate(rec)`` (the checks of ``shuangkou validate``,
    passed in by the command: the reference engine is not imported here) finds a problem."""
    problems = validate(rec)
    if problems:
        raise RecordError(f"{where}: deal {rec.get('deal')!r} does not validate: "
                          f"{problems[0]} (shuangkou validate lists every problem)")


def decisions(rec: dict[str, Any]) -> Iterator[Decision]:
    """Every decision of a validated record, in order (passes included)."""
    rules = Rules.from_dict(rec["rules"])
    d = Deal(rec["seed"], rec["deal"], rules)
    calls = rec["calls"]
    plays: list[list[str]] = []
    for tr in rec["tricks"]:
        plays.extend(tr["plays"])
    cur = rec.get("current_trick") if rec.get("unfinished") else None
    if cur:
        plays.extend(cur.get("plays", []))
    ci = pi = step = 0
    last_call: dict[str, Any] | None = None
    while not d.done:
        seat, kind = d.to_act
        st, u, _ = d.engine
        if kind == "show":
            if rec.get("unfinished") and rec.get("trump") is None:
                return  # stopped during the calling: where exactly is not recorded
            c = calls[ci] if ci < len(calls) else None
            if (c is not None and int(st[S.S_REDEALS]) == rec["redeals"]
                    and c["round"] == int(st[S.S_ROUND]) and c["seat"] == seat):
                choice: Any = c["pair"]
                last_call = c
                ci += 1
            else:
                choice = None
        elif kind == "giveback":
            if last_call is None or not last_call.get("gave"):
                return
            choice = list(last_call["gave"])
        else:
            if pi >= len(plays):
                return
            choice = list(plays[pi])
            pi += 1
        code = d.code_of(choice)
        trick = 0 if kind != "play" else (pi - 1) // 4 + 1
        yield Decision(int(rec["deal"]), step, seat, kind, st.copy(), u.copy(),
                       list(d.legal_codes()), code, trick, int(st[S.S_ROUND]),
                       int(st[S.S_REDEALS]))
        d.apply_code(code)
        step += 1


@dataclass(frozen=True)
class Step:
    """What a decision of a recorded deal was, without its state (``Decision``'s fields)."""

    step: int
    seat: int
    kind: str
    played: int
    trick: int
    round: int
    redeal: int


def decision_steps(rec: dict[str, Any], loops: Any = None) -> Iterator[Step]:
    """The decisions of a validated record, in order, as ``Step``s. ``loops``: a module of
    built-in compiled loops that this process has compiled already (``run_deals``,
    ``sim.loops.plugins.builtin_loops``): a finished record is then played back in it by
    the scripted seat (``strategies.script``), which compiles nothing more; otherwise, or
    if the record does not play back whole there, it is replayed through ``sim.Deal``
    (``decisions``). Both give the same steps (tests/test_swings.py)."""
    if loops is not None and not rec.get("unfinished"):
        steps = _scripted_steps(rec, loops)
        if steps is not None:
            yield from steps
            return
    for d in decisions(rec):
        yield Step(d.step, d.seat, d.kind, d.played, d.trick, d.round, d.redeal)


def _scripted_steps(rec: dict[str, Any], loops: Any) -> list[Step] | None:
    st, u = new_state()
    buf, fws, uws = _SCRIPT_SCRATCH.get("script") or new_scratch()
    _SCRIPT_SCRATCH["script"] = (buf, fws, uws)
    try:
        script_into(buf, rec)
    except (ValueError, KeyError, TypeError):
        return None
    loops.run_deals(np.uint64(rec["seed"]), np.uint64(rec["deal"]), 1,
                    Rules.from_dict(rec["rules"]).array(), np.full(4, KIND_SCRIPT, np.int64),
                    np.zeros(N_KINDS, np.int64), np.zeros((PARAM_ROWS, N_PARAMS)),
                    np.zeros((1, N_COLS), np.int64), st, u, buf, fws, uws)
    if (not script_done(buf) or int(st[S.S_REDEALS]) != rec["redeals"]
            or [int(x) for x in st[S.S_SETTLE:S.S_SETTLE + 4]] != list(rec["settlement"])):
        return None  # not this record's deal: replay it through sim.Deal instead
    kinds = {S.CALL: "show", S.GIVEBACK: "giveback"}
    out, plays = [], 0
    for row in read_log(buf).tolist():
        kind = kinds.get(row[LG_PHASE], "play")
        trick = 0
        if kind == "play":
            plays += 1
            trick = (plays - 1) // 4 + 1
        out.append(Step(row[LG_STEP], row[LG_SEAT], kind, row[LG_CODE], trick, row[LG_ROUND],
                        row[LG_REDEALS]))
    return out


def notation(kind: str, code: int, trump: int) -> Any:
    """A choice as records write it: a show's pair card (``None`` for a pass), a give-back's
    two cards, a play's one or two cards (docs/record.md)."""
    if kind == "show":
        return None if code < 0 else CARD_NAMES[code]
    if kind == "giveback":
        return list(giveback_table()[code])
    return list(play_table(trump)[code])


def choice_label(kind: str, choice: Any) -> str:
    if kind == "show":
        return "pass" if choice is None else f"show {pretty(choice)} {pretty(choice)}"
    cards = " ".join(pretty(c) for c in choice)
    return f"gives back {cards}" if kind == "giveback" else cards
