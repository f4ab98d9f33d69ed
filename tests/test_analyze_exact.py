"""``shuangkou analyze`` with exact true losses in the last tricks (docs/analysis.md, step 7):
the double-dummy solver's loss where it settles a play decision, rollouts elsewhere."""

from __future__ import annotations

import json

import pytest

from sim.cli import main
from sim.loops.runner import iter_records, make_seats
from sim.record import write_records
from sim.solve import Solver
from sim.tools import analyze as A

FAST = A.Settings(samples=4, seed=1)


@pytest.fixture(scope="module")
def rec() -> dict:
    return next(r for r in iter_records(5, 0, 3, make_seats("greedy"))
                if not r["void"] and r["tricks"])


@pytest.fixture(scope="module")
def tail(rec) -> list[A.Task]:
    """The deal's decisions of the last five tricks and the first three plays."""
    tasks = A.tasks_of([rec], None)
    last = len(rec["tricks"])
    plays = [t for t in tasks if t.decision.kind == "play"]
    return plays[:3] + [t for t in plays if t.decision.trick > last - 5]


@pytest.fixture(scope="module")
def rows(tail) -> list[dict]:
    return A.analyze_tasks(tail, FAST)


def _direct_loss(task: A.Task) -> tuple[float, list[str]]:
    """The exact loss computed here from the solver: best settlement (ties: best score for
    the seat's side, ``Solution.best``) minus the settlement of the play made."""
    d = task.decision
    sol = Solver().solve((d.st, d.u, task.rules))
    best = sol.best
    played = next(c for c in sol.choices if c.code == d.played)
    return float(best.settlement - played.settlement), best.cards


def test_the_last_decisions_are_exact_and_equal_the_solvers_loss(tail, rows):
    last = max(r["trick"] for r in rows)
    end = [(t, r) for t, r in zip(tail, rows) if r["trick"] > last - 5]
    assert len(end) == 20
    for t, r in end:
        assert (r["deal"], r["step"]) == (t.decision.deal, t.decision.step)
        assert r["exact"] is True
        loss, best = _direct_loss(t)
        assert r["true_loss"] == loss
        if loss > 0:
            assert r["true_best"] == best


def test_the_first_decisions_are_not_exact(rows):
    first = [r for r in rows if r["trick"] == 1]
    assert len(first) == 3
    assert not any(r["exact"] for r in first)


def test_a_blunder_in_the_last_tricks_has_its_exact_loss():
    """A play replaced by the worst choice (by the solver) in a task: its row's true loss is
    the exact difference, and a rollout-free value (no noise: the same for any seed)."""
    pick = None
    # random play: greedy's last tricks rarely leave a play that changes the settlement
    recs = [r for r in iter_records(5, 0, 4, make_seats("random")) if not r["void"]]
    for t in A.tasks_of(recs, None):
        d = t.decision
        if (d.kind == "play" and d.trick > len(recs[t.record]["tricks"]) - 4
                and len(d.codes) > 1):
            sol = Solver().solve((d.st, d.u, t.rules))
            worst = min(sol.choices, key=lambda c: c.settlement)
            if worst.settlement < sol.best.settlement:
                pick = (t, worst, sol)
                break
    assert pick is not None, "no decision of the last tricks could lose settlement"
    t, worst, sol = pick
    d = t.decision
    d2 = A.Decision(d.deal, d.step, d.seat, d.kind, d.st, d.u, d.codes, worst.code, d.trick,
                    d.round, d.redeal)
    task = A.Task(d2, t.rules, t.player, t.record)
    for seed in (1, 2):
        r = A.analyze_tasks([task], A.Settings(samples=4, seed=seed))[0]
        assert r["exact"] is True
        assert r["true_loss"] == sol.best.settlement - worst.settlement > 0
        assert r["true_best"] == sol.best.cards


def test_exact_nodes_0_gives_no_exact_rows(tail):
    rows = A.analyze_tasks(tail[-8:], A.Settings(samples=4, seed=1, exact_nodes=0))
    assert rows and not any(r["exact"] for r in rows)


def test_the_cap_stops_the_walk_back(tail):
    """A tiny cap settles only the smallest positions: the rows from the end back to the
    first unsettled one are exact, none before it."""
    rows = A.analyze_tasks(tail[-12:], A.Settings(samples=4, seed=1, exact_nodes=20))
    flags = [r["exact"] for r in rows]
    assert flags[-1] and not flags[0]
    k = flags.index(True)
    assert all(flags[k:]) and not any(flags[:k])


def test_cli_exact_column_and_rows(rec, tmp_path, capsys):
    path = str(tmp_path / "r.jsonl")
    write_records(path, [rec])
    out_json = str(tmp_path / "rows.jsonl")
    capsys.readouterr()
    assert main(["analyze", path, "--deal", str(rec["deal"]), "--seat", "0", "--samples",
                 "2", "--json", out_json]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(x) for x in open(out_json, encoding="utf-8")]
    n = sum(r["exact"] for r in rows)
    assert 0 < n < len(rows)
    assert "exact true losses within 2,000,000 nodes" in out
    assert "true losses exact from trick" in out
    head = next(ln for ln in out.splitlines() if ln.strip().startswith("seat  player"))
    assert head.split()[-1] == "exact"
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("0  "))
    assert int(line.split()[-1]) == n
    capsys.readouterr()
    assert main(["analyze", path, "--deal", str(rec["deal"]), "--seat", "0", "--samples",
                 "2", "--exact-nodes", "0", "--json", "-"]) == 0
    rows0 = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert len(rows0) == len(rows) and not any(r["exact"] for r in rows0)


def test_exact_loss_ties_keep_the_play_made():
    # (code, score, settlement): a tie in settlement loses nothing; the score breaks it
    ex = [(0, 100, 1), (1, 120, 1), (2, 60, -1)]
    assert A.exact_loss(ex, 0, attacker=True) == (0.0, 1)  # no loss; the exact best
    assert A.exact_loss(ex, 1, attacker=False) == (0.0, 0)
    assert A.exact_loss(ex, 2, attacker=True) == (2.0, 1)
    assert A.exact_loss(ex, 2, attacker=False) == (2.0, 0)  # defenders: the lower score
    assert A.exact_loss(ex, 1, attacker=True) == (0.0, 1)  # the best itself


def test_same_rows_for_any_jobs(rec):
    """The exact values of each record are found on the workers (one per record) or here:
    the same rows either way."""
    recs = [r for r in iter_records(5, 0, 3, make_seats("greedy")) if not r["void"]]
    tasks = [t for t in A.tasks_of(recs, [1])
             if t.decision.kind == "play" and t.decision.trick > len(recs[t.record]["tricks"]) - 3]
    one = A.analyze_tasks(tasks, FAST, jobs=1)
    assert len({r["record"] for r in one}) >= 2 and all(r["exact"] for r in one)
    assert A.analyze_tasks(tasks, FAST, jobs=2) == one
