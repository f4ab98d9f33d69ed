"""A PettingZoo AEC environment over the engine (``pip install 'shuangkou[rl]'``).

One episode is one deal. Agents ``seat_0`` … ``seat_3``; the agent to act is the seat whose
decision it is (show, give-back or play; the engine passes forced chances itself). An
observation is a dict: ``observation`` is the seat's int16 vector (``sim.obs_spec()``, the
same kernel as ``Deal.obs_array`` and ``sim.Batch``), ``action_mask`` the int8 mask of the
legal actions over the fixed action space (``sim.spaces``; all zeros when it is not the
seat's turn). The reward is each seat's R24 settlement, given when the deal ends.

Opponents: ``env(opponents={1: "greedy", 3: "pimc(samples=16)"})`` seats built-in, plug-in
or Python strategies (spec strings or ``Strategy`` objects) in those seats. They play between
the agents' turns inside ``reset()`` and ``step()``, so the agents (``possible_agents``) are
only the other seats and ``agent_iter()`` gives turns to those seats only. A built-in
compiled strategy runs its kernel on the deal's state, exactly as in ``sim.Batch`` and the
compiled deal loop; any other strategy is asked through ``choose`` (its observation).

Seeding: ``reset(seed=s)`` plays deal 0 of master seed ``s``; each further ``reset()`` plays
the next deal number of the same seed, so a run of episodes is exactly ``shuangkou play``'s
deals. ``env(seed=s)`` sets the seed the first ``reset()`` uses (default: a random one)::

    from sim.env import env
    e = env(seed=1)
    e.reset()
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        action = None if termination else policy(obs["observation"], obs["action_mask"])
        e.step(action)

``sim.env`` is not imported by ``import sim``; it imports ``pettingzoo`` and ``gymnasium``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("sim.env needs pettingzoo and gymnasium: pip install 'shuangkou[rl]'") \
        from e

from sim.core import state as S
from sim.core.rng import check_seed
from sim.deal import Deal
from sim.errors import ConfigError, IllegalPlayError, NotResetError, StrategyError
from sim.observation import Observation
from sim.rules import DEFAULT_RULES, Rules, as_rules
from sim.spaces import N_ACTIONS, OBS_FIELDS, OBS_OFFSETS, OBS_SIZE
from strategies.base import Strategy
from strategies.params import param_table
from strategies.registry import make
from strategies.tier import CompiledStrategy, new_scratch

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")
# what reset() sets: reading one before it is a NotResetError ("call reset() first")
_EPISODE = frozenset({"agents", "rewards", "terminations", "truncations", "infos",
                      "agent_selection", "_cumulative_rewards", "num_agents"})


class _Opponent:
    """A strategy in a seat of the environment: a built-in compiled search or rule player runs
    its kernel on the deal's state (as the compiled loop and sim.Batch do), any other (random,
    whose Python ``choose`` draws the kernel's numbers, a plug-in, a Python bot) through
    ``choose``."""

    def __init__(self, seat: int, strat: Any) -> None:
        self.seat = seat
        self.strat = strat
        self.name = strat.spec()
        self.kernel = isinstance(strat, CompiledStrategy) and strat.runs_compiled()
        if self.kernel:
            self.params = param_table([strat.compiled_params()] * 4)
            self.scratch = new_scratch()

    def play(self, deal: Deal) -> None:
        s = self.seat
        try:
            if self.kernel:
                code = int(self.strat.kernel_decide(self.params, *deal.engine,
                                                    s, *self.scratch))
                deal.apply_code(code)
            else:
                deal.apply(self.strat.choose(Observation(deal, s), deal.legal()))
        except IllegalPlayError as e:
            raise StrategyError(f"strategy {self.name!r} in seat {s} (seed {deal.seed}, deal "
                                f"{deal.deal}) made an illegal choice: {e}") from None
        except StrategyError:
            raise
        except Exception as e:
            raise StrategyError(f"strategy {self.name!r} in seat {s} (seed {deal.seed}, deal "
                                f"{deal.deal}) raised {type(e).__name__}: {e}") from e


def _opponents(opponents: Any) -> dict[int, _Opponent]:
    """``{seat: spec or Strategy}`` (or four entries, None for an agent's seat) -> seats."""
    if opponents is None:
        return {}
    if isinstance(opponents, dict):
        items = list(opponents.items())
    elif isinstance(opponents, (list, tuple)) and len(opponents) == 4:
        items = [(s, spec) for s, spec in enumerate(opponents) if spec is not None]
    else:
        raise ConfigError(f"opponents {opponents!r}: give a dict {{seat: spec}} such as "
                          f"{{1: 'greedy', 3: 'greedy'}}, or four entries with None for the "
                          f"agents' seats")
    out: dict[int, _Opponent] = {}
    for seat, spec in items:
        if isinstance(seat, str) and seat in AGENTS:
            seat = AGENTS.index(seat)
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                or not 0 <= seat <= 3:
            raise ConfigError(f"opponents: seat {seat!r} must be 0, 1, 2 or 3 (or 'seat_0' … "
                              f"'seat_3')")
        if spec is None:
            continue
        strat = spec if isinstance(spec, Strategy) else make(spec)
        out[int(seat)] = _Opponent(int(seat), strat)
    if len(out) == 4:
        raise ConfigError("opponents: at least one seat must be left to the agents; four "
                          "strategies play faster through `shuangkou play` or a tournament")
    return out


def obs_bounds(rules: Rules = DEFAULT_RULES) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest value of every observation entry (for a gymnasium Box)."""
    hi = {"hand": 2, "played": 2, "trick": 53, "seat": 3, "phase": 3, "to_act": 3, "trump": 1,
          "caller": 3, "leader": 3, "position": 3, "round": 27, "redeals": rules.max_redeals,
          "shown": 53, "last_show": 53, "gave": 53, "voids": 1, "points": 200,
          "attacker_points": 200, "tricks": 27, "cards_left": 29}
    lo = np.full(OBS_SIZE, -1, dtype=np.int16)
    high = np.zeros(OBS_SIZE, dtype=np.int16)
    for name, size, _ in OBS_FIELDS:
        o = OBS_OFFSETS[name]
        high[o:o + size] = hi[name]
        if name in ("hand", "played", "seat", "phase", "trump", "position", "round", "redeals",
                    "voids", "points", "attacker_points", "tricks", "cards_left"):
            lo[o:o + size] = 0
    return lo, high


class ShuangkouEnv(AECEnv):
    """The AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "shuangkou_v0",
                "is_parallelizable": False}

    def __init__(self, seed: int | None = None, rules: Rules | None = None,
                 render_mode: str | None = None, opponents: Any = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode {render_mode!r}: one of "
                              f"{', '.join(self.metadata['render_modes'])} or None")
        self.rules = as_rules(rules)
        self.render_mode = render_mode
        self.opponents = _opponents(opponents)
        self.possible_agents = [a for s, a in enumerate(AGENTS) if s not in self.opponents]
        self._names = [self.opponents[s].name if s in self.opponents else "python"
                       for s in range(4)]
        lo, hi = obs_bounds(self.rules)
        space = spaces.Dict({
            "observation": spaces.Box(lo, hi, shape=(OBS_SIZE,), dtype=np.int16),
            "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._seed = None if seed is None else check_seed(seed)
        self._next_deal = 0
        self.deal: Deal | None = None
        self._mask = np.zeros(N_ACTIONS, dtype=np.bool_)

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not set: the per-episode ones before the first reset()
        if name in _EPISODE:
            raise NotResetError(f"{type(self).__name__}.{name}: call reset() first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _agent(self, agent: Any) -> int:
        if agent not in self.possible_agents:
            raise ConfigError(f"agent {agent!r}: one of {', '.join(self.possible_agents)}")
        return AGENTS.index(agent)

    def observation_space(self, agent: str) -> spaces.Space:
        self._agent(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        self._agent(agent)
        return self.action_spaces[agent]

    # --- episodes -------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._seed = check_seed(seed)
            self._next_deal = 0
        elif self._seed is None:
            self._seed = int.from_bytes(os.urandom(8), "little")
        self.deal = Deal(self._seed, self._next_deal, self.rules, self._names)
        self._next_deal += 1
        agents = self.possible_agents
        self.agents = list(agents)
        self.rewards = {a: 0 for a in agents}
        self._cumulative_rewards = {a: 0 for a in agents}
        self.terminations = {a: False for a in agents}
        self.truncations = {a: False for a in agents}
        self.infos = {a: {} for a in agents}
        for s, opp in self.opponents.items():
            opp.strat.begin_deal(s, self.deal.seed, self.deal.deal)
        self._after_move()
        self._accumulate_rewards()  # a deal the opponents end alone (void) reports it at once

    def seed(self, seed: int | None = None) -> None:
        """Set the master seed; the next ``reset()`` plays its deal 0."""
        self._seed = None if seed is None else check_seed(seed)
        self._next_deal = 0

    def _after_move(self) -> None:
        deal = self.deal
        opponents = self.opponents
        # the opponents play up to an agent's turn
        while deal.phase != S.DONE and deal.seat_to_act in opponents:
            opponents[deal.seat_to_act].play(deal)
        if deal.phase == S.DONE:
            settle = deal.record()["settlement"]
            for a in self.possible_agents:
                self.rewards[a] = int(settle[AGENTS.index(a)])
                self.terminations[a] = True
                self.infos[a] = {"deal": deal.deal, "seed": deal.seed}
            # the deal ends with the seat that made the last decision; the others step next
            if self.agents:
                self.agent_selection = self.agents[0]
        else:
            self.agent_selection = AGENTS[deal.seat_to_act]
            for a in self.possible_agents:
                self.rewards[a] = 0

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise IllegalPlayError(f"action {action!r} for {agent}: an integer action of "
                                   f"sim.spaces (0 … {N_ACTIONS - 1}) marked in action_mask")
        self._cumulative_rewards[agent] = 0
        self.deal.apply_action(int(action))
        self._after_move()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        deal = self.deal
        seat = self._agent(agent)
        if deal is None:
            raise NotResetError(f"{type(self).__name__}.observe({agent!r}): call reset() first")
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if deal.phase != S.DONE and deal.seat_to_act == seat:
            mask[deal.legal_mask(self._mask)] = 1
        return {"observation": deal.obs_array(seat), "action_mask": mask}

    def render(self) -> str | None:
        deal = self.deal
        if deal is None:
            return None
        text = (f"seed {deal.seed} deal {deal.deal}: "
                + ("over, settlement " + str(deal.record()["settlement"]) if deal.done else
                   f"seat {deal.to_act.seat} to {deal.to_act.kind}, trump {deal.trump}, "
                   f"hand {' '.join(deal.hand(deal.to_act.seat))}"))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def env(seed: int | None = None, rules: Rules | None = None,
        render_mode: str | None = None, opponents: Any = None) -> ShuangkouEnv:
    """A new Shuangkou AEC environment (see the module docstring); ``opponents``:
    ``{seat: strategy spec or Strategy}`` for the seats the agents do not play."""
    return ShuangkouEnv(seed=seed, rules=rules, render_mode=render_mode, opponents=opponents)


raw_env = ShuangkouEnv
