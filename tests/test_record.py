"""Record files: round trip, gzip, and clear errors on corrupt input."""

from __future__ import annotations

import pytest

from sim.errors import RecordError
from sim.loops.runner import iter_records, make_seats
from sim.record import FIELDS, read_records, write_records


def test_round_trip_plain_and_gz(tmp_path):
    recs = list(iter_records(4, 0, 3, make_seats("random")))
    for name in ("r.jsonl", "r.jsonl.gz"):
        p = tmp_path / name
        assert write_records(p, recs) == 3
        assert list(read_records(p)) == recs
    assert list(recs[0]) == list(FIELDS)  # fields in docs/record.md order


@pytest.mark.parametrize("content, message", [
    ("not json\n", "line 1: not JSON"),
    ('{"format": "other/2"}\n', "format 'other/2' is not 'shuangkou-record/1'"),
    ('{"format": "shuangkou-record/1", "seed": 1}\n', "missing field(s) deal, rules"),
    ("[1, 2]\n", "format 'list'"),
])
def test_corrupt_files(tmp_path, content, message):
    p = tmp_path / "bad.jsonl"
    p.write_text(content)
    with pytest.raises(RecordError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(read_records(p))


def test_truncated_gzip(tmp_path):
    p = tmp_path / "t.jsonl.gz"
    write_records(p, list(iter_records(4, 0, 3, make_seats("random"))))
    p.write_bytes(p.read_bytes()[:200])
    with pytest.raises(RecordError, match="cannot be read"):
        list(read_records(p))
