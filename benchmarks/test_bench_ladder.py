"""The ladder at a small scale (issue 22; the 10-million-pair figures come from
``benchmarks/ladder_scale.py scale``): ``show`` (read the chunks' arrays, fit, text) on a
synthetic database, its size per pair, and ``import`` of a synthetic results folder.

Run: ``python -m pytest benchmarks/test_bench_ladder.py -q``. ``SHUANGKOU_BENCH_LADDER_PAIRS``
sets the pairs of the database (default 200,000); the folder holds a quarter as many.
"""

from __future__ import annotations

import os

import pytest

from benchmarks.ladder_scale import make_db, make_folder
from sim.analysis import ladder as model
from sim.tools.ladder import Ladder, import_folder

PAIRS = int(os.environ.get("SHUANGKOU_BENCH_LADDER_PAIRS", "200000"))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ladder") / "big.sqlite")
    make_db(path, PAIRS)
    return path


def test_show(benchmark, big):
    def show():
        with Ladder.open(big, write=False) as lad:
            data = lad.data()
        return model.show_text(data, model.fit(data))

    text = benchmark.pedantic(show, rounds=3, iterations=1)
    assert "greedy" in text
    size = sum(os.path.getsize(big + s) for s in ("", "-wal") if os.path.exists(big + s))
    benchmark.extra_info["pairs"] = PAIRS
    benchmark.extra_info["bytes_per_pair"] = size / PAIRS


def test_import(benchmark, tmp_path):
    folder = str(tmp_path / "folder")
    make_folder(folder, PAIRS // 4)
    runs = [0]

    def once():
        runs[0] += 1
        with Ladder.open(str(tmp_path / f"i{runs[0]}.sqlite"), create=True) as lad:
            return import_folder(lad, folder)

    got = benchmark.pedantic(once, rounds=2, iterations=1)
    assert got["pairs"] >= PAIRS // 4
