"""The R25 skill titles: a plain table, importable without numpy or numba
(``sim.analysis.report``)."""

from __future__ import annotations

from numbers import Real

LEVELS: tuple[tuple[int, str], ...] = (
    (80000, "宗师"), (51200, "大师"), (34000, "博士导师"), (22600, "教授"), (15000, "副教授"),
    (9800, "讲师"), (6400, "博士后"), (4200, "博士"), (2600, "研究生"), (1600, "本科生"),
    (960, "大专生"), (500, "高中生"), (200, "初中生"), (0, "小学生"),
)


def level(skill: int | float) -> str:
    """The R25 title of a skill value: ``level(1600) == '本科生'``, below 0 is ``'幼儿园'``."""
    if isinstance(skill, bool) or not isinstance(skill, Real):  # numpy numbers are Real too
        raise ValueError(f"skill value {skill!r} must be a number")
    for threshold, title in LEVELS:
        if skill >= threshold:
            return title
    return "幼儿园"
