(function(){
"use strict";
var DATA = JSON.parse(document.getElementById("deal-data").textContent);
var DEALS = DATA.deals;
var SYM = {s:"\u2660", h:"\u2665", d:"\u2666", c:"\u2663"};
var KINDS = ["show", "give-back", "play"];
var SEATCOL = ["#3c6e9e", "#b3541e", "#5d8fc2", "#d98b4e"];
var S = {deal: 0, pos: 0, view: -1, pair: true, sel: null};
var app = document.getElementById("app");

function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function svg(tag, attrs) {
  var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
function pretty(c) {
  if (c === "BJ" || c === "SJ") return c;
  return (c[0] === "T" ? "10" : c[0]) + (SYM[c[1]] || c[1]);
}
function split(s) { var o = []; for (var i = 0; i + 1 < s.length; i += 2) o.push(s.substr(i, 2)); return o; }
function cardEl(c, d) {
  var e = el("span", "card");
  e.setAttribute("data-card", c);
  e.title = pretty(c);
  if (c === "BJ" || c === "SJ") {
    e.classList.add("joker");
    if (c === "BJ") e.classList.add("red");
    e.appendChild(document.createTextNode(c));
    e.appendChild(el("span", "s", "\u2605"));
  } else {
    if (c[1] === "h" || c[1] === "d") e.classList.add("red");
    e.appendChild(document.createTextNode(c[0] === "T" ? "10" : c[0]));
    e.appendChild(el("span", "s", SYM[c[1]] || c[1]));
  }
  if (d && d.trumpSet[c]) e.classList.add("trump");
  return e;
}
function chipEl(c, d) {
  var e = el("span", "chip");
  e.setAttribute("data-card", c);
  if (c === "BJ" || c === "SJ") { e.textContent = c; if (c === "BJ") e.classList.add("red"); }
  else {
    if (c[1] === "h" || c[1] === "d") e.classList.add("red");
    e.textContent = (c[0] === "T" ? "10" : c[0]) + (SYM[c[1]] || c[1]);
  }
  if (d && d.trumpSet[c]) e.classList.add("trump");
  return e;
}
function cardsEl(cls, cards, d) {
  var e = el("span", cls);
  for (var i = 0; i < cards.length; i++) e.appendChild(chipEl(cards[i], d));
  return e;
}
function choiceEl(kind, s, d) {
  if (kind === 0 && s === "") return el("span", "lab", "pass");
  return cardsEl("lab", kind === 0 ? [s, s] : split(s), d);
}
function fmt(x) { return x === null || x === undefined ? "\u2013" : (x > 0 ? "+" : "") + x.toFixed(2); }
function markEl(m) { return el("span", "mark" + (m === "??" ? " qq" : m === "?" ? " q" : ""), m); }

// --- per-deal preparation --------------------------------------------------------------------
function prep(d) {
  if (d.P) return d;
  d.trumpSet = {};
  d.trumps.forEach(function (c) { d.trumpSet[c] = true; });
  var P = [], tricks = d.tricks.slice();
  if (d.cur) tricks.push([d.cur[0], d.cur[1], -1, 0]);
  d.T = tricks;
  tricks.forEach(function (t, ti) {
    t[1].forEach(function (p, k) { P.push({seat: (t[0] + k) % 4, cards: p, t: ti, k: k}); });
  });
  d.P = P;
  d.att = d.att || [];
  d.rowOfPlay = {};
  d.calling = [];
  d.an.forEach(function (r) {
    if (r[2] === 2) d.rowOfPlay[r[3] + ":" + r[1]] = r; else d.calling.push(r);
  });
  d.rows = P.map(function (p) { return d.rowOfPlay[(p.t + 1) + ":" + p.seat] || null; });
  return d;
}
function isAtt(d, s) { return d.att.indexOf(s) >= 0; }
function stateAt(d, pos) {
  var left = d.hands.map(function (h) { return h.slice(); });
  for (var i = 0; i < pos; i++) {
    var p = d.P[i];
    p.cards.forEach(function (c) {
      var j = left[p.seat].indexOf(c);
      if (j >= 0) left[p.seat].splice(j, 1);
    });
  }
  var ap = 0, dp = 0, done = 0;
  for (var t = 0; t < d.T.length; t++) {
    var tr = d.T[t];
    if (tr[2] < 0) break;
    var end = 0;
    for (var u = 0; u <= t; u++) end += d.T[u][1].length;
    if (end > pos) break;
    done = t + 1;
    if (isAtt(d, tr[2])) ap += tr[3]; else dp += tr[3];
  }
  return {left: left, ap: ap, dp: dp, done: done};
}

// --- drawing ---------------------------------------------------------------------------------
function seatLabel(d, s) {
  var w = el("div", "who");
  w.appendChild(el("b", null, "Seat " + s));
  var nm = el("span", null, d.seats[s]);
  nm.title = d.seats[s];
  w.appendChild(nm);
  if (d.att.length) w.appendChild(el("span", "tag" + (isAtt(d, s) ? " att" : ""),
      isAtt(d, s) ? (d.caller === s ? "caller" : "attacker") : "defender"));
  return w;
}
function drawBoard(d, pos, st, divPlay) {
  var base = S.view < 0 ? 0 : S.view;
  var b = el("div", "board");
  var next = pos < d.P.length ? d.P[pos].seat : -1;
  for (var s = 0; s < 4; s++) {
    var at = (s - base + 4) % 4;
    var box = el("div", "seat pos" + at + (s === next ? " toact" : ""));
    box.setAttribute("data-seat", s);
    box.appendChild(seatLabel(d, s));
    var h = el("div", "hand");
    h.setAttribute("data-seat", s);
    if (S.view < 0 || S.view === s) st.left[s].forEach(function (c) { h.appendChild(cardEl(c, d)); });
    else h.appendChild(el("span", "back", st.left[s].length + " cards"));
    box.appendChild(h);
    b.appendChild(box);
  }
  var c = el("div", "center");
  if (pos > 0) {
    var ti = d.P[pos - 1].t, tr = d.T[ti], first = pos - 1 - d.P[pos - 1].k;
    for (var k = 0; k < tr[1].length && first + k < pos; k++) {
      var seat = (tr[0] + k) % 4;
      var slot = el("div", "slot cslot" + ((seat - base + 4) % 4));
      var complete = first + tr[1].length <= pos;
      if (complete && tr[2] === seat) slot.classList.add("win");
      tr[1][k].forEach(function (cc) {
        var ce = cardEl(cc, d);
        if (divPlay === first + k) ce.classList.add("diverge");
        slot.appendChild(ce);
      });
      c.appendChild(slot);
    }
    var info = el("div", "cinfo");
    info.appendChild(el("div", null, "Trick " + (ti + 1)));
    if (first + tr[1].length <= pos && tr[2] >= 0)
      info.appendChild(el("div", null, "seat " + tr[2] + " wins +" + tr[3]));
    c.appendChild(info);
  } else {
    var inf = el("div", "cinfo wide");
    if (d.void) inf.appendChild(el("div", null, "Nobody showed: the deal is void (R11)"));
    else {
      inf.appendChild(el("div", null, d.trump ? "Hands at the first lead" :
          "Hands when it stopped (dealing round " + d.dealt + ")"));
      if (d.trump) inf.appendChild(el("div", null, "trump " + SYM[d.trump] + " \u00b7 caller seat " + d.caller));
      if (d.P.length) inf.appendChild(el("div", null, "press \u2192 to play"));
    }
    c.appendChild(inf);
  }
  b.appendChild(c);
  return b;
}
function drawStatus(d, pos, st) {
  var box = el("div", "box status");
  var tc = el("span", "trick-counter");
  var nT = d.T.length;
  if (d.void) tc.textContent = "Void deal: no trick play";
  else if (!nT) tc.textContent = "No trick played";
  else if (pos === 0) tc.textContent = "Before trick 1 of " + nT;
  else {
    var cur = d.T[d.P[pos - 1].t], open = cur[2] < 0;
    tc.textContent = "Trick " + (d.P[pos - 1].t + 1) + " of " + nT + (open ? " (in progress)" : "") +
        ", play " + (d.P[pos - 1].k + 1) + " of " + (open ? 4 : cur[1].length);
  }
  box.appendChild(tc);
  if (d.att.length) {
    var a = el("span", null, "Attackers (seats " + d.att.join(" & ") + "): ");
    var ab = el("b", "attacker-score", st.ap);
    a.appendChild(ab);
    box.appendChild(a);
    var df = el("span", null, "Defenders: ");
    df.appendChild(el("b", "defender-points", st.dp));
    box.appendChild(df);
  }
  if (pos === d.P.length && d.result) {
    var r = d.result;
    var line = el("div", "final");
    line.style.flexBasis = "100%";
    line.textContent = "Deal over: attackers took " + r[0] + " points" +
        (r[1] > 1 ? ", last trick \u00d7" + r[1] : "") + "; attacker score " + r[2] +
        ". Settlement: " + r[3].map(function (v, i) { return "seat " + i + " " + (v > 0 ? "+" : "") + v; }).join(", ");
    box.appendChild(line);
  } else if (pos === d.P.length && d.unfinished) {
    box.appendChild(el("div", "final", d.trump ? "Unfinished: the deal stopped here." :
        "Unfinished: stopped during the calling, after dealing round " + d.dealt + "."));
  }
  return box;
}
function drawCalls(d, div) {
  var box = el("div", "box calls");
  box.appendChild(el("h3", null, "Calling" + (d.redeals ? " (dealt again " + d.redeals + "\u00d7)" : "")));
  if (!d.calls.length) box.appendChild(el("div", "mute", d.void ? "nobody showed" : "no shows recorded"));
  var shown = {};
  d.calls.forEach(function (c, i) {
    var line = el("div");
    if (div && div.kind === "call" && div.i === i) { line.className = "divrow"; line.style.background = "#ffe3e3"; }
    line.appendChild(document.createTextNode("round " + c[0] + ": seat " + c[1] + " shows "));
    line.appendChild(cardsEl("cards", [c[2], c[2]], d));
    if (c[3] >= 0) {
      line.appendChild(document.createTextNode(" takes it from seat " + c[3]));
      if (c[4]) { line.appendChild(document.createTextNode(", gives back ")); line.appendChild(cardsEl("cards", c[4], d)); }
    }
    box.appendChild(line);
  });
  if (div && div.kind === "call" && div.i >= d.calls.length)
    box.appendChild(el("div", "divrow", "(the other table showed more here)"));
  var listed = d.calling.filter(function (r) { return !(r[2] === 0 && r[5] === "" && !r[12]); });
  if (d.calling.length) {
    box.appendChild(el("h3", null, "Calling decisions analysed (click one)"));
    var passes = d.calling.length - listed.length;
    listed.forEach(function (r) {
      var line = el("div", "pick" + (S.sel === r ? " sel" : ""));
      line.appendChild(document.createTextNode("round " + r[4] + ": seat " + r[1] + " "));
      if (r[2] === 0 && r[5] === "") line.appendChild(document.createTextNode("passes"));
      else {
        line.appendChild(document.createTextNode(r[2] === 0 ? "shows " : "gives back "));
        line.appendChild(choiceEl(r[2], r[5], d));
      }
      line.appendChild(document.createTextNode(" "));
      line.appendChild(markEl(r[12]));
      line.appendChild(el("span", "mute", " loss " + r[9].toFixed(2)));
      line.addEventListener("click", function () { S.sel = r; render(); showAnalysis(); });
      box.appendChild(line);
    });
    if (passes) {
      var pl = el("div", "mute pick", passes + " unmarked pass(es): show them");
      pl.addEventListener("click", function () { S.showPasses = !S.showPasses; render(); });
      if (S.showPasses) d.calling.forEach(function (r) {
        if (listed.indexOf(r) >= 0) return;
        var line = el("div", "pick" + (S.sel === r ? " sel" : ""), "round " + r[4] + ": seat " + r[1] + " passes \u00b7 loss " + r[9].toFixed(2));
        line.addEventListener("click", function () { S.sel = r; render(); showAnalysis(); });
        box.appendChild(line);
      });
      box.appendChild(pl);
    }
  }
  return box;
}
function showAnalysis() {
  var a = document.querySelector(".an");
  if (a && a.scrollIntoView) a.scrollIntoView({block: "nearest"});
}
function drawAnalysis(d, pos) {
  var r = S.sel && d.calling.indexOf(S.sel) >= 0 ? S.sel : (pos > 0 ? d.rows[pos - 1] : null);
  var box = el("div", "box an");
  box.appendChild(el("h3", null, "Analysis"));
  if (!r) {
    box.appendChild(el("div", "mute", pos > 0 ? "This decision was not analysed." :
        "Step through the deal: each play's analysis shows here" + (d.calling.length ?
        "; the calling decisions are listed under Calling (click one)." : ".")));
    return box;
  }
  var head = el("div", "head");
  var who = "Seat " + r[1] + " (" + d.seats[r[1]] + ") ";
  head.appendChild(document.createTextNode(who + (r[2] === 2 ? "played " : r[2] === 1 ? "gave back " : (r[5] === "" ? "passed" : "showed "))));
  if (!(r[2] === 0 && r[5] === "")) head.appendChild(choiceEl(r[2], r[5], d));
  head.appendChild(document.createTextNode(" "));
  head.appendChild(markEl(r[12]));
  box.appendChild(head);
  var forced = r[8].length === 1 && r[8][0] === null;
  if (forced) { box.appendChild(el("div", "mute", "Forced: the only legal choice.")); return box; }
  var l = el("div", "loss");
  l.appendChild(document.createTextNode("Loss "));
  l.appendChild(el("b", null, r[9].toFixed(2)));
  l.appendChild(document.createTextNode(" [" + r[10].toFixed(2) + ", " + r[11].toFixed(2) + "] points per player"));
  if (r[6] !== r[5]) { l.appendChild(document.createTextNode("; best ")); l.appendChild(choiceEl(r[2], r[6], d)); }
  box.appendChild(l);
  var tl = el("div", "mute", "True deal (all hands known, what would have worked): loss " + (r[13] === null ? "\u2013" : r[13].toFixed(2)));
  if (r[14] !== r[5] && r[13]) { tl.appendChild(document.createTextNode(", ")); tl.appendChild(choiceEl(r[2], r[14], d)); }
  box.appendChild(tl);
  var order = r[7].map(function (_, i) { return i; }).sort(function (a, b) { return (r[8][b] === null ? -1e9 : r[8][b]) - (r[8][a] === null ? -1e9 : r[8][a]); });
  var vs = r[8].filter(function (v) { return v !== null; });
  var mn = Math.min.apply(null, vs), mx = Math.max.apply(null, vs);
  var g = el("div", "vals");
  g.appendChild(el("div", "mute", "choice"));
  g.appendChild(el("div", "mute", "value for seat " + r[1] + "'s team (points per player)"));
  g.appendChild(el("div"));
  order.forEach(function (i) {
    var cls = r[7][i] === r[5] ? "played" : r[7][i] === r[6] ? "best" : "";
    var lab = choiceEl(r[2], r[7][i], d);
    if (cls === "played") lab.classList.add("pl");
    var tr = el("div", "track " + cls), f = el("div", "fill");
    var v = r[8][i];
    f.style.width = (mx > mn ? 4 + 96 * (v - mn) / (mx - mn) : 100) + "%";
    tr.appendChild(f);
    var row = el("div", cls); row.style.display = "contents";
    row.appendChild(lab); row.appendChild(tr); row.appendChild(el("div", "num", fmt(v)));
    g.appendChild(row);
  });
  box.appendChild(g);
  if (r[15]) box.appendChild(el("div", "mute", r[15] + " weaker choice(s) not shown"));
  return box;
}
function drawGraph(d, pos) {
  var box = el("div", "box graph");
  var n = d.P.length;
  if (!d.an.length || !n) return null;
  box.appendChild(el("h3", null, "Points lost per play (seats 0 & 2 up, seats 1 & 3 down; click to go there)"));
  var W = 560, H = 140, mid = H / 2, mxl = 0.5;
  d.rows.forEach(function (r) { if (r && r[9] > mxl) mxl = r[9]; });
  var sc = (mid - 10) / mxl, dx = W / n;
  var s = svg("svg", {viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "points lost per play"});
  s.appendChild(svg("rect", {x: 0, y: 0, width: W, height: H, fill: "#fbfcfd"}));
  for (var t = 0, acc = 0; t < d.T.length; t++) {
    acc += d.T[t][1].length;
    if (t % 5 === 4) s.appendChild(svg("line", {x1: acc * dx, x2: acc * dx, y1: 0, y2: H, stroke: "#eceff3"}));
  }
  s.appendChild(svg("line", {x1: 0, x2: W, y1: mid, y2: mid, stroke: "#b9c0c8"}));
  d.rows.forEach(function (r, i) {
    if (!r || !r[9]) return;
    var up = r[1] % 2 === 0, h = Math.max(r[9] * sc, 1);
    s.appendChild(svg("rect", {x: i * dx + dx * 0.1, width: Math.max(dx * 0.8, 1), y: up ? mid - h : mid, height: h,
      fill: r[12] === "??" ? "#d32f2f" : r[12] === "?" ? "#e69500" : SEATCOL[r[1]]}));
  });
  s.appendChild(svg("line", {x1: pos * dx, x2: pos * dx, y1: 0, y2: H, stroke: "#2b5d8a", "stroke-width": 2, "class": "cursor"}));
  var tx = svg("text", {x: 4, y: 12, "font-size": 10, fill: "#66707c"}); tx.textContent = "+" + mxl.toFixed(2); s.appendChild(tx);
  s.addEventListener("click", function (ev) {
    var rect = s.getBoundingClientRect();
    var i = Math.floor((ev.clientX - rect.left) / rect.width * n);
    setPos(Math.max(0, Math.min(n, i + 1)));
  });
  box.appendChild(s);
  var leg = el("div", "legend");
  for (var seat = 0; seat < 4; seat++) {
    var rows = d.an.filter(function (r) { return r[1] === seat; });
    if (!rows.length) continue;
    var tot = rows.reduce(function (a, r) { return a + (r[9] || 0); }, 0);
    var q = rows.filter(function (r) { return r[12] === "?"; }).length, qq = rows.filter(function (r) { return r[12] === "??"; }).length;
    var it = el("span");
    var sw = el("span", "sw"); sw.style.background = SEATCOL[seat]; it.appendChild(sw);
    it.appendChild(document.createTextNode("seat " + seat + ": lost " + tot.toFixed(2) + " in " + rows.length + " decisions, " + q + " ?, " + qq + " ??"));
    leg.appendChild(it);
  }
  box.appendChild(leg);
  return box;
}
function drawHistory(d, pos, divPlay) {
  var box = el("div", "box");
  box.appendChild(el("h3", null, "Tricks (click to go there)"));
  var h = el("div", "hist");
  var idx = 0, run = 0, curT = pos > 0 ? d.P[pos - 1].t : -1;
  d.T.forEach(function (t, ti) {
    var line = el("div", ti === curT ? "cur" : "");
    line.appendChild(el("span", "mute", (ti + 1) + "."));
    t[1].forEach(function (p, k) {
      var seat = (t[0] + k) % 4;
      var c = cardsEl("pl" + (seat === t[2] ? " w" : ""), p, d);
      if (divPlay === idx + k) c.firstChild.classList.add("diverge");
      var r = d.rows[idx + k];
      line.appendChild(el("span", "mute", seat + ":"));
      line.appendChild(c);
      if (r && r[12]) line.appendChild(markEl(r[12]));
    });
    if (t[2] >= 0 && isAtt(d, t[2])) run += t[3];
    line.appendChild(el("span", "mute", t[2] >= 0 ? "+" + t[3] + " [" + run + "]" : "(in progress)"));
    var end = idx + t[1].length;
    line.addEventListener("click", function () { setPos(end); });
    idx = end;
    h.appendChild(line);
  });
  box.appendChild(h);
  return box;
}
function drawTable(i, pos, label) {
  var d = prep(DEALS[i]);
  pos = Math.min(pos, d.P.length);
  var div = d.div || null, divPlay = div && div.kind === "play" ? div.i : -1;
  var st = stateAt(d, pos);
  var w = el("section", "tbl");
  w.setAttribute("data-table", i);
  var h = el("h2", null, (label ? label + ": " : "") + "deal " + d.deal + " of seed " + d.seed +
      (d.table && d.table.matchup !== undefined ? " \u00b7 matchup " + d.table.matchup + ", orientation " + d.table.orientation : ""));
  w.appendChild(h);
  var cols = el("div", "cols");
  var left = el("div", "boardwrap");
  left.appendChild(drawBoard(d, pos, st, divPlay));
  cols.appendChild(left);
  var side = el("div", "side");
  side.appendChild(drawStatus(d, pos, st));
  if (DATA.analysis) side.appendChild(drawAnalysis(d, pos));
  var g = drawGraph(d, pos); if (g) side.appendChild(g);
  side.appendChild(drawCalls(d, div));
  if (d.T.length) left.appendChild(drawHistory(d, pos, divPlay));
  cols.appendChild(side);
  w.appendChild(cols);
  return w;
}
function maxPos() {
  var d = prep(DEALS[S.deal]), m = d.P.length;
  if (S.pair && d.pair !== undefined) m = Math.max(m, prep(DEALS[d.pair]).P.length);
  return m;
}
function setPos(p) { S.pos = Math.max(0, Math.min(maxPos(), p)); S.sel = null; render(); }
function trickEnd(d, dir) {
  var acc = 0, ends = [0];
  d.T.forEach(function (t) { acc += t[1].length; ends.push(acc); });
  if (dir > 0) { for (var i = 0; i < ends.length; i++) if (ends[i] > S.pos) return ends[i]; return acc; }
  for (var j = ends.length - 1; j >= 0; j--) if (ends[j] < S.pos) return ends[j];
  return 0;
}
function setDeal(i) {
  i = Math.max(0, Math.min(DEALS.length - 1, i));
  S.deal = i; S.pos = 0; S.sel = null; render();
}
function stepDeal(dir) {
  var i = S.deal + dir, d = DEALS[S.deal];
  while (i >= 0 && i < DEALS.length && S.pair && DEALS[i].pair !== undefined && DEALS[i].pair === S.deal) i += dir;
  if (i >= 0 && i < DEALS.length) setDeal(i);
}
function button(text, title, fn, cls) {
  var b = el("button", cls || null, text);
  b.title = title;
  b.addEventListener("click", fn);
  return b;
}
function dealName(d, i) {
  var s = "deal " + d.deal + " (seed " + d.seed + "): " + d.seats[0] + " & " + d.seats[2] + " vs " + d.seats[1] + " & " + d.seats[3];
  if (d.void) s += " \u00b7 void";
  else if (d.result) s += " \u00b7 score " + d.result[2] + " \u00b7 seat 0 " + (d.result[3][0] > 0 ? "+" : "") + d.result[3][0];
  if (d.an.length) {
    var q = 0, qq = 0; d.an.forEach(function (r) { if (r[12] === "?") q++; if (r[12] === "??") qq++; });
    s += " \u00b7 " + q + "? " + qq + "??";
  }
  if (d.pair !== undefined) s += " \u00b7 pair with #" + (d.pair + 1);
  return "#" + (i + 1) + " " + s;
}
function render() {
  toHash();
  var d = prep(DEALS[S.deal]);
  var pairOn = S.pair && d.pair !== undefined;
  var first = pairOn ? Math.min(S.deal, d.pair) : S.deal;
  app.textContent = "";
  var nav = el("div", "bar");
  if (DEALS.length > 1) {
    nav.appendChild(button("\u25c0 deal", "previous deal (p)", function () { stepDeal(-1); }));
    var sel = el("select");
    sel.id = "deal-select";
    DEALS.forEach(function (dd, i) { var o = el("option", null, dealName(dd, i)); o.value = i; sel.appendChild(o); });
    sel.value = String(S.deal);
    sel.addEventListener("change", function () { setDeal(parseInt(sel.value, 10)); sel.blur(); });
    nav.appendChild(sel);
    nav.appendChild(button("deal \u25b6", "next deal (n)", function () { stepDeal(1); }));
  }
  nav.appendChild(el("span", "mute", "view:"));
  var vb = button("all hands", "show every hand (v cycles)", function () { S.view = -1; render(); }, S.view < 0 ? "on" : "");
  vb.setAttribute("data-view", "-1");
  nav.appendChild(vb);
  for (var s = 0; s < 4; s++) (function (s) {
    var b = button("seat " + s, "seat " + s + "'s view: its own hand, the others hidden", function () { S.view = s; render(); }, S.view === s ? "on" : "");
    b.setAttribute("data-view", s);
    nav.appendChild(b);
  })(s);
  if (d.pair !== undefined) nav.appendChild(button(S.pair ? "one table" : "both tables", "the duplicate pair side by side, or one table", function () { S.pair = !S.pair; render(); }));
  app.appendChild(nav);
  var ctl = el("div", "bar");
  var mp = maxPos();
  var b1 = button("\u00ab start", "start (Home)", function () { setPos(0); }); b1.id = "first"; ctl.appendChild(b1);
  var b2 = button("\u25c0\u25c0 trick", "previous trick (\u2191)", function () { setPos(trickEnd(prep(DEALS[first]), -1)); }); b2.id = "prev-trick"; ctl.appendChild(b2);
  var b3 = button("\u25c0 play", "previous play (\u2190)", function () { setPos(S.pos - 1); }); b3.id = "prev"; ctl.appendChild(b3);
  var b4 = button("play \u25b6", "next play (\u2192)", function () { setPos(S.pos + 1); }); b4.id = "next"; ctl.appendChild(b4);
  var b5 = button("trick \u25b6\u25b6", "next trick (\u2193)", function () { setPos(trickEnd(prep(DEALS[first]), 1)); }); b5.id = "next-trick"; ctl.appendChild(b5);
  var b6 = button("end \u00bb", "end (End)", function () { setPos(mp); }); b6.id = "last"; ctl.appendChild(b6);
  b1.disabled = b2.disabled = b3.disabled = S.pos === 0;
  b4.disabled = b5.disabled = b6.disabled = S.pos >= mp;
  var pc = el("span", "mute", "step " + S.pos + " of " + mp); pc.id = "position"; ctl.appendChild(pc);
  ctl.appendChild(el("span", "keys", "keys: \u2190 \u2192 play, \u2191 \u2193 trick, Home End, n p deal, v view" + (d.pair !== undefined ? ", d divergence" : "")));
  app.appendChild(ctl);
  if (pairOn) {
    var a = first, b = first === S.deal ? d.pair : S.deal;
    if (DEALS[a].side === 1) { var tmp = a; a = b; b = tmp; }
    var dv = DEALS[a].div, A = prep(DEALS[a]), B = prep(DEALS[b]);
    var bar = el("div", "divbar");
    bar.id = "divergence";
    if (!dv) bar.textContent = "The two tables played the same decisions throughout.";
    else {
      if (dv.kind === "play") {
        var pa = A.P[dv.i], pb = B.P[dv.i], p0 = pa || pb;
        bar.appendChild(document.createTextNode("First divergent decision: play " + (dv.i + 1) + " (trick " + (p0.t + 1) + ", seat " + p0.seat + "): "));
        bar.appendChild(document.createTextNode("table 1 " + (pa ? "" : "stopped")));
        if (pa) bar.appendChild(cardsEl("cards", pa.cards, A));
        bar.appendChild(document.createTextNode(", table 2 " + (pb ? "" : "stopped")));
        if (pb) bar.appendChild(cardsEl("cards", pb.cards, B));
        bar.appendChild(document.createTextNode(" "));
        bar.appendChild(button("go there (d)", "show that play", function () { setPos(dv.i + 1); }));
      } else {
        // the earlier of the two differing shows is the first decision that differs: at the
        // other table that seat passed then (or showed something else at the same moment)
        var when = function (X) {
          var c = X.calls[dv.i];
          return c ? X.redeals * 100 + c[0] : Infinity;
        };
        var tabs = [[A, "table 1"], [B, "table 2"]];
        if (when(B) < when(A)) tabs.reverse();
        var X0 = tabs[0][0], c0 = X0.calls[dv.i];
        var round = "dealing round " + c0[0] + (X0.redeals ? " of shuffle " + (X0.redeals + 1) : "");
        bar.appendChild(document.createTextNode("First divergent decision: " + round + ", at " +
            tabs[0][1] + " seat " + c0[1] + " shows "));
        bar.appendChild(cardsEl("cards", [c0[2], c0[2]], X0));
        if (c0[4]) {
          bar.appendChild(document.createTextNode(" and gives back "));
          bar.appendChild(cardsEl("cards", c0[4], X0));
        }
        var X1 = tabs[1][0], c1 = X1.calls[dv.i];
        if (when(X1) !== when(X0) || !c1) {
          bar.appendChild(document.createTextNode("; at " + tabs[1][1] + " nobody showed then" +
              (c1 ? " (its next show: round " + c1[0] + ", seat " + c1[1] + " " : "")));
        } else {
          bar.appendChild(document.createTextNode("; at " + tabs[1][1] + " seat " + c1[1] +
              " shows "));
        }
        if (c1) {
          bar.appendChild(cardsEl("cards", [c1[2], c1[2]], X1));
          if (c1[4]) {
            bar.appendChild(document.createTextNode(" and gives back "));
            bar.appendChild(cardsEl("cards", c1[4], X1));
          }
          if (when(X1) !== when(X0)) bar.appendChild(document.createTextNode(")"));
        }
        bar.appendChild(document.createTextNode(" (highlighted in both calling lists)."));
      }
    }
    app.appendChild(bar);
    var row = el("div", "tables pair");
    row.appendChild(drawTable(a, S.pos, "Table 1 (" + DEALS[a].seats[0] + " in seats 0 & 2)"));
    row.appendChild(drawTable(b, S.pos, "Table 2 (" + DEALS[b].seats[0] + " in seats 0 & 2)"));
    app.appendChild(row);
  } else {
    var one = el("div", "tables");
    one.appendChild(drawTable(S.deal, S.pos, DEALS.length > 1 ? "#" + (S.deal + 1) : ""));
    app.appendChild(one);
  }
  scrollHistories();
}
function scrollHistories() {  // keep the current trick in sight in each trick list
  Array.prototype.forEach.call(document.querySelectorAll(".hist"), function (h) {
    var cur = h.querySelector(".cur");
    if (cur) h.scrollTop = Math.max(0, cur.offsetTop - h.clientHeight / 2);
  });
}
document.addEventListener("keydown", function (ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  var tag = ev.target && ev.target.tagName;
  if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
  var d = DEALS[S.deal], first = S.pair && d.pair !== undefined ? Math.min(S.deal, d.pair) : S.deal;
  var k = ev.key, done = true;
  if (k === "ArrowRight") setPos(S.pos + 1);
  else if (k === "ArrowLeft") setPos(S.pos - 1);
  else if (k === "ArrowDown") setPos(trickEnd(prep(DEALS[first]), 1));
  else if (k === "ArrowUp") setPos(trickEnd(prep(DEALS[first]), -1));
  else if (k === "Home") setPos(0);
  else if (k === "End") setPos(maxPos());
  else if (k === "n" || k === "PageDown") stepDeal(1);
  else if (k === "p" || k === "PageUp") stepDeal(-1);
  else if (k === "v") { S.view = S.view >= 3 ? -1 : S.view + 1; render(); }
  else if (k === "d" && d.div && d.div.kind === "play") setPos(d.div.i + 1);
  else done = false;
  if (done) ev.preventDefault();
});
// the address keeps the place (#d=DEAL&p=PLAY&v=VIEW, indices from 0; v=-1 all hands), so a
// link can open a given deal at a given play and a reload keeps it
function fromHash() {
  var h = {};
  String(location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) h[kv.slice(0, i)] = parseInt(kv.slice(i + 1), 10);
  });
  if (h.d >= 0 && h.d < DEALS.length) S.deal = h.d;
  if (h.v >= -1 && h.v <= 3) S.view = h.v;
  if (h.p >= 0) S.pos = Math.min(h.p, maxPos());
}
function toHash() {
  var h = "#d=" + S.deal + "&p=" + S.pos + "&v=" + S.view;
  if (location.hash !== h && window.history && history.replaceState) {
    try { history.replaceState(null, "", h); } catch (e) { /* some file:// pages refuse */ }
  }
}
window.addEventListener("hashchange", function () { fromHash(); render(); });
if (DEALS.length) { fromHash(); render(); } else app.textContent = "No deals.";
})();
