"""The README's and the docs' examples run: every ```python block of README.md and
docs/api.md, and every `$ shuangkou` line of docs/cli.md's ```console blocks, in order."""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sys

import pytest

from sim.cli import main

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "README.md")
TEXT = open(README, encoding="utf-8").read()
API = open(os.path.join(os.path.dirname(README), "docs", "api.md"), encoding="utf-8").read()
CLI = open(os.path.join(os.path.dirname(README), "docs", "cli.md"), encoding="utf-8").read()
PY_BLOCKS = (re.findall(r"```python\n(.*?)```", TEXT, re.S)
             + re.findall(r"```python\n(.*?)```", API, re.S))
COMMANDS = [line[2:] for block in re.findall(r"```console\n(.*?)```", CLI, re.S)
            for line in block.splitlines() if line.startswith("$ shuangkou ")]
# a command the docs show refused: the line after it is the one-line error it prints
REFUSED = {lines[i][2:]: lines[i + 1]
           for block in re.findall(r"```console\n(.*?)```", CLI, re.S)
           for lines in [block.splitlines()] for i in range(len(lines) - 1)
           if lines[i].startswith("$ shuangkou ") and ": error: " in lines[i + 1]}


def test_readme_has_examples():
    assert "```python" in TEXT and len(PY_BLOCKS) >= 4 and len(COMMANDS) >= 10


@pytest.mark.parametrize("i", range(len(PY_BLOCKS)))
def test_python_block(i, capsys):
    exec(compile(PY_BLOCKS[i], f"README or docs/api.md block {i}", "exec"), {})


def test_console_commands_in_order(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # the example bots, where the commands name them (relative to the repository's root)
    (tmp_path / "examples").symlink_to(os.path.join(os.path.dirname(README), "examples"))
    for cmd in COMMANDS:
        argv = shlex.split(cmd)[1:]
        capsys.readouterr()
        if cmd in REFUSED:  # exit 2 and exactly the one line the docs show
            with pytest.raises(SystemExit) as stop:  # argparse refuses it: the option's bound
                main(argv)
            assert stop.value.code == 2, cmd
            assert capsys.readouterr().err.strip() == REFUSED[cmd], cmd
        else:
            assert main(argv) == 0, cmd
    assert REFUSED  # docs/cli.md shows a refused request (its "Numeric bounds")


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
    # the run's one line, as the README quotes it, heads summary.md (under its title)
    said = re.search(r"It ends with the run in one line: `([^`]*)`", " ".join(TEXT.split()))
    head = (out / "summary.md").read_text(encoding="utf-8").splitlines()[:3]
    assert said and f"- **{said.group(1)}**" in head, head
    # the same command again: the finished run is recognised and its report written again
    assert main(["tournament", os.path.join(root, "configs", "quick.toml"), "--out", str(out),
                 "--no-progress"]) == 0


def test_ci_lints_and_runs_every_test():
    # .ci/run: ruff before the tests, and SHUANGKOU_FULL=1 before the README's command so that
    # the slow tests (the full differential) run there too (tests/conftest.py)
    with open(os.path.join(os.path.dirname(README), ".ci", "run"), encoding="utf-8") as f:
        lines = [ln.strip() for ln in f]
    test_line = next(i for i, ln in enumerate(lines) if ln.endswith("python -m pytest -q -n 2"))
    assert lines.index("ruff check .") < test_line
    assert lines.index("export SHUANGKOU_FULL=1") < test_line


def test_the_readmes_test_count_is_the_suites(request):
    """The README quoted 1,329 tests while the suite had grown to 1,546: the count it gives
    for today (``about N now``) is within 10% of what pytest collects: this session's
    collection where it took every test file, else ``pytest --collect-only`` (about 15 s)."""
    quoted = re.search(r"about ([\d,]+) now", " ".join(TEXT.split()))
    assert quoted, "the README gives the suite's size as 'about N now'"
    n, files = getattr(request.config, "shuangkou_collected", (0, set()))
    every = {os.path.basename(p) for p in glob.glob(os.path.join(os.path.dirname(README),
                                                                 "tests", "test_*.py"))}
    if not every <= files:  # a part of the suite: collect all of it
        r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                            "-p", "no:cacheprovider", "tests"], cwd=os.path.dirname(README),
                           capture_output=True, text=True, timeout=600, check=False)
        got = re.search(r"^(\d+) tests? collected", r.stdout, re.M)
        assert got, r.stdout[-2000:] + r.stderr[-2000:]
        n = int(got.group(1))
    said = int(quoted.group(1).replace(",", ""))
    assert abs(said - n) <= 0.1 * n, f"the README says about {said:,} tests, pytest collects {n:,}"


ROOT = os.path.dirname(README)
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
GENERATED = re.compile(r"<!-- generated: shuangkou strategies --markdown -->\n(.*?)"
                       r"<!-- end generated -->", re.S)


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_parameter_tables_are_generated_from_the_code(capsys):
    """docs/strategies.md's parameter tables are exactly `shuangkou strategies --markdown`."""
    from strategies.registry import builtin_classes, params_markdown

    m = GENERATED.search(_read(os.path.join(ROOT, "docs", "strategies.md")))
    assert m, "docs/strategies.md lost its generated parameter tables"
    capsys.readouterr()
    assert main(["strategies", "--markdown"]) == 0
    assert capsys.readouterr().out.startswith(params_markdown(builtin_classes()))
    assert m.group(1) == params_markdown(builtin_classes()), (
        "docs/strategies.md's parameter tables differ from the code: paste the output of "
        "`shuangkou strategies --markdown` between the generated markers")


def _default_claims():
    r"""(where, strategy, {param: quoted value}) for every built-in spec that opens a line or
    a table row in README.md and docs/*.md (a player's name with its defaults, as in the
    players tables), and every row of a `| parameter | default |` table (outside the
    generated block), for the strategy its file or nearest `#### `name` heading names."""
    from strategies.registry import builtin_classes

    names = {c.name for c in builtin_classes()}
    spec = re.compile(r"\s*(?:\|\s*)?`(" + "|".join(names) + r")\(([^)`]*)\)`")
    for path in [README, *DOCS]:
        text = GENERATED.sub("", _read(path))
        stem = os.path.splitext(os.path.basename(path))[0]
        current = stem if stem in names else None
        in_table = False
        for n, line in enumerate(text.splitlines(), 1):
            where = f"{os.path.relpath(path, ROOT)}:{n}"
            h = re.match(r"#+ `(\w+)`", line)
            if h:
                current = h.group(1) if h.group(1) in names else None
            m = spec.match(line)
            if m:
                pairs = [a.split("=", 1) for a in m.group(2).split(",")
                         if a.strip() not in ("", "...", "…")]  # greedy(...): no claim
                yield where, m.group(1), {k.strip(): v.strip() for k, v in pairs}
            if re.match(r"\|\s*parameter\s*\|\s*default\s*\|", line):
                in_table = True
                continue
            if in_table and not line.startswith("|"):
                in_table = False
            if in_table and current and not line.startswith("|---"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                keys = re.findall(r"`(\w+)`", cells[0])
                values = [v.strip(" `") for v in cells[1].split(",")]
                assert len(keys) == len(values), where
                yield where, current, dict(zip(keys, values))


def test_every_default_quoted_in_the_docs_is_the_codes():
    """`expert(samples=32, ...)` stood in the players table while the default is 192."""
    from strategies.registry import _value, resolve

    claims = list(_default_claims())
    assert len(claims) >= 20  # the players tables, docs/engine.md, docs/expert.md's table
    wrong = []
    for where, name, quoted in claims:
        params = resolve(name).params()
        for key, text in quoted.items():
            p = params.get(key)
            if p is None:
                wrong.append(f"{where}: {name} has no parameter {key!r}")
            elif p.coerce(name, key, _value(text)) != p.default:
                wrong.append(f"{where}: {name}({key}={text}), but the default is {p.default!r}")
    assert not wrong, "\n".join(wrong)


def test_docs_cited_exist():
    """Code and docs cited a results.md in docs/ that did not exist."""
    cited = set()
    for path in glob.glob(os.path.join(ROOT, "**", "*.*"), recursive=True):
        if path.endswith((".py", ".md", ".toml")) and "/results/" not in path \
                and "/.venv/" not in path:
            cited |= {(m, os.path.relpath(path, ROOT))
                      for m in re.findall(r"docs/\w+\.md", _read(path))}
    missing = sorted(f"{src} cites {doc}" for doc, src in cited
                     if not os.path.exists(os.path.join(ROOT, doc)))
    assert not missing, "\n".join(missing)


def test_documented_plugin_params_size_is_the_codes():
    """docs/strategies.md said a plug-in kernel's params are float64[8]; they are N_PARAMS."""
    from strategies.params import N_PARAMS

    text = _read(os.path.join(ROOT, "docs", "strategies.md"))
    sizes = re.findall(r"`params`: `float64\[(\d+)\]`", text)
    assert sizes and all(int(n) == N_PARAMS for n in sizes), (sizes, N_PARAMS)
    assert re.search(rf"At most {N_PARAMS}\b", text)


def test_package_docstring_names_only_what_exists():
    """sim's docstring listed a `sim.play` that does not exist: every name its list of the
    public API gives is an attribute of the package."""
    import sim

    api = sim.__doc__.split("The public API", 1)[1].split("\n\n", 2)[1]
    names = re.findall(r"``(\w+)``", api)
    assert len(names) >= 10
    missing = [n for n in names if not hasattr(sim, n)]
    assert not missing, f"sim's docstring names {missing}, which sim does not have"
