/* A heuristic Shuangkou bot in C speaking `shuangkou-bot/1` (docs/protocol.md).
 *
 * libc only; build:   cc -O2 -o bot bot.c      (or: make -C examples/bots/c)
 * enter it:           shuangkou play --bot cbot=examples/bots/c/bot --seats cbot,greedy
 *
 * The same policy as examples/bots/python/bot.py, so python/twin.py is its in-process twin:
 *  show: pass unless the longest suit it could show (plain cards of that suit, not 2/3/5)
 *        holds a quarter of its cards or more, with 8 cards or more in hand;
 *  give-back: the two weakest cards (R13 strength, no trump suit yet);
 *  play: the weakest choice when leading or when its partner is winning the trick, else the
 *        weakest choice that takes the trick, else the weakest choice.
 * "Weakest": least sum of R13 strengths; ties go to the earlier choice.
 *
 * It parses only what it needs: a small scanner reads the top-level keys of each line and
 * skips every other value, so unknown fields cost nothing. Lines of any length are read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC 64      /* cards in a hand */
#define MAXL 4096    /* legal choices */
#define MAXT 8       /* plays in a trick */

typedef struct { int n; int c[2]; } Choice;   /* a choice: up to two cards (code) */

static int seat = -1, trump = 0;          /* trump: suit letter or 0 */
static int hand[MAXC], nhand;
static Choice legal[MAXL];
static int nlegal;
static Choice tplay[MAXT];
static int tseat[MAXT], ntrick;
static long long dec_id;
static char kind[16], type[16], trump_s[8];
static int have_id, seat_val;

/* a card is (rank char << 8) | suit char: "Kh" -> 'K'<<8|'h', "BJ" -> 'B'<<8|'J' */
static int card_code(const char *s) { return s[0] && s[1] ? (s[0] << 8) | s[1] : 0; }

static int is_trump(int c, int t) {
    int r = c >> 8, s = c & 255;
    if (c == ('B' << 8 | 'J') || c == ('S' << 8 | 'J')) return 1;
    return r == '2' || r == '3' || r == '5' || s == t;
}
static int group(int c, int t) { return is_trump(c, t) ? 'T' : (c & 255); }
static int strength(int c, int t) {
    static const char *plain = "46789TJQKA";
    int r = c >> 8, main_ = (c & 255) == t;
    const char *p;
    if (c == ('B' << 8 | 'J')) return 26;
    if (c == ('S' << 8 | 'J')) return 25;
    if (r == '5') return main_ ? 27 : 24;
    if (r == '3') return main_ ? 23 : 22;
    if (r == '2') return main_ ? 21 : 20;
    p = strchr(plain, r);
    return (p ? (int)(p - plain) : 0) + (main_ ? 10 : 0);
}

/* index (from the leader) of the winning play among plays[0..n) (R20, R21) */
static int trick_winner(const Choice *plays, int n, int t) {
    int best = 0, i;
    for (i = 1; i < n; i++) {
        const Choice *p = &plays[i];
        int c = p->c[0], b = plays[best].c[0], gc, gb;
        if (plays[0].n == 2 && (p->n < 2 || p->c[0] != p->c[1])) continue;
        gc = group(c, t); gb = group(b, t);
        if ((gc == 'T' && gb != 'T') || (gc == gb && strength(c, t) > strength(b, t))) best = i;
    }
    return best;
}

static int weight(const Choice *ch, int t) {
    int w = 0, k;
    for (k = 0; k < ch->n; k++) w += strength(ch->c[k], t);
    return w;
}

static int choose(void) {
    int i, best = 0, bw = 1 << 30;
    if (!strcmp(kind, "show")) {
        int bl = 0, pass = -1;
        for (i = 0; i < nlegal; i++) {
            int s, n = 0, k;
            if (legal[i].n == 0) { if (pass < 0) pass = i; continue; }
            s = legal[i].c[0] & 255;
            for (k = 0; k < nhand; k++) {
                int r = hand[k] >> 8;
                if ((hand[k] & 255) == s && r != '2' && r != '3' && r != '5'
                    && hand[k] != ('B' << 8 | 'J') && hand[k] != ('S' << 8 | 'J')) n++;
            }
            if (n >= bl) { best = i; bl = n; }
        }
        if (bl && nhand >= 8 && 4 * bl >= nhand) return best;
        return pass >= 0 ? pass : best;
    }
    if (!strcmp(kind, "giveback")) {
        for (i = 0; i < nlegal; i++) { int w = weight(&legal[i], 0); if (w < bw) { bw = w; best = i; } }
        return best;
    }
    for (i = 0; i < nlegal; i++) { int w = weight(&legal[i], trump); if (w < bw) { bw = w; best = i; } }
    if (ntrick == 0 || ntrick >= MAXT) return best;
    if ((tseat[0] + trick_winner(tplay, ntrick, trump)) % 4 == (seat + 2) % 4) return best;
    {
        int win = -1, ww = 1 << 30;
        for (i = 0; i < nlegal; i++) {
            int w;
            tplay[ntrick] = legal[i];
            if (trick_winner(tplay, ntrick + 1, trump) != ntrick) continue;
            w = weight(&legal[i], trump);
            if (w < ww) { ww = w; win = i; }
        }
        return win >= 0 ? win : best;
    }
}

/* ---- a minimal JSON scanner ---- */
static const char *ws(const char *p) { while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++; return p; }

/* reads a string at p (at its quote) into out (truncated to cap-1), returns past it */
static const char *str(const char *p, char *out, int cap) {
    int n = 0;
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\') { p++; if (!*p) return NULL; }
        if (out && n < cap - 1) out[n++] = *p;
    }
    if (out) out[n] = 0;
    return *p == '"' ? p + 1 : NULL;
}

static const char *skip(const char *p) {
    int depth = 0;
    p = ws(p);
    do {
        if (!*p) return NULL;
        if (*p == '"') { p = str(p, NULL, 0); if (!p) return NULL; continue; }
        if (*p == '[' || *p == '{') depth++;
        else if (*p == ']' || *p == '}') depth--;
        else if (depth == 0) {   /* number or literal */
            while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ') p++;
            return p;
        }
        p++;
    } while (depth > 0);
    return p;
}

/* a list of card strings into ch (first two kept; count in n), returns past it */
static const char *cards(const char *p, int *out, int cap, int *n) {
    char b[8];
    *n = 0;
    p = ws(p);
    if (*p != '[') return NULL;
    p = ws(p + 1);
    while (*p && *p != ']') {
        p = str(p, b, sizeof b);
        if (!p) return NULL;
        if (*n < cap) out[(*n)++] = card_code(b);
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    return *p ? p + 1 : NULL;
}

static const char *choice(const char *p, Choice *ch) {
    int tmp[MAXC], n;
    p = cards(p, tmp, MAXC, &n);
    if (!p) return NULL;
    ch->n = n > 2 ? 2 : n;
    ch->c[0] = n > 0 ? tmp[0] : 0;
    ch->c[1] = n > 1 ? tmp[1] : 0;
    return p;
}

static const char *legal_list(const char *p) {
    nlegal = 0;
    p = ws(p);
    if (*p != '[') return NULL;
    p = ws(p + 1);
    while (*p && *p != ']') {
        Choice ch;
        p = choice(p, &ch);
        if (!p) return NULL;
        if (nlegal < MAXL) legal[nlegal++] = ch;
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    return *p ? p + 1 : NULL;
}

static const char *trick_list(const char *p) {
    ntrick = 0;
    p = ws(p);
    if (*p != '[') return NULL;
    p = ws(p + 1);
    while (*p && *p != ']') {            /* [seat, [cards]] */
        Choice ch;
        long s;
        char *e;
        if (*p != '[') return NULL;
        s = strtol(ws(p + 1), &e, 10);
        p = ws(e);
        if (*p != ',') return NULL;
        p = choice(ws(p + 1), &ch);
        if (!p) return NULL;
        p = ws(p);
        if (*p != ']') return NULL;
        p = ws(p + 1);
        if (ntrick < MAXT - 1) { tseat[ntrick] = (int)s; tplay[ntrick++] = ch; }
        if (*p == ',') p = ws(p + 1);
    }
    return *p ? p + 1 : NULL;
}

/* scans one message's top-level keys; returns 0 when the line is not an object */
static int scan(const char *p) {
    char key[32];
    type[0] = kind[0] = trump_s[0] = 0;
    have_id = 0; seat_val = -1; nhand = nlegal = ntrick = 0;
    p = ws(p);
    if (*p != '{') return 0;
    p = ws(p + 1);
    while (p && *p && *p != '}') {
        p = str(p, key, sizeof key);
        if (!p) return 0;
        p = ws(p);
        if (*p != ':') return 0;
        p = ws(p + 1);
        if (!strcmp(key, "type")) p = str(p, type, sizeof type);
        else if (!strcmp(key, "kind")) p = str(p, kind, sizeof kind);
        else if (!strcmp(key, "trump") && *p == '"') p = str(p, trump_s, sizeof trump_s);
        else if (!strcmp(key, "id") && *p != '"') {
            char *e; dec_id = strtoll(p, &e, 10); have_id = 1; p = e;
        } else if (!strcmp(key, "seat") && *p != 'n') {
            char *e; seat_val = (int)strtol(p, &e, 10); p = e;
        } else if (!strcmp(key, "hand") && *p == '[') p = cards(p, hand, MAXC, &nhand);
        else if (!strcmp(key, "legal") && *p == '[') p = legal_list(p);
        else if (!strcmp(key, "trick") && *p == '[') p = trick_list(p);
        else p = skip(p);
        if (!p) return 0;
        p = ws(p);
        if (*p == ',') p = ws(p + 1);
    }
    return 1;
}

int main(void) {
    char *line = NULL, out[96];
    size_t cap = 0;
    ssize_t len;
    setvbuf(stdin, NULL, _IOFBF, 1 << 16);
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        if (!scan(line)) { fprintf(stderr, "cbot: cannot read a line\n"); continue; }
        if (!strcmp(type, "decide")) {
            int n = snprintf(out, sizeof out, "{\"type\":\"action\",\"id\":%lld,\"choice\":%d}\n",
                             dec_id, nlegal ? choose() : 0);
            fwrite(out, 1, (size_t)n, stdout);
            fflush(stdout);
        } else if (!strcmp(type, "hello")) {
            fputs("{\"type\":\"hello\",\"name\":\"cheur\",\"version\":\"1\"}\n", stdout);
            fflush(stdout);
        } else if (!strcmp(type, "match")) {
            seat = seat_val;
        } else if (!strcmp(type, "deal")) {
            trump = 0;
        } else if (!strcmp(type, "trump")) {
            trump = trump_s[0];
        } else if (!strcmp(type, "quit")) {
            break;
        }
    }
    free(line);
    return 0;
}
