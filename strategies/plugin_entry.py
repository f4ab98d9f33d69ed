"""A compiled plug-in's entry: its kernel compiled once, alone, called through its address.

A template (``sim.core.bind``): ``sim.loops.plugins`` loads a copy per plug-in kernel with
``plugin`` bound to it, named by a hash of the kernel's source files, and compiles ``entry``
for ``PLUGIN_SIG`` (``sim.core.calls.native_address``), cached by numba like any kernel; the
plug-in loops (``sim.loops.plugin_loop``) call it with ``call_plugin``. So a plug-in compiles
once per edit of its source, never again for the players beside it.

``entry(st, u, rules, seat, params, pbuf)``: the seat's masked state, a copy of the rules, its
parameter row and its scratch (docs/strategies.md, "Compiled bots"); the kernel's answer as an
``int64`` choice code.
"""

from __future__ import annotations

import numpy as np
from numba import types

from sim.core.bind import bindable
from sim.core.calls import native_call
from sim.core.jit import kernel

_I = types.Array(types.int64, 1, "C")
PLUGIN_SIG = types.int64(_I, types.Array(types.uint64, 1, "C"), _I, types.int64,
                         types.Array(types.float64, 1, "C"), _I)
call_plugin = native_call(PLUGIN_SIG, "call_plugin")


@kernel
def plugin(st, u, rules, seat, params, pbuf):
    """Stands in for a plug-in's kernel: passes (never called; a copy binds the kernel)."""
    return -1


bindable(globals(), "plugin")


@kernel(nogil=True)
def entry(st, u, rules, seat, params, pbuf):
    """The bound plug-in's choice code for ``seat``."""
    return np.int64(plugin(st, u, rules, seat, params, pbuf))
