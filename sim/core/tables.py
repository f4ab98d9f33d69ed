"""Tables of the result data, importable without the engine or numba: the columns of the
compiled loop's summary rows (``sim.loops.loop``) and of the per-deal table
(``sim.tournament.run``)."""

from __future__ import annotations

import numpy as np

from sim.core.layout import layout

# columns of a summary row (one per deal), filled by sim.loops.loop.summarize: declared once
# (sim.core.layout), with the name each column has in the results
SUMMARY_FIELDS = (
    ("C_REDEALS", 1), ("C_VOID", 1), ("C_CALLER", 1), ("C_TRUMP", 1), ("C_ATT_POINTS", 1),
    ("C_MULT", 1), ("C_SCORE", 1), ("C_SETTLE0", 1), ("C_SETTLE1", 1), ("C_SETTLE2", 1),
    ("C_SETTLE3", 1), ("C_NCALLS", 1), ("C_OVERRIDES", 1), ("C_SHOW_RANK", 1),
    ("C_TRUMP_LEN", 1), ("C_DECISIONS", 1), ("C_NTRICKS", 1), ("C_LAST_WINNER", 1),
    ("C_FIRST_SHOW_ROUND", 1),
)
_C, N_COLS = layout(SUMMARY_FIELDS)
C_REDEALS = _C["C_REDEALS"]
C_VOID = _C["C_VOID"]
C_CALLER = _C["C_CALLER"]
C_TRUMP = _C["C_TRUMP"]
C_ATT_POINTS = _C["C_ATT_POINTS"]
C_MULT = _C["C_MULT"]
C_SCORE = _C["C_SCORE"]
C_SETTLE0 = _C["C_SETTLE0"]
C_SETTLE1 = _C["C_SETTLE1"]
C_SETTLE2 = _C["C_SETTLE2"]
C_SETTLE3 = _C["C_SETTLE3"]
C_NCALLS = _C["C_NCALLS"]
C_OVERRIDES = _C["C_OVERRIDES"]
C_SHOW_RANK = _C["C_SHOW_RANK"]
C_TRUMP_LEN = _C["C_TRUMP_LEN"]
C_DECISIONS = _C["C_DECISIONS"]
C_NTRICKS = _C["C_NTRICKS"]
C_LAST_WINNER = _C["C_LAST_WINNER"]
C_FIRST_SHOW_ROUND = _C["C_FIRST_SHOW_ROUND"]
COLUMN_NAMES = ("redeals", "void", "caller", "trump", "attacker_points", "multiplier",
                "attacker_score", "settle0", "settle1", "settle2", "settle3", "calls",
                "overrides", "show_rank", "caller_trumps", "decisions", "tricks",
                "last_winner", "first_show_round")  # by column

# the per-deal table of a tournament (docs/results.md), with the integer type of each column
DEAL_COLUMNS: dict[str, type] = {
    "seed": np.uint64, "deal": np.int64, "matchup": np.int16, "orientation": np.int8,
    "seat0": np.int16, "seat1": np.int16, "seat2": np.int16, "seat3": np.int16,
    "caller": np.int8, "trump": np.int8, "attacker_team": np.int8,
    "attacker_points": np.int16, "attacker_score": np.int32, "multiplier": np.int16,
    "settle0": np.int32, "settle1": np.int32, "settle2": np.int32, "settle3": np.int32,
    "redeals": np.int16, "void": np.int8, "calls": np.int16, "overrides": np.int16,
    "show_rank": np.int8, "caller_trumps": np.int8, "first_show_round": np.int8,
}
