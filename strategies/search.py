"""Search players (compiled): ``pimc``, ``ismcts`` and the analysis-only ``oracle``.

All three search trick play only; at calling chances and give-backs they follow the greedy
rules (``strategies.greedy``) with its default parameters.

pimc (Perfect-Information Monte Carlo, "determinization")
    For each of ``samples`` worlds drawn by ``strategies.sampler`` (uniform among the deals
    of the unseen cards consistent with what the seat knows), every legal play is played out
    to the end of the deal with the rollout policy (``greedy`` or ``random``) for all four
    seats; the play with the best mean final value wins. All candidates see the same worlds
    and the same rollout random numbers (common random numbers).
ismcts (single-observer Information Set MCTS, Cowling, Powley & Whitehouse 2012)
    One tree over the seat's information set; every iteration draws a world, descends the
    tree choosing among the children legal in that world by UCB with availability counts,
    expands one untried play, finishes the deal with the rollout policy and backs the value
    up, each node scored from the side of the seat that made its move. The most visited
    root play is chosen.
oracle
    Perfect-information MCTS: the same tree search on the true deal, every iteration (it sees
    every hand). For analysis only (an upper bound); records and tables mark it. (PIMC on the
    true deal, the obvious first idea, loses to PIMC: one deterministic greedy rollout per
    play in the one true world is a noisier judge than 64 rollouts over sampled worlds.)

The value of a finished deal for a seat is its settlement (R24) plus 0.005 times the attacker
score, signed for its side, so that equal settlements still prefer more points.
"""

from __future__ import annotations

import math

import numpy as np

import sim.view as view
from sim.core import state as S
from sim.core.engine import apply_play, legal
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import MAX_CHOICES, code_first, code_second
from sim.core.rng import bounded
from sim.core.state import next_draw
from strategies.base import param
from strategies.endgame import (
    ENDGAME_WORLDS,
    MAX_ENDGAME,
    endgame_begin,
    endgame_pick,
    endgame_world,
    in_endgame,
)
from strategies.greedy import greedy_decide
from strategies.kinds import KIND_ISMCTS, KIND_ORACLE, KIND_PIMC
from strategies.params import ROLLOUT_ROW, param_row
from strategies.random import random_decide
from strategies.sampler import FLOAT_REGION, REGION, draw_consistent, prepare_any
from strategies.tier import CompiledStrategy

# int scratch (buf): [choices | candidates | rollout state | sampler | tree (the rest)]
BUF_FIELDS = (
    ("R_CHOICES", MAX_CHOICES),  # legal() lists the choices here
    ("R_CAND", MAX_CHOICES),  # the candidates searched
    ("R_ST", S.ST_SIZE),  # the rollout state
    ("R_SAMPLER", REGION),  # strategies.sampler's region
)
_R, R_TREE = layout(BUF_FIELDS)  # the tree's NODE_FIELDS arrays share the rest of buf
R_CAND = _R["R_CAND"]
R_ST = _R["R_ST"]
R_SAMPLER = _R["R_SAMPLER"]
NODE_FIELDS = 7  # parent, first child, next sibling, action, player, visits, availability
# float scratch (fws): the candidates' values, then the node rewards (the sampler's table sits
# at the end of fws: FLOAT_REGION)
FWS_FIELDS = (("F_VALUE", MAX_CHOICES),)
_F, F_TREE = layout(FWS_FIELDS)
F_VALUE = _F["F_VALUE"]
# uint scratch (uws): the sampled world and its rollout copy
UWS_FIELDS = (("U_WORLD", 64), ("U_ROLL", 64))  # a u each (U_SIZE words)
_U, UWS_END = layout(UWS_FIELDS)
U_WORLD = _U["U_WORLD"]
U_ROLL = _U["U_ROLL"]
# the params rows (strategies.params): pimc's; ismcts's; the oracle's is one of the two (its
# ``search``), padded to ORACLE_MCTS, then 1.0 for the tree search
PIMC_PARAM_FIELDS = (("PIMC_SAMPLES", 1), ("PIMC_POLICY", 1), ("PIMC_ENDGAME", 1),
                     ("PIMC_ENDGAME_WORLDS", 1))
TREE_PARAM_FIELDS = (("TREE_ITERATIONS", 1), ("TREE_C", 1), ("TREE_POLICY", 1))
_PP, N_PIMC_PARAMS = layout(PIMC_PARAM_FIELDS)
PIMC_SAMPLES = _PP["PIMC_SAMPLES"]
PIMC_POLICY = _PP["PIMC_POLICY"]
PIMC_ENDGAME = _PP["PIMC_ENDGAME"]  # > 0: sampled worlds solved exactly (strategies.endgame)
PIMC_ENDGAME_WORLDS = _PP["PIMC_ENDGAME_WORLDS"]
_TP, N_TREE_PARAMS = layout(TREE_PARAM_FIELDS)
TREE_ITERATIONS = _TP["TREE_ITERATIONS"]
TREE_C = _TP["TREE_C"]
TREE_POLICY = _TP["TREE_POLICY"]
ORACLE_PARAM_FIELDS = (("ORACLE_SEARCH", max(N_PIMC_PARAMS, N_TREE_PARAMS)), ("ORACLE_MCTS", 1))
_OP, N_ORACLE_PARAMS = layout(ORACLE_PARAM_FIELDS)
ORACLE_MCTS = _OP["ORACLE_MCTS"]
POLICY_RANDOM, POLICY_GREEDY, POLICY_EGREEDY = 0, 1, 2
EPSILON = 0.1  # egreedy's default: a random play one time in ten


@kernel
def rollout(st, u, rules, policy, eps, params, buf):
    """Play the deal held in ``(st, u)`` to its end with ``policy`` in every seat: greedy
    (with the default parameters kept in row ``ROLLOUT_ROW`` of ``params``), random, or
    egreedy (greedy, but a uniformly random play with probability ``eps``)."""
    threshold = np.uint64(eps * 4294967296.0)
    while view.phase(st) == S.PLAY:
        s = view.to_act(st)
        if policy == POLICY_GREEDY or (
                policy == POLICY_EGREEDY
                and (next_draw(u, S.STREAM_SEAT + s) >> np.uint64(32)) >= threshold):
            c = greedy_decide(st, u, rules, s, params, np.int64(ROLLOUT_ROW), buf)
        else:
            c = random_decide(st, u, s, 0.25, buf)
        apply_play(st, u, rules, code_first(c), code_second(c))


@kernel
def deal_value(st, seat):
    """A finished deal's value for ``seat`` (module docstring)."""
    attacker = (seat & 1) == (view.caller(st) & 1)
    score = st[S.S_SCORE]
    return st[S.S_SETTLE + seat] + 0.005 * (score if attacker else -score)


@kernel
def reseed_rollouts(u, ru, seat):
    """Fresh rollout random streams for a new world, drawn from ``seat``'s sampling stream.

    The counters restart at 0 too: the real counters of streams 1-4 tell how often the other
    seats drew, which this seat may not know (R9); the masked observation zeroes them.
    """
    for s in range(4):
        ru[S.U_KEY + S.STREAM_SEAT + s] = next_draw(u, S.STREAM_SAMPLE + seat)
        ru[S.U_CTR + S.STREAM_SEAT + s] = 0


@kernel
def copy_into(dst, src, n):
    """``dst[:n] = src[:n]`` (slice assignment between arrays needs numba's runtime)."""
    for i in range(n):
        dst[i] = src[i]


@kernel
def _world(st, u, seat, wu, buf, fws, sample):
    """A world to search in: a draw from the prepared sampler, or the true deal."""
    copy_into(wu, u, S.U_SIZE)
    if sample:
        draw_consistent(st, u, seat, wu, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    reseed_rollouts(u, wu, seat)


@kernel
def _evaluate_candidates(st, u, rules, seat, params, buf, fws, uws, n, samples, policy,
                         sample):
    """Sum over ``samples`` worlds of each candidate's rolled-out value (into
    ``fws[F_VALUE:F_VALUE + n]``)."""
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    ru = uws[U_ROLL:U_ROLL + S.U_SIZE]
    rst = buf[R_ST:R_ST + S.ST_SIZE]
    for i in range(n):
        fws[F_VALUE + i] = 0.0
    if sample:
        prepare_any(st, u, seat, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    for _ in range(samples):
        _world(st, u, seat, wu, buf, fws, sample)
        for i in range(n):
            copy_into(rst, st, S.S_CALLS)  # a rollout needs only the scalars and the trick
            copy_into(ru, wu, S.U_SIZE)
            c = buf[R_CAND + i]
            apply_play(rst, ru, rules, code_first(c), code_second(c))
            rollout(rst, ru, rules, policy, EPSILON, params, buf)
            fws[F_VALUE + i] += deal_value(rst, seat)
    best = 0
    for i in range(1, n):
        if fws[F_VALUE + i] > fws[F_VALUE + best]:
            best = i
    return buf[R_CAND + best]


@kernel
def _no_search(st, u, rules, seat, params, buf):
    """The choice when there is nothing to search (a calling decision, which follows the
    greedy rules, or a single legal play), or -2 when there is; leaves the legal plays in
    ``buf[:n]`` and returns ``n`` as a second value."""
    if view.phase(st) != S.PLAY:
        return greedy_decide(st, u, rules, seat, params, np.int64(ROLLOUT_ROW), buf), 0
    n = legal(st, u, buf)
    if n == 1:
        return buf[0], 1
    return np.int64(-2), n


@kernel
def exact_worlds(st, u, rules, seat, buf, fws, uws, base, worlds, default):
    """The play of the best summed value over ``worlds`` sampled worlds each solved exactly
    (``strategies.endgame``, its arrays in ``buf`` from ``base``), ``default`` on ties; -2
    when a world was not settled (the rollouts decide). ``pimc(endgame=K)`` and
    ``expert(endgame=K)``."""
    prepare_any(st, u, seat, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    endgame_begin(buf, base)
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    sums = fws[F_VALUE:F_VALUE + MAX_CHOICES]
    m = 0
    for w in range(max(worlds, 1)):
        _world(st, u, seat, wu, buf, fws, np.int64(1))
        m = endgame_world(st, wu, rules, seat, buf, base, sums, w == 0)
        if m < 0:
            return np.int64(-2)
    return endgame_pick(buf, base, sums, m, default)


@kernel
def _rollout_search(st, u, rules, seat, params, buf, fws, uws, sample):
    """PIMC on sampled worlds (``sample`` = 1) or on the true deal (0, the oracle): params
    are samples and rollout policy."""
    code, n = _no_search(st, u, rules, seat, params, buf)
    if code != -2:
        return code
    for i in range(n):
        buf[R_CAND + i] = buf[i]
    if sample and in_endgame(st, np.int64(params[seat, PIMC_ENDGAME])):
        # ties keep the first legal play, as the rollouts' argmax does
        c = exact_worlds(st, u, rules, seat, buf, fws, uws, R_TREE,
                         np.int64(params[seat, PIMC_ENDGAME_WORLDS]), buf[R_CAND])
        if c != -2:
            return c
    return _evaluate_candidates(st, u, rules, seat, params, buf, fws, uws, n,
                                np.int64(params[seat, PIMC_SAMPLES]),
                                np.int64(params[seat, PIMC_POLICY]), sample)


@kernel
def pimc_decide(st, u, rules, seat, params, buf, fws, uws):
    """PIMC choice code (module docstring); params: samples, rollout policy."""
    return _rollout_search(st, u, rules, seat, params, buf, fws, uws, np.int64(1))


@kernel
def ismcts_decide(st, u, rules, seat, params, buf, fws, uws):
    """ISMCTS choice code (module docstring); params: iterations, exploration c, policy."""
    return _tree_search(st, u, rules, seat, params, buf, fws, uws, np.int64(1))


@kernel
def oracle_decide(st, u, rules, seat, params, buf, fws, uws):
    """Oracle choice code on the true deal; params: search (0 rollouts, 1 MCTS), then the
    parameters of that search."""
    if params[seat, ORACLE_MCTS] == 1.0:
        return _tree_search(st, u, rules, seat, params, buf, fws, uws, np.int64(0))
    return _rollout_search(st, u, rules, seat, params, buf, fws, uws, np.int64(0))


@kernel
def _tree_search(st, u, rules, seat, params, buf, fws, uws, sample):
    """MCTS over the seat's information set on sampled worlds (``sample`` = 1: ISMCTS) or
    over the true deal (0: the oracle)."""
    code, n = _no_search(st, u, rules, seat, params, buf)
    if code != -2:
        return code
    return tree_search_root(st, u, rules, seat, params, buf, fws, uws, sample,
                            np.int64(params[seat, TREE_ITERATIONS]), params[seat, TREE_C],
                            np.int64(params[seat, TREE_POLICY]))


@kernel
def tree_search_root(st, u, rules, seat, params, buf, fws, uws, sample, iterations, cexp,
                     policy):
    """The tree search of ``_tree_search`` with explicit settings (the ``expert`` uses it as
    its challenger finder); returns the most visited root play."""
    cap = (buf.shape[0] - R_TREE) // NODE_FIELDS
    cap = min(cap, fws.shape[0] - FLOAT_REGION - F_TREE, iterations + 2)
    parent = buf[R_TREE:R_TREE + cap]
    child = buf[R_TREE + cap:R_TREE + 2 * cap]
    sib = buf[R_TREE + 2 * cap:R_TREE + 3 * cap]
    act = buf[R_TREE + 3 * cap:R_TREE + 4 * cap]
    player = buf[R_TREE + 4 * cap:R_TREE + 5 * cap]
    visits = buf[R_TREE + 5 * cap:R_TREE + 6 * cap]
    avail = buf[R_TREE + 6 * cap:R_TREE + 7 * cap]
    reward = fws[F_TREE:F_TREE + cap]
    parent[0] = -1
    child[0] = -1
    sib[0] = -1
    act[0] = -1
    player[0] = -1
    visits[0] = 0
    avail[0] = 0
    reward[0] = 0.0
    nodes = 1
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    ru = uws[U_ROLL:U_ROLL + S.U_SIZE]
    rst = buf[R_ST:R_ST + S.ST_SIZE]
    if sample:
        prepare_any(st, u, seat, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    for _ in range(iterations):
        _world(st, u, seat, wu, buf, fws, sample)
        copy_into(rst, st, S.S_CALLS)
        copy_into(ru, wu, S.U_SIZE)
        node = 0
        while view.phase(rst) == S.PLAY:
            p = view.to_act(rst)
            nl = legal(rst, ru, buf)
            # children legal in this world: count availability, find untried plays
            untried = 0
            best = -1
            best_score = -math.inf
            for i in range(nl):
                code = buf[i]
                ch = child[node]
                while ch >= 0 and act[ch] != code:
                    ch = sib[ch]
                if ch < 0:
                    buf[R_CAND + untried] = code  # untried plays
                    untried += 1
                    continue
                avail[ch] += 1
                if untried == 0:
                    sc = reward[ch] / visits[ch] + cexp * math.sqrt(
                        math.log(avail[ch]) / visits[ch])
                    if sc > best_score:
                        best_score = sc
                        best = ch
            if untried > 0 and nodes < cap:
                code = buf[R_CAND + bounded(next_draw(u, S.STREAM_SAMPLE + seat), untried)]
                ch = nodes
                nodes += 1
                parent[ch] = node
                sib[ch] = child[node]
                child[node] = ch
                child[ch] = -1
                act[ch] = code
                player[ch] = p
                visits[ch] = 0
                avail[ch] = 1
                reward[ch] = 0.0
                apply_play(rst, ru, rules, code_first(code), code_second(code))
                node = ch
                break
            if best < 0:  # tree full: finish with the rollout
                break
            code = act[best]
            apply_play(rst, ru, rules, code_first(code), code_second(code))
            node = best
        rollout(rst, ru, rules, policy, EPSILON, params, buf)
        while node >= 0:  # back up, each node from the side of the seat that moved into it
            visits[node] += 1
            if player[node] >= 0:
                reward[node] += deal_value(rst, player[node]) / 10.0
            node = parent[node]
    best = -1
    ch = child[0]
    while ch >= 0:
        if best < 0 or visits[ch] > visits[best] or \
                (visits[ch] == visits[best] and act[ch] < act[best]):
            best = ch
        ch = sib[ch]
    return act[best]


_POLICIES = ("random", "greedy", "egreedy")


class PimcStrategy(CompiledStrategy):
    """Determinization Monte Carlo: rolls every play out on sampled worlds."""

    name = "pimc"
    compiled_kind = KIND_PIMC
    samples = param(64, int, lo=1, hi=100_000, doc="worlds sampled per decision")
    rollout = param("greedy", str, choices=_POLICIES, doc="rollout policy")
    endgame = param(0, int, lo=0, hi=MAX_ENDGAME,
                    doc="> 0: once every hand holds at most this many cards, solve each sampled "
                        "world exactly (sim.solve) instead of rolling it out (docs/solve.md)")
    endgame_worlds = param(ENDGAME_WORLDS, int, lo=1, hi=10_000,
                           doc="endgame: sampled worlds solved per decision")

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return pimc_decide(st, u, rules, seat, params, buf, fws, uws)

    def compiled_params(self) -> list[float]:
        return param_row(PIMC_PARAM_FIELDS, {"PIMC_SAMPLES": self.samples,
                                             "PIMC_POLICY": _POLICIES.index(self.rollout),
                                             "PIMC_ENDGAME": self.endgame,
                                             "PIMC_ENDGAME_WORLDS": self.endgame_worlds})


class IsmctsStrategy(CompiledStrategy):
    """Single-observer information-set MCTS (Cowling, Powley, Whitehouse 2012)."""

    name = "ismcts"
    compiled_kind = KIND_ISMCTS
    iterations = param(1000, int, lo=1, hi=100_000, doc="iterations per decision")
    c = param(0.3, float, lo=0.0, hi=100.0, doc="UCB exploration constant")
    rollout = param("greedy", str, choices=_POLICIES, doc="rollout policy")

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return ismcts_decide(st, u, rules, seat, params, buf, fws, uws)

    def compiled_params(self) -> list[float]:
        return param_row(TREE_PARAM_FIELDS, {"TREE_ITERATIONS": self.iterations, "TREE_C": self.c,
                                             "TREE_POLICY": _POLICIES.index(self.rollout)})


class OracleStrategy(CompiledStrategy):
    """Analysis only: sees every hand; searches the true deal (an upper bound)."""

    name = "oracle"
    compiled_kind = KIND_ORACLE
    oracle = True
    search = param("rollouts", str, choices=("rollouts", "mcts"),
                   doc="rollouts: every play rolled out `samples` times; mcts: a tree search")
    samples = param(64, int, lo=1, hi=100_000, doc="rollouts per play (search=rollouts)")
    iterations = param(1000, int, lo=1, hi=100_000, doc="MCTS iterations (search=mcts)")
    c = param(0.3, float, lo=0.0, hi=100.0, doc="UCB exploration constant (search=mcts)")
    rollout = param("egreedy", str, choices=_POLICIES, doc="rollout policy")

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return oracle_decide(st, u, rules, seat, params, buf, fws, uws)

    def compiled_params(self) -> list[float]:
        policy = _POLICIES.index(self.rollout)
        if self.search == "mcts":
            row = param_row(TREE_PARAM_FIELDS, {"TREE_ITERATIONS": self.iterations,
                                                "TREE_C": self.c, "TREE_POLICY": policy})
        else:
            row = param_row(PIMC_PARAM_FIELDS, {"PIMC_SAMPLES": self.samples,
                                                "PIMC_POLICY": policy, "PIMC_ENDGAME": 0,
                                                "PIMC_ENDGAME_WORLDS": 0})
        row += [0.0] * (ORACLE_MCTS - len(row))
        return row + [1.0 if self.search == "mcts" else 0.0]
