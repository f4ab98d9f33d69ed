"""What a seat sees at a decision (R9): ``Observation``, built by ``sim.deal.Deal`` for Python
bots, people and RL loops, and the notation tables of choice codes it and the deal share.

The other hands are never in it; ``arrays()`` gives the masked state arrays for compiled
strategies (``sim.view.mask_into``, the one "what a seat may know" kernel).
"""

from __future__ import annotations

import struct
from functools import lru_cache
from typing import Any

import numpy as np

from sim.cards import (
    CARD_NAMES,
    ID_OF_KEY,
    SUITS,
)
from sim.core import state as S
from sim.core.movegen import N_CODES, make_code
from sim.errors import UsageError
from sim.record import call_rows, trick_rows
from sim.spaces import (
    OBS_SIZE,
    P_RULES,
    P_ST,
    P_U,
    fill_obs,
    mask_into,
)

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


class SharedCaches:
    """What every observation of one deal shares, kept on the ``Deal`` (``deal.shared``) and
    filled by the observations on first use: the completed tricks (``tricks``, public) and the
    calls as each seat may know them (``calls``, by the key of what the seat knows); each
    seat's last hand ``[once, twice, trump, names]`` (``hands``) and hand at the first lead
    (``firsts``); the current trick's plays ``[trick number, plays]`` (``trick``); the points
    taken after each completed trick (``points``)."""

    __slots__ = ("tricks", "calls", "hands", "firsts", "trick", "points")

    def __init__(self) -> None:
        self.tricks: list[dict[str, Any]] = []
        self.calls: dict[tuple[int, ...], list[dict[str, Any]]] = {}
        self.hands: list[Any] = [None] * 4
        self.firsts: list[Any] = [None] * 4
        self.trick: list[Any] = [-1, []]
        self.points: list[list[int]] = [[0, 0, 0, 0]]


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
    ``arrays()`` gives the masked state (``sim.view.mask_into``) for compiled strategies.
    """

    __slots__ = ("seat", "kind", "rules", "_deal", "_version", "_raw", "_hdr", "_snap",
                 "_cache", "_trump", "_hand_c", "_trick_c")

    def __init__(self, deal: Any, seat: int) -> None:  # a sim.deal.Deal
        self.seat = seat
        ph = deal.phase
        self.kind = S.KIND_NAMES[ph] if deal.seat_to_act == seat or ph == S.DONE else "wait"
        self.rules = deal.rules
        self._deal = deal  # after the snapshot: only its shared caches are used
        self._version = deal.version
        self._raw: bytes | None = None  # copy of the deal's (st, u), unmasked: private
        self._snap: tuple[np.ndarray, np.ndarray] | None = None  # masked, made by arrays()
        self._cache: dict[str, Any] | None = None  # made on first use (most bots read little)
        self._hand_c: list[str] | None = None
        self._trick_c: list[list[str]] | None = None

    def _take(self) -> list[int]:
        """Snapshot: copy the deal's state (bytes); returns the header of st (S_PHASE …
        S_VOIDS+3) as a tuple of Python ints, the scalars most fields read."""
        deal = self._deal
        if deal.version != self._version:
            raise UsageError("stale observation: the deal has moved on since it was made; "
                             "ask deal.observation(seat) again")
        raw = self._raw = deal.state_bytes()  # st, u as int64 bytes
        h = self._hdr = _HDR.unpack_from(raw)
        self._trump = h[S.S_TRUMP]
        return h

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The masked state arrays ``(st, u)`` (for compiled strategies)."""
        if self._snap is None:
            if self._raw is None:
                self._take()
            raw = np.frombuffer(self._raw, dtype=np.int64)
            m_st = np.empty(S.ST_SIZE, dtype=np.int64)
            m_u = np.empty(S.U_SIZE, dtype=np.uint64)
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
            raw, i = self._raw, P_U + S.U_ONCE + self.seat
            h = self._hand_c = _hand_names(self._deal.shared.hands, self.seat, _int(raw, i),
                                           _int(raw, i + 4), self._trump)
        return h

    @property
    def round(self) -> int:
        """Dealing round reached (R5): 27 once all cards are out."""
        return self._h[S.S_ROUND]

    @property
    def redeals(self) -> int:
        return self._h[S.S_REDEALS]

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Every show so far (public, R9); ``gave`` only where this seat gave or received.
        Shared by the seat's observations of the deal: read it, do not edit it."""
        c = self._cache
        if c is not None and "calls" in c:
            return c["calls"]
        h = self._h
        n = h[S.S_NCALLS]
        if n == 0:
            v: list[dict[str, Any]] = []
        else:
            # the log only grows (or restarts at a redeal) and the last give-back is filled
            # in once: the deal keeps each seat's view, shared by its observations
            key = (self.seat, h[S.S_REDEALS], n,
                   _int(self._raw, S.S_CALLS + (n - 1) * S.CALL_W + 4))
            cc = self._deal.shared.calls
            v = cc.get(key)
            if v is None:
                v = cc[key] = call_rows(_ints(self._raw, S.S_CALLS, n * S.CALL_W), self.seat)
        if c is None:
            c = self._cache = {}
        c["calls"] = v
        return v

    @property
    def shown(self) -> tuple[int, str] | None:
        """(seat, pair) on the table during calling, None before the first show."""
        h = self._h
        s = h[S.S_CUR_SEAT]
        return (s, CARD_NAMES[h[S.S_CUR_CARD]]) if s >= 0 else None

    @property
    def caller(self) -> int | None:
        c = self._h[S.S_CALLER]
        return c if c >= 0 else None

    @property
    def attackers(self) -> tuple[int, int] | None:
        c = self._h[S.S_CALLER]
        return None if c < 0 else (c % 2, c % 2 + 2)

    @property
    def attacking(self) -> bool | None:
        c = self._h[S.S_CALLER]
        return None if c < 0 else (self.seat % 2 == c % 2)

    def _tricks_upto(self, n: int) -> list[dict[str, Any]]:
        # completed tricks never change: the deal keeps them as dicts for every observer
        c = self._deal.shared.tricks
        if len(c) < n:
            first = len(c)
            c.extend(trick_rows(_ints(self._raw, S.S_TRICKS + first * S.TRICK_W,
                                        (n - first) * S.TRICK_W), self._trump))
        return c

    @property
    def tricks(self) -> list[dict[str, Any]]:
        """Completed tricks: leader, plays (by position from the leader), winner, points.
        The dicts are shared by every observation of the deal: read them, do not edit them."""
        c = self._cache
        if c is not None and "tricks" in c:
            return c["tricks"]
        h = self._h
        n = h[S.S_NTRICKS] if self._trump >= 0 else 0
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
            pos = h[S.S_POS]
            if self._trump < 0 or h[S.S_PHASE] != S.PLAY or pos == 0:
                tr = []
            else:
                # the plays (tuples of names) of the trick at h[S_NTRICKS], shared by the
                # deal's observations: a play made since the last read is appended
                dc = self._deal.shared.trick
                key = h[S.S_NTRICKS]
                if dc[0] != key:
                    dc[0] = key
                    del dc[1][:]
                plays = dc[1]
                if len(plays) < pos:
                    table = play_table(self._trump)
                    for k in range(len(plays), pos):
                        b = h[S.S_TRICK_B + k]
                        plays.append(table[h[S.S_TRICK_A + k] + (64 * (b + 1) if b >= 0 else 0)])
                tr = [list(p) for p in plays[:pos]]
            self._trick_c = tr
        return tr

    @property
    def leader(self) -> int | None:
        h = self._h
        return h[S.S_LEADER] if h[S.S_PHASE] == S.PLAY else None

    @property
    def lead(self) -> list[str] | None:
        tr = self.trick
        return tr[0] if tr else None

    @property
    def attacker_points(self) -> int:
        """Face points the attackers have taken so far (R22)."""
        return self._h[S.S_ATT_POINTS]

    @property
    def points_taken(self) -> list[int]:
        """Face points won so far by each seat."""
        c = self._cache
        if c is not None and "points_taken" in c:
            return list(c["points_taken"])
        h = self._h
        n = h[S.S_NTRICKS] if self._trump >= 0 else 0
        # running totals after each completed trick, kept by the deal
        pts = self._deal.shared.points
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
            return [set(names[b]) for b in h[S.S_VOIDS:S.S_VOIDS + 4]]
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
            raw, i = self._raw, P_U + S.U_FIRST_ONCE + self.seat
            key = (_int(raw, i), _int(raw, i + 4), t)
            c = self._deal.shared.firsts[self.seat]
            if c is None or c[0] != key:
                c = self._deal.shared.firsts[self.seat] = (key, _build_hand(key[0], key[1], t))
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


_HDR = struct.Struct(f"{S.S_CALLS}q")  # an Observation's snapshot: the header of st


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
