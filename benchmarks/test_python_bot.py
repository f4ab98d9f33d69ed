"""Speed of a bot written in plain Python (issue 32, 4.2): the example bot ``cautious``
(strategies/example.py) playing itself through the step API.

It was 660x slower than its compiled twin, and 62% of its time went to ``sim.trick_winner``
and ``sim.card_points`` parsing card strings. Targets: the project's helpers (the functions of
``sim.api`` and ``sim.cards`` the bot calls) <= 20% of the bot's cProfile profile, and the bot
>= 3x faster than before. "Before" is measured in the same process, interleaved (the machine
is shared): ``_Before`` holds the helpers' earlier code, verbatim, and the example's card
values computed at every call (it caches them now); the bot calls them through
``sim.card_points`` / ``sim.trick_winner`` / ``strategies.example._value``, which ``_using``
points at one version or the other. The helpers' part of the gain is printed too.

    python -m pytest benchmarks/test_python_bot.py -q -s --benchmark-disable
"""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import statistics
import time
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

import sim
from sim import api, cards
from sim.cards import CARD_NAMES, KEY_OF_ID, N_TYPES, POINTS_ID, SUIT_SYMBOLS, SUITS
from sim.core.trick import trick_winner as _trick_winner
from sim.errors import InvalidCardError
from sim.loops.runner import iter_records
from sim.tools.bench import cpu_model  # the one reader of the CPU model
from strategies import example
from strategies.example import Cautious

DEALS = 60



class _Before:
    """``sim.cards.parse_card`` … ``sim.api.trick_winner`` as of commit e3785b4 (before the
    issue), verbatim but for the names: every card string parsed afresh."""

    _NAME_TO_ID = {name.lower(): i for i, name in enumerate(CARD_NAMES)}
    _CARD_HELP = "ranks A23456789TJQK (or 10), suits shdc (or ♠♥♦♣), jokers BJ SJ"

    @staticmethod
    def parse_card(text: str) -> int:
        if not isinstance(text, str):
            raise InvalidCardError(f"{text!r} is not a card: expected a string like 'Kh'; "
                                   f"{_Before._CARD_HELP}")
        t = text.strip()
        for sym, letter in zip(SUIT_SYMBOLS, SUITS):
            t = t.replace(sym, letter)
        t = t.lower()
        if t.startswith("10"):
            t = "t" + t[2:]
        try:
            return _Before._NAME_TO_ID[t]
        except KeyError:
            raise InvalidCardError(f"{text!r} is not a card: {_Before._CARD_HELP}") from None

    @staticmethod
    def parse_cards(cards: str | Iterable[str]) -> list[int]:
        if isinstance(cards, str):
            cards = cards.replace(",", " ").split()
        elif not isinstance(cards, Iterable):
            raise InvalidCardError(f"{cards!r} is not cards")
        return [_Before.parse_card(c) for c in cards]

    @staticmethod
    def parse_suit(text: str) -> int:
        if isinstance(text, str):
            t = text.strip().lower()
            if t in SUITS and len(t) == 1:
                return SUITS.index(t)
            if t in SUIT_SYMBOLS and len(t) == 1:
                return SUIT_SYMBOLS.index(t)
        raise InvalidCardError(f"{text!r} is not a trump suit: one of s h d c (or ♠ ♥ ♦ ♣)")

    @staticmethod
    def check_counts(ids: Iterable[int], what: str = "cards") -> None:
        counts = np.bincount(np.asarray(list(ids), dtype=np.int64), minlength=N_TYPES)
        over = np.flatnonzero(counts > 2)
        if over.size:
            raise InvalidCardError(f"{CARD_NAMES[int(over[0])]!r} appears "
                                   f"{int(counts[over[0]])} times in {what}")

    @staticmethod
    def card_points(cards: str | Iterable[str]) -> int:
        return int(sum(POINTS_ID[i] for i in _Before.parse_cards(cards)))

    @staticmethod
    def _lead_keys(lead: Sequence[str] | str, trump: int) -> tuple[list[int], list[int]]:
        ids = _Before.parse_cards(lead)
        if len(ids) == 2 and ids[0] != ids[1]:
            raise InvalidCardError(f"lead {lead!r} is not a single or a pair")
        if len(ids) not in (1, 2):
            raise InvalidCardError(f"lead {lead!r} has {len(ids)} cards")
        return ids, [int(KEY_OF_ID[trump, c]) for c in ids]

    @staticmethod
    def trick_winner(plays: Sequence[Sequence[str] | str], trump: str) -> int:
        t = _Before.parse_suit(trump)
        if isinstance(plays, str) or not isinstance(plays, Iterable):
            raise InvalidCardError(f"plays {plays!r} must be a list of the trick's plays")
        plays = list(plays)
        if not plays:
            raise InvalidCardError("plays is empty: a trick starts with a lead")
        _, lk = _Before._lead_keys(plays[0], t)
        n = len(plays)
        if n > 4:
            raise InvalidCardError(f"{n} plays in one trick")
        arr = np.full(8, -1, dtype=np.int64)
        all_ids: list[int] = []
        for i, p in enumerate(plays):
            ids = _Before.parse_cards(p)
            if len(ids) != len(lk):
                raise InvalidCardError(f"play {p!r} has {len(ids)} card(s)")
            keys = sorted(int(KEY_OF_ID[t, c]) for c in ids)
            arr[i] = keys[0]
            if len(keys) == 2:
                arr[4 + i] = keys[1]
            all_ids += ids
        _Before.check_counts(all_ids, "the trick")
        return int(_trick_winner(arr, 0, 4, n))


    @staticmethod
    def value(card: str, trump: str | None) -> int:
        """strategies/example.py's ``_value`` as it was: computed at every call."""
        if card in ("BJ", "SJ") or card[0] in "235" or (trump and card[1] == trump):
            base = 20 + ("2 3 5".split().index(card[0]) * 2 if card[0] in "235" else 0)
        else:
            base = "46789TJQKA".index(card[0])
        return base + 2 * sim.card_points([card])


@contextlib.contextmanager
def _using(before: bool, bot_before: bool | None = None) -> Iterator[None]:
    """The bot's ``sim.card_points`` and ``sim.trick_winner`` (the earlier ones or today's),
    and its own card values (``bot_before``, default ``before``: computed at every call as
    before, or cached as the example does now)."""
    bot_before = before if bot_before is None else bot_before
    saved = sim.card_points, sim.trick_winner, example._value
    if before:
        sim.card_points, sim.trick_winner = _Before.card_points, _Before.trick_winner
    else:
        sim.card_points, sim.trick_winner = cards.card_points, api.trick_winner
    example._value = _Before.value if bot_before else saved[2]
    try:
        yield
    finally:
        sim.card_points, sim.trick_winner, example._value = saved


SEATS = [Cautious(greed=5) for _ in range(4)]  # the example bot in every seat: its own profile


def _play(seed: int = 1, deals: int = DEALS) -> list[dict]:
    return list(iter_records(seed, 0, deals, SEATS))


def test_the_earlier_helpers_give_the_same_records():
    """The measurement compares like with like: the bot plays the same deals either way."""
    with _using(before=True):
        old = _play(deals=20)
    with _using(before=False):
        assert _play(deals=20) == old


def test_python_bot_at_least_3x_its_earlier_speed(benchmark):
    """Before (the earlier helpers, the bot's values computed at every call), the helpers
    alone, and now (the helpers, and the example's values cached)."""
    _warm()
    ways = {"before": (True, True), "helpers": (False, True), "now": (False, False)}
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(5):  # interleaved, best of five each: the machine is shared
        for way, (before, bot_before) in ways.items():
            with _using(before, bot_before):
                s = time.perf_counter()
                _play()
                best[way] = min(best[way], time.perf_counter() - s)
    with _using(before=False):
        benchmark.pedantic(_play, rounds=1)
    rate = {way: DEALS / t for way, t in best.items()}
    ratio = rate["now"] / rate["before"]
    benchmark.extra_info.update(cpu=cpu_model(), deals_per_s=rate, ratio=ratio)
    print(f"\nexample bot x4, {DEALS} deals: {rate['before']:.1f} -> {rate['now']:.1f} deals/s "
          f"({ratio:.2f}x; the helpers alone {rate['helpers'] / rate['before']:.2f}x) on "
          f"{cpu_model()}")
    assert ratio >= 3.0, f"the example bot at {ratio:.2f}x its earlier speed, target 3x"


def _warm() -> None:
    """Kernels loaded and the tables built once per process (each trump's play names) made
    before anything is timed or profiled: start-up, not play."""
    from sim.observation import play_table

    for t in range(4):
        play_table(t)
    _play(deals=2)


def _helper_share(before: bool) -> float:
    """Share of the bot's run (cProfile, timed in this process's CPU seconds: the machine is
    shared) spent in the functions of sim.api and sim.cards, counted where the rest of the
    program calls them (their calls to each other inside)."""
    prof = cProfile.Profile(time.process_time)
    with _using(before):
        prof.enable()
        _play(seed=2)
        prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]

    def helper(func: tuple) -> bool:
        path = func[0].replace("\\", "/")
        return path.endswith(("/sim/api.py", "/sim/cards.py", "/test_python_bot.py")) \
            and func[2] not in ("_play", "_using", "_helper_share")

    total = max(ct for _, _, _, ct, _ in stats.values())
    inside = sum(ct for func, (_, _, _, _, callers) in stats.items() if helper(func)
                 for caller, (_, _, _, ct) in callers.items() if not helper(caller))
    return inside / total


def test_helpers_at_most_a_fifth_of_the_python_bots_profile(benchmark):
    _warm()
    runs: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(3):  # the median of three profiles each, interleaved
        for before in (True, False):
            runs[before].append(_helper_share(before))
    benchmark.pedantic(lambda: _helper_share(False), rounds=1)
    shares = {"before": statistics.median(runs[True]), "after": statistics.median(runs[False])}
    benchmark.extra_info.update(cpu=cpu_model(), **shares)
    print(f"\nsim.api and sim.cards: {shares['before']:.0%} -> {shares['after']:.0%} of the "
          f"example bot's profile on {cpu_model()}")
    assert shares["after"] <= 0.20, f"helpers take {shares['after']:.0%} of the profile"
