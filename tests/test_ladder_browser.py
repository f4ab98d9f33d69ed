"""The ladder's HTML page (sim/analysis/ladder/show.py ``show_html``) in a real headless Chromium:
it renders without errors or outside requests, the SVG ranking plot draws one interval bar per
rated player in ranking order, and the tables hold the players. Skips where no Chromium is
installed, except under CI (``CI=true``), where a missing browser fails."""

from __future__ import annotations

import json

import numpy as np
import pytest
from browser_session import Page, browser_or_skip
from ladder_sim import bt_probs, ladder, simulate

from sim.analysis import ladder as L


@pytest.fixture(scope="module")
def browser():
    return browser_or_skip()


def test_the_ladder_page_renders_its_plot_and_tables(tmp_path, browser):
    rng = np.random.default_rng(3)
    probs = bt_probs(np.array([0.0, 80.0, 150.0, 40.0]), 0.25)
    a, b, d, s2 = simulate(rng, 4, probs, {m: 300 for m in probs})
    # a fifth player that won every pair (a one-sided bound) and a sixth with no pairs
    a = np.concatenate([a, np.full(20, 4, np.int32)])
    b = np.concatenate([b, np.full(20, 2, np.int32)])
    s2 = np.concatenate([s2, np.full(20, 2, np.int8)])
    d = np.concatenate([d, np.arange(20)])
    data = ladder(6, a, b, d, s2)
    data.names = ["greedy", "random", "pimc(samples=8)", "<b>evil & co</b>", "top", "new"]
    f = L.fit(data)
    page = tmp_path / "ladder.html"
    page.write_text(L.show_html(data, f), encoding="utf-8")
    text = page.read_text(encoding="utf-8").replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "://" not in text and "<b>evil" not in text  # nothing fetched; names escaped
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        facts = json.loads(pg.js("""JSON.stringify({
            title: document.title,
            rows: Array.from(document.querySelectorAll('#ratings tr')).slice(1)
                  .map(r => r.children[1].textContent),
            cross: document.querySelectorAll('#crosstable tr').length,
            bars: Array.from(document.querySelectorAll('#ranking line.bar'))
                  .map(l => [l.x1.baseVal.value, l.x2.baseVal.value, l.y1.baseVal.value]),
            bounds: document.querySelectorAll('#ranking line.bound').length,
            dots: document.querySelectorAll('#ranking circle').length,
            svg: document.querySelector('#ranking').getBoundingClientRect().width,
            gof: document.querySelector('#gof').textContent,
            resources: performance.getEntriesByType('resource').length})"""))
        errors = pg.errors()
    assert errors == []
    assert facts["title"] == "Ladder" and facts["resources"] == 0
    order = f.order()
    assert facts["rows"] == [data.names[i] for i in order]
    assert facts["rows"][0] == "top" and facts["rows"][-1] == "new"
    assert "<b>evil & co</b>" in facts["rows"]  # escaped, shown as text
    assert facts["cross"] == 7  # header + 6 players
    # one bar and dot per rated player, top to bottom in ranking order, each bar around its dot
    rated = [i for i in order if f.status[i] == "rated"]
    assert len(facts["bars"]) == facts["dots"] == len(rated) == 4 and facts["bounds"] == 1
    ys = [bar[2] for bar in facts["bars"]]
    assert ys == sorted(ys) and all(x1 < x2 for x1, x2, _ in facts["bars"])
    widths = [x2 - x1 for x1, x2, _ in facts["bars"]]
    assert all(w > 2 for w in widths) and facts["svg"] > 500
    assert facts["gof"].startswith("goodness of fit:")


def test_long_player_names_fit_in_the_plot(tmp_path, browser):
    """Parameterised specs are long: every label of the ranking plot is drawn whole inside
    the SVG (none cut off at its left edge) and left of the interval bars."""
    rng = np.random.default_rng(4)
    probs = bt_probs(np.array([0.0, 60.0, 120.0]), 0.25)
    a, b, d, s2 = simulate(rng, 3, probs, {m: 200 for m in probs})
    data = ladder(3, a, b, d, s2)
    data.names = ["greedy", "greedy(show_at=0.25, contest_at=100, min_cards=3, draw_share=0.5)",
                  "random(show_prob=0.9)"]
    page = tmp_path / "long.html"
    page.write_text(L.show_html(data, L.fit(data)), encoding="utf-8")
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        facts = json.loads(pg.js("""JSON.stringify({
            labels: Array.from(document.querySelectorAll('#ranking text'))
                    .filter(t => t.getAttribute('text-anchor') === 'end')
                    .map(t => { const b = t.getBBox(); return [b.x, b.x + b.width]; }),
            bars: Array.from(document.querySelectorAll('#ranking line.bar'))
                  .map(l => Math.min(l.x1.baseVal.value, l.x2.baseVal.value))})"""))
    assert len(facts["labels"]) == 3
    assert all(x0 >= 0 for x0, _ in facts["labels"]), facts
    assert max(x1 for _, x1 in facts["labels"]) < min(facts["bars"])


SPEC60 = "greedy(show_at=0.25, contest_at=100, min_cards=3, draw=0.50)"


def test_a_60_character_spec_keeps_the_layout_at_1280_px(tmp_path, browser):
    """A 60-character spec in a 1280-px window: the page is no wider than the window, no
    table cell's content overflows it or overlaps its neighbour, the spec is shown whole
    (wrapped inside its cell), and the plot's labels stay inside the plot, left of its bars
    (a long one cut with the whole spec in its tooltip)."""
    assert len(SPEC60) == 60
    rng = np.random.default_rng(5)
    probs = bt_probs(np.array([0.0, 60.0, 120.0, 30.0]), 0.25)
    a, b, d, s2 = simulate(rng, 4, probs, {m: 200 for m in probs})
    data = ladder(4, a, b, d, s2)
    data.names = ["greedy", SPEC60, "random(show_prob=0.9)", "random"]
    data.last_time = ["2026-12-03T08:00:00Z"] * 4
    page = tmp_path / "wide.html"
    page.write_text(L.show_html(data, L.fit(data, anchor="random")), encoding="utf-8")
    with Page(browser, str(page), str(tmp_path / "profile"), width=1280, height=900) as pg:
        facts = json.loads(pg.js("""(() => {
            const W = window.innerWidth, out = {W: W,
                page: document.documentElement.scrollWidth, overflow: [], overlap: []};
            for (const t of document.querySelectorAll('table')) {
              for (const r of t.rows) {
                let prev = null;
                for (const c of r.cells) {
                  const b = c.getBoundingClientRect();
                  if (c.scrollWidth > c.clientWidth + 1 || b.right > W + 0.5)
                    out.overflow.push([t.id, c.textContent]);
                  if (prev && b.left < prev.right - 0.5) out.overlap.push([t.id, c.textContent]);
                  prev = b;
                }
              }
            }
            out.names = Array.from(document.querySelectorAll('#ratings td.player'))
                             .map(c => c.textContent);
            const svg = document.querySelector('#ranking').getBoundingClientRect();
            out.svg = [svg.left, svg.right];
            out.labels = Array.from(document.querySelectorAll('#ranking text'))
                .filter(t => t.getAttribute('text-anchor') === 'end')
                .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.right]; });
            out.bars = Math.min(...Array.from(document.querySelectorAll('#ranking line.bar'))
                .map(l => l.getBoundingClientRect().left));
            out.tips = Array.from(document.querySelectorAll('#ranking text title'))
                            .map(t => t.textContent);
            return JSON.stringify(out); })()"""))
        errors = pg.errors()
    assert errors == []
    assert facts["W"] == 1280 and facts["page"] <= 1280, facts
    assert facts["overflow"] == [] and facts["overlap"] == [], facts
    assert SPEC60 in facts["names"]  # whole, wrapped inside its cell
    assert facts["svg"][0] >= 0 and facts["svg"][1] <= 1280, facts
    assert all(facts["svg"][0] <= x0 and x1 < facts["bars"] for x0, x1 in facts["labels"]), facts
    assert SPEC60 in facts["tips"]
