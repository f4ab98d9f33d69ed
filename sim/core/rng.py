"""Counter-based random numbers keyed by (seed, deal, stream) — docs/engine.md.

Draw ``i`` of a stream is a pure function of (seed, deal, stream, i), so any deal can be
replayed alone and results never depend on how deals are split among workers. The kernels
keep a stream as two ``uint64`` words (key, counter) inside their state arrays.
"""

from __future__ import annotations

import numpy as np

from sim.core.jit import kernel
from sim.core.limits import MAX_DEAL, MAX_SEED
from sim.errors import ConfigError

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_DEAL_MUL = np.uint64(0xD1B54A32D192ED03)
_STREAM_MUL = np.uint64(0xABC98388FB8FAC03)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)

STREAM_CARDS = 0
STREAM_SEAT0 = 1  # seat s draws from stream 1 + s
STREAM_STRATEGY0 = 16  # sampling strategies use streams from here on



@kernel
def mix64(z):
    """SplitMix64's finaliser: a bijective scramble of a 64-bit word."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@kernel
def deal_key(seed, deal):
    """What the keys of all streams of deal ``deal`` under ``seed`` (uint64) start from."""
    k = mix64(np.uint64(seed) ^ GOLDEN)
    return mix64(k ^ (np.uint64(deal) * _DEAL_MUL))


@kernel
def key_of_stream(dk, stream):
    """Key of stream ``stream`` of the deal whose ``deal_key`` is ``dk``."""
    return mix64(dk ^ (np.uint64(stream) * _STREAM_MUL))


@kernel
def stream_key(seed, deal, stream):
    """Key of stream ``stream`` of deal ``deal`` under master seed ``seed`` (all uint64)."""
    return key_of_stream(deal_key(seed, deal), stream)


@kernel
def draw(key, counter):
    """Draw number ``counter`` (from 0) of the stream with ``key``."""
    return mix64(key + (counter + np.uint64(1)) * GOLDEN)


@kernel
def bounded(r, n):
    """An index in ``0 … n-1`` from the high 32 bits of draw ``r`` (``n < 2**32``)."""
    return np.int64(((r >> _S32) * np.uint64(n)) >> _S32)


def check_seed(seed: object, what: str = "seed") -> int:
    """The seed as an int, or a ConfigError naming the allowed range."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        try:
            seed = int(str(seed), 0)
        except ValueError:
            raise ConfigError(f"{what} {seed!r} is not an integer: use 0 … 2**64-1") from None
    if not 0 <= int(seed) <= MAX_SEED:
        raise ConfigError(f"{what} {seed!r} is out of range: use 0 … 2**64-1")
    return int(seed)


def check_deal(deal: object, what: str = "deal") -> int:
    if isinstance(deal, bool) or not isinstance(deal, (int, np.integer)) \
            or not 0 <= deal <= MAX_DEAL:
        raise ConfigError(f"{what} {deal!r} must be an integer in 0 … 2**63-1")
    return int(deal)


class Stream:
    """A stream for Python code (bots): same numbers as the kernels' stream.

    >>> s = Stream(7, 3, 1); a = s.next(); Stream(7, 3, 1).next() == a
    True
    """

    __slots__ = ("key", "counter")

    def __init__(self, seed: int, deal: int, stream: int) -> None:
        self.key = int(stream_key(np.uint64(seed), np.uint64(deal), np.uint64(stream)))
        self.counter = 0

    def next(self) -> int:
        z = (self.key + (self.counter + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        self.counter += 1
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def bounded(self, n: int) -> int:
        return ((self.next() >> 32) * n) >> 32

    def uniform(self) -> float:
        """A float in [0, 1) with 53 random bits."""
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)
