"""``shuangkou solve``: every legal play at a position of a recorded deal, valued exactly by
the double-dummy solver (``sim.solve``: all four hands known, perfect play by all four).

The position is the start of trick T (1-based, as ``shuangkou replay`` numbers the tricks) of
deal D of a record file, or, with ``play`` = N, the moment after the first N plays of that
trick. The record is replayed with the engine (``sim.loops.steps.decisions``) and checked by
the validator the command passes in, as ``shuangkou analyze`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.cards import CARD_NAMES, ID_OF_KEY, SUITS
from sim.core import state as S
from sim.core.movegen import make_code
from sim.errors import ConfigError, RecordError
from sim.loops.steps import Decision, check_record, decisions
from sim.record import mask_cards, read_records
from sim.replay import hand_line, pretty
from sim.rules import Rules
from sim.solve import DEFAULT_NODES, Solution, Solver, play_cards


def find_record(path: str, deal: int, validate: Callable[[dict[str, Any]], list[str]] | None
                ) -> tuple[dict[str, Any], int]:
    """The first record of deal ``deal`` in ``path`` (checked by ``validate``) and how many
    records of that deal the file holds (a duplicate run's records.jsonl: two tables)."""
    found: dict[str, Any] | None = None
    count = 0
    for rec in read_records(path):
        if rec.get("deal") == deal:
            count += 1
            if found is None:
                found = rec
    if found is None:
        raise RecordError(f"deal {deal} not in {str(path)!r}")
    if validate is not None:
        check_record(found, repr(str(path)), validate)
    return found, count


def trick_plays(rec: dict[str, Any]) -> list[int]:
    """The number of plays recorded in each trick (the trick in progress of an unfinished
    record included when it has plays)."""
    out = [len(t["plays"]) for t in rec.get("tricks") or []]
    cur = rec.get("current_trick") if rec.get("unfinished") else None
    if cur and cur.get("plays"):
        out.append(len(cur["plays"]))
    return out


def position(rec: dict[str, Any], trick: int, play: int = 0) -> Decision:
    """The decision at the start of ``trick`` (from 1) of a validated record, after its first
    ``play`` plays (0-3). ConfigError (one line) when the deal has no such position."""
    if rec.get("void") or rec.get("trump") is None:
        raise ConfigError(f"deal {rec.get('deal')} has no trick play (a void deal, R11, or a "
                          f"record stopped during the calling): nothing to solve")
    counts = trick_plays(rec)
    if not 1 <= trick <= len(counts):
        raise ConfigError(f"--trick {trick}: deal {rec['deal']} has {len(counts)} trick(s) "
                          f"(1 … {len(counts)})")
    if not 0 <= play <= 3:
        raise ConfigError(f"--play {play}: the plays before the position, 0 … 3")
    if play >= counts[trick - 1]:
        raise ConfigError(f"--play {play}: trick {trick} of deal {rec['deal']} has "
                          f"{counts[trick - 1]} recorded play(s), so --play may be 0 … "
                          f"{counts[trick - 1] - 1}")
    k = 0
    for dec in decisions(rec):
        if dec.kind == "play" and dec.trick == trick:
            if k == play:
                return dec
            k += 1
    raise RecordError(f"deal {rec['deal']}: trick {trick}, play {play + 1} is not in the "
                      f"replayed record")  # pragma: no cover - the record validated


def solve_record(path: str, deal: int, trick: int, play: int = 0,
                 max_nodes: int = DEFAULT_NODES,
                 validate: Callable[[dict[str, Any]], list[str]] | None = None
                 ) -> dict[str, Any]:
    """The solution at the position (``position``) as a JSON-ready dict: the solver's
    ``Solution.to_dict()`` (choices with cards, score, settlement; best, seconds, nodes,
    cards_left, …) with ``deal``, ``trick``, ``play``, ``records`` (how many records of the
    deal the file holds; the first is solved) and each choice's ``best`` flag. SolveError
    when the position is not settled within ``max_nodes``."""
    rec, count = find_record(path, deal, validate)
    dec = position(rec, trick, play)
    sol = Solver(max_nodes=max_nodes).solve((dec.st, dec.u, Rules.from_dict(rec["rules"])
                                             .array()))
    return {**result_dict(sol, deal, trick, play, count), **hands_at(dec)}


def hands_at(dec: Decision) -> dict[str, Any]:
    """``trump``, the four ``hands`` (card names) at the position and the ``trick_so_far``
    (``[seat, cards]`` of its first plays), read from the replayed position's engine arrays."""
    st, u = dec.st, dec.u
    trump = int(st[S.S_TRUMP])
    ids = ID_OF_KEY[trump]
    hands = [[CARD_NAMES[c] for c in sorted(mask_cards(int(u[S.U_ONCE + s]),
                                                       int(u[S.U_TWICE + s]), ids))]
             for s in range(4)]
    leader = int(st[S.S_LEADER])
    so_far = [[(leader + k) % 4, play_cards(make_code(int(st[S.S_TRICK_A + k]),
                                                      int(st[S.S_TRICK_B + k])), trump)]
              for k in range(int(st[S.S_POS]))]
    return {"trump": SUITS[trump], "hands": hands, "trick_so_far": so_far}


def result_dict(sol: Solution, deal: int, trick: int, play: int,
                records: int = 1) -> dict[str, Any]:
    d = sol.to_dict()
    best = sol.best
    for c, row in zip(sol.choices, d["choices"]):
        row["best"] = c.code == best.code
    return {"deal": deal, "trick": trick, "play": play, "records": records,
            "best_score": best.score, "best_settlement": best.settlement, **d}


def render(res: dict[str, Any]) -> str:
    """The solution as a table: the seat to act, the cards left, every play with its exact
    score and settlement, the best marked."""
    seat = res["seat"]
    side = "attacker" if seat in res["attackers"] else "defender"
    where = (f"start of trick {res['trick']}" if res["play"] == 0 else
             f"trick {res['trick']} after {res['play']} play(s)")
    out = [f"Deal {res['deal']}, {where}: seat {seat} ({side}) to play; cards left "
           + ", ".join(f"seat {i} {n}" for i, n in enumerate(res["cards_left"]))
           + f"; attackers' points so far {res['points']}"]
    if res.get("records", 1) > 1:
        out.append(f"(the file holds {res['records']} records of deal {res['deal']}: the "
                   f"first is solved)")
    if res.get("hands") is not None:
        for i, h in enumerate(res["hands"]):
            out.append(f"  seat {i}: {hand_line(h, res['trump'])}")
        if res.get("trick_so_far"):
            out.append("  trick so far: " + "  ".join(
                f"{s}:{' '.join(pretty(c) for c in cards)}" for s, cards in res["trick_so_far"]))
    out.append("Exact values with all hands known and perfect play by all four "
               "(score: the attackers' final score, R22-R23; settlement: seat "
               f"{seat}'s, R24, points per player):")
    out.append(f"  {'play':<12} {'score':>5} {'settlement':>10}")
    for c in res["choices"]:
        cards = " ".join(pretty(x) for x in c["cards"])
        mark = "  best" if c["best"] else ""
        out.append(f"  {cards:<12} {c['score']:>5} {c['settlement']:>+10d}{mark}")
    out.append(f"{len(res['choices'])} legal play(s); solved in {res['seconds']:.3f} s, "
               f"{res['nodes']:,} nodes")
    return "\n".join(out)
