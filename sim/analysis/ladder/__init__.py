"""The ladder's model: one Bradley-Terry fit over every duplicate pair ever played.

``shuangkou ladder`` (sim/tools/ladder) keeps every pair in a database and hands them here
as arrays (``LadderData``); ``model`` fits the ratings (``fit``), picks the next matchups
(``schedule``) and gives the rating of one player over time (``history``); ``show`` renders
the rating list (``show_text``, ``show_json``, ``show_html``); ``partners`` the team entrants
(``plain``: the ranking without them, ``partners``: the partner table). numpy only; no engine.
docs/ladder.md describes the model, the anchor, the interval, the scheduling rule and the
goodness-of-fit test.
"""

from __future__ import annotations

from sim.analysis.ladder.model import (
    BAD_FIT_P,
    CONF,
    GUARD_PAIRS,
    LadderData,
    LadderFit,
    fit,
    history,
    schedule,
)
from sim.analysis.ladder.partners import (
    balanced,
    partners,
    partners_json,
    partners_text,
    plain,
    team_pairs,
)
from sim.analysis.ladder.show import NAME_WIDTH, show_html, show_json, show_text

__all__ = ["LadderData", "LadderFit", "fit", "schedule", "show_text", "show_json", "show_html",
           "history", "CONF", "BAD_FIT_P", "GUARD_PAIRS", "NAME_WIDTH", "plain", "partners",
           "partners_text", "partners_json", "balanced", "team_pairs"]
