"""What a matplotlib figure shows as text, for the report's plot tests: raw mathtext markup
(``$\\mathdefault{10^{-1}}$`` printed as typed) is a broken label.

A text is drawn as a formula when mathtext is on for it and it holds an even, non-zero number
of unescaped ``$``; otherwise it is drawn as typed (with ``\\$`` shown as ``$`` when mathtext
is on). ``shown`` mirrors that rule (matplotlib's ``Text._preprocess_math``).
"""

from __future__ import annotations

import re

MARKUP = re.compile(r"\\[A-Za-z]+|[\^_]\{")  # \mathdefault, \alpha, 10^{-1}, x_{i}


def shown(t):
    """The string ``t`` prints as typed, or None when it is drawn as a formula."""
    s = t.get_text()
    if t.get_usetex():
        return None
    if not t.get_parse_math():
        return s
    n = s.count("$") - s.count(r"\$")
    if n > 0 and n % 2 == 0:
        return None
    return s.replace(r"\$", "$")


def texts(fig):
    """Every non-empty text artist of ``fig``, after a draw (tick labels are set then)."""
    import matplotlib.text

    fig.canvas.draw()
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def raw_mathtext(fig):
    """The texts of ``fig`` that print mathtext markup as typed (each a broken label)."""
    return [s for t in texts(fig) if (s := shown(t)) is not None and MARKUP.search(s)]


def formulas(fig):
    """The texts of ``fig`` drawn as formulas (e.g. log-scale tick labels)."""
    return [t.get_text() for t in texts(fig) if shown(t) is None]


def missing_glyphs(fig):
    """``(text, character)`` for every character of ``fig``'s plain texts that none of the
    fonts matplotlib draws it with has (drawn as a box: tofu; matplotlib's Last Resort font,
    which draws every character as a box, counts as not having it)."""
    from matplotlib import font_manager, ft2font

    maps = {}

    def charmap(path):
        if path not in maps:
            font = ft2font.FT2Font(path)
            # matplotlib's Last Resort font has a box for every character: that is tofu
            last = "last resort" in font.family_name.lower()
            maps[path] = set() if last else set(font.get_charmap())
        return maps[path]

    out = []
    for t in texts(fig):
        s = shown(t)
        if s is None:
            continue
        prop = t.get_fontproperties()
        paths = font_manager.fontManager._find_fonts_by_props(prop)  # the fallback list
        have = set().union(*(charmap(str(p)) for p in paths))
        out += [(s, c) for c in s if not c.isspace() and ord(c) not in have]
    return out
