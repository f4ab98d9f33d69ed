"""Tournament configurations: a TOML file, validated completely before anything runs.

A config names the players, the format, how many deals, the rules variant, how to run and
what to write. Every key is checked here: an unknown key, strategy, parameter or variant, a
wrong type or a value out of range is one :class:`ConfigError` that names the key, quotes the
value and says what is allowed (the CLI turns it into exit code 2).

The schema (every key but ``players`` is optional; defaults shown)::

    name = "quick"                     # default: the file's stem; results go to results/NAME
    format = "head-to-head"            # head-to-head (2 players), round-robin, gauntlet,
                                       # partners (every team of two against every other)
    teams = []                         # partners only: the teams to play, e.g. ["a+b", "a+a"]
    players = ["random(show_prob=0.9)", "random"]   # strategy specs (strategies issue)
    deals = 10000                      # distinct deals per matchup
    duplicate = true                   # play every deal twice, teams swapped
    seed = 0                           # master seed, 0 … 2**63-1 in TOML (--seed takes 2**64-1)
    first_deal = 0                     # deals first_deal … first_deal+deals-1
    plugins = []                       # plug-in modules the players need: named, not
                                       # loaded (a file's are loaded only by --plugin)
    timeout = 0.0                      # seconds per Python-strategy decision, 0: no limit

    [rules]                            # any of docs/rules.md "Variants"
    kou_di_pair = 4

    [run]
    jobs = 1                           # parallel workers
    backend = "auto"                   # auto (Linux: fork, else loky), fork, loky, threading, dask
    scheduler = ""                     # dask scheduler address, e.g. tcp://10.0.0.5:8786
    chunk_size = 10000                 # deals per chunk (unit of work and of files)
    progress = true                    # tqdm progress bar on stderr

    [output]
    dir = ""                           # default results/NAME
    deal_table = true                  # the per-deal table (deals/*.parquet)
    records = 0                        # RECORD.md records of the first K deals per matchup
    record_filter = ""                 # or of deals matching e.g. "attacker_score >= 200"
    record_limit = 1000                # at most this many filtered records per matchup
    plots = true                       # PNG plots and report.html

    [sprt]                             # head-to-head only: stop once H0 or H1 is accepted
    mu0 = 0.0                          # H0: A's mean settlement per deal per player
    mu1 = 0.5                          # H1
    alpha = 0.05
    beta = 0.05
    min_pairs = 200                    # no decision before this many pairs (30 … 10**9)

``TournamentConfig.to_toml()`` writes the resolved config (every key, canonical specs) in
this same format, so a results folder's ``config.toml`` can be run again as it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from sim.bots.spec import BotSpec, apply_settings
from sim.core.files import read_received
from sim.core.limits import MAX_DEAL, MAX_SEED
from sim.errors import ConfigError, ShuangkouError
from sim.tournament.forkpool import fork_available

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as a package
    import tomli as tomllib

FORMATS = ("head-to-head", "round-robin", "gauntlet", "partners")
BACKENDS = ("auto", "fork", "loky", "threading", "dask")
MAX_SEED_TOML = 2**63 - 1  # TOML integers are signed 64-bit
MAX_CONFIG_BYTES = 1 << 20  # a config file is a few hundred bytes; 1 MiB is plenty
# matchups of one run: each holds ~25 KB of accumulators, 10 KB of summary.json and a plot;
# 500 is a round robin of 32 players or a gauntlet of 501 (a round robin of 1,000 players,
# 499,500 matchups, needed 12 GB before a deal was played)
MAX_MATCHUPS = 500
# deals per matchup: far past any real run (a million deals a second: 12 days), and one that
# finishes; `tournament --deals` has the same bound (sim.cli.options.MAX_CLI_DEALS, docs/cli.md)
MAX_CONFIG_DEALS = 10**12

_TOP = ("name", "format", "players", "deals", "duplicate", "seed", "first_deal", "plugins",
        "timeout", "rules", "run", "output", "sprt", "bots", "teams")
_RUN = ("jobs", "backend", "scheduler", "chunk_size", "progress")
_OUTPUT = ("dir", "deal_table", "records", "record_filter", "record_limit", "plots")
_SPRT = ("mu0", "mu1", "alpha", "beta", "min_pairs")
# keys that do not change a single result: a run may be resumed with other values
_RUN_ONLY = ("name", "run.jobs", "run.backend", "run.scheduler", "run.progress", "output.dir",
             "output.plots")

_FILTER_TERM = re.compile(r"\s*([a-z_][a-z0-9_]*)\s*(==|!=|>=|<=|>|<)\s*(-?\d+)\s*$")


@dataclasses.dataclass(frozen=True)
class Sprt:
    """SPRT parameters: H0 mean ``mu0`` against H1 mean ``mu1`` of the per-pair result."""

    mu0: float = 0.0
    mu1: float = 0.5
    alpha: float = 0.05
    beta: float = 0.05
    min_pairs: int = 200  # the first look that may decide comes after this many pairs


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """A validated, resolved tournament configuration (see the module docstring)."""

    name: str
    format: str
    players: tuple[str, ...]
    deals: int = 10000
    duplicate: bool = True
    seed: int = 0
    first_deal: int = 0
    plugins: tuple[str, ...] = ()
    timeout: float = 0.0
    rules: tuple[tuple[str, int], ...] = ()
    jobs: int = 1
    backend: str = "auto"
    scheduler: str = ""
    chunk_size: int = 10000
    progress: bool = True
    out_dir: str = ""
    deal_table: bool = True
    records: int = 0
    record_filter: str = ""
    record_limit: int = 1000
    plots: bool = True
    sprt: Sprt | None = None
    oracle: tuple[bool, ...] = ()
    bots: tuple[tuple[str, Any], ...] = ()  # [bots]: settings, never commands (docs/bots.md)
    # partners: the individual players (``players`` are then the teams "a+b", the entrants of
    # the run's matchups) and the teams the config chose (empty: every team)
    members: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    member_oracle: tuple[bool, ...] = ()  # partners: ``oracle`` of each member
    source: str = "<config>"
    base_dir: str = "."

    # --- derived ----------------------------------------------------------------------
    @property
    def rules_dict(self) -> dict[str, int]:
        return dict(self.rules)

    def rules_obj(self) -> Any:
        from sim.rules import Rules  # (numpy: this module stays light for the command line)

        return Rules.from_dict(self.rules_dict)

    @property
    def out(self) -> str:
        """The results folder."""
        return self.out_dir or os.path.join("results", self.name)

    def matchups(self) -> list[tuple[int, int]]:
        """Player index pairs ``(a, b)``; ``a`` is side A of the matchup."""
        k = len(self.players)
        if self.format == "head-to-head":
            return [(0, 1)]
        if self.format == "gauntlet":
            return [(0, j) for j in range(1, k)]
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    # --- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The resolved config as nested plain data, keys exactly as in a TOML file."""
        d: dict[str, Any] = {
            "name": self.name, "format": self.format,
            "players": list(self.members or self.players),
            "deals": self.deals, "duplicate": self.duplicate, "seed": self.seed,
            "first_deal": self.first_deal, "plugins": list(self.plugins),
            "timeout": self.timeout, "rules": dict(self.rules),
            "run": {"jobs": self.jobs, "backend": self.backend, "scheduler": self.scheduler,
                    "chunk_size": self.chunk_size, "progress": self.progress},
            "output": {"dir": self.out_dir, "deal_table": self.deal_table,
                       "records": self.records, "record_filter": self.record_filter,
                       "record_limit": self.record_limit, "plots": self.plots},
        }
        if self.sprt is not None:
            d["sprt"] = dataclasses.asdict(self.sprt)
        if self.bots:
            d["bots"] = self.bots_dict
        if self.teams:
            d["teams"] = list(self.teams)
        return d

    @property
    def bots_dict(self) -> dict[str, Any]:
        """``[bots]`` as nested data: common settings, and a table per bot name."""
        return {k: dict(v) if isinstance(v, tuple) else v for k, v in self.bots}

    def result_dict(self) -> dict[str, Any]:
        """``to_dict`` without the keys that cannot change a result (jobs, backend, …)."""
        d = json.loads(json.dumps(self.to_dict()))
        for key in _RUN_ONLY:
            table, _, leaf = key.rpartition(".")
            (d[table] if table else d).pop(leaf, None)
        return d

    def hash(self) -> str:
        """SHA-256 of ``result_dict`` in canonical JSON: equal hashes, equal results."""
        text = json.dumps(self.result_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def differences(self, other: TournamentConfig) -> list[str]:
        """``'key: A -> B'`` for every result-changing key that differs from ``other``."""
        a, b = _flatten(self.result_dict()), _flatten(other.result_dict())
        return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b))
                if a.get(k) != b.get(k)]

    def to_toml(self) -> str:
        """The resolved config as TOML that ``load_config`` reads back to an equal config."""
        d = self.to_dict()
        lines = [f"# resolved config of tournament {self.name!r} (written by shuangkou)"]
        tables = {k: v for k, v in d.items() if isinstance(v, dict)}
        for k, v in d.items():
            if not isinstance(v, dict):
                lines.append(f"{k} = {_toml_value(v)}")
        for t, vals in tables.items():
            lines.append(f"\n[{t}]")
            for k, v in vals.items():
                if not isinstance(v, dict):
                    lines.append(f"{k} = {_toml_value(v)}")
            for k, v in vals.items():  # [bots.NAME]
                if isinstance(v, dict):
                    lines.append(f"\n[{t}.{json.dumps(k)}]")
                    lines.extend(f"{kk} = {_toml_value(vv)}" for kk, vv in v.items())
        return "\n".join(lines) + "\n"


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


# --- loading ------------------------------------------------------------------------------
def load_config(path: str | os.PathLike, overrides: Mapping[str, Any] | None = None
                ) -> TournamentConfig:
    """Read and validate a TOML config.

    Parameters
    ----------
    path : the ``.toml`` file.
    overrides : dotted keys replacing the file's values before validation, e.g.
        ``{"deals": 1000, "run.jobs": 2}`` (the command-line options).

    Raises
    ------
    ConfigError
        For an unreadable file, invalid TOML or any invalid key or value.
    """
    path = os.fspath(path)
    try:
        data = read_received(path, MAX_CONFIG_BYTES, "config file")
    except FileNotFoundError:
        raise ConfigError(f"config file {path!r} does not exist") from None
    except OSError as e:
        raise ConfigError(f"config file {path!r} cannot be read: {e.strerror or e}") from None
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path!r} is not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"config file {path!r} is not UTF-8 text (byte {e.start}: "
                          f"{e.reason}); save it as UTF-8") from None
    except RecursionError:
        raise ConfigError(f"config file {path!r} nests tables or arrays too deeply to be a "
                          f"tournament config (it has at most two levels: [run] etc.)") from None
    raw.setdefault("name", os.path.splitext(os.path.basename(path))[0])
    # a config is data: what it names is checked, never imported (plug-ins come from --plugin)
    return from_dict(raw, source=path, overrides=overrides, base_dir="",
                     import_plugins=False)


_OWN_PACKAGES = ("sim", "strategies")
_MODULE_IN_SPEC = re.compile(r"([A-Za-z_][\w.]*):[A-Za-z_]")


def _check_loaded(raw: Mapping[str, Any], plugins: tuple[str, ...], source: str) -> None:
    """A config read from a file names plug-ins but does not load them: each module it names
    (``plugins``, ``module:Class`` players, nested specs too) must be imported already, by
    ``--plugin`` (or by the caller, in Python); then it is registered, which runs nothing."""
    # (the registry reads entry points: importlib.metadata, kept off the command line's start)
    from strategies.registry import load_builtins, load_plugin, parse_spec, registered

    specs = [s for s in raw.get("players", []) if isinstance(s, str)] \
        if isinstance(raw.get("players"), list) else []
    load_builtins()
    for i, m in enumerate(plugins):
        if m not in sys.modules:
            unknown = []
            for spec in specs:
                try:
                    target = parse_spec(spec)[0]
                except ShuangkouError:
                    continue
                if registered(target) is None and ":" not in target:
                    unknown.append(target)
            which = f" (strategy {', '.join(map(repr, dict.fromkeys(unknown)))})" \
                if unknown else ""
            raise ConfigError(f"{source}: config names plug-in {m!r}{which} but a config does "
                              f"not load plug-ins: load it with --plugin {m} (key "
                              f"'plugins[{i}]')")
        try:  # already imported: this only registers its strategies (no path, no code run)
            load_plugin(m)
        except ShuangkouError as e:
            raise ConfigError(f"{source}: key 'plugins[{i}]' = {m!r}: {e}") from None
    for i, spec in enumerate(specs):
        for m in _MODULE_IN_SPEC.findall(spec):
            # this package's own modules (strategies.example_compiled:CautiousC) come from
            # its installed folders, never from beside the config: named freely
            if m not in sys.modules and m.partition(".")[0] not in _OWN_PACKAGES:
                raise ConfigError(f"{source}: key 'players[{i}]' = {spec!r} names module {m!r} "
                                  f"but a config does not load modules: load it with "
                                  f"--plugin {m}")


_QUOTE_MAX = 200  # characters of a value an error line quotes


def _quoted(value: Any) -> str:
    """``repr(value)``, cut short (with how long it was) when a message would quote a long
    string or list whole: an error stays one readable line."""
    text = repr(value)
    if len(text) <= _QUOTE_MAX:
        return text
    size = (f"{len(value):,} characters" if isinstance(value, str) else
            f"{len(value):,} items" if isinstance(value, (list, tuple, dict)) else
            f"{len(text):,} characters")
    return f"{text[:_QUOTE_MAX - 40]}… ({size})"


def from_dict(raw: Mapping[str, Any], source: str = "<config>",
              overrides: Mapping[str, Any] | None = None, base_dir: str = ".",
              imports: bool = True, import_plugins: bool = True) -> TournamentConfig:
    """Validate a config given as nested data (the parsed TOML); see ``load_config``.

    ``import_plugins`` (a dict built in Python): import the ``plugins`` it names, looking in
    the working directory and ``base_dir``. Without it (``load_config``: a file is data) each
    module the config names must have been imported already (``--plugin``), else one
    ``ConfigError`` says which flag to add.

    With ``imports=False`` (a results folder's ``config.json``: data, not code) nothing is
    imported and ``sys.path`` is left alone: ``plugins`` are not loaded and player specs are
    kept as stored (they were resolved when the run started); a spec is checked and its
    ``oracle`` flag read only if its strategy is already known (built-in or loaded by the
    user with ``--plugin``), else the flag comes from the stored ``_oracle`` list.
    """
    try:
        raw = json.loads(json.dumps(raw, default=str))  # a deep copy we may change
    except RecursionError:
        raise ConfigError(f"{source}: tables or arrays nested too deeply to be a tournament "
                          f"config (it has at most two levels: [run] etc.)") from None
    stored_oracle = None if imports else raw.pop("_oracle", None)
    for key, value in (overrides or {}).items():
        table, _, leaf = key.rpartition(".")
        target = raw
        if table:
            target = raw.setdefault(table, {})
            if not isinstance(target, dict):
                raise ConfigError(f"{source}: key {table!r} must be a table, got {target!r}")
        target[leaf] = value
    v = _Validator(source)
    v.unknown(raw, _TOP, "")
    name = v.string(raw, "name", "tournament", pattern=r"[A-Za-z0-9_.-]+",
                    allowed="letters, digits, '_', '.', '-'")
    fmt = v.choice(raw, "format", "head-to-head", FORMATS, normalise=True)
    plugins = tuple(v.str_list(raw, "plugins", []))
    if imports and import_plugins:
        _load_plugins(plugins, base_dir, source)
    elif imports:
        _check_loaded(raw, plugins, source)
    if imports:
        players, oracle = v.players(raw, fmt)
    else:
        players, oracle = v.stored_players(raw, fmt, stored_oracle)
    members: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    member_oracle: tuple[bool, ...] = ()
    if fmt == "partners":
        members, teams, member_oracle = players, _teams(v, raw, players, imports), oracle
        players, oracle = _team_entrants(v, members, teams, oracle)
    elif "teams" in raw:
        v.fail("teams", raw["teams"], 'a list of teams needs format = "partners"')
    n_matchups = {"head-to-head": 1, "gauntlet": len(players) - 1}.get(
        fmt, len(players) * (len(players) - 1) // 2)
    if n_matchups > MAX_MATCHUPS:
        raise ConfigError(f"{source}: key 'players': format {fmt!r} with {len(players)} players "
                          f"is {n_matchups} matchups; at most {MAX_MATCHUPS} are allowed (a "
                          f"round robin of 32 players, a gauntlet of {MAX_MATCHUPS + 1}): "
                          f"split the field into several runs")
    deals = v.integer(raw, "deals", 10000, 1, MAX_CONFIG_DEALS)
    duplicate = v.boolean(raw, "duplicate", True)
    if fmt == "partners" and not duplicate:
        v.fail("duplicate", duplicate, 'format "partners" plays duplicate deals: true')
    seed = v.integer(raw, "seed", 0, 0, MAX_SEED)
    first = v.integer(raw, "first_deal", 0, 0, MAX_DEAL)
    if first + deals - 1 > MAX_DEAL:
        v.fail("first_deal", first, f"first_deal + deals must stay within 2**63 (deals={deals})")
    timeout = v.number(raw, "timeout", 0.0, 0.0, math.inf)
    rules = v.rules(raw.get("rules", {}))
    run = v.table(raw, "run", _RUN)
    jobs = v.integer(run, "jobs", 1, 1, 4096, prefix="run.")
    backend = v.choice(run, "backend", "auto", BACKENDS, prefix="run.")
    if backend == "fork" and not fork_available():
        v.fail("run.backend", backend, "this system cannot fork processes: use \"auto\" or "
               "\"loky\"")
    scheduler = v.string(run, "scheduler", "", prefix="run.")
    if scheduler and backend != "dask":
        v.fail("run.scheduler", scheduler, "a scheduler address needs backend = \"dask\"")
    m = re.fullmatch(r"(?:(?:tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[\w.-]+):(\d{1,5})", scheduler)
    if scheduler and not (m and 0 < int(m[2]) < 65536):
        v.fail("run.scheduler", scheduler, "a dask scheduler address is tcp://HOST:PORT (or "
               "tls://HOST:PORT), e.g. tcp://10.0.0.5:8786")
    chunk = v.integer(run, "chunk_size", 10000, 1, 10_000_000, prefix="run.")
    progress = v.boolean(run, "progress", True, prefix="run.")
    out = v.table(raw, "output", _OUTPUT)
    out_dir = v.string(out, "dir", "", prefix="output.", pattern=r"[^\x00]*",
                       allowed="a folder name without NUL characters")
    deal_table = v.boolean(out, "deal_table", True, prefix="output.")
    records = v.integer(out, "records", 0, 0, MAX_DEAL, prefix="output.")
    rfilter = v.string(out, "record_filter", "", prefix="output.")
    if rfilter:
        try:
            parse_filter(rfilter)
        except ConfigError as e:
            v.fail("output.record_filter", rfilter, str(e))
    rlimit = v.integer(out, "record_limit", 1000, 1, 10_000_000, prefix="output.")
    plots = v.boolean(out, "plots", True, prefix="output.")
    sprt = None
    if "sprt" in raw:
        t = v.table(raw, "sprt", _SPRT)
        if fmt != "head-to-head":
            v.fail("sprt", t, f"an SPRT needs format = \"head-to-head\", not {fmt!r}")
        mu0 = v.number(t, "mu0", 0.0, -math.inf, math.inf, prefix="sprt.")
        mu1 = v.number(t, "mu1", 0.5, -math.inf, math.inf, prefix="sprt.")
        if mu0 == mu1:
            v.fail("sprt.mu1", mu1, "must differ from sprt.mu0")
        alpha = v.number(t, "alpha", 0.05, 0.0, 0.5, prefix="sprt.", open_lo=True)
        beta = v.number(t, "beta", 0.05, 0.0, 0.5, prefix="sprt.", open_lo=True)
        from sim.analysis.stats.sprt import SPRT_SAFE_MIN_PAIRS  # (numpy: only for an SPRT run)

        mp = t.get("min_pairs", 200)
        if isinstance(mp, int) and not isinstance(mp, bool) and 1 <= mp < SPRT_SAFE_MIN_PAIRS:
            v.fail("sprt.min_pairs", mp, f"must be an integer in {SPRT_SAFE_MIN_PAIRS} … "
                   f"1000000000: with a look after every pair, fewer pairs before a decision "
                   f"let the variance of a handful of pairs decide, and the error rates "
                   f"exceed alpha and beta (0.10-0.14 instead of 0.05 at 2, in simulation)")
        min_pairs = v.integer(t, "min_pairs", 200, SPRT_SAFE_MIN_PAIRS, 10**9, prefix="sprt.")
        sprt = Sprt(mu0, mu1, alpha, beta, min_pairs)
    bots = _bots(v, raw["bots"], members or players) if "bots" in raw else ()
    return TournamentConfig(
        members=members, teams=teams, member_oracle=member_oracle, bots=bots, name=name,
        format=fmt, players=players,
        deals=deals, duplicate=duplicate, seed=seed, first_deal=first, plugins=plugins,
        timeout=timeout, rules=rules, jobs=jobs,
        backend=backend, scheduler=scheduler, chunk_size=chunk, progress=progress,
        out_dir=out_dir, deal_table=deal_table, records=records, record_filter=rfilter,
        record_limit=rlimit, plots=plots, sprt=sprt, oracle=oracle, source=source,
        base_dir=base_dir)


def _teams(v: _Validator, raw: Mapping[str, Any], players: tuple[str, ...], imports: bool
           ) -> tuple[str, ...]:
    """``teams`` of a partners config: ``"a+b"`` strings (players' specs, canonical as in
    ``players``); empty for every team."""
    from strategies.registry import make, team_pair  # (entry points: as in _check_loaded)

    out = []
    for i, t in enumerate(v.str_list(raw, "teams", [])):
        try:
            pair = team_pair(t)  # "a+b", or "a" for the mirror team a+a
            if imports:
                pair = [make(x).spec() for x in pair]
        except ShuangkouError as e:
            raise ConfigError(f"{v.source}: key 'teams[{i}]' = {t!r}: {e}") from None
        out.append(f"{pair[0]}+{pair[1]}")
    return tuple(out)


def _team_entrants(v: _Validator, members: tuple[str, ...], teams: tuple[str, ...],
                   oracle: tuple[bool, ...]) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The teams "a+b" a partners run plays (all of them, or ``teams``), checked so that each
    player's individual strength is identified (sim.analysis.stats.partners.team_types)."""
    from sim.analysis.stats.partners import team_types  # (numpy: only for a partners config)
    from strategies.registry import team_pair  # (entry points: as in _check_loaded)

    chosen = [team_pair(t) for t in teams] or None
    try:
        types = team_types(list(members), chosen)
    except ConfigError as e:
        raise ConfigError(f"{v.source}: format \"partners\": {e}") from None
    flag = dict(zip(members, oracle))
    return (tuple(f"{a}+{b}" for a, b in types),
            tuple(flag[a] or flag[b] for a, b in types))


def _bots(v: _Validator, t: Any, players: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """``[bots]``: settings for every bot, and ``[bots.NAME]`` tables for one (docs/bots.md);
    a command is refused (a config is data: commands come from ``--bot``)."""
    if not isinstance(t, dict):
        v.fail("bots", t, "must be a table of bot settings")
    probe = BotSpec("probe", ("true",))
    out: list[tuple[str, Any]] = []
    common = {k: x for k, x in t.items() if not isinstance(x, dict)}
    for key in ("command", "argv", "cmd"):
        if key in common or any(isinstance(x, dict) and key in x for x in t.values()):
            v.fail(f"bots.{key}", "...", "a config never holds a bot's command (it is data "
                   "you may have received): give it with --bot NAME=COMMAND")
    apply_settings(probe, common, f"{v.source}: [bots]")
    out += sorted(common.items())
    for name, table in sorted((k, x) for k, x in t.items() if isinstance(x, dict)):
        if name not in players:
            v.fail(f"bots.{name}", table, f"a table per bot names one of the players "
                   f"({', '.join(players)})")
        apply_settings(probe, table, f"{v.source}: [bots.{name}]")
        out.append((name, tuple(sorted(table.items()))))
    return tuple(out)


def _load_plugins(mods: tuple[str, ...], base_dir: str, source: str) -> None:
    """Import plug-in modules, looking next to the config and in the working directory."""
    from strategies.registry import load_plugins  # (entry points: as in _check_loaded)

    # appended, and only when there is a plug-in to find: a module next to the config (e.g. a
    # stray matplotlib.py) must never shadow an installed one
    for i, m in enumerate(mods):
        try:
            load_plugins([m], (os.getcwd(), base_dir))
        except ShuangkouError as e:
            raise ConfigError(f"{source}: key 'plugins[{i}]' = {m!r}: {e}") from None


class _Validator:
    """Typed getters that turn every problem into one message naming key, value, allowed."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, value: Any, allowed: str) -> None:
        raise ConfigError(f"{self.source}: key {key!r} = {_quoted(value)}: {allowed}")

    def unknown(self, table: Mapping[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        for k in table:
            if k not in allowed:
                where = f"in [{prefix[:-1]}]" if prefix else "at the top level"
                raise ConfigError(f"{self.source}: unknown key {prefix + k!r} = "
                                  f"{_quoted(table[k])}: "
                                  f"allowed keys {where} are {', '.join(allowed)}")

    def table(self, raw: Mapping[str, Any], key: str, allowed: tuple[str, ...]
              ) -> Mapping[str, Any]:
        t = raw.get(key, {})
        if not isinstance(t, Mapping):
            self.fail(key, t, f"must be a table ([{key}]) with keys {', '.join(allowed)}")
        self.unknown(t, allowed, key + ".")
        return t

    def integer(self, t: Mapping[str, Any], key: str, default: int, lo: int, hi: int,
                prefix: str = "") -> int:
        v = t.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            rng = f">= {lo}" if hi >= MAX_DEAL else f"in {lo} … {hi}"
            if isinstance(v, int) and not isinstance(v, bool) and v > hi:  # name the bound
                rng = f"in {lo} … {'2**63-1' if hi == MAX_DEAL else hi}"
            self.fail(prefix + key, v, f"must be an integer {rng}")
        return int(v)

    def number(self, t: Mapping[str, Any], key: str, default: float, lo: float, hi: float,
               prefix: str = "", open_lo: bool = False) -> float:
        v = t.get(key, default)
        ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
        if ok:
            ok = (lo < v if open_lo else lo <= v) and v <= hi
        if not ok:
            if math.isinf(lo) and math.isinf(hi):
                what = "a finite number"
            elif math.isinf(hi):
                what = f"a number >= {lo}"
            else:
                what = f"a number in {'(' if open_lo else '['}{lo}, {hi}]"
            self.fail(prefix + key, v, f"must be {what}")
        return float(v)

    def boolean(self, t: Mapping[str, Any], key: str, default: bool, prefix: str = "") -> bool:
        v = t.get(key, default)
        if not isinstance(v, bool):
            self.fail(prefix + key, v, "must be true or false")
        return v

    def string(self, t: Mapping[str, Any], key: str, default: str, prefix: str = "",
               pattern: str | None = None, allowed: str = "") -> str:
        v = t.get(key, default)
        if not isinstance(v, str) or (pattern and not re.fullmatch(pattern, v)):
            self.fail(prefix + key, v, f"must be a string{' of ' + allowed if allowed else ''}")
        return v

    def choice(self, t: Mapping[str, Any], key: str, default: str, choices: tuple[str, ...],
               prefix: str = "", normalise: bool = False) -> str:
        v = t.get(key, default)
        w = v.strip().lower().replace("_", "-") if normalise and isinstance(v, str) else v
        if w not in choices:
            self.fail(prefix + key, v, f"allowed are {', '.join(choices)}")
        return w

    def str_list(self, t: Mapping[str, Any], key: str, default: list[str]) -> list[str]:
        v = t.get(key, default)
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            self.fail(key, v, "must be a list of non-empty strings")
        return v

    def players(self, raw: Mapping[str, Any], fmt: str) -> tuple[tuple[str, ...],
                                                                 tuple[bool, ...]]:
        from strategies.registry import make  # (entry points: as in _check_loaded)

        if "players" not in raw:
            raise ConfigError(f"{self.source}: missing key 'players': give a list of strategy "
                              f"specs, e.g. players = [\"random(show_prob=0.9)\", \"random\"]")
        specs = self.str_list(raw, "players", [])
        need = "exactly 2" if fmt == "head-to-head" else "at least 2"
        if (len(specs) != 2) if fmt == "head-to-head" else (len(specs) < 2):
            self.fail("players", specs, f"format {fmt!r} needs {need} players")
        out, oracle = [], []
        for i, spec in enumerate(specs):
            try:
                s = make(spec)
            except ShuangkouError as e:
                hint = ""
                if str(e).startswith("unknown strategy") and re.fullmatch(
                        r"[A-Za-z_][A-Za-z0-9_.-]*", spec.strip()):
                    hint = (f"; if {spec.strip()!r} is a bot in another process, add "
                            f"--bot {spec.strip()}=COMMAND (docs/bots.md)")
                raise ConfigError(f"{self.source}: key 'players[{i}]' = {spec!r}: {e}{hint}") \
                    from None
            canon = s.spec()
            if canon in out:
                self.fail(f"players[{i}]", spec, f"the same player as players"
                          f"[{out.index(canon)}] ({canon!r}); list each player once")
            out.append(canon)
            oracle.append(bool(s.oracle))
        return tuple(out), tuple(oracle)

    def stored_players(self, raw: Mapping[str, Any], fmt: str, stored: Any
                       ) -> tuple[tuple[str, ...], tuple[bool, ...]]:
        """``players`` of a results folder, checked without importing anything."""
        # (entry points: as in _check_loaded)
        from strategies.registry import load_builtins, parse_spec, registered

        if "players" not in raw:
            raise ConfigError(f"{self.source}: missing key 'players'")
        specs = self.str_list(raw, "players", [])
        if (len(specs) != 2) if fmt == "head-to-head" else (len(specs) < 2):
            self.fail("players", specs, f"format {fmt!r} needs "
                      f"{'exactly 2' if fmt == 'head-to-head' else 'at least 2'} players")
        for i, spec in enumerate(specs):
            if specs.index(spec) != i:
                self.fail(f"players[{i}]", spec, f"the same player as players"
                          f"[{specs.index(spec)}]; list each player once")
        if stored is None:  # a folder written before the run stored it
            stored = [False] * len(specs)
        elif not (isinstance(stored, list) and len(stored) == len(specs)
                  and all(isinstance(x, bool) for x in stored)):
            self.fail("_oracle", stored, f"must be a list of {len(specs)} booleans, one per "
                                         f"player (the run writes it)")
        load_builtins()
        oracle = []
        for i, spec in enumerate(specs):
            try:
                cls = registered(parse_spec(spec)[0])  # no make(): a nested spec imports
                oracle.append(bool(cls.oracle) if cls is not None else stored[i])
            except ShuangkouError as e:
                raise ConfigError(f"{self.source}: key 'players[{i}]' = {spec!r}: {e}") \
                    from None
        return tuple(specs), tuple(oracle)

    def rules(self, t: Any) -> tuple[tuple[str, int], ...]:
        from sim.rules import Rules  # (numpy: as in rules_obj)

        if not isinstance(t, Mapping):
            self.fail("rules", t, f"must be a table ([rules]) with keys "
                      f"{', '.join(Rules.names())}")
        self.unknown(t, Rules.names(), "rules.")
        try:
            r = Rules.from_dict(t)
        except ShuangkouError as e:
            bad = next((k for k in t if f"{k}=" in str(e)), next(iter(t), "rules"))
            raise ConfigError(f"{self.source}: key {'rules.' + bad!r} = {t.get(bad)!r}: "
                              f"{e}") from None
        return tuple(r.to_dict().items())


# --- record filter --------------------------------------------------------------------------
def parse_filter(text: str) -> list[tuple[str, str, int]]:
    """Parse ``"attacker_score >= 200 and multiplier == 4"`` into ``(column, op, value)``
    terms (all must hold). Columns are those of the per-deal table (``sim.tournament.run``)."""
    from sim.core.tables import DEAL_COLUMNS  # (numpy: as in TournamentConfig.rules_obj)

    terms = []
    for part in re.split(r"\band\b", text.strip()):
        m = _FILTER_TERM.match(part)
        if not m:
            raise ConfigError(f"record filter term {part.strip()!r} must be 'column op integer' "
                              f"with op one of == != >= <= > <, terms joined by 'and'")
        col, op, val = m.group(1), m.group(2), int(m.group(3))
        if col not in DEAL_COLUMNS:
            raise ConfigError(f"record filter column {col!r} is not a per-deal column: allowed "
                              f"are {', '.join(DEAL_COLUMNS)}")
        terms.append((col, op, val))
    return terms
