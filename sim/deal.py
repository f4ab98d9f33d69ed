"""A deal step by step, for Python code: bots, a person at a prompt, an RL loop.

``Deal`` drives the same kernels as the compiled whole-deal loop (``sim.core.engine``); it only adds
notation, validation and observations at the edge::

    deal = Deal(seed=7, deal=3)
    while not deal.done:
        seat, kind = deal.to_act
        deal.apply(deal.legal()[0])
    deal.record()

Choices are written in notation: a show decision takes ``None`` (pass) or a card such as
``'Kh'`` (show that pair), a give-back two cards ``('9s', '4d')``, a play a tuple of one or two
cards ``('Kh',)`` / ``('5d', '5d')``. ``legal()`` lists them in the canonical order of
docs/engine.md. An illegal choice raises :class:`IllegalPlayError` naming the seat and ruling.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from sim.cards import (
    CARD_NAMES,
    GROUP,
    ID_OF_KEY,
    KEY_OF_ID,
    RANKS,
    STRENGTH,
    SUITS,
    TRUMP_GROUP,
    parse_card,
)
from sim.core.engine import (
    CALL,
    CALL_GAVE_A,
    CALL_GAVE_B,
    CALL_SEAT,
    CALL_TOOK,
    CALL_W,
    DONE,
    GIVEBACK,
    KIND_NAMES,
    N_STREAMS,
    PLAY,
    S_ATT_POINTS,
    S_CALLER,
    S_CALLS,
    S_CUR_CARD,
    S_CUR_SEAT,
    S_DECK,
    S_FIX,
    S_FIX_N,
    S_FIX_SEAT,
    S_GIVE_TO,
    S_LEADER,
    S_NCALLS,
    S_NTRICKS,
    S_PHASE,
    S_POS,
    S_REDEALS,
    S_ROUND,
    S_TO_ACT,
    S_TRICK_A,
    S_TRICK_B,
    S_TRICKS,
    S_TRUMP,
    S_VOIDS,
    ST_SIZE,
    STREAM_SAMPLE,
    STREAM_SEAT,
    TRICK_W,
    U_CTR,
    U_FIRST_ONCE,
    U_FIRST_TWICE,
    U_KEY,
    U_ONCE,
    U_SIZE,
    U_TWICE,
    advance,
    init_deal,
    legal,
)
from sim.core.movegen import MAX_CHOICES, N_CODES, make_code
from sim.core.rng import check_deal, check_seed
from sim.errors import IllegalPlayError, InvalidCardError
from sim.record import _mask_cards, build_record
from sim.rules import DEFAULT_RULES, Rules
from sim.spaces import (
    N_ACTIONS,
    OBS_SIZE,
    P_BUF,
    P_RULES,
    P_SIZE,
    P_ST,
    P_U,
    action_of_code,
    code_of_action,
    fill_mask,
    fill_obs,
    mask_into,
    packed_step,
)

_GROUP_WORD = {"s": "spade", "h": "heart", "d": "diamond", "c": "club"}


class ToAct(NamedTuple):
    """Whose decision it is and what kind: ``'show'``, ``'giveback'`` or ``'play'``."""

    seat: int
    kind: str


# --- choice notation <-> codes -----------------------------------------------------------
_make_code = getattr(make_code, "py_func", make_code)  # plain Python here: no dispatch


@lru_cache(maxsize=None)
def play_table(trump: int) -> tuple[tuple[str, ...] | None, ...]:
    """Play code (key layout, sim.core.movegen) -> tuple of card names, for one trump suit."""
    ids = ID_OF_KEY[trump]
    out: list[tuple[str, ...] | None] = [None] * N_CODES
    for a in range(54):
        out[a] = (CARD_NAMES[ids[a]],)
        for b in range(a, 54):
            out[_make_code(a, b)] = (CARD_NAMES[ids[a]], CARD_NAMES[ids[b]])
    return tuple(out)


@lru_cache(maxsize=None)
def giveback_table() -> tuple[tuple[str, str] | None, ...]:
    """Give-back code (id layout) -> pair of card names."""
    out: list[tuple[str, str] | None] = [None] * N_CODES
    for a in range(54):
        for b in range(a, 54):
            out[_make_code(a, b)] = (CARD_NAMES[a], CARD_NAMES[b])
    return tuple(out)


def _cards_arg(choice: Any, what: str) -> list[int]:
    if isinstance(choice, str):
        choice = choice.replace(",", " ").split()
    if not isinstance(choice, (list, tuple)):
        raise IllegalPlayError(f"{what} {choice!r} must be a list of cards such as ['Kh']")
    try:
        return [parse_card(c) for c in choice]
    except InvalidCardError as e:
        raise IllegalPlayError(f"{what} {choice!r}: {e}") from None


def play_code(cards: Sequence[int], trump: int) -> int:
    """Code of a play given as card ids (one or two) under ``trump``."""
    keys = sorted(int(KEY_OF_ID[trump, c]) for c in cards)
    return _make_code(keys[0], keys[1] if len(keys) == 2 else -1)


def _names(ids: Sequence[int]) -> list[str]:
    return [CARD_NAMES[i] for i in ids]


def _group_word(key: int, trump: int) -> str:
    if GROUP[key] == TRUMP_GROUP:
        return "trump"
    return _GROUP_WORD[SUITS[int(ID_OF_KEY[trump, key]) % 4]]


def explain_play(once: int, twice: int, trump: int, lead: Sequence[int] | None,
                 play: Sequence[int]) -> str:
    """Why ``play`` (card ids) is not legal for the hand ``(once, twice)`` in key layout."""
    keys = [int(KEY_OF_ID[trump, c]) for c in play]
    held = {k: (1 if once >> k & 1 else 0) + (1 if twice >> k & 1 else 0) for k in range(54)}
    for k in set(keys):
        if keys.count(k) > held[k]:
            return f"does not hold {CARD_NAMES[int(ID_OF_KEY[trump, k])]!r}"
    if lead is None:
        if len(keys) == 2 and keys[0] != keys[1]:
            return "a lead is one card or a pair, two different cards are neither (R16)"
        if len(keys) not in (1, 2):
            return "a lead is one card or a pair (R16)"
        return "not a legal lead (R16)"
    if len(keys) != len(lead):
        return f"must play {len(lead)} card(s), as many as were led (R16)"
    lk = int(KEY_OF_ID[trump, lead[0]])
    g = GROUP[lk]
    word = _group_word(lk, trump)
    in_g = [k for k in range(54) if held[k] and GROUP[k] == g]
    if len(lead) == 1:
        return f"holds a {word} card, must follow with one (R18)"
    if any(held[k] == 2 for k in in_g):
        return f"holds a {word} pair, must play a pair (R19a)"
    if len(in_g) >= 2:
        top = sorted(in_g, key=lambda k: STRENGTH[k], reverse=True)
        best = _names(int(ID_OF_KEY[trump, k]) for k in top[:2])
        return f"must play the two strongest {word} cards held, e.g. {best} (R19b)"
    if len(in_g) == 1:
        card = CARD_NAMES[int(ID_OF_KEY[trump, in_g[0]])]
        return f"holds one {word} card, must play {card!r} with any other card (R19c)"
    return "not a legal play (R19)"


# --- observations ------------------------------------------------------------------------
def masked_state(st: np.ndarray, u: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """Copies of a deal's state holding only what ``seat`` may know (R9).

    Blanked: the deck, the other hands (now and at the first lead), the give-backs between
    other players, the fixed-card constraint of ``estimate``, and every random stream but
    the seat's own two. Public calls, tricks, voids and played cards stay.
    """
    m_st = st.copy()
    m_u = u.copy()
    m_st[S_DECK:S_DECK + 108] = -1
    m_st[S_FIX_SEAT] = -1
    m_st[S_FIX_N] = 0
    m_st[S_FIX:S_FIX + 27] = -1
    for i in range(int(st[S_NCALLS])):
        j = S_CALLS + i * CALL_W
        if seat not in (int(st[j + CALL_SEAT]), int(st[j + CALL_TOOK])):
            m_st[j + CALL_GAVE_A] = -1
            m_st[j + CALL_GAVE_B] = -1
    for s in range(4):
        if s != seat:
            for off in (U_ONCE, U_TWICE, U_FIRST_ONCE, U_FIRST_TWICE):
                m_u[off + s] = 0
    for slot in range(N_STREAMS):
        if slot not in (STREAM_SEAT + seat, STREAM_SAMPLE + seat):
            m_u[U_KEY + slot] = 0
            m_u[U_CTR + slot] = 0
    return m_st, m_u


class Observation:
    """What seat ``seat`` may know at a decision (R9) — never the other hands.

    Built for free; the first attribute read takes a snapshot of the deal (one copy of its
    state arrays), which must happen before the deal moves on (reading a stale observation
    raises). Each field is then read from the snapshot, through caches the deal shares with
    its observations (hands and the current trick are updated by difference from the last
    observation's, completed tricks, calls and points are kept as they grow), and cached, so
    reading it again is a slot lookup. ``kind`` is ``'show'``, ``'giveback'``, ``'play'``,
    ``'done'`` or ``'wait'`` (not this seat's turn).

    The fastest way to look at a decision is the fixed-size vector ``array()`` (the layout of
    ``sim.obs_spec()``), computed by the same kernel as ``Deal.obs_array`` and ``sim.Batch``;
    ``arrays()`` gives the masked state (:func:`masked_state`) for compiled strategies.
    """

    __slots__ = ("seat", "kind", "rules", "_deal", "_version", "_raw", "_hdr", "_snap",
                 "_cache", "_trump", "_hand_c", "_trick_c")

    def __init__(self, deal: "Deal", seat: int) -> None:
        self.seat = seat
        ph = deal._ph
        self.kind = KIND_NAMES[ph] if deal._seat == seat or ph == DONE else "wait"
        self.rules = deal.rules
        self._deal = deal  # after the snapshot: only its shared caches are used
        self._version = deal._version
        self._raw: bytes | None = None  # copy of the deal's (st, u), unmasked: private
        self._snap: tuple[np.ndarray, np.ndarray] | None = None  # masked, made by arrays()
        self._cache: dict[str, Any] | None = None  # made on first use (most bots read little)
        self._hand_c: list[str] | None = None
        self._trick_c: list[list[str]] | None = None

    def _take(self) -> list[int]:
        """Snapshot: copy the deal's state (bytes); returns the header of st (S_PHASE …
        S_VOIDS+3) as a tuple of Python ints, the scalars most fields read."""
        deal = self._deal
        if deal._version != self._version:
            raise ValueError("stale observation: the deal has moved on since it was made")
        raw = self._raw = deal._mv[:P_RULES].tobytes()  # st, u as int64 bytes
        h = self._hdr = _HDR.unpack_from(raw)
        self._trump = h[S_TRUMP]
        return h

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The masked state arrays ``(st, u)`` (for compiled strategies)."""
        if self._snap is None:
            if self._raw is None:
                self._take()
            raw = np.frombuffer(self._raw, dtype=np.int64)
            m_st = np.empty(ST_SIZE, dtype=np.int64)
            m_u = np.empty(U_SIZE, dtype=np.uint64)
            mask_into(raw[P_ST:P_U], raw[P_U:P_RULES].view(np.uint64), self.seat, m_st, m_u)
            self._snap = (m_st, m_u)
        return self._snap

    def array(self) -> np.ndarray:
        """The observation vector (``sim.obs_spec()``; int16[OBS_SIZE])."""
        st, u = self.arrays()
        out = np.empty(OBS_SIZE, dtype=np.int16)
        fill_obs(st, u, self.seat, out)
        return out

    @property
    def _st(self) -> np.ndarray:
        return self.arrays()[0]

    @property
    def _h(self) -> list[int]:
        h = self._hdr if self._raw is not None else self._take()
        return h

    def _get(self, name: str, fn: Any) -> Any:
        c = self._cache
        if c is None:
            c = self._cache = {}
        elif name in c:
            return c[name]
        v = c[name] = fn()
        return v

    @property
    def trump(self) -> str | None:
        if self._raw is None:
            self._take()
        t = self._trump
        return SUITS[t] if t >= 0 else None

    @property
    def hand(self) -> list[str]:
        """The seat's cards now, sorted by play order once trump is known, else by id."""
        h = self._hand_c
        if h is None:
            if self._raw is None:
                self._take()
            raw, i = self._raw, P_U + U_ONCE + self.seat
            h = self._hand_c = _hand_names(self._deal._hands, self.seat, _int(raw, i),
                                           _int(raw, i + 4), self._trump)
        return h

    @property
    def round(self) -> int:
        """Dealing round reached (R5): 27 once all cards are out."""
        return self._h[S_ROUND]

    @property
    def redeals(self) -> int:
        return self._h[S_REDEALS]

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Every show so far (public, R9); ``gave`` only where this seat gave or received.
        Shared by the seat's observations of the deal: read it, do not edit it."""
        def build(n: int) -> list[dict[str, Any]]:
            rows = _ints(self._raw, S_CALLS, n * CALL_W)
            out = []
            for j in range(0, len(rows), CALL_W):
                r, seat, card, took, ga, gb = rows[j:j + CALL_W]
                knows = self.seat in (seat, took)
                out.append({"round": r, "seat": seat, "pair": CARD_NAMES[card],
                            "took_from": took if took >= 0 else None,
                            "gave": [CARD_NAMES[ga], CARD_NAMES[gb]]
                            if took >= 0 and knows and ga >= 0 else None})
            return out

        c = self._cache
        if c is not None and "calls" in c:
            return c["calls"]
        h = self._h
        n = h[S_NCALLS]
        if n == 0:
            v: list[dict[str, Any]] = []
        else:
            # the log only grows (or restarts at a redeal) and the last give-back is filled
            # in once: the deal keeps each seat's view, shared by its observations
            key = (self.seat, h[S_REDEALS], n, _int(self._raw, S_CALLS + (n - 1) * CALL_W + 4))
            cc = self._deal._calls_cache
            v = cc.get(key)
            if v is None:
                v = cc[key] = build(n)
        if c is None:
            c = self._cache = {}
        c["calls"] = v
        return v

    @property
    def shown(self) -> tuple[int, str] | None:
        """(seat, pair) on the table during calling, None before the first show."""
        h = self._h
        s = h[S_CUR_SEAT]
        return (s, CARD_NAMES[h[S_CUR_CARD]]) if s >= 0 else None

    @property
    def caller(self) -> int | None:
        c = self._h[S_CALLER]
        return c if c >= 0 else None

    @property
    def attackers(self) -> tuple[int, int] | None:
        c = self._h[S_CALLER]
        return None if c < 0 else (c % 2, c % 2 + 2)

    @property
    def attacking(self) -> bool | None:
        c = self._h[S_CALLER]
        return None if c < 0 else (self.seat % 2 == c % 2)

    def _tricks_upto(self, n: int) -> list[dict[str, Any]]:
        # completed tricks never change: the deal keeps them as dicts for every observer
        c = self._deal._tricks_cache
        if len(c) < n:
            first = len(c)
            c.extend(_trick_dicts(_ints(self._raw, S_TRICKS + first * TRICK_W,
                                        (n - first) * TRICK_W), self._trump))
        return c

    @property
    def tricks(self) -> list[dict[str, Any]]:
        """Completed tricks: leader, plays (by position from the leader), winner, points.
        The dicts are shared by every observation of the deal: read them, do not edit them."""
        c = self._cache
        if c is not None and "tricks" in c:
            return c["tricks"]
        h = self._h
        n = h[S_NTRICKS] if self._trump >= 0 else 0
        v = self._tricks_upto(n)[:n] if n else []
        if c is None:
            c = self._cache = {}
        c["tricks"] = v
        return v

    @property
    def trick(self) -> list[list[str]]:
        """Plays of the current trick so far, from its leader."""
        tr = self._trick_c
        if tr is None:
            h = self._h
            pos = h[S_POS]
            if self._trump < 0 or h[S_PHASE] != PLAY or pos == 0:
                tr = []
            else:
                # the plays (tuples of names) of the trick at h[S_NTRICKS], shared by the
                # deal's observations: a play made since the last read is appended
                dc = self._deal._trick
                key = h[S_NTRICKS]
                if dc[0] != key:
                    dc[0] = key
                    del dc[1][:]
                plays = dc[1]
                if len(plays) < pos:
                    table = play_table(self._trump)
                    for k in range(len(plays), pos):
                        b = h[S_TRICK_B + k]
                        plays.append(table[h[S_TRICK_A + k] + (64 * (b + 1) if b >= 0 else 0)])
                tr = [list(p) for p in plays[:pos]]
            self._trick_c = tr
        return tr

    @property
    def leader(self) -> int | None:
        h = self._h
        return h[S_LEADER] if h[S_PHASE] == PLAY else None

    @property
    def lead(self) -> list[str] | None:
        tr = self.trick
        return tr[0] if tr else None

    @property
    def attacker_points(self) -> int:
        """Face points the attackers have taken so far (R22)."""
        return self._h[S_ATT_POINTS]

    @property
    def points_taken(self) -> list[int]:
        """Face points won so far by each seat."""
        c = self._cache
        if c is not None and "points_taken" in c:
            return list(c["points_taken"])
        h = self._h
        n = h[S_NTRICKS] if self._trump >= 0 else 0
        # running totals after each completed trick, kept by the deal
        pts = self._deal._points
        if len(pts) <= n:
            last = pts[-1]
            for t in self._tricks_upto(n)[len(pts) - 1:n]:
                last = last.copy()
                last[t["winner"]] += t["points"]
                pts.append(last)
        v = pts[n]
        if c is None:
            c = self._cache = {}
        c["points_taken"] = v
        return list(v)

    @property
    def voids(self) -> list[set[str]]:
        """Per seat, the groups it has shown it lacks by not following (R18, R19):
        ``'trump'`` or a suit letter. Public knowledge."""
        def f() -> list[set[str]]:
            h = self._h
            t = self._trump
            if t < 0:
                return [set(), set(), set(), set()]
            names = _VOID_NAMES[t]
            return [set(names[b]) for b in h[S_VOIDS:S_VOIDS + 4]]
        return self._get("voids", f)

    @property
    def first_hand(self) -> list[str]:
        """This seat's hand at the first lead (empty before trick play)."""
        def f() -> list[str]:
            if self._raw is None:
                self._take()
            t = self._trump
            if t < 0:
                return []
            raw, i = self._raw, P_U + U_FIRST_ONCE + self.seat
            key = (_int(raw, i), _int(raw, i + 4), t)
            c = self._deal._firsts[self.seat]
            if c is None or c[0] != key:
                c = self._deal._firsts[self.seat] = (key, _build_hand(key[0], key[1], t))
            return list(c[1])
        return self._get("first_hand", f)

    def __repr__(self) -> str:
        return (f"Observation(seat={self.seat}, kind={self.kind!r}, trump={self.trump!r}, "
                f"hand={' '.join(self.hand)})")


# _VOID_NAMES[trump][bits]: the groups named by a seat's void bits (3 side suits, trump)
_VOID_NAMES = tuple(
    tuple(tuple(n for g, n in enumerate([x for x in SUITS if x != SUITS[t]] + ["trump"])
                if bits >> g & 1) for bits in range(16))
    for t in range(4))
_HDR = struct.Struct(f"{S_CALLS}q")  # an Observation's snapshot: the header of st
_Q = struct.Struct("q")


def _int(raw: bytes, i: int) -> int:
    """Entry ``i`` of a snapshot (``Observation._raw``: int64 st then u)."""
    return _Q.unpack_from(raw, 8 * i)[0]


def _ints(raw: bytes, i: int, n: int) -> tuple[int, ...]:
    return struct.unpack_from(f"{n}q", raw, 8 * i)


# _BIT_NAMES[trump + 1][bit]: the card named by a hand mask's bit (by id before trump is
# known, trump == -1; by key, in play order, after)
_BIT_NAMES = (CARD_NAMES[:54],) + tuple(
    tuple(CARD_NAMES[int(ID_OF_KEY[t, k])] for k in range(54)) for t in range(4))


def _build_hand(once: int, twice: int, trump: int) -> list[str]:
    """The names held in a (once, twice) mask pair, in bit order, pairs side by side (the
    order of :func:`sim.spaces.hand_ids`)."""
    names = _BIT_NAMES[trump + 1]
    out = []
    m = once
    while m:
        low = m & -m
        b = low.bit_length() - 1
        out.append(names[b])
        if twice & low:
            out.append(names[b])
        m ^= low
    return out


def _hand_names(hands: list[Any], seat: int, once: int, twice: int, trump: int) -> list[str]:
    """``seat``'s hand for the masks ``(once, twice)``, as a new list: from the deal's last
    hand of the seat (``hands[seat]`` = [once, twice, trump, names]), changed where the masks
    differ (a play removes one or two cards, dealing or a give-back moves a few), rebuilt
    when trump changes the order or much has changed."""
    c = hands[seat]
    if c is not None and c[2] == trump:
        o0, w0, _, lst = c
        if o0 == once and w0 == twice:
            return lst.copy()
        diff = (o0 ^ once) | (w0 ^ twice)
        if diff.bit_count() <= 6:
            names = _BIT_NAMES[trump + 1]
            while diff:  # from the highest bit: the positions below it are still o0/w0's
                b = diff.bit_length() - 1
                bit = 1 << b
                diff ^= bit
                low = bit - 1
                pos = (o0 & low).bit_count() + (w0 & low).bit_count()
                old = (1 if o0 & bit else 0) + (1 if w0 & bit else 0)
                new = (1 if once & bit else 0) + (1 if twice & bit else 0)
                if new < old:
                    del lst[pos:pos + old - new]
                else:
                    lst[pos:pos] = [names[b]] * (new - old)
            c[0] = once
            c[1] = twice
            return lst.copy()
    lst = _build_hand(once, twice, trump)
    hands[seat] = [once, twice, trump, lst]
    return lst.copy()


def _trick_dicts(rows: Sequence[int], trump: int) -> list[dict[str, Any]]:
    """Completed tricks as dicts (``Observation.tricks``) from their records in st."""
    table = play_table(trump)
    out = []
    for j in range(0, len(rows), TRICK_W):
        r = rows[j:j + TRICK_W]
        plays = [list(table[r[3 + k] + (64 * (r[7 + k] + 1) if r[7 + k] >= 0 else 0)])
                 for k in range(4)]
        out.append({"leader": r[0], "plays": plays, "winner": r[1], "points": r[2]})
    return out


# --- the deal ----------------------------------------------------------------------------
class Deal:
    """One deal, decision by decision (see the module docstring).

    Parameters
    ----------
    seed, deal : int
        Master seed (0 … 2**64-1) and deal index (0 … 2**63-1); together they fix the cards.
    rules : Rules, optional
        The rules variant (``sim.Rules``); the defaults are the rules.
    seats : four strategy spec strings, optional
        Only written into the record's ``seats`` field.
    """

    def __init__(self, seed: int = 0, deal: int = 0, rules: Rules | None = None,
                 seats: Sequence[str] | None = None) -> None:
        self.seed = check_seed(seed)
        self.deal = check_deal(deal)
        self.rules = rules or DEFAULT_RULES
        if not isinstance(self.rules, Rules):
            raise TypeError(f"rules must be a sim.Rules, not {type(self.rules).__name__}")
        self.seats = list(seats) if seats is not None else ["python"] * 4
        # st, u, rules and the choice buffer side by side (sim.spaces.packed_step)
        self._mem = np.zeros(P_SIZE, dtype=np.int64)
        self._st = self._mem[P_ST:P_U]
        self._mv = memoryview(self._mem)  # for Observation's snapshot (bytes)
        self._u = self._mem[P_U:P_RULES].view(np.uint64)
        self._rules = self._mem[P_RULES:P_BUF]
        self._rules[:] = self.rules.array()
        self._buf = self._mem[P_BUF:]
        self._abuf = np.empty(MAX_CHOICES, dtype=np.int64)  # scratch for legal_mask
        self._tricks_cache: list[dict[str, Any]] = []  # Observation.tricks, shared (public)
        self._calls_cache: dict[tuple[int, ...], list[dict[str, Any]]] = {}  # Observation.calls
        # more of the observations' shared caches (see Observation): each seat's last hand
        # [once, twice, trump, names] and hand at the first lead, the current trick's plays
        # [trick number, plays], the points taken after each completed trick
        self._hands: list[Any] = [None] * 4
        self._firsts: list[Any] = [None] * 4
        self._trick: list[Any] = [-1, []]
        self._points: list[list[int]] = [[0, 0, 0, 0]]
        self._codes: list[int] | None = None  # legal_codes(), built on demand
        self._nbuf = -1  # codes of the decision awaited in _buf[:_nbuf] (-1: not computed)
        self._version = 0  # bumped by every decision; observations check it
        self._choices: tuple[Any, ...] = ()  # legal() in notation, valid at _choices_version
        self._choices_version = -1
        self._ptable: tuple[Any, ...] | None = None
        init_deal(self._st, self._u, np.uint64(self.seed), np.uint64(self.deal))
        advance(self._st, self._u, self._rules)
        self._sync()

    def _sync(self) -> None:
        """Mirror phase and seat to act as Python ints (read on every step by the tiers)."""
        self._ph, self._seat = self._st[:2].tolist()  # S_PHASE, S_TO_ACT

    # state ---------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._ph == DONE

    @property
    def to_act(self) -> ToAct | None:
        """``(seat, kind)`` of the decision awaited, or None when the deal is over."""
        if self._ph == DONE:
            return None
        return ToAct(self._seat, KIND_NAMES[self._ph])

    @property
    def trump(self) -> str | None:
        t = int(self._st[S_TRUMP])
        return SUITS[t] if t >= 0 else None

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know now (R9)."""
        if seat not in (0, 1, 2, 3):
            raise ValueError(f"seat {seat!r} must be 0, 1, 2 or 3")
        return Observation(self, seat)

    # choices -------------------------------------------------------------------------
    def legal_codes(self) -> list[int]:
        """The legal choices as kernel codes (fast path for bots); -1 is pass."""
        codes = self._codes
        if codes is None:
            n = self._nbuf
            if n < 0:
                n = self._nbuf = legal(self._st, self._u, self._buf)
            codes = self._buf[:n].tolist()
            if self._ph == CALL:
                codes.insert(0, -1)
            self._codes = codes
        return codes

    def legal(self) -> list[Any]:
        """The legal choices in canonical order (docs/engine.md), in notation."""
        if self._choices_version == self._version:
            return list(self._choices)
        ph = self._ph
        codes = self.legal_codes()
        if ph == PLAY:
            if self._ptable is None:  # trump is fixed from the first play on
                self._ptable = play_table(int(self._st[S_TRUMP]))
            choices = list(map(self._ptable.__getitem__, codes))
        elif ph == CALL:
            choices = [None] + [CARD_NAMES[c] for c in codes[1:]]
        elif ph == GIVEBACK:
            choices = list(map(giveback_table().__getitem__, codes))
        else:
            choices = []
        # kept (as a tuple, so a caller editing its list changes nothing) for ``apply``
        self._choices = tuple(choices)
        self._choices_version = self._version
        return choices

    def apply(self, choice: Any) -> None:
        """Carry out ``choice`` (notation as in ``legal()``) for the seat to act."""
        if self._choices_version == self._version and (
                choice is None or type(choice) is tuple or type(choice) is str):
            # fast path: one of the objects legal() returned (or equal to one) is legal
            # by construction; anything else takes code_of's parsing and explanations
            try:
                i = self._choices.index(choice)
            except ValueError:
                pass
            else:
                self._apply_legal(self._codes[i])
                return
        self.apply_code(self.code_of(choice))

    def apply_code(self, code: int) -> None:
        """Carry out a choice given as a code from ``legal_codes()``."""
        codes = self._codes
        if codes is None:
            codes = self.legal_codes()
        if code not in codes:
            raise IllegalPlayError(f"choice code {code!r} is not legal for seat "
                                   f"{int(self._st[S_TO_ACT])}: legal are {self.legal_codes()}")
        # _apply_legal, inlined: this is the fast Python tier's hot path
        self._nbuf, self._ph, self._seat = packed_step(self._mem, code)
        self._codes = None
        self._version += 1

    # the fixed spaces (sim.spaces): numpy observations and actions ----------------------
    def obs_array(self, seat: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """``seat``'s observation vector (default: the seat to act), laid out as
        ``sim.obs_spec()`` (int16[OBS_SIZE]); written into ``out`` when given. The same kernel
        fills ``sim.Batch.observe()``, so both tiers see the same numbers."""
        if seat is None:
            seat = self._seat
        elif seat not in (0, 1, 2, 3):
            raise ValueError(f"seat {seat!r} must be 0, 1, 2 or 3")
        if out is None:
            out = np.empty(OBS_SIZE, dtype=np.int16)
        fill_obs(self._st, self._u, seat, out)
        return out

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """bool[N_ACTIONS]: the legal actions of the seat to act (``sim.spaces``)."""
        if out is None:
            out = np.empty(N_ACTIONS, dtype=np.bool_)
        fill_mask(self._st, self._u, self._abuf, out)
        return out

    def legal_actions(self) -> list[int]:
        """The legal actions (``sim.spaces``), in the canonical order of ``legal()``."""
        ph, t = self._ph, int(self._st[S_TRUMP])
        return [int(action_of_code(ph, t, c)) for c in self.legal_codes()]

    def code_of_action(self, action: int) -> int:
        """The engine code (``legal_codes()``) of an action; IllegalPlayError if not legal."""
        code = -2
        if isinstance(action, (int, np.integer)) and 0 <= action < N_ACTIONS and \
                self._ph != DONE:
            code = int(code_of_action(self._ph, int(self._st[S_TRUMP]), int(action)))
        if code == -2 or code not in self.legal_codes():
            kind = KIND_NAMES[self._ph]
            raise IllegalPlayError(f"action {action!r} is not legal for seat {self._seat} at "
                                   f"this {kind} decision: legal are {self.legal_actions()}")
        return code

    def apply_action(self, action: int) -> None:
        """Carry out a choice given as an action of the fixed action space (``sim.spaces``)."""
        self._apply_legal(self.code_of_action(action))

    def _apply_legal(self, code: int) -> None:
        self._nbuf, self._ph, self._seat = packed_step(self._mem, code)
        self._codes = None
        self._version += 1

    def code_of(self, choice: Any) -> int:
        """The kernel code of a choice in notation; IllegalPlayError names seat and ruling."""
        ph = int(self._st[S_PHASE])
        seat = int(self._st[S_TO_ACT])
        if ph == DONE:
            raise IllegalPlayError(f"the deal is over: no choice {choice!r} can be applied")
        once, twice = int(self._u[U_ONCE + seat]), int(self._u[U_TWICE + seat])
        codes = self.legal_codes()
        if ph == CALL:
            if choice is None or choice == "pass":
                return -1
            try:
                c = parse_card(choice[0] if isinstance(choice, (tuple, list)) and choice
                               else choice)
            except InvalidCardError as e:
                raise IllegalPlayError(f"illegal show {choice!r} by seat {seat}: {e}") from None
            if c in codes:
                return c
            raise IllegalPlayError(f"illegal show {choice!r} by seat {seat}: "
                                   f"{self._why_show(c, once, twice)}")
        cards = _cards_arg(choice, "choice")
        if ph == GIVEBACK:
            if len(cards) == 2:
                a, b = sorted(cards)
                code = _make_code(a, b)
                if code in codes:
                    return code
            raise IllegalPlayError(f"illegal give-back {choice!r} by seat {seat}: "
                                   f"{self._why_giveback(cards, once, twice)}")
        trump = int(self._st[S_TRUMP])
        if len(cards) in (1, 2):
            code = play_code(cards, trump)
            if code in codes:
                return code
        lead = None
        if self._st[S_POS] > 0:
            a, b = int(self._st[S_TRICK_A]), int(self._st[S_TRICK_B])
            lead = [int(ID_OF_KEY[trump, a])] + ([int(ID_OF_KEY[trump, b])] if b >= 0 else [])
        why = explain_play(once, twice, trump, lead, cards)
        raise IllegalPlayError(f"illegal play {_names(cards)} by seat {seat}: {why}")

    def _why_show(self, c: int, once: int, twice: int) -> str:
        if c >= 52:
            return "jokers are never shown (R6)"
        if not twice >> c & 1:
            return f"does not hold the pair {CARD_NAMES[c]} {CARD_NAMES[c]} (R6)"
        cur = int(self._st[S_CUR_CARD])
        return (f"rank {RANKS[c // 4]} does not outrank the shown pair {CARD_NAMES[cur]} "
                f"(R6: strictly higher, A lowest … K highest)")

    def _why_giveback(self, cards: list[int], once: int, twice: int) -> str:
        if len(cards) != 2:
            return "exactly two cards are given back (R8)"
        shown = int(self._st[S_CUR_CARD])
        if shown in cards:
            return f"{CARD_NAMES[shown]!r} is of the pair just shown and stays (R8)"
        held = {c: (once >> c & 1) + (twice >> c & 1) for c in cards}
        for c in cards:
            if cards.count(c) > held[c]:
                return f"does not hold {CARD_NAMES[c]!r}"
        return "not a legal give-back (R8)"

    # results -------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """The finished deal's record (docs/record.md)."""
        if not self.done:
            raise ValueError("the deal is not finished: record() needs a finished deal")
        return build_record(self._st, self._u, self.seed, self.deal, self.rules, self.seats)

    @property
    def giving_to(self) -> int | None:
        return int(self._st[S_GIVE_TO]) if self._st[S_PHASE] == GIVEBACK else None

    def hand(self, seat: int) -> list[str]:
        """A seat's current hand (for analysis; a strategy sees only its observation)."""
        once, twice = int(self._u[U_ONCE + seat]), int(self._u[U_TWICE + seat])
        t = int(self._st[S_TRUMP])
        return _names(_mask_cards(once, twice, None if t < 0 else ID_OF_KEY[t]))

    def cards_left(self, seat: int) -> int:
        return int(self._u[U_ONCE + seat]).bit_count() + int(self._u[U_TWICE + seat]).bit_count()

    def __repr__(self) -> str:
        return f"Deal(seed={self.seed}, deal={self.deal}, to_act={self.to_act})"


def play_python(deal: Deal, strategies: Sequence[Any]) -> dict[str, Any]:
    """Play ``deal`` to the end with four Python strategies; returns the record."""
    for s, strat in enumerate(strategies):
        strat.begin_deal(s, deal.seed, deal.deal)
    while not deal.done:
        seat = int(deal._st[S_TO_ACT])
        obs = Observation(deal, seat)
        deal.apply(strategies[seat].choose(obs, deal.legal()))
    return deal.record()
