"""The docs say what the code does: links resolve, the README's first screen is what it promises,
and every table or figure a doc copies from the code (the layers, the per-deal columns, config
and command-line defaults, sizes) is compared with the code, so a change to one fails here
until the other follows. (tests/test_readme.py runs the examples and checks the players'
parameter defaults.)"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import importlib.util
import io
import os
import re

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _doc(name: str) -> str:
    return _read(os.path.join(ROOT, "docs", name))


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    out: set[str] = set()
    seen: dict[str, int] = {}
    for h in re.findall(r"^#+ (.*)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M):
        s = _slug(h)
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return out


def test_every_relative_link_resolves():
    """Every [text](target) of README.md and docs/*.md that is not a web address names an
    existing file, and its #anchor a heading of that file."""
    bad = []
    n = 0
    for path in [README, *DOCS]:
        text = re.sub(r"```.*?```", "", _read(path), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            n += 1
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            where = f"{os.path.relpath(path, ROOT)}: ({target})"
            if not os.path.exists(dest):
                bad.append(f"{where}: no file {os.path.relpath(dest, ROOT)}")
            elif anchor and anchor not in _anchors(_read(dest)):
                bad.append(f"{where}: no heading with anchor #{anchor}")
    assert n >= 30
    assert not bad, "\n".join(bad)


def test_slugs_are_githubs():
    assert _slug("First run: compilation") == "first-run-compilation"
    assert _slug("Parallel scaling: one million deals, `--jobs 2`") == \
        "parallel-scaling-one-million-deals---jobs-2"


def test_readme_first_screen():
    """What it is, the two commands, a short example and the links to the docs come first;
    every page of docs/ is linked from the README."""
    text = _read(README)
    first = "\n".join(text.splitlines()[:60])
    assert first.count("```bash") == 2 and "```python" in first
    example = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(example.strip().splitlines()) <= 12
    assert len(text.splitlines()) <= 100, "the README grew: put the detail in docs/"
    for path in DOCS:
        name = os.path.basename(path)
        assert f"](docs/{name})" in text, f"README.md does not link docs/{name}"


def test_readme_example_prints_what_its_comment_says():
    block = re.search(r"```python\n(.*?)```", _read(README), re.S).group(1)
    said = re.search(r"print\(.*\)\s+# (\[[^\]]*\])", block).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README example", "exec"), {})
    assert out.getvalue().strip() == said


def _test_layers():
    spec = importlib.util.spec_from_file_location(
        "_layers_for_docs", os.path.join(ROOT, "tests", "test_layers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# their __init__s: in LAYERS, not the docs
PACKAGES = ("sim.core", "sim.loops", "sim.tournament", "sim.tools", "sim.learn", "strategies")


def _module(name: str) -> str:
    """`core/engine` -> sim.core.engine, `strategies/kinds` -> strategies.kinds."""
    dotted = name.replace("/", ".")
    return dotted if dotted.startswith("strategies") else f"sim.{dotted}"


def test_architecture_layer_table_is_test_layers():
    """docs/architecture.md's layer table names exactly the modules of each layer of
    tests/test_layers.py (`strategies/*`: every strategies module not named elsewhere)."""
    layers = _test_layers()
    rows = re.findall(r"^\| (L\d|beside) [^|]*\| (.*) \|$", _doc("architecture.md"), re.M)
    assert [r[0] for r in rows] == ["L0", "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8",
                                    "beside"]
    named = {key: {_module(n) for n in re.findall(r"`([\w/*]+)`", cells)} for key, cells in rows}
    everything = set().union(*named.values())
    wrong = []
    for key, mods in named.items():
        if key == "beside":
            want = {m for m in layers.SIDE if m.count(".") > 1}  # not the package __init__s
        else:
            want = {m for m in layers.LAYERS[int(key[1])] if m not in PACKAGES}
            if "strategies.*" in mods:
                mods = (mods - {"strategies.*"}) | {
                    m for m in want if m.startswith("strategies") and m not in everything}
        for m in sorted(want - mods):
            wrong.append(f"{key}: {m} is in tests/test_layers.py but not in the docs' table")
        for m in sorted(mods - want):
            wrong.append(f"{key}: {m} is in the docs' table but not in tests/test_layers.py")
    assert not wrong, "docs/architecture.md's layer table and LAYERS differ:\n" + "\n".join(wrong)


def test_results_columns_are_the_codes():
    """docs/results.md's column table names exactly the per-deal table's columns."""
    from sim.core.tables import DEAL_COLUMNS
    from sim.tournament.results import NAMED_COLUMNS

    text = _doc("results.md")
    table = text[text.index("| column | meaning |"):]
    table = table[:table.index("\n\n")]
    documented = []
    for row in table.splitlines()[2:]:
        first = row.strip("|").split("|")[0]
        for a, b in re.findall(r"`(\w+)`(?: … `(\w+)`)?", first):
            if b:  # `seat0` … `seat3`, `seat0_player` … `seat3_player`: one digit changes
                i = re.search(r"\d", a).start()
                documented += [f"{a[:i]}{k}{a[i + 1:]}" for k in range(int(a[i]), int(b[i]) + 1)]
            else:
                documented.append(a)
    code = [*DEAL_COLUMNS, *NAMED_COLUMNS]
    assert sorted(documented) == sorted(code), (
        f"only in the docs: {sorted(set(documented) - set(code))}; "
        f"only in the code: {sorted(set(code) - set(documented))}")


def test_config_defaults_in_the_docs_are_the_codes():
    """docs/tournaments.md's annotated config gives each optional key its default value."""
    from sim.tournament.config import Sprt, TournamentConfig

    block = re.search(r"```toml\n(.*?)```", _doc("tournaments.md"), re.S).group(1)
    doc = tomllib.loads(block)
    fields = {f.name: f.default for f in dataclasses.fields(TournamentConfig)}
    sprt = {f.name: f.default for f in dataclasses.fields(Sprt)}
    examples = ("name", "format", "players", "rules")  # examples, not defaults
    checked = {k: (v, fields[k]) for k, v in doc.items() if k not in examples
               and not isinstance(v, dict)}
    checked |= {f"run.{k}": (v, fields[k]) for k, v in doc["run"].items()}
    checked |= {f"output.{k}": (v, fields["out_dir" if k == "dir" else k])
                for k, v in doc["output"].items()}
    checked |= {f"sprt.{k}": (v, sprt[k]) for k, v in doc["sprt"].items()}
    assert len(checked) >= 20
    wrong = [f"{k} = {v!r} in the docs, default {d!r} in the code"
             for k, (v, d) in checked.items() if (tuple(v) if isinstance(v, list) else v) != d]
    assert not wrong, "\n".join(wrong)


def _option_defaults(command: str) -> dict[str, object]:
    from sim.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {s: a.default for a in sub.choices[command]._actions for s in a.option_strings}


def test_option_defaults_in_the_docs_are_the_codes():
    """The option tables of docs/human.md and docs/analysis.md quote each option's default
    (`(default 0.4`, `` `expert` (default)``) as the command line has it."""
    checked = 0
    wrong = []
    for page, command in (("human.md", "human"), ("analysis.md", "analyze")):
        defaults = _option_defaults(command)
        for opt, rest in re.findall(r"^\| `(--[\w-]+)[^`]*` \|(.*)$", _doc(page), re.M):
            m = (re.search(r"\(default `?([\w.]+)`?[;,)]", rest)
                 or re.search(r"`([\w.]+)` \(default\)", rest))
            if not m or defaults.get(opt) is None:
                continue  # no quoted value, or a default the code computes (a random seed)
            want = defaults[opt]
            got = type(want)(m.group(1)) if isinstance(want, (int, float)) else m.group(1)
            checked += 1
            if got != want:
                wrong.append(f"docs/{page}: {opt} default {m.group(1)}, the code's {want!r}")
    assert checked >= 8
    assert not wrong, "\n".join(wrong)


def _same_default(quoted: str, want: object) -> bool:
    """Whether a doc's quoted default (``250``, ``20,000``, ``off``, ```./tune```) is ``want``."""
    text = quoted.strip().strip("`").replace(",", "") if isinstance(want, (int, float)) \
        else quoted.strip().strip("`")
    if isinstance(want, bool):
        return {"off": False, "on": True}.get(text) is want
    if isinstance(want, (int, float)):
        try:
            return type(want)(text) == want
        except ValueError:
            return False
    return text.removeprefix("./") == str(want)


def test_tune_and_train_option_defaults_in_the_docs_are_the_codes():
    """The option tables of docs/tuning.md (``| `--pairs N` | … (250) |``, the default in the
    last brackets) and docs/learning.md (``| `--deals D` | 2000 | … |``, its own column; two
    options in one row, ``| `--soft W`, `--tau T` | 1, 0.3 |``, one value each) quote the
    defaults the command line has. A default the code computes (None: ``--rounds`` without
    ``--hours``) is not checked."""
    checked = 0
    wrong = []
    tune = _option_defaults("tune")
    for opt, quoted in re.findall(r"^\| `(--[\w-]+)[^|]*\|.*\(([^()]+?)(?:; [^()]*)?\) \|$",
                                  _doc("tuning.md"), re.M):
        if tune.get(opt) is not None:
            checked += 1
            if not _same_default(quoted, tune[opt]):
                wrong.append(f"docs/tuning.md: {opt} ({quoted}), the code's {tune[opt]!r}")
    train = _option_defaults("train")
    for opts, quoted in re.findall(r"^\| (`--[^|]*?) \| ([^|]+?) \|", _doc("learning.md"),
                                   re.M):
        names = re.findall(r"`(--[\w-]+)", opts)
        values = quoted.split(", ") if len(names) > 1 else [quoted]
        for opt, value in zip(names, values, strict=True):
            if train.get(opt) is not None:
                checked += 1
                if not _same_default(value, train[opt]):
                    wrong.append(f"docs/learning.md: {opt} {value}, the code's {train[opt]!r}")
    assert checked >= 16, checked
    assert not wrong, "\n".join(wrong)


def test_sizes_in_the_docs_are_the_codes():
    """Sizes a doc quotes: a plug-in kernel's scratch, and the compile times measured by
    ``shuangkou compile`` that the notice gives before this machine measured its own."""
    from sim.core._cache import KERNEL_SECONDS
    from strategies.kinds import PLUGIN_SCRATCH

    slots = re.search(r"`buf`: `int64` scratch of ([\d,]+) slots", _doc("strategies.md"))
    assert slots and int(slots.group(1).replace(",", "")) == PLUGIN_SCRATCH
    text = " ".join(_doc("speed.md").split())
    quoted = re.search(r"the deal loops ([\d.]+) s, pimc ([\d.]+) s, ismcts ([\d.]+) s, oracle "
                       r"([\d.]+) s \(pimc compiled the sampler they share\), expert ([\d.]+) s, "
                       r"learned ([\d.]+) s", text)
    assert quoted
    keys = ["sim.loops.loop.run_deals"] + [f"strategies.{m}.{p}_decide" for m, p in (
        ("search", "pimc"), ("search", "ismcts"), ("search", "oracle"), ("expert", "expert"),
        ("learned", "learned"))]
    for key, figure in zip(keys, quoted.groups(), strict=True):
        assert round(float(figure)) == KERNEL_SECONDS[key], key


def test_rules_variant_defaults_in_the_docs_are_the_codes():
    """docs/rules.md's Variants table gives each variant's default as sim.Rules has it (its
    ranges: tests/test_cli.py::test_rule_ranges_documented_and_extremes_play)."""
    from sim.rules import Rules

    rows = dict(re.findall(r"^\| `(\w+)` \| ([\d,]+) \|", _doc("rules.md"), re.M))
    want = Rules().to_dict()
    assert set(rows) == set(want)
    assert {k: int(v.replace(",", "")) for k, v in rows.items()} == want


def test_format_tags_in_the_docs_are_the_codes():
    from sim.record import FORMAT as RECORD
    from sim.tournament.chunks import FORMAT as RESULTS

    assert f"format `{RECORD}`" in _doc("record.md")
    assert f"`format` (`{RESULTS}`)" in _doc("results.md")


def _mib(n: int) -> str:
    return f"{n >> 20} MiB"


def test_limits_in_the_docs_are_the_codes():
    """Limits docs/tournaments.md quotes (matchups, the sizes a received file may have, the SPRT's
    and the scheduler's bounds) are the code's constants."""
    from sim.analysis.stats import SPRT_SAFE_MIN_PAIRS
    from sim.record import MAX_RECORD_LINE
    from sim.tournament.config import MAX_CONFIG_BYTES, MAX_MATCHUPS, Sprt
    from sim.tournament.results import MAX_JSON_BYTES
    from sim.tournament.run import SCHEDULER_TIMEOUT

    text = " ".join(_doc("tournaments.md").split())
    k = next(k for k in range(2, 100) if k * (k - 1) // 2 > MAX_MATCHUPS) - 1
    claims = [
        f"at most {MAX_MATCHUPS} matchups (round robin of {k}, gauntlet of {MAX_MATCHUPS + 1})",
        f"(config {_mib(MAX_CONFIG_BYTES)}, `config.json` and `run.json` "
        f"{_mib(MAX_JSON_BYTES)}, a record's line {_mib(MAX_RECORD_LINE)})",
        f"(default {Sprt().min_pairs}, at least {SPRT_SAFE_MIN_PAIRS})",
        f"does not answer within {SCHEDULER_TIMEOUT:g} s",
    ]
    missing = [c for c in claims if c not in text]
    assert not missing, "docs/tournaments.md does not say what the code does:\n" + "\n".join(
        missing)


def test_analysis_marks_in_the_docs_are_the_codes():
    from sim.tools.analyze import MARK_Q, MARK_QQ

    text = _doc("analysis.md")
    assert f"| `??` | a blunder: loss ≥ {MARK_QQ:.1f} point" in text
    assert f"| `?` | a mistake: loss ≥ {MARK_Q:g} and" in text
    assert f"`?`/`??` marks (≥ {MARK_Q:g} / ≥ {MARK_QQ:.1f} points" in " ".join(
        _doc("cli.md").split())


def test_record_fields_in_the_docs_are_the_codes():
    """docs/record.md's field table is every key of a record, in order, with the keys of a
    call and of a trick as it lists them."""
    import sim
    from strategies import make

    deal = sim.Deal(seed=7, deal=3)
    bots = [make("greedy") for _ in range(4)]
    for seat, bot in enumerate(bots):
        bot.begin_deal(seat, deal.seed, deal.deal)
    while not deal.done:
        seat, _ = deal.to_act
        deal.apply(bots[seat].choose(deal.observation(seat), deal.legal()))
    record = deal.record()
    assert record["calls"] and record["tricks"]
    text = _doc("record.md")
    table = text[text.index("| field | type | meaning |"):]
    table = table[:table.index("\n\n")]
    fields = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert fields == list(record)
    inner = dict(re.findall(r"^\| `(calls|tricks)` \|.*?`\{([^}]*)\}`", table, re.M))
    for key in ("calls", "tricks"):
        assert re.findall(r'"(\w+)"', inner[key]) == list(record[key][0]), key
