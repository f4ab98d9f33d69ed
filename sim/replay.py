"""A record as a person wants to read it (``shuangkou replay``)."""

from __future__ import annotations

from typing import Any

from sim.cards import CARD_NAMES, GROUP, KEY_OF_ID, SUIT_SYMBOLS, SUITS, TRUMP_GROUP, parse_card
from sim.core.console import clean

_SYM = dict(zip(SUITS, SUIT_SYMBOLS))


def pretty(card: str) -> str:
    """``'Th'`` -> ``'10♥'``; jokers stay ``BJ``/``SJ``."""
    if card in ("BJ", "SJ"):
        return card
    r = "10" if card[0] == "T" else card[0]
    return r + _SYM[card[1]]


def hand_line(cards: list[str], trump: str | None) -> str:
    """A hand grouped by group (side suits, then trumps), strongest first, trumps marked."""
    if trump is None:
        ids = sorted((parse_card(c) for c in cards), reverse=True)
        return " ".join(pretty(_name(i)) for i in ids)
    t = SUITS.index(trump)
    keyed = sorted(((int(KEY_OF_ID[t, parse_card(c)]), c) for c in cards), reverse=True)
    groups: dict[str, list[str]] = {}
    for k, c in keyed:
        g = "主" if GROUP[k] == TRUMP_GROUP else _SYM[c[1]]
        groups.setdefault(g, []).append(pretty(c) if g == "主" else pretty(c)[:-1])
    order = [_SYM[s] for s in SUITS if s != trump] + ["主"]
    return "  ".join(f"{g}[{' '.join(groups[g])}]" for g in order if g in groups)


def _name(i: int) -> str:
    return CARD_NAMES[i]


def render(rec: dict[str, Any]) -> str:
    """Multi-line text of one record: hands, calls, tricks, score and settlement. Text from
    the record (seat names) comes with its control characters and lone surrogates escaped
    (``sim.core.console.clean``)."""
    return clean(_render(rec))


def _render(rec: dict[str, Any]) -> str:
    out: list[str] = []
    seats = rec.get("seats", ["?"] * 4)
    out.append(f"Deal {rec['deal']} of seed {rec['seed']}"
               + (f" (redealt {rec['redeals']}x)" if rec.get("redeals") else ""))
    # a received record's names: shown, never sent to the terminal as control characters
    out.append("Seats: " + ", ".join(f"{i}={clean(s, newlines=False)}"
                                     for i, s in enumerate(seats)))
    if rec.get("void"):
        out.append("Nobody showed a pair after the last redeal: the deal is void (R11).")
        for i, h in enumerate(rec["hands"]):
            out.append(f"  seat {i}: {hand_line(h, None)}")
        return "\n".join(out)
    if rec.get("unfinished") and rec["trump"] is None:  # stopped while calling (record.md)
        out.append(f"Unfinished: stopped during the calling, after dealing round "
                   f"{rec.get('dealt_rounds', '?')}.")
        for c in rec["calls"]:
            took = c.get("took_from")
            out.append(f"  after round {c['round']:>2}: seat {c['seat']} shows "
                       f"{pretty(c['pair'])} {pretty(c['pair'])}"
                       + (f", takes that pair from seat {took}" if took is not None else "")
                       + (f" and gives back {' '.join(map(pretty, c['gave']))}"
                          if c.get("gave") else ""))
        out.append("Hands when it stopped:")
        for i, h in enumerate(rec["hands"]):
            out.append(f"  seat {i}: {hand_line(h, None)}")
        return "\n".join(out)
    trump = rec["trump"]
    caller = rec["caller"]
    att = set(rec["attackers"])
    out.append("")
    out.append("Calling (R6–R8):")
    for c in rec["calls"]:
        line = f"  after round {c['round']:>2}: seat {c['seat']} shows {pretty(c['pair'])} " \
               f"{pretty(c['pair'])}"
        if c.get("took_from") is not None:
            gave = " ".join(pretty(x) for x in c["gave"])
            line += f", takes that pair from seat {c['took_from']} and gives back {gave}"
        out.append(line)
    out.append(f"Caller: seat {caller}; trump {_SYM[trump]} ({trump}); attackers seats "
               f"{' & '.join(map(str, sorted(att)))}, defenders "
               f"{' & '.join(str(s) for s in range(4) if s not in att)}")
    out.append("")
    out.append("Hands at the first lead (side suits, then 主 = trumps; strongest first):")
    for i, h in enumerate(rec["hands"]):
        role = "attacker" if i in att else "defender"
        out.append(f"  seat {i} ({role}): {hand_line(h, trump)}")
    out.append("")
    out.append("Tricks:")
    running = 0
    for n, tr in enumerate(rec["tricks"], 1):
        leader = tr["leader"]
        plays = []
        for k, p in enumerate(tr["plays"]):
            seat = (leader + k) % 4
            mark = "*" if seat == tr["winner"] else " "
            plays.append(f"{seat}:{' '.join(pretty(c) for c in p)}{mark}")
        won = "attackers" if tr["winner"] in att else "defenders"
        if tr["winner"] in att:
            running += tr["points"]
        out.append(f"  {n:>2}. " + "  ".join(f"{p:<12}" for p in plays)
                   + f" seat {tr['winner']} ({won}) +{tr['points']:<3} [{running}]")
    out.append("")
    if rec.get("unfinished"):  # stopped in trick play (docs/record.md)
        cur = rec.get("current_trick") or {}
        plays = "  ".join(f"{(cur['leader'] + k) % 4}:{' '.join(pretty(c) for c in p)}"
                          for k, p in enumerate(cur.get("plays", [])))
        out.append(f"Unfinished: stopped during trick {len(rec['tricks']) + 1}"
                   + (f" ({plays})" if plays else "") + f"; attackers had {running} points.")
        return "\n".join(out)
    mult = rec["last_trick_multiplier"]
    last = rec["tricks"][-1] if rec["tricks"] else None
    if last is not None and mult > 1:
        kind = "pair" if len(last["plays"][0]) == 2 else "single"
        out.append(f"Last trick (扣底, R23): won by attacker seat {last['winner']} with a {kind}:"
                   f" its {last['points']} points count x{mult}.")
    else:
        out.append("Last trick (R23): won by the defenders, no multiplier.")
    out.append(f"Attacker points {rec['attacker_points']}, attacker score "
               f"{rec['attacker_score']} (R22–R23).")
    out.append("Settlement (R24): " + ", ".join(f"seat {i} {v:+d}"
                                                for i, v in enumerate(rec["settlement"])))
    return "\n".join(out)
