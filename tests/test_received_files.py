"""Files received from someone else are data (issue 32): every kind of file a command reads —
a record file, a results folder (config.json, run.json, chunk files, per-deal tables,
swings.jsonl), a tournament config — tampered field by field (wrong type, negative, huge,
missing, extra, deep nesting, truncated, a FIFO, empty) is refused in one line with exit code
2 and no traceback; and no module that a received file names is ever imported.

The commands run in fresh interpreters with a timeout (a FIFO must never make one wait): one
interpreter per command runs every case of a table through ``sim.cli.main``, the function
the ``shuangkou`` console script calls, each case in its own copy of one small results
folder built once for the module.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sim.loops.runner import iter_records, make_seats
from sim.record import FIELDS, write_records
from sim.tournament.config import from_dict
from sim.tournament.run import run_tournament

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAYERS = ["random(show_prob=0.9)", "random"]
TOML = (f'players = {json.dumps(PLAYERS)}\ndeals = 20\nseed = 3\n[run]\nchunk_size = 10\n'
        f'[output]\nplots = false\nrecords = 1\n')
HUGE = 10**30
DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = "9" * 10_000  # an integer of 10,000 digits, as text (int() refuses > 4,300)

# runs each case of a table (a JSON list) through sim.cli.main, as the console script does,
# and writes the exit code and standard error of each; an exception escaping main is a
# traceback, as it would be on the terminal
DRIVER = textwrap.dedent('''
    import contextlib, io, json, sys, traceback
    sys.set_int_max_str_digits(0) if hasattr(sys, "set_int_max_str_digits") else None
    from sim.cli import main
    rows = []
    for case in json.load(open(sys.argv[1])):
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = main(case["args"])
        except SystemExit as e:
            rc = e.code
        except BaseException:
            rc = "traceback"
            err.write(traceback.format_exc())
        rows.append({"id": case["id"], "rc": rc, "err": err.getvalue()})
    json.dump(rows, open(sys.argv[2], "w"))
''')


def run_cases(tmp, cases, cwd, timeout=600):
    """``cases``: (id, argv); runs them all in one fresh interpreter: {id: (code, stderr)}."""
    table, result = os.path.join(tmp, "cases.json"), os.path.join(tmp, "result.json")
    with open(table, "w") as f:
        json.dump([{"id": i, "args": [str(a) for a in args]} for i, args in cases], f)
    env = dict(os.environ, PYTHONPATH=ROOT)
    try:
        p = subprocess.run([sys.executable, "-P", "-c", DRIVER, table, result], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail("a command did not end: it waits on a received file")
    assert p.returncode == 0, p.stderr[-3000:]
    with open(result) as f:
        return {r["id"]: (r["rc"], r["err"]) for r in json.load(f)}


def assert_refused(results, code=2):
    bad = []
    for cid, (rc, err) in results.items():
        lines = err.strip().splitlines()
        if rc != code or len(lines) != 1 or "Traceback" in err or "error:" not in err:
            bad.append(f"{cid}: exit {rc}, stderr {err.strip()[-600:]!r}")
    assert not bad, "\n".join(bad)


# --- the files, made once ------------------------------------------------------------------
@pytest.fixture(scope="module")
def made(tmp_path_factory):
    base = tmp_path_factory.mktemp("received")
    cfg = from_dict({"name": "t", "players": PLAYERS, "deals": 20, "seed": 3,
                     "run": {"chunk_size": 10, "progress": False},
                     "output": {"dir": str(base / "run"), "plots": False, "records": 1}},
                    source="test")
    run_tournament(cfg)
    rec = next(iter_records(5, 0, 1, make_seats("greedy")))
    write_records(base / "good.jsonl", [rec])
    (base / "t.toml").write_text(TOML)
    return base, json.loads(json.dumps(rec))


def fresh(made, tmp_path):
    base, _ = made
    out = tmp_path / "run"
    shutil.copytree(base / "run", out)
    return out


# --- tampering -----------------------------------------------------------------------------
SIGNED = ("total",)  # a sum of settlements: negative is one of its values


def wrong_type(v):
    if isinstance(v, bool) or v is None:
        return "x"
    if isinstance(v, (int, float)):
        return "x"
    if isinstance(v, str):
        return 5
    if isinstance(v, list):
        return {"a": 1}
    return [1]


def field_tampers(d, prefix=""):
    """(label, function(d)) for every field of the JSON object ``d``: wrong type, negative,
    huge, missing; one extra field and one nested deeply for the whole object."""
    out = []
    for k, v in d.items():
        out.append((f"{prefix}{k}: wrong type",
                    lambda x, k=k, v=v: x.__setitem__(k, wrong_type(v))))
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if k not in SIGNED:
                out.append((f"{prefix}{k}: negative", lambda x, k=k: x.__setitem__(k, -7)))
            out.append((f"{prefix}{k}: huge", lambda x, k=k: x.__setitem__(k, HUGE)))
        out.append((f"{prefix}{k}: missing", lambda x, k=k: x.pop(k)))
    out.append((f"{prefix}extra field", lambda x: x.__setitem__("zz_extra", 1)))
    return out


def edit_json_file(path, f):
    with open(path) as fh:
        d = json.load(fh)
    f(d)
    with open(path, "w") as fh:
        json.dump(d, fh)


def edit_chunk(path, key, f):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    d = json.loads(str(arrays[key]))
    f(d)
    arrays[key] = np.array(json.dumps(d))
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def whole_file_tampers(rel):
    """Deep nesting, truncated, FIFO, empty: whatever the file's kind."""
    def deep(out):
        (out / rel).write_text(DEEP)

    def truncated(out):
        data = (out / rel).read_bytes()
        (out / rel).write_bytes(data[:len(data) // 2])

    def fifo(out):
        (out / rel).unlink()
        os.mkfifo(out / rel)

    def empty(out):
        (out / rel).write_bytes(b"")

    def link_out(out):  # the same bytes, but in a file outside the folder
        outside = out.parent / f"{out.name}-outside-{os.path.basename(rel)}"
        shutil.move(out / rel, outside)
        os.symlink(outside, out / rel)

    return [(f"{rel}: nested deeply", deep), (f"{rel}: truncated", truncated),
            (f"{rel}: FIFO", fifo), (f"{rel}: empty", empty),
            (f"{rel}: a link out of the folder", link_out)]


def results_tampers(made):
    base, _ = made
    out = base / "run"
    cases = []
    with open(out / "run.json") as f:
        run = json.load(f)
    for label, t in field_tampers(run, "run.json "):
        cases.append((label, lambda o, t=t: edit_json_file(o / "run.json", t), ("report",)))
    cases += [(lab, t, ("report",)) for lab, t in whole_file_tampers("run.json")]
    with open(out / "config.json") as f:
        conf = json.load(f)
    for label, t in field_tampers(conf, "config.json "):
        if label in DEFAULTED:
            continue
        cases.append((label, lambda o, t=t: edit_json_file(o / "config.json", t), BOTH))
    for label, t in field_tampers(conf["run"], "config.json run."):
        if "progress" in label or "backend" in label or "scheduler" in label \
                or "jobs" in label and "missing" in label:
            continue  # not part of a run's identity: a default stands in (docs/results.md)
        cases.append((label, lambda o, t=t: edit_json_file(
            o / "config.json", lambda d: t(d["run"])), BOTH))
    cases += [(lab, t, BOTH) for lab, t in whole_file_tampers("config.json")]
    chunk = out / "chunks" / "c000000.npz"
    with np.load(chunk) as z:
        meta, stats = json.loads(str(z["_meta"])), json.loads(str(z["_stats"]))
    for label, t in field_tampers(meta, "chunk _meta "):
        cases.append((label, lambda o, t=t: edit_chunk(o / "chunks" / "c000000.npz", "_meta", t),
                      BOTH))
    for label, t in field_tampers(stats, "chunk _stats "):
        cases.append((label, lambda o, t=t: edit_chunk(o / "chunks" / "c000000.npz", "_stats",
                                                       t), BOTH))
    for k in ("pairs", "wdl", "score", "swings", "A.att_settle"):
        for label, t in field_tampers(stats[k], f"chunk _stats {k}."):
            cases.append((label, lambda o, t=t, k=k: edit_chunk(
                o / "chunks" / "c000000.npz", "_stats", lambda d: t(d[k])), BOTH))
    cases += [(lab, t, BOTH) for lab, t in whole_file_tampers("chunks/c000000.npz")]
    cases += [(lab, t, BOTH) for lab, t in whole_file_tampers("deals/c000001.parquet")]
    cases += [(lab, t, ("report",)) for lab, t in whole_file_tampers("swings.jsonl")
              if "empty" not in lab]
    return cases


BOTH = ("report", "resume")
# keys a config may leave out, as a TOML config may: their default applies, here the value the
# run stored (the run's identity, its config hash, is checked against every chunk file, so a key
# whose absence changes the run is refused there); _oracle: folders written before it
DEFAULTED = {f"config.json {k}: missing" for k in (
    "name", "format", "duplicate", "first_deal", "plugins", "timeout", "rules", "_oracle")}


def case_args(cmd, out, toml):
    if cmd == "report":
        return ["report", out, "--no-plots"]
    return ["tournament", toml, "--out", out, "--resume", "--no-progress", "--quiet"]


def test_tampered_results_folder_is_one_line(made, tmp_path):
    base, _ = made
    cases, ids = [], []
    for i, (label, tamper, cmds) in enumerate(results_tampers(made)):
        out = tmp_path / f"c{i}"
        shutil.copytree(base / "run", out)
        tamper(out)
        for cmd in cmds:
            cases.append((f"{cmd} {label}", case_args(cmd, out, base / "t.toml")))
        ids.append(label)
    results = run_cases(tmp_path, cases, cwd=tmp_path)
    assert len(results) == len(cases) > 150
    assert_refused(results)


def test_untampered_results_folder_passes(made, tmp_path):
    """The same commands on a copy left alone: exit 0 (the table above tests the tampering)."""
    base, _ = made
    out = fresh(made, tmp_path)
    results = run_cases(tmp_path, [("report", case_args("report", out, None)),
                                   ("resume", case_args("resume", out, base / "t.toml"))],
                        cwd=tmp_path)
    assert {k: v[0] for k, v in results.items()} == {"report": 0, "resume": 0}, results


# --- records ---------------------------------------------------------------------------------
def record_tampers(rec):
    cases = []
    for label, t in field_tampers({k: rec[k] for k in FIELDS}, "record "):
        if label == "record extra field":
            continue  # a record may carry fields of its own (docs/record.md: tournament, …)
        cases.append((label, t))
    trick, call = rec["tricks"][0], rec["calls"][0]
    for label, t in field_tampers(trick, "record tricks[0]."):
        cases.append((label, lambda r, t=t: t(r["tricks"][0])))
    for label, t in field_tampers(call, "record calls[0]."):
        if label.endswith(("took_from: missing", "gave: missing")):
            continue  # null when absent (docs/record.md): the replay still checks them
        cases.append((label, lambda r, t=t: t(r["calls"][0])))
    cases += [
        ("record: seats 0 … 4", lambda r: r.__setitem__("caller", 4)),
        ("record: five seats", lambda r: r["seats"].append("random")),
        ("record: a deck of one card", lambda r: r.__setitem__("deck", [r["deck"][0]] * 108)),
        ("record: a card that is not one", lambda r: r["deck"].__setitem__(0, "Zz")),
        ("record: hands swapped", lambda r: r.__setitem__("hands", r["hands"][1:] +
                                                           r["hands"][:1])),
        ("record: a trick dropped", lambda r: r["tricks"].pop()),
        ("record: a winner changed", lambda r: r["tricks"][3].__setitem__(
            "winner", (r["tricks"][3]["winner"] + 1) % 4)),
        ("record: settlement changed", lambda r: r["settlement"].__setitem__(0, 1000)),
        ("record: void but played", lambda r: r.__setitem__("void", True)),
        ("record: format", lambda r: r.__setitem__("format", "shuangkou-record/9")),
        ("record: nested deeply", lambda r: r.__setitem__("seats", json.loads("[" * 50 +
                                                                              "]" * 50))),
    ]
    return cases


def test_tampered_record_is_one_line(made, tmp_path):
    _, rec = made
    cases = []
    for i, (label, tamper) in enumerate(record_tampers(rec)):
        r = copy.deepcopy(rec)
        tamper(r)
        path = tmp_path / f"r{i}.jsonl"
        path.write_text(json.dumps(r) + "\n")
        cases += [(f"replay {label}", ["replay", path]),
                  (f"replay --html {label}", ["replay", path, "--html", tmp_path / f"r{i}.html"]),
                  (f"validate {label}", ["validate", path])]
    good = json.dumps(rec)
    whole = {"deep": DEEP + "\n", "truncated": good[:len(good) // 2] + "\n",
             "not an object": "[1, 2]\n", "10,000 digits": good.replace(
                 f'"deal": {rec["deal"]}', f'"deal": {DIGITS}', 1) + "\n"}
    for name, text in whole.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text)
        cases += [(f"replay {name}", ["replay", path]), (f"validate {name}", ["validate", path])]
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    cases += [("replay FIFO", ["replay", tmp_path / "fifo.jsonl"]),
              ("validate FIFO", ["validate", tmp_path / "fifo.jsonl"]),
              ("replay empty", ["replay", tmp_path / "empty.jsonl"])]
    results = run_cases(tmp_path, cases, cwd=tmp_path)
    # structural problems are refused at read (exit 2); a record well formed but impossible is
    # a violation that validate lists (exit 1, docs/record.md) and that replay refuses
    listed = {k: v for k, v in results.items() if k.startswith("validate ") and v[0] == 1}
    for k, (rc, err) in listed.items():
        assert "Traceback" not in err and not err.strip(), (k, err)
    assert_refused({k: v for k, v in results.items() if k not in listed})
    assert all(results[k][0] == 2 for k in results if k.startswith("replay")), results
    # validate lists these (exit 1): the replay, not the reading, finds them
    assert set(listed) <= {f"validate record: {x}" for x in (
        "a deck of one card", "hands swapped", "a trick dropped", "a winner changed",
        "settlement changed", "void but played")} | {
        f"validate record {k}: negative" for k in ("attacker_score",)} | {
        f"validate record {k}: wrong type" for k in ()}, sorted(listed)


# --- configs -------------------------------------------------------------------------------
CONFIG_TAMPERS = [
    ("players: wrong type", 'players = 5\ndeals = 20\n'),
    ("players: missing", 'deals = 20\n'),
    ("players: one", 'players = ["random"]\n'),
    ("deals: wrong type", f'players = {json.dumps(PLAYERS)}\ndeals = "x"\n'),
    ("deals: negative", f'players = {json.dumps(PLAYERS)}\ndeals = -4\n'),
    ("deals: huge", f'players = {json.dumps(PLAYERS)}\ndeals = 1{"0" * 30}\n'),
    ("deals: 10,000 digits", f'players = {json.dumps(PLAYERS)}\ndeals = {"9" * 10_000}\n'),
    ("seed: negative", f'players = {json.dumps(PLAYERS)}\nseed = -1\n'),
    ("seed: wrong type", f'players = {json.dumps(PLAYERS)}\nseed = [1]\n'),
    ("run.jobs: huge", f'players = {json.dumps(PLAYERS)}\n[run]\njobs = 1000000\n'),
    ("run.chunk_size: zero", f'players = {json.dumps(PLAYERS)}\n[run]\nchunk_size = 0\n'),
    ("output.records: negative", f'players = {json.dumps(PLAYERS)}\n[output]\nrecords = -1\n'),
    ("extra key", f'players = {json.dumps(PLAYERS)}\nsurprise = 1\n'),
    ("extra table", f'players = {json.dumps(PLAYERS)}\n[surprise]\nx = 1\n'),
    ("nested deeply", f'players = {json.dumps(PLAYERS)}\nx = {"[" * 5000}{"]" * 5000}\n'),
    ("truncated", TOML[:len(TOML) // 2 + 3]),
    ("not TOML", "players = [\n"),
    ("empty", ""),
    ("timeout: wrong type", f'players = {json.dumps(PLAYERS)}\ntimeout = "soon"\n'),
    ("rules: out of range", f'players = {json.dumps(PLAYERS)}\n[rules]\nmax_redeals = -1\n'),
]


def test_tampered_config_is_one_line(tmp_path):
    cases = []
    for i, (label, text) in enumerate(CONFIG_TAMPERS):
        path = tmp_path / f"c{i}.toml"
        path.write_text(text)
        cases.append((label, ["tournament", path, "--out", tmp_path / f"o{i}", "--no-progress"]))
    os.mkfifo(tmp_path / "fifo.toml")
    cases.append(("FIFO", ["tournament", tmp_path / "fifo.toml", "--no-progress"]))
    assert_refused(run_cases(tmp_path, cases, cwd=tmp_path))


# --- nothing named in a received file is imported ------------------------------------------
EVIL = '''
import os
open(os.environ["EVIL_MARK"], "a").write(__name__ + "\\n")
from strategies.random import RandomStrategy
class Bot(RandomStrategy):
    name = "evil_bot"
'''


def test_no_module_named_in_a_received_file_is_imported(made, tmp_path):
    base, rec = made
    mark = tmp_path / "imported.txt"
    for where in (tmp_path, tmp_path / "plugins"):
        os.makedirs(where, exist_ok=True)
        (where / "evil.py").write_text(EVIL)
        (where / "evil2.py").write_text(EVIL)
    cases = []
    # a config: a module:Class spec and a plug-in (named only: --plugin loads one)
    for i, text in enumerate([
            'players = ["evil:Bot", "random"]\n',
            'players = ["evil2:Bot(x=1)", "random"]\nplugins = ["evil"]\n',
            'players = ["random", "greedy"]\nplugins = ["evil", "plugins/evil2.py"]\n']):
        (tmp_path / f"evil{i}.toml").write_text(text)
        cases.append((f"config {i}", ["tournament", tmp_path / f"evil{i}.toml", "--out",
                                      tmp_path / f"o{i}", "--no-progress"]))
    # a results folder whose config.json, config.toml, summary.json and records name them
    out = tmp_path / "run"
    shutil.copytree(base / "run", out)
    edit_json_file(out / "config.json", lambda d: d.update(plugins=["evil", "plugins/evil2.py"],
                                                          _base_dir=str(tmp_path)))
    edit_json_file(out / "summary.json", lambda d: d.update(plugins=["evil"],
                                                           players=["evil:Bot", "evil2:Bot"]))
    evil_rec = dict(rec, seats=["evil:Bot", "evil2:Bot", "plugins/evil2.py:Bot", "evil"])
    (out / "records.jsonl").write_text(json.dumps(evil_rec) + "\n")
    (tmp_path / "evil.jsonl").write_text(json.dumps(evil_rec) + "\n")
    cases += [("report", ["report", out, "--no-plots"]),
              ("resume", ["tournament", out / "config.toml", "--out", out, "--resume",
                          "--no-progress"]),
              ("replay", ["replay", tmp_path / "evil.jsonl"]),
              ("replay --html", ["replay", tmp_path / "evil.jsonl", "--html",
                                 tmp_path / "e.html"]),
              ("validate", ["validate", tmp_path / "evil.jsonl"]),
              ("replay records", ["replay", out / "records.jsonl"])]
    os.environ["EVIL_MARK"] = str(mark)
    try:
        table, result = tmp_path / "cases.json", tmp_path / "result.json"
        table.write_text(json.dumps([{"id": i, "args": [str(a) for a in args]}
                                     for i, args in cases]))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path),
                                                           str(tmp_path / "plugins")]))
        p = subprocess.run([sys.executable, "-c", DRIVER, table, result], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=600,
                           stdin=subprocess.DEVNULL)
    finally:
        del os.environ["EVIL_MARK"]
    assert p.returncode == 0, p.stderr[-3000:]
    results = {r["id"]: (r["rc"], r["err"]) for r in json.loads(result.read_text())}
    assert not mark.exists(), (mark.read_text(), results)
    for cid, (rc, err) in results.items():
        assert "Traceback" not in err, (cid, err)
    assert all(results[f"config {i}"][0] == 2 for i in range(3)), results
    assert results["replay"][0] == 0 and results["validate"][0] == 0, results
