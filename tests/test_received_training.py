"""Files of tuning and training received from someone else are data (issue 32): a tune
checkpoint (``checkpoint.json``), its ``trajectory.jsonl``, a train checkpoint
(``checkpoint.npz``) and a weights file (``.npz``), each tampered field by field — wrong type,
negative, huge, missing, extra, nested 100,000 deep, truncated, empty, a FIFO — is refused
with one line naming the file and what was expected: the library's error class from the
Python API, exit code 2 and no traceback from the command line.

The command-line cases of a kind run in one child process with a timeout (``_drive``), so a
read that blocks (a FIFO opened for reading waits for a writer for ever) fails the test
instead of hanging it; the same child calls the Python API on each case first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from sim.core.limits import EVAL_SEED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP = "[" * 100_000 + "]" * 100_000  # a JSON value nested 100,000 deep
HUGE = 10 ** 30

# what a child process does for each case: the API call, then the command line
DRIVER = r"""
import contextlib, io, json, os, sys, traceback
sys.setrecursionlimit(10_000)
from sim.cli import main
from sim.errors import ShuangkouError
kind, cases = json.loads(sys.stdin.read())

def api(case):
    if kind == "tune":
        from sim.tools import tune
        cfg = tune.make_config("greedy", ["show_at=0.2..0.8", "min_cards=1..27"], pairs=60,
                               iterations=4, seed=3)
        return tune.load_checkpoint(case["folder"], cfg)
    if kind == "train":
        from sim.learn import train
        cfg = train.make_config("greedy", **case["tiny"])
        return train.load_checkpoint(case["folder"], cfg)
    from strategies.learned import load_networks
    return load_networks(case["path"])

out = []
for case in cases:
    row = {"name": case["name"]}
    try:
        api(case)
        row["api"] = "accepted"
    except ShuangkouError as e:
        row["api"] = type(e).__name__
        row["api_text"] = str(e)
    except BaseException:
        row["api"] = "crash"
        row["api_text"] = traceback.format_exc()
    if case.get("argv"):
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = main(case["argv"])
        except SystemExit as e:
            rc = e.code
        except BaseException:
            rc = "crash"
            err.write(traceback.format_exc())
        row["rc"], row["err"] = rc, err.getvalue()
    out.append(row)
print(json.dumps(out))
"""


def _drive(kind: str, cases: list[dict], timeout: float = 240) -> dict[str, dict]:
    """Every case of ``kind`` through the API and the command line, in one child process that
    must end within ``timeout`` seconds (a hang fails)."""
    try:
        r = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps([kind, cases]),
                           capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind}: the cases did not end within {timeout} s (a read that blocks?)")
    assert r.returncode == 0, r.stderr[-3000:]
    return {row["name"]: row for row in json.loads(r.stdout.strip().splitlines()[-1])}


def _check(results: dict[str, dict], cases: list[dict], error: str) -> None:
    """Each case refused: ``error`` from the API, exit code 2 and one line from the command
    line, no traceback; every failure listed at once."""
    bad = []
    for case in cases:
        row = results[case["name"]]
        if row["api"] != error or "\n" in row.get("api_text", "") \
                or "Traceback" in row.get("api_text", ""):
            bad.append(f"{case['name']}: API {row['api']}: {row.get('api_text', '')[:300]}")
        if case.get("argv"):
            lines = [x for x in row["err"].splitlines() if x.strip()]
            if row["rc"] != 2 or len(lines) != 1 or "Traceback" in row["err"]:
                bad.append(f"{case['name']}: exit {row['rc']}: {row['err'][-400:]}")
            elif case.get("says") and case["says"] not in lines[0]:
                bad.append(f"{case['name']}: {case['says']!r} not in {lines[0]!r}")
    assert not bad, "\n".join(bad)


def _fifo(path) -> None:
    if os.path.lexists(path):
        os.remove(path)
    os.mkfifo(path)


def _zero(path) -> None:  # a name that leads to /dev/zero: a read that never ends
    if os.path.lexists(path):
        os.remove(path)
    os.symlink("/dev/zero", path)


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")


# --- tune: checkpoint.json and trajectory.jsonl ------------------------------------------
def _tune_good() -> tuple[dict, list[dict]]:
    from sim.tools import tune

    cfg = tune.make_config("greedy", ["show_at=0.2..0.8", "min_cards=1..27"], pairs=60,
                           iterations=4, seed=3)
    theta = [0.45, 17.2]
    rows = [{"iteration": 0, "theta": [0.4, 18.0], "margin": None, "pairs": 0},
            {"iteration": 1, "theta": theta, "margin": 0.25, "pairs": 60}]
    state = {"format": tune.FORMAT, "key": json.loads(json.dumps(cfg.key())), "iteration": 1,
             "theta": theta, "pairs": 60, "seconds": 1.5}
    return state, rows


TUNE_FIELDS = {  # field: (wrong type, negative, huge)
    "format": (7, "shuangkou-tune/0", "x" * 100),
    "key": ([1], {"seed": -1}, {"pairs": HUGE}),
    "iteration": ("1", -1, HUGE),
    "theta": ("0.5", [-5.0, 17.2], [0.45, 1e308]),
    "pairs": (1.5, -60, HUGE),
    "seconds": ("fast", -1.0, 1e300),
}
ROW_FIELDS = {
    "iteration": ("1", -1, HUGE),
    "theta": ([True, 17.2], [0.45, -3.0], [0.45, 1e300]),
    "margin": ("big", None, 1e308),  # None is allowed (row 0): the negative case is a list
    "pairs": ([60], -1, HUGE),
}


def _tune_cases(tmp_path) -> list[dict]:
    good_state, good_rows = _tune_good()
    cases: list[dict] = []

    def case(name, state=None, rows=None, raw_state=None, raw_rows=None, special=None,
             says=None):
        folder = tmp_path / name
        folder.mkdir()
        ck, tr = folder / "checkpoint.json", folder / "trajectory.jsonl"
        if raw_state is not None:
            ck.write_text(raw_state)
        else:
            ck.write_text(json.dumps(good_state if state is None else state))
        if raw_rows is not None:
            tr.write_text(raw_rows)
        else:
            tr.write_text("".join(json.dumps(r) + "\n" for r in (rows or good_rows)))
        if special is not None:
            special(ck if special.__name__ != "rows" else tr)
        argv = ["tune", "greedy", "--param", "show_at=0.2..0.8", "--param", "min_cards=1..27",
                "--resume", "--out", str(folder), "--no-progress", "--pairs", "60",
                "--iterations", "4", "--seed", "3"]
        cases.append({"name": name, "folder": str(folder), "argv": argv, "says": says})

    for field, (wrong, negative, huge) in TUNE_FIELDS.items():
        for how, value in (("type", wrong), ("negative", negative), ("huge", huge)):
            case(f"ck-{field}-{how}", state={**good_state, field: value})
        case(f"ck-{field}-missing", state={k: v for k, v in good_state.items() if k != field})
        case(f"ck-{field}-deep", raw_state=json.dumps({**good_state, field: "@"}).replace(
            '"@"', DEEP), says="nested")
    case("ck-extra", state={**good_state, "extra": 1}, says="extra")
    case("ck-theta-out-of-range", state={**good_state, "theta": [0.9, 17.2]}, says="show_at")
    case("ck-theta-nan", raw_state=json.dumps(good_state).replace("0.45", "NaN"))
    case("ck-not-an-object", raw_state="[1, 2]")
    case("ck-deep", raw_state=DEEP, says="nested")
    case("ck-truncated", raw_state=json.dumps(good_state)[:40])
    case("ck-empty", raw_state="")
    case("ck-past-iterations", state={**good_state, "iteration": 9})
    for field, (wrong, negative, huge) in ROW_FIELDS.items():
        for how, value in (("type", wrong), ("negative", negative), ("huge", huge)):
            if value is None:
                value = [1.0]
            case(f"row-{field}-{how}", rows=[good_rows[0], {**good_rows[1], field: value}],
                 says="trajectory.jsonl line 2")
        case(f"row-{field}-missing", rows=[good_rows[0], {k: v for k, v in good_rows[1].items()
                                                         if k != field}])
        case(f"row-{field}-deep", raw_rows=json.dumps(good_rows[0]) + "\n" + json.dumps(
            {**good_rows[1], field: "@"}).replace('"@"', DEEP) + "\n")
    case("row-extra", rows=[good_rows[0], {**good_rows[1], "extra": 1}])
    case("row-out-of-range", rows=[good_rows[0], {**good_rows[1], "theta": [0.45, 99.0]}],
         says="min_cards")
    case("row-wrong-width", rows=[good_rows[0], {**good_rows[1], "theta": [0.45]}])
    case("row-truncated", raw_rows=json.dumps(good_rows[0]) + "\n" + json.dumps(
        good_rows[1])[:20])
    case("row-missing", rows=[good_rows[0]])
    case("row-empty", raw_rows="")
    case("row-long-line", raw_rows=json.dumps(good_rows[0]) + "\n" + " " * (1 << 17) + "\n")

    def rows(path):  # its name tells ``case`` to make trajectory.jsonl the FIFO
        _fifo(path)

    if hasattr(os, "mkfifo"):
        case("ck-fifo", special=_fifo, says="FIFO")
        case("row-fifo", special=rows, says="FIFO")
    case("ck-dev-zero", special=_zero, says="character device")
    return cases


def test_tampered_tune_checkpoints_and_trajectories_are_one_line(tmp_path):
    from sim.tools import tune

    state, rows = _tune_good()
    folder = tmp_path / "good"
    folder.mkdir()
    (folder / "checkpoint.json").write_text(json.dumps(state))
    (folder / "trajectory.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tune.make_config("greedy", ["show_at=0.2..0.8", "min_cards=1..27"], pairs=60,
                           iterations=4, seed=3)
    assert tune.load_checkpoint(str(folder), cfg)["theta"] == state["theta"]  # the baseline
    cases = _tune_cases(tmp_path)
    _check(_drive("tune", cases), cases, "ConfigError")


# --- train: checkpoint.npz -----------------------------------------------------------------
TINY = dict(seed=5, deals=30, epochs=2, holdout=10, eval_pairs=0, hidden="16,16,16",
            batch=64, lr=3e-3)


_GOOD: dict = {}


def _train_good(out) -> tuple[dict, dict]:
    """A checkpoint's state and arrays as a run of ``TINY`` writes them (the network made
    once; the weights paths in the state are read relative to the run's folder anyway)."""
    from sim.learn import jaxnet, train

    if "arrays" in _GOOD:
        state = json.loads(json.dumps(_GOOD["state"]))
        last = os.path.join(str(out), "weights", "r000_e01.npz")
        state["last"] = state["rows"][0]["weights"] = last
        return state, _GOOD["arrays"]

    cfg = train.make_config("greedy", **TINY)
    s = cfg.sizes
    model = jaxnet.Model(jaxnet.init_params(s["ds"], s["nd"], s["dm"], s["md"], cfg.hidden,
                                            s["ns_max"], s["nm_max"], cfg.seed), lr=cfg.lr)
    arrays = model.state_arrays()
    last = os.path.join(str(out), "weights", "r000_e01.npz")
    row = {"round": 0, "epoch": 1, "labels": 1000, "train_loss": 1.5, "heldout_loss": 1.6,
           "heldout_top1": 0.5, "onpolicy_agree": 0.6, "margin": float("nan"),
           "lo": float("nan"), "hi": float("nan"), "pairs": 0, "seconds": 3.0, "weights": last}
    state = {"format": train.FORMAT, "key": cfg.key(), "digest": cfg.digest(), "round": 0,
             "epoch": 1, "collected": True, "rows": [row], "seconds": 3.0, "labels": 1000,
             "rates": {"collect_per_deal": 0.01}, "best": None, "last": last, "partial": 0,
             "agree": 0.6}
    _GOOD.update(state=state, arrays=arrays)
    return state, arrays


TRAIN_FIELDS = {  # field: (wrong type, negative, huge)
    "format": (1, "shuangkou-train/0", "y" * 50),
    "key": ([], {"seed": -5}, {"deals": HUGE}),
    "digest": (5, None, None),
    "round": ("0", -1, HUGE),
    "epoch": (True, -1, HUGE),
    "collected": ("yes", None, None),
    "rows": ({"a": 1}, [{"round": -1}], [{"epoch": HUGE}]),
    "seconds": ("1", -3.0, 1e300),
    "labels": (1.5, -1, HUGE),
    "rates": ([1], {"eval": -1.0}, {"eval": 1e300}),
    "best": (3, ["r000_e01.npz", "x"], None),
    "last": (12, "/etc/passwd", "../../r000_e01.npz.evil"),
    "partial": ("0", -1, HUGE),
}


def _npz(path, arrays) -> None:
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _train_cases(tmp_path) -> list[dict]:
    from sim.learn import train

    cases: list[dict] = []
    argv_tail = [w for k, v in TINY.items() for w in (f"--{k.replace('_', '-')}", str(v))]

    def case(name, state=None, arrays=None, raw=None, special=None, says=None, drop=()):
        folder = tmp_path / name
        (folder / "weights").mkdir(parents=True)
        good_state, good_arrays = _train_good(folder)
        st = good_state if state is None else state(good_state)
        ar = dict(good_arrays if arrays is None else arrays(good_arrays))
        text = st if isinstance(st, str) else json.dumps(st)
        ar["state"] = np.array(text)
        for k in drop:
            ar.pop(k, None)
        ck = folder / train.CHECKPOINT
        if raw is not None:
            ck.write_bytes(raw(ar))
        else:
            _npz(ck, ar)
        if special is not None:
            special(ck)
        argv = ["train", "--teacher", "greedy", "--rounds", "1", "--out", str(folder),
                "--resume", *argv_tail]
        cases.append({"name": name, "folder": str(folder), "tiny": TINY, "argv": argv,
                      "says": says})

    for field, (wrong, negative, huge) in TRAIN_FIELDS.items():
        for how, value in (("type", wrong), ("negative", negative), ("huge", huge)):
            if value is not None:
                case(f"state-{field}-{how}", state=lambda s, f=field, v=value: {**s, f: v})
        if field != "partial":  # a checkpoint from before partial rounds: 0, as it was
            case(f"state-{field}-missing",
                 state=lambda s, f=field: {k: v for k, v in s.items() if k != f})
        case(f"state-{field}-deep", state=lambda s, f=field: json.dumps(
            {**s, f: "@"}).replace('"@"', DEEP), says="nested")
    case("state-extra", state=lambda s: {**s, "extra": 1})
    case("state-not-an-object", state=lambda s: "[1, 2]")
    case("state-not-json", state=lambda s: "{nope")
    case("state-epoch-past-recipe", state=lambda s: {**s, "epoch": 9})
    case("state-missing", drop=("state",))
    case("state-not-text", arrays=lambda a: a, raw=lambda a: _bytes({**a, "state": np.zeros(3)}))
    case("array-extra", arrays=lambda a: {**a, "extra": np.zeros(3)}, says="unexpected member")
    case("array-bomb", raw=lambda a: _bytes({**a, "p/W1": np.zeros((1100, 4096))}, True),
         says="more than")  # 36 MB unpacked from a file of 40 KB
    case("array-object", raw=lambda a: _bytes({**a, "p/W1": np.array([{"x": 1}], dtype=object)}))
    case("truncated", raw=lambda a: _bytes(a)[:3000])
    case("empty", raw=lambda a: b"")
    case("not-a-zip", raw=lambda a: b"PK\x03\x04 not really a zip")
    if hasattr(os, "mkfifo"):
        case("fifo", special=_fifo, says="FIFO")
    case("dev-zero", special=_zero, says="character device")
    return cases


def _bytes(arrays, compress: bool = False) -> bytes:
    """An .npz as numpy writes it (an object array pickled: numpy allows it when writing)."""
    import io

    buf = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(buf, **arrays)
    return buf.getvalue()


def test_tampered_train_checkpoints_are_one_line(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("optax")
    from sim.learn import train

    good = tmp_path / "good"
    (good / "weights").mkdir(parents=True)
    state, arrays = _train_good(good)
    _npz(good / train.CHECKPOINT, {**arrays, "state": np.array(json.dumps(state))})
    cfg = train.make_config("greedy", **TINY)
    got, _ = train.load_checkpoint(str(good), cfg)  # the baseline is accepted
    assert got["epoch"] == 1 and got["last"] == state["last"]
    cases = _train_cases(tmp_path)
    _check(_drive("train", cases), cases, "ConfigError")


# --- weights files -------------------------------------------------------------------------
def _weights_good(path) -> dict:
    from strategies import learned

    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(s) * 0.1
              for k, s in learned.weight_shapes(8, 6, 5).items()}
    learned.save_weights(str(path), arrays, {"made_by": "tests/test_received_training.py"})
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _weights_cases(tmp_path) -> list[dict]:
    from strategies import learned

    good = _weights_good(tmp_path / "good.npz")
    cases: list[dict] = []

    def case(name, change=None, raw=None, special=None, says=None):
        path = tmp_path / f"{name}.npz"
        if raw is not None:
            path.write_bytes(raw(good))
        else:
            _npz(path, {k: v for k, v in change(dict(good)).items() if v is not None})
        if special is not None:
            special(path)
        argv = ["play", "--seats", f"learned(weights={path}),greedy", "--deals", "1"]
        cases.append({"name": name, "path": str(path), "argv": argv, "says": says})

    small = {"format": (np.array(3.5), np.array("shuangkou-learned-"), np.array("z" * 3000)),
             "version": (np.array("one"), np.array(-1), np.array(HUGE, dtype=np.float64)),
             "feature_version": (np.array("one"), np.array(-1), np.array(2 ** 62)),
             "meta": (np.arange(3), np.array("[-1]"), np.array(json.dumps({"x": 1e999})))}
    for field, (wrong, negative, huge) in small.items():
        for how, value in (("type", wrong), ("negative", negative), ("huge", huge)):
            case(f"{field}-{how}", change=lambda d, f=field, v=value: {**d, f: v})
        if field != "meta":  # a file without meta is allowed (an empty one)
            case(f"{field}-missing", change=lambda d, f=field: {**d, f: None})
    for name in learned.WEIGHT_NAMES:
        shape = good[name].shape
        case(f"{name}-type", change=lambda d, n=name, s=shape: {**d, n: np.zeros(s, np.int64)})
        case(f"{name}-nan", change=lambda d, n=name, s=shape: {**d, n: np.full(s, np.nan)})
        case(f"{name}-shape", change=lambda d, n=name: {**d, n: np.zeros((3, 3))})
        case(f"{name}-missing", change=lambda d, n=name: {**d, n: None})
    case("W1-bomb", raw=lambda d: _bytes({**d, "W1": np.zeros((learned.DS, 4096))}, True),
         says="more than")  # a compressed member that unpacks far past its cap
    case("extra-array", raw=lambda d: _bytes({**d, "extra": np.zeros(5_000_000)}, True),
         says="unexpected member")  # the zip bomb: 40 MB unpacked, 40 KB on disk
    case("meta-list", change=lambda d: {**d, "meta": np.array("[1, 2]")}, says="meta")
    case("meta-nan", change=lambda d: {**d, "meta": np.array('{"x": NaN}')}, says="meta")
    case("meta-deep", change=lambda d: {**d, "meta": np.array('{"x": ' + DEEP + "}")},
         says="nested")
    case("meta-object", raw=lambda d: _bytes({**d, "meta": np.array([{"x": 1}], dtype=object)}))
    case("second-network-partial", change=lambda d: {**d, "m1/W1": d["W1"]})
    case("truncated", raw=lambda d: _bytes(d)[:2000])
    case("empty", raw=lambda d: b"")
    if hasattr(os, "mkfifo"):
        case("fifo", raw=lambda d: b"", special=_fifo, says="FIFO")
    case("dev-zero", raw=lambda d: b"", special=_zero, says="character device")
    return cases


def test_tampered_weights_files_are_one_line(tmp_path):
    from strategies.learned import load_networks

    _weights_good(tmp_path / "good.npz")
    nets, meta = load_networks(str(tmp_path / "good.npz"))  # the baseline is accepted
    assert len(nets) == 1 and meta["made_by"].startswith("tests/")
    cases = _weights_cases(tmp_path)
    _check(_drive("weights", cases), cases, "WeightsError")


@needs_fifo
def test_a_fifo_as_weights_in_a_config_is_refused_at_once(tmp_path):
    """``learned(weights=FIFO)`` in a tournament config: one line, exit 2, no wait."""
    fifo = tmp_path / "w.npz"
    os.mkfifo(fifo)
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'name = "t"\nformat = "head-to-head"\nplayers = ["learned(weights={fifo})",'
                   f' "greedy"]\ndeals = 2\n')
    r = subprocess.run([sys.executable, "-m", "sim.cli", "tournament", str(cfg), "--out",
                        str(tmp_path / "o"), "--no-progress"], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "FIFO" in lines[0], r.stderr


@needs_fifo
def test_a_fifo_as_weights_in_a_ladder_is_refused_at_once(tmp_path):
    """A ladder (received, or made here) naming ``learned(weights=FIFO)``: ``ladder run`` is one
    line and exit 2 at once, never blocked."""
    fifo = tmp_path / "w.npz"
    os.mkfifo(fifo)
    db = str(tmp_path / "l.sqlite")
    run = [sys.executable, "-m", "sim.cli", "ladder", "--db", db]
    r = subprocess.run([*run, "add", "greedy", f"learned(weights={fifo})"], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*run, "run", "--pairs", "2"], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "FIFO" in lines[0], r.stderr


# --- the evaluation seed ------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["tune", "greedy", "--param", "show_at=0.2..0.8", "--seed", str(EVAL_SEED)],
    ["tune", "greedy", "--param", "show_at=0.2..0.8", "--seed", hex(EVAL_SEED)],
    ["train", "--teacher", "greedy", "--seed", str(EVAL_SEED)],
    ["train", "--teacher", "greedy", "--eval-seed", str(EVAL_SEED)],
])
def test_the_evaluation_seed_is_refused_for_training_and_tuning(tmp_path, capsys, argv):
    if argv[0] == "train":
        pytest.importorskip("jax")
    from sim.cli import main

    out = tmp_path / "o"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "evaluation seed" in err and str(EVAL_SEED) in err
    assert not out.exists() or not any(out.rglob("*.np*"))  # nothing trained or written


def test_the_default_evaluation_seed_of_training_steps_over_it():
    pytest.importorskip("jax")
    from sim.learn import train

    cfg = train.make_config("greedy", **{**TINY, "seed": EVAL_SEED - 1})
    assert cfg.eval_seed not in (EVAL_SEED, cfg.seed)


def test_nothing_but_the_strength_configs_reads_the_evaluation_seed():
    """The seed is declared once; the code names it only to refuse it (train, tune), and the
    strength configs of the learned player measure on it."""
    import re

    users = set()
    for pkg in ("sim", "strategies"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, pkg)):
            for name in files:
                if name.endswith(".py"):
                    text = open(os.path.join(dirpath, name), encoding="utf-8").read()
                    if re.search(rf"EVAL_SEED|\b{EVAL_SEED}\b", text):
                        users.add(os.path.relpath(os.path.join(dirpath, name), ROOT))
    assert users == {"sim/core/limits.py", "sim/learn/train.py"}, users
    from sim.learn import train

    assert train.EVAL_FIRST == 2 ** 50  # the per-epoch evaluation: its own seed, not this one
    text = open(os.path.join(ROOT, "configs", "strength", "learned_greedy.toml")).read()
    assert f"seed = {EVAL_SEED}" in text
    docs = open(os.path.join(ROOT, "docs", "learning.md"), encoding="utf-8").read()
    assert f"evaluation seed {EVAL_SEED}" in docs and "EVAL_SEED" in docs


# --- every count of tune and train has a documented upper bound, refused up front ----------
BOUNDS = [  # (argv before the option, option, the bound as docs/cli.md writes it)
    (["tune", "greedy"], "--pairs", "100,000"),
    (["tune", "greedy"], "--iterations", "1,000,000"),
    (["tune", "greedy"], "--confirm", "10,000,000"),
    (["tune", "greedy"], "--jobs", "1,024"),
    (["train"], "--rounds", "10,000"),
    (["train"], "--deals", "1,000,000"),
    (["train"], "--epochs", "1,000"),
    (["train"], "--holdout", "1,000,000"),
    (["train"], "--eval-pairs", "1,000,000"),
    (["train"], "--batch", "65,536"),
    (["train"], "--jobs", "1,024"),
    (["train"], "--hours", "10,000"),
]


@pytest.mark.parametrize("before, option, shown", BOUNDS,
                         ids=[f"{b[0]} {o}" for b, o, _ in BOUNDS])
@pytest.mark.parametrize("value", ["1" + "0" * 30, "9" * 5000])
def test_counts_past_their_bound_are_refused_up_front(capsys, before, option, shown, value):
    from sim.cli import main

    with pytest.raises(SystemExit) as e:
        main([*before, option, value])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"argument {option}:" in err and shown in err, err
    doc = " ".join(open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8").read().split())
    assert f"`{option}` | " in doc and f"… {shown}" in doc, option


def test_the_library_checks_the_same_bounds():
    from sim.errors import ConfigError
    from sim.tools import tune

    with pytest.raises(ConfigError, match="1,000,000"):
        tune.check_counts(iterations=10 ** 30)
    with pytest.raises(ConfigError, match="10,000,000"):
        tune.check_counts(confirm=10 ** 30)
    with pytest.raises(ConfigError, match="evaluation seed"):
        tune.make_config("greedy", ["show_at=0.2..0.8"], seed=EVAL_SEED)
