"""The command line: play, replay, validate, bench, strategies; exit 2 on bad input."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from sim.cli import main


def run(*args):
    return main([str(a) for a in args])


def test_play_record_replay_validate(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert run("play", "--seed", 7, "--deals", 5, "--seats", "random,random,random,random",
               "--record", out) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[3])["deal"] == 3
    one = tmp_path / "one.jsonl"
    assert run("play", "--seed", 7, "--first-deal", 3, "--deals", 1, "--record", one) == 0
    assert one.read_text().splitlines() == [lines[3]]  # seed + deal reproduce a deal alone
    capsys.readouterr()
    assert run("replay", out, "--deal", 3) == 0
    text = capsys.readouterr().out
    assert "Deal 3 of seed 7" in text and "Settlement (R24)" in text and "主[" in text
    assert run("validate", out) == 0
    assert "5 record(s) checked with the reference engine: all valid" in capsys.readouterr().out


def test_play_summary(capsys):
    assert run("play", "--seed", 7, "--deals", 20) == 0
    text = capsys.readouterr().out
    assert "deals: 20 (seed 7, first deal 0), void: 0" in text
    assert "mean attacker score" in text and "settlement per seat" in text


def test_gz_records(tmp_path, capsys):
    out = tmp_path / "out.jsonl.gz"
    assert run("play", "--seed", 1, "--deals", 3, "--record", out) == 0
    with gzip.open(out, "rt") as f:
        assert len(f.read().splitlines()) == 3
    assert run("validate", out) == 0


def test_validate_reports_corruption_exit_1(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    run("play", "--seed", 2, "--deals", 2, "--record", out)
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    recs[1]["tricks"][4]["winner"] = (recs[1]["tricks"][4]["winner"] + 1) % 4
    out.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    capsys.readouterr()
    assert run("validate", out) == 1
    text = capsys.readouterr().out
    # tricks are numbered from 1, as replay numbers them: tricks[4] is "trick 5"
    assert "deal 1, trick 5" in text and "1 with violations" in text


@pytest.mark.parametrize("args, message", [
    (["play", "--seats", "randm"], "unknown strategy 'randm': available are"),
    (["play", "--seats", "random(show_prob=3)"], "show_prob=3"),
    (["play", "--seed", "-4"], "seed -4 is out of range"),
    (["play", "--seed", "abc"], "seed 'abc' is not an integer"),
    (["play", "--rule", "kitty=3"], "unknown rules variant 'kitty': allowed are max_redeals"),
    (["play", "--seats", "random,random,random"], "give 1, 2 (team A, team B) or 4"),
    (["replay", "/nonexistent.jsonl"], "does not exist"),
])
def test_bad_input_exit_2_one_line(args, message, capsys):
    assert run(*args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_corrupt_record_file_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "shuangkou-record/1"\n')
    assert run("validate", bad) == 2
    assert "line 1: not JSON" in capsys.readouterr().err


def test_argparse_errors_exit_2():
    with pytest.raises(SystemExit) as e:
        main(["play", "--deals", "0"])
    assert e.value.code == 2


def test_main_puts_the_garbage_collector_back_as_it_was(monkeypatch):
    # a command runs with its own collection thresholds (sim.cli.GC_THRESHOLDS: few, cheap
    # collections); main() called from Python (tests, notebooks) gives the caller's back, also
    # when argparse exits, and never turns the collector off
    import gc

    import sim.cli

    during = []
    monkeypatch.setattr(sim.cli.tools, "cmd_strategies", lambda args: during.append(
        (gc.get_threshold(), gc.isenabled())) or 0)
    old = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        assert run("strategies") == 0
        assert during == [(sim.cli.GC_THRESHOLDS, True)]
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(SystemExit):
            main(["play", "--deals", "0"])
        assert gc.get_threshold() == (700, 10, 10) and gc.isenabled()
    finally:
        gc.set_threshold(*old)


# --- rules variant ranges (docs/rules.md, Variants) ------------------------------------------
@pytest.mark.parametrize("rule, shown", [
    ("settle_unit=4000000000000000000", "settle_unit=4000000000000000000"),
    ("kou_di_pair=100000000", "kou_di_pair=100000000"),
    ("settle_unit=99999999999999999999", "settle_unit=99999999999999999999"),
    ("start_skill=-99999999999999999999", "start_skill=-99999999999999999999"),
    ("max_redeals=1001", "max_redeals=1001"),
])
def test_rule_out_of_range_one_line(rule, shown, capsys):
    assert run("play", "--deals", 2, "--rule", rule) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and shown in err and "out of range" in err
    assert "<=" in err and ">=" in err


def test_rule_out_of_range_in_config(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('players = ["random", "greedy"]\ndeals = 10\n[rules]\n'
                   'kou_di_pair = 100000000\n')
    assert run("tournament", cfg, "--out", tmp_path / "r") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "rules.kou_di_pair" in err and "100000000" in err and "<= 31" in err


def test_rule_ranges_documented_and_extremes_play(capsys):
    import re
    from pathlib import Path

    from sim.rules import RANGES

    text = Path(__file__).resolve().parents[1].joinpath("docs", "rules.md").read_text()
    for name, (lo, hi) in RANGES.items():
        m = re.search(rf"^\| `{name}` \| [^|]+ \| (.+?) … (.+?) \|$", text, re.M)
        assert m, name
        num = [int(x.replace(",", "").replace("−", "-")) for x in m.groups()]
        assert num == [lo, hi], name
    # the largest settlements the ranges allow play and tally exactly
    extreme = ["kou_di_single=31", "kou_di_pair=31", "settle_step=1", "settle_unit=10",
               "defender_cap=1000", "start_skill=1000000000", "max_redeals=1000"]
    assert run("play", "--deals", 50, *[a for r in extreme for a in ("--rule", r)]) == 0


def test_bench_small(capsys):
    assert run("bench", "--deals", 2000, "--repeats", 1, "--reference-deals", 5,
               "--python-deals", 5, "--no-openspiel") == 0
    text = capsys.readouterr().out
    for what in ("compiled random deals", "legal-play generations", "trick evaluations",
                 "python-tier random deals", "reference engine deals"):
        assert what in text


def test_strategies_listing(capsys):
    assert run("strategies") == 0
    assert "random" in capsys.readouterr().out


def test_console_script_entry_point():
    r = subprocess.run([sys.executable, "-m", "sim.cli", "play", "--deals", "2"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "deals: 2" in r.stdout


# --- argparse: one line, exit 2 ------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["play", "--deals", "-1"], "'-1' must be >= 1"),
    (["play", "--deals", "0"], "'0' must be >= 1"),
    (["play", "--deals", "2", "--nope"], "unrecognized arguments: --nope"),
    (["tournament"], "the following arguments are required: config"),
])
def test_argparse_error_is_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "usage:" not in err
    assert err.startswith(f"shuangkou {args[0]}: error: ")


def test_version_and_help_on_every_option(capsys):
    import argparse

    from sim.cli import build_parser

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == "shuangkou 0.1.0"
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for p in (parser, *subs.choices.values()):
        for action in p._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert action.help, (p.prog, action.dest)


def test_validate_empty_file_says_no_records(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert run("validate", empty) == 1
    out = capsys.readouterr().out
    assert "no records" in out and "all valid" not in out


# --- deal range ----------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["play", "--first-deal", 2**63 - 1, "--deals", 2],
    ["play", "--first-deal", 2**63, "--deals", 1],
])
def test_deals_beyond_the_deal_range(args, capsys):
    assert run(*args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2**63" in err


@pytest.mark.parametrize("deals", [2**63 - 1, 2**63 + 1, 10**11 + 1])
def test_estimate_deals_out_of_range_one_line(deals, capsys):
    """estimate --deals 2**63-1 was a MemoryError, and out of range it named --first-deal,
    which estimate does not have: one line naming --deals and its range."""
    assert run("estimate", "--hand", "BJ", "--deals", deals) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--deals {deals} must be an integer in 1 … 10**11" \
        in err and "--first-deal" not in err, err


def test_last_deal_index_plays(tmp_path, capsys):
    out = tmp_path / "last.jsonl"
    assert run("play", "--first-deal", 2**63 - 1, "--deals", 1, "--record", out) == 0
    assert run("validate", out) == 0


# --- play --record: replace only on success, one-line file errors ----------------------------
def test_record_failure_keeps_existing_file(tmp_path, capsys, monkeypatch):
    from strategies.example import Cautious

    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")

    calls = {"n": 0}
    real = Cautious.choose

    def flaky(self, obs, legal):
        calls["n"] += 1
        if calls["n"] > 120:  # past the first deal (about 56 decisions per team and deal)
            raise RuntimeError("boom")
        return real(self, obs, legal)

    monkeypatch.setattr(Cautious, "choose", flaky)
    assert run("play", "--plugin", "strategies.example", "--seats", "cautious,random",
               "--deals", 5, "--record", out) == 2
    captured = capsys.readouterr()
    assert "boom" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert out.read_text() == "precious\n"  # not truncated
    partial = tmp_path / "out.jsonl.partial"
    kept = partial.read_text().splitlines()
    assert kept and all(json.loads(x)["deal"] == i for i, x in enumerate(kept))
    assert "out.jsonl.partial" in captured.out


def test_record_success_replaces_and_leaves_no_partial(tmp_path, capsys):
    out = tmp_path / "out.jsonl.gz"
    out.write_text("old")
    assert run("play", "--deals", 2, "--record", out) == 0
    with gzip.open(out, "rt") as f:
        assert len(f.read().splitlines()) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl.gz"]


def test_record_to_stdout(capsys):
    assert run("play", "--seed", 7, "--deals", 3, "--record", "-") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["deal"] for x in lines] == [0, 1, 2]


def _disk_full_after_first_write(monkeypatch):
    import errno

    import sim.record

    real = sim.record.open_text

    class Full:
        def __init__(self, f):
            self.f, self.n = f, 0

        def write(self, text):
            self.n += 1
            if self.n > 1:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.f.write(text)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    monkeypatch.setattr(sim.record, "open_text", lambda *a, **k: Full(real(*a, **k)))


@pytest.mark.parametrize("case", ["directory", "under_a_file", "read_only", "disk_full"])
def test_record_file_errors_one_line(case, tmp_path, capsys, monkeypatch):
    (tmp_path / "afile").write_text("x")
    target = {"directory": tmp_path, "under_a_file": tmp_path / "afile" / "out.jsonl",
              "read_only": tmp_path / "ro" / "out.jsonl",
              "disk_full": tmp_path / "out.jsonl"}[case]
    if case == "read_only":
        import builtins

        (tmp_path / "ro").mkdir()
        real_open = builtins.open

        def ro_open(path, *a, **k):  # root ignores chmod: refuse as a read-only folder would
            if str(path).startswith(str(tmp_path / "ro")):
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *a, **k)

        monkeypatch.setattr(builtins, "open", ro_open)
    if case == "disk_full":
        _disk_full_after_first_write(monkeypatch)
    assert run("play", "--deals", 3, "--record", target) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write record file" in err
    assert not list(tmp_path.rglob("*.partial"))  # the partial file is cleaned up


@pytest.mark.parametrize("case", ["directory", "under_a_file", "disk_full"])
def test_bench_json_errors_one_line(case, tmp_path, capsys, monkeypatch):
    import errno

    import sim.tools.bench

    (tmp_path / "afile").write_text("x")
    target = {"directory": tmp_path, "under_a_file": tmp_path / "afile" / "b.json",
              "disk_full": tmp_path / "b.json"}[case]
    measured = []
    monkeypatch.setattr(sim.tools.bench, "run", lambda **k: measured.append(1) or {"x": 1})
    if case == "disk_full":
        def full(res):
            raise OSError(errno.ENOSPC, "No space left on device")
        import builtins

        real_open = builtins.open

        class FullFile:
            def __init__(self, f):
                self.f = f

            def write(self, text):
                self.f.write(text[:10])
                raise OSError(errno.ENOSPC, "No space left on device")

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()

        monkeypatch.setattr(builtins, "open", lambda p, *a, **k: FullFile(real_open(p, *a, **k))
                            if str(p).endswith(".partial") else real_open(p, *a, **k))
    assert run("bench", "--json", target) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write JSON file" in err
    assert measured == ([1] if case == "disk_full" else [])  # bad paths refused up front
    assert not list(tmp_path.rglob("*.partial"))


def test_config_not_utf8(tmp_path, capsys):
    cfg = tmp_path / "latin1.toml"
    cfg.write_bytes('name = "caf\u00e9"\nplayers = ["random", "greedy"]\n'.encode("latin-1"))
    assert run("tournament", cfg, "--out", tmp_path / "r") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not UTF-8" in err


# --- replay: malformed records are one line -------------------------------------------------
@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.update(tricks=[{"leader": 0}]), "trick 1"),
    (lambda r: r.update(hands="nope"), "Expected `array`, got `str` - at `$.hands`"),
    (lambda r: r.update(attackers=[0]), "attackers"),
    (lambda r: r["tricks"][2].update(points=None), "trick 3"),
])
def test_replay_malformed_record_one_line(mutate, message, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    run("play", "--seed", 3, "--deals", 1, "--record", out)
    rec = json.loads(out.read_text())
    mutate(rec)
    out.write_text(json.dumps(rec) + "\n")
    capsys.readouterr()
    assert run("replay", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_replay_deeply_nested_json_one_line(tmp_path, capsys):
    bad = tmp_path / "deep.jsonl"
    bad.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    for cmd in ("replay", "validate"):
        assert run(cmd, bad) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "nested too deeply" in err


def test_replay_and_validate_number_tricks_alike(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    run("play", "--seed", 2, "--deals", 1, "--record", out)
    rec = json.loads(out.read_text())
    rec["tricks"][0]["points"] += 5
    out.write_text(json.dumps(rec) + "\n")
    capsys.readouterr()
    run("validate", out)
    assert "deal 0, trick 1: points" in capsys.readouterr().out
    assert run("replay", out) == 2  # an impossible record is refused, naming trick 1 too
    assert "deal 0, trick 1: points" in capsys.readouterr().err
    rec["tricks"][0]["points"] -= 5
    out.write_text(json.dumps(rec) + "\n")
    run("replay", out)
    assert "\n   1. " in capsys.readouterr().out  # replay's first trick is 1 too


# --- --quiet, --debug ------------------------------------------------------------------------
def test_play_quiet_prints_the_final_line_only(capsys):
    assert run("play", "--deals", 3, "--quiet") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("settlement per seat")


def test_debug_shows_the_bots_traceback(capsys, monkeypatch):
    from strategies.example import Cautious

    def broken(self, obs, legal):
        raise RuntimeError("bot bug here")

    monkeypatch.setattr(Cautious, "choose", broken)
    args = ["play", "--plugin", "strategies.example", "--seats", "cautious,random", "--deals", 1]
    assert run(*args) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert run("--debug", *args) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken" in err and "bot bug here" in err
    assert err.strip().splitlines()[-1].startswith("shuangkou play: error: ")


# --- tournament: a second run, --force, --quiet, --out errors -------------------------------
def _tiny(tmp_path, deals=20):
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(f'players = ["greedy", "random"]\ndeals = {deals}\nseed = 3\n'
                   '[run]\nchunk_size = 10\nprogress = false\n[output]\nplots = false\n')
    return cfg


def test_tournament_second_run_rerenders_then_force_reruns(tmp_path, capsys):
    cfg, out = _tiny(tmp_path), tmp_path / "r"
    assert run("tournament", cfg, "--out", out) == 0
    summary = (out / "summary.json").read_text()
    run_json = (out / "run.json").read_text()
    capsys.readouterr()
    (out / "summary.json").unlink()
    # the same finished run again: nothing replayed, tables and report written again
    assert run("tournament", cfg, "--out", out) == 0
    text = capsys.readouterr().out
    assert "already holds this finished run" in text and "--force" in text
    assert (out / "summary.json").read_text() == summary
    assert (out / "run.json").read_text() == run_json  # the run's timings are kept
    # a different config needs --force (or another --out)
    assert run("tournament", cfg, "--out", out, "--deals", 30) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--force" in err and "deals" in err
    assert run("tournament", cfg, "--out", out, "--deals", 30, "--force") == 0
    assert json.loads((out / "config.json").read_text())["deals"] == 30
    assert len(list((out / "chunks").glob("*.npz"))) == 3


def test_tournament_unfinished_run_names_resume_and_force(tmp_path, capsys):
    from sim.tournament.config import load_config
    from sim.tournament.run import run_tournament

    cfg, out = _tiny(tmp_path, deals=40), tmp_path / "r"
    run_tournament(load_config(cfg, {"output.dir": str(out)}), progress=False, stop_after=1)
    assert run("tournament", cfg, "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--resume" in err and "--force" in err
    assert run("tournament", cfg, "--out", out, "--resume", "--force") == 2
    assert run("tournament", cfg, "--out", out, "--resume", "--quiet") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("results in ")


@pytest.mark.parametrize("case", ["file", "under_a_file"])
def test_tournament_out_errors_one_line(case, tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" if case == "file" else tmp_path / "afile" / "r"
    assert run("tournament", _tiny(tmp_path), "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write results folder" in err


def test_estimate_quiet_prints_the_final_line_only(capsys):
    assert run("estimate", "--hand", "BJ BJ", "--deals", 200, "--quiet") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("this hand is worth +")
    assert lines[0].endswith("points per deal over an average hand for seat 0")


def test_tournament_disk_full_one_line_no_partial(tmp_path, capsys, monkeypatch):
    import errno

    import numpy as np

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    monkeypatch.setattr(np, "savez_compressed", full)
    out = tmp_path / "r"
    assert run("tournament", _tiny(tmp_path), "--out", out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "No space left on device" in err
    assert not list((out / "chunks").glob(".tmp-*"))  # the partial chunk file is removed


# --- issue 19: repeated options, encodings, received text -----------------------------------
@pytest.mark.parametrize("args, message", [
    (["estimate", "--hand", "Kh", "--hand", "BJ"], "--hand is given twice"),
    (["estimate", "--hand", "Kh", "--seat", "1", "--seat", "2"], "--seat is given twice"),
    (["human", "--seat", "1", "--seat", "2"], "--seat is given twice"),
])
def test_repeated_single_options_are_refused(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_the_same_rule_twice_is_refused_distinct_rules_repeat(capsys):
    assert run("play", "--deals", 1, "--rule", "max_redeals=5", "--rule", "max_redeals=7") == 2
    err = capsys.readouterr().err.strip()
    assert "--rule max_redeals is given twice ('max_redeals=5' and 'max_redeals=7')" in err
    assert len(err.splitlines()) == 1
    assert run("play", "--deals", 1, "--rule", "max_redeals=5", "--rule", "kou_di_pair=6") == 0


@pytest.mark.parametrize("cmd", [["play"], ["estimate", "--hand", "BJ"], ["human"],
                                 ["tournament", "configs/quick.toml"]])
def test_a_fractional_seed_is_refused(cmd, capsys, tmp_path):
    assert run(*cmd, "--seed", "1.5") == 2
    err = capsys.readouterr().err.strip()
    assert "seed '1.5' is not an integer: use 0 … 2**64-1" in err and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())


def _cli(*args, env=None, cwd=None):
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-m", "sim.cli", *map(str, args)], cwd=cwd or root,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": root, **(env or {})})


def test_an_ascii_terminal_gets_ascii_not_a_traceback(tmp_path):
    """PYTHONIOENCODING=ascii: '≥', suits, '…' come out in ASCII; nothing raises."""
    ascii_env = {"PYTHONIOENCODING": "ascii"}
    p = _cli("estimate", "--hand", "Kh Kh", "--deals", 500, env=ascii_env)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert "(P >= 120:" in p.stdout.decode("ascii")
    rec = tmp_path / "r.jsonl"
    assert _cli("play", "--deals", 1, "--record", rec, env=ascii_env).returncode == 0
    p = _cli("replay", rec, env=ascii_env)
    out = p.stdout.decode("ascii")
    assert p.returncode == 0 and "Calling (R6-R8):" in out and "trump[" in out, p.stderr
    p = _cli("play", "--seed", "-1", env=ascii_env)
    assert p.returncode == 2 and p.stderr.decode("ascii").strip().endswith("use 0 ... 2**64-1")


def test_received_seat_names_reach_the_terminal_escaped(tmp_path, capsys):
    """A record from elsewhere with an escape sequence or a lone surrogate in a seat name:
    replay shows it escaped (never raw, never a UnicodeEncodeError)."""
    out = tmp_path / "r.jsonl"
    assert run("play", "--deals", 1, "--record", out) == 0
    rec = json.loads(out.read_text())
    rec["seats"][1] = "\ud800x"
    rec["seats"][2] = "\x1b[2J\x1b]0;title\x07\nfake line"
    out.write_text(json.dumps(rec) + "\n")
    capsys.readouterr()
    assert run("replay", out) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text
    assert "1=\\ud800x, 2=\\x1b[2J\\x1b]0;title\\x07\\x0afake line, 3=" in text
    p = _cli("replay", out)  # a real stdout too
    assert p.returncode == 0 and b"\\ud800x" in p.stdout and b"\x1b" not in p.stdout


def test_analyze_shows_received_seat_names_escaped(tmp_path, capsys):
    """analyze of a record from elsewhere: its seat names (in the deal's header and the
    per-deal table) come out escaped, as in replay (a lone surrogate was a UnicodeEncodeError
    traceback after the whole analysis, an escape sequence reached the terminal raw)."""
    out = tmp_path / "r.jsonl"
    assert run("play", "--deals", 2, "--record", out) == 0
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    for rec in recs:
        rec["seats"][1] = "\ud800x"
        rec["seats"][2] = "\x1b[2J\x1b]0;title\x07\nfake line"
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    capsys.readouterr()
    assert run("analyze", out, "--samples", 4) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text
    assert "1=\\ud800x, 2=\\x1b[2J\\x1b]0;title\\x07\\x0afake line, 3=" in text
    assert "Per deal" in text and "\ud800" not in text


def test_a_c_locale_stdout_never_raises_on_a_lone_surrogate():
    """Under the C locale Python's stdout uses 'surrogateescape', which cannot write a lone
    high surrogate either: the commands' streams replace it instead of raising."""
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("from sim.core.console import graceful_streams\n"
            "with graceful_streams():\n    print('a\\ud800b')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                       env={**env, "PYTHONPATH": root, "LC_ALL": "C"})
    assert p.returncode == 0 and p.stdout.strip() == b"a?b", p.stderr


def test_error_lines_escape_received_text(tmp_path, capsys):
    """An error quoting a value from a received file prints it escaped, on one line."""
    out = tmp_path / "r.jsonl"
    run("play", "--deals", 1, "--record", out)
    rec = json.loads(out.read_text())
    rec["trump"] = "\x1b[2J"
    out.write_text(json.dumps(rec) + "\n")
    capsys.readouterr()
    assert run("replay", out) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1, err


def test_report_tables_echo_received_names_escaped(capsys):
    """Tables of a results folder (names from a config that may come from elsewhere) reach
    the terminal with control characters escaped."""
    from sim.cli.tournament import _echo

    _echo("| mybot(label='\x1b[2J\x1b]0;x\x07') | +1.0 |\n| next |")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "mybot(label='\\x1b[2J\\x1b]0;x\\x07')" in out and "|\n| next |" in out


PATH_BOT = '''
from strategies.random import RandomStrategy


class PathBot(RandomStrategy):
    """random, loaded from a file path."""
    name = "pathbot_t"
'''


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["fork", "loky"])
def test_tournament_workers_load_a_plugin_file(tmp_path, backend):
    """--plugin FILE.py in a tournament: fresh worker processes (loky) load the same file."""
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "pathbot_t.py").write_text(PATH_BOT)
    cfg = tmp_path / "t.toml"
    cfg.write_text('name = "p"\nplayers = ["pathbot_t", "greedy"]\ndeals = 100\n'
                   '[run]\nchunk_size = 25\n')
    work = tmp_path / "work"
    work.mkdir()
    p = _cli("tournament", cfg, "--plugin", "../bots/pathbot_t.py", "--out", tmp_path / "o",
             "--no-plots", "--no-progress", "--jobs", 2, "--force-jobs", "--backend", backend,
             cwd=work)
    assert p.returncode == 0, p.stderr
    assert b"greedy beats pathbot_t" in p.stdout


def test_bidirectional_controls_in_received_text_are_escaped():
    """A seat name with U+202E (right-to-left override) would print reversed and spoof what
    follows it; received text shows it as an escape, like a control character."""
    from sim.core.console import clean

    name = "bob\u202etxt.exe\u2066x\u200f"
    out = clean(name)
    assert out == "bob\\u202etxt.exe\\u2066x\\u200f"
    assert clean("名字 ♥ ok") == "名字 ♥ ok"  # printable text, CJK and suits pass unchanged
    assert clean(name, newlines=False) == out


# --- issue 32: every numeric option has a documented upper bound, refused up front ------------
BOUNDED = [  # (argv before the option, option, the bound as docs/cli.md writes it, bound)
    (["play"], "--deals", "1,000,000,000,000", 10**12),
    (["play"], "--timeout", "86,400", 86_400),
    (["replay", "x.jsonl"], "--deal", "9,223,372,036,854,775,807", 2**63 - 1),
    (["analyze", "x.jsonl"], "--deal", "9,223,372,036,854,775,807", 2**63 - 1),
    (["analyze", "x.jsonl"], "--samples", "4,096", 4096),
    (["analyze", "x.jsonl"], "--jobs", "1,024", 1024),
    (["human"], "--deals", "10,000", 10_000),
    (["human"], "--timeout", "86,400", 86_400),
    (["tournament", "x.toml"], "--deals", "1,000,000,000,000", 10**12),
    (["tournament", "x.toml"], "--jobs", "4,096", 4096),
    (["tournament", "x.toml"], "--chunk-size", "10,000,000", 10_000_000),
    (["estimate", "--hand", "BJ"], "--jobs", "1,024", 1024),
]


@pytest.mark.parametrize("before, option, shown, bound", BOUNDED,
                         ids=[f"{b[0]} {o}" for b, o, _, _ in BOUNDED])
@pytest.mark.parametrize("past", ["next", "10**30", "10,000 digits"])
def test_numeric_options_are_bounded_up_front(before, option, shown, bound, past, capsys):
    value = {"next": str(bound + 1), "10**30": str(10**30), "10,000 digits": "9" * 10_000}[past]
    with pytest.raises(SystemExit) as e:
        main([*before, option, value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"argument {option}:" in err and shown in err, err
    doc = {2**63 - 1: "0 … 2**63-1"}.get(bound, f"… {shown}")
    assert doc in " ".join(_DOC_CLI.split()), f"docs/cli.md does not give {option}'s bound"


_DOC_CLI = (__import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "cli.md"
            ).read_text(encoding="utf-8")


def test_bounds_in_the_cli_agree_with_the_code():
    from sim.cli import options as cli
    from sim.human import check_samples
    from sim.tools import estimate
    from sim.tournament import config

    assert cli.MAX_ESTIMATE_DEALS == estimate.MAX_DEALS
    assert cli.MAX_CLI_DEALS == config.MAX_CONFIG_DEALS
    from sim.errors import ConfigError

    check_samples(cli.MAX_SAMPLES)
    with pytest.raises(ConfigError):
        check_samples(cli.MAX_SAMPLES + 1)
    for key, hi in (("run.jobs", cli.MAX_TOURNAMENT_JOBS),
                    ("run.chunk_size", cli.MAX_CHUNK_SIZE)):
        table, leaf = key.split(".")
        raw = {"players": ["random", "greedy"], table: {leaf: hi}}
        config.from_dict(raw, source="t")  # the bound is a config's too
        raw[table][leaf] = hi + 1
        with pytest.raises(ConfigError, match=f"{hi:,}|{hi}"):
            config.from_dict(raw, source="t")
