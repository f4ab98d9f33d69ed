"""The R25 skill titles: a plain table, importable without numpy or numba
(``sim.analysis.report``), with the English gloss every text shows beside a title."""

from __future__ import annotations

from numbers import Real

from sim.errors import RulesError

LEVELS: tuple[tuple[int, str], ...] = (
    (80000, "宗师"), (51200, "大师"), (34000, "博士导师"), (22600, "教授"), (15000, "副教授"),
    (9800, "讲师"), (6400, "博士后"), (4200, "博士"), (2600, "研究生"), (1600, "本科生"),
    (960, "大专生"), (500, "高中生"), (200, "初中生"), (0, "小学生"),
)


BOTTOM = "幼儿园"  # below 0


# The English gloss of each title (the school and university ranks they name), shown beside the
# title wherever one is printed: ``titled('本科生') == '本科生 (undergraduate)'``.
GLOSS: dict[str, str] = {
    "宗师": "grandmaster", "大师": "master", "博士导师": "doctoral supervisor",
    "教授": "professor", "副教授": "associate professor", "讲师": "lecturer",
    "博士后": "postdoc", "博士": "PhD", "研究生": "graduate student",
    "本科生": "undergraduate", "大专生": "junior-college student",
    "高中生": "high-school student", "初中生": "middle-school student",
    "小学生": "primary-school pupil", BOTTOM: "kindergartner",
}


def level(skill: int | float) -> str:
    """The R25 title of a skill value: ``level(1600) == '本科生'``, below 0 is ``'幼儿园'``."""
    if isinstance(skill, bool) or not isinstance(skill, Real) or skill != skill:  # NaN
        # (numpy numbers are Real too)
        raise RulesError(f"skill value {skill!r} must be a number, not NaN (R25)")
    for threshold, title in LEVELS:
        if skill >= threshold:
            return title
    return BOTTOM


def gloss(title: str) -> str:
    """The English gloss of an R25 title: ``gloss('本科生') == 'undergraduate'``."""
    try:
        return GLOSS[title]
    except KeyError:
        raise RulesError(f"{title!r} is not an R25 title (one of {', '.join(GLOSS)})") from None


def titled(title: str) -> str:
    """A title with its gloss, as every text shows it: ``'本科生 (undergraduate)'``."""
    return f"{title} ({gloss(title)})"


def level_text(skill: int | float) -> str:
    """``titled(level(skill))``: ``level_text(1600) == '本科生 (undergraduate)'``."""
    return titled(level(skill))


def ranges() -> list[tuple[str, float, float]]:
    """``(title, lo, hi)`` from the lowest title up: the title of the skill values in
    ``[lo, hi)`` (``-inf`` and ``inf`` at the ends)."""
    out, hi = [], float("inf")
    for threshold, title in LEVELS:
        out.append((title, float(threshold), hi))
        hi = float(threshold)
    out.append((BOTTOM, float("-inf"), hi))
    return out[::-1]
