"""The ladder's rating list as a person or a program reads it: text (``show_text``), JSON
(``show_json``) and an HTML page (``show_html``), from a ``LadderFit``.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np

from sim.analysis.ladder.model import ABOVE, BELOW, RATED, UNRATED, LadderData, LadderFit

NAME_WIDTH = 28  # a longer spec is shown abbreviated in the text tables, with a legend
SVG_NAME = 40  # characters of a spec the HTML page's ranking plot draws (all: its tooltip)


def _fmt(x: float) -> str:
    return f"{x:+.0f}" if math.isfinite(x) else "nan"


def rating_text(fit: LadderFit, i: int) -> str:
    """``+123 [+110, +136]``, ``0 (anchor)``, ``> +812``, ``< -640`` or ``unrated``."""
    st = fit.status[i]
    if st == ABOVE:
        return f"> {_fmt(fit.lo[i])}"
    if st == BELOW:
        return f"< {_fmt(fit.hi[i])}"
    if st == UNRATED:
        return "unrated"
    if fit.anchor is not None and fit.names[i] == fit.anchor:
        return f"{_fmt(fit.anchor_elo) if fit.anchor_elo else '0'} (anchor)"
    return f"{_fmt(fit.rating[i])} [{_fmt(fit.lo[i])}, {_fmt(fit.hi[i])}]"


def next_gap(fit: LadderFit, order: list[int], n: int) -> tuple[float, float, float] | None:
    """The rating difference of the player ranked ``n`` (0-based in ``order``) over the next
    one, with its 95% interval; None unless both are rated."""
    if n + 1 >= len(order):
        return None
    d = fit.diff(order[n], order[n + 1])
    return d if math.isfinite(d[0]) else None


def _gap_text(g: tuple[float, float, float] | None) -> str:
    return "-" if g is None else f"{_fmt(g[0])} [{_fmt(g[1])}, {_fmt(g[2])}]"


def gof_text(fit: LadderFit) -> str:
    g = fit.gof
    if not g.get("df"):
        return ("goodness of fit: not testable (as many ratings as matchups played between "
                "the rated players)")
    return (f"goodness of fit: chi-square {g['chi2']:.1f} on {g['df']} df ({g['method']}, "
            f"{g['clusters']:,} deals), p = {g['p']:.3g}")


def _anchor_text(fit: LadderFit) -> str:
    at = _fmt(fit.anchor_elo) if fit.anchor_elo else "0"
    if fit.anchor is not None:
        return f"Elo with {fit.anchor} held at {at}"
    why = (f" ({fit.anchor_asked} is not rated yet, so it cannot be the anchor)"
           if fit.anchor_asked is not None else "")
    return f"Elo with the mean of the rated players at {at}{why}"


def short_names(names: list[str], order: list[int], width: int = NAME_WIDTH
                ) -> tuple[dict[int, str], list[str]]:
    """Each player's name as the text tables show it, and the legend: a spec longer than
    ``width`` is cut to ``width`` characters ending ``…[k]`` (k numbers the long ones in
    ranking order) and the legend line ``[k] SPEC`` gives it whole."""
    out, legend = {}, []
    for i in order:
        name = names[i]
        if len(name) <= width:
            out[i] = name
            continue
        tag = f"…[{len(legend) + 1}]"
        out[i] = name[:width - len(tag)] + tag
        legend.append(f"  [{len(legend) + 1}] {name}")
    return out, legend


def show_text(data: LadderData, fit: LadderFit) -> str:
    """The rating list as plain text: the ranking, the W-D-L crosstable, the fit line."""
    order = fit.order()
    rank = {i: n + 1 for n, i in enumerate(order)}
    pct = round(100 * fit.conf)
    head = ["rank", "player", f"Elo [{pct}%]", "over next", "pairs", "W-D-L", "margin",
            "crash/timeout/illegal", "last pair"]
    rows = []
    inc = np.asarray(data.incidents)
    short, legend = short_names(fit.names, order)
    for n, i in enumerate(order):
        w, d, lo_ = (int(x) for x in fit.wdl[i])
        mg = fit.margin[i]
        rows.append([str(rank[i]), short[i], rating_text(fit, i),
                     _gap_text(next_gap(fit, order, n)), f"{int(fit.pairs[i]):,}",
                     f"{w}-{d}-{lo_}", f"{mg:+.3f}" if math.isfinite(mg) else "-",
                     "/".join(str(int(x)) for x in inc[i]), data.last_time[i] or "-"])
    lines = [f"ladder: {len(order)} players, {int(fit.pairs.sum() // 2):,} pairs; "
             f"{_anchor_text(fit)}; {pct}% intervals clustered by deal", ""]
    lines += _table(head, rows, right={0, 4, 6})
    if legend:
        lines += ["", "players shown abbreviated:", *legend]
    if len(order) >= 2:
        lines += ["", "W-D-L of pairs, row against column (columns by rank):"]
        chead = ["", "player"] + [str(rank[j]) for j in order]
        crow = []
        for i in order:
            cells = []
            for j in order:
                if i == j:
                    cells.append("·")
                else:
                    w, d, lo_ = (int(x) for x in fit.cross[i, j])
                    cells.append(f"{w}-{d}-{lo_}" if w + d + lo_ else "")
            crow.append([str(rank[i]), short[i]] + cells)
        lines += _table(chead, crow, right=set(range(2, len(chead))) | {0})
    lines += ["", gof_text(fit)]
    if fit.gof.get("warning"):
        lines.append("warning: " + fit.gof["warning"])
    lines.append("over next: Elo difference to the next player with its interval; margin: mean "
                 "duplicate margin per pair against the field (points per deal per player); "
                 "Elo: joint Bradley-Terry over all pairs, a draw half a win")
    return "\n".join(lines) + "\n"


def _table(head: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(h), *(len(r[c]) for r in rows)) if rows else len(h)
              for c, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(x.rjust(wd) if c in right else x.ljust(wd)
                         for c, (x, wd) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(head)] + [line(r) for r in rows]


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def show_json(data: LadderData, fit: LadderFit) -> dict[str, Any]:
    """The rating list as JSON-able data (keys in docs/ladder.md "show --json")."""
    order = fit.order()
    inc = np.asarray(data.incidents)
    players = []
    for n, i in enumerate(order):
        w, d, lo_ = (int(x) for x in fit.wdl[i])
        gap = next_gap(fit, order, n)
        players.append({
            "rank": n + 1, "player": fit.names[i], "status": fit.status[i],
            "rating": _num(fit.rating[i]), "se": _num(fit.se[i]),
            "lo": _num(fit.lo[i]), "hi": _num(fit.hi[i]),
            "over_next": None if gap is None else {"diff": gap[0], "lo": gap[1], "hi": gap[2]},
            "pairs": int(fit.pairs[i]),
            "wins": w, "draws": d, "losses": lo_, "margin": _num(fit.margin[i]),
            "crashes": int(inc[i, 0]), "timeouts": int(inc[i, 1]), "illegal": int(inc[i, 2]),
            "last_time": data.last_time[i]})
    cross = [[None if i == j or not fit.cross[i, j].sum() else [int(x) for x in fit.cross[i, j]]
              for j in order] for i in order]
    cov = [[_num(fit.cov[i, j]) for j in order] for i in order]
    g = dict(fit.gof)
    for key in ("chi2", "p"):
        g[key] = _num(float(g.get(key, math.nan)))
    return {"model": "bradley-terry", "scale": "elo", "conf": fit.conf, "anchor": fit.anchor,
            "anchor_elo": fit.anchor_elo,
            "pairs": int(fit.pairs.sum() // 2), "clusters": fit.clusters,
            "players": players, "order": [fit.names[i] for i in order], "crosstable": cross,
            "cov": cov, "goodness_of_fit": g, "misfits": fit.misfits}


def _svg(fit: LadderFit, order: list[int]) -> str:
    """The ranking as an inline SVG: one row per player, a dot and its interval bar."""
    shown = [i for i in order if fit.status[i] != UNRATED]
    row, width, right = 26, 560, 40
    # room for the longest label ("12. spec" at font size 12: at most ~7.5 px a character)
    label = {i: fit.names[i] if len(fit.names[i]) <= SVG_NAME
             else fit.names[i][:SVG_NAME - 1] + "…" for i in shown}  # whole in the tooltip
    left = max(230, 16 + round(7.5 * max((len(f"{len(shown)}. {label[i]}") for i in shown),
                                         default=0)))
    height = row * max(len(shown), 1) + 50
    vals = [v for i in shown for v in (fit.lo[i], fit.hi[i], fit.rating[i]) if math.isfinite(v)]
    lo_v, hi_v = (min(vals), max(vals)) if vals else (-100.0, 100.0)
    if hi_v - lo_v < 1.0:
        lo_v, hi_v = lo_v - 50.0, hi_v + 50.0
    pad = 0.06 * (hi_v - lo_v)
    lo_v, hi_v = lo_v - pad, hi_v + pad

    def xpos(v: float) -> float:
        return left + width * (v - lo_v) / (hi_v - lo_v)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="ranking" width="{left + width + right}"'
           f' height="{height}" role="img" aria-label="ratings with {round(100 * fit.conf)}% '
           f'intervals">']
    step = 10 ** math.floor(math.log10(max((hi_v - lo_v) / 5.0, 1e-9)))
    for mult in (1, 2, 5, 10):
        if (hi_v - lo_v) / (step * mult) <= 8:
            step *= mult
            break
    t = math.ceil(lo_v / step) * step
    while t <= hi_v:
        x = xpos(t)
        out.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 24}" '
                   f'stroke="#ddd"/><text x="{x:.1f}" y="{height - 8}" font-size="11" '
                   f'text-anchor="middle">{_fmt(t) if t else "0"}</text>')
        t += step
    for n, i in enumerate(shown):
        y = 30 + n * row
        name = html.escape(fit.names[i])
        out.append(f'<text x="{left - 8}" y="{y + 4}" font-size="12" text-anchor="end">'
                   f'<title>{name}</title>{n + 1}. {html.escape(label[i])}</text>')
        lo_i = fit.lo[i] if math.isfinite(fit.lo[i]) else lo_v
        hi_i = fit.hi[i] if math.isfinite(fit.hi[i]) else hi_v
        cls = "bar" if fit.status[i] == RATED else "bound"
        out.append(f'<line class="{cls}" x1="{xpos(lo_i):.1f}" y1="{y}" x2="{xpos(hi_i):.1f}" '
                   f'y2="{y}" stroke="#2b6cb0" stroke-width="3"'
                   + (' stroke-dasharray="4 3"' if cls == "bound" else "") + '/>')
        if fit.status[i] == RATED:
            out.append(f'<circle cx="{xpos(fit.rating[i]):.1f}" cy="{y}" r="4" fill="#1a365d">'
                       f'<title>{name}: {html.escape(rating_text(fit, i))}</title></circle>')
    out.append("</svg>")
    return "".join(out)


def show_html(data: LadderData, fit: LadderFit) -> str:
    """A self-contained HTML page (no external resources): the ranking plot, the tables."""
    order = fit.order()
    rank = {i: n + 1 for n, i in enumerate(order)}
    inc = np.asarray(data.incidents)
    esc = html.escape
    pct = round(100 * fit.conf)
    rows = []
    for n, i in enumerate(order):
        w, d, lo_ = (int(x) for x in fit.wdl[i])
        mg = fit.margin[i]
        rows.append(f'<tr><td>{rank[i]}</td><td class="player">{esc(fit.names[i])}</td>'
                    + "".join(f"<td>{esc(str(c))}</td>" for c in (
                        rating_text(fit, i), _gap_text(next_gap(fit, order, n)),
                        f"{int(fit.pairs[i]):,}",
                        f"{w}-{d}-{lo_}", f"{mg:+.3f}" if math.isfinite(mg) else "-",
                        "/".join(str(int(x)) for x in inc[i]), data.last_time[i] or "-"))
                    + "</tr>")
    cross = []
    for i in order:
        cells = []
        for j in order:
            if i == j:
                cells.append("<td>·</td>")
            else:
                w, d, lo_ = (int(x) for x in fit.cross[i, j])
                cells.append(f"<td>{w}-{d}-{lo_}</td>" if w + d + lo_ else "<td></td>")
        cross.append(f'<tr><th class="player">{rank[i]}. {esc(fit.names[i])}</th>'
                     f"{''.join(cells)}</tr>")
    warn = (f'<p class="warning">warning: {esc(fit.gof["warning"])}</p>'
            if fit.gof.get("warning") else "")
    mis = ""
    if fit.misfits:
        mis = ("<h2>Matchups furthest from the ratings</h2><table><tr><th>A</th><th>B</th>"
               "<th>pairs</th><th>A's score</th><th>expected</th><th>z</th></tr>"
               + "".join(f'<tr><td class="player">{esc(x["player_a"])}</td>'
                         f'<td class="player">{esc(x["player_b"])}</td>'
                         f"<td>{x['pairs']:,}</td><td>{x['observed']:.3f}</td>"
                         f"<td>{x['expected']:.3f}</td><td>{x['z']:+.1f}</td></tr>"
                         for x in fit.misfits) + "</table>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Ladder</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }}
td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; white-space: nowrap; }}
td:nth-child(2), th:first-child {{ text-align: left; }}
/* a long spec wraps inside its cell (at its commas, else anywhere) instead of widening the
   table past the window or being cut */
.player {{ white-space: normal; overflow-wrap: anywhere; text-align: left; min-width: 10em;
           max-width: 22em; }}
.warning {{ color: #9b2c2c; font-weight: bold; }}
</style></head><body>
<h1>Ladder</h1>
<p>{len(order)} players, {int(fit.pairs.sum() // 2):,} duplicate pairs; {esc(_anchor_text(fit))};
{pct}% intervals clustered by deal.</p>
{_svg(fit, order)}
<h2>Ranking</h2>
<table id="ratings"><tr><th>rank</th><th>player</th><th>Elo [{pct}%]</th><th>over next</th>
<th>pairs</th>
<th>W-D-L</th><th>margin</th><th>crash/timeout/illegal</th><th>last pair</th></tr>
{''.join(rows)}</table>
<h2>Crosstable (W-D-L of pairs, row against column)</h2>
<table id="crosstable"><tr><th></th>{''.join(f'<th>{rank[j]}</th>' for j in order)}</tr>
{''.join(cross)}</table>
<p id="gof">{esc(gof_text(fit))}</p>{warn}{mis}
</body></html>
"""
