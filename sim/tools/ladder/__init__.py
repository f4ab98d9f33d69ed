"""The ladder: one SQLite database of every duplicate pair ever played between registered
players, rated together (``sim.analysis.ladder``), extended by runs that go where the ranking
is least certain (docs/ladder.md).

The database
------------
One file (default ``results/ladder.sqlite``), stdlib ``sqlite3``, WAL journal (readers never
wait for the writer). ``PRAGMA application_id`` is ``APP_ID`` and ``PRAGMA user_version`` the
schema version ``SCHEMA``; both are checked on every open, so a file that is not a ladder, a
newer schema, a corrupt, read-only or locked file is one ``LadderError`` line; so is a file
whose schema, pages or values are not what this code writes (``check_schema``,
``check_integrity``, ``check_columns``: a received file is data). Tables:

- ``meta(key, value)``: ``application``, ``schema``, ``seed``, ``rules`` (JSON), ``created``;
- ``players(id, spec, plugin, added, removed)``: ``plugin`` is the file ``add --plugin`` was
  given, a name only (a run loads plug-ins from its own --plugin, never from the database);
  ``removed`` players are not scheduled, not shown and their pairs not rated (re-adding the
  spec brings them back, pairs included); a team entrant of a partners run is a row whose
  ``spec`` is the team ``a+b`` of two players (``Ladder.add_teams``; docs/ladder.md
  "Partners"), rated while both its players are active;
- ``matchups(id, a, b, next_deal)`` with ``a < b`` (player ids): ``next_deal`` is above every
  deal the matchup has stored, and a run plays its next pairs from there;
- ``chunks(id, matchup, first_deal, n, time, unix, source, source_chunk, seconds, deals, x2)``:
  one row per committed chunk; ``deals`` and ``x2`` are the chunk's pairs as little-endian
  numpy arrays (``encode``/``decode``, read with ``np.frombuffer``; ``deals`` empty when they
  run on from ``first_deal``, ``x2`` ``<i2`` or ``<i4`` by its length): what ``show`` reads,
  a few thousand rows for millions of pairs;
- ``pairs(matchup, deal, chunk, score2, x2)``, primary key ``(matchup, deal)`` (a deal is
  never stored twice for a matchup): the same pairs row by row, for SQL users;
- ``incidents(id, player, kind, matchup, deal, time, message)``: a bot's crash, timeout or
  illegal move (``kind`` ``crash``, ``timeout``, ``illegal``);
- ``imports(source, path, config_hash, time)``: each results folder imported (``source`` is
  ``import:RUNID``, the ``chunks.source`` of its chunks);
- the view ``pair_results``: each pair with both players' specs, ``margin`` (``x2 / 2.0``)
  and the chunk's time.

``x2`` is the exact integer sum of side A's per-player settlement over the pair's two games
(A the player with the lower id), so ``x2 / 2`` is the tournament's per-pair result ``x``;
``score2`` is 2 for a won pair (``x2 > 0``), 1 drawn, 0 lost.

Writing
-------
Every chunk a run finishes is committed in one transaction (its ``chunks`` row, its
``pairs`` rows, the matchup's ``next_deal``): a ``kill -9`` loses at most the chunks in
flight. A run holds an OS lock (``flock``) on ``DB.lock`` for its whole length; a second run
(or an import) stops at once with one line naming the holder (pid, host, start time). ``add``
and ``remove`` are single short transactions and may run beside a run.

Modules
-------
``schema`` (the limits, the tables' SQL, a chunk's BLOBs), ``checks`` (a received file
checked), ``database`` (``Ladder``: open, read, write; the run lock), ``runs`` (``run`` and
its scheduling), ``folders`` (``import_folder``), ``export`` (``export_parquet``). This
package holds the names the command line and the tests use.
"""

from __future__ import annotations

from sim.core.limits import MAX_JOBS
from sim.tools.ladder.checks import check_received_specs
from sim.tools.ladder.database import LOCK_SUFFIX, Ladder, Player, run_lock
from sim.tools.ladder.export import export_parquet
from sim.tools.ladder.folders import import_folder
from sim.tools.ladder.runs import RunState, classify, culprit, run
from sim.tools.ladder.schema import (
    APP_ID,
    CHUNK_FIRST,
    CHUNK_MAX,
    CHUNK_MIN,
    CHUNK_SECONDS,
    DEFAULT_ANCHOR,
    DEFAULT_DB,
    FIT_SHARE,
    KILL_IN_COMMIT,
    KINDS,
    MAX_ANCHOR_ELO,
    MAX_CHUNK_N,
    MAX_PLAYERS,
    MAX_POINTS,
    MAX_RUN_PAIRS,
    MAX_SPEC,
    MAX_TEXT,
    MAX_TIMEOUT,
    SCHEMA,
    decode,
    encode,
    iso_time,
    score2_of,
)

__all__ = [
    "APP_ID", "CHUNK_FIRST", "CHUNK_MAX", "CHUNK_MIN", "CHUNK_SECONDS",
    "DEFAULT_ANCHOR", "DEFAULT_DB", "FIT_SHARE", "KILL_IN_COMMIT", "KINDS", "LOCK_SUFFIX",
    "MAX_ANCHOR_ELO", "MAX_CHUNK_N", "MAX_JOBS", "MAX_PLAYERS", "MAX_POINTS", "MAX_RUN_PAIRS",
    "MAX_SPEC", "MAX_TEXT", "MAX_TIMEOUT", "SCHEMA", "Ladder", "Player", "RunState",
    "check_received_specs", "classify", "culprit", "decode", "encode", "export_parquet",
    "import_folder", "iso_time", "run", "run_lock", "score2_of",
]
