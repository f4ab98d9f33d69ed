"""Swing deals of a duplicate tournament: the pairs where the same cards, teams swapped, ended
furthest from a tie, replayed exactly and compared decision by decision (docs/tournaments.md
"Swing deals").

Each chunk keeps its ``SWINGS_KEPT`` largest swings (``sim.analysis.stats.Swings``, computed
from the per-deal results the chunk already has), merged in a total order (swing descending,
then deal ascending): the list is the same for any ``--jobs``, chunk size and ``--resume``.
No record is stored while the run plays: a deal is exact from seed + deal + the two specs, so
at the end of a run the ``SWINGS_SHOWN`` largest of each matchup are replayed
(``game_records``, the function that writes ``records.jsonl``) into ``swings.jsonl``,
and ``shuangkou replay/analyze RESULTS --swings N`` replay any of the kept ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from sim.analysis import viewer
from sim.analysis.stats.swings import SWINGS_KEPT, SWINGS_SHOWN, Swings
from sim.analysis.summary import divergence_text
from sim.cards import SUITS
from sim.errors import ConfigError
from sim.loops.steps import choice_label, decision_steps, notation
from sim.record import dumps, read_records
from sim.rules import Rules
from sim.tournament import results

# swings.jsonl and swings.html (the deal viewer, docs/viewer.md, of the kept swing deals) are
# named with every other file of a results folder, once: sim.tournament.results.RUN_FILES
from sim.tournament.results import SWINGS_FILE, SWINGS_PAGE, atomic_write, check_own, read_config

VIEW_PAIRS = 100  # pairs on that page at most, the first matchups' (a few MB)

__all__ = ["SWINGS_FILE", "SWINGS_KEPT", "SWINGS_PAGE", "SWINGS_SHOWN", "divergence",
           "divergence_text", "game_records", "heading", "keep", "load_details", "load_state",
           "pair_records", "pairs", "run_loops", "side_by_side", "top"]


def top(state: Mapping[str, Any], matchup: int, n: int) -> list[dict[str, Any]]:
    """The ``n`` largest swings of ``matchup`` (``Swings.rows``), largest first."""
    d = state["matchups"][matchup]["tally"].get("swings")
    return Swings.from_dict(d).rows()[:n] if d else []


def game_records(seed: int, rules: Any, a_spec: str, b_spec: str, matchup: int,
                 picks: Sequence[tuple[int, int]], timeout: float = 0.0) -> bytes:
    """JSON Lines records of the (deal, orientation) games ``picks`` of a matchup: what a
    tournament writes into ``records.jsonl`` (``sim.tournament.worker`` calls this) and what
    ``pair_records`` replays. ``rules``: the config's ``(name, value)`` pairs."""
    from sim.loops import runner  # (the loops: see run_loops)

    rules = Rules.from_dict(dict(rules))
    specs = ([a_spec, b_spec], [b_spec, a_spec])
    lines = []
    for d, o in picks:
        seats = runner.make_seats(specs[o])
        for rec in runner.iter_records(seed, d, 1, seats, rules, timeout or None):
            rec["tournament"] = {"matchup": matchup, "orientation": o}
            lines.append(dumps(rec))
    return "".join(line + "\n" for line in lines).encode()


def pair_records(cfg: Any, matchup: int, deal: int) -> list[dict[str, Any]]:
    """The records of ``deal`` of ``matchup`` at both tables (orientation 0, then 1), exactly
    as a run with records on writes them (the same function makes both)."""
    a, b = cfg.matchups()[matchup]
    data = game_records(cfg.seed, cfg.rules, cfg.players[a], cfg.players[b], matchup,
                        [(deal, 0), (deal, 1)], cfg.timeout)
    return [json.loads(line) for line in data.decode().splitlines()]


def divergence(rec0: Mapping[str, Any], rec1: Mapping[str, Any],
               loops: Any = None) -> dict[str, Any] | None:
    """The first decision at which the two tables differ: the same seat, holding the same
    cards in the same position (every earlier choice was the same), chose differently. None if
    they never differ. ``phase``: ``"calling"`` (a show, a pass or a give-back) or ``"play"``;
    ``play``: in the play, how many cards were played before it from the first lead.
    ``loops``: the run's compiled built-in loops, to replay the records in
    (``sim.loops.steps.decision_steps``).
    """
    for x, y in zip(decision_steps(dict(rec0), loops), decision_steps(dict(rec1), loops)):
        if x.played == y.played and x.seat == y.seat and x.kind == y.kind:
            continue
        trump = SUITS.index(rec0["trump"]) if x.kind == "play" else -1
        texts = [choice_label(d.kind, notation(d.kind, d.played, trump)) for d in (x, y)]
        play = None  # plays before this one from the first lead (the viewer's position)
        if x.kind == "play":
            tr = rec0["tricks"][x.trick - 1]
            play = 4 * (x.trick - 1) + (x.seat - tr["leader"]) % 4
        return {"step": x.step, "play": play, "seat": x.seat, "kind": x.kind,
                "phase": "play" if x.kind == "play" else "calling", "trick": x.trick,
                "round": x.round, "redeal": x.redeal, "table0": texts[0], "table1": texts[1],
                "player0": rec0["seats"][x.seat], "player1": rec1["seats"][x.seat]}
    return None


def keep(out: str, cfg: Any, state: dict[str, Any], n: int = SWINGS_SHOWN) -> None:
    """At the end of a duplicate run: replay the ``n`` largest swings of every matchup into
    ``swings.jsonl`` and put their divergences into ``state["swing_details"]``."""
    if not cfg.duplicate:
        return
    records: list[dict[str, Any]] = []
    with_swings = []
    for m in range(len(state["matchups"])):
        rows = top(state, m, n)
        if rows:  # the loops its records play in (a matchup without swings needs none)
            with_swings.append(m)
        for rank, row in enumerate(rows, 1):
            pair = pair_records(cfg, m, row["deal"])
            for rec in pair:
                rec["tournament"]["swing"] = rank
            records += pair
    lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    atomic_write(os.path.join(out, SWINGS_FILE), lambda f: f.write(lines.encode()))
    _write_page(out, cfg.name, records)
    state["swing_details"], state["swing_views"] = _details(records, True,
                                                            matchup_loops(cfg, with_swings))


def matchup_loops(cfg: Any, matchups: Sequence[int]) -> dict[int, Any]:
    """The compiled loops each of ``matchups`` (indices into ``cfg.matchups()``) played in
    (``run_loops``): a run's swing deals are compared there, at no compile beyond the run's."""
    pairs = cfg.matchups()
    return {m: run_loops(cfg.players[pairs[m][0]], cfg.players[pairs[m][1]])
            for m in sorted(set(matchups)) if 0 <= m < len(pairs)}


def run_loops(a_spec: str, b_spec: str) -> Any:
    """The built-in compiled loops that a matchup of ``a_spec`` and ``b_spec`` plays in (its
    records and swing deals replay there at no new compile), or None (a plug-in or a Python
    seat: records are replayed through ``sim.Deal``)."""
    # (the loops, only where deals are replayed: shuangkou report reads a run's swings without)
    from sim.loops import runner

    tables = runner.compiled_tables(runner.make_seats([a_spec, b_spec]))
    if tables is None or tables.loops.mod is not None:
        return None
    return tables.loops.builtin


def _write_page(out: str, name: str, records: Sequence[Mapping[str, Any]]) -> None:
    """``swings.html``: both tables of each kept swing deal side by side in the deal viewer
    (records ``2k`` and ``2k + 1`` are a pair), the first ``VIEW_PAIRS`` pairs."""
    shown = list(records[:2 * VIEW_PAIRS])
    text = viewer.page(shown, pairs=[(i, i + 1) for i in range(0, len(shown), 2)],
                title=f"Swing deals of tournament {name}",
                note="each duplicate pair's two tables side by side (the same cards, teams "
                     "swapped), the largest swings of each matchup first")
    atomic_write(os.path.join(out, SWINGS_PAGE), lambda f: f.write(text.encode()))


def _details(records: Sequence[Mapping[str, Any]], page: bool,
             loops: Mapping[int, Any] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """The divergence of each pair (key ``"matchup:deal"``) and, with ``page``, its place in
    ``swings.html`` (``swings.html#d=I``, I the index of its first table on the page, with
    ``&p=P`` after the first differing play when the tables part in the play)."""
    tables: dict[tuple[int, int], dict[int, Mapping[str, Any]]] = {}
    first: dict[tuple[int, int], int] = {}
    for i, r in enumerate(records):
        t = r["tournament"]
        tables.setdefault((t["matchup"], r["deal"]), {})[t["orientation"]] = r
        first.setdefault((t["matchup"], r["deal"]), i)
    details = {f"{m}:{d}": divergence(p[0], p[1], (loops or {}).get(m))
               for (m, d), p in tables.items() if 0 in p and 1 in p}
    views = {}
    for (m, d), i in first.items():
        key = f"{m}:{d}"
        if page and i < 2 * VIEW_PAIRS and key in details:
            div = details[key]  # a divergence in the play: open the page just after it
            at = f"&p={div['play'] + 1}" if div and div.get("play") is not None else ""
            views[key] = f"{SWINGS_PAGE}#d={i}{at}"
    return details, views


def load_details(run_dir: str, cfg: Any = None
                 ) -> tuple[dict[str, Any], dict[str, str]] | None:
    """The divergences of the swing deals kept in ``swings.jsonl`` and their places in
    ``swings.html`` (``shuangkou report``); None when the file is absent. A file that is not
    the records of this run's swing deals is one line (``RecordError``, ``ConfigError``).
    ``cfg``: the run's own config, given by the run that re-renders itself: the records are
    compared in the loops the run played in (``matchup_loops``: cached, nothing compiles);
    without it (a received folder) through ``sim.Deal``."""
    path = os.path.join(run_dir, SWINGS_FILE)
    if not os.path.lexists(path):
        return None
    redo = ("delete it (the report then goes without the swing deals' divergences; "
            "tournament --force writes it again)")
    check_own(path, run_dir)
    recs = list(read_records(path))  # a damaged file: one line (RecordError), never ignored
    for rec in recs:
        t = rec.get("tournament")
        if not (isinstance(t, dict) and type(t.get("matchup")) is int
                and t.get("orientation") in (0, 1) and type(t.get("swing")) is int):
            raise ConfigError(f"{path!r} is not the swing deals of this run (deal {rec['deal']}: "
                              f"'tournament' must say the matchup, orientation and swing "
                              f"rank): {redo}")
    loops = None if cfg is None else matchup_loops(
        cfg, [r["tournament"]["matchup"] for r in recs])
    try:
        return _details(recs, os.path.exists(os.path.join(run_dir, SWINGS_PAGE)), loops)
    except Exception as e:  # noqa: BLE001 - records of this engine, but not a run's swings
        raise ConfigError(f"{path!r} is not the swing deals of this run "
                          f"({' '.join(str(e).split())[:200]}): {redo}") from None


def load_state(run_dir: str, cfg: Any = None) -> dict[str, Any]:
    """``results.load_state`` with the swing deals' divergences and viewer places read back
    from ``swings.jsonl`` (nothing is replayed): what ``shuangkou report`` renders. ``cfg``:
    see ``load_details``."""
    state = results.load_state(run_dir)
    details = load_details(run_dir, cfg)
    if details is not None:
        state["swing_details"], state["swing_views"] = details
    return state


def pairs(run_dir: str, n: int) -> list[dict[str, Any]]:
    """The ``n`` largest swings of every matchup of the finished duplicate run in ``run_dir``,
    each with both tables' records and the divergence: records from ``swings.jsonl`` where it
    holds them, else replayed (exact: seed + deal + specs)."""
    if not os.path.isdir(run_dir):
        raise ConfigError(f"{run_dir!r} is not a folder: give a tournament results folder "
                          f"(results/NAME)")
    cfg = read_config(run_dir)
    state = results.load_state(run_dir)
    if not state["complete"]:
        raise ConfigError(f"{run_dir!r} holds no finished run ({state['chunks_merged']} of "
                          f"{state['chunks_total']} chunks): finish it with shuangkou "
                          f"tournament --resume first")
    if not cfg.duplicate:
        raise ConfigError(f"{run_dir!r} is not a duplicate run: swing deals compare the two "
                          f"tables of a duplicate pair (duplicate = true)")
    kept: dict[tuple[int, int, int], dict[str, Any]] = {}
    path = os.path.join(run_dir, SWINGS_FILE)
    if os.path.exists(path):
        try:
            for r in read_records(path):
                t = r.get("tournament") or {}
                if r.get("seed") == cfg.seed:
                    kept[(t.get("matchup"), r.get("deal"), t.get("orientation"))] = r
        except Exception:  # noqa: BLE001 - a damaged file: replay instead
            kept = {}
    out = []
    ms = cfg.matchups()
    for m, (a, b) in enumerate(ms):
        for rank, row in enumerate(top(state, m, n), 1):
            d = row["deal"]
            specs = ([cfg.players[a], cfg.players[b]] * 2, [cfg.players[b], cfg.players[a]] * 2)
            recs = [kept.get((m, d, o)) for o in (0, 1)]
            if any(r is None or r.get("seats") != specs[o] for o, r in enumerate(recs)):
                recs = pair_records(cfg, m, d)
            out.append({"matchup": m, "a": cfg.players[a], "b": cfg.players[b], "rank": rank,
                        **row, "records": recs, "divergence": divergence(*recs)})
    return out


def side_by_side(left: str, right: str, gap: int = 4) -> str:
    """Two texts in two columns, their paragraphs (blocks between blank lines) side by side:
    the calling beside the calling, the tricks beside the tricks."""
    lp, rp = left.split("\n\n"), right.split("\n\n")
    n = max(len(lp), len(rp))
    lp += [""] * (n - len(lp))
    rp += [""] * (n - len(rp))
    w = max((len(x) for x in left.splitlines()), default=0) + gap
    out = []
    for a, b in zip(lp, rp):
        al, bl = a.splitlines(), b.splitlines()
        rows = max(len(al), len(bl))
        al += [""] * (rows - len(al))
        bl += [""] * (rows - len(bl))
        out.append("\n".join((x.ljust(w) + y).rstrip() for x, y in zip(al, bl)))
    return "\n\n".join(out)


def heading(p: Mapping[str, Any]) -> str:
    """``Matchup 0 greedy vs expert, swing 1: deal 17, A (greedy) -12.5 per deal per player
    (table 1 -5, table 2 -20)``."""
    return (f"Matchup {p['matchup']} {p['a']} vs {p['b']}, swing {p['rank']}: deal {p['deal']}"
            f", A ({p['a']}) {p['x']:+g} per deal per player (A's settlement: table 1, A in "
            f"seats 0 & 2: {p['a0']:+d}; table 2, A in seats 1 & 3: {p['a1']:+d})")
