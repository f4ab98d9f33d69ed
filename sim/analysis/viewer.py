"""The deal viewer: recorded deals as one self-contained HTML page (docs/viewer.md).

``page(records, analysis_rows=None, pairs=None, title=...)`` returns the page as a string: the
table with the four hands (all of them or one seat's view), trick by trick with the keyboard
and buttons, the calls and give-backs, the points and the running attacker score, and, when
``shuangkou analyze`` rows are given, the analysis beside each decision (every legal choice's
value as a bar, the marks, a points-lost graph of the deal). The two tables of a duplicate
pair (the same deal played twice, teams swapped) are shown side by side with the first
decision where they differ highlighted.

The page needs nothing else: no network, no external script, font or image; it works from
``file://``. The deals are embedded as JSON in a ``<script type="application/json">`` element
(every ``<``, ``>``, ``&`` written as a ``\\u`` escape, so no text of a record can close it) and
drawn by a small inline script that writes text only through ``textContent`` and attributes
through ``setAttribute``: names, notation and anything else read from a record are never
parsed as HTML. Every card is an element with a ``data-card`` attribute holding its notation
as records write it (``Kh``, ``Th``, ``BJ``).

Nothing here plays a deal: the page is built from the records' own fields (docs/record.md),
and the hands during play are the hands at the first lead less the cards played.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sim.cards import CARD_NAMES, GROUP, KEY_OF_ID, SUITS, parse_card
from sim.errors import RecordError

MAX_VALUES = 40  # a decision with more legal choices (a give-back: hundreds) keeps only
KEEP_VALUES = 12  # its best 12, the one played and the best (the page says how many are left)
KIND_CODE = {"show": 0, "giveback": 1, "play": 2}


# --- the data embedded in the page ------------------------------------------------------------
def _display_order(trump: str | None):
    """Sort key of a card for a hand: side suits (s, h, d, c less the trump suit), then the
    trumps, strongest first within each group (R12, R13); by suit then rank without a trump."""
    if not isinstance(trump, str) or len(trump) != 1 or trump not in SUITS:
        def key(c: str) -> tuple[int, int]:
            i = parse_card(c)
            return (4 if i >= 52 else i % 4, -i)
        return key, set()
    t = SUITS.index(trump)
    trumps = set()
    for i in range(54):
        if int(GROUP[int(KEY_OF_ID[t, i])]) == 3:
            trumps.add(CARD_NAMES[i])

    def key2(c: str) -> tuple[int, int]:
        k = int(KEY_OF_ID[t, parse_card(c)])
        return (int(GROUP[k]), -k)
    return key2, trumps


def _cards(x: Any) -> str:
    """A choice as concatenated two-character notations (``"KhKh"``; ``""`` for a pass)."""
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    return "".join(str(c) for c in x)


def _num(x: Any, nd: int = 2) -> float | None:
    return None if x is None else round(float(x), nd)


def _row(r: Mapping[str, Any]) -> list[Any]:
    """An analysis row (docs/analysis.md) as the compact list the page reads:
    [step, seat, kind, trick, round, played, best, choices, values, loss, lo, hi, mark,
    true_loss, true_best, more]; ``more`` counts the choices left out (MAX_VALUES)."""
    vals = [(_cards(v.get("choice")), v.get("value")) for v in r.get("values") or []]
    played, best = _cards(r.get("played")), _cards(r.get("best"))
    more = 0
    if len(vals) > MAX_VALUES:
        ranked = sorted(range(len(vals)), key=lambda i: -(vals[i][1] if vals[i][1] is not None
                                                           else -1e9))
        keep = set(ranked[:KEEP_VALUES])
        keep |= {i for i, v in enumerate(vals) if v[0] in (played, best)}
        more = len(vals) - len(keep)
        vals = [v for i, v in enumerate(vals) if i in keep]
    return [int(r.get("step", 0)), int(r.get("seat", 0)), KIND_CODE.get(r.get("kind"), 2),
            int(r.get("trick") or 0), int(r.get("round") or 0), played, best,
            [v[0] for v in vals], [_num(v[1]) for v in vals], _num(r.get("loss"), 4),
            _num(r.get("lo")), _num(r.get("hi")), str(r.get("mark") or ""),
            _num(r.get("true_loss")), _cards(r.get("true_best")), more]


def deal_data(rec: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The page's data for one record (and its analysis rows)."""
    try:
        trump = rec.get("trump")
        key, trumps = _display_order(trump)
        hands = [sorted((str(c) for c in h), key=key) for h in rec["hands"]]
        tricks = [[int(t["leader"]), [[str(c) for c in p] for p in t["plays"]],
                   int(t["winner"]), int(t["points"])] for t in rec.get("tricks") or []]
        calls = [[int(c["round"]), int(c["seat"]), str(c["pair"]),
                  -1 if c.get("took_from") is None else int(c["took_from"]),
                  [str(x) for x in c["gave"]] if c.get("gave") else None]
                 for c in rec.get("calls") or []]
        cur = rec.get("current_trick") if rec.get("unfinished") else None
        d: dict[str, Any] = {
            "deal": int(rec["deal"]), "seed": int(rec["seed"]),
            "seats": [str(s) for s in rec["seats"]], "redeals": int(rec.get("redeals") or 0),
            "void": bool(rec.get("void")), "unfinished": bool(rec.get("unfinished")),
            "dealt": rec.get("dealt_rounds") if rec.get("unfinished") else None,
            "trump": trump, "caller": rec.get("caller"), "att": rec.get("attackers"),
            "hands": hands, "trumps": sorted(trumps), "calls": calls, "tricks": tricks,
            "cur": [int(cur["leader"]), [[str(c) for c in p] for p in cur.get("plays", [])]]
            if cur else None,
            "result": None if rec.get("void") or rec.get("unfinished") else
            [rec.get("attacker_points"), rec.get("last_trick_multiplier"),
             rec.get("attacker_score"), list(rec.get("settlement") or [])],
        }
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise RecordError(f"deal {rec.get('deal')!r} cannot be shown: malformed record "
                          f"({type(e).__name__}: {e}); shuangkou validate lists every "
                          f"problem") from None
    t = rec.get("tournament")
    if isinstance(t, Mapping):
        d["table"] = {k: t[k] for k in ("matchup", "orientation") if isinstance(t.get(k), int)}
    d["an"] = [_row(r) for r in rows]
    return d


# --- duplicate pairs ----------------------------------------------------------------------------
def find_pairs(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Index pairs (i, j), i < j, of records that are the two tables of a duplicate pair: the
    same seed, deal and rules (and tournament matchup, where recorded), the teams swapped
    (``seats[j]`` is ``seats[i]`` moved round by one seat). Each record is in one pair at most."""
    used: set[int] = set()
    out = []
    for i, a in enumerate(records):
        if i in used:
            continue
        for j in range(i + 1, len(records)):
            b = records[j]
            if j in used or (a.get("seed"), a.get("deal"), a.get("rules")) != \
                    (b.get("seed"), b.get("deal"), b.get("rules")):
                continue
            ta, tb = a.get("tournament") or {}, b.get("tournament") or {}
            if isinstance(ta, Mapping) and isinstance(tb, Mapping) and \
                    ta.get("matchup") != tb.get("matchup"):
                continue
            sa, sb = list(a.get("seats") or []), list(b.get("seats") or [])
            if len(sa) == 4 and sb == sa[1:] + sa[:1]:
                used |= {i, j}
                out.append((i, j))
                break
    return out


def _events(rec: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    calls = [(rec.get("redeals"), c.get("round"), c.get("seat"), c.get("pair"), c.get("gave"))
             for c in rec.get("calls") or []]
    plays = []
    for t in rec.get("tricks") or []:
        for k, p in enumerate(t["plays"]):
            plays.append(((t["leader"] + k) % 4, list(p)))
    cur = rec.get("current_trick") if rec.get("unfinished") else None
    if cur:
        for k, p in enumerate(cur.get("plays", [])):
            plays.append(((cur["leader"] + k) % 4, list(p)))
    return calls, plays


def divergence(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any] | None:
    """Where two tables of the same deal first differ: ``{"kind": "call", "i": n}`` (the n-th
    show, its give-back, or the shuffle it came in differ), ``{"kind": "play", "i": n}`` (the
    n-th card play from the first lead, from 0), or None when they are the same."""
    ca, pa = _events(a)
    cb, pb = _events(b)
    for i in range(max(len(ca), len(cb))):
        if i >= len(ca) or i >= len(cb) or ca[i] != cb[i]:
            return {"kind": "call", "i": i}
    for i in range(max(len(pa), len(pb))):
        if i >= len(pa) or i >= len(pb) or pa[i] != pb[i]:
            return {"kind": "play", "i": i}
    return None


def rows_by_record(records: Sequence[Mapping[str, Any]],
                   rows: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """The analysis rows of each record: by the row's ``record`` (its index among the records
    ``shuangkou analyze`` read, when these are those records: the deal must match), else by
    its deal; where a deal is there twice (the two tables of a duplicate pair), to the record
    whose ``seats[seat]`` is its ``player`` and, for a play, whose trick holds that play."""
    by_deal: dict[Any, list[int]] = {}
    for i, rec in enumerate(records):
        by_deal.setdefault(rec.get("deal"), []).append(i)
    out: list[list[Mapping[str, Any]]] = [[] for _ in records]
    for r in rows:
        k = r.get("record")  # analyze's index among the records it analysed: these records
        if isinstance(k, int) and 0 <= k < len(records) and records[k].get("deal") == \
                r.get("deal"):
            out[k].append(r)
            continue
        cand = by_deal.get(r.get("deal"), [])
        if len(cand) > 1:
            cand = [i for i in cand if _fits(records[i], r)] or cand
        if cand:
            out[cand[0]].append(r)
    return out


def _fits(rec: Mapping[str, Any], r: Mapping[str, Any]) -> bool:
    seats = rec.get("seats") or []
    seat = r.get("seat")
    if not isinstance(seat, int) or not 0 <= seat < len(seats):
        return False
    if r.get("player") not in (None, "") and seats[seat] != r.get("player"):
        return False
    if r.get("kind") == "play":
        _, plays = _events(rec)
        t = (r.get("trick") or 0) - 1
        tricks = rec.get("tricks") or []
        if 0 <= t < len(tricks):
            tr = tricks[t]
            k = (seat - tr["leader"]) % 4
            return _cards(tr["plays"][k]) == _cards(r.get("played"))
    return True


# --- the page ---------------------------------------------------------------------------------
def _json_for_script(obj: Any) -> str:
    """JSON that can sit inside a <script> element: no '<', '>' or '&' (so no '</script>' or
    '<!--'), and no U+2028/U+2029."""
    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, esc in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(ch, esc)
    return s


def page(records: Sequence[Mapping[str, Any]],
         analysis_rows: Sequence[Mapping[str, Any]] | None = None,
         pairs: Sequence[tuple[int, int]] | None = None,
         title: str = "Shuangkou deals", note: str | None = None) -> str:
    """The viewer page (HTML, one string) of ``records``.

    - ``records``: game records (docs/record.md; dicts as ``sim.record.read_records`` yields
      them), shown in this order; finished, void or unfinished.
    - ``analysis_rows``: ``shuangkou analyze`` rows (docs/analysis.md, the ``--json`` rows) of
      any of these deals, or None. Each row is shown beside its decision; a row goes to the
      record of its ``deal`` (of the two tables of a pair, to the one whose seat holds its
      ``player`` and whose trick holds its play: ``rows_by_record``).
    - ``pairs``: index pairs ``(i, j)`` into ``records`` shown side by side as the two tables of
      a duplicate pair, or None to find them (``find_pairs``: same seed, deal and rules, teams
      swapped); ``[]`` for none.
    - ``title``: the page's title and heading (plain text; escaped).
    - ``note``: a line under the heading (plain text; escaped), e.g. the analysis settings.

    Raises RecordError for a record that cannot be shown (a missing or malformed field).

    A link can open the page at a place: ``PAGE.html#d=I&p=P&v=V`` shows ``records[I]`` (with
    its pair beside it) after its P-th play, with every hand (``v=-1``) or seat V's view.
    100 deals make about 0.23 MB, 1.7 MB with every decision analysed (docs/viewer.md).
    """
    records = list(records)
    if pairs is None:
        pairs = find_pairs(records)
    per = rows_by_record(records, analysis_rows or []) if analysis_rows else [[] for _ in
                                                                              records]
    deals = [deal_data(rec, rows) for rec, rows in zip(records, per)]
    for i, j in pairs:
        if not (0 <= i < len(records) and 0 <= j < len(records)) or i == j:
            raise RecordError(f"pair ({i}, {j}) is not two of the {len(records)} records")
        div = divergence(records[i], records[j])
        deals[i]["pair"], deals[j]["pair"] = j, i
        deals[i]["div"] = deals[j]["div"] = div
        deals[i]["side"], deals[j]["side"] = 0, 1
    data = {"deals": deals, "analysis": bool(analysis_rows)}
    head = html.escape(title)
    sub = f"<p class='note'>{html.escape(note)}</p>" if note else ""
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{head}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{head}</h1>{sub}</header><main id='app'>"
            f"<noscript>The deal viewer needs JavaScript.</noscript></main>"
            f"<script type='application/json' id='deal-data'>{_json_for_script(data)}</script>"
            f"<script>{JS}</script></body></html>\n")


def _asset(name: str) -> str:
    from importlib.resources import files

    return files("sim.analysis").joinpath(name).read_text(encoding="utf-8")


CSS = _asset("viewer.css")  # the page's style and script (package data, read once)
JS = _asset("viewer.js")
