"""Tournament reports: the summary's tables (``sim.analysis.summary``) as markdown, plots and
a self-contained HTML page, written into a results folder.

Input is the plain *state* of a run (``sim.tournament.chunks.Aggregate.state`` or
``sim.tournament.results.load_state``): the resolved config, the players and, per matchup, the
serialised ``sim.analysis.stats`` accumulators. Nothing here plays a deal or imports the engine, so
``shuangkou report results/NAME`` re-renders everything from stored results.

Outputs in the results folder:

- ``summary.json``: the state plus every derived figure (``derive``), strict JSON (NaN and
  infinities written as null);
- ``summary.md``: the tables (``tables``), also printed at the end of a run;
- ``plots/*.png``: attacker-score histogram per matchup, settlement distribution per player,
  rating chart;
- ``report.html``: tables and plots in one file (images embedded as base64).

Conventions: a *pair* is one duplicate pair of deals (or one deal without duplicate) and its
result ``x`` is side A's mean settlement per deal per player; every "mean settlement" is per
deal per player, with a 95% confidence interval over pairs. Win/draw/loss count pairs by the
sign of ``x``.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sim.analysis.stats.histogram import Histogram
from sim.analysis.summary import (
    ORACLE_MARK,
    SPRT_BIAS_NOTE,
    Table,
    derive,
    player_name,
    sprt_verdict,
    tally_of,
    verdict,
)
from sim.analysis.tables import ZERO_MARK, tables
from sim.errors import OutputError
from sim.titles import GLOSS

FOLD_ROWS = 12  # report.html folds tables longer than this (<details>)


# --- derived figures ----------------------------------------------------------------------


# --- tables -------------------------------------------------------------------------------


def _md_table(t: Table) -> str:
    title, header, rows, note = t
    lines = [f"## {title}", "", "| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if note:
        lines += ["", f"_{note}_"]
    return "\n".join(lines)


def _headline(summary: Mapping[str, Any]) -> list[str]:
    cfg = summary["config"]
    k = len(summary["players"])
    deals = cfg["deals"]
    run = summary.get("run") or {}
    lines = []
    sp = summary.get("sprt")
    if sp:  # the verdict first: it is what an SPRT run is for
        lines.append(f"**SPRT: {sprt_verdict(sp)}** (mean settlement per deal per player of "
                     f"A; per-pair results)")
    lines.append(f"**{verdict(summary)}**")  # the run in one line
    if sp and sp["state"] != "continue":
        lines.append(SPRT_BIAS_NOTE)
    lines += [(f"format {cfg['format']}, {k} players, {len(summary['matchups'])} matchup(s), "
             f"{deals:,} deals per matchup from deal {cfg['first_deal']} of seed {cfg['seed']}"
             f", duplicate {'on' if cfg['duplicate'] else 'off'}")]
    changed = {k: v for k, v in cfg["rules"].items() if v != _DEFAULT_RULES.get(k, v)}
    if changed:
        lines.append("rules variant: " + ", ".join(f"{k}={v}" for k, v in changed.items()))
    if not summary["complete"]:
        lines.append(f"**incomplete run**: {summary['chunks_merged']} of "
                     f"{summary['chunks_total']} chunks (finish it with --resume)")
    elif summary.get("stopped_by_sprt"):
        lines.append(f"stopped by the SPRT after {summary['chunks_merged']} of "
                     f"{summary['chunks_total']} chunks")
    if any(summary["oracle"]):
        lines.append(f"players marked{ORACLE_MARK} are oracles: they see every hand "
                     f"(analysis only)")
    if run.get("deals_per_second"):
        games = (f" ({run['games_this_session']:,} games, {_rate(run['games_per_second'])}/s)"
                 if cfg["duplicate"] else "")
        lines.append(f"this session: {run['deals_this_session']:,} deals in "
                     f"{run['wall_seconds']:.1f} s: {_rate(run['deals_per_second'])} deals/s"
                     f"{games}; {run['jobs']} job(s), backend {run['backend']}")
    return lines


def _rate(x: float) -> str:
    """A throughput with sensible precision: 123,456 or 12.3 or 0.21."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


_DEFAULT_RULES = {"max_redeals": 3, "kou_di_single": 2, "kou_di_pair": 4, "settle_step": 20,
                  "settle_unit": 2, "defender_cap": 10, "start_skill": 1600}


def markdown(summary: Mapping[str, Any]) -> str:
    """``summary.md``: headline, then every table."""
    title = f"# Tournament {summary['config']['name']}"
    parts = [title, "", *[f"- {x}" for x in _headline(summary)]]
    for t in tables(summary):
        parts += ["", _md_table(t)]
    return "\n".join(parts) + "\n"


# --- plots --------------------------------------------------------------------------------
def preload_plotting() -> None:
    """Import matplotlib's figure and Agg modules (about 0.4 s of CPU) on a daemon thread, so
    that a run that plays its deals in this process (compiled loops release the GIL) has them
    by the time it draws its plots: on a machine with a second core the import costs the
    run's clock nothing. Does nothing once they are imported; an import error is left for
    the plots to raise."""
    import sys
    import threading

    if "matplotlib.backends.backend_agg" in sys.modules:
        return

    def load() -> None:
        try:
            import matplotlib.backends.backend_agg  # noqa: F401
            import matplotlib.figure  # noqa: F401
        except Exception:  # noqa: BLE001 - the plots import them again and say why
            pass

    threading.Thread(target=load, name="shuangkou-preload-plots", daemon=True).start()


def _figure(height: float, fixed: bool = True) -> tuple[Any, Any]:
    """A new 8-inch-wide figure (100 dpi) and its one axes, drawn by Agg (files only, no
    display; pyplot, its figure manager and its backend switching are not imported).

    ``fixed``: margins set in inches, room for a one-line title, axis labels and numeric tick
    labels, which is what the score and settlement plots have; the constrained layout, which
    measures every text in extra draws (a third of a plot's time), only where the tick
    labels are user text of any length (the ratings' player names)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, height), dpi=100, layout=None if fixed else "constrained")
    FigureCanvasAgg(fig)
    if fixed:
        fig.subplots_adjust(left=0.78 / 8, right=1 - 0.25 / 8, bottom=0.5 / height,
                            top=1 - 0.3 / height)
    return fig, fig.add_subplot()


def _text(s: str) -> str:
    """User text (strategy specs, plug-in names) for a plot: every ``$`` escaped, so that it
    prints as typed instead of starting a formula (mathtext itself stays on: matplotlib's own
    log-scale tick labels, ``$\\mathdefault{10^{-1}}$``, need it); and, where no installed
    font has CJK ideographs, an R25 title as its English gloss and any other such character as
    its code point (``U+4E2D``), never a box (``_png`` gives the text the CJK font if one is
    found)."""
    s = str(s).replace("$", r"\$")
    if _has_cjk(s) and cjk_font() is None:
        for title in sorted(GLOSS, key=len, reverse=True):  # 博士导师 before 博士
            s = s.replace(title, GLOSS[title])
        s = "".join(f"U+{ord(c):04X}" if _is_cjk(c) else c for c in s)
    return s


def _is_cjk(c: str) -> bool:
    """A character of the CJK blocks (radicals to compatibility ideographs, full-width forms,
    the supplementary ideographs), which the fonts matplotlib ships do not have."""
    o = ord(c)
    return 0x2E80 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF \
        or 0x20000 <= o <= 0x3FFFF


def _has_cjk(s: str) -> bool:
    return any(_is_cjk(c) for c in s)


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The family name of an installed font with every character of the R25 titles, or None;
    looked up once per process, and only when a plot has such text (reading every font's
    character map takes about a second)."""
    from matplotlib import font_manager, ft2font

    need = {ord(c) for t in GLOSS for c in t}
    hint = re.compile(r"CJK|Han|Hei|Song|Ming|Kai|Gothic|WenQuanYi|Droid Sans Fallback|"
                      r"AR PL|YaHei|PingFang|Hiragino", re.I)
    fonts = sorted(font_manager.fontManager.ttflist, key=lambda f: not hint.search(f.name))
    for f in fonts:
        if "last resort" in f.name.lower():  # (matplotlib's: a box for every character)
            continue
        try:
            if need <= set(ft2font.FT2Font(f.fname).get_charmap()):
                return str(f.name)
        except (OSError, RuntimeError, ValueError):  # a font file FreeType cannot read
            continue
    return None


def plot_scores(summary: Mapping[str, Any], m: int) -> bytes:
    """PNG: matchup ``m``'s attacker-score histograms, one per attacking side, side by side
    (each side's bar is its share of the deals it attacked)."""
    mm = summary["matchups"][m]
    t = tally_of(summary["tallies"][m])
    fig, ax = _figure(4)
    nz = np.flatnonzero(t["score"].counts)
    lo, hi = (nz[0], nz[-1] + 1) if nz.size else (0, 1)
    width = t["score"].width
    left = t["score"].edges[lo:hi]
    top = 1e-9
    for k, (s, color) in enumerate((("A", "#3b75af"), ("B", "#ef8636"))):
        h = t[f"{s}.att_score"]
        share = h.counts[lo:hi] / max(1, h.n)
        top = max(top, float(share.max(initial=0.0)))
        # scores are multiples of the bin width: A's bar just left of the score, B's right
        ax.bar(left + (k - 0.5) * 0.4 * width, share, width=0.4 * width, color=color,
               label=_text(f"{s} attacks: {summary['players'][mm['a' if s == 'A' else 'b']]} "
                           f"({h.n:,} deals)"))
    ax.set_xlim(left[0] - width, left[-1] + width)
    ax.set_ylim(0, top * 1.08)
    for x, lab in ((80, "80"), (120, "120")):
        ax.axvline(x, color="grey", ls="--", lw=0.8)
        ax.text(x, ax.get_ylim()[1] * 0.95, lab, ha="center", va="top", fontsize=8,
                color="grey")
    ax.set_xlabel("attacker score (5-point bins)")
    ax.set_ylabel("share of the side's attacking deals")
    ax.set_title(_text(f"Attacker score: {mm['label']} ({t['score'].n:,} non-void deals)"),
                 fontsize=10)
    ax.legend(fontsize=8)
    return _png(fig)


def plot_settlement(summary: Mapping[str, Any]) -> bytes:
    """PNG: each player's distribution of settlement per deal per player. Settlements are a
    few discrete values (multiples of the R24 unit): one bar per player at each value, side
    by side, on a log scale (the tails are rare)."""
    fig, ax = _figure(4)
    per_player: list[Histogram | None] = [None] * len(summary["players"])
    for m, raw in zip(summary["matchups"], summary["tallies"]):
        t = tally_of(raw)
        for s, i in (("A", m["a"]), ("B", m["b"])):
            h = t[f"{s}.settle"]
            per_player[i] = h if per_player[i] is None else per_player[i].merge(h)
    shown = [(i, h) for i, h in enumerate(per_player) if h is not None and h.n]
    values = np.unique(np.concatenate([h.edges[np.flatnonzero(h.counts)] for _, h in shown])
                       if shown else np.zeros(0))
    # the spacing of the values (the unit): every player's bars share it
    gap = int(np.gcd.reduce(np.diff(values).astype(np.int64))) if values.size > 1 else 1
    width = 0.8 * gap / max(1, len(shown))
    for k, (i, h) in enumerate(shown):
        nz = np.flatnonzero(h.counts)
        x, y = h.edges[nz], h.counts[nz] / h.n
        ax.bar(x + (k - (len(shown) - 1) / 2) * width, y, width=width,
               label=_text(player_name(summary["players"][i], summary["oracle"][i])))
    if values.size:
        ax.set_xlim(values[0] - gap, values[-1] + gap)
    ax.set_yscale("log")
    ax.set_xlabel("settlement of one deal, per player (R24)")
    ax.set_ylabel("share of deals (log scale)")
    ax.set_title("Settlement distribution", fontsize=10)
    if shown:
        ax.legend(fontsize=8)
    return _png(fig)


def plot_ratings(summary: Mapping[str, Any]) -> bytes:
    """PNG: every player's Elo with 95% CI, in every format (Bradley-Terry on pairs won,
    centred on the field's mean; for a head-to-head, half the Elo difference of the score)."""
    players = [player_name(p, o) for p, o in zip(summary["players"], summary["oracle"])]
    nan = (math.nan, math.nan, math.nan)
    vals = ([(r["elo"], r["lo"], r["hi"]) for r in summary["ratings"]]
            if summary.get("ratings") else [nan for _ in players])
    xlabel = "Elo (Bradley-Terry on pairs won, centred on the field's mean), 95% CI"
    order = sorted(range(len(vals)), key=lambda i: _nan0(vals[i][0]))
    fig, ax = _figure(0.6 * len(vals) + 1.2, fixed=False)
    ys = np.arange(len(order))
    means = np.array([_nan0(vals[i][0]) for i in order])
    err = np.array([[max(0.0, _nan0(vals[i][0] - vals[i][1])) for i in order],
                    [max(0.0, _nan0(vals[i][2] - vals[i][0])) for i in order]])
    ax.barh(ys, means, xerr=err, color=["#999" if summary["oracle"][i] else "#3b75af"
                                       for i in order], capsize=4)
    ax.set_yticks(ys, [_text(players[i]) for i in order], fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title("Ratings (Elo)", fontsize=10)
    return _png(fig)


def _nan0(x: float) -> float:
    return 0.0 if x is None or not math.isfinite(x) else float(x)


def _png(fig: Any) -> bytes:
    from matplotlib.text import Text

    cjk = [t for t in fig.findobj(Text) if _has_cjk(t.get_text())]
    if cjk and cjk_font():  # (else _text spelled such characters out)
        for t in cjk:  # a fallback family: matplotlib takes each glyph from the first with it
            t.set_fontfamily([*t.get_fontfamily(), cjk_font()])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")  # one draw (no "tight" box)
    return buf.getvalue()


def render_plots(summary: Mapping[str, Any]) -> dict[str, bytes]:
    """Every plot as ``{file name: PNG bytes}``."""
    out = {f"scores_m{m['index']}.png": plot_scores(summary, i)
           for i, m in enumerate(summary["matchups"])}
    out["settlement.png"] = plot_settlement(summary)
    if len(summary["matchups"]) > 1:  # a head-to-head's would be ± half its Elo A−B
        out["ratings.png"] = plot_ratings(summary)
    return out


# --- HTML ---------------------------------------------------------------------------------
_CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:75em;color:#222}
table{border-collapse:collapse;margin:.5em 0 .3em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child,td.w{text-align:left}
.note{color:#666;font-size:.8em;margin:0 0 1.5em}img{max-width:100%;margin:.5em 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(34em,1fr));gap:0 1em}
li strong{font-size:1.15em}
.nocjk .r25 .zh,.nocjk .r25 .zp{display:none}
"""

# Where no font has the R25 titles' characters the browser draws boxes ("tofu"): a script
# draws each title character on a canvas, and when one comes out as the box a character no
# font has (U+0378, unassigned) comes out as, or two different characters as the same picture,
# marks the page ``nocjk``, which shows the titles as their English gloss alone, as the plots
# do (``_text``). Without scripts the page shows both, as before.
_NOCJK_JS = """(function(){var t=document.querySelectorAll('.r25 .zh');if(!t.length)return;
var c=document.createElement('canvas');c.width=c.height=48;var x=c.getContext('2d');if(!x)return;
var f='32px '+getComputedStyle(t[0]).fontFamily;
function px(s){x.clearRect(0,0,48,48);x.font=f;x.textBaseline='top';x.fillText(s,4,4);
return Array.prototype.join.call(x.getImageData(0,0,48,48).data,'');}
var box=px('\u0378'),seen={},chars={};
for(var i=0;i<t.length;i++){var s=t[i].textContent.trim();
for(var j=0;j<s.length;j++)chars[s[j]]=1;}
for(var ch in chars){var p=px(ch);
if(p===box||seen[p]){document.documentElement.classList.add('nocjk');return;}
seen[p]=1;}})();"""


@functools.lru_cache(maxsize=1)
def _r25_pattern() -> re.Pattern[str]:
    titles = sorted(GLOSS, key=len, reverse=True)  # 博士导师 before 博士
    return re.compile("|".join(re.escape(html.escape(f"{t} ({GLOSS[t]})")) for t in titles))


def _r25(text: str) -> str:
    """Escaped page text with each R25 title written ``TITLE (GLOSS)`` marked up, so that the
    page can show the gloss alone where the title's characters have no font (``_NOCJK_JS``)."""
    def mark(m: re.Match[str]) -> str:
        title, _, gloss = m.group(0).partition(" (")
        return (f"<span class='r25'><span class='zh' lang='zh-Hans'>{title} </span>"
                f"<span class='zp'>(</span>{gloss[:-1]}<span class='zp'>)</span></span>")

    return _r25_pattern().sub(mark, text) if "(" in text else text


_FIGURE = re.compile(r"[-+−<>·–]?\s?[\d.]")  # a cell that is a number, an interval, a bound


def _td(c: str) -> str:
    """A table cell: figures right-aligned, words (names, labels) left-aligned."""
    return f"<td>{_r25(html.escape(c))}</td>" if _FIGURE.match(c) or c in "·–" else \
        f"<td class='w'>{_r25(html.escape(c))}</td>"


class _Html(str):
    """A table cell already written as HTML (``<td>…</td>``)."""

    @property
    def html(self) -> str:
        return str(self)


def _view_link(deal: str, view: str | None) -> str:
    """The deal number of a swing deal, linked to its pair in ``swings.html`` when it is there
    (a relative address: the page lies next to report.html)."""
    if not view:
        return deal
    return _Html(f"<td><a href='{html.escape(view, quote=True)}'>{html.escape(deal)}</a></td>")


def _heat(cell: str) -> Any:
    """A compatibility cell as a heat-map cell: red below 0, blue above, by size (±1 point a
    deal full colour); an interval holding 0 (``ZERO_MARK``) is hatched grey."""
    m = re.match(r"([+\-−]?\d+\.\d+)", cell)
    if not m:
        return cell
    v = float(m.group(1).replace("−", "-"))
    if ZERO_MARK in cell:
        style = "background:repeating-linear-gradient(45deg,#eee,#eee 4px,#fff 4px,#fff 8px)"
        cls = "heat zero"
    else:
        a = min(1.0, abs(v)) * 0.6 + 0.1
        rgb = "33,102,172" if v > 0 else "178,24,43"
        style = f"background:rgba({rgb},{a:.2f})"
        cls = "heat"
    return _Html(f"<td class='{cls}' style='{style}'>{html.escape(cell)}</td>")


def _bold(x: str) -> str:
    """Markdown's ``**x**`` as ``<strong>`` (``x`` already escaped)."""
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", x)


def to_html(summary: Mapping[str, Any], images: Mapping[str, bytes]) -> str:
    """A self-contained page: headline, every table and every plot (base64 PNG)."""
    e = html.escape
    name = e(summary["config"]["name"])
    parts = [(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Tournament {name}"
             f"</title><style>{_CSS}</style></head><body><h1>Tournament {name}</h1><ul>")]
    parts += [f"<li>{_r25(_bold(e(x)))}</li>" for x in _headline(summary)]
    parts.append("</ul>")
    for title, header, rows, note in tables(summary):
        fold = len(rows) > FOLD_ROWS  # long tables start folded
        parts.append(f"<h2>{e(title)}</h2>"
                     + (f"<details><summary>{len(rows)} rows</summary>" if fold else "")
                     + "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        if title == "Partner compatibility":  # a heat map: colour by value, marked cells pale
            rows = [r[:1] + [_heat(c) for c in r[1:]] for r in rows]
        if title == "Swing deals":  # the deal links to both tables in the deal viewer
            rows = [r[:2] + [_view_link(r[2], w.get("view"))] + r[3:]
                    for r, w in zip(rows, summary["swings"])]
        parts += ["<tr>" + "".join(c.html if isinstance(c, _Html) else _td(c) for c in r)
                  + "</tr>" for r in rows]
        parts.append("</table>" + ("</details>" if fold else "")
                     + f"<p class='note'>{_r25(e(note))}</p>")
    if images:
        parts.append("<h2 id='plots'>Plots</h2>")

    def img(fname: str) -> str:
        data = base64.b64encode(images[fname]).decode("ascii")
        return f"<div><img alt='{e(fname)}' src='data:image/png;base64,{data}'></div>"

    scores = [f for f in images if f.startswith("scores_m")]
    if scores:  # one per matchup: a grid, not a column of ten
        parts.append(f"<div class='grid'>{''.join(img(f) for f in scores)}</div>")
    parts += [img(f) for f in images if f not in scores]
    parts.append(f"<script>{_NOCJK_JS}</script></body></html>")
    return "\n".join(parts)


# --- everything ---------------------------------------------------------------------------
def _strict(x: Any) -> Any:
    """JSON-safe: NaN and infinities become None, numpy scalars plain numbers."""
    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def _write(path: str, data: bytes) -> None:
    """Write ``path`` whole or not at all: through ``PATH.tmp-PID``, then ``os.replace``. A
    failure (a full disk, no permission) leaves no temporary file behind and is one line that
    names the file (``OutputError``); the file as it was stays."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise OutputError(f"cannot write {os.path.basename(path)} {path!r}: "
                          f"{e.strerror or e}") from None


def write_all(state: Mapping[str, Any], out: str, plots: bool = True,
              echo: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Write summary.json, summary.md and (with ``plots``) plots/*.png and report.html.

    Returns the summary (``derive(state)``); ``echo`` gets the markdown tables.
    """
    summary = derive(state)
    md = markdown(summary)
    _write(os.path.join(out, "summary.json"),
           (json.dumps(_strict(summary), indent=1, ensure_ascii=False) + "\n").encode())
    _write(os.path.join(out, "summary.md"), md.encode())
    images: dict[str, bytes] = {}
    if plots:
        images = render_plots(summary)
        os.makedirs(os.path.join(out, "plots"), exist_ok=True)
        for fname, png in images.items():
            _write(os.path.join(out, "plots", fname), png)
    _write(os.path.join(out, "report.html"), to_html(summary, images).encode())
    if echo is not None:
        echo(md)
    return summary
