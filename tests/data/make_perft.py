"""Write tests/data/perft.jsonl from the plain-Python reference engine (sim/reference/oracle.py).

    python tests/data/make_perft.py          # rewrite the file
    python tests/data/make_perft.py --check  # exit 1 if the file differs from what it writes

Two kinds of line, read by tests/test_perft.py:

``{"type": "positions", ...}``: one seeded deal played by the reference engine with random
players (``show_prob`` given). ``path`` holds every choice from the start of the deal up to
the last chosen position, in notation (show: null or a card, give-back and play: a list of
cards). ``positions`` are decisions along that path: ``step`` (index into ``path``), ``seat``,
``kind``, ``category`` (what the decision exercises: a show over another's pair, a give-back,
a lead, a single follow holding / void in the led group, a pair follow under R19a-d with a
side or trump lead, ...), ``legal`` (the reference's choice list in canonical order) and
``count``; a play also stores ``hand``, ``trump`` and ``lead`` so that the friendly function
``legal_plays`` can be checked on it directly.

``{"type": "perft", ...}``: a trick-play position (four hands, trump, the seat to lead; and
``path``, the choices of its deal that reach it) and ``counts[d-1]``, the number of play
sequences of length ``d`` from it (the next trick's leader is the winner of the last, R17),
for d = 1 … len(counts).

The choices are the reference engine's; the test checks the compiled engine (``sim.Deal``,
``sim.legal_plays``, ``sim.trick_winner``) and the reference engine against them, so a change
of legal-move generation in either shows up as a named position.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sim.reference import oracle as ref  # noqa: E402  (plain Python: compiles nothing)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perft.jsonl")
SEED = 606
QUOTA = 12  # positions per category at most
PER_DEAL = 8  # positions per deal at most


class Recorder:
    """A reference random player that writes down every decision it is asked."""

    def __init__(self, seat: int, show_prob: float, log: list) -> None:
        self.seat = seat
        self.inner = ref.RandomPlayer(show_prob)
        self.log = log

    def choose(self, kind, choices, rng):
        choice = self.inner.choose(kind, choices, rng)
        self.log.append({"seat": self.seat, "kind": kind, "legal": list(choices),
                         "choice": choice})
        return choice


def _note(kind, choice):
    if kind == "show":
        return choice
    return list(choice)


def _legal_note(kind, legal):
    return [_note(kind, c) for c in legal]


def play_category(hand, trump, lead, legal):
    """What a play decision exercises (R16-R19)."""
    if lead is None:
        held = Counter(hand)
        return "lead_with_pair" if any(n == 2 for n in held.values()) else "lead_no_pair"
    g = ref.group(lead[0], trump)
    side = "trump" if g == "trump" else "side"
    in_g = Counter(c for c in hand if ref.group(c, trump) == g)
    if len(lead) == 1:
        return f"single_{side}_" + ("holds" if in_g else "void")  # R18
    n = sum(in_g.values())
    if any(k == 2 for k in in_g.values()):
        rule = "R19a"
    elif n >= 2:
        rule = "R19b_tie" if len(legal) > 1 else "R19b"
    elif n == 1:
        rule = "R19c"
    else:
        rule = "R19d"
    return f"pair_{side}_{rule}"


def play_deal_logged(deal, show_prob, rules):
    log: list = []
    players = [Recorder(s, show_prob, log) for s in range(4)]
    rec = ref.play_deal(SEED, deal, players, rules)
    # the play decisions come last: rebuild hand and lead at each from the record
    plays = [] if rec["void"] else [
        (t, k) for t in range(len(rec["tricks"])) for k in range(4)]
    first_play = len(log) - len(plays)
    hands = [Counter(h) for h in rec["hands"]]
    info = {}
    for i, (t, k) in enumerate(plays):
        trick = rec["tricks"][t]
        seat = (trick["leader"] + k) % 4
        assert log[first_play + i]["seat"] == seat and log[first_play + i]["kind"] == "play"
        hand = sorted(hands[seat].elements(), key=lambda c: ref.key(c, rec["trump"]))
        lead = trick["plays"][0] if k else None
        info[first_play + i] = (hand, lead)
        hands[seat] -= Counter(trick["plays"][k])
    # the pair on the table at each show decision (R6, R8)
    shown = None
    categories = []
    for i, e in enumerate(log):
        if e["kind"] == "show":
            if shown is None:
                cat = "show_first"
            elif shown[0] == e["seat"]:
                cat = "show_over_own"
            else:
                cat = "show_over_other"
            if len(e["legal"]) > 2:
                cat += "_several"
            if e["choice"] is not None:
                shown = (e["seat"], e["choice"])
        elif e["kind"] == "giveback":
            cat = "giveback"
        else:
            hand, lead = info[i]
            cat = play_category(hand, rec["trump"], lead, e["legal"])
            if len(e["legal"]) == 1:
                cat += "_forced"
        categories.append(cat)
    return rec, log, info, categories


def positions_lines():
    seen: Counter = Counter()
    lines = []
    configs = [(d, (0.25, 0.6, 1.0)[d % 3], {}) for d in range(160)]
    configs += [(1000 + d, 0.02, {"max_redeals": 2}) for d in range(12)]  # R11 redeals
    for deal, show_prob, rules in configs:
        rec, log, info, categories = play_deal_logged(deal, show_prob, rules)
        chosen = []
        taken: Counter = Counter()
        for i, cat in enumerate(categories):
            if seen[cat] + taken[cat] < QUOTA and taken[cat] == 0 and len(chosen) < PER_DEAL:
                chosen.append(i)
                taken[cat] += 1
        if not chosen:
            continue
        seen += taken
        positions = []
        for i in chosen:
            e = log[i]
            p = {"step": i, "seat": e["seat"], "kind": e["kind"], "category": categories[i],
                 "count": len(e["legal"]), "legal": _legal_note(e["kind"], e["legal"])}
            if e["kind"] == "play":
                hand, lead = info[i]
                p.update(hand=hand, trump=rec["trump"], lead=lead)
            positions.append(p)
        path = [_note(e["kind"], e["choice"]) for e in log[:chosen[-1] + 1]]
        lines.append({"type": "positions", "seed": SEED, "deal": deal, "rules": rules,
                      "show_prob": show_prob, "path": path, "positions": positions})
    return lines, seen


def perft(hands, trump, leader, depth, legal_plays, trick_winner):
    """``counts[d-1]``: the number of play sequences of length d = 1 … depth from a trick
    start (R16-R19; the winner leads the next trick, R17). ``hands``: four Counters."""
    counts = [0] * depth

    def walk(leader, plays, d):
        seat = (leader + len(plays)) % 4
        choices = legal_plays(sorted(hands[seat].elements()), trump, plays[0] if plays else None)
        counts[d] += len(choices)
        if d + 1 == depth:
            return
        for p in choices:
            hands[seat] -= Counter(p)
            now = plays + [list(p)]
            if len(now) == 4:
                walk((leader + trick_winner(now, trump)) % 4, [], d + 1)
            else:
                walk(leader, now, d + 1)
            hands[seat] += Counter(p)

    walk(leader, [], 0)
    return counts


def perft_lines():
    lines = []
    # trick-play positions: the hands at the first lead, and after 8 tricks (fewer cards,
    # more voids), of a few reference deals
    for deal, after in ((3, 0), (8, 0), (21, 8), (40, 15)):
        log: list = []
        rec = ref.play_deal(SEED, deal, [Recorder(s, 0.25, log) for s in range(4)])
        # the choices that reach the position: calling, then the plays of `after` tricks
        calling = len(log) - 4 * len(rec["tricks"])
        path = [_note(e["kind"], e["choice"]) for e in log[:calling + 4 * after]]
        hands = [Counter(h) for h in rec["hands"]]
        for t in rec["tricks"][:after]:
            for k, p in enumerate(t["plays"]):
                hands[(t["leader"] + k) % 4] -= Counter(p)
        leader = rec["tricks"][after]["leader"]
        depth = {0: 4, 8: 5}.get(after, 6)
        counts = perft(hands, rec["trump"], leader, depth, ref.legal_plays, ref.trick_winner)
        lines.append({"type": "perft", "seed": SEED, "deal": deal, "after_tricks": after,
                      "hands": [sorted(h.elements(), key=ref.card_id) for h in hands],
                      "trump": rec["trump"], "leader": leader, "counts": counts,
                      "path": path})
    return lines


def build():
    lines, seen = positions_lines()
    return lines + perft_lines(), seen


def main(argv):
    lines, seen = build()
    text = "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for x in lines)
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("perft.jsonl is up to date" if same else "perft.jsonl differs from the reference")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    n = sum(len(x["positions"]) for x in lines if x["type"] == "positions")
    print(f"wrote {OUT}: {n} positions in {sum(x['type'] == 'positions' for x in lines)} "
          f"deals, {sum(x['type'] == 'perft' for x in lines)} perft positions")
    for cat, k in sorted(seen.items()):
        print(f"  {cat:32s} {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
