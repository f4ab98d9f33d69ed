"""The compiled core (layers L0-L1, internal): notation tables, random streams, the jit
decorator and the kernels of the engine (state, move generation, tricks, scoring).

Nothing is imported here: ``import sim.core.tables`` loads no numba (tests/test_layers.py).
"""
