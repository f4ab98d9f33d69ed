"""A PettingZoo AEC environment over the engine (``pip install 'shuangkou[rl]'``).

One episode is one deal. Agents ``seat_0`` … ``seat_3``; the agent to act is the seat whose
decision it is (show, give-back or play; the engine passes forced chances itself). An
observation is a dict: ``observation`` is the seat's int16 vector (``sim.obs_spec()``, the
same kernel as ``Deal.obs_array`` and ``sim.Batch``), ``action_mask`` the int8 mask of the
legal actions over the fixed action space (``sim.spaces``; all zeros when it is not the
seat's turn). The reward is each seat's R24 settlement, given when the deal ends.

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

from sim.core.engine import DONE
from sim.deal import Deal
from sim.rules import DEFAULT_RULES, Rules
from sim.spaces import N_ACTIONS, OBS_FIELDS, OBS_OFFSETS, OBS_SIZE

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")


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
                 render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: one of "
                             f"{', '.join(self.metadata['render_modes'])} or None")
        self.rules = rules or DEFAULT_RULES
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        lo, hi = obs_bounds(self.rules)
        space = spaces.Dict({
            "observation": spaces.Box(lo, hi, shape=(OBS_SIZE,), dtype=np.int16),
            "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in AGENTS}
        self._seed = seed
        self._next_deal = 0
        self.deal: Deal | None = None
        self._mask = np.zeros(N_ACTIONS, dtype=np.bool_)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --- episodes -------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._seed = int(seed)
            self._next_deal = 0
        elif self._seed is None:
            self._seed = int.from_bytes(os.urandom(8), "little")
        self.deal = Deal(self._seed, self._next_deal, self.rules, ["python"] * 4)
        self._next_deal += 1
        self.agents = list(AGENTS)
        self.rewards = {a: 0 for a in AGENTS}
        self._cumulative_rewards = {a: 0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self._after_move()

    def seed(self, seed: int | None = None) -> None:
        """Set the master seed; the next ``reset()`` plays its deal 0."""
        self._seed = None if seed is None else int(seed)
        self._next_deal = 0

    def _after_move(self) -> None:
        deal = self.deal
        if deal._ph == DONE:
            settle = deal.record()["settlement"]
            for i, a in enumerate(AGENTS):
                self.rewards[a] = int(settle[i])
                self.terminations[a] = True
                self.infos[a] = {"deal": deal.deal, "seed": deal.seed}
            # the deal ends with the seat that made the last decision; the others step next
            if self.agents:
                self.agent_selection = self.agents[0]
        else:
            self.agent_selection = AGENTS[deal._seat]
            for a in AGENTS:
                self.rewards[a] = 0

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self.deal.apply_action(int(action))
        self._after_move()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        deal = self.deal
        seat = AGENTS.index(agent)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if deal._ph != DONE and deal._seat == seat:
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
        render_mode: str | None = None) -> ShuangkouEnv:
    """A new Shuangkou AEC environment (see the module docstring)."""
    return ShuangkouEnv(seed=seed, rules=rules, render_mode=render_mode)


raw_env = ShuangkouEnv
