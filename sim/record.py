"""Game records (``shuangkou-record/1``, docs/record.md): build from a finished deal, read, write.

Files are JSON Lines, gzip-compressed when the name ends in ``.gz``. Reading never guesses:
a line that is not a record raises :class:`RecordError` naming the file, the line and what is
wrong with it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from sim.cards import CARD_NAMES, ID_OF_KEY, SUITS
from sim.core import state as S
from sim.core.files import json_depth, open_received
from sim.errors import RecordError
from sim.rules import Rules

FORMAT = "shuangkou-record/1"
FIELDS = ("format", "seed", "deal", "rules", "seats", "redeals", "void", "deck", "calls",
          "caller", "trump", "attackers", "hands", "tricks", "attacker_points",
          "last_trick_multiplier", "attacker_score", "settlement")


def mask_cards(once: int, twice: int, ids: np.ndarray | None = None) -> list[int]:
    """Card ids held in a (once, twice) mask pair; ``ids`` maps bit index to card id."""
    out: list[int] = []
    for b in range(54):
        if once >> b & 1:
            c = b if ids is None else int(ids[b])
            out.append(c)
            if twice >> b & 1:
                out.append(c)
    return out


def hands_of(st: np.ndarray, u: np.ndarray) -> list[list[int]]:
    """Each seat's card ids at the first lead (or, for a void deal, after the last deal)."""
    if st[S.S_VOID]:
        return [sorted(mask_cards(int(u[S.U_ONCE + s]), int(u[S.U_TWICE + s]))) for s in range(4)]
    ids = ID_OF_KEY[st[S.S_TRUMP]]
    return [sorted(mask_cards(int(u[S.U_FIRST_ONCE + s]), int(u[S.U_FIRST_TWICE + s]), ids))
            for s in range(4)]


def call_rows(rows: Sequence[int], viewer: int | None = None) -> list[dict[str, Any]]:
    """Call records (``CALL_W`` ints each, as in st) as dicts (docs/record.md ``calls``): the
    one decoder of call records (``call_dicts``, ``sim.observation.Observation.calls``).
    ``gave`` is shown where ``viewer`` gave or received it (R9), everywhere if ``viewer`` is
    None, and never while the give-back is still to come."""
    names = CARD_NAMES
    out = []
    for j in range(0, len(rows), S.CALL_W):
        r = rows[j:j + S.CALL_W]
        seat, took, ga, gb = r[S.CALL_SEAT], r[S.CALL_TOOK], r[S.CALL_GAVE_A], r[S.CALL_GAVE_B]
        knows = viewer is None or viewer in (seat, took)
        out.append({"round": r[S.CALL_ROUND], "seat": seat, "pair": names[r[S.CALL_CARD]],
                    "took_from": took if took >= 0 else None,
                    "gave": [names[ga], names[gb]] if took >= 0 and knows and ga >= 0
                    else None})
    return out


def call_dicts(st: np.ndarray, viewer: int | None = None) -> list[dict[str, Any]]:
    """The call log of ``st`` as dicts (``call_rows``)."""
    return call_rows(st[S.S_CALLS:S.S_CALLS + int(st[S.S_NCALLS]) * S.CALL_W].tolist(), viewer)


@lru_cache(maxsize=None)
def _key_names(trump: int) -> tuple[str, ...]:
    """Card names by key (play order) for one trump suit."""
    return tuple(CARD_NAMES[c] for c in ID_OF_KEY[trump].tolist())


def trick_rows(rows: Sequence[int], trump: int) -> list[dict[str, Any]]:
    """Trick records (``TRICK_W`` ints each, as in st) as dicts (docs/record.md ``tricks``):
    the one decoder of trick records (``trick_dicts``,
    ``sim.observation.Observation.tricks``). Plays are card names, by position from the
    leader."""
    names = _key_names(trump)
    out = []
    for j in range(0, len(rows), S.TRICK_W):
        r = rows[j:j + S.TRICK_W]
        plays = []
        for k in range(4):
            a, b = r[S.TRICK_A + k], r[S.TRICK_B + k]
            plays.append([names[a]] if b < 0 else [names[a], names[b]])
        out.append({"leader": r[S.TRICK_LEADER], "plays": plays, "winner": r[S.TRICK_WINNER],
                    "points": r[S.TRICK_POINTS]})
    return out


def trick_dicts(st: np.ndarray, trump: int, first: int, n: int) -> list[dict[str, Any]]:
    """Completed tricks ``first … n-1`` of ``st`` as dicts (``trick_rows``)."""
    return trick_rows(st[S.S_TRICKS + first * S.TRICK_W:S.S_TRICKS + n * S.TRICK_W].tolist(), trump)


def build_record(st: np.ndarray, u: np.ndarray, seed: int, deal: int, rules: Rules,
                 seats: Sequence[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of a finished deal held in kernel state ``(st, u)``."""
    names = CARD_NAMES
    void = bool(st[S.S_VOID])
    calls = call_dicts(st)
    rec: dict[str, Any] = {
        "format": FORMAT, "seed": int(seed), "deal": int(deal), "rules": rules.to_dict(),
        "seats": list(seats), "redeals": int(st[S.S_REDEALS]), "void": void,
        "deck": [names[c] for c in st[S.S_DECK:S.S_DECK + 108]],
        "calls": calls,
        "caller": None, "trump": None, "attackers": None,
        "hands": [[names[c] for c in h] for h in hands_of(st, u)],
        "tricks": [], "attacker_points": None, "last_trick_multiplier": None,
        "attacker_score": None, "settlement": [0, 0, 0, 0],
    }
    if not void:
        caller = int(st[S.S_CALLER])
        trump = int(st[S.S_TRUMP])
        tricks = trick_dicts(st, trump, 0, int(st[S.S_NTRICKS]))
        rec.update(caller=caller, trump=SUITS[trump], attackers=[caller % 2, caller % 2 + 2],
                   tricks=tricks, attacker_points=int(st[S.S_ATT_POINTS]),
                   last_trick_multiplier=int(st[S.S_MULT]), attacker_score=int(st[S.S_SCORE]),
                   settlement=[int(x) for x in st[S.S_SETTLE:S.S_SETTLE + 4]])
    if extra:
        rec.update(extra)
    return rec


# --- files ------------------------------------------------------------------------------
def open_text(path: str | os.PathLike, mode: str = "r",
              gz: bool | None = None) -> io.TextIOBase:
    """Open a record file for text I/O, through gzip when the name ends in ``.gz`` (or when
    ``gz`` says so, e.g. for ``out.jsonl.gz.partial``)."""
    if str(path).endswith(".gz") if gz is None else gz:
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_records(path: str | os.PathLike, records: Iterable[dict[str, Any]],
                  append: bool = False) -> int:
    """Write records as JSON Lines; returns how many."""
    n = 0
    with open_text(path, "a" if append else "w") as f:
        for rec in records:
            f.write(dumps(rec) + "\n")
            n += 1
    return n


MAX_RECORD_LINE = 16 << 20  # bytes of one record's line (a record is a few KB)
MAX_RECORD_FILE = 1 << 40  # a record file is read line by line: only its lines are bounded
MAX_RECORD_DEPTH = 8  # a record nests 4 deep (tricks, a trick, its plays, a play): 8 is plenty
MAX_SEAT_NAME = 4096  # characters of a seat's strategy spec


@lru_cache(maxsize=None)
def _schema() -> Any:
    """The declared types and ranges of a record's fields (docs/record.md), as msgspec
    Structs: a received record is decoded into them before anything reads it, so a value of
    the wrong type, out of range or a 10,000-digit integer is one line naming the field
    (``$.tricks[3].winner``), never a traceback further on. A call or a trick holds exactly
    its fields; fields a record may carry beyond these (``tournament``, ``unfinished`` …) are
    kept; the consistency of the values (the
    deck a permutation of two packs, every play legal, the scores) is the reference
    validator's (``sim.reference.validator``), which ``replay`` and ``validate`` run."""
    from typing import Annotated, Literal, Optional

    import msgspec

    def ints(lo: int, hi: int) -> Any:
        return Annotated[int, msgspec.Meta(ge=lo, le=hi)]

    def items(t: Any, lo: int, hi: int) -> Any:
        return Annotated[list[t], msgspec.Meta(min_length=lo, max_length=hi)]

    card = Literal[CARD_NAMES]  # type: ignore[valid-type]
    seat = ints(0, 3)
    big = ints(-2**31, 2**31 - 1)
    call = msgspec.defstruct("Call", [
        ("round", ints(0, 27)), ("seat", seat), ("pair", card),
        ("took_from", Optional[seat], None), ("gave", Optional[items(card, 2, 2)], None)],
        forbid_unknown_fields=True)
    trick = msgspec.defstruct("Trick", [
        ("leader", seat), ("plays", items(items(card, 1, 2), 4, 4)), ("winner", seat),
        ("points", ints(0, 200))], forbid_unknown_fields=True)
    name = Annotated[str, msgspec.Meta(max_length=MAX_SEAT_NAME)]
    key = Annotated[str, msgspec.Meta(max_length=64)]
    return msgspec.defstruct("Record", [
        # a seed is 0 … 2**64-1 (checked after: msgspec bounds only int64)
        ("format", Literal[FORMAT]), ("seed", Annotated[int, msgspec.Meta(ge=0)]),
        ("deal", ints(0, 2**63 - 1)),
        ("rules", Annotated[dict[key, big], msgspec.Meta(max_length=64)]),
        ("seats", items(name, 4, 4)),
        ("redeals", ints(0, 1000)),  # R11: max_redeals is at most 1000 (sim.rules.RANGES)
        ("void", bool), ("deck", items(card, 108, 108)), ("calls", items(call, 0, 4096)),
        ("caller", Optional[seat]), ("trump", Optional[Literal[tuple(SUITS)]]),
        ("attackers", Optional[items(seat, 2, 2)]), ("hands", items(items(card, 0, 108), 4, 4)),
        ("tricks", items(trick, 0, 27)), ("attacker_points", Optional[ints(0, 200)]),
        ("last_trick_multiplier", Optional[ints(0, 31)]), ("attacker_score", Optional[big]),
        ("settlement", items(big, 4, 4))])


def check_record_types(record: Any, where: str) -> None:
    """Raise ``RecordError`` (one line: ``where``, the field, what was expected) unless the
    parsed ``record`` has every field of docs/record.md with its type and range (``_schema``).
    The parsed object, not the text: a seat name with a lone surrogate is a name to show
    escaped, not an error."""
    import msgspec

    try:
        rec = msgspec.convert(record, type=_schema())
        if rec.seed > 2**64 - 1:  # msgspec bounds only int64: a seed is unsigned 64-bit
            raise msgspec.ValidationError("Expected `int` <= 18446744073709551615 - at `$.seed`")
    except msgspec.ValidationError as e:
        msg = str(e)
        path = msg.rpartition(" - at `")[2].rstrip("`") if " - at `" in msg else ""
        import re

        m = re.match(r"\$\.tricks\[(\d+)\]", path)
        trick = f" (trick {int(m.group(1)) + 1})" if m else ""  # numbered as replay shows them
        raise RecordError(f"{where}: {msg}{trick}; docs/record.md gives every field's type "
                          f"and range") from None


def read_records(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Records of a file, in order. Raises RecordError on the first line that is not one.

    The file is opened only if it is a regular file (never a FIFO or a device, which would
    wait or read for ever: ``sim.core.files``), and a line longer than ``MAX_RECORD_LINE``
    is refused before it fills memory."""
    if not os.path.lexists(path):
        raise RecordError(f"record file {str(path)!r} does not exist")
    try:
        raw = open_received(path, MAX_RECORD_FILE, "record file")
    except FileNotFoundError:
        raise RecordError(f"record file {str(path)!r} does not exist") from None
    except OSError as e:
        raise RecordError(f"{str(path)!r} cannot be read as a record file: "
                          f"{e.strerror or e}") from None
    try:
        with raw, (gzip.open(raw, "rt", encoding="utf-8") if str(path).endswith(".gz")
                   else io.TextIOWrapper(raw, encoding="utf-8")) as f:
            lineno = 0
            while True:
                line = f.readline(MAX_RECORD_LINE + 1)
                if not line:
                    break
                lineno += 1
                if len(line) > MAX_RECORD_LINE:
                    raise RecordError(f"{str(path)!r} line {lineno}: longer than "
                                      f"{MAX_RECORD_LINE} characters, far more than a record; "
                                      f"a record file holds one {FORMAT} object per line")
                if not line.strip():
                    continue
                depth = json_depth(line)
                if depth > MAX_RECORD_DEPTH:  # measured without recursion, before parsing
                    raise RecordError(
                        f"{str(path)!r} line {lineno}: JSON nested too deeply to be a record "
                        f"({depth} levels; a record nests at most {MAX_RECORD_DEPTH}); a "
                        f"record file holds one {FORMAT} object per line")
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise RecordError(
                        f"{str(path)!r} line {lineno}: not JSON ({e.msg} at column {e.colno});"
                        f" a record file holds one {FORMAT} object per line") from None
                except RecursionError:
                    raise RecordError(
                        f"{str(path)!r} line {lineno}: JSON nested too deeply to be a record; "
                        f"a record file holds one {FORMAT} object per line") from None
                except ValueError:  # an integer of more than 4,300 digits
                    raise RecordError(
                        f"{str(path)!r} line {lineno}: not a record (an integer of thousands "
                        f"of digits, far past every field's range: docs/record.md); a record "
                        f"file holds one {FORMAT} object per line") from None
                if not isinstance(rec, dict) or rec.get("format") != FORMAT:
                    got = rec.get("format") if isinstance(rec, dict) else type(rec).__name__
                    raise RecordError(f"{str(path)!r} line {lineno}: format {got!r} is not "
                                      f"{FORMAT!r}")
                missing = [k for k in FIELDS if k not in rec]
                if missing:
                    raise RecordError(f"{str(path)!r} line {lineno}: missing field(s) "
                                      f"{', '.join(missing)}")
                check_record_types(rec, f"{str(path)!r} line {lineno}")
                yield rec
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise RecordError(f"{str(path)!r} cannot be read as a record file: {e}") from None
