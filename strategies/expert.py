"""``expert``: a fair search player with decision discipline and searched calling (compiled).

It decides from what its seat may know (the masked observation, R9), like ``pimc`` and
``ismcts``, and differs from them in three ways (docs/expert.md logs what each one gives):

Decision discipline (trick play)
    Greedy's move (``strategies.greedy``, default parameters) is the default. A forced play
    is played at once. Otherwise every legal play is rolled out on ``samples`` worlds drawn by
    ``strategies.sampler`` (common worlds and rollout random numbers for all candidates, as
    pimc). If the best of them is not the default, the two are re-checked on ``samples``
    *fresh* worlds, paired, and the challenger is played only if the paired lower confidence
    bound of its advantage, mean - ``z`` x standard error, exceeds ``margin`` (value units
    below). The re-check on fresh worlds removes the winner's-curse bias of picking the best
    of many noisy means.
Searched calling (R6-R8)
    The default show decision is greedy's rule with the expert's own calling parameters
    (``show_at``, ``min_cards``, ``partner_margin``). With ``call_samples`` > 0, at every
    show chance it samples the cards it cannot see, hidden hands *and* the cards not yet dealt
    (``sample_calling_world``), and rolls out pass and each legal show to the end of the deal
    (greedy calling for everybody after that, then trick play as in the rollouts below); the
    same discipline then decides (best of the options, re-checked against the default on
    fresh worlds).
Searched give-backs (R8)
    With ``giveback_k`` > 0, after an override it ranks its cards by greedy's give-back cost,
    forms the pairs of the ``giveback_k`` cheapest and searches them as above against greedy's
    choice (the cheapest two).

Rollouts play the tricks with ``rollout``: ``egreedy`` (the default: greedy for every seat,
but a uniformly random play one time in ten, from fresh streams drawn from the seat's sampling
stream) or ``greedy``. The value of a finished deal is ``strategies.search.deal_value``
(settlement plus a small share of the points). Randomness comes from the seat's sampling
stream only, so the same seed, deal and spec give the same decisions for any number of jobs.
"""

from __future__ import annotations

import math

import numpy as np

import sim.view as view
from sim.cards import BIT, KEY_OF_ID, POINTS_ID, STRENGTH
from sim.core import state as S
from sim.core.engine import apply_code, apply_play, legal
from sim.core.jit import kernel
from sim.core.layout import layout
from sim.core.movegen import MAX_CHOICES, code_first, code_second, make_code
from sim.core.rng import bounded
from sim.core.state import add_card, next_draw
from sim.core.step import first_lead
from strategies.base import param
from strategies.endgame import ENDGAME_WORLDS, MAX_ENDGAME, in_endgame
from strategies.greedy import GREEDY_CALL_FIELDS, greedy_decide, greedy_show
from strategies.kinds import KIND_EXPERT, UINT_SCRATCH
from strategies.params import ROLLOUT_ROW, param_row
from strategies.sampler import (
    FLOAT_REGION,
    REGION,
    draw_consistent,
    leader_of,
    play_at,
    plays_in,
    prepare_any,
)
from strategies.search import (
    POLICY_EGREEDY,
    POLICY_GREEDY,
    U_ROLL,  # uint scratch as search's: the sampled world, its rollout copy
    U_WORLD,
    copy_into,
    deal_value,
    exact_worlds,
    reseed_rollouts,
    rollout,
    tree_search_root,
)
from strategies.search import (
    UWS_END as SEARCH_UWS_END,
)
from strategies.search import (
    UWS_FIELDS as SEARCH_UWS_FIELDS,
)
from strategies.tier import CompiledStrategy

# the seat's params row (strategies.params): greedy's calling slots first (greedy_show reads
# them), then the search's
EXPERT_PARAM_FIELDS = GREEDY_CALL_FIELDS + (
    ("P_SAMPLES", 1),
    ("P_MARGIN", 1),
    ("P_CALL_SAMPLES", 1),
    ("P_Z", 1),
    ("P_GIVEBACK_K", 1),
    ("P_INFER", 1),  # inference: 0 off, 1 weighted, 2 control
    ("P_INFER_WORLDS", 1),
    ("P_EPSILON", 1),
    ("P_ITERATIONS", 1),  # > 0: the challenger comes from an ISMCTS of this many iterations
    ("P_RECHECK", 1),  # re-check batches of ``samples`` fresh worlds at most (close calls more)
    ("P_ROLLOUT", 1),  # the rollouts' trick-play policy: 1 greedy, 2 egreedy (search.POLICY_*)
    ("P_ROLLOUT_EPS", 1),  # egreedy rollouts: the share of uniformly random plays
    ("P_ENDGAME", 1),  # > 0: solve the sampled worlds once every hand holds <= this many cards
    ("P_ENDGAME_WORLDS", 1),  # ... this many worlds per decision (strategies.endgame)
)
_P, N_EXPERT_PARAMS = layout(EXPERT_PARAM_FIELDS)
P_SHOW_AT = _P["P_SHOW_AT"]
P_MIN_CARDS = _P["P_MIN_CARDS"]
P_PARTNER_MARGIN = _P["P_PARTNER_MARGIN"]
P_SAMPLES = _P["P_SAMPLES"]
P_MARGIN = _P["P_MARGIN"]
P_CALL_SAMPLES = _P["P_CALL_SAMPLES"]
P_Z = _P["P_Z"]
P_GIVEBACK_K = _P["P_GIVEBACK_K"]
P_INFER = _P["P_INFER"]
P_INFER_WORLDS = _P["P_INFER_WORLDS"]
P_EPSILON = _P["P_EPSILON"]
P_ITERATIONS = _P["P_ITERATIONS"]
P_RECHECK = _P["P_RECHECK"]
P_ROLLOUT = _P["P_ROLLOUT"]
P_ROLLOUT_EPS = _P["P_ROLLOUT_EPS"]
P_ENDGAME = _P["P_ENDGAME"]
P_ENDGAME_WORLDS = _P["P_ENDGAME_WORLDS"]

# int scratch (buf): [choices | candidates | rollout state | sampler | pool]
BUF_FIELDS = (
    ("R_CHOICES", MAX_CHOICES),  # legal() lists the choices here
    ("R_CAND", MAX_CHOICES),  # the candidates searched
    ("R_ST", S.ST_SIZE),  # the rollout state
    ("R_SAMPLER", REGION),  # strategies.sampler's region
    ("R_POOL", 108),  # calling worlds: the unseen cards (108 at most)
    ("R_CNT", 54),  # ... and their counts
    ("R_NEED", 4),  # 4 seats: hidden cards still to place
    ("R_WST", S.ST_SIZE),  # a calling world's state (the rollout state is copied from it)
)
_R, BUF_END = layout(BUF_FIELDS)
R_CAND = _R["R_CAND"]
R_ST = _R["R_ST"]
R_SAMPLER = _R["R_SAMPLER"]
R_POOL = _R["R_POOL"]
R_CNT = _R["R_CNT"]
R_NEED = _R["R_NEED"]
R_WST = _R["R_WST"]
MAX_POOL = (UINT_SCRATCH - SEARCH_UWS_END) // 8  # inference: candidate worlds, after search's
# float scratch (fws): candidate sums, sums of squared paired differences, the inference's
# weights; the sampler's table sits at the end of fws (FLOAT_REGION)
FWS_FIELDS = (
    ("F_SUM", MAX_CHOICES),
    ("F_SQ", MAX_CHOICES),
    ("F_W", MAX_POOL),  # inference: the candidate worlds' log-likelihoods, then weights
)
# uint scratch (uws): search's (the sampled world U_WORLD, its rollout copy U_ROLL), then the
# inference's candidate worlds
UWS_FIELDS = SEARCH_UWS_FIELDS + (
    ("U_POOL", 8 * MAX_POOL),  # inference: the hands (8 words) of the candidate worlds
)
_F, FWS_END = layout(FWS_FIELDS)
F_SUM = _F["F_SUM"]
F_SQ = _F["F_SQ"]
F_W = _F["F_W"]
_U, UWS_END = layout(UWS_FIELDS)
U_POOL = _U["U_POOL"]
MAX_OPTIONS = 64  # calling options searched at most (pass + shows, or give-back pairs)
MAX_ROLLOUTS = 3000  # first-stage rollouts per decision at most: many legal plays (R19d
# discards) get fewer worlds each, which bounds the slowest decision


# --- worlds -----------------------------------------------------------------------------------
@kernel
def sample_calling_world(st, u, seat, wst, wu, buf):
    """A world during calling (R5-R8): ``seat``'s hand as it is, the other hands and the cards
    not yet dealt drawn uniformly from the cards ``seat`` has not seen, except that the pair on
    the table is with its shower and ``seat``'s own give-backs are with their receivers (R9:
    public shows, private give-backs). Other moves of earlier shown pairs are not tracked
    (those copies are drawn like any unseen card). Writes the deal into ``wst``/``wu``."""
    copy_into(wst, st, S.ST_SIZE)
    copy_into(wu, u, S.U_SIZE)
    wst[S.S_FIX_SEAT] = -1  # a redeal in the world is an ordinary shuffle
    r = view.dealing_round(st)
    o = view.hand_once(u, seat)
    w = view.hand_twice(u, seat)
    cnt = buf[R_CNT:R_CNT + 54]
    need = buf[R_NEED:R_NEED + 4]
    for c in range(54):
        cnt[c] = 2 - (1 if o & BIT[c] else 0) - (1 if w & BIT[c] else 0)
    for s in range(4):
        need[s] = 0 if s == seat else r
        if s != seat:
            wu[S.U_ONCE + s] = 0
            wu[S.U_TWICE + s] = 0
    if view.phase(st) == S.GIVEBACK:
        need[st[S.S_GIVE_TO]] -= 2  # its shown pair is in the overrider's (seat's) hand now
    h = view.shown_by(st)
    cur = view.shown_card(st)
    if h >= 0 and h != seat and cnt[cur] == 2 and need[h] >= 2:
        cnt[cur] = 0
        need[h] -= 2
        add_card(wu, h, cur)
        add_card(wu, h, cur)
    for i in range(view.n_calls(st)):  # what seat gave back is with the seat it gave to
        j = S.S_CALLS + i * S.CALL_W
        y = st[j + S.CALL_TOOK]
        if st[j + S.CALL_SEAT] == seat and y >= 0 and y != seat:
            for k in (st[j + S.CALL_GAVE_A], st[j + S.CALL_GAVE_B]):
                if k >= 0 and cnt[k] > 0 and need[y] > 0:
                    cnt[k] -= 1
                    need[y] -= 1
                    add_card(wu, y, k)
    n = 0
    for c in range(54):
        for _ in range(cnt[c]):
            buf[R_POOL + n] = c
            n += 1
    for i in range(n - 1, 0, -1):  # Fisher-Yates with the seat's sampling stream
        j = bounded(next_draw(u, S.STREAM_SAMPLE + seat), i + 1)
        t = buf[R_POOL + i]
        buf[R_POOL + i] = buf[R_POOL + j]
        buf[R_POOL + j] = t
    p = 0
    for s in range(4):
        for _ in range(need[s]):
            if p < n:
                add_card(wu, s, buf[R_POOL + p])
                p += 1
    for i in range(4 * r, 108):  # the cards not dealt yet
        wst[S.S_DECK + i] = buf[R_POOL + p] if p < n else 0
        p += 1
    reseed_rollouts(u, wu, seat)
    wu[S.U_KEY + S.STREAM_CARDS] = next_draw(u, S.STREAM_SAMPLE + seat)  # redeals in the world
    wu[S.U_CTR + S.STREAM_CARDS] = 0


@kernel
def finish_from_calling(st, u, rules, seat, params, buf):
    """Play a world from the calling phase to its end: greedy calling for everybody (the
    seat itself with its own calling parameters), then trick play by the rollout policy
    (``P_ROLLOUT``)."""
    while view.phase(st) == S.CALL or view.phase(st) == S.GIVEBACK:
        s = view.to_act(st)
        c = greedy_decide(st, u, rules, s, params, seat if s == seat else np.int64(ROLLOUT_ROW),
                          buf)
        apply_code(st, u, rules, c)
    if view.phase(st) == S.PLAY:
        rollout(st, u, rules, np.int64(params[seat, P_ROLLOUT]),
                params[seat, P_ROLLOUT_EPS], params, buf)


# --- inference --------------------------------------------------------------------------------
@kernel
def play_loglik(st, u, rules, seat, params, buf, uws, wu):
    """Log-likelihood of every play the other seats made so far in the world ``wu`` (hands
    now), if each had played greedy's move with probability 1 - eps and otherwise any legal
    play uniformly (eps-smoothed greedy, ``P_EPSILON``): the deal is replayed from the first
    lead with the world's hands."""
    eps = params[seat, P_EPSILON]
    rst = buf[R_ST:R_ST + S.ST_SIZE]
    copy_into(rst, st, S.S_CALLS)  # the replay writes its own trick records
    hu = uws[U_ROLL:U_ROLL + S.U_SIZE]
    copy_into(hu, wu, S.U_SIZE)
    nt = view.n_tricks(st)
    for t in range(nt + 1):  # hands at the first lead: now + what each seat played
        leader = leader_of(st, t)
        for p in range(plays_in(st, t)):
            s = (leader + p) % 4
            a, b = play_at(st, t, p)
            for c in (a, b):
                if c >= 0:
                    add_card(hu, s, c)
    hu[S.U_PLAYED_ONCE] = 0
    hu[S.U_PLAYED_TWICE] = 0
    first_lead(rst, view.caller(st))
    for s in range(4):
        rst[S.S_VOIDS + s] = 0
    ll = 0.0
    for t in range(nt + 1):
        for p in range(plays_in(st, t)):
            a, b = play_at(st, t, p)
            s = view.to_act(rst)
            if s != seat:
                n = legal(rst, hu, buf)
                if n > 1:
                    g = greedy_decide(rst, hu, rules, s, params, np.int64(ROLLOUT_ROW), buf)
                    if code_first(g) == a and code_second(g) == b:
                        ll += math.log(1.0 - eps + eps / n)
                    else:
                        ll += math.log(eps / n)
            apply_play(rst, hu, rules, a, b)
    return ll


@kernel
def _inferred_worlds(st, u, rules, seat, params, buf, fws, uws, samples):
    """Draw ``P_INFER_WORLDS`` x ``samples`` worlds and keep ``samples`` of them, chosen in
    proportion to ``exp(play_loglik)`` (mode 1), or uniformly (mode 2: the matched control
    that spends the same extra draws unweighted), by systematic resampling; the kept worlds'
    hands go to ``uws[U_POOL:]``, 8 words each, the draws after them."""
    mode = np.int64(params[seat, P_INFER])
    k = min(np.int64(params[seat, P_INFER_WORLDS] * samples), np.int64(MAX_POOL - samples))
    k = max(k, np.int64(1))
    src = U_POOL + 8 * samples
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    top = -math.inf
    for i in range(k):
        copy_into(wu, u, S.U_SIZE)
        draw_consistent(st, u, seat, wu, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
        for s in range(4):
            uws[src + 8 * i + s] = view.hand_once(wu, s)
            uws[src + 8 * i + 4 + s] = view.hand_twice(wu, s)
        ll = play_loglik(st, u, rules, seat, params, buf, uws, wu) if mode == 1 else 0.0
        fws[F_W + i] = ll
        top = max(top, ll)
    total = 0.0
    for i in range(k):
        fws[F_W + i] = math.exp(fws[F_W + i] - top)
        total += fws[F_W + i]
    start = (next_draw(u, S.STREAM_SAMPLE + seat) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    acc = 0.0
    out = 0
    for i in range(k):
        acc += fws[F_W + i] / total * samples
        while out < samples and start + out < acc:
            for q in range(8):
                uws[U_POOL + 8 * out + q] = uws[src + 8 * i + q]
            out += 1
    while out < samples:  # rounding: repeat the last world
        for q in range(8):
            uws[U_POOL + 8 * out + q] = uws[src + 8 * (k - 1) + q]
        out += 1


# --- the discipline ---------------------------------------------------------------------------
@kernel
def trick_world(st, u, seat, wu, buf, fws):
    copy_into(wu, u, S.U_SIZE)
    draw_consistent(st, u, seat, wu, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    reseed_rollouts(u, wu, seat)


@kernel
def _value_of(st, u, rules, seat, params, buf, fws, uws, code, calling):
    """Value for ``seat`` of playing ``code`` in the world held in ``uws[U_WORLD]`` (trick
    play) or ``buf[R_ST]``/``uws[U_WORLD]`` as a full calling-phase state (``calling``)."""
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    ru = uws[U_ROLL:U_ROLL + S.U_SIZE]
    rst = buf[R_ST:R_ST + S.ST_SIZE]
    copy_into(ru, wu, S.U_SIZE)
    if calling:
        wst = buf[R_WST:R_WST + S.ST_SIZE]
        copy_into(rst, wst, S.ST_SIZE)
        apply_code(rst, ru, rules, code)
        finish_from_calling(rst, ru, rules, seat, params, buf)
    else:
        copy_into(rst, st, S.S_CALLS)  # trick rollouts need only the scalars and the trick
        apply_play(rst, ru, rules, code_first(code), code_second(code))
        rollout(rst, ru, rules, np.int64(params[seat, P_ROLLOUT]),
                params[seat, P_ROLLOUT_EPS], params, buf)
    if view.phase(rst) != S.DONE:
        return 0.0
    return deal_value(rst, seat)


@kernel
def _new_world(st, u, seat, buf, fws, uws, calling, infer, idx):
    wu = uws[U_WORLD:U_WORLD + S.U_SIZE]
    if calling:
        sample_calling_world(st, u, seat, buf[R_WST:R_WST + S.ST_SIZE], wu, buf)
    elif infer:  # world ``idx`` of the resampled pool
        copy_into(wu, u, S.U_SIZE)
        for s in range(4):
            wu[S.U_ONCE + s] = uws[U_POOL + 8 * idx + s]
            wu[S.U_TWICE + s] = uws[U_POOL + 8 * idx + 4 + s]
        reseed_rollouts(u, wu, seat)
    else:
        trick_world(st, u, seat, wu, buf, fws)


@kernel
def disciplined_choice(st, u, rules, seat, params, buf, fws, uws, n, default, samples,
                       calling):
    """The discipline (module docstring) over the ``n`` candidate codes in ``buf[R_CAND:]``,
    ``default`` among them."""
    if n <= 1 or samples <= 0:
        return default
    for i in range(n):
        fws[F_SUM + i] = 0.0
    infer = (not calling) and params[seat, P_INFER] > 0 and \
        view.n_tricks(st) + view.trick_pos(st) > 0
    samples = min(samples, np.int64(MAX_POOL // 2))
    if not calling:
        prepare_any(st, u, seat, buf, R_SAMPLER, fws, fws.shape[0] - FLOAT_REGION)
    iterations = np.int64(params[seat, P_ITERATIONS])
    if not calling and iterations > 0:
        challenger = tree_search_root(st, u, rules, seat, params, buf, fws, uws, np.int64(1),
                                      iterations, 0.3, np.int64(POLICY_GREEDY))
    else:
        first = max(min(samples, MAX_ROLLOUTS // n), 2)
        if infer:
            _inferred_worlds(st, u, rules, seat, params, buf, fws, uws, first)
        for w in range(first):
            _new_world(st, u, seat, buf, fws, uws, calling, infer, w)
            for i in range(n):
                fws[F_SUM + i] += _value_of(st, u, rules, seat, params, buf, fws, uws,
                                            buf[R_CAND + i], calling)
        best = -1
        for i in range(n):
            if buf[R_CAND + i] == default:
                best = i
        if best < 0:
            return default
        for i in range(n):  # strictly better only: ties keep the default
            if fws[F_SUM + i] > fws[F_SUM + best]:
                best = i
        challenger = buf[R_CAND + best]
    if challenger == default:
        return default
    # re-check the challenger against the default on fresh worlds, paired, in batches of
    # ``samples``: switch once the lower bound clears the margin, stop once the upper bound
    # is below it (a close call gets up to P_RECHECK batches, a clear one a single batch)
    s1 = 0.0
    s2 = 0.0
    m = 0
    z = params[seat, P_Z]
    margin = params[seat, P_MARGIN]
    for _ in range(max(np.int64(params[seat, P_RECHECK]), 1)):
        if infer:
            _inferred_worlds(st, u, rules, seat, params, buf, fws, uws, samples)
        for w in range(samples):
            _new_world(st, u, seat, buf, fws, uws, calling, infer, w)
            d = _value_of(st, u, rules, seat, params, buf, fws, uws, challenger, calling) - \
                _value_of(st, u, rules, seat, params, buf, fws, uws, default, calling)
            s1 += d
            s2 += d * d
        m += samples
        mean = s1 / m
        se = math.sqrt(max(s2 / m - mean * mean, 0.0) * m / max(m - 1, 1) / m)
        if mean - z * se > margin:
            return challenger
        if mean + z * se <= margin:
            return default
    return default


@kernel
def _giveback_candidates(st, u, seat, k, buf):
    """Pairs of the ``k`` cheapest cards by greedy's give-back cost (``greedy_giveback``),
    into ``buf[R_CAND:]``; returns how many."""
    shown = view.shown_card(st)
    t = shown % 4
    o = view.hand_once(u, seat) & ~BIT[shown]
    w = view.hand_twice(u, seat) & ~BIT[shown]
    # the k cheapest copies (a card held twice may appear twice), by insertion
    ids = buf[R_POOL:R_POOL + 16]
    vals = buf[R_POOL + 16:R_POOL + 32]
    m = 0
    for c in range(54):
        if o & BIT[c]:
            kk = KEY_OF_ID[t, c]
            v = STRENGTH[kk] + (10 if kk >= 30 else 0) + 3 * POINTS_ID[c]
            for _ in range(2 if w & BIT[c] else 1):
                if m < k:
                    pos = m
                    m += 1
                elif v < vals[m - 1]:
                    pos = m - 1
                else:
                    continue
                while pos > 0 and vals[pos - 1] > v:
                    ids[pos] = ids[pos - 1]
                    vals[pos] = vals[pos - 1]
                    pos -= 1
                ids[pos] = c
                vals[pos] = v
    n = 0
    for i in range(m):
        for j in range(i + 1, m):
            a = min(ids[i], ids[j])
            b = max(ids[i], ids[j])
            code = make_code(a, b)
            dup = False
            for q in range(n):
                if buf[R_CAND + q] == code:
                    dup = True
            if not dup and n < MAX_OPTIONS:
                buf[R_CAND + n] = code
                n += 1
    return n


@kernel
def expert_decide(st, u, rules, seat, params, buf, fws, uws):
    """The expert's choice code (module docstring)."""
    ph = view.phase(st)
    if ph == S.CALL:
        default = greedy_show(st, u, seat, params, seat)
        cs = np.int64(params[seat, P_CALL_SAMPLES])
        n = legal(st, u, buf)
        if cs <= 0 or n == 0:
            return default
        buf[R_CAND] = -1  # pass
        for i in range(min(n, MAX_OPTIONS - 1)):
            buf[R_CAND + 1 + i] = buf[i]
        return disciplined_choice(st, u, rules, seat, params, buf, fws, uws,
                                  min(n, MAX_OPTIONS - 1) + 1, default, cs, np.int64(1))
    if ph == S.GIVEBACK:
        default = greedy_decide(st, u, rules, seat, params, np.int64(ROLLOUT_ROW), buf)
        k = np.int64(params[seat, P_GIVEBACK_K])
        cs = np.int64(params[seat, P_CALL_SAMPLES])
        if k < 2 or cs <= 0:
            return default
        n = _giveback_candidates(st, u, seat, min(k, np.int64(16)), buf)
        return disciplined_choice(st, u, rules, seat, params, buf, fws, uws, n, default, cs,
                                  np.int64(1))
    n = legal(st, u, buf)
    if n == 1:
        return buf[0]
    default = greedy_decide(st, u, rules, seat, params, np.int64(ROLLOUT_ROW), buf)
    if in_endgame(st, np.int64(params[seat, P_ENDGAME])):
        c = exact_worlds(st, u, rules, seat, buf, fws, uws, BUF_END,
                         np.int64(params[seat, P_ENDGAME_WORLDS]), default)
        if c != -2:
            return c
    n = legal(st, u, buf)
    for i in range(n):
        buf[R_CAND + i] = buf[i]
    return disciplined_choice(st, u, rules, seat, params, buf, fws, uws, n, default,
                              np.int64(params[seat, P_SAMPLES]), np.int64(0))


_INFER = ("off", "weighted", "control")
_ROLLOUT = {"greedy": POLICY_GREEDY, "egreedy": POLICY_EGREEDY}


class ExpertStrategy(CompiledStrategy):
    """Fair search player: greedy's move unless search beats it on fresh worlds; searched
    calling and give-backs (docs/expert.md)."""

    name = "expert"
    compiled_kind = KIND_EXPERT
    samples = param(192, int, lo=0, hi=100_000,
                    doc="worlds per trick-play search, and again for the re-check (0: greedy)")
    margin = param(0.0, float, lo=-100.0, hi=100.0,
                   doc="value a challenger's paired lower bound must exceed to replace greedy")
    z = param(1.0, float, lo=0.0, hi=10.0, doc="lower bound = mean - z x standard error")
    call_samples = param(32, int, lo=0, hi=100_000,
                         doc="worlds per calling / give-back search (0: greedy's rule)")
    giveback_k = param(4, int, lo=0, hi=16,
                       doc="give-backs searched: pairs of the k cheapest cards (0: greedy's)")
    show_at = param(0.40, float, lo=0.0, hi=1.0, doc="calling default: greedy's show_at")
    min_cards = param(18, int, lo=1, hi=27, doc="calling default: greedy's min_cards")
    partner_margin = param(0.10, float, lo=0.0, hi=1.0,
                           doc="calling default: greedy's partner_margin")
    infer = param("off", str, choices=_INFER,
                  doc="trick-play worlds: off (uniform), weighted by how likely the others' "
                      "plays were under eps-greedy, or control (same extra draws, unweighted)")
    infer_worlds = param(4.0, float, lo=1.0, hi=16.0,
                         doc="inference: worlds drawn per world kept")
    epsilon = param(0.3, float, lo=0.001, hi=1.0,
                    doc="inference: share of the others' plays modelled as uniformly random")
    iterations = param(0, int, lo=0, hi=100_000,
                       doc="> 0: the challenger is ISMCTS's choice after this many iterations "
                           "(c=0.3, greedy rollouts) instead of the best rollout mean")
    recheck = param(4, int, lo=1, hi=16,
                    doc="re-check batches of `samples` fresh worlds at most: another batch "
                        "while the challenger's paired interval straddles the margin")

    rollout = param("egreedy", str, choices=tuple(_ROLLOUT),
                    doc="the rollouts' trick play: greedy for every seat, or egreedy (a "
                        "uniformly random play with probability `rollout_epsilon`)")

    rollout_epsilon = param(0.3, float, lo=0.0, hi=1.0,
                            doc="egreedy rollouts: the share of plays chosen uniformly at "
                                "random")

    endgame = param(0, int, lo=0, hi=MAX_ENDGAME,
                    doc="> 0: once every hand holds at most this many cards, solve each sampled "
                        "world exactly (sim.solve) instead of rolling it out (docs/solve.md)")
    endgame_worlds = param(ENDGAME_WORLDS, int, lo=1, hi=10_000,
                           doc="endgame: sampled worlds solved per decision")

    def kernel_decide(self, params, st, u, rules, seat, buf, fws, uws):
        return expert_decide(st, u, rules, seat, params, buf, fws, uws)

    def compiled_params(self) -> list[float]:
        return param_row(EXPERT_PARAM_FIELDS, {
            "P_SHOW_AT": self.show_at, "P_MIN_CARDS": self.min_cards,
            "P_PARTNER_MARGIN": self.partner_margin, "P_SAMPLES": self.samples,
            "P_MARGIN": self.margin, "P_CALL_SAMPLES": self.call_samples, "P_Z": self.z,
            "P_GIVEBACK_K": self.giveback_k, "P_INFER": _INFER.index(self.infer),
            "P_INFER_WORLDS": self.infer_worlds, "P_EPSILON": self.epsilon,
            "P_ITERATIONS": self.iterations, "P_RECHECK": self.recheck,
            "P_ROLLOUT": _ROLLOUT[self.rollout], "P_ROLLOUT_EPS": self.rollout_epsilon,
            "P_ENDGAME": self.endgame, "P_ENDGAME_WORLDS": self.endgame_worlds})
