"""Export of every stored pair as a Parquet file (``export_parquet``).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from sim.analysis import ladder as model
from sim.errors import ConfigError
from sim.tools.ladder.database import Ladder
from sim.tools.ladder.schema import score2_of


# --- export -------------------------------------------------------------------------------
def export_parquet(lad: Ladder, out: str, anchor: str | None = None,
                   anchor_elo: float = 0.0) -> int:
    """Every stored pair (removed players' too) as a Parquet file: ``matchup, a, b, deal,
    score2, margin, x2, time, chunk, source``; returns the number of rows. The file's
    metadata key ``shuangkou.ladder.ratings`` holds the rating list of the active players
    (``show --json``'s ``anchor``, ``anchor_elo`` and per player ``player``, ``status``,
    ``rating``, ``se``, ``lo``, ``hi``), ``anchor`` held at ``anchor_elo``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("ladder export needs pyarrow: pip install 'shuangkou[parquet]'") \
            from None
    specs = dict(lad.con.execute("SELECT id, spec FROM players"))
    ms = {m: (a, b) for m, a, b in lad.con.execute("SELECT id, a, b FROM matchups")}
    cols: dict[str, list[Any]] = {k: [] for k in ("matchup", "deal", "x2", "chunk", "unix")}
    sources: list[str] = []
    src_index: dict[str, int] = {}
    src_codes = []
    for cid, m, first, n, unix, src, d, x in lad.con.execute(
            "SELECT id, matchup, first_deal, n, unix, source, deals, x2 FROM chunks "
            "WHERE n > 0 ORDER BY id"):
        dv, xv = lad.decode_chunk(m, first, n, d, x)
        cols["matchup"].append(np.full(n, m, np.int64))
        cols["deal"].append(dv)
        cols["x2"].append(xv)
        cols["chunk"].append(np.full(n, cid, np.int64))
        cols["unix"].append(np.full(n, unix))
        if src not in src_index:
            src_index[src] = len(sources)
            sources.append(src)
        src_codes.append(np.full(n, src_index[src], np.int32))
    cat = {k: np.concatenate(v) if v else np.zeros(0) for k, v in cols.items()}
    matchup = cat["matchup"].astype(np.int64)
    x2 = cat["x2"].astype(np.int32)
    names = sorted(specs)
    pos = {pid: k for k, pid in enumerate(names)}
    mid = np.array(sorted(ms), dtype=np.int64)  # ids as stored: looked up, never an index
    a_of = np.array([pos[ms[m][0]] for m in mid.tolist()], np.int32)
    b_of = np.array([pos[ms[m][1]] for m in mid.tolist()], np.int32)
    at = np.searchsorted(mid, matchup) if mid.size else np.zeros(0, np.int64)
    dict_names = pa.array([specs[p] for p in names], pa.string())
    table = pa.table({
        "matchup": pa.array(matchup),
        "a": pa.DictionaryArray.from_arrays(pa.array(a_of[at]), dict_names),
        "b": pa.DictionaryArray.from_arrays(pa.array(b_of[at]), dict_names),
        "deal": pa.array(cat["deal"].astype(np.int64)),
        "score2": pa.array(score2_of(x2)),
        "margin": pa.array(x2 / 2.0),
        "x2": pa.array(x2),
        "time": pa.array((cat["unix"] * 1e6).astype("datetime64[us]"), pa.timestamp("us",
                                                                                    tz="UTC")),
        "chunk": pa.array(cat["chunk"].astype(np.int64)),
        "source": pa.DictionaryArray.from_arrays(
            pa.array(np.concatenate(src_codes) if src_codes else np.zeros(0, np.int32)),
            pa.array(sources, pa.string())),
    })
    data = lad.data(times=False)
    listed = model.show_json(*model.plain(data, model.fit(data, anchor=anchor,
                                                          anchor_elo=anchor_elo)))
    ratings = {"anchor": listed["anchor"], "anchor_elo": listed["anchor_elo"],
               "players": [{k: p[k] for k in ("player", "status", "rating", "se", "lo", "hi")}
                           for p in listed["players"]]}
    table = table.replace_schema_metadata({"shuangkou.ladder.ratings": json.dumps(ratings)})
    # start-up: the ladder's other commands load no tournament code
    from sim.tournament.results import atomic_write

    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    atomic_write(os.path.abspath(out), lambda f: pq.write_table(table, f, compression="zstd"))
    return table.num_rows
