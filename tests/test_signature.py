"""Determinism: a committed hash of the first 200 records of seed 2026 (cf. Stockfish's bench
signature). Any change to dealing, calling, play order, scoring, the random numbers or the
record format changes it; if the change is intended, update the hash and say why in the commit.
"""

from __future__ import annotations

import hashlib

from sim.record import dumps
from sim.runner import iter_records, make_seats

SIGNATURE = "5d4ac9250e09cc9d69cc60fcf156c968581790e4b17e4d15e171e94641feb9e6"


def test_first_200_records_signature():
    h = hashlib.sha256()
    for rec in iter_records(2026, 0, 200, make_seats("random")):
        h.update((dumps(rec) + "\n").encode())
    assert h.hexdigest() == SIGNATURE


def test_records_do_not_depend_on_chunking():
    seats = make_seats("random")
    whole = list(iter_records(99, 0, 30, seats))
    parts = list(iter_records(99, 0, 11, seats)) + list(iter_records(99, 11, 19, seats))
    assert whole == parts
