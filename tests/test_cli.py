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
