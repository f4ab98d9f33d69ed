"""A tournament's results folder (docs/results.md): chunk files and
per-deal tables written atomically, the one-writer lock (``sim.tournament.lock``), the stored
config, and reading it all back (``iter_deals``, ``load_deals``, ``load_state``) without
replaying anything.

The per-deal table
------------------
Each chunk's Parquet file holds the columns ``DEAL_COLUMNS`` for its deals (in deal order,
orientation 0 before 1), then the names ``LABEL_COLUMNS`` and ``WHO_COLUMNS`` (each seat's,
each team's and the caller's player) and the caller's settlement. ``load_deals(run_dir)``
concatenates them into a dict of numpy arrays, so
``pandas.DataFrame(load_deals("results/quick"))`` is a data frame. ``seat0 … seat3`` are indices
into the players list of ``config.json`` (``summary.json`` "players"); ``attacker_team`` is 0
for seats 0+2, 1 for seats 1+3, -1 for a void deal; side A attacks when ``attacker_team ==
orientation``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import glob
import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from sim.core.files import decode_json, open_received, read_received
from sim.core.limits import MAX_DEAL
from sim.core.tables import DEAL_COLUMNS
from sim.errors import ConfigError
from sim.tournament.chunks import (
    FORMAT,
    Aggregate,
    Chunk,
    ChunkResult,
    check_tally,
    first_pairs,
    games_per_deal,
    plan_chunks,
    tally_from_json,
    tally_games,
    tally_schema,
    tally_to_json,
)
from sim.tournament.config import MAX_MATCHUPS, from_dict
from sim.tournament.lock import locked, pid_alive  # noqa: F401  (locked re-exported)

# string columns of the Parquet table (dictionary-encoded: one copy of each name per file)
LABEL_COLUMNS = ("matchup_label", "player_a", "player_b")
# who played where, by name (dictionary-encoded too; caller_player is null for a void deal),
# and the caller's own settlement: "mean settlement by who called trump" is one groupby,
# df.groupby("caller_player")["caller_settle"].mean()
WHO_COLUMNS = ("seat0_player", "seat1_player", "seat2_player", "seat3_player",
               "team0_player", "team1_player", "caller_player")
CALLER_SETTLE = "caller_settle"
NAMED_COLUMNS = (*LABEL_COLUMNS, *WHO_COLUMNS, CALLER_SETTLE)  # beyond DEAL_COLUMNS
CHUNK_DIR = "chunks"
DEALS_DIR = "deals"  # the per-deal table: deals/c000123.parquet beside chunks/c000123.npz
# the most a file of a results folder may be: a received folder's files are read only if they
# are regular files of at most this size (sim.core.files: no FIFO, no device, no endless read)
MAX_JSON_BYTES = 64 << 20  # config.json (a round robin of 1,000 players is ~100 KB), run.json
MAX_DATA_BYTES = 1 << 36  # a chunk file or its per-deal table (64 GiB: far past any chunk)

# Every file a run writes into its results folder (docs/results.md), listed once: the writers
# (sim.tournament.run, sim.tournament.swings, sim.analysis.report) write these names and no
# other, and `tournament --force` removes exactly these of the previous run, never a file of the
# user's. Top-level names, then (folder, pattern) for the files inside its folders.
SWINGS_FILE = "swings.jsonl"  # sim.tournament.swings: the replayed swing deals
SWINGS_PAGE = "swings.html"  # … and their deal-viewer page
FAULTS_FILE = "faults.jsonl"  # write_faults: every fault of a bot in another process
RUN_FILES = ("config.json", "config.toml", "run.json", "summary.json", "summary.md",
             "report.html", "records.jsonl", SWINGS_FILE, SWINGS_PAGE, FAULTS_FILE)
PLOTS_DIR = "plots"
RUN_PATTERNS = ((CHUNK_DIR, r"c\d{6}\.npz"), (DEALS_DIR, r"c\d{6}\.parquet"),
                (PLOTS_DIR, r"(scores_m\d+|settlement|ratings)\.png"))  # report.render_plots
# temporary files of a write that was interrupted: atomic_write's ``.tmp-PID-NAME`` and
# sim.analysis.report's ``NAME.tmp-PID``, of a name above
_TEMP = r"(\.tmp-\d+-(?P<a>[^/]+)|(?P<b>[^/]+)\.tmp-\d+)"


def run_files(out: str) -> list[str]:
    """The paths in results folder ``out`` that a run writes (``RUN_FILES``, ``RUN_PATTERNS``
    and interrupted writes' temporary files of those names): what ``--force`` removes. Links
    count by their own name and are never followed; anything else is the user's."""
    import re

    def ours(name: str, pattern: str | None) -> bool:
        def named(n: str) -> bool:
            return n in RUN_FILES if pattern is None else re.fullmatch(pattern, n) is not None
        if named(name):
            return True
        m = re.fullmatch(_TEMP, name)
        return m is not None and named(m.group("a") or m.group("b"))

    found = []
    for folder, pattern in ((None, None), *RUN_PATTERNS):
        where = out if folder is None else os.path.join(out, folder)
        if folder is not None and (os.path.islink(where) or not os.path.isdir(where)):
            continue
        try:
            names = sorted(os.listdir(where))
        except OSError:
            continue
        for name in names:
            path = os.path.join(where, name)
            if ours(name, pattern) and (os.path.islink(path) or not os.path.isdir(path)):
                found.append(path)
    return found


def remove_run_files(out: str) -> list[str]:
    """Remove the previous run's files from ``out`` (``run_files``); returns their paths. The
    caller holds the folder's lock. Emptied product folders go too; the user's files stay."""
    gone = run_files(out)
    for path in gone:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    for folder, _ in RUN_PATTERNS:
        with contextlib.suppress(OSError):  # not empty (a file of the user's), or absent
            os.rmdir(os.path.join(out, folder))
    return gone


def atomic_write(path: str, write: Any, mode: str = "wb") -> None:
    """Write through a temporary file in the same folder, then ``os.replace`` it: a reader or
    a resumed run sees the whole file or none of it, even if this process is killed."""
    tmp = os.path.join(os.path.dirname(path), f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        with open(tmp, mode) as f:
            write(f)
        os.replace(tmp, path)
    except OSError as e:  # disk full, …: no partial file is left behind
        try:
            os.remove(tmp)
        except OSError:
            pass
        if e.filename is None:  # a failed write names no file: name the one being written
            raise OSError(e.errno, e.strerror or str(e), path) from None
        raise


def deals_path(chunk_path: str) -> str:
    """``RUN/deals/c000123.parquet`` for the chunk file ``RUN/chunks/c000123.npz``."""
    folder, name = os.path.split(chunk_path)
    return os.path.join(os.path.dirname(folder), DEALS_DIR,
                        os.path.splitext(name)[0] + ".parquet")


def write_deals(path: str, res: ChunkResult) -> None:
    """The chunk's per-deal table, as the worker encoded it (``parquet_bytes``)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, lambda f: f.write(res.deals_parquet))


def who_played(cols: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``WHO_COLUMNS`` as codes (0: side A's player, 1: B's, -1: nobody, a void deal's caller)
    and ``caller_settle``, from a chunk's columns. Side A sits in team ``orientation`` (team 0
    is seats 0+2); the caller's team attacks (R10)."""
    o = cols["orientation"].astype(np.int8)
    team = [(o != 0).astype(np.int8), (o != 1).astype(np.int8)]  # team t: 0 when A sits there
    out = {f"seat{i}_player": team[i % 2] for i in range(4)}
    out["team0_player"], out["team1_player"] = team
    at = cols["attacker_team"]
    out["caller_player"] = np.where(at < 0, -1, (at != o)).astype(np.int8)
    settle = np.stack([cols[f"settle{i}"] for i in range(4)])
    seat = np.where(cols["caller"] < 0, 0, cols["caller"]).astype(np.int64)
    own = np.take_along_axis(settle, seat[None, :], axis=0)[0]
    out[CALLER_SETTLE] = np.where(cols["caller"] < 0, 0, own).astype(np.int32)  # R24
    return out


def parquet_bytes(cols: Mapping[str, np.ndarray], players: tuple[str, str]) -> bytes:
    """A chunk's per-deal table as Parquet: ``DEAL_COLUMNS`` with their integer types, then
    ``LABEL_COLUMNS`` and ``WHO_COLUMNS`` as dictionary-encoded strings and ``caller_settle``
    (``who_played``); zstd-compressed column by column."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    def ints(x: np.ndarray) -> Any:  # pa.array(x) without its pandas check (imports pandas)
        x = np.ascontiguousarray(x)
        return pa.Array.from_buffers(pa.from_numpy_dtype(x.dtype), x.size, [None, pa.py_buffer(x)])

    def text(v: str) -> Any:  # pa.array([v], pa.string()), the same way
        data = v.encode()
        ends = np.array([0, len(data)], dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(ends),
                                                      pa.py_buffer(data)])

    g = cols["deal"].size
    a, b = players
    fields = {k: ints(cols[k]) for k in DEAL_COLUMNS}
    zeros = ints(np.zeros(g, dtype=np.int8))
    for k, v in zip(LABEL_COLUMNS, (f"{a} vs {b}", a, b)):
        fields[k] = pa.DictionaryArray.from_arrays(zeros, text(v))
    names = pa.concat_arrays([text(a), text(b)])
    for k, v in who_played(cols).items():
        if k == CALLER_SETTLE:
            fields[k] = ints(v)
            continue
        nulls = int((v < 0).sum())  # a void deal has no caller: null, not a name
        valid = pa.py_buffer(np.packbits(v >= 0, bitorder="little")) if nulls else None
        codes = pa.Array.from_buffers(pa.int8(), g, [valid, pa.py_buffer(np.maximum(v, 0))],
                                      null_count=nulls)
        fields[k] = pa.DictionaryArray.from_arrays(codes, names)
    buf = io.BytesIO()
    pq.write_table(pa.table(fields), buf, compression="zstd")
    return buf.getvalue()


def save_chunk(out: str, res: ChunkResult, config_hash: str, run_id: str = "",
               kept: int | None = None) -> None:
    """Write a chunk's files: the chunk file, bound to its run (config hash, run id) and to its
    per-deal table (the table's SHA-256), so that ``checked_chunks`` refuses a table from
    another run, seed or chunk, or one edited by hand. ``kept``: the SPRT decided at this
    chunk's pair ``kept`` and the result holds only the pairs up to it (``cut_chunk``)."""
    meta = {"format": FORMAT, "config_hash": config_hash, "run_id": run_id,
            **dataclasses.asdict(res.chunk), "seconds": res.seconds}
    if kept is not None:
        meta["kept"] = kept
    if res.deals_parquet:
        meta["deals_sha256"] = hashlib.sha256(res.deals_parquet).hexdigest()
    path = os.path.join(out, CHUNK_DIR, res.chunk.filename)
    if res.deals_parquet:  # first: a chunk file means its table is complete
        write_deals(deals_path(path), res)
    arrays: dict[str, np.ndarray] = {}
    arrays["_meta"] = np.array(json.dumps(meta))
    arrays["_stats"] = np.array(json.dumps(res.tally))
    arrays["_records_first"] = np.frombuffer(res.records_first, dtype=np.uint8)
    arrays["_records_filter"] = np.frombuffer(res.records_filter, dtype=np.uint8)
    if res.faults:
        arrays["_faults"] = np.frombuffer(res.faults, dtype=np.uint8)
    for k, v in (res.tally_cols or {}).items():  # an SPRT run's per-game columns
        arrays[TALLY_PREFIX + k] = v
    atomic_write(path, lambda f: np.savez(f, **arrays))


TALLY_PREFIX = "_col_"  # chunk-file arrays of an SPRT run's TALLY_COLUMNS


def read_tally_cols(path: str) -> dict[str, np.ndarray] | None:
    """An SPRT run's ``TALLY_COLUMNS`` of the chunk file ``path`` (None if it has none)."""
    try:
        with open_chunk(path) as z:
            names = [f for f in z.files if f.startswith(TALLY_PREFIX)]
            return {f[len(TALLY_PREFIX):]: z[f] for f in names} or None
    except Exception as e:  # a torn or foreign file
        raise _unreadable(path, e) from None


def cut_chunk(out: str, cfg: Any, chunk: Chunk, kept: int) -> None:
    """Rewrite the files of ``chunk`` (saved whole) to hold only its first ``kept`` pairs,
    those up to the SPRT's decision: statistics, per-game columns, records and per-deal
    table. Nothing past the deciding pair stays in the results folder."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = os.path.join(out, CHUNK_DIR, chunk.filename)
    cols = read_tally_cols(path)
    if cols is None:
        raise ConfigError(f"chunk file {path!r} holds no per-pair results: delete it, then "
                          f"--resume plays its chunk again")
    cut = first_pairs(cols, kept, cfg.duplicate)
    last = chunk.first + kept  # deals before this one count
    with open_chunk(path) as z:
        meta = json.loads(str(z["_meta"]))
        recs = [b"".join(line for line in z[f].tobytes().splitlines(keepends=True)
                         if json.loads(line)["deal"] < last)
                for f in ("_records_first", "_records_filter")]
    table = b""
    dpath = deals_path(path)
    if "deals_sha256" in meta or os.path.lexists(dpath):
        data = read_table_bytes(dpath, path, meta)
        buf = io.BytesIO()
        pq.write_table(pq.read_table(pa.BufferReader(data)).slice(0, kept * games_per_deal(cfg)),
                       buf, compression="zstd")
        table = buf.getvalue()
    res = ChunkResult(chunk, tally_to_json(tally_games(cut, cfg.duplicate)), recs[0], recs[1],
                      meta.get("seconds", 0.0), table, cut)
    save_chunk(out, res, cfg.hash(), meta.get("run_id", ""), kept=kept)


def chunk_files(run_dir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(run_dir, CHUNK_DIR, "c[0-9]*.npz")))


def check_own(path: str, root: str) -> None:
    """Raise ``ConfigError`` if ``path`` is a link (or lies in a linked folder) whose regular file
    is outside the results folder ``root``: a received folder's files are its own, never
    another of the user's files it points at. A missing or special file passes: its reader
    says so in its own words (``sim.core.files``)."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return
    if not real.startswith(os.path.realpath(root) + os.sep):
        raise ConfigError(f"{path!r} is a link to {real!r}, outside the results folder "
                          f"{root!r}: a results folder's files must be its own (copy the file "
                          f"in)")


@contextlib.contextmanager
def open_chunk(path: str) -> Iterator[Any]:
    """``np.load`` of a chunk file, opened only if it is a regular file (never a FIFO or a
    device: ``sim.core.files``) of this results folder; nothing in it is unpickled."""
    check_own(path, os.path.dirname(os.path.dirname(os.path.abspath(path))))
    with open_received(path, MAX_DATA_BYTES, "chunk file") as f, \
            np.load(f, allow_pickle=False) as z:
        yield z


HEX64 = r"^[0-9a-f]{64}$"  # a SHA-256 (config hash, per-deal table checksum)


@functools.lru_cache(maxsize=None)
def _schemas() -> tuple[Any, Any]:
    """The declared fields of a chunk file's ``_meta`` and of ``run.json`` (msgspec: every
    field's type and range; a field the product never writes is refused)."""
    from typing import Annotated, Optional

    import msgspec

    def ints(lo: int, hi: int) -> Any:
        return Annotated[int, msgspec.Meta(ge=lo, le=hi)]

    def text(pattern: str | None = None, n: int = 64) -> Any:
        return Annotated[str, msgspec.Meta(max_length=n, pattern=pattern)]

    count = ints(0, MAX_DEAL)
    seconds = Annotated[float, msgspec.Meta(ge=0.0, le=1e12)]
    meta = msgspec.defstruct("ChunkMeta", [
        ("format", text()), ("config_hash", text(HEX64)), ("index", ints(0, 2**40)),
        ("matchup", ints(0, MAX_MATCHUPS - 1)), ("first", count), ("n", ints(1, MAX_DEAL)),
        ("seconds", seconds), ("run_id", text(r"^[0-9a-f]*$"), ""),
        ("kept", Optional[ints(1, MAX_DEAL)], None),  # noqa: UP045
        ("deals_sha256", Optional[text(HEX64)], None),  # noqa: UP045
    ], forbid_unknown_fields=True)
    run = msgspec.defstruct("RunInfo", [
        ("wall_seconds", seconds), ("deals_this_session", count), ("games_this_session", count),
        ("deals_per_second", Optional[seconds]),  # noqa: UP045 - null: no time passed
        ("games_per_second", Optional[seconds]),  # noqa: UP045
        ("chunks_this_session", ints(0, 2**40)), ("chunks_before", ints(0, 2**40)),
        ("jobs", ints(1, 1 << 20)), ("backend", text(n=32)), ("finished", text(n=64)),
    ], forbid_unknown_fields=True)
    return meta, run


def read_meta(path: str) -> dict[str, Any]:
    """A chunk file's ``_meta``, each field's type and range checked (``_schemas``); raises
    ``ValueError`` naming the field (callers say which file, in one line)."""
    with open_chunk(path) as z:
        text = str(z["_meta"])
    decode_json(text, _schemas()[0], where="_meta", max_depth=2)
    return json.loads(text)


def read_stats(path: str) -> dict[str, Any]:
    """A chunk file's statistics, decoded into their declared schema (``tally_schema``: each
    field's type and range) before the accumulators are built; raises ``ValueError``."""
    with open_chunk(path) as z:
        text = str(z["_stats"])
    try:
        decode_json(text, tally_schema(), where="_stats", max_depth=4)
    except ValueError as e:  # name the field: msgspec shows a dict's key as [...]
        import msgspec

        raw = json.loads(text) if "not valid JSON" not in str(e) and "nested" not in str(e) \
            else None
        for k, v in (raw.items() if isinstance(raw, dict) else ()):
            try:
                msgspec.convert({k: v}, tally_schema())
            except msgspec.ValidationError as f:
                raise ConfigError(f"chunk file {path!r} is corrupt (_stats field {k!r}: {f}): "
                                  f"delete it, then --resume plays its chunk again") from None
        raise
    return tally_from_json(json.loads(text))


def _unreadable(path: str, e: BaseException, what: str = "chunk file",
                redo: str = "delete it, then --resume plays its chunk again") -> ConfigError:
    """One line for a file of a results folder that cannot be used (a ``ConfigError`` already
    is one: it names the file)."""
    if isinstance(e, ConfigError):
        return e
    if isinstance(e, OSError) and e.strerror:
        why = f"cannot be read ({e.strerror})"
    else:
        why = f"is corrupt ({type(e).__name__}: {' '.join(str(e).split())})"
    return ConfigError(f"{what} {path!r} {why}: {redo}")


def read_table_bytes(dpath: str, path: str, meta: Mapping[str, Any]) -> bytes:
    """The per-deal file ``dpath`` of chunk file ``path``, checked against the SHA-256 the
    chunk file holds (runs before that check: none to compare)."""
    redo = f"delete it and {path!r}, then --resume plays the chunk again"
    try:
        check_own(dpath, os.path.dirname(os.path.dirname(os.path.abspath(dpath))))
        data = read_received(dpath, MAX_DATA_BYTES, "per-deal file")
    except FileNotFoundError:
        raise ConfigError(f"per-deal file {dpath!r} of chunk file {path!r} is missing: delete "
                          f"{path!r}, then --resume plays the chunk again") from None
    except OSError as e:
        raise _unreadable(dpath, e, "per-deal file", redo) from None
    want = meta.get("deals_sha256")
    if want is not None and hashlib.sha256(data).hexdigest() != want:
        raise ConfigError(f"per-deal file {dpath!r} is not the table of chunk file {path!r} "
                          f"(its SHA-256 differs: edited, or copied from another run, seed or "
                          f"chunk): {redo}")
    return data


def checked_chunks(run_dir: str, cfg: Any, chunks: Sequence[Chunk],
                   stats: bool = False, tables: bool = False
                   ) -> Iterator[tuple[str, Chunk, Any]]:
    """``(path, chunk, stats or None)`` of every chunk file, once each is checked to be
    readable, of this run (config hash, run id and chunk plan) and named after the chunk it
    holds: one identity for the statistics, the per-deal table and the set of finished chunks.
    ``tables``: its per-deal file is there and is the one the chunk file's checksum names. A
    file that fails is named in one line, with what to do about it."""
    h = cfg.hash()
    rid = read_run_id(run_dir)
    for path in chunk_files(run_dir):
        try:
            meta = read_meta(path)
            i = meta["index"]
            plan = {k: meta[k] for k in ("index", "matchup", "first", "n")}
            tally = read_stats(path) if stats else None
        except Exception as e:  # a torn or foreign file: zip, npy, JSON or key errors
            raise _unreadable(path, e) from None
        if meta.get("config_hash") != h or not isinstance(i, int) or not 0 <= i < len(chunks) \
                or dataclasses.asdict(chunks[i]) != plan:
            raise ConfigError(f"chunk file {path!r} belongs to another run (config hash or "
                              f"chunk plan differs): delete it, or choose another --out")
        if meta.get("format") != FORMAT or rid and (
                not meta.get("run_id") or cfg.deal_table and "deals_sha256" not in meta):
            raise ConfigError(f"chunk file {path!r} is corrupt (format "
                              f"{str(meta.get('format'))[:40]!r}, run id and per-deal "
                              f"checksum must be those a run writes): delete it, then --resume "
                              f"plays its chunk again")
        if not rid and meta.get("run_id"):
            raise ConfigError(f"chunk file {path!r} names run id {meta['run_id']!r}, but "
                              f"config.json holds none: the folder's config.json is not the "
                              f"one its run wrote (delete the folder's chunk files, or run "
                              f"again with --force)")
        if rid and meta.get("run_id") and meta["run_id"] != rid:
            raise ConfigError(f"chunk file {path!r} was copied from another run of the same "
                              f"config (run id {meta['run_id']!r}, this folder's is {rid!r}): "
                              f"delete it, then --resume plays its chunk again")
        if os.path.basename(path) != chunks[i].filename:
            raise ConfigError(f"chunk file {path!r} holds chunk {i}, whose file is "
                              f"{chunks[i].filename!r} (a renamed or stray copy): delete "
                              f"{path!r}, then --resume plays any missing chunk")
        kept = meta.get("kept")  # the SPRT decided inside it: its first ``kept`` pairs count
        if kept is not None and (isinstance(kept, bool) or not isinstance(kept, int)
                                 or not 1 <= kept <= chunks[i].n):
            raise ConfigError(f"chunk file {path!r} is corrupt (kept = {kept!r}): delete it, "
                              f"then --resume plays its chunk again")
        if tally is not None:  # its statistics: every count against the chunk's pairs
            try:
                check_tally(tally, chunks[i] if kept is None else
                            dataclasses.replace(chunks[i], n=kept), games_per_deal(cfg))
            except ConfigError as e:
                raise ConfigError(f"chunk file {path!r} is corrupt (statistics: {e}): delete "
                                  f"it, then --resume plays its chunk again") from None
        if tables and "deals_sha256" in meta:
            read_table_bytes(deals_path(path), path, meta)
        yield path, (chunks[i] if kept is None else dataclasses.replace(chunks[i], n=kept)), \
            tally


def iter_deals(run_dir: str, columns: Sequence[str] | None = None
               ) -> Iterator[dict[str, np.ndarray]]:
    """The per-deal table chunk by chunk (run order), as dicts of numpy arrays.

    Streams: only one chunk is in memory at a time. ``columns`` selects columns (default all
    ``DEAL_COLUMNS``; the name columns ``LABEL_COLUMNS`` and ``WHO_COLUMNS`` come as arrays of
    str, None for a void deal's caller, and ``caller_settle`` as integers, on request).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = list(columns or DEAL_COLUMNS)
    bad = [c for c in cols if c not in DEAL_COLUMNS and c not in NAMED_COLUMNS]
    if bad:
        raise ConfigError(f"per-deal column {bad[0]!r} does not exist: allowed are "
                          f"{', '.join([*DEAL_COLUMNS, *NAMED_COLUMNS])}")
    files = chunk_files(run_dir)
    if not files:
        raise ConfigError(f"{run_dir!r} holds no finished chunks ({CHUNK_DIR}/c*.npz): is it a "
                          f"tournament results folder?")
    cfg = read_config(run_dir)
    games = games_per_deal(cfg)
    for path, chunk, _ in list(checked_chunks(run_dir, cfg, plan_chunks(cfg))):
        dpath = deals_path(path)
        meta = read_meta(path)
        if "deals_sha256" in meta or os.path.lexists(dpath):
            data = read_table_bytes(dpath, path, meta)
            try:
                table = pq.read_table(pa.BufferReader(data),
                                      columns=_stored(data, [*cols, "deal"]))
                deal = table.column("deal").to_numpy()
            except Exception as e:  # a torn or foreign file
                raise ConfigError(f"per-deal file {dpath!r} is corrupt ({type(e).__name__}: "
                                  f"{e}): delete it and {path!r}, then --resume plays the "
                                  f"chunk again") from None
            # the same identity as the chunk file: its deal range, every game of it
            if deal.size != chunk.n * games or deal.size and (
                    deal.min() != chunk.first or deal.max() != chunk.first + chunk.n - 1):
                raise ConfigError(f"per-deal file {dpath!r} does not hold chunk {chunk.index} "
                                  f"(deals {chunk.first}-{chunk.first + chunk.n - 1}): delete "
                                  f"it and {path!r}, then --resume plays the chunk again")
            got = {c: _to_numpy(table.column(c)) for c in table.column_names}
            if any(c not in got for c in cols):  # a table written before WHO_COLUMNS
                got.update(_who_names(got))
            yield {c: got[c] for c in cols}
            continue
        with open_chunk(path) as z:  # a run written before the Parquet table: columns in here
            if "deal" not in z.files and cfg.deal_table:
                raise ConfigError(f"per-deal file {dpath!r} of chunk file {path!r} is "
                                  f"missing: delete {path!r}, then --resume plays the chunk "
                                  f"again")
            if "deal" not in z.files:
                raise ConfigError(f"{run_dir!r} has no per-deal table: the run was made with "
                                  f"output.deal_table = false")
            try:
                part = {c: z[c] for c in cols}
            except Exception as e:  # a damaged column: say which file
                raise ConfigError(f"chunk file {path!r} is corrupt ({type(e).__name__}: "
                                  f"{e}): delete it, then --resume plays its chunk again") \
                    from None
        yield part


def _to_numpy(col: Any) -> np.ndarray:
    """A Parquet column as numpy; names as str, None where null (a chunked dictionary
    column's own ``to_numpy`` drops the nulls)."""
    import pyarrow as pa

    if pa.types.is_dictionary(col.type):
        return col.combine_chunks().dictionary_decode().to_numpy(zero_copy_only=False)
    return col.to_numpy()


_WHO_FROM = ("orientation", "attacker_team", "caller", "settle0", "settle1", "settle2",
             "settle3", "player_a", "player_b")


def _stored(data: bytes, cols: Sequence[str]) -> list[str]:
    """The columns to read from the Parquet file (its bytes ``data``) for ``cols``: a file
    written before ``WHO_COLUMNS`` existed gives those from the columns they are made of."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    want = list(dict.fromkeys(cols))
    if not any(c in WHO_COLUMNS or c == CALLER_SETTLE for c in want):
        return want
    have = set(pq.read_schema(pa.BufferReader(data)).names)
    if all(c in have for c in want):
        return want
    return list(dict.fromkeys([*(c for c in want if c in have), *_WHO_FROM]))


def _who_names(got: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``WHO_COLUMNS`` as names (None for nobody) and ``caller_settle``, from a table's
    columns (for a file written before they were stored)."""
    out: dict[str, np.ndarray] = {}
    for k, v in who_played(got).items():
        if k == CALLER_SETTLE:
            out[k] = v
        else:
            out[k] = np.where(v == 0, got["player_a"], np.where(v == 1, got["player_b"], None))
    return out


def load_deals(run_dir: str, columns: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """The whole per-deal table of a run as a dict of numpy arrays (``DEAL_COLUMNS``).

    ``pandas.DataFrame(load_deals("results/quick"))`` gives a data frame. Rows come chunk by
    chunk in run order; within a matchup, in (deal, orientation) order. For runs too large for
    memory use ``iter_deals`` or pick ``columns``.
    """
    parts = list(iter_deals(run_dir, columns))
    return {c: np.concatenate([p[c] for p in parts]) for c in parts[0]}


def _read_json(run_dir: str, name: str) -> Any:
    """A JSON file of a results folder (``open_received``: a regular file, bounded)."""
    path = os.path.join(run_dir, name)
    try:
        check_own(path, run_dir)
        data = read_received(path, MAX_JSON_BYTES, name)
        return json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise
    except OSError as e:
        raise ConfigError(f"{path!r} cannot be read: {e.strerror or e}") from None
    except RecursionError:
        raise ConfigError(f"{path!r} is corrupt: JSON nested too deeply") from None
    except ValueError as e:  # bad JSON or bad UTF-8
        raise ConfigError(f"{path!r} cannot be read: {e}") from None


def read_config(run_dir: str) -> Any:
    path = os.path.join(run_dir, "config.json")
    try:
        raw = _read_json(run_dir, "config.json")
    except FileNotFoundError:
        raise ConfigError(f"{run_dir!r} is not a tournament results folder (no config.json)") \
            from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path!r} is corrupt: it holds a JSON {type(raw).__name__}, not the "
                          f"config object")
    raw.pop("_base_dir", None)  # written by older versions; never put on sys.path
    raw.pop("_run_id", None)
    # a results folder is data: nothing it names is imported (plug-ins: --plugin)
    return from_dict(raw, source=path, imports=False)


def read_run_id(run_dir: str) -> str:
    """The run id in ``config.json`` ("" for a folder written before run ids)."""
    try:
        raw = _read_json(run_dir, "config.json")
    except FileNotFoundError:
        return ""
    rid = raw.get("_run_id") if isinstance(raw, dict) else None
    if rid is not None and not (isinstance(rid, str) and len(rid) <= 64
                                and all(c in "0123456789abcdef" for c in rid)):
        raise ConfigError(f"{os.path.join(run_dir, 'config.json')}: key '_run_id' = "
                          f"{str(rid)[:80]!r}: must be the run id the run writes (up to 64 "
                          f"hexadecimal digits)")
    return rid or ""


def write_config(out: str, cfg: Any) -> str:
    """``config.json`` (with the run id: this folder's, or a new one) and ``config.toml``;
    returns the run id, which every chunk file of the run carries."""
    rid = read_run_id(out) if os.path.lexists(os.path.join(out, "config.json")) else ""
    rid = rid or uuid.uuid4().hex
    d = cfg.to_dict()
    # for reports, which import no strategy; not hashed (partners: one per member)
    d["_oracle"] = list(cfg.member_oracle or cfg.oracle)
    d["_run_id"] = rid  # binds the chunk files to this run; not hashed
    text = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    atomic_write(os.path.join(out, "config.json"), lambda f: f.write(text), "w")
    atomic_write(os.path.join(out, "config.toml"), lambda f: f.write(cfg.to_toml()), "w")
    return rid


def load_done(out: str, cfg: Any, chunks: Sequence[Chunk], agg: Aggregate,
               clean: bool = False) -> int:
    """Feed finished chunk files to ``agg``; returns how many there were. ``clean`` (the
    writer, holding the lock): remove temporary files of dead processes."""
    tmps = glob.glob(os.path.join(out, CHUNK_DIR, ".tmp-*")) + \
        glob.glob(os.path.join(out, DEALS_DIR, ".tmp-*"))
    for tmp in tmps if clean else ():
        pid = os.path.basename(tmp)[5:].partition("-")[0]
        if not (pid.isdigit() and pid_alive(int(pid))):
            os.remove(tmp)  # a write that a kill interrupted: its chunk is simply played again
    n = 0
    for path, chunk, tally in checked_chunks(out, cfg, chunks, stats=True, tables=True):
        cols = None
        if cfg.sprt:  # the SPRT looks after each pair: it needs the chunk's per-pair results
            cols = read_tally_cols(path)
            if cols is None:
                raise ConfigError(f"chunk file {path!r} holds no per-pair results (written "
                                  f"before the SPRT looked after every pair): delete it, "
                                  f"then --resume plays its chunk again")
        try:
            agg.add(chunk, tally, cols)
        except ValueError as e:
            raise ConfigError(f"chunk file {path!r} does not fit its run ({e}): delete it, "
                              f"then --resume plays its chunk again") from None
        n += 1
    return n


def drop_after(out: str, stop_at: int) -> None:
    """Remove chunk files past the SPRT's decision: they are not part of the result."""
    for path in chunk_files(out):
        if int(os.path.basename(path)[1:7]) > stop_at:
            os.remove(path)
            with contextlib.suppress(FileNotFoundError):
                os.remove(deals_path(path))


def write_faults(out: str, agg: Aggregate) -> int:
    """``faults.jsonl``: every fault of a bot in another process, chunk by chunk in run order
    (``matchup``, ``deal``, ``orientation``, ``bot``, ``seat``, ``kind``, ``detail``,
    ``scored``, ``counted``); written only when there is one. Returns the faults written."""
    parts = []
    last = agg.merged_chunks - 1
    for p in chunk_files(out):
        if int(os.path.basename(p)[1:7]) > last:
            continue
        with open_chunk(p) as z:
            if "_faults" in z.files:
                parts.append(z["_faults"].tobytes())
    data = b"".join(parts)
    path = os.path.join(out, FAULTS_FILE)
    if data:
        atomic_write(path, lambda f: f.write(data))
    elif os.path.exists(path):
        os.remove(path)
    return data.count(b"\n")


def write_records(out: str, cfg: Any, agg: Aggregate) -> None:
    """``records.jsonl``: the first-K records, then the filtered ones (``record_limit`` per
    matchup), gathered from the chunk files in run order."""
    if not cfg.records and not cfg.record_filter:
        return
    last = agg.merged_chunks - 1
    taken = [0] * len(cfg.matchups())
    path = os.path.join(out, "records.jsonl")

    def write(f: Any) -> None:
        for p in chunk_files(out):
            i = int(os.path.basename(p)[1:7])
            if i > last:
                continue
            m = agg.chunks[i].matchup
            with open_chunk(p) as z:
                f.write(z["_records_first"].tobytes())
                lines = z["_records_filter"].tobytes().splitlines(keepends=True)
            keep = lines[:max(0, cfg.record_limit - taken[m])]
            taken[m] += len(keep)
            f.write(b"".join(keep))

    atomic_write(path, write)


def load_state(run_dir: str) -> dict[str, Any]:
    """The statistics of a results folder, rebuilt from its chunk files (no replaying).

    Works for an unfinished run too (``complete`` is then false).
    """
    cfg = read_config(run_dir)
    chunks = plan_chunks(cfg)
    agg = Aggregate(cfg, chunks)
    load_done(run_dir, cfg, chunks, agg)
    state = agg.state()
    state["complete"] = agg.finished
    state["run"] = read_run_info(run_dir)
    return state


def read_run_info(run_dir: str) -> dict[str, Any] | None:
    """``run.json`` (the last session's figures), each field's type and range checked; None
    when absent (an unfinished run). A damaged one is one line naming the field."""
    path = os.path.join(run_dir, "run.json")
    try:
        check_own(path, run_dir)
        data = read_received(path, MAX_JSON_BYTES, "run.json")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"{path!r} cannot be read: {e.strerror or e}: delete it (the report "
                          f"then goes without the session's figures)") from None
    try:
        decode_json(data, _schemas()[1], where=repr(path), max_depth=2)
        return json.loads(data)
    except ValueError as e:
        raise ConfigError(f"{' '.join(str(e).split())}: delete it (the report then goes "
                          f"without the session's figures)") from None
