"""Import of a tournament results folder's pairs into the ladder (``import_folder``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from sim.errors import ConfigError
from sim.tools.ladder.database import Ladder, run_lock
from sim.tools.ladder.schema import utc_now


# --- import -------------------------------------------------------------------------------
def import_folder(lad: Ladder, folder: str) -> dict[str, Any]:
    """Add a tournament results folder's pairs (data only: nothing it names is imported).
    The same folder twice changes nothing (its run id and chunk indices are the key); its
    seed and rules must be the ladder's; a pair whose deal the matchup already holds is
    skipped. All of a folder's chunks go in one transaction."""
    # start-up: the ladder's other commands load no tournament code
    from sim.tournament.chunks import DEAL_VALUES, pair_results, plan_chunks
    from sim.tournament.results import (
        checked_chunks,
        deals_path,
        read_config,
        read_meta,
        read_run_id,
        read_table_bytes,
        read_tally_cols,
    )

    if not os.path.isdir(folder):
        raise ConfigError(f"{folder!r} is not a tournament results folder (not a folder)")
    cfg = read_config(folder)
    if not cfg.duplicate:
        raise ConfigError(f"{folder!r} was played without duplicate (duplicate = false): the "
                          f"ladder keeps duplicate pairs only")
    if cfg.seed != lad.seed:
        raise ConfigError(f"{folder!r} was played with seed {cfg.seed}, the ladder's seed is "
                          f"{lad.seed}: its deal numbers are other cards, so its pairs cannot "
                          f"share deals with the ladder's (start a ladder with --seed "
                          f"{cfg.seed} in another --db)")
    rules = dict(cfg.rules)
    if rules != lad.rules:
        diff = "; ".join(f"{k}: {lad.rules.get(k)!r} (ladder) vs {rules.get(k)!r} (folder)"
                         for k in sorted(set(rules) | set(lad.rules))
                         if rules.get(k) != lad.rules.get(k))
        raise ConfigError(f"{folder!r} was played with other rules than the ladder's ({diff}): "
                          f"its pairs cannot be rated together with the ladder's")
    lad.check_pairs()
    source = "import:" + (read_run_id(folder) or cfg.hash())
    ms = cfg.matchups()
    chunks_done = {int(r[0]) for r in lad.con.execute(
        "SELECT source_chunk FROM chunks WHERE source = ?", (source,))}
    todo = []
    for path, chunk, tally in checked_chunks(folder, cfg, plan_chunks(cfg), stats=True):
        if chunk.index in chunks_done:
            continue
        vals = tally.get(DEAL_VALUES)
        if vals is not None:
            x2 = vals.values
        else:
            cols = read_tally_cols(path)
            if cols is None:
                cols = _table_cols(path, read_meta(path), deals_path, read_table_bytes)
            x2 = pair_results(cols, True)
        if x2.size < chunk.n or tally["pairs"].n != chunk.n:
            raise ConfigError(f"chunk file {path!r} is corrupt ({x2.size} per-pair results "
                              f"and {tally['pairs'].n} pairs in its statistics for "
                              f"{chunk.n} pairs): delete it, or import another folder")
        todo.append((chunk, np.asarray(x2[:chunk.n], dtype=np.int64)))
    new_pairs = skipped = 0
    with run_lock(lad.path, "ladder import"), lad.transaction() as con:
        iso, unix = utc_now()
        ids = _entrant_ids(folder, con, cfg.players, iso)
        con.execute("INSERT OR IGNORE INTO imports(source, path, config_hash, time) "
                    "VALUES (?, ?, ?, ?)", (source, os.path.abspath(folder), cfg.hash(), iso))
        for chunk, x2 in todo:
            a, b = ms[chunk.matchup]
            ia, ib = ids[cfg.players[a]], ids[cfg.players[b]]
            if ia > ib:  # the ladder's side A is the player with the lower id
                ia, ib, x2 = ib, ia, -x2
            m = lad.matchup(ia, ib, con)
            deals = np.arange(chunk.first, chunk.first + chunk.n, dtype=np.int64)
            have = np.fromiter((r[0] for r in con.execute(
                "SELECT deal FROM pairs WHERE matchup = ? AND deal BETWEEN ? AND ?",
                (m, int(deals[0]), int(deals[-1])))), dtype=np.int64) if deals.size else \
                np.zeros(0, np.int64)
            if have.size:
                new = ~np.isin(deals, have)
                skipped += int((~new).sum())
                deals, x2 = deals[new], x2[new]
            lad.insert_chunk(con, m, deals, x2, source=source, source_chunk=chunk.index,
                             when=(iso, unix))
            new_pairs += int(deals.size)
    return {"source": source, "chunks": len(todo), "pairs": new_pairs, "skipped": skipped,
            "players": list(cfg.players)}


def _entrant_ids(folder: str, con: Any, players: Any, iso: str) -> dict[str, int]:
    """The ladder's player id of each of a folder's players, added where new. A partners
    tournament's entrants are teams (docs/ladder.md "Partners"): its mirror team ``a+a`` is
    the plain player ``a``, and a mixed team ``a+b`` the ladder's team entrant, with its two
    players added first (in the folder's order); a team the ladder holds with its players
    the other way round (``b`` added first) was seated otherwise, and is refused."""
    from strategies.registry import team_members  # (entry points: as in runs)

    def get(spec: str) -> int:
        row = con.execute("SELECT id FROM players WHERE spec = ?", (spec,)).fetchone()
        return int(row[0]) if row else int(con.execute(
            "INSERT INTO players(spec, plugin, added) VALUES (?, NULL, ?)",
            (spec, iso)).lastrowid)

    split = {spec: team_members(spec) for spec in players}
    plain = [m for spec in players for m in split[spec]]
    single = {m: get(m) for m in dict.fromkeys(plain)}  # the players first, in their order
    ids = {}
    for spec in players:
        ms = split[spec]
        if len(ms) == 1 or ms[0] == ms[1]:
            ids[spec] = single[ms[0]]
            continue
        if single[ms[0]] > single[ms[1]]:
            raise ConfigError(f"{folder!r} plays team {spec!r} with {ms[0]!r} in its first "
                              f"seat, and this ladder seats {ms[1]!r} first (added first): "
                              f"import it into a ladder made from it (another --db)")
        ids[spec] = get(spec)
    return ids


def _table_cols(path: str, meta: dict[str, Any], deals_path: Any, read_table_bytes: Any
                ) -> dict[str, np.ndarray]:
    """A chunk's ``orientation``, ``settle0``, ``settle1`` from its per-deal table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    dpath = deals_path(path)
    data = read_table_bytes(dpath, path, meta)
    try:
        t = pq.read_table(pa.BufferReader(data), columns=["orientation", "settle0", "settle1"])
        return {c: t.column(c).to_numpy() for c in t.column_names}
    except Exception as e:  # noqa: BLE001 - a torn or foreign file: one line
        raise ConfigError(f"per-deal file {dpath!r} is corrupt ({type(e).__name__}: {e}): "
                          f"the folder cannot be imported") from None
