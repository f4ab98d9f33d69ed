"""``shuangkou tune``: a strategy's numeric parameters tuned by SPSA on duplicate deals.

SPSA (simultaneous perturbation stochastic approximation), as fishtest runs it: at iteration
``k`` (1-based) every tuned parameter ``i`` is perturbed at once by ``±c_k[i]`` (one random sign
per parameter), ``theta+`` plays ``theta-`` as duplicate pairs on ``pairs`` fresh deal numbers
(the same deals for both sides: the only difference between the two teams is the
perturbation), and every parameter steps by ``a_k[i] / c_k[i] * margin * sign[i]``, where
``margin`` is the mean duplicate result of ``theta+`` (points per deal per player). The gains::

    c_k = c_end * N**gamma / k**gamma                  gamma = 0.101
    a_k = r_end * c_end**2 * (A + N)**alpha / (A + k)**alpha,   alpha = 0.602, A = N / 10

so that at the last iteration ``c_k = c_end`` and a margin of one point moves a parameter by
``r_end * c_end``. ``c_end`` and ``r_end`` are per parameter (docs/tuning.md: defaults and how
they were chosen). Integers are tuned as reals and rounded when played; every value is clipped
to its range. The perturbation signs come from a generator seeded by ``(seed, k)`` and the deals
of iteration ``k`` are ``(k - 1) * pairs …`` of ``seed``, so a run is a function of its
settings: the same for any ``--jobs``, and a resumed run ends where an uninterrupted one does.

The confirmation match plays the tuned spec against the start on deals from ``CONFIRM_FIRST``
(never reached by tuning). The checkpoint (``checkpoint.json``, written atomically after every
iteration) holds the settings' key, the iteration, ``theta`` and the trajectory.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

import msgspec
import numpy as np

from sim.analysis.stats.moments import mean_ci
from sim.core.files import decode_json, open_received, read_received
from sim.core.limits import MAX_JOBS, refuse_eval_seed
from sim.errors import ConfigError
from sim.tournament import run as tournament  # the module: a test replaces its pair_player
from sim.tournament.results import atomic_write
from strategies.registry import load_plugins, make, parse_spec, split_specs

FORMAT = "shuangkou-tune/1"
CHECKPOINT = "checkpoint.json"
ROWS = "trajectory.jsonl"  # one JSON row per iteration, appended before each checkpoint
ALPHA, GAMMA, A_SHARE = 0.602, 0.101, 0.1
C_END_SHARE = 0.1  # default c_end: a tenth of the tuned range
INT_C_END = 0.6  # an integer's default least c_end: over 0.5, theta+ and theta- always differ
R_END = 0.05  # default r_end (1/points): see docs/tuning.md
CONFIRM_FIRST = 2 ** 62  # first deal of the confirmation match: tuning never gets there
FIELD = ("random", "greedy", "expert")  # --against field
_SIGNS = 0x5350_5341  # "SPSA": the sign stream's tag
# upper bounds of the numeric options (docs/cli.md): a request past one is refused up front
MAX_PAIRS = 100_000  # --pairs: duplicate pairs per iteration
MAX_ITERATIONS = 1_000_000  # --iterations
MAX_CONFIRM = 10_000_000  # --confirm: pairs of the confirmation match
MAX_PARAMS = 64  # --param: parameters tuned at once
MAX_CHECKPOINT_BYTES = 16 << 20  # checkpoint.json (a few KB: the key, theta, counts)
MAX_ROW_BYTES = 64 << 10  # one line of trajectory.jsonl (theta of at most MAX_PARAMS values)
MAX_ROWS_BYTES = (MAX_ITERATIONS + 1) * MAX_ROW_BYTES  # trajectory.jsonl (read line by line)


@dataclasses.dataclass(frozen=True)
class TuneParam:
    """One tuned parameter: its range, its SPSA step sizes and its start value."""

    name: str
    integer: bool
    lo: float
    hi: float
    c_end: float
    r_end: float
    start: float

    def value(self, x: float) -> Any:
        """The value played for the real ``x``: clipped, and rounded for an integer."""
        x = min(max(float(x), self.lo), self.hi)
        return int(math.floor(x + 0.5)) if self.integer else round(x, 6)


@dataclasses.dataclass(frozen=True)
class TuneConfig:
    """Everything that decides a tuning run's trajectory (its checkpoint key)."""

    target: str  # the strategy's name (or module:Class)
    fixed: tuple[tuple[str, str], ...]  # the start spec's other parameters, as written
    params: tuple[TuneParam, ...]
    against: tuple[str, ...] = ()  # () : theta+ vs theta- head to head
    pairs: int = 250
    iterations: int = 4000
    seed: int = 0
    plugins: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("plugins")
        d["fixed"] = [list(f) for f in self.fixed]
        d["params"] = [dataclasses.asdict(p) for p in self.params]
        d["against"] = list(self.against)
        return d

    def spec(self, values: Sequence[Any]) -> str:
        """The spec with the tuned parameters at ``values`` (played values)."""
        items = list(self.fixed) + [(p.name, _fmt(v)) for p, v in zip(self.params, values)]
        return f"{self.target}({','.join(f'{k}={v}' for k, v in items)})"

    def played(self, theta: Sequence[float]) -> list[Any]:
        return [p.value(x) for p, x in zip(self.params, theta)]

    def gains(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(c_k, a_k)`` per parameter at iteration ``k`` (1-based)."""
        n = self.iterations
        big_a = A_SHARE * n
        c_end = np.array([p.c_end for p in self.params])
        r_end = np.array([p.r_end for p in self.params])
        c_k = c_end * (n / k) ** GAMMA
        a_k = r_end * c_end ** 2 * ((big_a + n) / (big_a + k)) ** ALPHA
        return c_k, a_k

    def signs(self, k: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, k, _SIGNS])
        return rng.integers(0, 2, size=len(self.params)) * 2 - 1


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


# --- building a config from the command line's words ---------------------------------------
def _number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ConfigError(f"{what} {text!r} must be finite")
    return v


def make_config(spec: str, params: Sequence[str], against: str | None = None,
                pairs: int = 250, iterations: int = 4000, seed: int = 0,
                plugins: Sequence[str] = ()) -> TuneConfig:
    """A ``TuneConfig`` from a start spec and ``NAME=LO..HI[:C_END[:R_END]]`` words, or a
    ``ConfigError`` (one line) naming what is wrong and what is allowed."""
    if plugins:
        load_plugins(plugins, [os.getcwd()])
    start = make(spec)  # a spec that cannot be built: its own one-line error
    target, written = parse_spec(spec)
    declared = type(start).params()
    tunable = {k: p for k, p in declared.items()
               if p.type in (int, float) and not p.choices}

    def listing() -> str:
        return ", ".join(f"{k} ({p.describe()})" for k, p in tunable.items()) or "none"

    if not params:
        raise ConfigError(f"give at least one --param NAME=LO..HI; tunable parameters of "
                          f"{start.name!r}: {listing()}")
    out: list[TuneParam] = []
    for word in params:
        name, eq, rng = word.partition("=")
        name = name.strip()
        if not eq:
            raise ConfigError(f"--param {word!r} is not NAME=LO..HI[:C_END[:R_END]]")
        if name not in declared:
            raise ConfigError(f"unknown parameter {name!r} of {start.name!r}: tunable are "
                              f"{listing()}")
        p = declared[name]
        if name not in tunable:
            raise ConfigError(f"parameter {name!r} of {start.name!r} is {p.describe()}: only "
                              f"numeric (int, float) parameters are tuned; tunable are "
                              f"{listing()}")
        if any(q.name == name for q in out):
            raise ConfigError(f"--param {name} is given twice")
        bounds, *steps = rng.split(":")
        lo_t, dots, hi_t = bounds.partition("..")
        if not dots or len(steps) > 2:
            raise ConfigError(f"--param {word!r} is not NAME=LO..HI[:C_END[:R_END]]")
        lo, hi = _number(lo_t, f"--param {name} low end"), _number(hi_t, f"--param {name} "
                                                                         f"high end")
        if not lo < hi:
            raise ConfigError(f"--param {name}={lo_t}..{hi_t} is an empty or reversed range: "
                              f"give LO < HI within {p.describe()}")
        if p.lo is not None and lo < p.lo or p.hi is not None and hi > p.hi:
            raise ConfigError(f"--param {name}={lo_t}..{hi_t} is outside the parameter's "
                              f"range: {p.describe()}")
        if p.type is int and not (lo.is_integer() and hi.is_integer()):
            raise ConfigError(f"--param {name}={lo_t}..{hi_t}: {name} is an integer "
                              f"({p.describe()}): give integer bounds")
        value = float(getattr(start, name))
        if not lo <= value <= hi:
            raise ConfigError(f"the start value {name}={_fmt(getattr(start, name))} is outside "
                              f"--param {name}={lo_t}..{hi_t}: widen the range or start "
                              f"inside it")
        c_end = _number(steps[0], f"--param {name} c_end") if steps else C_END_SHARE * (hi - lo)
        if p.type is int and not steps:
            c_end = max(c_end, INT_C_END)  # smaller: theta+ and theta- often round alike
        r_end = _number(steps[1], f"--param {name} r_end") if len(steps) > 1 else R_END
        if c_end <= 0 or r_end <= 0:
            raise ConfigError(f"--param {word!r}: C_END and R_END must be > 0")
        if p.type is int and c_end <= 0.5:
            raise ConfigError(f"--param {word!r}: C_END of an integer parameter must be > 0.5 "
                              f"(smaller perturbations round theta+ and theta- to the same "
                              f"value)")
        out.append(TuneParam(name, p.type is int, lo, hi, c_end, r_end, value))
    fixed = tuple((k, str(v) if isinstance(v, str) else _fmt(v))
                  for k, v in written.items() if k not in {q.name for q in out})
    opponents: tuple[str, ...] = ()
    if against:
        opponents = FIELD if against.strip() == "field" else tuple(split_specs(against))
        for o in opponents:
            make(o)
    check_counts(pairs=pairs, iterations=iterations)
    why = refuse_eval_seed(int(seed), "--seed")
    if why:
        raise ConfigError(why)
    if len(out) > MAX_PARAMS:
        raise ConfigError(f"{len(out)} --param options: at most {MAX_PARAMS} parameters are "
                          f"tuned at once")
    cfg = TuneConfig(start.spec_target or target, fixed, tuple(out), opponents,
                     pairs, iterations, int(seed), tuple(plugins))
    make(cfg.spec(cfg.played([p.start for p in out])))  # the specs it will play are valid
    return cfg


def check_counts(pairs: Any = 1, iterations: Any = 1, confirm: Any = 0, jobs: Any = 1
                 ) -> None:
    """Each count an integer within its bounds (``MAX_*``), or a one-line ConfigError that
    names the bound: checked before anything is played or written."""
    for what, v, lo, hi in (("--pairs", pairs, 1, MAX_PAIRS),
                            ("--iterations", iterations, 1, MAX_ITERATIONS),
                            ("--confirm", confirm, 0, MAX_CONFIRM), ("--jobs", jobs, 1, MAX_JOBS)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            shown = v if not isinstance(v, int) or abs(v) < 10 ** 12 else f"{v:.3g}"
            raise ConfigError(f"{what} {shown!r} must be an integer in {lo} … {hi:,}")


# --- the checkpoint: received data, read against a declared schema ------------------------
Finite = Annotated[float, msgspec.Meta(ge=-1e300, le=1e300)]  # JSON has no NaN; no infinity
Count = Annotated[int, msgspec.Meta(ge=0, le=2 ** 62)]


class _Checkpoint(msgspec.Struct, forbid_unknown_fields=True):
    """``checkpoint.json``: what ``_save`` writes."""

    format: Literal["shuangkou-tune/1"]
    key: dict[str, Any]
    iteration: Annotated[int, msgspec.Meta(ge=0, le=MAX_ITERATIONS)]
    theta: Annotated[list[Finite], msgspec.Meta(max_length=MAX_PARAMS)]
    pairs: Count
    seconds: Annotated[float, msgspec.Meta(ge=0, le=1e12)]


class _Row(msgspec.Struct, forbid_unknown_fields=True):
    """One line of ``trajectory.jsonl``: what ``_row`` writes."""

    iteration: Annotated[int, msgspec.Meta(ge=0, le=MAX_ITERATIONS)]
    theta: Annotated[list[Finite], msgspec.Meta(max_length=MAX_PARAMS)]
    margin: Finite | None
    pairs: Count


def _corrupt(file: str, why: str) -> ConfigError:
    return ConfigError(f"checkpoint {file!r} is corrupt ({why}): remove it or choose another "
                       f"--out")


def _in_ranges(cfg: TuneConfig, theta: Sequence[float], file: str, where: str) -> None:
    """Each value of ``theta`` within its parameter's range (a run only ever clips into it)."""
    if len(theta) != len(cfg.params):
        raise _corrupt(file, f"{where} holds {len(theta)} values; this run tunes "
                             f"{len(cfg.params)} parameter(s)")
    for i, (p, x) in enumerate(zip(cfg.params, theta)):
        if not p.lo <= x <= p.hi:
            raise _corrupt(file, f"{where}[{i}] = {x!r}: {p.name} must be in "
                                 f"{_fmt(p.lo)} … {_fmt(p.hi)}")


def load_checkpoint(path: str, cfg: TuneConfig) -> dict[str, Any] | None:
    """The checkpoint in ``path`` (None: none there), or a ConfigError for a corrupt one or one
    of other settings. The files are data: a regular file of bounded size (never a FIFO or a
    device), nesting capped, every field's type and range checked (``_Checkpoint``, ``_Row``),
    theta within the parameters' ranges."""
    file = os.path.join(path, CHECKPOINT)
    if not os.path.lexists(file):
        return None
    try:
        data = read_received(file, MAX_CHECKPOINT_BYTES, "tune checkpoint")
    except OSError as e:
        raise _corrupt(file, e.strerror or type(e).__name__) from None
    try:
        got = decode_json(data, _Checkpoint, where="checkpoint.json")
    except ValueError as e:
        raise _corrupt(file, str(e).removeprefix("checkpoint.json: ")) from None
    state = msgspec.to_builtins(got)
    if state["key"] != json.loads(json.dumps(cfg.key())):
        diff = sorted(k for k in cfg.key() if state["key"].get(k) != json.loads(
            json.dumps(cfg.key()[k])))
        raise ConfigError(f"checkpoint {file!r} is from another tuning run (its "
                          f"{', '.join(diff) or 'settings'} differ): use another --out, or "
                          f"the same spec, --param ranges, --seed, --pairs and --iterations")
    _in_ranges(cfg, got.theta, file, "theta")
    if state["iteration"] > cfg.iterations:
        raise _corrupt(file, f"iteration {state['iteration']} is past this run's "
                             f"--iterations {cfg.iterations}")
    state["rows"] = _read_rows(cfg, os.path.join(path, ROWS), state["iteration"], file)
    return state


def _read_rows(cfg: TuneConfig, rows_file: str, iteration: int, file: str
               ) -> list[dict[str, Any]]:
    """The trajectory's rows 0 … ``iteration`` (rows past the checkpoint, appended by a run
    killed before its checkpoint, are left out), each checked (``_Row``, theta in range), or a
    ConfigError naming the line and the field."""
    rows: list[dict[str, Any]] = []
    try:
        with open_received(rows_file, MAX_ROWS_BYTES, "trajectory") as f:
            while len(rows) <= iteration:
                line = f.readline(MAX_ROW_BYTES + 1)
                where = f"{ROWS} line {len(rows) + 1}"
                if not line:
                    raise _corrupt(file, f"{ROWS} holds {len(rows)} row(s); its iteration "
                                         f"{iteration} needs {iteration + 1}")
                if len(line) > MAX_ROW_BYTES:
                    raise _corrupt(file, f"{where} is longer than {MAX_ROW_BYTES:,} bytes")
                try:
                    r = decode_json(line, _Row, where=where)
                except ValueError as e:
                    raise _corrupt(file, str(e)) from None
                if r.iteration != len(rows):
                    raise _corrupt(file, f"{where}: iteration {r.iteration}, expected "
                                         f"{len(rows)}")
                _in_ranges(cfg, r.theta, file, f"{where}: theta")
                rows.append(msgspec.to_builtins(r))
    except OSError as e:
        raise _corrupt(file, f"{ROWS}: {e.strerror or type(e).__name__}") from None
    return rows


def _save(path: str, state: dict[str, Any]) -> None:
    text = json.dumps({k: v for k, v in state.items() if k != "rows"}, indent=1)
    atomic_write(os.path.join(path, CHECKPOINT), lambda f: f.write(text), mode="w")


def _write_rows(path: str, rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    atomic_write(os.path.join(path, ROWS), lambda f: f.write(text), mode="w")


# --- the run ----------------------------------------------------------------------------
@dataclasses.dataclass
class TuneResult:
    spec: str  # the tuned spec
    start: str  # the start spec (as played)
    theta: list[float]
    rows: list[dict[str, Any]]
    pairs_played: int
    confirm: dict[str, Any] | None
    seconds: float


def step(cfg: TuneConfig, theta: np.ndarray, k: int, play: Callable[..., Any]
         ) -> tuple[np.ndarray, float, int]:
    """One SPSA iteration ``k`` (1-based) from ``theta``: the new theta, the margin of theta+
    (points per deal per player) and the pairs played."""
    c_k, a_k = cfg.gains(k)
    sign = cfg.signs(k)
    lo = np.array([p.lo for p in cfg.params])
    hi = np.array([p.hi for p in cfg.params])
    plus = cfg.spec(cfg.played(np.clip(theta + c_k * sign, lo, hi)))
    minus = cfg.spec(cfg.played(np.clip(theta - c_k * sign, lo, hi)))
    first = (k - 1) * cfg.pairs
    if cfg.against:
        jobs = [(s, o, first, cfg.pairs) for o in cfg.against for s in (plus, minus)]
        x2 = play(jobs)
        margin = float(np.mean([(x2[2 * j].astype(np.int64) - x2[2 * j + 1]).mean() / 2
                                for j in range(len(cfg.against))]))
        played = 2 * cfg.pairs * len(cfg.against)
    else:
        (x2,) = play([(plus, minus, first, cfg.pairs)])
        margin = float(x2.mean() / 2)
        played = cfg.pairs
    new = np.clip(theta + a_k / c_k * margin * sign, lo, hi)
    return new, margin, played


def _row(cfg: TuneConfig, k: int, theta: Sequence[float], margin: float | None,
         pairs: int) -> dict[str, Any]:
    return {"iteration": k, "theta": [float(x) for x in theta], "margin": margin,
            "pairs": pairs}


def run(cfg: TuneConfig, out: str, jobs: int = 1, backend: str = "auto",
        resume: bool = False, confirm: int = 20000, progress: bool | None = None,
        stop_after: int | None = None, say: Callable[[str], None] | None = None,
        plot: bool = True) -> TuneResult:
    """Tune ``cfg`` writing to folder ``out``; ``stop_after``: testing hook, stop after this
    many iterations of this call (the checkpoint stays, as after a kill)."""
    say = say or (lambda text: print(text, file=sys.stderr))
    check_counts(pairs=cfg.pairs, iterations=cfg.iterations, confirm=confirm, jobs=jobs)
    os.makedirs(out, exist_ok=True)
    state = load_checkpoint(out, cfg)
    if state is not None and not resume:
        raise ConfigError(f"{out!r} already holds a tuning checkpoint: pass --resume to "
                          f"continue it, or choose another --out")
    theta0 = [p.start for p in cfg.params]
    if state is None:
        state = {"format": FORMAT, "key": cfg.key(), "iteration": 0, "theta": theta0,
                 "rows": [_row(cfg, 0, theta0, None, 0)], "pairs": 0, "seconds": 0.0}
        _write_rows(out, state["rows"])
        _save(out, state)
    else:
        _write_rows(out, state["rows"])  # drops rows a killed run appended past it
    if state["iteration"]:
        say(f"resuming {out!r} at iteration {state['iteration']} of {cfg.iterations}")
    theta = np.array(state["theta"], dtype=np.float64)
    start_spec = cfg.spec(cfg.played(theta0))
    warm = [(start_spec, start_spec)] + [(start_spec, o) for o in cfg.against]
    bar = None
    if progress is None:
        progress = sys.stderr.isatty()
    with tournament.pair_player(cfg.seed, jobs, backend, plugins=cfg.plugins, warm_up=warm) as play:
        t0 = time.perf_counter()  # after the workers' start and compile: tuning time only
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=cfg.iterations, initial=state["iteration"], unit="it",
                       file=sys.stderr, dynamic_ncols=True)
        try:
            done = 0
            while state["iteration"] < cfg.iterations:
                if stop_after is not None and done >= stop_after:
                    break
                k = state["iteration"] + 1
                theta, margin, n = step(cfg, theta, k, play)
                state["iteration"] = k
                state["theta"] = [float(x) for x in theta]
                row = _row(cfg, k, theta, margin, n)
                state["rows"].append(row)
                with open(os.path.join(out, ROWS), "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
                state["pairs"] += n
                state["seconds"] = state["seconds"] + time.perf_counter() - t0
                t0 = time.perf_counter()
                _save(out, state)
                done += 1
                if bar is not None:
                    bar.set_postfix_str(" ".join(
                        f"{p.name}={_fmt(v)}" for p, v in zip(cfg.params, cfg.played(theta))),
                        refresh=False)
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
            if state["iteration"] < cfg.iterations:  # stopped early (Ctrl-C): so far
                write_trajectory(cfg, state["rows"][:state["iteration"] + 1], out, plot=plot)
        tuned = cfg.spec(final_values(cfg, theta))
        result = TuneResult(tuned, start_spec, [float(x) for x in theta], state["rows"],
                            state["pairs"], None, state["seconds"])
        if state["iteration"] < cfg.iterations:
            return result
        write_trajectory(cfg, state["rows"], out, plot=plot)
        if confirm:
            (x2,) = play([(tuned, start_spec, CONFIRM_FIRST, confirm)])
            result.confirm = confirmation(x2)
            with open(os.path.join(out, "confirm.json"), "w", encoding="utf-8") as f:
                json.dump({"tuned": tuned, "start": start_spec, **result.confirm}, f,
                          indent=1)
    return result


def final_values(cfg: TuneConfig, theta: Sequence[float]) -> list[Any]:
    """The tuned values as printed: integers rounded, floats to 4 decimals."""
    return [p.value(round(x, 4)) if not p.integer else p.value(x)
            for p, x in zip(cfg.params, theta)]


def confirmation(x2: np.ndarray, conf: float = 0.95, first: int = CONFIRM_FIRST
                 ) -> dict[str, Any]:
    """The paired result of a confirmation match from its pairs' ``x2`` (deals from
    ``first``)."""
    x = x2.astype(np.float64) / 2
    mean, lo, hi = mean_ci(x, conf) if x.size > 1 else (float(x.mean()), math.nan, math.nan)
    return {"pairs": int(x.size), "margin": mean, "lo": lo, "hi": hi, "conf": conf,
            "first_deal": first}


# --- outputs ----------------------------------------------------------------------------
def trajectory_csv(cfg: TuneConfig, rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["iteration", *[p.name for p in cfg.params], "margin", "pairs"])
    for r in rows:
        w.writerow([r["iteration"], *[_fmt(v) for v in cfg.played(r["theta"])],
                    "" if r["margin"] is None else f"{r['margin']:.4f}", r["pairs"]])
    return buf.getvalue()


def write_trajectory(cfg: TuneConfig, rows: Sequence[dict[str, Any]], out: str,
                     plot: bool = True) -> None:
    text = trajectory_csv(cfg, rows)
    atomic_write(os.path.join(out, "trajectory.csv"), lambda f: f.write(text), mode="w")
    if plot:
        png = trajectory_png(cfg, rows)
        atomic_write(os.path.join(out, "trajectory.png"), lambda f: f.write(png))


def trajectory_png(cfg: TuneConfig, rows: Sequence[dict[str, Any]]) -> bytes:
    """Each parameter (as a share of its range) and the running mean margin by iteration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = np.array([r["iteration"] for r in rows])
    th = np.array([r["theta"] for r in rows], dtype=np.float64).reshape(len(rows), -1)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True,
                                 layout="constrained")
    for i, p in enumerate(cfg.params):
        ax.plot(it, (th[:, i] - p.lo) / (p.hi - p.lo), label=f"{p.name} [{_fmt(p.lo)}, "
                                                            f"{_fmt(p.hi)}]")
    ax.set_ylabel("value (share of its range)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8, loc="best")
    how = f"each vs {', '.join(cfg.against)}" if cfg.against else "theta+ vs theta-"
    ax.set_title(f"SPSA: {cfg.target}, {cfg.pairs} pairs per iteration, {how}")
    m = np.array([np.nan if r["margin"] is None else r["margin"] for r in rows])
    if m.size > 1:
        w = max(1, m.size // 20)
        smooth = np.convolve(np.nan_to_num(m[1:]), np.ones(w) / w, mode="valid")
        bx.plot(it[1:], m[1:], ".", ms=2, alpha=0.4, label="theta+ - theta- (per iteration)")
        bx.plot(it[w:], smooth, label=f"moving mean of {w}")
    bx.axhline(0, color="grey", lw=0.5)
    bx.set_xlabel("iteration")
    bx.set_ylabel("margin (points per deal per player)")
    bx.legend(fontsize=8, loc="best")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def duel(a: str, b: str, pairs: int, first: int = CONFIRM_FIRST, seed: int = 0,
         jobs: int = 1) -> dict[str, Any]:
    """``a`` vs ``b`` on ``pairs`` duplicate pairs from deal ``first``: the paired result."""
    with tournament.pair_player(seed, jobs, warm_up=[(a, b)]) as play:
        (x2,) = play([(a, b, first, pairs)])
    return confirmation(x2, first=first)
