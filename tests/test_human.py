"""``shuangkou human``: the answer parser, and the real program driven in a pseudo-terminal.

The pty tests run ``python -m sim.cli human`` under pexpect. A *mirror* of the deal (the same
seed and bots through the step API, fed the person's answers) tells the scripted person what
it holds and what is legal at each prompt, so the script can aim at an override with a
give-back and at an illegal play, and the screen can be compared with the truth.
Seed 1 (deal 0; greedy partner, random opponents): seat 1 shows Td after round 20 and the
person, in seat 0, can override with Jc — found by playing seeds 0-59 this way once.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from conftest import sigint_default

from sim.cli import main
from sim.core import state as S
from sim.deal import Deal
from sim.human import HELP, Answer, parse_answer
from sim.observation import Observation
from sim.reference.oracle import trick_winner
from sim.replay import hand_line, pretty
from sim.titles import level_text
from strategies.registry import make

pexpect = pytest.importorskip("pexpect")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 1
SPECS = ["human", "random", "greedy", "random"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CLEAR = "\x1b[H\x1b[2J"


# --- the answer parser ---------------------------------------------------------------------
PLAYS = [("Kh",), ("5s", "5s"), ("Th",)]


@pytest.mark.parametrize("text, kind, legal, want", [
    ("2", "play", PLAYS, Answer("choice", ("5s", "5s"))),
    (" 3 ", "play", PLAYS, Answer("choice", ("Th",))),
    ("kh", "play", PLAYS, Answer("choice", ("Kh",))),
    ("5s 5s", "play", PLAYS, Answer("choice", ("5s", "5s"))),
    ("5♠,5♠", "play", PLAYS, Answer("choice", ("5s", "5s"))),
    ("10h", "play", PLAYS, Answer("choice", ("Th",))),
    ("Qd", "play", PLAYS, Answer("choice", ("Qd",))),  # legality is the Deal's to judge
    ("pass", "show", [None, "7s"], Answer("choice", None)),
    ("P", "show", [None, "7s"], Answer("choice", None)),
    ("2", "show", [None, "7s"], Answer("choice", "7s")),
    ("7s 7s", "show", [None, "7s"], Answer("choice", "7s")),
    ("7S", "show", [None, "7s"], Answer("choice", "7s")),
    ("4d 9c", "giveback", [("4d", "9c")], Answer("choice", ("4d", "9c"))),
    ("?", "play", PLAYS, Answer("help")),
    ("help", "show", [None], Answer("help")),
    ("hint", "play", PLAYS, Answer("hint")),
    ("tricks", "play", PLAYS, Answer("tricks")),
    ("q", "play", PLAYS, Answer("quit")),
    ("", "play", PLAYS, Answer("again")),
])
def test_parse_answer(text, kind, legal, want):
    assert parse_answer(text, kind, legal) == want


@pytest.mark.parametrize("text, kind, legal, words", [
    ("0", "play", PLAYS, ["0 is not a choice", "1-3"]),
    ("4", "play", PLAYS, ["4 is not a choice", "1-3"]),
    ("-1", "play", PLAYS, ["not a choice"]),
    ("xyz", "play", PLAYS, ["'xyz' is not a card", "(R2)"]),
    ("Kh Zz", "play", PLAYS, ["'Zz' is not a card", "(R2)"]),
    ("pass", "play", PLAYS, ["no passing in trick play", "(R16)"]),
    ("pass", "giveback", [("4d", "9c")], ["two cards are handed back (R8)"]),
    ("7s 8s", "show", [None, "7s"], ["a show is one pair", "(R6)"]),
    ("7s 7s 7s", "show", [None, "7s"], ["a show is one pair"]),
])
def test_parse_answer_refuses_with_the_ruling(text, kind, legal, words):
    ans = parse_answer(text, kind, legal)
    assert ans.action == "error" and ans.choice is None
    for w in words:
        assert w in ans.message
    assert "\n" not in ans.message  # one line


def test_help_cites_the_rulings():
    for r in ("R2", "R6", "R8", "R10", "R16", "R18", "R19a", "R19b", "R21", "R23", "R24"):
        assert r in HELP


# --- the program in a pty ------------------------------------------------------------------
class Mirror:
    """The deal the program plays, replayed here with the same seed, bots and answers."""

    def __init__(self, seed: int = SEED, deal: int = 0) -> None:
        self.deal = Deal(seed, deal, seats=SPECS)
        self.forced = 0  # the person's decisions with one legal choice so far
        self.bots = [None] + [make(s) for s in SPECS[1:]]
        for s in (1, 2, 3):
            self.bots[s].begin_deal(s, seed, deal)

    def to_person(self) -> str | None:
        """Play the bots up to the person's next decision with a choice; its kind, or None at
        the end. A decision with one legal choice the program plays for the person."""
        d = self.deal
        while not d.done and (d.to_act.seat != 0 or len(d.legal()) == 1):
            seat = d.to_act.seat
            if seat == 0:
                self.forced += 1
                d.apply(d.legal()[0])
                continue
            d.apply(self.bots[seat].choose(Observation(d, seat), d.legal()))
        return None if d.done else d.to_act.kind

    def obs(self) -> Observation:
        return self.deal.observation(0)


@pytest.fixture(scope="module")
def warm():
    """Compile (or load) the bots' and the analysis' kernels here, into the cache the program
    shares."""
    from sim.tools import analyze as A

    m = Mirror()
    while m.to_person() is not None:
        m.deal.apply(m.deal.legal()[0])
    rec = m.deal.record()
    A.analyze_tasks(A.tasks_of([rec], [0])[-3:], A.Settings(samples=4))


def spawn(tmp_path, *extra: str, color: bool = True):
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    if not color:
        env["NO_COLOR"] = "1"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    args = ["-m", "sim.cli", "human", "--delay", "0", "--seed", str(SEED), "--partner",
            "greedy", "--opponents", "random", "--out", str(tmp_path), "--samples", "8",
            *extra]
    return pexpect.spawn(sys.executable, args, cwd=ROOT, env=env, encoding="utf-8",
                         timeout=30, dimensions=(60, 160), preexec_fn=sigint_default)


def screen(child) -> str:
    """The last full screen drawn before the prompt, without colour codes."""
    return ANSI.sub("", child.before.split(CLEAR)[-1])


def prompt(child) -> str:
    child.expect("\n> ")
    return screen(child)


def refusal(text: str) -> str:
    """The one line that refuses an answer (the question is asked again under it)."""
    lines = [x for x in text.splitlines() if x.startswith("✗")]
    assert len(lines) == 1, text
    return lines[0]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """``shuangkou validate/replay ARGS`` on a saved deal, run in this process (the same output
    as a fresh interpreter's, without one's start-up and kernel loading, ~1-2 s a call): the
    program under test here is the ``human`` child; these only read what it saved."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_person_plays_a_whole_deal_in_a_pty(tmp_path, warm):
    """Show over a bot's pair, hand back two cards (after one refused try), make an illegal
    play and get the ruling, ask for help and a hint, play to the end; the record saved is
    valid and replays."""
    child = spawn(tmp_path)
    m = Mirror()
    seen = {"show": 0, "giveback": 0, "illegal": 0, "help": 0, "hint": 0}
    while (kind := m.to_person()) is not None:
        obs, legal = m.obs(), m.deal.legal()
        text = prompt(child)
        if kind == "show":
            sh = obs.shown
            choice = legal[-1] if sh is not None and sh[0] != 0 and len(legal) > 1 else None
            if choice is not None:
                seen["show"] += 1
                child.sendline(f"{choice} {choice}")
            else:
                child.sendline("pass")
        elif kind == "giveback":
            pair = obs.shown[1]
            child.sendline(f"{pair} {pair}")  # the pair just shown stays: refused (R8)
            assert "is of the pair just shown and stays (R8)" in refusal(prompt(child))
            choice = legal[0]
            child.sendline("1")
            seen["giveback"] += 1
        else:
            choice = legal[0]
            trick = obs.trick
            if not seen["illegal"] and trick and len(trick[0]) == 1:
                bad = next((c for c in obs.hand if (c,) not in legal), None)
                if bad is not None:
                    child.sendline(bad)
                    line = refusal(prompt(child))
                    assert f"illegal play ['{bad}']" in line and line.endswith("(R18)"), line
                    seen["illegal"] += 1
            if not seen["help"]:
                child.sendline("?")
                text = prompt(child)
                assert "R19b" in text and "Your hand" in text
                seen["help"] += 1
            elif not seen["hint"] and len(legal) > 1:
                child.sendline("hint")
                text = prompt(child)
                assert re.search(r"hint: greedy would answer \d+\) ", text), text
                seen["hint"] += 1
            child.sendline("1")
        m.deal.apply(choice)
    child.expect("records: (\\S+deals.jsonl)")
    path = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert all(seen.values()), seen
    rec = json.loads(open(path, encoding="utf-8").read())
    assert rec == m.deal.record()  # the program played exactly the mirrored deal
    last = rec["calls"][-1]  # the person's show over seat 1's Td, and the give-back
    assert (last["seat"], last["pair"], last["took_from"]) == (0, "Jc", 1) and last["gave"]
    v = run_cli("validate", path)
    assert v.returncode == 0 and "1 record(s) checked" in v.stdout and "all valid" in v.stdout
    r = run_cli("replay", path)
    assert r.returncode == 0 and "seat 0 shows J♣ J♣, takes that pair from seat 1" in r.stdout


@pytest.mark.parametrize("how", ["eof", "ctrl-c"])
def test_stopping_saves_the_unfinished_deal(tmp_path, warm, how):
    child = spawn(tmp_path, "--plain")  # a terminal, but plain lines asked for
    m = Mirror()
    plays = 0
    while (kind := m.to_person()) is not None and plays < 3:
        legal = m.deal.legal()
        child.expect("\n> ")
        assert CLEAR not in child.before
        child.sendline("1")
        m.deal.apply(legal[0])
        plays += kind == "play"
    child.expect("\n> ")
    if how == "eof":
        child.sendeof()
    else:
        child.sendintr()
    why = "end of input" if how == "eof" else "Ctrl-C"
    child.expect(f"stopped \\({why}\\): the unfinished deal 0 is saved")
    child.expect("records: (\\S+deals.jsonl)")
    path = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == (0 if how == "eof" else 130)
    assert "Traceback" not in child.before
    rec = json.loads(open(path, encoding="utf-8").read())
    assert rec["unfinished"] is True and rec["trump"] is not None
    assert rec["tricks"] == m.deal.observation(0).tricks
    v = run_cli("validate", path)
    assert v.returncode == 0, v.stdout
    assert "deal 0: unfinished" in v.stdout and "all valid (1 unfinished)" in v.stdout
    r = run_cli("replay", path)
    assert r.returncode == 0 and "Unfinished: stopped during trick" in r.stdout


def test_screen_shows_hand_trick_and_legal_choices(tmp_path, warm):
    """At a few decisions the screen holds what the person's seat knows: the hand grouped
    with trumps last, the trick with its leader and who is winning, the numbered choices."""
    child = spawn(tmp_path, color=False)
    m = Mirror()
    checked = 0
    while (kind := m.to_person()) is not None and checked < 4:
        obs, legal = m.obs(), m.deal.legal()
        text = prompt(child)
        assert "\x1b[3" not in child.before  # NO_COLOR: no colour codes
        hand = obs.hand
        assert f"Your hand ({len(hand)}):" in text
        if kind == "play":
            trump = obs.trump
            # the same groups as replay's hand line, side suits then trumps, strongest first
            groups = re.findall(r"\[([^\]]*)\]", hand_line(hand, trump))
            line = next(x for x in text.splitlines() if x.startswith("Your hand"))
            assert [g.split() for g in groups] == [
                g.split() for g in re.findall(r"(?:[♠♥♦♣]|trump .:) ((?:\S+ ?)+)", line)]
            assert f"Trump {'♠♥♦♣'['shdc'.index(trump)]} ({trump})" in text
            trick = obs.trick
            if trick:
                leader = obs.leader
                assert f"Trick {len(obs.tricks) + 1}: led by " in text
                w = (leader + trick_winner(trick, trump)) % 4
                assert f"winning: {'you' if w == 0 else f'seat {w}'}" in text
                for k, p in enumerate(trick):
                    s = (leader + k) % 4
                    who = "you" if s == 0 else f"seat {s}"
                    assert f"{who}" in text and " ".join(pretty(c) for c in p) in text
            for i, c in enumerate(legal, 1):
                assert f"{i}) {' '.join(pretty(x) for x in c)}" in text
            checked += 1
        elif kind == "show":
            assert "1) pass" in text and "Calling — dealing round" in text
            for i, c in enumerate(legal[1:], 2):
                assert f"{i}) show {pretty(c)} {pretty(c)}" in text
        child.sendline("1")
        m.deal.apply(legal[0])
    assert checked == 4
    child.sendline("quit")
    child.expect("stopped \\(quit\\)")
    child.expect(pexpect.EOF)


def test_a_match_without_a_terminal_keeps_skill_values(tmp_path, warm):
    """Output not a terminal: plain lines. Two deals: both saved and valid; the summary
    carries each seat's skill value across the match (R25)."""
    out = tmp_path / "m"
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--delay", "0", "--seed",
                        str(SEED), "--deals", "2", "--partner", "greedy", "--opponents",
                        "random", "--out", str(out)], cwd=ROOT, input="1\n" * 200,
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "NO_COLOR": ""})
    assert p.returncode == 0, p.stderr
    assert CLEAR not in p.stdout and "\x1b[" not in p.stdout
    assert "=== Deal 2 of 2" in p.stdout
    recs = [json.loads(x) for x in open(out / "deals.jsonl", encoding="utf-8")]
    assert [r["deal"] for r in recs] == [0, 1] and not any(r.get("unfinished") for r in recs)
    summary = p.stdout[p.stdout.index("Match: 2 deal(s) played"):]
    for s in range(4):
        skill = 1600 + sum(r["settlement"][s] for r in recs)
        assert re.search(rf"seat {s} .* skill {skill} ", summary), summary
        assert f"skill {skill} {level_text(skill)}" in summary  # R25 title with its gloss
    v = run_cli("validate", str(out / "deals.jsonl"))
    assert v.returncode == 0 and "2 record(s) checked with the reference engine: all valid" \
        in v.stdout


@pytest.mark.parametrize("args, words", [
    (["--delay", "-1"], "--delay -1.0 must be seconds"),
    (["--opponents", "random,random,random"], "give one strategy spec or two"),
    (["--partner", "nosuchbot"], "nosuchbot"),
    (["--opponents", "oracle"], "cannot sit at a table with a person"),
    (["--seat", "4"], "invalid choice"),
    (["--seed", "-3"], "seed"),
])
def test_bad_arguments_are_one_line(tmp_path, capsys, args, words):
    from sim.cli import main

    with pytest.raises(SystemExit) if args[0] == "--seat" else _nothing():
        code = main(["human", "--out", str(tmp_path), *args])
        assert code == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
    assert not os.listdir(tmp_path)  # nothing written


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


SLEEPER = '''
import time

from strategies.random import RandomStrategy


class Sleeper(RandomStrategy):
    """random through the Python tier, that sleeps for ever at its first trick play."""
    name = "sleeper"
    compiled_kind = None

    def choose(self, obs, legal):
        if obs.kind == "play":
            time.sleep(1e9)
        return super().choose(obs, legal)
'''


def test_a_plugin_bot_over_its_time_is_stopped_and_the_deal_saved(tmp_path, warm):
    """--plugin seats a user's bot; --timeout bounds each of its decisions (sim.runner's
    machinery): one error line, exit code 2, and the deal so far saved as unfinished."""
    (tmp_path / "sleeperplug.py").write_text(SLEEPER)
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--delay", "0", "--seed",
                        str(SEED), "--plugin", "sleeperplug", "--opponents", "sleeper",
                        "--timeout", "0.3", "--out", "rec"], cwd=tmp_path, env=env,
                       input="1\n" * 100, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shuangkou human: error: strategy 'sleeper' in "
                                               "seat "), err
    assert "over the 0.3 s limit and was stopped" in err[0]
    assert "stopped (a bot failed): the unfinished deal 0 is saved" in p.stdout
    rec = json.loads((tmp_path / "rec" / "deals.jsonl").read_text(encoding="utf-8"))
    assert rec["unfinished"] is True and rec["seats"][1] == rec["seats"][3] == "sleeper"


# --- unfinished records (docs/record.md) -----------------------------------------------------
def _stopped_in_play(plays: int) -> Deal:
    m = Mirror()
    while (kind := m.to_person()) is not None and plays:
        plays -= kind == "play"
        m.deal.apply(m.deal.legal()[0])
    return m.deal


def test_an_unfinished_record_is_checked_as_far_as_it_goes():
    from sim.human import unfinished_record
    from sim.reference.validator import validate_record
    from sim.replay import render

    deal = _stopped_in_play(5)
    rec = unfinished_record(deal)
    assert rec["unfinished"] is True and rec["trump"] == deal.trump
    assert len(rec["tricks"]) >= 4 and all(len(h) == 27 for h in rec["hands"])
    assert validate_record(rec) == []
    assert "Unfinished: stopped during trick" in render(rec)
    # not marked unfinished, the same record is a finished deal that stopped early: invalid
    plain = {k: v for k, v in rec.items() if k != "unfinished"}
    assert any("after the last trick (R16)" in str(v) for v in validate_record(plain))
    # the tricks played are still checked
    bad = json.loads(json.dumps(rec))
    bad["tricks"][1]["winner"] = (bad["tricks"][1]["winner"] + 1) % 4
    assert any("trick 2" in str(v) and "(R20, R21)" in str(v) for v in validate_record(bad))
    scored = dict(rec, attacker_score=120)
    assert any("unfinished deal with attacker_score" in str(v)
               for v in validate_record(scored))


def test_an_unfinished_record_of_the_calling():
    from sim.human import unfinished_record
    from sim.reference.validator import validate_record
    from sim.replay import render

    deal = Deal(SEED, 0, seats=SPECS)
    while deal.observation(0).round < 10:
        deal.apply(deal.legal()[0])
    rec = unfinished_record(deal)
    assert rec["trump"] is None and rec["tricks"] == [] and rec["dealt_rounds"] >= 10
    assert validate_record(rec) == []
    assert "stopped during the calling, after dealing round" in render(rec)
    deck = list(rec["deck"])
    deck[0], deck[1] = deck[1], deck[0]
    if deck != rec["deck"]:  # the shuffle is still checked
        assert any("reference shuffle" in str(v) for v in validate_record(dict(rec, deck=deck)))


def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path, capsys):
    from sim.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["human", "--delay", "0", "--opponents", "random", "--out",
                 str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shuangkou human: error: cannot write records to ") and \
        err.count("\n") == 1, err


# --- issue 19: answers, forced moves, hints, narrow terminals, signals, plug-in files ---------
@pytest.mark.parametrize("text", ["²", "①", "٣", "9" * 5000, "1" * 7, "+" + "9" * 40])
def test_answers_that_are_not_ascii_numbers_are_refused_in_one_line(text):
    """str.isdigit() takes '²', '①' and Arabic-Indic digits, and int() refuses them (or 5,000
    digits): each is refused as an answer, never a ValueError."""
    ans = parse_answer(text, "play", PLAYS)
    assert ans.action == "error" and "\n" not in ans.message and len(ans.message) < 160
    assert "1-3" in ans.message


def test_a_bad_answer_then_end_of_input_saves_the_deal(tmp_path, warm):
    """The adversary's answers leave the session standing; the deal is saved unfinished."""
    answers = ("²\n①\n" + "9" * 5000 + "\n").encode() + b"\xff\xfe not utf-8\n"
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--delay", "0", "--seed",
                        str(SEED), "--partner", "greedy", "--opponents", "random", "--out",
                        str(tmp_path)], cwd=ROOT, input=answers, capture_output=True,
                       timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.count("is not a choice") >= 1 and "'²' is not a card" in p.stdout
    assert "stopped (end of input): the unfinished deal 0 is saved" in p.stdout
    rec = json.loads((tmp_path / "deals.jsonl").read_text(encoding="utf-8"))
    assert rec["unfinished"] is True


def _session(tmp_path, answers: str, width: int = 100, **kw):
    import io

    from sim.human import Session, make_bots
    from sim.rules import Rules

    out = io.StringIO()
    kw.setdefault("samples", 8)
    s = Session(0, make_bots(0, "greedy", "random"), SEED, 1, Rules(), str(tmp_path), delay=0,
                full=False, color=False, stdin=io.StringIO(answers), stdout=out, width=width,
                **kw)
    return s, out


def test_a_forced_move_is_played_for_the_person(tmp_path, warm):
    """A decision with one legal choice (a follow with the only card of the led group, the
    last card) is not asked: it is played, and the log says so."""
    m = Mirror()
    asked = 0
    while m.to_person() is not None:
        asked += 1
        m.deal.apply(m.deal.legal()[0])
    assert m.forced >= 1 and asked >= 5
    s, out = _session(tmp_path, "1\n" * (asked + 5))
    assert s.run() == 0
    text = out.getvalue()
    assert text.count("\n> ") + text.startswith("> ") == asked  # only real choices asked
    assert json.loads((tmp_path / "deals.jsonl").read_text())["tricks"] == \
        m.deal.record()["tricks"]
    assert text.count("— your only legal play, played for you") == m.forced  # all in play


def test_who_leads_after_the_calling_is_grammatical(tmp_path):
    """'Calling over: ... you leads (R17)' when the seat after the caller was the person."""
    s, _ = _session(tmp_path, "")
    assert s.leads(0) == "you lead"
    assert s.leads(1) == "seat 1 (opp) leads" and s.leads(2) == "seat 2 (partner) leads"


def _answers_to_a_giveback() -> tuple[list[str], list]:
    """The person's answers that reach their first give-back (overriding the first shown
    pair they can, the first choice elsewhere), and that give-back's legal choices."""
    m = Mirror()
    answers: list[str] = []
    while (kind := m.to_person()) is not None:
        obs, legal = m.obs(), m.deal.legal()
        if kind == "show" and obs.shown is not None and obs.shown[0] != 0 and len(legal) > 1:
            answers.append(f"{legal[-1]} {legal[-1]}")
            m.deal.apply(legal[-1])
            continue
        if kind == "giveback":
            return answers, legal
        answers.append("1")
        m.deal.apply(legal[0])
    raise AssertionError("the deal reached no give-back of the person's")


def test_a_hint_cites_only_numbers_on_screen(tmp_path, warm):
    """At a give-back with more choices than are listed the hint names the cards to type,
    not a number the screen does not show; elsewhere the number it cites is listed."""
    answers, legal = _answers_to_a_giveback()
    assert len(legal) > 40  # not listed: typed
    s, out = _session(tmp_path, "\n".join(answers + ["hint", "q"]) + "\n")
    s.run()
    text = out.getvalue()
    line = re.search(r"hint: .*", text).group()
    assert not re.search(r"\d+\)", line), line
    typed = re.search(r"\(type ([^)]*)\)", line).group(1)
    ans = parse_answer(typed, "giveback", legal)
    assert ans.action == "choice" and ans.choice in legal
    # a listed choice: the number is the one on screen
    s, out = _session(tmp_path / "b", "hint\nq\n")
    s.run()
    text = out.getvalue()
    n, what = re.search(r"hint: greedy would answer (\d+)\) (.*?) \(type", text).groups()
    assert f"{n}) {what}" in text.split("hint:")[0]


def test_holding_one_copy_is_not_called_not_holding(warm):
    """'does not hold Qs' for a hand that holds one Qs and names it twice: the message says
    how many it holds."""
    from sim.errors import IllegalPlayError

    m = Mirror()
    while (kind := m.to_person()) is not None and kind != "play":
        m.deal.apply(m.deal.legal()[0])
    hand = m.obs().hand
    single = next(c for c in hand if hand.count(c) == 1)
    with pytest.raises(IllegalPlayError) as e:
        m.deal.apply((single, single))
    assert f"holds only one {single!r}, not 2" in str(e.value)
    assert "does not hold" not in str(e.value)


@pytest.mark.parametrize("rows, cols", [(24, 20), (14, 40)])
def test_a_narrow_terminal_keeps_the_header_and_hand_on_screen(tmp_path, warm, rows, cols):
    """Every row drawn fits the terminal's width and the screen its height, so nothing
    scrolls off: the header's first row on top, the hand and the question below."""
    from sim.core.console import width

    child = pexpect.spawn(sys.executable, ["-m", "sim.cli", "human", "--delay", "0", "--seed",
                                           str(SEED), "--partner", "greedy", "--opponents",
                                           "random", "--out", str(tmp_path)],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, encoding="utf-8",
                          timeout=30, dimensions=(rows, cols), preexec_fn=sigint_default)
    seen = 0
    while seen < 25 and child.expect(["\n> ", pexpect.EOF]) == 0:
        lines = child.before.split(CLEAR)[-1].replace("\r", "").split("\n")
        plain = [ANSI.sub("", x) for x in lines]
        assert max(width(x) for x in plain) <= cols, plain
        assert len(lines) <= rows - 1, plain  # and the prompt's row
        assert plain[0].startswith("Shuangkou"), plain
        assert any(x.startswith("Your hand") for x in plain), plain
        child.sendline("1")
        seen += 1
    child.terminate(force=True)
    assert seen >= 10


def _stop_signals_default() -> None:
    import signal

    sigint_default()
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_save_the_deal_in_progress(tmp_path, warm, sig):
    import signal

    signum = getattr(signal, sig)
    child = pexpect.spawn(sys.executable, ["-m", "sim.cli", "human", "--plain", "--delay", "0",
                                           "--seed", str(SEED), "--partner", "greedy",
                                           "--opponents", "random", "--out", str(tmp_path)],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, encoding="utf-8",
                          timeout=30, dimensions=(60, 160), preexec_fn=_stop_signals_default)
    for _ in range(3):
        child.expect("\n> ")
        child.sendline("1")
    child.expect("\n> ")
    child.kill(signum)
    if sig == "SIGTERM":
        child.expect(f"stopped \\({sig}\\): the unfinished deal 0 is saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 128 + signum, (child.exitstatus, child.signalstatus)
    rec = json.loads((tmp_path / "deals.jsonl").read_text(encoding="utf-8"))
    assert rec["unfinished"] is True
    assert run_cli("validate", str(tmp_path / "deals.jsonl")).returncode == 0


BOT_FILE = '''
from strategies.random import RandomStrategy


class FileBot(RandomStrategy):
    """random, from a file outside the working folder."""
    name = "filebot"
'''


def test_a_plugin_file_outside_the_working_folder(tmp_path, warm):
    """--plugin takes a file's path (the user names it: it is loaded); a module name that is
    not found says so and how to name a file instead."""
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "filebotmod.py").write_text(BOT_FILE)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--plain", "--delay", "0",
                        "--seed", str(SEED), "--plugin", str(bots / "filebotmod.py"),
                        "--opponents", "filebot", "--out", "rec"], cwd=work, env=env,
                       input="1\n" * 300, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rec = json.loads((work / "rec" / "deals.jsonl").read_text(encoding="utf-8"))
    assert rec["seats"] == ["human", "filebot", "greedy", "filebot"]
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--plugin", "filebotmod",
                        "--opponents", "filebot", "--out", "rec2"], cwd=work, env=env,
                       input="", capture_output=True, text=True, timeout=60)
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, p.stderr
    assert "'filebotmod' cannot be imported" in err[0] and "--plugin ~/bots/mybot.py" in err[0]
    for bad, words in [(bots / "nothere.py", "does not exist"),
                       (bots / "my-bot.py", "is not a Python module name")]:
        if "my-bot" in str(bad):
            bad.write_text(BOT_FILE)
        p = subprocess.run([sys.executable, "-m", "sim.cli", "strategies", "--plugin",
                            str(bad)], cwd=work, env=env, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2 and words in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_ascii_terminal_plays_with_letters_for_suits(tmp_path, warm):
    """PYTHONIOENCODING=ascii: no UnicodeEncodeError; suits print as s h d c."""
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--delay", "0", "--seed",
                        str(SEED), "--partner", "greedy", "--opponents", "random", "--out",
                        str(tmp_path)], cwd=ROOT, input=b"1\n" * 300, capture_output=True,
                       env={**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": ROOT},
                       timeout=60)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    out = p.stdout.decode("ascii")  # nothing but ASCII was written
    assert "Your hand (" in out and re.search(r"\b(?:10|[2-9AKQJ])[shdc]\b", out)


def test_a_hint_names_no_number_cut_off_a_small_screen(tmp_path, warm, monkeypatch):
    """On a screen too small for every numbered choice the hint names cards to type, not a
    number that is not shown."""
    import io

    import sim.human as human
    from sim.human import Session, make_bots
    from sim.rules import Rules

    m = Mirror()
    answers = []
    while (kind := m.to_person()) is not None:
        if kind == "play" and len(m.deal.legal()) >= 12:
            break
        answers.append("1")
        m.deal.apply(m.deal.legal()[0])
    monkeypatch.setattr(human, "_term_rows", lambda stream: 16)
    out = io.StringIO()
    s = Session(0, make_bots(0, "greedy", "random"), SEED, 1, Rules(), str(tmp_path), delay=0,
                full=True, color=False, stdin=io.StringIO("\n".join(answers + ["hint", "q"])
                                                          + "\n"), stdout=out, width=20)
    s.run()
    screens = out.getvalue().split(CLEAR)
    hinted = next(x for x in screens if "hint: greedy" in x)
    asked = screens[screens.index(hinted) - 1]
    assert " more: type" in asked and len(asked.splitlines()) <= 16  # the prompt row too
    hint = re.search(r"hint: greedy would [^(]*\(type [^)]*\)",
                     " ".join(hinted.split())).group()
    assert not re.search(r"\d+\)", hint), hint


# --- issue 20 part 5: the analysis in hint, the review after each deal ------------------------
VALUE = r"[+-]\d+\.\d\d ±\d+\.\d\d  (?:best|[+-]\d+\.\d\d \[[+-]\d+\.\d\d, [+-]\d+\.\d\d\])"


def test_hint_shows_every_choice_value_with_its_interval(tmp_path, warm):
    """At a play with a few choices, the hint lists every legal choice by its number on screen
    and cards, with its value ± 95% and the paired difference from the best (its interval),
    and says how many worlds it drew; the screen still fits the terminal."""
    child = spawn(tmp_path, color=False)
    m = Mirror()
    done = False
    while (kind := m.to_person()) is not None:
        legal = m.deal.legal()
        text = prompt(child)
        if not done and kind == "play" and 3 <= len(legal) <= 12:
            child.sendline("hint")
            text = prompt(child)
            body = text[text.index("hint: greedy would answer"):]
            assert "8 worlds drawn from what you know" in body, body
            listed = body.split("\n", 2)[2]
            for i, c in enumerate(legal, 1):
                assert re.search(rf"^  {i}\) {re.escape(' '.join(pretty(x) for x in c))} +"
                                 + VALUE, listed, re.M), (i, c, listed)
            assert len(re.findall(r"  best\r?$", listed, re.M)) == 1
            assert len(text.splitlines()) <= 59
            done = True
        child.sendline("1")
        m.deal.apply(legal[0])
    child.expect("records: ")
    child.expect(pexpect.EOF)
    assert done


def test_a_giveback_hint_shows_the_best_few_as_cards_to_type(tmp_path, warm):
    """A give-back has hundreds of choices, not numbered on screen: the hint shows the best
    few as cards to type, each with its value and interval, and how many more there are."""
    answers, legal = _answers_to_a_giveback()
    s, out = _session(tmp_path, "\n".join(answers + ["hint", "q"]) + "\n", review=False)
    s.run()
    text = out.getvalue()
    hint = text[text.index("hint: greedy would hand back"):].split("\n> ")[0]
    rows = re.findall(r"^  (.*) \(type ([^)]*)\) +" + VALUE + "$", hint, re.M)
    from sim.human import HINT_TOP

    assert len(rows) == HINT_TOP, hint
    for _, typed in rows:
        assert parse_answer(typed, "giveback", legal).choice in legal
    assert not re.search(r"\d+\) ", hint)  # no number: none is on screen
    assert f"… {len(legal) - HINT_TOP} more" in hint


def test_fair_a_hint_is_the_same_from_the_full_state_and_the_masked_one(tmp_path, warm):
    """R9: the hint's analysis of a decision is identical whether it is given the true state,
    the person's seat's masked knowledge, or another truth the seat cannot tell apart (a hidden
    card swapped between the two opponents); and the session computes exactly that."""
    from sim.tools import analyze as A
    from sim.view import mask_into

    settings = A.Settings(samples=8)
    for kind, skip in (("play", 4), ("show", 0)):
        m = Mirror()
        while (k := m.to_person()) is not None:
            if k == kind and len(m.deal.legal()) > 1 and m.obs().round >= 8:
                if not skip:
                    break
                skip -= 1
            m.deal.apply(m.deal.legal()[0])
        d = m.deal
        rules = d.rules.array()
        codes = list(d.legal_codes())
        full = A.Decision(d.deal, 7, 0, kind, d._st.copy(), d._u.copy(), codes, codes[0], 0,
                          0, 0)
        mst = np.empty(S.ST_SIZE, dtype=np.int64)
        mu = np.empty(S.U_SIZE, dtype=np.uint64)
        mask_into(full.st, full.u, 0, mst, mu)
        assert int(mu[S.U_ONCE + 1]) == 0  # the others' hands are gone
        masked = A.Decision(**{**full.__dict__, "st": mst, "u": mu})
        u2 = full.u.copy()
        oa, ob, ta, tb = (int(u2[S.U_ONCE + 1]), int(u2[S.U_ONCE + 3]), int(u2[S.U_TWICE + 1]),
                          int(u2[S.U_TWICE + 3]))
        only_a = [c for c in range(54) if (oa >> c) & 1 and not (ta >> c) & 1
                  and not (ob >> c) & 1]
        only_b = [c for c in range(54) if (ob >> c) & 1 and not (tb >> c) & 1
                  and not (oa >> c) & 1]
        flip = np.uint64((1 << only_a[0]) | (1 << only_b[0]))
        u2[S.U_ONCE + 1] ^= flip
        u2[S.U_ONCE + 3] ^= flip
        other = A.Decision(**{**full.__dict__, "u": u2})
        want = A.choice_values(full, rules, settings)
        assert want["worlds"] == 8 and len(want["choices"]) == len(codes)
        assert A.choice_values(masked, rules, settings) == want
        assert A.choice_values(other, rules, settings) == want
        # the session's hint: the same analysis, from the same deal and step
        s, _ = _session(tmp_path, "", review=False)
        s.deal, s.step = d, 7
        assert s.analyse_now(kind) == want


def test_a_review_follows_the_deal_with_the_persons_decisions_and_the_viewer(tmp_path, warm):
    """After the deal: the person's decisions with losses and marks (analyze's rows for the
    person's seat), the total, and the deal viewer page of the deal with that analysis."""
    from sim.tools import analyze as A

    child = spawn(tmp_path, "--plain", color=False)
    while child.expect(["\n> ", "Reviewing your"]) == 0:
        child.sendline("1")
    child.expect(r"Total: loss (\d+\.\d\d) points per player over (\d+) decisions")
    total, n = float(child.match.group(1)), int(child.match.group(2))
    review = child.before
    child.expect(r"deal viewer with this review: (\S+)\r?\n")
    path = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Review of your decisions, deal 0" in review and "8 worlds" in review
    rec = json.loads((tmp_path / "deals.jsonl").read_text(encoding="utf-8"))
    rows = A.analyze_tasks(A.tasks_of([rec], [0]), A.Settings(samples=8))
    assert n == len(rows) and abs(total - sum(r["loss"] for r in rows)) < 0.006
    listed = re.findall(r"^  (?:trick +\d+|round +\d+): .*loss (\d+\.\d\d) \[", review, re.M)
    assert len(listed) >= 10
    for r in rows:  # every play is listed with its loss, and its mark where it has one
        if r["kind"] == "play" and not r["forced"]:
            cards = " ".join(pretty(c) for c in r["played"])
            line = re.search(rf"^  trick +{r['trick']}: {re.escape(cards)} +loss "
                             rf"{r['loss']:.2f} \[{r['lo']:.2f}, {r['hi']:.2f}\]"
                             rf"(?: (\?\??))?", review, re.M)
            assert line and (line.group(1) or "") == r["mark"], (r, review)
    assert path == str(tmp_path / "deals-deal0.html")
    page = open(path, encoding="utf-8").read()
    assert "data-card" in page  # the viewer's cards (drawn by its script, docs/viewer.md)
    from test_viewer import embedded

    data = embedded(page)["deals"][0]
    assert data["hands"] and data["deal"] == 0 and len(data["an"]) == n
    assert {a[1] for a in data["an"]} == {0}  # the person's seat only


def test_no_review_skips_it(tmp_path, warm):
    p = subprocess.run([sys.executable, "-m", "sim.cli", "human", "--delay", "0", "--seed",
                        str(SEED), "--opponents", "random", "--no-review", "--out",
                        str(tmp_path)], cwd=ROOT, input="1\n" * 200, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0, p.stderr
    assert "Review" not in p.stdout and "Reviewing" not in p.stdout
    assert os.listdir(tmp_path) == ["deals.jsonl"]


def test_ctrl_c_skips_the_review_and_the_deal_is_saved(tmp_path, warm):
    """A long review (many worlds) is cut by Ctrl-C: the deal is saved, the session ends as
    usual."""
    child = spawn(tmp_path, "--plain", "--samples", "4096")
    while child.expect(["\n> ", "Reviewing your"]) == 0:
        child.sendline("1")
    child.sendintr()
    child.expect(r"review skipped \(Ctrl-C\); deal 0 is saved")
    child.expect("records: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    rec = json.loads((tmp_path / "deals.jsonl").read_text(encoding="utf-8"))
    assert not rec.get("unfinished") and rec["attacker_score"] is not None
    assert not (tmp_path / "deals-deal0.html").exists()


def test_a_review_is_bounded_in_time(tmp_path, warm):
    s, out = _session(tmp_path, "1\n" * 200, review_seconds=0)
    assert s.run() == 0
    text = out.getvalue()
    assert re.search(r"review cut short at 0 s: 0 of \d+ decisions analysed", text), text
    assert (tmp_path / "deals-deal0.html").exists()


def test_bad_samples_is_one_line(tmp_path, capsys):
    from sim.cli import main

    assert main(["human", "--out", str(tmp_path), "--samples", "1"]) == 2
    err = capsys.readouterr().err
    assert "--samples 1 must be a whole number of worlds in 2 … 4096" in err
    assert err.count("\n") == 1
