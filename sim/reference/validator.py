"""Validating a record against the rules (docs/record.md): replays it with the plain-Python
reference engine (``sim.reference.oracle``, its cards ``sim.reference.cards``) and lists
every ``Violation``.

Like the oracle it imports nothing of the compiled core: a checker that shares code with what
it checks checks nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from sim.reference.cards import (
    CARD_TYPES,
    GROUP_NAMES,
    RANKS,
    SUITS,
    card_id,
    card_points,
    group,
    key_order,
    parse_card,
    strength,
)
from sim.reference.oracle import (
    DEFAULT_RULES,
    FIELDS,
    FORMAT,
    TWO_64,
    dealt_hands,
    legal_plays,
    pair_card,
    reference_deck,
    score_tricks,
    settle,
    trick_winner,
)

__all__ = ["Violation", "check_structure", "validate_record"]

# ---------------------------------------------------------------------------------------
# Validating a record
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """One thing wrong with a record. ``trick`` indexes ``record["tricks"]`` (from 0); the text
    numbers tricks from 1, as ``shuangkou replay`` does ("trick 1" is ``record["tricks"][0]``)."""

    deal: Optional[int]
    trick: Optional[int]
    seat: Optional[int]
    message: str

    def __str__(self) -> str:
        parts = ["record" if self.deal is None else f"deal {self.deal}"]
        if self.trick is not None:
            parts.append(f"trick {self.trick + 1}")
        if self.seat is not None:
            parts.append(f"seat {self.seat}")
        return ", ".join(parts) + ": " + self.message


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_str_list(x: Any, n: Optional[int] = None) -> bool:
    return (isinstance(x, list) and all(isinstance(c, str) for c in x)
            and (n is None or len(x) == n))


def _why_illegal(held: Counter, t: str, lead: Optional[tuple], play: tuple) -> str:
    """Why ``play`` is not legal for ``held`` (for messages), citing the ruling."""
    missing = Counter(play) - held
    if missing:
        return f"does not hold {sorted(missing.elements(), key=card_id)}"
    if lead is None:
        return "a lead is one card or one pair (R16)"
    if len(play) != len(lead):
        return f"must play {len(lead)} card{'s' if len(lead) > 1 else ''} like the lead (R16)"
    g = group(lead[0], t)
    name = GROUP_NAMES[g]
    in_g = Counter({c: n for c, n in held.items() if group(c, t) == g})
    if len(lead) == 1:
        return f"holds a {name} card, must follow the {name} lead (R18)"
    if any(n == 2 for n in in_g.values()):
        return f"holds a {name} pair, must play a pair (R19a)"
    n_in_g = sum(in_g.values())
    if n_in_g >= 2:
        best = sorted(in_g.elements(), key=lambda c: -strength(c, t))
        return (f"holds no {name} pair, must play the two strongest {name} cards held "
                f"(of {best}) (R19b)")
    if n_in_g == 1:
        return f"holds exactly one {name} card, {next(iter(in_g))}, and must play it (R19c)"
    return "not a legal play (R19d)"


def validate_record(record: Any, check_shuffle: bool = True) -> list[Violation]:
    """Check a record against the rules by replaying its deck and calls.

    Parameters
    ----------
    record : dict
        A decoded ``shuangkou-record/1`` record.
    check_shuffle : bool
        Also require ``deck`` to be the reference shuffle for ``(seed, deal)`` after
        ``redeals`` redeals (engine.md).

    Returns
    -------
    list of Violation
        Empty when the record is correct. Never raises: a malformed record is reported.
    """
    out: list = []
    deal = None
    if isinstance(record, Mapping) and _is_int(record.get("deal")):
        deal = record["deal"]
    try:
        _validate(record, check_shuffle, out, deal)
    except Exception as exc:  # never raise: report what could not be checked
        out.append(Violation(deal, None, None,
                             f"malformed record, checking stopped: {type(exc).__name__}: {exc}"))
    return out


def check_structure(record: Any) -> list[Violation]:
    """The structural checks of ``validate_record`` alone (fields, types, ranges; no replay):
    empty when the record can be read as a record, e.g. shown by ``shuangkou replay``."""
    out: list = []
    deal = record.get("deal") if isinstance(record, Mapping) and _is_int(
        record.get("deal")) else None

    def bad(message: str) -> None:
        out.append(Violation(deal, None, None, message))

    if not isinstance(record, Mapping):
        bad(f"record is not a JSON object: {type(record).__name__}")
        return out
    try:
        _check_structure(record, bad)
    except Exception as exc:  # never raise: report what could not be checked
        bad(f"malformed record: {type(exc).__name__}: {exc}")
    return out


def _check_structure(rec: Mapping, bad: Any) -> bool:
    """Required fields and their types (docs/record.md). True if replay can proceed."""
    ok = True
    for f in FIELDS:
        if f not in rec:
            bad(f"missing field {f!r}")
            ok = False
    if not ok:
        return False

    def need(cond: bool, what: str) -> None:
        nonlocal ok
        if not cond:
            bad(what)
            ok = False

    need(rec["format"] == FORMAT, f"format is {rec['format']!r}, expected {FORMAT!r}")
    need(_is_int(rec["seed"]) and 0 <= rec["seed"] < TWO_64,
         f"seed {rec['seed']!r} is not an integer in 0 .. 2**64-1")
    need(_is_int(rec["deal"]) and 0 <= rec["deal"] < 2 ** 63,
         f"deal {rec['deal']!r} is not an integer in 0 .. 2**63-1")
    rules = rec["rules"]
    if not isinstance(rules, Mapping):
        need(False, f"rules {rules!r} is not an object")
    else:
        need(set(rules) == set(DEFAULT_RULES),
             f"rules keys {sorted(rules)} are not exactly the variants {sorted(DEFAULT_RULES)}")
        need(all(_is_int(v) for v in rules.values()), f"rules values {rules!r} are not all "
             "integers")
        if ok:
            need(rules["max_redeals"] >= 0 and rules["settle_step"] >= 1,
                 "rules need max_redeals >= 0 and settle_step >= 1")
    need(_is_str_list(rec["seats"], 4), f"seats {rec['seats']!r} is not 4 strings")
    need(_is_int(rec["redeals"]) and rec["redeals"] >= 0,
         f"redeals {rec['redeals']!r} is not a non-negative integer")
    need(isinstance(rec["void"], bool), f"void {rec['void']!r} is not a boolean")
    need(_is_str_list(rec["deck"], 108), "deck is not a list of 108 card strings")
    need(isinstance(rec["calls"], list) and all(isinstance(c, Mapping) for c in rec["calls"]),
         "calls is not a list of objects")
    need(rec["caller"] is None or (_is_int(rec["caller"]) and 0 <= rec["caller"] < 4),
         f"caller {rec['caller']!r} is not a seat or null")
    need(rec["trump"] is None or rec["trump"] in tuple(SUITS),
         f"trump {rec['trump']!r} is not s, h, d, c or null")
    att = rec["attackers"]
    need(att is None or (isinstance(att, list) and len(att) == 2 and all(_is_int(s) for s in att)),
         f"attackers {att!r} is not two seats or null")
    need(isinstance(rec["hands"], list) and len(rec["hands"]) == 4
         and all(_is_str_list(h) for h in rec["hands"]), "hands is not 4 lists of card strings")
    need(isinstance(rec["tricks"], list) and all(isinstance(t, Mapping) for t in rec["tricks"]),
         "tricks is not a list of objects")
    for f in ("attacker_points", "last_trick_multiplier", "attacker_score"):
        need(rec[f] is None or _is_int(rec[f]), f"{f} {rec[f]!r} is not an integer or null")
    need(isinstance(rec["settlement"], list) and len(rec["settlement"]) == 4
         and all(_is_int(x) for x in rec["settlement"]), "settlement is not 4 integers")
    return ok


def _parse_cards(cards: Sequence[str], what: str, report: Any) -> Optional[list]:
    """Parse cards, reporting non-canonical spellings; None if one is not a card at all."""
    out = []
    for c in cards:
        try:
            p = parse_card(c)
        except ValueError:
            report(f"{what} {c!r} is not a card (R2)")
            return None
        if p != c:
            report(f"{what} {c!r} is not canonical, write {p!r} (R2)")
        out.append(p)
    return out


def _validate(rec: Any, check_shuffle: bool, out: list, deal: Optional[int]) -> None:
    def bad(message: str, trick: Optional[int] = None, seat: Optional[int] = None) -> None:
        out.append(Violation(deal, trick, seat, message))

    if not isinstance(rec, Mapping):
        bad(f"record is not a JSON object: {type(rec).__name__}")
        return
    if not _check_structure(rec, bad):
        return
    rules = dict(rec["rules"])
    redeals = rec["redeals"]

    # R1: the deck is the 108 cards.
    deck = _parse_cards(rec["deck"], "deck card", bad)
    if deck is None:
        return
    counts = Counter(deck)
    if counts != Counter(CARD_TYPES * 2):
        wrong = sorted((c for c in counts | Counter(CARD_TYPES) if counts[c] != 2), key=card_id)
        bad(f"deck is not two packs: wrong count of {wrong} (R1)")
        return

    if redeals > rules["max_redeals"]:
        bad(f"redeals {redeals} exceeds max_redeals {rules['max_redeals']} (R11)")
    elif check_shuffle:
        if redeals > 10_000:
            bad(f"redeals {redeals} is too many to check the shuffle")
        else:
            ref = reference_deck(rec["seed"], rec["deal"], redeals)
            if deck != ref:
                i = next(i for i in range(108) if deck[i] != ref[i])
                bad(f"deck is not the reference shuffle of seed {rec['seed']}, deal "
                    f"{rec['deal']} after {redeals} redeals: card {i} is {deck[i]!r}, "
                    f"expected {ref[i]!r}")

    if rec["void"]:
        _validate_void(rec, deck, rules, bad)
        return
    unfinished = rec.get("unfinished") is True  # a deal stopped part way (docs/record.md)
    if unfinished:
        for f in ("last_trick_multiplier", "attacker_score"):
            if rec[f] is not None:
                bad(f"unfinished deal with {f} {rec[f]!r}, expected null")
        if rec["trump"] is None:
            return  # stopped during the calling: the deck is what can be checked
    if not rec["calls"]:
        bad("nobody showed but the deal is not void (R11)")
        return

    replayed = _replay_calls(rec["calls"], deck, bad)
    if replayed is None:
        return
    hands, (caller, pair) = replayed

    # R10: caller, trump, attackers.
    trump = pair[1]
    attackers = sorted([caller, (caller + 2) % 4])
    if rec["caller"] != caller:
        bad(f"caller is {rec['caller']!r}, but the last show was by seat {caller} (R10)")
    if rec["trump"] != trump:
        bad(f"trump is {rec['trump']!r}, but the caller's pair {pair!r} makes it {trump!r} (R10)")
    if rec["attackers"] != attackers:
        bad(f"attackers are {rec['attackers']!r}, but the caller's team is {attackers} (R10)")

    _check_hands(rec["hands"], hands, bad)
    computed = _replay_tricks(rec["tricks"], hands, caller, trump, bad, not unfinished)
    if not unfinished:
        _check_scores(rec, computed, attackers, rules, bad)


def _validate_void(rec: Mapping, deck: list, rules: Mapping, bad: Any) -> None:
    """R11: a void deal has max_redeals redeals, no calls or tricks, nulls and zeros."""
    if rec["redeals"] != rules["max_redeals"]:
        bad(f"void deal with redeals {rec['redeals']}, expected max_redeals "
            f"{rules['max_redeals']} (R11)")
    if rec["calls"]:
        bad(f"void deal with {len(rec['calls'])} calls (R11)")
    if rec["tricks"]:
        bad(f"void deal with {len(rec['tricks'])} tricks (R11)")
    for f in ("caller", "trump", "attackers", "attacker_points", "last_trick_multiplier",
              "attacker_score"):
        if rec[f] is not None:
            bad(f"void deal with {f} {rec[f]!r}, expected null (R11)")
    if rec["settlement"] != [0, 0, 0, 0]:
        bad(f"void deal with settlement {rec['settlement']!r}, expected all zero (R11)")
    _check_hands(rec["hands"], dealt_hands(deck), bad)


def _check_hands(recorded: list, replayed: list, bad: Any) -> None:
    for s in range(4):
        cards = _parse_cards(recorded[s], "hand card", lambda m, s=s: bad(m, seat=s))
        if cards is None:
            continue
        got = Counter(cards)
        if got != replayed[s] or len(cards) != 27:
            missing = sorted((replayed[s] - got).elements(), key=card_id)
            extra = sorted((got - replayed[s]).elements(), key=card_id)
            bad(f"hand ({len(cards)} cards) differs from the replayed hand: missing {missing}, "
                f"extra {extra} (R5, R8)", seat=s)


def _replay_calls(calls: list, deck: list, bad: Any) -> Optional[tuple]:
    """Replay the shows (R5–R8). Returns (hands after the calling, (caller, pair))."""
    hands = [Counter() for _ in range(4)]
    dealt = 0  # dealing rounds done

    def deal_to(rnd: int) -> None:
        nonlocal dealt
        while dealt < rnd:
            for s in range(4):
                hands[s][deck[4 * dealt + s]] += 1
            dealt += 1

    shown: Optional[tuple] = None  # (seat, card)
    prev: Optional[tuple] = None  # (round, seat) of the previous show
    for n, call in enumerate(calls):
        missing = [f for f in ("round", "seat", "pair", "took_from", "gave") if f not in call]
        if missing:
            bad(f"call {n} lacks {missing}")
            return None
        rnd, seat = call["round"], call["seat"]
        if not (_is_int(rnd) and 1 <= rnd <= 27 and _is_int(seat) and 0 <= seat < 4):
            bad(f"call {n}: round {rnd!r} / seat {seat!r} out of range (R7)")
            return None
        where = f"call {n} (round {rnd})"

        def fail(msg: str) -> None:
            bad(f"{where}: {msg}", seat=seat)

        # R7: rounds never go back; inside rounds 1-26 seats 0-3 have one chance each in
        # order. After round 27 chances go round the table, so any seat may come next.
        if prev is not None:
            if rnd < prev[0]:
                fail(f"comes after a show in round {prev[0]} (R7)")
            elif rnd == prev[0] and rnd < 27 and seat <= prev[1]:
                fail(f"seat {seat} has no chance after seat {prev[1]} in the same dealing "
                     "round (R7)")
        prev = (rnd, seat)
        deal_to(rnd)

        pair = call["pair"]
        try:
            card = pair_card(pair) if isinstance(pair, str) else None
        except ValueError as exc:
            fail(f"illegal show {pair!r}: {exc}")
            return None
        if card is None:
            fail(f"pair {pair!r} is not a card string")
            return None
        if card != pair:
            fail(f"pair {pair!r} is not canonical, write {card!r} (R2)")
        if hands[seat][card] < 2:
            fail(f"illegal show {card!r}: does not hold the pair (R6)")
        if shown is not None and RANKS.index(card[0]) <= RANKS.index(shown[1][0]):
            fail(f"illegal show {card!r}: does not outrank the pair {shown[1]!r} on the "
                 "table (R6)")

        took, gave = call["took_from"], call["gave"]
        expected = shown[0] if shown is not None and shown[0] != seat else None
        if took != expected:
            fail(f"took_from is {took!r}, expected {expected!r} (R8)")
        if expected is None:
            if gave is not None:
                fail(f"gave is {gave!r}, expected null: nothing was taken (R8)")
        else:
            y, old = shown
            if hands[y][old] < 2:
                fail(f"seat {y} no longer holds its shown pair {old!r} (R8)")
            else:
                hands[y][old] -= 2
                hands[seat][old] += 2
            if not (isinstance(gave, list) and len(gave) == 2
                    and all(isinstance(c, str) for c in gave)):
                fail(f"gave is {gave!r}, expected the two cards handed back to seat {y} (R8)")
            else:
                given = _parse_cards(gave, "gave card", fail)
                if given is None:
                    pass
                elif card in given:
                    fail(f"gave {given} includes the pair {card!r} just shown (R8)")
                elif Counter(given) - hands[seat]:
                    fail(f"gave {given} but does not hold "
                         f"{sorted((Counter(given) - hands[seat]).elements())} (R8)")
                else:
                    hands[seat] -= Counter(given)
                    hands[y] += Counter(given)
        for s in range(4):
            hands[s] = +hands[s]
        shown = (seat, card)
    deal_to(27)
    return hands, shown


def _replay_tricks(tricks: list, hands: list, caller: int, trump: str, bad: Any,
                   finished: bool = True) -> list:
    """Replay the tricks (R16–R21). Returns the tricks with the computed winners. Cards left
    after the last trick are a violation only in a ``finished`` deal."""
    remaining = [Counter(h) for h in hands]
    expected_leader = (caller + 1) % 4  # R17
    computed: list = []
    for ti, trick in enumerate(tricks):
        if not any(remaining):
            bad("trick after every card was played (R16)", trick=ti)
            break
        if not all(f in trick for f in ("leader", "plays", "winner", "points")):
            bad("trick lacks leader, plays, winner or points", trick=ti)
            break
        leader, plays = trick["leader"], trick["plays"]
        if not (_is_int(leader) and 0 <= leader < 4):
            bad(f"leader {leader!r} is not a seat", trick=ti)
            break
        if not (isinstance(plays, list) and len(plays) == 4
                and all(_is_str_list(p) for p in plays)):
            bad(f"plays {plays!r} is not four lists of cards", trick=ti)
            break
        if leader != expected_leader:
            why = "the defender after the caller (R17)" if ti == 0 else \
                "the winner of the previous trick (R17)"
            bad(f"led by seat {leader}, expected seat {expected_leader}, {why}", trick=ti)

        parsed: list = []
        for k, p in enumerate(plays):
            seat = (leader + k) % 4
            cards = _parse_cards(p, "card", lambda m, s=seat: bad(m, ti, s))
            if cards is None:
                cards = []
            play = key_order(cards, trump)
            if cards and tuple(cards) != play:
                bad(f"play {cards} is not written in key order (engine.md)", ti, seat)
            lead = parsed[0] if k else None
            held = remaining[seat]
            try:
                legal = legal_plays(held, trump, lead)
            except ValueError:
                legal = None  # the lead itself was malformed; reported below or above
            if legal is None:
                if Counter(play) - held:  # the lead is no lead: only check the cards are held
                    bad(f"illegal play {list(play)}: {_why_illegal(held, trump, lead, play)}",
                        ti, seat)
            elif play not in legal:
                bad(f"illegal play {list(play)}: {_why_illegal(held, trump, lead, play)}",
                    ti, seat)
            remaining[seat] = held - Counter(play)  # drop what was held, keep replaying
            parsed.append(play)

        try:
            winner = (leader + trick_winner(parsed, trump)) % 4
        except ValueError:
            winner = trick["winner"] if _is_int(trick["winner"]) else expected_leader
            bad("winner cannot be decided: the plays are not a valid trick (R16)", trick=ti)
        else:
            if trick["winner"] != winner:
                bad(f"winner is {trick['winner']!r}, but seat {winner} wins the trick "
                    "(R20, R21)", trick=ti)
        points = card_points(c for p in parsed for c in p)
        if trick["points"] != points:
            bad(f"points are {trick['points']!r}, but the cards hold {points} (R3)", trick=ti)
        computed.append({"plays": parsed, "winner": winner})
        expected_leader = winner
    for s in range(4 if finished else 0):
        if remaining[s]:
            n = sum(remaining[s].values())
            bad(f"still holds {n} card{'s' if n > 1 else ''} after the last trick (R16)", seat=s)
    return computed


def _check_scores(rec: Mapping, tricks: list, attackers: list, rules: Mapping, bad: Any
                  ) -> None:
    """R22–R24 against the replayed tricks."""
    points, multiplier, score = score_tricks(tricks, attackers, rules)
    if rec["attacker_points"] != points:
        bad(f"attacker_points is {rec['attacker_points']!r}, expected {points} (R22)")
    if rec["last_trick_multiplier"] != multiplier:
        bad(f"last_trick_multiplier is {rec['last_trick_multiplier']!r}, expected "
            f"{multiplier} (R23)")
    if rec["attacker_score"] != score:
        bad(f"attacker_score is {rec['attacker_score']!r}, expected {score} (R23)")
    att, dfn = settle(score, rules)
    for s in range(4):
        expected = att if s in attackers else dfn
        if rec["settlement"][s] != expected:
            bad(f"settlement is {rec['settlement'][s]!r}, expected {expected} for an "
                f"{'attacker' if s in attackers else 'defender'} with score {score} (R24)",
                seat=s)
