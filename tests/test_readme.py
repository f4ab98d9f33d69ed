"""The README's examples run: every ```python block, and every ```console command."""

from __future__ import annotations

import os
import re
import shlex

import pytest

from sim.cli import main

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "README.md")
TEXT = open(README, encoding="utf-8").read()
PY_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
COMMANDS = [line[2:] for block in re.findall(r"```console\n(.*?)```", TEXT, re.S)
            for line in block.splitlines() if line.startswith("$ shuangkou ")]


def test_readme_has_examples():
    assert len(PY_BLOCKS) >= 2 and len(COMMANDS) >= 5


@pytest.mark.parametrize("i", range(len(PY_BLOCKS)))
def test_python_block(i, capsys):
    exec(compile(PY_BLOCKS[i], f"README block {i}", "exec"), {})


def test_console_commands_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for cmd in COMMANDS:
        argv = shlex.split(cmd)[1:]
        assert main(argv) == 0, cmd


def test_quick_start_commands_are_first():
    blocks = re.findall(r"```bash\n(.*?)```", TEXT, re.S)
    assert "shuangkou" in blocks[0] and "pip install" in blocks[0]
    assert "pytest" in blocks[1] and "pip install -e '.[test]'" in blocks[1]
    with open(os.path.join(os.path.dirname(README), ".ci", "run"), encoding="utf-8") as f:
        assert blocks[1].strip() in f.read()  # CI runs exactly the README's test command


def test_main_job_quick_tournament(tmp_path):
    # the README's first command: the quick demo tournament, end to end
    root = os.path.dirname(README)
    out = tmp_path / "quick"
    assert main(["tournament", os.path.join(root, "configs", "quick.toml"), "--out", str(out),
                 "--no-progress"]) == 0
    for name in ("summary.md", "summary.json", "report.html", "config.toml"):
        assert (out / name).exists(), name
    assert "greedy vs random" in (out / "summary.md").read_text(encoding="utf-8")
    # the same command again: the finished run is recognised and its report written again
    assert main(["tournament", os.path.join(root, "configs", "quick.toml"), "--out", str(out),
                 "--no-progress"]) == 0


def test_ci_lints_and_runs_every_test():
    # .ci/run: ruff before the tests, and SHUANGKOU_FULL=1 before the README's command so that
    # the slow tests (the full differential) run there too (tests/conftest.py)
    with open(os.path.join(os.path.dirname(README), ".ci", "run"), encoding="utf-8") as f:
        lines = [ln.strip() for ln in f]
    test_line = next(i for i, ln in enumerate(lines) if ln.endswith("python -m pytest -q"))
    assert lines.index("ruff check .") < test_line
    assert lines.index("export SHUANGKOU_FULL=1") < test_line
