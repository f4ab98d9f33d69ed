"""Shuangkou as an OpenSpiel game, ``python_shuangkou``, and OpenSpiel's bots as contestants.

``import sim.openspiel`` registers the game with ``pyspiel.register_game`` (the optional extra:
``pip install -e '.[openspiel]'``)::

    import pyspiel, sim.openspiel
    game = pyspiel.load_game("python_shuangkou(max_redeals=0)")

* **Parameters**: the rule variants (``sim.Rules``, docs/rules.md "Variants").
* **Players**: 4 (seats 0-3, partners opposite, R4); **returns**: each seat's settlement
  (R24), zero-sum (a void deal, R11, returns zeros).
* **Chance**: one chance node per dealt card, interleaved with calling as the real deal is
  (R5-R7): the cards of dealing round ``r + 1`` are drawn exactly when the engine would deal
  that round, after every calling chance of round ``r``; a chance outcome is a card id (0-53),
  with probability (copies of it not yet dealt) / (cards not yet dealt) - a uniform shuffle,
  dealt card by card. When nobody shows (R11) the next attempt's 108 cards are drawn the same
  way, up to ``max_redeals`` times. Why per card and not one outcome per shuffle seed: a seed
  outcome would make ``chance_outcomes()`` a list of as many seeds as one allows (or deal only
  a few decks), while a card outcome is at most 54 entries and every deck is possible; and a
  resampled state then only has to redraw the cards already dealt (the rest stays chance).
* **Actions**: ``sim.spaces``' fixed action space (``sim.action_of``; ``N_ACTIONS``).
* **Observations**: the observer's tensor is ``Deal.obs_array(seat)`` (``sim.obs_spec()``,
  float32, one named view per field, the shapes computed once at import); the observation
  string is the same information as text; the information-state string (perfect recall) is
  the seat's own dealt cards in dealing order while calling, its hand at the first lead once
  trick play has begun (the dealing order tells nothing about the others' cards then), every
  public call, the give-backs it gave or received and every play. Neither shows a partner's
  cards (R9).
* **Resampling**: ``state.resample_from_infostate(player, sampler)`` returns a state that
  ``player`` cannot tell from this one. During trick play the other hands come from the
  project's exact sampler (``strategies.sampler``: uniform among the deals consistent with
  the seat's hand, the calls, its give-backs, every play and the voids and R19 answers they
  reveal). While calling, the cards dealt to the others so far are drawn at random with each
  public show's pair (and each give-back card the seat knows of) placed with its seat in time,
  and the attempt is replayed through the engine (a give-back the seat does not know is any
  legal one): a draw in which some public call would not have happened is drawn again. That
  draw is consistent but not exactly uniform. A void attempt before (R11) is replayed as any
  deal in which nobody shows. Worlds made in trick play have no history (``history()`` is
  empty): the hidden cards are drawn for the current position only. OpenSpiel's
  ``ISMCTSBot`` calls it with the seat to act.

Contestants: the player spec ``openspiel(bot=ismcts, simulations=200)`` (also ``mcts`` and
``uniform_random``) plays in ``play``, ``tournament`` and ``ladder``; at each decision the bot
gets a state built from the seat's observation alone (a resampled world, as above).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sim.errors import ConfigError, ShuangkouError, StrategyError, UsageError, WeightsError

try:
    import pyspiel
except ImportError:  # pragma: no cover - depends on the installation
    raise ConfigError("sim.openspiel needs OpenSpiel: pip install -e '.[openspiel]' "
                      "(the extra 'openspiel', the open_spiel wheel)") from None

from sim.cards import CARD_NAMES, ID_OF_KEY
from sim.core import state as S
from sim.core.engine import (
    advance,
    apply_call_pass,
    apply_giveback,
    apply_show,
    init_deal,
    legal,
)
from sim.core.movegen import MAX_CHOICES, code_first, code_second
from sim.core.state import add_card
from sim.rules import R_MAX_REDEALS, Rules
from sim.spaces import (
    N_ACTIONS,
    OBS_SIZE,
    P_BUF,
    P_RULES,
    P_SIZE,
    P_ST,
    P_U,
    action_of_code,
    choice_of_action,
    code_of_action,
    fill_mask,
    fill_obs,
    mask_into,
    obs_spec,
    packed_step,
)
from strategies import sampler as SM
from strategies.base import Strategy, param
from strategies.learned_weights import read_npz

GAME_NAME = "python_shuangkou"
N_PLAYERS = 4
_DEFAULTS = Rules().to_dict()
# calling decisions of one attempt at most: 26 rounds x 4 chances, 13 shows (ranks rise, R6)
# each with a give-back and at most 3 passes before the next, and 4 closing passes
_CALLING_MAX = 104 + 13 * 5 + 4
# chance outcome (card, k / n) of a card with k copies among n undealt, made once
_OUTCOMES = [[(None, (c, 1 / n), (c, 2 / n)) if n else () for c in range(54)]
             for n in range(109)]
_OBS_FIELDS = tuple((f["name"], f["offset"], f["size"]) for f in obs_spec())  # shapes: once

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Xinjiang Shuangkou",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=N_PLAYERS,
    min_num_players=N_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(_DEFAULTS))


def max_utility(rules: Rules) -> int:
    """The largest settlement one seat can receive under ``rules`` (R23, R24)."""
    top = 200 + (max(rules.kou_di_single, rules.kou_di_pair) - 1) * 80  # attacker score
    attack = rules.settle_unit * max(0, (top - 100) // rules.settle_step)
    defend = min(rules.defender_cap, rules.settle_unit * (100 // rules.settle_step))
    return max(attack, defend, 1)


class ShuangkouGame(pyspiel.Game):
    """``python_shuangkou``: the deal as an OpenSpiel game (module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {k: int(v) for k, v in (params or {}).items()}
        self.rules = Rules.from_dict({**_DEFAULTS, **values})
        top = float(max_utility(self.rules))
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS,
            max_chance_outcomes=54,
            num_players=N_PLAYERS,
            min_utility=-top,
            max_utility=top,
            utility_sum=0.0,
            max_game_length=(self.rules.max_redeals + 1) * (108 + _CALLING_MAX) + 108)
        super().__init__(_GAME_TYPE, info, self.rules.to_dict())
        eng = self.rules.array()
        eng[R_MAX_REDEALS] = 0  # the engine never redeals itself: the game draws the cards
        self.engine_rules = eng
        self._proto: Core | None = None

    def fresh_core(self) -> Core:
        """A new deal's core: a copy of one made once (the engine's start is not redone)."""
        if self._proto is None:
            self._proto = Core(self)
        return copy.deepcopy(self._proto)

    def new_initial_state(self) -> ShuangkouState:
        return ShuangkouState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        return ShuangkouObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class Core:
    """What a state holds: the engine's packed arrays (as ``sim.Deal`` keeps them), the
    attempt and the cards dealt so far. One object, so that OpenSpiel's ``clone`` (which
    deep-copies the state's attributes) copies one array and no game."""

    def __init__(self, game: ShuangkouGame) -> None:
        self.game = game
        self.mem = np.zeros(P_SIZE, dtype=np.int64)
        self.views()
        self.rules[:] = game.engine_rules
        self.attempt = 0
        self.new_attempt(0)

    def views(self) -> None:
        m = self.mem
        self.st = m[P_ST:P_U]
        self.u = m[P_U:P_RULES].view(np.uint64)
        self.rules = m[P_RULES:P_BUF]
        self.buf = m[P_BUF:]

    def __deepcopy__(self, memo: Any) -> Core:
        new = Core.__new__(Core)
        new.__dict__.update(self.__dict__)
        new.mem = self.mem.copy()
        new.views()
        new.left = list(self.left)
        return new

    def new_attempt(self, decisions: int) -> None:
        st, u = self.st, self.u
        init_deal(st, u, np.uint64(0), np.uint64(0))
        st[S.S_DECK:S.S_DECK + 108] = -1  # nothing dealt yet: the cards are chance
        st[S.S_REDEALS] = self.attempt
        st[S.S_DECISIONS] = decisions
        self.left = [2] * 54
        self.nleft = 108
        self.dealt = 0
        self.need = True  # a chance node: the next card
        self.phase = S.CALL
        self.seat = -1
        self.actions: list[int] | None = None

    def forward(self) -> None:
        """Run the engine to the next decision, unless it needs a round not dealt yet (then
        the state is put back and becomes a chance node); redeal a void attempt (R11)."""
        st = self.st
        if st[S.S_PHASE] == S.CALL:
            snap = self.mem[:P_RULES].copy()
            advance(st, self.u, self.rules)
            if st[S.S_ROUND] * 4 > self.dealt:
                self.mem[:P_RULES] = snap
                self.need = True
                return
        self.need = False
        self.actions = None
        self.phase, self.seat = int(st[S.S_PHASE]), int(st[S.S_TO_ACT])
        if self.phase == S.DONE and st[S.S_VOID] and self.attempt < self.game.rules.max_redeals:
            self.attempt += 1
            self.new_attempt(int(st[S.S_DECISIONS]))

    def deal_card(self, card: int) -> None:
        self.st[S.S_DECK + self.dealt] = card
        self.left[card] -= 1
        self.nleft -= 1
        self.dealt += 1
        if self.dealt % 4 == 0:
            self.forward()

    def apply_code(self, code: int) -> None:
        st, u = self.st, self.u
        ph = self.phase
        self.actions = None
        if ph == S.PLAY:
            _, self.phase, self.seat = packed_step(self.mem, code)
            return
        if ph == S.CALL:
            if code < 0:
                apply_call_pass(st)
            else:
                apply_show(st, u, code)
        else:
            apply_giveback(st, u, code_first(code), code_second(code))
        self.forward()

    def legal_actions(self) -> list[int]:
        if self.actions is None:
            mask = np.empty(N_ACTIONS, dtype=np.bool_)
            fill_mask(self.st, self.u, self.buf, mask)
            self.actions = np.flatnonzero(mask).tolist()
        return self.actions

    def codes(self) -> list[int]:
        """The legal choices as engine codes, canonical order (-1 = pass first at a show)."""
        n = legal(self.st, self.u, self.buf)
        codes = self.buf[:n].tolist()
        return [-1] + codes if self.phase == S.CALL else codes

    def action_of(self, code: int) -> int:
        return int(action_of_code(self.phase, int(self.st[S.S_TRUMP]), code))

    def own_deck(self, seat: int) -> list[int]:
        return self.st[S.S_DECK:S.S_DECK + self.dealt].tolist()[seat::4]

    @property
    def done(self) -> bool:
        return self.phase == S.DONE and not self.need


class ShuangkouState(pyspiel.State):
    """A deal in progress (``Core``); chance nodes come when the engine needs the next
    dealing round."""

    def __init__(self, game: ShuangkouGame) -> None:
        super().__init__(game)
        self._c = game.fresh_core()

    # --- the OpenSpiel API -----------------------------------------------------------
    def current_player(self) -> int:
        c = self._c
        if c.need:
            return pyspiel.PlayerId.CHANCE
        if c.phase == S.DONE:
            return pyspiel.PlayerId.TERMINAL
        return c.seat

    def _legal_actions(self, player: int) -> list[int]:
        return self._c.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        c = self._c
        return [t[k] for t, k in zip(_OUTCOMES[c.nleft], c.left) if k]

    def _apply_action(self, action: int) -> None:
        c = self._c
        if c.need:
            c.deal_card(int(action))
            return
        c.apply_code(int(code_of_action(c.phase, int(c.st[S.S_TRUMP]), int(action))))

    def _action_to_string(self, player: int, action: int) -> str:
        c = self._c
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {CARD_NAMES[action]}"
        kind = S.KIND_NAMES[c.phase] if c.phase != S.DONE else "play"
        trump = int(c.st[S.S_TRUMP])
        try:
            choice = choice_of_action(action, kind, trump if trump >= 0 else None)
        except ShuangkouError:
            return f"action {action}"
        if choice is None:
            return "pass"
        if kind == "show":
            return f"show {choice}"
        return " ".join(choice)

    def is_terminal(self) -> bool:
        return self._c.done

    def returns(self) -> list[float]:
        c = self._c
        if not c.done:
            return [0.0] * N_PLAYERS
        return [float(x) for x in c.st[S.S_SETTLE:S.S_SETTLE + 4]]

    def __str__(self) -> str:
        c = self._c
        hands = " | ".join(" ".join(_hand(c.st, c.u, s)) for s in range(4))
        return (f"attempt {c.attempt} dealt {c.dealt} phase {S.KIND_NAMES[c.phase]} "
                f"to_act {c.seat}: {hands}")

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> Any:
        """A state ``player_id`` cannot tell from this one (module docstring)."""
        c = self._c
        if c.need or c.done:
            raise UsageError("resample_from_infostate: only at a decision")
        key = int(probability_sampler() * 2.0 ** 53)
        return world(c.game, c.st, c.u, int(player_id), key, c.own_deck(int(player_id)))

    @property
    def core(self) -> Core:
        """The engine arrays and the dealing (``core.st``, ``core.u``: ``sim.core.state``)."""
        return self._c


def _hand(st: np.ndarray, u: np.ndarray, s: int) -> list[str]:
    t = int(st[S.S_TRUMP])
    once, twice = int(u[S.U_ONCE + s]), int(u[S.U_TWICE + s])
    out = []
    for b in range(54):
        if once >> b & 1:
            name = CARD_NAMES[int(ID_OF_KEY[t, b])] if t >= 0 else CARD_NAMES[b]
            out.append(name)
            if twice >> b & 1:
                out.append(name)
    return sorted(out)


def _first_hand(st: np.ndarray, u: np.ndarray, s: int) -> list[str]:
    t = int(st[S.S_TRUMP])
    once, twice = int(u[S.U_FIRST_ONCE + s]), int(u[S.U_FIRST_TWICE + s])
    out = []
    for b in range(54):
        if once >> b & 1:
            out.append(CARD_NAMES[int(ID_OF_KEY[t, b])])
            if twice >> b & 1:
                out.append(CARD_NAMES[int(ID_OF_KEY[t, b])])
    return sorted(out)


def _calls_text(st: np.ndarray, seat: int) -> str:
    out = []
    for i in range(int(st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        r, s, c, took = (int(x) for x in st[j:j + 4])
        item = f"{r}:{s}:{CARD_NAMES[c]}"
        if took >= 0:
            item += f"<{took}"
            a, b = int(st[j + S.CALL_GAVE_A]), int(st[j + S.CALL_GAVE_B])
            if seat in (s, took) and a >= 0:
                item += f">{CARD_NAMES[a]},{CARD_NAMES[b]}"
        out.append(item)
    return " ".join(out)


def _plays_text(st: np.ndarray) -> str:
    t = int(st[S.S_TRUMP])
    if t < 0 or st[S.S_PHASE] < S.PLAY:
        return ""

    def name(k: int) -> str:
        return CARD_NAMES[int(ID_OF_KEY[t, k])]

    out = []
    for n in range(int(st[S.S_NTRICKS])):
        j = S.S_TRICKS + n * S.TRICK_W
        plays = []
        for p in range(4):
            a, b = int(st[j + S.TRICK_A + p]), int(st[j + S.TRICK_B + p])
            plays.append(name(a) + ("," + name(b) if b >= 0 else ""))
        out.append(f"{int(st[j + S.TRICK_LEADER])}:" + " ".join(plays))
    pos = int(st[S.S_POS]) if st[S.S_PHASE] == S.PLAY else 0
    if pos:
        plays = []
        for p in range(pos):
            a, b = int(st[S.S_TRICK_A + p]), int(st[S.S_TRICK_B + p])
            plays.append(name(a) + ("," + name(b) if b >= 0 else ""))
        out.append(f"{int(st[S.S_LEADER])}:" + " ".join(plays))
    return " / ".join(out)


def info_string(c: Core, seat: int) -> str:
    """The information state of ``seat`` (perfect recall; module docstring)."""
    st = c.st
    head = f"p{seat} a{c.attempt} r{int(st[S.S_ROUND])}"
    if st[S.S_PHASE] >= S.PLAY and st[S.S_TRUMP] >= 0:
        mine = "first " + " ".join(_first_hand(st, c.u, seat))
    else:
        mine = "dealt " + " ".join(CARD_NAMES[x] for x in c.own_deck(seat))
    return f"{head} {mine} | calls {_calls_text(st, seat)} | plays {_plays_text(st)}"


def observation_string(c: Core, seat: int) -> str:
    """What ``seat`` sees now (the observation tensor's information, as text)."""
    st, u = c.st, c.u
    trump = int(st[S.S_TRUMP])
    t = "shdc"[trump] if trump >= 0 else "-"
    shown = int(st[S.S_CUR_CARD])
    trick = []
    if st[S.S_PHASE] == S.PLAY:
        for p in range(int(st[S.S_POS])):
            a, b = int(st[S.S_TRICK_A + p]), int(st[S.S_TRICK_B + p])
            trick.append(CARD_NAMES[int(ID_OF_KEY[trump, a])]
                         + ("," + CARD_NAMES[int(ID_OF_KEY[trump, b])] if b >= 0 else ""))
    left = [int(u[S.U_ONCE + s]).bit_count() + int(u[S.U_TWICE + s]).bit_count()
            for s in range(4)]
    return (f"p{seat} {S.KIND_NAMES[int(st[S.S_PHASE])]} to_act {int(st[S.S_TO_ACT])} "
            f"r{int(st[S.S_ROUND])} redeals {int(st[S.S_REDEALS])} trump {t} "
            f"shown {CARD_NAMES[shown] if shown >= 0 else '-'}@{int(st[S.S_CUR_SEAT])} "
            f"hand {' '.join(_hand(st, u, seat))} | trick {' '.join(trick)} | "
            f"attackers {int(st[S.S_ATT_POINTS])} | left {left}")


class ShuangkouObserver:
    """OpenSpiel's observer: ``tensor`` is ``sim.obs_spec``'s layout (float32), ``dict`` a
    view per field; with perfect recall, the information-state string (and no tensor)."""

    def __init__(self, iig_obs_type: Any, params: Any) -> None:
        if params:
            raise ConfigError(f"python_shuangkou observers take no parameters, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER \
                or not iig_obs_type.public_info:
            raise ConfigError("python_shuangkou observes one seat's view (public information "
                              "and its own private information) only")
        self._recall = bool(iig_obs_type.perfect_recall)
        size = 0 if self._recall else OBS_SIZE
        self.tensor = np.zeros(size, np.float32)
        self._i16 = np.zeros(OBS_SIZE, np.int16)
        self.dict = {} if self._recall else {
            name: self.tensor[off:off + n] for name, off, n in _OBS_FIELDS}

    def set_from(self, state: ShuangkouState, player: int) -> None:
        if self._recall:
            return
        fill_obs(state._c.st, state._c.u, player, self._i16)
        self.tensor[:] = self._i16

    def string_from(self, state: ShuangkouState, player: int) -> str:
        if self._recall:
            return info_string(state._c, player)
        return observation_string(state._c, player)


# --- resampling: a world the seat cannot tell from the real one ------------------------------
_SAMPLER_SCRATCH: dict[str, np.ndarray] = {}


def _scratch() -> tuple[np.ndarray, np.ndarray]:
    if not _SAMPLER_SCRATCH:
        _SAMPLER_SCRATCH["w"] = np.zeros(SM.REGION, dtype=np.int64)
        _SAMPLER_SCRATCH["fw"] = np.zeros(SM.FLOAT_REGION, dtype=np.float64)
    return _SAMPLER_SCRATCH["w"], _SAMPLER_SCRATCH["fw"]


def world(game: ShuangkouGame, st: np.ndarray, u: np.ndarray, seat: int, key: int,
          own_deck: list[int] | None = None) -> ShuangkouState:
    """A state at the same decision as ``(st, u)`` that ``seat`` cannot tell from it, using
    only what ``seat`` knows (``mask_into``; ``own_deck``: its dealt cards of this attempt in
    dealing order, if known). ``key`` seeds the draw."""
    m_st = np.empty(S.ST_SIZE, dtype=np.int64)
    m_u = np.empty(S.U_SIZE, dtype=np.uint64)
    mask_into(st, u, seat, m_st, m_u)
    if m_st[S.S_PHASE] == S.PLAY:
        return _play_world(game, m_st, m_u, seat, key)
    rng = np.random.default_rng(key)
    for _ in range(1000):
        w = _calling_world(game, m_st, m_u, seat, rng, own_deck)
        if w is not None:
            return w
    raise ConfigError("resample_from_infostate: no consistent deal found in 1000 draws")


def _play_world(game: ShuangkouGame, m_st: np.ndarray, m_u: np.ndarray, seat: int,
                key: int) -> ShuangkouState:
    """Trick play: the other hands from the exact sampler, the hands at the first lead
    rebuilt from them and the plays."""
    w, fw = _scratch()
    u = m_u.copy()
    u[S.U_KEY + S.STREAM_SAMPLE + seat] = np.uint64(key & (2**64 - 1))
    u[S.U_CTR + S.STREAM_SAMPLE + seat] = np.uint64(0)
    wu = u.copy()
    SM.sample_world(m_st, u, seat, wu, w, 0, fw, 0)
    for s in range(4):
        if s != seat:
            wu[S.U_FIRST_ONCE + s] = wu[S.U_ONCE + s]
            wu[S.U_FIRST_TWICE + s] = wu[S.U_TWICE + s]
    first = wu[S.U_FIRST_ONCE:S.U_FIRST_ONCE + 4], wu[S.U_FIRST_TWICE:S.U_FIRST_TWICE + 4]
    tmp = np.zeros(S.U_SIZE, dtype=np.uint64)
    for s in range(4):
        tmp[S.U_ONCE + s], tmp[S.U_TWICE + s] = first[0][s], first[1][s]
    for t in range(int(m_st[S.S_NTRICKS]) + 1):
        leader = int(SM.leader_of(m_st, t))
        for p in range(int(SM.plays_in(m_st, t))):
            s = (leader + p) % 4
            if s == seat:
                continue
            a, b = SM.play_at(m_st, t, p)
            for c in (int(a), int(b)):
                if c >= 0:
                    add_card(tmp, s, c)
    for s in range(4):
        if s != seat:
            wu[S.U_FIRST_ONCE + s] = tmp[S.U_ONCE + s]
            wu[S.U_FIRST_TWICE + s] = tmp[S.U_TWICE + s]
    out = ShuangkouState(game)
    c = out._c
    c.st[:] = m_st
    c.u[:] = wu
    c.attempt = int(m_st[S.S_REDEALS])
    c.left = [0] * 54
    c.nleft = 0
    c.dealt = 108
    c.need = False
    c.phase, c.seat = int(m_st[S.S_PHASE]), int(m_st[S.S_TO_ACT])
    c.actions = None
    return out


def _position(st: np.ndarray, seat: int) -> tuple[int, int]:
    """(round, chance index) of ``seat``'s calling decision now: a seat's chance in rounds
    1-26, and counted round the table from seat 0 in round 27 (R7): the chances between two
    shows are passes, so the calls fix every position."""
    r = int(st[S.S_ROUND])
    if r < 27:
        return r, seat
    k, last = -1, -1
    for i in range(int(st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        if st[j + S.CALL_ROUND] == 27:
            s = int(st[j + S.CALL_SEAT])
            k = s if k < 0 else k + (s - last - 1) % 4 + 1
            last = s
    if st[S.S_PHASE] == S.GIVEBACK:
        return 27, k
    return 27, seat if k < 0 else k + (seat - last - 1) % 4 + 1


def _call_positions(st: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(round, chance index, seat, card) of every call of this attempt (``_position``)."""
    out = []
    k, last = -1, -1
    for i in range(int(st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        r, s, c = int(st[j + S.CALL_ROUND]), int(st[j + S.CALL_SEAT]), int(st[j + S.CALL_CARD])
        if r == 27:
            k = s if k < 0 else k + (s - last - 1) % 4 + 1
            last = s
            out.append((27, k, s, c))
        else:
            out.append((r, s, s, c))
    return out


def _own_dealt(m_st: np.ndarray, m_u: np.ndarray, seat: int) -> list[int]:
    """The cards dealt to ``seat`` this attempt, from its hand and the calls: its hand, less
    the pairs it took and the cards given to it, plus what it gave and the pairs taken from
    it (R8)."""
    counts = [0] * 54
    once, twice = int(m_u[S.U_ONCE + seat]), int(m_u[S.U_TWICE + seat])
    for b in range(54):
        counts[b] += (once >> b & 1) + (twice >> b & 1)
    for i in range(int(m_st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        s, took = int(m_st[j + S.CALL_SEAT]), int(m_st[j + S.CALL_TOOK])
        if took < 0:
            continue
        ga, gb = int(m_st[j + S.CALL_GAVE_A]), int(m_st[j + S.CALL_GAVE_B])
        prev = int(m_st[S.S_CALLS + (i - 1) * S.CALL_W + S.CALL_CARD])
        if s == seat:  # took prev's pair, gave ga, gb
            counts[prev] -= 2
            if ga >= 0:
                counts[ga] += 1
                counts[gb] += 1
        elif took == seat:  # lost its pair, received ga, gb
            counts[prev] += 2
            if ga >= 0:
                counts[ga] -= 1
                counts[gb] -= 1
    return [c for c in range(54) for _ in range(max(0, counts[c]))]


def _calling_world(game: ShuangkouGame, m_st: np.ndarray, m_u: np.ndarray, seat: int,
                   rng: np.random.Generator, own_deck: list[int] | None) -> ShuangkouState | None:
    """One draw of the cards dealt so far, replayed through the engine; None if some public
    call (or the seat's own decision) would not have happened."""
    rounds = int(m_st[S.S_ROUND])
    n = 4 * rounds
    known = own_deck is not None and len(own_deck) == rounds
    own = list(own_deck) if known else _own_dealt(m_st, m_u, seat)
    pools = {s: [2] * 54 for s in range(4)}  # the cards each seat's slots may still take
    for c in own:
        for s in range(4):
            pools[s][c] -= 1
    own_pool = [0] * 54
    for c in own:
        own_pool[c] += 1
    for s in range(4):
        if s != seat:
            pools[s] = pools[(seat + 1) % 4]  # one pool shared by the three others
    pools[seat] = own_pool
    deck = [-1] * n
    if known:
        for i, c in enumerate(own):
            deck[4 * i + seat] = c
    calls = _call_positions(m_st)
    gave = {}
    for i in range(int(m_st[S.S_NCALLS])):
        j = S.S_CALLS + i * S.CALL_W
        if m_st[j + S.CALL_GAVE_A] >= 0:
            gave[i] = (int(m_st[j + S.CALL_GAVE_A]), int(m_st[j + S.CALL_GAVE_B]))
    # what the calls say a seat held by a round: each show's pair, and the cards of each
    # give-back the seat knows of that were not the pair just taken (or given to the giver)
    got = [[0] * 54 for _ in range(4)]  # copies received through known give-backs
    needs = []
    for i, (r, _, s, c) in enumerate(calls):
        needs.append((s, c, 2 - got[s][c], r))
        if i in gave:
            prev = calls[i - 1][3]
            took = int(m_st[S.S_CALLS + i * S.CALL_W + S.CALL_TOOK])
            for x in set(gave[i]):
                k = gave[i].count(x) - (2 if x == prev else 0) - got[s][x]
                needs.append((s, x, k, r))
            for x in gave[i]:
                got[took][x] += 1
    for s, x, k, r in needs:
        if k <= 0 or (known and s == seat):
            continue
        slots = [4 * i + s for i in range(r)]
        k -= sum(1 for p in slots if deck[p] == x)
        free = [p for p in slots if deck[p] < 0]
        k = min(k, pools[s][x], len(free))
        if k > 0:
            for p in rng.choice(len(free), size=k, replace=False):
                deck[free[int(p)]] = x
                pools[s][x] -= 1
    for group in ([seat], [s for s in range(4) if s != seat]):
        pool = pools[group[0]]
        rest = [c for c in range(54) for _ in range(pool[c])]
        rng.shuffle(rest)
        it = iter(rest)
        for i in range(n):
            if i % 4 in group and deck[i] < 0:
                deck[i] = next(it)
    # earlier void attempts: the seat's cards are not kept; any deal in which nobody shows
    out = ShuangkouState(game)
    c = out._c
    for _ in range(int(m_st[S.S_REDEALS])):
        _void_attempt(out, rng)
        if out.is_terminal():
            return None
    target = _position(m_st, seat), int(m_st[S.S_PHASE])
    di = 0
    ci = 0
    while True:
        if c.need:
            if di >= n:
                return None  # the world went past the decision
            out.apply_action(deck[di])
            di += 1
            continue
        ph = c.phase
        if ph not in (S.CALL, S.GIVEBACK):
            return None
        s = c.seat
        pos = _position(c.st, s)
        if (pos, ph) == target and s == seat and di == n:
            return out if ci == len(calls) else None  # (a call skipped: not this world)
        codes = c.codes()
        if ph == S.GIVEBACK:
            i = int(c.st[S.S_NCALLS]) - 1
            if i in gave:
                a, b = sorted(gave[i])
                match = [x for x in codes if (code_first(x), code_second(x)) == (a, b)]
                if not match:
                    return None
                code = match[0]
            else:  # not known to the seat: any, sparing the pairs the giver shows later
                later = {x[3] for x in calls[ci:] if x[2] == s}
                spare = [x for x in codes
                         if code_first(x) not in later and code_second(x) not in later]
                pick = spare or codes
                code = pick[int(rng.integers(len(pick)))]
        elif pos > target[0]:
            return None
        elif ci < len(calls) and pos == calls[ci][:2]:
            code = calls[ci][3]
            if code not in codes:
                return None
            ci += 1
        elif ci < len(calls) and pos > calls[ci][:2]:
            return None
        else:
            code = -1
        out.apply_action(c.action_of(code))


def _void_attempt(state: ShuangkouState, rng: np.random.Generator) -> None:
    """Play one attempt in which nobody shows (every chance passed)."""
    c = state._c
    a = c.attempt
    while c.attempt == a and not c.done:
        if c.need:
            outs = state.chance_outcomes()
            i = rng.choice(len(outs), p=[p for _, p in outs])
            state.apply_action(outs[int(i)][0])
        else:
            state.apply_action(0)  # A_PASS


# --- OpenSpiel's bots as contestants ------------------------------------------------------
_GAMES: dict[tuple[int, ...], ShuangkouGame] = {}


def game_for(rules: Rules) -> ShuangkouGame:
    """The game of a rules variant (one per variant and process)."""
    key = tuple(rules.to_dict().values())
    if key not in _GAMES:
        _GAMES[key] = pyspiel.load_game(GAME_NAME, rules.to_dict())
    return _GAMES[key]


MAX_POLICY_LAYERS = 16
MAX_POLICY_WEIGHTS = 50_000_000  # floats in a policy file at most


def load_policy(path: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The layers ``(W, b)`` of a policy file: an ``.npz`` of float arrays ``w0, b0, w1, b1,
    ...`` (a multilayer perceptron, ReLU between layers) from the observation tensor
    (``sim.obs_spec``, ``OBS_SIZE`` floats) to one logit per action of the game
    (``N_ACTIONS``). Read as data (``allow_pickle=False``): a file that holds objects, a
    missing or extra array, a shape that does not chain or a non-finite number is one
    ``WeightsError`` line. The file goes through the project's bounded reader of received
    ``.npz`` files (``strategies.learned_weights.read_npz``: a regular file, expected members
    only, sizes checked before unpacking, no pickles)."""
    cap = 8 * MAX_POLICY_WEIGHTS + 1024  # bytes of one member at most (float64, the header)
    arrays = read_npz(path, {f"{x}{i}": cap for i in range(MAX_POLICY_LAYERS) for x in "wb"},
                      "policy file", 2 * cap)
    n = len(arrays) // 2
    want = {f"{x}{i}" for i in range(n) for x in "wb"}
    if not 1 <= n <= MAX_POLICY_LAYERS or set(arrays) != want:
        raise WeightsError(f"policy file {path!r} holds {sorted(arrays)}; expected w0, b0, "
                           f"..., w(k-1), b(k-1) for 1 <= k <= {MAX_POLICY_LAYERS} layers")
    layers = []
    size = OBS_SIZE
    total = 0
    for i in range(n):
        w, b = arrays[f"w{i}"], arrays[f"b{i}"]
        out = N_ACTIONS if i == n - 1 else (w.shape[1] if w.ndim == 2 else -1)
        if w.dtype.kind != "f" or b.dtype.kind != "f" or w.shape != (size, out) \
                or b.shape != (out,):
            raise WeightsError(f"policy file {path!r}: layer {i} is w{tuple(w.shape)} "
                               f"{w.dtype}, b{tuple(b.shape)} {b.dtype}; expected floats "
                               f"w({size}, {'N' if out < 0 else out}), b(...) (the input is "
                               f"the {OBS_SIZE} observation floats, the output the "
                               f"{N_ACTIONS} actions)")
        total += w.size + b.size
        if total > MAX_POLICY_WEIGHTS or not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise WeightsError(f"policy file {path!r}: more than {MAX_POLICY_WEIGHTS:,} "
                               f"weights, or a non-finite one")
        layers.append((w.astype(np.float32), b.astype(np.float32)))
        size = out
    return layers


def save_policy(path: str, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Write ``layers`` (``(W, b)`` pairs) as a policy file that ``load_policy`` reads: how a
    network trained with OpenSpiel (its policy-gradient or DQN agents) reaches the tables."""
    np.savez(path, **{f"{x}{i}": a for i, (w, b) in enumerate(layers)
                      for x, a in (("w", w), ("b", b))})


class OpenSpielStrategy(Strategy):
    """An OpenSpiel bot (ismcts, mcts, uniform_random, or a policy network from a weights
    file) on the seat's own view of the deal."""

    name = "openspiel"
    bot = param("ismcts", str, choices=("ismcts", "mcts", "uniform_random", "policy"),
                doc="OpenSpiel's ISMCTSBot (information sets, resampled worlds), MCTSBot "
                    "(one resampled world per decision), its uniform random bot, or a policy "
                    "network read from `policy` (the legal action of the highest logit)")
    policy = param("", str, doc="bot=policy: an .npz of w0, b0, w1, b1, ... (an MLP from the "
                                "observation tensor to the actions' logits; never a pickle)")
    simulations = param(200, int, lo=1, hi=1_000_000, doc="simulations per decision (MCTS)")
    uct_c = param(2.0, float, lo=0.0, hi=1000.0, doc="UCT exploration constant")
    rollouts = param(1, int, lo=1, hi=1000, doc="random rollouts per evaluated leaf")

    def begin_deal(self, seat: int, seed: int, deal: int) -> None:
        super().begin_deal(seat, seed, deal)
        # the bot's randomness: from the deal and the seat alone (reproducible, duplicate)
        mix = np.random.SeedSequence([int(seed) & (2**64 - 1), int(deal), seat, 16 + seat])
        self._rng = np.random.RandomState(mix.generate_state(1)[0])
        self._bots: dict[int, Any] = {}

    def _bot(self, game: ShuangkouGame) -> Any:
        bot = self._bots.get(id(game))
        if bot is not None:
            return bot
        from open_spiel.python.algorithms import ismcts, mcts

        if self.bot == "uniform_random":
            bot = pyspiel.make_uniform_random_bot(self.seat, int(self._rng.randint(2**31)))
        else:
            ev = mcts.RandomRolloutEvaluator(self.rollouts, self._rng)
            if self.bot == "mcts":
                bot = mcts.MCTSBot(game, self.uct_c, self.simulations, ev, solve=False,
                                   random_state=self._rng)
            else:
                bot = ismcts.ISMCTSBot(game, ev, self.uct_c, self.simulations,
                                       random_state=self._rng)
                rng = self._rng  # the worlds from the bot's own stream (reproducible)
                bot.set_resampler(
                    lambda state, player: state.resample_from_infostate(player, rng.uniform))
        self._bots[id(game)] = bot
        return bot

    def _policy_choice(self, obs: Any, legal_choices: list) -> Any:
        layers = getattr(self, "_layers", None)
        if layers is None:
            if not self.policy:
                raise StrategyError("openspiel(bot=policy) needs policy=FILE (an .npz of w0, "
                                    "b0, w1, b1, ...)")
            layers = self._layers = load_policy(self.policy)
            self._obs16 = np.zeros(OBS_SIZE, np.int16)
            self._buf = np.zeros(MAX_CHOICES, np.int64)
        st, u = obs.arrays()  # what the seat may know (R9), nothing else
        fill_obs(st, u, obs.seat, self._obs16)
        x = self._obs16.astype(np.float32)
        for i, (w, b) in enumerate(layers):
            x = x @ w + b
            if i < len(layers) - 1:
                x = np.maximum(x, 0.0)
        phase = int(st[S.S_PHASE])
        n = legal(st, u, self._buf)
        codes = ([-1] if phase == S.CALL else []) + self._buf[:n].tolist()
        if len(codes) != len(legal_choices):
            raise StrategyError(f"openspiel: {len(codes)} legal codes, the deal "
                                f"{len(legal_choices)} choices")
        trump = int(st[S.S_TRUMP])
        logits = [x[int(action_of_code(phase, trump, c))] for c in codes]
        return legal_choices[int(np.argmax(logits))]

    def choose(self, obs: Any, legal_choices: list) -> Any:
        if len(legal_choices) == 1:
            return legal_choices[0]
        if self.bot == "policy":
            return self._policy_choice(obs, legal_choices)
        if not hasattr(self, "_rng"):
            self.begin_deal(obs.seat, 0, 0)
        game = game_for(obs.rules)
        st, u = obs.arrays()  # what the seat may know (R9), nothing else
        state = world(game, st, u, obs.seat, int(self._rng.randint(2**31)))
        c = state.core
        actions = [c.action_of(x) for x in c.codes()]  # canonical order, as legal_choices
        if len(actions) != len(legal_choices):
            raise StrategyError(f"openspiel: the resampled state has {len(actions)} choices, "
                                f"the deal {len(legal_choices)}")
        action = self._bot(game).step(state)
        return legal_choices[actions.index(action)]


pyspiel.register_game(_GAME_TYPE, ShuangkouGame)
