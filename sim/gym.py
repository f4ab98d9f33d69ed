"""A Gymnasium vector environment over ``sim.Batch`` (``pip install 'shuangkou[rl]'``).

One seat learns; the three others are played by built-in or plug-in strategies seated inside
the environment (default: ``greedy`` in all three). Each of the ``num_envs`` sub-environments
is one slot of a ``sim.Batch``: an episode is one deal, stepped at the learning seat's
decisions only (shows, give-backs, plays); the opponents play between them inside ``step``::

    import sim.gym
    envs = sim.gym.ShuangkouVectorEnv(256, opponents="greedy", seed=1)
    obs, infos = envs.reset()
    while True:
        actions = policy(obs, infos["action_mask"])     # int64[256], legal under the masks
        obs, rewards, terminations, truncations, infos = envs.step(actions)

* **Observations**: int16[OBS_SIZE] vectors, the documented layout (``sim.obs_spec()``, the
  same kernel as ``Deal.obs_array``); ``infos["action_mask"]``: bool[n, N_ACTIONS], the legal
  actions of the fixed action space (``sim.spaces``; ``Discrete(N_ACTIONS)`` per sub-env).
* **Reward**: the learning seat's settlement (R24, points) when its deal ends, 0 before.
  ``truncations`` are always False (every deal ends).
* **Autoreset** ``NEXT_STEP`` (``metadata["autoreset_mode"]``): the step after a terminal one
  ignores that sub-env's action and returns its next deal's first observation, reward 0. The
  observation that comes with ``terminated=True`` is already that next deal's (``sim.Batch``
  restarts a slot inside the step that ends its deal and keeps no final state); a learner
  masks terminal transitions anyway.
* **Illegal actions**: ``illegal="replace"`` (default) plays the lowest legal action instead
  and sets ``infos["illegal"]`` for that sub-env (so that any action of the space is
  accepted, as Gymnasium asks); ``illegal="raise"`` raises ``IllegalPlayError``.
* **Seeding**: ``reset(seed=s)`` starts deal 0, 1, … of master seed ``s`` in the slots in
  order; a slot that ends a deal takes the next deal number. ``reset()`` without a seed
  continues with the next unused deal numbers (a random seed the first time).
* **Opponents**: ``opponents="greedy"`` (every other seat), ``{1: "greedy", 2: "expert",
  3: "greedy"}`` (every seat but ``seat``), or four entries with None at ``seat``; specs or
  ``Strategy`` objects. Built-in compiled players play inside ``sim.Batch``'s compiled step.
  A compiled plug-in (a class with a ``kernel``) or a Python strategy cannot sit in a
  ``sim.Batch``: then each sub-env is a ``sim.Deal`` stepped in Python, the plug-in's kernel
  called on the masked state (as the deal loops call it) and a Python strategy asked through
  ``choose`` (one instance per sub-env), which is much slower (docs/frameworks.md).

``ShuangkouEnv`` is one sub-environment as a ``gymnasium.Env`` (it passes
``gymnasium.utils.env_checker.check_env``); importing this module registers it as
``Shuangkou-v0`` (``gymnasium.make("sim.gym:Shuangkou-v0")``, ``gymnasium.make_vec(
"sim.gym:Shuangkou-v0", num_envs=256, vectorization_mode="vector_entry_point")``).
``python -m sim.gym`` runs the checker. Without gymnasium (1.0 or later) the import raises
``MissingExtraError`` (a ``ConfigError`` and an ``ImportError``) in one line naming the extra,
and ``python -m sim.gym`` prints that line and exits with status 2.
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any

import numpy as np

from sim.core import state as S
from sim.core.rng import check_seed
from sim.deal import Deal
from sim.errors import ConfigError, IllegalPlayError, StrategyError
from sim.loops.batch import Batch
from sim.observation import Observation
from sim.rules import DEFAULT_RULES, Rules, as_rules
from sim.spaces import N_ACTIONS, OBS_SIZE
from sim.view import mask_into, unmask_streams
from strategies.base import Strategy
from strategies.kinds import PLUGIN_SCRATCH
from strategies.params import param_table
from strategies.plugin import checked_params, fresh_kernel, kernel_error, plugin_kernel
from strategies.registry import make
from strategies.tier import CompiledStrategy, new_scratch

EXTRA_LINE = "sim.gym needs gymnasium 1.0 or later: pip install 'shuangkou[rl]'"


class MissingExtraError(ConfigError, ImportError):
    """An optional dependency is not installed: the one line names the extra to install."""


try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space

    from sim.env import obs_bounds  # (the PettingZoo env: the same bounds)
except ImportError as _e:
    if __name__ == "__main__":
        print(EXTRA_LINE, file=sys.stderr)
        sys.exit(2)
    raise MissingExtraError(EXTRA_LINE) from _e

ILLEGAL = ("replace", "raise")
ENV_ID = "Shuangkou-v0"


# --- spaces ---------------------------------------------------------------------------------
def observation_space(rules: Rules = DEFAULT_RULES) -> spaces.Box:
    """One sub-environment's observation space: int16[OBS_SIZE] within ``sim.env.obs_bounds``."""
    lo, hi = obs_bounds(rules)
    return spaces.Box(lo, hi, shape=(OBS_SIZE,), dtype=np.int16)


# --- the seats ------------------------------------------------------------------------------
def _seating(seat: Any, opponents: Any) -> tuple[int, dict[int, Any]]:
    """The learning seat and ``{seat: Strategy}`` for the three others."""
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3:
        raise ConfigError(f"seat {seat!r}: the learning seat is 0, 1, 2 or 3")
    seat = int(seat)
    others = [s for s in range(4) if s != seat]
    if opponents is None:
        opponents = "greedy"
    if isinstance(opponents, (str, Strategy)):
        specs = {s: opponents for s in others}
    elif isinstance(opponents, dict):
        specs = dict(opponents)
    elif isinstance(opponents, (list, tuple)) and len(opponents) == 4:
        specs = {s: spec for s, spec in enumerate(opponents) if s != seat}
        if opponents[seat] is not None:
            raise ConfigError(f"opponents: entry {seat} must be None (the learning seat)")
    else:
        raise ConfigError(f"opponents {opponents!r}: a strategy spec such as 'greedy' (every "
                          f"other seat), a dict {{seat: spec}} for the three other seats, or "
                          f"four entries with None at the learning seat")
    if sorted(specs) != others or any(v is None for v in specs.values()):
        raise ConfigError(f"opponents: give a strategy for each of seats "
                          f"{', '.join(map(str, others))} (the learning seat is {seat}), "
                          f"got seats {sorted(specs)}")
    return seat, {s: v if isinstance(v, Strategy) else make(v) for s, v in specs.items()}


def _in_batch(strat: Strategy) -> bool:
    """Whether ``strat`` can sit in a ``sim.Batch`` (a built-in compiled player)."""
    return strat.runs_compiled() and getattr(strat, "compiled_kind", None) is not None


def _strategy_error(name: str, seat: int, deal: Deal, e: BaseException) -> StrategyError:
    what = f"made an illegal choice: {e}" if isinstance(e, IllegalPlayError) else \
        f"raised {type(e).__name__}: {e}"
    return StrategyError(f"strategy {name!r} in seat {seat} (seed {deal.seed}, deal "
                         f"{deal.deal}) {what}")


class _BuiltinSeat:
    """A built-in compiled player: its kernel on the deal's state (as sim.Batch runs it)."""

    def __init__(self, seat: int, strat: CompiledStrategy, n: int) -> None:
        self.seat, self.strat, self.name = seat, strat, strat.spec()
        self.params = param_table([strat.compiled_params()] * 4)
        self.scratch = new_scratch()

    def begin(self, i: int, deal: Deal) -> None:
        pass

    def play(self, i: int, deal: Deal) -> None:
        deal.apply_code(int(self.strat.kernel_decide(self.params, *deal.engine, self.seat,
                                                     *self.scratch)))


class _PluginSeat:
    """A compiled plug-in: its kernel, compiled once, on the seat's masked copy of each
    sub-env's state, its draws carried back into that deal's streams (as the deal loops)."""

    def __init__(self, seat: int, strat: Strategy, n: int) -> None:
        self.seat, self.strat, self.name = seat, strat, strat.spec()
        self.kernel = fresh_kernel(plugin_kernel(type(strat)))
        self.params = param_table([checked_params(strat)] * 4)[seat].copy()
        self.m_st = np.full(S.ST_SIZE, -1, dtype=np.int64)
        self.m_u = np.zeros(S.U_SIZE, dtype=np.uint64)
        self.pbuf = np.zeros(PLUGIN_SCRATCH, dtype=np.int64)
        self.rules: np.ndarray | None = None

    def begin(self, i: int, deal: Deal) -> None:
        if self.rules is None:
            self.rules = deal.rules.array().copy()

    def play(self, i: int, deal: Deal) -> None:
        st, u, _ = deal.engine
        s = self.seat
        mask_into(st, u, s, self.m_st, self.m_u)
        try:
            code = int(self.kernel(self.m_st, self.m_u, self.rules, s, self.params, self.pbuf))
        except Exception as e:  # noqa: BLE001 - anything a kernel raises is reported
            raise kernel_error(self.name, s, deal.seed, deal.deal, e=e) from None
        unmask_streams(u, self.m_u, s)
        try:
            deal.apply_code(code)
        except IllegalPlayError:
            raise kernel_error(self.name, s, deal.seed, deal.deal, code=code) from None


class _PythonSeat:
    """A strategy asked through ``choose``: one instance per sub-env (its own deal state)."""

    def __init__(self, seat: int, strat: Strategy, n: int) -> None:
        self.seat, self.name = seat, strat.spec()
        self.strats = [copy.deepcopy(strat) for _ in range(n)]  # (one object may sit twice)

    def begin(self, i: int, deal: Deal) -> None:
        self.strats[i].begin_deal(self.seat, deal.seed, deal.deal)

    def play(self, i: int, deal: Deal) -> None:
        deal.apply(self.strats[i].choose(Observation(deal, self.seat), deal.legal()))


# --- the two ways to step the slots -----------------------------------------------------------
class _BatchSlots:
    """The sub-envs as the slots of one ``sim.Batch`` (built-in opponents)."""

    def __init__(self, n: int, seed: int, first: int, rules: Rules, seat: int,
                 opp: dict[int, Strategy]) -> None:
        self.n, self.seat = n, seat
        self.batch = Batch(n, seed, first_deal=first, rules=rules,
                           seats=[None if s == seat else opp[s] for s in range(4)])

    def next_deal(self) -> int:
        return int(self.batch.deal.max()) + 1

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        o = self.batch.observe()
        return o.obs.copy(), o.legal_mask.copy()

    def step(self, a: np.ndarray, held: np.ndarray,
             mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply ``a`` (legal) in the slots not ``held``: the rewards (float64[n]) and which
        slots ended a deal (bool[n]); those hold the next deal's first decision."""
        b = self.batch
        idx = None
        if held.any():
            # A held slot waits at its next deal's first decision (NEXT_STEP): sim.Batch steps
            # every slot, so it is given an action that cannot end that deal (a show where one
            # is offered: the highest legal action) and put back as it was after the step.
            idx = np.flatnonzero(held)
            a = a.copy()
            a[idx] = N_ACTIONS - 1 - mask[idx, ::-1].argmax(axis=1)
            su, meta = b._su[idx], b._meta[idx]  # copies (fancy indexing)
        fin = b.step(a)
        if idx is not None:
            b._su[idx] = su
            b._meta[idx] = meta
        if not len(fin):
            return np.zeros(self.n), np.zeros(self.n, dtype=np.bool_)
        slot = fin.slot
        settle = fin.settlement[:, self.seat].astype(np.float64)
        if idx is not None:
            keep = ~held[slot]
            slot, settle = slot[keep], settle[keep]
        return (np.bincount(slot, weights=settle, minlength=self.n),
                np.bincount(slot, minlength=self.n) > 0)


def _deal_seats(opp: dict[int, Strategy], n: int) -> dict[int, Any]:
    """The opponents of ``_DealSlots`` (made once per environment: a plug-in compiles)."""
    out: dict[int, Any] = {}
    for s, strat in opp.items():
        kind = (_BuiltinSeat if isinstance(strat, CompiledStrategy) and strat.runs_compiled()
                else _PluginSeat if strat.runs_compiled() and plugin_kernel(type(strat))
                else _PythonSeat)
        out[s] = kind(s, strat, n)
    return out


class _DealSlots:
    """The sub-envs as ``sim.Deal`` objects stepped in Python (plug-in or Python opponents)."""

    def __init__(self, n: int, seed: int, first: int, rules: Rules, seat: int,
                 seats: dict[int, Any]) -> None:
        self.n, self.seed, self.next, self.rules, self.seat = n, seed, first, rules, seat
        self.seats = seats
        self.names = [self.seats[s].name if s in self.seats else "python" for s in range(4)]
        self.deals: list[Deal] = [None] * n  # type: ignore[list-item]
        for i in range(n):
            self._start(i)

    def next_deal(self) -> int:
        return self.next

    def _start(self, i: int) -> float:
        """Start slot ``i``'s next deal and run it to the learning seat's turn; the summed
        settlement of deals that ended on the way (void deals the seat never acted in)."""
        total = 0.0
        while True:
            d = self.deals[i] = Deal(self.seed, self.next, self.rules, self.names)
            self.next += 1
            for p in self.seats.values():
                p.begin(i, d)
            if self._run(i, d):
                return total
            total += float(d.engine[0][S.S_SETTLE + self.seat])

    def _run(self, i: int, d: Deal) -> bool:
        """Opponents play up to the learning seat's turn; False if the deal ended."""
        seats = self.seats
        while d.phase != S.DONE and d.seat_to_act != self.seat:
            p = seats[d.seat_to_act]
            try:
                p.play(i, d)
            except StrategyError:
                raise
            except Exception as e:
                raise _strategy_error(p.name, p.seat, d, e) from e
        return d.phase != S.DONE

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        obs = np.empty((self.n, OBS_SIZE), dtype=np.int16)
        mask = np.empty((self.n, N_ACTIONS), dtype=np.bool_)
        for i, d in enumerate(self.deals):
            d.obs_array(self.seat, out=obs[i])
            d.legal_mask(out=mask[i])
        return obs, mask

    def step(self, a: np.ndarray, held: np.ndarray,
             mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards = np.zeros(self.n)
        ended = np.zeros(self.n, dtype=np.bool_)
        for i, d in enumerate(self.deals):
            if held[i]:
                continue
            d.apply_action(int(a[i]))
            if not self._run(i, d):
                ended[i] = True
                rewards[i] = float(d.engine[0][S.S_SETTLE + self.seat]) + self._start(i)
        return rewards, ended


# --- the environments -------------------------------------------------------------------------
class ShuangkouVectorEnv(VectorEnv):
    """``num_envs`` deals, one learning seat (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 16, seat: int = 0, opponents: Any = "greedy",
                 seed: int | None = None, rules: Rules | None = None,
                 illegal: str = "replace") -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ConfigError(f"num_envs={num_envs!r} must be a positive integer")
        if illegal not in ILLEGAL:
            raise ConfigError(f"illegal={illegal!r}: one of {', '.join(ILLEGAL)}")
        self.num_envs = int(num_envs)
        self.rules = as_rules(rules)
        self.seat, self.opponents = _seating(seat, opponents)
        self.illegal = illegal
        self.in_batch = all(_in_batch(s) for s in self.opponents.values())
        self.single_observation_space = observation_space(self.rules)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        self._seed = None if seed is None else check_seed(seed)
        self._slots: _BatchSlots | _DealSlots | None = None
        self._deal_seats: dict[int, Any] | None = None
        self._held = np.zeros(self.num_envs, dtype=np.bool_)
        self._rows = np.arange(self.num_envs)
        self._mask: np.ndarray | None = None

    def _restart(self, seed: int, first: int) -> tuple[np.ndarray, dict[str, Any]]:
        self._seed = seed
        if self.in_batch:
            self._slots = _BatchSlots(self.num_envs, seed, first, self.rules, self.seat,
                                      self.opponents)
        else:
            if self._deal_seats is None:
                self._deal_seats = _deal_seats(self.opponents, self.num_envs)
            self._slots = _DealSlots(self.num_envs, seed, first, self.rules, self.seat,
                                     self._deal_seats)
        self._held[:] = False
        obs, self._mask = self._slots.observe()
        return obs, self._infos(None)

    def _infos(self, illegal: np.ndarray | None) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=np.bool_)
        infos = {"action_mask": self._mask, "_action_mask": every}
        if illegal is not None:
            infos["illegal"] = illegal
            infos["_illegal"] = every
        return infos

    def reset(self, *, seed: int | list | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start ``num_envs`` new deals: deals 0, 1, … of ``seed``, or without one the next
        unused deal numbers of the seed in use (a random seed the first time)."""
        if isinstance(seed, (list, tuple)):
            raise ConfigError("reset(seed=...): one integer, the master seed of every slot "
                              "(slot i starts deal i)")
        if options:
            raise ConfigError(f"reset(options={options!r}): sim.gym takes no options")
        super().reset(seed=seed)
        if seed is not None:
            return self._restart(check_seed(seed), 0)
        if self._slots is None:
            s = self._seed if self._seed is not None else \
                int.from_bytes(os.urandom(8), "little")
            return self._restart(s, 0)
        return self._restart(self._seed, self._slots.next_deal())

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        slots = self._slots
        if slots is None:
            raise IllegalPlayError("ShuangkouVectorEnv.step: call reset() first")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise IllegalPlayError(f"actions: integers of shape ({self.num_envs},) (actions "
                                   f"of sim.spaces, 0 … {N_ACTIONS - 1}), got "
                                   f"{a.dtype} {a.shape}")
        a = a.astype(np.int64)  # (a copy: the caller's array is never written)
        held = self._held
        mask = self._mask
        ok = (a >= 0) & (a < N_ACTIONS)
        ok[ok] = mask[self._rows[ok], a[ok]]
        bad = ~ok & ~held
        illegal = None
        if bad.any():
            if self.illegal == "raise":
                i = int(np.flatnonzero(bad)[0])
                raise IllegalPlayError(f"sub-env {i}: action {int(a[i])} is not legal here "
                                       f"(see infos['action_mask'])")
            a[bad] = mask[bad].argmax(axis=1)
            illegal = bad
        rewards, terminated = slots.step(a, held, mask)
        self._held = terminated.copy()
        obs, self._mask = slots.observe()
        return (obs, rewards, terminated, np.zeros(self.num_envs, dtype=np.bool_),
                self._infos(illegal))

    def close_extras(self, **kwargs: Any) -> None:
        self._slots = None


class ShuangkouEnv(gymnasium.Env):
    """One sub-environment of ``ShuangkouVectorEnv`` as a ``gymnasium.Env``: one deal per
    episode, ``reset()`` after it ends (no autoreset). ``info["action_mask"]``: bool[N_ACTIONS].
    ``reset(seed=s)`` plays deal 0 of ``s``, each further ``reset()`` the next deal number."""

    metadata = {"render_modes": []}

    def __init__(self, seat: int = 0, opponents: Any = "greedy", rules: Rules | None = None,
                 illegal: str = "replace", render_mode: str | None = None) -> None:
        if render_mode is not None:
            raise ConfigError(f"render_mode {render_mode!r}: sim.gym draws nothing (None)")
        self._vec = ShuangkouVectorEnv(1, seat, opponents, rules=rules, illegal=illegal)
        self.observation_space = self._vec.single_observation_space
        self.action_space = self._vec.single_action_space
        self.render_mode = None
        self._started = False  # a deal is in progress (not ended, not held)

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        v = self._vec
        if seed is None and v._slots is None:
            seed = int(self.np_random.integers(2**63))
        if seed is not None or self._started:
            obs, infos = v.reset(seed=seed, options=options)
        else:  # the last deal ended: the slot already holds the next one
            if options:
                raise ConfigError(f"reset(options={options!r}): sim.gym takes no options")
            v._held[:] = False
            obs, infos = v._slots.observe()[0], v._infos(None)
        self._started = True
        return obs[0], {"action_mask": infos["action_mask"][0]}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise IllegalPlayError("ShuangkouEnv.step: call reset() first (the deal ended)"
                                   if self._vec._slots is not None else
                                   "ShuangkouEnv.step: call reset() first")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise IllegalPlayError(f"action {action!r}: an integer action of sim.spaces "
                                   f"(0 … {N_ACTIONS - 1})")
        obs, r, term, _, infos = self._vec.step(np.array([action], dtype=np.int64))
        self._started = not term[0]
        info = {"action_mask": infos["action_mask"][0]}
        if "illegal" in infos:
            info["illegal"] = bool(infos["illegal"][0])
        return obs[0], float(r[0]), bool(term[0]), False, info


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="sim.gym:ShuangkouEnv",
                       vector_entry_point="sim.gym:ShuangkouVectorEnv")


def _main() -> int:
    from gymnasium.utils.env_checker import check_env

    check_env(gymnasium.make(ENV_ID).unwrapped)  # (made: it has a spec)
    print(f"sim.gym: {ENV_ID} passes gymnasium {gymnasium.__version__}'s env checker")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
