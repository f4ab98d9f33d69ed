"""``shuangkou bench --limit``: a native yardstick run interleaved, and its ratios reported."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from sim.cli import main
from sim.harness import bench


def _fake_limit(tmp_path, body):
    """A stand-in for the built yardstick: prints what a real one prints last."""
    p = tmp_path / "fake_limit"
    p.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return str(p)


def test_limit_interleaved_and_ratios(tmp_path):
    log = tmp_path / "calls"
    fake = _fake_limit(tmp_path, f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                                 "print('BEST: ...')\n"
                                 "print('{\"probe\": \"fake\", \"deals_per_s\": 1000000.0}')")
    lines = []
    res = bench.run(deals=2000, repeats=2, reference_deals=0, python_deals=0,
                    openspiel_games=0, strategies=False, echo=lines.append, limit=fake,
                    greedy_deals=300)
    calls = log.read_text().splitlines()
    assert len(calls) == 6  # before each repeat: random x2, greedy x2; then 2 CPU-time runs
    assert calls[-1] == "-n 2000 -t 0"  # the CPU-time runs play the random deals' count
    assert res["limit_deals_per_s"] == 1_000_000.0
    assert res["random_cpu_ratio_vs_limit"] == pytest.approx(
        res["cpu_deals_per_s"] / res["limit_cpu_deals_per_s"])
    assert res["random_ratio_vs_limit"] == pytest.approx(res["deals_per_s"] / 1e6)
    assert res["greedy_ratio_vs_limit"] == pytest.approx(res["greedy_deals_per_s"] / 1e6)
    text = "\n".join(lines)
    assert "greedy vs greedy deals" in text and "native yardstick" in text


def test_limit_not_executable_is_one_line(tmp_path, capsys):
    assert main(["bench", "--limit", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--limit" in err[0] and "not an executable file" in err[0]


def test_limit_without_json_line(tmp_path):
    fake = _fake_limit(tmp_path, "print('hello')")
    with pytest.raises(bench.ConfigError, match="no JSON line with deals_per_s"):
        bench.limit_rate(fake, 0.1)


@pytest.mark.skipif(os.name != "posix", reason="shebang scripts")
def test_limit_failing(tmp_path):
    fake = _fake_limit(tmp_path, "sys.exit(3)")
    with pytest.raises(bench.ConfigError, match="exit code 3"):
        bench.limit_rate(fake, 0.1)
