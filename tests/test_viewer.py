"""The deal viewer page (sim.analysis.viewer, docs/viewer.md) without a browser: the data it
embeds, escaping, duplicate pairs, its size for 100 deals, and the commands that write it.
tests/test_viewer_browser.py drives the page in a real Chromium."""

from __future__ import annotations

import copy
import json
import random
import re

import pytest

from sim.analysis import viewer
from sim.cli import main
from sim.core import state as S

EVIL = "</script><script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">&amp;"


def embedded(text: str) -> dict:
    m = re.search(r"<script type='application/json' id='deal-data'>(.*?)</script>", text, re.S)
    assert m, "no embedded data"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def records():
    from sim.loops.runner import iter_records, make_seats

    return list(iter_records(11, 0, 6, make_seats(["greedy", "random"])))


@pytest.fixture(scope="module")
def pair():
    """The two tables of deal 3 of seed 11: greedy in seats 0 & 2, then in seats 1 & 3."""
    from sim.loops.runner import iter_records, make_seats

    a = next(iter_records(11, 3, 1, make_seats(["greedy", "random"])))
    b = next(iter_records(11, 3, 1, make_seats(["random", "greedy"])))
    return a, b


def fake_rows(rec, rng):
    """Analysis rows (docs/analysis.md) for every decision of ``rec``, every legal choice with
    a made-up value: the shape and size of real ``shuangkou analyze`` rows."""
    from sim.tools import analyze

    rows = []
    for dec in analyze.decisions(rec):
        trump = int(dec.st[S.S_TRUMP])
        names = [analyze.notation(dec.kind, c, trump) for c in dec.codes]
        p = dec.codes.index(dec.played)
        vals = [round(rng.uniform(-8, 8), 4) for _ in names]
        forced = len(names) == 1
        loss = round(max(vals) - vals[p], 4) if not forced else 0.0
        rows.append({"deal": dec.deal, "step": dec.step, "seat": dec.seat,
                     "player": rec["seats"][dec.seat], "kind": dec.kind, "trick": dec.trick,
                     "round": dec.round, "redeal": dec.redeal, "played": names[p],
                     "best": names[vals.index(max(vals))], "forced": forced,
                     "values": [{"choice": n, "value": None if forced else v}
                                for n, v in zip(names, vals)],
                     "loss": loss, "lo": round(loss * 0.6, 4), "hi": round(loss * 1.4, 4),
                     "mark": analyze.mark_of(loss, loss * 0.6), "true_loss": round(loss, 4),
                     "true_best": names[0], "worlds": 128, "recheck_worlds": 512})
    return rows


def test_the_embedded_data_is_the_records(records):
    rng = random.Random(1)
    rows = [r for rec in records[:2] for r in fake_rows(rec, rng)]
    text = viewer.page(records, rows, title="t")
    data = embedded(text)
    assert data["analysis"] is True and len(data["deals"]) == len(records)
    for rec, d in zip(records, data["deals"]):
        assert (d["deal"], d["seed"], d["seats"], d["trump"]) == \
            (rec["deal"], rec["seed"], rec["seats"], rec["trump"])
        for shown, held in zip(d["hands"], rec["hands"]):  # every card, in display order
            assert sorted(shown) == sorted(held) and len(shown) == 27
        assert d["tricks"] == [[t["leader"], t["plays"], t["winner"], t["points"]]
                               for t in rec["tricks"]]
        assert [c[:3] for c in d["calls"]] == [[c["round"], c["seat"], c["pair"]]
                                                for c in rec["calls"]]
        assert d["result"] == [rec["attacker_points"], rec["last_trick_multiplier"],
                               rec["attacker_score"], rec["settlement"]]
        # trumps first-to-last in the display order: the side suits, then the trumps (R12)
        for h in d["hands"]:
            flags = [c in set(d["trumps"]) for c in h]
            assert flags == sorted(flags)
    # every analysis row is shown with its deal, choices as concatenated notation
    n = [sum(1 for r in rows if r["deal"] == rec["deal"]) for rec in records]
    assert [len(d["an"]) for d in data["deals"]] == n
    r0, d0 = rows[0], data["deals"][0]["an"][0]
    assert d0[:5] == [r0["step"], r0["seat"], viewer.KIND_CODE[r0["kind"]], r0["trick"],
                      r0["round"]]
    plays = [r for r in data["deals"][0]["an"] if r[2] == 2 and len(r[7]) > 1]
    assert plays and all(r[5] in r[7] and len(r[7]) == len(r[8]) for r in plays)


def test_the_page_needs_nothing_else(records):
    # no network, no external script, style, font or image: it works from file://
    text = viewer.page(records[:2])
    for needle in ("src=", "href=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest",
                   "@font-face", "<iframe", "<img"):
        assert needle not in text, needle
    assert text.count("<script") == 2 and text.count("<style>") == 1


def test_a_give_back_keeps_its_best_choices_and_the_one_played():
    row = {"deal": 0, "step": 3, "seat": 1, "kind": "giveback", "trick": 0, "round": 27,
           "played": ["4s", "4h"], "best": ["Ks", "Kh"], "loss": 0.5, "lo": 0.1, "hi": 0.9,
           "mark": "?", "true_loss": 0.2, "true_best": ["4s", "4h"],
           "values": [{"choice": ["4s", "4h"], "value": -9.0},
                      {"choice": ["Ks", "Kh"], "value": 3.0}]
           + [{"choice": ["5s", "6h"], "value": float(i) / 100} for i in range(300)]}
    r = viewer._row(row)
    assert "4s4h" in r[7] and "KsKh" in r[7]
    assert len(r[7]) == viewer.KEEP_VALUES + 1 and r[15] == 302 - len(r[7])


def test_the_points_lost_totals_match_analyze():
    """The graph's legend sums the embedded losses per seat; rounded to 2 places each they
    summed to 0.47 where analyze's table, summing the rows, says 0.46 (0.3359 + 0.0117 +
    0.1172 = 0.4648)."""
    base = {"deal": 0, "seat": 1, "kind": "play", "trick": 1, "round": 27, "played": ["4s"],
            "best": ["Ks"], "lo": 0.0, "hi": 0.9, "mark": "", "true_loss": 0.0,
            "true_best": ["4s"], "values": []}
    losses = (0.3359, 0.0117, 0.1172)
    rows = [dict(base, step=i, loss=x) for i, x in enumerate(losses)]
    total = sum(viewer._row(r)[9] for r in rows)
    assert f"{total:.2f}" == f"{sum(losses):.2f}" == "0.46"


def test_no_text_of_a_record_can_leave_the_data_element(records):
    rec = copy.deepcopy(records[0])
    rec["seats"] = [EVIL, "greedy", "\u2028x</SCRIPT >", "<!--"]
    text = viewer.page([rec], title="<b>title</b>", note="a <i>note</i> & more")
    assert text.count("<script") == 2 and text.lower().count("</script") == 2
    assert "<img" not in text and "<b>" not in text and "<i>" not in text and "<!--" not in text
    assert "&lt;b&gt;title&lt;/b&gt;" in text and "a &lt;i&gt;note&lt;/i&gt; &amp; more" in text
    assert embedded(text)["deals"][0]["seats"] == rec["seats"]  # the names, unchanged


def test_duplicate_pairs_are_found_and_their_divergence(records, pair):
    a, b = pair
    assert viewer.find_pairs([records[0], a, records[1], b]) == [(1, 3)]
    assert viewer.find_pairs([a, a]) == []  # the same table twice is not a pair
    assert viewer.divergence(a, copy.deepcopy(a)) is None
    d = viewer.divergence(a, b)
    assert d is not None and d["kind"] in ("call", "play")
    # a play changed at play 9 (trick 3, second play): that is where they diverge
    c = copy.deepcopy(a)
    c["tricks"][2]["plays"][1] = ["XX"]
    assert viewer.divergence(a, c) == {"kind": "play", "i": 9}
    c = copy.deepcopy(a)
    c["calls"][-1]["round"] += 1
    assert viewer.divergence(a, c) == {"kind": "call", "i": len(a["calls"]) - 1}
    data = embedded(viewer.page([a, b]))["deals"]
    assert (data[0]["pair"], data[1]["pair"], data[0]["side"], data[1]["side"]) == (1, 0, 0, 1)
    assert data[0]["div"] == data[1]["div"] == d
    assert "pair" not in embedded(viewer.page([a, b], pairs=[]))["deals"][0]


def test_rows_of_a_pair_go_to_their_own_table(pair):
    a, b = pair
    rng = random.Random(2)
    ra, rb = fake_rows(a, rng), fake_rows(b, rng)
    per = viewer.rows_by_record([a, b], ra + rb)
    assert [len(x) for x in per] == [len(ra), len(rb)]
    assert all(r["player"] == a["seats"][r["seat"]] for r in per[0])
    # analyze's "record" index decides where it names one of these records (same deal)
    rb2 = [{**r, "record": 0} for r in rb]
    per = viewer.rows_by_record([a, b], ra + rb2)
    assert [len(x) for x in per] == [len(ra) + len(rb), 0]
    per = viewer.rows_by_record([b], rb2)  # index 0 is b here
    assert [len(x) for x in per] == [len(rb)]


def test_100_deals_with_every_decision_analysed_fit_in_2_mb():
    # docs/viewer.md gives the figure; fake_rows has the shape and size of real rows
    from sim.loops.runner import iter_records, make_seats

    recs = list(iter_records(2026, 0, 100, make_seats(["greedy", "random"])))
    rng = random.Random(3)
    rows = [r for rec in recs for r in fake_rows(rec, rng)]
    assert len(rows) > 9000
    bare = len(viewer.page(recs).encode())
    full = len(viewer.page(recs, rows).encode())
    print(f"100 deals: {bare / 1e6:.2f} MB without analysis, {full / 1e6:.2f} MB with "
          f"{len(rows)} decision rows")
    assert bare < 600_000 and full <= 2_000_000


def test_a_malformed_record_is_one_error(records):
    from sim.errors import RecordError

    rec = copy.deepcopy(records[0])
    del rec["hands"]
    with pytest.raises(RecordError, match="cannot be shown"):
        viewer.page([rec])
    with pytest.raises(RecordError, match="pair"):
        viewer.page(records[:2], pairs=[(0, 5)])


# --- the commands ---------------------------------------------------------------------------
def _write(path, recs):
    from sim.record import write_records

    write_records(path, recs)
    return str(path)


def test_replay_html_writes_the_viewer(tmp_path, records, capsys):
    src = _write(tmp_path / "r.jsonl", records[:3])
    out = tmp_path / "v.html"
    assert main(["replay", src, "--html", str(out)]) == 0
    assert "wrote the deal viewer of 3 deal(s)" in capsys.readouterr().out
    assert [d["deal"] for d in embedded(out.read_text())["deals"]] == [0, 1, 2]
    assert main(["replay", src, "--deal", "1", "--html", str(out)]) == 0
    assert [d["deal"] for d in embedded(out.read_text())["deals"]] == [1]
    assert not (tmp_path / "v.html.partial").exists()


def test_replay_html_of_one_deal_shows_both_tables_of_its_pair(tmp_path, records, pair):
    src = _write(tmp_path / "r.jsonl", [records[0], pair[0], records[1], pair[1]])
    out = tmp_path / "v.html"
    assert main(["replay", src, "--deal", "3", "--html", str(out)]) == 0
    deals = embedded(out.read_text())["deals"]
    assert [d["deal"] for d in deals] == [3, 3] and deals[0]["pair"] == 1


def test_replay_html_bad_input_is_one_line(tmp_path, records, capsys):
    src = _write(tmp_path / "r.jsonl", records[:1])
    before = open(src).read()
    assert main(["replay", src, "--html", src]) == 2
    assert "is the input file" in capsys.readouterr().err and open(src).read() == before
    assert main(["replay", src, "--html", str(tmp_path / "no" / "v.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No such directory" in err
    bad = copy.deepcopy(records[0])
    bad["tricks"] = "nonsense"
    src2 = _write(tmp_path / "bad.jsonl", [bad])
    assert main(["replay", src2, "--html", str(tmp_path / "v.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "tricks" in err


def test_analyze_html_shows_the_rows(tmp_path, records, capsys):
    src = _write(tmp_path / "r.jsonl", records[:2])
    out, rows = tmp_path / "a.html", tmp_path / "rows.jsonl"
    assert main(["analyze", src, "--deal", "1", "--seat", "0", "--samples", "4",
                 "--html", str(out), "--json", str(rows)]) == 0
    assert "wrote the deal viewer of 1 deal(s)" in capsys.readouterr().out
    data = embedded(out.read_text())
    assert data["analysis"] is True and [d["deal"] for d in data["deals"]] == [1]
    want = [json.loads(line) for line in open(rows)]
    got = data["deals"][0]["an"]
    assert len(got) == len(want) > 0 and all(r[1] == 0 for r in got)
    assert [r[0] for r in got] == [r["step"] for r in want] and want[0]["record"] == 0
    assert "continuation expert, 4 worlds" in out.read_text()
    assert main(["analyze", src, "--html", src]) == 2
    assert "is the input file" in capsys.readouterr().err
