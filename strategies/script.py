"""The scripted seat: a finished deal's recorded choices played back inside the compiled deal
loops (``sim.loops.loop``), with every decision logged.

A tournament's swing deals are compared decision by decision (``sim.tournament.swings``): the
first decision at which a duplicate pair's two tables differ. The records say every show,
give-back and play but not the passes between the shows, so finding that decision means
replaying the calling through the engine. Seated in all four seats of the loop the run has
already compiled (``KIND_SCRIPT``), this kernel does that at no extra compile: at a show
decision it shows the recorded pair when the record has one for this dealing (redeal),
round and seat, else passes (as ``sim.tools.analyze.decisions`` reads a record); at a
give-back or a play it takes the next recorded one. Each decision goes into a log of
``LOG_FIELDS`` rows: its step (decisions before it), seat, phase, code, dealing round and
redeal.

The script and the log live in the int64 scratch ``buf`` (``SCRIPT_FIELDS``), which no other
kernel of a scripted deal touches. ``script_into`` writes a record's script, ``read_log``
reads the log back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import sim.view as view
from sim.cards import KEY_OF_ID, SUITS, parse_card
from sim.core import state as S
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import make_code
from sim.errors import RecordError
from strategies.kinds import INT_SCRATCH, KIND_SCRIPT  # noqa: F401  (re-exported)

MAX_PLAYS = 108  # a play takes one card or two: 108 cards, 108 plays at most
MAX_LOG = 4096  # decisions logged per deal; a deal with more (many redeals) is not logged whole

SCRIPT_CALL_FIELDS = (("SC_ROUND", 1), ("SC_SEAT", 1), ("SC_CARD", 1), ("SC_GAVE", 1))
_SCC, SCRIPT_CALL_W = layout(SCRIPT_CALL_FIELDS)
SC_ROUND = _SCC["SC_ROUND"]
SC_SEAT = _SCC["SC_SEAT"]
SC_CARD = _SCC["SC_CARD"]
SC_GAVE = _SCC["SC_GAVE"]  # the give-back's code, -1 when the show took none

LOG_FIELDS = (("LG_STEP", 1), ("LG_SEAT", 1), ("LG_PHASE", 1), ("LG_CODE", 1), ("LG_ROUND", 1),
              ("LG_REDEALS", 1))
_LG, LOG_W = layout(LOG_FIELDS)
LG_STEP = _LG["LG_STEP"]
LG_SEAT = _LG["LG_SEAT"]
LG_PHASE = _LG["LG_PHASE"]
LG_CODE = _LG["LG_CODE"]
LG_ROUND = _LG["LG_ROUND"]
LG_REDEALS = _LG["LG_REDEALS"]

SCRIPT_FIELDS = (
    ("B_REDEALS", 1),  # the dealing whose shows the record holds (R10 redeals before it)
    ("B_NCALLS", 1),
    ("B_NEXT_CALL", 1),  # shows taken so far
    ("B_NPLAYS", 1),
    ("B_NEXT_PLAY", 1),  # plays taken so far
    ("B_NLOG", 1),  # decisions made (logged while < MAX_LOG)
    ("B_CALLS", S.MAX_CALLS * SCRIPT_CALL_W),
    ("B_PLAYS", MAX_PLAYS),
    ("B_LOG", MAX_LOG * LOG_W),
)
_B, SCRIPT_SIZE = layout(SCRIPT_FIELDS)
B_REDEALS = _B["B_REDEALS"]
B_NCALLS = _B["B_NCALLS"]
B_NEXT_CALL = _B["B_NEXT_CALL"]
B_NPLAYS = _B["B_NPLAYS"]
B_NEXT_PLAY = _B["B_NEXT_PLAY"]
B_NLOG = _B["B_NLOG"]
B_CALLS = _B["B_CALLS"]
B_PLAYS = _B["B_PLAYS"]
B_LOG = _B["B_LOG"]
assert SCRIPT_SIZE <= INT_SCRATCH
_code = getattr(make_code, "py_func", make_code)  # plain Python here: no dispatch


@kernel(inline="always")
def script_decide(st, seat, buf):
    """The recorded choice at this decision of ``seat``, logged (module docstring). A script
    that runs out passes, gives back or plays code -1: the deal then ends off the record,
    which ``read_log``'s caller detects."""
    ph = view.phase(st)
    code = np.int64(-1)
    if ph == S.CALL:
        i = buf[B_NEXT_CALL]
        j = B_CALLS + i * SCRIPT_CALL_W
        if (i < buf[B_NCALLS] and view.redeals(st) == buf[B_REDEALS]
                and buf[j + SC_ROUND] == view.dealing_round(st) and buf[j + SC_SEAT] == seat):
            code = buf[j + SC_CARD]
            buf[B_NEXT_CALL] = i + 1
    elif ph == S.GIVEBACK:
        i = buf[B_NEXT_CALL] - 1
        if i >= 0:
            code = buf[B_CALLS + i * SCRIPT_CALL_W + SC_GAVE]
    else:
        i = buf[B_NEXT_PLAY]
        if i < buf[B_NPLAYS]:
            code = buf[B_PLAYS + i]
            buf[B_NEXT_PLAY] = i + 1
    n = buf[B_NLOG]
    if n < MAX_LOG:
        k = B_LOG + n * LOG_W
        buf[k + LG_STEP] = st[S.S_DECISIONS]
        buf[k + LG_SEAT] = seat
        buf[k + LG_PHASE] = ph
        buf[k + LG_CODE] = code
        buf[k + LG_ROUND] = view.dealing_round(st)
        buf[k + LG_REDEALS] = view.redeals(st)
    buf[B_NLOG] = n + 1
    return code


def script_into(buf: np.ndarray, rec: Mapping[str, Any]) -> None:
    """Write the choices of the finished record ``rec`` (docs/record.md) as the script at the
    start of ``buf``, with an empty log."""
    if rec.get("unfinished"):
        raise RecordError("an unfinished record has no whole script: replay it through sim.Deal")
    calls = rec["calls"]
    plays = [p for tr in rec["tricks"] for p in tr["plays"]]
    if len(calls) > S.MAX_CALLS or len(plays) > MAX_PLAYS:
        raise RecordError(f"{len(calls)} calls, {len(plays)} plays: more than a deal holds "
                          f"({S.MAX_CALLS} calls, {MAX_PLAYS} plays)")
    buf[:B_CALLS] = 0
    buf[B_REDEALS] = int(rec["redeals"])
    buf[B_NCALLS] = len(calls)
    buf[B_NPLAYS] = len(plays)
    for i, c in enumerate(calls):
        j = B_CALLS + i * SCRIPT_CALL_W
        buf[j + SC_ROUND] = int(c["round"])
        buf[j + SC_SEAT] = int(c["seat"])
        buf[j + SC_CARD] = parse_card(c["pair"])
        gave = c.get("gave")
        buf[j + SC_GAVE] = (int(_code(*sorted(parse_card(x) for x in gave)))
                            if gave else -1)
    if plays:
        trump = SUITS.index(rec["trump"])
        for i, p in enumerate(plays):
            keys = sorted(int(KEY_OF_ID[trump, parse_card(x)]) for x in p)
            buf[B_PLAYS + i] = _code(keys[0], keys[1] if len(keys) == 2 else -1)


def script_done(buf: np.ndarray) -> bool:
    """Whether the scripted deal took every recorded show and play, and its log is whole."""
    return bool(buf[B_NEXT_CALL] == buf[B_NCALLS] and buf[B_NEXT_PLAY] == buf[B_NPLAYS]
                and buf[B_NLOG] <= MAX_LOG)


def read_log(buf: np.ndarray) -> np.ndarray:
    """The scripted deal's decisions: int64[n, LOG_W] (``LOG_FIELDS``)."""
    n = min(int(buf[B_NLOG]), MAX_LOG)
    return buf[B_LOG:B_LOG + n * LOG_W].reshape(n, LOG_W).copy()
