"""REINFORCE against greedy through sim.gym, with JAX and optax (docs/frameworks.md):
``pip install -e '.[rl,train]'``, then ``python examples/gym_train.py --updates 200``.
A linear softmax policy over the legal actions; every decision of a deal is credited with
the deal's settlement (minus the batch mean)."""
import argparse

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sim.gym import ShuangkouVectorEnv
from sim.spaces import N_ACTIONS, OBS_SIZE

ap = argparse.ArgumentParser()
ap.add_argument("--updates", type=int, default=200)
ap.add_argument("--envs", type=int, default=64)
ap.add_argument("--batch", type=int, default=2048)  # decisions per update
args = ap.parse_args()
env, opt = ShuangkouVectorEnv(args.envs, opponents="greedy"), optax.adam(3e-3)
params = {"w": jnp.zeros((OBS_SIZE, N_ACTIONS)), "b": jnp.zeros(N_ACTIONS)}
state, key = opt.init(params), jax.random.PRNGKey(0)


def logits(p, obs, mask):
    return jnp.where(mask, (obs / 8.0) @ p["w"] + p["b"], -1e9)


act = jax.jit(lambda p, o, m, k: jax.random.categorical(k, logits(p, o, m)))


@jax.jit
def update(p, state, obs, mask, a, ret):
    def loss(p):
        logp = jax.nn.log_softmax(logits(p, obs, mask))
        return -jnp.mean(jnp.take_along_axis(logp, a[:, None], 1)[:, 0] * (ret - ret.mean()))
    u, state = opt.update(jax.grad(loss)(p), state)
    return optax.apply_updates(p, u), state


obs, info = env.reset(seed=1)
pending, held = [[] for _ in range(args.envs)], np.zeros(args.envs, dtype=bool)
for n in range(args.updates):
    data, returns = [], []
    while len(data) < args.batch:
        key, k = jax.random.split(key)
        a = np.asarray(act(params, obs, info["action_mask"], k))
        for i in np.flatnonzero(~held):  # (a held sub-env's action is ignored: NEXT_STEP)
            pending[i].append((obs[i], info["action_mask"][i], a[i]))
        obs, r, held, _, info = env.step(a)
        for i in np.flatnonzero(held):
            data += [(*x, r[i]) for x in pending[i]]
            returns.append(r[i])
            pending[i] = []
    o, m, a, ret = (np.stack(c) for c in zip(*data))
    params, state = update(params, state, o, m, a, ret.astype(np.float32))
    print(f"update {n}: {len(returns)} deals, mean return {np.mean(returns):.3f}", flush=True)
