"""Flat layouts, declared once: a layout is a tuple of ``(name, width)`` fields laid out back
to back; ``layout`` turns it into offsets. Plain Python (no numpy, no numba), so that every
layer can declare one (``tests/test_layers.py``).

A module that shares a flat array declares its fields in a ``*_FIELDS`` tuple and binds each
offset to a module-level int (numba freezes module-level ints as compile-time constants, so a
declared offset costs nothing at run time)::

    CTL_FIELDS = (("C_NEXT", 1), ("C_KINDS", 4))
    _CTL, N_CTL = layout(CTL_FIELDS)
    C_NEXT = _CTL["C_NEXT"]
    C_KINDS = _CTL["C_KINDS"]

``tests/test_state_layout.py`` checks every declared layout: names unique, widths positive,
fields disjoint and inside the array, each bound name equal to its computed offset.
"""

from __future__ import annotations


def layout(fields: tuple[tuple[str, int], ...], start: int = 0) -> tuple[dict[str, int], int]:
    """Offsets of ``fields`` laid out back to back from ``start``, and the offset one past the
    last field (the size when ``start`` is 0)."""
    off: dict[str, int] = {}
    at = start
    for name, size in fields:
        if name in off or not isinstance(size, int) or size < 1:
            raise ValueError(f"bad layout field {name!r} (size {size!r})")
        off[name] = at
        at += size
    return off, at
