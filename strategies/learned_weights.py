"""The learned player's network seen from outside the kernels: the features it reads (their
layouts fix the shapes of its weights), the weight arrays and the weights file that holds them.

``strategies.learned`` plays the network (its kernels read these layouts as ``LW.F_HAND1`` …)
and re-exports what its importers read from here (``save_weights``, ``load_networks``,
``read_npz``, ``DS`` …). The file is a plain ``.npz`` read with ``allow_pickle=False``:
loading weights never runs code.
"""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sim.core.files import decode_json, open_received
from sim.core.layout import layout
from sim.core.limits import MAX_HIDDEN
from sim.errors import ShuangkouError, WeightsError

FEATURE_VERSION = 1
WEIGHTS_FORMAT = "shuangkou-learned"
WEIGHTS_VERSION = 1
MAX_NETS = 16  # networks in one weights file at most

# --- the state's binary features (indices into W1's rows) -------------------------------
# relative seats: 1 = the next seat (an opponent), 2 = the partner, 3 = the seat before
STATE_FIELDS = (
    ("F_HAND1", 54),  # key k: at least one copy in my hand (key layout, sim.cards)
    ("F_HAND2", 54),  # key k: both copies in my hand
    ("F_PLAYED1", 54),  # key k: at least one copy played (public)
    ("F_PLAYED2", 54),  # both copies played
    ("F_VOID", 12),  # 3 (relative seat - 1) + group: that seat has shown a void (R18, R19)
    ("F_TRICK_A", 3 * 54),  # this trick: the first card each relative seat played
    ("F_TRICK_B", 3 * 54),  # and its second card (a pair lead)
    ("F_POS", 4),  # plays before mine in this trick
    ("F_LEAD_GROUP", 4),  # group of the lead (when I follow)
    ("F_LEAD_PAIR", 1),
    ("F_WIN_PARTNER", 1),  # who is winning the trick now (when I follow)
    ("F_WIN_OPP", 1),
    ("F_ATTACKER", 1),  # my team attacks (R10)
    ("F_CALLER", 4),  # the caller's relative seat (0: me)
    ("F_CALL_KEY", 54),  # the pair that made the caller (R10): public
    ("F_NTRICKS", 27),  # tricks completed
    ("F_ATT_PTS", 21),  # attackers' points so far, in tens (20: 200)
)
_F, DS = layout(STATE_FIELDS)
F_HAND1 = _F["F_HAND1"]
F_HAND2 = _F["F_HAND2"]
F_PLAYED1 = _F["F_PLAYED1"]
F_PLAYED2 = _F["F_PLAYED2"]
F_VOID = _F["F_VOID"]
F_TRICK_A = _F["F_TRICK_A"]
F_TRICK_B = _F["F_TRICK_B"]
F_POS = _F["F_POS"]
F_LEAD_GROUP = _F["F_LEAD_GROUP"]
F_LEAD_PAIR = _F["F_LEAD_PAIR"]
F_WIN_PARTNER = _F["F_WIN_PARTNER"]
F_WIN_OPP = _F["F_WIN_OPP"]
F_ATTACKER = _F["F_ATTACKER"]
F_CALLER = _F["F_CALLER"]
F_CALL_KEY = _F["F_CALL_KEY"]
F_NTRICKS = _F["F_NTRICKS"]
F_ATT_PTS = _F["F_ATT_PTS"]
NS_MAX = 256  # active state features at most (hand 54 + played 108 + the rest < 60)

# the state's dense features (rows of Wd)
DENSE_FIELDS = (
    ("D_ATT", 1),  # attackers' points / 100
    ("D_DEF", 1),  # defenders' points / 100
    ("D_TRICK", 1),  # points in the current trick / 50
    ("D_OUT", 1),  # points neither in my hand nor played / 100
    ("D_MINE", 1),  # points in my hand / 50
    ("D_LEFT", 1),  # cards left in each hand / 27
    ("D_TRUMPS", 1),  # trumps in my hand / 27
    ("D_CHOICES", 1),  # legal plays / 32
    ("D_OUT_G", 4),  # by group: copies neither in my hand nor played / 20
    ("D_MINE_G", 4),  # by group: cards in my hand / 20
)
_D, ND = layout(DENSE_FIELDS)
D_ATT = _D["D_ATT"]
D_DEF = _D["D_DEF"]
D_TRICK = _D["D_TRICK"]
D_OUT = _D["D_OUT"]
D_MINE = _D["D_MINE"]
D_LEFT = _D["D_LEFT"]
D_TRUMPS = _D["D_TRUMPS"]
D_CHOICES = _D["D_CHOICES"]
D_OUT_G = _D["D_OUT_G"]
D_MINE_G = _D["D_MINE_G"]

# --- a play's binary features (rows of M) ----------------------------------------------
MOVE_FIELDS = (
    ("MV_A", 54),  # its first card's key
    ("MV_B", 54),  # its second card's key (two-card plays)
    ("MV_SINGLE", 1),
    ("MV_PAIR", 1),  # a pair (R15)
    ("MV_TWO", 1),  # two cards that are not a pair (R19b–d)
    ("MV_BEATS", 1),  # it would win the trick as it stands (R20, R21)
    ("MV_WINS", 1),  # it beats and I play last: it takes the trick
    ("MV_MASTER", 1),  # nothing outside my hand beats it in its group (greedy's is_master)
    ("MV_GREEDY", 1),  # greedy's move (default parameters)
    ("MV_PARTNER_WIN", 1),  # my partner is winning the trick now
    ("MV_FOLLOWS", 1),  # of the led group
    ("MV_TRUMP", 1),  # a trump (R12)
    ("MV_PTS", 5),  # its points: 0, 5, 10, 15, 20+
    ("MV_LAST", 1),  # the last trick (R23)
    ("MV_VOIDS", 1),  # it leaves me void in its first card's group
    ("MV_ABOVE", 4),  # copies outside my hand that beat it in its group: 0, 1, 2, 3+
    ("MV_PARTNER_AFTER", 1),  # my partner plays after me in this trick
    ("MV_OPP_VOID", 1),  # an opponent after me is known void in the led (or its) group
)
_M, DM = layout(MOVE_FIELDS)
MV_A = _M["MV_A"]
MV_B = _M["MV_B"]
MV_SINGLE = _M["MV_SINGLE"]
MV_PAIR = _M["MV_PAIR"]
MV_TWO = _M["MV_TWO"]
MV_BEATS = _M["MV_BEATS"]
MV_WINS = _M["MV_WINS"]
MV_MASTER = _M["MV_MASTER"]
MV_GREEDY = _M["MV_GREEDY"]
MV_PARTNER_WIN = _M["MV_PARTNER_WIN"]
MV_FOLLOWS = _M["MV_FOLLOWS"]
MV_TRUMP = _M["MV_TRUMP"]
MV_PTS = _M["MV_PTS"]
MV_LAST = _M["MV_LAST"]
MV_VOIDS = _M["MV_VOIDS"]
MV_ABOVE = _M["MV_ABOVE"]
MV_PARTNER_AFTER = _M["MV_PARTNER_AFTER"]
MV_OPP_VOID = _M["MV_OPP_VOID"]
NM_MAX = 16  # active features of one play at most (two cards, its kind, points, 12 flags)

MOVE_DENSE_FIELDS = (
    ("MD_PTS", 1),  # its points / 20
    ("MD_STRENGTH", 1),  # its first card's strength / 20
    ("MD_TAKE", 1),  # the trick's points with it / 50
    ("MD_LEFT_G", 1),  # cards of its first card's group left in my hand after it / 10
    ("MD_OUT_G", 1),  # copies of its group neither in my hand nor played / 20
)
_MD, MD = layout(MOVE_DENSE_FIELDS)
MD_PTS = _MD["MD_PTS"]
MD_STRENGTH = _MD["MD_STRENGTH"]
MD_TAKE = _MD["MD_TAKE"]
MD_LEFT_G = _MD["MD_LEFT_G"]
MD_OUT_G = _MD["MD_OUT_G"]

# the weight arrays in the order they lie in the row, with their shapes by (DS, ND, DM, MD,
# H1, H2, G)
WEIGHT_NAMES = ("W1", "Wd", "b1", "W2", "b2", "W3", "b3", "M", "Md", "bm", "v")


def weight_shapes(h1: int, h2: int, g: int) -> dict[str, tuple[int, ...]]:
    """The shape of every weight array of a network with hidden sizes ``h1``, ``h2``, ``g``."""
    return {"W1": (DS, h1), "Wd": (ND, h1), "b1": (h1,), "W2": (h1, h2), "b2": (h2,),
            "W3": (h2, g), "b3": (g,), "M": (DM, g), "Md": (MD, g), "bm": (g,), "v": (g,)}


def n_weights(h1: int, h2: int, g: int) -> int:
    """How many floats a network with these hidden sizes holds."""
    return sum(math.prod(s) for s in weight_shapes(h1, h2, g).values())


# --- the weights file --------------------------------------------------------------------
def shipped_weights() -> str:
    """The weights that ship with the package (docs/learning.md says how they were made)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights", "learned.npz")


def _dims(arrays: dict[str, np.ndarray], where: str) -> tuple[int, int, int]:
    try:
        h1 = int(arrays["b1"].shape[0])
        h2 = int(arrays["b2"].shape[0])
        g = int(arrays["v"].shape[0])
    except (KeyError, IndexError, AttributeError):
        raise WeightsError(f"{where}: not a learned player's weights file (needs the arrays "
                           f"{', '.join(WEIGHT_NAMES)})") from None
    for name, d in (("H1", h1), ("H2", h2), ("G", g)):
        if not 1 <= d <= MAX_HIDDEN:
            raise WeightsError(f"{where}: hidden size {name}={d} is outside 1 … {MAX_HIDDEN}")
    return h1, h2, g


def check_arrays(arrays: dict[str, Any], where: str = "weights") -> dict[str, np.ndarray]:
    """The weight arrays as float64, checked: every name present with its shape, all finite;
    else a WeightsError naming the problem."""
    missing = [k for k in WEIGHT_NAMES if k not in arrays]
    if missing:
        raise WeightsError(f"{where}: missing weight arrays {', '.join(missing)} (a learned "
                           f"player's file holds {', '.join(WEIGHT_NAMES)})")
    out = {}
    for k in WEIGHT_NAMES:
        a = np.asarray(arrays[k])
        if a.dtype.kind != "f":
            raise WeightsError(f"{where}: array {k} has dtype {a.dtype}; expected floats")
        out[k] = a.astype(np.float64)
    h1, h2, g = _dims(out, where)
    for k, shape in weight_shapes(h1, h2, g).items():
        if out[k].shape != shape:
            raise WeightsError(f"{where}: array {k} has shape {out[k].shape}; this version's "
                               f"features need {shape} (state {DS}+{ND}, play {DM}+{MD} "
                               f"features, feature version {FEATURE_VERSION})")
        if not np.all(np.isfinite(out[k])):
            raise WeightsError(f"{where}: array {k} holds values that are not finite")
    return out


def member_key(k: int, name: str) -> str:
    """The array name of weight ``name`` of network ``k`` of a file (0: the plain name)."""
    return name if k == 0 else f"m{k}/{name}"


def same_sizes(nets: list[dict[str, np.ndarray]], path: str) -> tuple[int, int, int]:
    """The hidden sizes that every network of an ensemble has, or a WeightsError."""
    dims = {_dims(a, path) for a in nets}
    if len(dims) > 1:
        raise WeightsError(f"{path}: an ensemble's networks must have the same hidden sizes "
                           f"(got {', '.join(map(str, sorted(dims)))})")
    return dims.pop()


def save_weights(path: str, arrays: dict[str, Any] | list[dict[str, Any]],
                 meta: dict[str, Any]) -> None:
    """Write ``arrays`` (one network's, or a list of networks' of the same hidden sizes: an
    ensemble, whose scores the player averages), checked, and ``meta`` (JSON) as a weights
    file, atomically."""
    nets = [arrays] if isinstance(arrays, dict) else list(arrays)
    if not 1 <= len(nets) <= MAX_NETS:
        raise WeightsError(f"{path}: {len(nets)} networks; a weights file holds 1 … "
                           f"{MAX_NETS}")
    checked = [check_arrays(a, path) for a in nets]
    same_sizes(checked, path)
    flat = {member_key(k, name): a[name] for k, a in enumerate(checked) for name in a}
    try:
        text = json.dumps(meta, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise WeightsError(f"{path}: meta cannot be written as JSON ({e})") from None
    tmp = f"{path}.tmp{os.getpid()}.npz"
    np.savez_compressed(tmp, format=np.array(WEIGHTS_FORMAT), version=np.array(WEIGHTS_VERSION),
                        feature_version=np.array(FEATURE_VERSION), meta=np.array(text), **flat)
    os.replace(tmp, path)


# --- an .npz someone else made, read as data ------------------------------------------------
NPY_HEADER = 1 << 16  # the most an .npy member's header may take (numpy writes ~128 bytes)
MAX_MEMBERS = 4096  # members of any .npz this package reads
MAX_WEIGHTS_BYTES = 1 << 30  # a weights file on disk (the shipped ensemble of three: 1.4 MB)
MAX_META_BYTES = 4 << 20  # its metadata, unpacked (the shipped file's: 11 KB)
_SMALL = 4096  # format, version, feature_version: one short value each


def _npy(raw: bytes) -> np.ndarray | str:
    """The array of one ``.npy`` member's bytes: its header read by numpy (never a pickle),
    its shape times its item size equal to the bytes that follow; else why not (a string;
    numpy's header reader raises ValueError for a header it cannot read)."""
    from numpy.lib import format as npy

    buf = io.BytesIO(raw)
    version = npy.read_magic(buf)
    reader = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
    if reader is None:
        return f".npy version {version} (numpy writes 1.0 or 2.0)"
    shape, fortran, dtype = reader(buf, max_header_size=NPY_HEADER)
    if dtype.hasobject:
        return "it holds Python objects (a pickle), which are never loaded"
    body = memoryview(raw)[buf.tell():]
    count = math.prod(shape)
    if count * dtype.itemsize != len(body):
        return (f"its header says shape {shape} of {dtype}, {count * dtype.itemsize:,} bytes; "
                f"{len(body):,} follow")
    a = np.frombuffer(body, dtype=dtype, count=count)
    return a.reshape(shape, order="F" if fortran else "C")


def read_npz(path: str, caps: Callable[[str], int | None] | Mapping[str, int], what: str,
             limit: int, error: type[ShuangkouError] = WeightsError) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` file ``path``, read as data someone else made.

    ``path`` must be a regular file of at most ``limit`` bytes (never a FIFO or a device:
    ``sim.core.files.open_received``); every member must be one ``caps`` names (member name
    without ``.npy`` -> the most bytes it may unpack to; None: not expected), and its unpacked
    size, as the zip's directory states it, within that cap, all checked before a byte is
    unpacked (a member can never unpack past its stated size: the zip reader stops there and
    checks the CRC), so a zip bomb or an extra array costs nothing. Each member is parsed
    without pickles (``_npy``). Any failure: ``error`` with one line naming the file, the
    member and what was expected."""
    cap_of = caps.get if isinstance(caps, Mapping) else caps
    try:
        f = open_received(path, limit, what)
    except FileNotFoundError:
        raise error(f"{what} {path!r} does not exist") from None
    except OSError as e:
        raise error(f"{what} {path!r} cannot be read ({e.strerror or type(e).__name__})"
                    ) from None
    out: dict[str, np.ndarray] = {}
    name = ""
    try:
        with f, zipfile.ZipFile(f) as z:
            infos = z.infolist()
            if len(infos) > MAX_MEMBERS:
                raise error(f"{what} {path!r} holds {len(infos):,} members; at most "
                            f"{MAX_MEMBERS:,} are expected")
            plan = []
            for info in infos:
                name = info.filename
                key = name[:-4] if name.endswith(".npy") else None
                cap = cap_of(key) if key is not None else None
                if cap is None:
                    raise error(f"{what} {path!r}: unexpected member {name!r} (not an array "
                                f"this kind of file holds)")
                if key in out or any(key == k for k, _ in plan):
                    raise error(f"{what} {path!r}: member {name!r} is there twice")
                if info.file_size > cap:
                    raise error(f"{what} {path!r}: member {name!r} unpacks to "
                                f"{info.file_size:,} bytes, more than the {cap:,} it may")
                plan.append((key, info))
            for key, info in plan:
                name = info.filename
                with z.open(info) as m:
                    raw = m.read(info.file_size + 1)
                got = _npy(raw) if len(raw) == info.file_size else \
                    f"{len(raw):,} bytes unpacked; the zip says {info.file_size:,}"
                if isinstance(got, str):
                    raise error(f"{what} {path!r} is not a readable .npz file (corrupt or "
                                f"truncated?): member {name!r}: {got}")
                out[key] = got
    except ShuangkouError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, struct.error, OSError,
            EOFError, ValueError, NotImplementedError, RuntimeError, KeyError) as e:
        part = f": member {name!r}" if name else ""
        why = " ".join(str(e).split()) or type(e).__name__
        raise error(f"{what} {path!r} is not a readable .npz file (corrupt or truncated?)"
                    f"{part}: {why}") from None
    return out


def _weights_caps() -> dict[str, int]:
    """Every member a weights file may hold and the most bytes each may unpack to (a network
    of ``MAX_HIDDEN`` everywhere, float64)."""
    big = weight_shapes(MAX_HIDDEN, MAX_HIDDEN, MAX_HIDDEN)
    caps = {"format": _SMALL, "version": _SMALL, "feature_version": _SMALL,
            "meta": MAX_META_BYTES}
    for k in range(MAX_NETS):
        for name, shape in big.items():
            caps[member_key(k, name)] = 8 * math.prod(shape) + NPY_HEADER
    return caps


def _finite(x: Any) -> bool:
    """No infinite number anywhere in decoded JSON (its nesting is capped at 64)."""
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_finite(v) for v in x)
    return True


def read_meta(a: Any, path: str) -> dict[str, Any]:
    """A weights file's ``meta`` member: a JSON object (no NaN, no infinity, nesting capped),
    else a WeightsError."""
    if a is None:
        return {}
    a = np.asarray(a)
    if a.shape != () or a.dtype.kind not in "US":
        raise WeightsError(f"weights file {path!r}: meta is an array of {a.dtype} and shape "
                           f"{a.shape}; expected one JSON text")
    text = a.item()
    try:
        meta = decode_json(text, dict[str, Any], where=f"weights file {path!r}: meta")
    except ValueError as e:
        raise WeightsError(f"{e} (expected a JSON object, without NaN)") from None
    if not _finite(meta):
        raise WeightsError(f"weights file {path!r}: meta holds an infinite number; expected "
                           f"a JSON object of finite numbers")
    return meta


def load_weights(path: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The weight arrays of the (first) network and the metadata of the weights file
    ``path``, checked (never unpickles: a file that needs it is refused)."""
    nets, meta = load_networks(path)
    return nets[0], meta


def load_networks(path: str) -> tuple[list[dict[str, np.ndarray]], dict[str, Any]]:
    """Every network of the weights file ``path`` (one, or an ensemble's) and its metadata,
    checked (never unpickles: a file that needs it is refused)."""
    data = read_npz(path, _weights_caps(), "weights file", MAX_WEIGHTS_BYTES)
    fmt = str(data.get("format", ""))
    if fmt != WEIGHTS_FORMAT:
        raise WeightsError(f"{path}: not a learned player's weights file (format {fmt!r}; "
                           f"expected {WEIGHTS_FORMAT!r})")
    for key, want in (("version", WEIGHTS_VERSION), ("feature_version", FEATURE_VERSION)):
        try:
            got = int(data[key])
        except (KeyError, TypeError, ValueError):
            got = None
        if got != want:
            raise WeightsError(f"{path}: weights file {key} {got}; this version of shuangkou "
                               f"reads {key} {want} only")
    meta = read_meta(data.get("meta"), path)
    nets = [check_arrays(data, path)]
    while any(k.startswith(f"m{len(nets)}/") for k in data):
        k = len(nets)
        if k >= MAX_NETS:
            raise WeightsError(f"{path}: more than {MAX_NETS} networks")
        nets.append(check_arrays({name: data[member_key(k, name)] for name in WEIGHT_NAMES
                                  if member_key(k, name) in data}, f"{path} (network {k})"))
    same_sizes(nets, path)
    return nets, meta


def flat_row(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The weights in the order they lie in a parameter row's tail (``net_scores``)."""
    return np.concatenate([arrays[k].ravel() for k in WEIGHT_NAMES]).astype(np.float64)


_ROWS: dict[tuple, tuple[np.ndarray, tuple[int, int, int], int]] = {}


def weights_row(path: str) -> tuple[np.ndarray, tuple[int, int, int], int]:
    """The flat weights of the file ``path`` (read-only; an ensemble's networks one after
    another), their hidden sizes and how many networks, cached by path, size and modification
    time (a tournament's seats and workers share one copy)."""
    try:
        stt = os.stat(path)
        key: tuple | None = (os.path.abspath(path), stt.st_size, stt.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _ROWS:
        return _ROWS[key]
    nets, _ = load_networks(path)
    flat = np.concatenate([flat_row(a) for a in nets])
    flat.flags.writeable = False
    out = (flat, same_sizes(nets, path), len(nets))
    if key is not None:
        if len(_ROWS) >= 4:
            _ROWS.clear()
        _ROWS[key] = out
    return out
