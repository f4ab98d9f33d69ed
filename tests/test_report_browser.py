"""report.html in a real headless Chromium: it renders, every plot decodes, no console errors.

Talks to the browser over the DevTools protocol on a pipe (``--remote-debugging-pipe``: it
reads JSON commands on fd 3 and writes replies and events on fd 4, each ending in a NUL byte),
so nothing listens on a port. Skips where no Chromium is installed (.ci/run installs Debian's
``chromium-headless-shell``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import time

import pytest

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe")
DEADLINE = 30.0  # seconds for the whole browser session


def find_browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _above_4(fd):
    """``fd`` moved to a number above 4, so that dup2 onto 3 and 4 cannot clobber it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class DevTools:
    """A minimal DevTools-protocol client over the browser's pipe."""

    def __init__(self, browser, profile):
        to_r, self._to_w = os.pipe()  # we write commands, the browser reads fd 3
        self._from_r, from_w = os.pipe()  # the browser writes fd 4, we read
        to_r, from_w = _above_4(to_r), _above_4(from_w)  # dup2 onto 3, 4 cannot clobber them

        def as_fds_3_and_4():  # in the child, before exec; close_fds keeps 3 and 4
            os.dup2(to_r, 3)
            os.dup2(from_w, 4)

        self.proc = subprocess.Popen(
            [browser, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=as_fds_3_and_4, pass_fds=(3, 4), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.deadline = time.monotonic() + DEADLINE

    def _read_message(self):
        while b"\0" not in self._buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_r], [], [], left)
            if ready:
                data = os.read(self._from_r, 1 << 20)
                if not data:
                    raise EOFError("the browser closed its DevTools pipe")
                self._buf += data
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            e = self._read_message()
            if e.get("method") == method:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.send("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)


def load_page(browser, page, profile):
    """Open ``page`` and return (page facts, console/log errors)."""
    dt = DevTools(browser, profile)
    try:
        target = dt.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dt.send("Target.attachToTarget", {"targetId": target,
                                                    "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            dt.send(f"{domain}.enable", session=session)
        dt.send("Emulation.setDeviceMetricsOverride", {"width": 1300, "height": 900,
                                                        "deviceScaleFactor": 1, "mobile": False},
                session=session)  # a desktop window, wide enough for two plots a row
        dt.send("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session=session)
        dt.wait_for("Page.loadEventFired")
        facts = dt.send("Runtime.evaluate", {"returnByValue": True, "expression": """({
            title: document.title,
            h1: document.querySelector('h1') && document.querySelector('h1').textContent,
            tables: document.querySelectorAll('table').length,
            first: document.querySelector('li') && document.querySelector('li').textContent,
            nocjk: document.documentElement.classList.contains('nocjk'),
            r25: Array.from(document.querySelectorAll('.r25')).map(e => e.innerText),
            images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete,
                width: i.naturalWidth, height: i.naturalHeight,
                left: i.getBoundingClientRect().left, top: i.getBoundingClientRect().top})),
            heat: Array.from(document.querySelectorAll('td.heat')).map(td => ({
                text: td.innerText, zero: td.classList.contains('zero'),
                bg: getComputedStyle(td).backgroundImage + ' ' +
                    getComputedStyle(td).backgroundColor})),
            h2: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
            height: document.documentElement.scrollHeight})"""}, session=session)
        facts = facts["result"]["value"]
        errors = []
        for e in dt.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append(p["exceptionDetails"].get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append(str(p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                errors.append(p["entry"].get("text"))
        return facts, errors
    finally:
        dt.close()


@pytest.fixture(scope="module")
def browser():
    return browser_or_skip()


def browser_or_skip() -> str:
    """The browser's path; skips where none is installed, but FAILS under CI (``CI`` set to
    true, as CI services set it): there the browser tests must run."""
    path = find_browser()
    if path is None:
        why = ("no headless Chromium on PATH (" + ", ".join(BROWSERS) + "): .ci/run installs "
               "Debian's chromium-headless-shell with apt-get")
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(why + "; CI=true, so the browser tests may not skip")
        pytest.skip(why)
    return path


def test_report_html_renders_every_plot_without_errors(tmp_path, browser, monkeypatch):
    from plot_text import missing_glyphs, raw_mathtext

    from sim.analysis import report
    from sim.tournament.config import from_dict
    from sim.tournament.run import run_tournament

    # every plot's text is checked as it is drawn into its PNG: no label may print mathtext
    # markup as typed (a log axis's "$\\mathdefault{10^{-1}}$") or a glyph its fonts lack
    broken = {}
    real = report._png
    monkeypatch.setattr(report, "_png", lambda fig: (broken.update(
        {fig.axes[0].get_title(): raw_mathtext(fig) + missing_glyphs(fig)}), real(fig))[1])

    players = ["random(show_prob=0.9)", "random", "random(show_prob=0.3)"]
    cfg = from_dict({"name": "browser", "format": "round-robin", "players": players,
                     "deals": 200, "seed": 5, "run": {"chunk_size": 200, "progress": False},
                     "output": {"dir": str(tmp_path / "out"), "plots": True}})
    run_tournament(cfg)
    plots = sorted(os.listdir(os.path.join(cfg.out, "plots")))
    assert len(plots) == 5  # three matchups, settlement, ratings
    assert len(broken) == 5 and all(v == [] for v in broken.values()), broken
    facts, errors = load_page(browser, os.path.join(cfg.out, "report.html"),
                              str(tmp_path / "profile"))
    assert errors == []
    assert facts["title"] == "Tournament browser" and facts["h1"] == "Tournament browser"
    assert facts["tables"] >= 8 and facts["height"] > 1000
    assert sorted(i["alt"] for i in facts["images"]) == plots
    for img in facts["images"]:  # each embedded PNG decoded
        assert img["complete"] and img["width"] > 0 and img["height"] > 0, img
    # the R25 titles (the "titles after a match" column): where no font has their characters
    # (this machine, unless a CJK font is installed) the page shows each as its English gloss
    # alone, as the plots do, never as boxes; with such a font, the title and its gloss
    from sim.titles import GLOSS

    assert facts["r25"], "no R25 title marked on the page"
    if _cjk_font_installed():
        assert not facts["nocjk"]
        assert all(re.fullmatch(r"(\S+) \((.+)\)", t) for t in facts["r25"]), facts["r25"]
    else:
        assert facts["nocjk"]
        assert set(facts["r25"]) <= set(GLOSS.values()), facts["r25"]
    # the run in one line first; the matchups' score plots in a grid (two a row), not a column
    assert facts["first"].startswith("ranking by mean settlement per deal per player: 1. ")
    scores = [i for i in facts["images"] if i["alt"].startswith("scores_m")]
    assert len({i["left"] for i in scores}) == 2 and len({i["top"] for i in scores}) == 2


def _cjk_font_installed() -> bool:
    """Whether the browser can find a font with the R25 titles' characters: fontconfig's
    answer (``fc-list :charset=…``), which Chromium on Linux asks too."""
    from sim.titles import GLOSS

    chars = sorted({ord(c) for t in GLOSS for c in t})
    if shutil.which("fc-list") is None:
        from sim.analysis.report import cjk_font

        return cjk_font() is not None
    r = subprocess.run(["fc-list", ":charset=" + " ".join(f"{c:x}" for c in chars), "family"],
                       capture_output=True, text=True, timeout=60, check=False)
    return bool(r.stdout.strip())


def test_a_broken_image_and_a_console_error_are_caught(tmp_path, browser):
    # the checks above can fail: an image that does not decode has naturalWidth 0, and
    # errors on the console or thrown by a script are collected
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head>"
                    "<body><h1>t</h1><img alt='x' src='data:image/png;base64,AAAA'>"
                    "<script>console.error('boom'); undefinedFunction();</script></body>"
                    "</html>")
    facts, errors = load_page(browser, str(page), str(tmp_path / "profile"))
    assert facts["images"][0]["width"] == 0
    assert len(errors) >= 2 and any("boom" in e for e in errors)


def test_partners_report_shows_the_partner_tables_and_heat_map(tmp_path, browser):
    """A partners run's page: partner matrix, a compatibility heat map whose cells holding 0
    are hatched, the individual ranking (flagged when additivity is rejected)."""
    from sim.tournament.config import from_dict
    from sim.tournament.run import run_tournament

    cfg = from_dict({"name": "partners", "format": "partners",
                     "players": ["greedy", "random", "random(show_prob=0.2)"],
                     "deals": 120, "seed": 3, "run": {"chunk_size": 120, "progress": False},
                     "output": {"dir": str(tmp_path / "out"), "plots": False}})
    summary = run_tournament(cfg)
    facts, errors = load_page(browser, os.path.join(cfg.out, "report.html"),
                              str(tmp_path / "profile"))
    assert errors == []
    assert "Partner matrix" in facts["h2"] and "Partner compatibility" in facts["h2"]
    assert any(h.startswith("Individual strengths") for h in facts["h2"])
    comp = summary["partners"]["compatibility"]
    assert len(facts["heat"]) == 2 * len(comp)  # both halves of the symmetric matrix
    for cell in facts["heat"]:
        assert cell["zero"] == ("(0 inside)" in cell["text"])
        # a coloured cell has a colour, a cell whose interval holds 0 the hatching
        assert ("repeating-linear-gradient" in cell["bg"]) == cell["zero"], cell
