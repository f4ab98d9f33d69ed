#!/usr/bin/env python3
"""An LLM seat: a `shuangkou-bot/1` bot (docs/protocol.md) that asks a chat-completions model.

Standard library only. The endpoint is named by the environment:

    SHUANGKOU_LLM_URL    base URL of an OpenAI-compatible API, e.g. http://localhost:8000/v1
                         (the bot POSTs to {URL}/chat/completions)
    SHUANGKOU_LLM_MODEL  the model name sent in each request (default "default")
    SHUANGKOU_LLM_KEY    optional; sent as "Authorization: Bearer KEY"

    SHUANGKOU_LLM_URL=http://localhost:8000/v1 SHUANGKOU_LLM_MODEL=my-model \\
        shuangkou play --bot llm='python3 examples/bots/llm/bot.py' --seats llm,greedy --deals 2

Each `decide` becomes one request describing the decision (hand, trump, the trick so far, the
legal choices numbered from 0); the first integer of the reply that names a choice is played.
The request gets the decision's `clock_ms` less a margin; when the endpoint fails, is slower
than that, or answers something that names no choice, the bot plays its fallback (pass at a
show, else choice 0) and says so on standard error. Nothing but protocol lines reaches stdout.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import urllib.request

RULES = (
    "You play Xinjiang Shuangkou (新疆双扣), a four-player trick-taking game with two packs "
    "(108 cards). Seats 0 and 2 are partners against 1 and 3. Trumps: both jokers (BJ, SJ), "
    "every 2, 3 and 5, and the trump suit. Strength, strongest first: trump-suit 5, BJ, SJ, "
    "other 5s, trump-suit 3, other 3s, trump-suit 2, other 2s, then A K Q J T 9 8 7 6 4. A lead "
    "is one card or one identical pair; follow the group led if you can. Points: 5 = 5, "
    "T and K = 10. The attackers want 120 of the 200 points or more; winning the last trick "
    "multiplies its points. Cards: rank then suit (s h d c), e.g. Kh, Td, 5s, BJ."
)


def margin_s(clock_s: float) -> float:
    """Time kept back from the decision's clock for the runner, the pipe and this process."""
    return max(0.15, 0.25 * clock_s)


def fallback(kind: str, legal: list) -> int:
    """The choice played when the model gives none: pass at a show, else the first choice."""
    if kind == "show":
        for i, choice in enumerate(legal):
            if not choice:
                return i
    return 0


def describe(kind: str, choice: list) -> str:
    if kind == "show":
        return "pass" if not choice else f"show the pair {choice[0]} {choice[0]}"
    if kind == "giveback":
        return "hand back " + " ".join(choice)
    return "play " + " ".join(choice)


def prompt(state: dict, msg: dict) -> str:
    kind, legal = msg["kind"], msg["legal"]
    seat = state["seat"]
    lines = [f"You are seat {seat}; your partner is seat {(seat + 2) % 4}."]
    if state["trump"]:
        who = "you attack" if seat in state["attackers"] else "you defend"
        lines.append(f"Trump suit: {state['trump']} (caller seat {state['caller']}); {who}.")
    else:
        lines.append("Trump is not decided yet: players are showing pairs (the last pair shown "
                     "names the trump suit; a show must outrank the pair on the table).")
    lines.append("Your hand: " + " ".join(msg.get("hand") or []))
    if kind == "play":
        trick = msg.get("trick") or []
        if trick:
            lines.append("This trick so far: " + "; ".join(
                f"seat {s} played {' '.join(cards)}" for s, cards in trick))
        else:
            lines.append("You lead this trick.")
        lines.append(f"Attackers' points so far: {state['points']}.")
    elif kind == "giveback":
        lines.append("You have just overridden a show: hand two cards back to the seat whose "
                     "pair you took.")
    lines.append("Your choices:")
    lines += [f"{i}: {describe(kind, c)}" for i, c in enumerate(legal)]
    lines.append("Answer with the number of one choice and nothing else.")
    return "\n".join(lines)


def ask(url: str, model: str, key: str | None, text: str, timeout: float) -> str | None:
    """The model's reply, or None when no reply came within `timeout` seconds."""
    body = json.dumps({"model": model, "messages": [
        {"role": "system", "content": RULES},
        {"role": "user", "content": text}]}).encode()
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    result: list = []

    def run() -> None:
        try:
            req = urllib.request.Request(url.rstrip("/") + "/chat/completions", data=body,
                                         headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                data = json.loads(resp.read())
            result.append(str(data["choices"][0]["message"]["content"]))
        except Exception as e:  # noqa: BLE001 - any failure means the fallback
            print(f"llm: request failed: {type(e).__name__}: {e}", file=sys.stderr)

    # a thread bounds the whole exchange (urllib's timeout bounds each socket operation only)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    return result[0] if result else None


def pick(reply: str | None, n: int) -> int | None:
    """The first integer in `reply` that names one of `n` choices."""
    for m in re.finditer(r"\d+", reply or ""):
        i = int(m.group())
        if 0 <= i < n:
            return i
    return None


def main() -> None:
    url = os.environ.get("SHUANGKOU_LLM_URL", "")
    model = os.environ.get("SHUANGKOU_LLM_MODEL", "default")
    key = os.environ.get("SHUANGKOU_LLM_KEY") or None
    if not url:
        print("llm: SHUANGKOU_LLM_URL is not set: every decision is the fallback",
              file=sys.stderr)
    state: dict = {"seat": 0, "trump": None, "caller": None, "attackers": [], "points": 0,
                   "decision_ms": 1000}
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            out.write(json.dumps({"type": "hello", "name": "llm", "version": "1"}) + "\n")
            out.flush()
        elif kind == "match":
            state["seat"] = int(msg.get("seat", 0))
            clock = msg.get("clock") or {}
            state["decision_ms"] = clock.get("decision_ms") or state["decision_ms"]
        elif kind == "deal":
            state.update(trump=None, caller=None, attackers=[], points=0)
        elif kind == "trump":
            state.update(trump=msg.get("trump"), caller=msg.get("caller"),
                         attackers=list(msg.get("attackers") or []))
        elif kind == "trick":
            if msg.get("winner") in state["attackers"]:
                state["points"] += int(msg.get("points") or 0)
        elif kind == "decide":
            legal = msg["legal"]
            clock_s = float(msg.get("clock_ms") or state["decision_ms"]) / 1000.0
            timeout = max(0.05, clock_s - margin_s(clock_s))
            choice = None
            if url and len(legal) > 1:
                choice = pick(ask(url, model, key, prompt(state, msg), timeout), len(legal))
                if choice is None:
                    print(f"llm: decision {msg['id']}: no usable answer, fallback",
                          file=sys.stderr)
            if choice is None:
                choice = fallback(msg["kind"], legal)
            out.write(json.dumps({"type": "action", "id": msg["id"], "choice": choice}) + "\n")
            out.flush()
        elif kind == "quit":
            return


if __name__ == "__main__":
    main()
