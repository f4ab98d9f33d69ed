"""An interactive headless-Chromium page for tests: load a file, press keys, click, read the
DOM, take a screenshot. Built on the DevTools-over-a-pipe client of test_report_browser."""

from __future__ import annotations

import base64
import os

from test_report_browser import DevTools, browser_or_skip  # noqa: F401 - re-exported

KEYS = {  # DevTools key events: key, code, windowsVirtualKeyCode
    "ArrowRight": ("ArrowRight", 39), "ArrowLeft": ("ArrowLeft", 37),
    "ArrowUp": ("ArrowUp", 38), "ArrowDown": ("ArrowDown", 40),
    "Home": ("Home", 36), "End": ("End", 35), "n": ("KeyN", 78), "p": ("KeyP", 80),
    "v": ("KeyV", 86), "d": ("KeyD", 68),
}


class Page:
    """One page in a fresh browser (``with Page(browser, path, profile) as pg``)."""

    def __init__(self, browser: str, path: str, profile: str, width: int = 1400,
                 height: int = 1000) -> None:
        self.dt = DevTools(browser, profile)
        try:
            target = self.dt.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.dt.send("Target.attachToTarget", {
                "targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable")
            self.send("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
            self.send("Page.navigate", {"url": "file://" + os.path.abspath(path)})
            self.dt.wait_for("Page.loadEventFired")
        except BaseException:
            self.dt.close()
            raise

    def send(self, method, params=None):
        return self.dt.send(method, params, session=self.session)

    def js(self, expression: str):
        """The value of a JavaScript expression (JSON-able); raises on a thrown exception."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_js(self, expression: str, seconds: float = 5.0):
        """Poll a JavaScript expression until it is truthy (bounded); returns its value."""
        import time

        end = time.monotonic() + seconds
        while True:
            v = self.js(expression)
            if v or time.monotonic() > end:
                return v
            time.sleep(0.05)

    def key(self, name: str) -> None:
        code, vk = KEYS[name]
        ev = {"key": name, "code": code, "windowsVirtualKeyCode": vk,
              "nativeVirtualKeyCode": vk}
        if len(name) == 1:
            ev["text"] = name
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **ev})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **ev})

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the first element matching ``selector``."""
        box = self.js(f"(function(){{var e=document.querySelector({selector!r});"
                      f"e.scrollIntoView({{block:'center'}});var r=e.getBoundingClientRect();"
                      f"return [r.left+r.width/2, r.top+r.height/2];}})()")
        for t in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": t, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def screenshot(self, path: str) -> bytes:
        data = base64.b64decode(self.send("Page.captureScreenshot",
                                          {"format": "png"})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def errors(self) -> list[str]:
        out = []
        for e in self.dt.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(str(p["exceptionDetails"].get("exception", {}).get(
                    "description") or p["exceptionDetails"].get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(str(p.get("args")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def close(self) -> None:
        self.dt.close()

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
