#!/usr/bin/env python3
"""A local stand-in for a chat-completions endpoint, to test examples/bots/llm/bot.py offline.

Standard library only. It listens on 127.0.0.1 and answers POST .../chat/completions:

    python3 examples/bots/llm/stub_server.py --port 0 --mode last
    # prints "port N" once it listens; then SHUANGKOU_LLM_URL=http://127.0.0.1:N/v1

Modes (--mode, or per request: a model named "stub-MODE" overrides it):
    last      answer the highest choice number listed in the prompt ("N: ..." lines)
    first     answer "0"
    fixed     answer --choice
    garbage   answer text that names no choice
    slow      sleep --delay seconds, then answer as "last"
    error     reply HTTP 500

GET /stats answers {"requests": N}: how many chat requests it has received.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("last", "first", "fixed", "garbage", "slow", "error")


def make_handler(opts: argparse.Namespace) -> type:
    counter = {"requests": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *args: object) -> None:
            print("stub: " + fmt % args, file=sys.stderr)

        def do_GET(self) -> None:  # noqa: N802 - the http.server name
            if self.path.rstrip("/") != "/stats":
                self.send_error(404)
                return
            with lock:
                data = json.dumps(counter).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send_error(404)
                return
            try:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                model = str(body["model"])
                text = "\n".join(str(m["content"]) for m in body["messages"])
            except (ValueError, KeyError, TypeError):
                self.send_error(400)
                return
            with lock:
                counter["requests"] += 1
            mode = opts.mode
            if model.startswith("stub-") and model[5:] in MODES:
                mode = model[5:]
            if mode == "error":
                self.send_error(500)
                return
            if mode == "slow":
                time.sleep(opts.delay)
            numbers = [int(x) for x in re.findall(r"^(\d+):", text, re.M)]
            if mode == "first":
                content = "0"
            elif mode == "fixed":
                content = str(opts.choice)
            elif mode == "garbage":
                content = "I would rather not say."
            else:
                content = f"I choose {max(numbers) if numbers else 0}."
            data = json.dumps({"id": "stub", "object": "chat.completion", "model": model,
                               "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                   "role": "assistant", "content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="0: any free port")
    ap.add_argument("--mode", choices=MODES, default="last")
    ap.add_argument("--choice", type=int, default=0, help="the answer of --mode fixed")
    ap.add_argument("--delay", type=float, default=5.0, help="seconds --mode slow waits")
    opts = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", opts.port), make_handler(opts))
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
