"""Calls through a compiled function's address: each player compiled once, any set in a loop.

numba compiles a jitted function together with every jitted function it calls, so a deal
loop that called each player's kernel by name would be compiled again for every set of
players. Instead a player's kernel is compiled once, alone, for one fixed signature and
cached like any kernel (``native_address``), and the loops, compiled once, call it through
its address (``native_call``): numba's own calling convention, so arrays pass as numba
passes them and an exception raised in the player (a plug-in's ``IndexError``) reaches the
caller as from a direct call. The addresses of a process's players travel in an ``int64``
table indexed by strategy kind (``strategies.compiled.entries``); an address is valid only
in the process that took it (forked workers inherit it with the memory).

docs/architecture.md ("Compiled once") has the options measured and why this one.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import errors
from numba.extending import intrinsic

import sim.core._cache  # noqa: F401  (numba's cache folder, before numba compiles anything)

_KEEP: dict[tuple[int, Any], tuple[Any, int]] = {}  # (dispatcher id, signature) -> (it, address)


def native_address(dispatcher: Any, sig: Any) -> int:
    """The address of ``dispatcher``'s machine code for the signature ``sig`` (compiled, or
    loaded from the kernel cache, on first use). The dispatcher is kept alive with it."""
    key = (id(dispatcher), sig)
    hit = _KEEP.get(key)
    if hit is not None:
        return hit[1]
    dispatcher.compile(sig.args)
    cres = dispatcher.overloads[tuple(sig.args)]
    addr = int(cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
    _KEEP[key] = (dispatcher, addr)
    return addr


def native_call(sig: Any, name: str) -> Any:
    """An intrinsic ``call(address, args)`` that calls the function at ``address``, compiled
    for ``sig`` (``native_address``), with the tuple ``args``, which must have exactly
    ``sig``'s types (checked when the caller compiles: a mismatch is a typing error, never a
    bad call)."""
    want = tuple(sig.args)

    def call(typingctx: Any, address: Any, args: Any) -> Any:
        if not isinstance(address, types.Integer):
            raise errors.TypingError(f"{name}: the address must be an integer, not {address}")
        got = tuple(args) if isinstance(args, types.BaseTuple) else (args,)
        if got != want:
            raise errors.TypingError(f"{name}: arguments {got} are not {want}")

        def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
            fnty = context.call_conv.get_function_type(sig.return_type, list(want))
            fn = builder.inttoptr(llargs[0], fnty.as_pointer())
            values = [builder.extract_value(llargs[1], i) for i in range(len(want))]
            status, res = context.call_conv.call_function(builder, fn, sig.return_type,
                                                          list(want), values)
            with builder.if_then(status.is_error, likely=False):
                context.call_conv.return_status_propagate(builder, status)
            return res

        return sig.return_type(address, args), codegen

    call.__name__ = call.__qualname__ = name
    return intrinsic(call)
