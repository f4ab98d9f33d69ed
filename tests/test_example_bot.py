"""The example bot of docs/cli.md and docs/strategies.md (strategies/example.py) plays a real
tournament as a plug-in."""

from __future__ import annotations

import json

from sim.cli import main
from strategies import load_plugin, make


def test_example_bot_in_a_tournament(tmp_path):
    cfg = tmp_path / "example.toml"
    cfg.write_text('name = "example"\nformat = "head-to-head"\n'
                   'players = ["strategies.example:Cautious(greed=5)", "random"]\n'
                   "deals = 200\nduplicate = true\nseed = 3\n")
    out = tmp_path / "out"
    assert main(["tournament", str(cfg), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    m = summary["matchups"][0]
    # the label is the bot's spec: its registered name once another test loaded the plug-in
    assert m["label"] in ("strategies.example:Cautious(greed=5) vs random",
                          "cautious(greed=5) vs random")
    assert m["result"]["n"] == 200  # duplicate pairs
    assert m["result"]["lo"] > 0  # it beats the random player, with 95% confidence


def test_example_bot_by_name_after_plugin(capsys):
    assert "cautious" in load_plugin("strategies.example")
    assert make("cautious(greed=5)").spec() == "cautious(greed=5)"
    assert main(["play", "--plugin", "strategies.example", "--seats", "cautious,random",
                 "--deals", "20"]) == 0
    assert "0=cautious" in capsys.readouterr().out
