"""``shuangkou bench --limit``: a native yardstick run interleaved, and its ratios reported."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from sim.cli import main
from sim.tools import bench


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


# --- the header names the CPU; the counts have upper bounds --------------------------------
def test_cpu_model_from_proc_cpuinfo_else_platform(tmp_path, monkeypatch):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: X\nmodel name\t:  Acme  Turbo 9000  \n"
                    "processor\t: 1\nmodel name\t: Acme Turbo 9000\n")
    assert bench.cpu_model(str(info)) == "Acme Turbo 9000"
    import platform

    monkeypatch.setattr(platform, "processor", lambda: "armv9-fallback")
    assert bench.cpu_model(str(tmp_path / "missing")) == "armv9-fallback"
    info.write_text("processor\t: 0\nFeatures\t: fp asimd\n")  # no model name line
    assert bench.cpu_model(str(info)) == "armv9-fallback"


def test_bench_header_names_the_cpu_model():
    lines = []
    res = bench.run(deals=20, repeats=1, reference_deals=0, python_deals=0, openspiel_games=0,
                    strategies=False, echo=lines.append, greedy_deals=10)
    assert lines[0] == f"CPU: {bench.cpu_model()} ({os.cpu_count()} logical CPUs)"
    assert res["cpu"] == bench.cpu_model() and res["cpu"]
    assert "cpu" in bench.to_json(res)


@pytest.mark.parametrize("option, bound", [("--deals", "2,000,000"), ("--repeats", "100"),
                                           ("--reference-deals", "1,000,000"),
                                           ("--python-deals", "1,000,000"),
                                           ("--openspiel-games", "1,000,000")])
def test_counts_past_their_bound_are_refused_up_front(capsys, option, bound):
    with pytest.raises(SystemExit) as e:
        main(["bench", option, "1" + "0" * 30])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1 and bound in err, err
    assert option in err and "Traceback" not in err
    with pytest.raises(bench.ConfigError, match=bound):  # the library refuses them too
        bench.check_counts(**{option[2:].replace("-", "_"): 10 ** 30})
