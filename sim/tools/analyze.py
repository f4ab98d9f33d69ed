"""``shuangkou analyze``: where the points went, decision by decision (docs/analysis.md).

A record (docs/record.md) is replayed with the engine; at each decision of the chosen seats
the state is masked to what that seat knew (``sim.view.mask_into``, R9) and every legal
choice is valued by ``strategies.evaluate.evaluate_choices`` on the same sampled worlds,
continued by the continuation policy. A choice with many alternatives narrows them down on
fresh worlds (successive halving); then the few best other choices (``Settings.top``) are
compared with the one played on fresh worlds, paired: ``loss`` is measured against the best
of them, and its 95% interval holds for all of them at once (Bonferroni over the candidates),
so it covers the loss against the best choice even when the first stage ranked the best
second or third. ``true_loss`` values every choice on the true deal (all hands known): exactly
where the double-dummy solver (``sim.solve``) settles the position within
``Settings.exact_nodes`` nodes (the last tricks; the row says ``"exact": true``), else with
rollouts of the continuation policy.

Randomness: each decision's worlds come from a stream keyed by (``--seed``, deal, step), so
the output is the same for any ``--jobs``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from sim.core import state as S
from sim.core.console import clean
from sim.core.rng import stream_key
from sim.errors import RecordError, ShuangkouError, StrategyError
from sim.loops.steps import (  # noqa: F401  (re-exported: analyze's callers and tests)
    Decision,
    Step,
    check_record,
    choice_label,
    decision_steps,
    decisions,
    notation,
)
from sim.record import read_records
from sim.replay import hand_line, pretty
from sim.rules import Rules
from sim.solve import REACH, Solver
from sim.tournament.forkpool import ForkPool, can_fork
from sim.view import mask_into
from strategies.evaluate import evaluate_choices
from strategies.greedy import GreedyStrategy
from strategies.params import GREEDY_DEFAULTS, ROLLOUT_ROW, param_table
from strategies.registry import make
from strategies.search import POLICY_EGREEDY, POLICY_GREEDY, POLICY_RANDOM
from strategies.tier import new_scratch

DEFAULT_SAMPLES = 128  # first-stage worlds per decision (sim.cli repeats it)
Z95 = 1.959963984540054
MARK_Q = 0.25  # "?": a loss of at least this many settlement points, interval above 0
MARK_QQ = 1.0  # "??": at least this many (docs/analysis.md: why)
MAX_ROLLOUTS = 1536  # first-stage rollouts per decision at most (give-backs: ~400 choices)
RECHECK_TOP = 4  # other choices re-checked against the one played (docs/analysis.md)
NARROW_ROLLOUTS = 4 * MAX_ROLLOUTS  # rollouts per narrowing round at most
KINDS = ("show", "giveback", "play")
EXACT_NODES = 2_000_000  # node cap of one exact solve in the analysis (0: no exact values)


@dataclass(frozen=True)
class Settings:
    """What an analysis depends on besides the records (all of it goes into the output)."""

    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    policy: str = "expert"
    top: int = RECHECK_TOP  # other choices re-checked (1: the first stage's pick alone)
    exact_nodes: int = EXACT_NODES  # the solver's cap per play decision (0: rollouts only)

    @property
    def recheck(self) -> int:  # second-stage worlds: two rollouts each, so many more
        return 4 * self.samples

    @property
    def true_samples(self) -> int:  # rollouts per choice on the true deal
        return max(self.samples // 2, 1)


# --- the continuation policy ---------------------------------------------------------------
def continuation(spec: str) -> tuple[int, float, list[float]]:
    """(rollout policy, epsilon, greedy row) of a ``--policy`` spec: ``expert`` (its own
    rollouts: ``rollout``, ``rollout_epsilon``), ``greedy`` (with its parameters, in every
    seat) or ``random``. Anything else raises StrategyError."""
    allowed = ("expert (its egreedy rollouts; expert(rollout=greedy) or "
               "expert(rollout_epsilon=0.1) to change them), greedy (any parameters) or random")
    try:
        s = make(spec)
    except ShuangkouError as e:
        raise StrategyError(f"--policy {spec!r}: {e}; allowed: {allowed}") from None
    name = s.name
    if name == "expert":
        pol = POLICY_EGREEDY if s.rollout == "egreedy" else POLICY_GREEDY
        return pol, float(s.rollout_epsilon), list(GREEDY_DEFAULTS)
    if name == "greedy" and isinstance(s, GreedyStrategy):
        return POLICY_GREEDY, 0.0, [float(x) for x in s.compiled_params()]
    if name == "random":
        return POLICY_RANDOM, 0.0, list(GREEDY_DEFAULTS)
    raise StrategyError(f"--policy {spec!r} cannot be a continuation policy (it would search "
                        f"inside every rollout); allowed: {allowed}")


# --- one decision ----------------------------------------------------------------------------
_ROLLOUT_SCRATCH: dict[str, Any] = {}
STREAM_ANALYSIS = 1 << 20  # stream ids of the analysis: this + step (worlds), + 2**21 (truth)


def _scratch() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if "s" not in _ROLLOUT_SCRATCH:
        _ROLLOUT_SCRATCH["s"] = new_scratch()
    return _ROLLOUT_SCRATCH["s"]


def _mean_ci(d: np.ndarray) -> tuple[float, float]:
    """Mean and 95% half-width of paired differences."""
    m = float(d.mean())
    if d.shape[0] < 2:
        return m, math.inf
    return m, Z95 * float(d.std(ddof=1)) / math.sqrt(d.shape[0])


def z_simultaneous(k: int) -> float:
    """The normal quantile of ``k`` two-sided 95% intervals that hold all at once
    (Bonferroni: each at 1 - 0.05 / k); 1.96 for one."""
    return Z95 if k <= 1 else NormalDist().inv_cdf(1.0 - 0.025 / k)


def max_interval(d: np.ndarray) -> tuple[float, float, float, int]:
    """``d[w, c]``: paired differences (candidate c minus the choice played) in world w.
    Returns the largest mean difference, the 95% interval of the largest *true* mean
    difference (max over c of the simultaneous bounds: it covers max_c E[d_c] whenever
    every candidate's interval covers its own, i.e. with probability >= 95%), unclipped,
    and the index of the largest mean."""
    w, k = d.shape
    m = d.mean(axis=0)
    if w < 2:
        j = int(np.argmax(m))
        return float(m[j]), -math.inf, math.inf, j
    h = z_simultaneous(k) * d.std(axis=0, ddof=1) / math.sqrt(w)
    j = int(np.argmax(m))
    return float(m[j]), float(np.max(m - h)), float(np.max(m + h)), j


def outcomes(idx: Sequence[int], worlds: int, codes: Sequence[int], mst: np.ndarray,
             mu: np.ndarray, rules: np.ndarray, seat: int, params: np.ndarray, pol: int,
             eps: float) -> np.ndarray:
    """``out[w, i]``: the settlement after choice ``codes[idx[i]]`` in each of ``worlds``
    worlds, the next worlds of the decision's stream (``mu`` keeps its place in it)."""
    buf, fws, uws = _scratch()
    out = np.zeros((worlds, len(idx)), dtype=np.float64)
    evaluate_choices(mst, mu, rules, seat, params, buf, fws, uws,
                     np.array([codes[i] for i in idx], dtype=np.int64), len(idx), worlds,
                     pol, eps, 0, out)
    return out


def _candidates(out: np.ndarray, p: int, settings: Settings,
                more: Any) -> tuple[list[int], int]:
    """The other choices to re-check against ``p`` (at most ``settings.top``), best first by
    their mean over every world they were valued on, and the rollouts spent narrowing.
    ``out``: the first stage's values of every choice. While more than twice ``top``
    remain, a third of them (at least ``2 top``) survive and get ``more(idx, worlds)``
    fresh worlds each (successive halving, at most ``NARROW_ROLLOUTS`` rollouts a round,
    ``--samples`` worlds a choice): a give-back's ~150 pairs valued on 10 worlds each do not
    settle which pair is best."""
    n = out.shape[1]
    top = max(int(settings.top), 1)
    sums = out.sum(axis=0)
    cnt = np.full(n, out.shape[0], dtype=np.float64)

    def ranked(pool: list[int]) -> list[int]:
        return sorted(pool, key=lambda i: (-sums[i] / cnt[i], i))

    pool = ranked([i for i in range(n) if i != p])
    spent = 0
    while len(pool) > 2 * top:
        pool = pool[:max(2 * top, len(pool) // 3)]
        w = min(settings.samples, max(NARROW_ROLLOUTS // len(pool), 4))
        o = more(pool, w)
        sums[pool] += o.sum(axis=0)
        cnt[pool] += w
        spent += w * len(pool)
        pool = ranked(pool)
    return pool[:top], spent


def mark_of(loss: float, lo: float) -> str:
    """``"??"``, ``"?"`` or ``""`` (docs/analysis.md): the loss is at least ``MARK_QQ`` /
    ``MARK_Q`` settlement points and its 95% interval excludes 0."""
    if lo <= 0.0:
        return ""
    return "??" if loss >= MARK_QQ else "?" if loss >= MARK_Q else ""


def exact_loss(exact: Sequence[tuple[int, int, int]], played: int,
               attacker: bool) -> tuple[float, int]:
    """(loss, code of the best) from a solved position's ``(code, score, settlement)`` per
    choice: the best settlement, ties broken by the score for the seat's side (as
    ``sim.solve.Solution.best``); the played code is its own best when it ties."""
    key = {c: (st, sc if attacker else -sc) for c, sc, st in exact}
    best = max(key, key=lambda c: key[c])
    if key[played] == key[best]:
        best = played
    return float(key[best][0] - key[played][0]), best


def analyze_decision(dec: Decision, rules: np.ndarray, settings: Settings,
                     player: str = "", truth: bool = True,
                     exact: Sequence[tuple[int, int, int]] | None = None) -> dict[str, Any]:
    """The row of one decision (docs/analysis.md). Only the state masked to ``dec.seat``'s
    knowledge is searched; the true state is read for ``true_loss`` alone. ``exact``: the
    solved position's ``(code, score, settlement)`` per choice (``exact_values``): then
    ``true_loss`` is the exact double-dummy loss and the row says ``"exact": true``."""
    pol, eps, grow = continuation(settings.policy)
    params = param_table()
    params[ROLLOUT_ROW, :len(grow)] = grow
    seat = dec.seat
    trump = int(dec.st[S.S_TRUMP])
    codes = dec.codes
    n = len(codes)
    p = codes.index(dec.played)
    names = [notation(dec.kind, c, trump) for c in codes]
    row: dict[str, Any] = {
        "deal": dec.deal, "step": dec.step, "seat": seat, "player": player, "kind": dec.kind,
        "trick": dec.trick, "round": dec.round, "redeal": dec.redeal,
        "played": names[p], "best": names[p], "forced": n == 1, "values": [],
        "loss": 0.0, "lo": 0.0, "hi": 0.0, "half_width": 0.0, "mark": "", "true_loss": 0.0,
        "true_best": names[p], "exact": exact is not None and truth,
        "worlds": 0, "recheck_worlds": 0, "rechecked": [], "narrowing_rollouts": 0,
    }
    if n == 1:
        row["values"] = [{"choice": names[0], "value": None}]
        return row
    buf, fws, uws = _scratch()
    mst = np.empty(S.ST_SIZE, dtype=np.int64)
    mu = np.empty(S.U_SIZE, dtype=np.uint64)
    mask_into(dec.st, dec.u, seat, mst, mu)  # R9: what the seat knew, nothing else
    sd, dl = np.uint64(settings.seed), np.uint64(dec.deal)
    mu[S.U_KEY + S.STREAM_SAMPLE + seat] = stream_key(sd, dl, np.uint64(STREAM_ANALYSIS + dec.step))
    mu[S.U_CTR + S.STREAM_SAMPLE + seat] = 0
    cands = np.array(codes, dtype=np.int64)
    w1 = min(settings.samples, max(MAX_ROLLOUTS // n, 4))
    out = np.zeros((w1, n), dtype=np.float64)
    evaluate_choices(mst, mu, rules, seat, params, buf, fws, uws, cands, n, w1, pol, eps, 0,
                     out)
    means = out.mean(axis=0)
    cand, narrowed = _candidates(out, p, settings,
                                 lambda idx, w: outcomes(idx, w, codes, mst, mu, rules, seat,
                                                         params, pol, eps))
    k = len(cand)
    w2 = settings.recheck
    out2 = outcomes(cand + [p], w2, codes, mst, mu, rules, seat, params, pol, eps)
    dbar, lo_u, hi_u, j = max_interval(out2[:, :k] - out2[:, k:])
    loss = max(dbar, 0.0)
    lo = max(lo_u, 0.0)
    hi = max(hi_u, 0.0)
    row.update(values=[{"choice": names[i], "value": round(float(means[i]), 4)}
                       for i in range(n)],
               best=names[cand[j]] if dbar > 0 else names[p], loss=round(loss, 4),
               lo=round(lo, 4), hi=round(hi, 4), half_width=round((hi_u - lo_u) / 2, 4),
               mark=mark_of(loss, lo), worlds=w1, recheck_worlds=w2,
               rechecked=[names[i] for i in cand], narrowing_rollouts=narrowed)
    if truth and exact is not None:
        attacker = (seat & 1) == (int(dec.st[S.S_CALLER]) & 1)
        tl, bc = exact_loss(exact, dec.played, attacker)
        row.update(true_loss=round(tl, 4), true_best=names[codes.index(bc)])
    elif truth:
        st_t = dec.st.copy()
        u_t = dec.u.copy()
        u_t[S.U_KEY + S.STREAM_SAMPLE + seat] = stream_key(
            sd, dl, np.uint64(STREAM_ANALYSIS + (1 << 21) + dec.step))
        u_t[S.U_CTR + S.STREAM_SAMPLE + seat] = 0
        wt = min(settings.true_samples, max(MAX_ROLLOUTS // (2 * n), 2))
        out3 = np.zeros((wt, n), dtype=np.float64)
        evaluate_choices(st_t, u_t, rules, seat, params, buf, fws, uws, cands, n, wt, pol,
                         eps, 1, out3)
        tv = out3.mean(axis=0)
        tb = int(np.argmax(tv))
        if tv[tb] <= tv[p]:
            tb = p
        row.update(true_loss=round(float(tv[tb] - tv[p]), 4), true_best=names[tb])
    return row


HINT_ROLLOUTS = 32 * MAX_ROLLOUTS  # ``choice_values``: a give-back gets the full 128 worlds, not 7


def choice_values(dec: Decision, rules: np.ndarray, settings: Settings,
                  max_rollouts: int = HINT_ROLLOUTS) -> dict[str, Any]:
    """Every legal choice of ``dec`` valued from ``dec.seat``'s knowledge alone (R9: the state
    is masked first, so the true and the masked state give the same answer), all on the same
    worlds: the analysis of one decision that ``shuangkou human``'s ``hint`` shows
    (docs/human.md). ``dec.played`` is not read. The worlds are those of
    ``analyze_decision``'s first stage (the same stream, keyed by seed, deal and step), at
    most ``max_rollouts`` rollouts in all.

    Returns ``{"worlds", "best", "choices"}``: ``best`` the index of the highest mean; per
    choice (canonical order) ``choice`` (notation), ``value`` (mean settlement, points per
    player for the seat's team) and ``half`` (its 95% half-width), ``diff`` = value - best's
    value with its paired 95% interval ``dlo``, ``dhi`` (on the same worlds, so the best's
    lead is somewhat optimistic: the winner's curse that ``analyze``'s re-check removes)."""
    codes = dec.codes
    n = len(codes)
    names = [notation(dec.kind, c, int(dec.st[S.S_TRUMP])) for c in codes]
    if n == 1:
        return {"worlds": 0, "best": 0, "choices": [
            {"choice": names[0], "value": None, "half": None, "diff": 0.0, "dlo": 0.0,
             "dhi": 0.0}]}
    pol, eps, grow = continuation(settings.policy)
    params = param_table()
    params[ROLLOUT_ROW, :len(grow)] = grow
    seat = dec.seat
    buf, fws, uws = _scratch()
    mst = np.empty(S.ST_SIZE, dtype=np.int64)
    mu = np.empty(S.U_SIZE, dtype=np.uint64)
    mask_into(dec.st, dec.u, seat, mst, mu)  # R9: what the seat knew, nothing else
    mu[S.U_KEY + S.STREAM_SAMPLE + seat] = stream_key(np.uint64(settings.seed), np.uint64(dec.deal),
                                                      np.uint64(STREAM_ANALYSIS + dec.step))
    mu[S.U_CTR + S.STREAM_SAMPLE + seat] = 0
    w = min(settings.samples, max(max_rollouts // n, 4))
    out = np.zeros((w, n), dtype=np.float64)
    evaluate_choices(mst, mu, rules, seat, params, buf, fws, uws,
                     np.array(codes, dtype=np.int64), n, w, pol, eps, 0, out)
    means = out.mean(axis=0)
    b = int(np.argmax(means))
    rows = []
    for i in range(n):
        _, half = _mean_ci(out[:, i])
        dm, dh = _mean_ci(out[:, i] - out[:, b])
        rows.append({"choice": names[i], "value": round(float(means[i]), 4),
                     "half": round(half, 4), "diff": round(dm, 4),
                     "dlo": round(dm - dh, 4), "dhi": round(dm + dh, 4)})
    return {"worlds": w, "best": b, "choices": rows}


# --- records, jobs, summaries ----------------------------------------------------------------
@dataclass
class Task:
    decision: Decision
    rules: np.ndarray
    player: str
    record: int = 0  # index of the record among those analysed (a duplicate tournament's
    # records.jsonl holds each deal twice, teams swapped)
    exact: list[tuple[int, int, int]] | None = None  # the solved position (exact_values)


def run_task(args: tuple[Task, Settings]) -> dict[str, Any]:
    task, settings = args
    row = analyze_decision(task.decision, task.rules, settings, task.player,
                           exact=task.exact)
    return {"record": task.record, **row}


def _max_cards(u: np.ndarray) -> int:
    return max(int(np.uint64(u[S.U_ONCE + s])).bit_count()
               + int(np.uint64(u[S.U_TWICE + s])).bit_count() for s in range(4))


def exact_values(tasks: Sequence[Task], max_nodes: int
                 ) -> list[list[tuple[int, int, int]] | None]:
    """Per task, its play decision solved exactly (``(code, score, settlement)`` per choice)
    or None. The play decisions with at most ``sim.solve.REACH`` cards in every hand are
    solved from the last one back, with one solver and one table (positions of a deal share
    their subtrees), until one is not settled within ``max_nodes`` nodes: the earlier ones
    are larger, so they would cost the cap in vain. The tasks are those of one record, in
    step order; which ones are exact depends on them alone (not on ``--jobs``)."""
    out: list[list[tuple[int, int, int]] | None] = [None] * len(tasks)
    if max_nodes <= 0:
        return out
    solver: Solver | None = None
    for i in range(len(tasks) - 1, -1, -1):
        t = tasks[i]
        d = t.decision
        if d.kind != "play":
            continue
        if _max_cards(d.u) > REACH:
            break
        solver = solver or Solver(max_nodes=max_nodes)
        sol = solver.try_solve((d.st, d.u, t.rules))
        if sol is None:
            break
        out[i] = [(c.code, c.score, c.settlement) for c in sol.choices]
    return out


def _exact_job(args: tuple[int, list[Task], int]
               ) -> tuple[int, list[list[tuple[int, int, int]] | None]]:
    record, group, nodes = args
    return record, exact_values(group, nodes)


def _exact_groups(tasks: Sequence[Task], settings: Settings
                  ) -> list[tuple[int, list[Task], int]]:
    """The tasks of each record in step order, with the node cap: ``_exact_job``'s work
    (none when ``exact_nodes`` is 0)."""
    if settings.exact_nodes <= 0:
        return []
    groups: dict[int, list[Task]] = {}
    for t in tasks:
        groups.setdefault(t.record, []).append(t)
    return [(r, sorted(g, key=lambda t: t.decision.step), settings.exact_nodes)
            for r, g in groups.items()]


def _with_exact(tasks: Sequence[Task], groups: Sequence[tuple[int, list[Task], int]],
                solved: dict[int, list[list[tuple[int, int, int]] | None]]) -> list[Task]:
    """``tasks`` (same order) with the exact values ``solved`` found for their records."""
    by_step: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for r, g, _ in groups:
        for t, e in zip(g, solved[r]):
            if e is not None:
                by_step[(r, t.decision.step)] = e
    return [Task(t.decision, t.rules, t.player, t.record,
                 by_step.get((t.record, t.decision.step))) for t in tasks]


def select_records(path: str, deals: Sequence[int] | None,
                   validate: Any = None) -> list[dict[str, Any]]:
    """The records of ``path`` to analyze (``deals``: those deal indices, each must be there),
    each checked by ``validate`` (``check_record``). Reading never changes the file."""
    want = None if not deals else set(deals)
    out = []
    seen: set[int] = set()
    for rec in read_records(path):
        if want is None or rec.get("deal") in want:
            if validate is not None:
                check_record(rec, repr(str(path)), validate)
            out.append(rec)
            seen.add(rec.get("deal"))  # type: ignore[arg-type]
    if want is not None and want - seen:
        missing = sorted(want - seen)
        raise RecordError(f"deal(s) {', '.join(map(str, missing))} not in {str(path)!r}")
    if not out:
        raise RecordError(f"no records in {str(path)!r}")
    return out


def tasks_of(records: Iterable[dict[str, Any]], seats: Sequence[int] | None) -> list[Task]:
    out = []
    for i, rec in enumerate(records):
        if rec.get("void"):
            continue  # no settlement for anybody: nothing to lose (R11)
        rules = Rules.from_dict(rec["rules"]).array()
        for dec in decisions(rec):
            if seats is None or dec.seat in seats:
                out.append(Task(dec, rules, str(rec["seats"][dec.seat]), i))
    return out


def analyze_tasks(tasks: Sequence[Task], settings: Settings, jobs: int = 1,
                  progress: Any = None) -> list[dict[str, Any]]:
    """Rows of every task, in (record, step) order; ``jobs`` worker processes share them out
    (the rows do not depend on ``jobs``)."""
    continuation(settings.policy)  # a bad spec fails before any work
    rows: list[dict[str, Any]] = []
    groups = _exact_groups(tasks, settings)
    if jobs <= 1 or len(tasks) < 2:
        solved = dict(map(_exact_job, groups))
        work = [(t, settings) for t in _with_exact(tasks, groups, solved)]
        for w in work:
            rows.append(run_task(w))
            if progress:
                progress(len(rows), len(work))
    else:
        if not can_fork():  # pragma: no cover - Linux forks
            return analyze_tasks(tasks, settings, 1, progress)
        run_task((tasks[-1], settings))  # load the kernels once, before forking
        # the first record's exact values here (which loads the solver), the others' on
        # the workers
        solved = dict(map(_exact_job, groups[:1]))
        with ForkPool(jobs, lambda parent: None) as pool:
            solved.update(pool.map_unordered(_exact_job, groups[1:], ahead=2 * jobs))
            work = [(t, settings) for t in _with_exact(tasks, groups, solved)]
            for r in pool.map_unordered(run_task, work, ahead=4 * jobs):
                rows.append(r)
                if progress:
                    progress(len(rows), len(work))
    rows.sort(key=lambda r: (r["record"], r["step"]))
    return rows


def summarize(rows: Sequence[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Per ``key`` (``"record"``, i.e. per deal table, or ``"seat"``): decisions, choices
    (decisions with more than one legal choice), total and mean loss, marks, accuracy (share
    of the choices whose interval covers the best: ``lo`` = 0), the total ``true_loss`` and
    ``exact``, the decisions whose true loss is exact (solved double-dummy)."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    out = []
    for k in sorted(groups):
        g = groups[k]
        ch = [r for r in g if not r["forced"]]
        tot = sum(r["loss"] for r in g)
        out.append({key: k, "deal": g[0]["deal"], "players": sorted({r["player"] for r in g}),
                    "decisions": len(g), "choices": len(ch),
                    "loss": round(tot, 4), "mean_loss": round(tot / len(g), 4) if g else 0.0,
                    "marked_q": sum(r["mark"] == "?" for r in g),
                    "marked_qq": sum(r["mark"] == "??" for r in g),
                    "accuracy": round(sum(r["lo"] <= 0.0 for r in ch) / len(ch), 4)
                    if ch else 1.0,
                    "true_loss": round(sum(r["true_loss"] for r in g), 4),
                    "exact": sum(bool(r.get("exact")) for r in g)})
    return out


# --- terminal output -------------------------------------------------------------------------
def _loss_text(r: dict[str, Any]) -> str:
    return f"loss {r['loss']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]"


def _detail(r: dict[str, Any]) -> str:
    """``seat 0 4♥? loses 0.53 [0.28, 0.78]; best 10♥; true loss 0.42 (10♥)``: the loss
    and interval of the re-check (the first stage's ``values`` are in the JSON rows); an
    exact true loss says so: ``true loss 1.00 (exact; 10♥)``."""
    k = r["kind"]
    best = [choice_label(k, r["true_best"])] if r["true_loss"] > 0 else []
    tb = f" ({'; '.join((['exact'] if r.get('exact') else []) + best)})" \
        if best or r.get("exact") else ""
    return (f"seat {r['seat']} {choice_label(k, r['played'])}{r['mark']} loses "
            f"{r['loss']:.2f} [{r['lo']:.2f}, {r['hi']:.2f}]; best "
            f"{choice_label(k, r['best'])}; true loss {r['true_loss']:.2f}{tb}")


def render(rec: dict[str, Any], rows: Sequence[dict[str, Any]], settings: Settings) -> str:
    """A deal as ``shuangkou replay`` shows it, with each analysed decision's mark and loss
    beside it and the marked decisions spelt out."""
    seats = sorted({r["seat"] for r in rows})
    t = rec.get("tournament")
    table = (f" (matchup {t.get('matchup')}, orientation {t.get('orientation')})"
             if isinstance(t, dict) else "")
    exact = (f"exact true losses within {settings.exact_nodes:,} nodes"
             if settings.exact_nodes > 0 else "no exact true losses")
    out = [f"Deal {rec['deal']} of seed {rec['seed']}{table}: analysis of seat(s) "
           f"{', '.join(map(str, seats))} (continuation {settings.policy}, "
           f"{settings.samples} worlds, analysis seed {settings.seed}, {exact})",
           "Seats: " + ", ".join(f"{i}={clean(s, newlines=False)}"
                                 for i, s in enumerate(rec["seats"]))]
    calling = [r for r in rows if r["kind"] != "play"]
    if calling:
        out.append("")
        out.append("Calling (R6–R8), shows, give-backs and marked passes; loss "
                   "[95% interval] in settlement points:")
        passes = 0
        for r in calling:
            if r["kind"] == "show" and r["played"] is None and not r["mark"]:
                passes += 1
                continue
            where = f"round {r['round']:>2}" + (f" (redeal {r['redeal']})" if r["redeal"]
                                                else "")
            out.append(f"  {where}: seat {r['seat']} {choice_label(r['kind'], r['played'])}"
                       f"{r['mark']:<2} {_loss_text(r)}"
                       + (f"  best: {choice_label(r['kind'], r['best'])}" if r["loss"] > 0
                          else ""))
        if passes:
            out.append(f"  ({passes} unmarked pass(es) not listed)")
    if rec.get("trump") is None:
        return "\n".join(out)
    trump = rec["trump"]
    att = set(rec["attackers"])
    out.append("")
    out.append(f"Caller: seat {rec['caller']}; trump {trump}; hands at the first lead:")
    for i, h in enumerate(rec["hands"]):
        out.append(f"  seat {i} ({'attacker' if i in att else 'defender'}): "
                   f"{hand_line(h, trump)}")
    out.append("")
    tricks = list(rec["tricks"])
    cur = rec.get("current_trick") if rec.get("unfinished") else None
    if cur and cur.get("plays"):  # the trick in progress of an unfinished record
        tricks.append({"leader": cur["leader"], "plays": cur["plays"], "winner": None,
                       "points": None})
    first = min(((r["step"], r["trick"], r["seat"]) for r in rows
                 if r["kind"] == "play" and r.get("exact")), default=None)
    since = ""
    if first is not None:  # the first exact decision shown: a lead, or a later play
        k = (first[2] - tricks[first[1] - 1]["leader"]) % 4
        since = (f"; true losses exact from trick {first[1]}"
                 + (f"'s play {k + 1}" if k else "") + " on")
    out.append(f"Tricks (mark after the play; loss beside marked plays{since}):")
    plays = [r for r in rows if r["kind"] == "play"]
    by_pos: dict[tuple[int, int], dict[str, Any]] = {}
    for r in plays:
        by_pos[(r["trick"], r["seat"])] = r
    for n, tr in enumerate(tricks, 1):
        cells = []
        notes = []
        for k, p in enumerate(tr["plays"]):
            seat = (tr["leader"] + k) % 4
            r = by_pos.get((n, seat))
            m = r["mark"] if r else ""
            if m:
                notes.append(f"      {m:<2} {_detail(r)}")
            win = "*" if seat == tr["winner"] else ""
            cells.append(f"{seat}:{' '.join(pretty(c) for c in p)}{win}{m}")
        out.append(f"  {n:>2}. " + "  ".join(f"{c:<13}" for c in cells)
                   + (f" +{tr['points']}" if tr["points"] is not None else " (unfinished)"))
        out.extend(notes)
    if not rec.get("unfinished"):
        out.append("")
        out.append("Settlement (R24): " + ", ".join(f"seat {i} {v:+d}" for i, v in
                                                     enumerate(rec["settlement"])))
    out.append("")
    out.append(summary_table(summarize(rows, "seat"), "seat"))
    return "\n".join(out)


def lineup(seats: Sequence[str]) -> str:
    """A table's players as a card player reads them: ``greedy vs random`` (seats 0 & 2
    against 1 & 3) when partners play the same spec, else the four seats in order."""
    if seats[0] == seats[2] and seats[1] == seats[3]:
        return f"{seats[0]} vs {seats[1]}"
    return ",".join(seats)


def summary_table(summary: Sequence[dict[str, Any]], key: str) -> str:
    """The summary as a text table; per record, the deal index labels each row; per player
    (``key="player"``), the player alone."""
    label = "deal" if key == "record" else key
    first = "" if key == "player" else label
    head = (f"{first:>5}  {'player':<22} {'decisions':>9} {'choices':>7} {'loss':>7} "
            f"{'per dec.':>8} {'?':>3} {'??':>3} {'accuracy':>8} {'true loss':>9} "
            f"{'exact':>5}")
    lines = [head]
    for s in summary:
        lines.append(f"{'' if key == 'player' else s[label]:>5}  "
                     f"{','.join(s['players'])[:22]:<22} {s['decisions']:>9} "
                     f"{s['choices']:>7} {s['loss']:>7.2f} {s['mean_loss']:>8.3f} "
                     f"{s['marked_q']:>3} {s['marked_qq']:>3} {s['accuracy']:>8.1%} "
                     f"{s['true_loss']:>9.2f} {s.get('exact', 0):>5}")
    return "\n".join(lines)
