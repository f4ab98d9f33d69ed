"""Search players (placeholder while being written)."""
from sim.jit import kernel
from strategies.greedy import greedy_decide


@kernel
def pimc_decide(st, u, rules, seat, params, buf, fws, uws):
    return greedy_decide(st, u, rules, seat, params, buf)


@kernel
def ismcts_decide(st, u, rules, seat, params, buf, fws, uws):
    return greedy_decide(st, u, rules, seat, params, buf)


@kernel
def oracle_decide(st, u, rules, seat, params, buf, fws, uws):
    return greedy_decide(st, u, rules, seat, params, buf)
