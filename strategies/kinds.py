"""The numbers the compiled deal loops dispatch on: the built-in strategy kinds and the sizes
of the scratch arrays. Plain constants (no numpy, no numba), so that every layer can read them
(``tests/test_layers.py``)."""

KIND_RANDOM = 0
KIND_GREEDY = 1
KIND_PIMC = 2
KIND_ISMCTS = 3
KIND_ORACLE = 4
KIND_EXPERT = 5
KIND_LEARNED = 6
N_BUILTIN = 7  # plug-in kernels are numbered from here (sim.loops.plugins)
MAX_PLUGINS = 4  # plug-in kernels one run can hold: one per seat
N_KINDS = N_BUILTIN + MAX_PLUGINS  # the kinds of a run's table of kernel addresses
# not a player: a seat that plays a record's choices back in the built-in deal loops
# (strategies.script); -1 is a seat without a compiled kernel
KIND_SCRIPT = -2
BUILTIN_NAMES = ("random", "greedy", "pimc", "ismcts", "oracle", "expert", "learned")  # by kind

INT_SCRATCH = 1 << 20  # int64 scratch of a built-in kernel (``buf``)
FLOAT_SCRATCH = 1 << 18  # float64 scratch (``fws``)
UINT_SCRATCH = 1 << 12  # uint64 scratch (``uws``)
PLUGIN_SCRATCH = 1 << 16  # int64 scratch of a plug-in kernel, one per seat (its ``buf``)
