"""Compiled plug-ins on the strategy side: a class's ``kernel``, its parameters as floats, and
``choose`` from an observation (the kernel run on the masked state). The compiled deal loops
that call plug-in kernels are generated on the harness side (``sim.loops.plugins``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.core import state as S
from sim.core.engine import legal
from sim.core.rng import STREAM_SEAT0, STREAM_STRATEGY0, stream_key
from sim.errors import ConfigError, StrategyError
from sim.view import is_legal, mask_into, unmask_streams
from strategies.kinds import INT_SCRATCH, PLUGIN_SCRATCH
from strategies.params import N_PARAMS, param_table


def plugin_kernel(cls: type) -> Any:
    """The ``kernel`` a strategy class (or a base) declares, or None."""
    for klass in cls.__mro__:
        if "kernel" in vars(klass):
            return vars(klass)["kernel"]
    return None


def fresh_kernel(k: Any, inline: bool = False) -> Any:
    """``k`` compiled anew, uncached: numba's own cache of a kernel knows its file only by
    modification time and size (an edited helper module could run stale).

    ``inline``: inlined into the generated deal loops (their fast path), which run without
    numba's runtime (``sim.core.jit``): a kernel that allocates (``np.zeros``, lists...) does
    not compile there. Otherwise it is a function of its own with numba's runtime (it may
    allocate as numba allows) and bounds checks on its own indexing (``boundscheck``: a read
    or write out of bounds raises ``IndexError``, reported in one line, instead of corrupting
    memory): the generated loops fall back to it when the inlined kernel does not compile
    (``sim.loops.plugins.Loops``), and ``choose`` uses it."""
    from numba import jit

    if inline:
        return jit(**{**k.targetoptions, "cache": False, "inline": "always"})(k.py_func)
    # _nrt set here, not inherited from the loops that call it (numba inherits it otherwise)
    return jit(**{**k.targetoptions, "cache": False, "boundscheck": True, "_nrt": True,
                  "inline": "never"})(k.py_func)


def compiled_params(strategy: Any) -> list[float]:
    """A plug-in's parameters as floats, in declaration order: bools 0/1, a string with
    ``choices`` its index there, numbers as they are."""
    out = []
    for key, p in strategy.params().items():
        v = getattr(strategy, key)
        if isinstance(v, bool):
            out.append(1.0 if v else 0.0)
        elif isinstance(v, (int, float)):
            out.append(float(v))
        elif p.choices is not None:
            out.append(float(p.choices.index(v)))
        else:
            raise ConfigError(f"parameter {key}={v!r} of strategy {strategy.name!r} cannot "
                              f"reach a kernel as a number: give it choices, or override "
                              f"compiled_params()")
    if len(out) > N_PARAMS:
        raise ConfigError(f"strategy {strategy.name!r} has {len(out)} parameters for its "
                          f"kernel; at most {N_PARAMS} reach it")
    return out


def checked_params(strategy: Any) -> list[float]:
    """``strategy.compiled_params()``, refused in one line when more numbers than reach a
    kernel (``N_PARAMS`` float64 slots) would be cut off."""
    out = strategy.compiled_params()
    if getattr(strategy, "params_tail", False):  # a built-in row with a tail (learned)
        return out
    out = list(out)
    if len(out) > N_PARAMS:
        raise ConfigError(f"strategy {strategy.spec()!r} passes {len(out)} parameters to its "
                          f"kernel (compiled_params()); at most {N_PARAMS} reach it "
                          f"(params is float64[{N_PARAMS}])")
    return out


def kernel_error(spec: str, seat: int, seed: int, deal: int, code: int = 0,
                 e: BaseException | None = None) -> StrategyError:
    """The one-line error of a plug-in kernel that returned an illegal code or raised."""
    where = (f"(seed {seed}, deal {deal}; replay with shuangkou play --seed {seed} "
             f"--first-deal {deal} --deals 1)")
    if e is None:
        return StrategyError(f"strategy {spec!r} in seat {seat} returned the illegal code "
                             f"{code} {where}")
    return StrategyError(f"strategy {spec!r} in seat {seat} raised {type(e).__name__}: "
                         f"{e} in its kernel {where}")


_NOISE = ("Failed in", "During", "raised from", "File ", "^", "There are", "- Of which",
          "Overload in", "With argument", "Rejected as", "<source", ">>>", "[1]", "[2]")


def first_cause(text: str) -> str:
    """The first line of a numba error message that says what is wrong (with the signature
    it could not find, when it names one)."""
    lines = [ln.strip() for ln in text.splitlines()]
    for i, ln in enumerate(lines):
        if not ln or ln.startswith(_NOISE):
            continue
        if ln.endswith(":"):  # "... found for signature:" and the signature below it
            nxt = next((x for x in lines[i + 1:] if x), "")
            if nxt.startswith(">>>"):
                ln = f"{ln} {nxt[3:].strip()}"
        return ln
    return ""


def kernel_where(kernel: Any) -> str:
    """``module:function`` of a plug-in kernel, for messages."""
    fn = getattr(kernel, "py_func", kernel)
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"


def compile_error(names: str, e: BaseException, kernels: Any = ()) -> ConfigError:
    """The one-line error of a plug-in kernel that does not compile: the kernel (of
    ``kernels``, the one whose file numba's message names) and the first cause, with the line
    of that file numba points at. The caller raises it ``from e``: ``--debug`` prints numba's
    whole message."""
    import inspect
    import os
    import re

    text = str(e)
    cause = first_cause(text) or type(e).__name__
    named = []
    for k in kernels:
        try:
            path = inspect.getsourcefile(k.py_func) or ""
        except (TypeError, AttributeError):
            path = ""
        base = os.path.basename(path)
        lines = [int(m.group(2)) for m in re.finditer(r'File "([^"]+)", line (\d+)', text)
                 if base and os.path.basename(m.group(1)) == base]
        lines += [int(m.group(2)) for m in re.finditer(r"typing of [^\n]* at (\S+) \((\d+)\)",
                                                       text)
                  if base and os.path.basename(m.group(1)) == base]
        if lines or base and base in text:
            named.append(f"{kernel_where(k)}" + (f" ({base}, line {lines[0]})" if lines else ""))
    what = "kernel " + (", ".join(named) if named else
                        ", ".join(kernel_where(k) for k in kernels) or "?")
    return ConfigError(f"compiled plug-in {names} does not compile: {what}: {cause} "
                       f"(--debug prints numba's whole message)")


def begin_kernel_deal(strategy: Any, seat: int, seed: int, deal: int) -> None:
    """``begin_deal`` of a compiled plug-in asked from Python: the deal's identity and the
    seat's own random streams, which ``choose_with_kernel`` restores and advances."""
    strategy._deal_id = (seed, deal)
    strategy._streams = [[int(stream_key(np.uint64(seed), np.uint64(deal), np.uint64(s))), 0]
                         for s in (STREAM_SEAT0 + seat, STREAM_STRATEGY0 + seat)]


def choose_with_kernel(strategy: Any, obs: Any, legal_choices: list) -> Any:
    """``choose`` of a compiled plug-in from an observation: its kernel on the masked state,
    with its own random streams restored (as ``strategies.tier.CompiledStrategy``), on its
    own copies of the rules and parameters, exactly as the generated deal loops call it."""
    from numba.core.errors import NumbaError

    cache = getattr(strategy, "_plugin_cache", None)
    if cache is None:
        m_st = np.zeros(S.ST_SIZE, dtype=np.int64)
        m_st[S.S_DECK:] = -1  # the deck and fixed cards: never shown
        cache = strategy._plugin_cache = (
            fresh_kernel(plugin_kernel(type(strategy))), np.zeros(INT_SCRATCH, dtype=np.int64),
            param_table([checked_params(strategy)] * 4), m_st,
            np.zeros(S.U_SIZE, dtype=np.uint64), np.zeros(PLUGIN_SCRATCH, dtype=np.int64))
    k, buf, params, m_st, m_u, pbuf = cache
    st, u = (a.copy() for a in obs.arrays())
    s = obs.seat
    streams = getattr(strategy, "_streams", None)
    if streams is not None:
        for slot, (key, ctr) in zip((S.STREAM_SEAT + s, S.STREAM_SAMPLE + s), streams):
            u[S.U_KEY + slot] = key
            u[S.U_CTR + slot] = ctr
    seed, deal = getattr(strategy, "_deal_id", (0, 0))
    mask_into(st, u, s, m_st, m_u)
    try:
        code = int(k(m_st, m_u, obs.rules.array().copy(), s, params[s].copy(), pbuf))
    except NumbaError as e:
        raise compile_error(strategy.name, e, [plugin_kernel(type(strategy))]) from e
    except Exception as e:  # noqa: BLE001 - anything a kernel raises is reported
        raise kernel_error(strategy.spec(), s, int(seed), int(deal), e=e) from None
    unmask_streams(u, m_u, s)
    if not is_legal(st, u, code):
        raise kernel_error(strategy.spec(), s, int(seed), int(deal), code=code)
    if streams is not None:
        for i, slot in enumerate((S.STREAM_SEAT + s, S.STREAM_SAMPLE + s)):
            streams[i][1] = int(u[S.U_CTR + slot])
    m_st_, m_u_ = obs.arrays()
    n = legal(m_st_, m_u_, buf)
    codes = buf[:n].tolist()
    if m_st_[S.S_PHASE] == S.CALL:
        return None if code < 0 else legal_choices[1 + codes.index(code)]
    return legal_choices[codes.index(code)]
