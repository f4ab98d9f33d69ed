"""Live standings of a running tournament: each matchup's and each player's running mean
with its interval and W/D/L, shown by the progress display as chunks finish.

On a terminal the standings are a line under the tqdm bar (the matchup of a head-to-head,
or the top players of a round robin, the leader first, and the matchup whose chunk just
finished; redrawn at most every ``STATUS_EVERY`` seconds); elsewhere (a log file, a pipe)
they come as plain lines, at most one per ``PLAIN_EVERY`` seconds and one at the end, instead
of the bar's carriage returns. Everything is updated once per finished chunk from the
chunk's statistics: O(1) per chunk, plus a sort of the players' means when drawn.
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.analysis.stats.quantiles import norm_ppf

PLAIN_EVERY = 30.0  # seconds between plain standings lines when the output is not a terminal


STATUS_EVERY = 0.5  # seconds between redraws of the standings line on a terminal


TOP = 3  # players shown by name in a round robin's standings


Z95 = norm_ppf(0.975)  # a live display: the normal 95% interval of the running mean


class Standings:
    """Running per-pair results of every matchup and (pooled, B's negated) every player, from
    the chunks as they arrive (whatever their order: a live view, not the report)."""

    def __init__(self, players: Sequence[str], matchups: Sequence[tuple[int, int]]) -> None:
        self.players = list(players)
        self.matchups = list(matchups)
        k, m = len(players), len(matchups)
        self.sums = np.zeros((k, 3))  # per player: n, sum x, sum x^2
        self.wdl = np.zeros((k, 3), dtype=np.int64)
        self.m_sums = np.zeros((m, 3))
        self.m_wdl = np.zeros((m, 3), dtype=np.int64)
        self.last: int | None = None  # the matchup of the last chunk
        self.sprt: Any = None  # the run's SPRT, shown with a head-to-head

    def add(self, matchup: int, tally: dict[str, Any]) -> None:
        """Count a finished chunk of ``matchup`` (its tally, ``chunks.tally_from_json``)."""
        p, w = tally["pairs"], tally["wdl"]
        a, b = self.matchups[matchup]
        row = np.array([p.n, p.total, p.total_sq])
        wdl = np.array([w.wins, w.draws, w.losses])
        self.m_sums[matchup] += row
        self.m_wdl[matchup] += wdl
        self.sums[a] += row
        self.wdl[a] += wdl
        self.sums[b] += row * np.array([1, -1, 1])
        self.wdl[b] += wdl[::-1]
        self.last = matchup

    @staticmethod
    def _mean_half(s: np.ndarray) -> tuple[float, float]:
        n, total, total_sq = s
        if n < 1:
            return math.nan, math.nan
        mean = total / n
        if n < 2:
            return mean, math.nan
        var = max(0.0, (total_sq - total * mean) / (n - 1))
        return mean, Z95 * math.sqrt(var / n)

    @staticmethod
    def _wdl(c: np.ndarray) -> str:
        n = c.sum()
        if not n:
            return "W/D/L –"
        w, d, losses = (100.0 * c / n).round().astype(int)
        return f"W/D/L {w}/{d}/{losses}%"

    def _result(self, s: np.ndarray, c: np.ndarray, interval: bool = True) -> str:
        mean, half = self._mean_half(s)
        if math.isnan(mean):
            return "–"
        if not interval or math.isnan(half):
            return f"{mean:+.2f}"
        return f"{mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}] {self._wdl(c)}"

    def lines(self) -> list[str]:
        """The standings: one line for a head-to-head (its matchup, and the SPRT's LLR), two
        for several matchups (the top players, the leader with its interval and W/D/L; the
        matchup of the last chunk)."""
        if len(self.matchups) == 1:
            a, b = self.matchups[0]
            out = (f"{self.players[a]} vs {self.players[b]} "
                   f"{self._result(self.m_sums[0], self.m_wdl[0])}")
            if self.sprt is not None:
                out += f" · SPRT LLR {self.sprt.llr:+.2f} [{self.sprt.bounds[0]:.2f}, " \
                       f"{self.sprt.bounds[1]:.2f}]"
            return [out]
        n = self.sums[:, 0]
        played = np.flatnonzero(n > 0)
        if not played.size:
            return []
        means = self.sums[played, 1] / n[played]
        top = played[np.argsort(-means, kind="stable")[:TOP]]
        parts = [f"1. {self.players[top[0]]} "
                 f"{self._result(self.sums[top[0]], self.wdl[top[0]])}"]
        parts += [f"{r}. {self.players[i]} {self._result(self.sums[i], self.wdl[i], False)}"
                  for r, i in enumerate(top[1:], 2)]
        out = [" · ".join(parts) + f" (of {len(self.players)})"]
        if self.last is not None:
            a, b = self.matchups[self.last]
            out.append(f"last: {self.players[a]} vs {self.players[b]} "
                       f"{self._result(self.m_sums[self.last], self.m_wdl[self.last])}")
        return out

    def text(self, width: int | None = None) -> str:
        """``lines()`` as one line, cut to ``width`` characters."""
        return _cut(" · ".join(self.lines()), width)


def _cut(text: str, width: int | None) -> str:
    if width is not None and len(text) > width:
        return text[:max(0, width - 1)] + "…"
    return text


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """The run's progress display: a tqdm bar with the standings on a terminal, plain lines
    at a bounded rate elsewhere, nothing when disabled."""

    def __init__(self, name: str, total: int, initial: int, enabled: bool,
                 standings: Standings, stream: Any = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.name, self.total, self.done = name, total, initial
        self.initial = initial
        self.standings = standings
        self.enabled = enabled
        self.tty = enabled and _is_tty(self.stream)
        self.t0 = self.last_line = time.monotonic()
        self.pending = False  # updates since the last plain line
        self.bar: Any = None
        self.status: list[Any] = []
        self.shown = 0.0  # when the status line was last drawn
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="deal", unit_scale=True,
                            smoothing=0.1, desc=name, dynamic_ncols=True, file=self.stream)
            # the standings: a line or two under the bar, as wide as the terminal
            self.status = [tqdm(total=0, position=1 + i, bar_format="{desc}", file=self.stream,
                                dynamic_ncols=True)
                           for i in range(1 if len(standings.matchups) == 1 else 2)]

    def update(self, deals: int) -> None:
        """``deals`` more deals finished (after ``standings`` took their chunk)."""
        self.done += deals
        if self.bar is not None:
            self.bar.update(deals)
            width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
            now = time.monotonic()
            redraw = now - self.shown >= STATUS_EVERY
            for line, text in zip(self.status, self.standings.lines()):
                line.set_description_str(_cut(text, width), refresh=redraw)
            if redraw:
                self.shown = now
        elif self.enabled:
            self.pending = True
            if time.monotonic() - self.last_line >= PLAIN_EVERY:
                self._line()

    def _line(self) -> None:
        now = time.monotonic()
        elapsed = now - self.t0
        rate = (self.done - self.initial) / elapsed if elapsed > 0 else math.nan
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = ""
        if rate > 0 and self.done < self.total:
            eta = f", ETA {_clock((self.total - self.done) / rate)}"
        speed = f", {rate:,.0f} deals/s" if math.isfinite(rate) else ""
        text = self.standings.text()
        print(f"{self.name}: {self.done:,}/{self.total:,} deals ({pct:.0f}%){speed}{eta}"
              + (f" | {text}" if text else ""), file=self.stream, flush=True)
        self.last_line = now
        self.pending = False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            for line in self.status:
                line.close()
        elif self.enabled and self.pending:
            self._line()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
