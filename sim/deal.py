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

from collections.abc import Sequence
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
from sim.core import state as S
from sim.core.engine import advance, init_deal, legal
from sim.core.movegen import MAX_CHOICES, make_code
from sim.core.rng import check_deal, check_seed
from sim.errors import ConfigError, IllegalPlayError, InvalidCardError, UsageError
from sim.observation import Observation, SharedCaches, giveback_table, play_table
from sim.record import build_record, mask_cards
from sim.rules import Rules, as_rules
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
    packed_step,
)

_GROUP_WORD = {"s": "spade", "h": "heart", "d": "diamond", "c": "club"}


class ToAct(NamedTuple):
    """Whose decision it is and what kind: ``'show'``, ``'giveback'`` or ``'play'``."""

    seat: int
    kind: str


# --- choice notation <-> codes -----------------------------------------------------------
_make_code = getattr(make_code, "py_func", make_code)  # plain Python here: no dispatch


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


def _not_held(name: str, named: int, held: int) -> str:
    """Why a choice naming ``name`` ``named`` times is not in a hand holding ``held``: a
    hand holding one Qs does hold Qs, just not two."""
    if held:
        return f"holds only one {name!r}, not {named}"
    return f"does not hold {name!r}"


def explain_play(once: int, twice: int, trump: int, lead: Sequence[int] | None,
                 play: Sequence[int]) -> str:
    """Why ``play`` (card ids) is not legal for the hand ``(once, twice)`` in key layout."""
    keys = [int(KEY_OF_ID[trump, c]) for c in play]
    held = {k: (1 if once >> k & 1 else 0) + (1 if twice >> k & 1 else 0) for k in range(54)}
    for k in set(keys):
        if keys.count(k) > held[k]:
            return _not_held(CARD_NAMES[int(ID_OF_KEY[trump, k])], keys.count(k), held[k])
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


def _seat(seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise UsageError(f"seat {seat!r} must be 0, 1, 2 or 3")
    return int(seat)


def _check_out(out: Any, what: str, shape: tuple[int, ...], dtype: Any) -> None:
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype \
            or not out.flags.writeable:
        got = (f"{out.dtype}{list(out.shape)}" if isinstance(out, np.ndarray)
               else type(out).__name__)
        raise UsageError(f"{what}(out=…) must be a writeable numpy {np.dtype(dtype)} array of "
                         f"shape {shape}, got {got}")


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
        self.rules = as_rules(rules)
        if seats is None:
            self.seats = ["python"] * 4
        elif isinstance(seats, (list, tuple)) and len(seats) == 4 \
                and all(isinstance(x, str) for x in seats):
            self.seats = list(seats)
        else:
            raise ConfigError(f"seats {seats!r}: give four strategy spec strings (written into "
                              f"the record), or None")
        # st, u, rules and the choice buffer side by side (sim.spaces.packed_step)
        self._mem = np.zeros(P_SIZE, dtype=np.int64)
        self._st = self._mem[P_ST:P_U]
        self._mv = memoryview(self._mem)  # for Observation's snapshot (bytes)
        self._u = self._mem[P_U:P_RULES].view(np.uint64)
        self._rules = self._mem[P_RULES:P_BUF]
        self._rules[:] = self.rules.array()
        self._buf = self._mem[P_BUF:]
        self._abuf = np.empty(MAX_CHOICES, dtype=np.int64)  # scratch for legal_mask
        self.shared = SharedCaches()  # what the deal's observations share (sim.observation)
        self._codes: list[int] | None = None  # legal_codes(), built on demand
        self._nbuf = -1  # codes of the decision awaited in _buf[:_nbuf] (-1: not computed)
        # read-only mirrors for the harness and observations (bumped / set by every decision):
        # ``version`` counts decisions, ``phase`` and ``seat_to_act`` are st's first two words
        self.version = 0
        self._choices: tuple[Any, ...] = ()  # legal() in notation, valid at _choices_version
        self._choices_version = -1
        self._ptable: tuple[Any, ...] | None = None
        init_deal(self._st, self._u, np.uint64(self.seed), np.uint64(self.deal))
        advance(self._st, self._u, self._rules)
        self._sync()

    def _sync(self) -> None:
        """Mirror phase and seat to act as Python ints (read on every step by the tiers)."""
        self.phase, self.seat_to_act = self._st[:2].tolist()  # S_PHASE, S_TO_ACT

    # state ---------------------------------------------------------------------------
    @property
    def engine(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The live engine arrays ``(st, u, rules)`` (``sim.core.state``; read them with
        ``sim.view``): for compiled deciders and the harness. Writing them breaks the deal."""
        return self._st, self._u, self._rules

    def state_bytes(self) -> bytes:
        """A copy of ``st`` then ``u`` as int64 bytes (an observation's snapshot)."""
        return self._mv[:P_RULES].tobytes()

    @property
    def done(self) -> bool:
        return self.phase == S.DONE

    @property
    def to_act(self) -> ToAct | None:
        """``(seat, kind)`` of the decision awaited, or None when the deal is over."""
        if self.phase == S.DONE:
            return None
        return ToAct(self.seat_to_act, S.KIND_NAMES[self.phase])

    @property
    def trump(self) -> str | None:
        t = int(self._st[S.S_TRUMP])
        return SUITS[t] if t >= 0 else None

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know now (R9)."""
        return Observation(self, _seat(seat))

    # choices -------------------------------------------------------------------------
    def legal_codes(self) -> list[int]:
        """The legal choices as kernel codes (fast path for bots); -1 is pass."""
        codes = self._codes
        if codes is None:
            n = self._nbuf
            if n < 0:
                n = self._nbuf = legal(self._st, self._u, self._buf)
            codes = self._buf[:n].tolist()
            if self.phase == S.CALL:
                codes.insert(0, -1)
            self._codes = codes
        return codes

    def legal(self) -> list[Any]:
        """The legal choices in canonical order (docs/engine.md), in notation."""
        if self._choices_version == self.version:
            return list(self._choices)
        ph = self.phase
        codes = self.legal_codes()
        if ph == S.PLAY:
            if self._ptable is None:  # trump is fixed from the first play on
                self._ptable = play_table(int(self._st[S.S_TRUMP]))
            choices = list(map(self._ptable.__getitem__, codes))
        elif ph == S.CALL:
            choices = [None] + [CARD_NAMES[c] for c in codes[1:]]
        elif ph == S.GIVEBACK:
            choices = list(map(giveback_table().__getitem__, codes))
        else:
            choices = []
        # kept (as a tuple, so a caller editing its list changes nothing) for ``apply``
        self._choices = tuple(choices)
        self._choices_version = self.version
        return choices

    def apply(self, choice: Any) -> None:
        """Carry out ``choice`` (notation as in ``legal()``) for the seat to act."""
        if self._choices_version == self.version and (
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
                                   f"{int(self._st[S.S_TO_ACT])}: legal are {self.legal_codes()}")
        # _apply_legal, inlined: this is the fast Python tier's hot path
        self._nbuf, self.phase, self.seat_to_act = packed_step(self._mem, code)
        self._codes = None
        self.version += 1

    # the fixed spaces (sim.spaces): numpy observations and actions ----------------------
    def obs_array(self, seat: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """``seat``'s observation vector (default: the seat to act), laid out as
        ``sim.obs_spec()`` (int16[OBS_SIZE]); written into ``out`` when given. The same kernel
        fills ``sim.Batch.observe()``, so both tiers see the same numbers."""
        if seat is None:
            seat = self.seat_to_act
        else:
            seat = _seat(seat)
        if out is None:
            out = np.empty(OBS_SIZE, dtype=np.int16)
        else:  # the kernel writes OBS_SIZE entries: anything else would write out of bounds
            _check_out(out, "obs_array", (OBS_SIZE,), np.int16)
        fill_obs(self._st, self._u, seat, out)
        return out

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """bool[N_ACTIONS]: the legal actions of the seat to act (``sim.spaces``)."""
        if out is None:
            out = np.empty(N_ACTIONS, dtype=np.bool_)
        else:
            _check_out(out, "legal_mask", (N_ACTIONS,), np.bool_)
        fill_mask(self._st, self._u, self._abuf, out)
        return out

    def legal_actions(self) -> list[int]:
        """The legal actions (``sim.spaces``), in the canonical order of ``legal()``."""
        ph, t = self.phase, int(self._st[S.S_TRUMP])
        return [int(action_of_code(ph, t, c)) for c in self.legal_codes()]

    def code_of_action(self, action: int) -> int:
        """The engine code (``legal_codes()``) of an action; IllegalPlayError if not legal."""
        code = -2
        if isinstance(action, (int, np.integer)) and 0 <= action < N_ACTIONS and \
                self.phase != S.DONE:
            code = int(code_of_action(self.phase, int(self._st[S.S_TRUMP]), int(action)))
        if code == -2 or code not in self.legal_codes():
            kind = S.KIND_NAMES[self.phase]
            raise IllegalPlayError(f"action {action!r} is not legal for seat "
                                   f"{self.seat_to_act} at "
                                   f"this {kind} decision: legal are {self.legal_actions()}")
        return code

    def apply_action(self, action: int) -> None:
        """Carry out a choice given as an action of the fixed action space (``sim.spaces``)."""
        self._apply_legal(self.code_of_action(action))

    def _apply_legal(self, code: int) -> None:
        self._nbuf, self.phase, self.seat_to_act = packed_step(self._mem, code)
        self._codes = None
        self.version += 1

    def code_of(self, choice: Any) -> int:
        """The kernel code of a choice in notation; IllegalPlayError names seat and ruling."""
        ph = int(self._st[S.S_PHASE])
        seat = int(self._st[S.S_TO_ACT])
        if ph == S.DONE:
            raise IllegalPlayError(f"the deal is over: no choice {choice!r} can be applied")
        once, twice = int(self._u[S.U_ONCE + seat]), int(self._u[S.U_TWICE + seat])
        codes = self.legal_codes()
        if ph == S.CALL:
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
        if ph == S.GIVEBACK:
            if len(cards) == 2:
                a, b = sorted(cards)
                code = _make_code(a, b)
                if code in codes:
                    return code
            raise IllegalPlayError(f"illegal give-back {choice!r} by seat {seat}: "
                                   f"{self._why_giveback(cards, once, twice)}")
        trump = int(self._st[S.S_TRUMP])
        if len(cards) in (1, 2):
            code = play_code(cards, trump)
            if code in codes:
                return code
        lead = None
        if self._st[S.S_POS] > 0:
            a, b = int(self._st[S.S_TRICK_A]), int(self._st[S.S_TRICK_B])
            lead = [int(ID_OF_KEY[trump, a])] + ([int(ID_OF_KEY[trump, b])] if b >= 0 else [])
        why = explain_play(once, twice, trump, lead, cards)
        raise IllegalPlayError(f"illegal play {_names(cards)} by seat {seat}: {why}")

    def _why_show(self, c: int, once: int, twice: int) -> str:
        if c >= 52:
            return "jokers are never shown (R6)"
        if not twice >> c & 1:
            return f"does not hold the pair {CARD_NAMES[c]} {CARD_NAMES[c]} (R6)"
        cur = int(self._st[S.S_CUR_CARD])
        return (f"rank {RANKS[c // 4]} does not outrank the shown pair {CARD_NAMES[cur]} "
                f"(R6: strictly higher, A lowest … K highest)")

    def _why_giveback(self, cards: list[int], once: int, twice: int) -> str:
        if len(cards) != 2:
            return "exactly two cards are given back (R8)"
        shown = int(self._st[S.S_CUR_CARD])
        if shown in cards:
            return f"{CARD_NAMES[shown]!r} is of the pair just shown and stays (R8)"
        held = {c: (once >> c & 1) + (twice >> c & 1) for c in cards}
        for c in cards:
            if cards.count(c) > held[c]:
                return _not_held(CARD_NAMES[c], cards.count(c), held[c])
        return "not a legal give-back (R8)"

    # results -------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """The finished deal's record (docs/record.md)."""
        if not self.done:
            raise UsageError("the deal is not finished: record() needs a finished deal")
        return build_record(self._st, self._u, self.seed, self.deal, self.rules, self.seats)

    @property
    def giving_to(self) -> int | None:
        return int(self._st[S.S_GIVE_TO]) if self._st[S.S_PHASE] == S.GIVEBACK else None

    def hand(self, seat: int) -> list[str]:
        """A seat's current hand (for analysis; a strategy sees only its observation)."""
        seat = _seat(seat)
        once, twice = int(self._u[S.U_ONCE + seat]), int(self._u[S.U_TWICE + seat])
        t = int(self._st[S.S_TRUMP])
        return _names(mask_cards(once, twice, None if t < 0 else ID_OF_KEY[t]))

    def cards_left(self, seat: int) -> int:
        seat = _seat(seat)
        u = self._u
        return int(u[S.U_ONCE + seat]).bit_count() + int(u[S.U_TWICE + seat]).bit_count()

    def __repr__(self) -> str:
        return f"Deal(seed={self.seed}, deal={self.deal}, to_act={self.to_act})"


def play_python(deal: Deal, strategies: Sequence[Any]) -> dict[str, Any]:
    """Play ``deal`` to the end with four Python strategies; returns the record."""
    for s, strat in enumerate(strategies):
        strat.begin_deal(s, deal.seed, deal.deal)
    while not deal.done:
        seat = int(deal._st[S.S_TO_ACT])
        obs = Observation(deal, seat)
        deal.apply(strategies[seat].choose(obs, deal.legal()))
    return deal.record()
