"""The deal viewer (docs/viewer.md) in a real headless Chromium: load it, step through a deal
with the keyboard and the buttons, check the DOM against the record, switch views, show a
duplicate pair, take a screenshot. Skips where no Chromium is installed, except under CI
(``CI=true``), where a missing browser fails (tests/browser_session.py)."""

from __future__ import annotations

import copy
import io
import json
import os

import pytest
from browser_session import Page, browser_or_skip
from test_viewer import EVIL, fake_rows

from sim.analysis import viewer

HANDS = ("JSON.stringify(Array.from(document.querySelectorAll('.tbl')[{t}]"
         ".querySelectorAll('.hand')).map(h => Array.from(h.querySelectorAll('[data-card]'))"
         ".map(c => c.getAttribute('data-card'))))")


@pytest.fixture(scope="module")
def browser():
    return browser_or_skip()


@pytest.fixture(scope="module")
def deals():
    from sim.loops.runner import iter_records, make_seats

    a = list(iter_records(11, 3, 2, make_seats(["greedy", "random"])))
    b = next(iter_records(11, 3, 1, make_seats(["random", "greedy"])))
    return a, b


def hands(pg, t=0):
    return json.loads(pg.js(HANDS.format(t=t)))


def text(pg, sel):
    return pg.js(f"document.querySelector({sel!r}).textContent")


def left_after(rec, n):
    """Each seat's cards (sorted) after the first ``n`` plays of ``rec``."""
    left = [list(h) for h in rec["hands"]]
    k = 0
    for t in rec["tricks"]:
        for j, p in enumerate(t["plays"]):
            if k == n:
                return [sorted(h) for h in left]
            for c in p:
                left[(t["leader"] + j) % 4].remove(c)
            k += 1
    return [sorted(h) for h in left]


def running_score(rec, tricks):
    att = set(rec["attackers"])
    return sum(t["points"] for t in rec["tricks"][:tricks] if t["winner"] in att)


def non_blank(png: bytes) -> None:
    import matplotlib.image as mpimg

    img = mpimg.imread(io.BytesIO(png), format="png")
    assert img.shape[0] >= 600 and img.shape[1] >= 1000
    flat = img[..., :3].reshape(-1, 3)
    colours = {tuple((px * 15).round().astype(int)) for px in flat[::97]}
    assert len(colours) > 20, "the screenshot is (nearly) one colour"
    assert img[..., 1].std() > 0.05


def test_step_through_a_deal_with_keys_and_buttons(tmp_path, browser, deals):
    recs, _ = deals
    rec = recs[0]
    rows = fake_rows(rec, __import__("random").Random(5))
    page = tmp_path / "v.html"
    page.write_text(viewer.page(recs, rows, pairs=[], title="Browser test"))
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        assert pg.js("document.title") == "Browser test"
        assert [sorted(h) for h in hands(pg)] == left_after(rec, 0)
        assert text(pg, ".trick-counter").startswith("Before trick 1 of ")
        assert text(pg, ".attacker-score") == "0"
        # one play with the arrow key: the leader's hand loses that card, the trick shows it
        pg.key("ArrowRight")
        assert [sorted(h) for h in hands(pg)] == left_after(rec, 1)
        assert text(pg, ".trick-counter") == f"Trick 1 of {len(rec['tricks'])}, play 1 of 4"
        shown = pg.js("Array.from(document.querySelectorAll('.center [data-card]'))"
                      ".map(c => c.getAttribute('data-card'))")
        assert shown == rec["tricks"][0]["plays"][0]
        # the analysis of that play is beside it, every legal choice a bar
        assert pg.js("document.querySelectorAll('.an .vals .track').length") == \
            len([r for r in rows if r["kind"] == "play"][0]["values"])
        # three more plays with the button, then a whole trick with the down arrow
        for _ in range(3):
            pg.click("#next")
        assert [sorted(h) for h in hands(pg)] == left_after(rec, 4)
        assert text(pg, ".attacker-score") == str(running_score(rec, 1))
        pg.key("ArrowDown")
        pg.key("ArrowDown")
        n = sum(len(t["plays"]) for t in rec["tricks"][:3])
        assert [sorted(h) for h in hands(pg)] == left_after(rec, n)
        assert text(pg, ".trick-counter").startswith(f"Trick 3 of {len(rec['tricks'])}, ")
        assert text(pg, ".attacker-score") == str(running_score(rec, 3))
        pg.key("ArrowLeft")
        assert [sorted(h) for h in hands(pg)] == left_after(rec, n - 1)
        pg.click("#prev-trick")  # back to the end of trick 2
        assert text(pg, ".attacker-score") == str(running_score(rec, 2))
        # a seat's view: only its own hand is shown
        pg.click("[data-view='1']")
        h = hands(pg)
        assert [len(x) for i, x in enumerate(h) if i != 1] == [0, 0, 0] and len(h[1]) > 0
        pg.key("v")  # seat 2's view
        assert [len(x) > 0 for x in hands(pg)] == [False, False, True, False]
        pg.key("End")
        assert all(h == [] for h in hands(pg))
        assert text(pg, ".attacker-score") == str(rec["attacker_points"]) or \
            rec["last_trick_multiplier"] > 1
        assert "Deal over" in text(pg, ".final")
        assert pg.js("document.querySelectorAll('.graph svg rect').length") > 1
        non_blank(pg.screenshot(str(tmp_path / "end.png")))
        # a calling decision clicked in the list shows its analysis; a click on the graph
        # goes to that play
        pg.key("Home")
        assert rec["calls"] and pg.js("document.querySelectorAll('.calls .pick').length") > 0
        pg.click(".calls .pick")
        head = text(pg, ".an .head")
        assert head.startswith("Seat ") and any(w in head for w in ("passed", "showed", "gave"))
        assert pg.js("document.querySelectorAll('.an .vals .track').length") >= 2
        pg.click(".graph svg")
        n_plays = sum(len(t["plays"]) for t in rec["tricks"])
        step = int(text(pg, "#position").split()[1])
        assert abs(step - n_plays / 2) <= 2
        # the next deal with the key; the address keeps the place, and a link opens a place
        pg.key("n")
        assert text(pg, ".tbl h2").endswith(f"deal {recs[1]['deal']} of seed 11")
        assert pg.js("location.hash") == "#d=1&p=0&v=2"
        pg.js("location.hash = '#d=0&p=9&v=-1'")
        assert pg.wait_js("document.querySelector('#position').textContent === 'step 9 of "
                          f"{sum(len(t['plays']) for t in rec['tricks'])}'")
        assert [sorted(h) for h in hands(pg)] == left_after(rec, 9)
        assert pg.errors() == []


def test_void_and_unfinished_deals(tmp_path, browser, deals):
    from sim.loops.runner import iter_records, make_seats
    from sim.rules import Rules

    void = next(iter_records(3, 0, 1, make_seats(["random(show_prob=0)"]),
                             Rules(max_redeals=0)))
    assert void["void"]
    u = copy.deepcopy(deals[0][0])  # stopped in trick 6 after two plays (docs/record.md)
    u.update(unfinished=True, dealt_rounds=27, attacker_points=None,
             last_trick_multiplier=None, attacker_score=None, settlement=[0, 0, 0, 0],
             current_trick={"leader": u["tricks"][5]["leader"],
                            "plays": u["tricks"][5]["plays"][:2]}, tricks=u["tricks"][:5])
    page = tmp_path / "o.html"
    page.write_text(viewer.page([void, u]))
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        assert text(pg, ".trick-counter") == "Void deal: no trick play"
        assert [sorted(h) for h in hands(pg)] == [sorted(h) for h in void["hands"]]
        pg.key("n")
        pg.key("End")
        assert text(pg, ".trick-counter") == "Trick 6 of 6 (in progress), play 2 of 4"
        assert text(pg, ".final") == "Unfinished: the deal stopped here."
        assert [sorted(h) for h in hands(pg)] == left_after(deals[0][0], 22)
        assert pg.errors() == []


def test_a_duplicate_pair_side_by_side(tmp_path, browser, deals):
    (a, _), b = deals
    page = tmp_path / "p.html"
    page.write_text(viewer.page([a, b]))
    div = viewer.divergence(a, b)
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        assert pg.js("document.querySelectorAll('.tbl').length") == 2
        assert [sorted(h) for h in hands(pg, 0)] == left_after(a, 0)
        assert [sorted(h) for h in hands(pg, 1)] == left_after(b, 0)
        assert "First divergent decision" in text(pg, "#divergence")
        pg.key("ArrowRight")
        assert [sorted(h) for h in hands(pg, 1)] == left_after(b, 1)
        if div["kind"] == "play":
            pg.key("d")
            assert pg.js("document.querySelectorAll('.center .diverge').length") >= 2
        else:
            assert pg.js("document.querySelectorAll('.calls .divrow').length") == 2
        non_blank(pg.screenshot(str(tmp_path / "pair.png")))
        assert pg.errors() == []


def test_a_seat_name_cannot_inject_script(tmp_path, browser, deals):
    rec = copy.deepcopy(deals[0][0])
    rec["seats"][0] = EVIL
    page = tmp_path / "e.html"
    page.write_text(viewer.page([rec], title=EVIL))
    with Page(browser, str(page), str(tmp_path / "profile")) as pg:
        pg.key("ArrowRight")
        assert pg.js("typeof window.pwned") == "undefined"
        assert pg.js("document.querySelectorAll('img').length") == 0
        assert pg.js("document.title") == EVIL
        assert EVIL in text(pg, "[data-seat='0'] .who")
        assert pg.errors() == []


def test_a_missing_browser_fails_under_ci(monkeypatch):
    """Both browser test files (the viewer's and report.html's) take their browser here."""
    import test_report_browser

    monkeypatch.setattr(test_report_browser, "find_browser", lambda: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        test_report_browser.browser_or_skip()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        test_report_browser.browser_or_skip()
    assert os.environ["CI"] == ""
