"""The compiled core of ``shuangkou analyze``: every legal choice of a decision, valued on the
same worlds (compiled).

``evaluate_choices`` takes a decision's state as the deciding seat may know it (the masked
arrays of ``sim.view.mask_into``), draws ``worlds`` worlds from that knowledge with the
samplers the search players use (``strategies.sampler`` during trick play, the expert's
``sample_calling_world`` during the calling and at a give-back), applies each candidate
choice in every world and plays the deal to its end with the continuation policy; it writes
the seat's settlement (R24, points per player) of each (world, choice) pair into ``out``.
All candidates of a world share the world and its rollout random numbers (paired, common
random numbers), so differences between choices are measured with the world's luck taken out.

With ``truth`` = 1 the state is the true deal (all hands, the deck) and every "world" is that
deal with fresh rollout random numbers: the oracle's view, used only for ``true_loss``.

The continuation: calls and give-backs by greedy's rule (default parameters, every seat;
``random``: random ones), trick play by ``strategies.search.rollout`` with ``policy`` and
``eps`` (the expert's egreedy rollouts by default). Randomness comes only from the seat's
sampling stream in ``u`` (the caller keys it), so results are a function of that key.
"""

from __future__ import annotations

import numpy as np

import sim.view as view
from sim.core import state as S
from sim.core.engine import apply_code, apply_play
from sim.core.jit import kernel
from sim.core.movegen import code_first, code_second
from sim.core.state import next_draw
from strategies.expert import (
    R_SAMPLER,
    R_ST,
    R_WST,
    U_ROLL,
    U_WORLD,
    sample_calling_world,
    trick_world,
)
from strategies.greedy import greedy_decide
from strategies.params import ROLLOUT_ROW
from strategies.random import random_decide
from strategies.sampler import FLOAT_REGION, prepare_any
from strategies.search import POLICY_RANDOM, copy_into, reseed_rollouts, rollout


@kernel
def continue_deal(st, u, rules, policy, eps, params, buf):
    """Play the deal in ``(st, u)`` to its end: greedy calls and give-backs (random ones for
    the random policy), then trick play by ``rollout``."""
    while view.phase(st) == S.CALL or view.phase(st) == S.GIVEBACK:
        s = view.to_act(st)
        if policy == POLICY_RANDOM:
            c = random_decide(st, u, s, 0.25, buf)
        else:
            c = greedy_decide(st, u, rules, s, params, np.int64(ROLLOUT_ROW), buf)
        apply_code(st, u, rules, c)
    if view.phase(st) == S.PLAY:
        rollout(st, u, rules, policy, eps, params, buf)


@kernel
def evaluate_choices(st, u, rules, seat, params, buf, fws, uws, cands, n, worlds, policy, eps,
                     truth, out):
    """``out[w, i]``: ``seat``'s settlement after choice ``cands[i]`` in world ``w`` (module
    docstring); ``-1`` is a pass at a show decision. Returns the worlds written."""
    calling = view.phase(st) != S.PLAY
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    ru = uws[U_ROLL:U_ROLL + S.U_SIZE]
    wst = buf[R_WST:R_WST + S.ST_SIZE]
    rst = buf[R_ST:R_ST + S.ST_SIZE]
    fbase = fws.shape[0] - FLOAT_REGION
    if not calling and not truth:
        prepare_any(st, u, seat, buf, R_SAMPLER, fws, fbase)
    for w in range(worlds):
        if truth:
            copy_into(wu, u, S.U_SIZE)
            reseed_rollouts(u, wu, seat)
            if calling:
                copy_into(wst, st, S.ST_SIZE)
                wu[S.U_KEY + S.STREAM_CARDS] = next_draw(u, S.STREAM_SAMPLE + seat)  # redeals
                wu[S.U_CTR + S.STREAM_CARDS] = 0
        elif calling:
            sample_calling_world(st, u, seat, wst, wu, buf)
        else:
            trick_world(st, u, seat, wu, buf, fws)
        for i in range(n):
            c = cands[i]
            copy_into(ru, wu, S.U_SIZE)
            if calling:
                copy_into(rst, wst, S.ST_SIZE)
                apply_code(rst, ru, rules, c)
            else:
                copy_into(rst, st, S.S_CALLS)  # a rollout needs only the scalars and the trick
                apply_play(rst, ru, rules, code_first(c), code_second(c))
            continue_deal(rst, ru, rules, policy, eps, params, buf)
            out[w, i] = rst[S.S_SETTLE + seat] if view.phase(rst) == S.DONE else 0.0
    return worlds

